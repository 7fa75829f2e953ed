/*
 * Unit test of the coverage core on tests/data/classes/coverage/Cov.class
 * (source: tests/data/src/coverage/Cov.java): the probe sites of a loop and
 * of a line with a method invocation, counters and line status for chosen
 * probes, hit counts, a method's entries, the filters of a private empty constructor and a
 * bridge method, and the refusal of jsr/ret code.
 */
#include <string.h>

#include "jinst/coverage.h"
#include "testlib.h"

static jinst_class *load(const char *dir, const char *rel, uint8_t **bytes)
{
	size_t len;
	*bytes = test_load(dir, rel, &len);
	jinst_class *cls = NULL;
	if (jinst_class_parse(&cls, *bytes, len, NULL, NULL, NULL))
		return NULL;
	return cls;
}

static const jinst_coverage_method *find_method(jinst_class *cls, const jinst_coverage_plan *plan, const char *name)
{
	for (uint16_t k = 0; k < plan->method_count; k++) {
		uint16_t len;
		const uint8_t *n = jinst_cp_utf8(cls, jinst_member_name_index(jinst_class_method(cls, plan->methods[k].method_index)), &len);
		if (n && len == strlen(name) && !memcmp(n, name, len))
			return &plan->methods[k];
	}
	return NULL;
}

/* loop: the fall-through into the loop head (a multi-target: falls in and
 * the goto jumps back), the goto back, and the return. */
static void test_loop_sites(jinst_class *cls, const jinst_coverage_plan *plan)
{
	const jinst_coverage_method *m = find_method(cls, plan, "loop");
	CHECK(m && m->site_count == 3, "loop has 3 probes");
	if (!m || m->site_count != 3)
		return;
	CHECK(m->sites[0].kind == JINST_PROBE_FALLTHROUGH && m->sites[0].offset == 4, "fall-through into 4");
	CHECK(m->sites[1].kind == JINST_PROBE_JUMP && m->sites[1].offset == 16 && m->sites[1].target == 4,
	      "goto at 16 back to 4: kind %u offset %u", m->sites[1].kind, m->sites[1].offset);
	CHECK(m->sites[2].kind == JINST_PROBE_BEFORE && m->sites[2].offset == 20, "before ireturn");
	for (uint32_t k = 0; k < 3; k++)
		CHECK(m->sites[k].id == m->first_probe + k, "ids consecutive");
	/* <init> (one return) comes first: its probe is 0, loop's start at 1 */
	CHECK(m->first_probe == 1, "loop's first probe %u", m->first_probe);
}

/* call2: line 22 (x += a.length()) holds an invocation: a probe on the
 * fall-through into it, so that line 21 counts even when length() throws. */
static void test_invoke_line(jinst_class *cls, const jinst_coverage_plan *plan)
{
	const jinst_coverage_method *call = find_method(cls, plan, "call");
	const jinst_coverage_method *call2 = find_method(cls, plan, "call2");
	CHECK(call && call->site_count == 1, "call: the return only (its invocation line starts the method)");
	CHECK(call2 && call2->site_count == 2 && call2->sites[0].kind == JINST_PROBE_FALLTHROUGH &&
	          call2->sites[0].offset == 2,
	      "call2: a probe before the line with the invocation");
}

static const jinst_coverage_method_result *result_of(jinst_class *cls, const jinst_coverage_result *r, const char *name)
{
	for (uint16_t k = 0; k < r->method_count; k++) {
		uint16_t len;
		const uint8_t *n = jinst_cp_utf8(cls, jinst_member_name_index(jinst_class_method(cls, r->methods[k].method_index)), &len);
		if (n && len == strlen(name) && !memcmp(n, name, len))
			return &r->methods[k];
	}
	return NULL;
}

static const jinst_coverage_line *line_of(const jinst_coverage_node *n, uint32_t line)
{
	return line >= n->first_line && line <= n->last_line ? &n->by_line[line - n->first_line] : NULL;
}

/* loop(5): the head runs 6 times, the body 5, the rest once. */
static void test_loop_counts(jinst_class *cls, const jinst_coverage_plan *plan)
{
	const jinst_coverage_method *m = find_method(cls, plan, "loop");
	if (!m)
		return;
	uint64_t *counts = calloc(plan->probe_count, sizeof *counts);
	counts[m->first_probe] = 1;
	counts[m->first_probe + 1] = 5;
	counts[m->first_probe + 2] = 1;
	jinst_coverage_result *r = NULL;
	int rc = jinst_coverage_analyze(&r, cls, NULL, counts, plan->probe_count, NULL, NULL);
	CHECK(rc == 0, "analyze: %s", jinst_strerror(rc));
	const jinst_coverage_method_result *mr = r ? result_of(cls, r, "loop") : NULL;
	CHECK(mr != NULL, "loop reported");
	if (mr) {
		const jinst_coverage_node *n = &mr->node;
		CHECK(n->instructions.missed == 0 && n->instructions.covered == 15, "15 instructions covered");
		CHECK(n->branches.missed == 0 && n->branches.covered == 2, "both branches");
		CHECK(n->lines.covered == 4 && n->complexity.covered == 2 && n->complexity.missed == 0, "lines, complexity");
		uint64_t want[4] = {1, 6, 5, 1};
		for (uint32_t line = 8; line <= 11; line++) {
			const jinst_coverage_line *l = line_of(n, line);
			CHECK(l && l->hits == want[line - 8] && jinst_coverage_line_status(l) == JINST_COV_FULLY_COVERED,
			      "line %u: hits %llu, want %llu", line, l ? (unsigned long long)l->hits : 0ULL,
			      (unsigned long long)want[line - 8]);
		}
		CHECK(mr->entry_hits == 1, "loop entered once, not as often as its head ran: %llu",
		      (unsigned long long)mr->entry_hits);
	}
	jinst_coverage_result_free(r);
	/* loop(0): the body is missed, the head partly covered. */
	counts[m->first_probe + 1] = 0;
	rc = jinst_coverage_analyze(&r, cls, NULL, counts, plan->probe_count, NULL, NULL);
	mr = rc == 0 ? result_of(cls, r, "loop") : NULL;
	CHECK(mr != NULL, "loop reported");
	if (mr) {
		CHECK(jinst_coverage_line_status(line_of(&mr->node, 10)) == JINST_COV_NOT_COVERED, "body missed");
		CHECK(jinst_coverage_line_status(line_of(&mr->node, 9)) == JINST_COV_PARTLY_COVERED, "head partly");
		CHECK(mr->node.branches.missed == 1 && mr->node.branches.covered == 1, "one branch of two");
		CHECK(mr->node.methods.covered == 1, "method covered");
	}
	jinst_coverage_result_free(r);
	free(counts);
}

