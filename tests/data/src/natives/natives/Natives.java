package natives;

/* Native methods of every shape the natives pass wraps, for the class-file
 * library's building functions and the pass's unit tests (no library
 * implements them: nothing here runs). */
public class Natives {
	public static native int add(int a, int b);

	private native long mix(long a, double b, Object o);

	protected synchronized native void touch(String s) throws java.io.IOException;

	@Deprecated
	public static native String[] names(int[][] grid, boolean flag, byte b, char c, short s, float f);

	native void nothing();

	public int plain() {
		return 1;
	}
}
