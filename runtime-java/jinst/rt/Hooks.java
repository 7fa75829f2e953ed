package jinst.rt;

/**
 * The hooks instrumented code calls: {@code enter(id)} at method entry,
 * {@code exit(id)} before every return, {@code exitThrow(id)} in a catch-all
 * that rethrows; {@code called(id)} alone at the entry of a method that is
 * counted and not timed (every method under trace=counts, leaves under
 * trace=times). Ids are the small ints the instrumentation pass hands out
 * (include/jinst/instrument.h); the three public methods must match the hook
 * table in instrument/hooks.c (a test compares them).
 *
 * The agent defines this package in the bootstrap loader from bytes embedded
 * in libjinst.so and engages the hooks once the VM is live; until then
 * {@link #mode} is 0 and every hook returns at once.
 *
 * Hot path: a plain read of {@link #mode}, the thread's context found
 * without ThreadLocal (see {@link #ctx}) and, in counts mode, an array
 * increment: no lock, no allocation once the thread's arrays are large
 * enough, small enough for the JIT to inline. Counts are exact under any
 * number of threads because every thread counts into its own arrays
 * ({@link Ctx}); the arrays are summed at dump time.
 *
 * Recursion: the hot path executes only code of java.lang.Thread,
 * java.lang.ThreadLocal (and its map, entries, java.lang.ref.Reference) and
 * this package. The agent never instruments those classes, whatever the
 * include patterns say, so a hook cannot call itself. The slow paths (first
 * call on a thread, growing arrays) use only array allocation and
 * System.arraycopy, and set a per-thread busy flag so that nothing they might
 * reach records or recurses.
 */
public final class Hooks {
	static final int COUNTS = 1;  /* exact entry counts per method */
	static final int TIMES = 2;   /* calls, inclusive and self time per method */
	static final int TREE = 4;    /* call tree with inclusive times (folded stacks) */
	static final int EVENTS = 8;  /* bounded enter/exit timeline per thread */

	/**
	 * What is recorded; 0 (nothing) until the agent engages the hooks.
	 * Deliberately not volatile: C2 treats a volatile read as a barrier,
	 * and in every instrumented method that barrier alone cost about as
	 * much as the counting (bench/trace, CallHeavy: counts 0.60 s against
	 * 0.36 s plain-read). Visibility does not need it: the agent engages
	 * before it instruments any class, so no instrumented code runs before
	 * the write, and the class definitions and retransformations that
	 * follow publish it; a hook that still reads the old mode after a
	 * disengage (stop, VM death) records into its own thread's arrays after
	 * the output was written, which changes nothing anyone reads.
	 */
	static int mode;
	/** Events a thread keeps at most (set when engaged). */
	static int eventCapacity = 100000;

	static final Local LOCAL = new Local();

	/*
	 * Finding the thread's context. ThreadLocal.get() was most of the cost of
	 * a counted call (a map probe and a weak reference read per call: counts
	 * 0.91 s against 0.60 s without it on CallHeavy). Instead: the context
	 * that called last, checked against the current thread; then a table
	 * indexed by the thread's identity hash; then the ThreadLocal, which
	 * creates and registers the context on a thread's first call. The checks
	 * compare Ctx.owner, a final field, so a context read through a data
	 * race is either seen whole or fails the check: a thread only ever
	 * counts into its own context, and counts stay exact. LAST is taken over
	 * by a thread on its first miss when empty and then on every 256th miss,
	 * so threads that alternate do not write it on every call. Both drop a
	 * thread's context when it ends (threadEnd).
	 */
	private static Ctx last;
	private static final Ctx[] SLOTS = new Ctx[1024];

	/* Every thread's context, in order of first hook call; guarded by REGISTRY. */
	private static final Object REGISTRY = new Object();
	private static Ctx[] threads = new Ctx[16];
	private static int threadCount;

	private Hooks() {
	}

	public static void enter(int id) {
		int m = mode;
		if (m == 0)
			return;
		Ctx c = ctx();
		if (m == COUNTS)
			count(c, id);
		else
			c.enter(id, m);
	}

	/** Entry of a method that is counted, never timed: no exit hook follows. */
	public static void called(int id) {
		if (mode != 0)
			count(ctx(), id);
	}

	private static void count(Ctx c, int id) {
		long[] a = c.counts;
		if (id >= 0 && id < a.length)
			a[id]++;
		else
			c.enter(id, COUNTS);
	}

	public static void exit(int id) {
		int m = mode;
		if (m > COUNTS)
			ctx().exit(id, m);
	}

	public static void exitThrow(int id) {
		int m = mode;
		if (m > COUNTS)
			ctx().exit(id, m);
	}

