/*
 * Frame inference: the types of locals and stack at every instruction,
 * computed by data flow over the verification types of JVMS 4.10.1.2.
 *
 * How it works. The code is cut into basic blocks at branch targets,
 * exception handlers and after instructions that end a block (branches,
 * switches, returns, athrow, ret). Each block has an entry state. Starting
 * from the state the descriptor implies, a worklist takes a block, runs its
 * instructions through a small abstract interpreter, and merges the exit
 * state into the entry state of each successor; an exception handler
 * receives the locals before and after every instruction its range covers,
 * with the caught class alone on the stack. A merge that changes an entry
 * state puts the block back on the worklist. States only climb the type
 * lattice (two different reference types merge to their common super class,
 * anything else to top), so the work ends.
 *
 * Merging two class types needs the class hierarchy; that question goes to
 * the caller's jinst_hierarchy, which answers from class files and never
 * loads a class. Interfaces merge like Object, as the verifier treats them.
 *
 * Internally a long or double takes two slots (the type, then top), as in
 * the JVM; the frames handed out list it once, as a StackMapTable does.
 *
 * Code no path reaches has no state to give its frame. It is first
 * rewritten by jinst_code_patch_unreachable (below) into nop ... athrow runs
 * outside every exception range, which verify from a frame of no locals and
 * a Throwable on the stack; any other unreachable code is refused
 * (JINST_EUNSUPPORTED). So is code with jsr/ret: its subroutines must be
 * inlined first.
 */
#include "infer_internal.h"

/* Merges `from` into `into`; sets *changed. */
static int merge_vt(infer *I, vt *into, const vt *from, bool *changed)
{
	if (jinst_ftype_same(into, from))
		return 0;
	vt m;
	if (is_ref(into) && is_ref(from)) {
		int rc = jinst_infer_merge_refs(I, into, from, &m);
		if (rc)
			return rc;
	} else {
		m = I->top;
	}
	if (!jinst_ftype_same(into, &m)) {
		*into = m;
		*changed = true;
	}
	return 0;
}

static void enqueue(infer *I, uint32_t b)
{
	if (!I->queued[b]) {
		I->queued[b] = true;
		I->work[I->nwork++] = b;
	}
}

static int flow_into(infer *I, uint32_t block, const vt *locals, const vt *stack, uint16_t nstack)
{
	state *s = &I->in[block];
	if (!s->set) {
		s->set = true;
		memcpy(s->locals, locals, I->max_locals * sizeof(vt));
		memcpy(s->stack, stack, nstack * sizeof(vt));
		s->nstack = nstack;
		enqueue(I, block);
		return 0;
	}
	if (s->nstack != nstack)
		return jinst_fail(I->diag, JINST_EMALFORMED, JINST_NO_OFFSET,
		                  "stack heights %u and %u meet at pc %u", s->nstack, nstack,
		                  (unsigned)I->insns[I->block_start[block]].offset);
	bool changed = false;
	for (uint16_t i = 0; i < I->max_locals; i++) {
		int rc = merge_vt(I, &s->locals[i], &locals[i], &changed);
		if (rc)
			return rc;
	}
	for (uint16_t i = 0; i < nstack; i++) {
		if (!is_ref(&s->stack[i]) || !is_ref(&stack[i])) {
			if (!jinst_ftype_same(&s->stack[i], &stack[i]))
				return jinst_fail(I->diag, JINST_EMALFORMED, JINST_NO_OFFSET, "stack types conflict at pc %u",
				                  (unsigned)I->insns[I->block_start[block]].offset);
			continue;
		}
		int rc = merge_vt(I, &s->stack[i], &stack[i], &changed);
		if (rc)
			return rc;
	}
	if (changed)
		enqueue(I, block);
	return 0;
}

static uint32_t block_at(infer *I, int32_t pc)
{
	return I->block_of[I->insn_at[pc]];
}

/* A class constant's name as a verification type (arrays keep their descriptor name). */
/* The type a CONSTANT_Class names: a class, or an array whose name is a
 * whole field descriptor (JVMS 4.4.1). */
static vt class_vt(infer *I, uint16_t index)
{
	const jinst_class *c = I->c;
	uint16_t len = 0;
	const uint8_t *name;
	/* A Class constant of the original pool straight from the class bytes
	 * (its name is a Utf8 there, as the parser checked), as member_ref
	 * reads references; others through the pool's decoder. */
	if (index < c->cp_count && c->cp_tags[index] == JINST_CP_CLASS) {
		const uint8_t *u = c->bytes + c->cp_offsets[jinst_be16(c->bytes + c->cp_offsets[index] + 1)];
		len = jinst_be16(u + 1);
		name = u + 3;
	} else {
		name = jinst_cp_name(c, index, &len);
	}
	if (name && len && name[0] == '[') {
		const uint8_t *p = name;
		jinst_ftype t;
		if (jinst_descriptor_type(&p, name + len, &t) && p == name + len)
			return t;
	} else if (name && len) {
		return obj(name, len);
	}
	I->malformed = true;
	return I->top;
}

/* The verification type of a field descriptor at *p; advances *p. */
static vt desc_vt(infer *I, const uint8_t **p, const uint8_t *end)
{
	jinst_ftype t;
	if (!jinst_descriptor_type(p, end, &t)) {
		I->malformed = true;
		*p = end;
		return I->top;
	}
	return t;
}

static bool is_cat2(const vt *v)
{
	return v->tag == JINST_VT_LONG || v->tag == JINST_VT_DOUBLE;
}


