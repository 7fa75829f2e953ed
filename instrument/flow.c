/*
 * The uninitialized-reference flow: which stack slots and locals hold the
 * uninitialized reference of a `new`, or uninitializedThis, at each
 * instruction. The trace pass asks it where `this` is initialized in a
 * constructor (its catch-all may cover only code after that); the
 * allocation pass which invokespecial <init> completes which `new`.
 *
 * Each slot and local carries a mark: 0 for any other value, the index of
 * the `new` + 1 (when the owner asks for them, mark_news), or whatever the
 * owner put in local 0 at entry (uninitializedThis: JINST_FLOW_THIS). The
 * marks move with aload/astore, the dup family and swap; every other
 * instruction pops what the opcode table or the pool entry's descriptor
 * says and pushes unmarked values (a `new` its mark). At an invokespecial
 * <init> whose receiver is marked, the owner's on_init decides: the
 * allocation pass records the site and clears that `new`'s marks (the
 * reference is initialized), the trace pass stops following marks on that
 * path (`this` is initialized from there on).
 *
 * The code is walked from its entry and from every handler (with the
 * locals of the instruction the handler covers and a stack of one unmarked
 * exception), straight-line runs at a time over a worklist. The verifier
 * makes the marks the same on every path to an instruction (an
 * uninitialized type merges with nothing but itself), so each instruction
 * is walked at most once with marks and once without (seen says which),
 * with the first state that reaches it. jsr/ret where marks are followed
 * end the walk (JINST_EUNSUPPORTED): inlining subroutines is the editor's.
 */
#include <string.h>

#include "internal.h"

typedef struct jinst_flow_pending {
	uint32_t idx;
	jinst_flow_state *st; /* NULL: marks no longer followed */
} jinst_flow_pending;

static jinst_flow_state *state_dup(jinst_flow *f, const jinst_flow_state *s)
{
	jinst_flow_state *t = jinst_arena_alloc(f->A, sizeof(*t));
	uint32_t *b = jinst_arena_alloc(f->A, ((size_t)f->max_stack + f->max_locals + 1) * sizeof(*b));
	if (!t || !b)
		return NULL;
	t->sp = s->sp;
	t->stack = b;
	t->locals = b + f->max_stack;
	memcpy(b, s->stack, (size_t)f->max_stack * sizeof(*b));
	memcpy(t->locals, s->locals, (size_t)f->max_locals * sizeof(*b));
	return t;
}

static int enqueue(jinst_flow *f, int64_t target, const jinst_flow_state *s)
{
	if (target < 0 || target >= f->code->code_length || f->at[target] < 0)
		return JINST_EMALFORMED;
	uint32_t idx = (uint32_t)f->at[target];
	if (f->seen[idx] & (s ? JINST_FLOW_MARKED : JINST_FLOW_UNMARKED))
		return 0;
	if (f->nwl == f->capwl) {
		uint32_t cap = f->capwl ? 2 * f->capwl : 32;
		jinst_flow_pending *w = jinst_arena_alloc(f->A, (size_t)cap * sizeof(*w));
		if (!w)
			return JINST_ENOMEM;
		if (f->nwl)
			memcpy(w, f->wl, (size_t)f->nwl * sizeof(*w));
		f->wl = w;
		f->capwl = cap;
	}
	jinst_flow_state *copy = NULL;
	if (s && !(copy = state_dup(f, s)))
		return JINST_ENOMEM;
	f->wl[f->nwl++] = (jinst_flow_pending){idx, copy};
	return 0;
}

/* Slots of one field type at d (advanced past it); -1 when malformed. */
static int one_type(const uint8_t **d, const uint8_t *end)
{
	const uint8_t *p = *d;
	bool array = false;
	while (p < end && *p == '[') {
		p++;
		array = true;
	}
	if (p >= end)
		return -1;
	uint8_t t = *p++;
	if (t == 'L') {
		p = memchr(p, ';', (size_t)(end - p));
		if (!p)
			return -1;
		p++;
	} else if (!strchr("BCDFIJSZV", t) || (t == 'V' && array)) {
		return -1;
	}
	*d = p;
	return array || t == 'L' ? 1 : t == 'J' || t == 'D' ? 2 : t == 'V' ? 0 : 1;
}

