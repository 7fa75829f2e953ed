/*
 * The trace pass: every method with code calls the entry hook first, the
 * exit hook before each return, and the exceptional-exit hook from a
 * catch-all handler that rethrows.
 *
 * Entry. The hook call goes before the first instruction, outside the
 * labels there (JINST_BEFORE_OUTSIDE), so a loop that jumps back to offset
 * 0 does not count a second entry.
 *
 * Exit. Before each *return, inside its labels (JINST_BEFORE_INSIDE), so
 * every branch to the return runs the hook too. The return value, if any,
 * stays on the stack under the id.
 *
 * Exceptional exit. One handler appended after the code: it pushes the id,
 * calls the hook (which takes the id) and throws the exception that is
 * still on the stack. Its frame is locals [] and stack [Throwable]; its
 * exception-table entry is appended after the method's own, so the
 * method's handlers keep precedence (JVMS 2.10: the first matching entry
 * wins). The range covers the whole code after the entry hook, except in
 * constructors.
 *
 * Constructors. Until the super(...) or this(...) call, `this` is
 * uninitializedThis, and a handler whose frame has no uninitializedThis
 * local may not cover such code: the incoming frame carries flagThisUninit
 * and the handler's does not (JVMS 4.10.1.4 frameIsAssignable, 4.10.1.9
 * invokespecial). So the range must start after the <init> call that
 * initializes `this`. Which invokespecial that is takes a data flow: javac
 * evaluates the arguments first, and they can hold `new X(...)` (another
 * invokespecial <init>, on an Uninitialized(new) receiver) and conditionals
 * (branches before the call). The flow below walks the code from its entry
 * and from handlers, tracking for each stack slot and local whether it
 * holds uninitializedThis (aload/astore, the dup family and swap move the
 * mark; everything else pushes unmarked values), until an invokespecial
 * <init> whose receiver slot is marked: from there on `this` is
 * initialized. Every instruction reached only with `this` initialized may
 * be covered; each maximal run of them in code order becomes one range
 * (for javac's code, one range from after super(...) to the end). Code the
 * flow never reaches is not covered: its frame, if any, is unknown here.
 *
 * Ids. The hooks take the method's id, pushed as a constant, or, under a
 * run class (code instrumented ahead of time, jinst_instrument_set_run_class),
 * as the run's BASE read from the run class of the method's own package
 * plus the id within the run: getstatic, push, iadd, one word deeper.
 *
 * Two paths, one result. The code patcher (include/jinst/patch.h) does all
 * of the above while streaming over the code; the code editor does it for
 * what the patcher declines (type annotations in the code, frames missing
 * where they are needed, branches that outgrow 16 bits, the oldest Code
 * layout) and reports what is wrong. The code, tables and frames are the
 * same either way; only max_stack may be larger through the patcher, which
 * adds the hook's depth to the old one instead of computing it.
 */
#include <string.h>

#include "internal.h"
#include "jinst/patch.h"

static int type_slots(uint8_t c)
{
	return c == 'J' || c == 'D' ? 2 : c == 'V' ? 0 : 1;
}

/* Argument and return slots of a method descriptor, or of a field's type
 * (args -1). */
static int desc_slots(const uint8_t *d, uint16_t len, int *args, int *ret)
{
	uint16_t i = 0;
	if (!len)
		return JINST_EMALFORMED;
	if (d[0] != '(') {
		*args = -1;
		*ret = type_slots(d[0]);
		return 0;
	}
	int n = 0;
	for (i = 1; i < len && d[i] != ')'; i++) {
		n += type_slots(d[i]);
		while (i < len && d[i] == '[')
			i++;
		if (i < len && d[i] == 'L')
			while (i < len && d[i] != ';')
				i++;
	}
	if (i + 1 >= len)
		return JINST_EMALFORMED;
	*args = n;
	*ret = type_slots(d[i + 1]);
	return 0;
}

