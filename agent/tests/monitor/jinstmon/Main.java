package jinstmon;

import java.util.concurrent.CountDownLatch;

/**
 * Locks with known contention, for agent/tests/monitor/monitor_check.py.
 * Each phase prints what it measured itself ("REF key value"); the lines
 * marked "SITE:name" are the lock sites the check looks for.
 *
 *   block    a holder takes a Lock at SITE:hold and sleeps HOLD_MS; N
 *            threads, started once it holds it, block at SITE:blocked, each
 *            timing its own wait (System.nanoTime before the block and
 *            inside it)
 *   method   the same on a synchronized method: the holder in Counter.hold,
 *            the others in Counter.bump (SITE:bump)
 *   plain    one thread, no contention: SITE:plain LOOPS times, the
 *            synchronized Counter.quiet LOOPS times, and SITE:either on a Lock
 *            and on a Counter in turn, LOOPS times each (one site, two lock
 *            classes)
 *   wait     two wait(WAIT_MS) calls at SITE:wait, timed out
 *   clinit   a thread initializes Slow, whose initializer takes HOLD_MS;
 *            main reads Slow.V meanwhile (SITE:clinit), so waits for it on
 *            the VM's lock of the class (no synchronized code, no wait())
 *   hot      (argument "hot") a synchronized method and a block called until
 *            the JIT compiles them
 *   lines    (argument "lines") for each number K read from the standard
 *            input, K enters of SITE:lines, then "done K"
 *   rounds   (argument "rounds") for each number K read from the standard
 *            input, a round: K enters of SITE:round, then N threads
 *            blocked at SITE:blocked as in block; then "round K SINK" and
 *            "REF block_wait_ns W". Each round is a call of its own, so
 *            that it runs the class's code as it is then (a frame runs its
 *            method's code as it was when the frame began)
 *   stuck    (argument "stuck") a holder takes LOCK at SITE:stuckhold and
 *            keeps it until a line comes on the standard input; a thread
 *            blocks at SITE:blocked meanwhile ("stuck" once it does); then
 *            "released" once it has entered, and the end comes with the
 *            standard input's
 *   busy     (argument "busy") two threads take turns at SITE:busy, each
 *            holding the lock a millisecond, so one blocks there about
 *            every millisecond, until the standard input ends; prints
 *            "busy" once they run, then "busy SINK"
 */
public final class Main {
	static final int N = 3, HOLD_MS = 400, LOOPS = 1000, WAIT_MS = 150;

	static final class Lock {
	}

	static final class Counter {
		long n;

		synchronized void hold(CountDownLatch held, long ms) throws InterruptedException {
			held.countDown();
			Thread.sleep(ms);
		}

		/* A synchronized method's site is at its first line. */
		synchronized void bump() {
			n++; // SITE:bump
		}

		synchronized void quiet() {
			n++; // SITE:quiet
		}
	}

	static final Lock LOCK = new Lock();
	static long sink;

	static void holdBlock(CountDownLatch held) throws InterruptedException {
		synchronized (LOCK) { // SITE:hold
			held.countDown();
			Thread.sleep(HOLD_MS);
		}
	}

	static long enterBlock() {
		long t0 = System.nanoTime();
		long t1;
		synchronized (LOCK) { // SITE:blocked
			t1 = System.nanoTime();
			sink++;
		}
		return t1 - t0;
	}

	static long enterMethod(Counter c) {
		long t0 = System.nanoTime();
		c.bump();
		return System.nanoTime() - t0;
	}

	interface Waiter {
		long run() throws Exception;
	}

	/* The holder holds, then N threads block; the sum of their waits. */
	static long contend(Waiter holder, Waiter blocked, CountDownLatch held) throws Exception {
		Thread h = new Thread(() -> {
			try {
				holder.run();
			} catch (Exception e) {
				throw new RuntimeException(e);
			}
		});
		h.start();
		held.await();
		long[] waited = new long[N];
		Thread[] ts = new Thread[N];
		for (int i = 0; i < N; i++) {
			final int k = i;
			ts[i] = new Thread(() -> {
				try {
					waited[k] = blocked.run();
				} catch (Exception e) {
					throw new RuntimeException(e);
				}
			});
			ts[i].start();
		}
		for (Thread t : ts)
			t.join();
		h.join();
		long sum = 0;
		for (long w : waited)
			sum += w;
		return sum;
	}

	static void plain(Counter c) {
		for (int i = 0; i < LOOPS; i++) {
			synchronized (c) { // SITE:plain
				sink++;
			}
			c.quiet();
			either(LOCK);
			either(c);
		}
	}

	static void either(Object o) {
		synchronized (o) { // SITE:either
			sink++;
		}
	}

