package jinstcheck;

import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;

/**
 * Allocation with every instruction, for the allocation pass's test
 * (agent/tests/alloc.py): each allocation's line carries a tag
 * ("site:NAME") and reports its object to AllocExpect, which measures it;
 * the test compares those figures with the agent's, site by site.
 * Objects that a call returns (clone(), reflection) count at the call that
 * made them, once: {@link #clones} and {@link #reflective}.
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

	/* clone() overridden, over Object's: its super.clone() counts. */
	static class Ewe implements Cloneable {
		@Override
		protected Object clone() throws CloneNotSupportedException {
			return super.clone(); // site:ewe.super
		}
	}

	/* An override over an override: its super.clone() runs Ewe's, which
	 * counts the object; its own array clone counts. */
	static final class Ram extends Ewe {
		int[] horns;

		@Override
		protected Object clone() throws CloneNotSupportedException {
			Ram r = (Ram) super.clone(); // site:ram.super
			r.horns = horns.clone(); // site:ram.horns
			AllocExpect.obj("ram.horns", r.horns);
			return r;
		}
	}

	/* No override: clone() here is Object's, except in a subclass that
	 * overrides it. */
	static class Plain implements Cloneable {
		final long a = 1;

		Plain copy() throws CloneNotSupportedException {
			return (Plain) clone(); // site:plain.copy
		}
	}

	static final class Kid extends Plain {
		final int b = 2;

		@Override
		protected Object clone() throws CloneNotSupportedException {
			return super.clone(); // site:kid.super
		}
	}

	/* Not Cloneable: Object.clone throws, nothing is made. */
	static final class Stubborn {
		Object copy() {
			try {
				return clone(); // site:stubborn
			} catch (CloneNotSupportedException e) {
				return null;
			}
		}
	}

	static final class Bare {
		final Object[] slots = null;
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

	/* Clones of an instance through overrides and without, of arrays of
	 * every type (reflective arrays, and their clones), of a class that is
	 * not Cloneable. */
	static void clones(int n) throws CloneNotSupportedException {
		AllocExpect.none("ram.super");
		AllocExpect.none("ewe.call");
		AllocExpect.none("stubborn");
		Ewe ewe = new Ewe(); // site:seed.ewe
		AllocExpect.obj("seed.ewe", ewe);
		Ram ram = new Ram(); // site:seed.ram
		AllocExpect.obj("seed.ram", ram);
		ram.horns = new int[3]; // site:seed.horns
		AllocExpect.obj("seed.horns", ram.horns);
		Plain plain = new Plain(); // site:seed.plain
		AllocExpect.obj("seed.plain", plain);
		Plain kid = new Kid(); // site:seed.kid
		AllocExpect.obj("seed.kid", kid);
		Stubborn stubborn = new Stubborn(); // site:seed.stubborn
		AllocExpect.obj("seed.stubborn", stubborn);
		Class<?>[] components = {boolean.class, byte.class, char.class, short.class, int.class, // site:components
			long.class, float.class, double.class, String.class, int[].class};
		AllocExpect.obj("components", components);
		for (int i = 0; i < n; i++) {
			Ewe e = i % 3 == 0 ? ram : ewe;
			Object c = e.clone(); // site:ewe.call
			AllocExpect.obj("ewe.super", c);
			AllocExpect.obj("plain.copy", plain.copy());
			AllocExpect.obj("kid.super", kid.copy());
			if (stubborn.copy() != null)
				throw new AssertionError("a clone of a class that is not Cloneable");
			for (Class<?> k : components) {
				Object a = Array.newInstance(k, i % 9); // site:reflect.one
				AllocExpect.obj("reflect.one", a);
				copy(a);
			}
		}
	}

	/* a's clone, counted at the line of its type. */
	static void copy(Object a) {
		if (a instanceof boolean[])
			AllocExpect.obj("clone.booleans", ((boolean[]) a).clone()); // site:clone.booleans
		else if (a instanceof byte[])
			AllocExpect.obj("clone.bytes", ((byte[]) a).clone()); // site:clone.bytes
		else if (a instanceof char[])
			AllocExpect.obj("clone.chars", ((char[]) a).clone()); // site:clone.chars
		else if (a instanceof short[])
			AllocExpect.obj("clone.shorts", ((short[]) a).clone()); // site:clone.shorts
		else if (a instanceof int[])
			AllocExpect.obj("clone.ints", ((int[]) a).clone()); // site:clone.ints
		else if (a instanceof long[])
			AllocExpect.obj("clone.longs", ((long[]) a).clone()); // site:clone.longs
		else if (a instanceof float[])
			AllocExpect.obj("clone.floats", ((float[]) a).clone()); // site:clone.floats
		else if (a instanceof double[])
			AllocExpect.obj("clone.doubles", ((double[]) a).clone()); // site:clone.doubles
		else if (a instanceof String[])
			AllocExpect.obj("clone.strings", ((String[]) a).clone()); // site:clone.strings
		else
			AllocExpect.obj("clone.rows", ((int[][]) a).clone()); // site:clone.rows
	}

	/* Arrays of several dimensions by reflection (every array of the given
	 * ones), objects by Constructor.newInstance (one whose constructor
	 * allocates, one whose constructor throws) and Class.newInstance. */
	@SuppressWarnings("deprecation")
	static void reflective(int n) throws ReflectiveOperationException {
		AllocExpect.none("reflect.failing");
		Class<?>[] intParam = {int.class}; // site:params
		AllocExpect.obj("params", intParam);
		Constructor<Holder> holder = Holder.class.getDeclaredConstructor(intParam);
		Constructor<Failing> failing = Failing.class.getDeclaredConstructor(intParam);
		Constructor<Bare> bare = Bare.class.getDeclaredConstructor((Class<?>[]) null);
		for (int i = 0; i < n; i++) {
			int[] dims = {i % 3, 2}; // site:dims
			AllocExpect.obj("dims", dims);
			String[][] grid = (String[][]) Array.newInstance(String.class, dims); // site:reflect.multi
			AllocExpect.multi("reflect.multi", grid);
			long[][][] cube = (long[][][]) Array.newInstance(long[].class, dims); // site:reflect.partial
			AllocExpect.multi("reflect.partial", cube);
			Object[] args = {i % 4}; // site:args
			AllocExpect.obj("args", args);
			Holder h = holder.newInstance(args); // site:reflect.holder
			AllocExpect.obj("reflect.holder", h);
			Bare b = bare.newInstance((Object[]) null); // site:reflect.bare
			AllocExpect.obj("reflect.bare", b);
			Bare c = Bare.class.newInstance(); // site:reflect.class
			AllocExpect.obj("reflect.class", c);
			try {
				failing.newInstance(args); // site:reflect.failing
				throw new AssertionError("Failing was made");
			} catch (InvocationTargetException e) {
				AllocExpect.obj("ctor.throw", e.getCause());
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

	public static void main(String[] args) throws Exception {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
		objects(n);
		exceptions(n / 10);
		arrays(n);
		multi(n);
		keep(Math.min(n, 900));
		clones(n / 10);
		reflective(n / 10);
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
