/*
 * The trace module's outputs: a write takes one snapshot of everything its
 * formats need (jinst.rt.Hooks.snapshot: counts, times, the call tree,
 * the timelines, as long[]s taken at one moment under the runtime's
 * lock), copied out, and every format is rendered from it with the method
 * names of the instrumenter by the report library (include/jinst/report.h),
 * which writes OUT.tsv, .txt, .folded, .json, .html. A snapshot per
 * format, as before, gave each file of one write its own counts (the
 * program goes on calling meanwhile): 64100 calls of a method in OUT.tsv,
 * 65623 in OUT.txt, 65900 in OUT.html.
 * An output that cannot be written costs the program nothing: one log line
 * says why. Ids of code instrumented ahead of time (ranges the
 * instrumenter reserved for the runtime's jinst.rt.Runs, without names)
 * are named from the runs' method tables, which the runtime reads for
 * each dump (Hooks.runNames).
 *
 * With append=y (the core's option) a session's outputs follow what the
 * files held when it started (output.c). The JSON and the HTML page are
 * one document each: trace.c refuses them with append=y.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/report.h"

static jmethodID snap, thread_names, run_names;

bool jinst_trace_output_init(JNIEnv *jni)
{
	struct { jmethodID *id; const char *name, *sig; } ms[] = {
		{&snap, "snapshot", "(I)[[J"},
		{&thread_names, "threadNames", "()[Ljava/lang/String;"}, {&run_names, "runNames", "()[[B"}};
	jclass hooks = jinst_agent_hooks_class();
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		*ms[i].id = (*jni)->GetStaticMethodID(jni, hooks, ms[i].name, ms[i].sig);
		if (jinst_agent_java_failed(jni, ms[i].name) || !*ms[i].id)
			return false;
	}
	return true;
}

/* The runs' names during a dump (the dump lock held): per id, class,
 * method, descriptor and timed ("" when timed, NULL when counted). */
static char **runs;
static size_t run_ids;

static void runs_free(void)
{
	for (size_t i = 0; runs && i < 4 * run_ids; i++)
		free(runs[i]);
	free(runs);
	runs = NULL;
	run_ids = 0;
}

/* A NUL-terminated copy of a byte[] (modified UTF-8), or NULL. */
static char *byte_string(JNIEnv *jni, jbyteArray a)
{
	jsize n = (*jni)->GetArrayLength(jni, a);
	char *s = malloc((size_t)n + 1);
	if (s) {
		(*jni)->GetByteArrayRegion(jni, a, 0, n, (jbyte *)s);
		s[n] = '\0';
	}
	return s;
}

static void runs_read(JNIEnv *jni)
{
	runs_free();
	jobjectArray a = (jobjectArray)(*jni)->CallStaticObjectMethod(jni, jinst_agent_hooks_class(), run_names);
	if (jinst_agent_java_failed(jni, "Hooks.runNames") || !a)
		return;
	size_t n = (size_t)(*jni)->GetArrayLength(jni, a) / 4;
	runs = calloc(4 * n + 1, sizeof *runs);
	run_ids = runs ? n : 0;
	for (size_t i = 0; i < 4 * run_ids; i++) {
		jbyteArray b = (jbyteArray)(*jni)->GetObjectArrayElement(jni, a, (jsize)i);
		if (b) {
			runs[i] = byte_string(jni, b);
			(*jni)->DeleteLocalRef(jni, b);
		}
	}
	(*jni)->DeleteLocalRef(jni, a);
}

/* A run's id: its names, and whether it is timed; false when unnamed. */
static bool run_method(uint32_t id, const char **cls, const char **name, const char **desc, bool *timed)
{
	char **r = id < run_ids ? &runs[4 * (size_t)id] : NULL;
	if (!r || !r[0] || !r[1] || !r[2])
		return false;
	*cls = r[0];
	*name = r[1];
	*desc = r[2];
	*timed = r[3] != NULL;
	return true;
}

static int method_names(void *ctx, uint32_t id, const char **cls, const char **name, const char **desc)
{
	(void)ctx;
	jinst_method_info info;
	bool timed;
	const jinst_instrument *ins = jinst_agent_instrumenter();
	if (!ins || jinst_instrument_method_info(ins, id, &info) < 0)
		return run_method(id, cls, name, desc, &timed) ? 0 : -1;
	*cls = info.class_name;
	*name = info.name;
	*desc = info.descriptor;
	return 0;
}

