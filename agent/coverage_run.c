/*
 * The coverage module: probes in every selected class (the coverage pass,
 * instrument/coverage.c, at JaCoCo's sites), their arrays in the runtime
 * (runtime-java/jinst/rt/Coverage.java), and the data file OUT.cov
 * (report/'s covdata, docs/coverage-format.md) written on `dump`, `stop`
 * and at VM death.
 *
 * A session is what is recorded from start (the load or the attach) or
 * from the last `reset`, to the dump. Each write takes a snapshot of every
 * class's probes (the runtime copies them under its lock) and writes the
 * whole file anew, atomically: the session's classes (identity, name,
 * probe count from the instrumenter's table, by class id) with their data,
 * merged into the base. The base is empty with append=n; with append=y it
 * is the file as it was when the session started, or at the last reset,
 * so that repeated dumps of one session never count a hit twice; a file
 * there that cannot be read refuses the load (the core asks
 * check_existing), and is never replaced.
 *
 * Classes instrumented ahead of time that reach this runtime (the agent's
 * copy, in the bootstrap loader) ask for their arrays by identity and
 * name (Coverage.probesFor): their records come from the runtime's
 * snapshot by identity, beside the instrumenter's, in the same file. While
 * this module is off, the runtime writes those itself (Standalone).
 *
 * Booleans of classes that fit take a range of the flat array
 * (java.lang.$JinstProbes.P; docs/ARCHITECTURE.md, "The flat array"), which
 * this module reads and clears itself, by the ranges the instrumenter gave.
 *
 * `reset` clears the probes in place (methods running keep recording into
 * the same arrays) and starts the session's clock again. The module is
 * restartable: attaching after `stop` starts a new session (a new
 * instrumenter, new class ids, fresh arrays).
 *
 * This file is the module's life in the VM; its options (coverage.c) are
 * apart, so that the option parser links without JVMTI (jinst attach).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "coverage.h"
#include "jinst/covdata.h"

/* ---- the runtime ------------------------------------------------------- */

/* Coverage's modes (runtime-java/jinst/rt/Coverage.java: BOOLEANS, COUNTS). */
enum { RT_BOOLEANS = 1, RT_COUNTS = 2 };

static struct {
	jclass coverage;            /* global reference */
	jclass longs;               /* long[], global reference */
	jmethodID engage, disengage, snapshot, by_identity;
	int64_t start_ms;           /* the session's */
	jinst_covdata *base;        /* append=y: the file at the session's start or last reset */
	bool base_bad;              /* append=y: that file could not be read, and is left as it is */
	jbooleanArray flat;         /* java.lang.$JinstProbes.P, global reference, or NULL */
	uint32_t flat_len;          /* its length */
	uint32_t flat_next;         /* past the ranges of the sessions stopped */
} rt;

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static bool find_methods(JNIEnv *jni)
{
	if (rt.coverage)
		return true;
	jclass k = (*jni)->FindClass(jni, "jinst/rt/Coverage");
	if (jinst_agent_java_failed(jni, "jinst/rt/Coverage") || !k)
		return false;
	rt.coverage = (*jni)->NewGlobalRef(jni, k);
	(*jni)->DeleteLocalRef(jni, k);
	struct { jmethodID *id; const char *name, *sig; } ms[] = {
		{&rt.engage, "engage", "(I)V"}, {&rt.disengage, "disengage", "()V"},
		{&rt.snapshot, "snapshot", "(Z)[Ljava/lang/Object;"},
		{&rt.by_identity, "snapshotByIdentity", "(Z)[Ljava/lang/Object;"}};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		*ms[i].id = (*jni)->GetStaticMethodID(jni, rt.coverage, ms[i].name, ms[i].sig);
		if (jinst_agent_java_failed(jni, ms[i].name) || !*ms[i].id)
			return false;
	}
	jclass l = (*jni)->FindClass(jni, "[J");
	if (jinst_agent_java_failed(jni, "[J") || !l)
		return false;
	rt.longs = (*jni)->NewGlobalRef(jni, l);
	(*jni)->DeleteLocalRef(jni, l);
	return rt.longs != NULL;
}

