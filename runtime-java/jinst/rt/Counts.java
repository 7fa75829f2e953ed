package jinst.rt;

/**
 * A thread's entry counts (every thread's but the fast path's owner's, whose
 * counts are Hooks' static array): an open-addressing table from method id
 * to count, at most half full. Ids run to the tens of thousands in a large
 * program, and a thread that calls a few dozen methods (a virtual thread, a
 * pool's task) should not cost an array of all of them: an array of 24,000
 * longs per thread, then pages of 128, made 50,000 live virtual threads with
 * the JDK traced take 1 GB; this, a few KB.
 *
 * Only the thread itself adds; a snapshot reads the table as it is. A table
 * that is full is replaced by a larger copy made in the constructor, whose
 * final fields then publish it whole: a reader sees the old table or the
 * new, never half of one, and may miss the latest calls, never count one
 * twice.
 */
final class Counts {
	/* id + 1 per slot (0: empty), and its count */
	final int[] keys;
	final long[] values;
	/* ids in the table, and the largest */
	int size, max = -1;

	Counts(int slots) {
		keys = new int[slots];
		values = new long[slots];
	}

	/* A copy of old with twice its slots. */
	Counts(Counts old) {
		this(2 * old.keys.length);
		for (int i = 0; i < old.keys.length; i++)
			if (old.keys[i] != 0)
				put(old.keys[i] - 1, old.values[i]);
	}

	private static int slot(int id, int mask) {
		int x = id * 0x9E3779B9;
		return (x ^ x >>> 16) & mask;
	}

	/* Adds n to id's count; false when the table has no room for a new id
	 * (the caller replaces it with a larger copy and adds again). */
	boolean add(int id, long n) {
		int[] k = keys;
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

	private void put(int id, long n) {
		add(id, n);
	}

	/* Adds every count to r, where r reaches. */
	void addTo(long[] r) {
		int[] k = keys;
		long[] v = values;
		for (int i = 0; i < k.length; i++) {
			int id = k[i] - 1;
			if (id >= 0 && id < r.length)
				r[id] += v[i];
		}
	}
}
