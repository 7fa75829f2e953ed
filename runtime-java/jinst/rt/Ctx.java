package jinst.rt;

/**
 * One thread's records: entry counts, the shadow stack and the event
 * timeline, and what the sampler keeps of the thread (Sampler). Only its own
 * thread writes its counts, stack and mods; the sampler writes the rest,
 * under Hooks' registry lock; the agent's snapshots read it (a snapshot
 * taken while the thread runs may miss its latest calls, never count one
 * twice). A thread that owns a row of Grid counts most calls there, and
 * under trace=times keeps its stack in the row's of Stacks instead of its
 * own (adopt).
 *
 * Counts are kept in a table of the ids the thread called (Counts) until it
 * is a busy thread: a thread that calls a few methods a few times (a
 * virtual thread, a pool's task) costs a few KB.
 *
 * The shadow stack holds the method id of every active timed frame. An exit
 * whose id is not on top pops every frame above the matching one (they were
 * left without an exit hook, e.g. entered in code instrumented later); an
 * exit whose id is not on the stack at all (entered before the hooks were
 * engaged) is ignored.
 */
public final class Ctx {
	final long tid;
	final String name;
	/* The thread (null for RETIRED): final, so that Hooks.ctx may read a
	 * context published through a data race and trust the comparison.
	 * Public, with dense and calledSlow, for the bridge's called
	 * (java.lang.$JinstHooks), which has Hooks.called's body; not an API. */
	public final Thread owner;
	/* The session it records for (Hooks.session when it was made). */
	final int session = Hooks.session;
	/* The thread ended and the context left the registry (Hooks.retire). */
	boolean ended;
	/* Hooks' registry: the thread's identity hash, and where it is in the
	 * list of live contexts. */
	int hash, at;
	/* A slow path is running: hooks reached from it record nothing. */
	boolean busy;

	/* Entries per method id; and the same counts' array when it is indexed
	 * by id (a busy thread's), which Hooks.called increments, or an
	 * empty one (the slow path adds to the table). */
	Counts counts = new Counts(16);
	public long[] dense = NO_COUNTS;
	private static final long[] NO_COUNTS = new long[0];
	/* Allocation sites (Alloc): objects and bytes of site s at 2s, 2s + 1,
	 * in a table or an array (allocCounts, null until the first), and the
	 * array once there is one, which the fast paths write (else empty). */
	Counts allocCounts;
	long[] allocs = NO_COUNTS;
	/* The same by stack (Alloc, depth=N), or null. */
	AllocTraces allocTraces;

	/* The monitor pass's enters by lock site, of each site's first lock
	 * class, and of the others (Monitors); its own thread writes them. */
	long[] locks = NO_COUNTS;
	Monitors.Others lockOthers;

	/* The shadow stack: sId[base, base + depth). At most limit frames;
	 * the entries past them are counted in overflow and their exits pop
	 * nothing. mods moves at each push and pop (not on the fast path of a
	 * row's owner, whose stack the sampler compares instead: moved). row
	 * is the row of Stacks the context adopted (sId is Stacks.STACK, base
	 * the row's first int, the depth Stacks' while it is not NONE), or -1. */
	int[] sId;
	int base, depth, overflow, mods, moved;
	int limit = Integer.MAX_VALUE;
	int row = -1;
	/* trace=events: whether each frame's entry event was recorded. */
	boolean[] sRec;

	/* The sampler's (Sampler.sample): the stack as the last sample read it
	 * (frames), the call-tree node of each of its frames (sNode), its
	 * distinct methods (held[0, heldCount)), the one on top (-1: none) and
	 * its node (0: none), the time waiting to be given to it (pending),
	 * the depth read, and mods + moved when it was read. */
	int[] frames = NONE, sNode, held = NONE;
	private static final int[] NONE = new int[0];
	int heldCount, heldTop = -1, heldNode, framesDepth, sampledMods;
	long pending;
	/* clock=cpu (CpuClock): the thread's CPU time at its last reading, and
	 * what it used since the one before, which this sample gives; whether
	 * it used none then, mods then, and the samples since. */
	long cpuSeen, cpuDt;
	boolean cpuIdle;
	int cpuMods, cpuSkips;

	long[] evTs;
	int[] evWord;
	int evCount, evOpen;
	long evDropped;

	Ctx(Thread t) {
		this(t.getId(), t.getName(), t);
	}

	Ctx(long tid, String name) {
		this(tid, name, null);
	}

	private Ctx(long tid, String name, Thread t) {
		owner = t;
		this.tid = tid;
		this.name = name;
		sId = NONE;
	}

	/* Takes stack[at, at + cap) as the shadow stack, with the frames it has
	 * now (Stacks.adopt: the thread owns a row). */
	void adopt(int[] stack, int at, int cap) {
		int d = depth;
		if (d > cap) {
			overflow += d - cap;
			d = cap;
		}
		System.arraycopy(sId, base, stack, at, d);
		sId = stack;
		base = at;
		limit = cap;
		depth = d;
	}

	/* The row of Stacks is another context's now (Stacks.adopt): this
	 * one's thread ended, and its stack is empty. */
	void leave() {
		sId = NONE;
		base = 0;
		row = -1;
		depth = 0;
		overflow = 0;
		limit = Integer.MAX_VALUE;
		mods++;
	}

	/* ---- counts --------------------------------------------------------- */

	/* The bridge's called when the thread has no row of Grid, or id is
	 * past its width: the thread's context, found in its BY_TID slot, or
	 * else the slow path. */
	public static void calledSlow(int id) {
		Thread t = Thread.currentThread();
		Ctx c = Hooks.BY_TID[(int) t.getId() & Hooks.TID_MASK];
		long[] v;
		if (c != null && c.owner == t && id < (v = c.dense).length)
			v[id]++;
		else
			Hooks.calledSlow(id);
	}

