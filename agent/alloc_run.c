/*
 * The allocation module: the allocation pass (instrument/alloc.c) hooks
 * every allocation instruction of the selected classes; the runtime
 * (runtime-java/jinst/rt/Alloc.java) counts objects and bytes per site and
 * thread; this file engages it, registers its one native (GetObjectSize)
 * and writes the outputs on `dump`, `stop` and at VM death:
 *
 *   OUT.alloc.txt     the ranked SITES table, in the style of HPROF's
 *                     heap=sites (rank, self and accumulated share of the
 *                     bytes, bytes, objects, site, type)
 *   OUT.alloc.tsv     the same rows with named columns, for scripts
 *   OUT.alloc.folded  folded stacks weighted by bytes: the site's method,
 *                     one frame (no stacks are recorded)
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
#include "jinst/alloc.h"

static struct {
	jclass alloc;              /* jinst/rt/Alloc, global reference */
	jmethodID engage, disengage, snapshot, thread_end;
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

jinst_alloc_sites *jinst_agent_alloc_sites(void)
{
	return rt.sites;
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
		{&rt.engage, "engage", "(ZZJ)V"}, {&rt.disengage, "disengage", "()V"}, {&rt.snapshot, "snapshot", "()[J"}};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		*ms[i].id = (*jni)->GetStaticMethodID(jni, k, ms[i].name, ms[i].sig);
		if (jinst_agent_java_failed(jni, ms[i].name) || !*ms[i].id)
			return false;
	}
	JNINativeMethod natives[] = {{(char *)"sizeOf0", (char *)"(Ljava/lang/Object;)J", (void *)native_size_of},
	                             {(char *)"tag0", (char *)"(Ljava/lang/Object;J)V", (void *)native_tag}};
	if ((*jni)->RegisterNatives(jni, k, natives, 2) != 0 || jinst_agent_java_failed(jni, "RegisterNatives"))
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
	(*jni)->CallStaticVoidMethod(jni, rt.alloc, rt.engage, (jboolean)k->check, (jboolean)k->live,
	                             (jlong)t.tv_sec * 1000000000 + t.tv_nsec);
	return !jinst_agent_java_failed(jni, "Alloc.engage");
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

/* ---- the outputs ------------------------------------------------------- */

typedef struct row {
	uint32_t site;
	int64_t objects, bytes;
	int64_t live_objects, live_bytes; /* -1: not counted (alloc=live is off) */
} row;

static int by_bytes(const void *a, const void *b)
{
	const row *x = a, *y = b;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->objects != y->objects)
		return x->objects < y->objects ? 1 : -1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* A class's internal name or a field descriptor, as Java writes it:
 * "java.lang.String", "int[][]". */
static void java_name(const char *t, char *out, size_t size)
{
	static const char prims[] = "ZCFDBSIJ";
	static const char *const names[] = {"boolean", "char", "float", "double", "byte", "short", "int", "long"};
	size_t dims = 0, k = 0;
	while (t[dims] == '[')
		dims++;
	const char *base = t + dims;
	char tmp[512];
	if (dims && *base != 'L' && strchr(prims, *base) && *base)
		snprintf(tmp, sizeof tmp, "%s", names[strchr(prims, *base) - prims]);
	else
		snprintf(tmp, sizeof tmp, "%.*s", (int)(dims ? strcspn(base + 1, ";") : strlen(base)), dims ? base + 1 : base);
	for (char *p = tmp; *p; p++)
		if (*p == '/')
			*p = '.';
	k = (size_t)snprintf(out, size, "%s", tmp);
	for (size_t i = 0; i < dims && k + 2 < size; i++, k += 2)
		memcpy(out + k, "[]", 3);
}

/* "pkg.Cls.method(File.java:12)", HPROF's and the stack trace's form. */
static void site_name(const jinst_alloc_site *s, char *out, size_t size)
{
	char cls[512];
	java_name(s->class_name, cls, sizeof cls);
	if (s->line)
		snprintf(out, size, "%s.%s(%s:%u)", cls, s->method, s->source ? s->source : "Unknown Source", s->line);
	else
		snprintf(out, size, "%s.%s(%s)", cls, s->method, s->source ? s->source : "Unknown Source");
}

/* What the rows add up to; live: alloc=live's columns are there. */
typedef struct totals {
	int64_t bytes, objects, live_bytes, live_objects;
	bool live;
} totals;

