/*
 * libjinst.so, the JVMTI agent: its core.
 *
 * How it runs. Agent_OnLoad (or Agent_OnAttach in a running VM) parses the
 * options against the registry of modules (modules.c), asks for the
 * capabilities to see and retransform every class and those of the modules
 * that are on, builds the instrumenter with their passes (load.c), and sets
 * the callbacks. At VMInit (at once when attaching) the core defines the
 * runtime into the bootstrap loader (runtime.c), starts each module (which
 * engages its hooks), then the load hook goes live and retransforms the
 * loaded classes the filter selects (load.c). From then on each class load
 * goes through the hook.
 *
 * Output is each module's, written on `dump` through jcmd JVMTI.agent_load
 * and when the program calls jinst.rt.Control.dump(), and, as the modules
 * stop, at VMDeath and on `stop`; `stop` then hands every class its original
 * bytes back. `reset` makes the running modules forget what they recorded.
 * A load after `stop` starts a new session when every module it asks for
 * is restartable (every module is today) or never ran in this VM: the
 * same classes instrumented again by a new instrumenter, the modules'
 * records from zero, out='s %n the session's number. A session's state
 * changes and its outputs are written under one lock (session_lock), so
 * that a dump of the program's never sees a session half started or half
 * stopped.
 */
#define _GNU_SOURCE /* dladdr */
#include "core.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

jinst_core jinst_the_core;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
/* Held while a session's state changes or is written: a start's options,
 * number and modules' start, a dump, a reset, a stop's modules' stop, VM
 * death. HotSpot runs attach operations one after the other on its
 * listener thread, but the program's Control.dump() and the VM's death
 * come from other threads: a dump that ran while a start after stop
 * replaced the options and the session's number wrote the stopped
 * session's records as the new one's (agent/tests/race.py). Not held while
 * classes are retransformed (the load hook going live, the original bytes
 * given back): that runs Java code of the program's class loaders
 * (identity.c reads class files through them), and a program thread that
 * held one of their locks while it called Control.dump() would wait for
 * the load as the load waited for it. Nor by ThreadEnd (a thread's end
 * would wait for a dump): the trace module's thread_end reads no settings,
 * and the runtime's registry has a lock of its own. */
static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
/* reply=PATH while Agent_OnAttach runs (under log_lock): jinst attach reads
 * it and prints this load's messages on the user's terminal, since the
 * VM's stderr is wherever the program's goes. */
static FILE *reply;

/* ---- the log, and what the modules read -------------------------------- */

static void line_to(FILE *f, const char *fmt, va_list ap)
{
	fputs("jinst: ", f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

/* One line to f (NULL: the log, log= or stderr) and to the reply. */
static void log_line(FILE *f, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	pthread_mutex_lock(&log_lock);
	line_to(f ? f : jinst_the_core.log ? jinst_the_core.log : stderr, fmt, ap);
	if (reply)
		line_to(reply, fmt, again);
	pthread_mutex_unlock(&log_lock);
	va_end(again);
}

void jinst_agent_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line(NULL, fmt, ap);
	va_end(ap);
}

/* A message about the load itself, before the log is open: on the VM's
 * stderr, where -agentpath users look, and in the reply. */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line(stderr, fmt, ap);
	va_end(ap);
}

/* The reply= of an options string, found before they are parsed, so that
 * a refusal reaches it too. */
static void reply_open(const char *options)
{
	for (const char *s = options; s && *s;) {
		size_t n = strcspn(s, ",");
		if (n > 6 && !strncmp(s, "reply=", 6) && n - 6 < 1024) {
			char path[1024];
			memcpy(path, s + 6, n - 6);
			path[n - 6] = 0;
			pthread_mutex_lock(&log_lock);
			reply = fopen(path, "a");
			pthread_mutex_unlock(&log_lock);
			return;
		}
		s += n + (s[n] == ',');
	}
}

static void reply_close(void)
{
	pthread_mutex_lock(&log_lock);
	if (reply)
		fclose(reply);
	reply = NULL;
	pthread_mutex_unlock(&log_lock);
}

