/*
 * Unreachable code (include/jinst/infer.h). The verifier type-checks every instruction, reached or
 * not, against the frame in force there, and a block after an unconditional
 * transfer needs a frame of its own (JVMS 4.10.1). Data flow gives no state
 * to code no path reaches, so such code is rewritten the way ASM's
 * COMPUTE_FRAMES does: each maximal run of unreached instructions becomes
 * nop ... nop athrow (same length, so no offset moves), verified from a
 * frame of no locals and a Throwable on the stack, and the run is cut out of
 * every exception range, since that frame's locals would not match what the
 * handler's frame asks for. An entry whose range holds only dead code goes;
 * its handler was dead too, as a handler is reached exactly when some
 * instruction it covers is.
 */
#include "internal.h"

#include "jinst/infer.h"

/* The flow over the instructions: which are reached from the entry. */
typedef struct flow {
	const jinst_insn *insns;
	uint32_t n;
	const int32_t *insn_at; /* by offset: index of the instruction starting there, -1 inside one */
	bool *reached;
	uint32_t *work;
	uint32_t nwork;
} flow;

static inline void reach(flow *f, int32_t pc)
{
	int32_t i = f->insn_at[pc];
	if (i >= 0 && !f->reached[i]) {
		f->reached[i] = true;
		f->work[f->nwork++] = (uint32_t)i;
	}
}

/* Every instruction a path reaches: through fall-through, branches,
 * switches and the handlers of the ranges it lies in. */
static void mark_reached(flow *f, const jinst_code *code)
{
	f->reached[0] = true;
	f->work[f->nwork++] = 0;
	while (f->nwork) {
		uint32_t i = f->work[--f->nwork];
		const jinst_insn *in = &f->insns[i];
		for (uint16_t k = 0; k < code->exception_count; k++) {
			const jinst_exception_entry *e = &code->exceptions[k];
			if (in->offset >= e->start_pc && in->offset < e->end_pc)
				reach(f, e->handler_pc);
		}
		enum jinst_operand_kind kind = in->wide ? JINST_OPND_LOCAL : jinst_opcode_operands(in->opcode);
		if (kind == JINST_OPND_BRANCH2 || kind == JINST_OPND_BRANCH4)
			reach(f, in->operand); /* jsr too: its subroutine, and what follows once ret comes back */
		if (in->sw) {
			reach(f, in->sw->default_target);
			for (uint32_t t = 0; t < in->sw->count; t++)
				reach(f, in->sw->targets[t]);
		}
		if (!(jinst_opcodes[in->opcode].flags & JINST_OPF_UNCONDITIONAL) && i + 1 < f->n)
			reach(f, (int32_t)f->insns[i + 1].offset);
	}
}

/* A run already in the patched form, outside every range, stays as it is
 * (so patching twice changes nothing): count it as reached. */
static void keep_patched_runs(flow *f, const jinst_code *code)
{
	const jinst_insn *insns = f->insns;
	bool *reached = f->reached;
	uint32_t n = f->n;
	for (uint32_t i = 0; i < n; i++) {
		if (reached[i])
			continue;
		uint32_t j = i;
		while (j < n && !reached[j] && insns[j].opcode == JINST_OP_NOP)
			j++;
		if (j < n && !reached[j] && insns[j].opcode == JINST_OP_ATHROW && (j + 1 == n || reached[j + 1])) {
			bool covered = false;
			for (uint16_t k = 0; k < code->exception_count; k++)
				covered |= code->exceptions[k].start_pc <= insns[j].offset &&
				           code->exceptions[k].end_pc > insns[i].offset;
			if (!covered && code->max_stack >= 1)
				for (uint32_t x = i; x <= j; x++)
					reached[x] = true;
		}
		i = j;
	}
}

/* The dead runs as [from, to) byte ranges in code order, each rewritten in
 * a copy of the code as nop ... nop athrow. */
static void rewrite_runs(const flow *f, uint32_t len, uint32_t *from, uint32_t *to, uint8_t *bytes)
{
	uint32_t r = 0;
	for (uint32_t i = 0; i < f->n; i++) {
		if (f->reached[i])
			continue;
		uint32_t j = i;
		while (j < f->n && !f->reached[j])
			j++;
		from[r] = f->insns[i].offset;
		to[r] = j < f->n ? f->insns[j].offset : len;
		memset(bytes + from[r], JINST_OP_NOP, to[r] - from[r]);
		bytes[to[r] - 1] = JINST_OP_ATHROW;
		r++;
		i = j;
	}
}

