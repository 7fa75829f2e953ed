/* Compiled with --release 8 (major version 52): string concatenation with
 * StringBuilder, no nest attributes, jsr-free finally blocks. */
public class Legacy8 {
	private int total;

	public synchronized void add(int v) {
		total += v;
	}

	public String report(Object o) {
		StringBuilder sb = new StringBuilder();
		try {
			sb.append("total=").append(total).append(' ').append(o);
		} finally {
			total = 0;
		}
		return sb.toString();
	}

	public static void main(String[] args) {
		Legacy8 l = new Legacy8();
		for (String a : args)
			l.add(a.length());
		Runnable r = () -> System.out.println(l.report("done"));
		r.run();
	}
}
