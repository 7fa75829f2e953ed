package jinst.rt;

/**
 * One thread's records: entry counts, per-method times, the shadow stack,
 * the call tree and the event timeline. Only its own thread writes it; the
 * agent's snapshots read it (a snapshot taken while the thread runs may miss
 * its latest calls, never count one twice). The thread that owns the fast
 * path (Hooks) keeps its stack in Hooks' static array instead of its own
 * (adopt), and counts most calls there.
 *
 * The shadow stack holds the method id of every active timed frame. An exit
 * whose id is not on top pops every frame above the matching one (they were
 * left without an exit hook, e.g. entered in code instrumented later); an
 * exit whose id is not on the stack at all (entered before the hooks were
 * engaged) is ignored.
 *
 * Times come from the clock thread (Hooks.sample): the time since its last
 * sample goes to the stack as it stands (sample): self time to the frame on
 * top and its call-tree node, inclusive time once to each method on the
 * stack. The times, the call tree and what serves them are the sampler's:
 * only it writes them, under Hooks' registry lock, as do the snapshots and
 * fold; the thread itself writes its counts, its stack and mods.
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
	/* Per method id, TIMED longs from TIMED * id: self and inclusive
	 * nanoseconds of the clock. */
	long[] times;
	static final int TIMED = 2, SELF = 0, TOTAL = 1;
	/* Per method id: the last sample that gave it inclusive time (epoch),
	 * so that a method on the stack more than once gets it once. */
	int[] mark;
	int epoch;
	/* The last sample's stack, whose time is added up in pending until the
	 * stack changes (a thread that waits costs a sample nothing): its
	 * distinct methods held[0, heldCount), the one on top (-1: none) and
	 * its tree node (0: none). The stack is known not to have changed
	 * while mods, which the thread moves at each push and pop of its own
	 * stack, is what it was (sampledMods); the owner's fast path does not
	 * move it, so the owner's stack is taken at every sample. */
	int[] held = new int[16];
	/* The stack as the last sample read it. */
	int[] frames = new int[16];
	int heldCount, heldTop = -1, heldNode;
	long pending;
	int mods, sampledMods;

	/* The shadow stack: sId[0, depth). At most limit frames; the entries
	 * past them are counted in overflow and their exits pop nothing. */
	int[] sId;
	int depth, overflow;
	int limit = Integer.MAX_VALUE;
	/* The call-tree node of each frame, as last resolved (resolve; the sampler's). */
	int[] sNode;
	/* trace=events: whether each frame's entry event was recorded. */
	boolean[] sRec;

	/* Call tree: node 0 is the root. A node's child for a method is found
	 * in nSlot, an open-addressing table of node numbers keyed by (parent,
	 * method) (0 = empty, as the root is nobody's child), at most half
	 * full. Nodes are made only for the stacks the clock finds (sample),
	 * but a long run finds many, and a program that recurses through many
	 * methods (javac, with the JDK traced) has millions of distinct call
	 * paths: at most MAX_NODES. Past MAX_NODES - FULL_NODES a new path is
	 * not added: its time goes to a child of the caller with the method
	 * FULL, one per caller, which the folded stacks print as "(tree full)",
	 * so that time is neither lost nor taken for the caller's own; time
	 * under it stays in it. When even those run out, the caller's node
	 * keeps it. */
	static final int MAX_NODES = 1 << 20, FULL_NODES = 1 << 12, FULL = -1;
	int nodes = 1;
	/* Per node n, NODE longs from NODE * n: N_KEY = parent << 32 | method
	 * (methodOf) and its self nanoseconds (N_SELF). */
	long[] nData;
	static final int NODE = 2, N_KEY = 0, N_SELF = 1;
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
		times = new long[TIMED * methods];
		mark = new int[methods];
		sId = new int[stack];
		sRec = new boolean[stack];
	}

	/* Takes stack (of which cap entries may be used) as the shadow stack,
	 * with the frames it has now: the thread becomes the fast path's owner. */
	void adopt(int[] stack, int cap) {
		int d = depth;
		if (d > cap) {
			overflow += d - cap;
			d = cap;
		}
		System.arraycopy(sId, 0, stack, 0, d);
		sId = stack;
		limit = cap;
		depth = d;
	}

	void count(int id) {
		if (busy || id < 0)
			return;
		if (id < counts.length || growCounts(id))
			counts[id]++;
	}

	void enter(int id, int m) {
		if (busy || id < 0)
			return;
		if (id >= counts.length && !growCounts(id))
			return;
		counts[id]++;
		if ((m & Hooks.EVENTS) != 0) {
			enterEvent(id);
			return;
		}
		if ((m & Hooks.TIMES) == 0)
			return;
		int d = depth;
		if (d >= limit || (d == sId.length && !growStack())) {
			overflow++;
			return;
		}
		sId[d] = id;
		depth = d + 1;
		mods++;
	}

	void exit(int id, int m) {
		if (busy)
			return;
		if ((m & Hooks.EVENTS) != 0) {
			exitEvent(id);
			return;
		}
		if ((m & Hooks.TIMES) == 0)
			return;
		int k = frameOf(id);
		if (k >= 0) {
			depth = k;
			mods++;
		}
	}

	/* The frame an exit of id pops (and every frame above it): the
	 * topmost of id, or -1 for none (also for the exit of a frame that did
	 * not fit, which pops nothing). */
	private int frameOf(int id) {
		if (overflow > 0) {
			overflow--;
			return -1;
		}
		int k = depth - 1;
		while (k >= 0 && sId[k] != id)
			k--;
		return k;
	}

	/* ---- the sampler's side (Hooks.sample, under the registry lock) ---- */

	/* dt nanoseconds passed with the first d frames of sId as the stack
	 * (read as the thread changes it: d is bounded by what was read). The
	 * owner's stack is taken as it is; another thread's only when it
	 * changed since the last sample, else the time waits in pending. */
	void sample(long dt, int d, boolean owned) {
		int m = mods;
		if (!owned && m == sampledMods) {
			pending += dt;
			return;
		}
		flush();
		sampledMods = m;
		pending = dt;
		heldCount = 0;
		heldTop = -1;
		heldNode = 0;
		int[] s = sId;
		if (d > s.length)
			d = s.length;
		if (d <= 0)
			return;
		int e = epoch + 1;
		if (e == 0) {
			for (int i = 0; i < mark.length; i++)
				mark[i] = 0;
			e = 1;
		}
		epoch = e;
		/* Each frame read once: the stack may change under the reads. */
		if (frames.length < d && !sizeFrames(d))
			return;
		int[] ids = frames;
		for (int i = 0; i < d; i++)
			ids[i] = s[i];
		for (int i = d - 1; i >= 0; i--) {
			int id = ids[i];
			if (id < 0 || (id >= mark.length && !sizeTimes(id))) {
				heldCount = 0;
				return;
			}
			if (mark[id] != e) {
				mark[id] = e;
				if (heldCount == held.length && !sizeHeld())
					return;
				held[heldCount++] = id;
			}
		}
		heldTop = ids[d - 1];
		if ((Hooks.mode & Hooks.TREE) != 0)
			heldNode = resolve(ids, d);
	}

	/* Adds the pending time to the last sample's stack. */
	void flush() {
		long p = pending;
		if (p == 0)
			return;
		pending = 0;
		for (int i = 0; i < heldCount; i++)
			times[TIMED * held[i] + TOTAL] += p;
		if (heldTop >= 0 && heldCount > 0)
			times[TIMED * heldTop + SELF] += p;
		if (heldNode > 0)
			nData[NODE * heldNode + N_SELF] += p;
	}

	/* The call-tree node of the stack s[0, d), made as needed. sNode keeps
	 * each frame's node from the last time; a frame's node still holds when
	 * its key is (its caller's node, its method), since a node stands for
	 * the path of methods that leads to it. */
	private int resolve(int[] s, int d) {
		if ((sNode == null || sNode.length < d) && !sizeNodes(d))
			return 0;
		int n = 0;
		for (int i = 0; i < d; i++) {
			int id = s[i], k = sNode[i];
			if (k > 0 && k < nodes && nData[NODE * k + N_KEY] == key(n, id)) {
				n = k;
				continue;
			}
			n = child(n, id);
			sNode[i] = n;
		}
		return n;
	}

	/* ---- trace=events: every entry and exit with System.nanoTime ------- */

	private void enterEvent(int id) {
		int d = depth;
		if (d == sId.length && !growStack()) {
			overflow++;
			return;
		}
		sId[d] = id;
		sRec[d] = event(System.nanoTime(), id << 1, true);
		depth = d + 1;
	}

	private void exitEvent(int id) {
		int k = frameOf(id);
		if (k < 0)
			return;
		long now = System.nanoTime();
		for (int d = depth - 1; d >= k; d--)
			if (sRec[d]) {
				evOpen--;
				event(now, sId[d] << 1 | 1, false);
			}
		depth = k;
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

	/* ---- the call tree ------------------------------------------------- */

	private static long key(int parent, int id) {
		return (long) parent << 32 | (id & 0xffffffffL);
	}

	static int methodOf(long key) {
		return (int) key;
	}

	private static int slotOf(long key, int mask) {
		long x = key * 0x9E3779B97F4A7C15L;
		return (int) (x >>> 40) & mask;
	}

	private int child(int parent, int id) {
		if (nData == null && !sizeTree())
			return 0;
		long[] nd = nData;
		if (parent != 0 && methodOf(nd[NODE * parent + N_KEY]) == FULL)
			return parent;
		long k = key(parent, id);
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
			return sizeTree() ? child(parent, id) : parent;
		n = nodes;
		nd[NODE * n + N_KEY] = k;
		slot[h] = n;
		nodes = n + 1;
		return n;
	}

	/* Adds what an ended thread recorded: counts and times per method, and
	 * its call tree node by node (parents come before children, so each
	 * node's parent is already mapped). Under Hooks' registry lock. */
	void fold(Ctx c) {
		long[] cc = c.counts, ct = c.times;
		if (cc.length > counts.length && !growCounts(cc.length - 1))
			return;
		for (int j = 0; j < cc.length; j++)
			counts[j] += cc[j];
		int n = ct.length / TIMED;
		if (n > times.length / TIMED && !sizeTimes(n - 1))
			return;
		for (int j = 0; j < TIMED * n; j++)
			times[j] += ct[j];
		long[] cd = c.nData;
		if (cd == null || c.nodes <= 1)
			return;
		int[] map = new int[c.nodes];
		for (int j = 1; j < c.nodes; j++) {
			long k = cd[NODE * j + N_KEY];
			int m = child(map[(int) (k >>> 32)], methodOf(k));
			map[j] = m;
			/* (a node that found this tree full gives its time to its
			 * caller's: the folded stacks keep the whole) */
			if (nData != null && m > 0)
				nData[NODE * m + N_SELF] += cd[NODE * j + N_SELF];
		}
	}

	/* ---- slow paths: arrays only, busy set ---------------------------- */

	private static int grown(int length, int index) {
		int n = length > 0 ? length : 1;
		while (n <= index)
			n *= 2;
		return n;
	}

	private boolean growCounts(int id) {
		busy = true;
		try {
			long[] c = new long[grown(counts.length, id)];
			System.arraycopy(counts, 0, c, 0, counts.length);
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
			int[] id = new int[n];
			boolean[] rec = new boolean[n];
			System.arraycopy(sId, 0, id, 0, depth);
			System.arraycopy(sRec, 0, rec, 0, depth);
			sId = id;
			sRec = rec;
			return true;
		} catch (Throwable e) {
			return false;
		} finally {
			busy = false;
		}
	}

	/* ---- the sampler's arrays: only it (or fold, on RETIRED) writes them,
	 * so no busy flag: that is the thread's own ---- */

	private boolean sizeTimes(int id) {
		try {
			int n = grown(mark.length, id);
			long[] t = new long[TIMED * n];
			int[] k = new int[n];
			System.arraycopy(times, 0, t, 0, times.length);
			System.arraycopy(mark, 0, k, 0, mark.length);
			times = t;
			mark = k;
			return true;
		} catch (Throwable e) {
			return false;
		}
	}

	private boolean sizeFrames(int d) {
		try {
			frames = new int[grown(frames.length, d)];
			return true;
		} catch (Throwable e) {
			return false;
		}
	}

	private boolean sizeHeld() {
		try {
			int[] h = new int[2 * held.length];
			System.arraycopy(held, 0, h, 0, heldCount);
			held = h;
			return true;
		} catch (Throwable e) {
			return false;
		}
	}

	private boolean sizeNodes(int d) {
		try {
			int[] s = new int[grown(sNode == null ? 64 : sNode.length, d)];
			if (sNode != null)
				System.arraycopy(sNode, 0, s, 0, sNode.length);
			sNode = s;
			return true;
		} catch (Throwable e) {
			return false;
		}
	}

	private boolean sizeTree() {
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
		}
	}
}
