/*
 * The agent's options, in the HPROF tradition:
 * -agentpath:libjinst.so=OPTION,OPTION=VALUE,... and the same string for
 * jcmd PID JVMTI.agent_load. The core's own options (help, include=,
 * exclude=, out=, log=, dump, stop, reset) are here; each module's come from its
 * table (modules.h), parsed into the settings these options hold for it.
 * Parsing calls no JVMTI, so a unit test can drive it.
 */
#ifndef JINST_AGENT_OPTIONS_H
#define JINST_AGENT_OPTIONS_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct jinst_agent_module jinst_agent_module;

enum jinst_agent_action {
	JINST_ACTION_START,  /* run the enabled modules (the default) */
	JINST_ACTION_HELP,
	JINST_ACTION_DUMP,   /* write the output now (attach) */
	JINST_ACTION_STOP,   /* write it and restore the original code (attach) */
	JINST_ACTION_RESET   /* clear what the running modules recorded so far (attach) */
};

#define JINST_AGENT_MAX_PATTERNS 64
/* The agent property (HotSpot's agentProperties) a VM with the agent has. */
#define JINST_AGENT_PROPERTY "jinst.agent"
#define JINST_AGENT_MAX_MODULES 8

typedef struct jinst_agent_options {
	enum jinst_agent_action action;
	/* Patterns in internal form ('.' already turned into '/'),
	 * NULL-terminated; the strings live in the struct's own buffer. */
	const char *include[JINST_AGENT_MAX_PATTERNS + 1];
	const char *exclude[JINST_AGENT_MAX_PATTERNS + 1];
	size_t include_count, exclude_count;
	char out[1024];              /* output prefix, %p expanded later */
	char log[1024];              /* "stderr" or a path */
	bool log_given;              /* log= was given (a session after stop keeps the log before when not) */
	char reply[256];             /* reply=: this load's messages, for jinst attach ("": none) */
	bool append;                 /* append=y: the outputs are added to, not replaced (each module says how) */
	char buf[4096];              /* the strings the pointers above point into */
	size_t buf_used;
	/* The registry parsed against (NULL-terminated), the modules on (bit
	 * i for modules[i]), and each module's settings, in config_buf. */
	const jinst_agent_module *const *modules;
	unsigned enabled;
	void *config[JINST_AGENT_MAX_MODULES];
	alignas(max_align_t) unsigned char config_buf[1024];
} jinst_agent_options;

/* Parses options (NULL or "" is the defaults) against the modules of a
 * registry (jinst_agent_modules, or a test's). 0, or negative with a one-line
 * message in err (which names the offending option). */
int jinst_agent_options_parse(jinst_agent_options *o, const jinst_agent_module *const *modules, const char *options,
                              char *err, size_t err_size);

/* Whether modules[i] is on. */
static inline bool jinst_agent_module_on(const jinst_agent_options *o, size_t i)
{
	return i < JINST_AGENT_MAX_MODULES && (o->enabled >> i & 1u);
}

/* The settings parsed for module m; NULL when m is not in o's registry. */
void *jinst_agent_module_config(const jinst_agent_options *o, const jinst_agent_module *m);

/* Whether s is the key of an option that takes a value (what jcmd leaves
 * of an unquoted "key=value"). */
bool jinst_agent_option_wants_value(const jinst_agent_module *const *modules, const char *s);

/* Every option of the core and of each module, with its meaning. */
void jinst_agent_usage(FILE *f, const jinst_agent_module *const *modules);

/* One line for the start of a session: the modules on, what each include=
 * pattern takes (app.* is not app.**), where the outputs go (out_prefix,
 * expanded) and whether each write replaces them or appends. */
void jinst_agent_options_describe(const jinst_agent_options *o, const char *out_prefix, char *buf, size_t size);

/* path with %p replaced by pid and %% by %, into out (%n by 1); out= and
 * log= hold no other '%' (refused as they are parsed). */
void jinst_agent_expand_path(const char *path, long pid, char *out, size_t size);
/* The same, %n by the session's number (out=: a file per session). */
void jinst_agent_expand_session_path(const char *path, long pid, unsigned session, char *out, size_t size);

#endif
