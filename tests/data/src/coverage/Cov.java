// The coverage core's unit test (tests/coverage/test_coverage.c) reads the
// probes and counters of these methods; keep the lines as they are.
public final class Cov implements Comparable<Cov> {
	private Cov() {
	}

	static int loop(int n) {
		int s = 0;
		for (int i = 0; i < n; i++)
			s += i;
		return s;
	}

	static int call(String a) {
		int x = a.length();
		return x;
	}

	static int call2(String a) {
		int x = 1;
		x += a.length();
		return x;
	}

	public int compareTo(Cov o) {
		return 0;
	}

	// The loop head is the method's first instruction: its goto back is not an entry.
	static int spin(int n) {
		while (n > 0)
			n--;
		return n;
	}
}