	/* The current thread's context (the essay at LAST). */
	private static Ctx ctx() {
		Thread t = Thread.currentThread();
		Ctx c = last;
		if (c != null && c.owner == t)
			return c;
		return otherCtx(t);
	}

	private static Ctx otherCtx(Thread t) {
		int h = System.identityHashCode(t) & (SLOTS.length - 1);
		Ctx c = SLOTS[h];
		if (c == null || c.owner != t) {
			c = LOCAL.get();
			SLOTS[h] = c;
		}
		if ((++c.misses & 255) == 0 || last == null)
			last = c;
		return c;
	}

	/* ---- called by the agent through JNI --------------------------------- */

	static void engage(int newMode, int capacity) {
		if (capacity > 0)
			eventCapacity = capacity;
		mode = newMode;
	}

	static void disengage() {
		mode = 0;
	}

	/** Writes the output now (registered by the agent with RegisterNatives). */
	static native void dump0();

	static void register(Ctx c) {
		synchronized (REGISTRY) {
			if (threadCount == threads.length) {
				Ctx[] t = new Ctx[threadCount * 2];
				System.arraycopy(threads, 0, t, 0, threadCount);
				threads = t;
			}
			threads[threadCount++] = c;
		}
	}

	/* What the threads that ended left: counts, times and call tree folded
	 * into one context, so a program that starts thread after thread keeps
	 * a bounded registry; timelines kept (trimmed) within a bound, the
	 * events of further ones counted as dropped. */
	private static final Ctx RETIRED = new Ctx(-1, "(ended threads)", 1024, 1);
	static final int RETIRED_TIMELINES = 1024;
	private static Ctx[] retiredTimelines = new Ctx[16];
	private static int retiredTimelineCount;
	private static long retiredEvents, retiredEventsDropped;

	/* Keeps an ended thread's timeline, trimmed to its events, while at most
	 * RETIRED_TIMELINES timelines and 10 * eventCapacity events are kept. */
	private static void retireTimeline(Ctx c) {
		int n = c.evCount;
		if (retiredTimelineCount == RETIRED_TIMELINES || retiredEvents + n > 10L * eventCapacity) {
			retiredEventsDropped += n + c.evDropped;
			return;
		}
		Ctx keep = new Ctx(c.tid, c.name, 1, 1);
		keep.evTs = new long[n];
		keep.evWord = new int[n];
		System.arraycopy(c.evTs, 0, keep.evTs, 0, n);
		System.arraycopy(c.evWord, 0, keep.evWord, 0, n);
		keep.evCount = n;
		keep.evDropped = c.evDropped;
		retiredEvents += n;
		if (retiredTimelineCount == retiredTimelines.length) {
			Ctx[] r = new Ctx[retiredTimelineCount * 2];
			System.arraycopy(retiredTimelines, 0, r, 0, retiredTimelineCount);
			retiredTimelines = r;
		}
		retiredTimelines[retiredTimelineCount++] = keep;
	}

	/** The agent's ThreadEnd event, on the ending thread t itself. */
	static void threadEnd(Thread t) {
		synchronized (REGISTRY) {
			for (int i = 0; i < threadCount; i++) {
				Ctx c = threads[i];
				if (c.thread != t)
					continue;
				System.arraycopy(threads, i + 1, threads, i, threadCount - i - 1);
				threads[--threadCount] = null;
				c.thread = null;
				/* Not found again (the thread is gone), and not kept alive. */
				if (last == c)
					last = null;
				for (int j = 0; j < SLOTS.length; j++)
					if (SLOTS[j] == c)
						SLOTS[j] = null;
				RETIRED.fold(c);
				if (c.evCount > 0)
					retireTimeline(c);
				return;
			}
		}
	}

	/* The snapshots hold REGISTRY throughout, so a thread that ends meanwhile
	 * is counted once; the hooks themselves never take it. Live threads
	 * first, then what ended threads left. */
	private static Ctx[] contexts() {
		Ctx[] t = new Ctx[threadCount + 1];
		System.arraycopy(threads, 0, t, 0, threadCount);
		t[threadCount] = RETIRED;
		return t;
	}

	/** Entry counts per method id, summed over all threads. */
	static long[] snapshotCounts() {
		synchronized (REGISTRY) {
			Ctx[] t = contexts();
			int len = 0;
			for (int i = 0; i < t.length; i++)
				len = max(len, t[i].counts.length);
			long[] r = new long[len];
			for (int i = 0; i < t.length; i++) {
				long[] a = t[i].counts; /* may have grown since len was taken */
				for (int j = 0, n = min(a.length, len); j < n; j++)
					r[j] += a[j];
			}
			return r;
		}
	}

