package jinstcheck;

import java.lang.reflect.Method;

import jinst.rt.Hooks;

/**
 * Drives the runtime's hooks directly, as instrumented code would, while the
 * agent runs (it defines jinst.rt in the bootstrap loader and engages the
 * hooks), then reads the runtime's snapshots: exact counts from many
 * threads, growth past the initial arrays, inclusive time of a recursion
 * counted once, exits that skip frames, the call tree, and bounded,
 * balanced timelines. Compiled against runtime-java; run without it on the
 * class path. Prints FAIL lines and exits 1 on any failure.
 */
public class RuntimeCheck {
	static int failures;

	static void check(boolean ok, String what) {
		if (!ok) {
			failures++;
			System.out.println("FAIL " + what);
		}
	}

	static long[] snapshot(String name) throws Exception {
		Method m = Hooks.class.getDeclaredMethod(name);
		m.setAccessible(true);
		return (long[]) m.invoke(null);
	}

	public static void main(String[] args) throws Exception {
		check(Hooks.class.getClassLoader() == null, "Hooks is not in the bootstrap loader");
		if (args[0].equals("times"))
			times();
		else
			events(Integer.parseInt(args[1]));
		System.out.println(failures == 0 ? "runtime: all checks passed" : "runtime: " + failures + " failed");
		System.exit(failures == 0 ? 0 : 1);
	}

