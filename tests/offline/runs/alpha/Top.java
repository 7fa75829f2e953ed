/** The default package: its run class is $JinstRunKEY at the jar's root. */
public class Top {
	public static int top() {
		return 5;
	}
}
