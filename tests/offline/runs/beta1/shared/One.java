package shared;

/** A package split between the two jars of run 2: each holds the run's class. */
public class One {
	public static int one() {
		return 1;
	}
}
