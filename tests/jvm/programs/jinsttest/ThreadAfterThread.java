package jinsttest;

/* Threads started one after another, each joined before the next: a
 * program whose threads mostly end while main runs on (args[0] of them,
 * 2000 by default), each making 12 calls. */
public class ThreadAfterThread {
	static int step(int x) {
		return x + 1;
	}

	static void task() {
		int acc = 0;
		for (int i = 0; i < 10; i++)
			acc = step(acc);
	}

	public static void main(String[] args) throws InterruptedException {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
		for (int i = 0; i < n; i++) {
			Thread t = new Thread(new Runnable() {
				public void run() {
					task();
				}
			}, "t" + i);
			t.start();
			t.join();
		}
		System.out.println("threads: " + n + " one after another");
	}
}
