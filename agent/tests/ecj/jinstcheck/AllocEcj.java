package jinstcheck;

/**
 * A `new` whose object is dropped, as ECJ compiles it: no `dup`, so no
 * copy of the reference is left once the constructor returns (javac keeps
 * one and pops it). agent/tests/alloc.py compiles this with ECJ; each
 * object reports itself from its constructor, the one place the program
 * sees it.
 */
public final class AllocEcj {
	private AllocEcj() {
	}

	static final class Counted {
		final long a, b;

		Counted(int i) {
			a = i;
			b = -i;
			AllocExpect.obj("ecj.dropped", this);
		}
	}

	public static void main(String[] args) {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 100;
		for (int i = 0; i < n; i++)
			new Counted(i); // site:ecj.dropped
		AllocExpect.print();
	}
}
