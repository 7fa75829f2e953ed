package jinstoff;

/* A class only lib1 has. */
public final class One {
	private One() {
	}

	public static int run(int n) {
		if (n < 0)
			throw new IllegalArgumentException("n");
		int s = 0;
		for (int i = 1; i <= n; i++)
			if ((i & 1) == 0)
				s += i;
		return s;
	}
}