/* ---- the data file ----------------------------------------------------- */

/* The file at path into *base, or NULL when there is none: 0, or negative
 * with the reason in msg. */
static int read_base(const char *path, jinst_covdata **base, char *msg, size_t size)
{
	struct stat st;
	jinst_diag diag;
	memset(&diag, 0, sizeof diag);
	*base = NULL;
	if (stat(path, &st) != 0)
		return 0;
	int r = jinst_covdata_read_file(base, path, &diag);
	if (r < 0)
		jinst_diag_format(&diag, msg, size);
	return r;
}

/* append=y, before the load goes on: the file of earlier sessions must be
 * one this module can merge into (jinst merge refuses the same files). */
static int coverage_check_existing(const void *c, const char *prefix, char *err, size_t esize)
{
	(void)c;
	char path[1100], msg[600];
	jinst_covdata *base = NULL;
	snprintf(path, sizeof path, "%s.cov", prefix);
	int r = read_base(path, &base, msg, sizeof msg);
	jinst_covdata_free(base);
	if (r < 0)
		return jinst_option_error(err, esize,
		                          "append=y: %s cannot be merged into: %s; its sessions would be lost. Move it "
		                          "away, give out= another path, or leave out append=y to replace it",
		                          path, msg);
	return 0;
}

/* The base of a session: the file as it stands (append=y), else empty.
 * A file that cannot be read now (checked at the load, changed since) is
 * not written over: rt.base_bad keeps the session's writes from it. */
static void take_base(void)
{
	jinst_covdata_free(rt.base);
	rt.base = NULL;
	rt.base_bad = false;
	char path[1100], msg[600];
	jinst_agent_output_path(".cov", path, sizeof path);
	if (jinst_agent_output_append() && read_base(path, &rt.base, msg, sizeof msg) < 0) {
		rt.base_bad = true;
		jinst_agent_log("append=y: %s cannot be read (%s); this session's coverage will not be written over it",
		                path, msg);
	}
}

/* One class's snapshot (a boolean[] or long[], or null; or its range of
 * the flat array's copy, bits) into the model. */
static int add_class(JNIEnv *jni, jinst_covdata *data, const jinst_probe_class_info *info, jobject arr,
                     const uint8_t *bits, bool counts, jinst_diag *diag)
{
	jinst_covdata_class rec = {info->identity, info->class_name, info->probe_count,
	                           counts ? JINST_COVDATA_COUNTS : JINST_COVDATA_BOOLEANS, NULL, NULL};
	size_t n = info->probe_count ? info->probe_count : 1;
	uint8_t *b = counts ? NULL : calloc(n, 1);
	uint64_t *l = counts ? calloc(n, sizeof(*l)) : NULL;
	if (!b && !l)
		return JINST_ENOMEM;
	jsize have = arr ? (*jni)->GetArrayLength(jni, arr) : 0;
	jsize take = have < (jsize)info->probe_count ? have : (jsize)info->probe_count;
	if (counts && take > 0)
		(*jni)->GetLongArrayRegion(jni, arr, 0, take, (jlong *)l);
	else if (take > 0)
		(*jni)->GetBooleanArrayRegion(jni, arr, 0, take, (jboolean *)b);
	if (bits && b)
		memcpy(b, bits, info->probe_count);
	rec.booleans = b;
	rec.counts = l;
	int r = jinst_covdata_add_class(data, &rec, diag);
	free(b);
	free(l);
	return r;
}

/* The snapshot (or NULL) of every class instrumented, into a model: the
 * runtime's arrays by class id, and the flat array's copy (or NULL) for the
 * classes that have a range of it. */
