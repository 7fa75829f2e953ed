/*
 * Option parsing for the agent (options.h). Options are separated by ',';
 * a list value takes '+' or ':' between its items, and list options may be
 * repeated. Every mistake is reported with the option it is in, so the VM
 * can refuse to start with a message that says what to fix.
 *
 * One loop serves the core and every module: a key is looked up in the
 * core's table, then in each module's (modules.h), and handed with its
 * value to that option's parse function, which writes into the core's
 * options or into the module's settings. The help comes from the same
 * tables, so an option cannot be parsed and not listed.
 */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include "modules.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jinst/classfile.h"

/* The JDK's own packages: left alone unless an include= asks for them. */
static const char *const jdk_packages[] = {"java/**", "javax/**", "jdk/**", "sun/**", "com/sun/**", NULL};

int jinst_option_error(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && size)
		vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return JINST_EINVAL;
}

/* Each session goes after what a file holds, which no module reads, so
 * any contents do; but a file that cannot be opened to write (a folder, no
 * write permission) would lose every write of the session, one log line at
 * a time, where coverage's .cov that cannot be read is refused at the
 * load: so is this. */
int jinst_agent_output_check_existing(const char *prefix, const char *ext, char *err, size_t esize)
{
	char path[1100];
	struct stat st;
	snprintf(path, sizeof path, "%s%s", prefix, ext);
	if (stat(path, &st) != 0)
		return 0;
	int fd = S_ISREG(st.st_mode) ? open(path, O_WRONLY | O_CLOEXEC) : -1;
	const char *why = S_ISREG(st.st_mode) ? (fd < 0 ? strerror(errno) : NULL) : "not a file";
	if (fd >= 0)
		close(fd);
	if (why)
		return jinst_option_error(err, esize,
		                          "append=y: %s cannot be appended to: %s; move it away or give out= another "
		                          "path",
		                          path, why);
	return 0;
}

bool jinst_option_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !memcmp(s, word, n);
}

long jinst_option_number(const char *v, size_t vn, long max)
{
	long x = 0;
	size_t i = 0;
	for (; i < vn && v[i] >= '0' && v[i] <= '9' && x <= max; i++)
		x = x * 10 + (v[i] - '0');
	return vn == 0 || i < vn || x > max ? -1 : x;
}

/* ---- the core's options ------------------------------------------------ */

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
			return jinst_option_error(err, esize, "%s=: empty pattern", key);
		if (*count == JINST_AGENT_MAX_PATTERNS)
			return jinst_option_error(err, esize, "%s=: more than %d patterns", key, JINST_AGENT_MAX_PATTERNS);
		for (size_t c = i; c < j; c++) {
			unsigned char ch = (unsigned char)v[c];
			if (ch <= ' ' || ch == ';' || ch == '[')
				return jinst_option_error(err, esize, "%s=%.*s: '%c' cannot be in a class name pattern", key,
				                          (int)vn, v, ch > ' ' ? ch : '?');
		}
		const char *p = keep(o, v + i, j - i, true);
		if (!p)
			return jinst_option_error(err, esize, "%s=: options too long", key);
		list[(*count)++] = p;
		list[*count] = NULL;
		i = j + 1;
	}
	return 0;
}

static int parse_include(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_agent_options *o = c;
	return add_patterns(o, o->include, &o->include_count, "include", v, vn, err, esize);
}

static int parse_exclude(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_agent_options *o = c;
	return add_patterns(o, o->exclude, &o->exclude_count, "exclude", v, vn, err, esize);
}

static int set_path(char *dst, size_t size, const char *key, const char *v, size_t vn, char *err, size_t esize)
{
	if (vn == 0)
		return jinst_option_error(err, esize, "%s=: empty path", key);
	if (vn >= size)
		return jinst_option_error(err, esize, "%s=: path too long", key);
	memcpy(dst, v, vn);
	dst[vn] = 0;
	return 0;
}

/* A path with the patterns jinst_agent_expand_session_path replaces: any
 * other '%' is refused, not kept as it is (out=x%t wrote x%t.tsv, where
 * a user had meant a time). */
