/*
 * libFuzzer target for the archive layer (include/jinst/archive.h): the
 * bytes as a jar in memory, as a nested jar is read.
 *
 * Whatever the input, opening either fails with a negative code and a
 * diagnostic, or succeeds; and then every entry's metadata, bytes, extra
 * fields (central and local) and the archive comment are read, each either
 * failing cleanly or giving data within its bounds: the bytes read are as
 * many as the entry's recorded size, never more than the limit, and
 * reading the entry again gives the same bytes or the same failure
 * (determinism); its data as stored, unpacked away from the archive,
 * fail cleanly or give the bytes libzip read. Then every entry is copied
 * into a memory writer (its records as stored), as
 * stored or with the bytes read: the copy fails cleanly, or reopens with
 * every entry the writer took, and a second copy gives the same bytes.
 * The limit is small so a lying directory cannot make a run allocate
 * much. And the input itself, packed (deflated; and with a class file's
 * magic in front, which takes the class files' code), unpacks to itself.
 * Checks are always on.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_classfile.h"
#include "jinst/archive.h"

#define LIMIT (1u << 20)

static void check_extra(jinst_archive *a, size_t i, enum jinst_archive_extra_where where)
{
	size_t n;
	jinst_diag d;
	if (jinst_archive_extra_count(&n, a, i, where, &d) != 0) {
		CHECK(d.code < 0, "extra count failed without a code");
		return;
	}
	for (size_t k = 0; k < n; k++) {
		uint16_t id, len;
		const uint8_t *data;
		if (jinst_archive_extra(&id, &data, &len, a, i, k, where, &d) != 0)
			continue;
		volatile uint8_t sum = 0;
		for (uint16_t b = 0; b < len; b++)
			sum ^= data[b];
		(void)sum; /* read for the sanitizers only (clang's -Wunused-but-set-variable) */
	}
}

/* The entry as stored, unpacked away from the archive: a clean failure,
 * or (when libzip read it too) the same bytes. */
static void check_unpack(jinst_archive *a, size_t i, const uint8_t *read, size_t len)
{
	jinst_archive_stored st;
	jinst_diag d;
	int rc = jinst_archive_stored_at(&st, a, i, &d);
	if (rc) {
		CHECK(rc < 0 && d.code == rc, "stored_at %zu failed with %d, diag %d", i, rc, d.code);
		return;
	}
	uint8_t *got = NULL;
	size_t n = 0;
	rc = jinst_archive_unpack(&got, &n, &st, LIMIT, "entry", &d);
	if (rc) {
		CHECK(rc < 0 && d.code == rc && !got, "unpack %zu failed with %d, diag %d", i, rc, d.code);
		return;
	}
	CHECK(n == st.size && n <= LIMIT, "unpack %zu: %zu bytes, stored says %llu", i, n, (unsigned long long)st.size);
	if (read)
		CHECK(n == len && memcmp(got, read, n) == 0, "entry %zu: unpack and read differ", i);
	free(got);
}

/* Every entry into a memory writer, as stored or (odd entries that read)
 * with their bytes; the archive written, or a clean failure. *kept counts
 * the entries the writer took. */
static int copy_all(jinst_archive *a, uint8_t **out, size_t *out_len, size_t *kept)
{
	jinst_archive_writer *w;
	jinst_diag d;
	*kept = 0;
	CHECK(jinst_archive_writer_new_memory(&w, "copy.jar", &d) == 0, "memory writer: %s", d.message);
	size_t n = jinst_archive_count(a);
	uint8_t **held = calloc(n ? n : 1, sizeof(*held));
	for (size_t i = 0; i < n && i < 4096; i++) {
		size_t len = 0;
		if (i % 2 && jinst_archive_read(&held[i], &len, a, i, &d) != 0)
			held[i] = NULL;
		int rc = jinst_archive_writer_copy(w, a, i, held[i], len, &d);
		CHECK(rc == 0 || (rc < 0 && d.code == rc), "copy of entry %zu failed with %d, diag %d", i, rc, d.code);
		*kept += rc == 0;
	}
	int rc = jinst_archive_writer_finish(w, out, out_len, &d);
	CHECK(rc == 0 || (rc < 0 && d.code == rc && *out == NULL), "finish failed with %d, diag %d", rc, d.code);
	for (size_t i = 0; i < n; i++)
		free(held[i]);
	free(held);
	return rc;
}

/* The copy reopens with the entries the writer took, and a second copy
 * gives the same bytes (determinism). */
