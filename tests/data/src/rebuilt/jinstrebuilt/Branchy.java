package jinstrebuilt;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/*
 * Code whose every method needs frames (branch targets, handlers, code
 * after a goto), for the class-file bytes the VM rebuilds when the class is
 * retransformed. Loaded by the boot loader (-Xbootclasspath/a), which
 * HotSpot does not verify, the rebuilt bytes have no StackMapTable.
 *
 *   Branchy            runs the work once
 *   Branchy STOPFILE   runs it once, prints "running", waits for STOPFILE,
 *                      runs it three times (ROUNDS), prints the checksum
 * After an attach between the two, each method of the work is called
 * ROUNDS times (the constructors and Sub's too), run() once.
 */
public class Branchy {
	static final int ROUNDS = 3;
	final int v;

	Branchy(int x) {
		this.v = x > 0 ? x : -x;
	}

	static boolean canEncode(char c) {
		return !Character.isSurrogate(c);
	}

	static int max(int a, int b) {
		return a > b ? a : b;
	}

	static int loop(int n) {
		int s = 0;
		for (int i = 0; i < n; i++)
			s += i % 3 == 0 ? i : 1;
		return s;
	}

	static String table(int k) {
		switch (k) {
		case 0: return "zero";
		case 1: return "one";
		case 2: return "two";
		default: return "many";
		}
	}

	static int lookup(int k) {
		switch (k) {
		case -1000: return 1;
		case 7: return 2;
		case 100000: return 3;
		default: return 0;
		}
	}

	static int words(String s) {
		switch (s) {
		case "alpha": return 1;
		case "beta": return 2;
		default: return 0;
		}
	}

	static int parse(String s) {
		try {
			return Integer.parseInt(s);
		} catch (NumberFormatException e) {
			return -1;
		} finally {
			counter++;
		}
	}

	static long wide(long a, double d) {
		return a > 0 ? (long) (a * d) : -a;
	}

	static int locked(Object o) {
		synchronized (o) {
			return o.hashCode() == 0 ? 0 : 1;
		}
	}

	int scaled(int k) {
		if (k < 0)
			throw new IllegalArgumentException("negative");
		return v * k;
	}

	static int counter;

	static class Base {
		final String tag;

		Base(String tag) {
			this.tag = tag;
		}
	}

	/* A conditional among the arguments of super(...). */
	static final class Sub extends Base {
		Sub(int x) {
			super(x > 0 ? "pos" : x == 0 ? "zero" : "neg");
		}
	}

	static long run() {
		long sum = 0;
		sum += canEncode('a') ? 1 : 0;
		sum += max(3, 9);
		sum += loop(10);
		sum += table(2).length();
		sum += lookup(7);
		sum += words("beta");
		sum += parse("x12");
		sum += wide(5, 1.5);
		sum += locked("k");
		sum += new Branchy(-4).scaled(2);
		sum += new Sub(-1).tag.length();
		return sum;
	}

	public static void main(String[] args) throws Exception {
		long sum = run();
		if (args.length == 0) {
			System.out.println("checksum " + sum);
			return;
		}
		System.out.println("running");
		System.out.flush();
		Path stop = Paths.get(args[0]);
		while (!Files.exists(stop))
			Thread.sleep(20);
		for (int i = 0; i < ROUNDS; i++)
			sum += run();
		System.out.println("checksum " + sum);
	}
}
