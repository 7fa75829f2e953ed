package jinsttest;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.RecursiveTask;
import java.util.stream.LongStream;

/*
 * Threads under stress: a thread pool, ForkJoin tasks and parallel streams,
 * contended monitors, wait/notify, start/join, and exceptions thrown in one
 * thread and seen in another. Whatever the scheduling, the output and the
 * number of calls of each method below are fixed.
 */
public class Concurrency {
	static final Object lock = new Object();
	static long shared;
	static int turn;

	/* A task of the pool: every tenth throws, and the caller sees it from get(). */
	static int task(int i) {
		if (i % 10 == 0)
			throw new IllegalStateException("task " + i);
		return i * 3;
	}

	static long square(long x) {
		return x * x;
	}

	static void add(long v) {
		synchronized (lock) {
			shared += v;
		}
	}

	static synchronized int next(int k) {
		return k + 1;
	}

	static void fail(int k) {
		throw new ArithmeticException("worker " + k);
	}

	/* A ForkJoin Fibonacci: compute() runs once per node above the threshold. */
	static final class Fib extends RecursiveTask<Long> {
		final int n;

		Fib(int n) {
			this.n = n;
		}

		static long seq(int n) {
			return n < 2 ? n : seq(n - 1) + seq(n - 2);
		}

		protected Long compute() {
			if (n <= 12)
				return seq(n);
			Fib a = new Fib(n - 1);
			a.fork();
			long b = new Fib(n - 2).compute();
			return a.join() + b;
		}
	}

	/* Two threads take turns on a monitor with wait/notifyAll. */
	static void pingPong(final int rounds) throws InterruptedException {
		Thread[] t = new Thread[2];
		for (int p = 0; p < 2; p++) {
			final int me = p;
			t[p] = new Thread(() -> {
				for (int r = 0; r < rounds; r++) {
					synchronized (lock) {
						while (turn % 2 != me) {
							try {
								lock.wait();
							} catch (InterruptedException e) {
								throw new RuntimeException(e);
							}
						}
						turn = next(turn);
						lock.notifyAll();
					}
				}
			}, "pingpong-" + p);
			t[p].start();
		}
		for (Thread x : t)
			x.join();
	}

	public static void main(String[] args) throws Exception {
		// 1. a pool: 200 tasks, 20 of which throw into their Future
		ExecutorService pool = Executors.newFixedThreadPool(4);
		List<Future<Integer>> futures = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			final int k = i;
			futures.add(pool.submit(new Callable<Integer>() {
				public Integer call() {
					return task(k);
				}
			}));
		}
		long sum = 0;
		int failed = 0;
		TreeSet<String> messages = new TreeSet<>();
		for (Future<Integer> f : futures) {
			try {
				sum += f.get();
			} catch (ExecutionException e) {
				failed++;
				messages.add(e.getCause().getMessage());
			}
		}
		pool.shutdown();
		System.out.println("pool: sum " + sum + ", " + failed + " failed, first " + messages.first());

		// 2. a parallel stream on the common ForkJoin pool
		long squares = LongStream.rangeClosed(1, 100000).parallel().map(Concurrency::square).sum();
		System.out.println("parallel stream: " + squares);

		// 3. ForkJoin tasks on a pool of their own
		ForkJoinPool fj = new ForkJoinPool(4);
		System.out.println("forkjoin fib(24): " + fj.invoke(new Fib(24)));
		fj.shutdown();

		// 4. eight threads contend for one monitor; odd ones die of an exception
		final TreeSet<String> uncaught = new TreeSet<>();
		Thread[] t = new Thread[8];
		for (int i = 0; i < t.length; i++) {
			final int k = i;
			t[i] = new Thread(() -> {
				for (int j = 0; j < 10000; j++)
					add(j);
				if (k % 2 == 1)
					fail(k);
			}, "contender-" + i);
			t[i].setUncaughtExceptionHandler((th, e) -> {
				synchronized (uncaught) {
					uncaught.add(th.getName() + ": " + e.getMessage());
				}
			});
			t[i].start();
		}
		for (Thread x : t)
			x.join();
		System.out.println("monitor: " + shared + ", uncaught " + uncaught);

		// 5. a CompletableFuture chain whose exception crosses threads
		String cf = CompletableFuture.supplyAsync(() -> task(7))
				.thenApplyAsync(v -> task(v - 21))
				.exceptionally(e -> -1)
				.thenApply(v -> "value " + v)
				.join();
		System.out.println("completable: " + cf);

		// 6. wait/notify
		pingPong(500);
		System.out.println("ping-pong: " + turn + " turns");
	}
}
