package attach;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/** A long-running program to attach to: it handles requests until a stop file appears. */
public class Server {
	static long handle(int request) {
		long h = request;
		for (int i = 0; i < 1000; i++)
			h = h * 31 + i;
		return h;
	}

	public static void main(String[] args) throws Exception {
		Path stop = Paths.get(args[0]);
		System.out.println("serving, pid " + ProcessHandle.current().pid());
		long handled = 0, sum = 0;
		while (!Files.exists(stop)) {
			for (int i = 0; i < 100; i++, handled++)
				sum += handle(i);
			Thread.sleep(10);
		}
		System.out.println("stopped after " + handled + " requests");
	}
}
