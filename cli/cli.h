/* Shared pieces of the jinst command-line tool. */
#ifndef JINST_CLI_H
#define JINST_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jinst/classfile.h"

/* ---- text output into memory ------------------------------------------------ */

typedef struct text {
	char *data;
	size_t len, cap;
} text;

void text_printf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void text_put(text *t, const char *s, size_t n);
void text_free(text *t);

/* ---- rendering a class ------------------------------------------------------------- */

enum render_mode {
	RENDER_DUMP,  /* javap -v style listing for people, with constant-pool indices */
	RENDER_CANON  /* index-free rendering of the meaning, for comparing two classes */
};

/* Renders the class into t, one element per line. Every top-level element
 * (constant, field, method, class attribute) starts an unindented line, so
 * a difference can be named by the nearest unindented line above it.
 * Returns 0 or the library's error code (diag filled). */
int render_class(jinst_class *cls, enum render_mode mode, text *t, jinst_diag *diag);

/* ---- inputs --------------------------------------------------------------------------- */

/* Classes come from jinst_walk (include/jinst/archive.h). */

/* The JDK whose classes answer last (malloc'd, or NULL when none is found):
 * JAVA_HOME, else the JDK that `java` on the PATH belongs to. */
char *cli_default_jdk(void);

/* ---- outputs ---------------------------------------------------------------------- */

/* A folder a command writes as a whole holds a marker at its top, so that a
 * later run knows it for its own and replaces it, and never replaces a
 * folder of something else (outdir.c). */
#define CLI_MARK_REPORT ".jinst-report" /* jinst report --html */
#define CLI_MARK_OUTPUT ".jinst-output" /* jinst rewrite, jinst instrument */

/* Whether the existing folder dir may be replaced by a command whose
 * folders hold marker: it is empty, or holds marker at its top. 1 yes, 0
 * no, -1 it cannot be listed (errno set). */
int cli_folder_replaceable(const char *dir, const char *marker);

int cmd_dump(int argc, char **argv);
int cmd_roundtrip(int argc, char **argv);
int cmd_hierarchy(int argc, char **argv);
int cmd_rewrite(int argc, char **argv);
int cmd_instrument(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* jinst dump of a coverage data file: -1 when path is not one (no magic,
 * and a name that does not end in .cov), else the exit status after
 * printing it or a line saying why not. */
int cli_dump_covdata(const char *path);

/* The coverage data files merge or report has read, so that one given
 * twice is not added twice. Only an input of the same bytes (the same file
 * again, or a copy: the same size and XXH64) is known to be the same data;
 * two files that share a session (a file and a merge that holds it) are
 * both read, with a line on stderr, since their other sessions differ. */
typedef struct cov_inputs {
	size_t count;
	struct cov_input {
		const char *path; /* borrowed */
		size_t size;
		uint64_t hash;
	} *items;
} cov_inputs;
struct jinst_covdata;
/* Reads path into *out for cmd ("merge", "report"): 0; 0 and *out NULL
 * when it is an input already read (a line on stderr: skipped); else the
 * error, with diag. so_far (may be NULL): the data read until now. */
int cli_covdata_read_input(cov_inputs *seen, struct jinst_covdata **out, const char *cmd, const char *path,
                           const struct jinst_covdata *so_far, jinst_diag *diag);
void cli_cov_inputs_free(cov_inputs *seen);

#endif
