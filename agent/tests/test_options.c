/*
 * The agent's options (agent/options.c) and module tables (agent/modules.h):
 * defaults, each option, list syntax, the formats each trace mode allows,
 * every mistake refused with a message naming the option; help and the
 * unknown-option message listing every module's options from the tables;
 * which modules are on, and that a module that is off adds no pass to the
 * instrumenter (a module of the test's own beside trace).
 *   test_options DATA_CLASSES
 */
#include <string.h>

#include "core.h"
#include "coverage.h"
#include "trace.h"
#include "../../tests/testlib.h"

static jinst_agent_options o;
static const jinst_trace_config *t;
static char err[1024];

static int parse_with(const jinst_agent_module *const *modules, const char *s)
{
	int r = jinst_agent_options_parse(&o, modules, s, err, sizeof err);
	t = jinst_agent_module_config(&o, &jinst_trace_module);
	return r;
}

static int parse(const char *s)
{
	return parse_with(jinst_agent_modules, s);
}

static bool has(const char *const *list, const char *p)
{
	for (; *list; list++)
		if (!strcmp(*list, p))
			return true;
	return false;
}

static void refused(const char *opts, const char *needle)
{
	int r = parse(opts);
	CHECK(r == JINST_EINVAL, "'%s' accepted", opts);
	CHECK(strstr(err, needle) != NULL, "'%s': message '%s' lacks '%s'", opts, err, needle);
}

/* ---- a module of the test's own: a pass that counts the classes it sees -- */

static unsigned probe_classes;

static int probe_begin(void *state, jinst_pass_class *cls, jinst_diag *diag)
{
	(void)cls, (void)diag;
	++*(unsigned *)state;
	return JINST_PASS_SKIP;
}

static int probe_add_passes(const void *config, jinst_instrument *ins, jinst_diag *diag)
{
	(void)config;
	jinst_pass p = {JINST_PASS_VERSION, "probe", &probe_classes, probe_begin, NULL, NULL, NULL};
	return jinst_instrument_add_pass(ins, &p, diag);
}

static int parse_probe(void *config, const char *v, size_t vn, char *e, size_t esize)
{
	long x = jinst_option_number(v, vn, 9);
	if (x < 0)
		return jinst_option_error(e, esize, "probe=%.*s: expected a digit", (int)vn, v);
	*(long *)config = x;
	return 0;
}

static const jinst_agent_option probe_options[] = {
	{"probe", "DIGIT", "a test's module\nsecond line of its help", parse_probe}, {NULL, NULL, NULL, NULL}};

static const jinst_agent_module probe_module = {
	.name = "probe",
	.summary = "counts the classes it is shown",
	.options = probe_options,
	.config_size = sizeof(long),
	.add_passes = probe_add_passes,
};

static const jinst_agent_module *const with_probe[] = {&jinst_trace_module, &probe_module, NULL};

/* ---- the checks ---- */

