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

/* The classes already reported, by name: a second class file of the same
 * name and identity (the same class in two jars) is skipped, one of another
 * identity is an error, as in JaCoCo's CoverageBuilder. */
typedef struct seen_set {
	size_t count, cap;
	struct seen_entry { char *name; uint64_t identity; } *slots;
	bool duplicate;
} seen_set;

/* True when name was seen before (the class is not to be reported again). */
bool seen_check(seen_set *s, const char *name, uint64_t identity, const char *where);
void seen_free(seen_set *s);

/* Checks before any work that each output can be written (its folder
 * exists and is writable; --encoding is known): 0, or -1 after one line. */
int report_check_outputs(const report_args *a);
/* Writes the outputs asked for, each atomically, or the console summary. */
int report_write_outputs(const jinst_covreport *r, const report_args *a);

#endif
