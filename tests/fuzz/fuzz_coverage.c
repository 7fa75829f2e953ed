/*
 * libFuzzer target for the coverage core (include/jinst/coverage.h):
 * probe placement and analysis of an untrusted class file.
 *
 * Once the input parses, placement either fails (and analysis must fail
 * with the same code) or gives sites whose ids run 0 .. probe_count - 1 in
 * method order, each at an instruction of its method. The analysis then
 * runs for no data, for all probes set and for probes drawn from a hash of
 * the input, with and without filters: every counter of the class must be
 * the sum of its methods', nothing is covered without data, and the same
 * input gives the same counters twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_classfile.h"
#include "jinst/coverage.h"

static void check_plan(const jinst_coverage_plan *plan)
{
	uint32_t next = 0;
	for (uint16_t k = 0; k < plan->method_count; k++) {
		const jinst_coverage_method *m = &plan->methods[k];
		CHECK(m->first_probe == next, "method %u starts at %u, want %u", k, m->first_probe, next);
		for (uint32_t s = 0; s < m->site_count; s++) {
			CHECK(m->sites[s].id == next, "site id %u, want %u", m->sites[s].id, next);
			CHECK(m->sites[s].kind <= JINST_PROBE_SWITCH, "kind %u", m->sites[s].kind);
			next++;
		}
	}
	CHECK(next == plan->probe_count, "%u sites for %u probes", next, plan->probe_count);
}

static void add(jinst_counter *sum, jinst_counter c)
{
	sum->missed += c.missed;
	sum->covered += c.covered;
}

static bool same(jinst_counter a, jinst_counter b)
{
	return a.missed == b.missed && a.covered == b.covered;
}

static void check_result(const jinst_coverage_result *r, int kind)
{
	jinst_counter i = {0, 0}, b = {0, 0}, x = {0, 0}, m = {0, 0};
	for (uint16_t k = 0; k < r->method_count; k++) {
		const jinst_coverage_node *n = &r->methods[k].node;
		CHECK(n->instructions.missed + n->instructions.covered > 0, "a reported method without instructions");
		CHECK(kind != 0 || n->instructions.covered == 0, "covered without data");
		add(&i, n->instructions);
		add(&b, n->branches);
		add(&x, n->complexity);
		add(&m, n->methods);
	}
	CHECK(same(i, r->node.instructions) && same(b, r->node.branches) && same(x, r->node.complexity) &&
	          same(m, r->node.methods),
	      "class counters are not the sum of the methods'");
}

static int analyze(jinst_class *c, uint32_t count, int kind, uint64_t seed, uint32_t flags,
                   jinst_coverage_result **r)
{
	uint8_t *probes = calloc(count + 1, 1);
	uint64_t *counts = calloc(count + 1, sizeof *counts);
	CHECK(probes && counts, "out of memory");
	for (uint32_t k = 0; k < count; k++) {
		probes[k] = kind == 1 ? 1 : kind == 2 ? (uint8_t)(fuzz_next(&seed) & 1) : 0;
		counts[k] = probes[k] ? fuzz_next(&seed) % 7 + 1 : 0;
	}
	jinst_coverage_options o = JINST_COVERAGE_OPTIONS_INIT;
	o.flags = flags;
	int rc = jinst_coverage_analyze(r, c, probes, kind == 2 ? counts : NULL, count, &o, NULL);
	free(probes);
	free(counts);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jinst_class *c = NULL;
	if (jinst_class_parse(&c, data, size, NULL, NULL, NULL))
		return 0;
	jinst_coverage_plan *plan;
	jinst_diag d;
	int rc = jinst_coverage_place(&plan, c, &d);
	jinst_coverage_result *r = NULL, *again = NULL;
	if (rc) {
		CHECK(rc < 0 && d.code == rc, "place: rc %d, diag %d", rc, d.code);
		CHECK(jinst_coverage_analyze(&r, c, NULL, NULL, 0, NULL, NULL) == rc, "analyze disagrees with place");
		jinst_class_free(c);
		return 0;
	}
	check_plan(plan);
	uint64_t seed = fuzz_seed(data, size);
	for (int kind = 0; kind < 3; kind++)
		for (uint32_t flags = 0; flags <= JINST_COVERAGE_NO_FILTERS; flags++) {
			CHECK(analyze(c, plan->probe_count, kind, seed, flags, &r) == 0, "analyze failed after place");
			check_result(r, kind);
			CHECK(analyze(c, plan->probe_count, kind, seed, flags, &again) == 0, "second analysis failed");
			CHECK(same(r->node.instructions, again->node.instructions) && same(r->node.lines, again->node.lines) &&
			          same(r->node.branches, again->node.branches),
			      "two analyses differ");
			jinst_coverage_result_free(r);
			jinst_coverage_result_free(again);
		}
	jinst_class_free(c);
	return 0;
}
