/*
 * Internals of libjinst_coverage shared by placement (flow.c) and analysis
 * (analyze.c, filters.c). Nothing outside coverage/ includes this file.
 */
#ifndef JINST_COVERAGE_INTERNAL_H
#define JINST_COVERAGE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/coverage.h"
#include "jinst/opcodes.h"

#define COV_NO_PROBE (-1)

/* What the label-flow pass learns about the position of instruction i. */
enum {
	COV_LABEL = 0x01,     /* ASM would hold a Label here (something names the position) */
	COV_SUCCESSOR = 0x02, /* the previous instruction falls through into it */
	COV_MULTI = 0x04,     /* more than one way in */
	COV_INVOKE_LINE = 0x08, /* starts a line that holds a method invocation */
	COV_FRAME = 0x10       /* a stack map frame stands here */
};

/* One method's code as both halves see it, with its probe ids. */
typedef struct cov_flow {
	jinst_member *method;
	const jinst_code *code;
	jinst_insn *insns;
	uint32_t n;
	uint32_t code_length;
	int32_t *index_of;     /* offset -> instruction index, -1 between instructions */
	uint8_t *flags;        /* COV_* per instruction */
	uint32_t *line_here;   /* the line a LineNumberTable sets at instruction i (0: none) */
	uint8_t *nlines;       /* LineNumberTable entries (line not 0) at instruction i */
	int32_t *fall_probe;   /* probe on the fall-through into i, or COV_NO_PROBE */
	int32_t *insn_probe;   /* probe of return/athrow/jump i, or COV_NO_PROBE */
	int32_t **sw_probe;    /* switch i: [0] default, [k] target k-1: probe, COV_NO_PROBE;
	                        * a target already named earlier in the switch: COV_DUP */
	uint32_t probe_count;  /* of this method */
} cov_flow;
#define COV_DUP (-2)

/* Decodes method's code and runs the label flow; assigns probe ids from
 * *next_id on. A method without Code gets n = 0. */
int cov_flow_build(cov_flow *f, jinst_class *cls, jinst_member *method, jinst_arena *arena, uint32_t *next_id,
                   jinst_diag *diag);

/* What the filters decide (JaCoCo's IFilterOutput): instructions the
 * report leaves out, and duplicates merged into a representative (rep[i]:
 * the instruction i is merged into, -1 for none). */
typedef struct cov_filtered {
	bool *ignore;
	int32_t *rep;
	/* Branches replaced (IFilterOutput.replaceBranches): instruction i's
	 * branches become the nrepl[i] instructions repl[i] (NULL: none). */
	int32_t **repl;
	uint32_t *nrepl;
} cov_filtered;

/* JaCoCo's filters of compiler-generated code (filters.c, filters_code.c). */
void cov_filter(jinst_class *cls, jinst_member *method, const cov_flow *f, cov_filtered *out);
/* The filters that match code patterns (filters_code.c). */
void cov_filter_code(jinst_class *cls, const cov_flow *f, cov_filtered *out);
/* TryWithResourcesEcjFilter and StringSwitchEcjFilter (filters_ecj.c). */
void cov_filter_ecj(jinst_class *cls, const cov_flow *f, cov_filtered *out);
void cov_filter_ecj_switch(jinst_class *cls, const cov_flow *f, cov_filtered *out);
/* Whether in is an invokevirtual of owner.name desc. */
bool cov_invoke_is(jinst_class *cls, const jinst_insn *in, const char *owner, const char *name, const char *desc);
/* The opcode as ASM names it: xload_n is xload, ldc_w ldc, goto_w goto. */
uint8_t cov_asm_opcode(uint8_t op);
/* The local a load or store names (xload_n: n). */
int32_t cov_var_index(const jinst_insn *in);

int cov_fail(jinst_diag *diag, int code, const char *where, const char *message);

static inline bool cov_is_return(uint8_t op)
{
	return (op >= JINST_OP_IRETURN && op <= JINST_OP_RETURN) || op == JINST_OP_ATHROW;
}
static inline bool cov_is_jump(uint8_t op)
{
	return (op >= JINST_OP_IFEQ && op <= JINST_OP_GOTO) || op == JINST_OP_IFNULL || op == JINST_OP_IFNONNULL ||
	       op == JINST_OP_GOTO_W;
}
static inline bool cov_is_goto(uint8_t op)
{
	return op == JINST_OP_GOTO || op == JINST_OP_GOTO_W;
}
static inline bool cov_is_switch(uint8_t op)
{
	return op == JINST_OP_TABLESWITCH || op == JINST_OP_LOOKUPSWITCH;
}
static inline bool cov_is_invoke(uint8_t op)
{
	return op >= JINST_OP_INVOKEVIRTUAL && op <= JINST_OP_INVOKEDYNAMIC;
}

#endif
