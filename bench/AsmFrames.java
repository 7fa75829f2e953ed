import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.commons.AdviceAdapter;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.FrameNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.BasicVerifier;
import org.objectweb.asm.tree.analysis.Frame;

/**
 * ASM's frame work over a folder of classes held in memory, the peer of
 * jinst-bench-frames:
 *
 *   recompute: ClassReader (SKIP_FRAMES) -> new ClassWriter(COMPUTE_FRAMES),
 *              every frame and max computed again. getCommonSuperClass is
 *              answered from a map (internal name -> super name, interface
 *              or not) built from the same folder before timing, so ASM
 *              loads no class. The writer is not given the reader: with a
 *              reader, ASM copies untouched methods verbatim, old frames
 *              and all, and would recompute nothing.
 *   insert:    ClassReader (EXPAND_FRAMES, which AdviceAdapter needs) ->
 *              AdviceAdapter per method with code: `ldc id; invokestatic
 *              jinst/rt/Hooks.enter(I)V` on entry (after super() in
 *              constructors) and `ldc id; invokestatic jinst/rt/Hooks.exit(I)V`
 *              before every *return (not athrow) -> new ClassWriter(reader, 0):
 *              frames are kept (ASM re-encodes the ones it read), not
 *              recomputed. Max stack is not recomputed either (COMPUTE_MAXS
 *              would run a control-flow analysis the task does not need):
 *              the inserted code pushes one int at a time onto whatever the
 *              stack held, so max_stack + 1 is always enough. Method ids
 *              count the methods with code from 0 in each pass, so every
 *              pass writes the same bytes.
 *
 * Which classes are timed: classes older than version 50 (Java 6) carry no
 * frames and need none, so recompute leaves them out (the count is printed;
 * the JDK 17 corpus has none); insert takes every class. A class whose
 * transformation throws (a type missing from the map, jsr/ret, which
 * COMPUTE_FRAMES refuses) is counted, reported, and left out of the timed
 * passes of that mode, so every pass does the same work. The bytes of the
 * timed classes are the MB/s basis.
 *
 * Before timing, one pass checks the output of each mode: every class parses
 * again; insert has one enter call per method with code (none where
 * AdviceAdapter sees no super()/this() call: java/lang/Object.<init>; these
 * are counted) and one exit call before each return, each with the method's
 * id; and, for every class
 * of the check sample, ASM's analyzer (BasicVerifier) runs over each method
 * with the written max_stack/max_locals, and each written frame must agree
 * with what the analysis finds at that offset (int, float, long, double or
 * reference in each slot the frame declares).
 *
 * Each mode is warmed up (untimed passes, so the JIT has compiled the hot
 * code) before its timed passes; the median is reported in the same line
 * format as jinst-bench-frames:
 *
 *   asm recompute: C classes, B bytes, median S s: X classes/s, Y MB/s (F failed)
 *
 *   java -cp asm.jar:asm-commons.jar:asm-tree.jar:asm-analysis.jar:. AsmFrames
 *        [--iterations N] [--warmup N] [--check-every K] DIR
 */
public final class AsmFrames {
	private static long sink;
	/** Written frames the checks compared with the analysis. */
	private static long framesCompared;

	/** What the common-super-class answer needs to know of one class. */
	private record Header(String superName, boolean isInterface) {
	}

	/** A type the map does not know, the recompute failure to report. */
	private static final class UnknownType extends RuntimeException {
		UnknownType(String name) {
			super("class " + name + " is not in the corpus", null, false, false);
		}
	}

