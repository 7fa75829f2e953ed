/*
 * The writer: inputs mirrored to outputs of the same shape through a class
 * transformation, under `jinst rewrite` and `jinst instrument`.
 *
 * An input is a class file, a folder or an archive (jar, war, ear, zip:
 * mirror_jar.c). Its output has the same shape: a folder keeps its layout,
 * its links that stay inside it, every non-class file and the times of its
 * files and folders (see keep_time); an archive its entries as they were
 * (see mirror_jar.c); archives inside folders and archives are mirrored
 * too. A link in a folder that leads to a file outside is read through
 * (see gather_link). Where the output goes and how it comes into place is
 * mirror_out.c: checked before any work, written beside its place, put
 * there whole only when the run met no error.
 *
 * Per input, every class (those inside archives and nested archives too) is
 * gathered in memory as a job, the jobs are transformed by the worker pool
 * (include/jinst/util.h), one arena per pool thread, and their results are
 * read in input order, so the output bytes and everything printed are the
 * same whatever the number of threads (DESIGN.md, invariant 8). A class
 * the transformation fails on is written unchanged, with a warning: the
 * output is always complete and always runs. A file that cannot be read,
 * an archive that cannot be, or an output that cannot be written is an
 * error: nothing of the run is put in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mirror_internal.h"

static void report(run *R, const char *kind, const char *where, const char *fmt, va_list ap)
{
	/* Clear the progress bar's line first. */
	if (R->o->progress && atomic_load(&R->shown))
		fputs("\r\033[K", stderr);
	fprintf(stderr, "jinst %s: %s%s: ", R->o->command ? R->o->command : "-", kind, where);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void mirror_error(run *R, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(R, "", where, fmt, ap);
	va_end(ap);
	R->stats->errors++;
	R->failed = true;
}

void mirror_note(run *R, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(R, "note: ", where, fmt, ap);
	va_end(ap);
}

void mirror_warning(run *R, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(R, "warning: ", where, fmt, ap);
	va_end(ap);
	R->stats->warnings++;
}

char *mirror_join(const char *a, const char *b, char sep)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = malloc(n);
	if (p)
		sep ? snprintf(p, n, "%s%c%s", a, sep, b) : snprintf(p, n, "%s%s", a, b);
	return p;
}

bool mirror_is_archive_name(const char *name)
{
	static const char *const ext[] = {".jar", ".war", ".ear", ".zip"};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (n > 4 && strcasecmp(name + n - 4, ext[i]) == 0)
			return true;
	return false;
}

void mirror_free_extras(mirror_extra *x, size_t n)
{
	for (size_t i = 0; x && i < n; i++) {
		free(x[i].name);
		free(x[i].bytes);
	}
	free(x);
}

size_t mirror_add_job(run *R, char *name, uint8_t *in, size_t len, int pack)
{
	if (R->n == R->cap) {
		size_t cap = R->cap ? R->cap * 2 : 256;
		job *p = realloc(R->jobs, cap * sizeof(*p));
		if (!p) {
			free(name);
			free(in);
			return SIZE_MAX;
		}
		R->jobs = p;
		R->cap = cap;
	}
	R->jobs[R->n] = (job){.name = name, .in = in, .in_len = len, .result = MIRROR_UNCHANGED, .pack = pack};
	return R->n++;
}

/* ---- stopping ------------------------------------------------------------------------------ */

/*
 * A run stopped by SIGINT, SIGTERM or SIGHUP removes its temporary (a
 * folder output's is as large as the output: 31 MB were left by a run
 * stopped after 2 s) and the folders it made, then dies of the signal, so
 * that its parent sees what stopped it. The handler only notes the signal:
 * removing a folder tree takes opendir and malloc, which a handler may not
 * call, and the run's thread may be writing into it. The run's thread looks
 * at the note between files, entries and inputs, the workers between
 * classes, so a stop waits for one file or class at most, and the run then
 * fails as on an error. A second signal kills at once, as SIGKILL and a
 * crash do: the next run beside the output removes what those leave
 * (mirror_out.c). A signal the caller ignores (nohup) stays ignored.
 */
