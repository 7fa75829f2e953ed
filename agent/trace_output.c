/*
 * The trace module's outputs: each format's data is a snapshot the runtime
 * returns as a long[] (jinst.rt.Hooks.snapshot*), copied out and handed
 * with the method names of the instrumenter to the report library
 * (include/jinst/report.h), which writes OUT.tsv, .txt, .folded, .json,
 * .html.
 * An output that cannot be written costs the program nothing: one log line
 * says why. Ids of code instrumented ahead of time (ranges the
 * instrumenter reserved for the runtime's jinst.rt.Runs, without names)
 * are named from the runs' method tables, which the runtime reads for
 * each dump (Hooks.runNames).
 *
 * With append=y (the core's option) a session's outputs follow what the
 * files held when it started: that length is its base, and each write
 * cuts the file back to it and writes the session's part again, a line
 * "# jinst session N, pid P, started TIME" and the data, so the sessions
 * before it stay and two dumps of one session leave one copy. The line
 * begins with '#', as the folded stacks' header does, and ends in no
 * number, so flamegraph.pl, inferno and speedscope skip it; the TSV's
 * readers skip lines that begin with '#' (no class name does). The JSON
 * and the HTML page are one document each: trace.c refuses them with
 * append=y.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, ftruncate, fdopen */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jinst/report.h"

static jmethodID snap_counts, snap_times, snap_tree, snap_events, thread_names, run_names;

