/*
 * Entry data compressed and decompressed away from any archive
 * (include/jinst/archive.h), so a caller's worker threads do the
 * compression while one thread reads the directory and writes the archive.
 *
 * Packing deflates with libdeflate at level 6, in one call over the whole
 * entry (an entry is in memory anyway): zlib's deflate at its default
 * level took 63% of `jinst instrument --coverage -j 1`'s CPU over the
 * corpus's jars (perf, cpu-clock), much of it setting up a stream per
 * entry; libdeflate takes a buffer, not a stream, and its compressor is
 * made once per thread (a key whose destructor frees it when the thread
 * ends). Its output is raw deflate, as zip entries carry it, of about
 * zlib's size. Unpacking trusts nothing of what the directory said: the
 * size is checked against the caller's limit before the buffer is
 * allocated, the stream must end exactly at that size (one byte of room
 * more is offered, and taking it means the directory lies), and the CRC
 * must match, as jinst_archive_read checks through libzip.
 */
#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"

#define DEFLATE_LEVEL 6

static pthread_key_t compressor_key;
static pthread_once_t compressor_once = PTHREAD_ONCE_INIT;
static int compressor_key_rc;

static void free_compressor(void *c)
{
	libdeflate_free_compressor(c);
}

static void make_key(void)
{
	compressor_key_rc = pthread_key_create(&compressor_key, free_compressor);
}

/* This thread's compressor, made on first use; NULL when out of memory. */
static struct libdeflate_compressor *compressor(void)
{
	if (pthread_once(&compressor_once, make_key) || compressor_key_rc)
		return NULL;
	struct libdeflate_compressor *c = pthread_getspecific(compressor_key);
	if (!c && (c = libdeflate_alloc_compressor(DEFLATE_LEVEL)) && pthread_setspecific(compressor_key, c)) {
		libdeflate_free_compressor(c);
		c = NULL;
	}
	return c;
}

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
	struct libdeflate_compressor *c = compressor();
	size_t cap = c ? libdeflate_deflate_compress_bound(c, len) : 0;
	if (!c || !(out->data = malloc(cap ? cap : 1)))
		return archive_fail(diag, JINST_ENOMEM, "(data)", NULL, "deflate: out of memory");
	out->len = libdeflate_deflate_compress(c, bytes, len, out->data, cap);
	if (!out->len) {
		/* Not reachable with the bound's room, but a zero would write an
		 * entry that does not inflate. */
		jinst_archive_packed_free(out);
		return archive_fail(diag, JINST_ENOMEM, "(data)", NULL, "deflate failed");
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
