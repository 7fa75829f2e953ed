/*
 * libjinst.so: the JVMTI agent for method tracing.
 *
 * How it runs. Agent_OnLoad (or Agent_OnAttach in a running VM) parses the
 * options, asks for the capabilities to see and retransform every class,
 * and sets the callbacks. Until the VM is live the ClassFileLoadHook leaves
 * every class alone: instrumented code calls the runtime, which cannot be
 * defined before VMInit, and a class that called it earlier would fail with
 * NoClassDefFoundError. At VMInit (at once when attaching) the agent defines
 * the runtime classes embedded in this library into the bootstrap loader,
 * registers their natives, engages the hooks, then retransforms the loaded
 * classes the filter selects, so the classes loaded before the VM was live
 * are traced too. From then on each class load goes through the hook.
 *
 * The hook fails open: whatever goes wrong, the class keeps its bytes and
 * one log line names the class and the reason. Classes the VM cannot modify
 * (hidden classes, primitives, arrays, some of the VM's own) are skipped and
 * counted.
 *
 * Recursion. The runtime's package (jinst/rt) and the classes its hot path
 * executes (Thread, ThreadLocal and its map, Object, System, java.lang.ref)
 * are never instrumented, whatever include= says, so a hook never reaches an
 * instrumented method. Instrumenting a class of a named module makes the VM
 * run jdk.internal.module.Modules.transformedByAgent on the loading thread,
 * which may load classes and so re-enter the hook: java.lang.Module and
 * jdk/internal/module are never instrumented either, and a per-thread flag
 * leaves any class loaded from inside our own hook alone.
 *
 * Original bytes. The bytes of every class the agent instruments are kept as
 * first seen (the load, or the first retransformation when attaching), and
 * `stop` hands them back through a retransformation.
 *
 * Output is written at VMDeath, on `dump` and `stop` through jcmd
 * JVMTI.agent_load, and when the program calls jinst.rt.Control.dump().
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <jni.h>
#include <jvmti.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "jinst/instrument.h"
#include "hooks_modes.h"
#include "options.h"
#include "runtime_classes.h"
#include "jinst/report.h"

#define EXPORT __attribute__((visibility("default")))


/* Never instrumented: what the hooks run on, and what instrumenting a
 * class of a named module runs (see the essay above). */
static const char *const always_excluded[] = {
	"jinst/**",           "java/lang/$JinstHooks", "java/lang/Object",       "java/lang/Thread",
	"java/lang/ThreadLocal",
	/* Thread's own parts: an attaching thread (JNI) runs them while its
	 * Thread object is being made, where a hook's ThreadLocal would crash
	 * the VM (JDK 25: FieldHolder, before the thread has its status). */
	"java/lang/Thread$**",
	"java/lang/ThreadLocal$**", "java/lang/ref/**", "java/lang/System",   "java/lang/Module",
	"java/lang/Module$**", "jdk/internal/module/**", "java/lang/Math",
	/* A virtual thread's scheduling (Thread.isAlive runs VirtualThread's
	 * code, which the runtime calls), and the continuations under it. */
	"java/lang/VirtualThread", "java/lang/VirtualThread$**", "jdk/internal/vm/Continuation",
	"jdk/internal/vm/Continuation$**", NULL};

typedef struct original {
	struct original *next;
	char *name;
	unsigned char *bytes;
	jint len;
} original;

static struct {
	JavaVM *vm;
	jvmtiEnv *jvmti;
	jinst_agent_options opts;
	long pid;
	jinst_instrument *ins;
	bool started;              /* options applied, callbacks set */
	atomic_int live;           /* hooks defined and engaged: the load hook instruments */
	atomic_int stopping;       /* the load hook hands back original bytes */
	bool stopped, dead;
	jclass hooks;              /* global reference to jinst/rt/Hooks */
	jmethodID engage, disengage, snap_counts, snap_times, snap_tree, snap_events, thread_names, thread_end;
	jmethodID sample;          /* Hooks.sample, the clock */
	atomic_int clock_on;       /* the clock thread runs while set */
	atomic_int runtime_ready;  /* the fields above are set */
	pthread_mutex_t lock;      /* originals, log */
	pthread_mutex_t dump_lock;
	FILE *log;
	original *originals;
	pthread_key_t arena_key;
	atomic_long instrumented, unchanged, failed, unmodifiable, reentrant, restored;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .dump_lock = PTHREAD_MUTEX_INITIALIZER};