void jinst_agent_output_whole(const char *path, char *buf, size_t size)
{
	char cwd[1024] = "";
	if (path[0] != '/' && !getcwd(cwd, sizeof cwd))
		cwd[0] = 0;
	snprintf(buf, size, "%s%s%s", cwd, cwd[0] ? "/" : "", path);
}

void jinst_agent_log_output(const char *path, const char *why)
{
	/* Absolute, as the first line's. */
	char whole[2200];
	jinst_agent_output_whole(path, whole, sizeof whole);
	if (why)
		jinst_agent_log("%s not written: %s", whole, why);
	else
		jinst_agent_log("wrote %s", whole);
}

const char *jinst_agent_jvmti_error(jvmtiError e)
{
	char *name = NULL;
	static _Thread_local char buf[64];
	jvmtiEnv *jvmti = jinst_the_core.jvmti;
	if (jvmti && (*jvmti)->GetErrorName(jvmti, e, &name) == JVMTI_ERROR_NONE && name) {
		snprintf(buf, sizeof buf, "%s", name);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	} else {
		snprintf(buf, sizeof buf, "JVMTI error %d", (int)e);
	}
	return buf;
}

bool jinst_agent_jvmti_failed(jvmtiError e, const char *what)
{
	if (e == JVMTI_ERROR_NONE)
		return false;
	jinst_agent_log("%s failed: %s", what, jinst_agent_jvmti_error(e));
	return true;
}

bool jinst_agent_java_failed(JNIEnv *jni, const char *what)
{
	if (!(*jni)->ExceptionCheck(jni))
		return false;
	(*jni)->ExceptionDescribe(jni);
	(*jni)->ExceptionClear(jni);
	jinst_agent_log("%s failed: Java exception (described above)", what);
	return true;
}

jvmtiEnv *jinst_agent_jvmti(void)
{
	return jinst_the_core.jvmti;
}

long jinst_agent_pid(void)
{
	return jinst_the_core.pid;
}

void jinst_agent_output_path(const char *ext, char *buf, size_t size)
{
	char prefix[1024];
	jinst_agent_expand_session_path(jinst_the_core.opts.out, jinst_the_core.pid, jinst_the_core.session, prefix,
	                                sizeof prefix);
	snprintf(buf, size, "%s%s", prefix, ext ? ext : "");
}

bool jinst_agent_output_append(void)
{
	return jinst_the_core.opts.append;
}

unsigned jinst_agent_session(void)
{
	return jinst_the_core.session;
}

/* ---- the modules -------------------------------------------------------- */

static const jinst_agent_module *module(size_t i)
{
	return jinst_the_core.opts.modules[i];
}

static const void *settings(size_t i)
{
	return jinst_the_core.opts.config[i];
}

static bool on(size_t i)
{
	return jinst_agent_module_on(&jinst_the_core.opts, i);
}

static bool running(size_t i)
{
	return jinst_the_core.running >> i & 1u;
}

/* The session's first line: what is recorded, what include= takes, where
 * the outputs go (absolute: jinst attach runs elsewhere) and that they are
 * replaced. */
static void announce(void)
{
	char prefix[1100], abs[2200], cwd[1024], line[2400];
	jinst_agent_output_path("", prefix, sizeof prefix);
	if (prefix[0] != '/' && getcwd(cwd, sizeof cwd))
		snprintf(abs, sizeof abs, "%s/%s", cwd, prefix);
	else
		snprintf(abs, sizeof abs, "%s", prefix);
	jinst_agent_options_describe(&jinst_the_core.opts, abs, line, sizeof line);
	jinst_agent_log("recording %s", line);
}

/* The VM is live: the runtime, then each module (session_lock held). */
static bool start_modules(JNIEnv *jni)
{
	announce();
	jinst_agent_output_session();
	if (!jinst_runtime_define(jni)) {
		jinst_agent_log("the runtime could not be set up; recording nothing");
		return false;
	}
	for (size_t i = 0; module(i); i++) {
		if (!on(i))
			continue;
		jinst_the_core.ever_started |= 1u << i;
		if (module(i)->start && !module(i)->start(settings(i), jni)) {
			jinst_agent_log("%s could not start; instrumenting nothing", module(i)->name);
			return false;
		}
		jinst_the_core.running |= 1u << i;
	}
	return true;
}

