package jinstcheck;

import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * A program to attach to again and again (agent/tests/reattach.sh): it reads
 * a cycle number K per line of its standard input and makes a known number
 * of calls for it, then prints one line with their result; the test attaches
 * before the line and stops after the answer, so each session's counts are
 * exactly the calls of its cycle:
 *
 *   work     100 + K times on the main thread, each calling Leaf.leaf() 3 times
 *   side     K times on a thread that lives for the whole run
 *   fib      fib(10 + K % 5), recursive, on the main thread
 *   longRun  once, at K = 1 (with Runner's constructor and run): it runs on while later sessions come and go
 *            (its frame keeps the code of session 1), calls work() once in
 *            each cycle up to 5 (in the counts of that cycle), and returns
 *            in cycle 5, an exit of an earlier session's code
 *
 * The line "heap" asks for the heap in use after a collection, in KiB. An
 * empty line or the end of the input ends the program.
 */
public class Cycles {
	/* The two threads' bodies (no lambdas: their names are javac's). */
	static final class Runner implements Runnable {
		final boolean side;

		Runner(boolean side) {
			this.side = side;
		}

		public void run() {
			try {
				if (side)
					sideLoop();
				else
					longRun();
			} catch (InterruptedException e) {
				return;
			}
		}
	}

	static long sum;

	/* A class of its own: the test may instrument it ahead of time. */
	static final class Leaf {
		static int leaf(int i) {
			return i * 3 + 1;
		}
	}

	static void work(int i) {
		for (int j = 0; j < 3; j++)
			sum += Leaf.leaf(i + j);
	}

	static int fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static final Object LOCK = new Object();
	static int sideAsked, sideDone;

	static void side(int k) {
		sum += k;
	}

	/* The side thread: for each cycle asked, side() K times. */
	static void sideLoop() throws InterruptedException {
		int seen = 0;
		while (true) {
			int k;
			synchronized (LOCK) {
				while (sideAsked == seen)
					LOCK.wait();
				k = seen = sideAsked;
			}
			if (k < 0)
				return;
			for (int i = 0; i < k; i++)
				side(k);
			synchronized (LOCK) {
				sideDone = k;
				LOCK.notifyAll();
			}
		}
	}

	static void askSide(int k) throws InterruptedException {
		synchronized (LOCK) {
			sideAsked = k;
			LOCK.notifyAll();
			while (k > 0 && sideDone != k)
				LOCK.wait();
		}
	}

	static int longCycle;

	/* Entered in cycle 1, left in cycle 5 (see above). */
	static void longRun() throws InterruptedException {
		int last = 0;
		while (last < 5) {
			synchronized (LOCK) {
				while (longCycle <= last)
					LOCK.wait();
				last = longCycle;
			}
			work(last);
			synchronized (LOCK) {
				longCycle = -last;
				LOCK.notifyAll();
			}
		}
	}

	/* Cycles 1 to 5: longRun's call of work() for k, done. */
	static void askLong(int k) throws InterruptedException {
		synchronized (LOCK) {
			longCycle = k;
			LOCK.notifyAll();
			while (longCycle != -k)
				LOCK.wait();
		}
	}

	public static void main(String[] args) throws Exception {
		/* Leaf first: instrumented ahead of time, its run's ids come before
		 * those the agent gives Runner. */
		sum = Leaf.leaf(0);
		Thread sideThread = new Thread(new Runner(true), "side");
		sideThread.start();
		Thread longThread = null;
		int last = 0;
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
		System.out.println("cycles: running");
		System.out.flush();
		String line;
		while ((line = in.readLine()) != null && !line.isEmpty()) {
			if (line.equals("heap")) {
				Runtime r = Runtime.getRuntime();
				System.gc();
				System.out.println("heap: " + (r.totalMemory() - r.freeMemory()) / 1024);
				System.out.flush();
				continue;
			}
			int k = Integer.parseInt(line.trim());
			last = k;
			sum = 0;
			if (k == 1) {
				longThread = new Thread(new Runner(false), "long");
				longThread.start();
			}
			if (k <= 5)
				askLong(k);
			for (int i = 0; i < 100 + k; i++)
				work(i);
			sum += fib(10 + k % 5);
			askSide(k);
			System.out.println("cycle " + k + ": " + sum);
			System.out.flush();
		}
		askSide(-1);
		sideThread.join();
		if (longThread != null) {
			if (last < 5)
				askLong(5); /* (ended before cycle 5: longRun returns now) */
			longThread.join();
		}
		System.out.println("cycles: done");
	}
}
