/*
 * libFuzzer target for the class-file library.
 *
 * Whatever the input, parsing either fails with a negative code and a
 * diagnostic, or succeeds; and when it succeeds:
 *   1. the default write gives back exactly the input bytes (round trip is
 *      exact, DESIGN.md invariant 2), and parsing that output and writing it
 *      again gives the same bytes;
 *   2. the deep write (JINST_WRITE_FROM_MODEL: decode everything, encode from
 *      the model) either fails cleanly or gives bytes that parse, that a
 *      default write reproduces, and that a second deep write reproduces
 *      (decoding then encoding is a fixed point) - and writing the same class
 *      twice gives the same bytes (invariant 8, determinism).
 * The checks are always on (abort(), not assert()), so they hold in release
 * builds and in the ctest replay of the saved corpus too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_classfile.h"
#include "jinst/classfile.h"

static const char *fmt_diag(const jinst_diag *d)
{
	static char buf[512];
	jinst_diag_format(d, buf, sizeof(buf));
	return buf;
}

/* A failed call must say why: its code in the diagnostic, and a message. */
static void check_failure(int rc, const jinst_diag *d, size_t size)
{
	CHECK(rc < 0, "rc %d", rc);
	CHECK(d->code == rc, "diag code %d, rc %d", d->code, rc);
	CHECK(d->message[0] != '\0', "empty diagnostic message");
	CHECK(d->offset == JINST_NO_OFFSET || d->offset <= size, "offset %u past the input (%zu bytes)",
	      (unsigned)d->offset, size);
}

static int parse(jinst_class **cls, const uint8_t *data, size_t size, jinst_diag *d)
{
	memset(d, 0, sizeof(*d));
	return jinst_class_parse(cls, data, size, NULL, NULL, d);
}

static int write_class(jinst_class *cls, uint32_t flags, uint8_t **out, size_t *len, jinst_diag *d)
{
	jinst_write_options opts = JINST_WRITE_OPTIONS_INIT;
	opts.flags = flags;
	memset(d, 0, sizeof(*d));
	*out = NULL;
	*len = 0;
	return jinst_class_write(cls, &opts, out, len, d);
}

static void check_default_round_trip(const uint8_t *data, size_t size)
{
	jinst_class *c1 = NULL, *c2 = NULL;
	jinst_diag d;
	uint8_t *w1, *w2;
	size_t l1, l2;

	CHECK(parse(&c1, data, size, &d) == 0, "second parse of the input failed: %s", fmt_diag(&d));
	int rc = write_class(c1, 0, &w1, &l1, &d);
	CHECK(rc == 0, "default write of a parsed class failed: %s", fmt_diag(&d));
	CHECK(l1 == size && memcmp(w1, data, size) == 0, "default write differs from the input (%zu vs %zu bytes)",
	      l1, size);
	CHECK(parse(&c2, w1, l1, &d) == 0, "parse of the written class failed: %s", fmt_diag(&d));
	rc = write_class(c2, 0, &w2, &l2, &d);
	CHECK(rc == 0, "second default write failed: %s", fmt_diag(&d));
	CHECK(l2 == l1 && memcmp(w2, w1, l1) == 0, "second default write differs from the first");
	jinst_class_free(c2);
	jinst_class_free(c1);
	free(w2);
	free(w1);
}

static void check_deep_round_trip(const uint8_t *data, size_t size)
{
	jinst_class *c1 = NULL, *c2 = NULL;
	jinst_diag d;
	uint8_t *w1, *w1b, *w2, *w3;
	size_t l1, l1b, l2, l3;

	CHECK(parse(&c1, data, size, &d) == 0, "parse failed: %s", fmt_diag(&d));
	int rc = write_class(c1, JINST_WRITE_FROM_MODEL, &w1, &l1, &d);
	if (rc != 0) {
		/* Lazily decoded defects show here: a clean failure is fine. */
		check_failure(rc, &d, size);
		jinst_class_free(c1);
		free(w1);
		return;
	}
	rc = write_class(c1, JINST_WRITE_FROM_MODEL, &w1b, &l1b, &d);
	CHECK(rc == 0, "second deep write of the same class failed: %s", fmt_diag(&d));
	CHECK(l1b == l1 && memcmp(w1b, w1, l1) == 0, "deep write is not deterministic");

	CHECK(parse(&c2, w1, l1, &d) == 0, "the deep write's output does not parse: %s", fmt_diag(&d));
	rc = write_class(c2, 0, &w2, &l2, &d);
	CHECK(rc == 0, "default write of the deep output failed: %s", fmt_diag(&d));
	CHECK(l2 == l1 && memcmp(w2, w1, l1) == 0, "default write of the deep output differs from it");
	rc = write_class(c2, JINST_WRITE_FROM_MODEL, &w3, &l3, &d);
	CHECK(rc == 0, "deep write of the deep output failed: %s", fmt_diag(&d));
	CHECK(l3 == l1 && memcmp(w3, w1, l1) == 0, "deep write is not a fixed point (%zu vs %zu bytes)", l3, l1);

	jinst_class_free(c2);
	jinst_class_free(c1);
	free(w3);
	free(w2);
	free(w1b);
	free(w1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jinst_class *cls = NULL;
	jinst_diag d;
	int rc = parse(&cls, data, size, &d);
	if (rc != 0) {
		check_failure(rc, &d, size);
		return 0;
	}
	jinst_class_free(cls);
	check_default_round_trip(data, size);
	check_deep_round_trip(data, size);
	return 0;
}
