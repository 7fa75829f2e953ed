package jinsttest;

/* Recursion: fib(20) makes 21891 calls, ack(2, 3) 44, isEven/isOdd alternate. */
public class Recursion {
	static int fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static int ack(int m, int n) {
		if (m == 0)
			return n + 1;
		if (n == 0)
			return ack(m - 1, 1);
		return ack(m - 1, ack(m, n - 1));
	}

	static boolean isEven(int n) {
		return n == 0 || isOdd(n - 1);
	}

	static boolean isOdd(int n) {
		return n != 0 && isEven(n - 1);
	}

	/* Recursion that ends in an exception unwinding every frame. */
	static int down(int n) {
		if (n == 0)
			throw new IllegalStateException("bottom");
		return down(n - 1) + 1;
	}

	/* With an argument, fib(20) again and again for that many
	 * milliseconds first: enough time for a clock to sample it. */
	public static void main(String[] args) {
		if (args.length > 0) {
			long end = System.nanoTime() + Long.parseLong(args[0]) * 1000000L;
			int sum = 0;
			do {
				sum += fib(20);
			} while (System.nanoTime() < end);
			System.out.println("fib(20) again: " + (sum % 6765 == 0));
		}
		System.out.println("fib(20) = " + fib(20));
		System.out.println("ack(2, 3) = " + ack(2, 3));
		System.out.println("isEven(101) = " + isEven(101));
		try {
			down(50);
		} catch (IllegalStateException e) {
			System.out.println("down: " + e.getMessage());
		}
	}
}
