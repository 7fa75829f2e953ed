package jinstcheck;

import java.lang.reflect.Array;

/**
 * allocAny, the hook a wrapper of a native that allocates calls (clone,
 * reflection), driven by hand as such a wrapper would (AllocExpect.any):
 * objects of other classes than the site's, arrays made by reflection, an
 * array whose elements are arrays (counted alone: they are not its
 * dimensions). The one allocation instruction of this class is site 0,
 * whose row then holds them all.
 */
public final class AllocAny implements Cloneable {
	final long a = 1;
	final int b = 2;

	public static void main(String[] args) throws Exception {
		AllocAny seed = new AllocAny(); // site:any
		AllocExpect.obj("any", seed);
		for (int i = 0; i < 50; i++) {
			AllocExpect.any("any", seed.clone(), 0);
			AllocExpect.any("any", Array.newInstance(int.class, i), 0);
			Object grid = Array.newInstance(String[].class, 2);
			Array.set(grid, 0, Array.newInstance(String.class, i % 4));
			AllocExpect.any("any", grid, 0);
		}
		AllocExpect.print();
	}
}