/* Set while this thread is inside the load hook. */
static _Thread_local int in_hook;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&g.lock);
	FILE *f = g.log ? g.log : stderr;
	fputs("jinst: ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
	pthread_mutex_unlock(&g.lock);
}

static const char *jvmti_error(jvmtiError e)
{
	char *name = NULL;
	static _Thread_local char buf[64];
	if (g.jvmti && (*g.jvmti)->GetErrorName(g.jvmti, e, &name) == JVMTI_ERROR_NONE && name) {
		snprintf(buf, sizeof buf, "%s", name);
		(*g.jvmti)->Deallocate(g.jvmti, (unsigned char *)name);
	} else {
		snprintf(buf, sizeof buf, "JVMTI error %d", (int)e);
	}
	return buf;
}

/* Logs a failed JVMTI call; true when it failed. */
static bool jvmti_failed(jvmtiError e, const char *what)
{
	if (e == JVMTI_ERROR_NONE)
		return false;
	logf_("%s failed: %s", what, jvmti_error(e));
	return true;
}

/* Logs and clears a pending Java exception; true when there was one. */
static bool java_failed(JNIEnv *jni, const char *what)
{
	if (!(*jni)->ExceptionCheck(jni))
		return false;
	(*jni)->ExceptionDescribe(jni);
	(*jni)->ExceptionClear(jni);
	logf_("%s failed: Java exception (described above)", what);
	return true;
}

/* ---- original bytes --------------------------------------------------- */

static void originals_keep(const char *name, const unsigned char *bytes, jint len)
{
	pthread_mutex_lock(&g.lock);
	for (original *o = g.originals; o; o = o->next)
		if (!strcmp(o->name, name) && o->len == len && !memcmp(o->bytes, bytes, (size_t)len)) {
			pthread_mutex_unlock(&g.lock);
			return;
		}
	original *o = calloc(1, sizeof *o);
	if (o) {
		o->name = strdup(name);
		o->bytes = malloc((size_t)len ? (size_t)len : 1);
		if (!o->name || !o->bytes) {
			free(o->name);
			free(o->bytes);
			free(o);
			o = NULL;
		}
	}
	if (o) {
		memcpy(o->bytes, bytes, (size_t)len);
		o->len = len;
		o->next = g.originals;
		g.originals = o;
	}
	pthread_mutex_unlock(&g.lock);
}

/* The one original kept for name; NULL when none, or when loaders defined
 * several classes of that name (the VM then hands back its own copy of the
 * initial bytes, which are the same thing). Holds no lock on return: the
 * list only grows and entries are never freed while the VM runs. */
static const original *originals_find(const char *name)
{
	const original *found = NULL;
	pthread_mutex_lock(&g.lock);
	for (const original *o = g.originals; o; o = o->next)
		if (!strcmp(o->name, name)) {
			if (found) {
				found = NULL;
				break;
			}
			found = o;
		}
	pthread_mutex_unlock(&g.lock);
	return found;
}

static bool originals_has(const char *name)
{
	bool r = false;
	pthread_mutex_lock(&g.lock);
	for (const original *o = g.originals; o && !r; o = o->next)
		r = !strcmp(o->name, name);
	pthread_mutex_unlock(&g.lock);
	return r;
}

/* ---- the load hook ---------------------------------------------------- */

static void *jvmti_alloc(void *ctx, size_t size)
{
	unsigned char *p = NULL;
	if ((*(jvmtiEnv *)ctx)->Allocate((jvmtiEnv *)ctx, (jlong)size, &p) != JVMTI_ERROR_NONE)
		return NULL;
	return p;
}

static void arena_destroy(void *a)
{
	jinst_arena_free(a);
}

/* The runtime and the bridge to it (the hooks' owner, java/lang/$JinstHooks). */
static bool runtime_class(const char *name)
{
	return !strncmp(name, JINST_RUNTIME_PACKAGE, sizeof(JINST_RUNTIME_PACKAGE) - 1) ||
	       !strcmp(name, jinst_hooks()[JINST_HOOK_ENTER].owner);
}

