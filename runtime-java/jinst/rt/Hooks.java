package jinst.rt;

/**
 * The hooks instrumented code calls: {@code enter(id)} at method entry,
 * {@code exit(id)} before every return, {@code exitThrow(id)} in a catch-all
 * that rethrows; {@code called(id)} alone at the entry of a method that is
 * counted and not timed (every method under trace=counts, leaves under
 * trace=times). Ids are the small ints the instrumentation pass hands out
 * (include/jinst/instrument.h); the four public methods must match the hook
 * table in instrument/hooks.c (a test compares them).
 *
 * The agent defines this package in the bootstrap loader from bytes embedded
 * in libjinst.so and engages the hooks once the VM is live; until then
 * {@link #mode} is 0 and every hook returns at once.
 *
 * <h2>The fast path: one thread, static arrays</h2>
 *
 * Every instrumented method runs a hook, often inlined into its callers'
 * compiled code, so what a hook costs is paid hundreds of millions of times
 * (javac, with the JDK traced) and what its code weighs is paid in every
 * compilation. Measured on javac compiling 172 of the JDK's sources with
 * every class traced (4.0 s plain): an empty hook costs 1.05x, a plain
 * unsynchronized increment of a static final array 1.15x, and the first
 * design here, which found the thread's own context and its arrays on
 * every call, 1.83x.
 *
 * So one thread, the {@link #owner}, counts and keeps its shadow stack in
 * static final arrays: the JIT knows their addresses and lengths, a
 * constant id needs no bounds check, and a counted call is a compare of
 * {@code Thread.currentThread()} with {@code owner} and one increment.
 * Only the owner ever writes those arrays, so its counts are exact; every
 * other thread counts into its own context ({@link Ctx}) on the slow path,
 * as the owner does for ids past {@link #FAST_METHODS}; a snapshot adds
 * them all up. The first thread to reach a hook becomes the owner (main,
 * in most programs) and stays the owner until it ends: ownership cannot
 * move from a live thread, which may be between the compare and the
 * increment. A thread that ends gives it up in its ThreadEnd event, on
 * itself, and the next thread to take the slow path claims it.
 *
 * <h2>Time: the clock samples the stacks</h2>
 *
 * Two {@code System.nanoTime()} calls per call cost 34 ns here, more than
 * everything else a timed call does; javac makes 2.6 * 10^8 timed calls.
 * So the hooks never read a clock: they only keep each thread's shadow
 * stack of method ids. The agent's clock thread calls {@link #sample}
 * every {@code tick=} microseconds (1000 by default) with the time, and the
 * time since the last sample goes to every thread's stack as it stands:
 * self time to the method on top, and its call-tree node; inclusive time
 * to every distinct method on the stack (a recursion counts once). Time is
 * thus sampled at the tick rate, but every tick's worth of wall time goes
 * to where each thread was when it fell, and a thread's times add up to
 * its wall time; counts stay exact. The call tree is resolved only then,
 * from the stack of ids, so a call costs no tree lookup, and the tree holds
 * only the paths a tick found. (A first version had each hook compare a
 * clock field with the last tick its thread saw: that branch, taken now and
 * then, made the compiler keep a call to the slow path in every inlined
 * hook, which cost javac 2 s more than the stack alone.) The sampler reads
 * the other threads' stacks without a lock, as they change: a frame pushed
 * or popped at that very moment may be seen either way.
 *
 * <h2>Recursion</h2>
 *
 * The hot path executes only code of java.lang.Thread and this class; the
 * slow path also java.lang.ThreadLocal (and its map, entries,
 * java.lang.ref.Reference) and the rest of this package. The agent never instruments
 * those classes, whatever the include patterns say, so a hook cannot call
 * itself. The slow paths that allocate (a thread's first call, growing
 * arrays) use only array allocation and System.arraycopy, and set a
 * per-thread busy flag so that nothing they might reach records or
 * recurses.
 */
