/*
 * Analysis: JaCoCo 0.8.6's counters from a class and its probe data
 * (org.jacoco.core.internal.analysis: MethodAnalyzer, InstructionsBuilder,
 * Instruction, MethodCoverageCalculator, ClassAnalyzer, CounterImpl).
 *
 * Each method is replayed as JaCoCo's InstructionsBuilder sees it. Every
 * instruction gets an edge (branch 0) from the instruction before it when
 * that one is still "current": current is cleared by a probe on the
 * fall-through and by a label the previous instruction does not fall into,
 * but not by a goto, return or switch themselves (an instruction without a
 * label after a goto is reached from it, as in JaCoCo). Jumps and switch
 * edges without a probe are wired at the end, in code order; edges with a
 * probe are branches that are covered when the probe was executed.
 *
 * Coverage flows backwards: an executed probe marks its branch covered and
 * walks the chain of predecessors (each instruction remembers the last
 * instruction that added an edge to it), marking branch after branch, until
 * it meets an instruction already covered. Wiring an edge to a covered
 * instruction covers the edge the same way. The order of these events is
 * JaCoCo's, so the result is too, quirks included.
 *
 * Counters: an instruction is covered when any of its branches is; an
 * instruction with two or more branches adds them to the branch counter;
 * complexity adds, per such instruction, max(0, total - covered' - 1)
 * missed and covered' = max(0, covered - 1) covered, and one per method.
 * Lines take the counters of their instructions; a line is covered when
 * any of its instructions is. The class merges its methods line by line.
 *
 * Hit counts (an extension): the count of an instruction is the sum of the
 * counts of the probes reached from it along the chain of edges it heads,
 * which is exact for the straight-line code between probes. A method's
 * executions are the hits of its first instruction less the counts of the
 * edges that jump back to it.
 */
#include <stdlib.h>

#include "internal.h"

typedef struct cov_insn {
	uint32_t line;        /* 0: none (JaCoCo's UNKNOWN_LINE) */
	uint32_t branches;
	int32_t pred;         /* the last instruction that added an edge here, -1 */
	uint32_t pred_branch;
	uint32_t card;        /* covered branches */
	uint32_t nwords;
	uint64_t *bits;       /* covered branch indices */
	uint64_t direct;      /* hit counts of the probes on its own branches */
	uint64_t hits;
	bool ignored;         /* filtered */
} cov_insn;

typedef struct cov_probes {
	const uint8_t *probes;
	const uint64_t *counts;
} cov_probes;

static bool set_branch(cov_insn *in, uint32_t b)
{
	uint64_t m = UINT64_C(1) << (b % 64);
	if (in->bits[b / 64] & m)
		return false;
	in->bits[b / 64] |= m;
	in->card++;
	return true;
}

/* Instruction.propagateExecutedBranch. */
static void propagate(cov_insn *insns, int32_t i, uint32_t b)
{
	while (i >= 0) {
		cov_insn *in = &insns[i];
		if (in->card) {
			set_branch(in, b);
			return;
		}
		set_branch(in, b);
		b = in->pred_branch;
		i = in->pred;
	}
}

static void add_edge(cov_insn *insns, int32_t src, int32_t dst, uint32_t b)
{
	insns[src].branches++;
	insns[dst].pred = src;
	insns[dst].pred_branch = b;
	if (insns[dst].card)
		propagate(insns, src, b);
}

static void add_probe(cov_insn *insns, int32_t src, int32_t id, uint32_t b, const cov_probes *p)
{
	insns[src].branches++;
	uint64_t count = p->counts ? p->counts[id] : 0;
	insns[src].direct += count;
	if ((p->probes && p->probes[id]) || count)
		propagate(insns, src, b);
}

typedef struct jump {
	int32_t src, dst;
	uint32_t b;
} jump;

static int alloc_insns(cov_insn *insns, const cov_flow *f, jinst_arena *arena)
{
	for (uint32_t i = 0; i < f->n; i++) {
		uint32_t maxb = cov_is_switch(f->insns[i].opcode) ? f->insns[i].sw->count : 1;
		insns[i].pred = -1;
		insns[i].nwords = maxb / 64 + 1;
		insns[i].bits = jinst_arena_zalloc(arena, insns[i].nwords * sizeof(uint64_t));
		if (!insns[i].bits)
			return JINST_ENOMEM;
	}
	return 0;
}

