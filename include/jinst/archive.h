/*
 * Archives: jars, zips and .jmod files read and written entry by entry,
 * with everything that makes an entry what it is (name as stored, sizes,
 * compression method, time, attributes, comment, extra fields, place in
 * the central directory), so a tool can write an archive that differs from
 * its input only where it means to (DESIGN.md, invariant 8). And the walk
 * over class inputs (class files, folders, jars) that the tools share.
 * Library jinst_archive, the only code in jinst that calls libzip (to
 * read; archives are written here, with their records as stored).
 *
 * Input is untrusted: sizes are checked against limits before anything is
 * allocated, an entry's bytes are checked against its recorded size and
 * CRC, and a damaged archive is an error (JINST_EMALFORMED or JINST_EIO,
 * diag->where naming the archive or ARCHIVE!ENTRY), never a crash.
 *
 * Threads: one archive or writer is for one thread at a time; different
 * ones may be used from different threads at once.
 */
#ifndef JINST_ARCHIVE_H
#define JINST_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jinst/classfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading ------------------------------------------------------------------ */

typedef struct jinst_archive jinst_archive;

#define JINST_ARCHIVE_OPTIONS_VERSION 1
/* The largest entry read when max_entry_size is 0 (1 GiB). */
#define JINST_ARCHIVE_MAX_ENTRY_DEFAULT (UINT64_C(1) << 30)

typedef struct jinst_archive_options {
	uint32_t version;        /* JINST_ARCHIVE_OPTIONS_VERSION */
	uint64_t max_entry_size; /* uncompressed bytes jinst_archive_read allocates at most; 0: the default */
} jinst_archive_options;
#define JINST_ARCHIVE_OPTIONS_INIT {JINST_ARCHIVE_OPTIONS_VERSION, 0}

/* Compression methods (APPNOTE.TXT 4.4.5) the writer writes. */
enum { JINST_ARCHIVE_STORED = 0, JINST_ARCHIVE_DEFLATED = 8 };

/* One entry as the central directory records it. Pointers are borrowed
 * from the archive and valid until jinst_archive_close. */
typedef struct jinst_archive_entry {
	const char *name;             /* the bytes as stored, NUL-terminated; a folder ends in '/' */
	size_t index;                 /* its place in the central directory, from 0 */
	uint64_t size;                /* uncompressed */
	uint64_t compressed_size;
	uint32_t crc;
	uint16_t method;              /* JINST_ARCHIVE_STORED, _DEFLATED or another APPNOTE method */
	int64_t mtime;                /* seconds since the epoch, from the DOS date and time */
	uint8_t opsys;                /* "version made by", high byte: 0 DOS, 3 Unix */
	uint32_t external_attributes; /* Unix mode << 16 when opsys is 3 */
	const uint8_t *comment;       /* NULL when it has none */
	uint16_t comment_len;
} jinst_archive_entry;

/* Opens the archive at path, read lazily from the file. A file that starts
 * with "JM\1\0" is a .jmod: its zip starts at byte 4. opts may be NULL. */
int jinst_archive_open(jinst_archive **out, const char *path, const jinst_archive_options *opts,
                       jinst_diag *diag);
/* The same over bytes in memory (a jar nested in a jar): data is borrowed
 * and must outlive the archive; name names it in diagnostics. */
int jinst_archive_open_memory(jinst_archive **out, const uint8_t *data, size_t len, const char *name,
                              const jinst_archive_options *opts, jinst_diag *diag);
void jinst_archive_close(jinst_archive *archive); /* NULL is fine */

/* Entries in central-directory order. */
size_t jinst_archive_count(const jinst_archive *archive);
int jinst_archive_entry_at(jinst_archive_entry *out, jinst_archive *archive, size_t index, jinst_diag *diag);
/* The index of the entry named name (the bytes as stored); JINST_ENOTFOUND. */
int jinst_archive_find(size_t *index, jinst_archive *archive, const char *name);
/* The entry's uncompressed bytes, malloc'd (the caller frees *bytes).
 * JINST_ETOOLARGE past max_entry_size (before allocating), JINST_EMALFORMED
 * when the data is shorter or longer than recorded or fails its CRC. */
int jinst_archive_read(uint8_t **bytes, size_t *len, jinst_archive *archive, size_t index, jinst_diag *diag);
/* An entry's data as stored, to be unpacked away from the archive: on
 * another thread, while this one goes on reading or writing. data is
 * borrowed from the archive (valid until it closes); nothing of it is
 * checked yet. */
