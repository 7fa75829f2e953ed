package jinstnat;

import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.TypeKind;
import java.lang.constant.ClassDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.AccessFlag;
import java.security.ProtectionDomain;

/* A second agent that wraps natives itself, as jinst does, with its own
 * prefix (JDK 24+: java.lang.classfile): each native m of jinstnat.Natives
 * becomes the native $$second$$m and a wrapper m calls it. Its
 * Instrumentation goes to Second, so Main's retransformation is this
 * agent's. */
public class Wrapping {
	static final String PREFIX = "$$second$$";

	public static void premain(String args, Instrumentation inst) {
		ClassFileTransformer t = new ClassFileTransformer() {
			@Override
			public byte[] transform(ClassLoader loader, String name, Class<?> redefined, ProtectionDomain pd,
			                        byte[] bytes) {
				if (!"jinstnat/Natives".equals(name))
					return null;
				try {
					return wrap(bytes);
				} catch (Throwable e) {
					e.printStackTrace();
					return null;
				}
			}
		};
		inst.addTransformer(t, true);
		inst.setNativeMethodPrefix(t, PREFIX);
		Second.inst = inst;
	}

	static byte[] wrap(byte[] bytes) {
		ClassFile cf = ClassFile.of();
		ClassModel cm = cf.parse(bytes);
		ClassDesc self = cm.thisClass().asSymbol();
		return cf.transformClass(cm, (cb, e) -> {
			if (!(e instanceof MethodModel m) || !m.flags().has(AccessFlag.NATIVE)
			    || m.methodName().stringValue().startsWith(PREFIX)) {
				cb.with(e);
				return;
			}
			String name = m.methodName().stringValue();
			MethodTypeDesc type = m.methodTypeSymbol();
			int flags = m.flags().flagsMask();
			boolean isStatic = m.flags().has(AccessFlag.STATIC);
			cb.withMethod(PREFIX + name, type, flags, mb -> {});
			cb.withMethodBody(name, type, flags & ~ClassFile.ACC_NATIVE, code -> {
				int slot = 0;
				if (!isStatic)
					code.aload(slot++);
				for (ClassDesc p : type.parameterList()) {
					TypeKind k = TypeKind.from(p);
					code.loadLocal(k, slot);
					slot += k.slotSize();
				}
				if (isStatic)
					code.invokestatic(self, PREFIX + name, type);
				else
					code.invokespecial(self, PREFIX + name, type);
				code.return_(TypeKind.from(type.returnType()));
			});
		});
	}
}