static int set_pattern(char *dst, size_t size, const char *key, const char *v, size_t vn, char *err, size_t esize)
{
	static const char known[] = "(known: %p the process id, %n the session, %% a '%')";
	for (size_t i = 0; i < vn; i++) {
		if (v[i] != '%')
			continue;
		if (i + 1 == vn)
			return jinst_option_error(err, esize, "%s=%.*s: a '%%' at the end %s", key, (int)vn, v, known);
		if (!strchr("pn%", v[i + 1]))
			return jinst_option_error(err, esize, "%s=%.*s: %%%c is not a pattern %s", key, (int)vn, v, v[i + 1],
			                          known);
		i++;
	}
	return set_path(dst, size, key, v, vn, err, esize);
}

static int parse_out(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_agent_options *o = c;
	return set_pattern(o->out, sizeof o->out, "out", v, vn, err, esize);
}

static int parse_log(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_agent_options *o = c;
	o->log_given = true;
	return set_pattern(o->log, sizeof o->log, "log", v, vn, err, esize);
}

static int parse_reply(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_agent_options *o = c;
	return set_path(o->reply, sizeof o->reply, "reply", v, vn, err, esize);
}

/* JaCoCo's append=true is taken as it is. */
static int parse_append(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_agent_options *o = c;
	if (jinst_option_is(v, vn, "y") || jinst_option_is(v, vn, "yes") || jinst_option_is(v, vn, "true"))
		o->append = true;
	else if (jinst_option_is(v, vn, "n") || jinst_option_is(v, vn, "no") || jinst_option_is(v, vn, "false"))
		o->append = false;
	else
		return jinst_option_error(err, esize, "append=%.*s: expected y or n", (int)vn, v);
	return 0;
}

static int action(void *c, enum jinst_agent_action a)
{
	((jinst_agent_options *)c)->action = a;
	return 0;
}

static int parse_help(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	(void)v, (void)vn, (void)err, (void)esize;
	return action(c, JINST_ACTION_HELP);
}

static int parse_dump(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	(void)v, (void)vn, (void)err, (void)esize;
	return action(c, JINST_ACTION_DUMP);
}

static int parse_stop(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	(void)v, (void)vn, (void)err, (void)esize;
	return action(c, JINST_ACTION_STOP);
}

static int parse_reset(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	(void)v, (void)vn, (void)err, (void)esize;
	return action(c, JINST_ACTION_RESET);
}

static const jinst_agent_option core_options[] = {
	{"help", NULL,
	 "print these options and end the VM (at launch; a load in a\n"
	 "running VM is refused: jinst attach PID help prints them)",
	 parse_help},
	{"include", "GLOBS",
	 "classes to instrument [all]: patterns separated by + or :,\n"
	 ". or / between packages, * within a package, ** across:\n"
	 "app.* is app's own classes, not its subpackages' (app.**\n"
	 "takes those too); com/example/*Service",
	 parse_include},
	{"exclude", "GLOBS",
	 "classes not to instrument [java.**, javax.**, jdk.**, sun.**,\n"
	 "com.sun.** and every class of the boot and platform loaders\n"
	 "(the JDK's org.xml.sax, org.w3c.dom...) when no include= is given]",
	 parse_exclude},
	{"out", "PATH",
	 "output path prefix, %p the process id [jinst-%p], %n the\n"
	 "session (1; one more at each attach after stop: with %n\n"
	 "each session writes files of its own), %% a '%' (any other\n"
	 "'%' is refused); a folder (a trailing / or one that exists)\n"
	 "gets jinst-%p in it;\n"
	 "each output is replaced at every write (dump, stop, exit),\n"
	 "unless append=y; checked at start: a folder that cannot be\n"
	 "written refuses the load",
	 parse_out},
	{"append", "y|n",
	 "add to the outputs there are instead of replacing them [n]:\n"
	 "OUT.cov is merged into (a session each, probes or-ed or\n"
	 "added); OUT.tsv, .txt, .folded, OUT.alloc.* and\n"
	 "OUT.monitors.* get each session after what they hold,\n"
	 "under a line '# jinst session N, pid P, started TIME'\n"
	 "(readers skip lines that begin with '#'; a dump rewrites\n"
	 "its session's part); .json and .html are one document\n"
	 "each and refuse append=y (out=...%n instead); a file\n"
	 "there that cannot be added to (a .cov that cannot be\n"
	 "read, a folder) refuses the load",
	 parse_append},
	{"log", "PATH|stderr",
	 "where diagnostics go [stderr], %p, %n and %% as in out=;\n"
	 "a session after stop writes to its own log= (without, to\n"
	 "the log before); one that cannot be opened refuses the load",
	 parse_log},
	{"dump", NULL, "(jcmd) write the output now", parse_dump},
	{"stop", NULL, "(jcmd) write the output and restore the original code", parse_stop},
	{"reset", NULL,
	 "(jcmd) forget what was recorded so far: coverage and monitor;\n"
	 "trace and alloc cannot (refused when no module on can)",
	 parse_reset},
	{"reply", "PATH",
	 "(jinst attach) this load's messages go to PATH too, which the\n"
	 "tool prints on its terminal (the VM's own stderr may be a log)",
	 parse_reply},
	{NULL, NULL, NULL, NULL}};

