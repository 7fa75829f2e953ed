/*
 * Class paths: class bytes by internal name from an ordered list of jars,
 * folders, .jmod files and JDK runtime images, and the cached
 * class-hierarchy resolver over them (include/jinst/hierarchy.h). Library
 * jinst_classpath (links libzip); the class-file library knows no files.
 *
 * Threads: adding entries and freeing are for one thread; once the list is
 * built, jinst_classpath_read, the resolver and the jimage functions may be
 * called from any number of threads. A jar is read under its own mutex
 * (libzip archives are not thread-safe); a runtime image is mapped read-only
 * and read with no lock at all.
 */
#ifndef JINST_CLASSPATH_H
#define JINST_CLASSPATH_H

#include "jinst/hierarchy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jinst_classpath jinst_classpath;

int jinst_classpath_new(jinst_classpath **out);
void jinst_classpath_free(jinst_classpath *cp); /* NULL is fine */

/* Which META-INF/versions/N/ of multi-release jars to honour: the highest N
 * from release down to 9 that has the class, then the jar's base entry.
 * 0 (the default) reads base entries only. Set it before adding jars. */
void jinst_classpath_set_release(jinst_classpath *cp, int release);

/* Appends an entry; the first entry that has a class wins. The kind comes
 * from the content:
 *   a file starting with a zip header: a jar or zip (classes at pkg/Cls.class);
 *   a file starting with "JM\1\0": a .jmod (classes at classes/pkg/Cls.class);
 *   a file starting with the jimage magic 0xCAFEDADA: a runtime image (lib/modules);
 *   a folder holding lib/modules, jmods/ or jre/lib/rt.jar: a JDK home (as _add_jdk);
 *   a folder whose subfolders hold module-info.class: a module tree as
 *     `jimage extract` writes it (MODULE/pkg/Cls.class), indexed once here;
 *   any other folder: a class folder (pkg/Cls.class).
 * JINST_EIO (diag names the path) when it cannot be opened or read,
 * JINST_EUNSUPPORTED when a file is none of these. */
int jinst_classpath_add(jinst_classpath *cp, const char *path, jinst_diag *diag);
/* Each entry of a list separated by ':' (a Java class path), in order.
 * "DIR/" "*" stands for every .jar and .JAR file of DIR, in name order. */
int jinst_classpath_add_list(jinst_classpath *cp, const char *list, jinst_diag *diag);
/* The classes of a JDK: java_home/lib/modules (9+), else every
 * java_home/jmods/ *.jmod, else java_home/jre/lib/rt.jar or lib/rt.jar (8). */
int jinst_classpath_add_jdk(jinst_classpath *cp, const char *java_home, jinst_diag *diag);

/* The bytes of the class with internal name `name` ("java/lang/String"),
 * malloc'd: the caller frees *bytes. JINST_ENOTFOUND when no entry has it,
 * JINST_EIO or JINST_EUNSUPPORTED (a compressed image resource) when the
 * entry that has it cannot be read. */
int jinst_classpath_read(jinst_classpath *cp, const char *name, uint8_t **bytes, size_t *len,
                         jinst_diag *diag);

/* The class path as a class source (for a cache of one's own). */
jinst_class_source jinst_classpath_source(jinst_classpath *cp);
/* The class path's own cache (made on first use, lives as long as cp), and
 * its resolver view for jinst_frames_infer. */
int jinst_classpath_cache(jinst_classpath *cp, jinst_hierarchy_cache **cache);
int jinst_classpath_hierarchy(jinst_classpath *cp, jinst_hierarchy *out);

/* ---- the JDK runtime image (lib/modules, the jimage format) --------------- */

typedef struct jinst_jimage jinst_jimage;

int jinst_jimage_open(jinst_jimage **out, const char *path, jinst_diag *diag);
void jinst_jimage_close(jinst_jimage *image); /* NULL is fine */

/* The resource with the full name "/MODULE/pkg/Cls.class": 0 with *bytes
 * borrowed from the mapped image (valid until jinst_jimage_close),
 * JINST_ENOTFOUND, or JINST_EUNSUPPORTED for a compressed resource. */
int jinst_jimage_find(const jinst_jimage *image, const char *path, const uint8_t **bytes,
                      size_t *len, jinst_diag *diag);
/* The same resource in a malloc'd buffer (the caller frees *bytes),
 * decompressed when jlink stored it compressed (--compress=1 compact-cp,
 * --compress=2 and zip-N zip); JINST_EUNSUPPORTED for another compressor. */
int jinst_jimage_read(const jinst_jimage *image, const char *path, uint8_t **bytes, size_t *len,
                      jinst_diag *diag);
/* The module that holds package ("java/lang" -> "java.base"), borrowed, or
 * NULL when the image has no such package. */
const char *jinst_jimage_package_module(const jinst_jimage *image, const char *package);
/* Calls fn with the full name of every resource of the image, in the order
 * of its location table, until fn returns nonzero (that value is returned). */
int jinst_jimage_foreach(const jinst_jimage *image,
                         int (*fn)(void *ctx, const char *path), void *ctx);

#ifdef __cplusplus
}
#endif
#endif
