package jinst.rt;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * clock=cpu: what each thread used of a CPU since the last sample, which
 * Hooks.sample gives to the thread's stack instead of the wall time that
 * passed. A thread that sleeps, waits for a lock or blocks in I/O uses
 * none, so its waiting shows nowhere; a thread that runs on a loaded
 * machine gets the time it ran, not the time it waited for a CPU.
 *
 * The hooks are the same as under the wall clock: reading a thread's CPU
 * time is a system call (0.4 us of CPU here), far too much at every call and
 * little at every sample. Each sample reads the CPU time of every thread of
 * the registry (user and system, as the kernel accounts it) and gives the
 * difference from the last reading to the stack as it stands: a thread's
 * times add up to the CPU time it used while its stack was sampled. As
 * under the wall clock, where in the tick the time was used is not known;
 * the tick's CPU time goes where the thread is when it falls.
 *
 * Where the times come from: in the agent's copy, the agent's read0 (JVMTI
 * GetThreadCpuTime for every thread in one JNI call, agent/trace_run.c),
 * which runs no Java code, so no class the agent instrumented (the JDK's
 * management classes under include=**) runs a hook under the registry's
 * lock; without the agent (Standalone sets bean), the platform's
 * ThreadMXBean, as no JDK class is instrumented then.
 *
 * A thread read for the first time, or for the first time in a session
 * (a sample whose last one is not the last read, as after engage), gets
 * what it used since, at most the wall time since the last sample (no
 * thread uses more): it may have run long before its first hook, or before
 * the session. What a thread used between the last sample and its end is
 * not read (a tick at most), as under the wall clock.
 *
 * A thread that waits costs a reading all the same, a system call, so a
 * server's idle pool would cost more than its work. A thread that used no
 * CPU time since its last reading, whose stack has not moved since (Ctx.mods,
 * and Ctx.moved for a row of Stacks, Sampler.look), is asked its state
 * first (JVMTI GetThreadState, no system call): while it waits (sleeping,
 * parked, blocked on a monitor) its reading is left for a later sample, at
 * most SKIPS in a row. What it used meanwhile is then read as a whole and
 * goes where its stack is, which is where it was (else mods moved and it
 * was read) but for the last samples' worth.
 *
 * Virtual threads have no CPU time of their own (GetThreadCpuTime refuses
 * them, the ThreadMXBean gives -1): one that is runnable at a sample gets
 * the wall time since the last one, as under the wall clock, and one that
 * is parked gets nothing.
 */
final class CpuClock {
	private CpuClock() {
	}

	/** read0's answers beside a time: nothing to give (a thread that
	 * ended, a virtual thread that waits), a thread that runs with no CPU
	 * clock of its own (a virtual thread, runnable), a thread left unread
	 * as it waits. */
	static final long NONE = -1, RUNNING = -2, WAITING = -3;
	/** Samples in a row that may leave a waiting thread unread. */
	static final int SKIPS = 15;
	/** Standalone's: the ThreadMXBean, with no agent to call. */
	static boolean bean;

	/* Only the sampler uses these, under Registry.LOCK. */
	private static Thread[] threads = new Thread[16];
	private static long[] times = new long[16];
	private static boolean[] idle = new boolean[16];
	private static long last;
	private static ThreadMXBean mx;

	/** Sets cpuDt of the first n contexts of cs: the CPU time each thread
	 * used since the last sample (now, dt nanoseconds after it). */
	static void read(Ctx[] cs, int n, long now, long dt) {
		boolean fresh = now - dt != last;
		last = now;
		if (threads.length < n && !size(n)) {
			for (int i = 0; i < n; i++)
				cs[i].cpuDt = 0;
			return;
		}
		Thread[] ts = threads;
		long[] ns = times;
		boolean[] may = idle;
		for (int i = 0; i < n; i++) {
			Ctx c = cs[i];
			ts[i] = c.owner;
			may[i] = !fresh && c.cpuIdle && c.cpuSkips < SKIPS && c.mods + c.moved == c.cpuMods;
		}
		try {
			if (bean)
				readBean(ts, n, ns);
			else
				read0(ts, n, ns, may);
		} finally {
			/* the registry keeps its threads; this must not keep ended ones */
			for (int i = 0; i < n; i++)
				ts[i] = null;
		}
		for (int i = 0; i < n; i++)
			give(cs[i], ns[i], dt, fresh);
	}

	/* c's reading t (a time, or NONE, RUNNING, WAITING) into its cpuDt. */
	private static void give(Ctx c, long t, long dt, boolean fresh) {
		c.cpuIdle = false;
		if (t == WAITING) {
			c.cpuDt = 0;
			c.cpuIdle = true;
			c.cpuSkips++;
		} else if (t == RUNNING) {
			c.cpuDt = dt;
		} else if (t < 0) {
			c.cpuDt = 0;
		} else {
			long d = t - c.cpuSeen;
			if (fresh || c.cpuSeen == 0)
				d = Math.min(d, dt);
			c.cpuDt = d > 0 ? d : 0;
			c.cpuSeen = t;
			c.cpuIdle = d <= 0;
			c.cpuMods = c.mods + c.moved;
			c.cpuSkips = 0;
		}
	}

	/** The CPU time of each of ts[0, n) in nanoseconds into ns, or NONE or
	 * RUNNING; WAITING, unread, for a thread that may be left unread
	 * (may[i]) and waits (registered by the agent). */
	static native void read0(Thread[] ts, int n, long[] ns, boolean[] may);

	private static void readBean(Thread[] ts, int n, long[] ns) {
		ThreadMXBean b = mx;
		if (b == null)
			mx = b = ManagementFactory.getThreadMXBean();
		for (int i = 0; i < n; i++) {
			Thread t = ts[i];
			long v = t == null ? NONE : b.getThreadCpuTime(t.getId());
			if (v < 0)
				v = t != null && t.getState() == Thread.State.RUNNABLE ? RUNNING : NONE;
			ns[i] = v;
		}
	}

	/* On failure (no memory) this sample gives no time. */
	private static boolean size(int n) {
		try {
			int k = Ctx.grown(threads.length, n);
			Thread[] t = new Thread[k];
			long[] v = new long[k];
			boolean[] w = new boolean[k];
			threads = t;
			times = v;
			idle = w;
			return true;
		} catch (Throwable e) {
			return false;
		}
	}
}
