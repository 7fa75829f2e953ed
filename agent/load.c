/*
 * Class loads: the ClassFileLoadHook, the original bytes, retransformation.
 *
 * Until the VM is live the hook leaves every class alone: instrumented code
 * calls the runtime, which cannot be defined before VMInit, and a class that
 * called it earlier would fail with NoClassDefFoundError. Going live (at
 * VMInit, at once when attaching) retransforms the loaded classes the
 * filter selects, so the classes loaded before are instrumented too.
 *
 * The hook fails open: whatever goes wrong, the class keeps its bytes and
 * one log line names the class and the reason. Classes the VM cannot modify
 * (hidden classes, primitives, arrays, some of the VM's own) are skipped
 * and counted.
 *
 * Recursion. The runtime's package (jinst/rt) and the classes its hot path
 * executes (Thread, ThreadLocal and its map, Object, System, java.lang.ref)
 * are never instrumented, whatever include= says, so a hook never reaches
 * an instrumented method. Instrumenting a class of a named module makes the
 * VM run jdk.internal.module.Modules.transformedByAgent on the loading
 * thread, which may load classes and so re-enter the hook: java.lang.Module
 * and jdk/internal/module are never instrumented either, and a per-thread
 * flag leaves any class loaded from inside our own hook alone.
 *
 * Original bytes. The bytes of every class the agent instruments are kept
 * as first seen (the load, or the first retransformation when attaching):
 * `stop` hands them back through a retransformation, and a class
 * retransformed again keeps the identity of those bytes (the VM may hand
 * back other bytes). A class loaded before the attach takes the identity
 * of its class file when the loader finds it (identity.c).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "core.h"
#include "natives.h"
#include "trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	struct original *next;     /* in its bucket */
	char *name;
	unsigned char *bytes;
	jint len;
} original;

/* The originals by name: chained buckets, doubled when they average two
 * entries, so that keeping and finding stay constant-time however many
 * classes a program loads (a list scanned per load was quadratic). */
typedef struct originals {
	original **buckets;
	size_t nbuckets, count;
} originals;

/* The instrumenters of sessions before this one, not yet freed. */
typedef struct retired_ins {
	struct retired_ins *next;
	jinst_instrument *ins;
} retired_ins;

static struct {
	jinst_instrument *ins;
	retired_ins *retired;      /* freed once no load hook can hold them (jinst_load_restart) */
	atomic_int in_flight;      /* load hooks running */
	pthread_mutex_t ins_lock;  /* ins replaced; ranges reserved on it */
	uint32_t reserved_end;     /* past every range of method ids reserved, all sessions */
	atomic_int live;           /* the runtime is engaged: the hook instruments */
	atomic_int stopping;       /* the hook hands back original bytes */
	pthread_mutex_t lock;      /* originals */
	originals originals;
	pthread_key_t arena_key;
	atomic_long instrumented, unchanged, failed, unmodifiable, reentrant, restored, methods_left_alone, declined;
	jobject platform;          /* the platform class loader (JDK 9+), a global reference, or NULL */
} ld = {.lock = PTHREAD_MUTEX_INITIALIZER, .ins_lock = PTHREAD_MUTEX_INITIALIZER};

/* Set while this thread is inside the load hook. */
static _Thread_local int in_hook;
/* The class the VM retransforms in this thread's hook, or NULL. */
static _Thread_local jclass redefined;
/* The methods of the class this thread is instrumenting that were left alone. */
static _Thread_local long class_left_alone, class_declines;

const jinst_instrument *jinst_agent_instrumenter(void)
{
	return ld.ins;
}

jclass jinst_agent_class_redefined(void)
{
	return redefined;
}

/* ---- original bytes --------------------------------------------------- */

static size_t name_hash(const char *name)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211u;
	return (size_t)h;
}

static original **bucket(const char *name)
{
	return &ld.originals.buckets[name_hash(name) & (ld.originals.nbuckets - 1)];
}

