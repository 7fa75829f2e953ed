/*
 * The HotSpot verification harness: loads every class of a tree into the
 * running JVM, forces it to be linked (linking is where HotSpot verifies,
 * JVMS 5.4.1) without initializing it, and classifies what went wrong.
 *
 * It is started by verify.sh, which runs the JVM with -Xverify:all (so that
 * boot and platform classes are verified as well as application ones) and
 * with -Xlog:class+init=info written to a file whose path it passes here.
 *
 * Two modes.
 *
 *   jdk ROOT [ORIGINAL]: ROOT is a `jimage extract` tree (MODULE/pkg/Cls.class) that
 *   the JVM was started with as --patch-module MODULE=ROOT/MODULE for every
 *   module, so each class is found by its own module's loader in the patch
 *   before the runtime image. Every class is loaded through that loader.
 *
 *   jars ORIGINAL ROOT: ROOT holds one unit per original jar (a rewritten
 *   jar, or a folder of class files named like the jar). Each unit gets its
 *   own loader that defines the unit's classes from their bytes (child
 *   first) and asks a loader over all ORIGINAL jars, then the JDK, for
 *   everything else. Two jars may hold the same class name: each has its own
 *   loader.
 *
 * Loading is Class.forName(name, false, loader): loaded, not linked, not
 * initialized. getDeclaredMethods() then links: HotSpot's
 * JVM_GetClassDeclaredMethods calls link_class before it builds a single
 * Method object, and linking verifies the class and its supertypes. Building
 * the Method objects afterwards resolves the classes named in their
 * descriptors, which may be missing from the corpus (optional
 * dependencies). So a NoClassDefFoundError does not say whether the class
 * was verified; the class+init log does: HotSpot writes "End class
 * verification for: NAME" after every verification, preceded by
 * "Verification for NAME has exception pending ..." or "... failed" when it
 * did not pass. The log is read after each class, so its lines are those
 * the class (and the supertypes it linked) wrote.
 *
 * Each class ends up in one of these kinds:
 *   verified          linked, or verified by the log and then stopped by a
 *                     class missing from the corpus while building Method
 *                     objects (counted among the verified, and apart);
 *   VerifyError       its own code was rejected (a VerifyError whose
 *                     location is in a supertype is "other": that supertype
 *                     is reported on its own);
 *   ClassFormatError  (UnsupportedClassVersionError apart);
 *   missing           a NoClassDefFoundError or ClassNotFoundException for a
 *                     class that is in neither the tree nor the original
 *                     corpus nor the JDK. A class that IS there but could
 *                     not be loaded is "other", never "missing", so a broken
 *                     dependency cannot hide behind this kind;
 *   other             every other throwable (LinkageError subclasses, wrong
 *                     names, prohibited packages, ...);
 *   not verified by HotSpot  linked, but the log shows no verification
 *                     (HotSpot exempts a few bootstrap and reflection
 *                     classes);
 *   absent            a class of the original corpus that the tree lacks
 *                     (jdk mode: only when ORIGINAL_DIR is given);
 *   skipped           multi-release entries for a newer Java.
 *
 * Output: one line "KIND UNIT!CLASS: message" per class that is not
 * verified (missing ones only with --show-missing), --list-missing adds the
 * missing names with how many classes needed each, and the last line is the
 * summary. Exit status 1 when any VerifyError or ClassFormatError was seen
 * or a class is absent, 2 on usage errors, 0 otherwise.
 */
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

public final class Verify {
	enum Kind {
		VERIFIED("verified"), VERIFY_ERROR("VerifyError"), CLASS_FORMAT_ERROR("ClassFormatError"),
		UNSUPPORTED_VERSION("UnsupportedClassVersionError"), MISSING("missing dependencies"),
		OTHER("other"), UNVERIFIED("not verified by HotSpot"), ABSENT("absent from the tree"),
		SKIPPED("skipped");
		final String label;
		Kind(String label) { this.label = label; }
	}

	/* One loader's worth of classes: a module of a JDK tree or a jar. */
	static final class Unit {
		final String label;
		final Map<String, byte[]> classes = new TreeMap<>(); /* binary name -> bytes */
		ClassLoader loader;
		Unit(String label) { this.label = label; }
	}