static int fill(JNIEnv *jni, const jinst_coverage_config *k, jobjectArray snap, const uint8_t *flat,
                jinst_covdata *data, jinst_diag *diag)
{
	const jinst_instrument *ins = jinst_agent_instrumenter();
	uint32_t classes = ins ? jinst_instrument_probe_class_count(ins) : 0;
	jsize got = snap ? (*jni)->GetArrayLength(jni, snap) : 0;
	int r = 0;
	for (uint32_t id = 0; id < classes && r == 0; id++) {
		jinst_probe_class_info info;
		if (jinst_instrument_probe_class_info(ins, id, &info))
			continue;
		jobject arr = (jsize)id < got ? (*jni)->GetObjectArrayElement(jni, snap, (jsize)id) : NULL;
		const uint8_t *bits = info.flat != JINST_NO_FLAT && flat ? flat + (info.flat - rt.flat_next) : NULL;
		r = add_class(jni, data, &info, arr, bits, k->counts, diag);
		if (arr)
			(*jni)->DeleteLocalRef(jni, arr);
	}
	return r;
}

/* One class of the snapshot by identity (i of ids, names, arrays). */
static int add_by_identity(JNIEnv *jni, jinst_covdata *data, jlong identity, jobjectArray names,
                           jobjectArray arrays, jsize i, jinst_diag *diag)
{
	jstring name = (*jni)->GetObjectArrayElement(jni, names, i);
	jobject arr = (*jni)->GetObjectArrayElement(jni, arrays, i);
	const char *s = name ? (*jni)->GetStringUTFChars(jni, name, NULL) : NULL;
	int r = 0;
	if (s && arr) {
		jinst_probe_class_info info = {(uint64_t)identity, s, (uint32_t)(*jni)->GetArrayLength(jni, arr),
		                               JINST_NO_FLAT};
		r = add_class(jni, data, &info, arr, NULL, (*jni)->IsInstanceOf(jni, arr, rt.longs), diag);
	}
	if (s)
		(*jni)->ReleaseStringUTFChars(jni, name, s);
	(*jni)->DeleteLocalRef(jni, name);
	(*jni)->DeleteLocalRef(jni, arr);
	return r;
}

/* The classes that asked by identity (code instrumented ahead of time),
 * into the model (NULL: none, for a reset alone); reset: their arrays
 * cleared after the copy. */
static int fill_by_identity(JNIEnv *jni, jinst_covdata *data, bool reset, jinst_diag *diag)
{
	jobjectArray snap = (*jni)->CallStaticObjectMethod(jni, rt.coverage, rt.by_identity, (jboolean)reset);
	if (jinst_agent_java_failed(jni, "Coverage.snapshotByIdentity") || !snap)
		return 0;
	jlongArray ids = (*jni)->GetObjectArrayElement(jni, snap, 0);
	jobjectArray names = (*jni)->GetObjectArrayElement(jni, snap, 1);
	jobjectArray arrays = (*jni)->GetObjectArrayElement(jni, snap, 2);
	jsize n = ids ? (*jni)->GetArrayLength(jni, ids) : 0;
	jlong *id = n ? (*jni)->GetLongArrayElements(jni, ids, NULL) : NULL;
	int r = 0;
	for (jsize i = 0; id && data && i < n && r == 0; i++)
		r = add_by_identity(jni, data, id[i], names, arrays, i, diag);
	if (id)
		(*jni)->ReleaseLongArrayElements(jni, ids, id, JNI_ABORT);
	(*jni)->DeleteLocalRef(jni, ids);
	(*jni)->DeleteLocalRef(jni, names);
	(*jni)->DeleteLocalRef(jni, arrays);
	(*jni)->DeleteLocalRef(jni, snap);
	return r;
}

/* The flat array's indices handed out, all sessions. */
static uint32_t flat_probes(void)
{
	const jinst_instrument *ins = jinst_agent_instrumenter();
	return rt.flat && ins ? jinst_instrument_probe_flat_next(ins) : 0;
}

/* "wrote PATH: 2 classes, 23 probes, 15 hit": what the file records, the
 * same for the same program in every session; then how many of this
 * session's probes are in the flat array (none with coverage=counts),
 * never the indices the sessions before took. */
