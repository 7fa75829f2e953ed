package jinsttest;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/*
 * Virtual threads (Java 21): N of them, each calling mid() once, which calls
 * work() ten times and parks once half-way (Thread.sleep), so the threads
 * unmount and mount again. The VM posts no ThreadEnd for a virtual thread:
 * the runtime must still let go of each one's records. Prints the sum.
 */
public class VThreads {
	static int work(int i) {
		return 2 * i + 1;
	}

	static int mid(int i) throws InterruptedException {
		int s = 0;
		for (int k = 0; k < 10; k++) {
			s += work(i + k);
			if (k == 5)
				Thread.sleep(0, 1000);
		}
		return s;
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]);
		long sum = 0;
		try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
			List<Future<Integer>> fs = new ArrayList<>();
			for (int i = 0; i < n; i++) {
				final int j = i;
				fs.add(ex.submit(() -> mid(j)));
			}
			for (Future<Integer> f : fs)
				sum += f.get();
		}
		System.out.println("virtual threads: " + n + ", sum " + sum);
	}
}
