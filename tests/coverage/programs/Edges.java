package edges;

/**
 * Probe sites next to each other, run under JaCoCo's agent and jinst's and
 * compared (compare_programs.sh --fixture). A conditional jump whose target
 * needs a probe (several ways in) becomes an inverted jump, the probe and a
 * goto; when the line after the jump holds a method call, JaCoCo also puts
 * a probe at its start, on the fall-through edge. That probe must run when
 * the jump is not taken.
 */
public class Edges {
	private Object proto, parent;
	private static final Object SHARED = new Object();

	Object proto() {
		return proto;
	}

	Object parent() {
		return parent;
	}

	void setProto(Object p) {
		proto = p;
	}

	void setParent(Object p) {
		parent = p;
	}

	static Object shared() {
		return SHARED;
	}

	static Edges make(int i) {
		Edges e = new Edges();
		if (i % 2 == 0)
			e.setProto("p" + i);
		if (i % 3 == 0)
			e.setParent("q" + i);
		return e;
	}

	/* The shape of Rhino's BaseFunction.construct. */
	static Edges construct(int i) {
		Edges e = make(i);
		if (e.proto() == null) {
			Object p = shared();
			if (e.proto() != p)
				e.setProto(p);
		}
		if (e.parent() == null) {
			Object p = shared();
			if (e.parent() != p)
				e.setParent(p);
		}
		return e;
	}

	/* The same after other conditional jumps, and in a loop. */
	static int scan(int[] a) {
		int n = 0;
		for (int i = 0; i < a.length; i++) {
			if (a[i] > 10)
				n += Integer.bitCount(a[i]);
			else if (a[i] < 0)
				n -= Math.abs(a[i]);
			if (a[i] != 5 && a[i] != 7)
				n ^= Integer.hashCode(a[i]);
		}
		return n;
	}

	public static void main(String[] args) {
		long sum = 0;
		for (int i = 0; i < 12; i++)
			sum += construct(i).proto() instanceof String ? i : 100;
		sum += scan(new int[] {1, 12, -3, 5, 7, 40});
		System.out.println("checksum edges " + Long.toHexString(sum) + " 1");
	}
}