/* The name and descriptor of the member or call site a cp2 operand names. */
static int member_ref(jinst_class *c, uint16_t index, const uint8_t **name, uint16_t *nlen, const uint8_t **desc,
                      uint16_t *dlen)
{
	jinst_cp_entry e, nat;
	if (jinst_cp_get(c, index, &e))
		return JINST_EMALFORMED;
	uint16_t nt = e.tag == JINST_CP_INVOKE_DYNAMIC || e.tag == JINST_CP_DYNAMIC ? e.u.dyn.name_and_type_index
	                                                                             : e.u.ref.name_and_type_index;
	if (jinst_cp_get(c, nt, &nat) || nat.tag != JINST_CP_NAME_AND_TYPE)
		return JINST_EMALFORMED;
	*name = jinst_cp_utf8(c, nat.u.nat.name_index, nlen);
	*desc = jinst_cp_utf8(c, nat.u.nat.descriptor_index, dlen);
	return *name && *desc ? 0 : JINST_EMALFORMED;
}

/* ---- the constructor flow ---- */

enum { SEEN_UNINIT = 1, SEEN_INIT = 2 };

typedef struct fstate {
	uint16_t sp;
	uint8_t *stack;  /* 1: uninitializedThis */
	uint8_t *locals;
} fstate;

typedef struct work {
	uint32_t idx;
	fstate *st; /* NULL: `this` is initialized */
} work;

typedef struct flow {
	jinst_class *c;
	jinst_arena *A;
	const jinst_code *code;
	jinst_insn *in;
	uint32_t n;
	int32_t *at;      /* offset -> instruction index, -1 */
	uint8_t *seen;
	work *wl;
	uint32_t nwl, capwl;
	uint16_t max_stack, max_locals;
} flow;

static fstate *state_copy(flow *f, const fstate *s)
{
	fstate *t = jinst_arena_alloc(f->A, sizeof(*t));
	uint8_t *b = jinst_arena_alloc(f->A, (size_t)f->max_stack + f->max_locals + 1);
	if (!t || !b)
		return NULL;
	t->sp = s->sp;
	t->stack = b;
	t->locals = b + f->max_stack;
	memcpy(t->stack, s->stack, f->max_stack);
	memcpy(t->locals, s->locals, f->max_locals);
	return t;
}

static int push_work(flow *f, int64_t target, const fstate *s)
{
	if (target < 0 || target >= f->code->code_length || f->at[target] < 0)
		return JINST_EMALFORMED;
	uint32_t idx = (uint32_t)f->at[target];
	if (f->seen[idx] & (s ? SEEN_UNINIT : SEEN_INIT))
		return 0;
	if (f->nwl == f->capwl) {
		uint32_t cap = f->capwl ? f->capwl * 2 : 64;
		work *w = jinst_arena_alloc(f->A, (size_t)cap * sizeof(*w));
		if (!w)
			return JINST_ENOMEM;
		if (f->nwl)
			memcpy(w, f->wl, (size_t)f->nwl * sizeof(*w));
		f->wl = w;
		f->capwl = cap;
	}
	fstate *copy = NULL;
	if (s && !(copy = state_copy(f, s)))
		return JINST_ENOMEM;
	f->wl[f->nwl++] = (work){idx, copy};
	return 0;
}

