package jinstmon;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Virtual threads blocked on one lock (monitor_check.py, JDK 21 and
 * later): THREADS virtual threads take it ROUNDS times each at SITE:virtual
 * and hold it HOLD_MS, each timing its own waits. From JDK 24 a virtual
 * thread blocked on a monitor leaves its carrier, and may come back on
 * another. Prints "REF virtual_wait_ns N".
 */
public final class Virtual {
	static final int THREADS = 20, ROUNDS = 10, HOLD_MS = 2;
	static final Object LOCK = new Object();
	static final AtomicLong WAITED = new AtomicLong();
	static long sink;

	static void round() throws InterruptedException {
		long t0 = System.nanoTime();
		synchronized (LOCK) { // SITE:virtual
			WAITED.addAndGet(System.nanoTime() - t0);
			sink++;
			Thread.sleep(HOLD_MS);
		}
	}

	public static void main(String[] args) throws Exception {
		Thread[] ts = new Thread[THREADS];
		for (int i = 0; i < THREADS; i++)
			ts[i] = Thread.ofVirtual().start(() -> {
				try {
					for (int k = 0; k < ROUNDS; k++)
						round();
				} catch (InterruptedException e) {
					throw new RuntimeException(e);
				}
			});
		for (Thread t : ts)
			t.join();
		System.out.println("REF virtual_wait_ns " + WAITED.get());
	}
}
