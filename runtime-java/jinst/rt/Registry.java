package jinst.rt;

/**
 * Every live thread's context, and what the threads that ended left. The
 * hooks reach it on a thread's first slow-path call (Local's initial value,
 * contextOf) and to claim the fast path (Hooks.claim, under LOCK); the
 * clock (Hooks.sample), the snapshots (TraceData) and the threads' ends
 * hold LOCK throughout, so a thread that ends meanwhile is counted once.
 *
 * What a thread that ends leaves (counts, times, call tree) is folded into
 * one context, RETIRED, so a program that starts thread after thread keeps
 * a registry as small as its live threads; its timeline is kept, trimmed,
 * within two bounds (timelineCap() timelines, eventCap() events), the
 * calls of the ones not kept counted as dropped. Within the bounds the
 * threads created first win (the lowest ids): a thread that ends when they
 * are reached takes the place of ended ones created after it. Which
 * timelines are kept then depends on the threads alone, not on the order
 * they end in: main, created first and ended last, is always kept, where
 * first come, first kept lost it to the first 1024 workers of a program
 * that starts thread after thread. Threads with no ThreadEnd event
 * (virtual threads, and every thread when no agent runs) are retired
 * when the registry is full and finds them dead.
 */
final class Registry {
	private Registry() {
	}

	static final Object LOCK = new Object();

	/* The live contexts: threads[0, count); Ctx.at is a context's index. */
	static Ctx[] threads = new Ctx[16];
	static int count;

	static final Ctx RETIRED = new Ctx(-1, "(ended threads)");
	static final int RETIRED_TIMELINES = 1024;
	/* The ended timelines kept, by thread id (ascending). */
	static Ctx[] retiredTimelines = new Ctx[16];
	static int retiredTimelineCount;
	static long retiredEvents, retiredCallsDropped; /* (calls: entries and buffer drops) */
	/* Ended threads whose timelines were not kept (dropped or given up
	 * for a thread created before them), and which bound that was:
	 * CAP_TIMELINES, CAP_EVENTS or both. */
	static long retiredThreadsDropped;
	static int capsReached;
	static final int CAP_TIMELINES = 1, CAP_EVENTS = 2;

	/* The bounds on what ended threads keep: they grow with maxevents, so
	 * that raising it keeps more (as it does for a live thread). */
	static int timelineCap() {
		return Hooks.max(RETIRED_TIMELINES, Hooks.eventCapacity / 100);
	}

	static long eventCap() {
		return 10L * Hooks.eventCapacity;
	}

	/* A new session (Hooks.newSession, under LOCK): no context, nothing
	 * retired. The earlier session's contexts are left to their threads'
	 * ThreadLocals until their next hook replaces them. */
	static void newSession() {
		threads = new Ctx[16];
		count = 0;
		byThread = new Ctx[64];
		byThreadUsed = 0;
		RETIRED.counts = new Counts(16);
		retiredTimelines = new Ctx[16];
		retiredTimelineCount = 0;
		retiredEvents = 0;
		retiredCallsDropped = 0;
		retiredThreadsDropped = 0;
		capsReached = 0;
	}

	/** The context of t, the current thread (Local's initial value): the
	 * one it had, or a new one, registered. */
	static Ctx contextOf(Thread t) {
		synchronized (LOCK) {
			int h = System.identityHashCode(t);
			Ctx c = find(t, h);
			if (c != null)
				return c;
			c = new Ctx(t);
			c.hash = h;
			if (count == threads.length)
				makeRoom();
			index(c);
			c.at = count;
			threads[count++] = c;
			return c;
		}
	}

	/* The registry is full: threads with no ThreadEnd event (virtual
	 * threads) are retired as they are found dead, so it stays within
	 * twice the live threads; it grows if that is not enough. */
	private static void makeRoom() {
		for (int i = count - 1; i >= 0; i--)
			if (!threads[i].owner.isAlive())
				retire(threads[i]);
		if (2 * count > threads.length) {
			Ctx[] a = new Ctx[threads.length * 2];
			System.arraycopy(threads, 0, a, 0, count);
			threads = a;
		}
	}

