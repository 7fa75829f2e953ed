package jinst.rt;

/**
 * One thread's records: entry counts, per-method times, the shadow stack,
 * the call tree and the event timeline. Only its own thread writes it; the
 * agent's snapshots read it (a snapshot taken while the thread runs may miss
 * its latest calls, never count one twice).
 *
 * The shadow stack holds, per active instrumented frame, the method id, its
 * start time, the time spent in its instrumented callees, its call-tree node
 * and whether its entry event was recorded. An exit whose id is not on top
 * pops every frame above the matching one (they were left without an exit
 * hook, e.g. entered in code instrumented later); an exit whose id is not on
 * the stack at all (entered before the hooks were engaged) is ignored.
 */
final class Ctx {
	final long tid;
	final String name;
	/* The thread, until it ends (Hooks.threadEnd). */
	Thread thread;
	/* The thread, for ever: final, so that Hooks.ctx may read a context
	 * published through a data race and trust the comparison. */
	final Thread owner;
	/* Hooks.ctx found another thread's context first (its own counter). */
	int misses;
	/* A slow path is running: hooks reached from it record nothing. */
	boolean busy;

	/* Entries per method id. */
	long[] counts;
	/* Per method id, STATS longs from STATS * id: completed calls,
	 * inclusive and self nanoseconds, and the activations on the stack
	 * (inclusive time is added only when the outermost one of a recursion
	 * returns, so it is not counted twice). One record, so that a timed
	 * call touches one or two cache lines here, not four. */
	long[] stats;
	static final int STATS = 4, CALLS = 0, TOTAL = 1, SELF = 2, ACTIVE = 3;

	int depth;
	int[] sId, sNode;
	long[] sStart, sChild;
	boolean[] sRec;

	/* Call tree: node 0 is the root. A node's child for a method is found
	 * in nSlot, an open-addressing table of node numbers keyed by (parent,
	 * method) (0 = empty, as the root is nobody's child), at most half
	 * full: one probe or two per call, where walking a list of siblings
	 * cost a step per sibling (a visitor's accept() has dozens). At most MAX_NODES: a
	 * program that recurses through many methods (javac, with the JDK
	 * traced) has tens of millions of distinct call paths, gigabytes of
	 * tree and of folded stacks. Past MAX_NODES - FULL_NODES a new path is
	 * not added: its calls count in a child of the caller with the method
	 * FULL, one per caller, which the folded stacks print as "(tree full)",
	 * so that time is neither lost nor taken for the caller's own; calls
	 * under it stay in it. When even those run out, the caller's node
	 * keeps them. */
	static final int MAX_NODES = 1 << 20, FULL_NODES = 1 << 12, FULL = -1;
	int nodes = 1;
	/* Per node n, NODE longs from NODE * n: N_KEY = parent << 32 | method
	 * (methodOf), its calls (N_CALLS) and inclusive nanoseconds (N_TIME). One
	 * record, so that an entry's lookup brings into the cache what its
	 * exit updates: a call misses the cache at most twice in a tree of
	 * megabytes (nSlot, the node), where four arrays missed four times. */
	long[] nData;
	static final int NODE = 4, N_KEY = 0, N_CALLS = 1, N_TIME = 2;
	int[] nSlot;

	long[] evTs;
	int[] evWord;
	int evCount, evOpen;
	long evDropped;

	Ctx(Thread t) {
		this(t.getId(), t.getName(), 1024, 64, t);
	}

	Ctx(long tid, String name, int methods, int stack) {
		this(tid, name, methods, stack, null);
	}

	/* methods, stack: first sizes of the per-method arrays and of the
	 * shadow stack (both at least 1; they double as needed). */
	private Ctx(long tid, String name, int methods, int stack, Thread t) {
		thread = t;
		owner = t;
		this.tid = tid;
		this.name = name;
		counts = new long[methods];
		stats = new long[STATS * methods];
		sId = new int[stack];
		sNode = new int[stack];
		sStart = new long[stack];
		sChild = new long[stack];
		sRec = new boolean[stack];
	}

