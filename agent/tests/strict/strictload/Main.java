package strictload;

/**
 * Run by jinstcheck.StrictLoader, a loader that refuses every name outside
 * this package but java.*: fib(20) calls fib 21891 times, and an Acc adds
 * 1000 times (agent/tests/jvm.sh, case strictloader, has the counts).
 */
public final class Main {
	private Main() {
	}

	static final class Acc {
		long sum;

		void add(int v) {
			sum += v;
		}
	}

	static int fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	public static void main(String[] args) {
		Acc acc = new Acc();
		for (int i = 0; i < 1000; i++)
			acc.add(i);
		System.out.println("strictload: fib(20) = " + fib(20) + ", sum = " + acc.sum);
	}
}