static int set_local(infer *I, frame *f, uint32_t i, vt v, bool wide)
{
	if (i + (wide ? 1 : 0) >= I->max_locals)
		return jinst_fail(I->diag, JINST_EMALFORMED, JINST_NO_OFFSET, "store to local %u of %u", (unsigned)i,
		                  I->max_locals);
	if (i > 0 && is_cat2(&f->locals[i - 1]))
		f->locals[i - 1] = I->top; /* overwriting the second half of a long/double */
	if (!wide && i + 1 < I->max_locals && is_cat2(&f->locals[i]))
		f->locals[i + 1] = I->top;
	f->locals[i] = v;
	if (wide)
		f->locals[i + 1] = I->top;
	return 0;
}

static void init_object(frame *f, uint16_t n_locals, const vt *uninit, vt inited)
{
	for (uint16_t i = 0; i < n_locals; i++)
		if (jinst_ftype_same(&f->locals[i], uninit))
			f->locals[i] = inited;
	for (uint16_t i = 0; i < f->sp; i++)
		if (jinst_ftype_same(&f->stack[i], uninit))
			f->stack[i] = inited;
}

/* Pushes the return type of a method descriptor. */
static int push_return(infer *I, frame *f, const uint8_t *d, uint16_t len)
{
	const uint8_t *r = memchr(d, ')', len);
	if (!r)
		return -1;
	r++;
	if (r + 1 == d + len && *r == 'V')
		return 0;
	vt v = desc_vt(I, &r, d + len);
	if (r != d + len)
		I->malformed = true;
	if (f->sp + (is_cat2(&v) ? 2 : 1) > I->max_stack)
		return -1;
	f->stack[f->sp++] = v;
	if (is_cat2(&v))
		f->stack[f->sp++] = I->top;
	return 0;
}

/* Slots the arguments of a method descriptor take, or -1 when it is malformed. */
static int arg_slots(const uint8_t *d, uint16_t len)
{
	const uint8_t *p = d + 1, *end = d + len;
	if (!len || d[0] != '(')
		return -1;
	int n = 0;
	while (p < end && *p != ')') {
		jinst_ftype t;
		if (!jinst_descriptor_type(&p, end, &t))
			return -1;
		n += t.tag == JINST_VT_LONG || t.tag == JINST_VT_DOUBLE ? 2 : 1;
	}
	return p < end ? n : -1;
}

/* The name and descriptor of a field, method or call-site reference. The
 * references of the original pool are read straight from the class bytes
 * (both kinds keep their NameAndType index at the same place, JVMS 4.4.2,
 * 4.4.10); appended ones go through the pool's decoder. The owner class is
 * not asked for: typing an instruction never needs it. */
static void member_ref(infer *I, uint16_t index, const uint8_t **name, uint16_t *nlen, const uint8_t **desc,
                       uint16_t *dlen)
{
	const jinst_class *c = I->c;
	*desc = *name = NULL;
	*dlen = *nlen = 0;
	uint16_t nat_index;
	if (index < c->cp_count && (c->cp_tags[index] == JINST_CP_FIELDREF || c->cp_tags[index] == JINST_CP_METHODREF ||
	                            c->cp_tags[index] == JINST_CP_INTERFACE_METHODREF ||
	                            c->cp_tags[index] == JINST_CP_INVOKE_DYNAMIC)) {
		nat_index = jinst_be16(c->bytes + c->cp_offsets[index] + 3);
	} else {
		jinst_cp_entry e;
		if (jinst_cp_get(c, index, &e))
			return;
		nat_index = e.tag == JINST_CP_INVOKE_DYNAMIC ? e.u.dyn.name_and_type_index : e.u.ref.name_and_type_index;
	}
	uint16_t name_index, desc_index;
	if (nat_index < c->cp_count && c->cp_tags[nat_index] == JINST_CP_NAME_AND_TYPE) {
		const uint8_t *q = c->bytes + c->cp_offsets[nat_index];
		name_index = jinst_be16(q + 1);
		desc_index = jinst_be16(q + 3);
	} else {
		jinst_cp_entry nat;
		if (jinst_cp_get(c, nat_index, &nat))
			return;
		name_index = nat.u.nat.name_index;
		desc_index = nat.u.nat.descriptor_index;
	}
	*name = jinst_cp_utf8(c, name_index, nlen);
	*desc = jinst_cp_utf8(c, desc_index, dlen);
}

/* How a field or method reference of the original pool types its
 * instructions, worked out once per class: a reference is typed again at
 * each of its uses and each time the data flow walks its block again, and
 * reading its descriptor costs more than all the rest of the instruction.
 * Only well-formed references are kept; a malformed one takes the slow
 * path at every use, so its diagnostics stay those of that path. */
enum { REF_UNKNOWN, REF_FIELD, REF_METHOD, REF_SLOW };
struct jinst_ref_type {
	vt type;       /* a field's type; a method's return type, top for void */
	int32_t slots; /* a method's argument slots */
	bool init;     /* a method named <init> */
};

/* The reference at index typed as kind (REF_FIELD: a field descriptor;
 * REF_METHOD: arguments and return type), or NULL when the slow path must
 * answer: an appended entry, a malformed one, or no memory. */