	/* Adds what an ended thread recorded: counts and times per method, and
	 * its call tree node by node (parents come before children, so each
	 * node's parent is already mapped). Under Hooks' registry lock. */
	void fold(Ctx c) {
		long[] cc = c.counts, cs = c.stats;
		int n = cc.length;
		if (cs.length / STATS < n)
			n = cs.length / STATS;
		if (n > counts.length && !growMethods(n - 1))
			return;
		for (int j = 0; j < n; j++)
			counts[j] += cc[j];
		for (int j = 0; j < STATS * n; j += STATS) {
			stats[j + CALLS] += cs[j + CALLS];
			stats[j + TOTAL] += cs[j + TOTAL];
			stats[j + SELF] += cs[j + SELF];
		}
		long[] cd = c.nData;
		if (cd == null || c.nodes <= 1)
			return;
		int[] map = new int[c.nodes];
		for (int j = 1; j < c.nodes; j++) {
			long k = cd[NODE * j + N_KEY];
			int p = map[(int) (k >>> 32)];
			int m = child(p, methodOf(k));
			map[j] = m;
			/* (a node that found this tree full stays in its parent's time) */
			if (nData != null && m != p) {
				nData[NODE * m + N_CALLS] += cd[NODE * j + N_CALLS];
				nData[NODE * m + N_TIME] += cd[NODE * j + N_TIME];
			}
		}
	}

	void enter(int id, int m) {
		if (busy || id < 0)
			return;
		if (id >= counts.length && !growMethods(id))
			return;
		counts[id]++;
		if (m == Hooks.COUNTS)
			return;
		int d = depth;
		if (d == sId.length && !growStack())
			return;
		long now = System.nanoTime();
		sId[d] = id;
		sStart[d] = now;
		sChild[d] = 0;
		stats[STATS * id + ACTIVE]++;
		if ((m & Hooks.TREE) != 0)
			sNode[d] = child(d == 0 ? 0 : sNode[d - 1], id);
		if ((m & Hooks.EVENTS) != 0)
			sRec[d] = event(now, id << 1, true);
		depth = d + 1;
	}

	void exit(int id, int m) {
		if (busy)
			return;
		int d = depth - 1;
		if (d < 0)
			return;
		long now = System.nanoTime();
		if (sId[d] != id) {
			int k = d - 1;
			while (k >= 0 && sId[k] != id)
				k--;
			if (k < 0)
				return;
			for (; d > k; d--)
				pop(d, now, m);
		}
		pop(d, now, m);
	}

	private void pop(int d, long now, int m) {
		int id = sId[d];
		long dur = now - sStart[d];
		long[] ms = stats;
		int i = STATS * id;
		ms[i + CALLS]++;
		ms[i + SELF] += dur - sChild[d];
		if (--ms[i + ACTIVE] == 0)
			ms[i + TOTAL] += dur;
		if (d > 0)
			sChild[d - 1] += dur;
		/* (a frame that found the tree full shares its caller's node:
		 * its time stays in the caller's, as self time) */
		long[] nd = nData;
		if ((m & Hooks.TREE) != 0 && nd != null && (d == 0 || sNode[d] != sNode[d - 1])) {
			int n = NODE * sNode[d];
			nd[n + N_CALLS]++;
			nd[n + N_TIME] += dur;
		}
		if ((m & Hooks.EVENTS) != 0 && sRec[d]) {
			evOpen--;
			event(now, id << 1 | 1, false);
		}
		depth = d;
	}