static atomic_int stop_signal;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction stop_saved[sizeof(stop_signals) / sizeof(stop_signals[0])];

static void on_stop(int sig)
{
	int none = 0;
	if (!atomic_compare_exchange_strong(&stop_signal, &none, sig)) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

static void catch_stops(void)
{
	struct sigaction sa = {.sa_handler = on_stop, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	atomic_store(&stop_signal, 0);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		if (sigaction(stop_signals[i], NULL, &stop_saved[i]) == 0 && stop_saved[i].sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &sa, NULL);
}

/* The caller's handlers back; a signal the run took is raised again. */
static void release_stops(void)
{
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		if (stop_saved[i].sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &stop_saved[i], NULL);
	int sig = atomic_load(&stop_signal);
	if (sig)
		raise(sig);
}

bool mirror_stopped(run *R)
{
	if (!atomic_load(&stop_signal))
		return false;
	R->failed = true;
	return true;
}

/* ---- an input ---------------------------------------------------------------------------- */

enum item_kind { ITEM_DIR, ITEM_CLASS, ITEM_JAR, ITEM_FILE, ITEM_LINK, ITEM_EXTRA };

/* One thing to write: a path relative to the input's output, and what. */
typedef struct item {
	enum item_kind kind;
	char *rel;      /* "" for the input itself */
	char *src;      /* the input file (ITEM_JAR, ITEM_FILE), the link's target (ITEM_LINK) */
	mode_t mode;
	struct timespec mtime; /* the input's, but for ITEM_LINK and ITEM_EXTRA */
	size_t job;     /* ITEM_CLASS */
	jar *jar;       /* ITEM_JAR */
	uint8_t *bytes; /* ITEM_EXTRA */
	size_t len;
} item;

typedef struct items {
	item *v;
	size_t n, cap;
} items;

/* One input on its way: gathered (its items, its classes as jobs),
 * transformed by the pool while the input before it is written, then
 * written to dest. */
typedef struct in_flight {
	run *R;
	const char *path;
	char *dest;
	items L;
	job *jobs;
	size_t n;
	size_t *order; /* the jobs the pool takes, largest first */
	bool started;  /* handed to the pool, not yet finished */
} in_flight;

/* ---- transforming ---------------------------------------------------------------- */

#define BAR 30

static void progress(run *R, size_t n)
{
	size_t done = atomic_fetch_add(&R->done, 1) + 1;
	size_t width = n ? done * BAR / n : BAR;
	size_t shown = atomic_load(&R->shown);
	/* One thread draws each step of the bar; the others go on. */
	if (width + 1 <= shown || !atomic_compare_exchange_strong(&R->shown, &shown, width + 1))
		return;
	char bar[BAR + 1];
	memset(bar, '#', width);
	memset(bar + width, '.', BAR - width);
	bar[BAR] = '\0';
	fprintf(stderr, "\r[%s] %zu/%zu classes", bar, done, n);
}

static void transform_one(void *arg, int worker, size_t i)
{
	in_flight *I = arg;
	run *R = I->R;
	job *j = &I->jobs[I->order ? I->order[i] : i];
	jinst_arena *arena = R->arenas[worker];
	if (atomic_load(&stop_signal))
		return; /* the run fails: its remaining classes are not looked at */
	jinst_arena_reset(arena);
	/* A class of an archive is inflated here too, on the worker. */
	jinst_diag d;
	if (!j->in && jinst_archive_unpack(&j->in, &j->in_len, &j->stored, 0, j->name, &d) != 0) {
		j->read_error = strdup(d.message);
		j->pack_failed = !j->read_error;
		return;
	}
	j->result = R->o->transform(R->o->ctx, arena, j->name, j->in, j->in_len, &j->out, &j->out_len, &j->message);
	if (j->result != MIRROR_CHANGED || !j->out) {
		if (j->result == MIRROR_CHANGED)
			j->result = MIRROR_UNCHANGED;
		free(j->out);
		j->out = NULL;
	}
	/* An archive's class is written from its entry as stored or from
	 * what is packed below, never from these bytes: freed now, the next
	 * class's buffer takes their place, where keeping every class of an
	 * input until it is written grew the heap by its whole size. */
	if (j->pack >= 0) {
		free(j->in);
		j->in = NULL;
	}
	/* A class of an archive is compressed here, on the worker, so the
	 * writer (one thread) only appends bytes. */
	if (j->out && j->pack >= 0) {
		j->pack_failed = jinst_archive_pack(&j->packed, j->out, j->out_len, (uint16_t)j->pack, &d) != 0;
		free(j->out);
		j->out = NULL;
	}
	if (R->o->progress)
		progress(R, I->n);
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
	if (p)
		s->skipped = p;
	char *copy = p ? strdup(why) : NULL;
	if (copy)
		s->skipped[s->nskipped++] = (mirror_reason){copy, 1};
}

typedef struct sized {
	uint64_t size;
	size_t job;
} sized;

static int by_size(const void *a, const void *b)
{
	const sized *x = a, *y = b;
	return x->size != y->size ? (x->size < y->size ? 1 : -1) : (x->job > y->job) - (x->job < y->job);
}

/* The largest classes first: the last ones taken are small, so no thread
 * waits long at the end for another to finish a large one (each input
 * ends at a barrier). Results stay in their jobs, in input order. */
static void order_jobs(in_flight *I)
{
	sized *v = I->n > 1 ? malloc(I->n * sizeof(*v)) : NULL;
	if (!v || !(I->order = malloc(I->n * sizeof(*I->order)))) {
		free(v);
		return;
	}
	for (size_t i = 0; i < I->n; i++)
		v[i] = (sized){I->jobs[i].in ? I->jobs[i].in_len : I->jobs[i].stored.size, i};
	qsort(v, I->n, sizeof(*v), by_size);
	for (size_t i = 0; i < I->n; i++)
		I->order[i] = v[i].job;
	free(v);
}

/* The input's classes handed to the pool: its other threads start on them
 * while this one goes on (writing the input before). */
static void transform_start(run *R, in_flight *I)
{
	order_jobs(I);
	atomic_store(&R->done, 0);
	atomic_store(&R->shown, 0);
	jinst_pool_start(R->pool, I->n, transform_one, I);
}

/* This thread's share of the input's classes, then what they came to. */
static void transform_finish(run *R, in_flight *I)
{
	jinst_pool_finish(R->pool);
	if (R->o->progress && atomic_load(&R->shown))
		fputs("\r\033[K", stderr);
	atomic_store(&R->shown, 0);
	for (size_t i = 0; i < I->n; i++) {
		job *j = &I->jobs[i];
		if (j->read_error)
			mirror_error(R, j->name, "%s", j->read_error);
		else if (j->pack_failed)
			mirror_error(R, j->name, "out of memory");
		R->stats->classes++;
		R->stats->counts[j->result]++;
		if (j->result == MIRROR_SKIPPED)
			count_reason(R, j->message ? j->message : "no reason given");
		if (j->result == MIRROR_FAILED)
			mirror_warning(R, j->name, "%s (copied unchanged)", j->message ? j->message : "failed");
		else if (j->message && R->o->verbose)
			printf("note %s: %s\n", j->name, j->message);
	}
}

static void free_jobs(job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(jobs[i].name);
		free(jobs[i].in);
		free(jobs[i].out);
		free(jobs[i].message);
		jinst_archive_packed_free(&jobs[i].packed);
		free(jobs[i].read_error);
	}
	free(jobs);
}

/* ---- the items of an input ----------------------------------------------------------- */


static item *add_item(run *R, items *L, enum item_kind kind, const char *rel, mode_t mode)
{
	if (L->n == L->cap) {
		size_t cap = L->cap ? L->cap * 2 : 64;
		item *p = realloc(L->v, cap * sizeof(*p));
		if (!p) {
			mirror_error(R, rel, "out of memory");
			return NULL;
		}
		L->v = p;
		L->cap = cap;
	}
	item *it = &L->v[L->n];
	*it = (item){.kind = kind, .rel = strdup(rel), .mode = mode, .job = SIZE_MAX};
	if (!it->rel) {
		mirror_error(R, rel, "out of memory");
		return NULL;
	}
	L->n++;
	return it;
}

static void free_items(items *L)
{
	for (size_t i = 0; i < L->n; i++) {
		free(L->v[i].rel);
		free(L->v[i].src);
		free(L->v[i].bytes);
		mirror_jar_free(L->v[i].jar);
	}
	free(L->v);
	*L = (items){0};
}

static bool starts_pk(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	uint8_t m[2] = {0};
	size_t got = fread(m, 1, 2, f);
	fclose(f);
	return got == 2 && m[0] == 'P' && m[1] == 'K';
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void gather_dir(run *R, items *L, const char *dir, const char *rel);

static void gather_class(run *R, items *L, const char *path, const char *rel, const struct stat *st)
{
	uint8_t *data;
	size_t len;
	jinst_diag d;
	char *name = strdup(path);
	item *it;
	if (!name || jinst_file_read(&data, &len, path, 0, &d) != 0) {
		mirror_error(R, path, "%s", name ? d.message : "out of memory");
		free(name);
	} else if ((it = add_item(R, L, ITEM_CLASS, rel, st->st_mode))) {
		it->mtime = st->st_mtim;
		if ((it->job = mirror_add_job(R, name, data, len, -1)) == SIZE_MAX)
			mirror_error(R, path, "out of memory");
	} else {
		free(name);
		free(data);
	}
}

/* Whether the link at rel (in its input) to target is one the output can
 * keep: relative, and never above the input's top however it is read
 * (rsync's test of a safe link), so that in the output it leads to the
 * output's copy of what it leads to in the input. */
static bool link_inside(const char *rel, const char *target)
{
	if (target[0] == '/')
		return false;
	long depth = 0;
	for (const char *p = rel; (p = strchr(p, '/')); p++)
		depth++;
	for (const char *p = target; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return false;
		} else if (n && !(n == 1 && p[0] == '.')) {
			depth++;
		}
		p += n + (p[n] == '/');
	}
	return true;
}

/* A link in a folder input: kept as a link when it stays inside the input
 * (it leads to what the output made of its target); else read through
 * when it leads to a file, whose content is then mirrored under the link's
 * name like any file's (a class path's jars are often links into
 * /usr/share/java, whose classes would else be missed, silently). A link
 * that leads nowhere, or to a folder outside, is kept as it is, with a
 * warning: what it leads to is not in the output. Returns true when it is
 * done with, false when *st (the target's) is to be mirrored as a file. */
static bool gather_link(run *R, items *L, const char *path, const char *rel, struct stat *st)
{
	char target[4096];
	ssize_t k = readlink(path, target, sizeof(target) - 1);
	if (k < 0) {
		mirror_error(R, path, "%s", strerror(errno));
		return true;
	}
	target[k] = '\0';
	struct stat to;
	bool leads = stat(path, &to) == 0;
	bool inside = link_inside(rel, target);
	if (leads && !inside && S_ISREG(to.st_mode)) {
		*st = to;
		return false;
	}
	if (!leads)
		mirror_warning(R, path, "a link to %s, which does not exist: kept as it is", target);
	else if (!inside && S_ISDIR(to.st_mode))
		mirror_warning(R, path, "a link to the folder %s, outside the input: kept as a link, its classes not %s",
		               target, R->o->changed ? R->o->changed : "changed");
	else if (!inside)
		mirror_warning(R, path, "a link to %s, not a file or a folder: kept as it is", target);
	item *it = add_item(R, L, ITEM_LINK, rel, st->st_mode);
	if (it && !(it->src = strdup(target)))
		mirror_error(R, path, "out of memory");
	return true;
}

/* The file or folder path (rel in the output) as an item; top marks an
 * input named on the command line. */
static void gather(run *R, items *L, const char *path, const char *rel, bool top)
{
	struct stat st;
	if ((top ? stat(path, &st) : lstat(path, &st)) != 0) {
		mirror_error(R, path, "%s", strerror(errno));
		return;
	}
	if (S_ISLNK(st.st_mode) && gather_link(R, L, path, rel, &st))
		return;
	item *it;
	if (S_ISDIR(st.st_mode)) {
		if ((it = add_item(R, L, ITEM_DIR, rel, st.st_mode))) {
			it->mtime = st.st_mtim;
			gather_dir(R, L, path, rel);
		}
	} else if (!S_ISREG(st.st_mode)) {
		mirror_warning(R, path, "not a file, a folder or a link: left out");
	} else if ((top || mirror_is_archive_name(path)) && starts_pk(path)) {
		if ((it = add_item(R, L, ITEM_JAR, rel, st.st_mode)) && !(it->src = strdup(path)))
			mirror_error(R, path, "out of memory");
		if (it)
			it->mtime = st.st_mtim;
		if (it && it->src)
			it->jar = mirror_jar_load(R, path, path, NULL, 0, 0);
	} else if (has_suffix(path, ".class")) {
		gather_class(R, L, path, rel, &st);
	} else if (top) {
		mirror_error(R, path, "not a class file, an archive or a folder");
	} else {
		if (mirror_is_archive_name(path))
			mirror_warning(R, path, "named like an archive, but not one: copied as it is");
		if ((it = add_item(R, L, ITEM_FILE, rel, st.st_mode)) && !(it->src = strdup(path)))
			mirror_error(R, path, "out of memory");
		if (it)
			it->mtime = st.st_mtim;
		R->stats->files++;
	}
}

static void gather_dir(run *R, items *L, const char *dir, const char *rel)
{
	char **names;
	size_t n;
	jinst_diag d;
	if (jinst_dir_list(&names, &n, dir, &d) != 0) {
		mirror_error(R, dir, "%s", d.message);
		return;
	}
	for (size_t i = 0; i < n && !R->failed && !mirror_stopped(R); i++) {
		/* An input that is an earlier output: the run marks its own. */
		if (!*rel && strcmp(names[i], CLI_MARK_OUTPUT) == 0)
			continue;
		char *src = mirror_join(dir, names[i], '/');
		char *sub = *rel ? mirror_join(rel, names[i], '/') : strdup(names[i]);
		if (src && sub)
			gather(R, L, src, sub, false);
		else
			mirror_error(R, dir, "out of memory");
		free(src);
		free(sub);
	}
	jinst_dir_list_free(names, n);
}

/* ---- writing ---------------------------------------------------------------------------- */

static int write_item(run *R, const item *it, const char *path, bool top)
{
	const job *j = it->job != SIZE_MAX ? &R->jobs[it->job] : NULL;
	switch (it->kind) {
	case ITEM_DIR:
		if (mkdir(path, 0777) != 0) {
			mirror_error(R, path, "cannot make the folder: %s", strerror(errno));
			return -1;
		}
		return 0;
	case ITEM_LINK:
		if (symlink(it->src, path) != 0) {
			mirror_error(R, path, "cannot make the link: %s", strerror(errno));
			return -1;
		}
		return 0;
	case ITEM_CLASS:
		return mirror_out_write(R, path, j->out ? j->out : j->in, j->out ? j->out_len : j->in_len, it->mode, top);
	case ITEM_EXTRA:
		return mirror_out_write(R, path, it->bytes, it->len, 0644, false);
	case ITEM_FILE:
		return mirror_out_copy(R, it->src, path, it->mode, top);
	case ITEM_JAR:
		break;
	}
	return -1;
}

/* An archive item, its extra entries given when it is an input. */
static int write_jar_item(run *R, const item *it, const char *path, bool top, const mirror_extra *x, size_t nx)
{
	uint8_t *bytes;
	size_t len;
	if (mirror_jar_build(R, it->jar, x, nx, &bytes, &len) != 0)
		return -1;
	int rc = bytes ? mirror_out_write(R, path, bytes, len, it->mode, top) : mirror_out_copy(R, it->src, path,
	                                                                                           it->mode, top);
	if (rc == 0)
		mirror_cp_note(R, it->src, path, mirror_jar_archive(it->jar), bytes != NULL);
	free(bytes);
	return rc;
}

/* The extra entries of the output of input, from the command's hook. */
static int get_extras(run *R, const char *input, mirror_extra **x, size_t *n)
{
	*x = NULL;
	*n = 0;
	if (!R->o->extra)
		return 0;
	if (R->o->extra(R->o->ctx, input, x, n) < 0) {
		mirror_free_extras(*x, *n);
		*x = NULL;
		*n = 0;
		mirror_error(R, input, "the entries to add to its output could not be made");
		return -1;
	}
	return 0;
}

/* A folder's extra entries, as items written last (over a file of the name). */
static void extra_items(run *R, items *L, mirror_extra *x, size_t nx)
{
	for (size_t i = 0; i < nx && !R->failed; i++) {
		if (!x[i].name[0] || x[i].name[0] == '/' || strstr(x[i].name, "..")) {
			mirror_error(R, x[i].name, "an entry to add must have a relative name inside the output");
			return;
		}
		item *it = add_item(R, L, ITEM_EXTRA, x[i].name, 0644);
		if (it) {
			it->bytes = x[i].bytes;
			it->len = x[i].len;
			x[i].bytes = NULL;
		}
	}
}

/* An archive inside a folder input gets the extra entries too: a folder
 * of jars is put on a class path jar by jar, so what the command adds
 * (the method table) must be inside each to be found. */
static void write_folder_jar(run *R, const item *it, const char *path)
{
	mirror_extra *x;
	size_t nx;
	if (get_extras(R, it->src, &x, &nx) == 0)
		write_jar_item(R, it, path, false, x, nx);
	mirror_free_extras(x, nx);
}

/* A file or folder inside a folder output keeps the time of what it was
 * made from, as an entry in an archive keeps its record: a copied
 * resource, a class changed or not, an archive. The output's top is new,
 * as an archive output is; the entries the command adds are new too. */
static void keep_time(run *R, const item *it, const char *path)
{
	if (!*it->rel || it->kind == ITEM_LINK || it->kind == ITEM_EXTRA)
		return;
	const struct timespec t[2] = {{.tv_nsec = UTIME_OMIT}, it->mtime};
	if (utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW) != 0)
		mirror_warning(R, path, "cannot keep its time: %s", strerror(errno));
}

