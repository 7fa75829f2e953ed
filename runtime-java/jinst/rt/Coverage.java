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
	/** The table by identity (the essay above), replaced whole under LOCK. */
	private static IdentityTable byIdentity = new IdentityTable(64);
	/** Slots filled in byIdentity, under LOCK. */
	private static int identities;

	private Coverage() {
	}

	/* The fast paths are Hooks.probes and Hooks.probeCounts: a table read,
	 * a compare, one element; the slow paths below make the array. */

	/** The flat array's most booleans: 4 MiB, 4 million probes (Xalan's
	 * classes have 57 thousand). */
	static final int FLAT_MAX = 1 << 22;

	/**
	 * The flat array of java.lang.$JinstProbes (its initializer calls this
	 * once; the agent makes it run before it hands out ranges, and reads its
	 * length): FLAT_MAX booleans, or a 256th of the heap's limit if less, so
	 * that a small heap keeps its room, or the system property jinst.flat if
	 * less (0: none; the tests make it small to mix both forms). Empty when
	 * even that cannot be had: the classes then ask by class id, and the
	 * program never sees the error.
	 */
	public static boolean[] flatBools() {
		long n = Math.min(FLAT_MAX, Runtime.getRuntime().maxMemory() / 256);
		n = Math.max(0, Math.min(n, Integer.getInteger("jinst.flat", FLAT_MAX)));
		try {
			return new boolean[(int) n];
		} catch (OutOfMemoryError e) {
			return new boolean[0];
		}
	}

	public static boolean[] probesSlow(int id, int n) {
		try {
			if (mode == BOOLEANS && id >= 0 && id < MAX_ID && n >= 0) {
				synchronized (LOCK) {
					if (id >= bools.length) {
						boolean[][] t = new boolean[capacity(bools.length, id)][];
						System.arraycopy(bools, 0, t, 0, bools.length);
						bools = t;
					}
					return bools[id] = grown(bools[id], n);
				}
			}
		} catch (Throwable t) {
			/* out of memory: the sink, if it can be had */
		}
		return sinkBooleans(n);
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
					return longs[id] = grown(longs[id], n);
				}
			}
		} catch (Throwable t) {
			/* out of memory: the sink, if it can be had */
		}
		return sinkCounts(n);
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

	/* ---- by identity ---------------------------------------------------- */

	/* The array of the slot of identity in the published table, or null:
	 * the fast path, which the JIT inlines into the two below. The table is
	 * keyed by identity alone (the name is the record's): two classes of
	 * different names would share an array only if their 64-bit hashes
	 * collided. */
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
					int i = slot(identity);
					if (i < 0) {
						byIdentity = new IdentityTable(byIdentity);
						i = slot(identity);
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
		return counts ? grown((long[]) a, n) : grown((boolean[]) a, n);
	}

	/* a when at least n long; else a new array of n with a's elements (a
	 * class asked for with another probe count than before: never, with one
	 * placement per identity). */
	private static boolean[] grown(boolean[] a, int n) {
		if (a != null && a.length >= n)
			return a;
		boolean[] b = new boolean[n];
		if (a != null)
			System.arraycopy(a, 0, b, 0, a.length);
		return b;
	}

	private static long[] grown(long[] a, int n) {
		if (a != null && a.length >= n)
			return a;
		long[] b = new long[n];
		if (a != null)
			System.arraycopy(a, 0, b, 0, a.length);
		return b;
	}

	/* Under LOCK: the slot of identity, or the empty slot where it goes;
	 * -1 when the table would be more than half full. By identity alone,
	 * as the fast path, and calling nothing outside this class (with the
	 * JDK instrumented, a probe reached from here would come back in). */
	private static int slot(long identity) {
		IdentityTable t = byIdentity;
		long[] ids = t.ids;
		int mask = ids.length - 1;
		for (int i = (int) identity & mask;; i = (i + 1) & mask) {
			if (t.arrays[i] == null)
				return (identities + 1) * 2 > ids.length ? -1 : i;
			if (ids[i] == identity)
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
