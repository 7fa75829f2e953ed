package alpha;

/** The root copy of a multi-release class: JDK 9 and later run the copy
 * under META-INF/versions/9, which calls inner() three times. */
public class Ver {
	public static int which() {
		return inner();
	}

	static int inner() {
		return 1;
	}
}
