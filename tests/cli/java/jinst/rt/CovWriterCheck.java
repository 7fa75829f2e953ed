package jinst.rt;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * Feeds CovWriter the records of a description and writes the file, or
 * appends them TIMES times (each time with a session "proc" INDEX t):
 *   CovWriterCheck DESCRIPTION OUT.cov [append TIMES INDEX]
 * one line per call, fields separated by spaces, names as the hex of their
 * UTF-16 (so any string, NUL and surrogates included, passes unharmed):
 *   session NAME START DUMP
 *   booleans IDENTITY NAME 0|1...
 *   counts IDENTITY NAME COUNT...        (unsigned decimal)
 * A record given twice is merged by CovWriter's rules. covwriter_check.py
 * compares the file with its own encoding and with jinst's.
 */
public final class CovWriterCheck {
	public static void main(String[] args) throws Exception {
		if (args.length == 2) {
			load(args[0]).write(args[1]);
			return;
		}
		for (int t = 0, times = Integer.parseInt(args[3]); t < times; t++) {
			CovWriter w = load(args[0]);
			w.session("proc", Long.parseLong(args[4]), t);
			try {
				w.append(args[1]);
			} catch (java.io.IOException e) {
				System.err.println(args[1] + ": " + e.getMessage());
				System.exit(1);
			}
		}
	}

	private static CovWriter load(String description) throws Exception {
		CovWriter w = new CovWriter();
		BufferedReader in = new BufferedReader(new InputStreamReader(new FileInputStream(description), StandardCharsets.US_ASCII));
		try {
			for (String line; (line = in.readLine()) != null;) {
				String[] f = line.split(" ", -1);
				if (f[0].equals("session")) {
					w.session(name(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]));
				} else if (f[0].equals("booleans")) {
					boolean[] b = new boolean[f.length - 3];
					for (int i = 0; i < b.length; i++)
						b[i] = f[i + 3].equals("1");
					w.booleans(Long.parseUnsignedLong(f[1]), name(f[2]), b);
				} else if (f[0].equals("counts")) {
					long[] c = new long[f.length - 3];
					for (int i = 0; i < c.length; i++)
						c[i] = Long.parseUnsignedLong(f[i + 3]);
					w.counts(Long.parseUnsignedLong(f[1]), name(f[2]), c);
				} else {
					throw new IllegalArgumentException("bad line: " + line);
				}
			}
		} finally {
			in.close();
		}
		return w;
	}

	private static String name(String hex) {
		StringBuilder s = new StringBuilder();
		for (int i = 0; i + 4 <= hex.length(); i += 4)
			s.append((char) Integer.parseInt(hex.substring(i, i + 4), 16));
		return s.toString();
	}
}