	public static void main(String[] args) throws IOException, AnalyzerException {
		int iterations = 7, warmup = 5, checkEvery = 1;
		Path dir = null;
		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("--iterations") && i + 1 < args.length) {
				iterations = Integer.parseInt(args[++i]);
			} else if (args[i].equals("--warmup") && i + 1 < args.length) {
				warmup = Integer.parseInt(args[++i]);
			} else if (args[i].equals("--check-every") && i + 1 < args.length) {
				checkEvery = Integer.parseInt(args[++i]);
			} else if (dir == null && !args[i].startsWith("-")) {
				dir = Path.of(args[i]);
			} else {
				dir = null;
				break;
			}
		}
		if (dir == null || iterations < 1 || checkEvery < 1) {
			System.err.println("usage: AsmFrames [--iterations N] [--warmup N] [--check-every K] DIR");
			System.exit(2);
		}
		List<byte[]> classes = new ArrayList<>();
		try (Stream<Path> files = Files.walk(dir)) {
			for (Path p : (Iterable<Path>) files.sorted()::iterator) {
				if (Files.isRegularFile(p) && p.toString().endsWith(".class")) {
					classes.add(Files.readAllBytes(p));
				}
			}
		}
		byte[][] corpus = classes.toArray(new byte[0][]);

		Map<String, Header> hierarchy = new HashMap<>();
		for (byte[] b : corpus) {
			ClassReader r = new ClassReader(b);
			if ((r.getAccess() & Opcodes.ACC_MODULE) == 0) {
				hierarchy.put(r.getClassName(), new Header(r.getSuperName(),
						(r.getAccess() & Opcodes.ACC_INTERFACE) != 0));
			}
		}
		System.out.printf("asm hierarchy: %d classes read from %s%n", hierarchy.size(), dir);

		byte[][] recomputeSet = selectRecompute(corpus, hierarchy, checkEvery);
		framesCompared = 0;
		byte[][] insertSet = selectInsert(corpus, checkEvery);

		run("recompute", recomputeSet, corpus.length - recomputeSet.length, warmup, iterations,
				() -> recomputePass(recomputeSet, hierarchy));
		run("insert", insertSet, corpus.length - insertSet.length, warmup, iterations,
				() -> insertPass(insertSet));
		if (sink == 42) {
			System.out.println();
		}
	}

	private static void run(String name, byte[][] set, int left, int warmup, int iterations,
			Runnable pass) {
		long total = 0;
		for (byte[] b : set) {
			total += b.length;
		}
		for (int i = 0; i < warmup; i++) {
			pass.run();
		}
		double[] times = new double[iterations];
		for (int i = 0; i < iterations; i++) {
			long t0 = System.nanoTime();
			pass.run();
			times[i] = (System.nanoTime() - t0) / 1e9;
		}
		Arrays.sort(times);
		double median = times[iterations / 2];
		System.out.printf("asm %s: %d classes, %d bytes, median %.3f s: %.0f classes/s, %.1f MB/s"
				+ " (%d failed)%n", name, set.length, total, median, set.length / median,
				total / median / 1e6, left);
		System.out.flush();
	}

	// ---- recompute ----------------------------------------------------------

	/** A ClassWriter whose common super classes come from the corpus map. */
	private static final class MapWriter extends ClassWriter {
		private final Map<String, Header> hierarchy;

		MapWriter(Map<String, Header> hierarchy) {
			super(ClassWriter.COMPUTE_FRAMES);
			this.hierarchy = hierarchy;
		}

		private Header header(String name) {
			Header h = hierarchy.get(name);
			if (h == null) {
				throw new UnknownType(name);
			}
			return h;
		}

		/**
		 * As the verifier merges (JVMS 4.10.1.2), and as jinst's inference
		 * does: an interface merges to Object; two classes merge to the
		 * nearest class on both super chains. (ASM's default would answer
		 * the interface when the other type implements it; the verifier
		 * treats interfaces as Object either way.) ASM only asks about two
		 * distinct class (not array) names.
		 */
		@Override
		protected String getCommonSuperClass(String a, String b) {
			Header ha = header(a), hb = header(b);
			if (ha.isInterface || hb.isInterface) {
				return "java/lang/Object";
			}
			for (String x = a; x != null; x = header(x).superName) {
				for (String y = b; y != null; y = header(y).superName) {
					if (x.equals(y)) {
						return x;
					}
				}
			}
			return "java/lang/Object";
		}
	}

	private static byte[] recompute(byte[] b, Map<String, Header> hierarchy) {
		ClassReader reader = new ClassReader(b);
		ClassWriter writer = new MapWriter(hierarchy);
		reader.accept(writer, ClassReader.SKIP_FRAMES);
		return writer.toByteArray();
	}

	private static void recomputePass(byte[][] set, Map<String, Header> hierarchy) {
		for (byte[] b : set) {
			sink += recompute(b, hierarchy).length;
		}
	}

	private static int majorVersion(byte[] b) {
		return ((b[6] & 0xff) << 8) | (b[7] & 0xff);
	}

	/** Transforms and checks every class once; returns the ones to time. */
	private static byte[][] selectRecompute(byte[][] corpus, Map<String, Header> hierarchy,
			int checkEvery) throws AnalyzerException {
		List<byte[]> set = new ArrayList<>();
		Map<String, Integer> failures = new TreeMap<>();
		int old = 0, methods = 0, withFrames = 0, framesIn = 0, checked = 0, checkedMethods = 0;
		List<String> bad = new ArrayList<>();
		for (int i = 0; i < corpus.length; i++) {
			byte[] b = corpus[i];
			if (majorVersion(b) < 50) {
				old++;
				continue;
			}
			byte[] out;
			try {
				out = recompute(b, hierarchy);
			} catch (RuntimeException e) {
				fail(failures, new ClassReader(b).getClassName(), e);
				continue;
			}
			set.add(b);
			ClassNode in = node(b), node = node(out);
			for (MethodNode m : in.methods) {
				framesIn += frameCount(m) > 0 ? 1 : 0;
			}
			for (MethodNode m : node.methods) {
				if (m.instructions.size() > 0) {
					methods++;
					withFrames += frameCount(m) > 0 ? 1 : 0;
				}
			}
			if (i % checkEvery == 0) {
				checked++;
				checkedMethods += check(node, bad);
			}
		}
		System.out.printf("asm recompute check: %d classes (%d older than version 50 left out),"
				+ " %d methods with code, %d with frames written (%d had frames before);"
				+ " %d classes, %d methods, %d frames analysed: %d bad%n", set.size(), old, methods,
				withFrames, framesIn, checked, checkedMethods, framesCompared, bad.size());
		report("recompute", failures, bad);
		return set.toArray(new byte[0][]);
	}

	// ---- insert -------------------------------------------------------------

	private static final String HOOKS = "jinst/rt/Hooks";

	/** Puts the entry and exit calls into every method with code. */
	private static final class Inserter extends ClassVisitor {
		private final int[] ids;

		Inserter(ClassVisitor next, int[] ids) {
			super(Opcodes.ASM9, next);
			this.ids = ids;
		}

		@Override
		public MethodVisitor visitMethod(int access, String name, String descriptor,
				String signature, String[] exceptions) {
			MethodVisitor mv = super.visitMethod(access, name, descriptor, signature, exceptions);
			if (mv == null || (access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) != 0) {
				return mv;
			}
			Integer id = ids[0]++;
			return new AdviceAdapter(Opcodes.ASM9, mv, access, name, descriptor) {
				@Override
				protected void onMethodEnter() {
					mv.visitLdcInsn(id);
					mv.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "enter", "(I)V", false);
				}

				@Override
				protected void onMethodExit(int opcode) {
					if (opcode != Opcodes.ATHROW) {
						mv.visitLdcInsn(id);
						mv.visitMethodInsn(Opcodes.INVOKESTATIC, HOOKS, "exit", "(I)V", false);
					}
				}

				@Override
				public void visitMaxs(int maxStack, int maxLocals) {
					super.visitMaxs(maxStack + 1, maxLocals);
				}
			};
		}
	}

	private static byte[] insert(byte[] b, int[] ids) {
		ClassReader reader = new ClassReader(b);
		ClassWriter writer = new ClassWriter(reader, 0);
		reader.accept(new Inserter(writer, ids), ClassReader.EXPAND_FRAMES);
		return writer.toByteArray();
	}

	private static void insertPass(byte[][] set) {
		int[] ids = {0};
		for (byte[] b : set) {
			sink += insert(b, ids).length;
		}
	}

	private static byte[][] selectInsert(byte[][] corpus, int checkEvery) throws AnalyzerException {
		List<byte[]> set = new ArrayList<>();
		Map<String, Integer> failures = new TreeMap<>();
		int[] ids = {0};
		int methods = 0, enters = 0, exits = 0, returns = 0, noEnter = 0, checked = 0,
				checkedMethods = 0;
		List<String> bad = new ArrayList<>();
		for (int i = 0; i < corpus.length; i++) {
			byte[] b = corpus[i];
			int first = ids[0];
			byte[] out;
			try {
				out = insert(b, ids);
			} catch (RuntimeException e) {
				fail(failures, new ClassReader(b).getClassName(), e);
				ids[0] = first;
				continue;
			}
			set.add(b);
			ClassNode node = node(out);
			int id = first;
			for (MethodNode m : node.methods) {
				if (m.instructions.size() == 0) {
					continue;
				}
				methods++;
				int en = 0, ex = 0, ret = 0;
				for (AbstractInsnNode insn : m.instructions) {
					int op = insn.getOpcode();
					if (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
						ret++;
					} else if (insn instanceof MethodInsnNode call && call.owner.equals(HOOKS)) {
						Object arg = insn.getPrevious() instanceof LdcInsnNode ldc ? ldc.cst : null;
						boolean isEnter = call.name.equals("enter");
						if (!Integer.valueOf(id).equals(arg)) {
							bad.add(node.name + "." + m.name + m.desc + ": hook call without its id " + id);
						}
						en += isEnter ? 1 : 0;
						ex += isEnter ? 0 : 1;
						AbstractInsnNode next = insn.getNext();
						while (next != null && next.getOpcode() < 0) {
							next = next.getNext();
						}
						if (!isEnter && (next == null || next.getOpcode() < Opcodes.IRETURN
								|| next.getOpcode() > Opcodes.RETURN)) {
							bad.add(node.name + "." + m.name + m.desc + ": exit call not before a return");
						}
					}
				}
				if (en > 1 || ex != ret) {
					bad.add(node.name + "." + m.name + m.desc + ": " + en + " enter, " + ex
							+ " exit calls for " + ret + " returns");
				}
				if (en == 0 && ++noEnter <= 5) {
					System.out.println("  no enter call (AdviceAdapter saw no super() or this()"
							+ " call): " + node.name + "." + m.name + m.desc);
				}
				enters += en;
				exits += ex;
				returns += ret;
				id++;
			}
			if (id != ids[0]) {
				bad.add(node.name + ": " + (id - first) + " methods with code, " + (ids[0] - first)
						+ " ids given");
			}
			if (i % checkEvery == 0) {
				checked++;
				checkedMethods += check(node, bad);
			}
		}
		System.out.printf("asm insert check: %d classes, %d methods with code (%d ids), %d enter"
				+ " calls (%d methods without one), %d exit calls for %d returns;"
				+ " %d classes, %d methods, %d frames analysed: %d bad%n", set.size(), methods,
				ids[0], enters, noEnter, exits, returns, checked, checkedMethods, framesCompared,
				bad.size());
		report("insert", failures, bad);
		return set.toArray(new byte[0][]);
	}

	// ---- checks -------------------------------------------------------------

	private static ClassNode node(byte[] b) {
		ClassNode node = new ClassNode();
		new ClassReader(b).accept(node, ClassReader.EXPAND_FRAMES);
		return node;
	}

	private static int frameCount(MethodNode m) {
		int n = 0;
		for (AbstractInsnNode insn : m.instructions) {
			n += insn instanceof FrameNode ? 1 : 0;
		}
		return n;
	}

	/**
	 * Runs ASM's BasicVerifier over every method with code (it refuses
	 * operands of the wrong kind and a stack deeper than max_stack) and
	 * compares each written frame with the analysis at its offset. Returns
	 * the number of methods analysed; problems go to bad.
	 */
	private static int check(ClassNode node, List<String> bad) {
		int n = 0;
		for (MethodNode m : node.methods) {
			if (m.instructions.size() == 0) {
				continue;
			}
			n++;
			String where = node.name + "." + m.name + m.desc;
			Frame<BasicValue>[] frames;
			try {
				frames = new Analyzer<>(new BasicVerifier()).analyze(node.name, m);
			} catch (AnalyzerException e) {
				bad.add(where + ": " + e.getMessage());
				continue;
			}
			for (int i = 0; i < m.instructions.size(); i++) {
				if (!(m.instructions.get(i) instanceof FrameNode f)) {
					continue;
				}
				int k = i;
				while (k < m.instructions.size() && m.instructions.get(k).getOpcode() < 0) {
					k++;
				}
				Frame<BasicValue> at = k < frames.length ? frames[k] : null;
				if (at == null) {
					continue; // unreachable code: the analysis has nothing to compare
				}
				framesCompared++;
				String why = compare(f, at);
				if (why != null) {
					bad.add(where + ": frame before instruction " + k + ": " + why);
					break;
				}
			}
		}
		return n;
	}

	/** Null when the declared frame f fits the analysed frame at. */
	private static String compare(FrameNode f, Frame<BasicValue> at) {
		int slot = 0;
		if (f.local != null) {
			for (Object t : f.local) {
				if (slot >= at.getLocals()) {
					return "local " + slot + " beyond max_locals";
				}
				if (!fits(t, at.getLocal(slot))) {
					return "local " + slot + " declared " + t + ", found " + at.getLocal(slot);
				}
				slot += t == Opcodes.LONG || t == Opcodes.DOUBLE ? 2 : 1;
			}
		}
		int depth = f.stack == null ? 0 : f.stack.size();
		if (depth != at.getStackSize()) {
			return "stack of " + depth + " declared, " + at.getStackSize() + " found";
		}
		for (int s = 0; s < depth; s++) {
			if (!fits(f.stack.get(s), at.getStack(s))) {
				return "stack " + s + " declared " + f.stack.get(s) + ", found " + at.getStack(s);
			}
		}
		return null;
	}

	private static boolean fits(Object declared, BasicValue v) {
		if (declared == Opcodes.TOP) {
			return true;
		}
		if (declared == Opcodes.INTEGER) {
			return v == BasicValue.INT_VALUE;
		}
		if (declared == Opcodes.FLOAT) {
			return v == BasicValue.FLOAT_VALUE;
		}
		if (declared == Opcodes.LONG) {
			return v == BasicValue.LONG_VALUE;
		}
		if (declared == Opcodes.DOUBLE) {
			return v == BasicValue.DOUBLE_VALUE;
		}
		return v != null && v.isReference(); // null, uninitialized, a class or array name
	}

	private static void fail(Map<String, Integer> failures, String cls, RuntimeException e) {
		String kind = e.getClass().getSimpleName() + ": " + e.getMessage();
		if (failures.merge(kind, 1, Integer::sum) == 1) {
			System.out.println("  failed: " + cls + ": " + kind);
		}
	}

	private static void report(String mode, Map<String, Integer> failures, List<String> bad) {
		failures.forEach((kind, n) -> System.out.printf("asm %s failed: %d x %s%n", mode, n, kind));
		for (int i = 0; i < bad.size() && i < 10; i++) {
			System.out.println("  bad: " + bad.get(i));
		}
	}
}
