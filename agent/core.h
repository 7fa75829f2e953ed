/*
 * The agent's core, shared by its files: core.c (the JVMTI lifecycle,
 * options, attach/dump/stop, the log), load.c (the load hook, the original
 * bytes, retransformation) and runtime.c (the runtime in the bootstrap
 * loader). Modules see modules.h only.
 */
#ifndef JINST_AGENT_CORE_H
#define JINST_AGENT_CORE_H

#include <stdio.h>

#include "modules.h"

typedef struct jinst_core {
	JavaVM *vm;
	jvmtiEnv *jvmti;
	jinst_agent_options opts;  /* the running options */
	long pid;
	FILE *log;                 /* NULL: stderr */
	bool started;              /* options applied, callbacks set */
	unsigned running;          /* the modules whose start succeeded (bit i: jinst_agent_modules[i]) */
	unsigned ever_started;     /* the modules whose start ran, in any session */
	bool stopped, dead;
	unsigned session;          /* 1, one more at each start after stop (out='s %n) */
} jinst_core;

extern jinst_core jinst_the_core;

/* ---- core.c ---- */

/* JVMTI's name for an error (thread-local buffer). */
const char *jinst_agent_jvmti_error(jvmtiError e);
/* Every running module writes its outputs. */
void jinst_agent_dump(JNIEnv *jni);

/* ---- load.c ---- */

/* The instrumenter for the options: their filters, the classes never
 * instrumented, and the passes of the modules that are on. Calls no JVMTI. */
int jinst_load_instrumenter_new(const jinst_agent_options *o, jinst_instrument **out, jinst_diag *diag);
/* The instrumenter of the running options, and what the hook needs; false
 * (logged) on failure. */
bool jinst_load_setup(void);
void JNICALL jinst_load_hook(jvmtiEnv *jvmti, JNIEnv *jni, jclass class_being_redefined, jobject loader,
                             const char *name, jobject protection_domain, jint len, const unsigned char *data,
                             jint *new_len, unsigned char **new_data);
/* The hook instruments from now on; the loaded classes the filter selects
 * are retransformed. */
void jinst_load_go_live(JNIEnv *jni);
/* The classes instrumented get their original bytes back; the hook then
 * leaves every class alone. */
void jinst_load_restore(JNIEnv *jni);
/* A new instrumenter from the running options, for a session after
 * `stop`; the old ones freed once no load hook can hold them. */
bool jinst_load_restart(void);
/* count method ids reserved on the instrumenter from *first (a run of code
 * instrumented ahead of time), and on every later session's. */
int jinst_load_reserve_methods(uint32_t count, uint32_t *first);
/* The hook leaves every class alone (VM death). */
void jinst_load_end(void);
/* One log line: classes instrumented, left alone, methods. */
void jinst_load_summary(void);

/* ---- identity.c ---- */

/* Before the retransformation at attach: the class files of the classes
 * not seen before (seen(name) false), as their loaders find them, hashed
 * with their shape. */
void jinst_identity_learn(JNIEnv *jni, jclass *classes, size_t count, bool (*seen)(const char *name));
/* Whether a class file of name was learned; with bytes (the VM's), whether
 * it has their shape: its identity and bytes (kept while the VM runs) then
 * into *identity, *file and *file_len. */
bool jinst_identity_find(const char *name, const uint8_t *bytes, size_t len, uint64_t *identity,
                         const uint8_t **file, size_t *file_len);
/* The set of the methods' names, descriptors and code lengths, hashed (0:
 * no parse). */
uint64_t jinst_identity_shape(const uint8_t *bytes, size_t len);

/* ---- runtime.c ---- */

/* Defines the runtime into the bootstrap loader, lets the bridge read it,
 * registers its natives; false (logged) on failure. */
bool jinst_runtime_define(JNIEnv *jni);

#endif