/* ---- the loop ---------------------------------------------------------- */

/* The defaults, and each module's settings laid out in config_buf. */
static int reset(jinst_agent_options *o, const jinst_agent_module *const *modules, char *err, size_t esize)
{
	memset(o, 0, sizeof *o);
	o->action = JINST_ACTION_START;
	o->modules = modules;
	snprintf(o->out, sizeof o->out, "jinst-%%p");
	snprintf(o->log, sizeof o->log, "stderr");
	if (err && esize)
		err[0] = 0;
	const size_t align = alignof(max_align_t);
	size_t used = 0;
	for (size_t i = 0; modules && modules[i]; i++) {
		const jinst_agent_module *m = modules[i];
		size_t size = (m->config_size + align - 1) / align * align;
		if (i == JINST_AGENT_MAX_MODULES || size > sizeof o->config_buf - used)
			return jinst_option_error(err, esize, "%s: no room for the module's settings", m->name);
		o->config[i] = o->config_buf + used;
		used += size;
		if (m->defaults)
			m->defaults(o->config[i]);
	}
	return 0;
}

/* The option key[0..kn) (with a value or not) of the core (*module = -1)
 * or of a module; NULL when there is none. */
static const jinst_agent_option *find(const jinst_agent_module *const *modules, const char *key, size_t kn,
                                       bool with_value, int *module)
{
	for (int i = -1; i < 0 || (modules && modules[i]); i++)
		for (const jinst_agent_option *op = i < 0 ? core_options : modules[i]->options; op && op->key; op++)
			if (jinst_option_is(key, kn, op->key) && (op->arg != NULL) == with_value) {
				*module = i;
				return op;
			}
	return NULL;
}

/* Appends the options of one table to err: "key=ARG, key, ...". */
static void list_options(char *err, size_t esize, const jinst_agent_option *op)
{
	for (; op && op->key; op++) {
		size_t used = strlen(err);
		snprintf(err + used, esize - used, "%s%s%s%s", op->key, op->arg ? "=" : "", op->arg ? op->arg : "",
		         op[1].key ? ", " : "");
	}
}

/* Names users bring from other agents, and what jinst calls the thing: the
 * first row of the key whose value is the one given, or any (NULL). */
static const struct { const char *key, *value, *hint; } foreign[] = {
	{"cpu", NULL, "trace=times (HPROF's cpu=times: exact calls, and times from a clock)"},
	{"heap", NULL, "alloc (HPROF's heap=sites: objects and bytes per allocation site; jinst writes no heap dump)"},
	{"file", NULL, "out=PATH (HPROF's and async-profiler's file=; jinst adds .tsv, .txt, .cov...)"},
	{"destfile", NULL, "coverage,out=PATH (JaCoCo's destfile=; the data goes to PATH.cov)"},
	{"includes", NULL, "include=GLOBS (JaCoCo's includes=; its com.example.* is com.example.** here)"},
	{"excludes", NULL, "exclude=GLOBS (JaCoCo's excludes=; its com.example.* is com.example.** here)"},
	{"event", "alloc", "alloc (async-profiler's event=alloc; jinst counts every allocation, not samples)"},
	{"event", "lock", "monitor (async-profiler's event=lock; jinst counts every enter of a lock site)"},
	{"event", NULL, "trace=times (async-profiler's event=; jinst records every call, not samples)"},
	{"interval", NULL, "tick=USEC (async-profiler's interval= is nanoseconds; tick= microseconds)"},
	{NULL, NULL, NULL}};