static void JNICALL on_class_file_load(jvmtiEnv *jvmti, JNIEnv *jni, jclass class_being_redefined, jobject loader,
                                       const char *name, jobject protection_domain, jint len,
                                       const unsigned char *data, jint *new_len, unsigned char **new_data)
{
	(void)jni;
	(void)loader;
	(void)protection_domain;
	/* No name: a class defined without one (VM-anonymous before JDK 15);
	 * not live: the hooks cannot be reached yet, VMInit retransforms. */
	if (!name || !atomic_load(&g.live) || runtime_class(name))
		return;
	if (in_hook) {
		atomic_fetch_add(&g.reentrant, 1);
		return;
	}
	in_hook = 1;
	if (atomic_load(&g.stopping)) {
		const original *o = class_being_redefined ? originals_find(name) : NULL;
		unsigned char *copy = NULL;
		if (o && (*jvmti)->Allocate(jvmti, o->len, &copy) == JVMTI_ERROR_NONE) {
			memcpy(copy, o->bytes, (size_t)o->len);
			*new_data = copy;
			*new_len = o->len;
			atomic_fetch_add(&g.restored, 1);
		}
		in_hook = 0;
		return;
	}
	if (!g.ins || !jinst_instrument_wants(g.ins, name)) {
		in_hook = 0;
		return;
	}
	jinst_arena *arena = pthread_getspecific(g.arena_key);
	if (!arena) {
		if (jinst_arena_new(&arena) < 0) {
			logf_("%s left unchanged: no memory for an arena", name);
			atomic_fetch_add(&g.failed, 1);
			in_hook = 0;
			return;
		}
		pthread_setspecific(g.arena_key, arena);
	}
	jinst_allocator alloc = {jvmti_alloc, jvmti};
	uint8_t *out = NULL;
	size_t out_len = 0;
	jinst_diag diag;
	memset(&diag, 0, sizeof diag);
	/* A class retransformed again keeps the identity of the bytes it was
	 * first instrumented from (the VM may hand back other bytes). */
	const original *first = class_being_redefined ? originals_find(name) : NULL;
	uint64_t identity = first ? jinst_instrument_identity(first->bytes, (size_t)first->len) : 0;
	int r = jinst_instrument_class(g.ins, arena, data, (size_t)len, first ? &identity : NULL,
	                               class_being_redefined ? JINST_INSTRUMENT_RETRANSFORM : 0, &alloc, &out, &out_len,
	                               &diag);
	jinst_arena_reset(arena);
	if (r < 0) {
		char msg[600];
		jinst_diag_format(&diag, msg, sizeof msg);
		logf_("%s left unchanged: %s", name, msg);
		atomic_fetch_add(&g.failed, 1);
		if (out)
			(*jvmti)->Deallocate(jvmti, out);
	} else if (!out) {
		atomic_fetch_add(&g.unchanged, 1);
		if (diag.message[0])
			logf_("%s: %s", name, diag.message);
	} else if (out_len > INT32_MAX) {
		logf_("%s left unchanged: instrumented class of %zu bytes", name, out_len);
		atomic_fetch_add(&g.failed, 1);
		(*jvmti)->Deallocate(jvmti, out);
	} else {
		/* Instrumented, perhaps with some methods left as they were: the
		 * pass says which in a note (code 0). */
		if (diag.message[0])
			logf_("%s: %s", name, diag.message);
		originals_keep(name, data, len);
		*new_data = out;
		*new_len = (jint)out_len;
		atomic_fetch_add(&g.instrumented, 1);
	}
	in_hook = 0;
}

/* ---- output ----------------------------------------------------------- */

static int method_names(void *ctx, uint32_t id, const char **cls, const char **name, const char **desc)
{
	(void)ctx;
	jinst_method_info info;
	if (!g.ins || jinst_instrument_method_info(g.ins, id, &info) < 0)
		return -1;
	*cls = info.class_name;
	*name = info.name;
	*desc = info.descriptor;
	return 0;
}

/* The long[] a snapshot method returns, copied; NULL on failure. */
static int64_t *snapshot(JNIEnv *jni, jmethodID m, const char *what, size_t *len)
{
	jlongArray a = (jlongArray)(*jni)->CallStaticObjectMethod(jni, g.hooks, m);
	if (java_failed(jni, what) || !a)
		return NULL;
	jsize n = (*jni)->GetArrayLength(jni, a);
	int64_t *v = malloc((size_t)n * sizeof *v + 8);
	if (v)
		(*jni)->GetLongArrayRegion(jni, a, 0, n, (jlong *)v);
	(*jni)->DeleteLocalRef(jni, a);
	*len = v ? (size_t)n : 0;
	return v;
}

