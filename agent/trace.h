/*
 * The trace module: exact call counts, wall or CPU times from a clock, the call
 * tree, timelines (trace.c: its table, options, hooks and clock;
 * trace_output.c: the runtime's snapshots into the report library's
 * writers). Its settings are here for the registry and the tests.
 */
#ifndef JINST_AGENT_TRACE_H
#define JINST_AGENT_TRACE_H

#include "jinst/report.h"
#include "modules.h"

enum jinst_trace_mode { JINST_TRACE_COUNTS = 1, JINST_TRACE_TIMES, JINST_TRACE_EVENTS };

enum {
	JINST_FORMAT_COUNTS = 0x1,  /* OUT.tsv */
	JINST_FORMAT_PROFILE = 0x2, /* OUT.txt */
	JINST_FORMAT_FOLDED = 0x4,  /* OUT.folded */
	JINST_FORMAT_CHROME = 0x8,  /* OUT.json */
	JINST_FORMAT_HTML = 0x10    /* OUT.html, the flame graph */
};

typedef struct jinst_trace_config {
	enum jinst_trace_mode mode;
	unsigned formats;            /* JINST_FORMAT_*; defaults from the mode */
	long max_events;             /* per thread, trace=events */
	bool time_leaves;            /* leaves=time: trace=times times leaves too */
	double fold_min;             /* foldmin=, a fraction of the whole (0 to 1) */
	long tick_us;                /* tick=, the clock's period for trace=times; 0: no clock */
	jinst_trace_clock clock;     /* what the times measure: every output names it */
	bool mode_given, formats_given;
	/* given: refused with a mode (or formats) that would ignore them */
	bool leaves_given, fold_min_given, tick_given, max_events_given;
} jinst_trace_config;

extern const jinst_agent_module jinst_trace_module;

/* trace.c: the option half of the table, for jinst_trace_module
 * (trace_run.c) and the option registry the CLI links (options_modules.c);
 * the passes of the settings and the mode the hooks are engaged in. */
extern const jinst_agent_option jinst_trace_options[];
void jinst_trace_defaults(void *config);
int jinst_trace_check(void *config, char *err, size_t err_size);
int jinst_trace_check_append(const void *config, char *err, size_t err_size);
int jinst_trace_check_existing(const void *config, const char *prefix, char *err, size_t err_size);
uint32_t jinst_trace_passes(const void *config);
int jinst_trace_hooks_mode(const jinst_trace_config *t);
#define JINST_TRACE_MODULE_OPTIONS                                                                         \
	.name = "trace", .summary = "method tracing (counts, times, call tree, timeline)", .by_default = true, \
	.options = jinst_trace_options, .config_size = sizeof(jinst_trace_config), .defaults = jinst_trace_defaults, \
	.check = jinst_trace_check, .check_append = jinst_trace_check_append

/* The extension each format writes (".tsv"...), for one JINST_FORMAT_* bit. */
const char *jinst_trace_format_ext(unsigned format);

/* trace_output.c: finds the runtime's snapshot methods (at start), and
 * writes every format of the settings (dump, stop). */
bool jinst_trace_output_init(JNIEnv *jni);
/* A session starts: with append=y, where its outputs will begin. */
void jinst_trace_output_begin(const jinst_trace_config *t);
void jinst_trace_dump(const void *config, JNIEnv *jni);

#endif