/* One instruction's effect on the marks. *init: it initializes `this`. */
static int step(flow *f, fstate *s, const jinst_insn *in, bool *init)
{
	uint8_t op = in->opcode;
	uint8_t *st = s->stack;
	int pop, push;
	*init = false;
	if (op == JINST_OP_ALOAD || (op >= JINST_OP_ALOAD_0 && op < JINST_OP_ALOAD_0 + 4)) {
		uint32_t l = op == JINST_OP_ALOAD ? (uint32_t)in->operand : (uint32_t)(op - JINST_OP_ALOAD_0);
		if (l >= f->max_locals || s->sp >= f->max_stack)
			return JINST_EMALFORMED;
		st[s->sp++] = s->locals[l];
		return 0;
	}
	if (op == JINST_OP_ASTORE || (op >= JINST_OP_ASTORE_0 && op < JINST_OP_ASTORE_0 + 4)) {
		uint32_t l = op == JINST_OP_ASTORE ? (uint32_t)in->operand : (uint32_t)(op - JINST_OP_ASTORE_0);
		if (l >= f->max_locals || !s->sp)
			return JINST_EMALFORMED;
		s->locals[l] = st[--s->sp];
		return 0;
	}
	/* Other stores overwrite their slots with unmarked values. */
	if (jinst_opcodes[op].flags & JINST_OPF_STORE) {
		static const uint8_t wide_store[] = {1, 2, 1, 2};
		uint32_t l, w;
		if (op <= JINST_OP_DSTORE) {
			l = (uint32_t)in->operand;
			w = wide_store[op - JINST_OP_ISTORE];
		} else {
			l = (uint32_t)(op - JINST_OP_ISTORE_0) % 4;
			w = wide_store[(op - JINST_OP_ISTORE_0) / 4];
		}
		if (l + w > f->max_locals)
			return JINST_EMALFORMED;
		memset(s->locals + l, 0, w);
	}
	if (op >= JINST_OP_POP && op <= JINST_OP_SWAP) {
		/* pop .. swap: how many slots each takes, and what it pushes back */
		static const uint8_t take[] = {1, 2, 1, 2, 3, 2, 3, 4, 2};
		/* the new top slots, bottom first: 'a' the old top, 'b' below it... */
		static const char *const out[] = {"", "", "aa", "aba", "acba", "baba", "bacba", "badcba", "ab"};
		uint8_t k = take[op - JINST_OP_POP];
		if (s->sp < k)
			return JINST_EMALFORMED;
		uint8_t v[4]; /* v[0] = top ('a'), v[1] = 'b'... */
		for (uint8_t i = 0; i < k; i++)
			v[i] = st[s->sp - 1 - i];
		s->sp -= k;
		const char *o = out[op - JINST_OP_POP];
		size_t n = strlen(o);
		if (s->sp + n > f->max_stack)
			return JINST_EMALFORMED;
		for (size_t i = 0; i < n; i++)
			st[s->sp++] = v[o[i] - 'a'];
		return 0;
	}
	if (!jinst_opcodes[op].name)
		return JINST_EMALFORMED;
	pop = jinst_opcodes[op].pops;
	push = jinst_opcodes[op].pushes;
	if (pop == JINST_OP_VARIES) {
		const uint8_t *name, *desc;
		uint16_t nl, dl;
		int args, ret;
		if (op == JINST_OP_MULTIANEWARRAY) {
			pop = in->operand2;
			push = 1;
		} else {
			if (member_ref(f->c, (uint16_t)in->operand, &name, &nl, &desc, &dl) || desc_slots(desc, dl, &args, &ret))
				return JINST_EMALFORMED;
			switch (op) {
			case JINST_OP_GETSTATIC: pop = 0; push = ret; break;
			case JINST_OP_PUTSTATIC: pop = ret; push = 0; break;
			case JINST_OP_GETFIELD: pop = 1; push = ret; break;
			case JINST_OP_PUTFIELD: pop = 1 + ret; push = 0; break;
			case JINST_OP_INVOKESTATIC: case JINST_OP_INVOKEDYNAMIC: pop = args; push = ret; break;
			default: pop = args + 1; push = ret; break;       /* invokevirtual, special, interface */
			}
			if (args < 0 && op >= JINST_OP_INVOKEVIRTUAL)
				return JINST_EMALFORMED;
			if (op == JINST_OP_INVOKESPECIAL && nl == 6 && !memcmp(name, "<init>", 6)) {
				if (s->sp < pop)
					return JINST_EMALFORMED;
				*init = st[s->sp - pop] == 1;
			}
		}
	}
	if (s->sp < pop || s->sp - pop + push > f->max_stack)
		return JINST_EMALFORMED;
	s->sp = (uint16_t)(s->sp - pop);
	for (int i = 0; i < push; i++)
		st[s->sp++] = 0;
	return 0;
}

