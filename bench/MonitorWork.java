/*
 * The lock-heavy program of bench/monitor: synchronized blocks and
 * synchronized methods and little else, so the monitor pass's hook and the
 * JVMTI monitor events show undiluted. One line of output: a checksum
 * (the same on every run) and the enters it made, which the agent's
 * counts can be checked against.
 *
 *   java MonitorWork uncontended|contended [SCALE]
 *
 * uncontended  one thread, SCALE * 10^6 rounds of a synchronized block and a
 *              synchronized method on one object: every enter takes the fast
 *              path (no JVMTI event)
 * contended    four threads, each SCALE * 10^5 rounds of the same on one
 *              shared object: many enters block (the events' slow path)
 */
public final class MonitorWork {
	static final class Counter {
		long x, sum;

		synchronized void add(long k) {
			sum += k;
		}
	}

	static void rounds(Counter c, long rounds) {
		for (long i = 0; i < rounds; i++) {
			synchronized (c) {
				c.x ^= i;
			}
			c.add(i & 7);
		}
	}

	public static void main(String[] args) throws InterruptedException {
		boolean contended = args.length > 0 && args[0].equals("contended");
		long scale = args.length > 1 ? Long.parseLong(args[1]) : 10;
		int threads = contended ? 4 : 1;
		long each = contended ? scale * 100000 : scale * 1000000;
		Counter c = new Counter();
		Thread[] ts = new Thread[threads];
		for (int t = 0; t < threads; t++) {
			ts[t] = new Thread(() -> rounds(c, each));
			ts[t].start();
		}
		for (Thread t : ts)
			t.join();
		/* an xor and a sum, each under the lock: the same in any order */
		System.out.println("checksum " + c.x + " " + c.sum + " enters " + 2 * each * threads);
	}
}