/* The edit distance of a[0..an) and b, when both are short. */
static size_t distance(const char *a, size_t an, const char *b)
{
	size_t bn = strlen(b), row[32];
	if (an >= 31 || bn >= 31)
		return SIZE_MAX;
	for (size_t j = 0; j <= bn; j++)
		row[j] = j;
	for (size_t i = 1; i <= an; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= bn; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			best = up + 1 < best ? up + 1 : best;
			best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
			diag = up;
			row[j] = best;
		}
	}
	return row[bn];
}

/* The option a mistyped key most likely meant (two edits at most, and
 * fewer than half its letters), or NULL. */
static const jinst_agent_option *nearest(const jinst_agent_module *const *modules, const char *key, size_t kn)
{
	const jinst_agent_option *best = NULL;
	size_t best_d = kn < 6 ? 1 : 2;
	for (int i = -1; i < 0 || (modules && modules[i]); i++)
		for (const jinst_agent_option *op = i < 0 ? core_options : modules[i]->options; op && op->key; op++) {
			size_t d = distance(key, kn, op->key);
			if (d <= best_d && (!best || d < best_d)) {
				best = op;
				best_d = d;
			}
		}
	return best;
}

/* "did you mean ...?" for key (value: what followed its '=', or NULL), or
 * "" when nothing comes close. */
static void suggest(const jinst_agent_module *const *modules, const char *key, size_t kn, const char *value,
                    size_t vn, char *out, size_t size)
{
	out[0] = 0;
	for (size_t i = 0; foreign[i].key; i++)
		if (jinst_option_is(key, kn, foreign[i].key) &&
		    (!foreign[i].value || (value && jinst_option_is(value, vn, foreign[i].value)))) {
			snprintf(out, size, ": did you mean %s?", foreign[i].hint);
			return;
		}
	const jinst_agent_option *op = nearest(modules, key, kn);
	if (op)
		snprintf(out, size, ": did you mean %s%s%s?", op->key, op->arg ? "=" : "", op->arg ? op->arg : "");
}

static int unknown(const jinst_agent_module *const *modules, const char *key, size_t kn, const char *value, size_t vn,
                   char *err, size_t esize)
{
	/* The key is known, without a value or with one: a nearest key would
	 * be itself ("did you mean monitor?" of monitor=y). */
	int module;
	const jinst_agent_option *op = find(modules, key, kn, !value, &module);
	if (op && op->arg)
		return jinst_option_error(err, esize, "option '%s' needs a value: %s=%s", op->key, op->key, op->arg);
	if (op)
		return jinst_option_error(err, esize, "option '%s' takes no value (%s=%.*s): give %s alone", op->key,
		                          op->key, (int)vn, value, op->key);
	char hint[200];
	suggest(modules, key, kn, value, vn, hint, sizeof hint);
	jinst_option_error(err, esize, "unknown option '%.*s'%s (options: ", (int)kn, key, hint);
	if (!err || !esize)
		return JINST_EINVAL;
	list_options(err, esize, core_options);
	for (size_t i = 0; modules && modules[i]; i++) {
		size_t used = strlen(err);
		snprintf(err + used, esize - used, "; %s: ", modules[i]->name);
		list_options(err, esize, modules[i]->options);
	}
	size_t used = strlen(err);
	snprintf(err + used, esize - used, ")");
	return JINST_EINVAL;
}

/* One item, s[0..n) (key or key=value). */
static int parse_item(jinst_agent_options *o, const char *s, size_t n, char *err, size_t esize)
{
	const char *eq = memchr(s, '=', n);
	size_t kn = eq ? (size_t)(eq - s) : n;
	int i;
	const jinst_agent_option *op = find(o->modules, s, kn, eq != NULL, &i);
	if (!op)
		return unknown(o->modules, s, kn, eq ? eq + 1 : NULL, eq ? n - kn - 1 : 0, err, esize);
	if (i >= 0)
		o->enabled |= 1u << i;
	return op->parse(i < 0 ? (void *)o : o->config[i], eq ? eq + 1 : NULL, eq ? n - kn - 1 : 0, err, esize);
}

