package jinst.rt;

/**
 * The trace's snapshots: what the hooks and the clock recorded, all threads
 * together, as plain arrays of longs, the form the agent's writers take
 * (report/, include/jinst/report.h) and the standalone writer (TraceWriter)
 * reads too. The agent reaches them through Hooks' methods of the same
 * names (snapshotCounts, ...), which it looks up by JNI.
 *
 * Each holds the registry's lock throughout (Registry), so a thread that
 * ends meanwhile is counted once; the hooks take it only to claim the fast
 * path. Live threads go on recording while a snapshot is taken: it may miss
 * their latest calls, never count one twice.
 */
final class TraceData {
	private TraceData() {
	}

	/** Entry counts per method id, summed over all threads. */
	static long[] counts() {
		synchronized (Registry.LOCK) {
			Ctx[] t = Registry.contexts();
			int len = 0;
			for (int i = 0; i < t.length; i++)
				len = Hooks.max(len, t[i].counts.limit());
			boolean grid = Hooks.grid;
			long[] r = new long[Hooks.max(len, grid ? Grid.limit() : 0)];
			for (int i = 0; i < t.length; i++)
				t[i].counts.addTo(r);
			if (grid)
				Grid.addTo(r);
			return r;
		}
	}

	/**
	 * Per method id: entries, inclusive and self nanoseconds (the clock's,
	 * all threads together): three longs per id.
	 */
	static long[] times() {
		synchronized (Registry.LOCK) {
			return times(counts());
		}
	}

	/* times() with the entry counts of counts(), taken under the lock. */
	private static long[] times(long[] counts) {
		synchronized (Registry.LOCK) {
			Registry.flushAll();
			long[] s = Sampler.times;
			int len = Hooks.max(counts.length, s.length / Sampler.TIMED);
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

	/**
	 * The call tree, all threads together, in the form of one tree per
	 * thread: 1, then its node count (root excluded) and per node: parent
	 * (0 is the root), method id (-1: "tree full"), self nanoseconds.
	 * Parents come before their children.
	 */
	static long[] tree() {
		synchronized (Registry.LOCK) {
			Registry.flushAll();
			long[] nd = Sampler.nData;
			int n = nd == null ? 0 : Hooks.min(Sampler.nodes, nd.length / Sampler.NODE) - 1;
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

	/** Forms of snapshot(): bits of what a write asks for. */
	static final int COUNTS = 1, TIMES = 2, TREE = 4, EVENTS = 8;

	/**
	 * Every form a write asks for (COUNTS, TIMES, TREE, EVENTS: its
	 * formats' data), at one moment: [counts, times, tree, events, what
	 * ended threads' timelines lost (eventsNotKept)], null where not
	 * asked. The hooks go on counting without the lock, so two snapshots
	 * differ: one per write is what makes its files agree (the counts of
	 * OUT.tsv, the calls of OUT.txt and of OUT.html are one array).
	 */
	static long[][] snapshot(int forms) {
		synchronized (Registry.LOCK) {
			long[][] r = new long[5][];
			long[] counts = (forms & (COUNTS | TIMES | TREE)) != 0 ? counts() : null;
			if ((forms & (COUNTS | TREE)) != 0)
				r[0] = counts;
			if ((forms & TIMES) != 0)
				r[1] = times(counts);
			if ((forms & TREE) != 0)
				r[2] = tree();
			if ((forms & EVENTS) != 0) {
				r[3] = events();
				r[4] = eventsNotKept();
			}
			return r;
		}
	}

	/* The ended threads whose timelines were not kept: their count, the
	 * bounds reached (Registry.CAP_*), the bounds (timelines, events).
	 * Under the lock. */
	private static long[] eventsNotKept() {
		return new long[] {Registry.retiredThreadsDropped, Registry.capsReached, Registry.timelineCap(),
		        Registry.eventCap()};
	}

	/* The thread names of the last events snapshot, in its order. */
	private static String[] eventNames = new String[0];

	/**
	 * The timelines: thread count, then per thread: thread id, event count,
	 * events dropped, and per event its nanoTime and word (method id << 1,
	 * low bit set for an exit). Live threads, then the ended ones kept,
	 * then (id -1, no events) what the ended threads not kept dropped
	 * (Registry's bounds).
	 */
	static long[] events() {
		synchronized (Registry.LOCK) {
			Ctx[] t = timelines();
			int count = t.length;
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
				names[i] = t[i].name;
				k = timeline(t[i], counts[i], r, k);
			}
			eventNames = names;
			long[] out = new long[k];
			System.arraycopy(r, 0, out, 0, k);
			return out;
		}
	}

	/* Live threads, ended ones with a timeline kept, RETIRED. Under the lock. */
	private static Ctx[] timelines() {
		int live = Registry.count, ended = Registry.retiredTimelineCount;
		Ctx[] t = new Ctx[live + ended + 1];
		System.arraycopy(Registry.threads, 0, t, 0, live);
		System.arraycopy(Registry.retiredTimelines, 0, t, live, ended);
		t[live + ended] = Registry.RETIRED;
		return t;
	}

	/* c's timeline of at most count events into r from k; the next k. */
	private static int timeline(Ctx c, int count, long[] r, int k) {
		long[] ts = c.evTs;
		int[] word = c.evWord;
		int n = ts == null || word == null ? 0 : Hooks.min(count, Hooks.min(ts.length, word.length));
		r[k++] = c.tid;
		r[k++] = n;
		r[k++] = c == Registry.RETIRED ? Registry.retiredCallsDropped : c.evDropped;
		for (int j = 0; j < n; j++) {
			r[k++] = ts[j];
			r[k++] = word[j];
		}
		return k;
	}

	/** The thread names of the last events(), in its order. */
	static String[] threadNames() {
		synchronized (Registry.LOCK) {
			return eventNames;
		}
	}
}
