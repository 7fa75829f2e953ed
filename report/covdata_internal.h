/* The coverage data model's insides, shared by covdata.c (the model and
 * merge) and covdata_io.c (bytes and files). */
#ifndef JINST_COVDATA_INTERNAL_H
#define JINST_COVDATA_INTERNAL_H

#include "jinst/covdata.h"

typedef struct covdata_rec {
	jinst_covdata_class c; /* name and data owned (malloc'd) */
	size_t name_len;
} covdata_rec;

struct jinst_covdata {
	jinst_covdata_session *sessions; /* names owned */
	size_t nsessions, session_cap;
	covdata_rec *recs;
	size_t nrecs, rec_cap;
	/* Records are appended; sorted is false until the next access in
	 * order sorts them (and drops the index, whose slots name positions). */
	bool sorted;
	/* Open addressing by the name's hash only, so every record of one name
	 * sits on one probe sequence: slots hold position + 1, 0 is empty. */
	uint32_t *index;
	size_t index_cap; /* a power of two, or 0 when there is no index */
};

/* Whether name is a name the format can hold (modified UTF-8, at most
 * JINST_COVDATA_MAX_NAME bytes); its length in *len. */
bool covdata_name_ok(const char *name, size_t *len);

/* Appends a session or a record as they are (the reader, which has checked
 * order and uniqueness itself). The record takes ownership of its name and
 * data, also on failure. */
int covdata_push_session(jinst_covdata *d, char *name, int64_t start_ms, int64_t dump_ms);
int covdata_push_rec(jinst_covdata *d, const covdata_rec *rec);

/* Sorts sessions and records into canonical order if they are not. */
void covdata_sort(jinst_covdata *d);

/* The canonical orders: negative, 0 or positive. */
int covdata_session_cmp(const jinst_covdata_session *a, const jinst_covdata_session *b);
int covdata_class_cmp(const jinst_covdata_class *a, const jinst_covdata_class *b);

#endif
