package jinstcheck;

import java.io.File;

/**
 * A program to attach to: calls tick() and nap() (a 2 ms sleep) again and
 * again until the file ARGV[0] exists (at most a minute), then prints
 * whether it ticked. With ARGV[1] "spin", tick() and busy() (a loop, so
 * timed, and in the call tree) without a pause: their counts move while a
 * dump writes.
 */
public class Sleeper {
	static long ticks;

	static void tick() {
		ticks++;
	}

	static int busy(int n) {
		int s = 0;
		for (int i = 0; i < n; i++)
			s += i;
		return s;
	}

	static void nap() throws InterruptedException {
		Thread.sleep(2);
	}

	public static void main(String[] args) throws InterruptedException {
		File stop = new File(args[0]);
		boolean spin = args.length > 1 && args[1].equals("spin");
		long sum = 0;
		long end = System.currentTimeMillis() + 60000;
		System.out.println("sleeper: running");
		while (!stop.exists() && System.currentTimeMillis() < end) {
			tick();
			if (spin)
				sum += busy(100);
			else
				nap();
		}
		System.out.println("sleeper: " + (ticks > 0 ? "ticked" : "never ticked") + (spin ? " (" + sum + ")" : ""));
	}
}
