/*
 * Entry data compressed and decompressed away from any archive
 * (include/jinst/archive.h), so a caller's worker threads do the
 * compression while one thread reads the directory and writes the archive.
 *
 * Inflating and the CRC go through libdeflate, in one call over the whole
 * entry (an entry is in memory anyway, and its size is known): zlib's took
 * twice libdeflate's time over the same classes (0.55 s against 0.29 s for
 * the 26,160 classes of the corpus's jars; CRC 0.043 s against 0.019 s).
 *
 * Deflating a class file goes through ISA-L's igzip at its level 0 (one
 * pass, a hash of the last positions, no Huffman code built per entry)
 * with one Huffman code made once for class files (class_histogram.h).
 * Over those 26,160 classes (104 MB) libdeflate's level 1 took 0.80 s and
 * wrote 43.2 MB; igzip's level 0 with that code about 0.3 s for 46.3 MB
 * (7% more; with igzip's own general code, 14% more than with the class
 * code); zlib's level 6, as `jar` and JaCoCo write, three times
 * libdeflate's time for 4% less. Deflating took a quarter of `jinst
 * instrument --coverage -j 1`'s CPU over the corpus's jars before. Other
 * data (a resource rewritten, a nested archive's bytes) keeps libdeflate's
 * level 1: a code made for class files would fit it badly. igzip's output
 * is the same from run to run and from thread to thread; ISA-L dispatches
 * to code for the CPU it runs on, and a CPU without SSE4.2 may get other
 * (equally valid) bytes.
 *
 * A thread's codecs are made once (a key whose destructor frees them when
 * the thread ends); the class code is shared, made on first use. Unpacking
 * trusts nothing of what the directory said: the size is checked against
 * the caller's limit before the buffer is allocated, the stream must end
 * exactly at that size (one byte of room more is offered, and taking it,
 * or wanting more, means the directory lies), and the CRC must match, as
 * jinst_archive_read checks through libzip. */
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "class_histogram.h"
#include "internal.h"

#define DEFLATE_LEVEL 1

/* A thread's compressor and decompressor, made on first use. */
typedef struct codecs {
	struct libdeflate_compressor *c;
	struct libdeflate_decompressor *d;
	uint8_t *igzip_buf; /* igzip's level 0 working memory */
} codecs;

static pthread_key_t codecs_key;
static pthread_once_t codecs_once = PTHREAD_ONCE_INIT;
static int codecs_key_rc;

static void free_codecs(void *p)
{
	codecs *k = p;
	libdeflate_free_compressor(k->c);
	libdeflate_free_decompressor(k->d);
	free(k->igzip_buf);
	free(k);
}

static void make_key(void)
{
	codecs_key_rc = pthread_key_create(&codecs_key, free_codecs);
}

/* This thread's codecs; NULL when out of memory. */
static codecs *thread_codecs(void)
{
	if (pthread_once(&codecs_once, make_key) || codecs_key_rc)
		return NULL;
	codecs *k = pthread_getspecific(codecs_key);
	if (k)
		return k;
	if (!(k = calloc(1, sizeof(*k))))
		return NULL;
	if (pthread_setspecific(codecs_key, k)) {
		free(k);
		return NULL;
	}
	return k;
}

static struct libdeflate_compressor *compressor(void)
{
	codecs *k = thread_codecs();
	if (k && !k->c)
		k->c = libdeflate_alloc_compressor(DEFLATE_LEVEL);
	return k ? k->c : NULL;
}

static struct libdeflate_decompressor *decompressor(void)
{
	codecs *k = thread_codecs();
	if (k && !k->d)
		k->d = libdeflate_alloc_decompressor();
	return k ? k->d : NULL;
}

/* The Huffman code for class files, made once from class_histogram.h;
 * NULL when ISA-L refused it (then libdeflate packs everything). */
static struct isal_hufftables class_code;
static bool class_code_ok;
static pthread_once_t class_code_once = PTHREAD_ONCE_INIT;

static void make_class_code(void)
{
	static struct isal_huff_histogram h;
	/* Every symbol gets a code: one not counted may still come. */
	for (size_t i = 0; i < ISAL_DEF_LIT_LEN_SYMBOLS; i++)
		h.lit_len_histogram[i] = (uint64_t)class_litlen_counts[i] + 1;
	for (size_t i = 0; i < ISAL_DEF_DIST_SYMBOLS; i++)
		h.dist_histogram[i] = (uint64_t)class_dist_counts[i] + 1;
	class_code_ok = isal_create_hufftables(&class_code, &h) == 0;
}