static void write_format(JNIEnv *jni, unsigned format)
{
	char prefix[1024], path[1100];
	jinst_agent_expand_path(g.opts.out, g.pid, prefix, sizeof prefix);
	snprintf(path, sizeof path, "%s%s", prefix, jinst_agent_format_ext(format));
	size_t len = 0, counts_len = 0;
	int64_t *data = NULL, *counts = NULL;
	const char **names = NULL;
	size_t name_count = 0;
	jobjectArray tn = NULL;
	switch (format) {
	case JINST_FORMAT_COUNTS: data = snapshot(jni, g.snap_counts, "Hooks.snapshotCounts", &len); break;
	case JINST_FORMAT_PROFILE:
		data = snapshot(jni, g.snap_times, "Hooks.snapshotTimes", &len);
		/* The entry counts are the snapshot's calls. The methods only
		 * counted (leaves) have no time: no calls in data, so that the
		 * profile lists them apart, by their count. */
		counts = data ? malloc((len / 3 + 1) * sizeof *counts) : NULL;
		for (size_t i = 0; counts && i < len / 3; i++) {
			jinst_method_info info;
			counts[i] = data[3 * i];
			if (data[3 * i] > 0 && g.ins &&
			    jinst_instrument_method_info(g.ins, (uint32_t)i, &info) == 0 && !info.timed)
				data[3 * i] = 0;
		}
		counts_len = counts ? len / 3 : 0;
		break;
	case JINST_FORMAT_FOLDED: data = snapshot(jni, g.snap_tree, "Hooks.snapshotTree", &len); break;
	case JINST_FORMAT_CHROME:
		data = snapshot(jni, g.snap_events, "Hooks.snapshotEvents", &len);
		tn = (jobjectArray)(*jni)->CallStaticObjectMethod(jni, g.hooks, g.thread_names);
		if (!java_failed(jni, "Hooks.threadNames") && tn) {
			name_count = (size_t)(*jni)->GetArrayLength(jni, tn);
			names = calloc(name_count + 1, sizeof *names);
			for (size_t i = 0; names && i < name_count; i++) {
				jstring s = (jstring)(*jni)->GetObjectArrayElement(jni, tn, (jsize)i);
				if (s) {
					const char *c = (*jni)->GetStringUTFChars(jni, s, NULL);
					names[i] = c ? strdup(c) : NULL;
					if (c)
						(*jni)->ReleaseStringUTFChars(jni, s, c);
					(*jni)->DeleteLocalRef(jni, s);
				}
			}
		}
		break;
	}
	if (!data) {
		logf_("%s not written: no data from the runtime", path);
	} else {
		FILE *f = fopen(path, "w");
		int r = JINST_EIO, open_errno = errno;
		bool opened = f != NULL;
		if (f) {
			switch (format) {
			case JINST_FORMAT_COUNTS: r = jinst_trace_write_counts(f, data, len, method_names, NULL); break;
			case JINST_FORMAT_PROFILE:
				r = jinst_trace_write_profile(f, data, len / 3, counts, counts_len, g.opts.tick_us, method_names,
				                              NULL);
				break;
			case JINST_FORMAT_FOLDED: r = jinst_trace_write_folded(f, data, len, g.opts.fold_min, method_names, NULL); break;
			case JINST_FORMAT_CHROME:
				r = jinst_trace_write_chrome(f, data, len, names, name_count, g.pid, method_names, NULL);
				break;
			}
			if (fclose(f) != 0 && r == 0)
				r = JINST_EIO;
		}
		if (r < 0)
			logf_("%s not written: %s", path, opened ? jinst_strerror(r) : strerror(open_errno));
		else
			logf_("wrote %s", path);
	}
	if (names)
		for (size_t i = 0; i < name_count; i++)
			free((void *)names[i]);
	free(names);
	if (tn)
		(*jni)->DeleteLocalRef(jni, tn);
	free(data);
	free(counts);
}

static void dump(JNIEnv *jni)
{
	pthread_mutex_lock(&g.dump_lock);
	if (g.hooks)
		for (unsigned bit = 1; bit <= JINST_FORMAT_CHROME; bit <<= 1)
			if (g.opts.formats & bit)
				write_format(jni, bit);
	pthread_mutex_unlock(&g.dump_lock);
}

static void JNICALL native_dump(JNIEnv *jni, jclass cls)
{
	(void)cls;
	dump(jni);
}

/* ---- starting: define the runtime, engage, retransform ------------------ */

/* The bridge (java/lang/$JinstHooks, in java.base) calls jinst/rt/Hooks, in
 * the bootstrap loader's unnamed module, which a named module does not read:
 * without this the first hook fails with IllegalAccessError. java.base is
 * made to read it, as Modules.transformedByAgent does for a module whose
 * classes an agent changed. JDK 8 has no modules (no Class.getModule). */