static void write_dir(run *R, items *L, const char *dest)
{
	for (size_t i = 0; i < L->n && !R->failed && !mirror_stopped(R); i++) {
		const item *it = &L->v[i];
		char *path = *it->rel ? mirror_join(dest, it->rel, '/') : strdup(dest);
		if (!path) {
			mirror_error(R, dest, "out of memory");
			return;
		}
		if (it->kind == ITEM_EXTRA) {
			char *slash = strrchr(path, '/');
			*slash = '\0';
			if (mirror_out_mkdirs(path) != 0)
				mirror_error(R, path, "cannot make the folder: %s", strerror(errno));
			*slash = '/';
			unlink(path);
		}
		if (!R->failed && it->kind == ITEM_JAR)
			write_folder_jar(R, it, path);
		else if (!R->failed)
			write_item(R, it, path, false);
		if (!R->failed && it->kind != ITEM_DIR)
			keep_time(R, it, path);
		free(path);
	}
	/* A folder's time once nothing more is written into it. */
	for (size_t i = 0; i < L->n && !R->failed; i++) {
		const item *it = &L->v[i];
		char *path = it->kind == ITEM_DIR && *it->rel ? mirror_join(dest, it->rel, '/') : NULL;
		if (path)
			keep_time(R, it, path);
		free(path);
	}
}

