package jinst.rt;

/**
 * The ranges of method ids of code instrumented ahead of time, one per run
 * of {@code jinst instrument --trace} (docs/ARCHITECTURE.md, "Method ids of
 * separate runs"). A run numbers its methods 0..count-1 and writes, beside
 * its classes in every package, a class {@code $JinstRun<key>} whose
 * initializer calls {@link #methodBase}; its code pushes BASE + the id
 * within the run. The first call for a key takes the next {@code count}
 * ids, every later one (another package, another loader, the same run)
 * gets the same start: ids of separate runs never meet and stay dense, as
 * the counts' arrays want.
 *
 * Without the agent the ranges follow each other from 0 (in a copy on the
 * boot class path too). In the agent's copy (the bootstrap loader's, which
 * offline code reaches when the agent runs) the agent's instrumenter reserves them ({@code Hooks.methodBase0}), so
 * they never meet the ids it hands out to the classes it instruments.
 *
 * Called once per run class, never from a hook; the lock is uncontended.
 */
public final class Runs {
	private static final Object LOCK = new Object();
	/* Per run, in the order first asked: its key, first id, count, and the
	 * loaders of its run classes (where its method tables are). */
	private static long[] keys = new long[0];
	private static int[] bases = new int[0], counts = new int[0];
	private static ClassLoader[] loaders = new ClassLoader[0];
	/* Without the agent: the first id not yet handed out. */
	private static int next;

	private Runs() {
	}

	/**
	 * The first id of the run {@code key} of {@code count} methods, for its
	 * run class {@code holder}. Never throws: a failure to ask the agent
	 * counts past the agent's ids in this copy.
	 */
	public static int methodBase(long key, int count, Class<?> holder) {
		/* Hooks' initializer engages the standalone runtime: before the
		 * first hook call, as without run classes. */
		if (Hooks.mode < 0)
			return 0;
		ClassLoader l = holder == null ? null : holder.getClassLoader();
		synchronized (LOCK) {
			for (int i = 0; i < keys.length; i++)
				if (keys[i] == key) {
					if (l != null && !known(l))
						add(key, bases[i], counts[i], l);
					return bases[i];
				}
			int n = count < 0 ? 0 : count, base = -1;
			if (Standalone.agents) {
				try {
					base = Hooks.methodBase0(n);
				} catch (Throwable e) {
					Standalone.say("no range of method ids from the agent: " + e);
				}
			}
			if (base < 0) {
				base = next;
			}
			next = Hooks.max(next, base + n);
			add(key, base, n, l);
			return base;
		}
	}

	private static boolean known(ClassLoader l) {
		for (ClassLoader x : loaders)
			if (x == l)
				return true;
		return false;
	}

	/* One row more (a run, or another loader of one). */
	private static void add(long key, int base, int count, ClassLoader l) {
		int n = keys.length;
		long[] k = new long[n + 1];
		int[] b = new int[n + 1], c = new int[n + 1];
		ClassLoader[] x = new ClassLoader[n + 1];
		System.arraycopy(keys, 0, k, 0, n);
		System.arraycopy(bases, 0, b, 0, n);
		System.arraycopy(counts, 0, c, 0, n);
		System.arraycopy(loaders, 0, x, 0, n);
		k[n] = key;
		b[n] = base;
		c[n] = count;
		x[n] = l;
		keys = k;
		bases = b;
		counts = c;
		loaders = x;
	}

	/** The first id of run key, or -1 when none of its classes ran. */
	static int baseOf(long key) {
		synchronized (LOCK) {
			for (int i = 0; i < keys.length; i++)
				if (keys[i] == key)
					return bases[i];
			return -1;
		}
	}

	/** The method count run key was given, or -1. */
	static int countOf(long key) {
		synchronized (LOCK) {
			for (int i = 0; i < keys.length; i++)
				if (keys[i] == key)
					return counts[i];
			return -1;
		}
	}

	/** The loaders of every run class seen (nulls for the boot loader). */
	static ClassLoader[] loaders() {
		synchronized (LOCK) {
			return loaders.clone();
		}
	}
}
