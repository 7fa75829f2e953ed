/*
 * Subroutine inlining: code with jsr/ret rewritten without them, so that
 * frames can be computed for it (the type checker of JVMS 4.10.1 has no
 * rule for jsr or ret; class files of version 51 and later may not hold
 * them, JVMS 4.9.1).
 *
 * How it works. The method body and each subroutine (the code from a jsr
 * target) are sets of instructions: what is reached from their entry by
 * fall-through, branches, switches and the handlers of reached
 * instructions, never entering a jsr target (a jsr's own successor is the
 * instruction after it, where ret comes back) and stopping at ret. Then the
 * body is emitted, and after it one copy ("instantiation") of a subroutine
 * for every jsr that reaches it, nested ones included: each instantiation
 * is emitted in the original order of its instructions, so fall-through
 * stays fall-through. In a copy,
 *   jsr S   becomes  aconst_null; goto <this call's copy of S>
 *           (the subroutine's astore of its return address then stores a
 *           null, and the stack heights stay as they were);
 *   ret n   becomes  goto <the instruction after the jsr that made this copy>;
 *   a branch goes to the copy of its target in the same instantiation.
 * Every exception table entry is repeated for every instantiation, over
 * the copies of the instructions it covered, with the copy of its handler
 * in the same instantiation (a handler is a member wherever an instruction
 * it covers is), in the original entry order. Code that no instantiation
 * reaches is not emitted at all.
 *
 * The new layout keeps every branch in its original form, re-pads the
 * switches, and fails (JINST_ETOOLARGE) when a 16-bit branch no longer
 * reaches or the code outgrows 65535 bytes; no branch is widened. The
 * LineNumberTable follows the copies (one entry per copy of a line's first
 * instruction); LocalVariableTable and LocalVariableTypeTable, whose ranges
 * cannot follow copies, are dropped (they are debugging information only).
 * A ret whose local is not the one its subroutine's first instruction
 * stores into (a return through several levels at once), recursion, and
 * more than 4096 instantiations (or more than 4M instructions times
 * instantiations) are refused (JINST_EUNSUPPORTED).
 */
#include "internal.h"

#include "jinst/infer.h"

#define NONE UINT32_MAX
#define MAX_INSTANCES 4096
#define MAX_MAPPED (4u << 20) /* instructions times copies: 32 MB of maps at most */

typedef struct instance {
	uint32_t entry;    /* instruction index of the subroutine's first instruction; 0 for the body */
	uint32_t parent;   /* instantiation of the caller, NONE for the body */
	uint32_t ret_to;   /* instruction index (in parent) after the jsr */
	uint32_t depth;
	uint32_t *first;   /* per instruction: its first emitted item here, or NONE */
	uint32_t *last;    /* per instruction: its last emitted item here */
} instance;

enum { E_COPY, E_ACONST_NULL, E_GOTO, E_GOTO_W };

typedef struct item {
	uint8_t kind;
	uint32_t insn;     /* the original instruction (E_COPY), or the jsr/ret it replaces */
	uint32_t inst;     /* the instantiation it is emitted in */
	uint32_t target_inst, target_insn; /* E_GOTO*: where it goes */
	uint32_t offset, length;
} item;

typedef struct inliner {
	jinst_class *c;
	jinst_code *code;
	jinst_diag *diag;
	jinst_insn *insns;
	uint32_t n;
	int32_t *insn_at;
	instance *inst;
	uint32_t ninst;
	item *items;
	uint32_t nitems, cap;
	uint32_t *work;
	bool *member;
} inliner;

static bool is_jsr(uint8_t op)
{
	return op == JINST_OP_JSR || op == JINST_OP_JSR_W;
}

static bool no_fall_through(uint8_t op)
{
	return jinst_opcodes[op].flags & JINST_OPF_UNCONDITIONAL;
}

