/*
 * Coverage data for the report tests: for every class under PATH, the
 * probes jinst_coverage_place puts in it, set by a seeded draw (variant V:
 * 0 none, 1 all, else each probe set with probability (V % 3 + 1) / 4);
 * written as a .cov under the class's real identity, and as text for
 * JaCoCo's side (NAME PROBES as 0/1 digits).
 *
 *   cov_make [--counts] [--skip NAME] [--wrong NAME] PATH V OUT.cov OUT.txt
 *
 * --counts records hit counts (1 + NAME's hash and the probe's index mod 7
 * for a set probe); --skip leaves NAME without data; --wrong records NAME
 * under another identity (a class file changed since the run).
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup, mkdir */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/archive.h"
#include "jinst/covdata.h"
#include "jinst/coverage.h"
#include "jinst/instrument.h"

typedef struct ctx {
	bool counts;
	const char *skip, *wrong;
	int variant;
	jinst_covdata *data;
	FILE *text;
	int failures;
} ctx;

static uint64_t fnv(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
	return h;
}

/* Variant 0: none; 1: all; else a probe set with probability (v % 3 + 1) / 4,
 * from Knuth's 64-bit LCG seeded by the name and the variant. */
static void draw(uint8_t *p, const char *name, int v, uint32_t count)
{
	uint64_t x = fnv(name) + (uint64_t)v * UINT64_C(0x9E3779B97F4A7C15);
	for (uint32_t i = 0; i < count; i++) {
		x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
		p[i] = v <= 1 ? (uint8_t)v : (x >> 62) < (uint64_t)(v % 3 + 1);
	}
}

static int record(ctx *c, const char *name, uint64_t identity, uint32_t count)
{
	uint8_t *probes = calloc(count + 1, 1);
	uint64_t *counts = calloc(count + 1, sizeof *counts);
	if (!probes || !counts)
		return -1;
	draw(probes, name, c->variant, count);
	fprintf(c->text, "%s ", name);
	for (uint32_t i = 0; i < count; i++) {
		counts[i] = probes[i] ? 1 + (fnv(name) + i) % 7 : 0;
		fputc(probes[i] ? '1' : '0', c->text);
	}
	fputc('\n', c->text);
	jinst_covdata_class rec = {identity, name, count, c->counts ? JINST_COVDATA_COUNTS : JINST_COVDATA_BOOLEANS,
	                           c->counts ? NULL : probes, c->counts ? counts : NULL};
	if (c->wrong && strcmp(name, c->wrong) == 0)
		rec.identity = ~identity;
	jinst_diag diag;
	int rc = jinst_covdata_add_class(c->data, &rec, &diag);
	free(probes);
	free(counts);
	return rc;
}

static int on_class(void *p, const char *where, const uint8_t *bytes, size_t len)
{
	ctx *c = p;
	jinst_class *cls;
	jinst_diag diag;
	jinst_coverage_plan *plan;
	uint16_t nlen;
	if (jinst_class_parse(&cls, bytes, len, NULL, NULL, &diag) || jinst_coverage_place(&plan, cls, &diag)) {
		fprintf(stderr, "cov_make: %s: %s\n", where, diag.message);
		c->failures++;
		return 0;
	}
	const uint8_t *n = jinst_class_name(cls, &nlen);
	char *name = strndup((const char *)n, nlen);
	if (plan->probe_count && !(c->skip && strcmp(name, c->skip) == 0) &&
	    record(c, name, jinst_instrument_identity(bytes, len), plan->probe_count))
		c->failures++;
	free(name);
	jinst_class_free(cls);
	return 0;
}

static void on_error(void *p, const char *name, const char *message)
{
	fprintf(stderr, "cov_make: %s: %s\n", name, message);
	((ctx *)p)->failures++;
}

int main(int argc, char **argv)
{
	ctx c = {0};
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--counts") == 0)
			c.counts = true;
		else if (strcmp(argv[i], "--skip") == 0 && i + 1 < argc)
			c.skip = argv[++i];
		else if (strcmp(argv[i], "--wrong") == 0 && i + 1 < argc)
			c.wrong = argv[++i];
	}
	if (argc - i != 4) {
		fprintf(stderr, "usage: cov_make [--counts] [--skip NAME] [--wrong NAME] PATH V OUT.cov OUT.txt\n");
		return 2;
	}
	c.variant = atoi(argv[i + 1]);
	jinst_diag diag;
	if (jinst_covdata_new(&c.data) || jinst_covdata_add_session(c.data, "fixture", 1000, 2000) ||
	    !(c.text = fopen(argv[i + 3], "w")))
		return 1;
	jinst_walk(argv[i], NULL, 0, on_class, on_error, &c);
	fclose(c.text);
	int rc = jinst_covdata_write_file(argv[i + 2], c.data, &diag);
	if (rc)
		fprintf(stderr, "cov_make: %s: %s\n", argv[i + 2], diag.message);
	jinst_covdata_free(c.data);
	return rc || c.failures ? 1 : 0;
}
