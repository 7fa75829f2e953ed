package sample;

/* Left alone by the negative test: must be verified. */
public class Fine extends Base {
	private int n;

	public int count(int[] a) {
		for (int x : a)
			if (x > 0)
				n++;
		return n;
	}
}
