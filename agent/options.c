/*
 * Option parsing for the agent (options.h). Options are separated by ',';
 * a list value takes '+' or ':' between its items, and list options may be
 * repeated. Every mistake is reported with the option it is in, so the VM
 * can refuse to start with a message that says what to fix.
 */
#include "options.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"

/* The JDK's own packages: left alone unless an include= asks for them. */
static const char *const jdk_packages[] = {"java/**", "javax/**", "jdk/**", "sun/**", "com/sun/**", NULL};

static int fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return JINST_EINVAL;
}

/* Copies s[0..n) into the struct's buffer, '.' as '/' when dots is set. */
static const char *keep(jinst_agent_options *o, const char *s, size_t n, bool dots)
{
	if (n + 1 > sizeof(o->buf) - o->buf_used)
		return NULL;
	char *p = o->buf + o->buf_used;
	for (size_t i = 0; i < n; i++)
		p[i] = dots && s[i] == '.' ? '/' : s[i];
	p[n] = 0;
	o->buf_used += n + 1;
	return p;
}

static int add_patterns(jinst_agent_options *o, const char **list, size_t *count, const char *key,
                        const char *v, size_t vn, char *err, size_t esize)
{
	size_t i = 0;
	while (i <= vn) {
		size_t j = i;
		while (j < vn && v[j] != '+' && v[j] != ':')
			j++;
		if (j == i)
			return fail(err, esize, "%s=: empty pattern", key);
		if (*count == JINST_AGENT_MAX_PATTERNS)
			return fail(err, esize, "%s=: more than %d patterns", key, JINST_AGENT_MAX_PATTERNS);
		for (size_t c = i; c < j; c++) {
			unsigned char ch = (unsigned char)v[c];
			if (ch <= ' ' || ch == ';' || ch == '[')
				return fail(err, esize, "%s=%.*s: '%c' cannot be in a class name pattern", key, (int)vn, v,
				            ch > ' ' ? ch : '?');
		}
		const char *p = keep(o, v + i, j - i, true);
		if (!p)
			return fail(err, esize, "%s=: options too long", key);
		list[(*count)++] = p;
		list[*count] = NULL;
		i = j + 1;
	}
	return 0;
}

/* The decimal number v[0..vn), or -1 when it is not one or exceeds max. */
static long number(const char *v, size_t vn, long max)
{
	long x = 0;
	size_t i = 0;
	for (; i < vn && v[i] >= '0' && v[i] <= '9' && x <= max; i++)
		x = x * 10 + (v[i] - '0');
	return vn == 0 || i < vn || x > max ? -1 : x;
}

static bool is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !memcmp(s, word, n);
}

static int parse_formats(jinst_agent_options *o, const char *v, size_t vn, char *err, size_t esize)
{
	static const struct { const char *name; unsigned bit; } formats[] = {
		{"counts", JINST_FORMAT_COUNTS}, {"profile", JINST_FORMAT_PROFILE},
		{"folded", JINST_FORMAT_FOLDED}, {"chrome", JINST_FORMAT_CHROME}};
	size_t i = 0;
	o->formats = 0;
	while (i <= vn) {
		size_t j = i;
		while (j < vn && v[j] != '+' && v[j] != ':')
			j++;
		unsigned bit = 0;
		for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++)
			if (is(v + i, j - i, formats[k].name))
				bit = formats[k].bit;
		if (!bit)
			return fail(err, esize, "format=%.*s: unknown format '%.*s' (counts, profile, folded, chrome)", (int)vn,
			            v, (int)(j - i), v + i);
		o->formats |= bit;
		i = j + 1;
	}
	return 0;
}