/* JINST_AGENT_PROPERTY among the VM's agent properties, which HotSpot's
 * attach operation agentProperties hands out (JDK 9 on: jdk.internal.vm,
 * JDK 8: sun.misc), the path of this library its value: jinst dump and stop
 * look for it before they load the agent, so that a VM without one is not
 * given one only to be refused, and every later load names this library
 * (another copy of the agent would be a second agent, which finds every
 * class instrumented already). Not a system property: the program never
 * sees it. Without it (a VM without that class), dump and stop load the
 * agent, which refuses then. */
static void mark_present(JNIEnv *jni)
{
	static const char *const owners[] = {"jdk/internal/vm/VMSupport", "sun/misc/VMSupport"};
	jclass c = NULL;
	for (size_t i = 0; i < 2 && !c; i++)
		if (!(c = (*jni)->FindClass(jni, owners[i])))
			(*jni)->ExceptionClear(jni);
	jmethodID get = c ? (*jni)->GetStaticMethodID(jni, c, "getAgentProperties", "()Ljava/util/Properties;") : NULL;
	jobject props = get ? (*jni)->CallStaticObjectMethod(jni, c, get) : NULL;
	if ((*jni)->ExceptionCheck(jni))
		props = NULL;
	jclass pc = props ? (*jni)->GetObjectClass(jni, props) : NULL;
	jmethodID set = pc ? (*jni)->GetMethodID(jni, pc, "setProperty",
	                                          "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/Object;")
	                   : NULL;
	jstring k = set ? (*jni)->NewStringUTF(jni, JINST_AGENT_PROPERTY) : NULL;
	Dl_info self;
	char whole[PATH_MAX];
	const char *lib = dladdr((void *)mark_present, &self) && self.dli_fname ? self.dli_fname : "";
	if (lib[0] != '/')
		lib = realpath(lib, whole) ? whole : "";
	jstring v = k ? (*jni)->NewStringUTF(jni, lib) : NULL;
	if (v)
		(*jni)->CallObjectMethod(jni, props, set, k, v);
	/* Whatever failed, and whatever the last call threw: not a session's
	 * concern (dump and stop then load the agent to ask). */
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
}

/* ... then, unlocked, the load hook goes live and retransforms. */
static bool start(JNIEnv *jni)
{
	mark_present(jni);
	pthread_mutex_lock(&session_lock);
	bool ok = start_modules(jni);
	pthread_mutex_unlock(&session_lock);
	if (ok)
		jinst_load_go_live(jni);
	return ok;
}

/* The running modules write their outputs (session_lock held). */
static void dump_modules(JNIEnv *jni)
{
	for (size_t i = 0; module(i); i++)
		if (running(i) && module(i)->dump)
			module(i)->dump(settings(i), jni);
}

/* jinst.rt.Control.dump(): nothing once stopped (stop wrote the last
 * outputs; a start after it writes its own). */
void jinst_agent_dump(JNIEnv *jni)
{
	pthread_mutex_lock(&session_lock);
	if (!jinst_the_core.stopped && !jinst_the_core.dead)
		dump_modules(jni);
	pthread_mutex_unlock(&session_lock);
}

/* Appends a module's name to a list of them ("trace+alloc"). */
static void add_name(char *list, size_t size, const char *name)
{
	size_t used = strlen(list);
	snprintf(list + used, size - used, "%s%s", used ? "+" : "", name);
}

/* `reset`: the running modules that can forget what they recorded do
 * (modules.h: reset); one line names them and those that cannot, whose
 * figures run on from the session's start (trace, alloc), so that no one
 * reads a trace count after a reset as counted since. false when no module
 * reset anything: the load is refused. */