static bool bridge_reads_runtime(JNIEnv *jni)
{
	jclass cls = (*jni)->FindClass(jni, "java/lang/Class");
	jmethodID get_module = NULL;
	if (!java_failed(jni, "FindClass(java/lang/Class)") && cls) {
		get_module = (*jni)->GetMethodID(jni, cls, "getModule", "()Ljava/lang/Module;");
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni); /* NoSuchMethodError: JDK 8 */
		(*jni)->DeleteLocalRef(jni, cls);
	}
	if (!get_module)
		return true;
	const char *owner = jinst_hooks()[JINST_HOOK_ENTER].owner;
	jclass bridge = (*jni)->FindClass(jni, owner);
	if (java_failed(jni, owner) || !bridge)
		return false;
	jobject from = (*jni)->CallObjectMethod(jni, bridge, get_module);
	bool failed = java_failed(jni, "the bridge's module") || !from;
	(*jni)->DeleteLocalRef(jni, bridge);
	if (failed)
		return false;
	jobject to = (*jni)->CallObjectMethod(jni, g.hooks, get_module);
	bool ok = !java_failed(jni, "the runtime's module") && to &&
	          !jvmti_failed((*g.jvmti)->AddModuleReads(g.jvmti, from, to), "AddModuleReads (java.base reads jinst/rt)");
	(*jni)->DeleteLocalRef(jni, from);
	if (to)
		(*jni)->DeleteLocalRef(jni, to);
	return ok;
}

static bool define_runtime(JNIEnv *jni)
{
	for (unsigned i = 0; i < jinst_runtime_class_count; i++) {
		const jinst_embedded_class *c = &jinst_runtime_classes[i];
		/* Bootstrap loader (NULL): every loader delegates to it, so the
		 * injected calls resolve from any class that has one as ancestor. */
		jclass k = (*jni)->DefineClass(jni, c->name, NULL, (const jbyte *)c->bytes, (jsize)c->len);
		if ((*jni)->ExceptionCheck(jni)) {
			/* Defined already (the agent attached a second time). */
			(*jni)->ExceptionClear(jni);
			k = (*jni)->FindClass(jni, c->name);
			if (java_failed(jni, c->name) || !k) {
				logf_("cannot define %s in the bootstrap loader", c->name);
				return false;
			}
		}
		if (!strcmp(c->name, JINST_RUNTIME_HOOKS))
			g.hooks = (jclass)(*jni)->NewGlobalRef(jni, k);
		(*jni)->DeleteLocalRef(jni, k);
	}
	if (!g.hooks || !bridge_reads_runtime(jni))
		return false;
	struct { jmethodID *id; const char *name, *sig; } ms[] = {
		{&g.engage, "engage", "(IIJ)V"},           {&g.disengage, "disengage", "()V"},
		{&g.snap_counts, "snapshotCounts", "()[J"}, {&g.snap_times, "snapshotTimes", "()[J"},
		{&g.snap_tree, "snapshotTree", "()[J"},     {&g.snap_events, "snapshotEvents", "()[J"},
		{&g.thread_names, "threadNames", "()[Ljava/lang/String;"},
		{&g.thread_end, "threadEnd", "(Ljava/lang/Thread;)V"}, {&g.sample, "sample", "(J)V"}};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		*ms[i].id = (*jni)->GetStaticMethodID(jni, g.hooks, ms[i].name, ms[i].sig);
		if (java_failed(jni, ms[i].name) || !*ms[i].id)
			return false;
	}
	JNINativeMethod natives[] = {{(char *)"dump0", (char *)"()V", (void *)native_dump}};
	if ((*jni)->RegisterNatives(jni, g.hooks, natives, 1) != 0 || java_failed(jni, "RegisterNatives"))
		return false;
	atomic_store(&g.runtime_ready, 1);
	return true;
}

/* "Lpkg/Cls;" of a class, as "pkg/Cls" in buf; false for arrays, primitives
 * and failures. */
