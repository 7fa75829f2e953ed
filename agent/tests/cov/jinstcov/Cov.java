package jinstcov;

/**
 * The coverage fixture: deterministic, each method's run known from the
 * arguments. main(N): loop(N) runs its body N times, branch(1) takes the
 * positive side only, sw(2) one case of three, never() does not run, and
 * Other's constructor runs once (Unused is never loaded).
 */
public class Cov {
	static int loop(int n) {
		int s = 0;
		for (int i = 0; i < n; i++) {
			s += i;
		}
		return s;
	}

	static int branch(int x) {
		if (x > 0) {
			return 1;
		}
		return -1;
	}

	static int sw(int k) {
		switch (k) {
		case 1:
			return 10;
		case 2:
			return 20;
		case 7:
			return 70;
		default:
			return 0;
		}
	}

	static void never() {
		System.out.println("never");
	}

	static final class Other {
		final int v;

		Other(int v) {
			super();
			this.v = v > 0 ? v : -v;
		}
	}

	static final class Unused {
		static int f() {
			return 1;
		}
	}

	public static void main(String[] args) {
		int n = Integer.parseInt(args[0]);
		System.out.println("cov: " + (loop(n) + branch(1) + sw(2) + new Other(n).v));
	}
}
