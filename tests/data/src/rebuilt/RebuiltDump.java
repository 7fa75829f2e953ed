import java.io.InputStream;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;

/*
 * Writes the class files a VM rebuilds for RetransformClasses (JVMTI hands
 * every ClassFileLoadHook of a retransformation the same bytes), beside
 * the class files the classes were loaded from.
 *
 *   java -javaagent:dump.jar -cp dump.jar RebuiltDump OUT [CLASS...]
 *
 * OUT/rebuilt/NAME.class  the bytes the VM rebuilt
 * OUT/image/NAME.class    the class file, as the class's own loader finds
 *                         it (the JDK's from the runtime image, jrt:/)
 * With CLASS names (binary names), those classes, loaded first and the
 * first one's main run without arguments (so the interpreter has rewritten
 * their bytecodes, which the rebuilding undoes); without, every class
 * loaded at that point that the VM may modify.
 */
public class RebuiltDump {
	static Instrumentation inst;

	public static void premain(String args, Instrumentation i) {
		inst = i;
	}

	static void write(Path p, byte[] b) throws Exception {
		Files.createDirectories(p.getParent());
		Files.write(p, b);
	}

	public static void main(String[] args) throws Exception {
		Path out = Paths.get(args[0]);
		List<Class<?>> picked = new ArrayList<>();
		if (args.length > 1) {
			for (int k = 1; k < args.length; k++)
				picked.add(Class.forName(args[k]));
			picked.get(0).getMethod("main", String[].class).invoke(null, (Object) new String[0]);
		} else {
			for (Class<?> c : inst.getAllLoadedClasses())
				if (inst.isModifiableClass(c) && !c.isArray() && !c.getName().startsWith("RebuiltDump"))
					picked.add(c);
		}
		ClassFileTransformer t = new ClassFileTransformer() {
			public byte[] transform(ClassLoader l, String name, Class<?> c, ProtectionDomain pd, byte[] b) {
				try {
					if (c != null && name != null)
						write(out.resolve("rebuilt/" + name + ".class"), b);
				} catch (Exception e) {
					throw new RuntimeException(e);
				}
				return null;
			}
		};
		List<Class<?>> found = new ArrayList<>();
		for (Class<?> c : picked) {
			String name = c.getName().replace('.', '/');
			try (InputStream in = c.getResourceAsStream("/" + name + ".class")) {
				if (in == null)
					continue;
				write(out.resolve("image/" + name + ".class"), in.readAllBytes());
			}
			found.add(c);
		}
		inst.addTransformer(t, true);
		/* All at once (one safepoint), else one by one. */
		try {
			inst.retransformClasses(found.toArray(new Class<?>[0]));
		} catch (Throwable e) {
			for (Class<?> c : found)
				inst.retransformClasses(c);
		}
		inst.removeTransformer(t);
		System.out.println(found.size() + " classes written");
	}
}
