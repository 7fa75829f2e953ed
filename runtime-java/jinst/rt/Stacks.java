package jinst.rt;

/**
 * The shadow stacks of the threads that own a row of Grid, under
 * trace=times: one static final array of Grid.ROWS rows of SIZE ints, and
 * each row's depth in DEPTH[row << PAD], a cache line of its own (its owner
 * writes it at every timed call). An entry on the fast path (Hooks.enter)
 * is the row's owner compared with the current thread, an increment of its
 * count in Grid, a store at STACK[row << SHIFT | depth] and the depth's
 * store: addresses that depend on the thread's id alone, at bases the JIT
 * knows, where a context found by id took a slot, the context and its
 * arrays (docs/tracing-threads.md, "A grid for the stacks").
 *
 * A row's stack is its owner's context's (Ctx.adopt, with its offset in
 * Ctx.base): the sampler reads it there, and the context's slow paths move
 * it. OWNER[row] is the thread whose context adopted the row, which owns
 * the row of Grid too; null until then (a row of Grid claimed for a
 * carrier thread that has not reached a slow path since, or a times hook
 * run under another mode: code instrumented ahead of time, or in an
 * earlier session), and the hooks of the row's owner in Grid take its
 * context's stack, through BY_TID. The row's depth is its owner's while
 * the frames fit, and NONE otherwise: NONE sends every hook of the row to
 * the slow path, whose context then keeps the depth (Ctx.depth), with the
 * frames that did not fit counted in Ctx.overflow (their exits pop
 * nothing). The last int of each row is never written (-1): an exit on an
 * empty stack reads it, and an exit at depth NONE too, and finds no frame
 * to pop.
 *
 * Made when the hooks are engaged with times (Hooks.engage), so counts and
 * coverage never pay for it: 64 rows of 2^14 ints, 4 MB. In a heap without
 * it to spare, or made by a hook of another mode (trace=events, or counts
 * with code instrumented for times), STACK is empty (OK false) and no
 * context adopts a row: every thread pushes in its context.
 */
public final class Stacks {
	/* Public, as the arrays below, for the bridge's enter and exit
	 * (java.lang.$JinstHooks); not an API. */
	public static final int SHIFT = 14, SIZE = 1 << SHIFT, MASK = SIZE - 1;
	/* A depth no stack reaches: the row's hooks go to the slow path. */
	static final int NONE = SIZE;
	/* Ints between two rows' depths: 64 bytes. */
	public static final int PAD = 4;
	public static final int[] STACK = stack();
	public static final int[] DEPTH = new int[Grid.ROWS << PAD];
	public static final Thread[] OWNER = new Thread[Grid.ROWS];
	static final boolean OK = STACK.length == Grid.ROWS << SHIFT;

	static {
		for (int r = 0; r < Grid.ROWS; r++) {
			DEPTH[r << PAD] = NONE;
			if (OK)
				STACK[r << SHIFT | MASK] = -1;
		}
		Hooks.stacks = true;
	}

	private Stacks() {
	}

	/* Loads the class, which makes the stacks. */
	static void make() {
	}

	/* Empty when made by a hook of another mode (Grid.cells). */
	private static int[] stack() {
		if (!Hooks.gridded(Hooks.engaging) || (Hooks.engaging & Hooks.TIMES) == 0)
			return new int[0];
		try {
			return new int[Grid.ROWS << SHIFT];
		} catch (OutOfMemoryError e) {
			return new int[0];
		}
	}

	/* c, of the current thread, which owns row r of Grid, takes the row's
	 * stack as its own, with the frames it has now (Hooks.ctx, on its slow
	 * path; under Registry.LOCK, which the sampler holds). A context that
	 * had the row before, of a thread that ended and is not yet retired
	 * (Grid.claim gives the row of a thread no longer alive), leaves it:
	 * the sampler would read c's frames as its. */
	static void adopt(Ctx c, int r) {
		for (int i = 0; i < Registry.count; i++) {
			Ctx x = Registry.threads[i];
			if (x.row == r && x != c)
				x.leave();
		}
		c.adopt(STACK, r << SHIFT, MASK);
		c.row = r;
		sync(c);
		OWNER[r] = c.owner;
	}

	/* After c, which adopted its row, moved its stack on the slow path:
	 * the fast path's view, or NONE while frames that did not fit are on
	 * it. */
	static void sync(Ctx c) {
		DEPTH[c.row << PAD] = c.overflow == 0 ? c.depth : NONE;
	}

	/* The depth of c's stack: its row's, unless that is NONE. */
	static int depthOf(Ctx c) {
		if (c.row >= 0) {
			int d = DEPTH[c.row << PAD];
			if (d != NONE)
				return d;
		}
		return c.depth;
	}

	/* Row r has no owner's stack (the owner left, or is about to change). */
	static void free(int r) {
		OWNER[r] = null;
		DEPTH[r << PAD] = NONE;
	}

	/* No row has one (disengaged, or a new session). */
	static void freeAll() {
		for (int r = 0; r < Grid.ROWS; r++)
			free(r);
	}
}