/* The slots a field or method reference takes (*args, -1 for a field) and
 * gives back (*ret); *init: it names <init>. */
static int ref_slots(jinst_class *c, uint16_t index, int *args, int *ret, bool *init)
{
	jinst_cp_entry e, nt;
	if (jinst_cp_get(c, index, &e))
		return JINST_EMALFORMED;
	uint16_t nti = e.tag == JINST_CP_INVOKE_DYNAMIC ? e.u.dyn.name_and_type_index : e.u.ref.name_and_type_index;
	uint16_t nl, dl;
	if (jinst_cp_get(c, nti, &nt) || nt.tag != JINST_CP_NAME_AND_TYPE)
		return JINST_EMALFORMED;
	const uint8_t *name = jinst_cp_utf8(c, nt.u.nat.name_index, &nl);
	const uint8_t *d = jinst_cp_utf8(c, nt.u.nat.descriptor_index, &dl);
	if (!name || !d || !dl)
		return JINST_EMALFORMED;
	const uint8_t *end = d + dl;
	*init = nl == 6 && !memcmp(name, "<init>", 6);
	*args = -1;
	if (*d == '(') {
		d++;
		*args = 0;
		while (d < end && *d != ')') {
			int k = one_type(&d, end);
			if (k <= 0)
				return JINST_EMALFORMED;
			*args += k;
		}
		if (d++ >= end)
			return JINST_EMALFORMED;
	}
	*ret = one_type(&d, end);
	return *ret < 0 || d != end ? JINST_EMALFORMED : 0;
}

/* The dup family and swap on the marks: take k slots, put back the pattern
 * (indices into what was taken, 0 the old top), bottom first. */
static int shuffle(jinst_flow *f, jinst_flow_state *s, uint8_t op)
{
	static const struct { uint8_t take, put; uint8_t from[6]; } fam[] = {
		[JINST_OP_DUP - JINST_OP_DUP] = {1, 2, {0, 0}},
		[JINST_OP_DUP_X1 - JINST_OP_DUP] = {2, 3, {0, 1, 0}},
		[JINST_OP_DUP_X2 - JINST_OP_DUP] = {3, 4, {0, 2, 1, 0}},
		[JINST_OP_DUP2 - JINST_OP_DUP] = {2, 4, {1, 0, 1, 0}},
		[JINST_OP_DUP2_X1 - JINST_OP_DUP] = {3, 5, {1, 0, 2, 1, 0}},
		[JINST_OP_DUP2_X2 - JINST_OP_DUP] = {4, 6, {1, 0, 3, 2, 1, 0}},
		[JINST_OP_SWAP - JINST_OP_DUP] = {2, 2, {0, 1}},
	};
	const uint8_t k = fam[op - JINST_OP_DUP].take, put = fam[op - JINST_OP_DUP].put;
	if (s->sp < k || s->sp - k + put > f->max_stack)
		return JINST_EMALFORMED;
	uint32_t v[4];
	for (uint8_t i = 0; i < k; i++)
		v[i] = s->stack[s->sp - 1 - i];
	s->sp = (uint16_t)(s->sp - k);
	for (uint8_t i = 0; i < put; i++)
		s->stack[s->sp++] = v[fam[op - JINST_OP_DUP].from[i]];
	return 0;
}

void jinst_flow_initialized(jinst_flow *f, jinst_flow_state *s, uint32_t mark)
{
	for (uint16_t i = 0; i < s->sp; i++)
		if (s->stack[i] == mark)
			s->stack[i] = 0;
	for (uint16_t i = 0; i < f->max_locals; i++)
		if (s->locals[i] == mark)
			s->locals[i] = 0;
}

static int local_of(uint8_t op, const jinst_insn *in, uint8_t base0, uint8_t plain)
{
	return op == plain ? in->operand : op - base0;
}

