package jinstoff;

/* Version 1 of a class that version 2 (lib2) shares the name of: the two
 * are instrumented in separate runs and loaded side by side. */
public final class Same {
	private Same() {
	}

	public static int run(int n) {
		int s = 0;
		for (int i = 0; i < n; i++)
			s += i % 3 == 0 ? i : 1;
		return s;
	}
}