/* Adds the time since *t (wall and process CPU) to phase k, and restarts it. */
static void phase(run *R, int k, struct timespec t[2])
{
	struct timespec now[2];
	clock_gettime(CLOCK_MONOTONIC, &now[0]);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now[1]);
	R->stats->wall[k] += (double)(now[0].tv_sec - t[0].tv_sec) + (double)(now[0].tv_nsec - t[0].tv_nsec) / 1e9;
	R->stats->cpu[k] += (double)(now[1].tv_sec - t[1].tv_sec) + (double)(now[1].tv_nsec - t[1].tv_nsec) / 1e9;
	t[0] = now[0];
	t[1] = now[1];
}

/* The input's items and classes: R->jobs gathers them, then I owns them. */
static void gather_input(run *R, in_flight *I)
{
	gather(R, &I->L, I->path, "", true);
	if (!R->failed && I->L.n == 0)
		mirror_error(R, I->path, "nothing to write");
	I->jobs = R->jobs;
	I->n = R->n;
	R->jobs = NULL;
	R->n = R->cap = 0;
}

/* The input, transformed, to its dest (R->jobs lends it its jobs). */
static void write_input(run *R, in_flight *I)
{
	R->jobs = I->jobs;
	R->n = I->n;
	mirror_extra *x = NULL;
	size_t nx = 0;
	items *L = &I->L;
	bool archive_or_dir = L->n && (L->v[0].kind == ITEM_DIR || L->v[0].kind == ITEM_JAR);
	if (!R->failed && archive_or_dir)
		get_extras(R, I->path, &x, &nx);
	if (R->failed) {
		/* nothing to write */
	} else if (L->v[0].kind == ITEM_DIR) {
		extra_items(R, L, x, nx);
		write_dir(R, L, I->dest);
	} else if (L->v[0].kind == ITEM_JAR) {
		write_jar_item(R, &L->v[0], I->dest, true, x, nx);
	} else {
		write_item(R, &L->v[0], I->dest, true);
	}
	mirror_free_extras(x, nx);
	R->jobs = NULL;
	R->n = 0;
	if (!R->failed)
		R->stats->inputs++;
}

