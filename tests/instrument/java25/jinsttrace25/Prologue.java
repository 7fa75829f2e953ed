package jinsttrace25;

/* Constructors with statements before super(...) and this(...) (flexible
 * constructor bodies, Java 25): a loop, a try/catch and a throw run while
 * `this` is still uninitialized, which the catch-all may not cover. */
public class Prologue {
	static class Base {
		final int v;

		Base(int v) {
			this.v = v;
		}
	}

	static class Checked extends Base {
		Checked(int x) {
			if (x < 0)
				throw new IllegalArgumentException("negative"); // before super(...): no exitThrow
			int y = 0;
			for (int i = 0; i < x; i++)
				y += i;
			int z;
			try {
				z = Integer.parseInt(x == 7 ? "seven" : "" + y);
			} catch (NumberFormatException e) {
				z = -1;
			}
			super(z);
			if (z > 100)
				throw new IllegalStateException("big"); // after super(...): exitThrow
		}

		Checked() {
			int k = 3;
			this(k);
		}
	}

	public static void main(String[] args) {
		int sum = new Checked(3).v + new Checked(7).v + new Checked().v;
		try {
			new Checked(20);
		} catch (IllegalStateException e) {
			sum++;
		}
		try {
			new Checked(-1);
		} catch (IllegalArgumentException e) {
			sum++;
		}
		System.out.println("sum " + sum);
	}
}
