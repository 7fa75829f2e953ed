/* What the archive layer's parts share: archive.c (reading through
 * libzip), zipdir.c (the central directory as stored), zipwrite.c (the
 * writer). Not public: include/jinst/archive.h is. */
#ifndef JINST_ARCHIVE_INTERNAL_H
#define JINST_ARCHIVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zip.h>

#include "jinst/archive.h"

/* One entry as its records lie in the archive's bytes (APPNOTE.TXT 4.3.7,
 * 4.3.9, 4.3.12): offsets from the start of the zip. A field a Zip64
 * extra field holds instead (its 32-bit field 0xFFFFFFFF) has its place
 * in that extra field recorded; 0 when the 32-bit field holds it. */
typedef struct zip_rec {
	size_t cen, cen_len;   /* the central record: 46 bytes, name, extra fields, comment */
	size_t loc, loc_len;   /* the local header: 30 bytes, name, extra fields */
	size_t desc_len;       /* the data descriptor after the data (flag bit 3), 0 without */
	uint64_t csize, usize; /* compressed and uncompressed sizes */
	uint32_t crc;
	uint16_t method, flags;
	bool wide_desc;        /* the descriptor's sizes are 8 bytes (Zip64) */
	uint16_t cen_z_usize, cen_z_csize, cen_z_loc; /* places in the central record, or 0 */
	uint16_t loc_z_usize, loc_z_csize;            /* places in the local header, or 0 */
} zip_rec;

typedef struct zipdir {
	zip_rec *recs;
	size_t count;
	bool zip64; /* the archive ends with Zip64 records */
} zipdir;

struct jinst_archive {
	zip_t *zip;
	char *name;
	uint64_t max_entry_size;
	const uint8_t *bytes; /* the zip (a .jmod's after its header) */
	size_t len;
	void *map;            /* a file's mapping, unmapped at close */
	size_t map_len;
	uint8_t *owned;       /* a file read instead of mapped */
	zipdir *dir;          /* parsed on first use */
};

/* The records of a's entries, parsed once; the same count as libzip's, or
 * JINST_EMALFORMED. Borrowed until the archive closes. */
int zipdir_get(const zipdir **out, jinst_archive *a, jinst_diag *diag);
/* Parses the central directory of the zip in bytes (name for diagnostics). */
int zipdir_parse(zipdir *out, const uint8_t *bytes, size_t len, const char *name, jinst_diag *diag);
void zipdir_free(zipdir *dir);

int archive_fail(jinst_diag *diag, int code, const char *archive, const char *entry, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}
static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)v);
	wr16(p + 2, (uint16_t)(v >> 16));
}
static inline void wr64(uint8_t *p, uint64_t v)
{
	wr32(p, (uint32_t)v);
	wr32(p + 4, (uint32_t)(v >> 32));
}

#endif
