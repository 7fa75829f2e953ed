package jinstedit;

/* The calls tests/corpus/edit_check --hooks inserts (an editor test's own
 * shapes, entry/exit/exceptional exit with and without a timed local; not
 * the runtime's hooks, whose one table is instrument/hooks.c): counts, and
 * at shutdown prints them, so the test can check every entry met one exit. */
public final class Calls {
	static long enters, exits, throwsOut, bad;
	static {
		Runtime.getRuntime().addShutdownHook(new Thread(() ->
			System.err.println("hooks: enter " + enters + " exit " + exits + " exitThrow " + throwsOut + " badtime " + bad)));
	}
	public static void enter(int id) { enters++; }
	public static void exit(int id) { exits++; }
	public static void exitThrow(int id) { throwsOut++; }
	/* --times: the entry's System.nanoTime() comes along; it must be a time
	 * at or before now (and not 0), or the timed local was lost. */
	public static void exit(int id, long t0) { exits++; if (t0 == 0 || System.nanoTime() < t0) bad++; }
	public static void exitThrow(int id, long t0) { throwsOut++; if (t0 == 0 || System.nanoTime() < t0) bad++; }
}
