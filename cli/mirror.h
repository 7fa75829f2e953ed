/* Mirroring class files, folders and jars to outputs of the same shape
 * through a class transformation: the one writer of every command that
 * writes classes (`jinst rewrite`, `jinst instrument`); see mirror.c. */
#ifndef JINST_CLI_MIRROR_H
#define JINST_CLI_MIRROR_H

#include "cli.h"

enum mirror_result {
	MIRROR_CHANGED,   /* *out replaces the class */
	MIRROR_UNCHANGED, /* the transformation found nothing to change */
	MIRROR_SKIPPED,   /* left alone on purpose; *message is the reason (counted by reason) */
	MIRROR_FAILED,    /* could not be transformed: copied unchanged, *message says why (a warning) */
	MIRROR_RESULTS
};

/* Transforms one class. Called from worker threads, each with its own arena
 * (reset before every call). name is "PATH", "JAR!ENTRY" or
 * "JAR!INNER.jar!ENTRY". On MIRROR_CHANGED *out is a malloc'd class that
 * replaces the input; otherwise the input is written as it is. *message (a
 * malloc'd string, or left NULL) says why a class failed or was skipped,
 * or adds a note (printed with --verbose). */
typedef enum mirror_result (*mirror_fn)(void *ctx, jinst_arena *arena, const char *name, const uint8_t *in,
                                        size_t len, uint8_t **out, size_t *out_len, char **message);

/* An entry added to an output: a path relative to the output's root
 * ("META-INF/jinst/methods.tsv"), its bytes. Both malloc'd; the mirror
 * frees them. */
typedef struct mirror_extra {
	char *name;
	uint8_t *bytes;
	size_t len;
} mirror_extra;

/* Called once per input that is a jar or a folder, and once per archive
 * inside a folder input (a folder of jars goes on a class path jar by
 * jar), after all classes of the input (nested archives included) are
 * transformed and before the output is written; input is the input's path
 * as given, or the archive's path under it ("lib/a.jar"). Not called for
 * a lone class file, nor for archives inside archives. Hands back a malloc'd array
 * of *n entries (or NULL and 0). An entry with the name of one the input
 * has replaces it in place (its metadata kept); the others come last, in
 * the order given, deflated. A negative return fails that output. */
typedef int (*mirror_extra_fn)(void *ctx, const char *input, mirror_extra **entries, size_t *n);

typedef struct mirror_options {
	mirror_fn transform;
	void *ctx;            /* for transform and extra */
	mirror_extra_fn extra; /* NULL: nothing added */
	/* The same for each archive inside an archive (input "OUTER!INNER.jar",
	 * the name its classes' jobs start with), when it is written; NULL:
	 * nothing added. */
	mirror_extra_fn nested_extra;
	int jobs;             /* worker threads; 0: the number of processors */
	bool force;           /* replace an existing output (else it is an error, and nothing is done) */
	bool progress;        /* a progress bar on stderr (set when stderr is a terminal) */
	bool verbose;         /* print notes of classes that did not fail too */
	const char *command;  /* "rewrite", "instrument": prefixes messages */
	const char *changed;  /* the word for MIRROR_CHANGED in the summary: "rewritten", "instrumented" */
	const char *main_class_note; /* said of each changed jar with a Main-Class (how to run it), or NULL */
} mirror_options;

/* Options every writing command shares; mirror_option parses them. */
#define MIRROR_OPTIONS_INIT(cmd, word) {.command = (cmd), .changed = (word)}

/* A reason classes were skipped for, and how many. */
typedef struct mirror_reason {
	char *text;
	size_t count;
} mirror_reason;

typedef struct mirror_stats {
	size_t inputs;      /* inputs written */
	size_t archives;    /* jars written, nested ones included */
	size_t files;       /* other files copied (folders' resources, entries of jars) */
	size_t classes;
	size_t counts[MIRROR_RESULTS]; /* by enum mirror_result */
	mirror_reason *skipped;        /* MIRROR_SKIPPED by reason, in order of first appearance */
	size_t nskipped;
	size_t warnings;    /* failed classes, signatures removed, other notes of the writer */
	size_t errors;      /* problems that failed an input: nothing of it was written */
	double elapsed;     /* seconds */
	/* Per phase (reading the inputs and their directories, transforming,
	 * writing): wall and process CPU seconds; --verbose prints them. */
	double wall[3], cpu[3];
} mirror_stats;

/* Mirrors each input (class file, folder, jar) to output: one input to
 * output itself (or into it, when output is an existing folder and the
 * input a file); several inputs each under output by their own names.
 * Refuses, before any work, an output that is an input or lies inside an
 * input folder, an input inside the output, an existing output without
 * opts->force, and even with it one that is not a regular file or a
 * folder, or a folder that is neither empty nor an earlier output (a folder
 * output holds CLI_MARK_OUTPUT at its top). Each output is written beside
 * its final place and renamed into place, so a failing or killed run leaves
 * it as it was; SIGINT, SIGTERM and SIGHUP are caught while it runs: the
 * run removes what it wrote, then the signal is raised again. Per-class
 * failures print "warning: NAME: REASON" on stderr; file problems go to
 * stderr and are counted in errors. Returns 0 when the output was put in
 * place, -1 when it was not (refused, or an error: nothing changed). */
int mirror_run(const char *const *inputs, int n, const char *output, const mirror_options *opts,
               mirror_stats *stats);
void mirror_stats_free(mirror_stats *stats);

/* Prints the closing summary on stdout:
 *   N archives, N files; N classes: N CHANGED, N unchanged, N skipped, N failed; N warnings; T s
 * then one line per skip reason; with opts->verbose, the phases' times. */
void mirror_print_summary(const mirror_options *opts, const mirror_stats *stats);

/* Parses argv[*i] when it is one of the options every writing command takes
 * (-o OUT, -j N, --force, --quiet, --verbose), advancing *i past a value.
 * Returns 1 when it took it, 0 when it is not one of them, -1 after printing
 * a usage error (exit status 2). */
int mirror_option(mirror_options *opts, const char **output, int argc, char **argv, int *i);

#endif
