package sample;

/* The negative test turns the iload_0 of inc() into aload_0: an int local
 * read as a reference (VerifyError, though the frames are all there). */
public class Locals {
	public static int inc(int x) {
		return x + 1;
	}
}
