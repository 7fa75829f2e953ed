/*
 * The call-heavy program of bench/trace: almost nothing but small method
 * calls, so the tracing hooks' cost per call shows undiluted. Deterministic:
 * the same calls in the same order on every run, one line of output (a
 * checksum and the number of calls it made, which the agents' counts can be
 * checked against).
 *
 *   java CallHeavy [SCALE]      SCALE units of about 1.9 * 10^6 calls (default 10)
 *
 * What it calls: a recursive fib (static calls, deep stacks), virtual and
 * interface calls on a bimorphic site (two shapes), getters and setters, a
 * constructor with a super call, and a loop that throws and catches an
 * exception now and then (the exitThrow path). All classes are nested in
 * CallHeavy, so include=CallHeavy (and the MethodEntry fixture's prefix
 * CallHeavy) select exactly its methods.
 */
public final class CallHeavy {
	interface Shape {
		long area();

		long scaled(int k);
	}

	static abstract class Base implements Shape {
		private final int side;

		Base(int side) {
			this.side = side;
		}

		final int side() {
			return side;
		}

		@Override
		public long scaled(int k) {
			return area() * k;
		}
	}

	static final class Square extends Base {
		Square(int side) {
			super(side);
		}

		@Override
		public long area() {
			return (long)side() * side();
		}
	}

	static final class Rect extends Base {
		private final int height;

		Rect(int side, int height) {
			super(side);
			this.height = height;
		}

		int height() {
			return height;
		}

		@Override
		public long area() {
			return (long)side() * height();
		}
	}

	static final class Counter {
		private long value;

		long get() {
			return value;
		}

		void set(long v) {
			value = v;
		}

		void add(long d) {
			set(get() + d);
		}
	}

	static int fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static int check(int i) {
		if (i % 1000 == 999)
			throw new IllegalStateException();
		return i & 7;
	}

	static long guarded(int i) {
		try {
			return check(i);
		} catch (IllegalStateException e) {
			return -1;
		}
	}

	/* Calls made by one round of shapes(n): 2 constructors of 2 levels each
	 * per 64 iterations, and per iteration 2 interface calls, each reaching
	 * area() and a getter or two, plus the counter's add/get/set. */
	static long shapes(int n, Counter c) {
		Shape[] s = new Shape[64];
		long sum = 0;
		for (int i = 0; i < n; i++) {
			int j = i & 63;
			if (j == 0)
				for (int k = 0; k < 64; k += 2) {
					s[k] = new Square(k + (i >> 6 & 7));
					s[k + 1] = new Rect(k, 3);
				}
			sum += s[j].area() + s[(j + 1) & 63].scaled(3);
			c.add(sum & 15);
		}
		return sum;
	}

	public static void main(String[] args) {
		int scale = args.length > 0 ? Integer.parseInt(args[0]) : 10;
		Counter c = new Counter();
		long sum = 0;
		for (int r = 0; r < scale; r++) {
			sum += fib(22);
			sum += shapes(150000, c);
			for (int i = 0; i < 20000; i++)
				sum += guarded(i);
		}
		System.out.println("CallHeavy " + scale + ": checksum " + (sum ^ c.get()));
	}
}