	/* The live contexts again, by thread: an open-addressing table on the
	 * thread's identity hash (GONE: a context removed), so that a thread's
	 * context is found again when its ThreadLocals were erased (the JDK's
	 * InnocuousThreads, Common-Cleaner among them, erase theirs after each
	 * task: javac made 328 contexts for that one thread), and found at its
	 * end without a walk of them all. Under LOCK. */
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
			while (n < 4 * (count + 1))
				n *= 2;
			byThread = new Ctx[n];
			byThreadUsed = 0;
			for (int j = 0; j < count; j++)
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

	/** Thread t ended (the agent's ThreadEnd event, on t itself). */
	static void threadEnd(Thread t) {
		synchronized (LOCK) {
			Ctx c = find(t, System.identityHashCode(t));
			if (c != null)
				retire(c);
		}
	}

	/* c's thread ended: what it recorded goes to RETIRED. Under LOCK. */
	private static void retire(Ctx c) {
		Ctx moved = threads[--count];
		threads[c.at] = moved;
		moved.at = c.at;
		threads[count] = null;
		unindex(c);
		c.ended = true;
		Hooks.released(c);
		Sampler.flush(c);
		RETIRED.fold(c);
		Alloc.retire(c);
		if (c.evCount > 0)
			retireTimeline(c);
	}

	/* Keeps an ended thread's timeline, trimmed to its events, within the
	 * bounds above: in the place of the kept ones of threads created after
	 * it (the highest ids first) when they are reached. */
	private static void retireTimeline(Ctx c) {
		int n = c.evCount, threadCap = timelineCap();
		long eventCap = eventCap();
		Ctx[] kept = retiredTimelines;
		int at = retiredTimelineCount;
		while (at > 0 && kept[at - 1].tid > c.tid)
			at--;
		int to = retiredTimelineCount;
		long events = retiredEvents;
		while (to > at && (to >= threadCap || events + n > eventCap))
			events -= kept[--to].evCount;
		int reached = (to >= threadCap ? CAP_TIMELINES : 0) | (events + n > eventCap ? CAP_EVENTS : 0);
		if (reached != 0) {
			capsReached |= reached;
			retiredThreadsDropped++;
			retiredCallsDropped += calls(c) + c.evDropped;
			return;
		}
		if (to < retiredTimelineCount)
			capsReached |= (retiredTimelineCount >= threadCap ? CAP_TIMELINES : 0)
			        | (retiredEvents + n > eventCap ? CAP_EVENTS : 0);
		for (int i = to; i < retiredTimelineCount; i++) {
			retiredThreadsDropped++;
			retiredCallsDropped += calls(kept[i]) + kept[i].evDropped;
			kept[i] = null;
		}
		Ctx keep = new Ctx(c.tid, c.name);
		keep.evTs = new long[n];
		keep.evWord = new int[n];
		System.arraycopy(c.evTs, 0, keep.evTs, 0, n);
		System.arraycopy(c.evWord, 0, keep.evWord, 0, n);
		keep.evCount = n;
		keep.evDropped = c.evDropped;
		retiredEvents = events + n;
		if (to == kept.length) {
			Ctx[] r = new Ctx[to * 2];
			System.arraycopy(kept, 0, r, 0, to);
			retiredTimelines = kept = r;
		}
		System.arraycopy(kept, at, kept, at + 1, to - at);
		kept[at] = keep;
		retiredTimelineCount = to + 1;
	}

	/* The calls of c's timeline (its entries): what is dropped with it is
	 * counted in calls, as a thread's own calls past its buffer are. */
	private static long calls(Ctx c) {
		long n = 0;
		for (int i = 0; i < c.evCount; i++)
			n += ~c.evWord[i] & 1;
		return n;
	}

	/* Live threads, then what ended threads left. Under LOCK. */
	static Ctx[] contexts() {
		Ctx[] t = new Ctx[count + 1];
		System.arraycopy(threads, 0, t, 0, count);
		t[count] = RETIRED;
		return t;
	}

	/* Adds every live thread's pending time (Sampler). Under LOCK. */
	static void flushAll() {
		for (int i = 0; i < count; i++)
			Sampler.flush(threads[i]);
	}
}
