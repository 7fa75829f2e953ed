package jinst.rt;

/**
 * Entry counts of platform threads, the path of {@code called} (trace=counts,
 * and the leaves under times): one static final array of ROWS rows of WIDTH
 * ids, a row per thread id modulo ROWS, and the thread that owns each row.
 * A counted call compares the row's owner with the current thread and
 * increments CELLS[row << ROW_SHIFT | id]: the element's address depends
 * on the thread's id alone, at a base the JIT knows, where a context found
 * by id took three more dependent loads (its slot, its array, the array's
 * length). After warm-up that chain was all that tracing cost a server's
 * requests (docs/tracing-threads.md, "The server after its warm-up").
 *
 * Exact: a row has one owner at a time, and only its owner increments it. A
 * thread takes a free row (never owned, or its owner is no longer alive)
 * under the registry's lock on its slow path, so two threads never both
 * own it; a row whose thread ended keeps its counts, and the next owner adds
 * to them (the output is per method, all threads together). Under the
 * agent on JDK 19 and later, the bridge's called finds the row of the
 * current carrier thread, and a virtual thread's slow path claims its
 * carrier's row (Hooks.claimCarrier): virtual threads count there, exact
 * because one leaves its carrier only where it blocks, never inside the
 * increment. Threads whose row is taken, virtual threads before that
 * (and under jinst-runtime.jar alone), ids from WIDTH on and events mode
 * count through their contexts, as before.
 *
 * Made when the hooks are engaged with counts or times (Hooks.engage, on
 * the engaging thread; else the first counted call would), so a program
 * traced without them, or not traced, never allocates it: 64 rows of
 * 2^15 ids, 16 MB (javac with every class traced has 25,000 method ids; a
 * call of an id past the row takes the slot path). In a heap without 16 MB
 * to spare, CELLS is empty and no row is ever given (OK false): every
 * thread counts through its context.
 */
public final class Grid {
	public static final int ROWS = 64, ROW_SHIFT = 15, WIDTH = 1 << ROW_SHIFT;
	/* Public for the bridge's called (java.lang.$JinstHooks); not an API. */
	public static final long[] CELLS = cells();
	public static final Thread[] OWNER = new Thread[ROWS];
	static final boolean OK = CELLS.length == ROWS << ROW_SHIFT;
	/* The rows given since the last clear, a bit each: the only ones that
	 * may hold counts, and the only ones a snapshot reads (the 16 MB, read
	 * whole, took a short program's exit 13 ms of interpreted loops).
	 * Under Registry.LOCK. */
	private static long used;

	static {
		Hooks.grid = true;
	}

	private Grid() {
	}

	/* Loads the class, which makes the grid. */
	static void make() {
	}

	/* Empty (no row ever given) when made by a hook of a mode that does
	 * not count in the grid (trace=events, or a runtime not engaged): the
	 * hooks name Grid, so their first run would make it. */
	private static long[] cells() {
		if (!Hooks.gridded(Hooks.engaging))
			return new long[0];
		try {
			return new long[ROWS << ROW_SHIFT];
		} catch (OutOfMemoryError e) {
			return new long[0];
		}
	}

	/* t's row, if it is free (Hooks.ctx, on t's slow path). */
	static void claim(Thread t) {
		int r = (int) t.getId() & (ROWS - 1);
		Thread o = OWNER[r];
		if (!OK || o == t || (o != null && o.isAlive()))
			return;
		synchronized (Registry.LOCK) {
			o = OWNER[r];
			if (o == null || (o != t && !o.isAlive())) {
				if (Hooks.stacks)
					Stacks.free(r);
				OWNER[r] = t;
				used |= 1L << r;
			}
		}
	}

	/* t ended (under Registry.LOCK): its row is free, its counts stay. */
	static void release(Thread t) {
		int r = (int) t.getId() & (ROWS - 1);
		if (OWNER[r] == t) {
			if (Hooks.stacks)
				Stacks.free(r);
			OWNER[r] = null;
		}
	}

	/* No thread owns a row (disengaged, or a new session). */
	static void releaseAll() {
		if (Hooks.stacks)
			Stacks.freeAll();
		for (int r = 0; r < ROWS; r++)
			OWNER[r] = null;
	}

	/* Whether row r may hold counts (under Registry.LOCK). */
	private static boolean given(int r) {
		return (used & 1L << r) != 0;
	}

	/* A new session's counts start from zero (no hook records meanwhile). */
	static void clear() {
		releaseAll();
		for (int r = 0; r < ROWS; r++)
			if (given(r))
				for (int i = r << ROW_SHIFT, end = i + WIDTH; i < end; i++)
					CELLS[i] = 0;
		used = 0;
	}

	/* Ids below this may have a count. */
	static int limit() {
		int top = 0;
		for (int r = 0; r < ROWS; r++) {
			int base = r << ROW_SHIFT;
			for (int id = given(r) ? WIDTH - 1 : -1; id >= top; id--)
				if (CELLS[base + id] != 0) {
					top = id + 1;
					break;
				}
		}
		return top;
	}

	/* Adds every row's counts to r, where r reaches. */
	static void addTo(long[] r) {
		int n = Math.min(r.length, WIDTH);
		for (int row = 0; row < ROWS; row++) {
			int base = row << ROW_SHIFT;
			for (int id = 0, end = given(row) ? n : 0; id < end; id++)
				r[id] += CELLS[base + id];
		}
	}
}