static bool reset_modules(JNIEnv *jni)
{
	char done[128] = "", kept[128] = "";
	pthread_mutex_lock(&session_lock);
	bool live = !jinst_the_core.stopped && !jinst_the_core.dead;
	for (size_t i = 0; live && module(i); i++) {
		if (!running(i))
			continue;
		if (module(i)->reset) {
			module(i)->reset(settings(i), jni);
			add_name(done, sizeof done, module(i)->name);
		} else {
			add_name(kept, sizeof kept, module(i)->name);
		}
	}
	pthread_mutex_unlock(&session_lock);
	if (!live)
		jinst_agent_log("reset: the session was stopped meanwhile, nothing to reset");
	else if (!done[0])
		jinst_agent_log("reset: nothing reset: %s cannot forget what it recorded (reset is coverage's and "
		                "monitor's); stop and attach again for a session from zero",
		                kept);
	else
		jinst_agent_log("reset: %s from zero%s%s%s", done, kept[0] ? "; " : "", kept,
		                kept[0] ? " cannot reset, and runs on from the session's start" : "");
	return live && done[0];
}

/* The modules write their last outputs and disengage. */
static void stop_modules(JNIEnv *jni)
{
	for (size_t i = 0; module(i); i++)
		if (running(i) && module(i)->stop)
			module(i)->stop(settings(i), jni);
	jinst_the_core.running = 0;
}

/* The modules' last outputs (locked), then the original bytes (unlocked:
 * retransformation; a dump meanwhile finds the session stopped). */
static void stop(JNIEnv *jni)
{
	pthread_mutex_lock(&session_lock);
	bool was = !jinst_the_core.stopped && !jinst_the_core.dead;
	if (was) {
		stop_modules(jni);
		jinst_the_core.stopped = true;
	}
	pthread_mutex_unlock(&session_lock);
	if (!was)
		return;
	jinst_load_restore(jni);
	jinst_load_summary();
}

/* ---- JVMTI events ------------------------------------------------------- */

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	(void)thread;
	start(jni);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti;
	pthread_mutex_lock(&session_lock);
	if (!jinst_the_core.stopped)
		stop_modules(jni);
	jinst_load_end();
	jinst_the_core.dead = true;
	if (!jinst_the_core.stopped)
		jinst_load_summary();
	pthread_mutex_unlock(&session_lock);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	if (jinst_the_core.dead)
		return;
	for (size_t i = 0; module(i); i++)
		if (on(i) && module(i)->thread_start)
			module(i)->thread_start(settings(i), jni, thread);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	if (jinst_the_core.dead)
		return;
	for (size_t i = 0; module(i); i++)
		if (on(i) && module(i)->thread_end)
			module(i)->thread_end(settings(i), jni, thread);
}

/* ---- setting up --------------------------------------------------------- */

/* The core's capabilities and those of each module that is on. */
static bool add_capabilities(void)
{
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_generate_all_class_hook_events = 1;
	caps.can_retransform_classes = 1;
	unsigned char *all = (unsigned char *)&caps;
	for (size_t i = 0; module(i); i++) {
		const unsigned char *its = (const unsigned char *)&module(i)->capabilities;
		for (size_t b = 0; on(i) && b < sizeof caps; b++)
			all[b] |= its[b];
	}
	jvmtiEnv *jvmti = jinst_the_core.jvmti;
	return !jinst_agent_jvmti_failed((*jvmti)->AddCapabilities(jvmti, &caps), "AddCapabilities");
}

/* The events: VMInit unless attaching (the VM is live already), ThreadStart
 * and ThreadEnd when a module that is on asks for them. */
static bool enable_events(bool attach)
{
	jvmtiEnv *jvmti = jinst_the_core.jvmti;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.ClassFileLoadHook = jinst_load_hook;
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	for (size_t i = 0; module(i); i++) {
		if (on(i) && module(i)->thread_start)
			cb.ThreadStart = on_thread_start;
		if (on(i) && module(i)->thread_end)
			cb.ThreadEnd = on_thread_end;
	}
	if (jinst_agent_jvmti_failed((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb), "SetEventCallbacks"))
		return false;
	jvmtiEvent events[5] = {JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, JVMTI_EVENT_VM_DEATH};
	size_t n = 2;
	if (cb.ThreadStart)
		events[n++] = JVMTI_EVENT_THREAD_START;
	if (cb.ThreadEnd)
		events[n++] = JVMTI_EVENT_THREAD_END;
	if (!attach)
		events[n++] = JVMTI_EVENT_VM_INIT;
	for (size_t i = 0; i < n; i++)
		if (jinst_agent_jvmti_failed((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL),
		                             "SetEventNotificationMode"))
			return false;
	return true;
}

