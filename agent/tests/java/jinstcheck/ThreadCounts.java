package jinstcheck;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/*
 * Deterministic work whose call counts are known, run by the main thread, a
 * pool of platform threads or one virtual thread per task (JDK 21 on,
 * reached by reflection so that this compiles for Java 8):
 *
 *   ThreadCounts main|pool|virtual THREADS TASKS STEPS
 *
 * Each task calls task() once, which calls step() STEPS times, each step
 * calling leaf() twice, and fib(10) once (177 calls). So task is called
 * TASKS times, step TASKS * STEPS, leaf 2 * TASKS * STEPS, fib 177 * TASKS,
 * whichever threads run them. Virtual threads park once per task, half-way,
 * so they unmount and mount again, maybe on another carrier. Prints the sum,
 * the same for every way of running it.
 */
public class ThreadCounts {
	static int leaf(int x) {
		return x * 31 + 7;
	}

	static int step(int i, int k) {
		return leaf(i) ^ leaf(k);
	}

	static int fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static long task(int i, int steps, boolean park) throws InterruptedException {
		long s = fib(10);
		for (int k = 0; k < steps; k++) {
			s += step(i, k);
			if (park && k == steps / 2)
				Thread.sleep(0, 1000);
		}
		return s;
	}

	public static void main(String[] args) throws Exception {
		String how = args[0];
		int threads = Integer.parseInt(args[1]), tasks = Integer.parseInt(args[2]);
		int steps = Integer.parseInt(args[3]);
		long sum = 0;
		if (how.equals("main")) {
			for (int i = 0; i < tasks; i++)
				sum += task(i, steps, false);
		} else {
			ExecutorService ex = how.equals("pool") ? Executors.newFixedThreadPool(threads) : virtualExecutor();
			List<Future<Long>> fs = new ArrayList<>();
			boolean park = how.equals("virtual");
			for (int i = 0; i < tasks; i++) {
				final int j = i;
				fs.add(ex.submit(() -> task(j, steps, park)));
			}
			for (Future<Long> f : fs)
				sum += f.get();
			ex.shutdown();
		}
		System.out.println("tasks " + tasks + ", sum " + sum);
	}

	static ExecutorService virtualExecutor() throws Exception {
		Method m = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
		return (ExecutorService) m.invoke(null);
	}
}
