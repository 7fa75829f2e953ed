package jinst.rt;

/**
 * A thread's entry counts, those it does not keep in its row of Grid (no
 * row, a virtual thread, ids past the row, events). Ids run to the tens of thousands in a
 * large program, and a thread that calls a few dozen methods (a virtual
 * thread, a pool's task) should not cost an array of all of them: an array
 * of 24,000 longs per thread made 50,000 live virtual threads with the JDK
 * traced take 1 GB. So a thread starts with an open-addressing table from
 * id to count, at most half full (a few KB); one that has called DENSE_AT
 * distinct methods, or made BUSY calls, is a busy thread, and gets an array
 * indexed by id, whose increment is cheaper than a probe (two threads
 * calling small methods, 1.2 * 10^9 calls each: 2.1 s with the table, 1.8
 * s with the array).
 *
 * Only the thread itself adds; a snapshot reads the counts as they are. A
 * table that is full is replaced by a larger copy made in the constructor,
 * whose final fields then publish it whole: a reader sees the old one or
 * the new, never half of one, and may miss the latest calls, never count
 * one twice.
 */
final class Counts {
	static final int DENSE_AT = 128, BUSY = 1 << 14;

	/* The table: id + 1 per slot (0: empty), and its count in values;
	 * null when values is indexed by id. */
	final int[] keys;
	final long[] values;
	/* ids in the table, the largest, and the adds to it */
	private int size, max = -1, adds;

	Counts(int slots) {
		keys = new int[slots];
		values = new long[slots];
	}

	/* old with room for id: a table of twice the slots, or an array (at
	 * once when asked to: a thread of a small pool, Hooks.ctx). */
	Counts(Counts old, int id, boolean asked) {
		int[] k = old.keys;
		long[] v = old.values;
		boolean dense = asked || k == null || old.size >= DENSE_AT || old.adds > BUSY;
		int top = dense ? (k == null ? v.length - 1 : old.max) : 0;
		keys = dense ? null : new int[2 * k.length];
		values = new long[dense ? Ctx.grown(1024, top > id ? top : id) : 2 * k.length];
		if (k == null)
			System.arraycopy(v, 0, values, 0, v.length);
		else
			for (int i = 0; i < k.length; i++)
				if (k[i] != 0)
					add(k[i] - 1, v[i]);
	}

	private static int slot(int id, int mask) {
		int x = id * 0x9E3779B9;
		return (x ^ x >>> 16) & mask;
	}

	/* Adds n to id's count; false when there is no room for id (the caller
	 * replaces this with new Counts(this, id, false) and adds again). */
	boolean add(int id, long n) {
		int[] k = keys;
		if (k == null) {
			long[] v = values;
			if (id >= v.length)
				return false;
			v[id] += n;
			return true;
		}
		if (++adds > BUSY)
			return false;
		int mask = k.length - 1, key = id + 1, h = slot(id, mask), x;
		while ((x = k[h]) != 0) {
			if (x == key) {
				values[h] += n;
				return true;
			}
			h = (h + 1) & mask;
		}
		if (2 * (size + 1) > k.length)
			return false;
		values[h] = n;
		k[h] = key;
		size++;
		if (id > max)
			max = id;
		return true;
	}

	/* Ids below this may have a count. */
	int limit() {
		return keys == null ? values.length : max + 1;
	}

	/* Adds every count to r, where r reaches. */
	void addTo(long[] r) {
		int[] k = keys;
		long[] v = values;
		if (k == null) {
			for (int id = 0; id < v.length && id < r.length; id++)
				r[id] += v[id];
			return;
		}
		for (int i = 0; i < k.length; i++) {
			int id = k[i] - 1;
			if (id >= 0 && id < r.length)
				r[id] += v[i];
		}
	}

	/* Adds every count to c (an ended thread's to RETIRED). */
	void addTo(Ctx c) {
		int[] k = keys;
		long[] v = values;
		for (int i = 0; i < v.length; i++) {
			int id = k == null ? i : k[i] - 1;
			if (id >= 0 && v[i] != 0)
				c.count(id, v[i]);
		}
	}
}
