/* Mirroring class files, folders and jars to outputs of the same shape
 * through a class transformation (see mirror.c). */
#ifndef JINST_CLI_MIRROR_H
#define JINST_CLI_MIRROR_H

#include "cli.h"

enum mirror_result { MIRROR_CHANGED, MIRROR_UNCHANGED, MIRROR_FAILED };

/* Transforms one class. Called from worker threads, each with its own arena
 * (reset before every call). On MIRROR_CHANGED *out is a malloc'd class that
 * replaces the input; otherwise the input is written as it is. *message (a
 * malloc'd string, or left NULL) says why a class failed, or adds a note. */
typedef enum mirror_result (*mirror_fn)(void *ctx, jinst_arena *arena, const char *name, const uint8_t *in,
                                        size_t len, uint8_t **out, size_t *out_len, char **message);

typedef struct mirror_options {
	mirror_fn transform;
	void *ctx;
	int jobs;       /* worker threads */
	bool progress;  /* counts on stderr */
	bool verbose;   /* print notes of classes that did not fail too */
} mirror_options;

typedef struct mirror_stats {
	size_t classes;
	size_t counts[3];  /* by enum mirror_result */
	size_t errors;     /* files that could not be read or written */
} mirror_stats;

/* Mirrors each input (class file, folder, jar) to output: one input to
 * output itself (or into it, when output is a folder and the input a file);
 * several inputs each under output by their own names. Per-class failures
 * print "FAILED NAME: REASON" on stdout; file problems go to stderr and are
 * counted in errors. */
int mirror_run(const char *const *inputs, int n, const char *output, const mirror_options *opts, mirror_stats *stats);

#endif
