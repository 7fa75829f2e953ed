/*
 * A caching class-hierarchy resolver: answers "what is the super class of X,
 * which interfaces does it implement, is it an interface" from class bytes
 * that a caller's source hands over by internal name, and never by loading a
 * class into a VM (DESIGN.md, invariant 6).
 *
 * The source knows where bytes come from (a class path of jars and folders,
 * the JDK runtime image, a class loader's resources in the agent); this
 * module parses the bytes (jinst_class_parse), keeps a copy of the class's
 * header (names and flags) and remembers the answer, "no such class" too.
 * A program with several class loaders makes one cache per loader: a name
 * can stand for different classes in different loaders. It exposes itself as the jinst_hierarchy that
 * jinst_frames_infer takes.
 *
 * Threads: every function but _new and _free may be called from any number
 * of threads at once. The table is split in shards, each behind its own
 * mutex, and a class is read and parsed with no lock held, so one slow read
 * never stalls lookups of other classes. Two threads that miss the same
 * class at once may both read it; the first answer stored wins and the
 * other is dropped, so every caller sees one answer per name.
 */
#ifndef JINST_HIERARCHY_H
#define JINST_HIERARCHY_H

#include "jinst/infer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where class bytes come from.
 * read: 0 with the bytes of the class whose internal name is `name`
 *   ("java/lang/String"; modified UTF-8), JINST_ENOTFOUND when there is no
 *   such class, or another negative JINST_E* when it could not be read
 *   (JINST_EIO, JINST_ENOMEM...). Called with no lock held, possibly from
 *   several threads at once.
 * release: when not NULL, called once for every successful read, after the
 *   bytes are parsed (free what read allocated here). */
typedef struct jinst_class_source {
	int (*read)(void *ctx, const char *name, const uint8_t **bytes, size_t *len);
	void (*release)(void *ctx, const uint8_t *bytes, size_t len);
	void *ctx;
} jinst_class_source;

/* What the cache knows of one class. The strings are internal names in
 * modified UTF-8, NUL-terminated, owned by the cache. */
typedef struct jinst_class_info {
	const char *name;
	const char *super_name;          /* NULL for java/lang/Object and module-info */
	const char *const *interfaces;   /* the direct superinterfaces, in class-file order */
	uint16_t interface_count;
	uint16_t access_flags;           /* JINST_ACC_*; JINST_ACC_INTERFACE tells an interface */
} jinst_class_info;

typedef struct jinst_hierarchy_cache jinst_hierarchy_cache;

/* A cache over source (copied; its ctx must outlive the cache). */
int jinst_hierarchy_cache_new(jinst_hierarchy_cache **out, const jinst_class_source *source);
void jinst_hierarchy_cache_free(jinst_hierarchy_cache *cache); /* NULL is fine */

/* 0 with *info (borrowed, lives as long as the cache);
 * JINST_EHIERARCHY when the class is unknown: the source has no such class,
 *   or its bytes do not parse, or they hold another class than the name says.
 *   This answer is cached too.
 * Any other code the source returned (JINST_EIO...) is passed on and not
 * cached: a later query asks the source again.
 * diag (may be NULL) says why a query failed. */
int jinst_hierarchy_cache_query(jinst_hierarchy_cache *cache, const char *name,
                                const jinst_class_info **info, jinst_diag *diag);

/* The cache as the resolver jinst_frames_infer takes. Any failure of the
 * query is JINST_EHIERARCHY there. */
jinst_hierarchy jinst_hierarchy_cache_view(jinst_hierarchy_cache *cache);

/* Counters since the cache was made (for tests and tuning). */
typedef struct jinst_hierarchy_stats {
	uint64_t queries;    /* jinst_hierarchy_cache_query and view lookups */
	uint64_t reads;      /* calls of source.read */
	uint64_t classes;    /* answers stored: known classes */
	uint64_t unknown;    /* answers stored: unknown classes */
} jinst_hierarchy_stats;
void jinst_hierarchy_cache_stats(jinst_hierarchy_cache *cache, jinst_hierarchy_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