int jinst_agent_options_parse(jinst_agent_options *o, const char *options, char *err, size_t esize)
{
	memset(o, 0, sizeof *o);
	o->action = JINST_ACTION_START;
	o->mode = JINST_TRACE_COUNTS;
	o->max_events = 100000;
	o->fold_min = 0.00001;
	o->tick_us = 1000;
	snprintf(o->out, sizeof o->out, "jinst-%%p");
	snprintf(o->log, sizeof o->log, "stderr");
	if (err && esize)
		err[0] = 0;
	bool formats_given = false, mode_given = false;
	const char *s = options ? options : "";
	while (*s) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		const char *eq = memchr(s, '=', n);
		size_t kn = eq ? (size_t)(eq - s) : n;
		const char *v = eq ? eq + 1 : NULL;
		size_t vn = eq ? n - kn - 1 : 0;
		if (n == 0) {
			/* an empty item (",," or a trailing ',') is harmless */
		} else if (!eq && is(s, kn, "help")) {
			o->action = JINST_ACTION_HELP;
		} else if (!eq && is(s, kn, "dump")) {
			o->action = JINST_ACTION_DUMP;
		} else if (!eq && is(s, kn, "stop")) {
			o->action = JINST_ACTION_STOP;
		} else if (!eq) {
			return fail(err, esize, "unknown option '%.*s'", (int)n, s);
		} else if (is(s, kn, "trace")) {
			if (is(v, vn, "counts"))
				o->mode = JINST_TRACE_COUNTS;
			else if (is(v, vn, "times"))
				o->mode = JINST_TRACE_TIMES;
			else if (is(v, vn, "events"))
				o->mode = JINST_TRACE_EVENTS;
			else
				return fail(err, esize, "trace=%.*s: expected counts, times or events", (int)vn, v);
			mode_given = true;
		} else if (is(s, kn, "include") || is(s, kn, "exclude")) {
			bool inc = s[0] == 'i';
			int r = add_patterns(o, inc ? o->include : o->exclude, inc ? &o->include_count : &o->exclude_count,
			                     inc ? "include" : "exclude", v, vn, err, esize);
			if (r < 0)
				return r;
		} else if (is(s, kn, "format")) {
			int r = parse_formats(o, v, vn, err, esize);
			if (r < 0)
				return r;
			formats_given = true;
		} else if (is(s, kn, "out") || is(s, kn, "log")) {
			char *dst = s[0] == 'o' ? o->out : o->log;
			if (vn == 0)
				return fail(err, esize, "%.*s=: empty path", (int)kn, s);
			if (vn >= sizeof o->out)
				return fail(err, esize, "%.*s=: path too long", (int)kn, s);
			memcpy(dst, v, vn);
			dst[vn] = 0;
		} else if (is(s, kn, "leaves")) {
			if (is(v, vn, "count"))
				o->time_leaves = false;
			else if (is(v, vn, "time"))
				o->time_leaves = true;
			else
				return fail(err, esize, "leaves=%.*s: expected count or time", (int)vn, v);
		} else if (is(s, kn, "foldmin")) {
			char num[32], *rest = NULL;
			double x = -1;
			if (vn > 0 && vn < sizeof num && strspn(v, "0123456789.") >= vn) {
				memcpy(num, v, vn);
				num[vn] = 0;
				x = strtod(num, &rest);
			}
			if (!rest || *rest || x < 0 || x > 100)
				return fail(err, esize, "foldmin=%.*s: expected a percentage from 0 to 100", (int)vn, v);
			o->fold_min = x / 100;
		} else if (is(s, kn, "maxevents")) {
			long x = number(v, vn, 100000000);
			if (x < 2)
				return fail(err, esize, "maxevents=%.*s: expected a number from 2 to 100000000", (int)vn, v);
			o->max_events = x;
		} else if (is(s, kn, "tick")) {
			long x = number(v, vn, 1000000);
			if (x < 0 || (x > 0 && x < 10))
				return fail(err, esize, "tick=%.*s: expected microseconds from 10 to 1000000, or 0", (int)vn, v);
			o->tick_us = x;
		} else {
			return fail(err, esize, "unknown option '%.*s'", (int)kn, s);
		}
		s += n;
		if (*s == ',')
			s++;
	}
	static const unsigned allowed[] = {
		[JINST_TRACE_COUNTS] = JINST_FORMAT_COUNTS,
		[JINST_TRACE_TIMES] = JINST_FORMAT_COUNTS | JINST_FORMAT_PROFILE | JINST_FORMAT_FOLDED,
		[JINST_TRACE_EVENTS] = JINST_FORMAT_CHROME};
	static const char *const mode_names[] = {"", "counts", "times", "events"};
	if (!formats_given) {
		static const unsigned defaults[] = {
			[JINST_TRACE_COUNTS] = JINST_FORMAT_COUNTS,
			[JINST_TRACE_TIMES] = JINST_FORMAT_PROFILE | JINST_FORMAT_FOLDED,
			[JINST_TRACE_EVENTS] = JINST_FORMAT_CHROME};
		o->formats = defaults[o->mode];
	} else if (o->formats & ~allowed[o->mode]) {
		unsigned bad = o->formats & ~allowed[o->mode];
		return fail(err, esize,
		            "format=%s is not available with trace=%s%s (counts: counts; times: counts, profile, folded; "
		            "events: chrome)",
		            (bad & JINST_FORMAT_COUNTS) ? "counts" : (bad & JINST_FORMAT_PROFILE) ? "profile" :
		            (bad & JINST_FORMAT_FOLDED) ? "folded" : "chrome",
		            mode_names[o->mode], mode_given ? "" : " (the default)");
	}
	if (o->include_count == 0)
		for (const char *const *p = jdk_packages; *p && o->exclude_count < JINST_AGENT_MAX_PATTERNS; p++) {
			o->exclude[o->exclude_count++] = *p;
			o->exclude[o->exclude_count] = NULL;
		}
	return 0;
}