	/** Per method id: completed calls, inclusive and self nanoseconds, summed over threads. */
	static long[] snapshotTimes() {
		synchronized (REGISTRY) {
			Ctx[] t = contexts();
			int len = 0;
			for (int i = 0; i < t.length; i++)
				len = max(len, t[i].stats.length / Ctx.STATS);
			long[] r = new long[3 * len];
			for (int i = 0; i < t.length; i++) {
				long[] s = t[i].stats; /* may have grown since len was taken */
				int n = min(len, s.length / Ctx.STATS);
				for (int j = 0; j < n; j++) {
					r[3 * j] += s[Ctx.STATS * j + Ctx.CALLS];
					r[3 * j + 1] += s[Ctx.STATS * j + Ctx.TOTAL];
					r[3 * j + 2] += s[Ctx.STATS * j + Ctx.SELF];
				}
			}
			return r;
		}
	}

	/**
	 * The call trees: tree count, then per tree its node count (root
	 * excluded) and per node: parent (0 is the root), method id, completed
	 * calls, inclusive nanoseconds. Parents come before their children.
	 */
	static long[] snapshotTree() {
		synchronized (REGISTRY) {
			Ctx[] t = contexts();
			/* Live threads go on adding nodes while this runs: each tree's
			 * size is read once, and that many nodes are taken. */
			int[] counts = new int[t.length];
			int size = 1;
			for (int i = 0; i < t.length; i++) {
				counts[i] = max(0, t[i].nodes - 1);
				size += 1 + 4 * counts[i];
			}
			long[] r = new long[size];
			int k = 0;
			r[k++] = t.length;
			for (int i = 0; i < t.length; i++) {
				Ctx c = t[i];
				int n = counts[i];
				long[] nd = c.nData;
				n = nd == null ? 0 : min(n, nd.length / Ctx.NODE - 1);
				r[k++] = n;
				for (int j = 1; j <= n; j++) {
					long key = nd[Ctx.NODE * j + Ctx.N_KEY];
					r[k++] = key >>> 32;
					r[k++] = Ctx.methodOf(key);
					r[k++] = nd[Ctx.NODE * j + Ctx.N_CALLS];
					r[k++] = nd[Ctx.NODE * j + Ctx.N_TIME];
				}
			}
			long[] out = new long[k];
			System.arraycopy(r, 0, out, 0, k);
			return out;
		}
	}

	/* The thread names of the last events snapshot, in its order. */
	private static String[] eventNames = new String[0];

	/**
	 * The timelines: thread count, then per thread: thread id, event count,
	 * events dropped, and per event its nanoTime and word (method id << 1,
	 * low bit set for an exit). Live threads, then ended ones, then (id -1,
	 * no events) what ended threads beyond RETIRED_TIMELINES dropped.
	 */
	static long[] snapshotEvents() {
		synchronized (REGISTRY) {
			int count = threadCount + retiredTimelineCount + 1;
			Ctx[] t = new Ctx[count];
			System.arraycopy(threads, 0, t, 0, threadCount);
			System.arraycopy(retiredTimelines, 0, t, threadCount, retiredTimelineCount);
			t[count - 1] = RETIRED;
			/* Live threads go on recording while this runs: each timeline's
			 * length is read once. */
			int[] counts = new int[count];
			int size = 1;
			for (int i = 0; i < count; i++) {
				counts[i] = t[i].evCount;
				size += 3 + 2 * counts[i];
			}
			long[] r = new long[size];
			String[] names = new String[count];
			int k = 0;
			r[k++] = count;
			for (int i = 0; i < count; i++) {
				Ctx c = t[i];
				long[] ts = c.evTs;
				int[] word = c.evWord;
				int n = ts == null || word == null ? 0 : min(counts[i], min(ts.length, word.length));
				names[i] = c.name;
				r[k++] = c.tid;
				r[k++] = n;
				r[k++] = c == RETIRED ? retiredEventsDropped : c.evDropped;
				for (int j = 0; j < n; j++) {
					r[k++] = ts[j];
					r[k++] = word[j];
				}
			}
			eventNames = names;
			long[] out = new long[k];
			System.arraycopy(r, 0, out, 0, k);
			return out;
		}
	}

	/** The thread names of the last snapshotEvents, in its order. */
	static String[] threadNames() {
		synchronized (REGISTRY) {
			return eventNames;
		}
	}

	/** Live threads with a context (for tests). */
	static int liveThreads() {
		synchronized (REGISTRY) {
			return threadCount;
		}
	}

	/* Not Math.min/max: the dump may run while the hooks are engaged, and
	 * java.lang.Math may be instrumented. */
	private static int min(int a, int b) {
		return a < b ? a : b;
	}

	private static int max(int a, int b) {
		return a > b ? a : b;
	}
}
