/*
 * Coverage data: the model of a coverage data file (`.cov`) and its
 * reader, writer and merge. The format is specified in
 * docs/coverage-format.md; this library is its reference.
 *
 * The model holds sessions (name, start and dump time in milliseconds since
 * the epoch) and class records. A class record is keyed by its internal
 * name and its identity (XXH64, seed 0, of the class bytes the VM gave at
 * first load: jinst_instrument_identity()), and holds its probe count and
 * either booleans (one byte per probe, 0 or 1) or hit counts (one uint64_t
 * per probe). Two records of one name with different identities (two
 * versions of a class) are kept apart, never merged.
 *
 * Names are modified UTF-8 (JVMS 4.4.7), as class files spell them, and
 * NUL-terminated (modified UTF-8 has no NUL byte); for ASCII it is plain
 * UTF-8. jinst_utf8_to_mutf8() converts anything else.
 *
 * The model is canonical: sessions in order of (start, dump, name), classes
 * in order of (name bytewise, identity), no two alike. So one model has one
 * encoding, a file that reads writes back to the same bytes, and merging is
 * commutative: merge(a, b) and merge(b, a) write the same bytes (and, for
 * records of one kind, associative: files merged in any order and grouping
 * give the same bytes).
 *
 * Merge rules (jinst_covdata_add_class, jinst_covdata_merge): booleans are
 * ORed; counts are added, saturating at UINT64_MAX; a boolean record merged
 * with a counts record gives a counts record in which each true boolean adds
 * 1 (a lower bound of the hits, nonzero exactly where either record saw a
 * hit; where several boolean records meet counts, how many of them were
 * ORed together first decides how many 1s are added, so that count, never
 * the covered or missed status, can depend on the grouping of merges; no
 * rule that keeps counts can avoid it: OR is idempotent and addition is
 * not). Records of one name and identity with different probe counts come
 * from different instrumentations of the same class and are refused
 * (JINST_EUNSUPPORTED).
 *
 * Library jinst_report. Functions return 0 or a negative JINST_E* code:
 * JINST_EMALFORMED (not a coverage file, damaged or truncated: nothing is
 * read), JINST_EUNSUPPORTED (a newer format version: nothing is read),
 * JINST_ETOOLARGE (a limit below), JINST_EINVAL (a bad argument: a name that
 * is not modified UTF-8, an unknown kind), JINST_ENOMEM, JINST_EIO,
 * JINST_ENOTFOUND (no such file). The diag, when given, says which and
 * where (its offset is the byte offset in the file).
 *
 * Pointers the accessors return are borrowed from the model and valid until
 * it next changes (add, merge into it, free). A model that changes is for
 * one thread at a time. Records added out of order are sorted in place by
 * the first reading function after the change (an accessor, find, the
 * writer, a merge from it); from then on, as for a model the reader built,
 * reading changes nothing, and several threads may read it at once.
 */
#ifndef JINST_COVDATA_H
#define JINST_COVDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jinst/classfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file's first 8 bytes, and the format version this library writes and
 * the highest it reads. */
#define JINST_COVDATA_MAGIC "\x89JCOV\r\n\x1a"
#define JINST_COVDATA_MAGIC_LEN 8
#define JINST_COVDATA_VERSION 1

/* Limits, checked on every record added and every file read. */
#define JINST_COVDATA_MAX_PROBES (1u << 24)          /* probes of one class */
#define JINST_COVDATA_MAX_NAME 65535u                  /* bytes of one name */
#define JINST_COVDATA_MAX_SIZE ((size_t)1 << 30)     /* bytes of one file */

/* The kind of a class record's probe data. */
enum {
	JINST_COVDATA_BOOLEANS = 0, /* hit or not */
	JINST_COVDATA_COUNTS = 1    /* hit counts */
};

typedef struct jinst_covdata jinst_covdata;

typedef struct jinst_covdata_session {
	const char *name; /* modified UTF-8, may be empty */
	int64_t start_ms; /* when it started recording, ms since the epoch */
	int64_t dump_ms;  /* when its data was taken */
} jinst_covdata_session;

typedef struct jinst_covdata_class {
	uint64_t identity;       /* XXH64 (seed 0) of the original class bytes */
	const char *name;        /* internal name, modified UTF-8, not empty */
	uint32_t probe_count;    /* 0 to JINST_COVDATA_MAX_PROBES */
	int kind;                /* JINST_COVDATA_BOOLEANS or JINST_COVDATA_COUNTS */
	const uint8_t *booleans; /* BOOLEANS: probe_count bytes (nonzero: hit); else NULL */
	const uint64_t *counts;  /* COUNTS: probe_count counts; else NULL */
} jinst_covdata_class;