void jinst_agent_usage(FILE *f)
{
	fputs("jinst " JINST_VERSION_STRING ": method tracing by bytecode instrumentation\n"
	      "\n"
	      "Usage:\n"
	      "  java -agentpath:/path/libjinst.so[=OPTION,...] ...\n"
	      "  jcmd PID JVMTI.agent_load /path/libjinst.so '\"OPTION,...\"'\n"
	      "      (quoted: jcmd would cut the options at their first '=')\n"
	      "\n"
	      "Options (defaults in brackets):\n"
	      "  help             print these options and exit\n"
	      "  trace=MODE       what to record [counts]\n"
	      "                     counts   exact call counts per method\n"
	      "                     times    exact calls, and inclusive and self wall time per\n"
	      "                              method and the call tree, from a clock (tick=)\n"
	      "                     events   a bounded enter/exit timeline per thread\n"
	      "  include=GLOBS    classes to trace [all]: patterns separated by + or :,\n"
	      "                   . or / between packages, * within a package, ** across\n"
	      "                   (com.example.**, com/example/*Service)\n"
	      "  exclude=GLOBS    classes not to trace [java.**, javax.**, jdk.**, sun.**,\n"
	      "                   com.sun.** when no include= is given]\n"
	      "  format=FMTS      outputs, separated by + or : [counts for trace=counts,\n"
	      "                   profile+folded for times, chrome for events]\n"
	      "                     counts   OUT.tsv     class<TAB>method<TAB>descriptor<TAB>count\n"
	      "                                          (trace=counts or times)\n"
	      "                     profile  OUT.txt     ranked wall-time profile in the manner\n"
	      "                                          of HPROF cpu=times (trace=times)\n"
	      "                     folded   OUT.folded  folded stacks, self ns, for flamegraph.pl\n"
	      "                                          and speedscope (trace=times)\n"
	      "                     chrome   OUT.json    Chrome/Perfetto trace-event JSON\n"
	      "                                          (trace=events)\n"
	      "  foldmin=PERCENT  folded stacks: a stack under this share of the total time\n"
	      "                   is merged with its callees into one \"(small stacks)\" frame\n"
	      "                   under its caller; 0 keeps every stack [0.001]\n"
	      "  leaves=WHAT      trace=times: count or time the calls of leaf methods [count]\n"
	      "                   (a leaf has no loop and calls nothing but on the way to a\n"
	      "                   throw: counted, its time is its caller's self time)\n"
	      "  tick=USEC        trace=times: how often the clock advances, in microseconds,\n"
	      "                   10 to 1000000 [1000]; each advance is given to the stack of\n"
	      "                   every thread where it falls; a shorter tick gives finer\n"
	      "                   times for more CPU; 0: no clock, no times\n"
	      "  out=PATH         output path prefix, %p the process id [jinst-%p]\n"
	      "  maxevents=N      events kept per thread, trace=events [100000]\n"
	      "  log=PATH|stderr  where diagnostics go, %p the process id [stderr]\n"
	      "  dump             (jcmd) write the output now\n"
	      "  stop             (jcmd) write the output and restore the original code\n"
	      "\n"
	      "Options may be repeated: include=a.**,include=b.**. The output is written when\n"
	      "the VM exits, on dump and stop, and when the program calls\n"
	      "jinst.rt.Control.dump(). The agent's runtime (jinst.rt) and the classes it runs\n"
	      "on (java.lang.Object, Thread and its nested classes, ThreadLocal, System, Math,\n"
	      "Module, VirtualThread, java.lang.ref, jdk.internal.module,\n"
	      "jdk.internal.vm.Continuation) are never traced.\n"
	      "\n"
	      "Example:\n"
	      "  java -agentpath:/path/libjinst.so=trace=times,include=com.example.**,out=/tmp/prof-%p App\n",
	      f);
}

const char *jinst_agent_format_ext(unsigned format)
{
	switch (format) {
	case JINST_FORMAT_COUNTS: return ".tsv";
	case JINST_FORMAT_PROFILE: return ".txt";
	case JINST_FORMAT_FOLDED: return ".folded";
	case JINST_FORMAT_CHROME: return ".json";
	default: return NULL;
	}
}

void jinst_agent_expand_path(const char *path, long pid, char *out, size_t size)
{
	size_t k = 0;
	if (!size)
		return;
	for (const char *p = path; *p && k + 1 < size; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			int w = snprintf(out + k, size - k, "%ld", pid);
			k = w < 0 ? k : (k + (size_t)w >= size ? size - 1 : k + (size_t)w);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			out[k++] = '%';
			p++;
		} else {
			out[k++] = *p;
		}
	}
	out[k] = 0;
}
