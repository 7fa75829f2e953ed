package jinst.rt;

import java.util.concurrent.locks.LockSupport;

/**
 * The runtime without the agent: code instrumented ahead of time, run with
 * jinst-runtime.jar on the class path. The hooks' first call initializes
 * Hooks, whose initializer ends with start(): if the program asked for
 * output (Config), the hooks are engaged as the agent would engage them, a
 * shutdown hook writes the outputs (TraceWriter), and for trace=times a
 * daemon thread of ours is the clock, calling Hooks.sample as the agent's
 * native clock thread does. Otherwise nothing happens: the hooks stay
 * disengaged and return at once.
 *
 * When the agent runs, its copy of the runtime (in the bootstrap loader)
 * is engaged by the agent and is the one instrumented code reaches, the
 * class path's being hidden behind it by delegation; start() does nothing
 * in that copy nor in a class path copy that finds the agent's (a loader
 * that does not delegate), so only one of them records. The agent's copy
 * is told by its natives, which the agent registers before any of its
 * code runs, not by its loader: jinst-runtime.jar on the boot class path
 * (-Xbootclasspath/a, the way to run a `java -jar` program) is in the
 * bootstrap loader too, has no natives, and engages as the class path's
 * copy does.
 *
 * start() runs once, inside Hooks' initializer, on the thread whose hook
 * call started it: with the mode still 0, a hook reached from what it runs
 * (a class loader's code reading jinst.properties) returns at once, and no
 * other thread can run a hook until it is done.
 *
 * Coverage by identity (Coverage.probesFor, code instrumented ahead of
 * time) engages on its own: the first class to ask calls coverageAsked,
 * which reads the settings (Config.coverage) and has the shutdown hook
 * (and Control.dump) write OUT.cov with a record per class seen (CovWriter).
 * In the agent's copy that happens only while the agent's coverage module
 * is off: when it is on, its OUT.cov holds these records beside its own
 * (agent/coverage.c), and the writer here stands aside. A class path copy
 * always writes its own: the agent never sees its tables. Recursion: a
 * class asked for from what coverageAsked runs finds the flag set and
 * returns; its records are in the table all the same.
 */
final class Standalone implements Runnable {
	/** The settings, once engaged here; null otherwise. */
	private static volatile Config config;
	private static volatile boolean stopped;
	private static Thread clock;
	/** Coverage's settings, once engaged (coverageAsked); null otherwise. */
	private static volatile Config covConfig;
	private static long covStart;
	/** append: the file as first found (CovWriter.append). */
	private static final byte[][] COV_BASE = new byte[1][];
	private static final Object COV_LOCK = new Object();
	private static boolean covAsked, hooked;

	/* true: the clock's thread; false: the shutdown hook's. */
	private final boolean isClock;

	private Standalone(boolean isClock) {
		this.isClock = isClock;
	}

	/** Whether this copy is the agent's (set by start, before any hook
	 * records). */
	static boolean agents;

	static void start() {
		try {
			ClassLoader loader = Hooks.class.getClassLoader();
			agents = loader == null && natives();
			if (agents || agentRuns())
				return;
			Config c = Config.read(loader == null ? ClassLoader.getSystemClassLoader() : loader);
			if (c != null)
				engage(c);
		} catch (Throwable e) {
			say("not engaged: " + e);
		}
	}

	/* Whether the agent registered Hooks' natives: carrier0 has no effect. */
	private static boolean natives() {
		try {
			Hooks.carrier0();
			return true;
		} catch (UnsatisfiedLinkError e) {
			return false;
		}
	}

	/* Whether the agent defined its runtime in the bootstrap loader (this
	 * copy being another loader's). */
	private static boolean agentRuns() {
		if (Hooks.class.getClassLoader() == null)
			return false;
		try {
			Class.forName(Hooks.class.getName(), false, null);
			return true;
		} catch (ClassNotFoundException e) {
			return false;
		}
	}

	/* The shutdown hook that writes the outputs, registered once. */
	private static synchronized void hook() {
		if (!hooked)
			java.lang.Runtime.getRuntime().addShutdownHook(new Thread(new Standalone(false), "jinst shutdown"));
		hooked = true;
	}

