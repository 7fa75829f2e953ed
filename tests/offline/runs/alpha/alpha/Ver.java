package alpha;

/** The root copy of a multi-release class: JDK 9 and later run the copy
 * under META-INF/versions/9, which calls inner() three times. Here which()
 * is a leaf, there it is not: under --trace=times the id they share is
 * timed (run_runs.sh). */
public class Ver {
	public static int which() {
		return 1;
	}

	static int inner() {
		return 1;
	}
}
