package java.lang;

/**
 * Coverage's flat probe array: one boolean per probe of every class the
 * agent instrumented, the class's probes at the range the instrumenter
 * gave it, in a static final field so that compiled code reads it as a
 * constant.
 *
 * A probe is then {@code getstatic P; push index; iconst_1; bastore}: no
 * call at a method's entry, no lookup, and after the JIT a store of one
 * byte to a fixed address (the array and its length are constants, so the
 * index needs no range check). The price is that the array cannot grow:
 * its length is fixed when the class is initialized, from the heap's size
 * ({@code jinst.rt.Coverage.flatBools}), and the agent reads that length
 * before it hands out ranges; a class that no longer fits takes the array
 * by class id (the hook {@code probes}) as before.
 *
 * A class of its own, not a field of the bridge: a class is initialized at
 * its first use, so a VM that never runs coverage's code never allocates
 * the array, and a trace session that starts the bridge first does not fix
 * its length. In java.lang for the bridge's reason (every loader finds it);
 * the agent defines it into the bootstrap loader.
 */
public final class $JinstProbes {
	/** Every probe of the classes instrumented with flat ranges. */
	public static final boolean[] P = jinst.rt.Coverage.flatBools();

	private $JinstProbes() {
	}
}
