package sample;

/* Sound itself, but its superclass Branchy is broken by the negative test:
 * linking it fails in Branchy, which is reported on its own. */
public class SubOfBroken extends Branchy {
	public int half(int x) {
		return x / 2;
	}
}