	private final Map<Kind, Integer> counts = new HashMap<>();
	private final Map<String, Integer> missingNames = new TreeMap<>();
	private int verifiedDespiteMissing;
	private boolean showMissing, listMissing;
	/* Every class name the corpus offers (tree and original), to tell a
	 * missing dependency from one that is there but broken. */
	private final Set<String> corpusNames = new HashSet<>();
	private RandomAccessFile log;
	private int sample = 1;

	public static void main(String[] args) throws Exception {
		System.exit(new Verify().run(args));
	}

	private static int usage(String why) {
		System.err.println("Verify: " + why);
		System.err.println("usage: Verify [--log FILE] [--sample N] [--show-missing] [--list-missing] jdk ROOT [ORIGINAL_DIR]");
		System.err.println("       Verify [--log FILE] [--sample N] [--show-missing] [--list-missing] jars ORIGINAL_DIR ROOT");
		return 2;
	}

	private int run(String[] args) throws Exception {
		List<String> rest = new ArrayList<>();
		String logPath = null;
		for (int i = 0; i < args.length; i++) {
			switch (args[i]) {
			case "--log":
				if (++i == args.length)
					return usage("--log needs a file");
				logPath = args[i];
				break;
			case "--sample":
				if (++i == args.length || !args[i].matches("[1-9][0-9]*"))
					return usage("--sample needs a positive number");
				sample = Integer.parseInt(args[i]);
				break;
			case "--show-missing": showMissing = true; break;
			case "--list-missing": listMissing = true; break;
			default: rest.add(args[i]);
			}
		}
		if (logPath != null)
			log = new RandomAccessFile(logPath, "r");
		List<Unit> units;
		if ((rest.size() == 2 || rest.size() == 3) && rest.get(0).equals("jdk")) {
			units = jdkUnits(Paths.get(rest.get(1)), rest.size() == 3 ? Paths.get(rest.get(2)) : null);
		} else if (rest.size() == 3 && rest.get(0).equals("jars")) {
			units = jarUnits(Paths.get(rest.get(1)), Paths.get(rest.get(2)));
		} else {
			return usage("bad arguments");
		}
		if (units == null)
			return 2;
		int n = 0, sampled = 0;
		for (Unit u : units)
			for (String name : u.classes.keySet()) {
				n++;
				if (inSample(name))
					sampled++;
			}
		System.err.println("Verify: checking " + (sample == 1 ? n + " classes" : sampled + " of " + n + " classes (1 in " + sample + ", by name)")
			+ " in " + units.size() + " units");
		for (Unit u : units)
			for (String name : u.classes.keySet())
				if (inSample(name))
					check(u, name);
		return report();
	}

	/* With --sample N, the classes whose name hashes to 0 modulo N: the
	 * same classes in every run and in every tree of one corpus. The rest
	 * are still loadable, as dependencies. */
	private boolean inSample(String name) {
		return sample == 1 || (name.hashCode() & 0x7fffffff) % sample == 0;
	}

	/* --- jdk mode ----------------------------------------------------- */

	private List<Unit> jdkUnits(Path root, Path original) throws IOException {
		List<Unit> units = new ArrayList<>();
		for (Path dir : list(root, Files::isDirectory)) {
			String mod = dir.getFileName().toString();
			Map<Integer, Unit> byVersion = new TreeMap<>();
			read(dir, mod, byVersion, new HashSet<>());
			Unit u = byVersion.get(0);
			if (u == null)
				continue;
			Optional<Module> m = ModuleLayer.boot().findModule(mod);
			if (!m.isPresent()) {
				/* Not a module of this runtime: every class is "other",
				 * never silently dropped. */
				for (String name : u.classes.keySet())
					record(Kind.OTHER, u, name, "module " + mod + " is not in the boot layer of this JVM");
				continue;
			}
			u.loader = m.get().getClassLoader();
			units.add(u);
		}
		for (Unit u : units)
			corpusNames.addAll(u.classes.keySet());
		if (original != null)
			for (Path dir : list(original, Files::isDirectory))
				compare(dir, root.resolve(dir.getFileName()));
		return units;
	}

