/*
 * The trace module: every selected method counts its calls and, under
 * trace=times, keeps a shadow stack that a clock thread samples; under
 * trace=events, a timeline. The injected calls and what they record are
 * the runtime's (runtime-java/jinst/rt/Hooks.java); this file holds the
 * options, picks the pass and the mode the hooks are engaged in; it calls
 * no JNI or JVMTI, so that jinst attach links the agent's option parser.
 * trace_run.c engages the hooks, runs the clock and ends the recording;
 * the outputs are trace_output.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hooks_modes.h"

/* ---- options ----------------------------------------------------------- */

static int parse_mode(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_trace_config *t = c;
	if (jinst_option_is(v, vn, "counts"))
		t->mode = JINST_TRACE_COUNTS;
	else if (jinst_option_is(v, vn, "times"))
		t->mode = JINST_TRACE_TIMES;
	else if (jinst_option_is(v, vn, "events"))
		t->mode = JINST_TRACE_EVENTS;
	else
		return jinst_option_error(err, esize, "trace=%.*s: expected counts, times or events", (int)vn, v);
	t->mode_given = true;
	return 0;
}

static int parse_formats(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	static const struct { const char *name; unsigned bit; } formats[] = {
		{"counts", JINST_FORMAT_COUNTS}, {"profile", JINST_FORMAT_PROFILE},
		{"folded", JINST_FORMAT_FOLDED}, {"chrome", JINST_FORMAT_CHROME}, {"html", JINST_FORMAT_HTML}};
	jinst_trace_config *t = c;
	t->formats = 0;
	for (size_t i = 0; i <= vn;) {
		size_t j = i;
		while (j < vn && v[j] != '+' && v[j] != ':')
			j++;
		unsigned bit = 0;
		for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++)
			if (jinst_option_is(v + i, j - i, formats[k].name))
				bit = formats[k].bit;
		if (!bit)
			return jinst_option_error(err, esize,
			                          "format=%.*s: unknown format '%.*s' (counts, profile, folded, chrome, html)",
			                          (int)vn, v, (int)(j - i), v + i);
		t->formats |= bit;
		i = j + 1;
	}
	t->formats_given = true;
	return 0;
}

static int parse_leaves(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_trace_config *t = c;
	if (jinst_option_is(v, vn, "count"))
		t->time_leaves = false;
	else if (jinst_option_is(v, vn, "time"))
		t->time_leaves = true;
	else
		return jinst_option_error(err, esize, "leaves=%.*s: expected count or time", (int)vn, v);
	t->leaves_given = true;
	return 0;
}

static int parse_foldmin(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	char num[32], *rest = NULL;
	double x = -1;
	if (vn > 0 && vn < sizeof num && strspn(v, "0123456789.") >= vn) {
		memcpy(num, v, vn);
		num[vn] = 0;
		x = strtod(num, &rest);
	}
	if (!rest || *rest || x < 0 || x > 100)
		return jinst_option_error(err, esize, "foldmin=%.*s: expected a percentage from 0 to 100", (int)vn, v);
	((jinst_trace_config *)c)->fold_min = x / 100;
	((jinst_trace_config *)c)->fold_min_given = true;
	return 0;
}

static int parse_maxevents(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	long x = jinst_option_number(v, vn, 100000000);
	if (x < 2)
		return jinst_option_error(err, esize, "maxevents=%.*s: expected a number from 2 to 100000000", (int)vn, v);
	((jinst_trace_config *)c)->max_events = x;
	((jinst_trace_config *)c)->max_events_given = true;
	return 0;
}

static int parse_clock(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_trace_config *t = c;
	if (jinst_option_is(v, vn, "wall"))
		t->clock = JINST_TRACE_CLOCK_WALL;
	else if (jinst_option_is(v, vn, "cpu"))
		t->clock = JINST_TRACE_CLOCK_CPU;
	else
		return jinst_option_error(err, esize, "clock=%.*s: expected wall or cpu", (int)vn, v);
	return 0;
}

static int parse_tick(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	long x = jinst_option_number(v, vn, 1000000);
	if (x < 0 || (x > 0 && x < 10))
		return jinst_option_error(err, esize, "tick=%.*s: expected microseconds from 10 to 1000000, or 0", (int)vn, v);
	((jinst_trace_config *)c)->tick_us = x;
	((jinst_trace_config *)c)->tick_given = true;
	return 0;
}

void jinst_trace_defaults(void *c)
{
	jinst_trace_config *t = c;
	t->mode = JINST_TRACE_COUNTS;
	t->max_events = 100000;
	t->fold_min = 0.00001;
	t->tick_us = 1000;
	t->clock = JINST_TRACE_CLOCK_WALL;
}

/* The formats by mode: the default ones, and those the mode records the
 * data of. */
