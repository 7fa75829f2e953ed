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
 *
 * <h2>By identity: code instrumented ahead of time</h2>
 *
 * Class ids are handed out per instrumenter run, so two jars instrumented
 * in separate runs would share them. Their classes ask instead by the
 * class's identity (XXH64 of its original bytes, the marker's and the
 * data file's), with its name ({@link #probesFor}, {@link #countsFor}):
 * no two runs give two classes one identity, and the record needs no
 * table to be named. A second table keeps them, open addressing on the
 * identity's low bits (it is a hash already), linear probing, at most half
 * full ({@link IdentityTable}: identities, names, arrays). A lookup reads
 * the published table without a lock: a slot's array, then its identity,
 * and a compare; an empty slot (null array) ends the probe and sends the
 * call to the slow path, which takes {@link #LOCK}, finds or fills the
 * slot (identity and name first, the array last, so a racy reader sees a
 * slot either empty or with its identity; one it does not recognise only
 * sends it to the slow path), and grows the table by a copy; the probe
 * arrays themselves are never copied, so frames that hold one keep
 * recording into the live array. The table is published by a plain write
 * and its final fields (JLS 17.5), not a volatile one: with a volatile
 * read in it, the fast path cost some 4 ns more a call (10^8 calls of a
 * method not inlined, JDK 17), the JIT then neither reordering nor reusing
 * the loads that follow. A reader with a stale table finds what it held,
 * and what it lacks on the slow path. These record whatever
 * the mode: the classes asked for coverage when they were instrumented.
 * The first call of a new class tells {@link Standalone}, which arranges
 * for the records to be written (the agent's coverage module, or the
 * runtime's own writer). A class asked for with booleans and with counts
 * (two runs with different modes) gets the sink for the second kind.
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
	/** The table by identity (the essay above), replaced whole under LOCK. */
	private static IdentityTable byIdentity = new IdentityTable(64);
	/** Slots filled in byIdentity, under LOCK. */
	private static int identities;

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
			/* out of memory: the sink, if it can be had */
		}
		return sinkBooleans(n);
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
			/* out of memory: the sink, if it can be had */
		}
		return sinkCounts(n);
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

	/* ---- by identity ---------------------------------------------------- */

	/* The array of the slot of identity in the published table, or null:
	 * the fast path, which the JIT inlines into the two below. It compares
	 * identities alone (the slow path names too): two classes of different
	 * names would share an array only if their 64-bit hashes collided. */
	private static Object lookup(long identity) {
		IdentityTable t = byIdentity;
		long[] ids = t.ids;
		Object[] arrays = t.arrays;
		int mask = ids.length - 1;
		for (int i = (int) identity & mask;; i = (i + 1) & mask) {
			Object a = arrays[i];
			if (a == null || ids[i] == identity)
				return a;
		}
	}

	/** The boolean probes of the class of this identity and name, at least n long. */
	static boolean[] probesFor(long identity, int n, String name) {
		Object a = lookup(identity);
		if (a instanceof boolean[] && ((boolean[]) a).length >= n)
			return (boolean[]) a;
		a = forSlow(identity, n, name, false);
		return a instanceof boolean[] ? (boolean[]) a : sinkBooleans(n);
	}

	/** The hit counts of the class of this identity and name, at least n long. */
	static long[] countsFor(long identity, int n, String name) {
		Object a = lookup(identity);
		if (a instanceof long[] && ((long[]) a).length >= n)
			return (long[]) a;
		a = forSlow(identity, n, name, true);
		return a instanceof long[] ? (long[]) a : sinkCounts(n);
	}

	/* The array of (identity, name), made on first use; null when it
	 * cannot be had (out of memory, the other kind of array, no name). */
	private static Object forSlow(long identity, int n, String name, boolean counts) {
		Object a = null;
		boolean added = false;
		try {
			if (n >= 0 && name != null) {
				synchronized (LOCK) {
					int i = slot(identity, name);
					if (i < 0) {
						byIdentity = new IdentityTable(byIdentity);
						i = slot(identity, name);
					}
					IdentityTable t = byIdentity;
					Object had = t.arrays[i];
					a = sized(had, n, counts);
					if (a != null && had == null) {
						t.ids[i] = identity;
						t.names[i] = name;
						identities++;
						added = true;
					}
					if (a != null)
						t.arrays[i] = a;
				}
			}
		} catch (Throwable e) {
			/* out of memory: the caller's sink */
		}
		if (added)
			Standalone.coverageAsked();
		return a;
	}

	/* a, or a new array of the kind asked for at least n long (with a's
	 * elements when a was shorter); null for the other kind. */
	private static Object sized(Object a, int n, boolean counts) {
		if (counts ? a instanceof boolean[] : a instanceof long[])
			return null;
		if (counts) {
			long[] l = (long[]) a;
			if (l != null && l.length >= n)
				return l;
			long[] b = new long[n];
			if (l != null)
				System.arraycopy(l, 0, b, 0, l.length);
			return b;
		}
		boolean[] b = (boolean[]) a;
		return b != null && b.length >= n ? b : grow(b, n);
	}

	/* Under LOCK: the slot of (identity, name), or the empty slot where it
	 * goes; -1 when the table would be more than half full. */
	private static int slot(long identity, String name) {
		IdentityTable t = byIdentity;
		long[] ids = t.ids;
		String[] names = t.names;
		int mask = ids.length - 1;
		for (int i = (int) identity & mask;; i = (i + 1) & mask) {
			if (t.arrays[i] == null)
				return (identities + 1) * 2 > ids.length ? -1 : i;
			if (ids[i] == identity && names[i].equals(name))
				return i;
		}
	}

	private static boolean[] sinkBooleans(int n) {
		boolean[] s = sinkBools;
		if (s.length < n)
			sinkBools = s = new boolean[n];
		return s;
	}

	private static long[] sinkCounts(int n) {
		long[] s = sinkLongs;
		if (s.length < n)
			sinkLongs = s = new long[n];
		return s;
	}

	/**
	 * What the classes asked for by identity recorded: {identities
	 * (long[]), names (String[]), arrays (Object[]: copies, boolean[] or
	 * long[])}, one element per class, in no particular order. With reset,
	 * the arrays are then cleared in place.
	 */
	static Object[] snapshotByIdentity(boolean reset) {
		synchronized (LOCK) {
			IdentityTable t = byIdentity;
			long[] ids = t.ids;
			String[] names = t.names;
			long[] outIds = new long[identities];
			String[] outNames = new String[identities];
			Object[] outArrays = new Object[identities];
			int k = 0;
			for (int i = 0; i < ids.length && k < identities; i++) {
				Object a = t.arrays[i];
				if (a == null)
					continue;
				outIds[k] = ids[i];
				outNames[k] = names[i];
				outArrays[k++] = copy(a, reset);
			}
			return new Object[] {outIds, outNames, outArrays};
		}
	}

	/* A copy of a probe array; with reset, a is then cleared. */
	private static Object copy(Object a, boolean reset) {
		if (a instanceof boolean[]) {
			boolean[] b = (boolean[]) a, c = b.clone();
			for (int i = 0; reset && i < b.length; i++)
				b[i] = false;
			return c;
		}
		long[] l = (long[]) a, c = l.clone();
		for (int i = 0; reset && i < l.length; i++)
			l[i] = 0;
		return c;
	}

	/** Whether the agent's coverage module records (this is its copy, engaged). */
	static boolean agentRecords() {
		return mode != 0 && Coverage.class.getClassLoader() == null;
	}

	/* ---- the agent's side (JNI) ----------------------------------------- */

	/**
	 * Starts a session in newMode (BOOLEANS or COUNTS): empty tables; the
	 * arrays by identity cleared in place (frames hold them).
	 */
	static void engage(int newMode) {
		synchronized (LOCK) {
			clear();
			snapshotByIdentity(true);
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
