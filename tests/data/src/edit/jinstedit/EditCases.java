package jinstedit;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.ArrayList;
import java.util.List;

/* Inputs of the code editor's tests (tests/unit/test_edit.c) and of its JVM
 * check: each method has a shape the editor must relocate, and main prints
 * what they compute, so an edited copy must print the same. */
public class EditCases {
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.TYPE_USE)
	@interface Tag {}

	private final List<String> items = new ArrayList<>();
	private final int base;

	public EditCases(int base) {
		super();
		this.base = base;
	}

	/* `new` before the super call's argument is computed: Uninitialized in a frame. */
	public EditCases(boolean flag) {
		this(flag ? new StringBuilder("yes").length() : 7);
	}

	static int loop(int n) {
		int sum = 0;
		for (int i = 0; i < n; i++)
			sum += i * 3;
		return sum;
	}

	static int whileAtStart(int n) {
		while (n > 10)
			n -= 7;
		return n;
	}

	static String table(int k) {
		switch (k) {
		case 1: return "one";
		case 2: return "two";
		case 3: return "three";
		case 4: return "four";
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

	static int tryCatch(String s) {
		int r = 0;
		try {
			r = Integer.parseInt(s);
		} catch (NumberFormatException e) {
			r = -1;
		} finally {
			r += 100;
		}
		return r;
	}

	static String uninit(boolean flag) {
		return new StringBuilder(flag ? "a" : "b").append('!').toString();
	}

	static long longs(long a, double d) {
		long x = a;
		double y = d;
		for (int i = 0; i < 3; i++) {
			x += (long) y;
			y *= 2;
		}
		return x;
	}

	static int annotated(Object o) {
		@Tag String s = (@Tag String) o.toString();
		List<@Tag String> l = new @Tag ArrayList<>();
		l.add(s);
		if (o instanceof @Tag Integer)
			return l.size() + 1;
		return l.size();
	}

	static <T extends Comparable<T>> T max(List<T> xs) {
		T best = null;
		for (T x : xs)
			if (best == null || x.compareTo(best) > 0)
				best = x;
		return best;
	}

	synchronized int sync(int x) {
		return base + x;
	}

	static int nested(int a, int b) {
		int r = 0;
		for (int i = 0; i < a; i++) {
			if (i % 2 == 0)
				continue;
			for (int j = 0; j < b; j++) {
				if (j > i)
					break;
				r += i ^ j;
			}
		}
		return r;
	}

	static int guarded;

	/* A branch straight to a return. */
	static void guard(int x) {
		if (x > 0)
			guarded += x;
	}

	static int thrower(int x) {
		if (x < 0)
			throw new IllegalArgumentException("negative");
		return x * 2;
	}

	public static void main(String[] args) {
		System.out.println(loop(10) + " " + whileAtStart(100) + " " + table(3) + table(9) + " " + lookup(7) + lookup(-1000));
		System.out.println(tryCatch("12") + " " + tryCatch("x") + " " + uninit(true) + uninit(false) + " " + longs(5, 1.5));
		System.out.println(annotated(5) + " " + annotated("s") + " " + max(List.of("b", "c", "a")) + " " + nested(9, 6));
		guard(5);
		guard(-2);
		System.out.println(guarded);
		System.out.println(new EditCases(3).sync(4) + " " + new EditCases(true).base + " " + new EditCases(false).base);
		try {
			thrower(-1);
		} catch (IllegalArgumentException e) {
			System.out.println("caught " + e.getMessage() + " " + thrower(21));
		}
	}
}
