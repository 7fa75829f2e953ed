package jinst.rt;

/**
 * One thread's allocations by site and stack ({@code alloc} with
 * {@code depth=N}): an open-addressed table keyed by the site and the top
 * N frames of the thread's shadow stack (trace=times' method ids,
 * innermost first, -1 past the bottom), each key with its objects and
 * bytes. Written by its thread only (Alloc's slow path); merged into one
 * under Registry.LOCK for a snapshot or when its thread ends.
 */
final class AllocTraces {
	final int depth;
	/* Per entry: its key (site, then depth frames), and objects, bytes. */
	private int[] keys;
	private long[] counts;
	private int[] slots; /* entry + 1, 0 when free; a power of two */
	int count;

	AllocTraces(int depth) {
		this.depth = depth;
		keys = new int[16 * (depth + 1)];
		counts = new long[32];
		slots = new int[32];
	}

	/* Adds to the key (site, frames[0..n) of the stack at stack[base..],
	 * read from the top at top - 1 down). */
	void add(int site, int[] stack, int base, int top, long objects, long bytes) {
		int w = depth + 1, h = site * 31;
		int[] k = new int[w];
		k[0] = site;
		for (int i = 0; i < depth; i++) {
			int j = base + top - 1 - i;
			int f = stack != null && top - 1 - i >= 0 && j < stack.length ? stack[j] : -1;
			k[i + 1] = f;
			h = h * 31 + f;
		}
		addKey(k, 0, h, objects, bytes);
	}

	private void addKey(int[] k, int at, int h, long objects, long bytes) {
		int w = depth + 1;
		if (2 * (count + 1) > slots.length)
			grow();
		int mask = slots.length - 1;
		for (int i = mix(h) & mask;; i = (i + 1) & mask) {
			int e = slots[i] - 1;
			if (e < 0) {
				System.arraycopy(k, at, keys, count * w, w);
				counts[2 * count] = objects;
				counts[2 * count + 1] = bytes;
				slots[i] = ++count;
				return;
			}
			if (same(e, k, at)) {
				counts[2 * e] += objects;
				counts[2 * e + 1] += bytes;
				return;
			}
		}
	}

	private boolean same(int e, int[] k, int at) {
		int w = depth + 1;
		for (int i = 0; i < w; i++)
			if (keys[e * w + i] != k[at + i])
				return false;
		return true;
	}

	private static int mix(int h) {
		h ^= h >>> 16;
		h *= 0x85ebca6b;
		return h ^ (h >>> 13);
	}

	private int hash(int e) {
		int w = depth + 1, h = keys[e * w] * 31;
		for (int i = 1; i < w; i++)
			h = h * 31 + keys[e * w + i];
		return h;
	}

	private void grow() {
		int w = depth + 1;
		int[] k = new int[keys.length * 2];
		System.arraycopy(keys, 0, k, 0, count * w);
		keys = k;
		long[] c = new long[counts.length * 2];
		System.arraycopy(counts, 0, c, 0, 2 * count);
		counts = c;
		slots = new int[slots.length * 2];
		int mask = slots.length - 1;
		for (int e = 0; e < count; e++) {
			int i = mix(hash(e)) & mask;
			while (slots[i] != 0)
				i = (i + 1) & mask;
			slots[i] = e + 1;
		}
	}

	/* Adds every entry of t (of the same depth) into this one. */
	void addAll(AllocTraces t) {
		for (int e = 0; e < t.count; e++)
			addKey(t.keys, e * (depth + 1), t.hash(e), t.counts[2 * e], t.counts[2 * e + 1]);
	}

	/* [depth, count, then per entry: site, depth frames, objects, bytes]. */
	long[] toArray() {
		int w = depth + 1;
		long[] r = new long[2 + count * (w + 2)];
		r[0] = depth;
		r[1] = count;
		int k = 2;
		for (int e = 0; e < count; e++) {
			for (int i = 0; i < w; i++)
				r[k++] = keys[e * w + i];
			r[k++] = counts[2 * e];
			r[k++] = counts[2 * e + 1];
		}
		return r;
	}
}
