/*
 * The agent's option parser (agent/options.c): defaults, each option, list
 * syntax, the formats each mode allows, and that every mistake is refused
 * with a message naming the option.
 */
#include <string.h>

#include "jinst/classfile.h"
#include "options.h"
#include "../../tests/testlib.h"

static jinst_agent_options o;
static char err[512];

static int parse(const char *s)
{
	return jinst_agent_options_parse(&o, s, err, sizeof err);
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

int main(void)
{
	CHECK(parse(NULL) == 0, "%s", err);
	CHECK(o.action == JINST_ACTION_START && o.mode == JINST_TRACE_COUNTS, "defaults");
	CHECK(o.formats == JINST_FORMAT_COUNTS, "default format %x", o.formats);
	CHECK(!strcmp(o.out, "jinst-%p") && !strcmp(o.log, "stderr"), "default out %s log %s", o.out, o.log);
	CHECK(o.include_count == 0 && has(o.exclude, "java/**") && has(o.exclude, "jdk/**"),
	      "JDK excluded by default");

	CHECK(parse("help") == 0 && o.action == JINST_ACTION_HELP, "help");
	CHECK(parse("dump") == 0 && o.action == JINST_ACTION_DUMP, "dump");
	CHECK(parse("stop") == 0 && o.action == JINST_ACTION_STOP, "stop");

	CHECK(parse("trace=times") == 0 && o.mode == JINST_TRACE_TIMES, "%s", err);
	CHECK(o.formats == (JINST_FORMAT_PROFILE | JINST_FORMAT_FOLDED), "times formats %x", o.formats);
	CHECK(parse("trace=events,maxevents=500") == 0 && o.formats == JINST_FORMAT_CHROME && o.max_events == 500,
	      "%s", err);
	CHECK(parse("trace=times,format=counts+profile:folded") == 0 &&
	      o.formats == (JINST_FORMAT_COUNTS | JINST_FORMAT_PROFILE | JINST_FORMAT_FOLDED), "%s", err);

	CHECK(parse("include=com.example.**+org/x/*Service,include=a.B,exclude=com.example.internal.**") == 0, "%s",
	      err);
	CHECK(o.include_count == 3 && has(o.include, "com/example/**") && has(o.include, "org/x/*Service") &&
	      has(o.include, "a/B"), "includes");
	/* An include drops the default JDK exclusion. */
	CHECK(o.exclude_count == 1 && !strcmp(o.exclude[0], "com/example/internal/**") && !o.exclude[1],
	      "excludes");
	CHECK(parse("out=/tmp/run-%p,log=/tmp/log-%p.txt,,") == 0 && !strcmp(o.out, "/tmp/run-%p") &&
	      !strcmp(o.log, "/tmp/log-%p.txt"), "%s", err);

	refused("trace=bogus", "trace=bogus");
	refused("frobnicate", "unknown option 'frobnicate'");
	refused("colour=red", "unknown option 'colour'");
	refused("format=svg", "unknown format 'svg'");
	refused("format=chrome", "chrome");         /* not with trace=counts */
	refused("trace=events,format=profile", "profile");
	CHECK(parse("trace=times") == 0 && !o.time_leaves && o.fold_min > 0.0000099 && o.fold_min < 0.0000101,
	      "times defaults: leaves %d, foldmin %g", o.time_leaves, o.fold_min);
	CHECK(parse("trace=times,leaves=time,foldmin=0") == 0 && o.time_leaves && o.fold_min == 0, "%s", err);
	CHECK(parse("foldmin=2.5") == 0 && o.fold_min > 0.0249 && o.fold_min < 0.0251, "%s", err);
	refused("leaves=some", "leaves=some");
	refused("foldmin=-1", "foldmin=-1");
	refused("foldmin=101", "foldmin=101");
	refused("foldmin=1e3", "foldmin=1e3");
	refused("foldmin=", "foldmin=");
	refused("maxevents=0", "maxevents=0");
	refused("maxevents=12x", "maxevents=12x");
	CHECK(parse("trace=times") == 0 && o.tick_us == 1000, "tick default %ld", o.tick_us);
	CHECK(parse("trace=times,tick=50") == 0 && o.tick_us == 50, "%s", err);
	CHECK(parse("trace=times,tick=0") == 0 && o.tick_us == 0, "%s", err);
	CHECK(parse("tick=1000000") == 0 && o.tick_us == 1000000, "%s", err);
	refused("tick=9", "tick=9");
	refused("tick=1000001", "tick=1000001");
	refused("tick=1ms", "tick=1ms");
	refused("tick=", "tick=");
	refused("include=", "empty pattern");
	refused("include=a++b", "empty pattern");
	refused("exclude=Ljava/lang/String;", "cannot be in a class name pattern");
	refused("out=", "empty path");

	char buf[64];
	jinst_agent_expand_path("a-%p-%%-%p", 42, buf, sizeof buf);
	CHECK(!strcmp(buf, "a-42-%-42"), "expanded '%s'", buf);
	jinst_agent_expand_path("x%p", 123456, buf, 5);
	CHECK(!strcmp(buf, "x123"), "truncated '%s'", buf);
	CHECK(!strcmp(jinst_agent_format_ext(JINST_FORMAT_CHROME), ".json"), "ext");
	return check_report();
}