static bool is_class(const uint8_t *bytes, size_t len)
{
	return len >= 10 && bytes[0] == 0xCA && bytes[1] == 0xFE && bytes[2] == 0xBA && bytes[3] == 0xBE;
}

/* Class bytes deflated by igzip with the class code into out (room for
 * cap bytes): the length, or 0 when it did not fit or igzip is not there. */
static size_t igzip_class(const uint8_t *bytes, size_t len, uint8_t *out, size_t cap)
{
	codecs *k = thread_codecs();
	if (!k || pthread_once(&class_code_once, make_class_code) || !class_code_ok)
		return 0;
	if (!k->igzip_buf && !(k->igzip_buf = malloc(ISAL_DEF_LVL0_DEFAULT)))
		return 0;
	struct isal_zstream z;
	isal_deflate_stateless_init(&z);
	z.level = 0;
	z.level_buf = k->igzip_buf;
	z.level_buf_size = ISAL_DEF_LVL0_DEFAULT;
	z.hufftables = &class_code;
	z.gzip_flag = IGZIP_DEFLATE;
	z.end_of_stream = 1;
	z.flush = NO_FLUSH;
	z.next_in = (uint8_t *)bytes;
	z.avail_in = (uint32_t)len;
	z.next_out = out;
	z.avail_out = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
	return isal_deflate_stateless(&z) == COMP_OK ? z.total_out : 0;
}

int jinst_archive_pack(jinst_archive_packed *out, const uint8_t *bytes, size_t len, uint16_t method,
                       jinst_diag *diag)
{
	*out = (jinst_archive_packed){.size = len, .method = method};
	if (len > UINT32_MAX)
		return archive_fail(diag, JINST_ETOOLARGE, "(data)", NULL, "%zu bytes: more than a packed entry takes", len);
	out->crc = libdeflate_crc32(0, bytes, len);
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
	if (is_class(bytes, len))
		out->len = igzip_class(bytes, len, out->data, cap);
	if (!out->len)
		out->len = libdeflate_deflate_compress(c, bytes, len, out->data, cap);
	if (!out->len) {
		/* Not reachable with the bound's room, but a zero would write an
		 * entry that does not inflate. */
		jinst_archive_packed_free(out);
		return archive_fail(diag, JINST_ENOMEM, "(data)", NULL, "deflate failed");
	}
	/* The bound is the input's size and more, the data about a third of
	 * it, and packed data lives until its archive is written: the rest is
	 * given back now. */
	uint8_t *fit = realloc(out->data, out->len);
	if (fit)
		out->data = fit;
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

/* Raw inflate of s into out (room for s->size + 1 bytes): 0 with the
 * bytes made, JINST_EMALFORMED for data that is not deflate or ends before
 * its stream does, JINST_ETOOLARGE when the room is too small (the
 * directory's size is less than the data's). */
static int inflate_into(uint8_t *out, size_t room, const jinst_archive_stored *s, size_t *made)
{
	struct libdeflate_decompressor *d = decompressor();
	if (!d)
		return JINST_ENOMEM;
	*made = 0;
	switch (libdeflate_deflate_decompress(d, s->data, s->len, out, room, made)) {
	case LIBDEFLATE_SUCCESS: return 0;
	case LIBDEFLATE_INSUFFICIENT_SPACE: return JINST_ETOOLARGE;
	default: return JINST_EMALFORMED;
	}
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
	else if (rc == JINST_EMALFORMED)
		rc = archive_fail(diag, rc, name, NULL, "not deflate data, or it ends before its stream does");
	else if (rc == JINST_ETOOLARGE)
		rc = archive_fail(diag, JINST_EMALFORMED, name, NULL, "more bytes than the %zu the directory says", size);
	else if (made != size)
		rc = archive_fail(diag, JINST_EMALFORMED, name, NULL, "%zu%s bytes where the directory says %zu", made,
		                  made > size ? " or more" : "", size);
	else if (libdeflate_crc32(0, out, size) != s->crc)
		rc = archive_fail(diag, JINST_EMALFORMED, name, NULL, "CRC error");
	if (rc) {
		free(out);
		return rc;
	}
	*bytes = out;
	*len = size;
	return 0;
}