/* Walks straight-line code from w, queueing branch targets and handlers. */
static int walk(flow *f, work w)
{
	uint32_t idx = w.idx;
	fstate *s = w.st;
	for (;;) {
		uint8_t mode = s ? SEEN_UNINIT : SEEN_INIT;
		if (idx >= f->n)
			return JINST_EMALFORMED; /* fell off the end */
		if (f->seen[idx] & mode)
			return 0;
		f->seen[idx] |= mode;
		const jinst_insn *in = &f->in[idx];
		int rc;
		for (uint16_t i = 0; i < f->code->exception_count; i++) {
			const jinst_exception_entry *e = &f->code->exceptions[i];
			if (in->offset < e->start_pc || in->offset >= e->end_pc)
				continue;
			fstate *h = NULL;
			if (s) {
				if (!(h = state_copy(f, s)))
					return JINST_ENOMEM;
				h->sp = 1;
				h->stack[0] = 0;
			}
			if ((rc = push_work(f, e->handler_pc, h)))
				return rc;
		}
		uint8_t op = in->opcode;
		bool init = false;
		if (s) {
			if (jinst_opcodes[op].flags & JINST_OPF_SUBROUTINE) /* jsr, ret, jsr_w before super(): not handled */
				return JINST_EUNSUPPORTED;
			if ((rc = step(f, s, in, &init)))
				return rc;
		}
		fstate *next = init ? NULL : s;
		if (jinst_opcodes[op].flags & JINST_OPF_BRANCH) {
			if ((rc = push_work(f, in->operand, next)))
				return rc;
			if (op == JINST_OP_GOTO || op == JINST_OP_GOTO_W)
				return 0;
		} else if (jinst_opcodes[op].flags & JINST_OPF_SWITCH) {
			if ((rc = push_work(f, in->sw->default_target, next)))
				return rc;
			for (uint32_t i = 0; i < in->sw->count; i++)
				if ((rc = push_work(f, in->sw->targets[i], next)))
					return rc;
			return 0;
		} else if (jinst_opcodes[op].flags & JINST_OPF_UNCONDITIONAL) { /* *return, athrow, ret */
			return 0;
		}
		s = next;
		idx++;
	}
}

typedef struct range {
	uint32_t start, end; /* original offsets, end exclusive (may be code_length) */
} range;

/* The ranges a constructor's catch-all may cover. */
static int ctor_ranges(jinst_class *c, jinst_member *m, range **out, uint32_t *nout, jinst_diag *diag)
{
	flow f = {.c = c, .A = jinst_class_arena(c)};
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	jinst_code *code;
	int rc = a ? jinst_attr_decode(c, a, (void **)&code, diag) : JINST_EINVAL;
	if (rc)
		return rc;
	if ((rc = jinst_code_decode(c, code, &f.in, &f.n, diag)))
		return rc;
	f.code = code;
	f.max_stack = code->max_stack;
	f.max_locals = code->max_locals;
	f.at = jinst_arena_alloc(f.A, ((size_t)code->code_length + 1) * sizeof(*f.at));
	f.seen = jinst_arena_zalloc(f.A, (size_t)f.n + 1);
	*out = jinst_arena_alloc(f.A, ((size_t)f.n / 2 + 1) * sizeof(**out));
	if (!f.at || !f.seen || !*out)
		return JINST_ENOMEM;
	memset(f.at, 0xff, ((size_t)code->code_length + 1) * sizeof(*f.at));
	for (uint32_t i = 0; i < f.n; i++)
		f.at[f.in[i].offset] = (int32_t)i;

	/* The initial frame: local 0 is uninitializedThis (JVMS 4.10.1.6). */
	uint8_t *b = jinst_arena_zalloc(f.A, (size_t)f.max_stack + f.max_locals + 1);
	if (!b || !f.max_locals)
		return b ? jinst_ins_fail(diag, JINST_EMALFORMED, "constructor with max_locals 0") : JINST_ENOMEM;
	fstate s0 = {0, b, b + f.max_stack};
	s0.locals[0] = 1;
	if ((rc = push_work(&f, 0, &s0)))
		return rc;
	while (f.nwl) {
		work w = f.wl[--f.nwl];
		if ((rc = walk(&f, w)))
			return jinst_ins_fail(diag, rc, "constructor: cannot follow `this` (%s)", jinst_strerror(rc));
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < f.n;) {
		if (f.seen[i] != SEEN_INIT) {
			i++;
			continue;
		}
		uint32_t j = i;
		while (j < f.n && f.seen[j] == SEEN_INIT)
			j++;
		(*out)[n++] = (range){f.in[i].offset, j < f.n ? f.in[j].offset : code->code_length};
		i = j;
	}
	*nout = n;
	return 0;
}

/* ---- leaves ---- */

/* Whether a call is java/lang/Object.<init>()V, which does nothing and is
 * never instrumented (the super(...) call of a class that extends Object). */