static const struct jinst_ref_type *ref_typed(infer *I, int32_t index, uint8_t kind)
{
	jinst_class *c = I->c;
	if (index <= 0 || index >= c->cp_count)
		return NULL;
	if (!c->ref_kinds) {
		c->ref_types = jinst_arena_alloc(c->arena, (size_t)c->cp_count * sizeof(*c->ref_types));
		c->ref_kinds = jinst_arena_zalloc(c->arena, c->cp_count);
		if (!c->ref_types || !c->ref_kinds) {
			c->ref_kinds = NULL;
			return NULL;
		}
	}
	struct jinst_ref_type *r = &c->ref_types[index];
	if (c->ref_kinds[index] != REF_UNKNOWN)
		return c->ref_kinds[index] == kind ? r : NULL;
	c->ref_kinds[index] = REF_SLOW;
	const uint8_t *nm, *d;
	uint16_t nl, dl;
	member_ref(I, (uint16_t)index, &nm, &nl, &d, &dl);
	if (!d)
		return NULL;
	const uint8_t *p = d, *end = d + dl;
	r->init = false;
	r->slots = 0;
	if (kind == REF_FIELD) {
		if (!jinst_descriptor_type(&p, end, &r->type) || p != end)
			return NULL;
	} else {
		if (!nm || (r->slots = arg_slots(d, dl)) < 0)
			return NULL;
		p = memchr(d, ')', dl) + 1; /* there: arg_slots found it */
		if (p + 1 == end && *p == 'V')
			r->type = I->top;
		else if (!jinst_descriptor_type(&p, end, &r->type) || p != end)
			return NULL;
		r->init = nl == 6 && memcmp(nm, "<init>", 6) == 0;
	}
	c->ref_kinds[index] = kind;
	return r;
}

/* The types the interpreter pushes without looking anything up. */
static void init_types(infer *I)
{
	I->top = (vt){JINST_VT_TOP, 0, 0, NULL};
	I->integer = (vt){JINST_VT_INTEGER, 0, 0, NULL};
	I->flt = (vt){JINST_VT_FLOAT, 0, 0, NULL};
	I->lng = (vt){JINST_VT_LONG, 0, 0, NULL};
	I->dbl = (vt){JINST_VT_DOUBLE, 0, 0, NULL};
	I->null = (vt){JINST_VT_NULL, 0, 0, NULL};
	I->fixed[JINST_OPR_NONE] = I->top;
	I->fixed[JINST_OPR_INT] = I->integer;
	I->fixed[JINST_OPR_FLOAT] = I->flt;
	I->fixed[JINST_OPR_LONG] = I->lng;
	I->fixed[JINST_OPR_DOUBLE] = I->dbl;
	I->fixed[JINST_OPR_NULL] = I->null;
}

/* The stack's bounds, checked by every push and pop of the interpreter
 * below (out of line: they fail once per method at most). */
static __attribute__((noinline, cold)) int overflow(infer *I, const jinst_insn *in)
{
	return jinst_fail(I->diag, JINST_EMALFORMED, JINST_NO_OFFSET, "stack overflow at pc %u (max_stack %u)",
	                  (unsigned)in->offset, I->max_stack);
}

static __attribute__((noinline, cold)) int underflow(infer *I, const jinst_insn *in)
{
	return jinst_fail(I->diag, JINST_EMALFORMED, JINST_NO_OFFSET, "stack underflow at pc %u", (unsigned)in->offset);
}

#define PUSH(v) do { if (f->sp >= I->max_stack) return overflow(I, in); f->stack[f->sp++] = (v); } while (0)
#define PUSH2(v) do { PUSH(v); PUSH(I->top); } while (0)
#define PUSH_VT(v) do { vt v_ = (v); if (is_cat2(&v_)) PUSH2(v_); else PUSH(v_); } while (0)
#define POP(k) do { if (f->sp < (k)) return underflow(I, in); f->sp = (uint16_t)(f->sp - (k)); } while (0)

/*
 * The abstract interpreter, one function per family of instructions.
 * Most opcodes push a type the opcode alone says (the table's result
 * column: constants, loads of primitives, arithmetic, conversions,
 * comparisons) or nothing (branches, returns, monitors, pops): they take
 * the one table-driven path. The rest read the pool, a local or the stack.
 * All are inlined into step(), which the walk of jinst_frames_infer
 * inlines in turn: the call's saves and restores of registers cost about
 * as much as typing a common instruction.
 */
static inline __attribute__((always_inline)) int step_fixed(infer *I, frame *f, const jinst_insn *in,
                                                            const jinst_opcode_info *op)
{
	POP(op->pops);
	if (op->result != JINST_OPR_NONE) {
		PUSH(I->fixed[op->result]);
		if (op->pushes == 2)
			PUSH(I->top);
	}
	return 0;
}

/* ldc, ldc_w, ldc2_w: the tag says all but for a Dynamic constant, and
 * costs a load where the entry would be decoded (tag 0: no entry there). */
static inline int step_ldc(infer *I, frame *f, const jinst_insn *in)
{
	switch (jinst_cp_tag_fast(I->c, (uint16_t)in->operand)) {
	case JINST_CP_INTEGER: PUSH(I->integer); break;
	case JINST_CP_FLOAT: PUSH(I->flt); break;
	case JINST_CP_LONG: PUSH2(I->lng); break;
	case JINST_CP_DOUBLE: PUSH2(I->dbl); break;
	case JINST_CP_STRING: PUSH(obj_str("java/lang/String")); break;
	case JINST_CP_CLASS: PUSH(obj_str("java/lang/Class")); break;
	case JINST_CP_METHOD_TYPE: PUSH(obj_str("java/lang/invoke/MethodType")); break;
	case JINST_CP_METHOD_HANDLE: PUSH(obj_str("java/lang/invoke/MethodHandle")); break;
	case JINST_CP_DYNAMIC: {
		jinst_cp_entry e, nat;
		uint16_t dl;
		if (jinst_cp_get(I->c, (uint16_t)in->operand, &e) || jinst_cp_get(I->c, e.u.dyn.name_and_type_index, &nat))
			return JINST_EMALFORMED;
		const uint8_t *d = jinst_cp_utf8(I->c, nat.u.nat.descriptor_index, &dl);
		if (!d)
			return JINST_EMALFORMED;
		const uint8_t *p = d;
		vt v = desc_vt(I, &p, d + dl);
		if (p != d + dl)
			return JINST_EMALFORMED;
		PUSH_VT(v);
		break;
	}
	default: return JINST_EMALFORMED;
	}
	return 0;
}

