/*
 * The allocation module: the allocation pass (instrument/alloc.c) hooks
 * every allocation instruction of the selected classes; the runtime
 * (runtime-java/jinst/rt/Alloc.java) counts objects and bytes per site and
 * thread; this file engages it, registers its natives (GetObjectSize,
 * SetTag), reads what the runtime recorded on `dump`, `stop` and at VM
 * death, and hands it to the writers (alloc_output.c).
 *
 * Sites come from the pass's table, which lives as long as the
 * instrumenter the pass was added to: a restart (attach after stop) makes
 * a new instrumenter and a new table, and the runtime's engage starts the
 * counts over.
 *
 * depth=N: the runtime keeps each thread's allocations by site and by the
 * top N method ids of its trace=times shadow stack (AllocTraces); a row is
 * then a (site, stack). The shadow stack holds the timed methods only: a
 * leaf that allocates (counted, not timed, under leaves=count) is not on
 * it, nor is a <clinit> that is one. Each row's stack is then topped with
 * the allocating method (found by name among the instrumenter's ids), so
 * the TRACE records and the TSV's stack column begin where the folded
 * stacks end, at the site's method; a row has N + 1 frames.
 *
 * alloc=live: the runtime tags every object with its site + 1 (SetTag);
 * each write first runs a full collection (ForceGarbageCollection) and
 * then walks the tagged objects (IterateThroughHeap, untagged filtered
 * out), adding each one's size to its site's live figures: exact at that
 * moment, at the price of a tag per object (the VM's tag map) and a
 * collection per write. Not through ObjectFree: an event per dead object,
 * posted after the collection by the VM's service thread, is more work
 * for the same figures, and a write would have to wait for the events of
 * its own collection.
 *
 * Every write is the whole recording so far, written beside the output and
 * renamed over it. Sites come from the pass's table, which lives as long as
 * the instrumenter the pass was added to: a restart (attach after stop)
 * makes a new instrumenter and a new table, and the runtime's engage
 * starts the counts over.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "alloc_output.h"
#include "jinst/alloc.h"

static struct {
	jclass alloc;              /* jinst/rt/Alloc, global reference */
	jmethodID engage, disengage, snapshot, snapshot_traces, thread_end;
	jinst_alloc_sites *sites;  /* the current instrumenter's pass's */
} rt;

/* ---- the pass ---------------------------------------------------------- */

static int alloc_add_passes(const void *c, jinst_instrument *ins, jinst_diag *diag)
{
	(void)c;
	jinst_pass pass;
	jinst_alloc_sites *sites;
	int rc = jinst_alloc_pass(&pass, &sites);
	if (rc)
		return rc;
	if ((rc = jinst_instrument_add_pass(ins, &pass, diag)))
		return rc;
	rt.sites = sites;
	return 0;

}

/* ---- the runtime ------------------------------------------------------- */

/* Alloc.sizeOf0: JVMTI GetObjectSize (JVMTI 11.3.3 "Get Object Size"). */
static jlong JNICALL native_size_of(JNIEnv *jni, jclass cls, jobject o)
{
	(void)jni, (void)cls;
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	jlong size = 0;
	if (!o || !jvmti || (*jvmti)->GetObjectSize(jvmti, o, &size) != JVMTI_ERROR_NONE)
		return 0;
	return size;
}

/* Alloc.tag0: JVMTI SetTag (alloc=live). */
static void JNICALL native_tag(JNIEnv *jni, jclass cls, jobject o, jlong tag)
{
	(void)jni, (void)cls;
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	if (o && jvmti)
		(*jvmti)->SetTag(jvmti, o, tag);
}

/* Alloc.declaresClone0: whether k declares an instance method clone()
 * (Object.clone's override, or a covariant one and its bridge), from
 * JVMTI GetClassMethods (JVMTI 11.4.14), which resolves no type, unlike
 * reflection. A receiver's class and its superclasses are prepared. */