static bool object_init(jinst_class *c, const jinst_insn *in)
{
	jinst_cp_entry e;
	const uint8_t *name, *desc, *owner;
	uint16_t nl, dl, ol;
	if (in->opcode != JINST_OP_INVOKESPECIAL || jinst_cp_get(c, (uint16_t)in->operand, &e) ||
	    e.tag != JINST_CP_METHODREF || member_ref(c, (uint16_t)in->operand, &name, &nl, &desc, &dl) ||
	    !(owner = jinst_cp_name(c, e.u.ref.class_index, &ol)))
		return false;
	return ol == 16 && !memcmp(owner, "java/lang/Object", 16) && nl == 6 && !memcmp(name, "<init>", 6) && dl == 3 &&
	       !memcmp(desc, "()V", 3);
}

/* Whether the code from instruction i on reaches an athrow before any
 * branch, switch or return: a call there is on the way to a throw (javac's
 * `throw new X(...)`, `throw fail(...)`), not part of the method's run. */
static bool throws_after(const jinst_insn *in, uint32_t i, uint32_t n)
{
	for (; i < n; i++) {
		if (in[i].opcode == JINST_OP_ATHROW)
			return true;
		enum jinst_operand_kind k = jinst_opcode_operands(in[i].opcode);
		if (k == JINST_OPND_BRANCH2 || k == JINST_OPND_BRANCH4 || k == JINST_OPND_TABLESWITCH ||
		    k == JINST_OPND_LOOKUPSWITCH || (in[i].opcode >= JINST_OP_IRETURN && in[i].opcode <= JINST_OP_RETURN) ||
		    in[i].opcode == JINST_OP_RET)
			return false;
	}
	return false;
}

/* Whether the method, with this code, is a leaf (jinst_method_info.timed
 * says what that is); false when its code does not decode. */
static bool is_leaf(jinst_class *c, const jinst_member *m, const jinst_code *code)
{
	/* (a handler could run code twice: a try block's throw caught by a
	 * handler placed before it is a loop) */
	if ((jinst_member_access_flags(m) & JINST_ACC_SYNCHRONIZED) || code->exception_count)
		return false;
	jinst_insn *in;
	uint32_t n;
	if (jinst_code_decode(c, code, &in, &n, NULL))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t op = in[i].opcode;
		switch (jinst_opcode_operands(op)) {
		case JINST_OPND_BRANCH2:
		case JINST_OPND_BRANCH4:
			/* a loop has a backward branch */
			if (in[i].operand <= (int32_t)in[i].offset || op == JINST_OP_JSR || op == JINST_OP_JSR_W)
				return false;
			break;
		case JINST_OPND_TABLESWITCH:
		case JINST_OPND_LOOKUPSWITCH:
			if (in[i].sw->default_target <= (int32_t)in[i].offset)
				return false;
			for (uint32_t k = 0; k < in[i].sw->count; k++)
				if (in[i].sw->targets[k] <= (int32_t)in[i].offset)
					return false;
			break;
		case JINST_OPND_NEWARRAY:
		case JINST_OPND_MULTIANEWARRAY:
			return false;
		case JINST_OPND_INVOKEINTERFACE:
		case JINST_OPND_INVOKEDYNAMIC:
			if (!throws_after(in, i + 1, n))
				return false;
			break;
		default:
			if (op == JINST_OP_RET || op == JINST_OP_ANEWARRAY || op == JINST_OP_MONITORENTER)
				return false;
			if (op >= JINST_OP_INVOKEVIRTUAL && op <= JINST_OP_INVOKESTATIC && !object_init(c, &in[i]) &&
			    !throws_after(in, i + 1, n))
				return false;
		}
	}
	return true;
}

/* ---- the pass ---- */

/* How a method's id is pushed: its constant, or under a run class (ids
 * relative to the run) the run's base, read from the run class of the
 * method's own package, plus the id within the run. depth: the stack words
 * the sequence takes at its deepest. */
typedef struct id_code {
	jinst_insn seq[3];
	uint32_t n;
	uint16_t depth;
} id_code;

