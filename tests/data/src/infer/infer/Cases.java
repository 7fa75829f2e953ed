package infer;

/* Methods whose frames test frame inference (tests/unit/test_infer.c): each
 * puts one rule of the verifier's type system at a branch target or handler. */
public class Cases {
	static class A {}
	static class B extends A {}
	static class C extends A {}
	static class B2 extends B {}
	interface I {}
	static class D implements I {}
	static class E implements I {}

	static class Holder {
		Holder(Object o) {}
	}

	static void m() {}

	/* `new` before a branch: uninitialized(offset) twice on the stack at the merge. */
	static Holder newBeforeBranch(boolean c, Object x, Object y) {
		return new Holder(c ? x : y);
	}

	/* uninitializedThis in the locals and on the stack across a branch. */
	Cases(boolean c) {
		this(c ? 1 : 2);
	}

	Cases(int i) {
		super();
	}

	/* B[] and C[] merge to A[]; B[][] and C[][] to A[][]. */
	static int refArrays(boolean c) {
		A[] a = c ? new B[1] : new C[2];
		A[][] aa = c ? new B[1][1] : new C[2][2];
		return a.length + aa.length;
	}

	/* Arrays of different primitives, or of a primitive and a reference, merge to Object. */
	static int primArrays(boolean c) {
		Object o = c ? new int[1] : new long[1];
		Object p = c ? new int[1] : new String[1];
		return o.hashCode() + p.hashCode();
	}

	/* Two classes sharing only an interface merge to Object, as the verifier sees interfaces. */
	static I ifaces(boolean c) {
		I i = c ? new D() : new E();
		return i;
	}

	/* Two classes merge to their nearest common super class. */
	static A classes(boolean c) {
		A a = c ? new B2() : new C();
		return a;
	}

	/* null merges into the other type; null with null stays null. */
	static String nulls(boolean c) {
		String s = c ? null : "x";
		Object n = null;
		if (c)
			n = null;
		return s + n;
	}

	/* A handler sees the locals before and after every store its range covers. */
	static int handlerStores(boolean c) {
		int r = 0;
		Object o = "s";
		try {
			r = 1;
			o = Integer.valueOf(2);
			m();
			r = 3;
		} catch (RuntimeException e) {
			return r + o.hashCode();
		}
		return r;
	}

	/* A class the hierarchy does not know, met at a merge. */
	static Object unknown(boolean c) {
		Object o = c ? new java.util.ArrayList<Object>() : new B();
		return o;
	}

	/* Long and double locals across branches and reused slots. */
	static long wide(boolean c, long l, double d) {
		long x = c ? l : 2L;
		if (c) {
			double y = d;
			x += (long) y;
		} else {
			int i = 1, j = 2;
			x += i + j;
		}
		return x;
	}
}
