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
 * (branches before the call). The flow (flow.c) walks the code from its entry
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

typedef struct range {
	uint32_t start, end; /* original offsets, end exclusive (may be code_length) */
} range;

/* The ranges a constructor's catch-all may cover. */
/* At the call that initializes `this` (flow.c): no marks from there on. */
static int this_initialized(jinst_flow *f, jinst_flow_state *s, uint32_t idx, uint16_t receiver, bool *unmarked)
{
	(void)f, (void)idx;
	*unmarked = s->stack[receiver] == JINST_FLOW_THIS;
	return 0;
}

static int ctor_ranges(jinst_class *c, jinst_member *m, range **out, uint32_t *nout, jinst_diag *diag)
{
	jinst_flow f = {.c = c, .A = jinst_class_arena(c), .on_init = this_initialized};
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	jinst_code *code;
	jinst_insn *in;
	int rc = a ? jinst_attr_decode(c, a, (void **)&code, diag) : JINST_EINVAL;
	if (rc)
		return rc;
	if ((rc = jinst_code_decode(c, code, &in, &f.n, diag)))
		return rc;
	f.in = in;
	f.code = code;
	f.max_stack = code->max_stack;
	f.max_locals = code->max_locals;
	*out = jinst_arena_alloc(f.A, ((size_t)f.n / 2 + 1) * sizeof(**out));
	if (!*out)
		return JINST_ENOMEM;
	/* The initial frame: local 0 is uninitializedThis (JVMS 4.10.1.6). */
	if (!f.max_locals)
		return jinst_ins_fail(diag, JINST_EMALFORMED, "constructor with max_locals 0");
	if ((rc = jinst_flow_run(&f, JINST_FLOW_THIS)))
		return rc == JINST_ENOMEM ? rc
		                          : jinst_ins_fail(diag, rc, "constructor: cannot follow `this` (%s)", jinst_strerror(rc));
	/* Every instruction reached only with `this` initialized. */
	uint32_t n = 0;
	for (uint32_t i = 0; i < f.n;) {
		if (f.seen[i] != JINST_FLOW_UNMARKED) {
			i++;
			continue;
		}
		uint32_t j = i;
		while (j < f.n && f.seen[j] == JINST_FLOW_UNMARKED)
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
	 * too), public, so any class of that package name reads it, in any
	 * loader, interfaces included. */
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