typedef struct jinst_archive_stored {
	const uint8_t *data;
	size_t len;    /* compressed */
	uint64_t size; /* uncompressed, as the directory says */
	uint32_t crc;
	uint16_t method;
} jinst_archive_stored;
/* Entry index as stored; JINST_EUNSUPPORTED for an encrypted one,
 * JINST_EMALFORMED when its records do not lie where the directory says. */
int jinst_archive_stored_at(jinst_archive_stored *out, jinst_archive *archive, size_t index, jinst_diag *diag);
/* The uncompressed bytes of stored, malloc'd, with the checks of
 * jinst_archive_read: JINST_ETOOLARGE past limit (0: the default) before
 * allocating, JINST_EMALFORMED when the data is shorter or longer than
 * stored->size or fails its CRC, JINST_EUNSUPPORTED for a method other
 * than stored or deflated. Touches nothing shared: any thread. name names
 * the entry in diag. */
int jinst_archive_unpack(uint8_t **bytes, size_t *len, const jinst_archive_stored *stored, uint64_t limit,
                         const char *name, jinst_diag *diag);
/* The archive comment, borrowed (NULL with 0 when there is none). */
const uint8_t *jinst_archive_comment(jinst_archive *archive, size_t *len);

/* Extra fields (APPNOTE.TXT 4.5) of an entry, from the central directory
 * or from the local header. libzip consumes and does not report the ones
 * it interprets itself (Zip64 0x0001, Info-ZIP UTF-8 names 0x7075 and
 * comments 0x6375). */
enum jinst_archive_extra_where { JINST_ARCHIVE_EXTRA_CENTRAL, JINST_ARCHIVE_EXTRA_LOCAL };
int jinst_archive_extra_count(size_t *count, jinst_archive *archive, size_t index,
                              enum jinst_archive_extra_where where, jinst_diag *diag);
/* Field i: its header id and its data, borrowed until the archive closes. */
int jinst_archive_extra(uint16_t *id, const uint8_t **data, uint16_t *len, jinst_archive *archive, size_t index,
                        size_t i, enum jinst_archive_extra_where where, jinst_diag *diag);

/* ---- writing ------------------------------------------------------------------ */

typedef struct jinst_archive_writer jinst_archive_writer;

/* A new archive that replaces path when committed: written to a new file
 * beside path and renamed into place, so a failure never leaves half an
 * archive behind. */
int jinst_archive_writer_new(jinst_archive_writer **out, const char *path, jinst_diag *diag);
/* A new archive written into memory (a jar nested in a jar, or one whose
 * file the caller writes itself); jinst_archive_writer_finish hands back
 * its bytes. name names it in diagnostics. */
int jinst_archive_writer_new_memory(jinst_archive_writer **out, const char *name, jinst_diag *diag);

/* Appends a new entry named meta->name with meta's method (stored stays
 * stored; any other method is written deflated), time, opsys, external
 * attributes and comment, and no extra field; the other fields of meta
 * are ignored. A name ending in '/' with no bytes is a folder entry
 * (stored). A name the writer holds already is JINST_EINVAL. bytes are
 * copied. */
int jinst_archive_writer_add(jinst_archive_writer *w, const jinst_archive_entry *meta, const uint8_t *bytes,
                             size_t len, jinst_diag *diag);
int jinst_archive_writer_set_comment(jinst_archive_writer *w, const uint8_t *comment, size_t len,
                                     jinst_diag *diag);

/* An entry's data made ready for a writer: compressed (or stored) with
 * its CRC and size. Packing touches nothing shared, so callers pack on
 * their worker threads and the writer only appends bytes. */
typedef struct jinst_archive_packed {
	uint8_t *data;   /* malloc'd: the bytes as the entry stores them */
	size_t len;
	uint64_t size;   /* uncompressed */
	uint32_t crc;
	uint16_t method; /* JINST_ARCHIVE_STORED or JINST_ARCHIVE_DEFLATED */
} jinst_archive_packed;
/* bytes stored or deflated (libdeflate level 1: see archive/pack.c);
 * another method is JINST_EUNSUPPORTED. */
int jinst_archive_pack(jinst_archive_packed *out, const uint8_t *bytes, size_t len, uint16_t method,
                       jinst_diag *diag);
void jinst_archive_packed_free(jinst_archive_packed *packed); /* frees data; NULL is fine */

