package sample;

/* A plain class: the supertype the others name. */
public class Base {
	public int value() {
		return 1;
	}
}
