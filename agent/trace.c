/*
 * The trace module: every selected method counts its calls and, under
 * trace=times, keeps a shadow stack that a clock thread samples; under
 * trace=events, a timeline. The injected calls and what they record are
 * the runtime's (runtime-java/jinst/rt/Hooks.java); this file picks the
 * pass, engages the hooks in the mode the options ask for, runs the clock,
 * and ends the recording. The outputs are trace_output.c's.
 */
#define _POSIX_C_SOURCE 200809L /* clock_nanosleep */
#include "trace.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

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
	return 0;
}

static int parse_maxevents(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	long x = jinst_option_number(v, vn, 100000000);
	if (x < 2)
		return jinst_option_error(err, esize, "maxevents=%.*s: expected a number from 2 to 100000000", (int)vn, v);
	((jinst_trace_config *)c)->max_events = x;
	return 0;
}

static int parse_tick(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	long x = jinst_option_number(v, vn, 1000000);
	if (x < 0 || (x > 0 && x < 10))
		return jinst_option_error(err, esize, "tick=%.*s: expected microseconds from 10 to 1000000, or 0", (int)vn, v);
	((jinst_trace_config *)c)->tick_us = x;
	return 0;
}

static void trace_defaults(void *c)
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
static int trace_check(void *c, char *err, size_t esize)
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
	if (!t->formats_given)
		t->formats = defaults[t->mode];
	else if (bad)
		return jinst_option_error(err, esize,
		                          "format=%s is not available with trace=%s%s (counts: counts; times: counts, "
		                          "profile, folded, html; events: chrome)",
		                          (bad & JINST_FORMAT_COUNTS) ? "counts" : (bad & JINST_FORMAT_PROFILE) ? "profile" :
		                          (bad & JINST_FORMAT_FOLDED) ? "folded" :
		                          (bad & JINST_FORMAT_HTML) ? "html" : "chrome",
		                          mode_names[t->mode], t->mode_given ? "" : " (the default)");
	return 0;
}

static const jinst_agent_option trace_options[] = {
	{"trace", "MODE",
	 "what to record [counts]\n"
	 "  counts   exact call counts per method\n"
	 "  times    exact calls, and inclusive and self wall time per\n"
	 "           method and the call tree, from a clock (tick=)\n"
	 "  events   a bounded enter/exit timeline per thread",
	 parse_mode},
	{"format", "FMTS",
	 "outputs, separated by + or : [counts for trace=counts,\n"
	 "profile+folded for times, chrome for events]\n"
	 "  counts   OUT.tsv     class<TAB>method<TAB>descriptor<TAB>count\n"
	 "                       (trace=counts or times)\n"
	 "  profile  OUT.txt     ranked wall-time profile in the manner\n"
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
	 "times for more CPU; 0: no clock, no times",
	 parse_tick},
	{"maxevents", "N", "events kept per thread, trace=events [100000]", parse_maxevents},
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
static uint32_t trace_passes(const void *c)
{
	const jinst_trace_config *t = c;
	uint32_t passes = t->mode == JINST_TRACE_COUNTS ? JINST_PASS_COUNT : JINST_PASS_TRACE;
	if (t->mode == JINST_TRACE_TIMES && !t->time_leaves)
		passes |= JINST_PASS_COUNT_LEAVES;
	return passes;
}

/* What Hooks records once engaged (hooks_modes.h). */
static int hooks_mode(const jinst_trace_config *t)
{
	switch (t->mode) {
	case JINST_TRACE_TIMES:
		return HOOKS_COUNTS | HOOKS_TIMES | ((t->formats & (JINST_FORMAT_FOLDED | JINST_FORMAT_HTML)) ? HOOKS_TREE : 0);
	case JINST_TRACE_EVENTS: return HOOKS_COUNTS | HOOKS_EVENTS;
	default: return HOOKS_COUNTS;
	}
}

/* ---- the clock (trace=times) ------------------------------------------- *
 *
 * The hooks keep each thread's stack of method ids and read no clock; this
 * thread calls Hooks.sample every tick= microseconds with the time, which
 * gives the time since the last call to every thread's stack as it stands
 * (runtime-java/jinst/rt/Hooks.java). The time is CLOCK_MONOTONIC in
 * nanoseconds, System.nanoTime's clock on Linux. A wake-up that comes late
 * gives the time it came at, so no time is lost, and the next is scheduled
 * a period after it: a stalled clock does not catch up in a burst. Its
 * cost is its wake-ups, about 20 us of CPU each on this kind of machine
 * (2% of a core at the default period), and the samples, a few
 * microseconds for each thread whose stack changed.
 */

static struct {
	jmethodID engage, disengage, thread_end, sample;
	atomic_int ready;     /* the methods above are set */
	atomic_int clock_on;  /* the clock thread runs while set */
} rt;

static int64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void JNICALL clock_run(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	(void)jvmti;
	const int64_t period = ((const jinst_trace_config *)arg)->tick_us * 1000;
	jclass hooks = jinst_agent_hooks_class();
	/* Linux delays a timer by up to 50 us by default: a tenth of a
	 * period is enough leeway. */
	prctl(PR_SET_TIMERSLACK, (unsigned long)(period / 10 > 0 ? period / 10 : 1), 0, 0, 0);
	int64_t next = monotonic_ns();
	bool failed = false;
	while (atomic_load(&rt.clock_on)) {
		next += period;
		struct timespec at = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
		int64_t now = monotonic_ns();
		if (now - next > period)
			next = now;
		if (!atomic_load(&rt.clock_on))
			break;
		(*jni)->CallStaticVoidMethod(jni, hooks, rt.sample, (jlong)now);
		if ((*jni)->ExceptionCheck(jni)) {
			/* (once: an exception here would be the same every time) */
			if (!failed)
				jinst_agent_java_failed(jni, "Hooks.sample");
			(*jni)->ExceptionClear(jni);
			failed = true;
		}
	}
}

/* A java.lang.Thread for RunAgentThread, made before the hooks are engaged
 * so that its constructor's calls are not traced. */
static jthread clock_thread(JNIEnv *jni)
{
	jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init = k ? (*jni)->GetMethodID(jni, k, "<init>", "(Ljava/lang/String;)V") : NULL;
	jstring name = init ? (*jni)->NewStringUTF(jni, "jinst clock") : NULL;
	jthread t = name ? (*jni)->NewObject(jni, k, init, name) : NULL;
	if (jinst_agent_java_failed(jni, "new Thread(\"jinst clock\")"))
		t = NULL;
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (name)
		(*jni)->DeleteLocalRef(jni, name);
	return t;
}

static void clock_start(const jinst_trace_config *t, JNIEnv *jni, jthread clock)
{
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	atomic_store(&rt.clock_on, 1);
	/* arg: the running settings, which live as long as the VM */
	if (jinst_agent_jvmti_failed(
	        (*jvmti)->RunAgentThread(jvmti, clock, clock_run, (void *)t, JVMTI_THREAD_MAX_PRIORITY),
	        "RunAgentThread (the clock; times will be 0)"))
		atomic_store(&rt.clock_on, 0);
	(*jni)->DeleteLocalRef(jni, clock);
}

/* ---- the module's life ------------------------------------------------- */

static bool find_methods(JNIEnv *jni, jclass hooks)
{
	struct { jmethodID *id; const char *name, *sig; } ms[] = {
		{&rt.engage, "engage", "(IIJ)V"}, {&rt.disengage, "disengage", "()V"},
		{&rt.thread_end, "threadEnd", "(Ljava/lang/Thread;)V"}, {&rt.sample, "sample", "(J)V"}};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		*ms[i].id = (*jni)->GetStaticMethodID(jni, hooks, ms[i].name, ms[i].sig);
		if (jinst_agent_java_failed(jni, ms[i].name) || !*ms[i].id)
			return false;
	}
	return jinst_trace_output_init(jni);
}

