/*
 * jinst coverage core: where coverage probes go, and what a class's probe
 * data mean, exactly as JaCoCo 0.8.6 defines both.
 *
 * Library jinst_coverage (depends on the class-file library only). The two
 * halves run the same control-flow analysis, as JaCoCo's instrumenter and
 * analyzer do, so that a probe id written by instrumented code means the
 * same edge to the report.
 *
 * Placement (jinst_coverage_place). Every method with a Code attribute, in
 * the order of the class's method table, gets probes; ids are consecutive
 * per class. Within a method, in the order of the code, a probe stands:
 *  - before every return and athrow (JINST_PROBE_BEFORE);
 *  - on the taken edge of a jump whose target has more than one way in
 *    (JINST_PROBE_JUMP): a goto runs the probe before jumping; a
 *    conditional jump is inverted around the probe and a goto;
 *  - on the fall-through into an instruction that has more than one way in,
 *    or that starts a source line holding a method invocation
 *    (JINST_PROBE_FALLTHROUGH): only the edge from the previous instruction;
 *  - on each distinct edge of a switch whose target has more than one way in
 *    (JINST_PROBE_SWITCH; a target named twice by one switch is one edge).
 * "Ways in": the fall-through from the previous instruction, each jump,
 * each switch (once, however often it names the target), each exception
 * table entry whose start_pc or handler_pc is the position, and the entry
 * of the method at offset 0.
 *
 * With jinst's code editor (include/jinst/edit.h) the sites map to:
 *  - BEFORE: insert the probe JINST_BEFORE_INSIDE the instruction at offset;
 *  - JUMP on goto/goto_w: JINST_BEFORE_INSIDE the goto; on a conditional,
 *    replace it by the inverted condition jumping to a new label placed
 *    after the probe and a goto to the original target;
 *  - FALLTHROUGH: JINST_BEFORE_OUTSIDE the instruction at offset (JaCoCo
 *    moves a try range starting there to before the probe; the probe, an
 *    in-bounds store into a local array, cannot throw, so either is right);
 *  - SWITCH: point the switch's edge to `target` (every entry of the
 *    switch naming it) at a new label holding the probe and a goto target.
 *
 * Analysis (jinst_coverage_analyze). From the class and its probe array
 * (booleans, and optionally hit counts) computes JaCoCo's counters per
 * instruction, line, method and class: an instruction is covered when a
 * probe after it on a straight path was executed; its branches (two or more
 * outgoing edges) are covered edge by edge; a line is covered, partly
 * covered or missed by its instructions and branches (ICounter.FULLY_COVERED,
 * PARTLY_COVERED, NOT_COVERED); complexity is branches - decision points + 1
 * per method, as JaCoCo counts it. Filters of compiler-generated code are
 * listed in docs/coverage-analysis.md with every known difference from JaCoCo.
 *
 * Not supported: code with jsr/ret (JaCoCo inlines subroutines first); a
 * class holding such a method is refused with JINST_EUNSUPPORTED by both
 * halves, so ids never disagree.
 */
#ifndef JINST_COVERAGE_H
#define JINST_COVERAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "jinst/classfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- placement ---------------------------------------------------------------- */

enum jinst_probe_kind {
	JINST_PROBE_BEFORE = 0,      /* before the return/athrow at offset, inside its labels */
	JINST_PROBE_JUMP = 1,        /* on the taken edge of the jump at offset (to target) */
	JINST_PROBE_FALLTHROUGH = 2, /* on the edge from the previous instruction into offset */
	JINST_PROBE_SWITCH = 3       /* on the edge from the switch at offset to target */
};

typedef struct jinst_probe_site {
	uint8_t kind;    /* enum jinst_probe_kind */
	uint32_t offset; /* original offset of the instruction the site refers to */
	uint32_t target; /* JUMP, SWITCH: the original target offset; else JINST_NO_OFFSET */
	uint32_t id;     /* probe id in the class's probe array */
} jinst_probe_site;

typedef struct jinst_coverage_method {
	uint16_t method_index; /* jinst_class_method(cls, method_index) */
	uint32_t first_probe;  /* id of its first probe (sites[0].id when it has any) */
	uint32_t site_count;   /* = its number of probes */
	jinst_probe_site *sites; /* in id order, which is code order */
	/* Its instructions as the placement decoded them, from the code bytes
	 * at code: for the code editor (jinst_edit_options.decoded), so that
	 * a method is decoded once to be placed and edited. */
	const jinst_insn *insns;
	uint32_t insn_count;
	const uint8_t *code;
} jinst_coverage_method;

/* Class-level facts an instrumenter needs to choose how the probe array is
 * reached (JaCoCo's ProbeArrayStrategyFactory). */