static int32_t target_of(const cov_flow *f, int32_t offset)
{
	return (offset >= 0 && (uint32_t)offset < f->code_length) ? f->index_of[offset] : -1;
}

/* The edges of instruction i other than the fall-through into it. */
static void branch_out(cov_insn *insns, const cov_flow *f, uint32_t i, jump *jumps, uint32_t *nj,
                       const cov_probes *p)
{
	const jinst_insn *in = &f->insns[i];
	if (cov_is_return(in->opcode)) {
		add_probe(insns, (int32_t)i, f->insn_probe[i], 0, p);
	} else if (cov_is_jump(in->opcode)) {
		if (f->insn_probe[i] >= 0)
			add_probe(insns, (int32_t)i, f->insn_probe[i], 1, p);
		else
			jumps[(*nj)++] = (jump){(int32_t)i, target_of(f, in->operand), 1};
	} else if (cov_is_switch(in->opcode)) {
		for (uint32_t k = 0; k <= in->sw->count; k++) {
			int32_t id = f->sw_probe[i][k];
			if (id >= 0)
				add_probe(insns, (int32_t)i, id, k, p);
			else if (id == COV_NO_PROBE)
				jumps[(*nj)++] = (jump){(int32_t)i,
				                        target_of(f, k == 0 ? in->sw->default_target : in->sw->targets[k - 1]), k};
		}
	}
}

static uint32_t count_edges(const cov_flow *f)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n; i++)
		n += cov_is_switch(f->insns[i].opcode) ? f->insns[i].sw->count + 1 : 1;
	return n;
}

/* The InstructionsBuilder replay (see the essay above). */
static int build(cov_insn *insns, const cov_flow *f, jinst_arena *arena, const cov_probes *p)
{
	int rc = alloc_insns(insns, f, arena);
	if (rc)
		return rc;
	jump *jumps = jinst_arena_alloc(arena, (size_t)count_edges(f) * sizeof *jumps + 1);
	if (!jumps)
		return JINST_ENOMEM;
	uint32_t nj = 0, line = 0;
	int32_t current = -1;
	for (uint32_t i = 0; i < f->n; i++) {
		if (f->flags[i] & COV_LABEL) {
			if (f->fall_probe[i] >= 0 && current >= 0)
				add_probe(insns, current, f->fall_probe[i], 0, p);
			if (f->fall_probe[i] >= 0 || !(f->flags[i] & COV_SUCCESSOR))
				current = -1;
		}
		if (f->line_here[i])
			line = f->line_here[i];
		insns[i].line = line;
		if (current >= 0)
			add_edge(insns, current, (int32_t)i, 0);
		current = (int32_t)i;
		branch_out(insns, f, i, jumps, &nj, p);
	}
	for (uint32_t k = 0; k < nj; k++)
		if (jumps[k].dst >= 0)
			add_edge(insns, jumps[k].src, jumps[k].dst, jumps[k].b);
	return 0;
}

/* Hit counts up the chains of edges (bounded: dead code may loop). */
static void sum_hits(cov_insn *insns, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!insns[i].direct)
			continue;
		int32_t k = (int32_t)i;
		for (uint32_t steps = 0; k >= 0 && steps < n; steps++) {
			insns[k].hits += insns[i].direct;
			k = insns[k].pred;
		}
	}
}

/* The counts of the probes on jumps and switch edges back to the method's
 * first instruction: they are in its hits (summed up the chain through a
 * loop that starts the method) but are not entries. Such an edge always
 * has a probe, as the method's entry is another way into offset 0. */
static uint64_t reentries(const cov_flow *f, const cov_probes *p)
{
	uint64_t n = 0;
	for (uint32_t i = 0; p->counts && i < f->n; i++) {
		const jinst_insn *in = &f->insns[i];
		if (cov_is_jump(in->opcode) && f->insn_probe[i] >= 0 && in->operand == 0)
			n += p->counts[f->insn_probe[i]];
		else if (cov_is_switch(in->opcode))
			for (uint32_t k = 0; k <= in->sw->count; k++)
				if (f->sw_probe[i][k] >= 0 && (k == 0 ? in->sw->default_target : in->sw->targets[k - 1]) == 0)
					n += p->counts[f->sw_probe[i][k]];
	}
	return n;
}

