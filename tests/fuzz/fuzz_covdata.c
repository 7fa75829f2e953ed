/*
 * libFuzzer target for the coverage data reader (include/jinst/covdata.h,
 * docs/coverage-format.md).
 *
 * Each input is read twice: as it is, and with its last four bytes set to
 * the CRC of the rest, so that mutations of the structure reach the end of
 * the reader instead of all stopping at the CRC. Whatever the input, a read
 * either fails with a negative code, its diagnostic and no model, or gives
 * a model; and then, the format being canonical, writing the model gives
 * back exactly the bytes read; the written bytes read again and write the
 * same (determinism); merging the model into an empty one writes the same
 * bytes; and merging it into a copy of itself keeps every record (same
 * count, same booleans; counts doubled, saturating). Checks are always on.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_classfile.h"
#include "jinst/covdata.h"

static uint32_t crc32_ref(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

static uint8_t *encode(const jinst_covdata *d, size_t *len)
{
	uint8_t *out;
	int rc = jinst_covdata_write(&out, len, d, NULL);
	CHECK(rc == 0, "a model that was read cannot be written: %d", rc);
	return out;
}

static void check_doubled(const jinst_covdata *d, const jinst_covdata *twice)
{
	CHECK(jinst_covdata_class_count(twice) == jinst_covdata_class_count(d), "merged with itself: records lost or added");
	for (size_t i = 0; i < jinst_covdata_class_count(d); i++) {
		const jinst_covdata_class *a = jinst_covdata_class_at(d, i), *b = jinst_covdata_class_at(twice, i);
		CHECK(a->identity == b->identity && !strcmp(a->name, b->name) && a->kind == b->kind &&
		          a->probe_count == b->probe_count,
		      "record %zu changed", i);
		for (uint32_t k = 0; k < a->probe_count; k++) {
			if (a->kind == JINST_COVDATA_BOOLEANS)
				CHECK(a->booleans[k] == b->booleans[k], "boolean %u of %s", k, a->name);
			else
				CHECK(b->counts[k] == (a->counts[k] > UINT64_MAX / 2 ? UINT64_MAX : a->counts[k] * 2),
				      "count %u of %s", k, a->name);
		}
	}
}

static void check_one(const uint8_t *data, size_t size)
{
	jinst_covdata *d;
	jinst_diag diag = {0};
	int rc = jinst_covdata_read(&d, data, size, &diag);
	if (rc) {
		CHECK(rc < 0 && d == NULL && diag.code == rc && diag.message[0], "a refused read: rc %d", rc);
		return;
	}
	size_t len, len2, len3;
	uint8_t *out = encode(d, &len);
	CHECK(len == size && !memcmp(out, data, size), "a file that reads does not write back to its bytes");
	jinst_covdata *back, *merged;
	CHECK(jinst_covdata_read(&back, out, len, &diag) == 0, "written bytes do not read: %s", diag.message);
	uint8_t *out2 = encode(back, &len2);
	CHECK(len2 == len && !memcmp(out2, out, len), "not deterministic");
	CHECK(jinst_covdata_new(&merged) == 0 && jinst_covdata_merge(merged, d, NULL, NULL, &diag) == 0, "merge");
	uint8_t *out3 = encode(merged, &len3);
	CHECK(len3 == len && !memcmp(out3, out, len), "merged into an empty model, different bytes");
	CHECK(jinst_covdata_merge(back, d, NULL, NULL, &diag) == 0, "merge with itself: %s", diag.message);
	check_doubled(d, back);
	CHECK(jinst_covdata_conflicts(d, NULL, NULL) < jinst_covdata_class_count(d) + 1, "conflicts");
	free(out);
	free(out2);
	free(out3);
	jinst_covdata_free(d);
	jinst_covdata_free(back);
	jinst_covdata_free(merged);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_one(data, size);
	if (size < 4 || size > (1u << 24))
		return 0;
	uint8_t *copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	uint32_t c = crc32_ref(copy, size - 4);
	copy[size - 4] = (uint8_t)(c >> 24), copy[size - 3] = (uint8_t)(c >> 16);
	copy[size - 2] = (uint8_t)(c >> 8), copy[size - 1] = (uint8_t)c;
	check_one(copy, size);
	free(copy);
	return 0;
}
