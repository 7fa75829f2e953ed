package jinst.rt;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Comparator;

/**
 * The standalone runtime's outputs, byte for byte the agent's (report/,
 * include/jinst/report.h): OUT.tsv, the exact counts,
 * class&lt;TAB&gt;method&lt;TAB&gt;descriptor&lt;TAB&gt;count sorted by the
 * three names; OUT.txt, the ranked profile (trace=times). From the same
 * snapshots (TraceData), named by the method table (MethodTable).
 *
 * Each file is written whole to a temporary file beside it, then renamed
 * over it: never seen half-written. One line on stderr says what was
 * written, or why not.
 */
final class TraceWriter implements Comparator<Integer> {
	private static final Charset ASCII = Charset.forName("US-ASCII");

	private final MethodTable table;
	/* Profile order (by_self in report/): per id, calls and self ns, -1
	 * for a method counted and not timed. Null: by name. */
	private final long[] calls, self;

	private TraceWriter(MethodTable table, long[] calls, long[] self) {
		this.table = table;
		this.calls = calls;
		this.self = self;
	}

	static void write(Config c) {
		MethodTable t = MethodTable.load(Hooks.class.getClassLoader(), ClassLoader.getSystemClassLoader(),
		                                 Thread.currentThread().getContextClassLoader());
		if (t.tables == 0)
			Standalone.say("no " + MethodTable.RESOURCE + " on the class path: the outputs name no method");
		if (t.conflicts > 0)
			Standalone.say(t.conflicts + " method ids name different methods in different " + MethodTable.RESOURCE +
			               " (tables without a run, from separate runs): left out");
		/* jinst instrument --trace=counts puts the counting hook alone:
		 * times asked of that code have nothing to go by. */
		boolean countsOnly = (c.mode & Hooks.TIMES) != 0 && t.tables > 0 && t.timedRows == 0;
		if (countsOnly)
			Standalone.say("no times: the classes were instrumented for counts alone (jinst instrument --trace=counts); "
			               + "instrument them with --trace or --trace=times for times");
		if ((c.formats & Config.COUNTS) != 0)
			save(c.out + ".tsv", counts(t, TraceData.counts()));
		if ((c.formats & Config.PROFILE) != 0)
			save(c.out + ".txt", profile(t, TraceData.times(), c.tickUs, (c.mode & Hooks.CPU) != 0 ? 1 : 0, countsOnly));
	}

	/* ---- counts ---------------------------------------------------------- */

	static byte[] counts(MethodTable t, long[] counts) {
		Integer[] ids = named(t, counts, 1, 0);
		Arrays.sort(ids, new TraceWriter(t, null, null));
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		for (Integer id : ids) {
			names(out, t, id, "\t", "\t");
			ascii(out, "\t" + counts[id] + "\n");
		}
		return out.toByteArray();
	}

	/* The ids i with a name and a positive v[stride * i + at]. */
	private static Integer[] named(MethodTable t, long[] v, int stride, int at) {
		int n = 0;
		Integer[] r = new Integer[v.length / stride];
		for (int i = 0; i < r.length; i++)
			if (v[stride * i + at] > 0 && t.has(i))
				r[n++] = i;
		return Arrays.copyOf(r, n);
	}

	/* ---- the ranked profile (report/'s jinst_trace_write_profile) -------- */

	/* clock: a row of CLOCKS, as report.h's jinst_trace_clock */
	static byte[] profile(MethodTable t, long[] times, int tickUs, int clock) {
		return profile(t, times, tickUs, clock, false);
	}

	/* countsOnly: no method of the tables is timed (write) */
	static byte[] profile(MethodTable t, long[] times, int tickUs, int clock, boolean countsOnly) {
		Integer[] ids = named(t, times, 3, 0);
		long[] calls = new long[times.length / 3], self = new long[calls.length];
		double sum = 0;
		int untimed = 0;
		for (Integer id : ids) {
			calls[id] = times[3 * id];
			self[id] = !t.timed[id] ? -1 : times[3 * id + 2] > 0 ? times[3 * id + 2] : 0;
			if (self[id] >= 0)
				sum += (double) self[id];
			else
				untimed++;
		}
		Arrays.sort(ids, new TraceWriter(t, calls, self));
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		header(out, sum, tickUs, countsOnly ? -1 : untimed, CLOCKS[clock]);
		double acc = 0;
		for (int i = 0; i < ids.length; i++) {
			int id = ids[i];
			if (self[id] < 0) {
				ascii(out, pad(i + 1, 5) + " " + pad("-", 7) + " " + pad("-", 7) + " " + pad(calls[id], 10) + " " +
				           pad("-", 12) + " " + pad("-", 12) + "  ");
			} else {
				double pct = sum > 0 ? 100.0 * (double) self[id] / sum : 0;
				acc += pct;
				long total = times[3 * id + 1] > 0 ? times[3 * id + 1] : 0;
				ascii(out, pad(i + 1, 5) + " " + pad(fixed(pct, 2), 6) + "% " + pad(fixed(acc, 2), 6) + "% " +
				           pad(calls[id], 10) + " " + pad(fixed((double) self[id] / 1e6, 3), 12) + " " +
				           pad(fixed((double) total / 1e6, 3), 12) + "  ");
			}
			names(out, t, id, ".", "");
			ascii(out, "\n");
		}
		ascii(out, CLOCKS[clock][2] + " (ms) END\n");
		return out.toByteArray();
	}

