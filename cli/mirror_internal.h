/* What the writer's parts share: mirror.c (the run, classes, folders),
 * mirror_out.c (where outputs are written, and how they come into place),
 * mirror_jar.c (archives). Not for the commands: they use mirror.h. */
#ifndef JINST_CLI_MIRROR_INTERNAL_H
#define JINST_CLI_MIRROR_INTERNAL_H

#include <stdatomic.h>
#include <sys/types.h>

#include "jinst/archive.h"
#include "jinst/util.h"
#include "mirror.h"

/* One class to transform. */
typedef struct job {
	char *name; /* as reported: PATH, JAR!ENTRY, JAR!INNER.jar!ENTRY */
	uint8_t *in;
	size_t in_len;
	uint8_t *out; /* malloc'd by the transformation when MIRROR_CHANGED, else NULL */
	size_t out_len;
	enum mirror_result result;
	char *message;
	int pack;                    /* a class in an archive: the method its entry is packed with; else -1 */
	jinst_archive_packed packed; /* MIRROR_CHANGED with pack: out packed by the worker (out then freed) */
	bool pack_failed;            /* out of memory packing it: the run fails */
	jinst_archive_stored stored; /* in NULL: the worker unpacks in from this first */
	char *read_error;            /* unpacking failed: why (the run fails) */
} job;

/* The thread that fsyncs outputs before the commit (mirror_sync.c). */
typedef struct mirror_syncer mirror_syncer;

typedef struct run {
	const mirror_options *o;
	mirror_stats *stats;
	job *jobs; /* the classes of the input being mirrored */
	size_t n, cap;
	jinst_pool *pool;
	jinst_arena **arenas; /* one per pool thread */
	int threads;
	_Atomic size_t done;  /* classes transformed, for the progress bar */
	_Atomic size_t shown; /* the bar's last width drawn */
	size_t total;         /* classes of all inputs */
	bool failed;          /* the run met an error: nothing is put in place */
	const char *temp, *final; /* where the output is written, where it is put */
	struct mirror_cp *cp; /* archives written, for the Class-Path check (mirror_classpath.c) */
	size_t ncp, cap_cp;
	mirror_syncer *syncer; /* fsyncs the outputs before the commit (mirror_sync.c) */
} run;

/* ---- mirror.c ---- */

/* Prints "jinst CMD: WHERE: MESSAGE" on stderr; an error fails the run. */
void mirror_error(run *R, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void mirror_warning(run *R, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A note: printed, counted nowhere. */
void mirror_note(run *R, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Whether a signal stopped the run (mirror.c's "stopping"): then the run
 * has failed, and what it was doing is to be left as soon as it may. Only
 * on the run's thread. */
bool mirror_stopped(run *R);
/* Adds a class to transform, taking name and in; its index, or SIZE_MAX
 * (out of memory: the run failed, name and in freed). pack: the method a
 * changed class is packed with on the worker thread (an archive's entry),
 * or -1. */
size_t mirror_add_job(run *R, char *name, uint8_t *in, size_t len, int pack);
bool mirror_is_archive_name(const char *name);
char *mirror_join(const char *a, const char *b, char sep);
void mirror_free_extras(mirror_extra *x, size_t n);

/* ---- mirror_out.c ---- */

/* Where the output goes, checked before any work: refuses an output that
 * is an input or lies inside an input folder, an input inside the output,
 * two inputs of one name, an existing output without force. Fills *final
 * (the path to put the output at) and *temp (beside it, named so that a
 * later run knows it for a leftover), removes leftovers of runs that died,
 * makes the output's missing folders. -1 with the reason printed. */
int mirror_out_prepare(run *R, const char *const *inputs, int n, const char *output, char **final, char **temp);
/* Puts temp in place of final (an atomic exchange when final exists, then
 * the old one removed), or removes temp and the folders prepare made when
 * the run failed. */
int mirror_out_commit(run *R, const char *final, const char *temp);
void mirror_out_abandon(run *R, const char *temp);
/* When temp is a folder: CLI_MARK_OUTPUT at its top, by which a later run
 * knows the output for its own (an existing folder is replaced only when
 * it is empty or holds it). -1 when it could not be written (the run
 * failed). */
int mirror_out_mark(run *R, const char *temp);
/* Writes bytes to path (a new file); fsync'd when sync is set, at the
 * latest by mirror_out_commit, before the rename. */
int mirror_out_write(run *R, const char *path, const uint8_t *bytes, size_t len, mode_t mode, bool sync);
/* Copies the file src to the new file dst. */
int mirror_out_copy(run *R, const char *src, const char *dst, mode_t mode, bool sync);
/* mkdir -p; 0 or -1 with errno. */
int mirror_out_mkdirs(const char *path);
/* Removes a file or a folder with all it holds. */
void mirror_out_remove(const char *path);

/* ---- mirror_sync.c ---- */
/* Hands fd, written to path, to the thread that fsyncs and closes it; -1
 * when it cannot take it (no thread, out of memory): the caller fsyncs. */
int mirror_sync_add(run *R, int fd, const char *path);
/* Waits until every file handed over is fsync'd and closed; -1 (printed:
 * the first failure) when one failed. */
int mirror_sync_wait(run *R);
/* Closes the files not yet fsync'd (the run failed). */
void mirror_sync_drop(run *R);

/* ---- mirror_classpath.c ---- */

/* Notes an archive written at path written (under R->temp): name as
 * reported, and when it changed, its manifest's Class-Path (read from a). */
void mirror_cp_note(run *R, const char *name, const char *written, jinst_archive *a, bool changed);
/* Once the output is in place: one warning per changed archive whose
 * Class-Path names jars the run did not write; the options'
 * main_class_note for each changed archive with a Main-Class. */
void mirror_cp_check(run *R);
void mirror_cp_free(run *R);

/* ---- mirror_jar.c ---- */

typedef struct jar jar;
/* Reads the archive at path (data NULL) or in data (taken: freed with the
 * jar), its classes added as jobs, its nested archives read recursively.
 * NULL after an error (the run failed). */
jar *mirror_jar_load(run *R, const char *name, const char *path, uint8_t *data, size_t len, int depth);
/* After the transformation: the archive with its changes and extra
 * entries, in *bytes (malloc'd); *bytes NULL when nothing changed (the
 * input serves as it is). -1 after an error. */
int mirror_jar_build(run *R, jar *j, const mirror_extra *x, size_t nx, uint8_t **bytes, size_t *len);
void mirror_jar_free(jar *j);
/* The archive j reads. */
jinst_archive *mirror_jar_archive(jar *j);

#endif