/* aload, aload_<n>: the local's type; aaload: the element type of the array. */
static inline int step_aload(infer *I, frame *f, const jinst_insn *in)
{
	uint8_t op = in->opcode;
	if (op == JINST_OP_AALOAD) {
		POP(2);
		vt a = f->stack[f->sp];
		if (a.tag == JINST_VT_OBJECT && a.name_length > 1 && a.name[0] == '[') {
			const uint8_t *p = a.name + 1;
			PUSH(desc_vt(I, &p, a.name + a.name_length));
		} else {
			PUSH(I->null); /* aaload of null: the verifier says null */
		}
		return 0;
	}
	uint32_t i = op == JINST_OP_ALOAD ? (uint32_t)in->operand : (uint32_t)(op - JINST_OP_ALOAD_0);
	if (i >= I->max_locals)
		return JINST_EMALFORMED;
	PUSH(f->locals[i]);
	return 0;
}

/* <t>store and <t>store_<n>: four of each type after the five with an
 * index, in the same order (i, l, f, d, a). */
static inline int step_store(infer *I, frame *f, const jinst_insn *in)
{
	uint8_t op = in->opcode;
	bool indexed = op <= JINST_OP_ASTORE;
	unsigned type = indexed ? op - (unsigned)JINST_OP_ISTORE : (op - (unsigned)JINST_OP_ISTORE_0) / 4;
	uint32_t local = indexed ? (uint32_t)in->operand : (op - (unsigned)JINST_OP_ISTORE_0) % 4;
	bool wide = type == 1 || type == 3;
	POP(wide ? 2 : 1);
	vt v = type == 0 ? I->integer : type == 1 ? I->lng : type == 2 ? I->flt : type == 3 ? I->dbl
	     : f->stack[f->sp]; /* astore: the reference popped */
	return set_local(I, f, local, v, wide) ? JINST_EMALFORMED : 0;
}

/* The dup family and swap: the slots below the top, rearranged (JVMS 6.5). */
static inline int step_dup(infer *I, frame *f, const jinst_insn *in)
{
	/* Per opcode from dup: slots taken, then the order they go back in. */
	typedef struct dup_form { uint8_t take, n, order[6]; } dup_form;
	static const dup_form forms[] = {
		[JINST_OP_DUP - JINST_OP_DUP] = {1, 2, {0, 0}},
		[JINST_OP_DUP_X1 - JINST_OP_DUP] = {2, 3, {1, 0, 1}},
		[JINST_OP_DUP_X2 - JINST_OP_DUP] = {3, 4, {2, 0, 1, 2}},
		[JINST_OP_DUP2 - JINST_OP_DUP] = {2, 4, {0, 1, 0, 1}},
		[JINST_OP_DUP2_X1 - JINST_OP_DUP] = {3, 5, {1, 2, 0, 1, 2}},
		[JINST_OP_DUP2_X2 - JINST_OP_DUP] = {4, 6, {2, 3, 0, 1, 2, 3}},
		[JINST_OP_SWAP - JINST_OP_DUP] = {2, 2, {1, 0}},
	};
	const dup_form *form = &forms[in->opcode - JINST_OP_DUP];
	POP(form->take);
	vt x[4];
	memcpy(x, f->stack + f->sp, form->take * sizeof(vt));
	for (uint8_t k = 0; k < form->n; k++)
		PUSH(x[form->order[k]]);
	return 0;
}

/* getstatic, putstatic, getfield, putfield: the field's type from its descriptor. */
static inline int step_field(infer *I, frame *f, const jinst_insn *in)
{
	uint8_t op = in->opcode;
	vt v;
	const struct jinst_ref_type *r = ref_typed(I, in->operand, REF_FIELD);
	if (r) {
		v = r->type;
	} else {
		const uint8_t *nm, *d;
		uint16_t nl, dl;
		member_ref(I, (uint16_t)in->operand, &nm, &nl, &d, &dl);
		if (!d)
			return JINST_EMALFORMED;
		const uint8_t *p = d;
		v = desc_vt(I, &p, d + dl);
		if (p != d + dl)
			return JINST_EMALFORMED;
	}
	unsigned words = is_cat2(&v) ? 2 : 1;
	if (op == JINST_OP_GETSTATIC || op == JINST_OP_GETFIELD) {
		if (op == JINST_OP_GETFIELD)
			POP(1);
		PUSH_VT(v);
	} else {
		POP(words + (op == JINST_OP_PUTFIELD ? 1 : 0));
	}
	return 0;
}

/* The type an <init> call on recv initializes it to (JVMS 4.10.1.9 invokespecial). */
static inline int initialized(infer *I, vt recv, vt *inited)
{
	if (recv.tag == JINST_VT_UNINITIALIZED_THIS) {
		uint16_t cl;
		const uint8_t *cn = jinst_class_name(I->c, &cl);
		*inited = obj(cn, cl);
	} else if (recv.tag == JINST_VT_UNINITIALIZED && I->new_class) {
		*inited = I->new_class(I->new_ctx, recv.value);
	} else if (recv.tag == JINST_VT_UNINITIALIZED) {
		/* The class of the `new` at that offset. */
		int32_t at = (int32_t)recv.value;
		if (at < 0 || (uint32_t)at >= I->code->code_length || I->insn_at[at] < 0)
			return JINST_EMALFORMED;
		*inited = class_vt(I, (uint16_t)I->insns[I->insn_at[at]].operand);
	} else {
		*inited = recv;
	}
	return 0;
}

