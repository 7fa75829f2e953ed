package jinst.rt;

/**
 * Coverage probes: one array per instrumented class, found by the class's
 * id, an int constant the coverage pass (instrument/coverage.c) puts into
 * every method of the class. A method asks once, at entry, for its class's
 * array ({@link Hooks#probes} for booleans, {@link Hooks#probeCounts} for
 * hit counts, whose fast paths read the tables here),
 * keeps it in a local, and each probe then sets (or increments) one
 * element: no member added to the class, so the agent may attach and stop,
 * and no hash lookup per call.
 *
 * <h2>The table</h2>
 *
 * One flat array of arrays per mode, indexed by class id, grown under
 * {@link #LOCK} into a copy twice the size and then published by a plain
 * write. A probe array is made once, under the lock, on the first call of a
 * class's first method; every later call reads the table, compares the id
 * with its length and reads one element. That fast path is small enough
 * (26 bytes of bytecode) that the client compiler inlines it into every
 * instrumented method, as the server compiler does: a larger one (the
 * two-level table this replaced, 49 bytes) is a real call at every method
 * entry in most of a short program's compiled code. The reads take no lock and see an older table or a null element
 * (and go to the slow path, which takes the lock and finds what another
 * thread made) or the array: a freshly allocated array is all zeros and
 * its length is set before any thread can see it, so a racy read never
 * sees it half made. A class id always comes with the same probe count
 * (one placement per class identity), so an array once made is never
 * short. Probes of two threads on one class race (a count may lose an
 * increment when two threads hit one probe at the same moment); booleans
 * are exact, counts exact on one thread.
 *
 * <h2>Never failing</h2>
 *
 * The hooks never throw and never return an array shorter than asked
 * when called as instrumented code calls them: with a class id of the
 * instrumenter (from 0, never negative, below 2^24) and that class's probe
 * count (one placement per identity), which the fast paths trust so as to
 * stay small; the slow paths check everything. Disengaged (before the
 * agent starts, after it stops), unable to allocate, or given what no
 * instrumenter writes, they hand back the sink, a scratch array that
 * nobody reads, grown to the largest count asked for. Its writes race and
 * mean nothing. A new agent session hands out ids past the old ones, so
 * old code still running on a stack never names a new class's array.
 *
 * <h2>Sessions</h2>
 *
 * {@link #engage} starts recording into fresh tables; {@link #snapshot}
 * copies them (and with reset, clears them in place, so the frames that
 * hold an array go on recording into the next interval); {@link #disengage}
 * stops handing out arrays. Methods running across a disengage keep the
 * array they hold.
 */
public final class Coverage {
	static final int BOOLEANS = 1;
	static final int COUNTS = 2;

	/** Class ids are below this (instrument/probe_classes.c). */
	static final int MAX_ID = 1 << 24;

	private static final Object LOCK = new Object();
	private static final boolean[][] NO_BOOLS = new boolean[0][];
	private static final long[][] NO_LONGS = new long[0][];
	/**
	 * bools[id]: the class's boolean probes, or null. Replaced, never shrunk
	 * in place, under LOCK. Public, as are the slow paths, for the bridge
	 * (java.lang.$JinstHooks), whose coverage hooks are Hooks' fast paths
	 * and not calls of them; not an API: nothing else may touch them.
	 */
	public static boolean[][] bools = NO_BOOLS;
	public static long[][] longs = NO_LONGS;
	/** 0 (disengaged), BOOLEANS or COUNTS. */
	private static volatile int mode;
	private static boolean[] sinkBools = new boolean[256];
	private static long[] sinkLongs = new long[256];

	private Coverage() {
	}

	/* The fast paths are Hooks.probes and Hooks.probeCounts: a table read,
	 * a compare, one element; the slow paths below make the array. */

	public static boolean[] probesSlow(int id, int n) {
		try {
			if (mode == BOOLEANS && id >= 0 && id < MAX_ID && n >= 0) {
				synchronized (LOCK) {
					if (id >= bools.length) {
						boolean[][] t = new boolean[capacity(bools.length, id)][];
						System.arraycopy(bools, 0, t, 0, bools.length);
						bools = t;
					}
					boolean[] a = bools[id];
					if (a == null || a.length < n) {
						boolean[] b = new boolean[n];
						if (a != null)
							System.arraycopy(a, 0, b, 0, a.length);
						bools[id] = a = b;
					}
					return a;
				}
			}
		} catch (Throwable t) {
			/* out of memory: the sink below, if it can be had */
		}
		boolean[] s = sinkBools;
		if (s.length < n)
			sinkBools = s = new boolean[n];
		return s;
	}

	public static long[] countsSlow(int id, int n) {
		try {
			if (mode == COUNTS && id >= 0 && id < MAX_ID && n >= 0) {
				synchronized (LOCK) {
					if (id >= longs.length) {
						long[][] t = new long[capacity(longs.length, id)][];
						System.arraycopy(longs, 0, t, 0, longs.length);
						longs = t;
					}
					long[] a = longs[id];
					if (a == null || a.length < n) {
						long[] b = new long[n];
						if (a != null)
							System.arraycopy(a, 0, b, 0, a.length);
						longs[id] = a = b;
					}
					return a;
				}
			}
		} catch (Throwable t) {
			/* out of memory: the sink below, if it can be had */
		}
		long[] s = sinkLongs;
		if (s.length < n)
			sinkLongs = s = new long[n];
		return s;
	}

	/* Room for id: double until it fits, from 1024 ids. The slow paths call
	 * nothing outside this class but System.arraycopy (native): with the
	 * JDK instrumented, a probe reached from here would come back in. */
	private static int capacity(int length, int id) {
		long c = length < 1024 ? 1024 : length;
		while (c <= id)
			c *= 2;
		return c < Integer.MAX_VALUE ? (int) c : Integer.MAX_VALUE;
	}

	/* ---- the agent's side (JNI) ----------------------------------------- */

	/** Starts a session in newMode (BOOLEANS or COUNTS): empty tables. */
	static void engage(int newMode) {
		synchronized (LOCK) {
			clear();
			mode = newMode;
		}
	}

	static void disengage() {
		mode = 0;
	}

	private static void clear() {
		bools = NO_BOOLS;
		longs = NO_LONGS;
	}

	/**
	 * What was recorded, by class id: element i is a copy of class i's
	 * array (boolean[] or long[] by the mode it was recorded in), or null
	 * for an id no method of asked for. With reset, the arrays are then
	 * cleared in place. Calls nothing outside this class: with the JDK
	 * instrumented, a probe reached from here would take LOCK again.
	 */
	static Object[] snapshot(boolean reset) {
		synchronized (LOCK) {
			boolean[][] bt = bools;
			long[][] lt = longs;
			int limit = 0;
			for (int id = 0; id < bt.length; id++)
				if (bt[id] != null)
					limit = id + 1;
			for (int id = limit; id < lt.length; id++)
				if (lt[id] != null)
					limit = id + 1;
			Object[] out = new Object[limit];
			for (int id = 0; id < limit; id++) {
				boolean[] b = id < bt.length ? bt[id] : null;
				long[] l = id < lt.length ? lt[id] : null;
				if (b != null) {
					out[id] = b.clone();
					for (int i = 0; reset && i < b.length; i++)
						b[i] = false;
				} else if (l != null) {
					out[id] = l.clone();
					for (int i = 0; reset && i < l.length; i++)
						l[i] = 0;
				}
			}
			return out;
		}
	}
}
