package jinst.rt;

/**
 * The hooks instrumented code calls: {@code enter(id)} at method entry,
 * {@code exit(id)} before every return, {@code exitThrow(id)} in a catch-all
 * that rethrows; {@code called(id)} alone at the entry of a method that is
 * counted and not timed (every method under trace=counts, leaves under
 * trace=times); {@code probes(id, n)} and {@code probeCounts(id, n)} at the
 * entry of a method under coverage (its class's probes, {@link Coverage}),
 * {@code probesFor(identity, n, name)} and {@code probeCountsFor} in code
 * instrumented ahead of time. Ids are the small ints the instrumentation pass hands out
 * (include/jinst/instrument.h); the public methods must match the hook
 * table in instrument/hooks.c (a test compares them).
 *
 * The agent defines this package in the bootstrap loader from bytes embedded
 * in libjinst.so and engages the hooks once the VM is live; until then
 * {@link #mode} is 0 and every hook returns at once. Loaded from the class
 * path with no agent (code instrumented ahead of time), the runtime engages
 * itself in this class's initializer when the program asks for output
 * ({@link Standalone}), and stays disengaged otherwise.
 *
 * <h2>The fast path: a row of static arrays per thread</h2>
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
 * So a platform thread counts and keeps its shadow stack in its row of
 * static final arrays (Grid for the counts, Stacks for the stacks under
 * times), the row its thread id modulo 64: the JIT knows their addresses,
 * and an entry is a compare of {@code Thread.currentThread()} with the
 * row's owner, one increment and a push, at addresses that depend on the
 * thread's id alone. Only a row's owner writes it, so counts are exact.
 * A thread takes its row on its first slow path if no live thread has it,
 * and keeps it until it ends: ownership cannot move from a live thread,
 * which may be between the compare and the increment. Every other thread
 * (its row taken, a virtual thread, ids past Grid.WIDTH, a stack deeper
 * than its row) counts and pushes in its own context ({@link Ctx}), found
 * by its thread id in {@link #BY_TID} (a slot, a compare and the
 * context's arrays), and on the slow path; a snapshot adds them all up.
 * (Before the rows, one thread, the first to call a hook, had static arrays and
 * every other thread its context: a server's pool paid 1.1 to 1.9 times
 * what its main thread paid for times, docs/tracing-threads.md.)
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
 * The hot path executes only code of java.lang.Thread (currentThread,
 * getId), this class and Ctx; the slow path also java.lang.ThreadLocal (and its map, entries,
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
	static final int CPU = 16;    /* with TIMES: each thread's CPU time, not the wall time (CpuClock) */
	static final int ALLOC = 32;  /* allocation sites (Alloc): objects and bytes per site */

	/**
	 * What is recorded; 0 (nothing) until the agent engages the hooks. Read
	 * by the slow paths only. Not volatile: the agent engages before it
	 * instruments any class, and the class definitions and
	 * retransformations that follow publish it; Standalone engages in
	 * this class's initializer, which publishes it to every thread.
	 */
	static int mode;
	/** Events a thread keeps at most (set when engaged). */
	static int eventCapacity = 100000;

	/** The time of the last sample (sample). */
	private static long sampled;

	static final Local LOCAL = new Local();

	/*
	 * Every other thread's context, found by its thread id (Thread.getId,
	 * a final field's value for any thread class that does not override it):
	 * BY_TID[id & TID_MASK] holds a context, checked against the current
	 * thread by Ctx.owner, a final field, so a context read through a data
	 * race is either seen whole or fails the check: a thread only ever counts
	 * into its own context, and counts stay exact. A slot is written when a
	 * thread first takes the slow path and finds it free (empty, or its
	 * thread ended), so it is read by every thread and written about once per
	 * thread: no cache line every thread writes. Two live threads whose ids
	 * meet in a slot: the second finds its context through the ThreadLocal.
	 * (docs/tracing-threads.md: the ThreadLocal lookup, and a context kept
	 * in one shared field, cost pools of threads 2x.)
	 */
	public static final int TID_SLOTS = 1 << 12, TID_MASK = TID_SLOTS - 1;
	/* Public for the bridge's called (java.lang.$JinstHooks); not an API. */
	public static final Ctx[] BY_TID = new Ctx[TID_SLOTS];
	/* With at most this many live contexts, a platform thread given a slot
	 * gets its counts as an array at once (Ctx.densify): a pool's thread.
	 * Virtual threads (java.lang.VirtualThread, JDK 21 on; null before)
	 * keep their small tables (Counts): one per task, thousands of them. */
	static final int SMALL_POOL = 64;
	static final Class<?> VIRTUAL = virtualThreadClass();
	/* Grid is loaded (its rows may hold counts), Stacks is (its rows may
	 * be adopted): set by their initializers. */
	static volatile boolean grid, stacks;

	/* Whether mode m counts platform threads' calls in Grid: counts or
	 * times (whose leaves are counted), not events (every call recorded
	 * on its thread's timeline). */
	static boolean gridded(int m) {
		return (m & (COUNTS | TIMES)) != 0 && (m & EVENTS) == 0;
	}

	private Hooks() {
	}

	/**
	 * Entry of a method that is counted, never timed: no exit hook follows.
	 * Every platform thread counts into its row of Grid (the essay
	 * there), else (no row, a virtual thread, an id past the row) into
	 * its own context's array by id, found in its BY_TID slot
	 * (Ctx.calledSlow): one path for all, so that the profile the JIT
	 * reads for this method (one for every instrumented method that calls
	 * it) never shows a second path taken. With one thread's static array
	 * first and the slot second, any other thread (the Finalizer thread
	 * running a finalize(), a pool) made C2 inline both paths into every
	 * instrumented method (docs/tracing-threads.md, "The interpreter").
	 */
	public static void called(int id) {
		Thread t = Thread.currentThread();
		int r = (int) t.getId() & (Grid.ROWS - 1);
		if (Grid.OWNER[r] == t && id < Grid.WIDTH)
			Grid.CELLS[(r << Grid.ROW_SHIFT) + id]++;
		else
			Ctx.calledSlow(id);
	}

	/**
	 * Entry of a timed method: the thread whose context adopted its row of
	 * Stacks counts in its row of Grid and pushes on the row's stack (the
	 * essay there); every other thread, and one whose row's depth is NONE,
	 * in its context.
	 */
	public static void enter(int id) {
		Thread t = Thread.currentThread();
		int r = (int) t.getId() & (Grid.ROWS - 1);
		int d = Stacks.DEPTH[r << Stacks.PAD];
		if (Stacks.OWNER[r] == t && d < Stacks.MASK && id < Grid.WIDTH) {
			Grid.CELLS[(r << Grid.ROW_SHIFT) + id]++;
			Stacks.STACK[(r << Stacks.SHIFT) + d] = id;
			Stacks.DEPTH[r << Stacks.PAD] = d + 1;
		} else {
			Ctx.enterOther(t, id);
		}
	}

	/** Exit of a timed method: pops id when it is on top of the row's
	 * stack (at depth 0 or NONE, the row's last int, -1, is read). */
	public static void exit(int id) {
		Thread t = Thread.currentThread();
		int r = (int) t.getId() & (Grid.ROWS - 1);
		int d = Stacks.DEPTH[r << Stacks.PAD] - 1;
		if (Stacks.OWNER[r] == t && Stacks.STACK[(r << Stacks.SHIFT) + (d & Stacks.MASK)] == id)
			Stacks.DEPTH[r << Stacks.PAD] = d;
		else
			Ctx.exitOther(t, id);
	}

	/* The exit of a catch-all handler that rethrows: the same as exit, a
	 * method of its own so that exceptional exits show apart in a profile
	 * of the VM. */
	public static void exitThrow(int id) {
		exit(id);
	}

	/* ---- the slow paths ------------------------------------------------- */

	/* A thread's first calls, ids past Grid.WIDTH, a table of counts not
	 * yet dense, a stack to grow or past its row's, events. (After a
	 * disengage a thread found in BY_TID before it was cleared may count
	 * on for a while: after the output was written, into its own
	 * context.) */

	static void calledSlow(int id) {
		int m = mode;
		Ctx c;
		if (m == 0 || (c = ctx(Thread.currentThread(), m)) == null)
			return;
		c.count(id);
	}

	static void enterSlow(int id) {
		moveSlow(id, true);
	}

	static void exitSlow(int id) {
		moveSlow(id, false);
	}

	/* An entry (push) or an exit (pop) on the slow path: a context that
	 * adopted its row takes the row's depth first and gives it back
	 * after. */
	private static void moveSlow(int id, boolean entry) {
		Thread t = Thread.currentThread();
		int m = mode;
		Ctx c;
		if (m == 0 || (c = ctx(t, m)) == null)
			return;
		if (c.row < 0) {
			move(c, id, m, entry);
			return;
		}
		c.depth = Stacks.depthOf(c);
		move(c, id, m, entry);
		Stacks.sync(c);
	}

	private static void move(Ctx c, int id, int m, boolean entry) {
		if (entry)
			c.enter(id, m);
		else
			c.exit(id, m);
	}

	/* The current thread's context, through the ThreadLocal (a new one
	 * when it holds an earlier session's: newSession); put in its BY_TID
	 * slot if that is free (the essay at BY_TID). A platform thread claims
	 * its row of Grid if it is free, and under times its context adopts
	 * the row's stack (as a carrier's does once a virtual thread claimed
	 * the row for it). Not in events mode, whose every call takes the slow
	 * path. */
	static Ctx ctx(Thread t, int m) {
		Ctx c = LOCAL.get();
		if (c.session != session) {
			c = Registry.contextOf(t);
			LOCAL.set(c);
		}
		int i = (int) t.getId() & TID_MASK;
		Ctx s = BY_TID[i];
		if (s != c && !c.busy && (m & EVENTS) == 0
				&& (s == null || s.ended || !s.owner.isAlive())) {
			if (Registry.count <= SMALL_POOL && t.getClass() != VIRTUAL)
				c.densify();
			BY_TID[i] = c;
		}
		if (gridded(m) && !c.busy) {
			if (t.getClass() != VIRTUAL) {
				Grid.claim(t);
				if ((m & TIMES) != 0 && c.row < 0)
					adopt(t, c, false);
			} else if (carriers) {
				claimCarrier();
			}
		}
		return c;
	}

	/* c, t's, adopts its row of Stacks if t owns the row of Grid: while
	 * the hooks are engaged, or while they are being engaged (prepareAll). */
	private static void adopt(Thread t, Ctx c, boolean engaging) {
		int r = (int) t.getId() & (Grid.ROWS - 1);
		if (!stacks || !Stacks.OK || Grid.OWNER[r] != t)
			return;
		synchronized (Registry.LOCK) {
			if (Grid.OWNER[r] == t && c.row < 0 && !c.ended && c.session == session && (engaging || mode != 0))
				Stacks.adopt(c, r);
		}
	}

	/* A virtual thread's slow path: a row for its carrier, which the
	 * bridge's called counts it in (agent/runtime.c, carrier_bridge). */
	private static void claimCarrier() {
		Thread k = carrier0();
		if (k != null && k.getClass() != VIRTUAL)
			Grid.claim(k);
	}

	private static Class<?> virtualThreadClass() {
		try {
			return Class.forName("java.lang.VirtualThread", false, null);
		} catch (Throwable e) {
			return null;
		}
	}

	/* c leaves BY_TID: its thread ended (under Registry.LOCK). */
	private static void forget(Ctx c) {
		int i = (int) c.tid & TID_MASK;
		if (BY_TID[i] == c)
			BY_TID[i] = null;
		if (grid && c.owner != null)
			Grid.release(c.owner);
	}

	/* c's thread ended (Registry.retire, under its lock). It runs no more
	 * hooks: the next thread may own its row (its counts in Grid stay
	 * there); and BY_TID neither finds it again nor keeps it alive. */
	static void released(Ctx c) {
		forget(c);
	}

	/**
	 * The coverage probes of class id (the coverage pass's constant), n
	 * long: called once per invocation of each method of a class under
	 * coverage (booleans), the result kept in a local. Coverage has the
	 * table; its fast path is here, not a call away: C1 inlines a callee of
	 * at most 35 bytes and refuses some even so at the third level, and an
	 * out-of-line call at every method entry is most of coverage's cost in
	 * a short program's compiled code. The bridge's probes is this body
	 * too (one interpreted call less per method entry); code instrumented
	 * ahead of time calls this one.
	 */
	public static boolean[] probes(int id, int n) {
		boolean[][] t = Coverage.bools;
		if (id < t.length && t[id] != null)
			return t[id];
		return Coverage.probesSlow(id, n);
	}

	/** As probes, for coverage=counts: hit counts. */
	public static long[] probeCounts(int id, int n) {
		long[][] t = Coverage.longs;
		if (id < t.length && t[id] != null)
			return t[id];
		return Coverage.countsSlow(id, n);
	}

	/**
	 * The probe of a method of one probe (most getters, setters and
	 * delegations): it sets probe of class id with no array kept in a
	 * local, so the method grows by one call and no local, and stays small
	 * enough for the compilers to inline where they inlined it before.
	 */
	public static void hit(int id, int n, int probe) {
		boolean[][] t = Coverage.bools;
		if (id < t.length && t[id] != null)
			t[id][probe] = true;
		else
			Coverage.probesSlow(id, n)[probe] = true;
	}

	/** As hit, for coverage=counts: adds 1. */
	public static void hitCount(int id, int n, int probe) {
		long[][] t = Coverage.longs;
		long[] a = id < t.length && t[id] != null ? t[id] : Coverage.countsSlow(id, n);
		a[probe]++;
	}

	/**
	 * The coverage probes of the class of this identity (XXH64 of its
	 * original bytes) and internal name, at least n long: what code
	 * instrumented ahead of time calls instead of probes, so that classes
	 * instrumented in separate runs never share an id (Coverage's table by
	 * identity).
	 */
	public static boolean[] probesFor(long identity, int n, String name) {
		return Coverage.probesFor(identity, n, name);
	}

	/** As probesFor, for coverage=counts: hit counts. */
	public static long[] probeCountsFor(long identity, int n, String name) {
		return Coverage.countsFor(identity, n, name);
	}

	/**
	 * Before every monitorenter and at the entry of every synchronized
	 * method (the monitor pass): one more enter of lock site by the current
	 * thread, of lock's class (Monitors). The context is found as the
	 * trace hooks find it; a thread's first enters, and a lock of another
	 * class than the site's first, take the slow path.
	 */
	public static void monitorEnter(Object lock, int site) {
		Thread t = Thread.currentThread();
		Ctx c = BY_TID[(int) t.getId() & TID_MASK];
		if (c == null || c.owner != t || !Monitors.count(c, lock, site))
			Monitors.enterSlow(t, lock, site);
	}

	/*
	 * Allocation, right after the object is constructed or the array made
	 * (the allocation pass, include/jinst/alloc.h): the new reference and
	 * its site. Alloc has the bodies: per-thread counts through BY_TID.
	 */
	public static void allocObject(Object o, int site) {
		Alloc.object(o, site);
	}

	public static void allocArray(Object o, int site) {
		Alloc.array(o, site);
	}

	public static void allocArrays(Object o, int site) {
		Alloc.arrays(o, site);
	}

	public static void allocAny(Object o, int site) {
		Alloc.any(o, site);
	}

	public static void allocClone(Object receiver, Object o, String start, int site) {
		Alloc.cloned(receiver, o, start, site);
	}

	/* The current thread's context for a slow path of a hook other than
	 * the trace's (Alloc), or null while disengaged. */
	static Ctx context(Thread t) {
		int m = mode;
		return m == 0 ? null : ctx(t, m);
	}

	/* ---- engagement: the agent (through JNI) or Standalone --------------- */

	/**
	 * The session: one more at each engage. The agent engages again when it
	 * is attached after a stop, and that session counts from zero
	 * (newSession). A context belongs to the session it was made in
	 * (Ctx.session): ctx gives a thread a new one when its ThreadLocal
	 * still holds an earlier session's. Published as mode is.
	 */
	static int session;
	/* The mode being engaged (engage), for the initializers of Grid and
	 * Stacks. */
	static int engaging;

	static void engage(int newMode, int capacity, long now) {
		if (session++ > 0)
			newSession();
		if (capacity > 0)
			eventCapacity = capacity;
		sampled = now;
		/* Grid (and Stacks, for times) made here, on the engaging thread,
		 * not by the first hook of a program's thread (16 MB and 4 MB to
		 * allocate); made by a hook while no mode asks for them, they are
		 * empty (Grid.cells). */
		engaging = newMode;
		if (gridded(newMode))
			Grid.make();
		if (gridded(newMode) && (newMode & TIMES) != 0)
			Stacks.make();
		if (gridded(newMode))
			prepareAll(newMode);
		mode = newMode;
	}

	/*
	 * Rows before a thread's first hook. The JIT compiles the bridge's
	 * hooks with one branch profile for all their sites, the hook's own,
	 * and one taking of the slow branch in it has C2 compile the slow call
	 * (its JVM state, its exception edges) into every method it inlines
	 * the hook into. A thread whose first hook found no row took that
	 * branch: under times, Jython's Finalizer thread running its first
	 * finalize() was enough (docs/tracing-threads.md, "Rows before the
	 * first hook"). So every live platform thread gets its row here, and
	 * each new one at its start (threadStart, from the agent's ThreadStart
	 * event). Done before mode is published: until then a thread's slow
	 * path returns at once and touches no context, and its fast path waits
	 * for the row's owner, written last (Grid.claim, Stacks.adopt), so a
	 * context adopts its row here while its thread cannot be moving its
	 * stack.
	 */
	private static void prepareAll(int m) {
		ThreadGroup g = Thread.currentThread().getThreadGroup();
		for (ThreadGroup p; g != null && (p = g.getParent()) != null;)
			g = p;
		if (g == null)
			return;
		Thread[] all = new Thread[g.activeCount() + 16];
		int n = g.enumerate(all, true);
		for (int i = 0; i < n; i++)
			if (all[i].isAlive())
				prepare(all[i], m, true);
	}

	/* t's row of Grid and, under times, its context's of Stacks: all a
	 * thread with a row needs (its counts and stack are the rows'; the
	 * slow path makes the rest if it is ever taken). */
	private static void prepare(Thread t, int m, boolean engaging) {
		if (t.getClass() == VIRTUAL || t == own)
			return;
		Grid.claim(t);
		if ((m & TIMES) == 0)
			return;
		Ctx c = Registry.contextOf(t);
		if (c.row < 0)
			adopt(t, c, engaging);
	}

	/* The agent's own thread (the clock), which runs no hook: no row for
	 * it (set by the agent before it engages and starts it). */
	static volatile Thread own;

	/**
	 * A platform thread starts (the agent's ThreadStart event, on the
	 * thread itself, before its first hook): its row now (prepareAll).
	 */
	static void threadStart() {
		int m = mode;
		if (m == 0 || !gridded(m))
			return;
		try {
			prepare(Thread.currentThread(), m, false);
		} catch (Throwable e) {
			/* its first hook claims it, as without the event */
		}
	}

	/*
	 * Attached again after a stop: what the sessions before recorded is
	 * dropped, here and in the registry and the sampler, with every
	 * context (a thread's next hook makes it a new one). mode is 0, so no
	 * hook records meanwhile. Code of an earlier session may still run in
	 * frames entered before the stop (the VM runs a frame's method as it
	 * was when the frame began): such a frame calls no entry hook again,
	 * and its exit's id (an earlier session's, which may name another
	 * method now) is on no stack of this session, whose frames all began
	 * after it and end before it, so it pops nothing (Ctx.exit).
	 */
	private static void newSession() {
		synchronized (Registry.LOCK) {
			for (int i = 0; i < TID_SLOTS; i++)
				BY_TID[i] = null;
			if (grid)
				Grid.clear();
			Registry.newSession();
			Sampler.newSession();
		}
	}

	static void disengage() {
		mode = 0;
		synchronized (Registry.LOCK) {
			for (int i = 0; i < TID_SLOTS; i++)
				BY_TID[i] = null;
			if (grid)
				Grid.releaseAll();
		}
	}

	/**
	 * The clock (the agent's clock thread, every tick= microseconds, or
	 * Standalone's; a test, by hand): the time since the last sample goes
	 * to the stack of every thread as it stands (the essay above); under
	 * CPU, each thread's CPU time since the last sample (CpuClock).
	 */
	static void sample(long now) {
		long dt = now - sampled;
		sampled = now;
		int m = mode;
		if (dt <= 0 || (m & TIMES) == 0)
			return;
		boolean tree = (m & TREE) != 0, cpu = (m & CPU) != 0;
		synchronized (Registry.LOCK) {
			for (int i = 0; i < Registry.count; i++) {
				Ctx c = Registry.threads[i];
				if (c.row >= 0)
					Sampler.look(c, Stacks.depthOf(c));
			}
			if (cpu)
				CpuClock.read(Registry.threads, Registry.count, now, dt);
			for (int i = 0; i < Registry.count; i++) {
				Ctx c = Registry.threads[i];
				Sampler.sample(c, cpu ? c.cpuDt : dt, c.row >= 0 ? Stacks.depthOf(c) : c.depth, tree);
			}
		}
	}

	/** The agent's ThreadEnd event, on the ending thread t itself. */
	static void threadEnd(Thread t) {
		Registry.threadEnd(t);
	}

	/** Writes the output now (registered by the agent with RegisterNatives). */
	static native void dump0();

	/** The current thread's carrier (Thread.currentCarrierThread; the
	 * thread itself for a platform thread), or null (registered by the
	 * agent). */
	static native Thread carrier0();

	/** The bridge's called counts each thread in its carrier's row of
	 * Grid (set by the agent before any hook runs, on JDK 19 and later). */
	static boolean carriers;

	/** The first of count ids the agent's instrumenter reserves for a run
	 * instrumented ahead of time (Runs; registered by the agent), or -1. */
	static native int methodBase0(int count);

	/**
	 * The names of the runs' ids for the agent's outputs: per id, its class,
	 * method, descriptor, and an empty array when it is timed (null when
	 * counted); nulls for the ids no table of a run names.
	 */
	static byte[][] runNames() {
		/* No run asked for a range: nothing to read (and no resource
		 * lookups, which run the JDK's code, traced or not). */
		if (Runs.loaders().length == 0)
			return new byte[0][];
		MethodTable t = MethodTable.loadRuns();
		byte[][] r = new byte[4 * t.cls.length][];
		for (int id = 0; id < t.cls.length; id++)
			if (t.has(id)) {
				r[4 * id] = t.cls[id];
				r[4 * id + 1] = t.name[id];
				r[4 * id + 2] = t.desc[id];
				r[4 * id + 3] = t.timed[id] ? new byte[0] : null;
			}
		return r;
	}

	/** Local's initial value: the context of t, the current thread. */
	static Ctx contextOf(Thread t) {
		return Registry.contextOf(t);
	}

	/* The snapshots the agent writes its outputs from (TraceData). */

	static long[] snapshotCounts() {
		return TraceData.counts();
	}

	static long[] snapshotTimes() {
		return TraceData.times();
	}

	static long[] snapshotTree() {
		return TraceData.tree();
	}

	static long[] snapshotEvents() {
		return TraceData.events();
	}

	static long[][] snapshot(int forms) {
		return TraceData.snapshot(forms);
	}

	static String[] threadNames() {
		return TraceData.threadNames();
	}

	/** Live threads with a context (for tests). */
	static int liveThreads() {
		synchronized (Registry.LOCK) {
			return Registry.count;
		}
	}

	/** The thread whose context adopted the current thread's row of
	 * Stacks, or null (for tests). */
	static Thread owner() {
		int r = (int) Thread.currentThread().getId() & (Grid.ROWS - 1);
		return stacks ? Stacks.OWNER[r] : null;
	}

	/* Not Math.min/max: the dump may run while the hooks are engaged, and
	 * java.lang.Math may be instrumented. */
	static int min(int a, int b) {
		return a < b ? a : b;
	}

	static int max(int a, int b) {
		return a > b ? a : b;
	}

	/*
	 * Last in the class: the standalone runtime engages itself here, if
	 * asked to, when every field above is set, so that a hook reached while
	 * it reads its settings (from code it runs: a class loader, a stream)
	 * finds a class it can run and, mode still 0, returns at once.
	 */
	static {
		Standalone.start();
	}
}
