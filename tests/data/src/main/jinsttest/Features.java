package jinsttest;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

/* A grab bag of class-file features: generics (Signature), lambdas and
 * method references (invokedynamic, BootstrapMethods), member, local and
 * anonymous classes (InnerClasses, EnclosingMethod, NestHost/NestMembers),
 * switch on strings (lookupswitch + tableswitch), try/finally and
 * try-with-resources (exception tables, StackMapTable), annotations on every
 * kind of element, constants of every type (ConstantValue, Long/Double in the
 * constant pool), and enough code for wide instructions. */
@Info(b = 3, c = 'x', d = -1.0, f = 0.25f, i = -7, j = Long.MIN_VALUE, s = -2, z = false,
		str = "class", color = Color.BLUE, type = int[].class, nested = @Marker,
		values = {})
@Marker
public class Features<T extends Comparable<T>> implements Serializable, Supplier<List<T>> {
	private static final long serialVersionUID = 0x1234_5678_9abc_def0L;
	public static final double RATIO = 1.6180339887;
	public static final float HALF = 0.5f;
	public static final int ANSWER = 42;
	public static final String GREETING = "h\u00e9llo \u4e16\u754c \ud83d\ude00 nul:\u0000";
	static int counter;

	@Marker
	private final List<@Marker T> items = new ArrayList<>();
	protected volatile transient Map<String, List<? extends Number>> cache;

	public class Inner {
		int value() {
			return items.size();
		}
	}

	static class Nested<K> {
		K key;
	}

	public Features() {
	}

	@SafeVarargs
	public Features(T... initial) {
		for (T t : initial)
			items.add(t);
	}

	public void add(@Marker T item, @Deprecated int ignoredCount) {
		items.add(item);
	}

	@Override
	public List<T> get() {
		return items;
	}

	public <R> List<R> map(Function<? super T, ? extends R> f) {
		List<R> out = new ArrayList<>();
		items.forEach(t -> out.add(f.apply(t)));
		return out;
	}

	public static int classify(String s) {
		switch (s) {
		case "zero":
			return 0;
		case "one":
			return 1;
		case "two":
			return 2;
		default:
			return -1;
		}
	}

	public static String dense(int k) {
		switch (k) {
		case 1: return "a";
		case 2: return "b";
		case 3: return "c";
		case 4: return "d";
		default: return "?";
		}
	}

	public static int guarded(int x) {
		int r = 0;
		try {
			r = 100 / x;
		} catch (ArithmeticException e) {
			r = -1;
		} finally {
			counter++;
		}
		return r;
	}

	public static String resources() throws Exception {
		try (AutoCloseable a = () -> counter++) {
			return "ok";
		}
	}

	public static long wideLocals(long a, double b) {
		long l0 = a, l1 = l0 + 1, l2 = l1 + 1, l3 = l2 + 1, l4 = l3 + 1, l5 = l4 + 1, l6 = l5 + 1;
		long l7 = l6 + 1, l8 = l7 + 1, l9 = l8 + 1, l10 = l9 + 1, l11 = l10 + 1, l12 = l11 + 1;
		long l13 = l12 + 1, l14 = l13 + 1, l15 = l14 + 1, l16 = l15 + 1, l17 = l16 + 1, l18 = l17 + 1;
		long m0 = l18, m1 = m0, m2 = m1, m3 = m2, m4 = m3, m5 = m4, m6 = m5, m7 = m6, m8 = m7, m9 = m8;
		long n0 = m9, n1 = n0, n2 = n1, n3 = n2, n4 = n3, n5 = n4, n6 = n5, n7 = n6, n8 = n7, n9 = n8;
		long o0 = n9, o1 = o0, o2 = o1, o3 = o2, o4 = o3, o5 = o4, o6 = o5, o7 = o6, o8 = o7, o9 = o8;
		long p0 = o9, p1 = p0, p2 = p1, p3 = p2, p4 = p3, p5 = p4, p6 = p5, p7 = p6, p8 = p7, p9 = p8;
		long q0 = p9, q1 = q0, q2 = q1, q3 = q2, q4 = q3, q5 = q4, q6 = q5, q7 = q6, q8 = q7, q9 = q8;
		long r0 = q9, r1 = r0, r2 = r1, r3 = r2, r4 = r3, r5 = r4, r6 = r5, r7 = r6, r8 = r7, r9 = r8;
		long s0 = r9 + (long) b;
		s0 += 1000;
		return s0;
	}

	public Runnable anonymous(final int k) {
		class Local implements Runnable {
			@Override
			public void run() {
				counter += k;
			}
		}
		Runnable r = new Runnable() {
			@Override
			public void run() {
				new Local().run();
			}
		};
		return r;
	}

	public synchronized int[][] arrays(int n) {
		int[][] grid = new int[n][n + 1];
		Object[] objs = new String[n];
		grid[0][0] = objs.length;
		return grid;
	}

	public static Map<String, Integer> counts(String... words) {
		Map<String, Integer> m = new TreeMap<>();
		for (String w : words)
			m.merge(w, 1, Integer::sum);
		return m;
	}

	public String describe(Shape s) {
		if (s instanceof Shape.Circle c)
			return "circle " + c.radius();
		if (s instanceof Shape.Square q)
			return "square " + q.side() + q.label();
		return "?";
	}
}
