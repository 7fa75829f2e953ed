/*
 * Feature modules of the agent, and what the core offers them.
 *
 * The core (core.c, load.c, runtime.c) owns what every feature shares: the
 * JVMTI lifecycle, the load hook and the original bytes, retransformation,
 * the runtime in the bootstrap loader, attach/dump/stop, the log, the
 * generic options. A feature (trace today; coverage, allocation sites,
 * monitors, natives next) is a module: one const jinst_agent_module table in a
 * file of its own, listed in the registry (modules.c).
 *
 * A module is on when one of its options is given; when no module's option
 * is given, the modules marked by_default are on. A module that is off
 * costs nothing: its capabilities are not asked for, it adds no pass, and
 * none of its callbacks runs.
 *
 * The callbacks run on the thread of the JVMTI event that causes them, and
 * get the module's settings as parsed (read-only: a second attach parses
 * into a scratch copy, never into the running one). A module keeps what it
 * learns while running (method ids, threads) in its own file.
 */
#ifndef JINST_AGENT_MODULES_H
#define JINST_AGENT_MODULES_H

#include <jni.h>
#include <jvmti.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jinst/instrument.h"
#include "options.h"

/* One option, key=ARG (or a bare key when arg is NULL). parse gets the
 * module's settings and the value (not NUL-terminated); it returns 0, or
 * JINST_EINVAL with a one-line message in err that names the option. */
typedef struct jinst_agent_option {
	const char *key;
	const char *arg;   /* the value's name in help ("MODE"); NULL: a flag without value */
	/* Help: lines separated by '\n', the first beside the key, the rest
	 * under it; a line may start with spaces to indent a list. */
	const char *help;
	int (*parse)(void *config, const char *value, size_t len, char *err, size_t err_size);
} jinst_agent_option;

typedef struct jinst_agent_module {
	const char *name;      /* help's heading; short, [a-z] */
	const char *summary;   /* one line for help */
	bool by_default;       /* on when no module's option is given */
	const jinst_agent_option *options;  /* ends with a NULL key */

	/* The module's settings: config_size bytes the options hold for it,
	 * set by defaults, then by each option's parse; check (may be NULL)
	 * runs once all are parsed, when the module is on: rules between its
	 * options, and defaults that depend on other options. */
	size_t config_size;
	void (*defaults)(void *config);
	int (*check)(void *config, char *err, size_t err_size);
	/* A module that records nothing of its own: the modules, one of which
	 * must be on beside it ("trace+monitor"), and the message that refuses
	 * it without them as the options are read (what it does for them, and
	 * what to add). NULL: none needed. */
	const char *needs_one_of;
	const char *alone;
	/* append=y (the core's option) is given: 0 when every output of these
	 * settings can be added to, else JINST_EINVAL with err naming those
	 * that cannot and what to do. NULL: all can. */
	int (*check_append)(const void *config, char *err, size_t err_size);
	/* append=y, when a load starts a session (before any JVMTI call, as
	 * out= is checked): 0 when each output of these settings that exists
	 * at prefix (out=, expanded) can be added to, else JINST_EINVAL with
	 * err naming the file and why; the load is then refused, so that no
	 * file of earlier sessions is replaced. NULL: nothing to check. */
	int (*check_existing)(const void *config, const char *prefix, char *err, size_t err_size);

	/* JVMTI capabilities the module needs beyond the core's (which sees
	 * and retransforms every class). */
	jvmtiCapabilities capabilities;

	/* The passes the module adds to the instrumenter: built-in ones
	 * (JINST_PASS_*, or-ed with the other modules'), and its own added with
	 * jinst_instrument_add_pass. Either may be NULL. */
	uint32_t (*builtin_passes)(const void *config);
	int (*add_passes)(const void *config, jinst_instrument *ins, jinst_diag *diag);

	/* The VM is live and the runtime defined (VMInit, or the attach): engage
	 * the hooks, start threads. false when the module cannot run; the core
	 * then instruments nothing. Before any class is retransformed. */
	bool (*start)(const void *config, JNIEnv *jni);
	/* Write the outputs (dump, jinst.rt.Control.dump(); never two at once). */
	void (*dump)(const void *config, JNIEnv *jni);
	/* The end of recording (stop, VM death): the last outputs written, the
	 * hooks disengaged, threads stopped. Under the dump lock. */
	void (*stop)(const void *config, JNIEnv *jni);
	/* A thread starts, on the thread itself before it runs any code of its
	 * own (JVMTI ThreadStart; enabled only when an enabled module has this
	 * callback). */
	void (*thread_start)(const void *config, JNIEnv *jni, jthread thread);
	/* A thread ends (JVMTI ThreadEnd; the event is only enabled when an
	 * enabled module has this callback). */
	void (*thread_end)(const void *config, JNIEnv *jni, jthread thread);
	/* `reset` (jcmd): forget what was recorded so far, go on recording.
	 * Under the dump lock. NULL: the module cannot (the reset says so, and
	 * is refused when no module on can). */
	void (*reset)(const void *config, JNIEnv *jni);
	/* Whether the module may start again in a VM where it was stopped (a
	 * new attach after `stop`): a new session with the new options. The
	 * core restarts only when every module asked for can, or never ran. */
	bool restartable;
} jinst_agent_module;