public final class Hooks {
	static final int COUNTS = 1;  /* exact entry counts per method */
	static final int TIMES = 2;   /* inclusive and self time per method, from the clock */
	static final int TREE = 4;    /* the call tree (folded stacks), from the clock */
	static final int EVENTS = 8;  /* bounded enter/exit timeline per thread, System.nanoTime */

	/**
	 * What is recorded; 0 (nothing) until the agent engages the hooks. Read
	 * by the slow paths only. Not volatile: the agent engages before it
	 * instruments any class, and the class definitions and
	 * retransformations that follow publish it.
	 */
	static int mode;
	/** Events a thread keeps at most (set when engaged). */
	static int eventCapacity = 100000;

	/* ---- the owner's fast path (the essay above) ----------------------- */

	/** Ids the owner counts in FAST_COUNTS; larger ones go to its context. */
	static final int FAST_METHODS = 1 << 17;
	/** The owner's stack holds FAST_DEPTH - 1 frames; the last slot is a
	 * sentinel (-1, no id), which an exit on an empty stack reads. */
	static final int FAST_DEPTH = 1 << 16, FAST_MASK = FAST_DEPTH - 1;
	static final long[] FAST_COUNTS = new long[FAST_METHODS];
	static final int[] FAST_STACK = new int[FAST_DEPTH];
	/** The thread that uses the arrays above, or null; set and cleared
	 * under REGISTRY, ownerCtx first. */
	static Thread owner;
	static Ctx ownerCtx;
	/** The owner's stack depth (its context's, which syncs it on the slow
	 * path), or FAST_DEPTH (ownerSync), in DEPTH[AT]: an array of its own,
	 * away from the fields every thread reads (owner), which a field of
	 * this class would share a cache line with: the owner writes it at
	 * every timed call. */
	static final int[] DEPTH = new int[32];
	static final int AT = 16;
	/** The time of the last sample (sample). */
	private static long sampled;

	static {
		FAST_STACK[FAST_MASK] = -1;
	}

	static final Local LOCAL = new Local();

	/*
	 * Finding another thread's context (the slow path): the context that
	 * was found last, checked against the current thread, then the
	 * ThreadLocal, which creates and registers the context on a thread's
	 * first call. The check compares Ctx.owner, a final field, so a context
	 * read through a data race is either seen whole or fails the check: a
	 * thread only ever counts into its own context, and counts stay exact.
	 * The last one is kept in LAST[AT], an array of its own, so that its
	 * writes do not share a cache line with the fields every hook reads
	 * (owner), and it is written on a thread's first miss when empty and
	 * then on every 256th, so that threads that alternate do not write it
	 * on every call. A table indexed by the thread's identity hash, between
	 * the two, cost 50 times more than it saved: the hash of a thread
	 * another thread joins (its monitor inflated) is a call into the VM.
	 */
	private static final Ctx[] LAST = new Ctx[32];

	/* Every live thread's context; guarded by REGISTRY. */
	private static final Object REGISTRY = new Object();
	private static Ctx[] threads = new Ctx[16];
	private static int threadCount;

	private Hooks() {
	}

	/** Entry of a method that is counted, never timed: no exit hook follows. */
	public static void called(int id) {
		if (Thread.currentThread() == owner && id < FAST_METHODS)
			FAST_COUNTS[id]++;
		else
			calledSlow(id);
	}

	public static void enter(int id) {
		int d = DEPTH[AT];
		if (Thread.currentThread() == owner && id < FAST_METHODS && d < FAST_MASK) {
			FAST_COUNTS[id]++;
			FAST_STACK[d & FAST_MASK] = id;
			DEPTH[AT] = d + 1;
		} else {
			enterSlow(id);
		}
	}

	public static void exit(int id) {
		int d = DEPTH[AT] - 1;
		if (Thread.currentThread() == owner && FAST_STACK[d & FAST_MASK] == id)
			DEPTH[AT] = d;
		else
			exitSlow(id);
	}