/* ---- counters ---------------------------------------------------------------- */

static void counter_add(jinst_counter *c, uint32_t missed, uint32_t covered)
{
	c->missed += missed;
	c->covered += covered;
}

/* SourceNodeImpl.incrementLine: the line's counters, and the node's line
 * counter by what the line was before. */
static void increment_line(jinst_coverage_node *node, uint32_t line, jinst_counter ic, jinst_counter bc,
                           uint64_t hits)
{
	jinst_coverage_line *l = &node->by_line[line - node->first_line];
	uint32_t old_total = l->instructions.missed + l->instructions.covered;
	uint32_t old_covered = l->instructions.covered;
	counter_add(&l->instructions, ic.missed, ic.covered);
	counter_add(&l->branches, bc.missed, bc.covered);
	if (hits > l->hits)
		l->hits = hits;
	if (ic.missed + ic.covered == 0)
		return;
	if (ic.covered == 0) {
		if (old_total == 0)
			counter_add(&node->lines, 1, 0);
	} else if (old_total == 0) {
		counter_add(&node->lines, 0, 1);
	} else if (old_covered == 0) {
		node->lines.missed--;
		node->lines.covered++;
	}
}

static int alloc_lines(jinst_coverage_node *node, jinst_arena *arena)
{
	if (!node->first_line)
		return 0;
	node->by_line = jinst_arena_zalloc(arena, ((size_t)node->last_line - node->first_line + 1) * sizeof *node->by_line);
	return node->by_line ? 0 : JINST_ENOMEM;
}

static void method_counters(jinst_coverage_node *node, const cov_insn *insns, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const cov_insn *in = &insns[i];
		if (in->ignored)
			continue;
		jinst_counter ic = {in->card ? 0 : 1, in->card ? 1 : 0};
		jinst_counter bc = {0, 0};
		if (in->branches >= 2)
			bc = (jinst_counter){in->branches - in->card, in->card};
		if (in->line)
			increment_line(node, in->line, ic, bc, in->hits);
		counter_add(&node->instructions, ic.missed, ic.covered);
		counter_add(&node->branches, bc.missed, bc.covered);
		if (in->branches >= 2) {
			uint32_t c = in->card > 0 ? in->card - 1 : 0;
			uint32_t total = in->branches;
			uint32_t m = total > c + 1 ? total - c - 1 : 0;
			counter_add(&node->complexity, m, c);
		}
	}
	bool covered = node->instructions.covered > 0;
	counter_add(&node->methods, !covered, covered);
	counter_add(&node->complexity, !covered, covered);
}

static int method_node(jinst_coverage_node *node, const cov_insn *insns, uint32_t n, jinst_arena *arena)
{
	memset(node, 0, sizeof *node);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t line = insns[i].line;
		if (insns[i].ignored || !line)
			continue;
		if (!node->first_line || line < node->first_line)
			node->first_line = line;
		if (line > node->last_line)
			node->last_line = line;
	}
	int rc = alloc_lines(node, arena);
	if (rc)
		return rc;
	method_counters(node, insns, n);
	return 0;
}

/* ---- the class ------------------------------------------------------------------ */

/* MethodCoverageCalculator.applyMerges: a duplicate is ignored and its
 * covered branches (and hits) go to its representative. */
static int merge_insn(cov_insn *into, const cov_insn *from, jinst_arena *arena)
{
	if (from->nwords > into->nwords) {
		uint64_t *bits = jinst_arena_zalloc(arena, from->nwords * sizeof *bits);
		if (!bits)
			return JINST_ENOMEM;
		memcpy(bits, into->bits, into->nwords * sizeof *bits);
		into->bits = bits;
		into->nwords = from->nwords;
	}
	into->card = 0;
	for (uint32_t w = 0; w < into->nwords; w++) {
		if (w < from->nwords)
			into->bits[w] |= from->bits[w];
		into->card += (uint32_t)__builtin_popcountll(into->bits[w]);
	}
	into->hits += from->hits;
	return 0;
}

static int32_t resolve(const cov_filtered *out, int32_t i)
{
	while (out->rep[i] >= 0)
		i = out->rep[i];
	return i;
}

/* MethodCoverageCalculator.applyReplacements (after the merges): the
 * instruction's branches are its new targets, covered as many as of them
 * are covered. */