/* Whether id is only counted (a leaf, or trace=counts): the profile lists
 * it apart. */
static bool counted_only(const jinst_instrument *ins, uint32_t id)
{
	jinst_method_info info;
	const char *c, *n, *d;
	bool timed;
	if (ins && jinst_instrument_method_info(ins, id, &info) == 0)
		return !info.timed;
	return run_method(id, &c, &n, &d, &timed) && !timed;
}

/* What one write is rendered from: the runtime's snapshot (TraceData's
 * forms), each form a copy of its long[] (NULL when not asked). */
enum { FORM_COUNTS, FORM_TIMES, FORM_TREE, FORM_EVENTS, FORM_NOT_KEPT, FORMS };

typedef struct trace_snapshot {
	int64_t *form[FORMS];
	size_t len[FORMS];
	const char **names;   /* the timelines' threads' names */
	size_t name_count;
} trace_snapshot;

static void trace_snapshot_free(trace_snapshot *s)
{
	for (int i = 0; i < FORMS; i++)
		free(s->form[i]);
	for (size_t i = 0; s->names && i < s->name_count; i++)
		free((void *)s->names[i]);
	free(s->names);
}

/* What one format is written from (its own copies: the profile changes
 * its counts). */
typedef struct trace_data {
	int64_t *data;
	size_t len;
	int64_t *counts;      /* profile: each method's calls */
	size_t counts_len;
	const char *const *names; /* chrome: the threads' names (the snapshot's) */
	size_t name_count;
	char *title;          /* html: the command line */
} trace_data;

static void trace_data_free(trace_data *d)
{
	free(d->title);
	free(d->data);
	free(d->counts);
}

/* A copy of a snapshot's form (NULL when it has none). */
static int64_t *form_copy(const trace_snapshot *s, int form, size_t *len)
{
	int64_t *v = s->form[form] ? malloc(s->len[form] * sizeof *v + 8) : NULL;
	if (v && s->len[form])
		memcpy(v, s->form[form], s->len[form] * sizeof *v);
	*len = v ? s->len[form] : 0;
	return v;
}

static void read_thread_names(JNIEnv *jni, trace_snapshot *s)
{
	jobjectArray tn = (jobjectArray)(*jni)->CallStaticObjectMethod(jni, jinst_agent_hooks_class(), thread_names);
	if (jinst_agent_java_failed(jni, "Hooks.threadNames") || !tn)
		return;
	s->name_count = (size_t)(*jni)->GetArrayLength(jni, tn);
	s->names = calloc(s->name_count + 1, sizeof *s->names);
	for (size_t i = 0; s->names && i < s->name_count; i++) {
		jstring str = (jstring)(*jni)->GetObjectArrayElement(jni, tn, (jsize)i);
		if (str) {
			const char *c = (*jni)->GetStringUTFChars(jni, str, NULL);
			s->names[i] = c ? strdup(c) : NULL;
			if (c)
				(*jni)->ReleaseStringUTFChars(jni, str, c);
			(*jni)->DeleteLocalRef(jni, str);
		}
	}
	if (!s->names)
		s->name_count = 0;
	(*jni)->DeleteLocalRef(jni, tn);
}

/* The forms the formats need (TraceData's bits: 1 counts, 2 times, 4 the
 * tree, 8 the timelines), in one call; false when the runtime gave none. */
static bool read_snapshot(JNIEnv *jni, unsigned formats, trace_snapshot *s)
{
	jint forms = (formats & JINST_FORMAT_COUNTS ? 1 : 0) | (formats & JINST_FORMAT_PROFILE ? 2 : 0) |
	             (formats & (JINST_FORMAT_FOLDED | JINST_FORMAT_HTML) ? 4 : 0) |
	             (formats & JINST_FORMAT_CHROME ? 8 : 0);
	memset(s, 0, sizeof *s);
	jobjectArray a = (jobjectArray)(*jni)->CallStaticObjectMethod(jni, jinst_agent_hooks_class(), snap, forms);
	if (jinst_agent_java_failed(jni, "Hooks.snapshot") || !a)
		return false;
	jsize n = (*jni)->GetArrayLength(jni, a);
	for (jsize i = 0; i < n && i < FORMS; i++) {
		jlongArray f = (jlongArray)(*jni)->GetObjectArrayElement(jni, a, i);
		if (!f)
			continue;
		jsize m = (*jni)->GetArrayLength(jni, f);
		s->form[i] = malloc((size_t)m * sizeof(int64_t) + 8);
		if (s->form[i])
			(*jni)->GetLongArrayRegion(jni, f, 0, m, (jlong *)s->form[i]);
		s->len[i] = s->form[i] ? (size_t)m : 0;
		(*jni)->DeleteLocalRef(jni, f);
	}
	(*jni)->DeleteLocalRef(jni, a);
	/* the names of this snapshot's timelines, in its order */
	if (forms & 8)
		read_thread_names(jni, s);
	return true;
}

