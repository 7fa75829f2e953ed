package jinstedit;

/* The probe tests/corpus/edit_check calls before every instruction. */
public final class Probe {
	static long probes;
	static {
		Runtime.getRuntime().addShutdownHook(new Thread(() -> System.err.println("probes: " + probes)));
	}
	public static void probe(int id) { probes++; }
}