	/* The exit of a catch-all handler that rethrows: the same as exit, a
	 * method of its own so that exceptional exits show apart in a profile
	 * of the VM. */
	public static void exitThrow(int id) {
		exit(id);
	}

	/* ---- the slow paths ------------------------------------------------- */

	/* The slow paths first try the context found last (the essay at LAST):
	 * most often that of another thread than the owner, which takes this
	 * path at every call. While there is no owner, they go the long way,
	 * which claims the fast path. (After a disengage such a thread may
	 * count on for a while: after the output was written, into its own
	 * context.) */

	private static void calledSlow(int id) {
		Thread t = Thread.currentThread();
		Ctx c = LAST[AT];
		Thread o = owner;
		if (c == null || c.owner != t || t == o || o == null) {
			int m = mode;
			if (m == 0 || (c = ctxOf(t, m)) == null)
				return;
		}
		c.count(id);
	}

	private static void enterSlow(int id) {
		moveSlow(id, true);
	}

	private static void exitSlow(int id) {
		moveSlow(id, false);
	}

	/* An entry (push) or an exit (pop) on the slow path. */
	private static void moveSlow(int id, boolean entry) {
		Thread t = Thread.currentThread();
		Ctx c = LAST[AT];
		Thread o = owner;
		if (c != null && c.owner == t && t != o && o != null) {
			move(c, id, mode, entry);
			return;
		}
		int m = mode;
		if (m == 0 || (c = ctxOf(t, m)) == null)
			return;
		if (c != ownerCtx || t != owner) {
			move(c, id, m, entry);
			return;
		}
		if (DEPTH[AT] != FAST_DEPTH)
			c.depth = DEPTH[AT];
		move(c, id, m, entry);
		ownerSync(c);
	}

	private static void move(Ctx c, int id, int m, boolean entry) {
		if (entry)
			c.enter(id, m);
		else
			c.exit(id, m);
	}

	/* After the owner's context moved its stack: the fast path's view, or
	 * FAST_DEPTH, which sends every hook to the slow path, while frames
	 * that did not fit are on it (their exits pop nothing). */
	private static void ownerSync(Ctx c) {
		DEPTH[AT] = c.overflow == 0 ? c.depth : FAST_DEPTH;
	}

	/* The context of thread t, which becomes the owner if there is none
	 * (not in events mode, which records every thread alike). */
	private static Ctx ctxOf(Thread t, int m) {
		Ctx o = ownerCtx;
		if (t == owner && o != null)
			return o;
		Ctx c = ctx(t);
		if (owner == null && (m & EVENTS) == 0 && c != null && !c.busy)
			claim(t, c);
		return c;
	}

	private static void claim(Thread t, Ctx c) {
		synchronized (REGISTRY) {
			if (owner != null || mode == 0 || c.ended)
				return;
			c.adopt(FAST_STACK, FAST_MASK);
			ownerCtx = c;
			ownerSync(c);
			owner = t;
		}
	}

	/* The current thread's context (the essay at LAST). */
	private static Ctx ctx(Thread t) {
		Ctx c = LAST[AT];
		if (c != null && c.owner == t)
			return c;
		c = LOCAL.get();
		if ((++c.misses & 255) == 0 || LAST[AT] == null)
			LAST[AT] = c;
		return c;
	}

	/* ---- called by the agent through JNI --------------------------------- */

	static void engage(int newMode, int capacity, long now) {
		if (capacity > 0)
			eventCapacity = capacity;
		sampled = now;
		mode = newMode;
	}

	static void disengage() {
		mode = 0;
		synchronized (REGISTRY) {
			owner = null;
		}
	}

