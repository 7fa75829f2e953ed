package jinstcheck;

import java.io.File;
import java.io.FileWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.util.Set;
import java.util.TreeSet;

/**
 * A class loader that finds only its own package (classes read from a
 * folder) and java.* (from its parent, the bootstrap loader, as every loader
 * must); any other name is a ClassNotFoundException. It records every name
 * it is asked for. main runs strictload.Main through it, then writes the
 * names asked for, sorted, one a line, to ARGV[1] (also when it failed).
 *
 *   java jinstcheck.StrictLoader CLASSES_DIR NAMES_FILE
 */
public final class StrictLoader extends ClassLoader {
	private static final String PACKAGE = "strictload.";
	private final File dir;
	private final Set<String> asked = new TreeSet<String>();

	private StrictLoader(File dir) {
		super(null);
		this.dir = dir;
	}

	@Override
	protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
		synchronized (asked) {
			asked.add(name);
		}
		if (name.startsWith("java."))
			return super.loadClass(name, resolve);
		if (!name.startsWith(PACKAGE) || name.indexOf('.', PACKAGE.length()) >= 0)
			throw new ClassNotFoundException(name + " is not in " + PACKAGE);
		synchronized (getClassLoadingLock(name)) {
			Class<?> c = findLoadedClass(name);
			if (c == null) {
				byte[] b;
				try {
					b = Files.readAllBytes(new File(dir, name.replace('.', '/') + ".class").toPath());
				} catch (IOException e) {
					throw new ClassNotFoundException(name, e);
				}
				c = defineClass(name, b, 0, b.length);
			}
			if (resolve)
				resolveClass(c);
			return c;
		}
	}

	public static void main(String[] args) throws Exception {
		StrictLoader loader = new StrictLoader(new File(args[0]));
		try {
			Class<?> main = Class.forName(PACKAGE + "Main", true, loader);
			main.getMethod("main", String[].class).invoke(null, (Object) new String[0]);
		} finally {
			Writer w = new FileWriter(args[1]);
			try {
				synchronized (loader.asked) {
					for (String name : loader.asked)
						w.write(name + "\n");
				}
			} finally {
				w.close();
			}
		}
	}
}