	/* --- jars mode ---------------------------------------------------- */

	private List<Unit> jarUnits(Path original, Path root) throws IOException {
		List<Path> jars = list(original, p -> p.toString().endsWith(".jar") && Files.isRegularFile(p));
		if (jars.isEmpty()) {
			usage("no .jar in " + original);
			return null;
		}
		URL[] urls = new URL[jars.size()];
		for (int i = 0; i < urls.length; i++) {
			urls[i] = jars.get(i).toUri().toURL();
			for (String path : classPaths(jars.get(i)))
				corpusNames.add(stripVersion(path).replace('/', '.').replaceAll("\\.class$", ""));
		}
		/* The dependencies: every original jar, then the JDK (platform
		 * loader, so the class path of this harness is not visible). */
		ClassLoader deps = new URLClassLoader("original-corpus", urls, ClassLoader.getPlatformClassLoader());
		List<Unit> units = new ArrayList<>();
		int feature = Runtime.version().feature();
		for (Path p : list(root, p -> Files.isDirectory(p) || p.toString().endsWith(".jar"))) {
			String label = p.getFileName().toString();
			Map<Integer, Unit> byVersion = new TreeMap<>();
			read(p, label, byVersion, new HashSet<>());
			for (Map.Entry<Integer, Unit> e : byVersion.entrySet()) {
				Unit u = e.getValue();
				if (e.getKey() > feature) {
					for (String name : u.classes.keySet())
						record(Kind.SKIPPED, u, name, "multi-release entry for Java " + e.getKey());
					continue;
				}
				u.loader = new UnitLoader(u, deps);
				units.add(u);
				corpusNames.addAll(u.classes.keySet());
			}
		}
		/* Each original jar's classes must all be in the tree, as x.jar,
		 * a folder x.jar or a folder x. */
		for (Path jar : jars) {
			String name = jar.getFileName().toString();
			Path mirror = root.resolve(name);
			if (!Files.exists(mirror) && Files.isDirectory(root.resolve(name.substring(0, name.length() - 4))))
				mirror = root.resolve(name.substring(0, name.length() - 4));
			compare(jar, mirror);
		}
		return units;
	}

	/* --- reading ------------------------------------------------------ */

	interface Bytes {
		byte[] get() throws IOException;
	}

	interface Sink {
		void accept(String path, Bytes bytes) throws IOException;
	}

	private static List<Path> list(Path dir, java.util.function.Predicate<Path> keep) throws IOException {
		try (Stream<Path> s = Files.list(dir)) {
			return s.filter(keep).sorted().collect(Collectors.toList());
		}
	}

	/* Every file of a jar or a folder, by its path inside it. */
	private static void walk(Path p, Sink sink) throws IOException {
		if (Files.isDirectory(p)) {
			List<Path> files;
			try (Stream<Path> s = Files.walk(p)) {
				files = s.filter(Files::isRegularFile).sorted().collect(Collectors.toList());
			}
			for (Path f : files)
				sink.accept(p.relativize(f).toString().replace('\\', '/'), () -> Files.readAllBytes(f));
			return;
		}
		try (ZipFile z = new ZipFile(p.toFile())) {
			for (Enumeration<? extends ZipEntry> e = z.entries(); e.hasMoreElements();) {
				ZipEntry ze = e.nextElement();
				if (ze.isDirectory())
					continue;
				sink.accept(ze.getName(), () -> {
					try (InputStream in = z.getInputStream(ze)) {
						return readAll(in);
					}
				});
			}
		}
	}

	private static final Pattern VERSIONED = Pattern.compile("META-INF/versions/(\\d+)/(.*)");

	private static String stripVersion(String entry) {
		Matcher m = VERSIONED.matcher(entry);
		return m.matches() ? m.group(2) : entry;
	}

