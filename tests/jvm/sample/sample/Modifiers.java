package sample;

/* The negative test makes twice() both public and private
 * (ClassFormatError). */
public class Modifiers {
	public static int twice(int x) {
		return 2 * x;
	}
}