static void check_core(void)
{
	CHECK(parse(NULL) == 0, "%s", err);
	CHECK(o.action == JINST_ACTION_START && t && t->mode == JINST_TRACE_COUNTS, "defaults");
	CHECK(jinst_agent_module_on(&o, 0), "trace is on by default");
	CHECK(t->formats == JINST_FORMAT_COUNTS, "default format %x", t->formats);
	CHECK(!strcmp(o.out, "jinst-%p") && !strcmp(o.log, "stderr"), "default out %s log %s", o.out, o.log);
	CHECK(o.include_count == 0 && has(o.exclude, "java/**") && has(o.exclude, "jdk/**"), "JDK excluded by default");

	CHECK(parse("help") == 0 && o.action == JINST_ACTION_HELP, "help");
	CHECK(parse("dump") == 0 && o.action == JINST_ACTION_DUMP, "dump");
	CHECK(parse("stop") == 0 && o.action == JINST_ACTION_STOP, "stop");

	CHECK(parse("include=com.example.**+org/x/*Service,include=a.B,exclude=com.example.internal.**") == 0, "%s",
	      err);
	CHECK(o.include_count == 3 && has(o.include, "com/example/**") && has(o.include, "org/x/*Service") &&
	      has(o.include, "a/B"), "includes");
	/* An include drops the default JDK exclusion. */
	CHECK(o.exclude_count == 1 && !strcmp(o.exclude[0], "com/example/internal/**") && !o.exclude[1], "excludes");
	CHECK(parse("out=/tmp/run-%p,log=/tmp/log-%p.txt,,") == 0 && !strcmp(o.out, "/tmp/run-%p") &&
	      !strcmp(o.log, "/tmp/log-%p.txt"), "%s", err);
	refused("frobnicate", "unknown option 'frobnicate'");
	refused("colour=red", "unknown option 'colour'");
	/* A key there is, with a value it does not take or without one it needs. */
	refused("help=yes", "option 'help' takes no value (help=yes): give help alone");
	refused("monitor=y", "option 'monitor' takes no value (monitor=y): give monitor alone");
	CHECK(!strstr(err, "did you mean"), "monitor=y: %s", err);
	refused("include", "option 'include' needs a value: include=GLOBS");
	refused("include=", "empty pattern");
	refused("include=a++b", "empty pattern");
	refused("exclude=Ljava/lang/String;", "cannot be in a class name pattern");
	refused("out=", "empty path");
	/* out= and log= take %p, %n and %%, and refuse any other '%'. */
	CHECK(parse("out=/tmp/a%p-%n-%%,log=/tmp/l%n-%p%%") == 0 && !strcmp(o.out, "/tmp/a%p-%n-%%"), "%s", err);
	refused("out=/tmp/x%t", "out=/tmp/x%t: %t is not a pattern (known: %p the process id, %n the session, %% a '%')");
	refused("log=/tmp/x-%q.log", "log=/tmp/x-%q.log: %q is not a pattern (known: %p");
	refused("out=/tmp/y%%%", "out=/tmp/y%%%: a '%' at the end (known: ");
	refused("log=/tmp/%%%d", "%d is not a pattern");

	char buf[64];
	jinst_agent_expand_path("a-%p-%%-%p", 42, buf, sizeof buf);
	CHECK(!strcmp(buf, "a-42-%-42"), "expanded '%s'", buf);
	jinst_agent_expand_path("x%p", 123456, buf, 5);
	CHECK(!strcmp(buf, "x123"), "truncated '%s'", buf);
	jinst_agent_expand_session_path("s%n-%p-%%n", 7, 12, buf, sizeof buf);
	CHECK(!strcmp(buf, "s12-7-%n"), "session '%s'", buf);
	jinst_agent_expand_session_path("x%n", 7, 4000, buf, 4);
	CHECK(!strcmp(buf, "x40"), "truncated '%s'", buf);
}

