package jinsttest;

/*
 * Virtual threads (Java 21) counted in their carriers' rows: N threads,
 * each calling step() 1000 times and yielding its carrier once half-way,
 * so that it may come back on another. Then prints how many rows of the agent's
 * count grid (jinst.rt.Grid.OWNER, in the bootstrap loader) a carrier
 * thread owns, or that there is no grid (untraced).
 */
public class Carriers {
	static long step(int i) {
		return (i & 7) + 1;
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]);
		Thread[] ts = new Thread[n];
		final long[] sums = new long[n];
		for (int i = 0; i < n; i++) {
			final int me = i;
			ts[i] = Thread.ofVirtual().start(() -> {
				long s = 0;
				for (int j = 0; j < 1000; j++) {
					s += step(j);
					if (j == 500)
						Thread.yield();
				}
				sums[me] = s;
			});
		}
		long sum = 0;
		for (int i = 0; i < n; i++) {
			ts[i].join();
			sum += sums[i];
		}
		System.out.println("sum " + sum);
		Class<?> grid;
		try {
			grid = Class.forName("jinst.rt.Grid", false, null);
		} catch (ClassNotFoundException e) {
			System.out.println("no grid");
			return;
		}
		int carriers = 0;
		for (Thread t : (Thread[]) grid.getField("OWNER").get(null))
			if (t != null && t.getClass().getName().equals("jdk.internal.misc.CarrierThread"))
				carriers++;
		System.out.println("rows of carriers: " + carriers);
	}
}