/* Twice the buckets (1024 at first); false without memory, the table as it was. */
static bool originals_grow(void)
{
	originals *t = &ld.originals;
	size_t n = t->nbuckets ? t->nbuckets * 2 : 1024;
	original **b = calloc(n, sizeof *b);
	if (!b)
		return false;
	for (size_t i = 0; i < t->nbuckets; i++)
		for (original *o = t->buckets[i], *next; o; o = next) {
			next = o->next;
			size_t k = name_hash(o->name) & (n - 1);
			o->next = b[k];
			b[k] = o;
		}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = n;
	return true;
}

static void originals_keep(const char *name, const unsigned char *bytes, jint len)
{
	pthread_mutex_lock(&ld.lock);
	originals *t = &ld.originals;
	if (t->count >= 2 * t->nbuckets && !originals_grow() && !t->nbuckets) {
		pthread_mutex_unlock(&ld.lock);
		return;
	}
	for (original *o = *bucket(name); o; o = o->next)
		if (!strcmp(o->name, name) && o->len == len && !memcmp(o->bytes, bytes, (size_t)len)) {
			pthread_mutex_unlock(&ld.lock);
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
		original **head = bucket(name);
		o->next = *head;
		*head = o;
		t->count++;
	}
	pthread_mutex_unlock(&ld.lock);
}

/* The one original kept for name; NULL when none, or when loaders defined
 * several classes of that name (the VM then hands back its own copy of the
 * initial bytes, which are the same thing). Holds no lock on return:
 * entries are never freed while the VM runs (the buckets may move, the
 * entries do not). */
static const original *originals_find(const char *name)
{
	const original *found = NULL;
	pthread_mutex_lock(&ld.lock);
	for (const original *o = ld.originals.nbuckets ? *bucket(name) : NULL; o; o = o->next)
		if (!strcmp(o->name, name)) {
			if (found) {
				found = NULL;
				break;
			}
			found = o;
		}
	pthread_mutex_unlock(&ld.lock);
	return found;
}

static bool originals_has(const char *name)
{
	bool r = false;
	pthread_mutex_lock(&ld.lock);
	for (const original *o = ld.originals.nbuckets ? *bucket(name) : NULL; o && !r; o = o->next)
		r = !strcmp(o->name, name);
	pthread_mutex_unlock(&ld.lock);
	return r;
}

/* ---- the instrumenter ------------------------------------------------- */

/* A method left as it was while the rest of its class is instrumented: one
 * line each, with the reason, so that no loss is silent; counted for the
 * summary. */
static void method_left_alone(void *ctx, const char *class_name, const char *method, const char *descriptor,
                              const jinst_diag *why)
{
	(void)ctx;
	char msg[600];
	jinst_diag_format(why, msg, sizeof msg);
	jinst_agent_log("%s.%s%s left alone: %s", class_name, method, descriptor, msg);
	atomic_fetch_add(&ld.methods_left_alone, 1);
	class_left_alone++;
}

/* A class a pass cannot instrument (coverage and jsr/ret): its line, as a
 * method's, and the summary's count. */
static void class_declined(void *ctx, const char *class_name, const char *pass, const jinst_diag *why)
{
	(void)ctx;
	char msg[600];
	jinst_diag_format(why, msg, sizeof msg);
	jinst_agent_log("%s left alone by %s: %s", class_name, pass, msg);
	atomic_fetch_add(&ld.declined, 1);
	class_declines++;
}