/* Two records of one name and different identities: the identity of the
 * record already there (the first of that name) and of the other one. */
typedef void (*jinst_covdata_on_conflict)(void *ctx, const char *name, uint64_t identity,
                                          uint64_t other_identity);

/* ---- the model ----------------------------------------------------------- */

/* An empty model. */
int jinst_covdata_new(jinst_covdata **out);
void jinst_covdata_free(jinst_covdata *data); /* NULL is fine */

/* Adds a session; one equal in all three fields to a session already there
 * is not added twice. The name is copied. */
int jinst_covdata_add_session(jinst_covdata *data, const char *name, int64_t start_ms, int64_t dump_ms);

/* Adds a class record, copying its name and data (only the array its kind
 * names is read). A record of the same name and identity already there
 * takes the data by the merge rules; one of the same name and another
 * identity stays apart (and is not reported: jinst_covdata_conflicts lists
 * them). On error the model is unchanged. */
int jinst_covdata_add_class(jinst_covdata *data, const jinst_covdata_class *cls, jinst_diag *diag);

/* Merges src into dst: its sessions added, its records merged by the rules
 * above. on_conflict (may be NULL) is called for each record of src whose
 * name is in dst with other identities only. Checked before anything
 * changes: on JINST_EUNSUPPORTED (probe counts differ) dst is unchanged; on
 * JINST_ENOMEM it may hold part of src. */
int jinst_covdata_merge(jinst_covdata *dst, const jinst_covdata *src, jinst_covdata_on_conflict on_conflict,
                        void *ctx, jinst_diag *diag);

/* Calls on_conflict for every name that has records of several identities:
 * once per identity after the first (in identity order). Returns how many
 * calls were made. */
size_t jinst_covdata_conflicts(const jinst_covdata *data, jinst_covdata_on_conflict on_conflict, void *ctx);

/* ---- reading the model --------------------------------------------------- */

size_t jinst_covdata_session_count(const jinst_covdata *data);
/* Session i (0 to count - 1), in canonical order; NULL past the end. */
const jinst_covdata_session *jinst_covdata_session_at(const jinst_covdata *data, size_t i);

size_t jinst_covdata_class_count(const jinst_covdata *data);
/* Record i (0 to count - 1), in canonical order; NULL past the end. */
const jinst_covdata_class *jinst_covdata_class_at(const jinst_covdata *data, size_t i);
/* The record of name and identity, or NULL. */
const jinst_covdata_class *jinst_covdata_find(const jinst_covdata *data, const char *name, uint64_t identity);

/* How many of a record's probes were hit (nonzero). */
uint32_t jinst_covdata_class_hits(const jinst_covdata_class *cls);

/* ---- bytes and files ----------------------------------------------------- */

/* True when bytes begin with the format's magic (whatever the version). */
bool jinst_covdata_is(const uint8_t *bytes, size_t len);

/* A model from the bytes of a whole file. All or nothing: a damaged,
 * truncated, newer or oversized file gives an error and no model. */
int jinst_covdata_read(jinst_covdata **out, const uint8_t *bytes, size_t len, jinst_diag *diag);
/* The same from a file (diag->where names the path). */
int jinst_covdata_read_file(jinst_covdata **out, const char *path, jinst_diag *diag);

/* The model's encoding into *out (from alloc, NULL: malloc), *len bytes. */
int jinst_covdata_write(uint8_t **out, size_t *len, const jinst_covdata *data, const jinst_allocator *alloc);
/* The model's encoding to path, atomically: written to a temporary file
 * beside it, flushed, then renamed over path, so path holds either its old
 * contents or the whole new file, never part of one. */
int jinst_covdata_write_file(const char *path, const jinst_covdata *data, jinst_diag *diag);

/* Merges data into the file at path, as an agent's append=y does: under an
 * exclusive lock (fcntl) of the file PATH.lock, which stays beside it,
 * reads path (a missing file counts as empty), merges data into it and
 * writes it back as jinst_covdata_write_file does; so processes appending
 * to one file at once each add their data and none is lost (the lock is
 * between processes: threads of one process take turns themselves). A
 * path that holds a damaged or newer file is left as it is and the error
 * returned, data written nowhere. on_conflict as jinst_covdata_merge's,
 * identity being the file's and other_identity data's. */
int jinst_covdata_append_file(const char *path, const jinst_covdata *data, jinst_covdata_on_conflict on_conflict,
                              void *ctx, jinst_diag *diag);

#ifdef __cplusplus
}
#endif

#endif