	/* Records an event. An entry is recorded only while there is room left
	 * for it and for the exits of every recorded entry still open, so the
	 * timeline stays balanced when the buffer fills up. */
	private boolean event(long now, int word, boolean isEnter) {
		if (evTs == null) {
			busy = true;
			try {
				evTs = new long[Hooks.eventCapacity];
				evWord = new int[Hooks.eventCapacity];
			} catch (Throwable t) {
				evTs = null;
				evWord = null;
			}
			busy = false;
			if (evTs == null) {
				evDropped++;
				return false;
			}
		}
		if (isEnter && evCount + evOpen + 2 > evTs.length) {
			evDropped++;
			return false;
		}
		if (evCount >= evTs.length)
			return false;
		evTs[evCount] = now;
		evWord[evCount++] = word;
		if (isEnter)
			evOpen++;
		return true;
	}

	private int child(int parent, int id) {
		if (nData == null && !growTree())
			return 0;
		long[] nd = nData;
		if (parent != 0 && methodOf(nd[NODE * parent + N_KEY]) == FULL)
			return parent;
		long k = (long) parent << 32 | (id & 0xffffffffL);
		int[] slot = nSlot;
		int mask = slot.length - 1, h = slotOf(k, mask), n;
		while ((n = slot[h]) != 0) {
			if (nd[NODE * n + N_KEY] == k)
				return n;
			h = (h + 1) & mask;
		}
		if (id != FULL && nodes >= MAX_NODES - FULL_NODES)
			return child(parent, FULL);
		if (NODE * nodes == nd.length)
			return growTree() ? child(parent, id) : parent;
		n = nodes;
		nd[NODE * n + N_KEY] = k;
		slot[h] = n;
		nodes = n + 1;
		return n;
	}

	static int methodOf(long key) {
		return (int) key;
	}

	private static int slotOf(long key, int mask) {
		long x = key * 0x9E3779B97F4A7C15L;
		return (int) (x >>> 40) & mask;
	}

	/* ---- slow paths: arrays only, busy set ---------------------------- */

	private boolean growMethods(int id) {
		busy = true;
		try {
			int n = counts.length;
			while (n <= id)
				n *= 2;
			long[] c = new long[n], st = new long[STATS * n];
			System.arraycopy(counts, 0, c, 0, counts.length);
			System.arraycopy(stats, 0, st, 0, stats.length);
			/* The stats first: a snapshot sizes by them. */
			stats = st;
			counts = c;
			return true;
		} catch (Throwable e) {
			return false;
		} finally {
			busy = false;
		}
	}

	private boolean growStack() {
		busy = true;
		try {
			int n = sId.length * 2;
			int[] id = new int[n], node = new int[n];
			long[] start = new long[n], child = new long[n];
			boolean[] rec = new boolean[n];
			System.arraycopy(sId, 0, id, 0, depth);
			System.arraycopy(sNode, 0, node, 0, depth);
			System.arraycopy(sStart, 0, start, 0, depth);
			System.arraycopy(sChild, 0, child, 0, depth);
			System.arraycopy(sRec, 0, rec, 0, depth);
			sId = id;
			sNode = node;
			sStart = start;
			sChild = child;
			sRec = rec;
			return true;
		} catch (Throwable e) {
			return false;
		} finally {
			busy = false;
		}
	}

	private boolean growTree() {
		busy = true;
		try {
			int old = nData == null ? 0 : nData.length / NODE;
			if (old >= MAX_NODES)
				return false;
			int n = old == 0 ? 256 : old * 2 < MAX_NODES ? old * 2 : MAX_NODES;
			long[] nd = new long[NODE * n];
			int[] slot = new int[2 * n];
			if (old > 0)
				System.arraycopy(nData, 0, nd, 0, NODE * old);
			int mask = slot.length - 1;
			for (int j = 1; j < nodes && j < old; j++) {
				int h = slotOf(nd[NODE * j + N_KEY], mask);
				while (slot[h] != 0)
					h = (h + 1) & mask;
				slot[h] = j;
			}
			nSlot = slot;
			nData = nd;
			return true;
		} catch (Throwable e) {
			return false;
		} finally {
			busy = false;
		}
	}
}
