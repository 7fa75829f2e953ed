package sample;

/* Its verification must load Gone (is Gone a Base? JVMS 4.10.1.2), which
 * is absent: a missing dependency, not verified. */
public class NeedsGone {
	public static Base make() {
		return new Gone();
	}
}