int jinst_trace_check(void *c, char *err, size_t esize)
{
	static const unsigned defaults[] = {
		[JINST_TRACE_COUNTS] = JINST_FORMAT_COUNTS,
		[JINST_TRACE_TIMES] = JINST_FORMAT_PROFILE | JINST_FORMAT_FOLDED,
		[JINST_TRACE_EVENTS] = JINST_FORMAT_CHROME};
	static const unsigned allowed[] = {
		[JINST_TRACE_COUNTS] = JINST_FORMAT_COUNTS,
		[JINST_TRACE_TIMES] = JINST_FORMAT_COUNTS | JINST_FORMAT_PROFILE | JINST_FORMAT_FOLDED | JINST_FORMAT_HTML,
		[JINST_TRACE_EVENTS] = JINST_FORMAT_CHROME};
	static const char *const mode_names[] = {"", "counts", "times", "events"};
	jinst_trace_config *t = c;
	unsigned bad = t->formats & ~allowed[t->mode];
	const char *mode = mode_names[t->mode], *dflt = t->mode_given ? "" : " (the default)";
	/* The timeline's events carry the wall time they happened at; counts
	 * have no time: a CPU clock there would be a word that changes nothing,
	 * and so would the other options of a mode not asked for. */
	if (t->clock == JINST_TRACE_CLOCK_CPU && t->mode != JINST_TRACE_TIMES)
		return jinst_option_error(err, esize, "clock=cpu needs trace=times: trace=%s%s takes no time from the clock",
		                          mode, dflt);
	if (t->tick_given && t->mode != JINST_TRACE_TIMES)
		return jinst_option_error(err, esize, "tick= needs trace=times: trace=%s%s runs no clock", mode, dflt);
	if (t->leaves_given && t->mode != JINST_TRACE_TIMES)
		return jinst_option_error(err, esize, "leaves= needs trace=times: trace=%s%s %s", mode, dflt,
		                          t->mode == JINST_TRACE_EVENTS ? "records every call, leaves too"
		                                                        : "times no method, leaves or not");
	if (t->max_events_given && t->mode != JINST_TRACE_EVENTS)
		return jinst_option_error(err, esize, "maxevents= needs trace=events: trace=%s%s keeps no timeline", mode,
		                          dflt);
	if (!t->formats_given)
		t->formats = defaults[t->mode];
	else if (bad)
		return jinst_option_error(err, esize,
		                          "format=%s is not available with trace=%s%s (counts: counts; times: counts, "
		                          "profile, folded, html; events: chrome)",
		                          (bad & JINST_FORMAT_COUNTS) ? "counts" : (bad & JINST_FORMAT_PROFILE) ? "profile" :
		                          (bad & JINST_FORMAT_FOLDED) ? "folded" :
		                          (bad & JINST_FORMAT_HTML) ? "html" : "chrome",
		                          mode, dflt);
	if (t->fold_min_given && !(t->formats & (JINST_FORMAT_FOLDED | JINST_FORMAT_HTML)))
		return jinst_option_error(err, esize, "foldmin= needs format=folded or html (trace=times): %s%s%s",
		                          t->mode == JINST_TRACE_TIMES ? "the formats asked for are neither" : "trace=",
		                          t->mode == JINST_TRACE_TIMES ? "" : mode,
		                          t->mode == JINST_TRACE_TIMES ? "" : t->mode_given ? " writes neither"
		                                                              : " (the default) writes neither");
	return 0;
}

/* append=y: a text or TSV output takes each session after the last
 * (trace_output.c); the Chrome JSON and the HTML page are one document
 * each, which a second session's could only follow by rewriting it. */
int jinst_trace_check_append(const void *c, char *err, size_t esize)
{
	const jinst_trace_config *t = c;
	unsigned one = t->formats & (JINST_FORMAT_CHROME | JINST_FORMAT_HTML);
	if (!one)
		return 0;
	unsigned format = (one & JINST_FORMAT_CHROME) ? JINST_FORMAT_CHROME : JINST_FORMAT_HTML;
	return jinst_option_error(err, esize,
	                          "append=y: format=%s (OUT%s%s) is one document and cannot be appended to; give each "
	                          "session a file of its own with out=PATH%%n instead of append=y%s",
	                          format == JINST_FORMAT_CHROME ? "chrome" : "html", jinst_trace_format_ext(format),
	                          t->formats_given ? "" : ", trace=events' default",
	                          t->mode == JINST_TRACE_EVENTS ? "" : ", or leave it out of format=");
}

/* append=y: a file that cannot be opened to write is refused at the load
 * (jinst_agent_output_check_existing). */
int jinst_trace_check_existing(const void *c, const char *prefix, char *err, size_t esize)
{
	const jinst_trace_config *t = c;
	int r = 0;
	for (unsigned bit = 1; r == 0 && bit <= JINST_FORMAT_HTML; bit <<= 1)
		if (t->formats & bit)
			r = jinst_agent_output_check_existing(prefix, jinst_trace_format_ext(bit), err, esize);
	return r;
}

