package jinstclock;

/** The two methods whose times the clocks must give (the only traced class). */
final class Timed {
	private Timed() {
	}

	static volatile long sink;

	/** Sleeps in steps of 10 ms until ms milliseconds of wall time passed. */
	static void sleeper(long ms) throws InterruptedException {
		long end = System.nanoTime() + ms * 1000000;
		while (System.nanoTime() < end)
			Thread.sleep(10);
	}

	/** Runs until the thread used ms milliseconds of CPU time, calling
	 * nothing traced: whatever the machine's load, the CPU time is known. */
	static void spinner(long ms, java.lang.management.ThreadMXBean mx) {
		long end = mx.getCurrentThreadCpuTime() + ms * 1000000, x = sink;
		while (mx.getCurrentThreadCpuTime() < end)
			for (int i = 0; i < 100000; i++)
				x = x * 6364136223846793005L + 1442695040888963407L;
		sink = x;
	}
}
