/*
 * Internals of the frame inference shared by its modules: infer.c (the
 * worklist and the abstract interpreter) and infer_merge.c (the join of two
 * reference types, which asks the class hierarchy).
 */
#ifndef JINST_INFER_INTERNAL_H
#define JINST_INFER_INTERNAL_H

#include "internal.h"

#include "jinst/infer.h"

typedef jinst_ftype vt;

typedef struct state {
	bool set;
	uint16_t nstack;
	vt *locals; /* max_locals */
	vt *stack;  /* max_stack */
} state;

typedef struct infer {
	jinst_class *c;
	const jinst_member *m;
	const jinst_code *code;
	const jinst_hierarchy *h;
	jinst_diag *diag;
	jinst_insn *insns;
	uint32_t n;
	uint32_t *block_of;  /* instruction index -> block index */
	bool *leader;        /* instruction index -> starts a block (n + 1 entries) */
	bool *target;        /* instruction index -> jumped to or a handler: needs a frame */
	uint32_t *block_start; /* block index -> first instruction */
	uint32_t nblocks;
	int32_t *insn_at;    /* pc -> instruction index, -1 inside an instruction */
	state *in;           /* entry state per block */
	bool *covered;       /* instruction index -> some exception range covers it */
	vt *ex_type;         /* exception entry -> the caught type */
	uint32_t *ex_block;  /* exception entry -> its handler's block */
	uint32_t *ex_epoch;  /* exception entry -> the locals epoch last merged into its handler */
	uint32_t epoch;      /* counts the locals states a block walk goes through */
	uint32_t *work;
	bool *queued;
	uint32_t nwork;
	uint16_t max_locals, max_stack;
	vt top, integer, flt, lng, dbl, null, throwable;
	vt fixed[JINST_OPR_OTHER]; /* by enum jinst_op_result: what the table-driven opcodes push */
	/* The editor's straight-line runs (jinst_sim_step) name the class of an
	 * Uninitialized receiver through this instead of insn_at. */
	vt (*new_class)(void *ctx, uint16_t value);
	void *new_ctx;
	/* Set when a descriptor or class name taken from the pool is malformed
	 * (class_vt, desc_vt): the instruction then fails with EMALFORMED, so no
	 * type with a name that is not a whole descriptor ever reaches a merge. */
	bool malformed;
} infer;

/* The abstract machine for one block's instructions. */
typedef struct frame {
	vt *locals;
	vt *stack;
	uint16_t sp;
} frame;

static inline vt obj(const uint8_t *name, uint16_t len)
{
	vt v = {JINST_VT_OBJECT, 0, len, name};
	return v;
}

static inline vt obj_str(const char *name)
{
	return obj((const uint8_t *)name, (uint16_t)strlen(name));
}

static inline bool is_ref(const vt *v)
{
	return v->tag == JINST_VT_OBJECT || v->tag == JINST_VT_NULL || v->tag == JINST_VT_UNINITIALIZED ||
	       v->tag == JINST_VT_UNINITIALIZED_THIS;
}

/* The most specific type two reference types are both assignable to
 * (infer_merge.c). */
int jinst_infer_merge_refs(infer *I, const vt *a, const vt *b, vt *out);
/* The array type of element type e: [L<name>; or one more dimension. */
int jinst_infer_array_of(infer *I, vt e, vt *out);

#endif