static void free_input(in_flight *I)
{
	free_items(&I->L);
	free_jobs(I->jobs, I->n);
	free(I->order);
	free(I->dest);
	*I = (in_flight){0};
}

/* ---- the run ------------------------------------------------------------------------------ */

static void end_run(run *R)
{
	for (int i = 0; R->arenas && i < R->threads; i++)
		jinst_arena_free(R->arenas[i]);
	free(R->arenas);
	jinst_pool_free(R->pool);
}

static int start_run(run *R)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int jobs = R->o->jobs > 0 ? R->o->jobs : cpus > 0 ? (int)cpus : 1;
	if (jinst_pool_new(&R->pool, jobs) != 0)
		return -1;
	R->threads = jinst_pool_threads(R->pool);
	R->arenas = calloc((size_t)R->threads, sizeof(*R->arenas));
	if (!R->arenas)
		return -1;
	for (int i = 0; i < R->threads; i++)
		if (jinst_arena_new(&R->arenas[i]) != 0)
			return -1;
	return 0;
}

/* Where input i's output goes under temp: temp itself for a lone input. */
static char *dest_of(run *R, const char *input, int n, const char *temp)
{
	const char *base = strrchr(input, '/');
	char *dest = n == 1 ? strdup(temp) : mirror_join(temp, base && base[1] ? base + 1 : input, '/');
	if (!dest)
		mirror_error(R, input, "out of memory");
	return dest;
}

