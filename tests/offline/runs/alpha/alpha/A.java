package alpha;

/** Run 1 (--trace: enter, exit, exitThrow with the run's base). */
public class A {
	public static int twice(int x) {
		return helper(x) + helper(x);
	}

	static int helper(int x) {
		return x + 1;
	}

	/** Leaves through the catch-all that rethrows. */
	public static void fail() {
		throw new IllegalStateException("expected");
	}
}
