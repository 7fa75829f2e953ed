package jinstalone;

import java.lang.reflect.Field;

/**
 * A program whose calls are known, for the standalone runtime's test
 * (run_standalone.sh, expected in calls.tsv): work(I) N times, fib(15)
 * (1,973 calls), side() 500 times on a thread of its own, which sleeps
 * 30 ms. Then it prints the runtime's mode and whether its clock runs, and
 * exits with the code given.
 *   Calls N EXIT [dump]   (dump: calls jinst.rt.Control.dump() first)
 */
public class Calls {
	static long sum;

	static void work(int i) {
		sum += i;
	}

	static int fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static void side() {
		sum++;
	}

	static class Worker implements Runnable {
		public void run() {
			for (int i = 0; i < 500; i++)
				side();
			try {
				Thread.sleep(30);
			} catch (InterruptedException e) {
				Thread.currentThread().interrupt();
			}
		}
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]);
		for (int i = 0; i < n; i++)
			work(i);
		sum += fib(15);
		Thread t = new Thread(new Worker());
		t.start();
		t.join();
		if (args.length > 2 && args[2].equals("dump")) {
			Class.forName("jinst.rt.Control").getMethod("dump").invoke(null);
			System.out.println("dumped");
		}
		System.out.println("sum " + sum);
		System.out.println("mode " + mode() + " clock " + clocks());
		System.exit(Integer.parseInt(args[1]));
	}

	/* Hooks.mode, or -1 without the runtime. */
	static int mode() throws Exception {
		try {
			Field f = Class.forName("jinst.rt.Hooks").getDeclaredField("mode");
			f.setAccessible(true);
			return f.getInt(null);
		} catch (ClassNotFoundException e) {
			return -1;
		}
	}

	static int clocks() {
		Thread[] all = new Thread[Thread.activeCount() + 16];
		int k = Thread.enumerate(all), n = 0;
		for (int i = 0; i < k; i++)
			if (all[i].getName().equals("jinst clock"))
				n++;
		return n;
	}
}
