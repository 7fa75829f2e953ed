package jinst.rt;

/* A test-only stand-in for the runtime's hooks (the real one lives in
 * runtime-java/): it counts the calls per method id in static arrays and
 * prints the non-zero counts at exit as "COUNT id enter exit exitThrow". */
public final class Hooks {
	private static final int[] ENTER = new int[1 << 16];
	private static final int[] EXIT = new int[1 << 16];
	private static final int[] THROW = new int[1 << 16];

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(Hooks::dump));
	}

	private Hooks() {
	}

	public static void enter(int id) {
		ENTER[id]++;
	}

	public static void exit(int id) {
		EXIT[id]++;
	}

	public static void exitThrow(int id) {
		THROW[id]++;
	}

	public static void called(int id) {
		ENTER[id]++;
	}

	/* Coverage: one array per call, never read (the stand-in checks calls). */
	public static boolean[] probes(int id, int n) {
		return new boolean[n];
	}

	public static long[] probeCounts(int id, int n) {
		return new long[n];
	}

	public static void hit(int id, int n, int probe) {
	}

	public static void hitCount(int id, int n, int probe) {
	}

	public static boolean[] probesFor(long identity, int n, String name) {
		return new boolean[n];
	}

	public static long[] probeCountsFor(long identity, int n, String name) {
		return new long[n];
	}

	public static void monitorEnter(Object lock, int site) {
	}

	public static void allocObject(Object o, int site) {
	}

	public static void allocArray(Object o, int site) {
	}

	public static void allocArrays(Object o, int site) {
	}

	public static void allocAny(Object o, int site) {
	}

	public static void allocClone(Object receiver, Object o, String start, int site) {
	}

	private static synchronized void dump() {
		StringBuilder sb = new StringBuilder();
		for (int i = 0; i < ENTER.length; i++)
			if (ENTER[i] != 0 || EXIT[i] != 0 || THROW[i] != 0)
				sb.append("COUNT ").append(i).append(' ').append(ENTER[i]).append(' ').append(EXIT[i]).append(' ')
						.append(THROW[i]).append('\n');
		System.out.print(sb);
		System.out.flush();
	}
}
