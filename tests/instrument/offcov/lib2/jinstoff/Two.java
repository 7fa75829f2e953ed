package jinstoff;

/* A class only lib2 has. */
public final class Two {
	private Two() {
	}

	public static int run(int n) {
		try {
			return n == 3 ? Integer.parseInt("x") : n * 7;
		} catch (NumberFormatException e) {
			return -1;
		}
	}
}
