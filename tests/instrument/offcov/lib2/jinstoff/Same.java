package jinstoff;

/* Version 2 of lib1's Same: other code, other identity, the same name. */
public final class Same {
	private Same() {
	}

	public static int run(int n) {
		int s = 1;
		for (int i = 0; i < n; i++) {
			switch (i % 4) {
			case 0:
				s *= 2;
				break;
			case 1:
				s -= 1;
				break;
			default:
				s += i;
			}
		}
		return n > 100 ? -s : s;
	}
}