static jboolean JNICALL native_declares_clone(JNIEnv *jni, jclass cls, jclass k)
{
	(void)jni, (void)cls;
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	jint n = 0;
	jmethodID *ms = NULL;
	jboolean found = JNI_FALSE;
	if (!k || !jvmti || (*jvmti)->GetClassMethods(jvmti, k, &n, &ms) != JVMTI_ERROR_NONE)
		return JNI_FALSE;
	for (jint i = 0; i < n && !found; i++) {
		char *name = NULL, *sig = NULL;
		jint mods = 0;
		if ((*jvmti)->GetMethodName(jvmti, ms[i], &name, &sig, NULL) == JVMTI_ERROR_NONE &&
		    (*jvmti)->GetMethodModifiers(jvmti, ms[i], &mods) == JVMTI_ERROR_NONE)
			found = !strcmp(name, "clone") && !strncmp(sig, "()", 2) && !(mods & 0x0008 /* ACC_STATIC */);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)ms);
	return found;
}

/* Alloc.site0: the id of site with type k (JVMTI GetClassSignature: "[I"
 * as the pass writes an array's type, "Lp/K;" as p/K), handed out by the
 * pass's table on first sight, so that a site's objects of another class
 * than its type (a clone, a reflective call's, multianewarray's inner
 * arrays) are a row of their own; site itself when it cannot tell. */
static jint JNICALL native_site(JNIEnv *jni, jclass cls, jint site, jclass k)
{
	(void)jni, (void)cls;
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	jinst_alloc_sites *sites = rt.sites;
	jinst_alloc_site s;
	char *sig = NULL;
	uint32_t id;
	if (!k || !jvmti || !sites || site < 0 || jinst_alloc_sites_get(&s, sites, (uint32_t)site) ||
	    (*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE || !sig)
		return site;
	size_t n = strlen(sig);
	if (sig[0] == 'L' && n >= 2 && sig[n - 1] == ';') {
		memmove(sig, sig + 1, n - 2);
		sig[n - 2] = '\0';
	}
	s.type = sig;
	jint r = jinst_alloc_sites_assign(&id, sites, &s) == 0 && id <= INT32_MAX ? (jint)id : site;
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	return r;
}

/* ---- live objects (alloc=live) ----------------------------------------- */

typedef struct live_count {
	int64_t *objects, *bytes; /* by site */
	uint32_t sites;
	bool clear;               /* untag instead (a new session) */
} live_count;

static jint JNICALL live_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user)
{
	(void)class_tag, (void)length;
	live_count *lc = user;
	if (lc->clear) {
		*tag_ptr = 0;
	} else if (*tag_ptr > 0 && (uint64_t)*tag_ptr <= lc->sites) {
		lc->objects[*tag_ptr - 1]++;
		lc->bytes[*tag_ptr - 1] += size;
	}
	return JVMTI_VISIT_OBJECTS;
}

/* Walks the tagged objects: counts them by site, or untags them. */
static bool live_walk(live_count *lc)
{
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	jvmtiHeapCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.heap_iteration_callback = live_object;
	if (!lc->clear && jinst_agent_jvmti_failed((*jvmti)->ForceGarbageCollection(jvmti), "ForceGarbageCollection"))
		return false;
	return !jinst_agent_jvmti_failed(
	    (*jvmti)->IterateThroughHeap(jvmti, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, lc), "IterateThroughHeap");
}

