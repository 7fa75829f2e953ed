/*
 * Coverage reports: the model of `jinst report` and its writers (JaCoCo's
 * XML and CSV, LCOV tracefiles, an HTML folder, a console summary).
 *
 * Library jinst_report. The model holds plain data only (names, counters,
 * lines), so the writers need neither the class-file model nor the
 * analysis: the caller analyzes each class (include/jinst/coverage.h) and
 * adds what it found with jinst_covreport_add_class. jinst_covreport_finish
 * then groups as JaCoCo's BundleCoverageImpl does: classes by package (the
 * internal name up to its last '/'), and within a package by source file
 * (the class's SourceFile attribute; a class without one is in no source
 * file). A source file's lines add up its classes' line counters (JaCoCo's
 * SourceFileCoverageImpl); hit counts take the highest. Packages, classes,
 * source files and methods come out sorted by name (bytewise; methods keep
 * their class-file order, as JaCoCo's), so a report does not depend on the
 * order the classes were found in.
 *
 * A class file whose identity differs from the data recorded under its name
 * is added with jinst_covreport_add_mismatch: it is in no counter (JaCoCo
 * would show it missed, which it is not known to be), and every writer that
 * can hold a note names it.
 */
#ifndef JINST_COVREPORT_H
#define JINST_COVREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jinst/classfile.h"
#include "jinst/coverage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* JaCoCo's counter entities, in the order its reports list them. */
enum jinst_covreport_counter {
	JINST_CR_INSTRUCTION = 0,
	JINST_CR_BRANCH,
	JINST_CR_LINE,
	JINST_CR_COMPLEXITY,
	JINST_CR_METHOD,
	JINST_CR_CLASS,
	JINST_CR_COUNT
};
/* "INSTRUCTION", "BRANCH", ... */
const char *jinst_covreport_counter_name(enum jinst_covreport_counter c);

/* A line with code (JaCoCo's ILine): never an empty one. */
typedef struct jinst_covreport_line {
	uint32_t nr;
	jinst_counter instructions, branches;
	uint64_t hits; /* with hit counts: the highest of its instructions'; else 0 */
} jinst_covreport_line;

typedef struct jinst_covreport_method {
	char *name, *desc; /* UTF-8 */
	uint32_t line;     /* first line, 0 when unknown */
	jinst_counter counters[JINST_CR_COUNT];
	uint64_t hits;     /* with hit counts: its executions (jinst_coverage_method_result.entry_hits) */
} jinst_covreport_method;

typedef struct jinst_covreport_class {
	char *name;       /* internal name, UTF-8 */
	char *source;     /* SourceFile attribute, or NULL */
	char *super_name; /* or NULL; for the label of an anonymous class */
	char *interface0; /* first interface, or NULL */
	jinst_counter counters[JINST_CR_COUNT];
	size_t method_count;
	jinst_covreport_method *methods;
	size_t line_count;
	jinst_covreport_line *lines; /* ascending nr */
} jinst_covreport_class;

typedef struct jinst_covreport_source {
	char *name; /* the file's name, without the package path */
	jinst_counter counters[JINST_CR_COUNT];
	size_t line_count;
	jinst_covreport_line *lines;
	size_t class_count;
	size_t *classes; /* indices into the package's classes */
} jinst_covreport_source;

typedef struct jinst_covreport_package {
	char *name; /* internal form (a/b), "" for the unnamed package */
	jinst_counter counters[JINST_CR_COUNT];
	size_t class_count;
	jinst_covreport_class *classes;
	size_t source_count;
	jinst_covreport_source *sources;
} jinst_covreport_package;

typedef struct jinst_covreport_session {
	char *name;
	int64_t start_ms, dump_ms;
} jinst_covreport_session;

typedef struct jinst_covreport_mismatch {
	char *name;  /* class name, UTF-8 */
	char *where; /* the class file: PATH or JAR!ENTRY */
	uint64_t file_identity, data_identity;
} jinst_covreport_mismatch;

typedef struct jinst_covreport {
	char *name;  /* the bundle's (--name) */
	bool counts; /* some class has hit counts */
	jinst_counter counters[JINST_CR_COUNT];
	size_t session_count;
	jinst_covreport_session *sessions; /* by start, as JaCoCo's SessionInfoStore */
	size_t package_count;
	jinst_covreport_package *packages; /* after jinst_covreport_finish */
	size_t mismatch_count;
	jinst_covreport_mismatch *mismatches;
	void *internal;
} jinst_covreport;

