package jinstoffmain;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;

/*
 * Loads each jar of its arguments in a loader of its own (the application
 * loader, which holds jinst-runtime.jar, as parent) and runs every class
 * named after it there: jinstoff.Same (in both), jinstoff.One, jinstoff.Two.
 *   Main N JAR:CLASS,CLASS... ...
 * Prints each result: the same with and without instrumentation. With
 * -Djinstoff.dump=true it then calls jinst.rt.Control.dump(), as a program
 * that wants its outputs before it exits does. With -Djinstoff.wait=FILE
 * it then prints "waiting", waits for FILE to exist, and runs them all
 * again.
 */
public final class Main {
	private Main() {
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]);
		Method[][] runs = new Method[args.length][];
		for (int a = 1; a < args.length; a++) {
			String[] jarClasses = args[a].split(":", 2);
			URLClassLoader loader = new URLClassLoader(new URL[] {new File(jarClasses[0]).toURI().toURL()},
			                                           Main.class.getClassLoader());
			String[] names = jarClasses[1].split(",");
			runs[a] = new Method[names.length];
			for (int c = 0; c < names.length; c++)
				runs[a][c] = Class.forName("jinstoff." + names[c], true, loader).getMethod("run", int.class);
		}
		runAll(runs, n);
		if (Boolean.getBoolean("jinstoff.dump"))
			Class.forName("jinst.rt.Control").getMethod("dump").invoke(null);
		String wait = System.getProperty("jinstoff.wait");
		if (wait != null) {
			System.out.println("waiting");
			System.out.flush();
			while (!new File(wait).exists())
				Thread.sleep(20);
			runAll(runs, n);
		}
	}

	private static void runAll(Method[][] runs, int n) throws Exception {
		for (int a = 1; a < runs.length; a++)
			for (Method run : runs[a])
				for (int i = 0; i < n; i++)
					System.out.println(a + " " + run.getDeclaringClass().getSimpleName() + " " + i + " " +
					                   run.invoke(null, i));
	}
}