/* The registry: every module, NULL-terminated (modules.c). */
extern const jinst_agent_module *const jinst_agent_modules[];
/* The same modules with their option halves alone (options_modules.c): what
 * jinst attach parses against, without the agent's life in a VM. */
extern const jinst_agent_module *const jinst_agent_option_modules[];

/* ---- what the core offers modules ---- */

/* One line "jinst: ..." to the log (log=, or stderr). */
void jinst_agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The line every output gets at each write: "wrote PATH", or with why
 * (not NULL) "PATH not written: why". */
void jinst_agent_log_output(const char *path, const char *why);
/* path as those lines name it: whole (after an attach, the user reads it
 * where jinst attach ran, not in the VM's working folder). */
void jinst_agent_output_whole(const char *path, char *buf, size_t size);
/* Logs a failed JVMTI call; true when it failed. */
bool jinst_agent_jvmti_failed(jvmtiError e, const char *what);
/* Logs and clears a pending Java exception; true when there was one. */
bool jinst_agent_java_failed(JNIEnv *jni, const char *what);

jvmtiEnv *jinst_agent_jvmti(void);
long jinst_agent_pid(void);
/* The instrumenter: the method ids and what the reports say of them. */
const jinst_instrument *jinst_agent_instrumenter(void);
/* The output prefix (out=, %p expanded) followed by ext, into buf. */
void jinst_agent_output_path(const char *ext, char *buf, size_t size);
/* append=y: the outputs are added to, each session after what they held. */
bool jinst_agent_output_append(void);
/* The session: 1, one more at each start after `stop`. */
unsigned jinst_agent_session(void);
/* append=y (output.c): the session starts (the core, before the modules
 * start); a module's start notes each output's length, the base its
 * session's part goes after; at each write the file is opened cut back to
 * that base and begun with the line "# jinst session N, pid P, started
 * TIME" (NULL with errno). */
void jinst_agent_output_session(void);
void jinst_agent_output_begin(const char *ext);
FILE *jinst_agent_output_open_appended(const char *ext);
/* Writes OUT<ext> with write(f, ctx) (0, or a negative JINST_E*): through
 * a file beside it renamed over it, so that no reader sees half of it, or
 * with append=y after the sessions before; one line says so
 * (jinst_agent_log_output). 0 when written. */
int jinst_agent_output_write(const char *ext, int (*write)(FILE *f, const void *ctx), const void *ctx);

/* names.c: a class's internal name or a field descriptor as Java writes
 * it ("java.lang.String", "int[][]"), as alloc's outputs name them. */
void jinst_agent_java_name(const char *name, char *out, size_t size);
/* A place as a stack trace and HPROF name it: "pkg.Cls.method(File.java:12)"
 * ("Unknown Source" when source is NULL; no ":line" when line is 0). */
void jinst_agent_place_name(const char *class_name, const char *method, const char *source, uint32_t line, char *out,
                            size_t size);
/* The runtime's class of hooks (jinst/rt/Hooks), a global reference; NULL
 * until the runtime is defined. */
jclass jinst_agent_hooks_class(void);
/* Inside the load hook, the class the VM is retransforming on this thread
 * (a local reference of the hook's); NULL at a first load or outside. */
jclass jinst_agent_class_redefined(void);

/* ---- for option parsers ---- */

/* Formats the message into err; returns JINST_EINVAL. */
int jinst_option_error(char *err, size_t err_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* append=y, a module's check_existing: 0 when prefix+ext is absent or a file
 * that can be opened to write, else JINST_EINVAL with err saying why. */
int jinst_agent_output_check_existing(const char *prefix, const char *ext, char *err, size_t err_size);
/* Whether s[0..n) is word. */
bool jinst_option_is(const char *s, size_t n, const char *word);
/* The decimal number v[0..n), or -1 when it is not one or exceeds max. */
long jinst_option_number(const char *v, size_t n, long max);

#endif