	/**
	 * A class asked for its probes by identity for the first time
	 * (Coverage): on the first call, the writer of OUT.cov engages, unless
	 * the agent's coverage module records them.
	 */
	static void coverageAsked() {
		synchronized (COV_LOCK) {
			if (covAsked)
				return;
			covAsked = true;
		}
		try {
			ClassLoader loader = Hooks.class.getClassLoader();
			if (Coverage.agentRecords())
				return;
			Config c = Config.coverage(loader == null ? ClassLoader.getSystemClassLoader() : loader);
			if (c == null)
				return;
			covStart = System.currentTimeMillis();
			covConfig = c;
			hook();
		} catch (Throwable e) {
			say("coverage not engaged: " + e);
		}
	}

	private static void engage(Config c) {
		hook();
		config = c;
		CpuClock.bean = true;
		Hooks.engage(c.mode, 0, System.nanoTime());
		if ((c.mode & Hooks.TIMES) != 0 && c.tickUs > 0) {
			clock = new Thread(new Standalone(true), "jinst clock");
			clock.setDaemon(true);
			clock.setPriority(Thread.MAX_PRIORITY);
			clock.start();
		}
	}

	public void run() {
		if (isClock)
			tick(config.tickUs * 1000L);
		else
			shutdown();
	}

	/*
	 * Calls Hooks.sample every period nanoseconds with System.nanoTime. A
	 * wake-up that comes late gives the time it came at, so no time is
	 * lost, and the next is a period after it: a stalled clock does not
	 * catch up in a burst (the agent's clock_run does the same).
	 */
	private static void tick(long period) {
		long next = System.nanoTime();
		try {
			while (!stopped) {
				next += period;
				for (long w; (w = next - System.nanoTime()) > 0 && !stopped;)
					LockSupport.parkNanos(w);
				long now = System.nanoTime();
				if (now - next > period)
					next = now;
				if (!stopped)
					Hooks.sample(now);
			}
		} catch (Throwable e) {
			say("the clock stopped: " + e + "; times stop there");
		}
	}

	/* The VM exits: the outputs as the hooks left them, then disengaged. */
	private static void shutdown() {
		stopped = true;
		write();
		/* only what was engaged here: in the agent's copy, coverage alone
		 * may be, and the hooks are the agent's */
		if (config != null)
			Hooks.disengage();
	}

	/**
	 * Control.dump() without the agent: writes the outputs now, if engaged
	 * here. False when the agent's runtime should (this is its copy).
	 */
	static boolean dump() {
		if (config != null || covConfig != null)
			write();
		return config != null || !agents;
	}

	private static synchronized void write() {
		try {
			Config c = config;
			/* a program whose classes have only coverage asks no trace */
			if (c != null && (c.traceGiven || TraceData.counts().length > 0))
				TraceWriter.write(c);
		} catch (Throwable e) {
			say("outputs not written: " + e);
		}
		Config k = covConfig;
		if (k != null && !Coverage.agentRecords())
			writeCoverage(k);
	}

	/* OUT.cov: a record per class asked for by identity. */
	private static void writeCoverage(Config c) {
		String path = c.out + ".cov";
		try {
			Object[] snap = Coverage.snapshotByIdentity(false);
			long[] ids = (long[]) snap[0];
			String[] names = (String[]) snap[1];
			Object[] arrays = (Object[]) snap[2];
			CovWriter w = new CovWriter();
			w.session(c.session, covStart, System.currentTimeMillis());
			for (int i = 0; i < ids.length; i++)
				if (arrays[i] instanceof long[])
					w.counts(ids[i], names[i], (long[]) arrays[i]);
				else
					w.booleans(ids[i], names[i], (boolean[]) arrays[i]);
			if (c.append)
				w.append(path, COV_BASE);
			else
				w.write(path);
			wrote(path);
		} catch (Throwable e) {
			say(path + " not written: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
		}
	}

	/** One line on stderr. */
	static void say(String what) {
		System.err.println("jinst: " + what);
	}

	/** jinst.quiet=true (Config): outputs are written without a word. */
	static volatile boolean quiet;

	/** An output written: one line on stderr, but when quiet. */
	static void wrote(String path) {
		if (!quiet)
			say("wrote " + path);
	}
}