static void log_written(const char *path, const jinst_covdata *data)
{
	char whole[2200], flat[96] = "";
	jinst_agent_output_whole(path, whole, sizeof whole);
	size_t classes = jinst_covdata_class_count(data);
	unsigned long long probes = 0, hit = 0;
	for (size_t i = 0; i < classes; i++) {
		const jinst_covdata_class *c = jinst_covdata_class_at(data, i);
		probes += c->probe_count;
		hit += jinst_covdata_class_hits(c);
	}
	uint32_t next = flat_probes();
	if (next > rt.flat_next)
		snprintf(flat, sizeof flat, " (%u of this session's probes in the flat array)", next - rt.flat_next);
	jinst_agent_log("wrote %s: %zu class%s, %llu probe%s, %llu hit%s", whole, classes, classes == 1 ? "" : "es", probes,
	                probes == 1 ? "" : "s", hit, flat);
}

static void write_data(const jinst_coverage_config *k, JNIEnv *jni, jobjectArray snap, const uint8_t *flat)
{
	char path[1100], session[300];
	jinst_agent_output_path(".cov", path, sizeof path);
	if (k->session[0])
		snprintf(session, sizeof session, "%s", k->session);
	else
		snprintf(session, sizeof session, "jinst-%ld", jinst_agent_pid());
	if (rt.base_bad) {
		jinst_agent_log("%s not written: append=y, and it could not be read when the session started", path);
		return;
	}
	jinst_covdata *data = NULL;
	jinst_diag diag;
	memset(&diag, 0, sizeof diag);
	int r = jinst_covdata_new(&data);
	if (!r && rt.base)
		r = jinst_covdata_merge(data, rt.base, NULL, NULL, &diag);
	if (!r)
		r = jinst_covdata_add_session(data, session, rt.start_ms, now_ms());
	if (!r)
		r = fill(jni, k, snap, flat, data, &diag);
	if (!r)
		r = fill_by_identity(jni, data, false, &diag);
	if (!r)
		r = jinst_covdata_write_file(path, data, &diag);
	if (r < 0) {
		char msg[600];
		jinst_diag_format(&diag, msg, sizeof msg);
		jinst_agent_log("%s not written: %s", path, msg[0] ? msg : jinst_strerror(r));
	} else {
		log_written(path, data);
	}
	jinst_covdata_free(data);
}

/* Takes the runtime's snapshot (reset: then clears it); NULL on failure. */
static jobjectArray snapshot(JNIEnv *jni, bool reset)
{
	jobjectArray snap = (*jni)->CallStaticObjectMethod(jni, rt.coverage, rt.snapshot, (jboolean)reset);
	return jinst_agent_java_failed(jni, "Coverage.snapshot") ? NULL : snap;
}

/* ---- the flat array ------------------------------------------------------ */

/* The flat array (java.lang.$JinstProbes.P, instrument.h's
 * jinst_instrument_probe_flat_range) for this session's instrumenter:
 * booleans take the rest of it, past the ranges of the sessions before
 * (a frame of their code may still store there); counts take none. The
 * array is made at the first session: its class's initializer runs here,
 * before any range is handed out, and its length bounds them. Without it,
 * every class asks by class id, as before. */
static void flat_start(JNIEnv *jni, const jinst_coverage_config *k)
{
	jinst_instrument *ins = (jinst_instrument *)jinst_agent_instrumenter(); /* its flat range is ours */
	if (!ins)
		return;
	if (!rt.flat && !k->counts) {
		static const char owner[] = "java/lang/$JinstProbes";
		jclass c = (*jni)->FindClass(jni, owner);
		jfieldID f = c && !jinst_agent_java_failed(jni, owner) ? (*jni)->GetStaticFieldID(jni, c, "P", "[Z") : NULL;
		jobject a = f && !jinst_agent_java_failed(jni, "$JinstProbes.P") ? (*jni)->GetStaticObjectField(jni, c, f)
		                                                                 : NULL;
		if (a && !jinst_agent_java_failed(jni, "$JinstProbes.P")) {
			rt.flat = (*jni)->NewGlobalRef(jni, a);
			rt.flat_len = rt.flat ? (uint32_t)(*jni)->GetArrayLength(jni, rt.flat) : 0;
		}
		if (a)
			(*jni)->DeleteLocalRef(jni, a);
		if (c)
			(*jni)->DeleteLocalRef(jni, c);
	}
	uint32_t end = rt.flat && !k->counts ? rt.flat_len : rt.flat_next;
	jinst_instrument_probe_flat_range(ins, rt.flat_next < end ? rt.flat_next : end, end);
}

