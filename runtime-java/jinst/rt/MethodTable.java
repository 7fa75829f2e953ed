package jinst.rt;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URL;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.Set;

/**
 * Method ids to names, for the standalone runtime's outputs: the agent
 * asks its instrumenter, code instrumented ahead of time brings the table
 * of the run that instrumented it, as a resource next to its classes
 * (written by report/'s jinst_trace_write_methods):
 *
 * <pre>
 *   META-INF/jinst/methods.tsv
 *   # jinst methods 1
 *   id&lt;TAB&gt;class&lt;TAB&gt;method&lt;TAB&gt;descriptor&lt;TAB&gt;timed|counted
 * </pre>
 *
 * one line per id, names as in the class file (internal class names,
 * modified UTF-8) with backslash, tab, newline and carriage return escaped
 * as \\, \t, \n, \r; lines starting with # are comments. Every copy the
 * loaders find is read (a jar or folder each), and those of the loaders of
 * the runs' classes ({@link Runs}). A table of {@code jinst instrument}
 * ("# jinst methods 2") has a line {@code run<TAB>KEY<TAB>COUNT} first:
 * its ids are relative to the run, whose range {@link Runs} handed out, so
 * tables of separate runs never name one id twice; a run none of whose
 * classes ran is not read. A table without it gives ids as they are. An id
 * that two tables still give different methods is left out of the
 * outputs, and said so.
 *
 * Names stay bytes, never decoded: the outputs hold them as the agent's do,
 * and sort them bytewise as it does.
 */
final class MethodTable {
	static final String RESOURCE = "META-INF/jinst/methods.tsv";

	/* Per id: class, method, descriptor (null: unknown or in conflict), timed. */
	byte[][] cls = new byte[0][], name = new byte[0][], desc = new byte[0][];
	boolean[] timed = new boolean[0];
	private boolean[] conflict = new boolean[0];
	int tables, conflicts;
	/** Rows read that are timed (none: the code was instrumented for counts). */
	int timedRows;

	/* Only the tables of runs (the agent names the other ids itself). */
	private boolean runsOnly;

	/** Every copy of the table that the loaders and the runs' loaders find
	 * (nulls skipped). */
	static MethodTable load(ClassLoader... loaders) {
		return new MethodTable().readAll(loaders).readAll(Runs.loaders());
	}

	/** The tables of runs only, from the runs' loaders, the system's and the
	 * context's (for the agent's outputs). */
	static MethodTable loadRuns() {
		MethodTable t = new MethodTable();
		t.runsOnly = true;
		return t.readAll(Runs.loaders()).readAll(ClassLoader.getSystemClassLoader(),
		                                         Thread.currentThread().getContextClassLoader());
	}

	private final Set<String> seen = new HashSet<String>();

	private MethodTable readAll(ClassLoader... loaders) {
		MethodTable t = this;
		for (ClassLoader l : loaders) {
			if (l == null)
				continue;
			try {
				for (Enumeration<URL> e = l.getResources(RESOURCE); e.hasMoreElements();) {
					URL u = e.nextElement();
					if (seen.add(u.toString()))
						t.parse(read(u));
				}
			} catch (Exception e) {
				Standalone.say(RESOURCE + " not read: " + e);
			}
		}
		return t;
	}

	/** Whether id has names. */
	boolean has(int id) {
		return id >= 0 && id < cls.length && cls[id] != null;
	}

	private static byte[] read(URL u) throws java.io.IOException {
		InputStream in = u.openStream();
		try {
			ByteArrayOutputStream b = new ByteArrayOutputStream();
			byte[] buf = new byte[8192];
			for (int n; (n = in.read(buf)) > 0;)
				b.write(buf, 0, n);
			return b.toByteArray();
		} finally {
			in.close();
		}
	}

	/* The table being read: ids are base + the row's, below limit; base -1:
	 * its rows are not read. */
	private int base, limit;

	private void parse(byte[] b) {
		tables++;
		base = runsOnly ? -1 : 0;
		limit = Integer.MAX_VALUE;
		boolean first = true;
		for (int i = 0; i < b.length;) {
			int end = i;
			while (end < b.length && b[end] != '\n')
				end++;
			if (end > i && b[i] != '#') {
				line(b, i, end, first);
				first = false;
			}
			i = end + 1;
		}
	}