static bool class_name(jclass k, char *buf, size_t size)
{
	char *sig = NULL;
	if ((*g.jvmti)->GetClassSignature(g.jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return false;
	size_t n = strlen(sig);
	bool ok = n >= 3 && sig[0] == 'L' && sig[n - 1] == ';' && n - 2 < size;
	if (ok) {
		memcpy(buf, sig + 1, n - 2);
		buf[n - 2] = 0;
	}
	(*g.jvmti)->Deallocate(g.jvmti, (unsigned char *)sig);
	return ok;
}

/* Retransforms the loaded classes select() picks, in batches; a batch that
 * fails is retried one class at a time so one bad class costs only itself. */
static void retransform_loaded(JNIEnv *jni, bool (*select)(const char *name), const char *why)
{
	jint n = 0;
	jclass *all = NULL;
	if (jvmti_failed((*g.jvmti)->GetLoadedClasses(g.jvmti, &n, &all), "GetLoadedClasses"))
		return;
	/* One local reference per class: declare them (-Xcheck:jni counts). */
	if ((*jni)->EnsureLocalCapacity(jni, n + 64) != 0)
		java_failed(jni, "EnsureLocalCapacity");
	jclass *pick = malloc(((size_t)n + 1) * sizeof *pick);
	size_t count = 0;
	long unmodifiable = 0;
	for (jint i = 0; i < n; i++) {
		char name[1024];
		jboolean modifiable = JNI_FALSE;
		bool keep = pick && class_name(all[i], name, sizeof name) && select(name);
		if (keep && ((*g.jvmti)->IsModifiableClass(g.jvmti, all[i], &modifiable) != JVMTI_ERROR_NONE ||
		             !modifiable)) {
			keep = false;
			unmodifiable++;
		}
		if (keep)
			pick[count++] = all[i];
		else
			(*jni)->DeleteLocalRef(jni, all[i]);
	}
	(*g.jvmti)->Deallocate(g.jvmti, (unsigned char *)all);
	atomic_fetch_add(&g.unmodifiable, unmodifiable);
	size_t done = 0, failed = 0;
	const size_t batch = 64;
	for (size_t i = 0; i < count; i += batch) {
		jint m = (jint)(count - i < batch ? count - i : batch);
		if ((*g.jvmti)->RetransformClasses(g.jvmti, m, pick + i) == JVMTI_ERROR_NONE) {
			done += (size_t)m;
			continue;
		}
		for (jint j = 0; j < m; j++) {
			jvmtiError e = (*g.jvmti)->RetransformClasses(g.jvmti, 1, pick + i + j);
			if (e == JVMTI_ERROR_NONE) {
				done++;
			} else {
				char name[1024];
				failed++;
				logf_("%s left unchanged: RetransformClasses: %s",
				      class_name(pick[i + j], name, sizeof name) ? name : "(class)", jvmti_error(e));
			}
		}
	}
	for (size_t i = 0; i < count; i++)
		(*jni)->DeleteLocalRef(jni, pick[i]);
	free(pick);
	logf_("%s: %zu loaded classes retransformed, %zu failed, %ld not modifiable", why, done, failed, unmodifiable);
}

static bool select_wanted(const char *name)
{
	return !runtime_class(name) && g.ins && jinst_instrument_wants(g.ins, name);
}

static bool select_instrumented(const char *name)
{
	return originals_has(name);
}

static int hooks_mode(void)
{
	switch (g.opts.mode) {
	case JINST_TRACE_TIMES:
		return HOOKS_COUNTS | HOOKS_TIMES | ((g.opts.formats & JINST_FORMAT_FOLDED) ? HOOKS_TREE : 0);
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

static int64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void JNICALL clock_run(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	(void)jvmti;
	(void)arg;
	const int64_t period = g.opts.tick_us * 1000;
	/* Linux delays a timer by up to 50 us by default: a tenth of a
	 * period is enough leeway. */
	prctl(PR_SET_TIMERSLACK, (unsigned long)(period / 10 > 0 ? period / 10 : 1), 0, 0, 0);
	int64_t next = monotonic_ns();
	bool failed = false;
	while (atomic_load(&g.clock_on)) {
		next += period;
		struct timespec at = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
		int64_t now = monotonic_ns();
		if (now - next > period)
			next = now;
		if (!atomic_load(&g.clock_on))
			break;
		(*jni)->CallStaticVoidMethod(jni, g.hooks, g.sample, (jlong)now);
		if ((*jni)->ExceptionCheck(jni)) {
			/* (once: an exception here would be the same every time) */
			if (!failed)
				java_failed(jni, "Hooks.sample");
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
	if (java_failed(jni, "new Thread(\"jinst clock\")"))
		t = NULL;
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (name)
		(*jni)->DeleteLocalRef(jni, name);
	return t;
}

static void start_tracing(JNIEnv *jni)
{
	if (!define_runtime(jni)) {
		logf_("the runtime could not be set up; tracing nothing");
		return;
	}
	jthread clock = NULL;
	if (g.opts.mode == JINST_TRACE_TIMES && g.opts.tick_us > 0 && !(clock = clock_thread(jni)))
		logf_("no clock thread: times will be 0");
	(*jni)->CallStaticVoidMethod(jni, g.hooks, g.engage, (jint)hooks_mode(), (jint)g.opts.max_events,
	                             (jlong)monotonic_ns());
	if (java_failed(jni, "Hooks.engage"))
		return;
	if (clock) {
		atomic_store(&g.clock_on, 1);
		if (jvmti_failed((*g.jvmti)->RunAgentThread(g.jvmti, clock, clock_run, NULL, JVMTI_THREAD_MAX_PRIORITY),
		                 "RunAgentThread (the clock; times will be 0)"))
			atomic_store(&g.clock_on, 0);
		(*jni)->DeleteLocalRef(jni, clock);
	}
	atomic_store(&g.live, 1);
	retransform_loaded(jni, select_wanted, "start");
}

static void summary(void)
{
	logf_("%ld classes instrumented, %ld left unchanged on error, %ld not modifiable, %ld loaded from inside the "
	      "hook, %u methods",
	      atomic_load(&g.instrumented), atomic_load(&g.failed), atomic_load(&g.unmodifiable),
	      atomic_load(&g.reentrant), g.ins ? jinst_instrument_method_count(g.ins) : 0u);
}

static void stop_tracing(JNIEnv *jni)
{
	atomic_store(&g.clock_on, 0);
	dump(jni);
	(*jni)->CallStaticVoidMethod(jni, g.hooks, g.disengage);
	java_failed(jni, "Hooks.disengage");
	atomic_store(&g.stopping, 1);
	retransform_loaded(jni, select_instrumented, "stop");
	atomic_store(&g.stopping, 0);
	atomic_store(&g.live, 0);
	g.stopped = true;
	logf_("stop: %ld classes given back their original bytes", atomic_load(&g.restored));
	summary();
}

/* A thread ends: the runtime folds what it recorded into what ended threads
 * left, so its registry stays as small as the set of live threads. */
static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	if (!atomic_load(&g.runtime_ready) || g.dead)
		return;
	(*jni)->CallStaticVoidMethod(jni, g.hooks, g.thread_end, thread);
	java_failed(jni, "Hooks.threadEnd");
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	(void)thread;
	start_tracing(jni);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti;
	atomic_store(&g.clock_on, 0);
	if (g.hooks && !g.stopped) {
		dump(jni);
		(*jni)->CallStaticVoidMethod(jni, g.hooks, g.disengage);
		java_failed(jni, "Hooks.disengage");
	}
	atomic_store(&g.live, 0);
	g.dead = true;
	if (!g.stopped)
		summary();
}

/* ---- loading ---------------------------------------------------------- */

static int setup(JavaVM *vm, bool attach)
{
	g.vm = vm;
	g.pid = (long)getpid();
	if (strcmp(g.opts.log, "stderr") != 0) {
		char path[1024];
		jinst_agent_expand_path(g.opts.log, g.pid, path, sizeof path);
		g.log = fopen(path, "a");
		if (!g.log) {
			fprintf(stderr, "jinst: log=%s: %s\n", path, strerror(errno));
			return JNI_ERR;
		}
	}
	if ((*vm)->GetEnv(vm, (void **)&g.jvmti, JVMTI_VERSION_1_2) != JNI_OK || !g.jvmti) {
		logf_("no JVMTI 1.2 environment in this VM");
		return JNI_ERR;
	}
	if (pthread_key_create(&g.arena_key, arena_destroy) != 0) {
		logf_("no thread-local key");
		return JNI_ERR;
	}
	/* The instrumenter copies the patterns. */
	const char *exclude[2 * JINST_AGENT_MAX_PATTERNS + 16];
	size_t k = 0;
	for (size_t i = 0; i < g.opts.exclude_count; i++)
		exclude[k++] = g.opts.exclude[i];
	for (size_t i = 0; always_excluded[i]; i++)
		exclude[k++] = always_excluded[i];
	exclude[k] = NULL;
	jinst_instrument_options io = JINST_INSTRUMENT_OPTIONS_INIT;
	/* Counts need the entry hook alone (exit does nothing in that mode, and
	 * the mode never changes): less code to JIT. Times count leaves only
	 * unless leaves=time; an events timeline shows every call. */
	io.passes = g.opts.mode == JINST_TRACE_COUNTS ? JINST_PASS_COUNT : JINST_PASS_TRACE;
	if (g.opts.mode == JINST_TRACE_TIMES && !g.opts.time_leaves)
		io.passes |= JINST_PASS_COUNT_LEAVES;
	io.include = g.opts.include_count ? g.opts.include : NULL;
	io.exclude = exclude;
	jinst_diag diag;
	memset(&diag, 0, sizeof diag);
	if (jinst_instrument_new(&g.ins, &io, &diag) < 0) {
		char msg[600];
		jinst_diag_format(&diag, msg, sizeof msg);
		logf_("cannot set up the instrumentation: %s", msg);
		return JNI_ERR;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_generate_all_class_hook_events = 1;
	caps.can_retransform_classes = 1;
	if (jvmti_failed((*g.jvmti)->AddCapabilities(g.jvmti, &caps), "AddCapabilities"))
		return JNI_ERR;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.ClassFileLoadHook = on_class_file_load;
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.ThreadEnd = on_thread_end;
	if (jvmti_failed((*g.jvmti)->SetEventCallbacks(g.jvmti, &cb, (jint)sizeof cb), "SetEventCallbacks"))
		return JNI_ERR;
	jvmtiEvent events[] = {JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_END,
	                       JVMTI_EVENT_VM_INIT};
	for (size_t i = 0; i < (attach ? 3u : 4u); i++)
		if (jvmti_failed((*g.jvmti)->SetEventNotificationMode(g.jvmti, JVMTI_ENABLE, events[i], NULL),
		                 "SetEventNotificationMode"))
			return JNI_ERR;
	g.started = true;
	return JNI_OK;
}

static int parse(jinst_agent_options *o, const char *options, bool attach)
{
	char err[512];
	if (jinst_agent_options_parse(o, options, err, sizeof err) < 0) {
		fprintf(stderr, "jinst: %s\n\n", err);
		/* jcmd's own parser cuts an unquoted "key=value" argument at the '=',
		 * so an attach that lost its value most likely needs quotes. */
		static const char *const keys[] = {"trace",  "include", "exclude",   "format", "out",
		                                   "log",    "leaves",  "maxevents", "tick",   "foldmin", NULL};
		bool key_only = false;
		for (size_t i = 0; attach && options && keys[i]; i++)
			key_only |= !strcmp(options, keys[i]);
		if (key_only)
			fprintf(stderr, "jinst: through jcmd, quote options that contain '=': "
			                "jcmd PID JVMTI.agent_load /path/libjinst.so '\"trace=times,out=...\"'\n\n");
		jinst_agent_usage(stderr);
		return JNI_ERR;
	}
	if (!attach && (o->action == JINST_ACTION_DUMP || o->action == JINST_ACTION_STOP)) {
		const char *a = o->action == JINST_ACTION_DUMP ? "dump" : "stop";
		fprintf(stderr, "jinst: %s is for a running VM: jcmd PID JVMTI.agent_load /path/libjinst.so %s\n\n", a, a);
		jinst_agent_usage(stderr);
		return JNI_ERR;
	}
	return JNI_OK;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	if (parse(&g.opts, options, false) != JNI_OK)
		return JNI_ERR;
	if (g.opts.action == JINST_ACTION_HELP) {
		/* As HPROF's help did: print and end the process, successfully. */
		jinst_agent_usage(stdout);
		fflush(stdout);
		exit(0);
	}
	return setup(vm, false);
}

EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	/* A second load (dump, stop) must not touch the running options, which
	 * the clock, the load hook and the output read: parse into a scratch
	 * copy. */
	static jinst_agent_options scratch;
	jinst_agent_options *asked = g.started ? &scratch : &g.opts;
	if (parse(asked, options, true) != JNI_OK)
		return JNI_ERR;
	if (asked->action == JINST_ACTION_HELP) {
		jinst_agent_usage(stdout);
		fflush(stdout);
		return JNI_OK;
	}
	JNIEnv *jni = NULL;
	if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK || !jni) {
		fprintf(stderr, "jinst: no JNI environment on the attach thread\n");
		return JNI_ERR;
	}
	if (!g.started) {
		if (asked->action != JINST_ACTION_START) {
			fprintf(stderr, "jinst: not tracing in this VM; load it with trace=... first\n");
			return JNI_ERR;
		}
		if (setup(vm, true) != JNI_OK)
			return JNI_ERR;
		start_tracing(jni);
		return g.hooks ? JNI_OK : JNI_ERR;
	}
	if (g.dead || g.stopped || !g.hooks) {
		logf_("tracing was stopped or never started in this VM; nothing to do");
		return JNI_ERR;
	}
	switch (asked->action) {
	case JINST_ACTION_DUMP: dump(jni); return JNI_OK;
	case JINST_ACTION_STOP: stop_tracing(jni); return JNI_OK;
	default: logf_("already tracing in this VM; load it with dump or stop"); return JNI_ERR;
	}
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	if (g.log) {
		fclose(g.log);
		g.log = NULL;
	}
}
