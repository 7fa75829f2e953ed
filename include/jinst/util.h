/*
 * Small services every tool on top of the libraries needs: a worker pool,
 * reading a whole file, listing a folder. Library jinst_util (pthreads, no
 * libzip); errors are the JINST_E* codes and jinst_diag of classfile.h.
 */
#ifndef JINST_UTIL_H
#define JINST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "jinst/classfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the worker pool -------------------------------------------------------- */

typedef struct jinst_pool jinst_pool;

/* One task: index in [0, n) of the current run; worker in [0, threads)
 * names the thread that runs it (0 is the caller's), so per-thread state
 * (an arena) can live in an array indexed by it. */
typedef void (*jinst_pool_fn)(void *ctx, int worker, size_t index);

/* A pool of `threads` threads counting the caller's: threads - 1 are
 * started here and wait for work until jinst_pool_free. When the system
 * refuses some of them the pool runs with fewer (jinst_pool_threads). */
int jinst_pool_new(jinst_pool **out, int threads);
void jinst_pool_free(jinst_pool *pool); /* NULL is fine */
/* The threads the pool runs tasks on, the caller's included (>= 1). */
int jinst_pool_threads(const jinst_pool *pool);
/* Calls fn(ctx, worker, i) once for every i < n; the threads take indices
 * in order through an atomic counter, the caller's thread working too.
 * Returns when every task is done. For one caller thread at a time. */
void jinst_pool_run(jinst_pool *pool, size_t n, jinst_pool_fn fn, void *ctx);
/* jinst_pool_run in two halves, so that the caller can do other work while
 * the pool's other threads start on the tasks: start publishes them and
 * returns; finish has the caller take its share and returns when all are
 * done. Every start is followed by one finish before the next start. With
 * one thread, start does nothing and finish runs them all. */
void jinst_pool_start(jinst_pool *pool, size_t n, jinst_pool_fn fn, void *ctx);
void jinst_pool_finish(jinst_pool *pool);

/* ---- errors -------------------------------------------------------------------- */

/* Fills diag (which may be NULL): code, where (a path, a class, an entry),
 * no offset, and the formatted message; returns code, so a failure is
 * one line: return jinst_diag_fail(diag, JINST_EIO, path, "...", ...). */
int jinst_diag_fail(jinst_diag *diag, int code, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* jinst_diag_fail with the arguments as a va_list, for a module's own
 * failure function. */
int jinst_diag_vfail(jinst_diag *diag, int code, const char *where, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* ---- files and folders --------------------------------------------------------- */

/* The whole file into a malloc'd buffer (the caller frees *bytes). limit,
 * when nonzero, is the largest size read: past it JINST_ETOOLARGE, checked
 * before the buffer is allocated. JINST_ENOTFOUND when path does not exist
 * or is a folder, JINST_EIO when it cannot be read; diag->where names the
 * path and diag->message says why (strerror's words). Pipes and devices are
 * read to their end. */
int jinst_file_read(uint8_t **bytes, size_t *len, const char *path, size_t limit, jinst_diag *diag);

/* The names in folder path but . and .., sorted bytewise: *names and each
 * name malloc'd (free with jinst_dir_list_free). JINST_EIO or JINST_ENOMEM,
 * diag as jinst_file_read's. */
int jinst_dir_list(char ***names, size_t *count, const char *path, jinst_diag *diag);
void jinst_dir_list_free(char **names, size_t count);

#ifdef __cplusplus
}
#endif

#endif
