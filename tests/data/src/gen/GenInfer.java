import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;

import static org.objectweb.asm.Opcodes.*;

/*
 * Writes the classes of frame-inference cases that javac never produces
 * (tests/unit/test_infer.c). They carry no StackMapTable: the frames are the
 * library's to compute. Run by regen.sh with Debian's ASM on the class path:
 *   java -cp asm.jar:. GenInfer OUT_DIR
 *
 * infer/Gen (version 52): category-2 values under dup_x2 / dup2_x1 /
 * dup2_x2, long halves overwritten, unreachable code inside and outside
 * exception ranges, an object initialized in a local inside a try, and a
 * main that runs them all, so the JVM can verify the class once its frames
 * are computed.
 * infer/Jsr (version 49): finally subroutines reached by jsr and left by
 * ret, one nested in another, and a main printing what they compute.
 */
public class GenInfer {
	public static void main(String[] args) throws IOException {
		Path out = Path.of(args[0], "infer");
		Files.createDirectories(out);
		write(out.resolve("Gen.class"), gen());
		write(out.resolve("Jsr.class"), jsr());
	}

	static void write(Path p, byte[] b) throws IOException {
		try (FileOutputStream o = new FileOutputStream(p.toFile())) {
			o.write(b);
		}
	}

	static byte[] gen() {
		ClassWriter cw = new ClassWriter(0);
		cw.visit(V1_8, ACC_PUBLIC | ACC_SUPER, "infer/Gen", null, "java/lang/Object", null);

		/* stack [int, long, int] at L: dup_x2 with a long under an int. */
		MethodVisitor mv = cw.visitMethod(ACC_STATIC, "dupX2Long", "(I)I", null, null);
		mv.visitCode();
		Label l = new Label();
		mv.visitInsn(LCONST_0);
		mv.visitInsn(ICONST_1);
		mv.visitInsn(DUP_X2);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitJumpInsn(IFEQ, l);
		mv.visitLabel(l);
		mv.visitInsn(POP);
		mv.visitInsn(POP2);
		mv.visitInsn(IRETURN);
		mv.visitMaxs(5, 1);
		mv.visitEnd();

		/* stack [long, int, long] then [long, long, long]: dup2_x1 and dup2_x2 on longs. */
		mv = cw.visitMethod(ACC_STATIC, "dup2Long", "(I)J", null, null);
		mv.visitCode();
		l = new Label();
		mv.visitInsn(ICONST_1);
		mv.visitInsn(LCONST_1);
		mv.visitInsn(DUP2_X1);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitJumpInsn(IFEQ, l);
		mv.visitLabel(l);
		mv.visitInsn(L2I);
		mv.visitInsn(IADD);
		mv.visitInsn(I2L);
		mv.visitInsn(LADD);
		mv.visitInsn(LCONST_0);
		mv.visitInsn(DUP2_X2);
		Label l2 = new Label();
		mv.visitVarInsn(ILOAD, 0);
		mv.visitJumpInsn(IFEQ, l2);
		mv.visitLabel(l2);
		mv.visitInsn(LADD);
		mv.visitInsn(LADD);
		mv.visitInsn(LRETURN);
		mv.visitMaxs(7, 1);
		mv.visitEnd();

		/* Locals at L: [int, top, int, top, double]: the long in 1-2 lost its
		 * second half to an int, the long in 3-4 its first half to a double. */
		mv = cw.visitMethod(ACC_STATIC, "halves", "(I)I", null, null);
		mv.visitCode();
		l = new Label();
		mv.visitInsn(LCONST_0);
		mv.visitVarInsn(LSTORE, 1);
		mv.visitInsn(ICONST_0);
		mv.visitVarInsn(ISTORE, 2);
		mv.visitInsn(LCONST_1);
		mv.visitVarInsn(LSTORE, 3);
		mv.visitInsn(DCONST_1);
		mv.visitVarInsn(DSTORE, 4);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitJumpInsn(IFEQ, l);
		mv.visitLabel(l);
		mv.visitVarInsn(ILOAD, 2);
		mv.visitInsn(IRETURN);
		mv.visitMaxs(2, 6);
		mv.visitEnd();

		/* Unreachable code in the middle of an exception range, an entry
		 * whose range and handler are all dead, and dead code at the end. */
		mv = cw.visitMethod(ACC_STATIC, "dead", "(I)I", null, null);
		mv.visitCode();
		Label start = new Label(), end = new Label(), handler = new Label(), join = new Label();
		Label deadStart = new Label(), deadEnd = new Label(), deadHandler = new Label();
		mv.visitTryCatchBlock(start, end, handler, "java/lang/RuntimeException");
		mv.visitTryCatchBlock(deadStart, deadEnd, deadHandler, null);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitJumpInsn(IFEQ, join);
		mv.visitLabel(start);
		mv.visitMethodInsn(INVOKESTATIC, "infer/Gen", "m", "()V", false);
		mv.visitJumpInsn(GOTO, join);
		mv.visitLabel(deadStart);
		mv.visitInsn(ICONST_2); /* dead: nothing jumps here */
		mv.visitVarInsn(ISTORE, 0);
		mv.visitJumpInsn(GOTO, join);
		mv.visitLabel(deadEnd);
		mv.visitLabel(join);
		mv.visitMethodInsn(INVOKESTATIC, "infer/Gen", "m", "()V", false);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitInsn(IRETURN);
		mv.visitLabel(end);
		mv.visitLabel(handler);
		mv.visitInsn(POP);
		mv.visitInsn(ICONST_M1);
		mv.visitInsn(IRETURN);
		mv.visitLabel(deadHandler); /* dead: only dead code is covered */
		mv.visitInsn(POP);
		mv.visitInsn(ICONST_0);
		mv.visitInsn(IRETURN);
		mv.visitMaxs(1, 1);
		mv.visitEnd();

		/* max_stack 0 and a dead instruction after the return. */
		mv = cw.visitMethod(ACC_STATIC, "m", "()V", null, null);
		mv.visitCode();
		mv.visitInsn(RETURN);
		mv.visitInsn(NOP);
		mv.visitInsn(RETURN);
		mv.visitMaxs(0, 0);
		mv.visitEnd();

		/* An object made in a local, initialized inside a try range: HotSpot
		 * checks the handler against the locals after invokespecial (local 0
		 * initialized), the data flow sees them before (uninitialized). */
		mv = cw.visitMethod(ACC_STATIC, "initInTry", "()I", null, null);
		mv.visitCode();
		start = new Label();
		end = new Label();
		handler = new Label();
		mv.visitTryCatchBlock(start, end, handler, "java/lang/RuntimeException");
		mv.visitTypeInsn(NEW, "java/lang/Object");
		mv.visitInsn(DUP);
		mv.visitVarInsn(ASTORE, 0);
		mv.visitLabel(start);
		mv.visitMethodInsn(INVOKESPECIAL, "java/lang/Object", "<init>", "()V", false);
		mv.visitLabel(end);
		mv.visitVarInsn(ALOAD, 0);
		mv.visitMethodInsn(INVOKEVIRTUAL, "java/lang/Object", "hashCode", "()I", false);
		mv.visitInsn(POP);
		mv.visitInsn(ICONST_1);
		mv.visitInsn(IRETURN);
		mv.visitLabel(handler);
		mv.visitInsn(POP);
		mv.visitInsn(ICONST_0);
		mv.visitInsn(IRETURN);
		mv.visitMaxs(2, 1);
		mv.visitEnd();

		/* Runs everything: verified when the class loads. */
		mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "main", "([Ljava/lang/String;)V", null, null);
		mv.visitCode();
		mv.visitFieldInsn(GETSTATIC, "java/lang/System", "out", "Ljava/io/PrintStream;");
		mv.visitInsn(ICONST_1);
		mv.visitMethodInsn(INVOKESTATIC, "infer/Gen", "dupX2Long", "(I)I", false);
		mv.visitInsn(ICONST_1);
		mv.visitMethodInsn(INVOKESTATIC, "infer/Gen", "halves", "(I)I", false);
		mv.visitInsn(IADD);
		mv.visitInsn(ICONST_1);
		mv.visitMethodInsn(INVOKESTATIC, "infer/Gen", "dead", "(I)I", false);
		mv.visitInsn(IADD);
		mv.visitMethodInsn(INVOKESTATIC, "infer/Gen", "initInTry", "()I", false);
		mv.visitInsn(IADD);
		mv.visitInsn(I2L);
		mv.visitInsn(ICONST_1);
		mv.visitMethodInsn(INVOKESTATIC, "infer/Gen", "dup2Long", "(I)J", false);
		mv.visitInsn(LADD);
		mv.visitMethodInsn(INVOKEVIRTUAL, "java/io/PrintStream", "println", "(J)V", false);
		mv.visitInsn(RETURN);
		mv.visitMaxs(5, 1);
		mv.visitEnd();
		cw.visitEnd();
		return cw.toByteArray();
	}

	/* try { r = x; } finally { x++; } compiled the old way. */
	static byte[] jsr() {
		ClassWriter cw = new ClassWriter(0);
		cw.visit(V1_5, ACC_PUBLIC | ACC_SUPER, "infer/Jsr", null, "java/lang/Object", null);
		MethodVisitor mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "f", "(I)I", null, null);
		mv.visitCode();
		Label start = new Label(), end = new Label(), handler = new Label(), sub = new Label();
		mv.visitTryCatchBlock(start, end, handler, null);
		mv.visitLabel(start);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitVarInsn(ISTORE, 1);
		mv.visitLabel(end);
		mv.visitJumpInsn(JSR, sub);
		mv.visitVarInsn(ILOAD, 1);
		mv.visitInsn(IRETURN);
		mv.visitLabel(handler);
		mv.visitVarInsn(ASTORE, 2);
		mv.visitJumpInsn(JSR, sub);
		mv.visitVarInsn(ALOAD, 2);
		mv.visitInsn(ATHROW);
		mv.visitLabel(sub);
		mv.visitVarInsn(ASTORE, 3);
		mv.visitIincInsn(0, 1);
		mv.visitVarInsn(RET, 3);
		mv.visitMaxs(1, 4);
		mv.visitEnd();

		/* try { x++; } finally { x += 2; try {} finally { x += 3; } }: a
		 * subroutine calling another, g(0) is 1 + 2 + 3. */
		mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "g", "(I)I", null, null);
		mv.visitCode();
		start = new Label();
		end = new Label();
		handler = new Label();
		Label s1 = new Label(), s2 = new Label();
		mv.visitTryCatchBlock(start, end, handler, null);
		mv.visitLabel(start);
		mv.visitIincInsn(0, 1);
		mv.visitJumpInsn(JSR, s1);
		mv.visitLabel(end);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitInsn(IRETURN);
		mv.visitLabel(handler);
		mv.visitVarInsn(ASTORE, 1);
		mv.visitJumpInsn(JSR, s1);
		mv.visitVarInsn(ALOAD, 1);
		mv.visitInsn(ATHROW);
		mv.visitLabel(s1);
		mv.visitVarInsn(ASTORE, 2);
		mv.visitIincInsn(0, 2);
		mv.visitJumpInsn(JSR, s2);
		mv.visitVarInsn(RET, 2);
		mv.visitLabel(s2);
		mv.visitVarInsn(ASTORE, 3);
		mv.visitIincInsn(0, 3);
		mv.visitVarInsn(RET, 3);
		mv.visitMaxs(1, 4);
		mv.visitEnd();

		/* Switches in the body and in a subroutine, whose copies land at
		 * other offsets (new padding): h(k) for k = 0..3 is 10, 21, 12, 13. */
		mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "h", "(I)I", null, null);
		mv.visitCode();
		Label l0 = new Label(), l1 = new Label(), dflt = new Label(), join = new Label();
		sub = new Label();
		Label t0 = new Label(), t1 = new Label(), tdef = new Label(), tjoin = new Label();
		mv.visitInsn(ICONST_0);
		mv.visitVarInsn(ISTORE, 1);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitLookupSwitchInsn(dflt, new int[] {0, 1}, new Label[] {l0, l1});
		mv.visitLabel(l0);
		mv.visitJumpInsn(JSR, sub);
		mv.visitJumpInsn(GOTO, join);
		mv.visitLabel(l1);
		mv.visitIincInsn(1, 10);
		mv.visitJumpInsn(JSR, sub);
		mv.visitJumpInsn(GOTO, join);
		mv.visitLabel(dflt);
		mv.visitInsn(NOP);
		mv.visitJumpInsn(JSR, sub);
		mv.visitLabel(join);
		mv.visitVarInsn(ILOAD, 1);
		mv.visitInsn(IRETURN);
		mv.visitLabel(sub); /* local 1 += 10 + (k == 0 ? 0 : k == 1 ? 1 : k) */
		mv.visitVarInsn(ASTORE, 2);
		mv.visitIincInsn(1, 10);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitTableSwitchInsn(0, 1, tdef, t0, t1);
		mv.visitLabel(t0);
		mv.visitJumpInsn(GOTO, tjoin);
		mv.visitLabel(t1);
		mv.visitIincInsn(1, 1);
		mv.visitJumpInsn(GOTO, tjoin);
		mv.visitLabel(tdef);
		mv.visitVarInsn(ILOAD, 1);
		mv.visitVarInsn(ILOAD, 0);
		mv.visitInsn(IADD);
		mv.visitVarInsn(ISTORE, 1);
		mv.visitLabel(tjoin);
		mv.visitInsn(NOP); /* an odd length: each copy's switch gets other padding */
		mv.visitVarInsn(RET, 2);
		mv.visitMaxs(2, 3);
		mv.visitEnd();

		/* Prints f(1), g(0) and h(0..3): 1, 6, 10 21 12 13. */
		mv = cw.visitMethod(ACC_PUBLIC | ACC_STATIC, "main", "([Ljava/lang/String;)V", null, null);
		mv.visitCode();
		mv.visitFieldInsn(GETSTATIC, "java/lang/System", "out", "Ljava/io/PrintStream;");
		mv.visitInsn(DUP);
		mv.visitInsn(ICONST_1);
		mv.visitMethodInsn(INVOKESTATIC, "infer/Jsr", "f", "(I)I", false);
		mv.visitMethodInsn(INVOKEVIRTUAL, "java/io/PrintStream", "println", "(I)V", false);
		mv.visitInsn(DUP);
		mv.visitInsn(ICONST_0);
		mv.visitMethodInsn(INVOKESTATIC, "infer/Jsr", "g", "(I)I", false);
		mv.visitMethodInsn(INVOKEVIRTUAL, "java/io/PrintStream", "println", "(I)V", false);
		for (int k = 0; k < 4; k++) {
			mv.visitInsn(DUP);
			mv.visitIntInsn(BIPUSH, k);
			mv.visitMethodInsn(INVOKESTATIC, "infer/Jsr", "h", "(I)I", false);
			mv.visitMethodInsn(INVOKEVIRTUAL, "java/io/PrintStream", "print", "(I)V", false);
		}
		mv.visitMethodInsn(INVOKEVIRTUAL, "java/io/PrintStream", "println", "()V", false);
		mv.visitInsn(RETURN);
		mv.visitMaxs(3, 1);
		mv.visitEnd();
		cw.visitEnd();
		return cw.toByteArray();
	}
}
