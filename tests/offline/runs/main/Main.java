/** Calls every method of both runs a known number of times (calls.tsv). */
public class Main {
	public static void main(String[] args) {
		long s = 0;
		for (int i = 0; i < 10; i++)
			s += alpha.A.twice(i);
		s += new alpha.Tri().sides();
		s += Top.top();
		s += alpha.Ver.which();
		s += beta.B.thrice(7) + beta.B.loop(5);
		s += shared.One.one() + shared.Two.two();
		try {
			alpha.A.fail();
		} catch (IllegalStateException e) {
			s++;
		}
		s += Helper.help(3);
		System.out.println("sum " + s);
	}
}
