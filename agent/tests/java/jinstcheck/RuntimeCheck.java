package jinstcheck;

import java.lang.reflect.Field;
import java.lang.reflect.Method;

import jinst.rt.Hooks;

/**
 * Drives the runtime's hooks directly, as instrumented code would, while the
 * agent runs (it defines jinst.rt in the bootstrap loader and engages the
 * hooks), then reads the runtime's snapshots. "times" runs with the clock
 * stopped (tick=0) and samples by hand, so every time is exact: counts from
 * many threads, each in its row of the grid, growth past the first arrays
 * and past a row's ids, time given to the stacks as the clock finds them
 * (self to the top, inclusive once per method), to a thread that waits,
 * exits that skip frames, a stack deeper than a row holds, rows given
 * again as threads end, the call tree and its bound; "events" the
 * bounded, balanced timelines.
 * Compiled against runtime-java; run without it on the class path. Prints
 * FAIL lines and exits 1 on any failure.
 */
public class RuntimeCheck {
	static int failures;

	static void check(boolean ok, String what) {
		if (!ok) {
			failures++;
			System.out.println("FAIL " + what);
		}
	}

	static Object call(String name) throws Exception {
		Method m = Hooks.class.getDeclaredMethod(name);
		m.setAccessible(true);
		return m.invoke(null);
	}

	static long[] snapshot(String name) throws Exception {
		return (long[]) call(name);
	}

	static Method sample;
	static long now;

	/* Moves the clock on by dt nanoseconds: Hooks.sample, as the agent's
	 * clock thread calls it. */
	static synchronized void tick(long dt) throws Exception {
		now += dt;
		sample.invoke(null, now);
	}

	public static void main(String[] args) throws Exception {
		check(Hooks.class.getClassLoader() == null, "Hooks is not in the bootstrap loader");
		Field sampled = Hooks.class.getDeclaredField("sampled");
		sampled.setAccessible(true);
		now = sampled.getLong(null);
		sample = Hooks.class.getDeclaredMethod("sample", long.class);
		sample.setAccessible(true);
		if (args[0].equals("times"))
			times();
		else
			events(Integer.parseInt(args[1]));
		System.out.println(failures == 0 ? "runtime: all checks passed" : "runtime: " + failures + " failed");
		System.exit(failures == 0 ? 0 : 1);
	}

	/* self and inclusive ns of id in a snapshotTimes */
	static long self(long[] times, int id) {
		return 3 * id + 2 < times.length ? times[3 * id + 2] : 0;
	}

	static long total(long[] times, int id) {
		return 3 * id + 1 < times.length ? times[3 * id + 1] : 0;
	}

