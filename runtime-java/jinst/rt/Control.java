package jinst.rt;

/**
 * What a traced program may call itself (by reflection, since it is not on
 * its class path at compile time):
 * {@code Class.forName("jinst.rt.Control").getMethod("dump").invoke(null)}
 * writes the output files now, as they would be at exit: the agent's, or
 * the standalone runtime's (Standalone); nothing when neither records.
 */
public final class Control {
	private Control() {
	}

	public static void dump() {
		if (!Standalone.dump())
			Hooks.dump0();
	}
}
