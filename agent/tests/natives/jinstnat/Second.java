package jinstnat;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;

/* A second agent (a java agent, its own JVMTI environment) that sets a
 * native method prefix of its own, as a second wrapping agent would, and
 * retransforms the classes jinst wrapped. Without -javaagent, retransform
 * does nothing. */
public class Second {
	static Instrumentation inst;

	public static void premain(String args, Instrumentation i) {
		ClassFileTransformer none = new ClassFileTransformer() {};
		i.addTransformer(none, true);
		i.setNativeMethodPrefix(none, "$$second$$");
		inst = i;
	}

	static void retransform(Class<?>... classes) throws Exception {
		if (inst != null) {
			inst.retransformClasses(classes);
			System.err.println("second: retransformed " + classes.length);
		}
	}
}