static void check_trace(void)
{
	CHECK(parse("trace=times") == 0 && t->mode == JINST_TRACE_TIMES, "%s", err);
	CHECK(t->formats == (JINST_FORMAT_PROFILE | JINST_FORMAT_FOLDED), "times formats %x", t->formats);
	CHECK(parse("trace=events,maxevents=500") == 0 && t->formats == JINST_FORMAT_CHROME && t->max_events == 500,
	      "%s", err);
	CHECK(parse("trace=times,format=counts+profile:folded") == 0 &&
	      t->formats == (JINST_FORMAT_COUNTS | JINST_FORMAT_PROFILE | JINST_FORMAT_FOLDED), "%s", err);
	refused("trace=bogus", "trace=bogus");
	refused("format=svg", "unknown format 'svg'");
	refused("format=chrome", "chrome");         /* not with trace=counts */
	refused("format=chrome", "(the default)");
	refused("trace=events,format=profile", "profile");
	CHECK(parse("trace=times") == 0 && !t->time_leaves && t->fold_min > 0.0000099 && t->fold_min < 0.0000101,
	      "times defaults: leaves %d, foldmin %g", t->time_leaves, t->fold_min);
	CHECK(parse("trace=times,leaves=time,foldmin=0") == 0 && t->time_leaves && t->fold_min == 0, "%s", err);
	CHECK(parse("trace=times,foldmin=2.5") == 0 && t->fold_min > 0.0249 && t->fold_min < 0.0251, "%s", err);
	refused("leaves=some", "leaves=some");
	refused("foldmin=-1", "foldmin=-1");
	refused("foldmin=101", "foldmin=101");
	refused("foldmin=1e3", "foldmin=1e3");
	refused("foldmin=", "foldmin=");
	refused("maxevents=0", "maxevents=0");
	refused("maxevents=12x", "maxevents=12x");
	CHECK(parse("trace=times") == 0 && t->tick_us == 1000, "tick default %ld", t->tick_us);
	CHECK(parse("trace=times,tick=50") == 0 && t->tick_us == 50, "%s", err);
	CHECK(parse("trace=times,tick=0") == 0 && t->tick_us == 0, "%s", err);
	CHECK(parse("trace=times,tick=1000000") == 0 && t->tick_us == 1000000, "%s", err);
	/* An option the mode would ignore is refused, as clock=cpu is, with what it needs. */
	refused("tick=50", "tick= needs trace=times: trace=counts (the default) runs no clock");
	refused("trace=events,tick=50", "tick= needs trace=times: trace=events runs no clock");
	refused("leaves=time", "leaves= needs trace=times: trace=counts (the default)");
	refused("trace=events,leaves=count", "leaves= needs trace=times: trace=events");
	refused("maxevents=500", "maxevents= needs trace=events: trace=counts (the default) keeps no timeline");
	refused("trace=times,maxevents=500", "maxevents= needs trace=events: trace=times");
	refused("foldmin=2.5", "foldmin= needs format=folded or html (trace=times): trace=counts (the default)");
	refused("trace=events,foldmin=0", "foldmin= needs format=folded or html");
	refused("trace=times,format=profile,foldmin=1", "foldmin= needs format=folded or html");
	CHECK(parse("trace=times,format=html,foldmin=1") == 0 && parse("trace=times,leaves=count,tick=10") == 0,
	      "%s", err);
	refused("clock=cpu", "clock=cpu needs trace=times");
	refused("tick=9", "tick=9");
	refused("tick=1000001", "tick=1000001");
	refused("tick=1ms", "tick=1ms");
	refused("tick=", "tick=");
	refused("trace", "option 'trace' needs a value: trace=MODE"); /* what jcmd leaves of an unquoted trace=times */
	CHECK(jinst_agent_option_wants_value(jinst_agent_modules, "trace") &&
	      jinst_agent_option_wants_value(jinst_agent_modules, "include") &&
	      !jinst_agent_option_wants_value(jinst_agent_modules, "dump") &&
	      !jinst_agent_option_wants_value(jinst_agent_modules, "trace=times"), "keys that take a value");
	CHECK(!strcmp(jinst_trace_format_ext(JINST_FORMAT_CHROME), ".json"), "ext");
}

/* "key=ARG" or "key" of an option. */
static const char *head(const jinst_agent_option *op, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", op->key, op->arg ? "=" : "", op->arg ? op->arg : "");
	return buf;
}

/* Help and the unknown-option message list every option of every module of
 * the registry, from its table; no key is in two tables. */
