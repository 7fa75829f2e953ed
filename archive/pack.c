/*
 * Entry data compressed and decompressed away from any archive
 * (include/jinst/archive.h), so a caller's worker threads do the zlib
 * work while one thread reads the directory and writes the archive.
 *
 * Packing deflates at level 6, what `jar` and zlib default to (libzip
 * took 0 for 9, which was half of `jinst instrument`'s time for a few per
 * cent of size). Unpacking trusts nothing of what the directory said: the
 * size is checked against the caller's limit before the buffer is
 * allocated, the stream must end exactly at that size (one byte of room
 * more is offered, and taking it means the directory lies), and the CRC
 * must match, as jinst_archive_read checks through libzip.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"

#define DEFLATE_LEVEL 6

int jinst_archive_pack(jinst_archive_packed *out, const uint8_t *bytes, size_t len, uint16_t method,
                       jinst_diag *diag)
{
	*out = (jinst_archive_packed){.size = len, .method = method};
	if (len > UINT32_MAX)
		return archive_fail(diag, JINST_ETOOLARGE, "(data)", NULL, "%zu bytes: more than a packed entry takes", len);
	out->crc = (uint32_t)crc32(0, bytes, (uInt)len);
	if (method == JINST_ARCHIVE_STORED) {
		if (!(out->data = malloc(len ? len : 1)))
			return archive_fail(diag, JINST_ENOMEM, "(data)", NULL, "out of memory");
		if (len)
			memcpy(out->data, bytes, len);
		out->len = len;
		return 0;
	}
	if (method != JINST_ARCHIVE_DEFLATED)
		return archive_fail(diag, JINST_EUNSUPPORTED, "(data)", NULL, "compression method %u", method);
	z_stream z = {0};
	/* Raw deflate (negative window bits): zip entries carry no zlib header. */
	if (deflateInit2(&z, DEFLATE_LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return archive_fail(diag, JINST_ENOMEM, "(data)", NULL, "deflate: out of memory");
	size_t cap = deflateBound(&z, (uLong)len);
	out->data = malloc(cap ? cap : 1);
	int zr = Z_MEM_ERROR;
	if (out->data) {
		z.next_in = (Bytef *)(uintptr_t)bytes;
		z.avail_in = (uInt)len;
		z.next_out = out->data;
		z.avail_out = (uInt)cap;
		zr = deflate(&z, Z_FINISH);
	}
	out->len = z.total_out;
	deflateEnd(&z);
	if (zr != Z_STREAM_END) {
		jinst_archive_packed_free(out);
		return archive_fail(diag, JINST_ENOMEM, "(data)", NULL, "deflate failed (%d)", zr);
	}
	return 0;
}

void jinst_archive_packed_free(jinst_archive_packed *p)
{
	if (!p)
		return;
	free(p->data);
	p->data = NULL;
	p->len = 0;
}

/* Raw inflate of s into out (room for s->size + 1 bytes); the bytes made. */
static int inflate_into(uint8_t *out, size_t room, const jinst_archive_stored *s, size_t *made)
{
	z_stream z = {0};
	if (inflateInit2(&z, -15) != Z_OK)
		return JINST_ENOMEM;
	int zr = Z_OK;
	const uint8_t *in = s->data;
	size_t in_left = s->len;
	z.next_out = out;
	z.avail_out = (uInt)room;
	/* avail_in is 32 bits: feed a large entry in slices. */
	while (zr == Z_OK) {
		if (z.avail_in == 0 && in_left) {
			uInt k = in_left > UINT32_MAX ? UINT32_MAX : (uInt)in_left;
			z.next_in = (Bytef *)(uintptr_t)in;
			z.avail_in = k;
			in += k;
			in_left -= k;
		}
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr == Z_BUF_ERROR && z.avail_out > 0 && in_left == 0 && z.avail_in == 0)
			break; /* the data ends before the stream does */
		if (zr == Z_OK && z.avail_out == 0)
			break; /* more than the directory says */
	}
	*made = z.total_out;
	inflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : zr == Z_MEM_ERROR ? JINST_ENOMEM : JINST_EMALFORMED;
}

int jinst_archive_unpack(uint8_t **bytes, size_t *len, const jinst_archive_stored *s, uint64_t limit,
                         const char *name, jinst_diag *diag)
{
	*bytes = NULL;
	*len = 0;
	if (!limit)
		limit = JINST_ARCHIVE_MAX_ENTRY_DEFAULT;
	if (s->size > limit || s->size >= UINT32_MAX)
		return archive_fail(diag, JINST_ETOOLARGE, name, NULL, "%llu bytes is more than the limit of %llu",
		                    (unsigned long long)s->size, (unsigned long long)limit);
	if (s->method != JINST_ARCHIVE_STORED && s->method != JINST_ARCHIVE_DEFLATED)
		return archive_fail(diag, JINST_EUNSUPPORTED, name, NULL, "compression method %u", s->method);
	size_t size = (size_t)s->size;
	uint8_t *out = malloc(size + 1);
	if (!out)
		return archive_fail(diag, JINST_ENOMEM, name, NULL, "out of memory for %zu bytes", size);
	size_t made = s->len;
	int rc = 0;
	if (s->method == JINST_ARCHIVE_STORED) {
		if (s->len == size && size)
			memcpy(out, s->data, size);
	} else {
		rc = inflate_into(out, size + 1, s, &made);
	}
	if (rc == JINST_ENOMEM)
		rc = archive_fail(diag, rc, name, NULL, "inflate: out of memory");
	else if (rc || made != size)
		rc = archive_fail(diag, JINST_EMALFORMED, name, NULL, "%zu%s bytes where the directory says %zu", made,
		                  made > size ? " or more" : "", size);
	else if ((uint32_t)crc32(0, out, (uInt)size) != s->crc)
		rc = archive_fail(diag, JINST_EMALFORMED, name, NULL, "CRC error");
	if (rc) {
		free(out);
		return rc;
	}
	*bytes = out;
	*len = size;
	return 0;
}
