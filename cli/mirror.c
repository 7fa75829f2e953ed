/*
 * Mirroring inputs to outputs through a class transformation: the machinery
 * under `jinst rewrite` (and, later, offline instrumentation).
 *
 * An input is a class file, a folder or a jar/zip. Its output has the same
 * shape: a folder keeps its layout and every non-class file is copied; a jar
 * keeps its entries in their order, with their names, times, compression
 * methods, attributes and comments, classes transformed and everything else
 * copied, so the same input and options give the same output bytes
 * (DESIGN.md, invariant 8). A jar goes through the archive layer
 * (include/jinst/archive.h), which writes a temporary file beside the
 * output and renames it into place at the end, so a failure never leaves
 * half a jar behind.
 *
 * The classes of one input are gathered in memory, transformed by the
 * worker pool (include/jinst/util.h), one arena per pool thread, and
 * reported in input order, so the report is the same whatever the number
 * of threads. A class
 * the transformation fails on is written unchanged and reported: the
 * output is always complete and always runs.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jinst/archive.h"
#include "jinst/util.h"
#include "mirror.h"

/* The time of an added entry: a fixed one, so the output stays the same
 * from run to run (1980-01-03, inside the DOS date range in any time zone). */
#define EXTRA_MTIME INT64_C(315705600)

typedef struct job {
	char *name;       /* as reported: PATH or JAR!ENTRY */
	uint8_t *in;
	size_t in_len;
	uint8_t *out;     /* malloc'd by the transformation, or NULL (then `in` is written) */
	size_t out_len;
	enum mirror_result result;
	char *message;
	char *dest;       /* folder mode: the output path */
	size_t index;     /* jar mode: the entry index */
	bool is_class;
} job;

