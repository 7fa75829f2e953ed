/*
 * Internals of libjinst_classpath shared between its modules. Nothing
 * outside classpath/ includes this file.
 */
#ifndef JINST_CLASSPATH_INTERNAL_H
#define JINST_CLASSPATH_INTERNAL_H

#include "jinst/classpath.h"

/* Fills diag (may be NULL) and returns code. */
int jinst_classpath_fail(jinst_diag *diag, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The jimage string hash (FNV-1 style, 31 bits) with a seed: the image's
 * lookup tables are built with it, and the module-tree index reuses it. */
uint32_t jinst_jimage_hash(const char *s, size_t len, uint32_t seed);
#define JINST_JIMAGE_HASH_SEED 0x01000193u

#endif
