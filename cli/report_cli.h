/* jinst report's parts: the arguments, the set of classes seen, the outputs. */
#ifndef JINST_CLI_REPORT_H
#define JINST_CLI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jinst/covreport.h"

typedef struct report_args {
	const char **data, **classfiles, **sourcefiles; /* NULL-terminated, borrowed from argv */
	size_t data_count, classfile_count, sourcefile_count;
	const char *xml, *html, *csv, *lcov, *name, *encoding, *tabwith;
	unsigned long tab_width;
} report_args;

/* The class files of each name, found by a first walk. A name met with
 * several identities (a multi-release jar, a class in two versions of a
 * library) is reported from the one the data were recorded for, else from
 * the first met (one line on stderr for each other); the same class file in
 * two places is reported once. JaCoCo's CoverageBuilder stops at the second
 * version instead: jinst can tell which one ran. */
typedef struct seen_set {
	size_t count, cap;
	struct seen_entry {
		char *name;
		uint64_t chosen; /* the identity to report */
		bool has_data;   /* chosen has a data record */
		bool reported;
	} *slots;
} seen_set;

/* First walk: one class file of name and identity, where it is, and
 * whether the data hold a record of that identity. -1: out of memory. */
int seen_note(seen_set *s, const char *name, uint64_t identity, bool has_data, const char *where);
/* Second walk: true for the class file to report (once per name). */
bool seen_take(seen_set *s, const char *name, uint64_t identity);
void seen_free(seen_set *s);

/* Checks before any work that each output can be written (its folder
 * exists and is writable; --encoding is known): 0, or -1 after one line. */
int report_check_outputs(const report_args *a);
/* Writes the outputs asked for, each atomically, or the console summary. */
int report_write_outputs(const jinst_covreport *r, const report_args *a);

#endif