/* The slots of a call or field access; at a marked constructor call, the
 * owner's on_init. */
static int member_effect(jinst_flow *f, jinst_flow_state *s, uint32_t idx, int *pop, int *push, bool *unmarked)
{
	const jinst_insn *in = &f->in[idx];
	uint8_t op = in->opcode;
	int args, ret;
	bool init;
	if (ref_slots(f->c, (uint16_t)in->operand, &args, &ret, &init))
		return JINST_EMALFORMED;
	if ((args < 0) != (op <= JINST_OP_PUTFIELD))
		return JINST_EMALFORMED;
	switch (op) {
	case JINST_OP_GETSTATIC: *pop = 0, *push = ret; return 0;
	case JINST_OP_PUTSTATIC: *pop = ret, *push = 0; return 0;
	case JINST_OP_GETFIELD: *pop = 1, *push = ret; return 0;
	case JINST_OP_PUTFIELD: *pop = 1 + ret, *push = 0; return 0;
	case JINST_OP_INVOKESTATIC: case JINST_OP_INVOKEDYNAMIC: *pop = args, *push = ret; return 0;
	default: *pop = args + 1, *push = ret; break;
	}
	if (op != JINST_OP_INVOKESPECIAL || !init)
		return 0;
	if (s->sp < *pop)
		return JINST_EMALFORMED;
	uint16_t receiver = (uint16_t)(s->sp - *pop);
	return s->stack[receiver] ? f->on_init(f, s, idx, receiver, unmarked) : 0;
}

/* One instruction's effect on the marks. */
static int step(jinst_flow *f, jinst_flow_state *s, uint32_t idx, bool *unmarked)
{
	const jinst_insn *in = &f->in[idx];
	uint8_t op = in->opcode;
	if (op == JINST_OP_ALOAD || (op >= JINST_OP_ALOAD_0 && op <= JINST_OP_ALOAD_3)) {
		int l = local_of(op, in, JINST_OP_ALOAD_0, JINST_OP_ALOAD);
		if (l >= f->max_locals || s->sp >= f->max_stack)
			return JINST_EMALFORMED;
		s->stack[s->sp++] = s->locals[l];
		return 0;
	}
	if (op == JINST_OP_ASTORE || (op >= JINST_OP_ASTORE_0 && op <= JINST_OP_ASTORE_3)) {
		int l = local_of(op, in, JINST_OP_ASTORE_0, JINST_OP_ASTORE);
		if (l >= f->max_locals || !s->sp)
			return JINST_EMALFORMED;
		s->locals[l] = s->stack[--s->sp];
		return 0;
	}
	if (op >= JINST_OP_DUP && op <= JINST_OP_SWAP)
		return shuffle(f, s, op);
	if (jinst_opcodes[op].flags & JINST_OPF_STORE) { /* the other stores: plain values in their slots */
		bool two = op == JINST_OP_LSTORE || op == JINST_OP_DSTORE ||
		           (op >= JINST_OP_LSTORE_0 && op <= JINST_OP_LSTORE_3) ||
		           (op >= JINST_OP_DSTORE_0 && op <= JINST_OP_DSTORE_3);
		int l = op <= JINST_OP_DSTORE ? in->operand : (op - JINST_OP_ISTORE_0) % 4;
		if (l + (two ? 2 : 1) > f->max_locals)
			return JINST_EMALFORMED;
		s->locals[l] = 0;
		if (two)
			s->locals[l + 1] = 0;
	}
	if (!jinst_opcodes[op].name)
		return JINST_EMALFORMED;
	int pop = jinst_opcodes[op].pops, push = jinst_opcodes[op].pushes;
	if (op == JINST_OP_MULTIANEWARRAY) {
		pop = in->operand2;
		push = 1;
	} else if (pop == JINST_OP_VARIES) {
		int rc = member_effect(f, s, idx, &pop, &push, unmarked);
		if (rc)
			return rc;
	}
	if (s->sp < pop || s->sp - pop + push > f->max_stack)
		return JINST_EMALFORMED;
	s->sp = (uint16_t)(s->sp - pop);
	for (int i = 0; i < push; i++)
		s->stack[s->sp++] = op == JINST_OP_NEW && f->mark_news ? idx + 1 : 0;
	return 0;
}