static bool find_runtime(JNIEnv *jni)
{
	if (rt.alloc)
		return true;
	jclass k = (*jni)->FindClass(jni, "jinst/rt/Alloc");
	if (jinst_agent_java_failed(jni, "jinst/rt/Alloc") || !k)
		return false;
	struct { jmethodID *id; const char *name, *sig; } ms[] = {
		{&rt.engage, "engage", "(ZZIJ)Z"}, {&rt.disengage, "disengage", "()V"}, {&rt.snapshot, "snapshot", "()[J"},
		{&rt.snapshot_traces, "snapshotTraces", "()[J"}};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		*ms[i].id = (*jni)->GetStaticMethodID(jni, k, ms[i].name, ms[i].sig);
		if (jinst_agent_java_failed(jni, ms[i].name) || !*ms[i].id)
			return false;
	}
	JNINativeMethod natives[] = {
		{(char *)"sizeOf0", (char *)"(Ljava/lang/Object;)J", (void *)native_size_of},
		{(char *)"tag0", (char *)"(Ljava/lang/Object;J)V", (void *)native_tag},
		{(char *)"declaresClone0", (char *)"(Ljava/lang/Class;)Z", (void *)native_declares_clone},
		{(char *)"site0", (char *)"(ILjava/lang/Class;)I", (void *)native_site}};
	if ((*jni)->RegisterNatives(jni, k, natives, (jint)(sizeof natives / sizeof natives[0])) != 0 ||
	    jinst_agent_java_failed(jni, "RegisterNatives"))
		return false;
	jclass hooks = jinst_agent_hooks_class();
	rt.thread_end = hooks ? (*jni)->GetStaticMethodID(jni, hooks, "threadEnd", "(Ljava/lang/Thread;)V") : NULL;
	if (jinst_agent_java_failed(jni, "threadEnd") || !rt.thread_end)
		return false;
	rt.alloc = (*jni)->NewGlobalRef(jni, k);
	(*jni)->DeleteLocalRef(jni, k);
	return rt.alloc != NULL;
}

static bool alloc_start(const void *c, JNIEnv *jni)
{
	const jinst_alloc_config *k = c;
	if (!find_runtime(jni))
		return false;
	/* Tags of an earlier session name its sites, not this one's. */
	live_count clear = {.clear = true};
	if (k->live && !live_walk(&clear))
		return false;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	jboolean stacks = (*jni)->CallStaticBooleanMethod(jni, rt.alloc, rt.engage, (jboolean)k->check,
	                                                  (jboolean)k->live, (jint)k->depth,
	                                                  (jlong)t.tv_sec * 1000000000 + t.tv_nsec);
	if (jinst_agent_java_failed(jni, "Alloc.engage"))
		return false;
	for (size_t i = 0; jinst_alloc_exts[i]; i++)
		jinst_agent_output_begin(jinst_alloc_exts[i]);
	if (k->depth && !stacks)
		jinst_agent_log("alloc depth=%d: no stacks without trace=times; each site is one row, its method one frame",
		                k->depth);
	return true;
}

static void alloc_thread_end(const void *c, JNIEnv *jni, jthread thread)
{
	(void)c;
	jclass hooks = jinst_agent_hooks_class();
	if (hooks && rt.thread_end) {
		(*jni)->CallStaticVoidMethod(jni, hooks, rt.thread_end, thread);
		jinst_agent_java_failed(jni, "Hooks.threadEnd");
	}
}

/* ---- reading what was recorded ------------------------------------------ */

/* alloc=live: each row's live figures (a collection, then the tagged
 * objects counted); false when the VM refused. */
static bool read_live(jinst_alloc_report *r)
{
	uint32_t sites = jinst_alloc_sites_count(rt.sites);
	live_count lc = {calloc((size_t)sites + 1, sizeof(int64_t)), calloc((size_t)sites + 1, sizeof(int64_t)), sites,
	                 false};
	bool ok = lc.objects && lc.bytes && live_walk(&lc);
	for (size_t i = 0; ok && i < r->count; i++) {
		jinst_alloc_row *w = &r->rows[i];
		w->live_objects = lc.objects[w->site];
		w->live_bytes = lc.bytes[w->site];
		r->live_objects += w->live_objects;
		r->live_bytes += w->live_bytes;
	}
	free(lc.objects);
	free(lc.bytes);
	return ok;
}

/* A snapshot of the runtime's (a long[]), copied; NULL on failure. */
static int64_t *read_longs(JNIEnv *jni, jmethodID m, const char *what, size_t *len)
{
	jlongArray a = (jlongArray)(*jni)->CallStaticObjectMethod(jni, rt.alloc, m);
	if (jinst_agent_java_failed(jni, what) || !a)
		return NULL;
	*len = (size_t)(*jni)->GetArrayLength(jni, a);
	int64_t *v = malloc((*len + 1) * sizeof *v);
	if (v)
		(*jni)->GetLongArrayRegion(jni, a, 0, (jsize)*len, (jlong *)v);
	(*jni)->DeleteLocalRef(jni, a);
	if (v && jinst_agent_java_failed(jni, what)) {
		free(v);
		v = NULL;
	}
	return v;
}