/* The invokes: arguments and receiver off, the return type on; an
 * invokespecial <init> initializes every copy of its receiver. */
static inline int step_invoke(infer *I, frame *f, const jinst_insn *in)
{
	uint8_t op = in->opcode;
	const struct jinst_ref_type *r = ref_typed(I, in->operand, REF_METHOD);
	const uint8_t *nm = NULL, *d = NULL;
	uint16_t nl = 0, dl = 0;
	int slots;
	bool init;
	if (r) {
		slots = r->slots;
		init = r->init;
	} else {
		member_ref(I, (uint16_t)in->operand, &nm, &nl, &d, &dl);
		if (!d || !nm)
			return JINST_EMALFORMED;
		slots = arg_slots(d, dl);
		if (slots < 0)
			return JINST_EMALFORMED;
		init = nl == 6 && memcmp(nm, "<init>", 6) == 0;
	}
	POP(slots);
	if (op != JINST_OP_INVOKESTATIC && op != JINST_OP_INVOKEDYNAMIC) {
		POP(1);
		vt recv = f->stack[f->sp], inited;
		if (op == JINST_OP_INVOKESPECIAL && init) {
			if (initialized(I, recv, &inited))
				return JINST_EMALFORMED;
			init_object(f, I->max_locals, &recv, inited);
		}
	}
	if (!r) {
		if (push_return(I, f, d, dl))
			return overflow(I, in);
	} else if (r->type.tag != JINST_VT_TOP) { /* TOP: void */
		PUSH_VT(r->type);
	}
	return 0;
}

/* new, newarray, anewarray, checkcast, multianewarray: a type the operand names. */
static inline int step_object(infer *I, frame *f, const jinst_insn *in)
{
	static const char *const primitive_arrays[] = {"[Z", "[C", "[F", "[D", "[B", "[S", "[I", "[J"};
	vt v;
	int rc;
	switch (in->opcode) {
	case JINST_OP_NEW:
		v = (vt){JINST_VT_UNINITIALIZED, (uint16_t)in->offset, 0, NULL};
		PUSH(v);
		return 0;
	case JINST_OP_NEWARRAY: /* atype T_BOOLEAN (4) ... T_LONG (11) */
		POP(1);
		if (in->operand < 4 || in->operand > 11)
			return JINST_EMALFORMED;
		PUSH(obj_str(primitive_arrays[in->operand - 4]));
		return 0;
	case JINST_OP_ANEWARRAY:
		POP(1);
		if ((rc = jinst_infer_array_of(I, class_vt(I, (uint16_t)in->operand), &v)))
			return rc;
		PUSH(v);
		return 0;
	case JINST_OP_CHECKCAST:
		POP(1);
		PUSH(class_vt(I, (uint16_t)in->operand));
		return 0;
	default: /* multianewarray */
		POP(in->operand2);
		PUSH(class_vt(I, (uint16_t)in->operand));
		return 0;
	}
}

/* Runs one instruction. Returns 0, or a negative error code. */
static inline __attribute__((always_inline)) int step_insn(infer *I, frame *f, const jinst_insn *in)
{
	const jinst_opcode_info *op = &jinst_opcodes[in->opcode];
	if (op->result != JINST_OPR_OTHER)
		return step_fixed(I, f, in, op);
	if (op->flags & JINST_OPF_STORE)
		return step_store(I, f, in);
	if (op->flags & JINST_OPF_FIELD)
		return step_field(I, f, in);
	if (op->flags & JINST_OPF_INVOKE)
		return step_invoke(I, f, in);
	switch (in->opcode) {
	case JINST_OP_LDC: case JINST_OP_LDC_W: case JINST_OP_LDC2_W:
		return step_ldc(I, f, in);
	case JINST_OP_ALOAD: case JINST_OP_ALOAD_0: case JINST_OP_ALOAD_1: case JINST_OP_ALOAD_2: case JINST_OP_ALOAD_3:
	case JINST_OP_AALOAD:
		return step_aload(I, f, in);
	case JINST_OP_DUP: case JINST_OP_DUP_X1: case JINST_OP_DUP_X2: case JINST_OP_DUP2: case JINST_OP_DUP2_X1:
	case JINST_OP_DUP2_X2: case JINST_OP_SWAP:
		return step_dup(I, f, in);
	case JINST_OP_NEW: case JINST_OP_NEWARRAY: case JINST_OP_ANEWARRAY: case JINST_OP_CHECKCAST:
	case JINST_OP_MULTIANEWARRAY:
		return step_object(I, f, in);
	default:
		return JINST_EUNSUPPORTED; /* jsr, ret, jsr_w */
	}
}

static inline __attribute__((always_inline)) int step(infer *I, frame *f, const jinst_insn *in)
{
	int rc = step_insn(I, f, in);
	if (!rc && I->malformed)
		rc = jinst_fail(I->diag, JINST_EMALFORMED, JINST_NO_OFFSET,
		                "pc %u uses a malformed descriptor or class name", (unsigned)in->offset);
	return rc;
}

static bool falls_through(uint8_t op)
{
	return !(jinst_opcodes[op].flags & JINST_OPF_UNCONDITIONAL);
}

