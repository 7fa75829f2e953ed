package sample;

/* Gone appears only in a descriptor: HotSpot verifies this class without
 * loading Gone; only reflection (getDeclaredMethods) then misses it. */
public class SigGone {
	public static int ignore(Gone g) {
		return 0;
	}
}
