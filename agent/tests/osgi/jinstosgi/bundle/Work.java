package jinstosgi.bundle;

/**
 * Calls with known counts: fib(20) makes 21891 calls of fib; steps(n) calls
 * step n times; caught(n) calls fail n times, each throwing and caught.
 */
final class Work {
	private final int k;

	Work(int k) {
		this.k = k;
	}

	static int fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	long steps(int n) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += step(i);
		return s;
	}

	private int step(int i) {
		return i * k;
	}

	int caught(int n) {
		int c = 0;
		for (int i = 0; i < n; i++) {
			try {
				fail(i);
			} catch (IllegalStateException e) {
				c++;
			}
		}
		return c;
	}

	private static void fail(int i) {
		throw new IllegalStateException("step " + i);
	}
}
