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
 * that wants its outputs before it exits does.
 */
public final class Main {
	private Main() {
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]);
		for (int a = 1; a < args.length; a++) {
			String[] jarClasses = args[a].split(":", 2);
			URLClassLoader loader = new URLClassLoader(new URL[] {new File(jarClasses[0]).toURI().toURL()},
			                                           Main.class.getClassLoader());
			for (String c : jarClasses[1].split(",")) {
				Method run = Class.forName("jinstoff." + c, true, loader).getMethod("run", int.class);
				for (int i = 0; i < n; i++)
					System.out.println(a + " " + c + " " + i + " " + run.invoke(null, i));
			}
		}
		if (Boolean.getBoolean("jinstoff.dump"))
			Class.forName("jinst.rt.Control").getMethod("dump").invoke(null);
	}
}