	static void times() throws Exception {
		/* Eight threads at once, each in its row of the grid (their ids
		 * are consecutive: eight rows); the sum is exact. */
		final int threads = 8, calls = 200000;
		final Thread[] t = new Thread[threads];
		final Thread[] owners = new Thread[threads];
		for (int i = 0; i < threads; i++) {
			final int me = i;
			t[i] = new Thread(new Runnable() {
				public void run() {
					for (int j = 0; j < calls; j++) {
						Hooks.enter(40);
						Hooks.exit(40);
						Hooks.called(39);
					}
					try {
						owners[me] = (Thread) call("owner");
					} catch (Exception e) {
						throw new RuntimeException(e);
					}
				}
			});
			t[i].start();
		}
		for (int i = 0; i < threads; i++)
			t[i].join();
		int owned = 0;
		for (int i = 0; i < threads; i++)
			owned += owners[i] == t[i] ? 1 : 0;
		check(owned == threads, owned + " of the eight threads had their row's stack");

		Hooks.enter(5000); /* past the first arrays */
		Hooks.exit(5000);
		check(call("owner") == Thread.currentThread(), "main does not have its row's stack");
		for (int i = 0; i < 2; i++) {
			Hooks.enter(5000);
			Hooks.exit(5000);
		}
		final int big = (1 << 17) + 5; /* past a row's ids */
		for (int i = 0; i < 3; i++) {
			Hooks.enter(big);
			Hooks.called(big + 1);
			Hooks.exit(big);
		}

		/* Time goes to the stack where the clock moves: 30 ms under three
		 * frames of 41 are its self time, and its inclusive time once. */
		Hooks.enter(41);
		Hooks.enter(41);
		Hooks.enter(41);
		tick(30000000L);
		Hooks.exit(41);
		Hooks.exit(41);
		Hooks.exit(41);
		/* 50 -> 51: self 16 and 7, inclusive 23 and 7 */
		for (int i = 0; i < 2; i++) {
			Hooks.enter(50);
			tick(i == 0 ? 5 : 0);
			Hooks.enter(51);
			tick(i == 0 ? 7 : 0);
			Hooks.exit(51);
			tick(i == 0 ? 11 : 0);
			Hooks.exit(50);
		}
		/* A thread that waits in 70 while the clock moves three times: its
		 * stack does not change, and the time waits to be added once. */
		final Object lock = new Object();
		final boolean[] state = new boolean[2];
		final Object[] waiterOwner = new Object[1];
		Thread waiter = new Thread(new Runnable() {
			public void run() {
				Hooks.enter(70);
				try {
					waiterOwner[0] = call("owner");
				} catch (Exception e) {
					throw new RuntimeException(e);
				}
				synchronized (lock) {
					state[0] = true;
					lock.notifyAll();
					while (!state[1])
						try {
							lock.wait();
						} catch (InterruptedException e) {
							return;
						}
				}
				Hooks.exit(70);
			}
		}, "waiter");
		waiter.start();
		synchronized (lock) {
			while (!state[0])
				lock.wait();
		}
		tick(100);
		tick(200);
		tick(300);
		synchronized (lock) {
			state[1] = true;
			lock.notifyAll();
		}
		waiter.join();
		check(waiterOwner[0] == waiter, "the waiter's stack is not its row's");
		/* 43 had no exit: popped with 42; 44 was never entered: its exit
		 * is ignored. The stack is empty after: the 1000 ns go nowhere. */
		Hooks.enter(42);
		Hooks.enter(43);
		tick(3);
		Hooks.exitThrow(42);
		Hooks.exit(44);
		tick(1000);
		Hooks.enter(47);
		Hooks.exit(47);
		/* Deeper than a row's stack (2^14 - 1 frames): the frames
		 * past it are counted and their exits pop nothing, so 60 stays
		 * under them: 5 to the top frame kept (61), then 7 to 60. */
		Hooks.enter(60);
		for (int i = 0; i < 69999; i++)
			Hooks.enter(61);
		tick(5);
		for (int i = 0; i < 69999; i++)
			Hooks.exit(61);
		tick(7);
		Hooks.exit(60);
		tick(11);
		Hooks.enter(62);
		Hooks.exit(62);
		/* The same on another thread, in its row: 5 to 81, then 7 to 80. */
		Thread deep = new Thread(new Runnable() {
			public void run() {
				try {
					Hooks.enter(80);
					for (int i = 0; i < 20000; i++)
						Hooks.enter(81);
					tick(5);
					for (int i = 0; i < 20000; i++)
						Hooks.exit(81);
					tick(7);
					Hooks.exit(80);
				} catch (Exception e) {
					throw new RuntimeException(e);
				}
			}
		}, "deep");
		deep.start();
		deep.join();

		/* Thread after thread: what each leaves is folded in when it ends,
		 * so counts stay exact and the registry small. */
		for (int round = 0; round < 40; round++) {
			Thread[] burst = new Thread[50];
			for (int i = 0; i < burst.length; i++) {
				burst[i] = new Thread(new Runnable() {
					public void run() {
						try {
							for (int j = 0; j < 10; j++) {
								Hooks.enter(45);
								Hooks.enter(46);
								tick(1);
								Hooks.exit(46);
								Hooks.exit(45);
							}
						} catch (Exception e) {
							throw new RuntimeException(e);
						}
					}
				});
				burst[i].start();
			}
			for (int i = 0; i < burst.length; i++)
				burst[i].join();
		}
		/* A thread whose ThreadLocals are erased after each task (a
		 * Cleaner's, an InnocuousThread): its one context is found again,
		 * not made anew per task. */
		/* (java.lang.ref.Cleaner, Java 9, by reflection: this compiles for 8) */
		Class<?> cleanerClass = Class.forName("java.lang.ref.Cleaner");
		Object cleaner = cleanerClass.getMethod("create").invoke(null);
		Method register = cleanerClass.getMethod("register", Object.class, Runnable.class);
		Field lastField = Hooks.class.getDeclaredField("BY_TID");
		lastField.setAccessible(true);
		final Object[] last = (Object[]) lastField.get(null);
		final int[] cleaned = new int[1];
		for (int i = 0; i < 1000; i++)
			register.invoke(cleaner, new Object(), new Runnable() {
				public void run() {
					/* (the contexts by thread id, forgotten: the thread's
					 * own must be found through its erased ThreadLocals) */
					for (int j = 0; j < last.length; j++)
						last[j] = null;
					Hooks.called(48);
					synchronized (cleaned) {
						cleaned[0]++;
					}
				}
			});
		for (int i = 0; i < 200; i++) {
			synchronized (cleaned) {
				if (cleaned[0] == 1000)
					break;
			}
			System.gc();
			Thread.sleep(10);
		}
		int liveThreads = (Integer) call("liveThreads");
		check(liveThreads < 20, liveThreads + " threads in the registry after 2000 ended and 1000 tasks of a cleaner");

		long[] counts = snapshot("snapshotCounts");
		check(counts[45] == 20000 && counts[46] == 20000, "ended threads: " + counts[45] + ", " + counts[46]);
		check(counts.length > big + 1, "counts array of " + counts.length);
		check(counts[40] == (long) threads * calls && counts[39] == (long) threads * calls,
		      "ids 40 and 39 counted " + counts[40] + " and " + counts[39] + " times, not " + threads * calls);
		check(counts[5000] == 3 && counts[big] == 3 && counts[big + 1] == 3,
		      "ids 5000, " + big + ", " + (big + 1) + ": " + counts[5000] + ", " + counts[big] + ", " + counts[big + 1]);
		check(counts[41] == 3 && counts[42] == 1 && counts[43] == 1 && counts[44] == 0, "ids 41-44");
		check(counts[60] == 1 && counts[61] == 69999 && counts[62] == 1, "ids 60-62");
		check(counts[48] == 1000, "the cleaner's tasks: " + counts[48]);

		long[] times = snapshot("snapshotTimes");
		check(times[3 * 40] == (long) threads * calls && times[3 * 41] == 3, "calls in the times");
		check(self(times, 41) == 30000000L && total(times, 41) == 30000000L,
		      "recursion: self " + self(times, 41) + ", inclusive " + total(times, 41) + ", not 30 ms each");
		check(self(times, 50) == 16 && total(times, 50) == 23 && self(times, 51) == 7 && total(times, 51) == 7,
		      "50 -> 51: " + self(times, 50) + "/" + total(times, 50) + ", " + self(times, 51) + "/" + total(times, 51));
		check(self(times, 42) == 0 && total(times, 42) == 3 && self(times, 43) == 3 && total(times, 43) == 3,
		      "skipped frame: 42 " + self(times, 42) + "/" + total(times, 42) + ", 43 " + self(times, 43) + "/" + total(times, 43));
		check(total(times, 47) == 0 && total(times, 62) == 0, "time given to an empty stack");
		check(self(times, 70) == 600 && total(times, 70) == 600, "a waiting thread: " + self(times, 70) + "/" + total(times, 70));
		check(self(times, 61) == 5 && total(times, 61) == 5 && self(times, 60) == 7 && total(times, 60) == 12,
		      "deep stack: 60 " + self(times, 60) + "/" + total(times, 60) + ", 61 " + self(times, 61) + "/" + total(times, 61));
		check(times[3 * 81] == 20000 && self(times, 81) == 5 && total(times, 81) == 5 && self(times, 80) == 7
		      && total(times, 80) == 12, "deep stack on another thread: 80 " + self(times, 80) + "/" + total(times, 80)
		      + ", 81 " + self(times, 81) + "/" + total(times, 81) + ", " + times[3 * 81] + " calls");

		long[] tree = snapshot("snapshotTree");
		/* node j: tree[base + 3 * (j - 1)]: parent, method, self */
		boolean found = false, folded = false;
		int k = 1;
		for (long th = 0; th < tree[0]; th++) {
			int nodes = (int) tree[k++];
			int base = k;
			for (int j = 0; j < nodes; j++, k += 3) {
				int parent = (int) tree[k];
				long method = tree[k + 1], self = tree[k + 2];
				if (parent < 1)
					continue;
				long pm = tree[base + 3 * (parent - 1) + 1], pself = tree[base + 3 * (parent - 1) + 2];
				if (method == 51 && pm == 50) {
					check(self == 7 && pself == 16 && tree[base + 3 * (parent - 1)] == 0,
					      "50 -> 51 in the tree: self " + pself + " and " + self + ", not 16 and 7");
					found = true;
				}
				/* The ended threads' stacks, in the one tree: 45 -> 46. */
				folded |= method == 46 && pm == 45 && self > 0;
			}
		}
		check(found, "call tree has no node 50 -> 51");
		check(folded, "ended threads' call trees not folded into one 45 -> 46 with time");

		/* A thread with more distinct call paths (1100 callers x 1000
		 * callees, the clock moving in each) than the tree may hold
		 * (Sampler.MAX_NODES, 2^20): new paths stop 2^12 nodes short of the
		 * bound, and the time of a caller that found the tree full goes to
		 * its child "(tree full)" (method -1), one per caller: the callers
		 * past the bound, under 1999, share one, and so do the callees of
		 * the caller that was being filled. No time is lost. */
		Thread wide = new Thread(new Runnable() {
			public void run() {
				try {
					Hooks.enter(1998);
					Hooks.enter(1999);
					for (int i = 0; i < 1100; i++) {
						Hooks.enter(2000 + i);
						for (int j = 0; j < 1000; j++) {
							Hooks.enter(4000 + j);
							tick(1);
							Hooks.exit(4000 + j);
						}
						Hooks.exit(2000 + i);
					}
					Hooks.exit(1999);
					Hooks.exit(1998);
				} catch (Exception e) {
					throw new RuntimeException(e);
				}
			}
		}, "wide");
		wide.start();
		wide.join();
		tree = snapshot("snapshotTree");
		int most = 0, fullNodes = 0;
		long fullUnder1999 = 0, wideTime = 0;
		k = 1;
		for (long th = 0; th < tree[0]; th++) {
			int nodes = (int) tree[k++];
			/* the time under 1998 (the tree of the ended threads holds
			 * the bursts' above too) */
			long sum = 0;
			long[] root = new long[nodes + 1];
			for (int j = 1; j <= nodes; j++) {
				long method = tree[k + 3 * (j - 1) + 1];
				int parent = (int) tree[k + 3 * (j - 1)];
				root[j] = parent == 0 ? method : root[parent];
				if (root[j] == 1998)
					sum += tree[k + 3 * (j - 1) + 2];
				if (method == -1) {
					fullNodes++;
					if (parent > 0 && tree[k + 3 * (parent - 1) + 1] == 1999)
						fullUnder1999 += tree[k + 3 * (j - 1) + 2];
				}
			}
			if (nodes > most) {
				most = nodes;
				wideTime = sum;
			}
			k += 3 * nodes;
		}
		check(most >= (1 << 20) - (1 << 12) - 1 && most < 1 << 20,
		      "the largest tree has " + most + " nodes, not between 2^20 - 2^12 - 1 and 2^20 - 1");
		/* 1100 callers, each a path of a thousand and one nodes: about a
		 * thousand and forty fit (less what the tree, which all threads
		 * share, held before), the rest are "(tree full)" under 1999 */
		check(fullNodes == 2 && fullUnder1999 > 0 && fullUnder1999 < 200 * 1000,
		      fullNodes + " (tree full) nodes (not 2), " + fullUnder1999 + " ns under 1999's");
		check(wideTime == 1100 * 1000, "the wide thread's tree holds " + wideTime + " ns of 1100000");
	}

