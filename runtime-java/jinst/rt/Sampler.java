package jinst.rt;

/**
 * What the clock's samples make (Hooks.sample): per method, self and
 * inclusive nanoseconds, and the call tree, for all threads together. Only
 * the sampler writes them, and it, the snapshots and the threads' ends all
 * hold Hooks' registry lock, so nothing here is read or written without it.
 *
 * A sample gives the time since the last one to a thread's stack as it
 * stands: self time to the method on top and to the stack's node of the
 * call tree, inclusive time once to each distinct method on the stack. A
 * thread's stack is taken again only when it changed since the last sample
 * (Ctx.mods, and Ctx.moved for a stack of Stacks, whose fast path moves
 * no field of the context: look); until then the time waits in
 * Ctx.pending, and is added when the stack changes, the thread ends or a
 * snapshot is taken (flush): a thread that waits costs a sample nothing.
 */
final class Sampler {
	private Sampler() {
	}

	/* Per method id, TIMED longs from TIMED * id: self and inclusive ns. */
	static final int TIMED = 2, SELF = 0, TOTAL = 1;
	static long[] times = new long[TIMED * 1024];
	/* Per method id: the last sample that gave it inclusive time (epoch),
	 * so that a method on the stack more than once gets it once. */
	private static int[] mark = new int[1024];
	private static int epoch;

	/* Call tree: node 0 is the root. A node's child for a method is found
	 * in nSlot, an open-addressing table of node numbers keyed by (parent,
	 * method) (0 = empty, as the root is nobody's child), at most half
	 * full. Nodes are made only for the stacks the clock finds, but a long
	 * run finds many, and a program that recurses through many methods
	 * (javac, with the JDK traced) has millions of distinct call paths: at
	 * most MAX_NODES. Past MAX_NODES - FULL_NODES a new path is not added:
	 * its time goes to a child of the caller with the method FULL, one per
	 * caller, which the folded stacks print as "(tree full)", so that time
	 * is neither lost nor taken for the caller's own; time under it stays
	 * in it. When even those run out, the caller's node keeps it. */
	static final int MAX_NODES = 1 << 20, FULL_NODES = 1 << 12, FULL = -1;
	static int nodes = 1;
	/* Per node n, NODE longs from NODE * n: N_KEY = parent << 32 | method
	 * (methodOf) and its self nanoseconds (N_SELF). */
	static long[] nData;
	static final int NODE = 2, N_KEY = 0, N_SELF = 1;
	private static int[] nSlot;

	/* A new session (Hooks.newSession, under the registry lock): no time,
	 * no tree. */
	static void newSession() {
		times = new long[TIMED * 1024];
		mark = new int[1024];
		epoch = 0;
		nodes = 1;
		nData = null;
		nSlot = null;
	}

	/* c's stack is a row of Stacks, of depth d now: moved moves if it is
	 * not the stack the last sample read (the same frames would give the
	 * same times and path). A read of d ints, where the fast path would
	 * have had to write a field of the context at every call. */
	static void look(Ctx c, int d) {
		int[] s = c.sId, f = c.frames;
		int b = c.base;
		boolean same = d == c.framesDepth && d <= f.length && b + d <= s.length;
		for (int i = 0; same && i < d; i++)
			same = f[i] == s[b + i];
		if (!same)
			c.moved++;
	}

	/* dt nanoseconds passed with the first d frames of c's stack as they
	 * are (read as the thread changes them: d is bounded by what is read),
	 * taken again only when it changed since the last sample. */
	static void sample(Ctx c, long dt, int d, boolean tree) {
		int m = c.mods + c.moved;
		if (m == c.sampledMods) {
			c.pending += dt;
			return;
		}
		flush(c);
		c.sampledMods = m;
		c.pending = dt;
		c.heldCount = 0;
		c.heldTop = -1;
		c.heldNode = 0;
		c.framesDepth = 0;
		int[] s = c.sId;
		int b = c.base;
		if (d > s.length - b)
			d = s.length - b;
		if (d <= 0)
			return;
		/* Each frame read once: the stack may change under the reads. */
		if (c.frames.length < d && !c.sizeFrames(d))
			return;
		int[] ids = c.frames;
		for (int i = 0; i < d; i++)
			ids[i] = s[b + i];
		c.framesDepth = d;
		int e = epoch + 1;
		if (e == 0) {
			for (int i = 0; i < mark.length; i++)
				mark[i] = 0;
			e = 1;
		}
		epoch = e;
		for (int i = d - 1; i >= 0; i--) {
			int id = ids[i];
			if (id < 0 || (id >= mark.length && !sizeTimes(id))) {
				c.heldCount = 0;
				return;
			}
			if (mark[id] != e) {
				mark[id] = e;
				if (c.heldCount == c.held.length && !c.sizeHeld())
					return;
				c.held[c.heldCount++] = id;
			}
		}
		c.heldTop = ids[d - 1];
		if (tree)
			c.heldNode = resolve(c, ids, d);
	}

	/* Adds the time pending on c to its last sample's stack. */
	static void flush(Ctx c) {
		long p = c.pending;
		if (p == 0)
			return;
		c.pending = 0;
		int[] held = c.held;
		for (int i = 0; i < c.heldCount; i++)
			times[TIMED * held[i] + TOTAL] += p;
		if (c.heldTop >= 0 && c.heldCount > 0)
			times[TIMED * c.heldTop + SELF] += p;
		if (c.heldNode > 0)
			nData[NODE * c.heldNode + N_SELF] += p;
	}

	/* The call-tree node of the stack ids[0, d), made as needed. c.sNode
	 * keeps each frame's node from the last time; a frame's node still
	 * holds when its key is (its caller's node, its method), since a node
	 * stands for the path of methods that leads to it. */
	private static int resolve(Ctx c, int[] ids, int d) {
		if ((c.sNode == null || c.sNode.length < d) && !c.sizeNodes(d))
			return 0;
		int[] sn = c.sNode;
		int n = 0;
		for (int i = 0; i < d; i++) {
			int id = ids[i], k = sn[i];
			if (k > 0 && k < nodes && nData[NODE * k + N_KEY] == key(n, id)) {
				n = k;
				continue;
			}
			n = child(n, id);
			sn[i] = n;
		}
		return n;
	}

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

	/* The node of method id under parent, made if there is room (above). */
	static int child(int parent, int id) {
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

	/* ---- arrays: on failure (no memory) the time is not kept ----------- */

	private static boolean sizeTimes(int id) {
		try {
			int n = Ctx.grown(mark.length, id);
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

	private static boolean sizeTree() {
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
