package jinstcheck;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;

/**
 * A program that asks for dumps without end (agent/tests/race.py): N threads
 * call jinst.rt.Control.dump() in a loop, a millisecond apart, between calls of work(),
 * while the test attaches, dumps and stops from outside. Control is the
 * agent's, in the bootstrap loader once it is attached: looked up again
 * until it is there. Prints "hammer: running", then "hammer: done" with
 * the dumps made when its standard input ends.
 *
 *   Hammer N
 */
public class Hammer {
	static volatile boolean done;
	static long dumps;

	static int work(int i) {
		return i * 7 + 1;
	}

	static final class Dumper implements Runnable {
		public void run() {
			Method dump = null;
			long n = 0;
			int sum = 0;
			while (!done) {
				sum += work(sum);
				try {
					if (dump == null)
						dump = Class.forName("jinst.rt.Control").getMethod("dump");
					dump.invoke(null);
					n++;
					Thread.sleep(1);
				} catch (ClassNotFoundException e) {
					Thread.yield();
				} catch (InterruptedException e) {
					return;
				} catch (ReflectiveOperationException e) {
					throw new RuntimeException(e);
				}
			}
			synchronized (Hammer.class) {
				dumps += n;
			}
		}
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]);
		Thread[] threads = new Thread[n];
		for (int i = 0; i < n; i++) {
			threads[i] = new Thread(new Dumper(), "dumper-" + i);
			threads[i].start();
		}
		System.out.println("hammer: running");
		System.out.flush();
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
		while (in.readLine() != null)
			;
		done = true;
		for (Thread t : threads)
			t.join();
		System.out.println("hammer: done, " + dumps + " dumps");
	}
}
