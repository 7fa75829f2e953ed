import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/* Links every class of a folder in a child-first loader, so that HotSpot's
 * verifier checks each of them (getDeclaredMethods links the class; it does
 * not initialize it). Prints the VerifyErrors (the first 20 with details)
 * and a summary line; exits 1
 * when there was any VerifyError. Classes the loader may not define
 * (java.*) and classes whose dependencies are missing are counted apart.
 *   java -Xverify:all -cp HOOKS:VERIFY VerifyTree FOLDER */
public final class VerifyTree extends ClassLoader {
	private final Path root;

	private VerifyTree(Path root, ClassLoader parent) {
		super(parent);
		this.root = root;
	}

	@Override
	protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
		synchronized (getClassLoadingLock(name)) {
			Class<?> c = findLoadedClass(name);
			if (c == null && !name.startsWith("java.") && !name.startsWith("jinst.rt.")) {
				Path p = root.resolve(name.replace('.', '/') + ".class");
				if (Files.isRegularFile(p)) {
					try {
						byte[] b = Files.readAllBytes(p);
						c = defineClass(name, b, 0, b.length);
					} catch (IOException e) {
						throw new ClassNotFoundException(name, e);
					}
				}
			}
			if (c == null)
				c = getParent().loadClass(name);
			return c;
		}
	}

	public static void main(String[] args) throws IOException {
		Path root = Paths.get(args[0]);
		VerifyTree loader = new VerifyTree(root, VerifyTree.class.getClassLoader());
		List<String> names;
		try (Stream<Path> s = Files.walk(root)) {
			names = s.filter(p -> p.toString().endsWith(".class"))
					.map(p -> root.relativize(p).toString())
					.filter(n -> !n.endsWith("module-info.class") && !n.endsWith("package-info.class"))
					.map(n -> n.substring(0, n.length() - 6).replace('/', '.'))
					.sorted().collect(Collectors.toList());
		}
		int linked = 0, verify = 0, skipped = 0;
		Map<String, Integer> other = new TreeMap<>();
		for (String n : names) {
			if (n.startsWith("java.")) {
				skipped++;
				continue;
			}
			try {
				Class<?> c = Class.forName(n, false, loader);
				c.getDeclaredMethods();
				linked++;
			} catch (VerifyError e) {
				verify++;
				System.out.println("VerifyError: " + n + (verify <= 20 ? ": " + e.getMessage() : ""));
			} catch (Throwable e) {
				other.merge(e.getClass().getName(), 1, Integer::sum);
			}
		}
		System.out.println("classes " + names.size() + ": linked " + linked + ", VerifyError " + verify
				+ ", not definable here " + skipped + ", other errors " + other);
		System.exit(verify == 0 ? 0 : 1);
	}
}