typedef struct run {
	const mirror_options *o;
	mirror_stats *stats;
	job *jobs;
	size_t n, cap;
	jinst_pool *pool;
	jinst_arena **arenas; /* one per pool thread */
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
	fprintf(stderr, "jinst %s: %s: ", R->o->command ? R->o->command : "", name);
	fprintf(stderr, fmt, detail);
	fputc('\n', stderr);
	R->stats->errors++;
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

static void transform_one(void *arg, int worker, size_t i)
{
	run *R = arg;
	job *j = &R->jobs[i];
	if (!j->is_class)
		return;
	jinst_arena *arena = R->arenas[worker];
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

static void count_reason(run *R, const char *why)
{
	mirror_stats *s = R->stats;
	for (size_t i = 0; i < s->nskipped; i++)
		if (strcmp(s->skipped[i].text, why) == 0) {
			s->skipped[i].count++;
			return;
		}
	mirror_reason *p = realloc(s->skipped, (s->nskipped + 1) * sizeof(*p));
	char *copy = strdup(why);
	if (!p || !copy) {
		free(copy);
		if (p)
			s->skipped = p;
		return;
	}
	s->skipped = p;
	s->skipped[s->nskipped++] = (mirror_reason){copy, 1};
}

static void transform_all(run *R)
{
	jinst_pool_run(R->pool, R->n, transform_one, R);
	if (R->o->progress && R->total_classes >= 2000)
		fputc('\n', stderr);
	for (size_t i = 0; i < R->n; i++) {
		job *j = &R->jobs[i];
		if (!j->is_class)
			continue;
		R->stats->classes++;
		R->stats->counts[j->result]++;
		if (j->result == MIRROR_SKIPPED)
			count_reason(R, j->message ? j->message : "no reason given");
		if (j->result == MIRROR_FAILED) {
			fprintf(stderr, "jinst %s: warning: %s: %s (copied unchanged)\n", R->o->command, j->name,
			        j->message ? j->message : "failed");
			R->stats->warnings++;
		} else if (j->message && R->o->verbose) {
			printf("note %s: %s\n", j->name, j->message);
		}
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
	jinst_diag d;
	if (jinst_dir_list(&names, &n, dir, &d) != 0) {
		problem(R, dir, "%s", d.message);
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
			if (jinst_file_read(&data, &len, src, 0, &d) != 0) {
				problem(R, src, "%s", d.message);
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
	}
	jinst_dir_list_free(names, n);
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

static void free_extras(mirror_extra *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(x[i].name);
		free(x[i].bytes);
	}
	free(x);
}

/* The extra entries of the output of input, from the command's hook. */
static int get_extras(run *R, const char *input, mirror_extra **x, size_t *n)
{
	*x = NULL;
	*n = 0;
	if (!R->o->extra)
		return 0;
	if (R->o->extra(R->o->ctx, input, x, n) < 0) {
		problem(R, input, "%s", "the entries to add could not be made");
		free_extras(*x, *n);
		*x = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

static void mirror_dir(run *R, const char *in, const char *out)
{
	gather_dir(R, in, out);
	transform_all(R);
	mirror_extra *x;
	size_t nx;
	if (get_extras(R, in, &x, &nx) == 0) {
		for (size_t i = 0; i < nx; i++) {
			job *j = add_job(R, strdup(x[i].name), x[i].bytes, x[i].len, false);
			if (!j)
				continue;
			x[i].bytes = NULL;
			j->dest = join(out, x[i].name);
		}
		free_extras(x, nx);
	}
	write_files(R);
	R->stats->files += R->n - R->total_classes;
	R->stats->inputs++;
	free_jobs(R);
}

static void mirror_file(run *R, const char *in, const char *out)
{
	uint8_t *data;
	size_t len;
	jinst_diag d;
	if (jinst_file_read(&data, &len, in, 0, &d) != 0) {
		problem(R, in, "%s", d.message);
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
	R->stats->inputs++;
	free_jobs(R);
}

static void mirror_jar(run *R, const char *in, const char *out)
{
	jinst_archive *a;
	jinst_diag d;
	if (jinst_archive_open(&a, in, NULL, &d) != 0) {
		problem(R, in, "cannot open as a jar: %s", d.message);
		return;
	}
	size_t n = jinst_archive_count(a);
	for (size_t i = 0; i < n; i++) {
		jinst_archive_entry e;
		if (jinst_archive_entry_at(&e, a, i, &d) != 0) {
			problem(R, in, "%s", d.message);
			continue;
		}
		uint8_t *data;
		size_t len;
		char *name = malloc(strlen(in) + strlen(e.name) + 2);
		if (!name || jinst_archive_read(&data, &len, a, i, &d) != 0) {
			problem(R, in, "cannot read entry %s", e.name);
			free(name);
			continue;
		}
		sprintf(name, "%s!%s", in, e.name);
		bool is_class = ends_with(e.name, ".class") && e.name[strlen(e.name) - 1] != '/';
		job *j = add_job(R, name, data, len, is_class);
		if (!j) {
			free(data);
			free(name);
			continue;
		}
		j->index = i;
	}
	transform_all(R);
	mirror_extra *x;
	size_t nx;
	bool ok = get_extras(R, in, &x, &nx) == 0;
	/* An extra entry replaces one of its name in place; the others come last. */
	size_t first_extra = R->n;
	for (size_t i = 0; ok && i < nx; i++) {
		job *j = NULL;
		for (size_t k = 0; k < first_extra && !j; k++)
			if (strcmp(strchr(R->jobs[k].name, '!') + 1, x[i].name) == 0)
				j = &R->jobs[k];
		if (j) {
			free(j->out);
			j->out = x[i].bytes;
			j->out_len = x[i].len;
		} else if ((j = add_job(R, strdup(x[i].name), x[i].bytes, x[i].len, false))) {
			j->index = SIZE_MAX;
		}
		if (j)
			x[i].bytes = NULL;
	}
	free_extras(x, ok ? nx : 0);

	/* Each entry as it was but for its bytes: name, order, method, time,
	 * attributes, comment. */
	jinst_archive_writer *w = NULL;
	ok = ok && jinst_archive_writer_new(&w, out, &d) == 0;
	if (!ok)
		problem(R, out, "cannot create: %s", d.message);
	for (size_t k = 0; ok && k < R->n; k++) {
		job *j = &R->jobs[k];
		jinst_archive_entry e = {.name = j->name, .method = JINST_ARCHIVE_DEFLATED, .opsys = 3,
		                         .mtime = EXTRA_MTIME, .external_attributes = 0100644u << 16};
		ok = (j->index == SIZE_MAX || jinst_archive_entry_at(&e, a, j->index, &d) == 0) &&
		     jinst_archive_writer_add(w, &e, j->out ? j->out : j->in, j->out ? j->out_len : j->in_len, &d) == 0;
		if (!ok)
			problem(R, j->name, "%s", d.message);
	}
	size_t clen;
	const uint8_t *comment = jinst_archive_comment(a, &clen);
	if (ok && comment && jinst_archive_writer_set_comment(w, comment, clen, &d) != 0) {
		problem(R, out, "%s", d.message);
		ok = false;
	}
	if (ok && jinst_archive_writer_commit(w, &d) != 0) {
		problem(R, out, "%s", d.message);
	} else if (!ok) {
		jinst_archive_writer_discard(w);
	} else {
		R->stats->archives++;
		R->stats->inputs++;
		R->stats->files += R->n - R->total_classes;
	}
	jinst_archive_close(a);
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

static void mirror_end(run *R, int threads)
{
	for (int i = 0; R->arenas && i < threads; i++)
		jinst_arena_free(R->arenas[i]);
	free(R->arenas);
	jinst_pool_free(R->pool);
}

int mirror_run(const char *const *inputs, int n, const char *output, const mirror_options *o, mirror_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run R = {.o = o, .stats = stats};
	struct stat ost;
	if (!o->force && lstat(output, &ost) == 0) {
		problem(&R, output, "%s", "the output exists (--force replaces it); nothing done");
		return -1;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (jinst_pool_new(&R.pool, o->jobs > 0 ? o->jobs : cpus > 0 ? (int)cpus : 1) != 0) {
		problem(&R, output, "%s", "out of memory");
		return -1;
	}
	int threads = jinst_pool_threads(R.pool);
	R.arenas = calloc((size_t)threads, sizeof(*R.arenas));
	bool ok = R.arenas != NULL;
	for (int i = 0; ok && i < threads; i++)
		ok = jinst_arena_new(&R.arenas[i]) == 0;
	if (!ok) {
		problem(&R, output, "%s", "out of memory");
		mirror_end(&R, threads);
		return -1;
	}
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
			mirror_end(&R, threads);
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
	mirror_end(&R, threads);
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	stats->elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return 0;
}

void mirror_stats_free(mirror_stats *s)
{
	for (size_t i = 0; i < s->nskipped; i++)
		free(s->skipped[i].text);
	free(s->skipped);
	s->skipped = NULL;
	s->nskipped = 0;
}

void mirror_print_summary(const mirror_options *o, const mirror_stats *s)
{
	printf("%zu archives, %zu files; %zu classes: %zu %s, %zu unchanged, %zu skipped, %zu failed; "
	       "%zu warnings; %.2f s\n",
	       s->archives, s->files, s->classes, s->counts[MIRROR_CHANGED], o->changed, s->counts[MIRROR_UNCHANGED],
	       s->counts[MIRROR_SKIPPED], s->counts[MIRROR_FAILED], s->warnings, s->elapsed);
	for (size_t i = 0; i < s->nskipped; i++)
		printf("  %zu skipped: %s\n", s->skipped[i].count, s->skipped[i].text);
	if (s->errors)
		printf("%zu errors: outputs not written (see above)\n", s->errors);
}

int mirror_option(mirror_options *o, const char **output, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	bool takes = strcmp(a, "-o") == 0 || strcmp(a, "-j") == 0;
	if (takes && *i + 1 >= argc) {
		fprintf(stderr, "jinst %s: %s needs %s\n", o->command, a,
		        a[1] == 'o' ? "an output path (-o OUT)" : "a number of threads (-j N)");
		return -1;
	}
	if (strcmp(a, "-o") == 0) {
		*output = argv[++*i];
	} else if (strcmp(a, "-j") == 0) {
		char *end;
		long n = strtol(argv[++*i], &end, 10);
		if (*end || n < 1 || n > 1024) {
			fprintf(stderr, "jinst %s: -j takes a number of threads from 1 to 1024, not '%s'\n", o->command,
			        argv[*i]);
			return -1;
		}
		o->jobs = (int)n;
	} else if (strcmp(a, "--force") == 0) {
		o->force = true;
	} else if (strcmp(a, "--quiet") == 0) {
		o->progress = false;
	} else if (strcmp(a, "--verbose") == 0) {
		o->verbose = true;
	} else {
		return 0;
	}
	return 1;
}