static void write_table(FILE *f, const row *rows, size_t n, const totals *t)
{
	char date[64], site[1200], type[512];
	time_t now = time(NULL);
	struct tm tm;
	strftime(date, sizeof date, "%a %b %d %H:%M:%S %Y", localtime_r(&now, &tm));
	fprintf(f, "SITES BEGIN (ordered by %s bytes) %s\n", t->live ? "live" : "allocated", date);
	fprintf(f, "total %lld bytes, %lld objects, %zu sites", (long long)t->bytes, (long long)t->objects, n);
	if (t->live)
		fprintf(f, "; live %lld bytes, %lld objects", (long long)t->live_bytes, (long long)t->live_objects);
	fprintf(f, "\n          percent%s          allocated\n", t->live ? "            live           " : "");
	fprintf(f, " rank   self  accum%s          bytes    objects  site  type\n",
	        t->live ? "          bytes    objects" : "");
	double accum = 0, total = (double)(t->live ? t->live_bytes : t->bytes);
	for (size_t i = 0; i < n; i++) {
		jinst_alloc_site s;
		if (jinst_alloc_sites_get(&s, rt.sites, rows[i].site))
			continue;
		double self = total > 0 ? 100.0 * (double)(t->live ? rows[i].live_bytes : rows[i].bytes) / total : 0;
		accum += self;
		site_name(&s, site, sizeof site);
		java_name(s.type, type, sizeof type);
		fprintf(f, "%5zu %5.2f%% %5.2f%%", i + 1, self, accum);
		if (t->live)
			fprintf(f, " %14lld %10lld", (long long)rows[i].live_bytes, (long long)rows[i].live_objects);
		fprintf(f, " %14lld %10lld  %s  %s\n", (long long)rows[i].bytes, (long long)rows[i].objects, site, type);
	}
	fprintf(f, "SITES END\n");
}

static void write_tsv(FILE *f, const row *rows, size_t n, const totals *t)
{
	static const char *const kinds[] = {"new", "array", "multiarray", "native"};
	char type[512], cls[512];
	fprintf(f, "rank\tbytes\tobjects\tclass\tmethod\tdescriptor\tsource\tline\ttype\tinstruction%s\n",
	        t->live ? "\tlive_bytes\tlive_objects" : "");
	for (size_t i = 0; i < n; i++) {
		jinst_alloc_site s;
		if (jinst_alloc_sites_get(&s, rt.sites, rows[i].site))
			continue;
		java_name(s.class_name, cls, sizeof cls);
		java_name(s.type, type, sizeof type);
		fprintf(f, "%zu\t%lld\t%lld\t%s\t%s\t%s\t%s\t%u\t%s\t%s", i + 1, (long long)rows[i].bytes,
		        (long long)rows[i].objects, cls, s.method, s.descriptor, s.source ? s.source : "", s.line, type,
		        kinds[s.kind < 4 ? s.kind : 0]);
		if (t->live)
			fprintf(f, "\t%lld\t%lld", (long long)rows[i].live_bytes, (long long)rows[i].live_objects);
		fputc('\n', f);
	}
}

/* A site with its names, for grouping by method. */
typedef struct named {
	jinst_alloc_site s;
	int64_t bytes;
} named;

static int by_method(const void *a, const void *b)
{
	const named *x = a, *y = b;
	int r = strcmp(x->s.class_name, y->s.class_name);
	if (!r)
		r = strcmp(x->s.method, y->s.method);
	return r ? r : strcmp(x->s.descriptor, y->s.descriptor);
}

/* One line per method, its sites' bytes added up (the folded form keeps
 * one line per stack). */
static void write_folded(FILE *f, const row *rows, size_t n)
{
	char cls[512];
	named *v = calloc(n + 1, sizeof *v);
	size_t m = 0;
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		if (!jinst_alloc_sites_get(&v[m].s, rt.sites, rows[i].site))
			v[m++].bytes = rows[i].bytes;
	qsort(v, m, sizeof *v, by_method);
	fprintf(f, "# jinst folded stacks: allocated bytes per method (one frame: no stacks recorded)\n");
	for (size_t i = 0; i < m;) {
		int64_t bytes = 0;
		size_t j = i;
		for (; j < m && !by_method(&v[i], &v[j]); j++)
			bytes += v[j].bytes;
		java_name(v[i].s.class_name, cls, sizeof cls);
		fprintf(f, "%s.%s %lld\n", cls, v[i].s.method, (long long)bytes);
		i = j;
	}
	free(v);
}

