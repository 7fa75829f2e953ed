package jinstcheck;

import java.lang.reflect.Method;

import jinst.rt.Hooks;

/**
 * Drives the coverage hooks directly, as instrumented code would, with the
 * agent running coverage (booleans) on no class of this package: the same
 * array for an id on every call, from every thread; an array never shorter
 * than asked and never null, never an exception, for ids no class has,
 * ids past the table and past the ids an instrumenter gives, negative
 * counts, and for the hook of the other mode (a scratch array then,
 * recording nothing); the one-probe hook sets its probe in the id's array;
 * a snapshot copies, and with reset clears in place. (Negative ids, and
 * one id asked with two counts, are what no instrumenter writes: the fast
 * paths trust the constants.)
 * Compiled against runtime-java; run without it on the class path. Prints
 * FAIL lines and exits 1 on any failure.
 */
public class CoverageCheck {
	static int failures;

	static void check(boolean ok, String what) {
		if (!ok) {
			failures++;
			System.out.println("FAIL " + what);
		}
	}

	public static void main(String[] args) throws Exception {
		boolean[] a = Hooks.probes(7000, 10);
		check(a != null && a.length >= 10, "probes(7000, 10) length");
		a[3] = true;
		check(Hooks.probes(7000, 10) == a, "probes(7000) the same array again");
		boolean[] b = a;
		Hooks.hit(7000, 10, 5);
		check(a[5], "hit(7000, 10, 5): probe 5 set in the id's array");
		Hooks.hit(7010, 4, 2);
		check(Hooks.probes(7010, 4)[2], "hit of a new id: the array made, probe 2 set");
		for (int[] odd : new int[][] {{Integer.MAX_VALUE, 3}, {1 << 24, 5}, {1 << 22, 5}, {7001, 0}, {7002, -3}}) {
			boolean[] x = Hooks.probes(odd[0], odd[1]);
			check(x != null && x.length >= Math.max(odd[1], 0), "probes(" + odd[0] + ", " + odd[1] + ")");
		}
		long[] c = Hooks.probeCounts(7003, 6);
		check(c != null && c.length >= 6, "probeCounts in booleans mode: an array anyway");
		// Threads asking at once for the same new ids get the same arrays.
		final boolean[][][] seen = new boolean[8][][];
		Thread[] ts = new Thread[8];
		for (int t = 0; t < ts.length; t++) {
			final int k = t;
			ts[t] = new Thread(() -> {
				seen[k] = new boolean[3000][];
				for (int id = 8000; id < 11000; id++)
					seen[k][id - 8000] = Hooks.probes(id, 1 + id % 7);
			});
			ts[t].start();
		}
		for (Thread t : ts)
			t.join();
		int differ = 0;
		for (int t = 1; t < ts.length; t++)
			for (int i = 0; i < 3000; i++)
				if (seen[t][i] != seen[0][i])
					differ++;
		check(differ == 0, differ + " arrays differ between threads");
		Class<?> cov = Class.forName("jinst.rt.Coverage", false, null);
		Method snapshot = cov.getDeclaredMethod("snapshot", boolean.class);
		snapshot.setAccessible(true);
		Object[] s1 = (Object[]) snapshot.invoke(null, true);
		check(s1.length > 7000 && s1[7000] instanceof boolean[] && ((boolean[]) s1[7000])[3],
				"snapshot: probe 3 of id 7000");
		check(s1[7000] != b, "snapshot: a copy");
		check(!b[3], "snapshot(reset): cleared in place");
		check(Hooks.probes(7000, 10) == b, "after reset: the same array");
		System.out.println("coverage check: " + (failures == 0 ? "passed" : failures + " failed"));
		System.exit(failures == 0 ? 0 : 1);
	}
}
