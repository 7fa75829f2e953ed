package alpha;

public class Ver {
	public static int which() {
		return inner() + inner() + inner();
	}

	static int inner() {
		return 9;
	}
}