/* The sites with objects as rows; check: alloc=check's (measured,
 * differed). v: Alloc.snapshot's [objects, bytes by site..., checked,
 * differed]. */
static void rows_by_site(jinst_alloc_report *r, const int64_t *v, size_t len, int64_t check[2])
{
	uint32_t sites = jinst_alloc_sites_count(rt.sites);
	for (size_t i = 0; i + 1 < len - 2; i += 2)
		if (v[i] > 0 && i / 2 < sites) {
			r->rows[r->count++] = (jinst_alloc_row){(uint32_t)(i / 2), v[i], v[i + 1], -1, -1, NULL};
			r->bytes += v[i + 1];
			r->objects += v[i];
		}
	check[0] = v[len - 2];
	check[1] = v[len - 1];
}

/* The instrumenter's method ids by (class, method, descriptor), for the
 * sites' methods: an open-addressing table of ids (UINT32_MAX free), made
 * once per dump and only when a row needs it. */
typedef struct method_ids {
	const jinst_instrument *ins;
	uint32_t *slot;
	size_t mask;
	bool made;
} method_ids;

static uint64_t name_hash(const char *cls, const char *name, const char *desc)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	const char *parts[] = {cls, name, desc};
	for (int i = 0; i < 3; i++) {
		for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
			h = (h ^ *p) * 1099511628211u;
		h = (h ^ 0xff) * 1099511628211u; /* (no name has the byte 0xff in modified UTF-8) */
	}
	return h;
}

static void method_ids_make(method_ids *t)
{
	t->made = true;
	t->ins = jinst_agent_instrumenter();
	uint32_t n = t->ins ? jinst_instrument_method_count(t->ins) : 0;
	size_t size = 16;
	while (size < 2 * (size_t)n)
		size *= 2;
	if (!n || !(t->slot = malloc(size * sizeof *t->slot)))
		return;
	memset(t->slot, 0xff, size * sizeof *t->slot);
	t->mask = size - 1;
	for (uint32_t id = 0; id < n; id++) {
		jinst_method_info info;
		if (jinst_instrument_method_info(t->ins, id, &info) < 0)
			continue;
		size_t i = (size_t)name_hash(info.class_name, info.name, info.descriptor) & t->mask;
		while (t->slot[i] != UINT32_MAX)
			i = (i + 1) & t->mask;
		t->slot[i] = id;
	}
}

/* The id of a method named so (the first one, when loaders gave a name
 * more), or -1. */
static int64_t method_id(method_ids *t, const char *cls, const char *name, const char *desc)
{
	if (!t->made)
		method_ids_make(t);
	if (!t->slot)
		return -1;
	for (size_t i = (size_t)name_hash(cls, name, desc) & t->mask; t->slot[i] != UINT32_MAX; i = (i + 1) & t->mask) {
		jinst_method_info info;
		if (jinst_instrument_method_info(t->ins, t->slot[i], &info) == 0 && !strcmp(info.class_name, cls) &&
		    !strcmp(info.name, name) && !strcmp(info.descriptor, desc))
			return t->slot[i];
	}
	return -1;
}

/* depth=N: a row per (site, stack), from Alloc.snapshotTraces' [depth,
 * count, (site, frames, objects, bytes)...]: its N + 1 frames into
 * *frames (the caller frees them), the site's method on top when the
 * shadow stack does not have it there, else the N frames and -1. */