/* A copy of this session's ranges of the flat array, from its first
 * (rt.flat_next: the sessions before keep theirs, unread); NULL when none,
 * or out of memory: those classes then read as missed, and the log says so. */
static uint8_t *flat_copy(JNIEnv *jni)
{
	uint32_t n = flat_probes() - rt.flat_next;
	uint8_t *b = n ? malloc(n) : NULL;
	if (n && !b)
		jinst_agent_log("coverage: out of memory copying %u probes", n);
	if (b)
		(*jni)->GetBooleanArrayRegion(jni, rt.flat, (jsize)rt.flat_next, (jsize)n, (jboolean *)b);
	return b;
}

/* Clears this session's ranges (reset: methods running keep storing into
 * the same array). */
static void flat_clear(JNIEnv *jni)
{
	uint32_t n = flat_probes();
	static const jboolean zeros[4096];
	for (uint32_t at = rt.flat_next; at < n; at += sizeof zeros) {
		uint32_t len = n - at < sizeof zeros ? n - at : (uint32_t)sizeof zeros;
		(*jni)->SetBooleanArrayRegion(jni, rt.flat, (jsize)at, (jsize)len, zeros);
	}
}

/* ---- the module's life ------------------------------------------------- */

static bool coverage_start(const void *c, JNIEnv *jni)
{
	const jinst_coverage_config *k = c;
	if (!find_methods(jni))
		return false;
	rt.start_ms = now_ms();
	take_base();
	flat_start(jni, k);
	(*jni)->CallStaticVoidMethod(jni, rt.coverage, rt.engage, (jint)(k->counts ? RT_COUNTS : RT_BOOLEANS));
	return !jinst_agent_java_failed(jni, "Coverage.engage");
}

static void coverage_dump(const void *c, JNIEnv *jni)
{
	uint8_t *flat = flat_copy(jni);
	jobjectArray snap = snapshot(jni, false);
	if (snap)
		write_data(c, jni, snap, flat);
	free(flat);
	if (snap)
		(*jni)->DeleteLocalRef(jni, snap);
}

static void coverage_reset(const void *c, JNIEnv *jni)
{
	(void)c;
	jobjectArray snap = snapshot(jni, true);
	if (snap)
		(*jni)->DeleteLocalRef(jni, snap);
	flat_clear(jni);
	jinst_diag diag;
	fill_by_identity(jni, NULL, true, &diag);
	rt.start_ms = now_ms();
	take_base();
}

static void coverage_stop(const void *c, JNIEnv *jni)
{
	coverage_dump(c, jni);
	const jinst_instrument *ins = jinst_agent_instrumenter();
	if (ins)
		rt.flat_next = jinst_instrument_probe_flat_next(ins);
	(*jni)->CallStaticVoidMethod(jni, rt.coverage, rt.disengage);
	jinst_agent_java_failed(jni, "Coverage.disengage");
	jinst_covdata_free(rt.base);
	rt.base = NULL;
}

const jinst_agent_module jinst_coverage_module = {
	JINST_COVERAGE_MODULE_OPTIONS,
	.builtin_passes = jinst_coverage_passes,
	.start = coverage_start,
	.dump = coverage_dump,
	.stop = coverage_stop,
	.reset = coverage_reset,
	.check_existing = coverage_check_existing,
	.restartable = true,
};