	/* Which entries are classes to check: not module descriptors, and
	 * under META-INF/ only the versioned classes of a multi-release jar.
	 * Returns the version (0 for the base) or -1. */
	private static int classVersion(String path) {
		if (!path.endsWith(".class") || path.endsWith("module-info.class"))
			return -1;
		Matcher m = VERSIONED.matcher(path);
		if (m.matches())
			return Integer.parseInt(m.group(1));
		return path.startsWith("META-INF/") ? -1 : 0;
	}

	private static Set<String> classPaths(Path p) throws IOException {
		Set<String> paths = new TreeSet<>();
		walk(p, (path, bytes) -> {
			if (classVersion(path) >= 0)
				paths.add(path);
		});
		return paths;
	}

	/* The classes of a jar or folder, into one unit per version. */
	private void read(Path p, String label, Map<Integer, Unit> byVersion, Set<String> paths) throws IOException {
		walk(p, (path, bytes) -> {
			int v = classVersion(path);
			if (v < 0)
				return;
			paths.add(path);
			Unit u = byVersion.computeIfAbsent(v, k -> new Unit(k == 0 ? label : label + "!META-INF/versions/" + k));
			addClass(u, path, bytes.get());
		});
	}

	/* A class of the original that the tree lacks is a failure too: a
	 * rewriter that drops classes must not pass for one whose classes all
	 * verify. */
	private void compare(Path original, Path mirror) throws IOException {
		Set<String> absent = classPaths(original);
		String label = mirror.getFileName().toString();
		if (Files.exists(mirror))
			absent.removeAll(classPaths(mirror));
		Unit u = new Unit(label);
		for (String path : absent)
			record(Kind.ABSENT, u, path.substring(0, path.length() - ".class".length()).replace('/', '.'),
				"in " + original + ", not in the tree");
	}

