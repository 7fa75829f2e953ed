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
 * in that copy (no loader) nor in a class path copy that finds the
 * agent's (a loader that does not delegate), so only one of them records.
 *
 * start() runs once, inside Hooks' initializer, on the thread whose hook
 * call started it: with the mode still 0, a hook reached from what it runs
 * (a class loader's code reading jinst.properties) returns at once, and no
 * other thread can run a hook until it is done.
 */
final class Standalone implements Runnable {
	/** The settings, once engaged here; null otherwise. */
	private static volatile Config config;
	private static volatile boolean stopped;
	private static Thread clock;

	/* true: the clock's thread; false: the shutdown hook's. */
	private final boolean isClock;

	private Standalone(boolean isClock) {
		this.isClock = isClock;
	}

	static void start() {
		try {
			ClassLoader loader = Hooks.class.getClassLoader();
			if (loader == null || agentRuns())
				return;
			Config c = Config.read(loader);
			if (c != null)
				engage(c);
		} catch (Throwable e) {
			say("not engaged: " + e);
		}
	}

	/* Whether the agent defined its runtime in the bootstrap loader. */
	private static boolean agentRuns() {
		try {
			Class.forName(Hooks.class.getName(), false, null);
			return true;
		} catch (ClassNotFoundException e) {
			return false;
		}
	}

	private static void engage(Config c) {
		Thread hook = new Thread(new Standalone(false), "jinst shutdown");
		java.lang.Runtime.getRuntime().addShutdownHook(hook);
		config = c;
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
		Hooks.disengage();
	}

	/**
	 * Control.dump() without the agent: writes the outputs now, if engaged
	 * here. False when the agent's runtime should (this is its copy).
	 */
	static boolean dump() {
		if (config != null)
			write();
		return config != null || Hooks.class.getClassLoader() != null;
	}

	private static synchronized void write() {
		try {
			TraceWriter.write(config);
		} catch (Throwable e) {
			say("outputs not written: " + e);
		}
	}

	/** One line on stderr. */
	static void say(String what) {
		System.err.println("jinst: " + what);
	}
}