static void check_tables(const jinst_agent_module *const *modules)
{
	FILE *f = tmpfile();
	jinst_agent_usage(f, modules);
	static char help[32768];
	size_t n = f ? (rewind(f), fread(help, 1, sizeof help - 1, f)) : 0;
	help[n] = 0;
	if (f)
		fclose(f);
	CHECK(strstr(help, "\n  help ") && strstr(help, "\n  include=GLOBS ") && strstr(help, "\n  log=PATH|stderr "),
	      "help lists the core's options");
	parse_with(modules, "nosuchoption=1");
	for (size_t i = 0; modules[i]; i++) {
		char line[128], key[64];
		snprintf(line, sizeof line, "\n%s%s: %s\n", modules[i]->name, modules[i]->by_default ? " (on by default)" : "",
		         modules[i]->summary);
		CHECK(strstr(help, line) != NULL, "help has no heading for %s", modules[i]->name);
		snprintf(line, sizeof line, "; %s: ", modules[i]->name);
		CHECK(strstr(err, line) != NULL, "the unknown-option message does not name %s: %s", modules[i]->name, err);
		for (const jinst_agent_option *op = modules[i]->options; op->key; op++) {
			size_t first = strcspn(op->help, "\n");
			snprintf(line, sizeof line, "\n  %-16s %.*s\n", head(op, key, sizeof key), (int)first, op->help);
			CHECK(strstr(help, line) != NULL, "help lacks '%s'", line + 1);
			CHECK(strstr(err, key) != NULL, "the unknown-option message lacks %s: %s", key, err);
			for (size_t j = 0; modules[j]; j++)
				for (const jinst_agent_option *other = modules[j]->options; other->key; other++)
					/* (a module may have a key both as a flag and with a value: coverage) */
					CHECK(other == op || strcmp(other->key, op->key) ||
					      (j == i && (other->arg != NULL) != (op->arg != NULL)),
					      "%s is in two tables", op->key);
		}
	}
	if (modules == with_probe)
		CHECK(strstr(help, "\n                   second line of its help\n"), "help's lines after the first go under it");
}

/* The instrumenter the options make: the passes of the modules that are on,
 * seen on a class of the test data. */
static void instrumented(const char *data, const char *opts, bool probe_on, const char *marker, bool timed)
{
	size_t len, out_len = 0;
	uint8_t *b = test_load(data, "main/jinsttest/Features.class", &len);
	jinst_arena *arena = NULL;
	jinst_instrument *ins = NULL;
	jinst_diag d;
	memset(&d, 0, sizeof d);
	CHECK(parse_with(with_probe, opts) == 0, "%s: %s", opts, err);
	CHECK(jinst_agent_module_on(&o, 1) == probe_on, "%s: probe on %d", opts, jinst_agent_module_on(&o, 1));
	CHECK(jinst_agent_module_on(&o, 0) == (marker != NULL), "%s: trace on %d", opts, jinst_agent_module_on(&o, 0));
	if (jinst_arena_new(&arena) || jinst_load_instrumenter_new(&o, &ins, &d)) {
		CHECK(false, "%s: instrumenter: %s", opts, d.message);
		jinst_arena_free(arena);
		free(b);
		return;
	}
	uint8_t *out = NULL;
	unsigned before = probe_classes;
	CHECK(!jinst_instrument_class(ins, arena, b, len, NULL, 0, NULL, &out, &out_len, &d), "%s: %s", opts, d.message);
	CHECK(probe_classes - before == (probe_on ? 1u : 0u), "%s: the probe's pass saw %u classes", opts,
	      probe_classes - before);
	jinst_marker mk;
	memset(&mk, 0, sizeof mk);
	if (out)
		jinst_instrument_read_marker(arena, out, out_len, &mk, NULL);
	CHECK(marker ? mk.present && !strcmp(mk.passes, marker) : !out, "%s: marker '%s'", opts, mk.passes);
	bool any_timed = false;
	for (uint32_t i = 0; i < jinst_instrument_method_count(ins); i++) {
		jinst_method_info info;
		any_timed |= !jinst_instrument_method_info(ins, i, &info) && info.timed;
	}
	CHECK(any_timed == timed, "%s: methods timed %d", opts, any_timed);
	free(out);
	jinst_instrument_free(ins);
	jinst_arena_free(arena);
	free(b);
}

static void check_modules(const char *data)
{
	/* No module's option: the modules on by default (trace). */
	instrumented(data, "", false, "trace", false);
	instrumented(data, "include=jinsttest.**", false, "trace", false);
	/* A module's option turns it on, and no other. */
	instrumented(data, "probe=1", true, NULL, false);
	instrumented(data, "probe=1,trace=times", true, "trace", true);
	instrumented(data, "format=counts", false, "trace", false);
	instrumented(data, "trace=times,leaves=time", false, "trace", true);
	CHECK(parse_with(with_probe, "probe=1,trace=events") == 0 && *(long *)o.config[1] == 1 &&
	      ((jinst_trace_config *)o.config[0])->mode == JINST_TRACE_EVENTS, "each module's settings: %s", err);
	/* A module that is off is not checked: trace's formats stay unset. */
	CHECK(parse_with(with_probe, "probe=2") == 0 && ((jinst_trace_config *)o.config[0])->formats == 0,
	      "trace checked while off");
	CHECK(parse_with(with_probe, "probe=x") == JINST_EINVAL && strstr(err, "probe=x"), "probe=x: '%s'", err);
}