	static void events(final int capacity) throws Exception {
		Thread t = new Thread(new Runnable() {
			public void run() {
				for (int j = 0; j < 1000; j++) {
					Hooks.enter(60);
					Hooks.enter(61);
					Hooks.enter(62);
					Hooks.exit(62);
					Hooks.exit(61);
					Hooks.exit(60);
				}
			}
		}, "events-thread");
		t.start();
		t.join();
		long[] ev = snapshot("snapshotEvents");
		String[] tn = (String[]) call("threadNames");
		int k = 1;
		boolean seen = false;
		for (int th = 0; th < ev[0]; th++) {
			long tid = ev[k], n = ev[k + 1], dropped = ev[k + 2];
			k += 3;
			if (tn[th].equals("events-thread")) {
				seen = true;
				check(tid == t.getId(), "thread id " + tid);
				check(n <= capacity && n >= capacity - 6, n + " events kept of a capacity of " + capacity);
				check(dropped > 0, "nothing dropped");
				int depth = 0;
				long last = Long.MIN_VALUE;
				int[] stack = new int[16];
				for (int j = 0; j < n; j++) {
					long ts = ev[k + 2 * j], word = ev[k + 2 * j + 1];
					check(ts >= last, "time goes back");
					last = ts;
					int id = (int) (word >> 1);
					if ((word & 1) == 0) {
						stack[depth++] = id;
					} else {
						check(depth > 0 && stack[depth - 1] == id, "exit of " + id + " does not match");
						if (depth > 0)
							depth--;
					}
				}
				check(depth == 0, "timeline ends with " + depth + " open entries");
			}
			k += 2 * n;
		}
		check(seen, "no timeline for events-thread");
	}
}
