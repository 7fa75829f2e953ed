package jinstjsr;

/* Compiled by ECJ for target 1.4, whose finally blocks are jsr/ret subroutines. */
public class Finally {
	static int counter;

	static int body(int x) {
		try {
			if (x < 0)
				throw new IllegalStateException("neg");
			counter += x;
			return x * 2;
		} finally {
			counter++;
		}
	}

	static String nested(String s) {
		StringBuffer b = new StringBuffer();
		try {
			try {
				b.append(s.length());
			} finally {
				b.append('+');
			}
		} catch (NullPointerException e) {
			b.append("npe");
		} finally {
			b.append('!');
		}
		return b.toString();
	}

	public static void main(String[] args) {
		int r = body(5);
		try {
			body(-1);
		} catch (IllegalStateException e) {
			r += 100;
		}
		System.out.println(r + " " + counter + " " + nested("abc") + " " + nested(null));
	}
}
