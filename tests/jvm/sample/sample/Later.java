package sample;

/* The negative test raises its class-file version past any JVM's
 * (UnsupportedClassVersionError, counted apart from ClassFormatError). */
public class Later {
	public static int one() {
		return 1;
	}
}