static int replace_branches(cov_insn *insns, const cov_filtered *out, uint32_t n, jinst_arena *arena)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!out->repl[i])
			continue;
		uint32_t covered = 0, count = out->nrepl[i];
		for (uint32_t k = 0; k < count; k++)
			covered += insns[resolve(out, out->repl[i][k])].card > 0;
		insns[i].nwords = count / 64 + 1;
		insns[i].bits = jinst_arena_zalloc(arena, insns[i].nwords * sizeof(uint64_t));
		if (!insns[i].bits)
			return JINST_ENOMEM;
		for (uint32_t b = 0; b < covered; b++)
			insns[i].bits[b / 64] |= UINT64_C(1) << (b % 64);
		insns[i].branches = count;
		insns[i].card = covered;
	}
	return 0;
}

static int apply_filters(cov_insn *insns, jinst_class *cls, jinst_member *m, const cov_flow *f)
{
	jinst_arena *arena = jinst_class_arena(cls);
	cov_filtered out = {jinst_arena_zalloc(arena, f->n), jinst_arena_alloc(arena, (size_t)f->n * sizeof(int32_t)),
	                    jinst_arena_zalloc(arena, (size_t)f->n * sizeof(int32_t *)),
	                    jinst_arena_zalloc(arena, (size_t)f->n * sizeof(uint32_t))};
	cov_insn *orig = jinst_arena_alloc(arena, (size_t)f->n * sizeof *orig);
	if (!out.ignore || !out.rep || !out.repl || !out.nrepl || !orig)
		return JINST_ENOMEM;
	memset(out.rep, 0xff, (size_t)f->n * sizeof(int32_t));
	cov_filter(cls, m, f, &out);
	memcpy(orig, insns, (size_t)f->n * sizeof *orig);
	for (uint32_t i = 0; i < f->n; i++) {
		if (out.rep[i] < 0)
			continue;
		out.ignore[i] = true;
		int rc = merge_insn(&insns[resolve(&out, (int32_t)i)], &orig[i], arena);
		if (rc)
			return rc;
	}
	int rc = replace_branches(insns, &out, f->n, arena);
	for (uint32_t i = 0; i < f->n; i++)
		insns[i].ignored = out.ignore[i];
	return rc;
}

static int analyze_method(jinst_coverage_result *r, jinst_class *cls, uint16_t index, uint32_t *next_id,
                          const cov_probes *p, const jinst_coverage_options *opts, jinst_arena *arena,
                          jinst_diag *diag)
{
	cov_flow f;
	jinst_member *m = jinst_class_method(cls, index);
	int rc = cov_flow_build(&f, cls, m, jinst_class_arena(cls), next_id, diag);
	if (rc || f.n == 0)
		return rc;
	cov_insn *insns = jinst_arena_zalloc(jinst_class_arena(cls), (size_t)f.n * sizeof *insns);
	if (!insns)
		return JINST_ENOMEM;
	rc = build(insns, &f, jinst_class_arena(cls), p);
	if (rc)
		return rc;
	sum_hits(insns, f.n);
	/* Before the filters, which may merge the first instruction away. */
	uint64_t entries = insns[0].hits, again = reentries(&f, p);
	if (!(opts->flags & JINST_COVERAGE_NO_FILTERS)) {
		rc = apply_filters(insns, cls, m, &f);
		if (rc)
			return rc;
	}
	jinst_coverage_method_result *mr = &r->methods[r->method_count];
	mr->method_index = index;
	mr->entry_hits = entries > again ? entries - again : 0;
	rc = method_node(&mr->node, insns, f.n, arena);
	if (rc)
		return rc;
	if (mr->node.instructions.missed + mr->node.instructions.covered > 0)
		r->method_count++;
	return 0;
}

static void class_add(jinst_coverage_node *cn, const jinst_coverage_node *mn)
{
	counter_add(&cn->instructions, mn->instructions.missed, mn->instructions.covered);
	counter_add(&cn->branches, mn->branches.missed, mn->branches.covered);
	counter_add(&cn->complexity, mn->complexity.missed, mn->complexity.covered);
	counter_add(&cn->methods, mn->methods.missed, mn->methods.covered);
	if (!mn->first_line)
		return;
	for (uint32_t line = mn->first_line; line <= mn->last_line; line++) {
		const jinst_coverage_line *l = &mn->by_line[line - mn->first_line];
		increment_line(cn, line, l->instructions, l->branches, l->hits);
	}
}