	/* id, class, method, descriptor, and timed or counted: b[from, to); or
	 * first, the run: "run", key, count. */
	private void line(byte[] b, int from, int to, boolean first) {
		byte[][] f = new byte[5][];
		int k = 0, start = from;
		for (int i = from; i <= to && k < 5; i++)
			if (i == to || b[i] == '\t') {
				f[k++] = unescape(b, start, i);
				start = i + 1;
			}
		if (first && k == 3 && new String(f[0], ISO).equals("run")) {
			run(new String(f[1], ISO), number(f[2]));
			return;
		}
		int id = k >= 4 && base >= 0 ? number(f[0]) : -1;
		if (id >= 0 && id < limit)
			add(base + id, f[1], f[2], f[3], k < 5 || !new String(f[4], ISO).equals("counted"));
	}

	/* A run's table: its rows are read when the run's range is known and
	 * of its count. */
	private void run(String key, int count) {
		base = -1;
		if (key.length() != 16 || count < 0)
			return;
		try {
			long k = Long.parseUnsignedLong(key, 16);
			if (Runs.countOf(k) == count) {
				base = Runs.baseOf(k);
				limit = count;
			}
		} catch (NumberFormatException e) {
			/* not a run: nothing read */
		}
	}

	private static final java.nio.charset.Charset ISO = java.nio.charset.Charset.forName("ISO-8859-1");

	private void add(int id, byte[] c, byte[] n, byte[] d, boolean isTimed) {
		if (isTimed)
			timedRows++;
		if (id >= cls.length)
			grow(id);
		if (conflict[id])
			return;
		if (cls[id] == null) {
			cls[id] = c;
			name[id] = n;
			desc[id] = d;
			timed[id] = isTimed;
		} else if (!same(cls[id], c) || !same(name[id], n) || !same(desc[id], d)) {
			conflict[id] = true;
			cls[id] = null;
			conflicts++;
		}
	}

	private void grow(int id) {
		int n = Ctx.grown(cls.length, id);
		cls = copy(cls, n);
		name = copy(name, n);
		desc = copy(desc, n);
		boolean[] t = new boolean[n], x = new boolean[n];
		System.arraycopy(timed, 0, t, 0, timed.length);
		System.arraycopy(conflict, 0, x, 0, conflict.length);
		timed = t;
		conflict = x;
	}

	private static byte[][] copy(byte[][] a, int n) {
		byte[][] r = new byte[n][];
		System.arraycopy(a, 0, r, 0, a.length);
		return r;
	}

	private static boolean same(byte[] a, byte[] b) {
		return java.util.Arrays.equals(a, b);
	}

	/* A decimal id, or -1. */
	private static int number(byte[] s) {
		if (s.length == 0 || s.length > 9)
			return -1;
		int x = 0;
		for (byte ch : s) {
			if (ch < '0' || ch > '9')
				return -1;
			x = x * 10 + (ch - '0');
		}
		return x;
	}

	private static byte[] unescape(byte[] b, int from, int to) {
		ByteArrayOutputStream r = new ByteArrayOutputStream(to - from);
		for (int i = from; i < to; i++) {
			int ch = b[i];
			if (ch == '\\' && i + 1 < to) {
				byte e = b[++i];
				ch = e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e;
			}
			r.write(ch);
		}
		return r.toByteArray();
	}

	/** Bytewise, unsigned (strcmp's order). */
	static int compare(byte[] a, byte[] b) {
		for (int i = 0; i < a.length && i < b.length; i++)
			if (a[i] != b[i])
				return (a[i] & 0xff) - (b[i] & 0xff);
		return a.length - b.length;
	}

	/** Ids a and b by class, method and descriptor. */
	int compareIds(int a, int b) {
		int r = compare(cls[a], cls[b]);
		if (r == 0)
			r = compare(name[a], name[b]);
		return r != 0 ? r : compare(desc[a], desc[b]);
	}
}
