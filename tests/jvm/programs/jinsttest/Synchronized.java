package jinsttest;

/* Synchronized methods (instance and static) under contention, one of
 * which throws while holding the monitor. */
public class Synchronized {
	private int value;
	private static int total;

	synchronized void add(int x) {
		value += x;
	}

	synchronized void addOrThrow(int x) {
		if (x % 100 == 99)
			throw new IllegalArgumentException("x=" + x);
		value += x;
	}

	static synchronized void addTotal(int x) {
		total += x;
	}

	public static void main(String[] args) throws InterruptedException {
		final Synchronized s = new Synchronized();
		final int[] thrown = new int[4];
		Thread[] t = new Thread[4];
		for (int i = 0; i < t.length; i++) {
			final int k = i;
			t[i] = new Thread(new Runnable() {
				public void run() {
					for (int j = 0; j < 1000; j++) {
						s.add(1);
						addTotal(2);
						try {
							s.addOrThrow(j);
						} catch (IllegalArgumentException e) {
							thrown[k]++;
						}
					}
				}
			});
			t[i].start();
		}
		int thrownSum = 0;
		for (int i = 0; i < t.length; i++) {
			t[i].join();
			thrownSum += thrown[i];
		}
		System.out.println("value " + s.value + ", total " + total + ", thrown " + thrownSum);
	}
}