	/* (No busy check: nothing here runs code a hook may be in, and a
	 * count added while the thread grows its arrays is as good as any.) */
	void count(int id) {
		if (id >= 0 && !counts.add(id, 1) && grow(id))
			counts.add(id, 1);
	}

	/* Adds n to id's count (an ended thread's, to RETIRED). */
	void count(int id, long n) {
		if (!counts.add(id, n) && grow(id))
			counts.add(id, n);
	}

	/* The counts as an array by id, if they are still a table (Hooks.ctx:
	 * a thread of a small pool, which would otherwise take the slow path
	 * for its first BUSY calls, and so make it look hot to the JIT). */
	void densify() {
		if (counts.keys != null)
			grow(0, true);
	}

	/* Replaces the counts with a larger copy, with room for id. */
	private boolean grow(int id) {
		return grow(id, false);
	}

	private boolean grow(int id, boolean asked) {
		busy = true;
		try {
			Counts n = new Counts(counts, id, asked);
			counts = n;
			dense = n.keys == null ? n.values : NO_COUNTS;
			return true;
		} catch (Throwable e) {
			return false;
		} finally {
			busy = false;
		}
	}

	/* Adds the counts of an ended thread's context (RETIRED, under the
	 * registry lock). */
	void fold(Ctx c) {
		c.counts.addTo(this);
		Monitors.fold(this, c);
	}

	/* ---- the stack ------------------------------------------------------ */

	/* enter and exit (Hooks' and the bridge's, which has their bodies)
	 * for every thread but a row's: its context by thread id (BY_TID),
	 * else the slow path. Small enough for the JIT to inline into the
	 * hook (a slot, a compare of a final field, an array of the thread's
	 * own). A context that adopted a row is in its slot too (for called),
	 * and its push and pop refuse (its depth is Stacks'). Public for the
	 * bridge; not an API. */
	public static void enterOther(Thread t, int id) {
		Ctx c = Hooks.BY_TID[(int) t.getId() & Hooks.TID_MASK];
		if (c == null || c.owner != t || !c.push(id))
			Hooks.enterSlow(id);
	}

	public static void exitOther(Thread t, int id) {
		Ctx c = Hooks.BY_TID[(int) t.getId() & Hooks.TID_MASK];
		if (c == null || c.owner != t || !c.pop(id))
			Hooks.exitSlow(id);
	}

	/* enterOther's entry: counts and pushes when nothing needs the
	 * slow path (dense counts with room for id, room on the stack, times
	 * without events, a stack of its own: not a row of Stacks, whose depth
	 * is Stacks'); false otherwise, having changed nothing. */
	boolean push(int id) {
		long[] v = dense;
		int[] s = sId;
		int d = depth;
		if (id < 0 || id >= v.length || d >= s.length || d >= limit || busy || row >= 0
				|| (Hooks.mode & (Hooks.TIMES | Hooks.EVENTS)) != Hooks.TIMES)
			return false;
		v[id]++;
		s[d] = id;
		depth = d + 1;
		mods++;
		return true;
	}

	/* exitOther's exit: pops id when it is on top and nothing needs
	 * the slow path; false otherwise, having changed nothing. */
	boolean pop(int id) {
		int[] s = sId;
		int d = depth - 1;
		if (d < 0 || d >= s.length || s[d] != id || overflow != 0 || busy || row >= 0
				|| (Hooks.mode & (Hooks.TIMES | Hooks.EVENTS)) != Hooks.TIMES)
			return false;
		depth = d;
		mods++;
		return true;
	}

	void enter(int id, int m) {
		if (busy || id < 0)
			return;
		count(id);
		if ((m & Hooks.EVENTS) != 0) {
			enterEvent(id);
			return;
		}
		if ((m & Hooks.TIMES) == 0)
			return;
		int d = depth;
		if (d >= limit || (d == sId.length && !growStack(false))) {
			overflow++;
			return;
		}
		sId[base + d] = id;
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
		while (k >= 0 && sId[base + k] != id)
			k--;
		return k;
	}

	/* ---- trace=events: every entry and exit with System.nanoTime ------- */

	private void enterEvent(int id) {
		int d = depth;
		if ((d == sId.length || sRec == null || sRec.length < sId.length) && !growStack(true)) {
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

	/* ---- growth: the thread's arrays under busy, the sampler's without
	 * (busy is the thread's own) ---- */

	static int grown(int length, int index) {
		int n = length > 0 ? length : 1;
		while (n <= index)
			n *= 2;
		return n;
	}

	/* Doubles the stack if it is full; for events, makes sRec as long. */
	private boolean growStack(boolean events) {
		busy = true;
		try {
			int n = depth < sId.length ? sId.length : sId.length > 0 ? 2 * sId.length : 16;
			if (n != sId.length) {
				int[] id = new int[n];
				System.arraycopy(sId, 0, id, 0, depth);
				sId = id;
			}
			if (events && (sRec == null || sRec.length < n)) {
				boolean[] rec = new boolean[n];
				if (sRec != null)
					System.arraycopy(sRec, 0, rec, 0, depth);
				sRec = rec;
			}
			return true;
		} catch (Throwable e) {
			return false;
		} finally {
			busy = false;
		}
	}

	boolean sizeFrames(int d) {
		try {
			frames = new int[grown(frames.length, d)];
			return true;
		} catch (Throwable e) {
			return false;
		}
	}

	boolean sizeHeld() {
		try {
			int[] h = new int[held.length > 0 ? 2 * held.length : 8];
			System.arraycopy(held, 0, h, 0, heldCount);
			held = h;
			return true;
		} catch (Throwable e) {
			return false;
		}
	}

	boolean sizeNodes(int d) {
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
}
