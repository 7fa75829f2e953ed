package jinstnat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.zip.Adler32;
import java.util.zip.CRC32;

/* The natives test's program (natives.sh). `run N`: N rounds of calls, then,
 * when the second agent (Second) is there, its retransformation of Natives
 * and Adler32, then N rounds again; `serve`: a round of N calls for each
 * line "N" on standard input, answered "done N SUM", until "quit". A round
 * calls Natives.twice, registered and (through mixed) mix once each,
 * Adler32.update(int), whose native update(II)I the JDK loads after the
 * agent, and CRC32.update(int), whose native update(II)I is an
 * @IntrinsicCandidate. */
public class Main {
	static long rounds(int n) {
		Natives nat = new Natives();
		Adler32 adler = new Adler32();
		CRC32 crc = new CRC32();
		long sum = 0;
		for (int i = 0; i < n; i++) {
			sum += Natives.twice(i) + Natives.registered(i) + nat.mixed(i, 3);
			adler.update(i);
			crc.update(i);
		}
		return sum + adler.getValue() + crc.getValue();
	}

	public static void main(String[] args) throws Exception {
		if (args[0].equals("run")) {
			int n = Integer.parseInt(args[1]);
			long sum = rounds(n);
			Second.retransform(Natives.class, Adler32.class, CRC32.class);
			System.out.println("sum " + (sum + rounds(n)));
			return;
		}
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
		System.out.println("serving");
		for (String line; (line = in.readLine()) != null && !line.equals("quit");) {
			int n = Integer.parseInt(line.trim());
			System.out.println("done " + n + " " + rounds(n));
		}
	}
}