	/* Child first for the unit's own classes, the original corpus and the
	 * JDK for the rest. */
	static final class UnitLoader extends ClassLoader {
		private final Unit unit;
		UnitLoader(Unit unit, ClassLoader parent) {
			super("unit:" + unit.label, parent);
			this.unit = unit;
		}
		@Override
		protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
			synchronized (getClassLoadingLock(name)) {
				Class<?> c = findLoadedClass(name);
				if (c == null) {
					byte[] b = unit.classes.get(name);
					if (b == null)
						return super.loadClass(name, resolve);
					c = defineClass(name, b, 0, b.length);
				}
				if (resolve)
					resolveClass(c);
				return c;
			}
		}
	}

	/* The name is this_class of the bytes (JVMS 4.1), so a class stored
	 * under the wrong path is still loaded by its own name; the path's name
	 * stands in when the bytes cannot be parsed (the JVM will say why). */
	private void addClass(Unit u, String path, byte[] b) {
		String name = thisClass(b);
		if (name == null)
			name = path.substring(0, path.length() - ".class".length());
		name = name.replace('/', '.');
		if (u.classes.containsKey(name)) {
			record(Kind.OTHER, u, name, "two entries define this class (" + path + ")");
			return;
		}
		u.classes.put(name, b);
	}

	private static String thisClass(byte[] b) {
		try {
			DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(b));
			if (in.readInt() != 0xCAFEBABE)
				return null;
			in.readUnsignedShort();
			in.readUnsignedShort();
			int n = in.readUnsignedShort();
			String[] utf8 = new String[n];
			int[] classIndex = new int[n];
			for (int i = 1; i < n; i++) {
				int tag = in.readUnsignedByte();
				switch (tag) {
				case 1: utf8[i] = in.readUTF(); break;
				case 7: classIndex[i] = in.readUnsignedShort(); break;
				case 8: case 16: case 19: case 20: in.readUnsignedShort(); break;
				case 15: in.readUnsignedByte(); in.readUnsignedShort(); break;
				case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18: in.readInt(); break;
				case 5: case 6: in.readLong(); i++; break;
				default: return null;
				}
			}
			in.readUnsignedShort();
			int thisIndex = in.readUnsignedShort();
			if (thisIndex <= 0 || thisIndex >= n || classIndex[thisIndex] <= 0 || classIndex[thisIndex] >= n)
				return null;
			return utf8[classIndex[thisIndex]];
		} catch (IOException | RuntimeException e) {
			return null;
		}
	}

	private static byte[] readAll(InputStream in) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		byte[] buf = new byte[1 << 16];
		for (int n; (n = in.read(buf)) > 0;)
			out.write(buf, 0, n);
		return out.toByteArray();
	}

	/* --- checking ----------------------------------------------------- */

	private void check(Unit u, String name) {
		Throwable failure = null;
		Class<?> c = null;
		try {
			c = Class.forName(name, false, u.loader);
			c.getDeclaredMethods();
		} catch (Throwable t) {
			failure = t;
		}
		readLog();
		if (failure == null) {
			ClassLoader got = c.getClassLoader();
			if (got != u.loader) {
				record(Kind.OTHER, u, name, "loaded by " + got + ", not by " + u.loader);
				return;
			}
			if (u.loader == null || !(u.loader instanceof UnitLoader)) {
				/* jdk mode: it must come from the module the tree puts it in. */
				String mod = c.getModule().getName();
				if (!u.label.equals(mod)) {
					record(Kind.OTHER, u, name, "loaded from module " + mod);
					return;
				}
			}
			if (log != null && !verifiedOk.contains(name)) {
				/* Linked, yet HotSpot wrote no verification for it: on
				 * JDK 17 it exempts java.lang.Object, Class, String and
				 * Throwable, and the subclasses of
				 * jdk.internal.reflect.MagicAccessorImpl (no other loader
				 * may define those: java.* is prohibited, and HotSpot
				 * refuses a MagicAccessorImpl subclass outside the boot
				 * loader), and shared archive classes (-Xshare:off). */
				record(Kind.UNVERIFIED, u, name, "linked, but HotSpot did not verify it");
				return;
			}
			record(Kind.VERIFIED, u, name, null);
			return;
		}
		classify(u, name, failure);
	}

	private static final Pattern LOCATION = Pattern.compile("Location:\\s*\\n\\s*([^\\s.(]+)\\.");
	private static final Pattern OLD_LOCATION = Pattern.compile("^\\(class: ([^,]+),");

	private void classify(Unit u, String name, Throwable t) {
		String msg = oneLine(t);
		if (t instanceof VerifyError) {
			String where = verifyLocation(t.getMessage());
			if (where != null && !where.replace('/', '.').equals(name)) {
				record(Kind.OTHER, u, name, "VerifyError in supertype " + where + ": " + msg);
				return;
			}
			record(Kind.VERIFY_ERROR, u, name, msg);
			return;
		}
		if (t instanceof UnsupportedClassVersionError) {
			record(Kind.UNSUPPORTED_VERSION, u, name, msg);
			return;
		}
		if (t instanceof ClassFormatError) {
			record(Kind.CLASS_FORMAT_ERROR, u, name, msg);
			return;
		}
		if (t instanceof NoClassDefFoundError || t instanceof ClassNotFoundException) {
			String missing = missingName(t);
			if (t instanceof ClassNotFoundException && name.equals(missing)) {
				record(Kind.OTHER, u, name, "not found by its own loader: " + msg);
				return;
			}
			if (missing == null || corpusNames.contains(missing)) {
				record(Kind.OTHER, u, name, t.getClass().getSimpleName()
					+ (missing == null ? "" : " for " + missing + ", which the corpus has") + ": " + msg);
				return;
			}
			missingNames.merge(missing, 1, Integer::sum);
			if (verifiedOk.contains(name)) {
				/* Verified; only building Method objects met the gap. */
				verifiedDespiteMissing++;
				record(Kind.VERIFIED, u, name, null);
				return;
			}
			record(Kind.MISSING, u, name, missing);
			return;
		}
		record(Kind.OTHER, u, name, t.getClass().getName() + ": " + msg);
	}

	static String verifyLocation(String m) {
		if (m == null)
			return null;
		Matcher a = LOCATION.matcher(m);
		if (a.find())
			return a.group(1);
		Matcher b = OLD_LOCATION.matcher(m);
		if (b.find())
			return b.group(1);
		return null;
	}

	/* The class that could not be found: NoClassDefFoundError's message is
	 * its internal name, ClassNotFoundException's its binary name; the
	 * innermost one of the cause chain names the class that is really
	 * absent. */
	private static String missingName(Throwable t) {
		String found = null;
		for (Throwable x = t; x != null; x = x.getCause()) {
			if (!(x instanceof NoClassDefFoundError || x instanceof ClassNotFoundException))
				continue;
			String m = x.getMessage();
			if (m == null || m.contains(" "))
				return null; /* "Could not initialize", "(wrong name: ...)", ... */
			found = m.replace('/', '.');
		}
		return found;
	}

	private static String oneLine(Throwable t) {
		String m = t.getMessage();
		if (m == null)
			return t.getClass().getName();
		String first = m.split("\n", 2)[0];
		int at = m.indexOf("Location:");
		if (at >= 0) {
			String[] lines = m.substring(at).split("\n");
			if (lines.length > 1)
				first += " [" + lines[1].trim() + "]";
		}
		return first;
	}

	/* --- the class+init log ------------------------------------------- */

	/* What the log said so far: the classes whose last verification passed,
	 * and those whose last one did not. */
	private final Set<String> verifiedOk = new HashSet<>();
	private final Set<String> verifyFailed = new HashSet<>();
	private static final String END = "End class verification for: ";
	private static final Pattern PENDING = Pattern.compile("Verification for (\\S+) (has exception pending|failed)");
	private final StringBuilder partial = new StringBuilder();
	private String lastFailed;

	private void readLog() {
		if (log == null)
			return;
		try {
			byte[] buf = new byte[1 << 16];
			for (int n; (n = log.read(buf)) > 0;)
				partial.append(new String(buf, 0, n, StandardCharsets.UTF_8));
		} catch (IOException e) {
			return;
		}
		int nl;
		while ((nl = partial.indexOf("\n")) >= 0) {
			String line = partial.substring(0, nl);
			partial.delete(0, nl + 1);
			int e = line.indexOf(END);
			if (e >= 0) {
				String name = line.substring(e + END.length()).trim();
				if (!name.equals(lastFailed)) {
					verifiedOk.add(name);
					verifyFailed.remove(name);
				}
				lastFailed = null;
				continue;
			}
			Matcher m = PENDING.matcher(line);
			if (m.find()) {
				lastFailed = m.group(1);
				verifyFailed.add(lastFailed);
				verifiedOk.remove(lastFailed);
			}
		}
	}

	/* --- results ------------------------------------------------------ */

	private void record(Kind k, Unit u, String name, String why) {
		counts.merge(k, 1, Integer::sum);
		if (k == Kind.VERIFIED || (k == Kind.MISSING && !showMissing))
			return;
		String kind = k == Kind.MISSING ? "missing" : k == Kind.ABSENT ? "absent" : k.label;
		System.out.println(kind + " " + u.label + "!" + name + ": " + why);
	}

	private int report() {
		if (listMissing) {
			List<Map.Entry<String, Integer>> l = new ArrayList<>(missingNames.entrySet());
			l.sort((a, b) -> b.getValue() - a.getValue() != 0 ? b.getValue() - a.getValue() : a.getKey().compareTo(b.getKey()));
			for (Map.Entry<String, Integer> e : l)
				System.out.println("missing-class " + e.getKey() + " (needed by " + e.getValue() + ")");
		}
		int total = 0;
		for (int v : counts.values())
			total += v;
		StringBuilder sb = new StringBuilder();
		sb.append(total).append(" classes: ");
		String sep = "";
		for (Kind k : Kind.values()) {
			sb.append(sep).append(counts.getOrDefault(k, 0)).append(' ').append(k.label);
			if (k == Kind.VERIFIED && verifiedDespiteMissing > 0)
				sb.append(" (").append(verifiedDespiteMissing).append(" with a missing descriptor type)");
			sep = ", ";
		}
		System.out.println(sb);
		System.out.flush();
		return counts.getOrDefault(Kind.VERIFY_ERROR, 0) + counts.getOrDefault(Kind.CLASS_FORMAT_ERROR, 0)
			+ counts.getOrDefault(Kind.ABSENT, 0) > 0 ? 1 : 0;
	}
}
