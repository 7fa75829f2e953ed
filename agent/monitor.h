/*
 * The monitor module: lock sites and their contention (monitor.c: its
 * options; monitor_run.c: the pass, the JVMTI monitor events, start, dump,
 * stop; monitor_output.c: the ranked report and the TSV). Its settings are
 * here for the registry and the tests.
 */
#ifndef JINST_AGENT_MONITOR_H
#define JINST_AGENT_MONITOR_H

#include <stdint.h>
#include <stdio.h>

#include "modules.h"

typedef struct jinst_monitor_config {
	bool on;
} jinst_monitor_config;

extern const jinst_agent_module jinst_monitor_module;

/* monitor.c: the option half of the table, for jinst_monitor_module
 * (monitor_run.c) and the option registry the CLI links (options_modules.c). */
extern const jinst_agent_option jinst_monitor_options[];
void jinst_monitor_defaults(void *config);
#define JINST_MONITOR_MODULE_OPTIONS                                                                        \
	.name = "monitor", .summary = "lock sites: enters, contention and wait() calls, into OUT.monitors.txt|tsv", \
	.by_default = false, .options = jinst_monitor_options, .config_size = sizeof(jinst_monitor_config),      \
	.defaults = jinst_monitor_defaults

/* One row of the outputs: a place (a lock site, or where wait() was
 * called) and the class of the lock, with what was measured there. */
typedef struct jinst_monitor_row {
	const char *class_name, *method, *descriptor; /* the place's, internal names, modified UTF-8 */
	const char *source;     /* the class's SourceFile, NULL when none */
	uint32_t line;
	const char *kind;       /* "block", "method" (a synchronized method), "wait" */
	bool instrumented;      /* a site of the pass (its enters counted), or a wait() in a method with some */
	const char *lock_class; /* internal name */
	uint64_t enters, contended, wait_ns, max_wait_ns, waits, waited_ns;
} jinst_monitor_row;

/* monitor_output.c: OUT.monitors.txt (ranked by time waiting to acquire,
 * by site and by lock class) and OUT.monitors.tsv (every row), into f
 * (the caller opens it: replaced or appended to). rows are sorted in
 * place. 0, or JINST_ENOMEM. */
int jinst_monitor_write_report(FILE *f, jinst_monitor_row *rows, size_t n);
int jinst_monitor_write_tsv(FILE *f, jinst_monitor_row *rows, size_t n);

#endif