int jinst_load_instrumenter_new(const jinst_agent_options *o, jinst_instrument **out, jinst_diag *diag)
{
	/* The instrumenter copies the patterns. */
	const char *exclude[2 * JINST_AGENT_MAX_PATTERNS + 16];
	size_t k = 0;
	for (size_t i = 0; i < o->exclude_count; i++)
		exclude[k++] = o->exclude[i];
	for (size_t i = 0; always_excluded[i]; i++)
		exclude[k++] = always_excluded[i];
	exclude[k] = NULL;
	jinst_instrument_options io = JINST_INSTRUMENT_OPTIONS_INIT;
	io.passes = 0;
	for (size_t i = 0; o->modules && o->modules[i]; i++)
		if (jinst_agent_module_on(o, i) && o->modules[i]->builtin_passes)
			io.passes |= o->modules[i]->builtin_passes(o->config[i]);
	io.include = o->include_count ? o->include : NULL;
	io.exclude = exclude;
	io.left_alone = method_left_alone;
	io.declined = class_declined;
	*out = NULL;
	int r = jinst_instrument_new(out, &io, diag);
	for (size_t i = 0; r == 0 && o->modules && o->modules[i]; i++)
		if (jinst_agent_module_on(o, i) && o->modules[i]->add_passes)
			r = o->modules[i]->add_passes(o->config[i], *out, diag);
	if (r == 0)
		jinst_natives_carry(*out);
	if (r < 0) {
		jinst_instrument_free(*out);
		*out = NULL;
	}
	return r;
}

static void arena_destroy(void *a)
{
	jinst_arena_free(a);
}

bool jinst_load_setup(void)
{
	if (pthread_key_create(&ld.arena_key, arena_destroy) != 0) {
		jinst_agent_log("no thread-local key");
		return false;
	}
	jinst_diag diag;
	memset(&diag, 0, sizeof diag);
	if (jinst_load_instrumenter_new(&jinst_the_core.opts, &ld.ins, &diag) < 0) {
		char msg[600];
		jinst_diag_format(&diag, msg, sizeof msg);
		jinst_agent_log("cannot set up the instrumentation: %s", msg);
		return false;
	}
	return true;
}

/* Frees the instrumenters of the sessions before, when no load hook can
 * hold one: the hook is not live (stopped), so a hook that begins now
 * returns before it reads ld.ins, and one that began before the stop is
 * counted in in_flight until it ends. A hook still running after a
 * while keeps them for the next restart. */
static void retired_free(void)
{
	for (int i = 0; i < 1000 && atomic_load(&ld.in_flight) > 0; i++) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	if (atomic_load(&ld.in_flight) > 0)
		return;
	for (retired_ins *r = ld.retired, *next; r; r = next) {
		next = r->next;
		jinst_instrument_free(r->ins);
		free(r);
	}
	ld.retired = NULL;
}

bool jinst_load_restart(void)
{
	jinst_instrument *ins = NULL;
	jinst_diag diag;
	memset(&diag, 0, sizeof diag);
	if (jinst_load_instrumenter_new(&jinst_the_core.opts, &ins, &diag) < 0) {
		char msg[600];
		jinst_diag_format(&diag, msg, sizeof msg);
		jinst_agent_log("cannot set up the instrumentation: %s", msg);
		return false;
	}
	pthread_mutex_lock(&ld.ins_lock);
	/* Method ids start at 0 again (Hooks.newSession says why a frame of
	 * old code cannot disturb them), past the ranges that runs of code
	 * instrumented ahead of time hold for the VM's life (jinst.rt.Runs).
	 * Class ids do not: a frame of old code still asks for its old
	 * class's probes, which must not be a new class's. */
	uint32_t first;
	if (ld.reserved_end && jinst_instrument_reserve_method_range(ins, ld.reserved_end, &first) < 0)
		jinst_agent_log("the methods of code instrumented ahead of time may share ids with this session's");
	retired_ins *r = ld.ins ? malloc(sizeof *r) : NULL;
	if (ld.ins)
		jinst_instrument_probe_class_start(ins, jinst_instrument_probe_class_count(ld.ins));
	if (r) {
		r->ins = ld.ins;
		r->next = ld.retired;
		ld.retired = r;
	}
	ld.ins = ins;
	retired_free();
	pthread_mutex_unlock(&ld.ins_lock);
	/* Each session's summary and stop count that session (no hook
	 * instruments or hands back while stopped). */
	atomic_long *figures[] = {&ld.instrumented, &ld.unchanged, &ld.failed, &ld.unmodifiable,
	                          &ld.reentrant, &ld.restored, &ld.methods_left_alone, &ld.declined};
	for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++)
		atomic_store(figures[i], 0);
	return true;
}

