package jinst.rt;

/**
 * What a traced program may call itself (by reflection, since it is not on
 * its class path at compile time):
 * {@code Class.forName("jinst.rt.Control").getMethod("dump").invoke(null)}
 * writes the agent's output files now, as they would be at VM death.
 */
public final class Control {
	private Control() {
	}

	public static void dump() {
		Hooks.dump0();
	}
}
