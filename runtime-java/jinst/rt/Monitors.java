package jinst.rt;

/**
 * The monitor pass's counts: how often each lock site was entered, per
 * lock class, exactly, by every thread (include/jinst/monitor.h has the
 * pass, agent/monitor_run.c the contention the VM reports).
 *
 * <h2>The per-thread path</h2>
 *
 * {@link Hooks#monitorEnter} runs before every monitorenter and at the
 * entry of every synchronized method. It finds the thread's context as
 * the trace hooks' other paths do ({@link Hooks#BY_TID}'s slot checked
 * against {@code Ctx.owner}; docs/tracing-threads.md) and adds one to
 * {@code Ctx.locks[site]}, an array only its thread writes: no lock, no
 * shared line written, exact. A site's enters are kept by the class of the
 * object locked: the first class a site meets is its class in
 * {@link #first}, and an enter of that class is the increment above; an
 * enter of another class (a site that locks objects of several classes)
 * goes to the thread's {@link Others}, a short list searched on the slow
 * path. Snapshots add every thread's arrays up under the registry's lock,
 * and an ended thread's are folded into the registry's RETIRED context
 * (Ctx.fold), as its call counts are.
 *
 * <h2>Why this and not the lock's own statistics</h2>
 *
 * The enters the VM takes on its fast path (a compare-and-swap on the
 * object's header, or a recursive enter) leave no trace in JVMTI; only
 * contended enters raise events. Counting in the bytecode is what makes
 * the ratio of contended to all enters exact.
 */
final class Monitors {
	private Monitors() {
	}

	/** Recording: set by the agent's monitor module (engage), read by the
	 * slow path only (as Hooks.mode). */
	static boolean on;

	/** Per site, the first class of object it locked, or null; grown by a
	 * copy and written under LOCK, read without. */
	static Class<?>[] first = new Class<?>[0];
	private static final Object LOCK = new Object();

	/** One thread's enters of a class other than its site's first. */
	static final class Others {
		int[] site = new int[8];
		Class<?>[] cls = new Class<?>[8];
		long[] n = new long[8];
		int count;

		void add(int s, Class<?> k, long v) {
			for (int i = 0; i < count; i++)
				if (site[i] == s && cls[i] == k) {
					n[i] += v;
					return;
				}
			if (count == site.length) {
				int[] a = new int[2 * count];
				Class<?>[] b = new Class<?>[2 * count];
				long[] c = new long[2 * count];
				System.arraycopy(site, 0, a, 0, count);
				System.arraycopy(cls, 0, b, 0, count);
				System.arraycopy(n, 0, c, 0, count);
				site = a;
				cls = b;
				n = c;
			}
			site[count] = s;
			cls[count] = k;
			n[count++] = v;
		}
	}

	/* Hooks.monitorEnter's fast path: the enter counted when the site's
	 * array has room and the lock is of the site's first class. */
	static boolean count(Ctx c, Object lock, int site) {
		long[] v = c.locks;
		Class<?>[] k = first;
		if (lock == null || site < 0 || site >= v.length || site >= k.length || k[site] != lock.getClass())
			return false;
		v[site]++;
		return true;
	}

	/* The first enter of a site on this thread, or of another class. */
	static void enterSlow(Thread t, Object lock, int site) {
		if (!on || lock == null || site < 0)
			return;
		Ctx c = Hooks.ctx(t, Hooks.mode);
		if (c == null || c.busy)
			return;
		Class<?> k = lock.getClass();
		c.busy = true;
		try {
			if (firstOf(site, k) != k) {
				if (c.lockOthers == null)
					c.lockOthers = new Others();
				c.lockOthers.add(site, k, 1);
			} else {
				if (site >= c.locks.length)
					c.locks = grown(c.locks, site);
				c.locks[site]++;
			}
		} catch (Throwable e) {
			/* out of memory: the enter is not counted */
		} finally {
			c.busy = false;
		}
	}

