package shared;

public class Two {
	public static int two() {
		return One.one() + 1;
	}
}