/* The session's log= (%n its number) in place of the log there was, which
 * is closed: a session after stop writes where its own options say (a
 * load without log= keeps the log before: stderr is the program's). false
 * when it cannot be opened, said; the log there was stays. */
static bool open_log(void)
{
	FILE *f = NULL;
	if (strcmp(jinst_the_core.opts.log, "stderr")) {
		char path[1024];
		jinst_agent_expand_session_path(jinst_the_core.opts.log, jinst_the_core.pid, jinst_the_core.session, path,
		                                sizeof path);
		if (!(f = fopen(path, "a"))) {
			say("log=%s: %s", path, strerror(errno));
			return false;
		}
	}
	pthread_mutex_lock(&log_lock);
	FILE *old = jinst_the_core.log;
	jinst_the_core.log = f;
	if (old)
		fclose(old);
	pthread_mutex_unlock(&log_lock);
	return true;
}

static int setup(JavaVM *vm, bool attach)
{
	jinst_the_core.vm = vm;
	jinst_the_core.pid = (long)getpid();
	if (!open_log())
		return JNI_ERR;
	if ((*vm)->GetEnv(vm, (void **)&jinst_the_core.jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jinst_the_core.jvmti) {
		jinst_agent_log("no JVMTI 1.2 environment in this VM");
		return JNI_ERR;
	}
	if (!jinst_load_setup() || !add_capabilities() || !enable_events(attach))
		return JNI_ERR;
	jinst_the_core.started = true;
	return JNI_OK;
}

/* ---- loading ------------------------------------------------------------ */

/* Where the options are listed, for a load in a running VM, which prints
 * no usage: there, stdout and stderr are the program's. */
static void say_where_help(const char *lead)
{
	say("%sjinst attach %ld help, or java -agentpath:/path/libjinst.so=help -version, lists the options", lead,
	    (long)getpid());
}

static int parse(jinst_agent_options *o, const char *options, bool attach)
{
	char err[1024];
	if (jinst_agent_options_parse(o, jinst_agent_modules, options, err, sizeof err) < 0) {
		say("%s", err);
		/* jcmd's own parser cuts an unquoted "key=value" argument at the '=',
		 * so an attach that lost its value most likely needs quotes. */
		if (attach && jinst_agent_option_wants_value(jinst_agent_modules, options))
			say("through jcmd, quote options that contain '=': "
			    "jcmd PID JVMTI.agent_load /path/libjinst.so '\"trace=times,out=...\"'");
		/* In a running VM, stderr is the program's: its log gets the
		 * reason, not the manual. */
		if (attach) {
			say_where_help("");
			return JNI_ERR;
		}
		fputc('\n', stderr);
		jinst_agent_usage(stderr, jinst_agent_modules);
		return JNI_ERR;
	}
	if (!attach && (o->action == JINST_ACTION_DUMP || o->action == JINST_ACTION_STOP ||
	                o->action == JINST_ACTION_RESET)) {
		const char *a = o->action == JINST_ACTION_DUMP ? "dump" : o->action == JINST_ACTION_STOP ? "stop" : "reset";
		fprintf(stderr, "jinst: %s is for a running VM: jcmd PID JVMTI.agent_load /path/libjinst.so %s\n\n", a, a);
		jinst_agent_usage(stderr, jinst_agent_modules);
		return JNI_ERR;
	}
	return JNI_OK;
}

/* append=y: the outputs of earlier sessions at prefix must be ones the
 * modules can add to. A .cov that cannot be read (a newer format, cut
 * short) would be replaced at the first write, with every session it
 * held; refused now, as jinst merge refuses it. */
static int existing_outputs(const jinst_agent_options *o, const char *prefix)
{
	char err[1024];
	for (size_t i = 0; o->append && o->modules[i]; i++) {
		const jinst_agent_module *m = o->modules[i];
		if (jinst_agent_module_on(o, i) && m->check_existing &&
		    m->check_existing(o->config[i], prefix, err, sizeof err) < 0) {
			say("%s", err);
			return JNI_ERR;
		}
	}
	return JNI_OK;
}

/* out=: a folder (a trailing '/', or one that exists) gets jinst-%p in it;
 * the folder the outputs go to must exist and take files now, not when
 * the program ends hours later, and with append=y the files there must be
 * ones that can be added to. Before any JVMTI call: a refused attach has
 * the library unloaded. */
static int resolve_out(jinst_agent_options *o, long pid)
{
	char path[1024], dir[1024];
	struct stat st;
	size_t n = strlen(o->out);
	unsigned session = jinst_the_core.session;
	jinst_agent_expand_session_path(o->out, pid, session, path, sizeof path);
	if (n && (o->out[n - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))) {
		int w = snprintf(o->out + n, sizeof o->out - n, "%sjinst-%%p", o->out[n - 1] == '/' ? "" : "/");
		if (w < 0 || (size_t)w >= sizeof o->out - n) {
			say("out=%s: path too long", path);
			return JNI_ERR;
		}
		jinst_agent_expand_session_path(o->out, pid, session, path, sizeof path);
	}
	char *slash = strrchr(path, '/');
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
	const char *why = stat(dir, &st) != 0 ? strerror(errno)
	                  : !S_ISDIR(st.st_mode) ? "not a folder"
	                  : access(dir, W_OK | X_OK) != 0 ? strerror(errno) : NULL;
	if (why) {
		say("out=%s: the outputs cannot be written in %s: %s", path, dir, why);
		return JNI_ERR;
	}
	return existing_outputs(o, path);
}

EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	if (parse(&jinst_the_core.opts, options, false) != JNI_OK)
		return JNI_ERR;
	jinst_the_core.session = 1;
	if (jinst_the_core.opts.action == JINST_ACTION_START && resolve_out(&jinst_the_core.opts, (long)getpid()) != JNI_OK)
		return JNI_ERR;
	if (jinst_the_core.opts.action == JINST_ACTION_HELP) {
		/* As HPROF's help did: print and end the process, successfully. */
		jinst_agent_usage(stdout, jinst_agent_modules);
		fflush(stdout);
		exit(0);
	}
	return setup(vm, false);
}

