/*
 * Mirroring inputs to outputs through a class transformation: the machinery
 * under `jinst rewrite` (and, later, offline instrumentation).
 *
 * An input is a class file, a folder or a jar/zip. Its output has the same
 * shape: a folder keeps its layout and every non-class file is copied; a jar
 * keeps its entries in their order, with their names, times, compression
 * methods, attributes and comments, classes transformed and everything else
 * copied, so the same input and options give the same output bytes
 * (DESIGN.md, invariant 8). A jar is written to a temporary file beside the
 * output and renamed into place at the end, so a failure never leaves half
 * a jar behind.
 *
 * The classes of one input are gathered in memory, transformed by worker
 * threads that take them through an atomic index, and reported in input
 * order, so the report is the same whatever the number of threads. A class
 * the transformation fails on is written unchanged and reported: the
 * output is always complete and always runs.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "mirror.h"

typedef struct job {
	char *name;       /* as reported: PATH or JAR!ENTRY */
	uint8_t *in;
	size_t in_len;
	uint8_t *out;     /* malloc'd by the transformation, or NULL (then `in` is written) */
	size_t out_len;
	enum mirror_result result;
	char *message;
	char *dest;       /* folder mode: the output path */
	zip_uint64_t index; /* jar mode: the entry index */
	bool is_class;
} job;

typedef struct run {
	const mirror_options *o;
	mirror_stats *stats;
	job *jobs;
	size_t n, cap;
	_Atomic size_t next;
	_Atomic size_t done;
	size_t total_classes;
} run;

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void problem(run *R, const char *name, const char *fmt, const char *detail)
{
	fprintf(stderr, "jinst: %s: ", name);
	fprintf(stderr, fmt, detail);
	fputc('\n', stderr);
	R->stats->errors++;
}

static int read_all(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || st.st_size < 0) {
		fclose(f);
		return -1;
	}
	size_t n = (size_t)st.st_size;
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf || fread(buf, 1, n, f) != n) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

static int write_all(const char *path, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	bool ok = fwrite(data, 1, len, f) == len;
	ok = fclose(f) == 0 && ok;
	return ok ? 0 : -1;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
	char buf[4096];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static job *add_job(run *R, char *name, uint8_t *in, size_t len, bool is_class)
{
	if (R->n == R->cap) {
		size_t cap = R->cap ? R->cap * 2 : 256;
		job *p = realloc(R->jobs, cap * sizeof(*p));
		if (!p)
			return NULL;
		R->jobs = p;
		R->cap = cap;
	}
	job *j = &R->jobs[R->n++];
	*j = (job){.name = name, .in = in, .in_len = len, .is_class = is_class, .result = MIRROR_UNCHANGED};
	R->total_classes += is_class;
	return j;
}

static void *worker(void *arg)
{
	run *R = arg;
	jinst_arena *arena = NULL;
	if (jinst_arena_new(&arena))
		return NULL;
	for (;;) {
		size_t i = atomic_fetch_add(&R->next, 1);
		if (i >= R->n)
			break;
		job *j = &R->jobs[i];
		if (!j->is_class)
			continue;
		jinst_arena_reset(arena);
		j->result = R->o->transform(R->o->ctx, arena, j->name, j->in, j->in_len, &j->out, &j->out_len, &j->message);
		if (j->result != MIRROR_CHANGED) {
			free(j->out);
			j->out = NULL;
		}
		size_t done = atomic_fetch_add(&R->done, 1) + 1;
		if (R->o->progress && done % 2000 == 0)
			fprintf(stderr, "\r%zu/%zu classes", done, R->total_classes);
	}
	jinst_arena_free(arena);
	return NULL;
}

static void transform_all(run *R)
{
	int jobs = R->o->jobs > 0 ? R->o->jobs : 1;
	pthread_t tid[64];
	if (jobs > 64)
		jobs = 64;
	int started = 0;
	for (; started < jobs - 1; started++)
		if (pthread_create(&tid[started], NULL, worker, R) != 0)
			break;
	worker(R);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	if (R->o->progress && R->total_classes >= 2000)
		fputc('\n', stderr);
	for (size_t i = 0; i < R->n; i++) {
		job *j = &R->jobs[i];
		if (!j->is_class)
			continue;
		R->stats->classes++;
		R->stats->counts[j->result]++;
		if (j->message && (j->result == MIRROR_FAILED || R->o->verbose))
			printf("%s %s: %s\n", j->result == MIRROR_FAILED ? "FAILED" : "note", j->name, j->message);
	}
}

static void free_jobs(run *R)
{
	for (size_t i = 0; i < R->n; i++) {
		free(R->jobs[i].name);
		free(R->jobs[i].in);
		free(R->jobs[i].out);
		free(R->jobs[i].message);
		free(R->jobs[i].dest);
	}
	free(R->jobs);
	R->jobs = NULL;
	R->n = R->cap = 0;
	R->total_classes = 0;
	atomic_store(&R->next, 0);
	atomic_store(&R->done, 0);
}

static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", a, b);
	return p;
}

