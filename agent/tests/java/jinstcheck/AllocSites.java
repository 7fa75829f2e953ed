package jinstcheck;

/**
 * Allocation with every instruction, for the allocation pass's test
 * (agent/tests/alloc.py): each allocation's line carries a tag
 * ("site:NAME") and reports its object to AllocExpect, which measures it;
 * the test compares those figures with the agent's, site by site.
 */
public final class AllocSites {
	static final int[] TABLE = new int[7]; // site:clinit
	/* What stays live to the end (alloc=live): the objects kept here. */
	static final Object[] KEEP = new Object[600]; // site:keep
	static {
		AllocExpect.obj("clinit", TABLE);
		AllocExpect.live("clinit", TABLE);
		AllocExpect.obj("keep", KEEP);
		AllocExpect.live("keep", KEEP);
	}

	static final class Point {
		final int x, y;

		Point(int x, int y) {
			this.x = x;
			this.y = y;
		}
	}

	static final class Pair {
		final Object a, b;

		Pair(Object a, Object b) {
			this.a = a;
			this.b = b;
		}
	}

	static final class Holder {
		final long[] data;

		Holder(int n) {
			data = new long[n]; // site:ctor.data
			AllocExpect.obj("ctor.data", data);
		}
	}

	/* Its constructor throws: no object of it is ever made. */
	static final class Failing {
		Failing(int x) {
			if (x >= 0)
				throw new IllegalStateException("never made"); // site:ctor.throw
		}
	}

	Object last;

	static int boom(int i) {
		throw new IllegalArgumentException("before the constructor"); // site:boom
	}

	static void objects(int n) {
		for (int i = 0; i < n; i++) {
			Object o = new Object(); // site:object
			AllocExpect.obj("object", o);
			Point p = new Point(i, i % 2 == 0 ? i : -i); // site:point
			AllocExpect.obj("point", p);
			Pair q = new Pair(new Point(1, i), new Pair(new Object(), null)); // site:nested
			AllocExpect.obj("nested.pair", q);
			AllocExpect.obj("nested.pair", q.b);
			AllocExpect.obj("nested.point", q.a);
			AllocExpect.obj("nested.object", ((Pair) q.b).a);
			AllocSites s = new AllocSites(); // site:self
			AllocExpect.obj("self", s);
			Object chained;
			chained = s.last = new Holder(i % 5); // site:holder
			AllocExpect.obj("holder", chained);
		}
	}

	static void exceptions(int n) {
		AllocExpect.none("failing");
		AllocExpect.none("failing2");
		for (int i = 0; i < n; i++) {
			try {
				new Failing(boom(i)); // site:failing
			} catch (IllegalArgumentException e) {
				AllocExpect.obj("boom", e);
			}
			try {
				Object f = new Failing(i); // site:failing2
				AllocExpect.obj("never", f);
			} catch (IllegalStateException e) {
				AllocExpect.obj("ctor.throw", e);
			}
		}
	}

	static void arrays(int n) {
		for (int i = 0; i < n; i++) {
			int len = i % 37;
			boolean[] z = new boolean[len]; // site:booleans
			AllocExpect.obj("booleans", z);
			byte[] b = new byte[len + 1]; // site:bytes
			AllocExpect.obj("bytes", b);
			char[] c = new char[len * 2]; // site:chars
			AllocExpect.obj("chars", c);
			short[] s = new short[len]; // site:shorts
			AllocExpect.obj("shorts", s);
			int[] x = new int[len]; // site:ints
			AllocExpect.obj("ints", x);
			long[] j = new long[len]; // site:longs
			AllocExpect.obj("longs", j);
			float[] f = new float[len + 3]; // site:floats
			AllocExpect.obj("floats", f);
			double[] d = new double[len]; // site:doubles
			AllocExpect.obj("doubles", d);
			String[] strs = new String[len]; // site:strings
			AllocExpect.obj("strings", strs);
			int[][] rows = new int[len][]; // site:rows
			AllocExpect.obj("rows", rows);
			Object[] none = new Object[0]; // site:empty
			AllocExpect.obj("empty", none);
			long[] noLongs = new long[0]; // site:emptylongs
			AllocExpect.obj("emptylongs", noLongs);
		}
	}

	static void multi(int n) {
		for (int i = 0; i < n; i++) {
			int[][][] a = new int[3][4][]; // site:multi.partial
			AllocExpect.multi("multi.partial", a);
			double[][] m = new double[i % 4][i % 3]; // site:multi.full
			AllocExpect.multi("multi.full", m);
			String[][][] t = new String[2][0][5]; // site:multi.zero
			AllocExpect.multi("multi.zero", t);
			byte[][] one = new byte[i % 6 + 1][1]; // site:multi.small
			AllocExpect.multi("multi.small", one);
		}
	}

	/* Every third object kept, the others garbage. */
	static void keep(int n) {
		for (int i = 0; i < n; i++) {
			Point p = new Point(i, 0); // site:kept.point
			AllocExpect.obj("kept.point", p);
			int[] a = new int[i % 10]; // site:kept.ints
			AllocExpect.obj("kept.ints", a);
			if (i % 3 == 0) {
				KEEP[2 * (i / 3)] = p;
				KEEP[2 * (i / 3) + 1] = a;
				AllocExpect.live("kept.point", p);
				AllocExpect.live("kept.ints", a);
			}
		}
	}

	/* One site reached from two callers (depth=N tells them apart). */
	static int[] make(int n) {
		return new int[n]; // site:make
	}

	static void fromA(int i) {
		int[] a = make(i % 7);
		AllocExpect.obj("make", a);
		AllocExpect.obj("make@fromA", a);
	}

	static void fromB(int i) {
		int[] b = make(i % 11);
		AllocExpect.obj("make", b);
		AllocExpect.obj("make@fromB", b);
	}

	static final class Worker extends Thread {
		final int n;

		Worker(int n) {
			this.n = n;
		}

		@Override
		public void run() {
			for (int i = 0; i < n; i++) {
				Point p = new Point(i, -i); // site:worker.point
				AllocExpect.obj("worker.point", p);
				char[] c = new char[i % 50]; // site:worker.chars
				AllocExpect.obj("worker.chars", c);
			}
		}
	}

	public static void main(String[] args) throws InterruptedException {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
		objects(n);
		exceptions(n / 10);
		arrays(n);
		multi(n);
		keep(Math.min(n, 900));
		for (int i = 0; i < n; i++) {
			fromA(i);
			fromB(i);
			fromB(i + 1);
		}
		Worker[] workers = new Worker[4]; // site:workers
		AllocExpect.obj("workers", workers);
		for (int i = 0; i < workers.length; i++) {
			workers[i] = new Worker(n + i); // site:worker
			AllocExpect.obj("worker", workers[i]);
			workers[i].start();
		}
		for (Worker w : workers)
			w.join();
		AllocExpect.print();
	}
}