/* What a load asks for, in a message. */
static const char *action_name(enum jinst_agent_action a)
{
	switch (a) {
	case JINST_ACTION_DUMP: return "dump";
	case JINST_ACTION_STOP: return "stop";
	case JINST_ACTION_RESET: return "reset";
	default: return "start";
	}
}

/* The modules of this VM's session ("coverage+monitor") into buf, for
 * messages that speak of it: any of them may be what the user loaded, not
 * trace. */
static const char *session_modules(char *buf, size_t size)
{
	buf[0] = 0;
	for (size_t i = 0; module(i); i++)
		if (on(i))
			add_name(buf, size, module(i)->name);
	return buf;
}

/* The first load in a running VM: set up and start at once. */
static jint attach_first(JavaVM *vm, JNIEnv *jni, const jinst_agent_options *asked)
{
	if (asked->action != JINST_ACTION_START) {
		say("no jinst session in this VM, nothing to %s: start one first with jinst attach %ld OPTIONS",
		    action_name(asked->action), (long)getpid());
		return JNI_ERR;
	}
	jinst_the_core.session = 1;
	if (resolve_out(&jinst_the_core.opts, (long)getpid()) != JNI_OK || setup(vm, true) != JNI_OK)
		return JNI_ERR;
	/* Failed once the runtime is in the VM, the agent stays loaded: its
	 * callbacks are set. */
	start(jni);
	return jinst_agent_hooks_class() ? JNI_OK : JNI_ERR;
}

/* A load that starts after `stop`: a new session, when every module asked
 * for can start again (modules.h, restartable) or never ran here. The running options are
 * replaced (nothing reads them while stopped: the modules are stopped, the
 * load hook is not live, and a dump waits for session_lock), and so is the
 * instrumenter. */
