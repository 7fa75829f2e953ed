package java.lang;

/**
 * The one name instrumented code calls: a bridge from java.lang to the hooks
 * of {@code jinst.rt.Hooks}, one line per hook.
 *
 * Why java.lang. The VM resolves every name in a class's code through the
 * class's defining loader, and not every loader hands an unknown package to
 * its parent: an OSGi bundle's loader does not ({@code NoClassDefFoundError:
 * jinst/rt/Hooks} at its activator), and every other custom loader sees a
 * {@code loadClass("jinst.rt.Hooks")} it did not expect. Every loader must
 * delegate {@code java.*} names (only the bootstrap and platform loaders may
 * define them), so this class is found from any class. The agent defines it
 * into the bootstrap loader (JNI DefineClass with no loader, which is allowed
 * for java/ names), where it joins java.base's java.lang, exported to every
 * module; its own reference to {@code jinst.rt.Hooks} is then resolved in
 * the bootstrap loader, where the agent defined the runtime. The JIT inlines
 * each one-line method into its caller, so the hot path costs what a direct
 * call of the hook cost. docs/ARCHITECTURE.md, "How injected code reaches the runtime" has the alternatives.
 *
 * The name: '$' and the prefix make it one no JDK class has and no one takes
 * for an API. It is never on a class path (the VM refuses java.* there), so
 * jinst-runtime.jar does not hold it. The methods must match the hook table
 * of instrument/hooks.c (agent/tests/test_hooks_table.c compares them:
 * each is the one call of its namesake, but coverage's, which are its body).
 */
public final class $JinstHooks {
	private $JinstHooks() {
	}

	/* Hooks.enter's and Hooks.exit's bodies, for the reason called has
	 * its own (below): every timed method runs both at each invocation,
	 * and an interpreted call less each is what the interpreter and the
	 * inlining levels save. They keep Thread.currentThread(): a virtual
	 * thread's stack follows it, not its carrier. */
	public static void enter(int id) {
		Thread t = Thread.currentThread();
		int r = (int) t.getId() & (jinst.rt.Grid.ROWS - 1);
		int d = jinst.rt.Stacks.DEPTH[r << jinst.rt.Stacks.PAD];
		if (jinst.rt.Stacks.OWNER[r] == t && d < jinst.rt.Stacks.MASK && id < jinst.rt.Grid.WIDTH) {
			jinst.rt.Grid.CELLS[(r << jinst.rt.Grid.ROW_SHIFT) + id]++;
			jinst.rt.Stacks.STACK[(r << jinst.rt.Stacks.SHIFT) + d] = id;
			jinst.rt.Stacks.DEPTH[r << jinst.rt.Stacks.PAD] = d + 1;
		} else {
			jinst.rt.Ctx.enterOther(t, id);
		}
	}

	public static void exit(int id) {
		Thread t = Thread.currentThread();
		int r = (int) t.getId() & (jinst.rt.Grid.ROWS - 1);
		int d = jinst.rt.Stacks.DEPTH[r << jinst.rt.Stacks.PAD] - 1;
		if (jinst.rt.Stacks.OWNER[r] == t
				&& jinst.rt.Stacks.STACK[(r << jinst.rt.Stacks.SHIFT) + (d & jinst.rt.Stacks.MASK)] == id)
			jinst.rt.Stacks.DEPTH[r << jinst.rt.Stacks.PAD] = d;
		else
			jinst.rt.Ctx.exitOther(t, id);
	}

	public static void exitThrow(int id) {
		jinst.rt.Hooks.exitThrow(id);
	}

	/* Hooks.called's body, not a call of it: every method under
	 * trace=counts runs it at each invocation, and an interpreted call
	 * less is a third of an interpreted hook's cost; compiled, an
	 * inlining level and 5 bytes less at every site the JIT inlines
	 * (docs/tracing-threads.md, "The interpreter"). On JDK 19 and later
	 * the agent defines this class with Thread.currentCarrierThread() in
	 * place of currentThread() here (agent/runtime.c, carrier_bridge): a
	 * virtual thread counts in its carrier's row. */
	public static void called(int id) {
		Thread t = Thread.currentThread();
		int r = (int) t.getId() & (jinst.rt.Grid.ROWS - 1);
		if (jinst.rt.Grid.OWNER[r] == t && id < jinst.rt.Grid.WIDTH)
			jinst.rt.Grid.CELLS[(r << jinst.rt.Grid.ROW_SHIFT) + id]++;
		else
			jinst.rt.Ctx.calledSlow(id);
	}

	/* Coverage's hooks are jinst.rt.Hooks' bodies, not calls of them: a
	 * table read, a compare, one element, within C1's 35 bytes.
	 * Instrumented code runs the entry of every method through them, and
	 * until the JIT compiles it an interpreted call costs as much as the
	 * rest of the entry; a call less halves it. */

	public static boolean[] probes(int id, int n) {
		boolean[][] t = jinst.rt.Coverage.bools;
		if (id < t.length && t[id] != null)
			return t[id];
		return jinst.rt.Coverage.probesSlow(id, n);
	}

	public static long[] probeCounts(int id, int n) {
		long[][] t = jinst.rt.Coverage.longs;
		if (id < t.length && t[id] != null)
			return t[id];
		return jinst.rt.Coverage.countsSlow(id, n);
	}

	public static void hit(int id, int n, int probe) {
		boolean[][] t = jinst.rt.Coverage.bools;
		if (id < t.length && t[id] != null)
			t[id][probe] = true;
		else
			jinst.rt.Coverage.probesSlow(id, n)[probe] = true;
	}

	/* 38 bytes as a body, past C1's limit either way: the call. */
	public static void hitCount(int id, int n, int probe) {
		jinst.rt.Hooks.hitCount(id, n, probe);
	}

	public static boolean[] probesFor(long identity, int n, String name) {
		return jinst.rt.Hooks.probesFor(identity, n, name);
	}

	public static long[] probeCountsFor(long identity, int n, String name) {
		return jinst.rt.Hooks.probeCountsFor(identity, n, name);
	}

	public static void monitorEnter(Object lock, int site) {
		jinst.rt.Hooks.monitorEnter(lock, site);
	}

	public static void allocObject(Object o, int site) {
		jinst.rt.Hooks.allocObject(o, site);
	}

	public static void allocArray(Object o, int site) {
		jinst.rt.Hooks.allocArray(o, site);
	}

	public static void allocArrays(Object o, int site) {
		jinst.rt.Hooks.allocArrays(o, site);
	}

	public static void allocAny(Object o, int site) {
		jinst.rt.Hooks.allocAny(o, site);
	}

	public static void allocClone(Object receiver, Object o, String start, int site) {
		jinst.rt.Hooks.allocClone(receiver, o, start, site);
	}
}
