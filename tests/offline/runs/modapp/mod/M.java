package mod;

/** Calls twice() three times (run_runs.sh, "module"). */
public class M {
	static int twice(int x) {
		return 2 * x;
	}

	public static void main(String[] args) {
		System.out.println("module sum " + (twice(1) + twice(2) + twice(3)));
	}
}