/* Flows the state into the handler of every exception entry covering the
 * instruction at index i. Most instructions are covered by none, which the
 * covered table says at once (the callers ask it before the call, so an
 * instruction outside every range costs a load, not a call); the caught
 * type and the handler's block of each entry are worked out once per
 * method, not once per instruction.
 *
 * Within a block walk the locals change only at a store or an invokespecial
 * <init>, and the walk starts a new epoch there (and at the block's start).
 * Merging the same locals into a handler a second time changes nothing
 * (a merge only climbs to a join, and the handler's state has stayed at or
 * above it since), so an entry already merged in this epoch is passed by:
 * a try block of n instructions costs a merge per store, not n of them. */
static int handlers(infer *I, const frame *f, uint32_t i)
{
	uint32_t pc = I->insns[i].offset;
	for (uint16_t k = 0; k < I->code->exception_count; k++) {
		const jinst_exception_entry *e = &I->code->exceptions[k];
		if (pc < e->start_pc || pc >= e->end_pc || I->ex_epoch[k] == I->epoch)
			continue;
		I->ex_epoch[k] = I->epoch;
		int rc = flow_into(I, I->ex_block[k], f->locals, &I->ex_type[k], 1);
		if (rc)
			return rc;
	}
	return 0;
}

/* A block no path reaches can only stand as `nop ... nop athrow`, the form
 * jinst_code_patch_unreachable gives it, outside every exception range. Its
 * frame is then no locals and a Throwable on the stack: the verifier checks
 * the block on its own from that frame (JVMS 4.10.1: a frame after an
 * unconditional transfer is taken as is), nop keeps it, athrow consumes the
 * Throwable, and nothing flows out. This is the frame ASM's COMPUTE_FRAMES
 * writes there too. */
static int dead_block_frame(infer *I, uint32_t b, jinst_full_frame *o)
{
	uint32_t first = I->block_start[b];
	uint32_t end = b + 1 < I->nblocks ? I->block_start[b + 1] : I->n;
	uint32_t from = I->insns[first].offset;
	uint32_t to = end < I->n ? I->insns[end].offset : I->code->code_length;
	bool patched = I->insns[end - 1].opcode == JINST_OP_ATHROW && I->max_stack >= 1;
	for (uint32_t i = first; patched && i + 1 < end; i++)
		patched = I->insns[i].opcode == JINST_OP_NOP;
	for (uint16_t k = 0; patched && k < I->code->exception_count; k++)
		patched = I->code->exceptions[k].end_pc <= from || I->code->exceptions[k].start_pc >= to;
	if (!patched)
		return jinst_fail(I->diag, JINST_EUNSUPPORTED, JINST_NO_OFFSET,
		                  "unreachable code at pc %u (jinst_code_patch_unreachable replaces it)", (unsigned)from);
	o->offset = from;
	o->nlocals = 0;
	o->locals = NULL;
	o->nstack = 1;
	o->stack = jinst_arena_alloc(I->c->arena, sizeof(vt));
	if (!o->stack)
		return jinst_fail(I->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	o->stack[0] = I->throwable;
	return 0;
}

/* Phase 1: the blocks. Leaders are the first instruction, jump targets,
 * handlers, range starts and what follows a block end; target[i] says an
 * instruction needs a frame (jumped to or a handler). */
static int find_blocks(infer *I, const uint32_t *jumps, uint32_t njumps)
{
	jinst_diag *diag = I->diag;
	const jinst_code *code = I->code;
	jinst_arena *A = I->c->arena;
	I->block_of = jinst_arena_alloc(A, (size_t)I->n * sizeof(uint32_t));
	bool *leader = I->leader = jinst_arena_zalloc(A, (size_t)I->n + 1);
	bool *target = I->target = jinst_arena_zalloc(A, (size_t)I->n + 1);
	if (!I->block_of || !leader || !target)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	/* Block leaders: the first instruction, targets, handlers, and what
	 * follows a block end. Targets come from the decoder's list of jumps,
	 * handlers and range starts from the exception table; the instructions
	 * after a block end are marked in the one pass over every instruction
	 * below, which numbers the blocks as it goes (leader[i] is complete
	 * when it gets there). leader[n] stands past the last instruction, so
	 * the walk further below ends a block there without a test of its own.
	 * (The loops read the arrays through locals: their stores to bool
	 * arrays may alias anything, which would make the compiler load each of
	 * I's fields again after every store.) */
	const jinst_insn *insns = I->insns;
	const int32_t *at = I->insn_at;
	uint32_t n = I->n;
	leader[0] = true;
	for (uint32_t j = 0; j < njumps; j++) {
		const jinst_insn *in = &insns[jumps[j]];
		if (in->sw) {
			leader[at[in->sw->default_target]] = target[at[in->sw->default_target]] = true;
			for (uint32_t t = 0; t < in->sw->count; t++)
				leader[at[in->sw->targets[t]]] = target[at[in->sw->targets[t]]] = true;
		} else {
			leader[at[in->operand]] = target[at[in->operand]] = true;
		}
	}
	/* An entry off an instruction is reported after the pass below, which
	 * refuses jsr and ret first, as the refusal that leads the caller to
	 * inline subroutines must come before any other complaint. */
	uint32_t bad_entry = UINT32_MAX;
	for (uint16_t k = 0; k < code->exception_count; k++) {
		const jinst_exception_entry *e = &code->exceptions[k];
		if (at[e->handler_pc] < 0 || at[e->start_pc] < 0) {
			if (bad_entry == UINT32_MAX)
				bad_entry = k;
			continue;
		}
		leader[at[e->handler_pc]] = target[at[e->handler_pc]] = true;
		/* Range starts too, so a handler sees the locals at the range's first instruction. */
		leader[at[e->start_pc]] = true;
	}
	/* Blocks are numbered without a branch: each instruction is written as
	 * the start of the block after the last one begun, and the next leader
	 * overwrites that unless it is this one (the last write may land one
	 * past the blocks, hence n + 1 entries). leader[0] is set, so block_of
	 * is never -1. */
	I->block_start = jinst_arena_alloc(A, ((size_t)I->n + 1) * sizeof(uint32_t));
	if (!I->block_start)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	uint32_t *block_start = I->block_start, *block_of = I->block_of, nblocks = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint16_t flags = jinst_opcodes[insns[i].opcode].flags;
		if (flags & JINST_OPF_SUBROUTINE)
			return jinst_fail(diag, JINST_EUNSUPPORTED, JINST_NO_OFFSET, "jsr/ret: subroutines must be inlined first");
		if (flags & JINST_OPF_UNCONDITIONAL) /* ends a block (jsr and ret were refused above) */
			leader[i + 1] = true;
		block_start[nblocks] = i;
		nblocks += leader[i];
		block_of[i] = nblocks - 1;
	}
	if (bad_entry != UINT32_MAX)
		return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "exception table entry %u is off an instruction",
		                  (unsigned)bad_entry);
	leader[n] = true;
	I->nblocks = nblocks;
	return 0;
}

