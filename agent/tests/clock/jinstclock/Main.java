package jinstclock;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * clock=cpu against clock=wall: Timed.sleeper and Timed.spinner run at once
 * on two threads, each measured around its call with System.nanoTime and
 * the thread's own CPU time (ThreadMXBean), printed as
 * "NAME wall_ns cpu_ns" for the check to hold the agent's times to.
 * Args: milliseconds to sleep, milliseconds of CPU to spin.
 */
public final class Main {
	private Main() {
	}

	public static void main(String[] args) throws Exception {
		final long sleep = Long.parseLong(args[0]), spin = Long.parseLong(args[1]);
		final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		final long[] r = new long[4];
		/* Before either measurement starts: Timed loaded, the bean's first
		 * call made, and the runtime engaged (without the agent, the first
		 * hook's thread reads the settings and starts the clock) */
		Timed.sink = mx.getCurrentThreadCpuTime();
		Timed.sleeper(0);
		Timed.spinner(0, mx);
		Thread a = new Thread(() -> {
			long w = System.nanoTime(), c = mx.getCurrentThreadCpuTime();
			try {
				Timed.sleeper(sleep);
			} catch (InterruptedException e) {
				throw new IllegalStateException(e);
			}
			r[0] = System.nanoTime() - w;
			r[1] = mx.getCurrentThreadCpuTime() - c;
		}, "sleeper");
		Thread b = new Thread(() -> {
			long w = System.nanoTime(), c = mx.getCurrentThreadCpuTime();
			Timed.spinner(spin, mx);
			r[2] = System.nanoTime() - w;
			r[3] = mx.getCurrentThreadCpuTime() - c;
		}, "spinner");
		a.start();
		b.start();
		a.join();
		b.join();
		System.out.println("sleeper " + r[0] + " " + r[1]);
		System.out.println("spinner " + r[2] + " " + r[3]);
	}
}