	static long waitTimed(Object o) throws InterruptedException {
		long t0 = System.nanoTime();
		synchronized (o) {
			o.wait(WAIT_MS); // SITE:wait
		}
		return System.nanoTime() - t0;
	}

	static void hot(Counter c) {
		for (int i = 0; i < 300000; i++) {
			c.quiet();
			synchronized (c) {
				sink += i;
			}
		}
	}

	static void lines() throws java.io.IOException {
		java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
		for (String l; (l = in.readLine()) != null;) {
			int k = Integer.parseInt(l.trim());
			for (int i = 0; i < k; i++)
				synchronized (LOCK) { // SITE:lines
					sink++;
				}
			System.out.println("done " + k);
		}
	}

	static void round(int k) {
		for (int i = 0; i < k; i++)
			synchronized (LOCK) { // SITE:round
				sink++;
			}
	}

	static final CountDownLatch SLOW_STARTED = new CountDownLatch(1);

	static final class Slow {
		static final int V;

		static {
			SLOW_STARTED.countDown();
			try {
				Thread.sleep(HOLD_MS);
			} catch (InterruptedException e) {
				throw new IllegalStateException(e);
			}
			V = 42;
		}
	}

	static long clinit() throws Exception {
		Thread t = new Thread(() -> sink += Slow.V);
		t.start();
		SLOW_STARTED.await();
		long v = Slow.V; // SITE:clinit
		t.join();
		return v;
	}

	static void stuck() throws Exception {
		CountDownLatch held = new CountDownLatch(1);
		Thread h = new Thread(() -> {
			synchronized (LOCK) { // SITE:stuckhold
				held.countDown();
				try {
					while (System.in.read() != '\n')
						;
				} catch (java.io.IOException e) {
					throw new IllegalStateException(e);
				}
			}
		});
		h.start();
		held.await();
		Thread b = new Thread(Main::enterBlock);
		b.start();
		while (b.getState() != Thread.State.BLOCKED)
			Thread.sleep(1);
		System.out.println("stuck");
		System.out.flush();
		b.join();
		h.join();
		System.out.println("released");
		System.out.flush();
		while (System.in.read() >= 0)
			;
	}

	static volatile boolean stopped;

	static void busyBlock() throws InterruptedException {
		synchronized (LOCK) { // SITE:busy
			sink++;
			Thread.sleep(1);
		}
	}

	static void busy() throws Exception {
		Thread[] t = new Thread[2];
		for (int i = 0; i < t.length; i++) {
			t[i] = new Thread(() -> {
				try {
					while (!stopped)
						busyBlock();
				} catch (InterruptedException e) {
					throw new IllegalStateException(e);
				}
			}, "busy-" + i);
			t[i].start();
		}
		System.out.println("busy");
		System.out.flush();
		while (System.in.read() >= 0)
			;
		stopped = true;
		for (Thread x : t)
			x.join();
		System.out.println("busy " + sink);
	}

	static void rounds() throws Exception {
		java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
		for (String l; (l = in.readLine()) != null;) {
			int k = Integer.parseInt(l.trim());
			round(k);
			CountDownLatch held = new CountDownLatch(1);
			long w = contend(() -> {
				holdBlock(held);
				return 0;
			}, Main::enterBlock, held);
			System.out.println("round " + k + " " + sink);
			System.out.println("REF block_wait_ns " + w);
		}
	}

	public static void main(String[] args) throws Exception {
		if (args.length > 0 && args[0].equals("rounds")) {
			rounds();
			return;
		}
		if (args.length > 0 && args[0].equals("stuck")) {
			stuck();
			return;
		}
		if (args.length > 0 && args[0].equals("busy")) {
			busy();
			return;
		}
		if (args.length > 0 && args[0].equals("lines")) {
			lines();
			return;
		}
		if (args.length > 0 && args[0].equals("hot")) {
			hot(new Counter());
			System.out.println("REF hot " + sink);
			return;
		}
		CountDownLatch held = new CountDownLatch(1);
		long block = contend(() -> {
			holdBlock(held);
			return 0;
		}, Main::enterBlock, held);
		System.out.println("REF block_wait_ns " + block);

		Counter c = new Counter();
		CountDownLatch held2 = new CountDownLatch(1);
		long method = contend(() -> {
			c.hold(held2, HOLD_MS);
			return 0;
		}, () -> enterMethod(c), held2);
		System.out.println("REF method_wait_ns " + method);

		plain(new Counter());
		Object w = new Object();
		long waited = waitTimed(w) + waitTimed(w);
		System.out.println("REF waited_ns " + waited);
		System.out.println("REF clinit " + clinit());
	}
}
