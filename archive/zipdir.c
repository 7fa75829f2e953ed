/*
 * The central directory as stored (APPNOTE.TXT 4.3): where each entry's
 * records and data lie in the archive's bytes, so the writer can copy an
 * entry's headers byte for byte and change only what new data changes
 * (its CRC, sizes and offset). libzip reads the same directory for
 * everything else; it does not hand out records, and it drops the extra
 * fields it interprets (Zip64, Info-ZIP Unicode) on the way.
 *
 * The end record is found as libzip and the JDK find it: the last
 * "PK\5\6" in the final 64 KiB whose comment ends within the bytes; a
 * Zip64 locator right before it leads to the Zip64 end record, whose
 * count, size and offset then hold. Offsets are from the start of the zip,
 * as libzip reads them (a zip with bytes before it, or whose offsets are
 * shifted, does not open). Every count, length and offset is checked
 * against the bytes before it is used, an entry's records and data
 * against the start of the directory (an entry whose data runs over the
 * directory would carry a second end record into a copy); the count against the room the
 * directory has before anything is allocated. An entry with the flag of
 * a data descriptor (bit 3) has one after its data: 12 or 20 bytes
 * (Zip64: 8-byte sizes), with or without its "PK\7\8" signature, found
 * by its CRC; without one there, nothing is copied after the data.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u
#define SIG_DESCRIPTOR 0x08074b50u
#define ZIP64_EXTRA 0x0001
#define MAX32 0xffffffffu

typedef struct dirp {
	const uint8_t *b;
	size_t len;
	size_t limit; /* where the central directory starts: entries lie before it */
	const char *name;
	jinst_diag *diag;
} dirp;

#define BAD(P, ...) archive_fail((P)->diag, JINST_EMALFORMED, (P)->name, NULL, __VA_ARGS__)

/* The offset of the Zip64 extra field's data in the extra fields at
 * b[at, at + len), or 0 with *size 0 when there is none. */
static size_t find_zip64(const uint8_t *b, size_t at, size_t len, uint16_t *size)
{
	*size = 0;
	for (size_t k = 0; k + 4 <= len;) {
		uint16_t id = rd16(b + at + k), n = rd16(b + at + k + 2);
		if (k + 4 + n > len)
			return 0;
		if (id == ZIP64_EXTRA) {
			*size = n;
			return at + k + 4;
		}
		k += 4 + (size_t)n;
	}
	return 0;
}

/* A value the Zip64 field holds when its 32-bit field is 0xFFFFFFFF:
 * fields in the order of APPNOTE.TXT 4.5.3, each present only when needed.
 * *place is its offset from base (0 when the 32-bit field holds it). */
static int zip64_value(uint64_t *v, uint16_t *place, uint32_t field, const uint8_t *b, size_t z, uint16_t zsize,
                       size_t *used, size_t base)
{
	*place = 0;
	if (field != MAX32) {
		*v = field;
		return 0;
	}
	if (!z || *used + 8 > zsize)
		return -1;
	*v = rd64(b + z + *used);
	*place = (uint16_t)(z + *used - base);
	*used += 8;
	return 0;
}

static int parse_local(dirp *P, zip_rec *r, size_t i)
{
	if (r->loc > P->limit || P->limit - r->loc < 30 || rd32(P->b + r->loc) != SIG_LOCAL)
		return BAD(P, "entry %zu: no local header at %zu", i, r->loc);
	const uint8_t *l = P->b + r->loc;
	r->loc_len = 30 + (size_t)rd16(l + 26) + rd16(l + 28);
	if (P->limit - r->loc < r->loc_len)
		return BAD(P, "entry %zu: its local header runs into the central directory", i);
	uint16_t zsize;
	size_t z = find_zip64(P->b, r->loc + 30 + rd16(l + 26), rd16(l + 28), &zsize);
	/* The local Zip64 field holds both sizes (4.5.3), usize first. */
	if (z && zsize >= 16) {
		r->loc_z_usize = (uint16_t)(z - r->loc);
		r->loc_z_csize = (uint16_t)(z + 8 - r->loc);
	}
	size_t data = r->loc + r->loc_len;
	if (r->csize > P->limit - data)
		return BAD(P, "entry %zu: its %llu bytes of data run into the central directory", i,
		           (unsigned long long)r->csize);
	if (!(r->flags & 8))
		return 0;
	/* The descriptor is found by its CRC, after its signature or not; a
	 * writer that set the flag and wrote none leaves nothing to copy. */
	size_t end = data + (size_t)r->csize, room = P->limit - end;
	r->wide_desc = z || r->cen_z_usize || r->cen_z_csize;
	size_t body = 4 + (r->wide_desc ? 16u : 8u);
	if (room >= 4 + body && rd32(P->b + end) == SIG_DESCRIPTOR && rd32(P->b + end + 4) == r->crc)
		r->desc_len = 4 + body;
	else if (room >= body && rd32(P->b + end) == r->crc)
		r->desc_len = body;
	return 0;
}

