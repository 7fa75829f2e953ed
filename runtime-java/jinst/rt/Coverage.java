package jinst.rt;

/**
 * Coverage probes: one array per instrumented class, found by the class's
 * id, an int constant the coverage pass (instrument/coverage.c) puts into
 * every method of the class. A method asks once, at entry, for its class's
 * array ({@link #probes} for booleans, {@link #counts} for hit counts),
 * keeps it in a local, and each probe then sets (or increments) one
 * element: no member added to the class, so the agent may attach and stop,
 * and no hash lookup per call.
 *
 * <h2>The table</h2>
 *
 * Two levels, {@link #CHUNK} ids a chunk, so growing never copies the
 * arrays of the classes already there and the outer array is a static
 * final the JIT knows. A probe array is made once, under {@link #LOCK}, on
 * the first call of a class's first method; every later call reads two
 * array elements and compares a length. The reads take no lock and see
 * either null (and go to the slow path, which takes the lock and finds the
 * array made by another thread) or the array: a freshly allocated array is
 * all zeros and its length is set before any thread can see it, so a racy
 * read never sees it half made. Probes of two threads on one class race
 * (a count may lose an increment when two threads hit one probe at the
 * same moment); booleans are exact, counts exact on one thread.
 *
 * <h2>Never failing</h2>
 *
 * The hooks never throw and never return an array shorter than asked:
 * disengaged (before the agent starts, after it stops) or unable to
 * allocate, they hand back {@link #sink}, a scratch array that nobody
 * reads, grown to the largest count asked for. Its writes race and mean
 * nothing.
 *
 * <h2>Sessions</h2>
 *
 * {@link #engage} starts recording into fresh tables; {@link #snapshot}
 * copies them (and with reset, clears them in place, so the frames that
 * hold an array go on recording into the next interval); {@link #disengage}
 * stops handing out arrays. Methods running across a disengage keep the
 * array they hold.
 */
final class Coverage {
	static final int BOOLEANS = 1;
	static final int COUNTS = 2;

	static final int CHUNK_BITS = 10, CHUNK = 1 << CHUNK_BITS, CHUNKS = 1 << 12;

	private static final Object LOCK = new Object();
	/** BOOLS[id >>> CHUNK_BITS][id & (CHUNK - 1)]: the class's boolean probes. */
	private static final boolean[][][] BOOLS = new boolean[CHUNKS][][];
	private static final long[][][] LONGS = new long[CHUNKS][][];
	/** 0 (disengaged), BOOLEANS or COUNTS. */
	private static volatile int mode;
	private static boolean[] sinkBools = new boolean[256];
	private static long[] sinkLongs = new long[256];
	/** Ids seen, one past the highest, under LOCK. */
	private static int limit;

	private Coverage() {
	}

	/** The boolean probes of class id, at least n long. */
	static boolean[] probes(int id, int n) {
		if (id >= 0 && id < CHUNKS * CHUNK) {
			boolean[][] c = BOOLS[id >>> CHUNK_BITS];
			if (c != null) {
				boolean[] a = c[id & (CHUNK - 1)];
				if (a != null && a.length >= n)
					return a;
			}
		}
		return probesSlow(id, n);
	}

	/** The hit counts of class id, at least n long. */
	static long[] counts(int id, int n) {
		if (id >= 0 && id < CHUNKS * CHUNK) {
			long[][] c = LONGS[id >>> CHUNK_BITS];
			if (c != null) {
				long[] a = c[id & (CHUNK - 1)];
				if (a != null && a.length >= n)
					return a;
			}
		}
		return countsSlow(id, n);
	}

	private static boolean[] probesSlow(int id, int n) {
		try {
			if (mode == BOOLEANS && id >= 0 && id < CHUNKS * CHUNK && n >= 0) {
				synchronized (LOCK) {
					boolean[][] c = BOOLS[id >>> CHUNK_BITS];
					if (c == null)
						c = BOOLS[id >>> CHUNK_BITS] = new boolean[CHUNK][];
					boolean[] a = c[id & (CHUNK - 1)];
					if (a == null || a.length < n) {
						a = grow(a, n);
						c[id & (CHUNK - 1)] = a;
						noteSize(id);
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

	private static long[] countsSlow(int id, int n) {
		try {
			if (mode == COUNTS && id >= 0 && id < CHUNKS * CHUNK && n >= 0) {
				synchronized (LOCK) {
					long[][] c = LONGS[id >>> CHUNK_BITS];
					if (c == null)
						c = LONGS[id >>> CHUNK_BITS] = new long[CHUNK][];
					long[] a = c[id & (CHUNK - 1)];
					if (a == null || a.length < n) {
						long[] b = new long[n];
						if (a != null)
							System.arraycopy(a, 0, b, 0, a.length);
						c[id & (CHUNK - 1)] = a = b;
						noteSize(id);
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

	/* An id asked with another probe count than before (never, with one
	 * placement per identity) keeps what was recorded and grows. */
	private static boolean[] grow(boolean[] a, int n) {
		boolean[] b = new boolean[n];
		if (a != null)
			System.arraycopy(a, 0, b, 0, a.length);
		return b;
	}

	private static void noteSize(int id) {
		if (id >= limit)
			limit = id + 1;
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
		for (int i = 0; i < CHUNKS; i++) {
			BOOLS[i] = null;
			LONGS[i] = null;
		}
		limit = 0;
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
			Object[] out = new Object[limit];
			for (int id = 0; id < limit; id++) {
				boolean[][] bc = BOOLS[id >>> CHUNK_BITS];
				long[][] lc = LONGS[id >>> CHUNK_BITS];
				boolean[] b = bc == null ? null : bc[id & (CHUNK - 1)];
				long[] l = lc == null ? null : lc[id & (CHUNK - 1)];
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