static bool rows_by_trace(jinst_alloc_report *r, const int64_t *v, size_t len, int64_t **frames)
{
	int depth = r->depth;
	if (len < 2 || v[0] != depth || v[1] < 0 || (uint64_t)v[1] > (len - 2) / ((size_t)depth + 3))
		return false;
	int64_t *f = *frames = malloc(((size_t)v[1] + 1) * ((size_t)depth + 1) * sizeof *f);
	if (!f)
		return false;
	uint32_t sites = jinst_alloc_sites_count(rt.sites);
	method_ids ids = {NULL, NULL, 0, false};
	for (int64_t e = 0; e < v[1]; e++) {
		const int64_t *k = v + 2 + e * (depth + 3);
		jinst_alloc_site s;
		if (k[0] < 0 || k[0] >= sites || k[depth + 1] <= 0 || jinst_alloc_sites_get(&s, rt.sites, (uint32_t)k[0]))
			continue;
		int64_t top =
		    jinst_alloc_is_site_method(k[1], &s) ? -1 : method_id(&ids, s.class_name, s.method, s.descriptor);
		int64_t *w = f + r->count * ((size_t)depth + 1);
		if (top >= 0) {
			w[0] = top;
			memcpy(w + 1, k + 1, (size_t)depth * sizeof *w);
		} else {
			memcpy(w, k + 1, (size_t)depth * sizeof *w);
			w[depth] = -1;
		}
		r->rows[r->count++] = (jinst_alloc_row){(uint32_t)k[0], k[depth + 1], k[depth + 2], -1, -1, w};
		r->objects += k[depth + 1];
		r->bytes += k[depth + 2];
	}
	free(ids.slot);
	r->depth = depth + 1;
	return true;
}

static void alloc_dump(const void *c, JNIEnv *jni)
{
	const jinst_alloc_config *k = c;
	size_t len = 0, tlen = 0;
	int64_t check[2] = {0, 0};
	int64_t *v = rt.alloc ? read_longs(jni, rt.snapshot, "Alloc.snapshot", &len) : NULL;
	int64_t *tr = v && k->depth ? read_longs(jni, rt.snapshot_traces, "Alloc.snapshotTraces", &tlen) : NULL;
	int64_t *frames = NULL;
	jinst_alloc_report r = {rt.sites, NULL, 0, 0, 0, 0, 0, k->live, tr ? k->depth : 0};
	r.rows = v && len >= 2 ? calloc(len / 2 + tlen + 1, sizeof *r.rows) : NULL;
	if (r.rows) {
		rows_by_site(&r, v, len, check);
		if (tr && (r.count = 0, r.bytes = r.objects = 0, !rows_by_trace(&r, tr, tlen, &frames)))
			jinst_agent_log("alloc depth=%d: the runtime's stacks are malformed; none written", k->depth);
		if (r.live && !read_live(&r)) {
			jinst_agent_log("alloc=live: the live objects could not be counted; this write has none");
			r.live = false;
		}
		jinst_alloc_write(&r);
		if (k->check)
			jinst_agent_log("alloc=check: %lld objects measured by GetObjectSize, %lld differed",
			                (long long)check[0], (long long)check[1]);
	}
	free(r.rows);
	free(frames);
	free(tr);
	free(v);
}

static void alloc_stop(const void *c, JNIEnv *jni)
{
	alloc_dump(c, jni);
	if (rt.alloc) {
		(*jni)->CallStaticVoidMethod(jni, rt.alloc, rt.disengage);
		jinst_agent_java_failed(jni, "Alloc.disengage");
	}
	/* The table goes with its instrumenter at the next session's start. */
	rt.sites = NULL;
}

/* append=y: a file that cannot be opened to write is refused at the load. */
static int alloc_check_existing(const void *c, const char *prefix, char *err, size_t esize)
{
	(void)c;
	int r = 0;
	for (size_t i = 0; r == 0 && jinst_alloc_exts[i]; i++)
		r = jinst_agent_output_check_existing(prefix, jinst_alloc_exts[i], err, esize);
	return r;
}

const jinst_agent_module jinst_alloc_module = {
	JINST_ALLOC_MODULE_OPTIONS,
	.add_passes = alloc_add_passes,
	.start = alloc_start,
	.dump = alloc_dump,
	.stop = alloc_stop,
	.thread_end = alloc_thread_end,
	.check_existing = alloc_check_existing,
	.restartable = true,
	/* alloc=live's tags and heap walk; asked for whenever alloc is on (a
	 * module's capabilities do not depend on its options). */
	.capabilities = {.can_tag_objects = 1},
};