/* The times snapshot holds (calls, self, total) per method. The entry
 * counts are its calls. The methods only counted (leaves) have no time: no
 * calls in data, so that the profile lists them apart, by their count. */
static void read_profile(const trace_snapshot *s, trace_data *d)
{
	d->data = form_copy(s, FORM_TIMES, &d->len);
	d->counts = d->data ? malloc((d->len / 3 + 1) * sizeof *d->counts) : NULL;
	const jinst_instrument *ins = jinst_agent_instrumenter();
	for (size_t i = 0; d->counts && i < d->len / 3; i++) {
		d->counts[i] = d->data[3 * i];
		if (d->data[3 * i] > 0 && counted_only(ins, (uint32_t)i))
			d->data[3 * i] = 0;
	}
	d->counts_len = d->counts ? d->len / 3 : 0;
}

/* The flame graph's title: the program as java names it (the main class
 * or jar and its arguments), and the process. */
static void read_title(trace_data *d)
{
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	char *cmd = NULL;
	if (jvmti && (*jvmti)->GetSystemProperty(jvmti, "sun.java.command", &cmd) != JVMTI_ERROR_NONE)
		cmd = NULL;
	size_t n = (cmd ? strlen(cmd) : 0) + 64;
	d->title = malloc(n);
	if (d->title)
		snprintf(d->title, n, "java %s (pid %ld)", cmd ? cmd : "", jinst_agent_pid());
	if (cmd)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)cmd);
}

static void read_format(const trace_snapshot *s, unsigned format, trace_data *d)
{
	switch (format) {
	case JINST_FORMAT_COUNTS: d->data = form_copy(s, FORM_COUNTS, &d->len); break;
	case JINST_FORMAT_PROFILE: read_profile(s, d); break;
	case JINST_FORMAT_FOLDED: d->data = form_copy(s, FORM_TREE, &d->len); break;
	case JINST_FORMAT_CHROME:
		d->data = form_copy(s, FORM_EVENTS, &d->len);
		d->names = s->names;
		d->name_count = s->name_count;
		break;
	case JINST_FORMAT_HTML:
		d->data = form_copy(s, FORM_TREE, &d->len);
		d->counts = form_copy(s, FORM_COUNTS, &d->counts_len);
		read_title(d);
		break;
	}
}

static int write_data(FILE *f, unsigned format, const trace_data *d, const jinst_trace_config *t)
{
	switch (format) {
	case JINST_FORMAT_COUNTS: return jinst_trace_write_counts(f, d->data, d->len, method_names, NULL);
	case JINST_FORMAT_PROFILE:
		return jinst_trace_write_profile(f, d->data, d->len / 3, d->counts, d->counts_len, t->tick_us, t->clock,
		                                 method_names, NULL);
	case JINST_FORMAT_FOLDED:
		return jinst_trace_write_folded(f, d->data, d->len, t->fold_min, t->clock, method_names, NULL);
	case JINST_FORMAT_CHROME:
		return jinst_trace_write_chrome(f, d->data, d->len, d->names, d->name_count, jinst_agent_pid(), t->clock,
		                                method_names, NULL);
	case JINST_FORMAT_HTML:
		return jinst_trace_write_flame(f, d->data, d->len, t->fold_min, d->counts, d->counts_len, d->title, t->clock,
		                               method_names, NULL);
	default: return JINST_EINVAL;
	}
}

/* trace=events: the calls not recorded, said where the user looks (the
 * file says it too, in otherData), each kind with the bound that was
 * reached and the option that raises it: a thread's buffer that filled
 * (maxevents= per thread), and the timelines of ended threads beyond what
 * they keep between them (the entry of id -1; not_kept: the threads, the
 * bounds reached, Registry.CAP_TIMELINES 1 and CAP_EVENTS 2, and the two
 * bounds). */