/* Writes path through a file beside it, renamed over it. */
static void write_output(const char *ext, void (*fn)(FILE *, const row *, size_t, const void *), const row *rows,
                         size_t n, const void *arg)
{
	char path[1100], tmp[1200];
	jinst_agent_output_path(ext, path, sizeof path);
	snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, jinst_agent_pid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		jinst_agent_log("alloc: cannot write %s", tmp);
		return;
	}
	fn(f, rows, n, arg);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		jinst_agent_log("alloc: cannot write %s", path);
		remove(tmp);
	}
}

static void table_fn(FILE *f, const row *rows, size_t n, const void *arg)
{
	write_table(f, rows, n, arg);
}

static void tsv_fn(FILE *f, const row *rows, size_t n, const void *arg)
{
	write_tsv(f, rows, n, arg);
}

static void folded_fn(FILE *f, const row *rows, size_t n, const void *arg)
{
	(void)arg;
	write_folded(f, rows, n);
}

/* alloc=live: each row's live figures (a collection, then the tagged
 * objects counted); false when the VM refused. */
static bool read_live(row *rows, size_t n, totals *t)
{
	uint32_t sites = jinst_alloc_sites_count(rt.sites);
	live_count lc = {calloc((size_t)sites + 1, sizeof(int64_t)), calloc((size_t)sites + 1, sizeof(int64_t)), sites,
	                 false};
	bool ok = lc.objects && lc.bytes && live_walk(&lc);
	for (size_t i = 0; ok && i < n; i++) {
		rows[i].live_objects = lc.objects[rows[i].site];
		rows[i].live_bytes = lc.bytes[rows[i].site];
		t->live_objects += rows[i].live_objects;
		t->live_bytes += rows[i].live_bytes;
	}
	free(lc.objects);
	free(lc.bytes);
	return ok;
}

/* The runtime's counts, as rows of the sites with objects; *check:
 * alloc=check's (measured, differed). */
static row *read_rows(JNIEnv *jni, size_t *count, totals *t, int64_t check[2])
{
	jlongArray a = (jlongArray)(*jni)->CallStaticObjectMethod(jni, rt.alloc, rt.snapshot);
	if (jinst_agent_java_failed(jni, "Alloc.snapshot") || !a)
		return NULL;
	jsize len = (*jni)->GetArrayLength(jni, a);
	jlong *v = len >= 2 ? (*jni)->GetLongArrayElements(jni, a, NULL) : NULL;
	row *rows = v ? calloc((size_t)len / 2 + 1, sizeof *rows) : NULL;
	size_t n = 0;
	uint32_t sites = jinst_alloc_sites_count(rt.sites);
	for (jsize i = 0; rows && i + 1 < len - 2; i += 2)
		if (v[i] > 0 && (uint32_t)(i / 2) < sites) {
			rows[n++] = (row){(uint32_t)(i / 2), v[i], v[i + 1], -1, -1};
			t->bytes += v[i + 1];
			t->objects += v[i];
		}
	if (v) {
		check[0] = v[len - 2];
		check[1] = v[len - 1];
		(*jni)->ReleaseLongArrayElements(jni, a, v, JNI_ABORT);
	}
	(*jni)->DeleteLocalRef(jni, a);
	*count = n;
	return rows;
}

static void alloc_dump(const void *c, JNIEnv *jni)
{
	const jinst_alloc_config *k = c;
	size_t n = 0;
	int64_t check[2] = {0, 0};
	totals t = {0, 0, 0, 0, k->live};
	row *rows = rt.alloc ? read_rows(jni, &n, &t, check) : NULL;
	if (!rows)
		return;
	if (t.live && !read_live(rows, n, &t)) {
		jinst_agent_log("alloc=live: the live objects could not be counted; this write has none");
		t.live = false;
	}
	qsort(rows, n, sizeof *rows, by_bytes);
	write_output(".alloc.txt", table_fn, rows, n, &t);
	write_output(".alloc.tsv", tsv_fn, rows, n, &t);
	write_output(".alloc.folded", folded_fn, rows, n, NULL);
	if (k->check)
		jinst_agent_log("alloc=check: %lld objects measured by GetObjectSize, %lld differed", (long long)check[0],
		                (long long)check[1]);
	free(rows);
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

const jinst_agent_module jinst_alloc_module = {
	JINST_ALLOC_MODULE_OPTIONS,
	.add_passes = alloc_add_passes,
	.start = alloc_start,
	.dump = alloc_dump,
	.stop = alloc_stop,
	.thread_end = alloc_thread_end,
	.restartable = true,
	/* alloc=live's tags and heap walk; asked for whenever alloc is on (a
	 * module's capabilities do not depend on its options). */
	.capabilities = {.can_tag_objects = 1},
};
