/* The run of jinst instrument, shared by instrument.c (the passes, the
 * ids, the command line) and instrument_tables.c (the method tables and
 * the run's classes written beside the classes). */
#ifndef JINST_CLI_INSTRUMENT_INTERNAL_H
#define JINST_CLI_INSTRUMENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "jinst/instrument.h"
#include "mirror.h"

/* A class instrumented: where it came from (its job's name up to the first
 * '!': the jar, or the class file of a folder), its job's name whole and
 * its internal name. */
typedef struct seen {
	char *source;
	char *job;
	char *name;
} seen;

typedef struct offline {
	jinst_instrument *ins;
	bool tables;            /* trace passes: each output carries the method table */
	/* With tables and no lone class file among the inputs, ids are relative
	 * to the run (jinst_instrument_set_run_class): its key, class name and
	 * method count, all fixed before the first class. */
	bool relative;
	uint64_t key;
	char run_class[sizeof(JINST_RUN_CLASS_PREFIX) + 16];
	uint32_t count;
	_Atomic size_t written; /* method tables handed to the mirror */
	/* The classes instrumented so far, for the tables (workers add, under
	 * the lock); the ones a table names, sorted, while it is written. */
	pthread_mutex_t lock;
	seen *seen;
	size_t nseen, cap;
	bool out_of_memory;
	const char **chosen;
	size_t nchosen;
	const char *last_class; /* the class of the last row asked for, and whether it is chosen */
	bool last_chosen;
	/* Warnings of classes the writer counts as changed, printed and
	 * counted after the run (workers add, under the lock). */
	char **warnings;
	size_t nwarnings, capwarnings;
	/* The same for notes (modules met), each said once. */
	char **notes;
	size_t nnotes, capnotes;
	/* --trace=times: whether a method is timed in a class may differ
	 * between classes of one name (a multi-release jar's copies), which
	 * share its id, and the instrumenter keeps the flag of the last one
	 * instrumented. Classes of one name are instrumented in turn (the
	 * stripe of their name's lock) and each id is timed when the code of
	 * any of them times it: per id, in timed. by_class: every id by its
	 * class name, sorted, to find a class's ids. */
	bool leaves;
	uint8_t *timed;
	struct class_id {
		const char *name;
		uint32_t id;
	} *by_class;
	pthread_mutex_t stripes[64];
} offline;

/* The mirror's extra entries of an input's output: its method tables and
 * the run's classes beside its classes (mirror_options.extra). */
int offline_method_tables(void *ctx, const char *input, mirror_extra **entries, size_t *n);
/* The same for an archive inside an archive (mirror_options.nested_extra). */
int offline_nested_tables(void *ctx, const char *archive, mirror_extra **entries, size_t *n);

#endif