static void check_copy(jinst_archive *a)
{
	uint8_t *c1 = NULL, *c2 = NULL;
	size_t l1 = 0, l2 = 0, k1, k2;
	int r1 = copy_all(a, &c1, &l1, &k1);
	int r2 = copy_all(a, &c2, &l2, &k2);
	CHECK(r1 == r2 && k1 == k2, "two copies: %d then %d", r1, r2);
	if (r1 == 0) {
		CHECK(l1 == l2 && memcmp(c1, c2, l1) == 0, "two copies differ");
		jinst_archive *b;
		jinst_diag d;
		CHECK(jinst_archive_open_memory(&b, c1, l1, "copy.jar", NULL, &d) == 0, "the copy does not open: %s",
		      d.message);
		CHECK(jinst_archive_count(b) == k1, "the copy has %zu entries, %zu written", jinst_archive_count(b), k1);
		jinst_archive_close(b);
	}
	free(c1);
	free(c2);
}

/* bytes packed deflated unpack to themselves. */
static void check_pack(const uint8_t *bytes, size_t len)
{
	jinst_archive_packed p;
	jinst_diag d;
	CHECK(jinst_archive_pack(&p, bytes, len, JINST_ARCHIVE_DEFLATED, &d) == 0, "pack: %s", d.message);
	const jinst_archive_stored st = {.data = p.data, .len = p.len, .size = p.size, .crc = p.crc,
	                                 .method = JINST_ARCHIVE_DEFLATED};
	uint8_t *got = NULL;
	size_t n = 0;
	CHECK(jinst_archive_unpack(&got, &n, &st, 0, "packed", &d) == 0, "unpack what was packed: %s", d.message);
	CHECK(n == len && (!len || memcmp(got, bytes, n) == 0), "packed %zu bytes, %zu unpacked", len, n);
	free(got);
	jinst_archive_packed_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_pack(data, size);
	uint8_t *classy = malloc(size + 4);
	CHECK(classy != NULL, "out of memory");
	memcpy(classy, "\xca\xfe\xba\xbe", 4);
	if (size)
		memcpy(classy + 4, data, size);
	check_pack(classy, size + 4);
	free(classy);

	jinst_archive_options opts = JINST_ARCHIVE_OPTIONS_INIT;
	opts.max_entry_size = LIMIT;
	jinst_archive *a;
	jinst_diag d;
	int rc = jinst_archive_open_memory(&a, data, size, "fuzz.jar", &opts, &d);
	if (rc) {
		CHECK(rc < 0 && d.code == rc, "open failed with %d, diag code %d", rc, d.code);
		return 0;
	}
	size_t clen;
	const uint8_t *comment = jinst_archive_comment(a, &clen);
	CHECK((comment == NULL) == (clen == 0), "comment %p with length %zu", (const void *)comment, clen);
	size_t n = jinst_archive_count(a);
	for (size_t i = 0; i < n && i < 4096; i++) {
		jinst_archive_entry e;
		if (jinst_archive_entry_at(&e, a, i, &d) != 0)
			continue;
		CHECK(e.index == i && e.name != NULL, "entry %zu: index %zu", i, e.index);
		size_t found;
		if (jinst_archive_find(&found, a, e.name) == 0)
			CHECK(found < n, "found %zu of %zu", found, n);
		check_extra(a, i, JINST_ARCHIVE_EXTRA_CENTRAL);
		check_extra(a, i, JINST_ARCHIVE_EXTRA_LOCAL);
		uint8_t *b1 = NULL, *b2 = NULL;
		size_t l1 = 0, l2 = 0;
		jinst_diag d2;
		int r1 = jinst_archive_read(&b1, &l1, a, i, &d);
		int r2 = jinst_archive_read(&b2, &l2, a, i, &d2);
		CHECK(r1 == r2, "entry %zu read twice: %d then %d", i, r1, r2);
		if (r1 == 0) {
			CHECK(l1 == e.size && l1 <= LIMIT, "entry %zu: %zu bytes, recorded %llu", i, l1,
			      (unsigned long long)e.size);
			CHECK(l1 == l2 && memcmp(b1, b2, l1) == 0, "entry %zu: two reads differ", i);
		} else {
			CHECK(d.code == r1 && b1 == NULL, "entry %zu: failure %d with diag %d", i, r1, d.code);
		}
		check_unpack(a, i, r1 == 0 ? b1 : NULL, l1);
		free(b1);
		free(b2);
	}
	check_copy(a);
	jinst_archive_close(a);
	return 0;
}