/* Gathers the files under dir (sorted) as jobs whose output goes under out. */
static void gather_dir(run *R, const char *dir, const char *out)
{
	char **names;
	size_t n;
	if (list_dir_sorted(dir, &names, &n) != 0) {
		problem(R, dir, "%s", strerror(errno));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char *src = join(dir, names[i]), *dst = join(out, names[i]);
		struct stat st;
		if (lstat(src, &st) != 0) {
			problem(R, src, "%s", strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			gather_dir(R, src, dst);
		} else if (S_ISREG(st.st_mode)) {
			uint8_t *data;
			size_t len;
			if (read_all(src, &data, &len) != 0) {
				problem(R, src, "%s", strerror(errno ? errno : EIO));
			} else {
				job *j = add_job(R, src, data, len, ends_with(src, ".class"));
				if (j) {
					j->dest = dst;
					src = dst = NULL;
				}
			}
		}
		free(src);
		free(dst);
		free(names[i]);
	}
	free(names);
}

static void write_files(run *R)
{
	for (size_t i = 0; i < R->n; i++) {
		job *j = &R->jobs[i];
		char *slash = strrchr(j->dest, '/');
		if (slash) {
			*slash = '\0';
			int rc = make_dirs(j->dest);
			*slash = '/';
			if (rc != 0) {
				problem(R, j->dest, "cannot make its folder: %s", strerror(errno));
				continue;
			}
		}
		if (write_all(j->dest, j->out ? j->out : j->in, j->out ? j->out_len : j->in_len) != 0)
			problem(R, j->dest, "cannot write: %s", strerror(errno));
	}
}

static void mirror_dir(run *R, const char *in, const char *out)
{
	gather_dir(R, in, out);
	transform_all(R);
	write_files(R);
	free_jobs(R);
}

static void mirror_file(run *R, const char *in, const char *out)
{
	uint8_t *data;
	size_t len;
	if (read_all(in, &data, &len) != 0) {
		problem(R, in, "%s", strerror(errno ? errno : EIO));
		return;
	}
	job *j = add_job(R, strdup(in), data, len, true);
	if (!j) {
		free(data);
		return;
	}
	j->dest = strdup(out);
	transform_all(R);
	write_files(R);
	free_jobs(R);
}

static void zip_problem(run *R, const char *name, zip_t *z)
{
	problem(R, name, "%s", z ? zip_strerror(z) : "cannot open");
}

static void mirror_jar(run *R, const char *in, const char *out)
{
	int zerr = 0;
	zip_t *zi = zip_open(in, ZIP_RDONLY, &zerr);
	if (!zi) {
		zip_error_t ze;
		zip_error_init_with_code(&ze, zerr);
		problem(R, in, "cannot open as a jar: %s", zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return;
	}
	zip_int64_t n = zip_get_num_entries(zi, 0);
	for (zip_int64_t i = 0; i < n; i++) {
		zip_stat_t st;
		if (zip_stat_index(zi, (zip_uint64_t)i, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME)) {
			zip_problem(R, in, zi);
			continue;
		}
		uint8_t *data = malloc(st.size ? st.size : 1);
		zip_file_t *zf = data ? zip_fopen_index(zi, (zip_uint64_t)i, 0) : NULL;
		zip_int64_t got = zf ? zip_fread(zf, data, st.size) : -1;
		if (zf)
			zip_fclose(zf);
		char *name = malloc(strlen(in) + strlen(st.name) + 2);
		if (!name || got < 0 || (zip_uint64_t)got != st.size) {
			problem(R, in, "cannot read entry %s", st.name);
			free(data);
			free(name);
			continue;
		}
		sprintf(name, "%s!%s", in, st.name);
		bool is_class = ends_with(st.name, ".class") && st.name[strlen(st.name) - 1] != '/';
		job *j = add_job(R, name, data, (size_t)got, is_class);
		if (!j) {
			free(data);
			free(name);
			continue;
		}
		j->index = (zip_uint64_t)i;
	}
	transform_all(R);

	size_t tmp_len = strlen(out) + 16;
	char *tmp = malloc(tmp_len);
	snprintf(tmp, tmp_len, "%s.tmp%ld", out, (long)getpid());
	zip_t *zo = zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
	bool ok = zo != NULL;
	if (!zo)
		problem(R, out, "cannot create: %s", "zip_open failed");
	for (size_t k = 0; ok && k < R->n; k++) {
		job *j = &R->jobs[k];
		const char *entry = zip_get_name(zi, j->index, ZIP_FL_ENC_RAW);
		zip_stat_t st;
		zip_stat_index(zi, j->index, 0, &st);
		zip_int64_t at;
		if (entry[0] && entry[strlen(entry) - 1] == '/' && j->in_len == 0) {
			at = zip_dir_add(zo, entry, ZIP_FL_ENC_RAW);
		} else {
			zip_source_t *src = zip_source_buffer(zo, j->out ? j->out : j->in, j->out ? j->out_len : j->in_len, 0);
			at = src ? zip_file_add(zo, entry, src, ZIP_FL_ENC_RAW) : -1;
			if (at < 0 && src)
				zip_source_free(src);
		}
		if (at < 0) {
			zip_problem(R, j->name, zo);
			ok = false;
			break;
		}
		zip_set_file_compression(zo, (zip_uint64_t)at, st.comp_method == ZIP_CM_STORE ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0);
		if (st.valid & ZIP_STAT_MTIME)
			zip_file_set_mtime(zo, (zip_uint64_t)at, st.mtime, 0);
		zip_uint8_t opsys;
		zip_uint32_t attrs;
		if (zip_file_get_external_attributes(zi, j->index, 0, &opsys, &attrs) == 0)
			zip_file_set_external_attributes(zo, (zip_uint64_t)at, 0, opsys, attrs);
		zip_uint32_t clen;
		const char *comment = zip_file_get_comment(zi, j->index, &clen, ZIP_FL_ENC_RAW);
		if (comment && clen)
			zip_file_set_comment(zo, (zip_uint64_t)at, comment, (zip_uint16_t)clen, 0);
	}
	if (ok) {
		int clen;
		const char *comment = zip_get_archive_comment(zi, &clen, ZIP_FL_ENC_RAW);
		if (comment && clen > 0)
			zip_set_archive_comment(zo, comment, (zip_uint16_t)clen);
	}
	if (zo) {
		if (ok && zip_close(zo) != 0) {
			zip_problem(R, out, zo);
			ok = false;
		}
		if (!ok)
			zip_discard(zo);
	}
	if (ok && rename(tmp, out) != 0) {
		problem(R, out, "cannot rename the temporary jar into place: %s", strerror(errno));
		ok = false;
	}
	if (!ok)
		unlink(tmp);
	free(tmp);
	zip_discard(zi);
	free_jobs(R);
}

static const char *base_name(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	const char *p = path + n;
	while (p > path && p[-1] != '/')
		p--;
	return p;
}

static bool is_zip(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	uint8_t m[4] = {0};
	size_t got = fread(m, 1, 4, f);
	fclose(f);
	return got == 4 && m[0] == 'P' && m[1] == 'K';
}

int mirror_run(const char *const *inputs, int n, const char *output, const mirror_options *o, mirror_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	run R = {.o = o, .stats = stats};
	struct stat ost;
	bool out_is_dir = stat(output, &ost) == 0 && S_ISDIR(ost.st_mode);
	for (int i = 0; i < n; i++) {
		const char *in = inputs[i];
		struct stat st;
		if (stat(in, &st) != 0) {
			problem(&R, in, "%s", strerror(errno));
			continue;
		}
		/* One input goes to OUT itself; several go under OUT, each by its own name. */
		char *dest = n > 1 || (out_is_dir && !S_ISDIR(st.st_mode)) ? join(output, base_name(in)) : strdup(output);
		if (n > 1 && make_dirs(output) != 0) {
			problem(&R, output, "cannot make the folder: %s", strerror(errno));
			free(dest);
			return -1;
		}
		if (S_ISDIR(st.st_mode))
			mirror_dir(&R, in, dest);
		else if (is_zip(in))
			mirror_jar(&R, in, dest);
		else if (ends_with(in, ".class"))
			mirror_file(&R, in, dest);
		else
			problem(&R, in, "%s", "not a class file, a jar or a folder");
		free(dest);
	}
	return 0;
}
