package jinstcheck;

import java.io.File;

/**
 * A program to attach to: calls tick() every few milliseconds until the
 * file ARGV[0] exists (at most a minute), then prints how often.
 */
public class Sleeper {
	static long ticks;

	static void tick() {
		ticks++;
	}

	public static void main(String[] args) throws InterruptedException {
		File stop = new File(args[0]);
		long end = System.currentTimeMillis() + 60000;
		System.out.println("sleeper: running");
		while (!stop.exists() && System.currentTimeMillis() < end) {
			tick();
			Thread.sleep(2);
		}
		System.out.println("sleeper: " + (ticks > 0 ? "ticked" : "never ticked"));
	}
}