/* Names from HPROF, JaCoCo and async-profiler, and typos: refused, with
 * what jinst calls the thing first in the message. */
static void check_suggestions(void)
{
	static const struct { const char *opts, *hint; } cases[] = {
		{"cpu=times", "did you mean trace=times"},   {"cpu=samples", "did you mean trace=times"},
		{"file=x", "did you mean out=PATH"},
		{"destfile=x.exec", "did you mean coverage,out=PATH"},
		{"includes=a.*", "did you mean include=GLOBS"}, {"excludes=a.*", "did you mean exclude=GLOBS"},
		{"event=cpu", "did you mean trace=times"},   {"interval=1000000", "did you mean tick=USEC"},
		{"event=alloc", "did you mean alloc (async-profiler's event=alloc"},
		{"event=lock", "did you mean monitor (async-profiler's event=lock"},
		{"event", "did you mean trace=times"},      {"heap=sites", "did you mean alloc (HPROF's heap=sites"},
		{"incude=a.*", "did you mean include=GLOBS"}, {"maxevent=9", "did you mean maxevents=N"},
		{"trace=counts,fromat=counts", "did you mean format=FMTS"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		refused(cases[i].opts, "unknown option");
		CHECK(strstr(err, cases[i].hint) && strstr(err, cases[i].hint) < strstr(err, "(options: "),
		      "'%s': no '%s' before the list: %s", cases[i].opts, cases[i].hint, err);
	}
	refused("frobnicate", "unknown option 'frobnicate' (options: ");
	CHECK(!strstr(err, "did you mean"), "a suggestion for frobnicate: %s", err);
	CHECK(parse("coverage,append=true") == 0, "JaCoCo's append=true refused: %s", err);
	/* HPROF's depth= is the allocation module's (stack frames per site),
	 * and alone would turn it on, unasked. */
	CHECK(parse("alloc,depth=10") == 0, "alloc,depth=10 refused: %s", err);
	CHECK(parse("depth=3,alloc=sites") == 0, "depth=3,alloc=sites refused: %s", err);
	refused("alloc=live,depth=4", "do not go together");
	refused("depth=4", "depth=4 goes with alloc (alloc,depth=4");
	refused("depth=4", "HPROF's depth= is the stack depth of its traces");
	refused("trace=times,depth=10", "depth=10 goes with alloc");
	/* natives only makes native methods visible to the other passes:
	 * alone, or with passes that do not look at them, it records nothing. */
	refused("natives", "natives records nothing alone");
	refused("natives=all,include=a.**", "add one of them");
	refused("natives,coverage,alloc", "(trace=counts,natives)");
	CHECK(parse("trace=counts,natives") == 0 && parse("natives,monitor") == 0 && parse("trace=times,natives=all") == 0,
	      "natives with trace or monitor refused: %s", err);
}

/* append= is the core's: it turns no module on, and each module on says
 * whether its outputs can be appended to (trace: not the JSON nor the
 * HTML page, one document each). */
static unsigned bit_of(const jinst_agent_module *m)
{
	for (unsigned i = 0; jinst_agent_modules[i]; i++)
		if (jinst_agent_modules[i] == m)
			return 1u << i;
	return 0;
}

static void check_append(void)
{
	const unsigned trace = bit_of(&jinst_trace_module), coverage = bit_of(&jinst_coverage_module);
	CHECK(parse("trace=counts") == 0 && !o.append, "append by default: %s", err);
	CHECK(parse("trace=times,append=y") == 0 && o.append && o.enabled == trace,
	      "trace=times,append=y: %s (enabled %x)", err, o.enabled);
	CHECK(parse("append=y") == 0 && o.enabled == trace, "append=y alone turned on %x: %s", o.enabled, err);
	CHECK(parse("coverage,append=yes") == 0 && o.append && o.enabled == coverage, "coverage,append=yes: %s", err);
	CHECK(parse("append=y,append=n") == 0 && !o.append, "append=n after y: %s", err);
	CHECK(parse("trace=times,format=counts+profile+folded,append=y") == 0, "text formats appended: %s", err);
	refused("append=maybe", "append=maybe: expected y or n");
	refused("trace=events,append=y", "format=chrome (OUT.json, trace=events' default) is one document");
	refused("trace=events,append=y", "out=PATH%n");
	refused("trace=times,format=folded+html,append=y", "format=html (OUT.html)");
	refused("trace=times,format=html,append=y", "or leave it out of format=");
	CHECK(parse("trace=events,append=n") == 0 && parse("trace=times,format=html") == 0, "%s", err);
}

/* The registry jinst attach parses against has the agent's modules, in its
 * order, with the same option tables; and parses alike. */
static void check_option_registry(void)
{
	size_t i = 0;
	for (; jinst_agent_modules[i]; i++) {
		const jinst_agent_module *a = jinst_agent_modules[i], *b = jinst_agent_option_modules[i];
		CHECK(b && !strcmp(a->name, b->name) && a->options == b->options && a->config_size == b->config_size &&
		          a->defaults == b->defaults && a->check == b->check && a->check_append == b->check_append &&
		          a->by_default == b->by_default &&
		          /* string literals: one copy or two, as the compiler merges them */
		          !a->needs_one_of == !b->needs_one_of &&
		          (!a->needs_one_of || !strcmp(a->needs_one_of, b->needs_one_of)),
		      "option registry differs at %zu (%s)", i, a->name);
		if (!b)
			return;
	}
	CHECK(!jinst_agent_option_modules[i], "the option registry has more modules");
	static jinst_agent_options other;
	char e2[1024];
	CHECK(parse("trace=times,include=a.*,out=x") == 0 &&
	          jinst_agent_options_parse(&other, jinst_agent_option_modules, "trace=times,include=a.*,out=x", e2,
	                                    sizeof e2) == 0 &&
	          other.enabled == o.enabled && !strcmp(other.include[0], o.include[0]),
	      "the two registries parse differently");
}

/* The first line of a session says what include= takes and that outputs are
 * replaced. */
static void check_describe(void)
{
	char line[1024];
	CHECK(parse("include=app.*:lib.**") == 0, "%s", err);
	jinst_agent_options_describe(&o, "/w/out-1", line, sizeof line);
	CHECK(strstr(line, "include=app.* (app's own classes, not its subpackages': app.** takes those too)") &&
	          strstr(line, "include=lib.**") && strstr(line, "/w/out-1.* replaced at every write") &&
	          !strncmp(line, "trace", 5),
	      "describe: %s", line);
	CHECK(parse("coverage,append=y") == 0, "%s", err);
	jinst_agent_options_describe(&o, "o", line, sizeof line);
	CHECK(strstr(line, "every class but the JDK's") && strstr(line, "appended to (append=y)") &&
	          strstr(line, "'# jinst session N, pid P, started TIME', OUT.cov merged into"),
	      "describe: %s", line);
	CHECK(parse("coverage") == 0, "%s", err);
	jinst_agent_options_describe(&o, "o", line, sizeof line);
	CHECK(strstr(line, "o.* replaced at every write (dump, stop, exit), o.cov too (give append=y to merge each "
	                   "session into it)") &&
	          !strstr(line, "merged into"),
	      "describe: %s", line);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_options DATA_CLASSES\n");
		return 2;
	}
	check_core();
	check_trace();
	check_tables(jinst_agent_modules);
	check_tables(with_probe);
	check_modules(argv[1]);
	check_suggestions();
	check_append();
	check_option_registry();
	check_describe();
	return check_report();
}