static int id_code_make(jinst_pass_class *pc, uint32_t id, id_code *ic)
{
	jinst_class *c = jinst_pass_class_model(pc);
	const char *run = pc->ins->run_class;
	memset(ic, 0, sizeof(*ic));
	ic->n = 1;
	ic->depth = 1;
	if (!run)
		return jinst_ins_push_int(c, id, &ic->seq[0]);
	/* The run class sits in the class's package (the default package
	 * too), where a package-private class is readable from any class,
	 * interfaces included. */
	const char *name = jinst_pass_class_name(pc), *slash = strrchr(name, '/');
	size_t plen = slash ? (size_t)(slash - name) + 1 : 0, rlen = strlen(run);
	char *owner = jinst_arena_alloc(jinst_class_arena(c), plen + rlen + 1);
	if (!owner)
		return JINST_ENOMEM;
	memcpy(owner, name, plen);
	memcpy(owner + plen, run, rlen + 1);
	uint16_t ref;
	int rc = jinst_cp_add_fieldref(c, owner, JINST_RUN_BASE_FIELD, "I", &ref);
	if (rc)
		return rc;
	ic->seq[0] = jinst_ins_op(JINST_OP_GETSTATIC, ref);
	if (id == 0)
		return 0;
	if ((rc = jinst_ins_push_int(c, id, &ic->seq[1])))
		return rc;
	ic->seq[2] = jinst_ins_op(JINST_OP_IADD, 0);
	ic->n = 3;
	ic->depth = 2;
	return 0;
}

static int edit(jinst_class *c, jinst_edit *ed, const id_code *ic, const uint16_t *refs, const range *rs,
                uint32_t nr, bool whole, bool entry_only)
{
	jinst_insn seq[4];
	uint32_t k = ic->n;
	int rc;
	memcpy(seq, ic->seq, k * sizeof(*seq));

	jinst_node *first = jinst_edit_first_insn(ed);
	if (!first)
		return JINST_EMALFORMED;
	/* The range labels first: a label made after the exit code went in
	 * would stand between that code and its return, leaving it uncovered. */
	jinst_label start = JINST_NO_LABEL, *ls = NULL;
	if (whole && !entry_only && (rc = jinst_edit_label_at(ed, jinst_node_original_offset(first), &start)))
		return rc;
	if (nr && !(ls = jinst_arena_alloc(jinst_class_arena(c), (size_t)nr * 2 * sizeof(*ls))))
		return JINST_ENOMEM;
	for (uint32_t i = 0; i < nr; i++)
		if ((rc = jinst_edit_label_at(ed, rs[i].start, &ls[2 * i])) ||
		    (rc = jinst_edit_label_at(ed, rs[i].end, &ls[2 * i + 1])))
			return rc;
	seq[k] = jinst_ins_op(JINST_OP_INVOKESTATIC, refs[entry_only ? JINST_HOOK_CALLED : JINST_HOOK_ENTER]);
	if ((rc = jinst_edit_insert(ed, first, JINST_BEFORE_OUTSIDE, seq, k + 1, NULL)))
		return rc;
	if (entry_only)
		return 0;

	seq[k] = jinst_ins_op(JINST_OP_INVOKESTATIC, refs[JINST_HOOK_EXIT]);
	for (jinst_node *n = first; n; n = jinst_node_next(n)) {
		const jinst_insn *in = jinst_node_insn(n);
		if (in && in->opcode >= JINST_OP_IRETURN && in->opcode <= JINST_OP_RETURN &&
		    jinst_node_original_offset(n) != JINST_NO_OFFSET &&
		    (rc = jinst_edit_insert(ed, n, JINST_BEFORE_INSIDE, seq, k + 1, NULL)))
			return rc;
	}

	if (!whole && !nr)
		return 0;
	jinst_label h;
	if ((rc = jinst_edit_new_label(ed, &h)))
		return rc;
	jinst_insn hs[6];
	memset(&hs[0], 0, sizeof(hs[0]));
	hs[0].opcode = JINST_OP_LABEL;
	hs[0].operand = (int32_t)h;
	memcpy(&hs[1], ic->seq, k * sizeof(*hs));
	hs[k + 1] = jinst_ins_op(JINST_OP_INVOKESTATIC, refs[JINST_HOOK_EXIT_THROW]);
	hs[k + 2] = jinst_ins_op(JINST_OP_ATHROW, 0);
	if ((rc = jinst_edit_insert(ed, NULL, JINST_AFTER, hs, k + 3, NULL)))
		return rc;
	static const char throwable[] = "java/lang/Throwable";
	jinst_ftype t = {JINST_VT_OBJECT, 0, sizeof(throwable) - 1, (const uint8_t *)throwable};
	jinst_full_frame fr = {0, 0, 1, NULL, &t};
	if ((rc = jinst_edit_set_frame(ed, h, &fr)))
		return rc;
	if (whole)
		return jinst_edit_add_handler(ed, start, jinst_edit_end_label(ed), h, 0);
	for (uint32_t i = 0; i < nr; i++)
		if ((rc = jinst_edit_add_handler(ed, ls[2 * i], ls[2 * i + 1], h, 0)))
			return rc;
	return 0;
}

