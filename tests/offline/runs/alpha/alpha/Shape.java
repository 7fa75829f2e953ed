package alpha;

/** An interface reads its run's BASE from a package-private class. */
public interface Shape {
	default int sides() {
		return count();
	}

	static int count() {
		return 3;
	}
}