int jinst_load_reserve_methods(uint32_t count, uint32_t *first)
{
	pthread_mutex_lock(&ld.ins_lock);
	int r = ld.ins ? jinst_instrument_reserve_method_range(ld.ins, count, first) : JINST_EINVAL;
	if (r == 0 && *first + count > ld.reserved_end)
		ld.reserved_end = *first + count;
	pthread_mutex_unlock(&ld.ins_lock);
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

/* The runtime and the bridge to it (the hooks' owner, java/lang/$JinstHooks). */
static bool runtime_class(const char *name)
{
	return !strncmp(name, JINST_RUNTIME_PACKAGE, sizeof(JINST_RUNTIME_PACKAGE) - 1) ||
	       !strcmp(name, jinst_hooks()[JINST_HOOK_ENTER].owner);
}

/* Stopping: a class retransformed gets the bytes kept from its first load,
 * with the wrappers of natives its first load gave it (natives_run.c: the
 * VM refuses a version without them). */
static void hand_back(jvmtiEnv *jvmti, jclass class_being_redefined, const char *name, jint len,
                      const unsigned char *data, jint *new_len, unsigned char **new_data)
{
	const original *o = class_being_redefined ? originals_find(name) : NULL;
	const unsigned char *bytes = o ? o->bytes : data;
	jint n = o ? o->len : len;
	uint8_t *wrapped = NULL;
	size_t wrapped_len = 0;
	int w = class_being_redefined ? jinst_natives_rewrap(bytes, n, &wrapped, &wrapped_len) : 1;
	if (w < 0)
		jinst_agent_log("%s: its natives' wrappers cannot be made again: %s", name, jinst_strerror(w));
	if (w == 0 && wrapped_len <= INT32_MAX) {
		bytes = wrapped;
		n = (jint)wrapped_len;
	} else if (!o) {
		free(wrapped);
		return;
	}
	unsigned char *copy = NULL;
	if ((*jvmti)->Allocate(jvmti, n, &copy) == JVMTI_ERROR_NONE) {
		memcpy(copy, bytes, (size_t)n);
		*new_data = copy;
		*new_len = n;
		atomic_fetch_add(&ld.restored, 1);
	}
	free(wrapped);
}

/* This thread's arena, made on its first class; NULL without memory. */
static jinst_arena *thread_arena(void)
{
	jinst_arena *arena = pthread_getspecific(ld.arena_key);
	if (!arena) {
		if (jinst_arena_new(&arena) < 0)
			return NULL;
		pthread_setspecific(ld.arena_key, arena);
	}
	return arena;
}

/* What came of one class: new bytes handed to the VM, or why not. */
static void conclude(jvmtiEnv *jvmti, const char *name, int r, const jinst_diag *diag, uint8_t *out,
                     size_t out_len, const unsigned char *data, jint len, jint *new_len, unsigned char **new_data)
{
	if (r < 0) {
		char msg[600];
		jinst_diag_format(diag, msg, sizeof msg);
		jinst_agent_log("%s left unchanged: %s", name, msg);
		atomic_fetch_add(&ld.failed, 1);
		if (out)
			(*jvmti)->Deallocate(jvmti, out);
	} else if (!out && class_left_alone) {
		/* Every method with code left alone, each said above. */
		jinst_agent_log("%s left unchanged: %ld methods left alone", name, class_left_alone);
		atomic_fetch_add(&ld.failed, 1);
	} else if (!out) {
		atomic_fetch_add(&ld.unchanged, 1);
		if (diag->message[0] && !class_declines)
			jinst_agent_log("%s: %s", name, diag->message);
	} else if (out_len > INT32_MAX) {
		jinst_agent_log("%s left unchanged: instrumented class of %zu bytes", name, out_len);
		atomic_fetch_add(&ld.failed, 1);
		(*jvmti)->Deallocate(jvmti, out);
	} else {
		/* Instrumented, perhaps with some methods left as they were: the
		 * note (code 0) names them, as method_left_alone did one by one. */
		if (diag->message[0] && !class_left_alone && !class_declines)
			jinst_agent_log("%s: %s", name, diag->message);
		originals_keep(name, data, len);
		*new_data = out;
		*new_len = (jint)out_len;
		atomic_fetch_add(&ld.instrumented, 1);
	}
}

static void instrument(jvmtiEnv *jvmti, jclass class_being_redefined, const char *name, jint len,
                       const unsigned char *data, jint *new_len, unsigned char **new_data)
{
	jinst_arena *arena = thread_arena();
	if (!arena) {
		jinst_agent_log("%s left unchanged: no memory for an arena", name);
		atomic_fetch_add(&ld.failed, 1);
		return;
	}
	jinst_allocator alloc = {jvmti_alloc, jvmti};
	uint8_t *out = NULL;
	size_t out_len = 0;
	jinst_diag diag;
	memset(&diag, 0, sizeof diag);
	/* A class retransformed again keeps the identity of the bytes it was
	 * first instrumented from (the VM may hand back other bytes). */
	/* Loaded before the attach: its class file, instrumented instead of the
	 * rebuilt bytes, and its identity (identity.c). */
	uint64_t identity = 0;
	class_left_alone = class_declines = 0;
	const uint8_t *in = data;
	size_t in_len = (size_t)len;
	bool known = class_being_redefined && jinst_identity_find(name, data, (size_t)len, &identity, &in, &in_len);
	const original *first = class_being_redefined && !known ? originals_find(name) : NULL;
	if (first) {
		identity = jinst_instrument_identity(first->bytes, (size_t)first->len);
		known = true;
	}
	int r = jinst_instrument_class(ld.ins, arena, in, in_len, known ? &identity : NULL,
	                               class_being_redefined ? JINST_INSTRUMENT_RETRANSFORM : 0, &alloc, &out, &out_len,
	                               &diag);
	jinst_arena_reset(arena);
	conclude(jvmti, name, r, &diag, out, out_len, data, len, new_len, new_data);
}

/* Without include=, the JDK is left alone: its packages by name (options.c),
 * and whatever the boot and platform loaders define, as JaCoCo leaves the
 * boot class path out. The names alone missed the JDK's org/xml/sax,
 * org/w3c/dom, org/ietf/jgss and org/jcp; the loader alone would miss
 * nothing of the JDK, but an application's javax.* and the names keep
 * what users know. */
static bool jdk_loader(JNIEnv *jni, jobject loader)
{
	return jinst_the_core.opts.include_count == 0 &&
	       (!loader || (ld.platform && (*jni)->IsSameObject(jni, loader, ld.platform)));
}

static void load_hook(jvmtiEnv *jvmti, JNIEnv *jni, jclass class_being_redefined, jobject loader, const char *name,
                      jint len, const unsigned char *data, jint *new_len, unsigned char **new_data)
{
	/* No name: a class defined without one (VM-anonymous before JDK 15);
	 * not live: the hooks cannot be reached yet, going live retransforms. */
	if (!name || !atomic_load(&ld.live) || runtime_class(name) || jdk_loader(jni, loader))
		return;
	if (in_hook) {
		atomic_fetch_add(&ld.reentrant, 1);
		return;
	}
	in_hook = 1;
	redefined = class_being_redefined;
	if (atomic_load(&ld.stopping))
		hand_back(jvmti, class_being_redefined, name, len, data, new_len, new_data);
	else if (ld.ins && jinst_instrument_wants(ld.ins, name))
		instrument(jvmti, class_being_redefined, name, len, data, new_len, new_data);
	redefined = NULL;
	in_hook = 0;
}

void JNICALL jinst_load_hook(jvmtiEnv *jvmti, JNIEnv *jni, jclass class_being_redefined, jobject loader,
                             const char *name, jobject protection_domain, jint len, const unsigned char *data,
                             jint *new_len, unsigned char **new_data)
{
	(void)protection_domain;
	/* (before ld.live is read: jinst_load_restart frees what a hook running holds) */
	atomic_fetch_add(&ld.in_flight, 1);
	load_hook(jvmti, jni, class_being_redefined, loader, name, len, data, new_len, new_data);
	atomic_fetch_sub(&ld.in_flight, 1);
}

/* ---- retransformation ------------------------------------------------- */

/* "Lpkg/Cls;" of a class, as "pkg/Cls" in buf; false for arrays, primitives
 * and failures. */
static bool class_name(jvmtiEnv *jvmti, jclass k, char *buf, size_t size)
{
	char *sig = NULL;
	if ((*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return false;
	size_t n = strlen(sig);
	bool ok = n >= 3 && sig[0] == 'L' && sig[n - 1] == ';' && n - 2 < size;
	if (ok) {
		memcpy(buf, sig + 1, n - 2);
		buf[n - 2] = 0;
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	return ok;
}

static bool select_wanted(const char *name);

/* The loaded classes select() picks and the VM may modify, into pick (local
 * references, the others deleted); their number, and in *unmodifiable
 * those picked that the VM may not modify. */
static size_t pick_loaded(JNIEnv *jni, bool (*select)(const char *name), jclass *all, jint n, jclass *pick,
                          long *unmodifiable)
{
	jvmtiEnv *jvmti = jinst_the_core.jvmti;
	size_t count = 0;
	*unmodifiable = 0;
	for (jint i = 0; i < n; i++) {
		char name[1024];
		jboolean modifiable = JNI_FALSE;
		bool keep = pick && class_name(jvmti, all[i], name, sizeof name) && select(name);
		jobject loader = NULL;
		if (keep && select == select_wanted) {
			keep = (*jvmti)->GetClassLoader(jvmti, all[i], &loader) == JVMTI_ERROR_NONE && !jdk_loader(jni, loader);
			if (loader)
				(*jni)->DeleteLocalRef(jni, loader);
		}
		if (keep && ((*jvmti)->IsModifiableClass(jvmti, all[i], &modifiable) != JVMTI_ERROR_NONE || !modifiable)) {
			keep = false;
			++*unmodifiable;
		}
		if (keep)
			pick[count++] = all[i];
		else
			(*jni)->DeleteLocalRef(jni, all[i]);
	}
	atomic_fetch_add(&ld.unmodifiable, *unmodifiable);
	return count;
}

/* Retransforms pick[0..count) in batches; a batch that fails is retried one
 * class at a time so one bad class costs only itself. The failures. */
static size_t retransform(jclass *pick, size_t count)
{
	jvmtiEnv *jvmti = jinst_the_core.jvmti;
	size_t failed = 0;
	const size_t batch = 64;
	for (size_t i = 0; i < count; i += batch) {
		jint m = (jint)(count - i < batch ? count - i : batch);
		if ((*jvmti)->RetransformClasses(jvmti, m, pick + i) == JVMTI_ERROR_NONE)
			continue;
		for (jint j = 0; j < m; j++) {
			jvmtiError e = (*jvmti)->RetransformClasses(jvmti, 1, pick + i + j);
			if (e != JVMTI_ERROR_NONE) {
				char name[1024];
				failed++;
				jinst_agent_log("%s left unchanged: RetransformClasses: %s",
				                class_name(jvmti, pick[i + j], name, sizeof name) ? name : "(class)",
				                jinst_agent_jvmti_error(e));
			}
		}
	}
	return failed;
}

static bool select_instrumented(const char *name);

static void retransform_loaded(JNIEnv *jni, bool (*select)(const char *name), const char *why)
{
	jvmtiEnv *jvmti = jinst_the_core.jvmti;
	jint n = 0;
	jclass *all = NULL;
	if (jinst_agent_jvmti_failed((*jvmti)->GetLoadedClasses(jvmti, &n, &all), "GetLoadedClasses"))
		return;
	/* One local reference per class: declare them (-Xcheck:jni counts). */
	if ((*jni)->EnsureLocalCapacity(jni, n + 64) != 0)
		jinst_agent_java_failed(jni, "EnsureLocalCapacity");
	jclass *pick = malloc(((size_t)n + 1) * sizeof *pick);
	long unmodifiable;
	size_t count = pick_loaded(jni, select, all, n, pick, &unmodifiable);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)all);
	if (select != select_instrumented)
		jinst_identity_learn(jni, pick, count, originals_has);
	size_t failed = retransform(pick, count);
	for (size_t i = 0; i < count; i++)
		(*jni)->DeleteLocalRef(jni, pick[i]);
	free(pick);
	jinst_agent_log("%s: %zu loaded classes retransformed, %zu failed, %ld not modifiable", why, count - failed,
	                failed, unmodifiable);
}

static bool select_wanted(const char *name)
{
	return !runtime_class(name) && ld.ins && jinst_instrument_wants(ld.ins, name);
}

static bool select_instrumented(const char *name)
{
	return originals_has(name);
}

/* ClassLoader.getPlatformClassLoader(), once; none before JDK 9. */
static void find_platform_loader(JNIEnv *jni)
{
	if (ld.platform)
		return;
	jclass cl = (*jni)->FindClass(jni, "java/lang/ClassLoader");
	jmethodID m = cl ? (*jni)->GetStaticMethodID(jni, cl, "getPlatformClassLoader", "()Ljava/lang/ClassLoader;") : NULL;
	jobject p = m ? (*jni)->CallStaticObjectMethod(jni, cl, m) : NULL;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (p) {
		ld.platform = (*jni)->NewGlobalRef(jni, p);
		(*jni)->DeleteLocalRef(jni, p);
	}
	if (cl)
		(*jni)->DeleteLocalRef(jni, cl);
}

void jinst_load_go_live(JNIEnv *jni)
{
	find_platform_loader(jni);
	atomic_store(&ld.live, 1);
	retransform_loaded(jni, select_wanted, "start");
}

void jinst_load_restore(JNIEnv *jni)
{
	atomic_store(&ld.stopping, 1);
	retransform_loaded(jni, select_instrumented, "stop");
	atomic_store(&ld.stopping, 0);
	atomic_store(&ld.live, 0);
	jinst_agent_log("stop: %ld classes given back their original bytes", atomic_load(&ld.restored));
}

void jinst_load_end(void)
{
	atomic_store(&ld.live, 0);
}

/* Whether the session traces: the instrumenter's method table is trace's
 * (the ids its hooks count), empty under the other modules alone. */
static bool tracing(void)
{
	const jinst_agent_options *o = &jinst_the_core.opts;
	for (size_t i = 0; o->modules && o->modules[i]; i++)
		if (o->modules[i] == &jinst_trace_module)
			return jinst_agent_module_on(o, i);
	return false;
}

void jinst_load_summary(void)
{
	char methods[64] = "";
	if (tracing())
		snprintf(methods, sizeof methods, ", %u methods", ld.ins ? jinst_instrument_method_count(ld.ins) : 0u);
	jinst_agent_log("%ld classes instrumented, %ld left unchanged on error, %ld methods left alone, %ld classes "
	                "left alone by a pass, %ld not modifiable, %ld loaded from inside the hook%s",
	                atomic_load(&ld.instrumented), atomic_load(&ld.failed), atomic_load(&ld.methods_left_alone),
	                atomic_load(&ld.declined), atomic_load(&ld.unmodifiable), atomic_load(&ld.reentrant), methods);
}
