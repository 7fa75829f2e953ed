package jinstoffcheck;

import jinst.rt.Hooks;

/**
 * Drives the hooks by identity directly, as code instrumented ahead of
 * time would, with jinst-runtime.jar alone on the class path:
 *  - 3000 classes whose identities share their low bits five by five (long
 *    probe runs, the table grown many times): each one's array is the same
 *    on every call, its probe i % n set;
 *  - 4 threads asking at once for 2000 new classes get the same arrays,
 *    and each sets its own probe of 4;
 *  - an array asked for longer keeps what it recorded;
 *  - never null, never short, never an exception: a negative count, no
 *    name, the other kind of array for a class (a scratch array then,
 *    recording nothing).
 * run_offline_coverage.sh then reads the OUT.cov it leaves. Prints FAIL
 * lines and exits 1 on any failure.
 */
public final class IdentityCheck {
	private static int failures;

	private IdentityCheck() {
	}

	private static void check(boolean ok, String what) {
		if (!ok) {
			failures++;
			System.out.println("FAIL " + what);
		}
	}

	static long identity(int i) {
		return ((long) i << 20) | (i % 5) | 0x4000000000000000L;
	}

	public static void main(String[] args) throws Exception {
		boolean[][] arrays = new boolean[3000][];
		for (int i = 0; i < 3000; i++) {
			int n = 1 + i % 7;
			arrays[i] = Hooks.probesFor(identity(i), n, "chk/C" + i);
			check(arrays[i] != null && arrays[i].length >= n, "C" + i + ": length");
			arrays[i][i % n] = true;
		}
		for (int i = 0; i < 3000; i++)
			check(Hooks.probesFor(identity(i), 1 + i % 7, "chk/C" + i) == arrays[i], "C" + i + ": another array");
		final boolean[][][] seen = new boolean[4][][];
		Thread[] ts = new Thread[4];
		for (int t = 0; t < ts.length; t++) {
			final int k = t;
			ts[t] = new Thread(() -> {
				seen[k] = new boolean[2000][];
				for (int i = 0; i < 2000; i++) {
					seen[k][i] = Hooks.probesFor(identity(100000 + i), 4, "chk/T" + i);
					seen[k][i][k] = true;
				}
			});
			ts[t].start();
		}
		for (Thread t : ts)
			t.join();
		int differ = 0;
		for (int t = 1; t < ts.length; t++)
			for (int i = 0; i < 2000; i++)
				differ += seen[t][i] == seen[0][i] ? 0 : 1;
		check(differ == 0, differ + " arrays differ between threads");
		long[] g = Hooks.probeCountsFor(identity(200000), 3, "chk/Grown");
		g[2] = 5;
		long[] h = Hooks.probeCountsFor(identity(200000), 9, "chk/Grown");
		check(h.length >= 9 && h[2] == 5, "grown: probe 2 not kept");
		h[8] = 1;
		check(Hooks.probesFor(identity(300000), -4, "chk/Negative") != null, "a negative count: null");
		boolean[] noName = Hooks.probesFor(identity(300001), 6, null);
		check(noName != null && noName.length >= 6, "no name: null or short");
		long[] other = Hooks.probeCountsFor(identity(5), 12, "chk/C5");
		check(other != null && other.length >= 12, "the other kind: null or short");
		other[0] = 99;
		check(Hooks.probesFor(identity(5), 6, "chk/C5") == arrays[5], "C5 after the other kind: another array");
		if (failures > 0)
			System.exit(1);
		System.out.println("identity checks passed");
	}
}