/* Whether one of the modules names ("a+b") is on. */
static bool any_on(const jinst_agent_options *o, const char *names)
{
	for (const char *s = names; *s;) {
		size_t n = strcspn(s, "+");
		for (size_t i = 0; o->modules && o->modules[i]; i++)
			if (jinst_option_is(s, n, o->modules[i]->name) && jinst_agent_module_on(o, i))
				return true;
		s += n + (s[n] == '+');
	}
	return false;
}

/* After the last item: the modules on by default when none was named, each
 * module's checks, the JDK left alone unless an include= names classes. */
static int finish(jinst_agent_options *o, char *err, size_t esize)
{
	if (!o->enabled)
		for (size_t i = 0; o->modules && o->modules[i]; i++)
			if (o->modules[i]->by_default)
				o->enabled |= 1u << i;
	for (size_t i = 0; o->modules && o->modules[i]; i++) {
		const jinst_agent_module *m = o->modules[i];
		int r = jinst_agent_module_on(o, i) && m->check ? m->check(o->config[i], err, esize) : 0;
		if (r == 0 && o->append && jinst_agent_module_on(o, i) && m->check_append)
			r = m->check_append(o->config[i], err, esize);
		if (r == 0 && jinst_agent_module_on(o, i) && m->needs_one_of && !any_on(o, m->needs_one_of))
			r = jinst_option_error(err, esize, "%s", m->alone);
		if (r < 0)
			return r;
	}
	if (o->include_count == 0)
		for (const char *const *p = jdk_packages; *p && o->exclude_count < JINST_AGENT_MAX_PATTERNS; p++) {
			o->exclude[o->exclude_count++] = *p;
			o->exclude[o->exclude_count] = NULL;
		}
	return 0;
}

int jinst_agent_options_parse(jinst_agent_options *o, const jinst_agent_module *const *modules, const char *options,
                              char *err, size_t esize)
{
	int r = reset(o, modules, err, esize);
	const char *s = options ? options : "";
	while (r == 0 && *s) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		/* an empty item (",," or a trailing ',') is harmless */
		if (n > 0)
			r = parse_item(o, s, n, err, esize);
		s += n;
		if (*s == ',')
			s++;
	}
	return r < 0 ? r : finish(o, err, esize);
}

void *jinst_agent_module_config(const jinst_agent_options *o, const jinst_agent_module *m)
{
	for (size_t i = 0; o->modules && o->modules[i]; i++)
		if (o->modules[i] == m)
			return o->config[i];
	return NULL;
}

bool jinst_agent_option_wants_value(const jinst_agent_module *const *modules, const char *s)
{
	int module;
	return s && find(modules, s, strlen(s), true, &module) != NULL;
}

/* ---- help -------------------------------------------------------------- */

static void print_options(FILE *f, const jinst_agent_option *op)
{
	for (; op && op->key; op++) {
		char head[64];
		snprintf(head, sizeof head, "%s%s%s", op->key, op->arg ? "=" : "", op->arg ? op->arg : "");
		const char *line = op->help;
		for (bool first = true; line; first = false) {
			const char *nl = strchr(line, '\n');
			int len = nl ? (int)(nl - line) : (int)strlen(line);
			if (first)
				fprintf(f, "  %-16s %.*s\n", head, len, line);
			else
				fprintf(f, "%19s%.*s\n", "", len, line);
			line = nl ? nl + 1 : NULL;
		}
	}
}

