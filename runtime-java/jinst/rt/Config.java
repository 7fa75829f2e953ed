package jinst.rt;

import java.io.InputStream;
import java.util.Properties;

/**
 * What the standalone runtime is asked to do (Standalone): the keys below,
 * as system properties ({@code -Djinst.out=PATH}) or in a resource
 * {@code jinst.properties} at the root of the class path (found through the
 * runtime's own loader); a system property wins over the resource's key.
 * They are the agent's options of the same names (agent/options.c):
 *
 * <pre>
 *   jinst.trace   counts | times                    [counts]
 *   jinst.out     output path prefix, %p the pid    [jinst-%p]
 *                 (also the environment's JINST_OUT, between the two)
 *   jinst.format  counts, profile (times only), separated by + or :
 *                 [counts; counts+profile for times]
 *   jinst.tick    times: the clock's period in microseconds,
 *                 10 to 1000000, or 0 (no clock)    [1000]
 *   jinst.clock   times: wall | cpu, what they measure (the wall
 *                 time, or each thread's CPU time)   [wall]
 *   jinst.append  coverage: true | false, merge into an existing OUT.cov
 *                 (the agent's append=)             [false]
 *   jinst.session coverage: the session's name (the agent's session=)
 *                                                   [jinst-PID]
 *   jinst.quiet   true | false: no "jinst: wrote PATH" line on stderr
 *                 for each output (a failure is still said)  [false]
 * </pre>
 *
 * Trace engages only when jinst.trace or jinst.out is given; coverage
 * when a class instrumented ahead of time asks for its probes
 * (Standalone.coverageAsked), whatever is given. A value it cannot take
 * (trace=events, format=folded, html or chrome: the agent's alone) gets one line
 * on stderr, and nothing is recorded.
 */
final class Config {
	static final String RESOURCE = "jinst.properties";
	static final int COUNTS = 1, PROFILE = 2;

	/** Hooks' mode bits: Hooks.COUNTS, with Hooks.TIMES for trace=times
	 * (and Hooks.CPU for clock=cpu). */
	int mode = Hooks.COUNTS;
	/** COUNTS and PROFILE bits. */
	int formats;
	/** The output path prefix, %p expanded. */
	String out;
	int tickUs = 1000;
	/** jinst.trace was given: the trace outputs are written even empty. */
	boolean traceGiven;
	/** Coverage: merge into the file there; the session's name. */
	boolean append;
	String session;

	private Config() {
	}

	/**
	 * The settings, or null when nothing asks for output or a setting is
	 * wrong (said on stderr). loader: where jinst.properties is looked for.
	 */
	static Config read(ClassLoader loader) {
		Properties file = resource(loader);
		String trace = value("trace", file), out = value("out", file);
		if (trace == null && out == null)
			return null;
		Config c = new Config();
		c.traceGiven = trace != null;
		String format = value("format", file), tick = value("tick", file), clock = value("clock", file);
		if (!c.trace(trace == null ? "counts" : trace) || !c.formats(format) || (tick != null && !c.tick(tick)) ||
		    (clock != null && !c.clock(clock)) || !quiet(file))
			return null;
		c.out = expand(out == null || out.isEmpty() ? "jinst-%p" : out);
		return c;
	}

	/**
	 * The settings of coverage (jinst.out, jinst.append, jinst.session),
	 * or null when one is wrong (said on stderr). loader: as for read.
	 */
	static Config coverage(ClassLoader loader) {
		Properties file = resource(loader);
		Config c = new Config();
		String out = value("out", file), append = value("append", file), session = value("session", file);
		if (append != null && !append.equals("false") && !(c.append = append.equals("true"))) {
			wrong("jinst.append=" + append + ": expected true or false");
			return null;
		}
		if (!quiet(file))
			return null;
		c.out = expand(out == null || out.isEmpty() ? "jinst-%p" : out);
		c.session = session == null || session.isEmpty() ? "jinst-" + pid() : session;
		return c;
	}

	private static Properties resource(ClassLoader loader) {
		Properties p = new Properties();
		try {
			InputStream in = loader == null ? null : loader.getResourceAsStream(RESOURCE);
			if (in != null)
				try {
					p.load(in);
				} finally {
					in.close();
				}
		} catch (Exception e) {
			Standalone.say(RESOURCE + " not read: " + e);
		}
		return p;
	}