	/**
	 * The clock (the agent's clock thread, every tick= microseconds; a
	 * test, by hand): the time since the last sample goes to the stack of
	 * every thread as it stands (the essay above).
	 */
	static void sample(long now) {
		long dt = now - sampled;
		sampled = now;
		if (dt <= 0 || (mode & TIMES) == 0)
			return;
		boolean tree = (mode & TREE) != 0;
		synchronized (REGISTRY) {
			Ctx o = ownerCtx;
			int d = DEPTH[AT];
			for (int i = 0; i < threadCount; i++) {
				Ctx c = threads[i];
				if (c == o && owner != null && d != FAST_DEPTH)
					Sampler.sample(c, dt, d, true, tree);
				else
					Sampler.sample(c, dt, c.depth, c == o, tree);
			}
		}
	}

	/** Writes the output now (registered by the agent with RegisterNatives). */
	static native void dump0();

	/** The context of t, the current thread (Local's initial value): the
	 * one it had, or a new one, registered. */
	static Ctx contextOf(Thread t) {
		synchronized (REGISTRY) {
			int h = System.identityHashCode(t);
			Ctx c = find(t, h);
			if (c != null)
				return c;
			c = new Ctx(t);
			c.hash = h;
			if (threadCount == threads.length) {
				/* Threads with no ThreadEnd event (virtual threads) are
				 * retired here, when the registry is full, as they are
				 * found dead: it stays within twice the live threads. */
				for (int i = threadCount - 1; i >= 0; i--)
					if (!threads[i].owner.isAlive())
						retire(threads[i]);
				if (2 * threadCount > threads.length) {
					Ctx[] a = new Ctx[threads.length * 2];
					System.arraycopy(threads, 0, a, 0, threadCount);
					threads = a;
				}
			}
			index(c);
			c.at = threadCount;
			threads[threadCount++] = c;
			return c;
		}
	}

	/* The live contexts again, by thread: an open-addressing table on the
	 * thread's identity hash (GONE: a context removed), so that a thread's
	 * context is found again when its ThreadLocals were erased (the JDK's
	 * InnocuousThreads, Common-Cleaner among them, erase theirs after each
	 * task: javac made 328 contexts for that one thread), and found at its
	 * end without a walk of them all. Under REGISTRY. */
	private static Ctx[] byThread = new Ctx[64];
	private static int byThreadUsed;
	private static final Ctx GONE = new Ctx(-2, "(gone)");

	private static Ctx find(Thread t, int h) {
		Ctx[] b = byThread;
		int mask = b.length - 1;
		for (int i = h & mask; b[i] != null; i = (i + 1) & mask)
			if (b[i].owner == t) /* (GONE's is null) */
				return b[i];
		return null;
	}

	private static void index(Ctx c) {
		if (2 * (byThreadUsed + 1) > byThread.length) {
			int n = 64;
			while (n < 4 * (threadCount + 1))
				n *= 2;
			byThread = new Ctx[n];
			byThreadUsed = 0;
			for (int j = 0; j < threadCount; j++)
				put(threads[j]);
		}
		put(c);
	}

	private static void put(Ctx c) {
		Ctx[] b = byThread;
		int mask = b.length - 1, i = c.hash & mask;
		while (b[i] != null)
			i = (i + 1) & mask;
		b[i] = c;
		byThreadUsed++;
	}

	private static void unindex(Ctx c) {
		Ctx[] b = byThread;
		int mask = b.length - 1;
		for (int i = c.hash & mask; b[i] != null; i = (i + 1) & mask)
			if (b[i] == c) {
				b[i] = GONE;
				return;
			}
	}