	/* The clocks the times are from, named as the agent's report/ names
	 * them (trace_output.c's table): name, words, the header's words, where
	 * the times come from. */
	private static final String[][] CLOCKS = {
		{"wall", "wall time", "WALL TIME", "a clock that advances"},
		{"cpu", "CPU time", "CPU TIME", "each thread's CPU time, read"}};

	/* untimed: the methods counted only; -1: every method (countsOnly) */
	private static void header(ByteArrayOutputStream out, double sum, int tickUs, int untimed, String[] clock) {
		ascii(out, clock[2] + " (ms) BEGIN (total = " + fixed(sum / 1e6, 3) + ") clock " + clock[0] + ", unit ms: " +
		           clock[1] + ", self and inclusive, per method\n");
		if (tickUs > 0)
			ascii(out, "(times from " + clock[3] + " every " + tickUs +
			           " us, each advance given to the stack where it\n" +
			           " falls: self to the method on top, inclusive to each method on the stack; counts exact)\n");
		else
			ascii(out, "(no clock ran (tick=0): the times are only those the program gave by hand through\n" +
			           " jinst.rt.Hooks.sample, none otherwise; counts exact)\n");
		if (untimed < 0)
			ascii(out, "(no times: the classes were instrumented for counts alone, jinst instrument --trace=counts;\n" +
			           " instrument them with --trace or --trace=times for times)\n");
		else if (untimed > 0)
			ascii(out, "(" + untimed + (untimed == 1 ? " method" : " methods") + " counted, not timed, " +
			           (untimed == 1 ? "is" : "are") +
			           " marked -: leaves, which have no loop and call nothing\n" +
			           " but on the way to a throw; their time is their callers' self time (leaves=time times them))\n");
		ascii(out, pad("rank", 5) + " " + pad("self", 7) + " " + pad("accum", 7) + " " + pad("count", 10) + " " +
		           pad("self ms", 12) + " " + pad("total ms", 12) + "  method\n");
	}

	/* By self time, largest first, then the untimed (self -1) by calls;
	 * equal ones by name: report/'s by_self. By name when self is null. */
	public int compare(Integer a, Integer b) {
		int x = a, y = b;
		if (self != null) {
			if (self[x] != self[y] && (self[x] >= 0 || self[y] >= 0))
				return self[x] > self[y] ? -1 : 1;
			if (self[x] < 0 && calls[x] != calls[y])
				return calls[x] > calls[y] ? -1 : 1;
		}
		return table.compareIds(x, y);
	}

	/* ---- formatting: printf's, without its locale ------------------------ */

	/* %.Nf: the double's exact value rounded half to even, as glibc does. */
	static String fixed(double v, int places) {
		return new BigDecimal(v).setScale(places, RoundingMode.HALF_EVEN).toPlainString();
	}

	/* s right-aligned in width columns, or whole when longer (printf's %Ns). */
	private static String pad(String s, int width) {
		StringBuilder b = new StringBuilder();
		for (int i = s.length(); i < width; i++)
			b.append(' ');
		return b.append(s).toString();
	}

	private static String pad(long v, int width) {
		return pad(String.valueOf(v), width);
	}

	private static void names(ByteArrayOutputStream out, MethodTable t, int id, String afterClass, String afterName) {
		out.write(t.cls[id], 0, t.cls[id].length);
		ascii(out, afterClass);
		out.write(t.name[id], 0, t.name[id].length);
		ascii(out, afterName);
		out.write(t.desc[id], 0, t.desc[id].length);
	}

	private static void ascii(ByteArrayOutputStream out, String s) {
		byte[] b = s.getBytes(ASCII);
		out.write(b, 0, b.length);
	}

	/* ---- files ----------------------------------------------------------- */

	/* data to path through a temporary file in its folder and a rename. */
	static void save(String path, byte[] data) {
		File target = new File(path).getAbsoluteFile(), tmp = null;
		try {
			tmp = File.createTempFile("." + target.getName() + ".", ".tmp", target.getParentFile());
			FileOutputStream out = new FileOutputStream(tmp);
			try {
				out.write(data);
			} finally {
				out.close();
			}
			Files.move(tmp.toPath(), target.toPath(), StandardCopyOption.ATOMIC_MOVE);
			Standalone.wrote(path);
		} catch (IOException | RuntimeException e) {
			if (tmp != null)
				tmp.delete();
			Standalone.say(path + " not written: " + reason(e));
		}
	}

	private static String reason(Exception e) {
		String m = e.getMessage();
		return m == null ? e.toString() : e instanceof IOException ? m : e.getClass().getName() + ": " + m;
	}
}