/* The inputs in order, as a pipeline: input i is gathered while the pool
 * transforms input i - 1, and written while the pool transforms input
 * i + 1, so that reading and writing (one thread) overlap the pool's work.
 * What is printed and written is in input order whatever the threads. */
static void mirror_all(run *R, const char *const *inputs, int n, const char *temp)
{
	if (n > 1 && mkdir(temp, 0777) != 0) {
		mirror_error(R, temp, "cannot make the folder: %s", strerror(errno));
		return;
	}
	struct timespec t[2];
	clock_gettime(CLOCK_MONOTONIC, &t[0]);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t[1]);
	in_flight in[2] = {{0}, {0}};
	in_flight *prev = &in[0], *cur = &in[1];
	for (int i = 0; i <= n; i++) {
		if (i < n && !R->failed && !mirror_stopped(R)) {
			*cur = (in_flight){.R = R, .path = inputs[i]};
			if ((cur->dest = dest_of(R, inputs[i], n, temp)))
				gather_input(R, cur);
		}
		phase(R, 0, t);
		if (prev->started) {
			transform_finish(R, prev);
			prev->started = false;
		}
		phase(R, 1, t);
		if (cur->path && !R->failed) {
			transform_start(R, cur);
			cur->started = true;
		}
		if (prev->path) {
			write_input(R, prev);
			free_input(prev);
		}
		phase(R, 2, t);
		in_flight *swap = prev;
		prev = cur;
		cur = swap;
	}
	if (prev->started)
		transform_finish(R, prev);
	free_input(prev);
	free_input(cur);
}

