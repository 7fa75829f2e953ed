import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.commons.AdviceAdapter;

/**
 * ASM's peer of jinst-bench-edit: the tracing pass's shape with
 * AdviceAdapter over a folder of classes held in memory. Each method with
 * code gets `sipush id; invokestatic jinst/Hooks.enter(I)V` at entry (after
 * super()/this() in constructors), `... exit(I)V` before every return, and a
 * catch-all handler at the end (`... exitThrow(I)V; athrow`, its frame
 * given), listed last in the exception table. Frames are kept
 * (EXPAND_FRAMES, as AdviceAdapter requires); max_stack recomputed
 * (COMPUTE_MAXS).
 *
 *   java -cp asm.jar:asm-commons.jar:. AsmAdvice [--iterations N] [--warmup N] DIR
 */
public final class AsmAdvice {
	private static long sink;

	static final class Hooks extends AdviceAdapter {
		private final int id;
		private final Label start = new Label(), end = new Label(), handler = new Label();
		private boolean entered;

		Hooks(MethodVisitor mv, int access, String name, String desc, int id) {
			super(Opcodes.ASM9, mv, access, name, desc);
			this.id = id;
		}

		@Override
		protected void onMethodEnter() {
			push(id);
			invokeStatic(org.objectweb.asm.Type.getObjectType("jinst/Hooks"),
			             new org.objectweb.asm.commons.Method("enter", "(I)V"));
			visitLabel(start);
			entered = true;
		}

		@Override
		protected void onMethodExit(int opcode) {
			if (opcode == ATHROW)
				return;
			push(id);
			invokeStatic(org.objectweb.asm.Type.getObjectType("jinst/Hooks"),
			             new org.objectweb.asm.commons.Method("exit", "(I)V"));
		}

		@Override
		public void visitMaxs(int maxStack, int maxLocals) {
			if (entered) {
				visitLabel(end);
				visitTryCatchBlock(start, end, handler, null);
				visitLabel(handler);
				visitFrame(Opcodes.F_NEW, 0, new Object[0], 1, new Object[] {"java/lang/Throwable"});
				push(id);
				invokeStatic(org.objectweb.asm.Type.getObjectType("jinst/Hooks"),
				             new org.objectweb.asm.commons.Method("exitThrow", "(I)V"));
				visitInsn(ATHROW);
			}
			super.visitMaxs(maxStack, maxLocals);
		}
	}

	static byte[] transform(byte[] b) {
		ClassReader r = new ClassReader(b);
		ClassWriter w = new ClassWriter(r, ClassWriter.COMPUTE_MAXS);
		r.accept(new ClassVisitor(Opcodes.ASM9, w) {
			int next;

			@Override
			public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] ex) {
				MethodVisitor mv = super.visitMethod(access, name, desc, sig, ex);
				return new Hooks(mv, access, name, desc, next++);
			}
		}, ClassReader.EXPAND_FRAMES);
		return w.toByteArray();
	}

	public static void main(String[] args) throws IOException {
		int iterations = 7, warmup = 5;
		Path dir = null;
		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("--iterations") && i + 1 < args.length)
				iterations = Integer.parseInt(args[++i]);
			else if (args[i].equals("--warmup") && i + 1 < args.length)
				warmup = Integer.parseInt(args[++i]);
			else
				dir = Path.of(args[i]);
		}
		List<byte[]> classes = new ArrayList<>();
		try (Stream<Path> files = Files.walk(dir)) {
			for (Path p : (Iterable<Path>) files.sorted()::iterator)
				if (Files.isRegularFile(p) && p.toString().endsWith(".class"))
					classes.add(Files.readAllBytes(p));
		}
		long total = 0;
		for (byte[] b : classes)
			total += b.length;
		int failed = 0;
		for (int w = 0; w < warmup; w++)
			for (byte[] b : classes) {
				try {
					sink += transform(b).length;
				} catch (RuntimeException e) {
					if (w == 0)
						failed++;
				}
			}
		double[] times = new double[iterations];
		for (int it = 0; it < iterations; it++) {
			long t0 = System.nanoTime();
			for (byte[] b : classes) {
				try {
					sink += transform(b).length;
				} catch (RuntimeException e) {
					// counted in the warm-up
				}
			}
			times[it] = (System.nanoTime() - t0) / 1e9;
		}
		Arrays.sort(times);
		double median = times[iterations / 2];
		System.out.printf("asm advice: %d classes (%d failed), %d bytes, median %.3f s: %.0f classes/s, %.1f MB/s%n",
		                  classes.size(), failed, total, median, classes.size() / median, total / median / 1e6);
		if (sink == 42)
			System.out.println();
	}
}
