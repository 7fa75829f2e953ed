package jinsttest;

/* Constructors that throw before super() (in an argument of the super
 * call) and after it, this(...) chains, and a hierarchy. */
public class Constructors {
	static class Base {
		final int v;

		Base(int v) {
			this.v = v;
			if (v < 0)
				throw new IllegalArgumentException("negative");
		}
	}

	static class Derived extends Base {
		Derived(int v) {
			super(check(v));
			if (v == 13)
				throw new IllegalStateException("after super");
		}

		Derived() {
			this(1);
		}

		static int check(int v) {
			if (v > 100)
				throw new IllegalArgumentException("before super");
			return v;
		}
	}

	public static void main(String[] args) {
		int made = 0, failed = 0;
		int[] values = {1, 2, 13, 200, -5, 7, 13, 101};
		for (int v : values) {
			try {
				made += new Derived(v).v;
			} catch (RuntimeException e) {
				failed++;
			}
		}
		made += new Derived().v;
		System.out.println("made " + made + ", failed " + failed);
	}
}