int mirror_run(const char *const *inputs, int n, const char *output, const mirror_options *o, mirror_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	/* A zip entry's time is a local date and time without a zone; libzip
	 * reads it through mktime and writes it through localtime. In a zone
	 * with summer time, a time in the hour skipped in spring comes back an
	 * hour later; in UTC the two are exact inverses, so every time is
	 * written back as it was read. */
	setenv("TZ", "UTC0", 1);
	tzset();
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run R = {.o = o, .stats = stats};
	catch_stops();
	char *final = NULL, *temp = NULL;
	if (n < 1 || !output || !o->transform) {
		mirror_error(&R, output ? output : "-o", "no input, no output or no transformation");
	} else if (start_run(&R) != 0) {
		mirror_error(&R, output, "out of memory");
	} else if (mirror_out_prepare(&R, inputs, n, output, &final, &temp) != 0) {
		mirror_out_abandon(&R, temp); /* folders prepare made, if any */
	} else {
		R.temp = temp;
		R.final = final;
		mirror_all(&R, inputs, n, temp);
		if (!R.failed && !mirror_stopped(&R))
			mirror_out_mark(&R, temp);
		if (R.failed)
			mirror_out_abandon(&R, temp);
		else
			mirror_out_commit(&R, final, temp);
		int sig = atomic_load(&stop_signal);
		if (R.failed && sig)
			mirror_error(&R, final, "not written: stopped by %s; nothing changed",
			             sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP");
		else if (R.failed)
			mirror_error(&R, final, "not written (the errors above); nothing changed");
		else
			mirror_cp_check(&R);
	}
	mirror_cp_free(&R);
	end_run(&R);
	free(final);
	free(temp);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	stats->elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	release_stops();
	return R.failed ? -1 : 0;
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
	       s->archives, s->files, s->classes, s->counts[MIRROR_CHANGED], o->changed ? o->changed : "changed",
	       s->counts[MIRROR_UNCHANGED],
	       s->counts[MIRROR_SKIPPED], s->counts[MIRROR_FAILED], s->warnings, s->elapsed);
	for (size_t i = 0; i < s->nskipped; i++)
		printf("  %zu skipped: %s\n", s->skipped[i].count, s->skipped[i].text);
	if (o->verbose)
		printf("times: read %.2f s (CPU %.2f s), transform %.2f s (CPU %.2f s), write %.2f s (CPU %.2f s)\n",
		       s->wall[0], s->cpu[0], s->wall[1], s->cpu[1], s->wall[2], s->cpu[2]);
}

int mirror_option(mirror_options *o, const char **output, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	bool takes = strcmp(a, "-o") == 0 || strcmp(a, "-j") == 0;
	if (takes && *i + 1 >= argc) {
		fprintf(stderr, "jinst %s: %s needs %s\n", o->command ? o->command : "-", a,
		        a[1] == 'o' ? "an output path (-o OUT)" : "a number of threads (-j N)");
		return -1;
	}
	if (strcmp(a, "-o") == 0) {
		*output = argv[++*i];
	} else if (strncmp(a, "-j", 2) == 0) {
		/* -j N or -jN */
		const char *v = a[2] ? a + 2 : argv[++*i];
		char *end;
		long n = strtol(v, &end, 10);
		if (!*v || *end || n < 1 || n > 1024) {
			fprintf(stderr, "jinst %s: -j takes a number of threads from 1 to 1024, not '%s'\n",
			        o->command ? o->command : "-", v);
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