	/* jinst.KEY: the system property, else (for out) the environment's
	 * JINST_OUT, else the resource's. */
	private static String value(String key, Properties file) {
		String v = System.getProperty("jinst." + key);
		if (v == null && key.equals("out"))
			v = System.getenv("JINST_OUT");
		if (v == null)
			v = file.getProperty("jinst." + key);
		return v == null ? null : v.trim();
	}

	/* jinst.quiet=true: no "wrote" line (Standalone.quiet); a failure is
	 * still said. Read once: trace's settings and coverage's both ask. */
	private static Boolean quietOk;

	private static synchronized boolean quiet(Properties file) {
		if (quietOk == null) {
			String v = value("quiet", file);
			boolean ok = v == null || v.equals("true") || v.equals("false");
			quietOk = ok ? Boolean.TRUE : Boolean.valueOf(wrong("jinst.quiet=" + v + ": expected true or false"));
			Standalone.quiet = ok && "true".equals(v);
		}
		return quietOk.booleanValue();
	}

	private boolean trace(String v) {
		if (v.equals("times")) {
			mode = Hooks.COUNTS | Hooks.TIMES;
			return true;
		}
		if (v.equals("counts"))
			return true;
		return wrong("jinst.trace=" + v + ": expected counts or times" +
		             (v.equals("events") ? " (events needs the agent)" : ""));
	}

	private boolean formats(String v) {
		boolean times = (mode & Hooks.TIMES) != 0;
		if (v == null || v.isEmpty()) {
			formats = times ? COUNTS | PROFILE : COUNTS;
			return true;
		}
		for (String f : v.split("[+:]", -1)) {
			if (f.equals("counts"))
				formats |= COUNTS;
			else if (f.equals("profile") && times)
				formats |= PROFILE;
			else if (f.equals("profile"))
				return wrong("jinst.format=profile needs jinst.trace=times");
			else
				return wrong("jinst.format=" + v + ": unknown format '" + f + "' (counts, profile" +
				             (f.equals("folded") || f.equals("html") || f.equals("chrome") ? "; " + f +
				              " needs the agent)" : ")"));
		}
		return true;
	}

	private boolean tick(String v) {
		try {
			int t = Integer.parseInt(v);
			if (t == 0 || (t >= 10 && t <= 1000000)) {
				tickUs = t;
				return true;
			}
		} catch (NumberFormatException e) {
			/* said below */
		}
		return wrong("jinst.tick=" + v + ": expected microseconds from 10 to 1000000, or 0");
	}

	/* cpu: Hooks.CPU, for trace=times only, as the agent's clock= */
	private boolean clock(String v) {
		if (v.equals("wall"))
			return true;
		if (!v.equals("cpu"))
			return wrong("jinst.clock=" + v + ": expected wall or cpu");
		if ((mode & Hooks.TIMES) == 0)
			return wrong("jinst.clock=cpu needs jinst.trace=times");
		mode |= Hooks.CPU;
		return true;
	}

	private static boolean wrong(String what) {
		Standalone.say(what + "; recording nothing");
		return false;
	}

	/* %p: the process id; %%: a %. */
	static String expand(String path) {
		StringBuilder b = new StringBuilder();
		for (int i = 0; i < path.length(); i++) {
			char ch = path.charAt(i);
			char next = i + 1 < path.length() ? path.charAt(i + 1) : 0;
			if (ch == '%' && (next == 'p' || next == '%')) {
				b.append(next == 'p' ? String.valueOf(pid()) : "%");
				i++;
			} else {
				b.append(ch);
			}
		}
		return b.toString();
	}

	/* ProcessHandle on 9+; the runtime bean's "pid@host" on 8. */
	static long pid() {
		try {
			Class<?> ph = Class.forName("java.lang.ProcessHandle");
			Object self = ph.getMethod("current").invoke(null);
			return ((Long) ph.getMethod("pid").invoke(self)).longValue();
		} catch (Throwable e) {
			/* JDK 8 */
		}
		try {
			String n = java.lang.management.ManagementFactory.getRuntimeMXBean().getName();
			return Long.parseLong(n.substring(0, n.indexOf('@')));
		} catch (Throwable e) {
			return 0;
		}
	}
}
