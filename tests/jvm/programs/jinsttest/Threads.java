package jinsttest;

/* Eight threads call the same methods a known number of times. */
public class Threads {
	static long work(long x) {
		return x * 31 + 7;
	}

	static long step(long acc, int i) {
		return acc ^ work(i);
	}

	public static void main(String[] args) throws InterruptedException {
		final int threads = 8, calls = 25000;
		final long[] results = new long[threads];
		Thread[] t = new Thread[threads];
		for (int i = 0; i < threads; i++) {
			final int k = i;
			t[i] = new Thread(new Runnable() {
				public void run() {
					long acc = k;
					for (int j = 0; j < calls; j++)
						acc = step(acc, j);
					results[k] = acc;
				}
			}, "worker-" + i);
			t[i].start();
		}
		long sum = 0;
		for (int i = 0; i < threads; i++) {
			t[i].join();
			sum += results[i];
		}
		System.out.println("threads: " + threads + " x " + calls + " steps, checksum " + sum);
	}
}