static int parse_central(dirp *P, zip_rec *r, size_t at, size_t end, size_t i)
{
	if (end - at < 46 || rd32(P->b + at) != SIG_CENTRAL)
		return BAD(P, "entry %zu: no central record at %zu", i, at);
	const uint8_t *c = P->b + at;
	uint16_t nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
	r->cen = at;
	r->cen_len = 46 + (size_t)nlen + xlen + clen;
	if (end - at < r->cen_len)
		return BAD(P, "entry %zu: its central record runs past the directory", i);
	r->flags = rd16(c + 8);
	r->method = rd16(c + 10);
	r->crc = rd32(c + 16);
	uint16_t zsize;
	size_t z = find_zip64(P->b, at + 46 + nlen, xlen, &zsize), used = 0;
	uint64_t loc;
	if (zip64_value(&r->usize, &r->cen_z_usize, rd32(c + 24), P->b, z, zsize, &used, at) != 0 ||
	    zip64_value(&r->csize, &r->cen_z_csize, rd32(c + 20), P->b, z, zsize, &used, at) != 0 ||
	    zip64_value(&loc, &r->cen_z_loc, rd32(c + 42), P->b, z, zsize, &used, at) != 0)
		return BAD(P, "entry %zu: a size or offset is in a Zip64 field it lacks", i);
	if (loc > P->limit)
		return BAD(P, "entry %zu: its local header at %llu is past the central directory", i,
		           (unsigned long long)loc);
	r->loc = (size_t)loc;
	return parse_local(P, r, i);
}

/* The end record: the last signature whose comment fits. */
static int find_end(dirp *P, size_t *at)
{
	if (P->len < 22)
		return BAD(P, "%zu bytes: too short for a zip", P->len);
	for (size_t p = P->len - 22;; p--) {
		if (rd32(P->b + p) == SIG_END && P->len - p - 22 >= rd16(P->b + p + 20)) {
			*at = p;
			return 0;
		}
		if (p == 0 || P->len - 22 - p >= 65535)
			break;
	}
	return BAD(P, "no end of central directory record");
}

int zipdir_parse(zipdir *out, const uint8_t *b, size_t len, const char *name, jinst_diag *diag)
{
	*out = (zipdir){0};
	dirp P = {.b = b, .len = len, .limit = len, .name = name, .diag = diag};
	size_t e = 0;
	int rc = find_end(&P, &e);
	if (rc)
		return rc;
	uint64_t count = rd16(b + e + 10), size = rd32(b + e + 12), off = rd32(b + e + 16);
	if (e >= 20 && rd32(b + e - 20) == SIG_LOCATOR64) {
		uint64_t z = rd64(b + e - 20 + 8);
		if (z > e - 20 || e - 20 - z < 56 || rd32(b + z) != SIG_END64)
			return BAD(&P, "a Zip64 locator without its end record");
		count = rd64(b + z + 32);
		size = rd64(b + z + 40);
		off = rd64(b + z + 48);
		out->zip64 = true;
	}
	if (off > len || size > len - off)
		return BAD(&P, "the central directory (%llu bytes at %llu) runs past the end", (unsigned long long)size,
		           (unsigned long long)off);
	if (count > size / 46)
		return BAD(&P, "%llu entries cannot fit in a directory of %llu bytes", (unsigned long long)count,
		           (unsigned long long)size);
	P.limit = (size_t)off;
	out->recs = calloc(count ? (size_t)count : 1, sizeof(*out->recs));
	if (!out->recs)
		return archive_fail(diag, JINST_ENOMEM, name, NULL, "out of memory");
	size_t at = (size_t)off, end = (size_t)(off + size);
	for (size_t i = 0; i < count; i++) {
		if ((rc = parse_central(&P, &out->recs[i], at, end, i)) != 0) {
			zipdir_free(out);
			return rc;
		}
		at += out->recs[i].cen_len;
	}
	out->count = (size_t)count;
	return 0;
}

void zipdir_free(zipdir *dir)
{
	if (!dir)
		return;
	free(dir->recs);
	*dir = (zipdir){0};
}

int zipdir_get(const zipdir **out, jinst_archive *a, jinst_diag *diag)
{
	*out = NULL;
	if (!a->dir) {
		zipdir *d = calloc(1, sizeof(*d));
		if (!d)
			return archive_fail(diag, JINST_ENOMEM, a->name, NULL, "out of memory");
		int rc = zipdir_parse(d, a->bytes, a->len, a->name, diag);
		if (rc == 0 && d->count != jinst_archive_count(a))
			rc = archive_fail(diag, JINST_EMALFORMED, a->name, NULL,
			                  "libzip reads %zu entries, the directory holds %zu records",
			                  jinst_archive_count(a), d->count);
		if (rc) {
			zipdir_free(d);
			free(d);
			return rc;
		}
		a->dir = d;
	}
	*out = a->dir;
	return 0;
}

int jinst_archive_stored_at(jinst_archive_stored *out, jinst_archive *a, size_t index, jinst_diag *diag)
{
	*out = (jinst_archive_stored){0};
	const zipdir *dir;
	int rc = zipdir_get(&dir, a, diag);
	if (rc)
		return rc;
	if (index >= dir->count)
		return archive_fail(diag, JINST_EINVAL, a->name, NULL, "no entry %zu", index);
	const zip_rec *r = &dir->recs[index];
	if (r->flags & 1)
		return archive_fail(diag, JINST_EUNSUPPORTED, a->name, NULL, "entry %zu is encrypted", index);
	*out = (jinst_archive_stored){.data = a->bytes + r->loc + r->loc_len, .len = (size_t)r->csize,
	                              .size = r->usize, .crc = r->crc, .method = r->method};
	return 0;
}
