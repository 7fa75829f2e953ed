/*
 * The agent's options, in the HPROF tradition:
 * -agentpath:libjinst.so=OPTION,OPTION=VALUE,... and the same string for
 * jcmd PID JVMTI.agent_load. Parsing knows nothing of JVMTI, so a unit
 * test can drive it.
 */
#ifndef JINST_AGENT_OPTIONS_H
#define JINST_AGENT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum jinst_trace_mode { JINST_TRACE_COUNTS = 1, JINST_TRACE_TIMES, JINST_TRACE_EVENTS };

enum {
	JINST_FORMAT_COUNTS = 0x1,  /* OUT.tsv */
	JINST_FORMAT_PROFILE = 0x2, /* OUT.txt */
	JINST_FORMAT_FOLDED = 0x4,  /* OUT.folded */
	JINST_FORMAT_CHROME = 0x8   /* OUT.json */
};

enum jinst_agent_action {
	JINST_ACTION_START,  /* trace (the default) */
	JINST_ACTION_HELP,
	JINST_ACTION_DUMP,   /* write the output now (attach) */
	JINST_ACTION_STOP    /* write it and restore the original code (attach) */
};

#define JINST_AGENT_MAX_PATTERNS 64

typedef struct jinst_agent_options {
	enum jinst_agent_action action;
	enum jinst_trace_mode mode;
	unsigned formats;            /* JINST_FORMAT_*; defaults from the mode */
	/* Patterns in internal form ('.' already turned into '/'),
	 * NULL-terminated; the strings live in the struct's own buffer. */
	const char *include[JINST_AGENT_MAX_PATTERNS + 1];
	const char *exclude[JINST_AGENT_MAX_PATTERNS + 1];
	size_t include_count, exclude_count;
	char out[1024];              /* output prefix, %p expanded later */
	char log[1024];              /* "stderr" or a path */
	long max_events;             /* per thread, trace=events */
	bool time_leaves;            /* leaves=time: trace=times times leaves too */
	double fold_min;             /* foldmin=, a fraction of the whole (0 to 1) */
	long tick_us;                /* tick=, the clock's period for trace=times; 0: no clock */
	char buf[4096];              /* the strings the pointers above point into */
	size_t buf_used;
} jinst_agent_options;

/* Parses options (NULL or "" is the defaults). 0, or negative with a one-line
 * message in err (which names the offending option). */
int jinst_agent_options_parse(jinst_agent_options *o, const char *options, char *err, size_t err_size);

/* Every option with its meaning. */
void jinst_agent_usage(FILE *f);

/* The extension each format writes (".tsv"...), for one JINST_FORMAT_* bit. */
const char *jinst_agent_format_ext(unsigned format);

/* path with %p replaced by pid and %% by %, into out. */
void jinst_agent_expand_path(const char *path, long pid, char *out, size_t size);

#endif
