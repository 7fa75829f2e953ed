package jinstcheck;

/**
 * Whether a thread has its rows before its first hook (Hooks.prepareAll for
 * the threads alive when the hooks are engaged, Hooks.threadStart for those
 * that start after): the main thread and a thread it starts each look at
 * their rows of jinst.rt.Grid and, under times, jinst.rt.Stacks before they
 * call any method the agent instrumented (the test traces RowsWork alone),
 * then call RowsWork.run, whose counts the test checks. Prints a line per
 * thread: "main: grid yes, stacks yes" ("no" where the thread has no row).
 *
 *   java -agentpath:libjinst.so=trace=MODE,include=jinstcheck.RowsWork jinstcheck.Rows MODE CALLS
 */
public class Rows {
	static String look(String who, boolean times) {
		Thread t = Thread.currentThread();
		int r = (int) t.getId() & (jinst.rt.Grid.ROWS - 1);
		String s = who + ": grid " + (jinst.rt.Grid.OWNER[r] == t ? "yes" : "no");
		if (times)
			s += ", stacks " + (jinst.rt.Stacks.OWNER[r] == t ? "yes" : "no");
		return s;
	}

	public static void main(String[] args) throws InterruptedException {
		final boolean times = args[0].equals("times");
		final int calls = Integer.parseInt(args[1]);
		String main = look("main", times);
		final String[] started = new String[1];
		Thread t = new Thread(new Runnable() {
			public void run() {
				started[0] = look("started", times);
				RowsWork.run(calls);
			}
		});
		t.start();
		t.join();
		RowsWork.run(calls);
		System.out.println(main);
		System.out.println(started[0]);
	}
}