bool jinst_trace_output_init(JNIEnv *jni)
{
	struct { jmethodID *id; const char *name, *sig; } ms[] = {
		{&snap_counts, "snapshotCounts", "()[J"}, {&snap_times, "snapshotTimes", "()[J"},
		{&snap_tree, "snapshotTree", "()[J"},     {&snap_events, "snapshotEvents", "()[J"},
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

/* What one format is written from. */
typedef struct trace_data {
	int64_t *data;
	size_t len;
	int64_t *counts;      /* profile: each method's calls */
	size_t counts_len;
	const char **names;   /* chrome: the threads' names */
	size_t name_count;
	char *title;          /* html: the command line */
} trace_data;

static void trace_data_free(trace_data *d)
{
	for (size_t i = 0; d->names && i < d->name_count; i++)
		free((void *)d->names[i]);
	free(d->names);
	free(d->title);
	free(d->data);
	free(d->counts);
}

/* The long[] a snapshot method returns, copied; NULL on failure. */
static int64_t *snapshot(JNIEnv *jni, jmethodID m, const char *what, size_t *len)
{
	jlongArray a = (jlongArray)(*jni)->CallStaticObjectMethod(jni, jinst_agent_hooks_class(), m);
	if (jinst_agent_java_failed(jni, what) || !a)
		return NULL;
	jsize n = (*jni)->GetArrayLength(jni, a);
	int64_t *v = malloc((size_t)n * sizeof *v + 8);
	if (v)
		(*jni)->GetLongArrayRegion(jni, a, 0, n, (jlong *)v);
	(*jni)->DeleteLocalRef(jni, a);
	*len = v ? (size_t)n : 0;
	return v;
}

/* The times snapshot holds (calls, self, total) per method. The entry
 * counts are its calls. The methods only counted (leaves) have no time: no
 * calls in data, so that the profile lists them apart, by their count. */
static void read_profile(JNIEnv *jni, trace_data *d)
{
	d->data = snapshot(jni, snap_times, "Hooks.snapshotTimes", &d->len);
	d->counts = d->data ? malloc((d->len / 3 + 1) * sizeof *d->counts) : NULL;
	const jinst_instrument *ins = jinst_agent_instrumenter();
	for (size_t i = 0; d->counts && i < d->len / 3; i++) {
		d->counts[i] = d->data[3 * i];
		if (d->data[3 * i] > 0 && counted_only(ins, (uint32_t)i))
			d->data[3 * i] = 0;
	}
	d->counts_len = d->counts ? d->len / 3 : 0;
}

static void read_thread_names(JNIEnv *jni, trace_data *d)
{
	jobjectArray tn = (jobjectArray)(*jni)->CallStaticObjectMethod(jni, jinst_agent_hooks_class(), thread_names);
	if (jinst_agent_java_failed(jni, "Hooks.threadNames") || !tn)
		return;
	d->name_count = (size_t)(*jni)->GetArrayLength(jni, tn);
	d->names = calloc(d->name_count + 1, sizeof *d->names);
	for (size_t i = 0; d->names && i < d->name_count; i++) {
		jstring s = (jstring)(*jni)->GetObjectArrayElement(jni, tn, (jsize)i);
		if (s) {
			const char *c = (*jni)->GetStringUTFChars(jni, s, NULL);
			d->names[i] = c ? strdup(c) : NULL;
			if (c)
				(*jni)->ReleaseStringUTFChars(jni, s, c);
			(*jni)->DeleteLocalRef(jni, s);
		}
	}
	(*jni)->DeleteLocalRef(jni, tn);
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

static void read_format(JNIEnv *jni, unsigned format, trace_data *d)
{
	switch (format) {
	case JINST_FORMAT_COUNTS: d->data = snapshot(jni, snap_counts, "Hooks.snapshotCounts", &d->len); break;
	case JINST_FORMAT_PROFILE: read_profile(jni, d); break;
	case JINST_FORMAT_FOLDED: d->data = snapshot(jni, snap_tree, "Hooks.snapshotTree", &d->len); break;
	case JINST_FORMAT_CHROME:
		d->data = snapshot(jni, snap_events, "Hooks.snapshotEvents", &d->len);
		read_thread_names(jni, d);
		break;
	case JINST_FORMAT_HTML:
		d->data = snapshot(jni, snap_tree, "Hooks.snapshotTree", &d->len);
		d->counts = snapshot(jni, snap_counts, "Hooks.snapshotCounts", &d->counts_len);
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

/* trace=events: the calls that found their thread's buffer full are not
 * recorded; say how many, and which were kept, where the user looks (the
 * file says it too, in otherData). */
static void report_dropped(const trace_data *d, const jinst_trace_config *t, const char *path)
{
	int64_t kept = 0, dropped = 0, threads = d->len ? d->data[0] : 0, full = 0;
	size_t k = 1;
	for (int64_t i = 0; i < threads && d->len - k >= 3; i++) {
		int64_t n = d->data[k + 1], lost = d->data[k + 2];
		k += 3;
		if (n < 0 || (uint64_t)n > (d->len - k) / 2)
			break;
		kept += n;
		dropped += lost > 0 ? lost : 0;
		full += lost > 0;
		k += 2 * (size_t)n;
	}
	if (dropped > 0)
		jinst_agent_log("%s: %lld calls dropped in %lld threads, %lld events kept: each thread keeps its first calls "
		                "(entry and exit), maxevents=%ld events per thread; raise maxevents= or narrow include=",
		                path, (long long)dropped, (long long)full, (long long)kept, t->max_events);
}

/* ---- append=y ------------------------------------------------------------ */

#define FORMATS 5 /* JINST_FORMAT_COUNTS to _HTML */

static struct {
	off_t base[FORMATS];  /* per format (bit index): the file's length at the session's start */
	char started[32];     /* the session's start, UTC */
} app;

static unsigned format_index(unsigned format)
{
	unsigned i = 0;
	while (i + 1 < FORMATS && !(format & 1u << i))
		i++;
	return i;
}

void jinst_trace_output_begin(const jinst_trace_config *t)
{
	time_t now = time(NULL);
	struct tm utc;
	if (!gmtime_r(&now, &utc) || !strftime(app.started, sizeof app.started, "%Y-%m-%dT%H:%M:%SZ", &utc))
		snprintf(app.started, sizeof app.started, "(unknown)");
	for (unsigned bit = 1; bit <= JINST_FORMAT_HTML; bit <<= 1) {
		char path[1100];
		struct stat st;
		jinst_agent_output_path(jinst_trace_format_ext(bit), path, sizeof path);
		app.base[format_index(bit)] = (t->formats & bit) && stat(path, &st) == 0 ? st.st_size : 0;
	}
}

/* The file a write goes to: replaced, or with append=y cut back to the
 * session's base and begun with the session's line. NULL with errno. */
static FILE *open_output(const char *path, unsigned format)
{
	if (!jinst_agent_output_append())
		return fopen(path, "w");
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return NULL;
	off_t *base = &app.base[format_index(format)];
	struct stat st;
	/* shorter than when the session started (removed, say): the session
	 * goes after what is there */
	if (fstat(fd, &st) == 0 && st.st_size < *base)
		*base = st.st_size;
	FILE *f = ftruncate(fd, *base) == 0 && lseek(fd, *base, SEEK_SET) == *base ? fdopen(fd, "w") : NULL;
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	fprintf(f, "# jinst session %u, pid %ld, started %s\n", jinst_agent_session(), jinst_agent_pid(), app.started);
	return f;
}

static void write_format(const jinst_trace_config *t, JNIEnv *jni, unsigned format)
{
	char path[1100];
	jinst_agent_output_path(jinst_trace_format_ext(format), path, sizeof path);
	trace_data d;
	memset(&d, 0, sizeof d);
	read_format(jni, format, &d);
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
	if (r < 0)
		jinst_agent_log("%s not written: %s", path, opened ? jinst_strerror(r) : strerror(open_errno));
	else
		jinst_agent_log("wrote %s", path);
	if (r == 0 && format == JINST_FORMAT_CHROME)
		report_dropped(&d, t, path);
	trace_data_free(&d);
}

void jinst_trace_dump(const void *c, JNIEnv *jni)
{
	const jinst_trace_config *t = c;
	runs_read(jni);
	for (unsigned bit = 1; bit <= JINST_FORMAT_HTML; bit <<= 1)
		if (t->formats & bit)
			write_format(t, jni, bit);
	runs_free();
}
