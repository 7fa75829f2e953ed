package sample;

/* The negative test strips the StackMapTable of sign(): its branch targets
 * lose their frames (VerifyError). */
public class Branchy {
	public static int sign(int x) {
		if (x < 0)
			return -1;
		return x == 0 ? 0 : 1;
	}
}
