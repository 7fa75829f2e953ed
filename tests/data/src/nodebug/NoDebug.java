/* Compiled with -g:none: no SourceFile, LineNumberTable or
 * LocalVariableTable. Loops and a nested try give StackMapTable frames of
 * several kinds. */
public class NoDebug {
	static final long BIG = 123456789012345L;

	static int loops(int[] a) {
		int sum = 0;
		for (int i = 0; i < a.length; i++) {
			if (a[i] < 0)
				continue;
			long x = a[i] * BIG;
			double y = x / 3.0;
			sum += (int) y;
		}
		return sum;
	}

	static String nested(String s) {
		try {
			try {
				return s.substring(1);
			} catch (IndexOutOfBoundsException e) {
				return "short";
			}
		} catch (NullPointerException e) {
			return "null";
		}
	}
}