/* The members of the subroutine entered at instruction `entry` into J->member. */
static int members(inliner *J, uint32_t entry)
{
	memset(J->member, 0, J->n);
	uint32_t nwork = 0;
	J->member[entry] = true;
	J->work[nwork++] = entry;
#define ADD(pc) do { int32_t x_ = J->insn_at[(pc)]; \
		if (x_ >= 0 && !J->member[x_]) { J->member[x_] = true; J->work[nwork++] = (uint32_t)x_; } } while (0)
	while (nwork) {
		uint32_t i = J->work[--nwork];
		const jinst_insn *in = &J->insns[i];
		for (uint16_t k = 0; k < J->code->exception_count; k++) {
			const jinst_exception_entry *e = &J->code->exceptions[k];
			if (in->offset >= e->start_pc && in->offset < e->end_pc)
				ADD(e->handler_pc);
		}
		enum jinst_operand_kind kind = in->wide ? JINST_OPND_LOCAL : jinst_opcode_operands(in->opcode);
		if ((kind == JINST_OPND_BRANCH2 || kind == JINST_OPND_BRANCH4) && !is_jsr(in->opcode))
			ADD(in->operand);
		if (in->sw) {
			ADD(in->sw->default_target);
			for (uint32_t t = 0; t < in->sw->count; t++)
				ADD(in->sw->targets[t]);
		}
		if (!no_fall_through(in->opcode)) {
			if (i + 1 >= J->n)
				return jinst_fail(J->diag, JINST_EMALFORMED, JINST_NO_OFFSET, "code falls off its end at pc %u",
				                  (unsigned)in->offset);
			ADD(J->insns[i + 1].offset);
		}
	}
#undef ADD
	return 0;
}