/* Phase 2: an entry state per block, the walk's frame f, and what each
 * exception entry catches and covers. */
static int alloc_states(infer *I, frame *f)
{
	jinst_diag *diag = I->diag;
	const jinst_code *code = I->code;
	jinst_arena *A = I->c->arena;
	I->in = jinst_arena_zalloc(A, (size_t)I->nblocks * sizeof(state));
	I->work = jinst_arena_alloc(A, (size_t)I->nblocks * sizeof(uint32_t));
	I->queued = jinst_arena_zalloc(A, I->nblocks);
	vt *pool = jinst_arena_alloc(A, ((size_t)I->nblocks + 1) * ((size_t)I->max_locals + I->max_stack + 1) * sizeof(vt));
	if (!I->in || !I->work || !I->queued || !pool)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	size_t per = (size_t)I->max_locals + I->max_stack + 1;
	for (uint32_t b = 0; b < I->nblocks; b++) {
		I->in[b].locals = pool + b * per;
		I->in[b].stack = I->in[b].locals + I->max_locals;
	}
	*f = (frame){pool + I->nblocks * per, pool + I->nblocks * per + I->max_locals, 0};
	I->covered = jinst_arena_zalloc(A, (size_t)I->n + 1);
	I->ex_type = jinst_arena_alloc(A, ((size_t)code->exception_count + 1) * sizeof(vt));
	I->ex_block = jinst_arena_alloc(A, ((size_t)code->exception_count + 1) * sizeof(uint32_t));
	I->ex_epoch = jinst_arena_zalloc(A, ((size_t)code->exception_count + 1) * sizeof(uint32_t));
	if (!I->covered || !I->ex_type || !I->ex_block || !I->ex_epoch)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint16_t k = 0; k < code->exception_count; k++) {
		const jinst_exception_entry *e = &code->exceptions[k];
		I->ex_type[k] = e->catch_type ? class_vt(I, e->catch_type) : I->throwable;
		if (I->malformed)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "handler %u catches a malformed class name",
			                  (unsigned)k);
		I->ex_block[k] = block_at(I, e->handler_pc);
		for (uint32_t i = (uint32_t)I->insn_at[e->start_pc]; i < I->n && I->insns[i].offset < e->end_pc; i++)
			I->covered[i] = true;
	}

	return 0;
}

/* Phase 3: the state at the method's entry, from its descriptor. */
static int entry_state(infer *I, frame *f)
{
	jinst_diag *diag = I->diag;
	/* The entry state from the descriptor. */
	const vt *init;
	uint16_t ninit;
	int rc = jinst_initial_frame(I->c, I->m, &init, &ninit, diag);
	if (rc)
		return rc;
	for (uint16_t i = 0; i < I->max_locals; i++)
		f->locals[i] = I->top;
	uint32_t slot = 0;
	for (uint16_t i = 0; i < ninit; i++) {
		if (slot >= I->max_locals)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "arguments need more than max_locals %u", I->max_locals);
		f->locals[slot++] = init[i];
		if (is_cat2(&init[i]))
			slot++;
	}
	return 0;
}