const jinst_agent_option jinst_trace_options[] = {
	{"trace", "MODE",
	 "what to record [counts]\n"
	 "  counts   exact call counts per method\n"
	 "  times    exact calls, and inclusive and self time per\n"
	 "           method and the call tree, from a clock (tick=,\n"
	 "           clock=)\n"
	 "  events   a bounded enter/exit timeline per thread",
	 parse_mode},
	{"format", "FMTS",
	 "outputs, separated by + or : [counts for trace=counts,\n"
	 "profile+folded for times, chrome for events]\n"
	 "  counts   OUT.tsv     class<TAB>method<TAB>descriptor<TAB>count\n"
	 "                       (trace=counts or times)\n"
	 "  profile  OUT.txt     ranked time profile in the manner\n"
	 "                       of HPROF cpu=times (trace=times)\n"
	 "  folded   OUT.folded  folded stacks, self ns, for flamegraph.pl\n"
	 "                       and speedscope (trace=times)\n"
	 "  html     OUT.html    the call tree as a flame graph: one page,\n"
	 "                       no other file; zoom, search, tooltips\n"
	 "                       (trace=times)\n"
	 "  chrome   OUT.json    Chrome/Perfetto trace-event JSON\n"
	 "                       (trace=events)",
	 parse_formats},
	{"foldmin", "PERCENT",
	 "folded stacks and html: a stack under this share of the\n"
	 "total time is merged with its callees into one\n"
	 "\"(small stacks)\" frame under its caller; 0 keeps every\n"
	 "stack [0.001]",
	 parse_foldmin},
	{"leaves", "WHAT",
	 "trace=times: count or time the calls of leaf methods [count]\n"
	 "(a leaf has no loop and calls nothing but on the way to a\n"
	 "throw: counted, its time is its caller's self time)",
	 parse_leaves},
	{"tick", "USEC",
	 "trace=times: how often the clock advances, in microseconds,\n"
	 "10 to 1000000 [1000]; each advance is given to the stack of\n"
	 "every thread where it falls; a shorter tick gives finer\n"
	 "times for more CPU; 0: no clock, no times (the profile\n"
	 "says so); refused with another mode, as are leaves=,\n"
	 "foldmin= (folded, html) and maxevents= (trace=events)",
	 parse_tick},
	{"clock", "CLOCK",
	 "trace=times: what the times measure [wall]\n"
	 "  wall     wall time: a thread that sleeps, waits or blocks\n"
	 "           is timed where it waits\n"
	 "  cpu      each thread's CPU time: waiting shows nothing\n"
	 "           (virtual threads: wall time while they run)",
	 parse_clock},
	{"maxevents", "N",
	 "events kept per thread, trace=events [100000]: each thread's\n"
	 "first calls, entry and exit; the later ones are dropped,\n"
	 "counted in OUT.json and in a line at each write. Threads\n"
	 "that ended keep at most N/100 timelines (at least 1024)\n"
	 "and 10 x N events between them, those of the threads\n"
	 "created first (main's among them); the others' calls\n"
	 "are counted as dropped the same way",
	 parse_maxevents},
	{NULL, NULL, NULL, NULL}};

const char *jinst_trace_format_ext(unsigned format)
{
	switch (format) {
	case JINST_FORMAT_COUNTS: return ".tsv";
	case JINST_FORMAT_PROFILE: return ".txt";
	case JINST_FORMAT_FOLDED: return ".folded";
	case JINST_FORMAT_CHROME: return ".json";
	case JINST_FORMAT_HTML: return ".html";
	default: return NULL;
	}
}

/* ---- the pass ---------------------------------------------------------- */

/* Counts need the entry hook alone (exit does nothing in that mode, and the
 * mode never changes): less code to JIT. Times count leaves only unless
 * leaves=time; an events timeline shows every call. */
uint32_t jinst_trace_passes(const void *c)
{
	const jinst_trace_config *t = c;
	uint32_t passes = t->mode == JINST_TRACE_COUNTS ? JINST_PASS_COUNT : JINST_PASS_TRACE;
	if (t->mode == JINST_TRACE_TIMES && !t->time_leaves)
		passes |= JINST_PASS_COUNT_LEAVES;
	return passes;
}

/* What Hooks records once engaged (hooks_modes.h). */
int jinst_trace_hooks_mode(const jinst_trace_config *t)
{
	switch (t->mode) {
	case JINST_TRACE_TIMES:
		return HOOKS_COUNTS | HOOKS_TIMES | ((t->formats & (JINST_FORMAT_FOLDED | JINST_FORMAT_HTML)) ? HOOKS_TREE : 0) |
		       (t->clock == JINST_TRACE_CLOCK_CPU ? HOOKS_CPU : 0);
	case JINST_TRACE_EVENTS: return HOOKS_COUNTS | HOOKS_EVENTS;
	default: return HOOKS_COUNTS;
	}
}

