package jinstcheck;

import java.io.File;

/**
 * A program to attach to: calls tick() and nap() (a 2 ms sleep) again and
 * again until the file ARGV[0] exists (at most a minute), then prints
 * whether it ticked.
 */
public class Sleeper {
	static long ticks;

	static void tick() {
		ticks++;
	}

	static void nap() throws InterruptedException {
		Thread.sleep(2);
	}

	public static void main(String[] args) throws InterruptedException {
		File stop = new File(args[0]);
		long end = System.currentTimeMillis() + 60000;
		System.out.println("sleeper: running");
		while (!stop.exists() && System.currentTimeMillis() < end) {
			tick();
			nap();
		}
		System.out.println("sleeper: " + (ticks > 0 ? "ticked" : "never ticked"));
	}
}