static bool trace_start(const void *c, JNIEnv *jni)
{
	const jinst_trace_config *t = c;
	jclass hooks = jinst_agent_hooks_class();
	if (!find_methods(jni, hooks))
		return false;
	atomic_store(&rt.ready, 1);
	jthread clock = NULL;
	if (t->mode == JINST_TRACE_TIMES && t->tick_us > 0 && !(clock = clock_thread(jni)))
		jinst_agent_log("no clock thread: times will be 0");
	(*jni)->CallStaticVoidMethod(jni, hooks, rt.engage, (jint)hooks_mode(t), (jint)t->max_events,
	                             (jlong)monotonic_ns());
	if (jinst_agent_java_failed(jni, "Hooks.engage")) {
		if (clock)
			(*jni)->DeleteLocalRef(jni, clock);
		return false;
	}
	if (clock)
		clock_start(t, jni, clock);
	return true;
}

static void trace_stop(const void *c, JNIEnv *jni)
{
	atomic_store(&rt.clock_on, 0);
	jinst_trace_dump(c, jni);
	(*jni)->CallStaticVoidMethod(jni, jinst_agent_hooks_class(), rt.disengage);
	jinst_agent_java_failed(jni, "Hooks.disengage");
}

/* A thread ends: the runtime folds what it recorded into what ended threads
 * left, so its registry stays as small as the set of live threads. */
static void trace_thread_end(const void *c, JNIEnv *jni, jthread thread)
{
	(void)c;
	if (!atomic_load(&rt.ready))
		return;
	(*jni)->CallStaticVoidMethod(jni, jinst_agent_hooks_class(), rt.thread_end, thread);
	jinst_agent_java_failed(jni, "Hooks.threadEnd");
}

const jinst_agent_module jinst_trace_module = {
	.name = "trace",
	.summary = "method tracing (counts, times, call tree, timeline)",
	.by_default = true,
	.options = trace_options,
	.config_size = sizeof(jinst_trace_config),
	.defaults = trace_defaults,
	.check = trace_check,
	.builtin_passes = trace_passes,
	.start = trace_start,
	.dump = jinst_trace_dump,
	.stop = trace_stop,
	.thread_end = trace_thread_end,
};
