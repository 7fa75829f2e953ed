package beta;

/** Run 2 (--trace=counts), two jars in one run. */
public class B {
	public static int thrice(int x) {
		return one(x) + one(x) + one(x);
	}

	static int one(int x) {
		return x;
	}

	public static int loop(int n) {
		int s = 0;
		for (int i = 0; i < n; i++)
			s += one(i);
		return s;
	}
}
