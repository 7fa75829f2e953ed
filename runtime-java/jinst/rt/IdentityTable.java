package jinst.rt;

/**
 * One generation of Coverage's table by identity (the essay there): slot
 * i holds a class's identity, name and probe array (boolean[] or long[]),
 * or nothing while arrays[i] is null. A class of its own for its final
 * fields: Coverage publishes a new generation with a plain write, and the
 * final fields guarantee (JLS 17.5) that a thread that reads the reference
 * sees the arrays and what the constructor's caller put in them before
 * the write, with no volatile read on the hooks' fast path.
 */
final class IdentityTable {
	final long[] ids;
	final String[] names;
	final Object[] arrays;

	/** Empty, slots a power of two. */
	IdentityTable(int slots) {
		ids = new long[slots];
		names = new String[slots];
		arrays = new Object[slots];
	}

	/** A copy of old with twice its slots, every entry placed again. */
	IdentityTable(IdentityTable old) {
		this(old.ids.length * 2);
		int mask = ids.length - 1;
		for (int i = 0; i < old.ids.length; i++) {
			if (old.arrays[i] == null)
				continue;
			int j = (int) old.ids[i] & mask;
			while (arrays[j] != null)
				j = (j + 1) & mask;
			ids[j] = old.ids[i];
			names[j] = old.names[i];
			arrays[j] = old.arrays[i];
		}
	}
}