void jinst_agent_usage(FILE *f, const jinst_agent_module *const *modules)
{
	fputs("jinst " JINST_VERSION_STRING ": bytecode instrumentation for the JVM\n"
	      "\n"
	      "Usage:\n"
	      "  java -agentpath:/path/libjinst.so[=OPTION,...] ...\n"
	      "  jcmd PID JVMTI.agent_load /path/libjinst.so '\"OPTION,...\"'\n"
	      "      (quoted: jcmd would cut the options at their first '=')\n"
	      "\n"
	      "Options (defaults in brackets):\n",
	      f);
	print_options(f, core_options);
	for (size_t i = 0; modules && modules[i]; i++) {
		fprintf(f, "\n%s%s: %s\n", modules[i]->name, modules[i]->by_default ? " (on by default)" : "",
		        modules[i]->summary);
		print_options(f, modules[i]->options);
	}
	fputs("\n"
	      "A module is on when one of its options is given; when none is, those on by\n"
	      "default are. Options may be repeated: include=a.**,include=b.**. The output is\n"
	      "written when the VM exits, on dump and stop, and when the program calls\n"
	      "jinst.rt.Control.dump(). The agent's runtime (jinst.rt) and the classes it runs\n"
	      "on (java.lang.Object, Thread and its nested classes, ThreadLocal, System, Math,\n"
	      "Module, VirtualThread, java.lang.ref, jdk.internal.module,\n"
	      "jdk.internal.vm.Continuation) are never instrumented.\n"
	      "\n"
	      "Examples:\n"
	      "  java -agentpath:/path/libjinst.so=trace=times,include=com.example.**,out=/tmp/prof-%p App\n"
	      "  every pass in one transformation (each module's outputs beside the others'):\n"
	      "  java -agentpath:/path/libjinst.so=trace=counts,coverage,alloc,monitor,natives,include=com.example.** App\n",
	      f);
}

/* Appends to buf what one include pattern takes, in the user's dots. */
static void describe_pattern(char *buf, size_t size, const char *p)
{
	size_t used = strlen(buf), n = strlen(p);
	char dots[256];
	snprintf(dots, sizeof dots, "%s", p);
	for (char *c = dots; *c; c++)
		*c = *c == '/' ? '.' : *c;
	if (n >= 2 && !strcmp(p + n - 2, "/*"))
		snprintf(buf + used, size - used, ", include=%s (%.*s's own classes, not its subpackages': %.*s.** takes those too)",
		         dots, (int)(strlen(dots) - 2), dots, (int)(strlen(dots) - 2), dots);
	else
		snprintf(buf + used, size - used, ", include=%s", dots);
}

void jinst_agent_options_describe(const jinst_agent_options *o, const char *out_prefix, char *buf, size_t size)
{
	if (!size)
		return;
	buf[0] = 0;
	for (size_t i = 0; o->modules && o->modules[i]; i++)
		if (jinst_agent_module_on(o, i)) {
			size_t used = strlen(buf);
			snprintf(buf + used, size - used, "%s%s", used ? "+" : "", o->modules[i]->name);
		}
	if (!o->include_count) {
		size_t used = strlen(buf);
		snprintf(buf + used, size - used, ", every class but the JDK's");
	}
	for (size_t i = 0; i < o->include_count; i++)
		describe_pattern(buf, size, o->include[i]);
	size_t used = strlen(buf);
	if (o->append)
		snprintf(buf + used, size - used,
		         "; outputs %s.* appended to (append=y): each session's after what they hold, under a line "
		         "'# jinst session N, pid P, started TIME'%s",
		         out_prefix, strstr(buf, "coverage") ? ", OUT.cov merged into" : "");
	else if (strstr(buf, "coverage"))
		/* JaCoCo merges into its file by default: say how to get that,
		 * in words that cannot read as in effect. */
		snprintf(buf + used, size - used,
		         "; outputs %s.* replaced at every write (dump, stop, exit), %s.cov too (give append=y to merge "
		         "each session into it)",
		         out_prefix, out_prefix);
	else
		snprintf(buf + used, size - used, "; outputs %s.* replaced at every write (dump, stop, exit)", out_prefix);
}

void jinst_agent_expand_path(const char *path, long pid, char *out, size_t size)
{
	jinst_agent_expand_session_path(path, pid, 1, out, size);
}

void jinst_agent_expand_session_path(const char *path, long pid, unsigned session, char *out, size_t size)
{
	size_t k = 0;
	if (!size)
		return;
	for (const char *p = path; *p && k + 1 < size; p++) {
		if (p[0] == '%' && (p[1] == 'p' || p[1] == 'n')) {
			int w = p[1] == 'p' ? snprintf(out + k, size - k, "%ld", pid) : snprintf(out + k, size - k, "%u", session);
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