/* Appends entry index of from as from stores it: its local header, data
 * and data descriptor, and its central record, byte for byte (name,
 * versions, flags, method, time, attributes, comment, extra fields),
 * only the offset of its local header changed. With packed, packed's
 * data replaces the entry's, and the CRC and sizes (and the method, from
 * a method other than stored or deflated) change in the same records and
 * descriptor, nothing else. A name held twice in from is copied twice, as
 * it was. JINST_ETOOLARGE when a size or offset passes 4 GiB where the
 * entry has no Zip64 field for it. Data are copied at once. */
int jinst_archive_writer_copy_packed(jinst_archive_writer *w, jinst_archive *from, size_t index,
                                     const jinst_archive_packed *packed, jinst_diag *diag);
/* The same with bytes (NULL: copied as stored) packed with the entry's
 * method (stored stays stored, any other is deflated). */
int jinst_archive_writer_copy(jinst_archive_writer *w, jinst_archive *from, size_t index, const uint8_t *bytes,
                              size_t len, jinst_diag *diag);
/* Writes a memory writer's archive, hands back its malloc'd bytes and frees
 * w, whatever the outcome. An archive with no entry is the 22 bytes of an
 * end of central directory record (with the comment). */
int jinst_archive_writer_finish(jinst_archive_writer *w, uint8_t **bytes, size_t *len, jinst_diag *diag);
/* Writes a path writer's archive (fsync'd, renamed into place) and frees
 * w, whatever the outcome. */
int jinst_archive_writer_commit(jinst_archive_writer *w, jinst_diag *diag);
/* Frees w and writes nothing. NULL is fine. */
void jinst_archive_writer_discard(jinst_archive_writer *w);

/* ---- signed jars --------------------------------------------------------------- */

/* Whether an entry is part of a jar's signature (the JAR File
 * Specification, "Signed JAR File"): META-INF/NAME.SF, .DSA, .RSA, .EC or
 * META-INF/SIG-NAME, directly in META-INF, letters in any case. */
bool jinst_archive_is_signature_file(const char *name);
/* The manifest without a signature's digests: in each section after the
 * main one, every attribute whose name ends in "-Digest" (any case) goes,
 * with its continuation lines, and a section left with only its Name goes
 * with its blank line. Every other byte stays as it is: the main section,
 * line endings (CRLF, LF or CR), other attributes, lines that are not
 * attributes. *out is malloc'd; *removed counts the attributes removed.
 * Fails only for lack of memory (JINST_ENOMEM). */
int jinst_archive_manifest_strip(uint8_t **out, size_t *out_len, size_t *removed, const uint8_t *in, size_t len,
                                 jinst_diag *diag);

/* The value of the attribute name (any case) of the manifest's main
 * section, continuation lines joined, malloc'd; JINST_ENOTFOUND when the
 * main section has none (*value NULL). A value holds no line break. */
int jinst_archive_manifest_attribute(char **value, const uint8_t *manifest, size_t len, const char *name,
                                     jinst_diag *diag);

/* ---- walking class inputs ---------------------------------------------------- */

/* One class: name is "PATH" or "JAR!ENTRY"; bytes are borrowed for the
 * call. A negative return stops the walk of the current archive. */
typedef int (*jinst_walk_class_fn)(void *ctx, const char *name, const uint8_t *bytes, size_t len);
/* A file-level problem (unreadable file, damaged jar, unreadable entry). */
typedef void (*jinst_walk_error_fn)(void *ctx, const char *name, const char *message);

/* Walks a .class file, a .jar/.zip/.jmod (by content: "PK" or "JM\1\0"),
 * or a folder (recursively, in name order, taking .class, .jar and .jmod
 * files) and calls fn for every class. When nentries > 0, only the
 * entries of a jar that entries names are taken ("p/C.class", "p/C" or
 * "p.C"). Returns the number of problems reported through err (>= 0). */
int jinst_walk(const char *path, const char *const *entries, int nentries, jinst_walk_class_fn fn,
               jinst_walk_error_fn err, void *ctx);
/* The same over every class, also inside jars nested in jars (entries
 * ending in .jar, .zip, .war or .ear, up to 8 levels deep), named
 * "OUTER!lib/inner.jar!p/C.class": what a coverage report analyzes, as
 * JaCoCo's Analyzer.analyzeAll does. */
int jinst_walk_nested(const char *path, jinst_walk_class_fn fn, jinst_walk_error_fn err, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