	private static long[] grown(long[] v, int site) {
		long[] a = new long[Ctx.grown(v.length < 64 ? 64 : v.length, site)];
		System.arraycopy(v, 0, a, 0, v.length);
		return a;
	}

	/* The site's first class, k when it had none. */
	private static Class<?> firstOf(int site, Class<?> k) {
		Class<?>[] f = first;
		if (site < f.length && f[site] != null)
			return f[site];
		synchronized (LOCK) {
			f = first;
			if (site >= f.length) {
				Class<?>[] a = new Class<?>[Ctx.grown(f.length < 64 ? 64 : f.length, site)];
				System.arraycopy(f, 0, a, 0, f.length);
				f = a;
			}
			if (f[site] == null)
				f[site] = k;
			first = f;
			return f[site];
		}
	}

	/* c's thread ended: its enters go to into (RETIRED), under the
	 * registry's lock. */
	static void fold(Ctx into, Ctx c) {
		long[] v = c.locks;
		if (v.length > into.locks.length) {
			long[] a = new long[v.length];
			System.arraycopy(into.locks, 0, a, 0, into.locks.length);
			into.locks = a;
		}
		for (int i = 0; i < v.length; i++)
			into.locks[i] += v[i];
		Others o = c.lockOthers;
		if (o == null)
			return;
		if (into.lockOthers == null)
			into.lockOthers = new Others();
		for (int i = 0; i < o.count; i++)
			into.lockOthers.add(o.site[i], o.cls[i], o.n[i]);
	}

	/* ---- the agent's: engage, disengage, snapshot ---- */

	/**
	 * A session's start. The first one finds nothing recorded; one after
	 * a stop (the agent attached again) must not count what the last one
	 * did: its site ids were another instrumenter's, so the sites' first
	 * classes are dropped with every thread's enters (RETIRED's too).
	 */
	static void engage() {
		synchronized (LOCK) {
			first = new Class<?>[0];
		}
		reset();
		on = true;
	}

	static void disengage() {
		on = false;
	}

	/**
	 * The agent's reset: every thread's enters set to 0 (an enter counted
	 * by its thread at that very moment may stay or go).
	 */
	static void reset() {
		synchronized (Registry.LOCK) {
			for (Ctx c : Registry.contexts()) {
				long[] v = c.locks;
				for (int i = 0; i < v.length; i++)
					v[i] = 0;
				if (c.lockOthers != null)
					c.lockOthers.count = 0;
			}
		}
	}

	/**
	 * Every site's enters by lock class, all threads added up: {long[]
	 * rows of (site, class index, enters), Class[] the classes}. A thread
	 * counting meanwhile may have its latest enters missed, never counted
	 * twice.
	 */
	static Object[] snapshot() {
		Others all = new Others();
		synchronized (Registry.LOCK) {
			Ctx[] cs = Registry.contexts();
			Class<?>[] f = first;
			long[] sum = new long[f.length];
			for (Ctx c : cs) {
				long[] v = c.locks;
				for (int i = 0; i < v.length && i < sum.length; i++)
					sum[i] += v[i];
				Others o = c.lockOthers;
				for (int i = 0; o != null && i < o.count; i++)
					all.add(o.site[i], o.cls[i], o.n[i]);
			}
			for (int i = 0; i < sum.length; i++)
				if (sum[i] > 0)
					all.add(i, f[i], sum[i]);
		}
		Class<?>[] classes = new Class<?>[all.count];
		int nc = 0;
		long[] rows = new long[3 * all.count];
		for (int i = 0; i < all.count; i++) {
			int j = 0;
			while (j < nc && classes[j] != all.cls[i])
				j++;
			if (j == nc)
				classes[nc++] = all.cls[i];
			rows[3 * i] = all.site[i];
			rows[3 * i + 1] = j;
			rows[3 * i + 2] = all.n[i];
		}
		Class<?>[] k = new Class<?>[nc];
		System.arraycopy(classes, 0, k, 0, nc);
		return new Object[] {rows, k};
	}
}
