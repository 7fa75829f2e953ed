package jinsttest;

/* Static initialisers: one that computes, one that throws (so its class is
 * unusable afterwards), one triggered from another thread. */
public class StaticInit {
	static class Table {
		static final int[] SQUARES = new int[50];
		static {
			for (int i = 0; i < SQUARES.length; i++)
				SQUARES[i] = square(i);
		}

		static int square(int i) {
			return i * i;
		}
	}

	static class Broken {
		static final int VALUE = fail();

		static int fail() {
			throw new IllegalStateException("no");
		}
	}

	static class Lazy {
		static int value = compute();

		static int compute() {
			return 42;
		}
	}

	public static void main(String[] args) throws InterruptedException {
		int sum = 0;
		for (int v : Table.SQUARES)
			sum += v;
		int errors = 0;
		for (int i = 0; i < 2; i++) {
			try {
				sum += Broken.VALUE;
			} catch (ExceptionInInitializerError e) {
				errors++;
			} catch (NoClassDefFoundError e) {
				errors += 10;
			}
		}
		final int[] lazy = new int[1];
		Thread t = new Thread(new Runnable() {
			public void run() {
				lazy[0] = Lazy.value;
			}
		});
		t.start();
		t.join();
		System.out.println("sum " + sum + ", errors " + errors + ", lazy " + lazy[0]);
	}
}
