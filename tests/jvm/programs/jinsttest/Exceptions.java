package jinsttest;

/* Exceptions thrown, caught, rethrown and passing through frames with
 * and without handlers, finally blocks, and a try in a loop. */
public class Exceptions {
	static int thrower(int n) {
		if (n % 3 == 0)
			throw new IllegalArgumentException("n=" + n);
		return n;
	}

	static int passThrough(int n) {
		return thrower(n) * 2;
	}

	static int withFinally(int n) {
		try {
			return passThrough(n);
		} finally {
			counter++;
		}
	}

	static int catchAndRethrow(int n) {
		try {
			return withFinally(n);
		} catch (IllegalArgumentException e) {
			throw new RuntimeException("wrapped " + e.getMessage(), e);
		}
	}

	static int counter;

	public static void main(String[] args) {
		int ok = 0, failed = 0;
		for (int i = 0; i < 30; i++) {
			try {
				ok += catchAndRethrow(i);
			} catch (RuntimeException e) {
				failed++;
			}
		}
		try {
			Object o = null;
			o.hashCode();
		} catch (NullPointerException e) {
			failed++;
		}
		System.out.println("ok sum " + ok + ", failed " + failed + ", finally " + counter);
	}
}
