/*
 * libFuzzer target for frame recomputation (jinst_frames_recompute: jsr/ret
 * inlining, unreachable code patching, inference, compression).
 *
 * Whatever the input, once it parses, recomputing the frames of each method
 * either fails with a negative code and a diagnostic, leaving the method as
 * it was, or succeeds; then the class writes (or fails cleanly), the output
 * parses, and recomputing its frames again and writing gives the same bytes
 * (a fixed point), unless a method was refused as malformed (see below). The
 * hierarchy answers every
 * class as a direct subclass of Object, but classes whose names hold a '$',
 * which it does not know (JINST_EHIERARCHY).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_classfile.h"
#include "jinst/classfile.h"
#include "jinst/infer.h"

static int lookup(void *ctx, const char *name, const char **super, bool *iface)
{
	(void)ctx;
	if (strchr(name, '$'))
		return JINST_EHIERARCHY;
	*super = NULL;
	*iface = false;
	return 0;
}

static const jinst_hierarchy hierarchy = {lookup, NULL};

/* Recomputes every method's frames; returns how many failed as malformed. */
static unsigned recompute_all(jinst_class *c)
{
	unsigned malformed = 0;
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		if (!a)
			continue;
		bool was_modified = a->modified;
		jinst_diag d = {0};
		int rc = jinst_frames_recompute(c, m, &hierarchy, &d);
		if (rc) {
			CHECK(rc < 0 && d.code == rc && d.message[0], "rc %d, diag code %d", rc, d.code);
			CHECK(a->modified == was_modified, "a failed recompute changed the method");
			malformed += rc == JINST_EMALFORMED;
		}
	}
	return malformed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jinst_class *c1 = NULL, *c2 = NULL;
	jinst_diag d = {0};
	if (jinst_class_parse(&c1, data, size, NULL, NULL, &d))
		return 0;
	unsigned malformed = recompute_all(c1);
	uint8_t *w1 = NULL, *w2 = NULL;
	size_t l1 = 0, l2 = 0;
	int rc = jinst_class_write(c1, NULL, &w1, &l1, &d);
	if (rc) {
		/* A lazily decoded defect elsewhere in the class. */
		CHECK(rc < 0 && d.code == rc && d.message[0], "write: rc %d", rc);
		jinst_class_free(c1);
		return 0;
	}
	rc = jinst_class_parse(&c2, w1, l1, NULL, NULL, &d);
	CHECK(rc == 0, "the output does not parse: %s", d.message);
	recompute_all(c2);
	rc = jinst_class_write(c2, NULL, &w2, &l2, &d);
	CHECK(rc == 0, "second write failed: %s", d.message);
	/* Recomputing frames that were just recomputed changes nothing: the
	 * same bytes come out (a fixed point). Not when a method was refused
	 * as malformed: its code may name a constant past the pool's end, which
	 * the entries the other methods' frames added can bring into being, so
	 * the second time it is a different method. The output must parse. */
	if (!malformed)
		CHECK(l2 == l1 && memcmp(w2, w1, l1) == 0, "recomputing again changed the class (%zu vs %zu bytes)", l2,
		      l1);
	jinst_class *c3 = NULL;
	rc = jinst_class_parse(&c3, w2, l2, NULL, NULL, &d);
	CHECK(rc == 0, "the second output does not parse: %s", d.message);
	jinst_class_free(c3);
	jinst_class_free(c2);
	jinst_class_free(c1);
	free(w2);
	free(w1);
	return 0;
}
