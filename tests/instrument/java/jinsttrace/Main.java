package jinsttrace;

import java.util.function.IntUnaryOperator;

/* A deterministic program whose method calls are known: the JVM test
 * compares the hooks' counts with expected.txt. Each comment says how
 * many times a method enters, returns and throws. */
public class Main {
	static final int[] TABLE; // <clinit>: 1 0 (exit 1)
	static int finallies;

	static {
		TABLE = new int[4];
		for (int i = 0; i < TABLE.length; i++)
			TABLE[i] = i * i;
	}

	/* depth(10): 11 entries, 11 exits */
	static int depth(int n) { /*line:depth*/
		return n == 0 ? 0 : 1 + depth(n - 1);
	}

	/* fib(10): 177 calls */
	static int fib(int n) {
		if (n < 2)
			return n;
		return fib(n - 1) + fib(n - 2);
	}

	/* thrower(5): 6 entries, all 6 leave by the exception */
	static void thrower(int n) {
		if (n == 0)
			throw new IllegalStateException("bottom");
		thrower(n - 1);
	}

	/* catches what thrower throws: 1 entry, 1 exit */
	static int catcher() {
		try {
			thrower(5);
			return 1;
		} catch (IllegalStateException e) {
			return 2;
		}
	}

	/* the loop jumps back to offset 0: still one entry per call */
	static int spin(int n) {
		while (n > 0)
			n--;
		return n;
	}

	/* try/finally, once returning and once throwing */
	static int tryFinally(boolean fail) {
		try {
			if (fail)
				throw new RuntimeException("fail");
			return 1;
		} finally {
			finallies++;
		}
	}

	synchronized int syncMethod(int x) {
		if (x < 0)
			throw new IllegalArgumentException();
		return x + 1;
	}

	static int syncBlock(Object lock, boolean fail) {
		synchronized (lock) {
			if (fail)
				throw new UnsupportedOperationException();
			return 7;
		}
	}

	/* An empty finalize(): HotSpot registers no instance of such a class
	 * for finalization, so the VM never calls it. The trace pass leaves it
	 * alone; a hook in it would make every instance finalizable, and the
	 * collection in main would run it (a count of its own in the output). */
	static final class Quiet {
		@Override
		@SuppressWarnings("deprecation")
		protected void finalize() {
		}
	}

	static class Box {
		final int v;

		Box(int v) {
			this.v = v;
		}
	}

	static class Base {
		final int v;

		Base(int v) {
			this.v = v;
		}

		Base(String s) {
			this(s.length());
		}
	}

	/* arguments to super(...) built with `new` and conditionals */
	static class Derived extends Base {
		Derived(int x) {
			super(x > 0 ? new Box(x).v : new Box(-x).v + (x < -5 ? 1 : 2));
		}

		Derived(String s, boolean b) {
			super(b ? s : "none");
		}

		Derived() {
			this(3);
		}
	}

	/* a constructor that throws after super(...) */
	static class Failing extends Base {
		Failing(int x) {
			super(x);
			if (x < 0)
				throw new IllegalArgumentException("negative");
		}
	}

	interface Greeter {
		String name();

		default String greet() {
			return "hi " + name();
		}

		static Greeter of(String n) {
			return () -> n;
		}
	}

	static final class Version implements Comparable<Version> {
		final int v;

		Version(int v) {
			this.v = v;
		}

		@Override
		public int compareTo(Version o) { // and its bridge compareTo(Object)
			return Integer.compare(v, o.v);
		}
	}

	@SuppressWarnings({"unchecked", "rawtypes"})
	static int compareRaw(Comparable a, Object b) {
		return a.compareTo(b);
	}

	public static void main(String[] args) {
		int sum = depth(10) + fib(10) + catcher() + spin(7);
		for (int i = 0; i < 2; i++) {
			try {
				tryFinally(i == 1);
			} catch (RuntimeException e) {
				sum++;
			}
		}
		Main m = new Main();
		sum += m.syncMethod(1);
		try {
			m.syncMethod(-1);
		} catch (IllegalArgumentException e) {
			sum++;
		}
		Object lock = new Object();
		sum += syncBlock(lock, false);
		try {
			syncBlock(lock, true);
		} catch (UnsupportedOperationException e) {
			sum++;
		}
		sum += new Derived(4).v + new Derived(-9).v + new Derived("abc", true).v + new Derived("x", false).v
				+ new Derived().v;
		sum += new Failing(2).v;
		for (int i = 0; i < 3; i++) {
			try {
				new Failing(-i - 1);
			} catch (IllegalArgumentException e) {
				sum++;
			}
		}
		IntUnaryOperator twice = x -> x * 2;
		for (int i = 0; i < 3; i++)
			sum += twice.applyAsInt(i);
		Greeter g = Greeter.of("jinst");
		sum += g.greet().length() + g.greet().length();
		sum += compareRaw(new Version(1), new Version(2)) + compareRaw(new Version(3), new Version(3));
		sum += Huge.small() + Huge.huge(0) + TABLE[3];
		Object[] quiet = new Object[100];
		for (int i = 0; i < quiet.length; i++)
			quiet[i] = new Quiet();
		quiet = null;
		System.gc();
		System.runFinalization();
		System.out.println("sum " + sum);
	}
}