static void report_dropped(const trace_data *d, const int64_t *not_kept, size_t not_kept_len,
                           const jinst_trace_config *t, const char *path)
{
	int64_t kept = 0, dropped = 0, threads = d->len ? d->data[0] : 0, full = 0, ended_lost = 0;
	size_t k = 1;
	for (int64_t i = 0; i < threads && d->len - k >= 3; i++) {
		int64_t tid = d->data[k], n = d->data[k + 1], lost = d->data[k + 2];
		k += 3;
		if (n < 0 || (uint64_t)n > (d->len - k) / 2)
			break;
		kept += n;
		if (tid == -1) {
			ended_lost += lost > 0 ? lost : 0;
		} else {
			dropped += lost > 0 ? lost : 0;
			full += lost > 0;
		}
		k += 2 * (size_t)n;
	}
	if (dropped > 0)
		jinst_agent_log("%s: %lld calls dropped in %lld threads, %lld events kept: each thread keeps its first calls "
		                "(entry and exit), maxevents=%ld events per thread; raise maxevents= or narrow include=",
		                path, (long long)dropped, (long long)full, (long long)kept, t->max_events);
	if (ended_lost > 0 && not_kept && not_kept_len >= 4) {
		char caps[160];
		int n = 0;
		if (not_kept[1] & 1)
			n += snprintf(caps + n, sizeof caps - (size_t)n, "%lld timelines (maxevents/100, at least 1024)",
			              (long long)not_kept[2]);
		if (not_kept[1] & 2)
			snprintf(caps + n, sizeof caps - (size_t)n, "%s%lld events (10 x maxevents)", n ? " and " : "",
			         (long long)not_kept[3]);
		if (!(not_kept[1] & 3))
			snprintf(caps, sizeof caps, "their bounds");
		jinst_agent_log("%s: %lld calls dropped with the timelines of %lld ended threads not kept: ended threads "
		                "keep at most %lld timelines and %lld events between them, those created first (main's "
		                "among them); this run reached %s; raise maxevents= (now %ld) or narrow include=",
		                path, (long long)ended_lost, (long long)not_kept[0], (long long)not_kept[2],
		                (long long)not_kept[3], caps, t->max_events);
	}
}

/* ---- append=y ------------------------------------------------------------ */

void jinst_trace_output_begin(const jinst_trace_config *t)
{
	for (unsigned bit = 1; bit <= JINST_FORMAT_HTML; bit <<= 1)
		if (t->formats & bit)
			jinst_agent_output_begin(jinst_trace_format_ext(bit));
}

/* The file a write goes to: replaced, or with append=y after the sessions
 * before. NULL with errno. */
static FILE *open_output(const char *path, unsigned format)
{
	return jinst_agent_output_append() ? jinst_agent_output_open_appended(jinst_trace_format_ext(format))
	                                   : fopen(path, "w");
}

static void write_format(const jinst_trace_config *t, const trace_snapshot *s, unsigned format)
{
	char path[1100];
	jinst_agent_output_path(jinst_trace_format_ext(format), path, sizeof path);
	trace_data d;
	memset(&d, 0, sizeof d);
	read_format(s, format, &d);
	if (!d.data) {
		jinst_agent_log("%s not written: no data from the runtime", path);
		trace_data_free(&d);
		return;
	}
	FILE *f = open_output(path, format);
	int r = JINST_EIO, open_errno = errno;
	bool opened = f != NULL;
	if (f) {
		r = write_data(f, format, &d, t);
		if (fclose(f) != 0 && r == 0)
			r = JINST_EIO;
	}
	jinst_agent_log_output(path, r >= 0 ? NULL : opened ? jinst_strerror(r) : strerror(open_errno));
	if (r == 0 && format == JINST_FORMAT_CHROME)
		report_dropped(&d, s->form[FORM_NOT_KEPT], s->len[FORM_NOT_KEPT], t, path);
	trace_data_free(&d);
}

void jinst_trace_dump(const void *c, JNIEnv *jni)
{
	const jinst_trace_config *t = c;
	trace_snapshot s;
	runs_read(jni);
	if (!read_snapshot(jni, t->formats, &s))
		jinst_agent_log("trace: no snapshot from the runtime, nothing written");
	else
		for (unsigned bit = 1; bit <= JINST_FORMAT_HTML; bit <<= 1)
			if (t->formats & bit)
				write_format(t, &s, bit);
	trace_snapshot_free(&s);
	runs_free();
}