/* spin(3), twice: the loop head is offset 0, which the goto back (3 times
 * a call) reaches as the entry does; the method was entered twice. */
static void test_entry_loop(jinst_class *cls, const jinst_coverage_plan *plan)
{
	const jinst_coverage_method *m = find_method(cls, plan, "spin");
	CHECK(m && m->site_count == 2 && m->sites[0].kind == JINST_PROBE_JUMP && m->sites[0].target == 0,
	      "spin: the goto back to 0 and the return");
	if (!m || m->site_count != 2)
		return;
	uint64_t *counts = calloc(plan->probe_count, sizeof *counts);
	counts[m->first_probe] = 6;
	counts[m->first_probe + 1] = 2;
	jinst_coverage_result *r = NULL;
	int rc = jinst_coverage_analyze(&r, cls, NULL, counts, plan->probe_count, NULL, NULL);
	const jinst_coverage_method_result *mr = rc == 0 ? result_of(cls, r, "spin") : NULL;
	CHECK(mr && mr->entry_hits == 2, "spin entered twice: %llu", mr ? (unsigned long long)mr->entry_hits : 0ULL);
	const jinst_coverage_line *head = mr ? line_of(&mr->node, mr->node.first_line) : NULL;
	CHECK(head && head->hits == 8, "its head ran 8 times: %llu", head ? (unsigned long long)head->hits : 0ULL);
	jinst_coverage_result_free(r);
	free(counts);
}

/* The private empty constructor and the bridge compareTo(Object) are
 * filtered; without filters all seven methods are reported. */
static void test_filters(jinst_class *cls, const jinst_coverage_plan *plan)
{
	jinst_coverage_result *r = NULL;
	CHECK(jinst_coverage_analyze(&r, cls, NULL, NULL, 0, NULL, NULL) == 0, "analyze without data");
	CHECK(r && r->method_count == 5, "5 methods after filters: %u", r ? r->method_count : 0);
	CHECK(r && r->node.classes.missed == 1 && r->node.instructions.covered == 0, "class missed");
	jinst_coverage_result_free(r);
	jinst_coverage_options o = JINST_COVERAGE_OPTIONS_INIT;
	o.flags = JINST_COVERAGE_NO_FILTERS;
	uint8_t *all = malloc(plan->probe_count);
	memset(all, 1, plan->probe_count);
	CHECK(jinst_coverage_analyze(&r, cls, all, NULL, plan->probe_count, &o, NULL) == 0, "analyze, all set");
	CHECK(r && r->method_count == 7 && r->node.instructions.missed == 0 && r->node.classes.covered == 1,
	      "7 methods, all covered");
	jinst_coverage_result_free(r);
	CHECK(jinst_coverage_analyze(&r, cls, all, NULL, plan->probe_count + 1, &o, NULL) == JINST_EINVAL,
	      "a probe count that is not the class's");
	free(all);
	jinst_coverage_result_free(NULL);
}

static void test_jsr(const char *data)
{
	uint8_t *bytes;
	jinst_class *cls = load(data, "jsr/Fin.class", &bytes);
	CHECK(cls != NULL, "Fin.class parses");
	jinst_coverage_plan *plan;
	jinst_coverage_result *r;
	CHECK(cls && jinst_coverage_place(&plan, cls, NULL) == JINST_EUNSUPPORTED, "jsr refused by placement");
	CHECK(cls && jinst_coverage_analyze(&r, cls, NULL, NULL, 0, NULL, NULL) == JINST_EUNSUPPORTED,
	      "and by analysis");
	jinst_class_free(cls);
	free(bytes);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_coverage DATA_CLASSES\n");
		return 2;
	}
	uint8_t *bytes;
	jinst_class *cls = load(argv[1], "coverage/Cov.class", &bytes);
	jinst_coverage_plan *plan = NULL;
	CHECK(cls && jinst_coverage_place(&plan, cls, NULL) == 0, "place");
	if (plan) {
		CHECK(plan->method_count == 7 && plan->flags == 0, "7 methods with code, a class");
		test_loop_sites(cls, plan);
		test_invoke_line(cls, plan);
		test_loop_counts(cls, plan);
		test_entry_loop(cls, plan);
		test_filters(cls, plan);
	}
	jinst_class_free(cls);
	free(bytes);
	test_jsr(argv[1]);
	return check_report();
}