/* The handlers that cover instruction in, queued with the locals of s and
 * a stack of the one exception (s NULL: unmarked). */
static int enqueue_handlers(jinst_flow *f, const jinst_insn *in, jinst_flow_state *s)
{
	for (uint16_t i = 0; i < f->code->exception_count; i++) {
		const jinst_exception_entry *e = &f->code->exceptions[i];
		if (in->offset < e->start_pc || in->offset >= e->end_pc)
			continue;
		if (!s) {
			int rc = enqueue(f, e->handler_pc, NULL);
			if (rc)
				return rc;
			continue;
		}
		jinst_flow_state h = {1, s->stack, s->locals};
		uint32_t top = s->stack[0];
		s->stack[0] = 0;
		int rc = enqueue(f, e->handler_pc, &h);
		s->stack[0] = top;
		if (rc)
			return rc;
	}
	return 0;
}

/* Straight-line code from w, queueing branch targets and handlers. */
static int walk(jinst_flow *f, jinst_flow_pending w)
{
	jinst_flow_state *s = w.st;
	for (uint32_t idx = w.idx;; idx++) {
		uint8_t mode = s ? JINST_FLOW_MARKED : JINST_FLOW_UNMARKED;
		if (idx >= f->n)
			return JINST_EMALFORMED; /* fell off the end */
		if (f->seen[idx] & mode)
			return 0;
		f->seen[idx] |= mode;
		const jinst_insn *in = &f->in[idx];
		int rc = enqueue_handlers(f, in, s);
		if (rc)
			return rc;
		uint8_t op = in->opcode;
		unsigned flags = jinst_opcodes[op].flags;
		bool unmarked = false;
		if (s && (flags & JINST_OPF_SUBROUTINE))
			return JINST_EUNSUPPORTED;
		if (s && (rc = step(f, s, idx, &unmarked)))
			return rc;
		jinst_flow_state *next = unmarked ? NULL : s;
		if (flags & JINST_OPF_BRANCH) {
			if ((rc = enqueue(f, in->operand, next)))
				return rc;
			if (op == JINST_OP_GOTO || op == JINST_OP_GOTO_W)
				return 0;
		} else if (flags & JINST_OPF_SWITCH) {
			if ((rc = enqueue(f, in->sw->default_target, next)))
				return rc;
			for (uint32_t i = 0; i < in->sw->count; i++)
				if ((rc = enqueue(f, in->sw->targets[i], next)))
					return rc;
			return 0;
		} else if (flags & JINST_OPF_UNCONDITIONAL) { /* *return, athrow, ret */
			return 0;
		}
		s = next;
	}
}

int jinst_flow_run(jinst_flow *f, uint32_t this_mark)
{
	f->at = jinst_arena_alloc(f->A, ((size_t)f->code->code_length + 1) * sizeof(*f->at));
	f->seen = jinst_arena_zalloc(f->A, (size_t)f->n + 1);
	uint32_t *b = jinst_arena_zalloc(f->A, ((size_t)f->max_stack + f->max_locals + 1) * sizeof(*b));
	if (!f->at || !f->seen || !b)
		return JINST_ENOMEM;
	memset(f->at, 0xff, ((size_t)f->code->code_length + 1) * sizeof(*f->at));
	for (uint32_t i = 0; i < f->n; i++)
		f->at[f->in[i].offset] = (int32_t)i;
	jinst_flow_state s0 = {0, b, b + f->max_stack};
	if (f->max_locals)
		s0.locals[0] = this_mark;
	int rc = enqueue(f, 0, &s0);
	while (!rc && f->nwl) {
		jinst_flow_pending w = f->wl[--f->nwl];
		rc = walk(f, w);
	}
	return rc;
}