/* The same edit through the code patcher (include/jinst/patch.h), which
 * streams over the code instead of building the editor's nodes: the same
 * code at the same places, the same handler, range and frame. It declines
 * (JINST_EUNSUPPORTED, nothing changed) what it does not do, and the
 * caller then takes the editor. */
static int patch(jinst_class *c, jinst_member *m, const id_code *ic, const uint16_t *refs, const range *rs,
                 uint32_t nr, bool whole, bool entry_only, jinst_diag *diag)
{
	jinst_patch *p;
	int rc = jinst_patch_open(&p, c, m, diag);
	if (rc)
		return rc;
	uint8_t seq[12];
	uint32_t n = jinst_ins_encode(ic->seq, ic->n, seq);
	uint16_t enter = refs[entry_only ? JINST_HOOK_CALLED : JINST_HOOK_ENTER];
	seq[n] = JINST_OP_INVOKESTATIC;
	seq[n + 1] = (uint8_t)(enter >> 8);
	seq[n + 2] = (uint8_t)enter;
	if ((rc = jinst_patch_insert(p, 0, JINST_BEFORE_OUTSIDE, seq, n + 3, ic->depth)))
		return rc;
	if (!entry_only) {
		seq[n + 1] = (uint8_t)(refs[JINST_HOOK_EXIT] >> 8);
		seq[n + 2] = (uint8_t)refs[JINST_HOOK_EXIT];
		uint32_t count, len;
		const uint16_t *at = jinst_patch_offsets(p, &count);
		const uint8_t *code = jinst_patch_code(p, &len);
		for (uint32_t i = 0; i < count; i++)
			if (code[at[i]] >= JINST_OP_IRETURN && code[at[i]] <= JINST_OP_RETURN &&
			    (rc = jinst_patch_insert(p, at[i], JINST_BEFORE_INSIDE, seq, n + 3, ic->depth)))
				return rc;
		if (whole || nr) {
			uint8_t h[12];
			memcpy(h, seq, n);
			h[n] = JINST_OP_INVOKESTATIC;
			h[n + 1] = (uint8_t)(refs[JINST_HOOK_EXIT_THROW] >> 8);
			h[n + 2] = (uint8_t)refs[JINST_HOOK_EXIT_THROW];
			h[n + 3] = JINST_OP_ATHROW;
			if ((rc = jinst_patch_set_handler(p, h, n + 4, ic->depth, 0)))
				return rc;
			if (whole)
				rc = jinst_patch_add_range(p, 0, len);
			for (uint32_t i = 0; !rc && i < nr; i++)
				rc = jinst_patch_add_range(p, rs[i].start, rs[i].end);
			if (rc)
				return rc;
		}
	}
	return jinst_patch_commit(p, diag);
}

/* edit's arguments, for jinst_ins_edit. */
typedef struct trace_edit {
	jinst_class *c;
	const id_code *ic;
	const uint16_t *refs;
	const range *rs;
	uint32_t nr;
	bool whole, entry_only;
} trace_edit;

static int edit_method(jinst_edit *ed, const void *ctx)
{
	const trace_edit *te = ctx;
	return edit(te->c, ed, te->ic, te->refs, te->rs, te->nr, te->whole, te->entry_only);
}

/* One method: the entry hook alone (entry_only), or the whole shape. On
 * failure the method is left as it was. */
