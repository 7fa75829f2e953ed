package jinst;

/* The hooks tests/corpus/edit_check --hooks calls: counts, and at shutdown
 * prints them, so the test can check every entry met one exit. */
public final class Hooks {
	static long enters, exits, throwsOut;
	static {
		Runtime.getRuntime().addShutdownHook(new Thread(() ->
			System.err.println("hooks: enter " + enters + " exit " + exits + " exitThrow " + throwsOut)));
	}
	public static void enter(int id) { enters++; }
	public static void exit(int id) { exits++; }
	public static void exitThrow(int id) { throwsOut++; }
}