/* Phase 4: the worklist, until no entry state changes. */
static int run(infer *I, const frame *fin)
{
	jinst_diag *diag = I->diag;
	const bool *covered = I->covered;
	const bool *leader = I->leader;
	const jinst_insn *insns = I->insns;
	frame f = *fin;
	int rc = flow_into(I, 0, f.locals, f.stack, 0);
	while (!rc && I->nwork) {
		uint32_t b = I->work[--I->nwork];
		I->queued[b] = false;
		memcpy(f.locals, I->in[b].locals, I->max_locals * sizeof(vt));
		memcpy(f.stack, I->in[b].stack, I->in[b].nstack * sizeof(vt));
		f.sp = I->in[b].nstack;
		I->epoch++; /* new locals */
		uint32_t i = I->block_start[b];
		for (;; i++) {
			const jinst_insn *in = &insns[i];
			if (covered[i] && (rc = handlers(I, &f, i)) != 0)
				break;
			rc = step(I, &f, in);
			if (rc)
				break;
			uint8_t op = in->opcode;
			uint16_t flags = jinst_opcodes[op].flags;
			/* Handlers see the locals after an instruction too: HotSpot checks
			 * them after every instruction but a store (and before a store, as
			 * JVMS 4.10.1.4 says); besides stores only invokespecial <init>
			 * changes locals, replacing an uninitialized type. Merging both
			 * states keeps the handler's frame right for either reading. */
			if ((flags & JINST_OPF_STORE) || op == JINST_OP_INVOKESPECIAL) {
				I->epoch++; /* the locals may have changed */
				if (covered[i] && (rc = handlers(I, &f, i)) != 0)
					break;
			}
			if (flags & JINST_OPF_BRANCH)
				rc = flow_into(I, block_at(I, in->operand), f.locals, f.stack, f.sp);
			if (!rc && (flags & JINST_OPF_SWITCH)) {
				rc = flow_into(I, block_at(I, in->sw->default_target), f.locals, f.stack, f.sp);
				for (uint32_t t = 0; !rc && t < in->sw->count; t++)
					rc = flow_into(I, block_at(I, in->sw->targets[t]), f.locals, f.stack, f.sp);
			}
			if (rc)
				break;
			if (leader[i + 1]) {
				if (!(flags & JINST_OPF_UNCONDITIONAL)) {
					if (i + 1 >= I->n)
						rc = jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "code falls off its end");
					else
						rc = flow_into(I, I->block_of[i + 1], f.locals, f.stack, f.sp);
				}
				break;
			}
		}
	}
	if (rc == JINST_EMALFORMED && diag && !diag->message[0])
		jinst_fail(diag, rc, JINST_NO_OFFSET, "code does not type-check");
	return rc;
}

/* Phase 5: frames where the verifier wants them: every block reached by
 * a jump or a handler, or that follows a block end (JVMS 4.10.1). */
static int collect_frames(infer *I, jinst_full_frame **frames, uint32_t *count)
{
	jinst_diag *diag = I->diag;
	jinst_arena *A = I->c->arena;
	const bool *target = I->target;
	jinst_full_frame *out = jinst_arena_alloc(A, (size_t)I->nblocks * sizeof(*out));
	if (!out)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	uint32_t nf = 0;
	for (uint32_t b = 0; b < I->nblocks; b++) {
		uint32_t i = I->block_start[b];
		if (!I->in[b].set) {
			int rc = dead_block_frame(I, b, &out[nf]);
			if (rc)
				return rc;
			nf++;
			continue;
		}
		if (!target[i] && (i == 0 || falls_through(I->insns[i - 1].opcode)))
			continue;
		jinst_full_frame *o = &out[nf++];
		o->offset = I->insns[i].offset;
		o->locals = jinst_arena_alloc(A, ((size_t)I->max_locals + 1) * sizeof(vt));
		o->stack = jinst_arena_alloc(A, ((size_t)I->in[b].nstack + 1) * sizeof(vt));
		if (!o->locals || !o->stack)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		/* Trailing tops are left out, and a long/double is listed once. */
		uint16_t last = 0;
		for (uint16_t s = 0; s < I->max_locals; s++)
			if (I->in[b].locals[s].tag != JINST_VT_TOP)
				last = (uint16_t)(s + 1);
		o->nlocals = 0;
		for (uint16_t s = 0; s < last; s++) {
			o->locals[o->nlocals++] = I->in[b].locals[s];
			if (is_cat2(&I->in[b].locals[s]))
				s++;
		}
		o->nstack = 0;
		for (uint16_t s = 0; s < I->in[b].nstack; s++) {
			o->stack[o->nstack++] = I->in[b].stack[s];
			if (is_cat2(&I->in[b].stack[s]))
				s++;
		}
	}
	*frames = out;
	*count = nf;
	return 0;
}

int jinst_frames_infer(jinst_class *c, const jinst_member *m, const jinst_code *code, const jinst_hierarchy *h,
                       jinst_full_frame **frames, uint32_t *count, jinst_diag *diag)
{
	infer I = {.c = c, .m = m, .code = code, .h = h, .diag = diag};
	if (diag) {
		/* step() returns bare codes and the end says why when nothing inner
		 * did: a message left from an earlier call must not stand in. */
		diag->code = 0;
		diag->message[0] = '\0';
	}
	I.max_locals = code->max_locals;
	I.max_stack = code->max_stack;
	init_types(&I);
	I.throwable = obj_str("java/lang/Throwable");
	*frames = NULL;
	*count = 0;
	uint32_t *jumps, njumps;
	int rc = jinst_code_decode_at(c, code, &I.insns, &I.n, &I.insn_at, &jumps, &njumps, diag);
	if (rc)
		return rc;
	frame f;
	if ((rc = find_blocks(&I, jumps, njumps)) || (rc = alloc_states(&I, &f)) || (rc = entry_state(&I, &f)) ||
	    (rc = run(&I, &f)))
		return rc;
	return collect_frames(&I, frames, count);
}

/* The interpreter's state is made once per sim, in the class's arena:
 * zeroing and filling it at every step was 1% of `jinst instrument
 * --coverage` (the editor derives frames through long straight runs). */
int jinst_sim_step(jinst_class *c, jinst_sim *s, const jinst_insn *in, jinst_diag *diag)
{
	infer *I = s->run;
	if (!I) {
		if (!(I = jinst_arena_alloc(c->arena, sizeof(*I))))
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		*I = (infer){.c = c, .max_locals = s->max_locals, .max_stack = s->max_stack, .new_class = s->new_class,
		             .new_ctx = s->ctx};
		init_types(I);
		s->run = I;
	}
	I->diag = diag;
	I->malformed = false;
	frame f = {s->locals, s->stack, s->sp};
	int rc = step(I, &f, in);
	s->sp = f.sp;
	return rc;
}