#define JINST_COVERAGE_INTERFACE 0x1  /* an interface (or module) */
#define JINST_COVERAGE_CLINIT_ONLY 0x2 /* interface whose only code is <clinit> (no other non-abstract method) */

typedef struct jinst_coverage_plan {
	uint32_t probe_count;   /* of the class; 0: JaCoCo leaves the class alone */
	uint32_t flags;         /* JINST_COVERAGE_* */
	uint16_t method_count;  /* methods with Code, in method-table order */
	jinst_coverage_method *methods;
} jinst_coverage_plan;

/* Places the probes of every method of cls, which must be the class as
 * read (offsets are those of its original code: with the editor, find the
 * instruction by jinst_edit_at). The plan is allocated in the class's arena
 * (jinst_class_arena) and lives as long as it; there is nothing to free.
 * JINST_EUNSUPPORTED for a class with jsr/ret; JINST_EMALFORMED for code
 * the decoder refuses. */
int jinst_coverage_place(jinst_coverage_plan **out, jinst_class *cls, jinst_diag *diag);

/* ---- analysis ------------------------------------------------------------------ */

typedef struct jinst_counter {
	uint32_t missed, covered;
} jinst_counter;

/* ICounter.CounterValue / ICounter status values of JaCoCo. */
enum jinst_coverage_status {
	JINST_COV_EMPTY = 0,
	JINST_COV_NOT_COVERED = 1,
	JINST_COV_FULLY_COVERED = 2,
	JINST_COV_PARTLY_COVERED = 3
};

typedef struct jinst_coverage_line {
	jinst_counter instructions, branches;
	uint64_t hits; /* with hit counts: the highest count of the line's instructions */
} jinst_coverage_line;

/* A method or the class: JaCoCo's ISourceNode. Lines first_line..last_line
 * (0 and 0 with no line; JaCoCo's UNKNOWN_LINE); lines without code are
 * JINST_COV_EMPTY. */
typedef struct jinst_coverage_node {
	jinst_counter instructions, branches, lines, complexity, methods, classes;
	uint32_t first_line, last_line;
	jinst_coverage_line *by_line; /* by_line[line - first_line] */
} jinst_coverage_node;

typedef struct jinst_coverage_method_result {
	uint16_t method_index; /* in the class's method table */
	jinst_coverage_node node;
	/* With hit counts: the times the method was entered (the counts of the
	 * probes that cover its first instruction, less those of jumps back to
	 * it); entries that ended in an exception before any probe are not
	 * counted. 0 without counts. */
	uint64_t entry_hits;
} jinst_coverage_method_result;

typedef struct jinst_coverage_result jinst_coverage_result;
struct jinst_coverage_result {
	bool skipped;     /* JaCoCo reports no such class: module-info */
	jinst_coverage_node node; /* the class's totals */
	/* Methods JaCoCo reports (with at least one instruction left after the
	 * filters), in method-table order. */
	uint16_t method_count;
	jinst_coverage_method_result *methods;
	void *internal;   /* owned memory */
};

typedef struct jinst_coverage_options {
	uint32_t version; /* JINST_COVERAGE_OPTIONS_VERSION */
	uint32_t flags;   /* JINST_COVERAGE_NO_FILTERS ... */
} jinst_coverage_options;
#define JINST_COVERAGE_OPTIONS_VERSION 1
#define JINST_COVERAGE_OPTIONS_INIT {JINST_COVERAGE_OPTIONS_VERSION, 0}
/* Count every instruction: none of the filters of compiler-generated code. */
#define JINST_COVERAGE_NO_FILTERS 0x1

/* Analyzes cls (as read, never edited) with its probe data: probes[probe_count] booleans (NULL: no
 * data, all missed), counts[probe_count] hit counts (NULL: none; a probe
 * counts as executed when probes[i] or counts[i] is nonzero). probe_count
 * must be the plan's (JINST_EINVAL otherwise, unless probes and counts are
 * both NULL). opts may be NULL. The caller frees *out with
 * jinst_coverage_result_free; the work space (decoded code, the plan) comes
 * from the class's arena, which each call grows. */
int jinst_coverage_analyze(jinst_coverage_result **out, jinst_class *cls, const uint8_t *probes,
                           const uint64_t *counts, uint32_t probe_count, const jinst_coverage_options *opts,
                           jinst_diag *diag);
void jinst_coverage_result_free(jinst_coverage_result *result); /* NULL is fine */

/* JaCoCo's status of a counter (EMPTY, NOT_COVERED, FULLY_COVERED or both: PARTLY). */
enum jinst_coverage_status jinst_coverage_counter_status(jinst_counter c);
/* A line's status: its instructions' status | its branches' status. */
enum jinst_coverage_status jinst_coverage_line_status(const jinst_coverage_line *line);

#ifdef __cplusplus
}
#endif
#endif