/* ClassCoverageImpl.addMethod over the reported methods. */
static int class_node(jinst_coverage_result *r, jinst_arena *arena)
{
	jinst_coverage_node *cn = &r->node;
	for (uint16_t k = 0; k < r->method_count; k++) {
		const jinst_coverage_node *mn = &r->methods[k].node;
		if (!mn->first_line)
			continue;
		if (!cn->first_line || mn->first_line < cn->first_line)
			cn->first_line = mn->first_line;
		if (mn->last_line > cn->last_line)
			cn->last_line = mn->last_line;
	}
	int rc = alloc_lines(cn, arena);
	if (rc)
		return rc;
	for (uint16_t k = 0; k < r->method_count; k++)
		class_add(cn, &r->methods[k].node);
	if (r->method_count)
		cn->classes = cn->methods.covered ? (jinst_counter){0, 1} : (jinst_counter){1, 0};
	return 0;
}

static int check_args(jinst_coverage_result **out, jinst_class *cls, const uint8_t *probes, const uint64_t *counts,
                      uint32_t probe_count, jinst_diag *diag, uint32_t *expected)
{
	if (!out || !cls)
		return cov_fail(diag, JINST_EINVAL, "coverage", "NULL argument");
	*out = NULL;
	jinst_coverage_plan *plan;
	int rc = jinst_coverage_place(&plan, cls, diag);
	if (rc)
		return rc;
	*expected = plan->probe_count;
	if ((probes || counts) && probe_count != plan->probe_count)
		return cov_fail(diag, JINST_EINVAL, "coverage", "probe_count differs from the class's probes");
	return 0;
}

static int analyze_methods(jinst_coverage_result *r, jinst_class *cls, const cov_probes *p,
                           const jinst_coverage_options *opts, jinst_arena *arena, jinst_diag *diag)
{
	uint16_t total = jinst_class_method_count(cls);
	r->methods = jinst_arena_zalloc(arena, (size_t)(total ? total : 1) * sizeof *r->methods);
	if (!r->methods)
		return JINST_ENOMEM;
	uint32_t id = 0;
	for (uint16_t k = 0; k < total; k++) {
		int rc = analyze_method(r, cls, k, &id, p, opts, arena, diag);
		if (rc)
			return rc;
	}
	return class_node(r, arena);
}

int jinst_coverage_analyze(jinst_coverage_result **out, jinst_class *cls, const uint8_t *probes,
                           const uint64_t *counts, uint32_t probe_count, const jinst_coverage_options *opts,
                           jinst_diag *diag)
{
	static const jinst_coverage_options defaults = JINST_COVERAGE_OPTIONS_INIT;
	uint32_t expected;
	int rc = check_args(out, cls, probes, counts, probe_count, diag, &expected);
	if (rc)
		return rc;
	jinst_arena *arena;
	rc = jinst_arena_new(&arena);
	if (rc)
		return rc;
	jinst_coverage_result *r = jinst_arena_zalloc(arena, sizeof *r);
	if (!r) {
		jinst_arena_free(arena);
		return JINST_ENOMEM;
	}
	r->internal = arena;
	cov_probes p = {probes, counts};
	if (jinst_class_access_flags(cls) & JINST_ACC_MODULE)
		r->skipped = true;
	else
		rc = analyze_methods(r, cls, &p, opts ? opts : &defaults, arena, diag);
	if (rc) {
		jinst_arena_free(arena);
		return rc;
	}
	*out = r;
	return 0;
}

void jinst_coverage_result_free(jinst_coverage_result *result)
{
	if (result)
		jinst_arena_free(result->internal);
}

enum jinst_coverage_status jinst_coverage_counter_status(jinst_counter c)
{
	return (enum jinst_coverage_status)((c.covered ? JINST_COV_FULLY_COVERED : 0) | (c.missed ? JINST_COV_NOT_COVERED : 0));
}

enum jinst_coverage_status jinst_coverage_line_status(const jinst_coverage_line *line)
{
	return (enum jinst_coverage_status)(jinst_coverage_counter_status(line->instructions) |
	                                    jinst_coverage_counter_status(line->branches));
}
