import java.io.ByteArrayOutputStream;
import java.io.InputStream;

/**
 * shared.Two defined again by a loader of its own, from the same bytes, as
 * Jython's loaders define the classes it compiles: its run's class comes
 * from the parent, a package of the same name in another loader (another
 * run-time package, JVMS 5.3), which must still let it read BASE.
 */
public class Split {
	public static void main(String[] args) throws Exception {
		final ClassLoader parent = Split.class.getClassLoader();
		final byte[] b = read(parent.getResourceAsStream("shared/Two.class"));
		ClassLoader own = new ClassLoader(parent) {
			@Override
			protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
				if (!name.equals("shared.Two"))
					return super.loadClass(name, resolve);
				synchronized (getClassLoadingLock(name)) {
					Class<?> c = findLoadedClass(name);
					return c != null ? c : defineClass(name, b, 0, b.length);
				}
			}
		};
		Class<?> two = own.loadClass("shared.Two");
		if (two.getClassLoader() != own)
			throw new AssertionError("shared.Two not defined by its own loader");
		System.out.println("two " + two.getMethod("two").invoke(null));
	}

	private static byte[] read(InputStream in) throws java.io.IOException {
		ByteArrayOutputStream b = new ByteArrayOutputStream();
		byte[] buf = new byte[4096];
		for (int n; (n = in.read(buf)) > 0;)
			b.write(buf, 0, n);
		in.close();
		return b.toByteArray();
	}
}