static int trace_method(jinst_class *c, jinst_member *m, bool ctor, const id_code *ic, const uint16_t *refs,
                        bool entry_only, jinst_diag *diag)
{
	range *rs = NULL;
	uint32_t nr = 0;
	int rc;
	/* The entry hook alone needs no handler, so no ranges either. */
	if (ctor && !entry_only && (rc = ctor_ranges(c, m, &rs, &nr, diag)))
		return rc;
	/* The fast path first; whatever it declines or fails on (it changed
	 * nothing then), the editor does or reports. */
	rc = patch(c, m, ic, refs, rs, nr, !ctor, entry_only, diag);
	if (rc == 0 || rc == JINST_ENOMEM)
		return rc;
	trace_edit te = {c, ic, refs, rs, nr, !ctor, entry_only};
	return jinst_ins_edit(c, m, edit_method, &te, "editing", diag);
}

/* ---- the pass ---- */

/* The hooks a shape calls, in the class's pool (the others stay 0). */
static int hook_refs(jinst_pass_class *pc, bool entry_only, uint16_t *refs)
{
	static const int whole[] = {JINST_HOOK_ENTER, JINST_HOOK_EXIT, JINST_HOOK_EXIT_THROW};
	memset(refs, 0, JINST_HOOK_COUNT * sizeof(*refs));
	if (entry_only)
		return jinst_pass_hook_ref(pc, JINST_HOOK_CALLED, &refs[JINST_HOOK_CALLED]);
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
		int rc = jinst_pass_hook_ref(pc, whole[i], &refs[whole[i]]);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Whether the method is finalize()V whose code is a lone `return`: HotSpot
 * registers an object with java.lang.ref.Finalizer at allocation only when
 * its class's finalize() is not such a method (ClassFileParser: an "empty
 * finalizer" clears the flag it would inherit), and java.lang.Object's is one.
 * A hook there makes every object of the class and of its subclasses
 * finalizable: a runtime call at each allocation, the Finalizer thread
 * running the hook for each, every object kept one collection longer.
 * Jython's PyObject has `protected final void finalize() {}`; traced, its
 * work.py (bench/trace) kept 3.2 million PyFrames waiting for finalization
 * and spent more time collecting than running Python (docs/tracing-threads.md).
 * The VM never calls such a method, so leaving it alone loses only calls a
 * program makes itself (super.finalize()).
 */
static bool empty_finalizer(const jinst_pass_method *pm, const jinst_code *code)
{
	return code && code->code_length == 1 && code->code[0] == JINST_OP_RETURN &&
	       !strcmp(jinst_pass_method_name(pm), "finalize") && !strcmp(jinst_pass_method_descriptor(pm), "()V");
}

static int trace_pass_method(void *state, jinst_pass_class *pc, jinst_pass_method *pm, jinst_diag *diag)
{
	uint32_t passes = (uint32_t)(uintptr_t)state;
	jinst_class *c = jinst_pass_class_model(pc);
	jinst_member *m = jinst_pass_method_member(pm);
	const jinst_code *code = jinst_pass_method_code(pm);
	if (empty_finalizer(pm, code))
		return JINST_PASS_SKIP;
	bool timed = (passes & JINST_PASS_TRACE) &&
	             !(code && (passes & JINST_PASS_COUNT_LEAVES) && is_leaf(c, m, code));
	uint16_t refs[JINST_HOOK_COUNT];
	uint32_t id;
	id_code ic;
	int rc = jinst_pass_method_id(pm, timed ? JINST_METHOD_TIMED : 0, &id);
	if (!rc)
		rc = hook_refs(pc, !timed, refs);
	if (!rc)
		rc = id_code_make(pc, id, &ic);
	if (rc)
		return jinst_ins_fail(diag, rc, "cannot add the hooks to the constant pool");
	return trace_method(c, m, jinst_pass_method_is_init(pm), &ic, refs, !timed, diag);
}

void jinst_trace_pass(jinst_pass *out, uint32_t passes)
{
	memset(out, 0, sizeof(*out));
	out->version = JINST_PASS_VERSION;
	out->name = "trace";
	/* The mode is all the state there is: no allocation, nothing to free. */
	out->state = (void *)(uintptr_t)passes;
	out->method = trace_pass_method;
}