	static void times() throws Exception {
		final int threads = 8, calls = 200000;
		Thread[] t = new Thread[threads];
		for (int i = 0; i < threads; i++) {
			t[i] = new Thread(new Runnable() {
				public void run() {
					for (int j = 0; j < calls; j++) {
						Hooks.enter(40);
						Hooks.exit(40);
					}
				}
			});
			t[i].start();
		}
		for (int i = 0; i < threads; i++)
			t[i].join();

		for (int i = 0; i < 3; i++) {
			Hooks.enter(5000); /* past the first arrays */
			Hooks.exit(5000);
		}

		long start = System.nanoTime();
		Hooks.enter(41);
		Hooks.enter(41);
		Hooks.enter(41);
		Thread.sleep(30);
		Hooks.exit(41);
		Hooks.exit(41);
		Hooks.exit(41);
		long wall = System.nanoTime() - start;

		Hooks.enter(42);
		Hooks.enter(43);
		Hooks.exitThrow(42); /* 43 had no exit: popped with 42 */
		Hooks.exit(44);      /* no entry at all: ignored */

		for (int i = 0; i < 2; i++) {
			Hooks.enter(50);
			Hooks.enter(51);
			Hooks.exit(51);
			Hooks.exit(50);
		}

		/* Thread after thread: what each leaves is folded in when it ends,
		 * so counts stay exact and the registry small. */
		for (int round = 0; round < 40; round++) {
			Thread[] burst = new Thread[50];
			for (int i = 0; i < burst.length; i++) {
				burst[i] = new Thread(new Runnable() {
					public void run() {
						for (int j = 0; j < 10; j++) {
							Hooks.enter(45);
							Hooks.enter(46);
							Hooks.exit(46);
							Hooks.exit(45);
						}
					}
				});
				burst[i].start();
			}
			for (int i = 0; i < burst.length; i++)
				burst[i].join();
		}
		Method live = Hooks.class.getDeclaredMethod("liveThreads");
		live.setAccessible(true);
		int liveThreads = (Integer) live.invoke(null);
		check(liveThreads < 20, liveThreads + " threads in the registry after 2000 ended");

		long[] counts = snapshot("snapshotCounts");
		check(counts[45] == 20000 && counts[46] == 20000, "ended threads: " + counts[45] + ", " + counts[46]);
		check(counts.length > 5000, "counts array of " + counts.length);
		check(counts[40] == (long) threads * calls, "id 40 counted " + counts[40] + " times, not " + threads * calls);
		check(counts[5000] == 3, "id 5000 counted " + counts[5000]);
		check(counts[41] == 3 && counts[42] == 1 && counts[43] == 1 && counts[44] == 0, "ids 41-44");

		long[] times = snapshot("snapshotTimes");
		check(times[3 * 40] == (long) threads * calls, "id 40: " + times[3 * 40] + " completed calls");
		check(times[3 * 41] == 3, "id 41: " + times[3 * 41] + " calls");
		long total41 = times[3 * 41 + 1], self41 = times[3 * 41 + 2];
		check(total41 >= 30000000L && total41 <= wall, "recursion: inclusive " + total41 + " ns, wall " + wall);
		check(self41 >= 30000000L && self41 <= total41, "recursion: self " + self41 + " of " + total41);
		check(times[3 * 42] == 1 && times[3 * 43] == 1 && times[3 * 44] == 0, "skipped frame popped, stray exit ignored");
		check(times[3 * 43 + 1] <= times[3 * 42 + 1], "callee time within caller's");

		long[] tree = snapshot("snapshotTree");
		boolean found = false;
		int k = 1;
		for (long th = 0; th < tree[0]; th++) {
			int nodes = (int) tree[k++];
			int base = k;
			for (int j = 0; j < nodes; j++, k += 4) {
				/* node j + 1: parent, method, calls, time */
				if (tree[k + 1] == 51 && tree[k + 2] == 2) {
					int parent = (int) tree[k];
					check(parent >= 1 && tree[base + 4 * (parent - 1) + 1] == 50
					      && tree[base + 4 * (parent - 1)] == 0 && tree[base + 4 * (parent - 1) + 2] == 2,
					      "51 is a child of 50 under the root, both called twice");
					found = true;
				}
			}
		}
		check(found, "call tree has no node 50 -> 51");
		/* The ended threads' trees, folded: one node 45 -> 46 with every call. */
		boolean folded = false;
		k = 1;
		for (long th = 0; th < tree[0]; th++) {
			int nodes = (int) tree[k++];
			int base = k;
			for (int j = 0; j < nodes; j++, k += 4)
				if (tree[k + 1] == 46 && tree[k + 2] == 20000) {
					int parent = (int) tree[k];
					folded |= parent >= 1 && tree[base + 4 * (parent - 1) + 1] == 45 && tree[base + 4 * (parent - 1) + 2] == 20000;
				}
		}
		check(folded, "ended threads' call trees not folded into one 45 -> 46 with 20000 calls");

		/* A thread with more distinct call paths (1100 callers x 1000
		 * callees) than a tree may hold (Ctx.MAX_NODES, 2^20): new paths stop
		 * 2^12 nodes short of the bound, and the calls of a caller that found
		 * the tree full go to its child "(tree full)" (method -1), one per
		 * caller: the callers past the bound, under 1999, share one, and so
		 * do the callees of the caller that was being filled. No node's
		 * callees take more time than it. */
		Thread wide = new Thread(new Runnable() {
			public void run() {
				Hooks.enter(1998); /* two callers of them all: their times hold theirs */
				Hooks.enter(1999);
				for (int i = 0; i < 1100; i++) {
					Hooks.enter(2000 + i);
					for (int j = 0; j < 1000; j++) {
						Hooks.enter(4000 + j);
						Hooks.exit(4000 + j);
					}
					Hooks.exit(2000 + i);
				}
				Hooks.exit(1999);
				Hooks.exit(1998);
			}
		}, "wide");
		wide.start();
		wide.join();
		tree = snapshot("snapshotTree");
		int most = 0, fullUnder1999 = 0, fullNodes = 0;
		k = 1;
		for (long th = 0; th < tree[0]; th++) {
			int nodes = (int) tree[k++];
			most = Math.max(most, nodes);
			for (int j = 1; j <= nodes; j++)
				if (tree[k + 4 * (j - 1) + 1] == -1) {
					fullNodes++;
					int parent = (int) tree[k + 4 * (j - 1)];
					if (parent > 0 && tree[k + 4 * (parent - 1) + 1] == 1999)
						fullUnder1999 += (int) tree[k + 4 * (j - 1) + 2];
				}
			long[] under = new long[nodes + 1];
			for (int j = 1; j <= nodes; j++) {
				int parent = (int) tree[k + 4 * (j - 1)];
				if (parent > 0)
					under[parent] += tree[k + 4 * (j - 1) + 3];
			}
			for (int j = 1; j <= nodes; j++)
				if (under[j] > tree[k + 4 * (j - 1) + 3]) {
					check(false, "node " + j + " (method " + tree[k + 4 * (j - 1) + 1] + "): its callees took " + under[j]
					             + " ns, more than its " + tree[k + 4 * (j - 1) + 3]);
					break;
				}
			k += 4 * nodes;
		}
		check(most >= (1 << 20) - (1 << 12) - 1 && most < 1 << 20,
		      "the largest tree has " + most + " nodes, not between 2^20 - 2^12 - 1 and 2^20 - 1");
		/* 1100 callers, each a path of a thousand and one nodes: about a
		 * thousand and forty fit, the rest are "(tree full)" under 1999 */
		check(fullNodes == 2 && fullUnder1999 > 0 && fullUnder1999 < 100,
		      fullNodes + " (tree full) nodes (not 2), " + fullUnder1999 + " calls under 1999's");
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
		Method names = Hooks.class.getDeclaredMethod("threadNames");
		names.setAccessible(true);
		String[] tn = (String[]) names.invoke(null);
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