	/* What the threads that ended left: counts, times and call tree folded
	 * into one context, so a program that starts thread after thread keeps
	 * a bounded registry; timelines kept (trimmed) within a bound, the
	 * events of further ones counted as dropped. */
	private static final Ctx RETIRED = new Ctx(-1, "(ended threads)");
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
		Ctx keep = new Ctx(c.tid, c.name);
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
			Ctx c = find(t, System.identityHashCode(t));
			if (c != null)
				retire(c);
		}
	}

	/* c's thread ended: what it recorded goes to RETIRED. Under REGISTRY. */
	private static void retire(Ctx c) {
		Ctx moved = threads[--threadCount];
		threads[c.at] = moved;
		moved.at = c.at;
		threads[threadCount] = null;
		unindex(c);
		c.ended = true;
		if (c == ownerCtx) {
			/* It runs no more hooks: the next thread may own the arrays
			 * (its counts in FAST_COUNTS stay there). */
			owner = null;
			ownerCtx = null;
			DEPTH[AT] = 0;
		}
		/* Not found again (the thread is gone), and not kept alive. */
		if (LAST[AT] == c)
			LAST[AT] = null;
		Sampler.flush(c);
		RETIRED.fold(c);
		if (c.evCount > 0)
			retireTimeline(c);
	}

	/* The snapshots hold REGISTRY throughout, so a thread that ends meanwhile
	 * is counted once; the hooks themselves take it only to claim the
	 * fast path. Live threads first, then what ended threads left. */
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
				len = max(len, t[i].counts.limit());
			/* FAST_COUNTS: only up to its last nonzero count */
			int fast = FAST_METHODS;
			while (fast > 0 && FAST_COUNTS[fast - 1] == 0)
				fast--;
			long[] r = new long[max(len, fast)];
			System.arraycopy(FAST_COUNTS, 0, r, 0, fast);
			for (int i = 0; i < t.length; i++)
				t[i].counts.addTo(r);
			return r;
		}
	}

	/**
	 * Per method id: entries, inclusive and self nanoseconds (the clock's,
	 * all threads together): three longs per id.
	 */
	static long[] snapshotTimes() {
		synchronized (REGISTRY) {
			long[] counts = snapshotCounts(); /* (the same moment: the lock is held) */
			flushAll();
			long[] s = Sampler.times;
			int len = max(counts.length, s.length / Sampler.TIMED);
			long[] r = new long[3 * len];
			for (int j = 0; j < counts.length; j++)
				r[3 * j] = counts[j];
			for (int j = 0; j < s.length / Sampler.TIMED; j++) {
				r[3 * j + 1] = s[Sampler.TIMED * j + Sampler.TOTAL];
				r[3 * j + 2] = s[Sampler.TIMED * j + Sampler.SELF];
			}
			return r;
		}
	}

	/* Adds every thread's pending time (Sampler). Under REGISTRY. */
	private static void flushAll() {
		for (int i = 0; i < threadCount; i++)
			Sampler.flush(threads[i]);
	}

	/**
	 * The call tree, all threads together, in the form of one tree per
	 * thread: 1, then its node count (root excluded) and per node: parent
	 * (0 is the root), method id (-1: "tree full"), self nanoseconds.
	 * Parents come before their children.
	 */
	static long[] snapshotTree() {
		synchronized (REGISTRY) {
			flushAll();
			long[] nd = Sampler.nData;
			int n = nd == null ? 0 : min(Sampler.nodes, nd.length / Sampler.NODE) - 1;
			long[] r = new long[2 + 3 * n];
			r[0] = 1;
			r[1] = n;
			for (int j = 1, k = 2; j <= n; j++) {
				long key = nd[Sampler.NODE * j + Sampler.N_KEY];
				r[k++] = key >>> 32;
				r[k++] = Sampler.methodOf(key);
				r[k++] = nd[Sampler.NODE * j + Sampler.N_SELF];
			}
			return r;
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

	/** The thread that owns the fast path, or null (for tests). */
	static Thread owner() {
		return owner;
	}

	/* Not Math.min/max: the dump may run while the hooks are engaged, and
	 * java.lang.Math may be instrumented. */
	static int min(int a, int b) {
		return a < b ? a : b;
	}

	static int max(int a, int b) {
		return a > b ? a : b;
	}
}