static int emit(inliner *J, uint8_t kind, uint32_t insn, uint32_t inst, uint32_t ti, uint32_t tn)
{
	if (J->nitems == J->cap) {
		uint32_t cap = J->cap ? J->cap * 2 : 256;
		item *p = jinst_arena_alloc(J->c->arena, (size_t)cap * sizeof(item));
		if (!p)
			return jinst_fail(J->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		if (J->nitems)
			memcpy(p, J->items, J->nitems * sizeof(item));
		J->items = p;
		J->cap = cap;
	}
	if (J->nitems >= 65536)
		return jinst_fail(J->diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "inlined subroutines exceed 65535 instructions");
	J->items[J->nitems++] = (item){kind, insn, inst, ti, tn, 0, 0};
	return 0;
}

/* The local a ret reads, and the one an astore writes (NONE for other instructions). */
static uint32_t astore_local(const jinst_insn *in)
{
	if (in->opcode == JINST_OP_ASTORE)
		return (uint32_t)in->operand;
	if (in->opcode >= JINST_OP_ASTORE_0 && in->opcode <= JINST_OP_ASTORE_3)
		return in->opcode - (uint32_t)JINST_OP_ASTORE_0;
	return NONE;
}

static int new_instance(inliner *J, uint32_t entry, uint32_t parent, uint32_t ret_to)
{
	/* Each copy maps every instruction (8 bytes each): bound what a
	 * pathological method can ask of the arena. */
	if (J->ninst >= MAX_INSTANCES || ((size_t)J->ninst + 1) * J->n > MAX_MAPPED)
		return jinst_fail(J->diag, JINST_EUNSUPPORTED, JINST_NO_OFFSET,
		                  "inlining needs more than %u subroutine copies of %u instructions", (unsigned)J->ninst,
		                  (unsigned)J->n);
	uint32_t depth = parent == NONE ? 0 : J->inst[parent].depth + 1;
	for (uint32_t p = parent; p != NONE; p = J->inst[p].parent)
		if (J->inst[p].entry == entry && p != 0)
			return jinst_fail(J->diag, JINST_EUNSUPPORTED, JINST_NO_OFFSET,
			                  "subroutine at pc %u calls itself", (unsigned)J->insns[entry].offset);
	instance *x = &J->inst[J->ninst++];
	x->entry = entry;
	x->parent = parent;
	x->ret_to = ret_to;
	x->depth = depth;
	x->first = jinst_arena_alloc(J->c->arena, (size_t)J->n * sizeof(uint32_t));
	x->last = jinst_arena_alloc(J->c->arena, (size_t)J->n * sizeof(uint32_t));
	if (!x->first || !x->last)
		return jinst_fail(J->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < J->n; i++)
		x->first[i] = x->last[i] = NONE;
	return 0;
}

/* Emits instantiation k: its members in their original order. */
static int emit_instance(inliner *J, uint32_t k)
{
	int rc = members(J, J->inst[k].entry);
	if (rc)
		return rc;
	uint32_t ret_local = k ? astore_local(&J->insns[J->inst[k].entry]) : NONE;
	for (uint32_t i = 0; i < J->n; i++) {
		if (!J->member[i])
			continue;
		const jinst_insn *in = &J->insns[i];
		J->inst[k].first[i] = J->nitems;
		if (is_jsr(in->opcode)) {
			uint32_t child = J->ninst;
			rc = new_instance(J, (uint32_t)J->insn_at[in->operand], k, i + 1);
			if (!rc)
				rc = emit(J, E_ACONST_NULL, i, k, NONE, NONE);
			if (!rc)
				rc = emit(J, in->opcode == JINST_OP_JSR_W ? E_GOTO_W : E_GOTO, i, k, child, J->inst[child].entry);
		} else if (in->opcode == JINST_OP_RET) {
			if (!k || (uint32_t)in->operand != ret_local)
				return jinst_fail(J->diag, JINST_EUNSUPPORTED, JINST_NO_OFFSET,
				                  "ret at pc %u does not return from the subroutine it is in",
				                  (unsigned)in->offset);
			rc = emit(J, E_GOTO, i, k, J->inst[k].parent, J->inst[k].ret_to);
		} else {
			rc = emit(J, E_COPY, i, k, NONE, NONE);
		}
		if (rc)
			return rc;
		J->inst[k].last[i] = J->nitems - 1;
	}
	return 0;
}

static uint32_t item_length(const inliner *J, const item *it, uint32_t offset)
{
	switch (it->kind) {
	case E_ACONST_NULL: return 1;
	case E_GOTO: return 3;
	case E_GOTO_W: return 5;
	default: break;
	}
	const jinst_insn *in = &J->insns[it->insn];
	if (!in->sw)
		return in->length;
	uint32_t pad = 3 - (offset & 3);
	return 1 + pad + (in->opcode == JINST_OP_TABLESWITCH ? 12 + 4 * in->sw->count : 8 + 8 * in->sw->count);
}

/* The new offset of the copy of original pc `pc` in instantiation k. */
static int32_t new_pc(const inliner *J, uint32_t k, int32_t pc)
{
	uint32_t f = J->inst[k].first[J->insn_at[pc]];
	return f == NONE ? -1 : (int32_t)J->items[f].offset;
}

static int put_branch(inliner *J, uint8_t *p, int32_t from, int32_t to, bool wide)
{
	if (to < 0)
		return jinst_fail(J->diag, JINST_EMALFORMED, JINST_NO_OFFSET, "a branch at %d leaves its subroutine", from);
	int32_t d = to - from;
	if (wide) {
		jinst_put_u4(p, (uint32_t)d);
		return 0;
	}
	if (d < -32768 || d > 32767)
		return jinst_fail(J->diag, JINST_ETOOLARGE, JINST_NO_OFFSET,
		                  "after inlining, the branch at pc %d needs a 32-bit offset", from);
	jinst_put_u2(p, (uint16_t)(int16_t)d);
	return 0;
}

static int encode(inliner *J, uint8_t *out)
{
	for (uint32_t x = 0; x < J->nitems; x++) {
		const item *it = &J->items[x];
		uint8_t *p = out + it->offset;
		int32_t at = (int32_t)it->offset;
		int rc = 0;
		if (it->kind == E_ACONST_NULL) {
			p[0] = JINST_OP_ACONST_NULL;
			continue;
		}
		if (it->kind == E_GOTO || it->kind == E_GOTO_W) {
			p[0] = it->kind == E_GOTO ? JINST_OP_GOTO : JINST_OP_GOTO_W;
			int32_t to = (int32_t)J->items[J->inst[it->target_inst].first[it->target_insn]].offset;
			rc = put_branch(J, p + 1, at, to, it->kind == E_GOTO_W);
			if (rc)
				return rc;
			continue;
		}
		const jinst_insn *in = &J->insns[it->insn];
		enum jinst_operand_kind kind = in->wide ? JINST_OPND_LOCAL : jinst_opcode_operands(in->opcode);
		if (kind == JINST_OPND_BRANCH2 || kind == JINST_OPND_BRANCH4) {
			p[0] = in->opcode;
			rc = put_branch(J, p + 1, at, new_pc(J, it->inst, in->operand), kind == JINST_OPND_BRANCH4);
		} else if (in->sw) {
			uint32_t pad = 3 - (it->offset & 3);
			p[0] = in->opcode;
			memset(p + 1, 0, pad);
			uint8_t *q = p + 1 + pad;
			int32_t d = new_pc(J, it->inst, in->sw->default_target);
			rc = put_branch(J, q, at, d, true);
			q += 4;
			if (in->opcode == JINST_OP_TABLESWITCH) {
				jinst_put_u4(q, (uint32_t)in->sw->low);
				jinst_put_u4(q + 4, (uint32_t)in->sw->high);
				q += 8;
			} else {
				jinst_put_u4(q, in->sw->count);
				q += 4;
			}
			for (uint32_t t = 0; !rc && t < in->sw->count; t++) {
				if (in->opcode == JINST_OP_LOOKUPSWITCH) {
					jinst_put_u4(q, (uint32_t)in->sw->keys[t]);
					q += 4;
				}
				rc = put_branch(J, q, at, new_pc(J, it->inst, in->sw->targets[t]), true);
				q += 4;
			}
		} else {
			memcpy(p, J->code->code + in->offset, in->length);
		}
		if (rc)
			return rc;
	}
	return 0;
}

typedef struct ranges {
	jinst_exception_entry *items;
	uint32_t count, cap;
} ranges;

/* Adds the entry covering emitted items first..last, handled at item h. */
static int add_range(inliner *J, ranges *R, uint32_t first, uint32_t last, uint32_t h, uint16_t catch_type)
{
	if (h == NONE) /* cannot be: members() adds the handler of every member */
		return jinst_fail(J->diag, JINST_EMALFORMED, JINST_NO_OFFSET, "a handler has no copy");
	if (R->count == R->cap) {
		uint32_t cap = R->cap ? R->cap * 2 : 16;
		jinst_exception_entry *p = jinst_arena_alloc(J->c->arena, cap * sizeof(*p));
		if (!p)
			return jinst_fail(J->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		if (R->count)
			memcpy(p, R->items, R->count * sizeof(*p));
		R->items = p;
		R->cap = cap;
	}
	const item *l = &J->items[last];
	R->items[R->count++] = (jinst_exception_entry){(uint16_t)J->items[first].offset,
	                                               (uint16_t)(l->offset + l->length),
	                                               (uint16_t)J->items[h].offset, catch_type};
	return 0;
}

/* Exception entries: each original entry, in order, over each instantiation,
 * one entry per run of consecutive copies. */
static int exceptions(inliner *J, ranges *R)
{
	for (uint16_t k = 0; k < J->code->exception_count; k++) {
		const jinst_exception_entry *e = &J->code->exceptions[k];
		for (uint32_t x = 0; x < J->ninst; x++) {
			const instance *I = &J->inst[x];
			uint32_t h = I->first[J->insn_at[e->handler_pc]];
			uint32_t first = NONE, last = NONE;
			for (uint32_t i = (uint32_t)J->insn_at[e->start_pc]; i < J->n && J->insns[i].offset < e->end_pc; i++) {
				if (I->first[i] == NONE)
					continue;
				if (first != NONE && I->first[i] == last + 1) {
					last = I->last[i];
					continue;
				}
				int rc = first != NONE ? add_range(J, R, first, last, h, e->catch_type) : 0;
				if (rc)
					return rc;
				first = I->first[i];
				last = I->last[i];
			}
			int rc = first != NONE ? add_range(J, R, first, last, h, e->catch_type) : 0;
			if (rc)
				return rc;
		}
	}
	if (R->count > 65535)
		return jinst_fail(J->diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "inlining needs %u exception entries",
		                  (unsigned)R->count);
	return 0;
}

/* The LineNumberTable over the copies, and the attribute list without the
 * local variable tables. */
static int code_attrs(inliner *J, jinst_attr_list *out)
{
	const jinst_attr_list *in = &J->code->attrs;
	out->count = 0;
	out->items = jinst_arena_alloc(J->c->arena, ((size_t)in->count + 1) * sizeof(jinst_attr));
	if (!out->items)
		return jinst_fail(J->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint16_t k = 0; k < in->count; k++) {
		jinst_attr a = in->items[k];
		if (a.kind == JINST_ATTR_LOCAL_VARIABLE_TABLE || a.kind == JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE)
			continue;
		if (a.kind == JINST_ATTR_LINE_NUMBER_TABLE) {
			jinst_line_numbers *old;
			int rc = jinst_attr_decode(J->c, &in->items[k], (void **)&old, J->diag);
			if (rc)
				return rc;
			/* Lines by original instruction, then one entry per copy. */
			uint16_t *line = jinst_arena_alloc(J->c->arena, (size_t)J->n * sizeof(uint16_t));
			bool *has = jinst_arena_zalloc(J->c->arena, J->n);
			if (!line || !has)
				return jinst_fail(J->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
			for (uint16_t i = 0; i < old->count; i++) {
				uint16_t pc = old->items[i].start_pc;
				if (pc < J->code->code_length && J->insn_at[pc] >= 0) {
					has[J->insn_at[pc]] = true;
					line[J->insn_at[pc]] = old->items[i].line_number;
				}
			}
			uint32_t count = 0;
			for (uint32_t x = 0; x < J->nitems; x++)
				if (J->items[x].kind == E_COPY && has[J->items[x].insn] &&
				    J->inst[J->items[x].inst].first[J->items[x].insn] == x)
					count++;
			if (count > 65535)
				return jinst_fail(J->diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "inlining needs %u line numbers",
				                  (unsigned)count);
			jinst_line_numbers *ln = jinst_arena_alloc(J->c->arena, sizeof(*ln));
			if (!ln || !(ln->items = jinst_arena_alloc(J->c->arena, ((size_t)count + 1) * sizeof(jinst_line_number))))
				return jinst_fail(J->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
			ln->count = 0;
			for (uint32_t x = 0; x < J->nitems; x++) {
				const item *it = &J->items[x];
				if (it->kind == E_COPY && has[it->insn] && J->inst[it->inst].first[it->insn] == x)
					ln->items[ln->count++] = (jinst_line_number){(uint16_t)it->offset, line[it->insn]};
			}
			a.model = ln;
			a.modified = true;
		}
		out->items[out->count++] = a;
	}
	return 0;
}

int jinst_code_inline_subroutines(jinst_class *c, jinst_code *code, uint32_t *copies, jinst_diag *diag)
{
	*copies = 0;
	inliner J = {.c = c, .code = code, .diag = diag};
	int rc = jinst_code_decode(c, code, &J.insns, &J.n, diag);
	if (rc)
		return rc;
	bool any = false;
	for (uint32_t i = 0; i < J.n && !any; i++)
		any = is_jsr(J.insns[i].opcode) || J.insns[i].opcode == JINST_OP_RET;
	if (!any)
		return 0;
	jinst_arena *A = c->arena;
	J.insn_at = jinst_arena_alloc(A, (size_t)code->code_length * sizeof(int32_t));
	J.inst = jinst_arena_alloc(A, MAX_INSTANCES * sizeof(instance));
	J.work = jinst_arena_alloc(A, (size_t)J.n * sizeof(uint32_t));
	J.member = jinst_arena_alloc(A, J.n);
	if (!J.insn_at || !J.inst || !J.work || !J.member)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < code->code_length; i++)
		J.insn_at[i] = -1;
	for (uint32_t i = 0; i < J.n; i++)
		J.insn_at[J.insns[i].offset] = (int32_t)i;
	for (uint16_t k = 0; k < code->exception_count; k++) {
		const jinst_exception_entry *e = &code->exceptions[k];
		if (e->start_pc >= code->code_length || J.insn_at[e->start_pc] < 0 || e->handler_pc >= code->code_length ||
		    J.insn_at[e->handler_pc] < 0)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "exception table entry %u is off an instruction",
			                  k);
	}
	rc = new_instance(&J, 0, NONE, NONE);
	for (uint32_t k = 0; !rc && k < J.ninst; k++)
		rc = emit_instance(&J, k);
	if (rc)
		return rc;
	/* Layout: one pass, as a switch's padding depends only on what precedes it. */
	uint32_t pc = 0;
	for (uint32_t x = 0; x < J.nitems; x++) {
		J.items[x].offset = pc;
		J.items[x].length = item_length(&J, &J.items[x], pc);
		pc += J.items[x].length;
	}
	if (pc > 65535)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "inlining subroutines gives %u bytes of code",
		                  (unsigned)pc);
	uint8_t *bytes = jinst_arena_alloc(A, pc);
	ranges R = {0};
	jinst_attr_list attrs;
	if (!bytes)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	rc = encode(&J, bytes);
	if (!rc)
		rc = exceptions(&J, &R);
	if (!rc)
		rc = code_attrs(&J, &attrs);
	if (rc)
		return rc;
	code->code = bytes;
	code->code_length = pc;
	code->exceptions = R.items;
	code->exception_count = (uint16_t)R.count;
	code->attrs = attrs;
	*copies = J.ninst - 1;
	return 0;
}