static jint restart(JNIEnv *jni, const jinst_agent_options *asked, const char *options)
{
	for (size_t i = 0; asked->modules[i]; i++)
		if (jinst_agent_module_on(asked, i) && !asked->modules[i]->restartable &&
		    (jinst_the_core.ever_started >> i & 1u)) {
			jinst_agent_log("%s was stopped in this VM and cannot start again", asked->modules[i]->name);
			return JNI_ERR;
		}
	char err[1024];
	pthread_mutex_lock(&session_lock);
	jinst_the_core.session++;
	bool ok = jinst_agent_options_parse(&jinst_the_core.opts, jinst_agent_modules, options, err, sizeof err) == 0 &&
	          resolve_out(&jinst_the_core.opts, jinst_the_core.pid) == JNI_OK &&
	          (!jinst_the_core.opts.log_given || open_log()) && jinst_load_restart() &&
	          add_capabilities() && enable_events(true);
	if (!ok) {
		jinst_the_core.session--; /* (the next attach is that session) */
	} else {
		jinst_the_core.stopped = false;
		jinst_agent_log("starting again after stop: session %u", jinst_the_core.session);
		if (!(ok = start_modules(jni))) {
			/* Stopped again, what started of it included, so that a later
			 * load can start a session (else every load found it neither
			 * stopped nor running, for the life of the VM). */
			stop_modules(jni);
			jinst_the_core.stopped = true;
		}
	}
	pthread_mutex_unlock(&session_lock);
	if (ok)
		jinst_load_go_live(jni);
	return ok ? JNI_OK : JNI_ERR;
}

static jint attach(JavaVM *vm, const char *options);

EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	reply_open(options);
	jint r = attach(vm, options);
	reply_close();
	return r;
}

static jint attach(JavaVM *vm, const char *options)
{
	/* A second load (dump, stop) must not touch the running options, which
	 * the modules, the load hook and the output read: parse into a scratch
	 * copy. */
	static jinst_agent_options scratch;
	jinst_agent_options *asked = jinst_the_core.started ? &scratch : &jinst_the_core.opts;
	if (parse(asked, options, true) != JNI_OK)
		return JNI_ERR;
	if (asked->action == JINST_ACTION_HELP) {
		say_where_help("help is not printed into a running program's output: ");
		return JNI_ERR;
	}
	JNIEnv *jni = NULL;
	if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK || !jni) {
		say("no JNI environment on the attach thread");
		return JNI_ERR;
	}
	if (!jinst_the_core.started)
		return attach_first(vm, jni, asked);
	if (!jinst_the_core.dead && jinst_the_core.stopped && asked->action == JINST_ACTION_START)
		return restart(jni, asked, options);
	const char *what = action_name(asked->action);
	char buf[128];
	const char *mods = session_modules(buf, sizeof buf);
	if (jinst_the_core.dead) {
		jinst_agent_log("this VM is ending and its jinst session (%s) with it, nothing to %s", mods, what);
		return JNI_ERR;
	}
	if (jinst_the_core.stopped) {
		jinst_agent_log("the jinst session of this VM (session %u, %s) was stopped, nothing to %s: start a new one "
		                "with jinst attach %ld OPTIONS",
		                jinst_the_core.session, mods, what, jinst_the_core.pid);
		return JNI_ERR;
	}
	if (!jinst_the_core.running) {
		jinst_agent_log("the jinst session of this VM (%s) did not start (the reason was logged then), nothing to %s",
		                mods, what);
		return JNI_ERR;
	}
	switch (asked->action) {
	case JINST_ACTION_DUMP: jinst_agent_dump(jni); return JNI_OK;
	case JINST_ACTION_STOP: stop(jni); return JNI_OK;
	case JINST_ACTION_RESET: return reset_modules(jni) ? JNI_OK : JNI_ERR;
	default:
		jinst_agent_log("a jinst session (session %u, %s) runs in this VM already; a new one can start after "
		                "jinst stop %ld",
		                jinst_the_core.session, mods, jinst_the_core.pid);
		return JNI_ERR;
	}
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	if (jinst_the_core.log) {
		fclose(jinst_the_core.log);
		jinst_the_core.log = NULL;
	}
}