/* Each entry loses the runs inside its range: it may split in pieces (kept
 * in place, so the first-match order of the table holds) or vanish. */
static int cut_exception_ranges(jinst_code *code, const uint32_t *from, const uint32_t *to, uint32_t nruns,
                                jinst_arena *A, jinst_diag *diag)
{
	uint32_t cap = 0;
	for (uint16_t k = 0; k < code->exception_count; k++) {
		cap++;
		for (uint32_t r = 0; r < nruns; r++)
			if (from[r] > code->exceptions[k].start_pc && to[r] < code->exceptions[k].end_pc)
				cap++;
	}
	jinst_exception_entry *ex = jinst_arena_alloc(A, ((size_t)cap + 1) * sizeof(*ex));
	if (!ex)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	uint32_t nex = 0;
	for (uint16_t k = 0; k < code->exception_count; k++) {
		jinst_exception_entry e = code->exceptions[k];
		uint32_t s = e.start_pc;
		for (uint32_t r = 0; r < nruns && s < e.end_pc; r++) {
			if (to[r] <= s || from[r] >= e.end_pc)
				continue;
			if (from[r] > s) {
				ex[nex] = e;
				ex[nex].start_pc = (uint16_t)s;
				ex[nex++].end_pc = (uint16_t)from[r];
			}
			s = to[r];
		}
		if (s < e.end_pc) {
			ex[nex] = e;
			ex[nex++].start_pc = (uint16_t)s;
		}
	}
	if (nex > 65535)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET,
		                  "cutting dead code out of the exception table needs %u entries", (unsigned)nex);
	code->exceptions = ex;
	code->exception_count = (uint16_t)nex;
	return 0;
}

/* The flow's arrays, and every handler checked to start an instruction. */
static int open_flow(flow *f, jinst_arena *A, const jinst_code *code, jinst_diag *diag)
{
	uint32_t len = code->code_length, n = f->n;
	int32_t *insn_at = jinst_arena_alloc(A, (size_t)len * sizeof(int32_t));
	f->reached = jinst_arena_zalloc(A, (size_t)n);
	f->work = jinst_arena_alloc(A, (size_t)n * sizeof(uint32_t));
	if (!insn_at || !f->reached || !f->work)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < len; i++)
		insn_at[i] = -1;
	for (uint32_t i = 0; i < n; i++)
		insn_at[f->insns[i].offset] = (int32_t)i;
	f->insn_at = insn_at;
	for (uint16_t k = 0; k < code->exception_count; k++) {
		const jinst_exception_entry *e = &code->exceptions[k];
		if (e->handler_pc >= len || insn_at[e->handler_pc] < 0)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
			                  "exception table entry %u: handler %u is not an instruction", k, e->handler_pc);
	}
	return 0;
}

int jinst_code_patch_unreachable(jinst_class *c, jinst_code *code, uint32_t *patched, jinst_diag *diag)
{
	*patched = 0;
	jinst_insn *insns;
	uint32_t n;
	int rc = jinst_code_decode(c, code, &insns, &n, diag);
	if (rc)
		return rc;
	jinst_arena *A = c->arena;
	flow f = {.insns = insns, .n = n};
	if ((rc = open_flow(&f, A, code, diag)))
		return rc;
	mark_reached(&f, code);
	keep_patched_runs(&f, code);
	uint32_t nruns = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!f.reached[i] && (i == 0 || f.reached[i - 1]))
			nruns++;
	if (!nruns)
		return 0;
	uint32_t len = code->code_length;
	uint32_t *from = jinst_arena_alloc(A, (size_t)nruns * sizeof(uint32_t));
	uint32_t *to = jinst_arena_alloc(A, (size_t)nruns * sizeof(uint32_t));
	uint8_t *bytes = jinst_arena_alloc(A, len);
	if (!from || !to || !bytes)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	memcpy(bytes, code->code, len);
	rewrite_runs(&f, len, from, to, bytes);
	if ((rc = cut_exception_ranges(code, from, to, nruns, A, diag)))
		return rc;
	code->code = bytes;
	if (code->max_stack < 1)
		code->max_stack = 1; /* the Throwable of the dead runs' frame */
	*patched = nruns;
	return 0;
}
