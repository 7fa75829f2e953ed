/*
 * The jinst side of the coverage comparison: for each class file listed
 * (one path a line), the probe count of jinst_coverage_place and the
 * analysis of jinst_coverage_analyze for the probe arrays the seeded
 * generator draws, in the form tests/coverage/peer/CovPeer.java prints for
 * JaCoCo. compare.py reads both.
 *
 *   cov_dump [--filters] [--variants N] [--counts] LIST
 *
 * --counts passes the drawn booleans as hit counts instead (each executed
 * probe hit once), which must give the same counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/coverage.h"
#include "jinst/util.h"

typedef struct opts {
	bool filters, counts;
	int variants;
} opts;

static uint64_t fnv(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* The generator of CovPeer.draw: v 0 none, 1 all, else each probe set with
 * probability (v % 3 + 1) / 4, from splitmix64 seeded by the class name. */
static void draw(uint8_t *p, const char *name, int v, uint32_t count)
{
	uint64_t state = fnv(name) ^ (UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)(v + 1));
	for (uint32_t i = 0; i < count; i++) {
		if (v <= 1) {
			p[i] = (uint8_t)v;
			continue;
		}
		state += UINT64_C(0x9E3779B97F4A7C15);
		uint64_t z = state;
		z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
		z ^= z >> 31;
		p[i] = (z >> 62) < (uint64_t)(v % 3 + 1);
	}
}

static void put_counter(const char *tag, jinst_counter c)
{
	printf(" %s %u/%u", tag, c.missed, c.covered);
}

static void put_counters(const jinst_coverage_node *n)
{
	put_counter("I", n->instructions);
	put_counter("B", n->branches);
	put_counter("L", n->lines);
	put_counter("X", n->complexity);
	put_counter("M", n->methods);
}

static void put_utf8(jinst_class *cls, uint16_t index)
{
	uint16_t len;
	const uint8_t *b = jinst_cp_utf8(cls, index, &len);
	char buf[4096];
	long n = b ? jinst_mutf8_to_utf8(b, len, buf, sizeof buf) : -1;
	fputs(n >= 0 && (size_t)n < sizeof buf ? buf : "?", stdout);
}

static void put_lines(const char *name, int v, const jinst_coverage_node *n)
{
	printf("L %s %d", name, v);
	for (uint32_t line = n->first_line; n->first_line && line <= n->last_line; line++) {
		const jinst_coverage_line *l = &n->by_line[line - n->first_line];
		enum jinst_coverage_status st = jinst_coverage_line_status(l);
		if (st != JINST_COV_EMPTY)
			printf(" %u:%d:%u/%u:%u/%u", line, (int)st, l->instructions.missed, l->instructions.covered,
			       l->branches.missed, l->branches.covered);
	}
	putchar('\n');
}

static void put_result(jinst_class *cls, const char *name, int v, const jinst_coverage_result *r)
{
	printf("K %s %d", name, v);
	put_counters(&r->node);
	put_counter("C", r->node.classes);
	putchar('\n');
	for (uint16_t k = 0; k < r->method_count; k++) {
		jinst_member *m = jinst_class_method(cls, r->methods[k].method_index);
		printf("M %s %d ", name, v);
		put_utf8(cls, jinst_member_name_index(m));
		put_utf8(cls, jinst_member_descriptor_index(m));
		put_counters(&r->methods[k].node);
		putchar('\n');
	}
	put_lines(name, v, &r->node);
}

static int analyze(jinst_class *cls, const char *name, uint32_t count, const opts *o)
{
	uint8_t *probes = calloc(count + 1, 1);
	uint64_t *counts = calloc(count + 1, sizeof *counts);
	if (!probes || !counts)
		return JINST_ENOMEM;
	jinst_coverage_options co = JINST_COVERAGE_OPTIONS_INIT;
	co.flags = o->filters ? 0 : JINST_COVERAGE_NO_FILTERS;
	int rc = 0;
	for (int v = 0; v < o->variants && !rc; v++) {
		draw(probes, name, v, count);
		for (uint32_t i = 0; i < count; i++)
			counts[i] = probes[i];
		jinst_coverage_result *r;
		jinst_diag diag;
		rc = jinst_coverage_analyze(&r, cls, o->counts ? NULL : probes, o->counts ? counts : NULL, count, &co,
		                            &diag);
		if (rc) {
			printf("E %s %d %s\n", name, v, diag.message);
			break;
		}
		put_result(cls, name, v, r);
		jinst_coverage_result_free(r);
	}
	free(probes);
	free(counts);
	return 0;
}

static void one(const char *path, const opts *o)
{
	uint8_t *bytes;
	size_t len;
	jinst_class *cls = NULL;
	jinst_diag diag;
	if (jinst_file_read(&bytes, &len, path, 0, &diag)) {
		printf("E %s\n", path);
		return;
	}
	char name[4096];
	uint16_t nlen;
	const uint8_t *n;
	if (jinst_class_parse(&cls, bytes, len, NULL, NULL, &diag) || !(n = jinst_class_name(cls, &nlen)) ||
	    jinst_mutf8_to_utf8(n, nlen, name, sizeof name) < 0) {
		printf("E %s\n", path);
	} else if (jinst_class_access_flags(cls) & JINST_ACC_MODULE) {
		printf("S %s\n", name);
	} else {
		jinst_coverage_plan *plan;
		int rc = jinst_coverage_place(&plan, cls, &diag);
		if (rc == JINST_EUNSUPPORTED)
			printf("U %s %s\n", name, diag.message);
		else if (rc)
			printf("E %s\n", path);
		else if (printf("P %s %u\n", name, plan->probe_count), analyze(cls, name, plan->probe_count, o))
			printf("E %s out of memory\n", name);
	}
	jinst_class_free(cls);
	free(bytes);
}

int main(int argc, char **argv)
{
	opts o = {false, false, 5};
	const char *list = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--filters"))
			o.filters = true;
		else if (!strcmp(argv[i], "--counts"))
			o.counts = true;
		else if (!strcmp(argv[i], "--variants") && i + 1 < argc)
			o.variants = atoi(argv[++i]);
		else
			list = argv[i];
	}
	FILE *f = list ? fopen(list, "r") : NULL;
	if (!f) {
		fprintf(stderr, "usage: cov_dump [--filters] [--counts] [--variants N] LIST\n");
		return 2;
	}
	char path[4096];
	while (fgets(path, sizeof path, f)) {
		path[strcspn(path, "\r\n")] = 0;
		if (*path)
			one(path, &o);
	}
	fclose(f);
	return 0;
}