/* ---- building ----------------------------------------------------------------- */

int jinst_covreport_new(jinst_covreport **out, const char *name);
void jinst_covreport_free(jinst_covreport *r); /* NULL is fine */
int jinst_covreport_add_session(jinst_covreport *r, const char *name, int64_t start_ms, int64_t dump_ms);
/* Adds a class: a deep copy of cls (its name, source, methods, lines); the
 * package and source-file fields of the copy are set by finish. */
int jinst_covreport_add_class(jinst_covreport *r, const jinst_covreport_class *cls);
int jinst_covreport_add_mismatch(jinst_covreport *r, const char *name, const char *where, uint64_t file_identity,
                                 uint64_t data_identity);
/* Groups, sorts and sums; call once, after the last add. */
int jinst_covreport_finish(jinst_covreport *r);

/* Fills cls from the analysis of one class (lines and methods; its
 * methods' names and descriptors from the class's pool). The strings are
 * malloc'd: release with jinst_covreport_class_clear. */
int jinst_covreport_class_from(jinst_covreport_class *cls, jinst_class *cf, const jinst_coverage_result *res,
                               jinst_diag *diag);
void jinst_covreport_class_clear(jinst_covreport_class *cls);

/* ---- names as JaCoCo's reports print them (JavaNames) -------------------- */

/* "a.b", or "default" for the unnamed package, into buf. */
void jinst_covreport_java_package(char *buf, size_t size, const char *pkg);
/* "Outer.Inner", or "Outer.new Iface() {...}" for an anonymous class. */
void jinst_covreport_java_class(char *buf, size_t size, const jinst_covreport_class *cls);

/* ---- writers (to a stream; 0 or JINST_EIO) -------------------------------- */

/* JaCoCo's XML report (report.dtd 1.1), byte for byte its formatter's. */
int jinst_covreport_write_xml(FILE *f, const jinst_covreport *r);
/* JaCoCo's CSV report: one line per class. */
int jinst_covreport_write_csv(FILE *f, const jinst_covreport *r);

/* Where a source file is: its path (found) into buf, for LCOV's SF and the
 * HTML source pages. pkg is internal ("a/b"), name the SourceFile. */
typedef bool (*jinst_covreport_locate_fn)(void *ctx, const char *pkg, const char *name, char *buf, size_t size);
/* An LCOV tracefile: a record per source file (SF, FN/FNDA/FNF/FNH, DA,
 * BRDA, BRF/BRH, LF/LH); SF is where locate finds the file, else the path
 * relative to a source root (pkg/name). locate may be NULL. */
int jinst_covreport_write_lcov(FILE *f, const jinst_covreport *r, jinst_covreport_locate_fn locate, void *ctx);
/* The console summary: classes, methods, lines, branches, instructions. */
int jinst_covreport_write_summary(FILE *f, const jinst_covreport *r);

/* The source text of pkg/name as UTF-8, malloc'd, or NULL (not found). */
typedef char *(*jinst_covreport_source_fn)(void *ctx, const char *pkg, const char *name, size_t *len);
typedef struct jinst_covreport_html_options {
	uint32_t version;   /* JINST_COVREPORT_HTML_OPTIONS_VERSION */
	unsigned tab_width; /* spaces a tab takes in source pages (JaCoCo's --tabwith); 0: 4 */
	jinst_covreport_source_fn source; /* may be NULL: source pages show lines without text */
	void *ctx;
} jinst_covreport_html_options;
#define JINST_COVREPORT_HTML_OPTIONS_VERSION 1
#define JINST_COVREPORT_HTML_OPTIONS_INIT {JINST_COVREPORT_HTML_OPTIONS_VERSION, 4, NULL, NULL}
/* The HTML report into the folder dir, which must exist and be empty:
 * index.html (packages), PKG/index.html (classes and source files),
 * PKG/CLASS.html (methods), PKG/SOURCE.html (the source, lines coloured).
 * No external asset: every page carries its style. JINST_EIO with diag. */
int jinst_covreport_write_html(const char *dir, const jinst_covreport *r, const jinst_covreport_html_options *opts,
                               jinst_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
