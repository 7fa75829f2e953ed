/*
 * The allocation pass (include/jinst/alloc.h): after each allocation
 * instruction, `dup; push site; invokestatic HOOK(Object, int)V`.
 *
 * Arrays are simple: newarray, anewarray and multianewarray leave the new
 * array on top of the stack, so the hook goes right after them.
 *
 * Objects are not: `new T` leaves an uninitialized reference that no
 * method may receive (JVMS 4.10.1.9), and the object only exists, as far
 * as the program is concerned, once a T.<init> has returned on it. So the
 * hook goes after the invokespecial <init> whose receiver is that `new`'s
 * reference, and takes the copy of the reference javac's `dup` left under
 * the receiver: after the call it is on top of the stack, initialized. An
 * exception thrown by the arguments or the constructor leaves before the
 * hook: nothing is recorded for an object that was never made.
 *
 * Which `new` an invokespecial initializes takes a data flow, since
 * arguments may allocate too (`new A(new B())`, nested news between one
 * `new` and its call), branch (`new A(c ? x : y)`) and be shuffled by the
 * dup family (other compilers' dup_x1/dup_x2 shapes). The flow (flow.c,
 * which the trace pass's constructors take too) walks the code from its entry and from every handler, marking each stack slot and
 * local with the `new` whose uninitialized reference it holds (0: anything
 * else), moved by aload/astore, dup*, swap; every other instruction pushes
 * unmarked values. At an invokespecial <init> whose receiver carries a
 * mark, the site is hooked when the slot just below the receiver (the top
 * once the call popped its arguments) carries the same mark; the marks of
 * that `new` are then cleared (the reference is initialized). A `new`
 * without that copy is ECJ's `new X(...);` whose value is dropped (no
 * `dup`): when the code from the `new` to the call is straight (no branch,
 * and nothing jumps into it, so no frame there names the stack), a `dup`
 * goes after the `new` and the hook after the call takes that copy;
 * otherwise, and for a reference kept only in a local (no compiler emits
 * that), the `new` is not hooked. The verifier
 * makes the marks the same on every path to an instruction (an
 * uninitialized type merges with nothing but itself), so each instruction
 * is walked once, with the first state that reaches it; jsr/ret (before
 * version 50) are not followed, and such a method gets its array hooks
 * only.
 *
 * Calls that return what a native made (clone(), reflection) are found
 * by alloc_calls.c, which says why and how they are counted; their hook
 * follows the call as an array's follows its instruction, and a clone()
 * that may run an override also keeps its receiver, by a `dup` inserted
 * inside the call's labels (every path into the call runs it).
 *
 * The code patcher inserts the hooks (outside the next instruction's
 * labels, so a branch to it does not run them); what it declines, the
 * editor does (JINST_AFTER the instruction).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jinst/alloc.h"
#include "jinst/patch.h"

typedef struct aflow {
	jinst_class *c;
	jinst_arena *A;
	const jinst_code *code;
	const jinst_insn *in;
	uint32_t n;
	uint32_t *site_of; /* per invokespecial: the new's index + 1 it completes, else 0 */
	bool *dropped;     /* per such invokespecial: no copy of the reference is left */
} aflow;

/* A `new`'s reference reaches its constructor call: the site, the copy
 * below the receiver or none, and its marks cleared. */
static int on_init(jinst_flow *fl, jinst_flow_state *s, uint32_t idx, uint16_t receiver, bool *unmarked)
{
	(void)unmarked;
	aflow *f = fl->ctx;
	uint32_t mark = s->stack[receiver];
	if (mark == JINST_FLOW_THIS) /* uninitializedThis: never a site */
		return 0;
	f->site_of[idx] = mark;
	f->dropped[idx] = !(receiver > 0 && s->stack[receiver - 1] == mark);
	jinst_flow_initialized(fl, s, mark);
	return 0;
}

/* site_of for every invokespecial that completes a `new` of the code. */
static int constructor_sites(aflow *f, bool ctor)
{
	f->site_of = jinst_arena_zalloc(f->A, ((size_t)f->n + 1) * sizeof(*f->site_of));
	f->dropped = jinst_arena_zalloc(f->A, (size_t)f->n + 1);
	if (!f->site_of || !f->dropped)
		return JINST_ENOMEM;
	jinst_flow fl = {.c = f->c, .A = f->A, .code = f->code, .in = f->in, .n = f->n,
	                 .max_stack = f->code->max_stack, .max_locals = f->code->max_locals,
	                 .mark_news = true, .on_init = on_init, .ctx = f};
	return jinst_flow_run(&fl, ctor ? JINST_FLOW_THIS : 0);
}

/* ---- sites ---- */

typedef struct hook_at {
	uint32_t after;  /* index of the instruction the hook follows */
	uint32_t site;
	int hook;
	/* JINST_HOOK_ALLOC_CLONE: a `dup` before the call keeps the receiver,
	 * and the hook gets the String constant start (0: aconst_null). */
	uint16_t start;
	/* A `new` whose reference is dropped (ECJ's `new X();`): the index of
	 * the `new`, after which a `dup` keeps a copy for the hook; else
	 * NO_DUP. */
	uint32_t dup_after;
} hook_at;

#define NO_DUP UINT32_MAX

/* Whether a `dup` after the `new` at index from may keep a copy of its
 * reference down to the constructor call at index to: straight-line code
 * between them that nothing jumps into (no frame there names the stack
 * the copy deepens). */
static bool straight(const aflow *f, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i <= to; i++)
		if (jinst_opcodes[f->in[i].opcode].flags &
		    (JINST_OPF_BRANCH | JINST_OPF_SWITCH | JINST_OPF_UNCONDITIONAL | JINST_OPF_SUBROUTINE))
			return false;
	uint32_t lo = f->in[from].offset, hi = f->in[to].offset;
	for (uint16_t i = 0; i < f->code->exception_count; i++)
		if (f->code->exceptions[i].handler_pc > lo && f->code->exceptions[i].handler_pc <= hi)
			return false;
	for (uint32_t i = 0; i < f->n; i++) {
		const jinst_insn *in = &f->in[i];
		unsigned fl = jinst_opcodes[in->opcode].flags;
		if ((fl & JINST_OPF_BRANCH) && (uint32_t)in->operand > lo && (uint32_t)in->operand <= hi)
			return false;
		if (fl & JINST_OPF_SWITCH) {
			if ((uint32_t)in->sw->default_target > lo && (uint32_t)in->sw->default_target <= hi)
				return false;
			for (uint32_t k = 0; k < in->sw->count; k++)
				if ((uint32_t)in->sw->targets[k] > lo && (uint32_t)in->sw->targets[k] <= hi)
					return false;
		}
	}
	return true;
}

static uint32_t line_at(const jinst_line_numbers *lines, uint32_t offset)
{
	uint32_t best = 0, line = 0;
	for (uint16_t i = 0; lines && i < lines->count; i++)
		if (lines->items[i].start_pc <= offset && lines->items[i].start_pc >= best) {
			best = lines->items[i].start_pc;
			line = lines->items[i].line_number;
		}
	return line;
}

/* The allocated type of instruction in (internal name or array
 * descriptor), into the arena. */
static const char *alloc_type(jinst_class *c, const jinst_insn *in, const jinst_insn *newi)
{
	static const char *const prim[] = {"[Z", "[C", "[F", "[D", "[B", "[S", "[I", "[J"}; /* atype 4..11 */
	jinst_arena *A = jinst_class_arena(c);
	uint16_t n;
	const uint8_t *name;
	switch (in->opcode) {
	case JINST_OP_NEWARRAY:
		return in->operand >= 4 && in->operand <= 11 ? prim[in->operand - 4] : NULL;
	case JINST_OP_INVOKESPECIAL: /* the new's class */
		in = newi;
		/* fall through */
	case JINST_OP_MULTIANEWARRAY:
		if (!(name = jinst_cp_name(c, (uint16_t)in->operand, &n)))
			return NULL;
		char *t = jinst_arena_alloc(A, (size_t)n + 1);
		if (t) {
			memcpy(t, name, n);
			t[n] = 0;
		}
		return t;
	case JINST_OP_ANEWARRAY: {
		if (!(name = jinst_cp_name(c, (uint16_t)in->operand, &n)))
			return NULL;
		bool array = n && name[0] == '[';
		char *a = jinst_arena_alloc(A, (size_t)n + 4);
		if (!a)
			return NULL;
		size_t k = 0;
		a[k++] = '[';
		if (!array)
			a[k++] = 'L';
		memcpy(a + k, name, n);
		k += n;
		if (!array)
			a[k++] = ';';
		a[k] = 0;
		return a;
	}
	default:
		return NULL;
	}
}

typedef struct alloc_state {
	jinst_alloc_sites *sites;
} alloc_state;

static const jinst_line_numbers *line_table(jinst_class *c, const jinst_code *code)
{
	jinst_attr *a = jinst_attr_find(&code->attrs, JINST_ATTR_LINE_NUMBER_TABLE);
	jinst_line_numbers *lines = NULL;
	return a && !jinst_attr_decode(c, a, (void **)&lines, NULL) ? lines : NULL;
}

/* The hooks of a method: *out, *count, in code order. */
static int find_sites(alloc_state *st, jinst_pass_class *pc, jinst_pass_method *pm, aflow *f, hook_at **out,
                      uint32_t *count)
{
	bool any_new = false;
	for (uint32_t i = 0; i < f->n; i++)
		any_new |= f->in[i].opcode == JINST_OP_NEW;
	/* A flow that cannot follow the code (jsr/ret) leaves the objects alone. */
	if (any_new && constructor_sites(f, jinst_pass_method_is_init(pm)) == JINST_ENOMEM)
		return JINST_ENOMEM;
	const jinst_line_numbers *lines = line_table(f->c, f->code);
	hook_at *h = jinst_arena_alloc(f->A, ((size_t)f->n + 1) * sizeof(*h));
	if (!h)
		return JINST_ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i + 1 < f->n; i++) {
		const jinst_insn *in = &f->in[i];
		uint32_t mark = in->opcode == JINST_OP_INVOKESPECIAL && f->site_of ? f->site_of[i] : 0;
		uint32_t dup_after = NO_DUP;
		if (mark && f->dropped[i]) {
			if (!straight(f, mark - 1, i))
				continue; /* its arguments branch: not hooked */
			dup_after = mark - 1;
		}
		int hook = in->opcode == JINST_OP_NEWARRAY || in->opcode == JINST_OP_ANEWARRAY ? JINST_HOOK_ALLOC_ARRAY
		           : in->opcode == JINST_OP_MULTIANEWARRAY                            ? JINST_HOOK_ALLOC_ARRAYS
		           : mark                                                              ? JINST_HOOK_ALLOC_OBJECT
		                                                                               : -1;
		const jinst_insn *at = mark ? &f->in[mark - 1] : in; /* the line of the `new` */
		jinst_alloc_site s = {jinst_pass_class_name(pc), jinst_pass_method_name(pm),
		                      jinst_pass_method_descriptor(pm), jinst_pass_class_source(pc),
		                      NULL, line_at(lines, at->offset), (uint8_t)(hook - JINST_HOOK_ALLOC_OBJECT)};
		jinst_alloc_call call = {hook, NULL, 0};
		int rc = hook < 0 ? jinst_alloc_call_at(f->c, s.class_name, in, &f->in[i + 1], &call) : 0;
		if (rc)
			return rc;
		if ((hook = call.hook) < 0)
			continue;
		s.type = call.type ? call.type : alloc_type(f->c, in, at);
		if (call.type)
			s.kind = JINST_ALLOC_ANY;
		if (!s.type)
			return JINST_EMALFORMED;
		if ((rc = jinst_alloc_sites_assign(&h[n].site, st->sites, &s)))
			return rc;
		h[n].after = i;
		h[n].dup_after = dup_after;
		h[n].start = call.start;
		h[n++].hook = hook;
	}
	*out = h;
	*count = n;
	return 0;
}

/* The code after the allocation: `dup; push site; invokestatic HOOK`, or
 * for a clone() that keeps its receiver below the result, `dup_x1;
 * aconst_null | ldc start; push site; invokestatic allocClone`. *count
 * instructions into seq. */
static int hook_code(jinst_class *c, const hook_at *h, const uint16_t *refs, jinst_insn seq[4], uint32_t *count)
{
	memset(seq, 0, 4 * sizeof(*seq));
	uint32_t k = 0;
	if (h->hook == JINST_HOOK_ALLOC_CLONE) {
		seq[k++].opcode = JINST_OP_DUP_X1;
		seq[k].opcode = h->start ? JINST_OP_LDC_W : JINST_OP_ACONST_NULL;
		seq[k++].operand = h->start;
	} else {
		seq[k++].opcode = JINST_OP_DUP;
	}
	int rc = jinst_ins_push_int(c, h->site, &seq[k++]);
	seq[k].opcode = JINST_OP_INVOKESTATIC;
	seq[k++].operand = refs[h->hook];
	*count = k;
	return rc;
}

/* The hooks through the patcher; JINST_EUNSUPPORTED (nothing changed)
 * when it declines. */
static int apply_patch(aflow *f, jinst_member *m, const hook_at *h, uint32_t n, const uint16_t *refs,
                       jinst_diag *diag)
{
	static const uint8_t dup = JINST_OP_DUP;
	jinst_patch *p;
	int rc = jinst_patch_open(&p, f->c, m, diag);
	for (uint32_t i = 0; !rc && i < n; i++) {
		jinst_insn seq[4];
		uint32_t count;
		if ((rc = hook_code(f->c, &h[i], refs, seq, &count)))
			break;
		uint8_t b[16];
		uint32_t k = jinst_ins_encode(seq, count, b);
		/* A dropped reference: the dup goes after the `new` instead. */
		bool moved = h[i].dup_after != NO_DUP;
		if (moved && (rc = jinst_patch_insert(p, f->in[h[i].dup_after + 1].offset, JINST_BEFORE_OUTSIDE, b, 1, 2)))
			break;
		/* A clone()'s receiver, kept for the hook: on every path into the
		 * call, so inside its labels. Below the result, it leaves the hook
		 * one word deeper. */
		bool receiver = h[i].hook == JINST_HOOK_ALLOC_CLONE;
		if (receiver && (rc = jinst_patch_insert(p, f->in[h[i].after].offset, JINST_BEFORE_INSIDE, &dup, 1, 1)))
			break;
		rc = jinst_patch_insert(p, f->in[h[i].after + 1].offset, JINST_BEFORE_OUTSIDE, b + moved, k - moved,
		                        receiver ? 4 : 2);
	}
	return rc ? rc : jinst_patch_commit(p, diag);
}

/* What apply_patch inserts, through the editor. */
typedef struct alloc_edit {
	aflow *f;
	const hook_at *h;
	uint32_t n;
	const uint16_t *refs;
} alloc_edit;

static int edit_hooks(jinst_edit *ed, const void *ctx)
{
	const alloc_edit *ae = ctx;
	aflow *f = ae->f;
	const hook_at *h = ae->h;
	int rc = 0;
	for (uint32_t i = 0; !rc && i < ae->n; i++) {
		jinst_insn seq[4];
		uint32_t count = 0;
		jinst_node *at = jinst_edit_at(ed, f->in[h[i].after].offset);
		bool moved = h[i].dup_after != NO_DUP;
		jinst_node *nw = moved ? jinst_edit_at(ed, f->in[h[i].dup_after].offset) : NULL;
		rc = at && (nw || !moved) ? hook_code(f->c, &h[i], ae->refs, seq, &count) : JINST_EMALFORMED;
		if (!rc && moved)
			rc = jinst_edit_insert(ed, nw, JINST_AFTER, seq, 1, NULL);
		if (!rc && h[i].hook == JINST_HOOK_ALLOC_CLONE) /* the receiver, as apply_patch keeps it */
			rc = jinst_edit_insert(ed, at, JINST_BEFORE_INSIDE, &(jinst_insn){.opcode = JINST_OP_DUP}, 1, NULL);
		if (!rc)
			rc = jinst_edit_insert(ed, at, JINST_AFTER, seq + moved, count - moved, NULL);
	}
	return rc;
}

static int alloc_method(void *state, jinst_pass_class *pc, jinst_pass_method *pm, jinst_diag *diag)
{
	jinst_class *c = jinst_pass_class_model(pc);
	jinst_member *m = jinst_pass_method_member(pm);
	const jinst_code *code = jinst_pass_method_code(pm);
	aflow f = {.c = c, .A = jinst_class_arena(c), .code = code};
	if (!code)
		return JINST_PASS_SKIP;
	jinst_insn *in;
	int rc = jinst_code_decode(c, code, &in, &f.n, diag);
	if (rc)
		return rc;
	f.in = in;
	hook_at *h;
	uint32_t n;
	if ((rc = find_sites(state, pc, pm, &f, &h, &n)))
		return jinst_ins_fail(diag, rc, "allocation sites: %s", jinst_strerror(rc));
	if (!n)
		return JINST_PASS_SKIP;
	uint16_t refs[JINST_HOOK_COUNT] = {0};
	for (uint32_t i = 0; i < n; i++)
		if (!refs[h[i].hook] && (rc = jinst_pass_hook_ref(pc, h[i].hook, &refs[h[i].hook])))
			return jinst_ins_fail(diag, rc, "cannot add the hooks to the constant pool");
	rc = apply_patch(&f, m, h, n, refs, diag);
	if (rc == 0 || rc == JINST_ENOMEM)
		return rc;
	alloc_edit ae = {&f, h, n, refs};
	return jinst_ins_edit(c, m, edit_hooks, &ae, "editing", diag);
}

/* The classes the VM generates for reflection (a constructor called
 * reflectively often enough gets an accessor class whose `new` makes the
 * object Constructor.newInstance returns) are declined: that object is
 * counted at the call of newInstance, and would count twice. */
static int alloc_begin(void *state, jinst_pass_class *pc, jinst_diag *diag)
{
	(void)state, (void)diag;
	static const char *const generated[] = {"jdk/internal/reflect/Generated", "sun/reflect/Generated"};
	const char *name = jinst_pass_class_name(pc);
	for (size_t i = 0; i < sizeof(generated) / sizeof(generated[0]); i++)
		if (strncmp(name, generated[i], strlen(generated[i])) == 0)
			return JINST_PASS_SKIP;
	return 0;
}

static void alloc_free(void *state)
{
	alloc_state *st = state;
	if (st)
		jinst_alloc_sites_free(st->sites);
	free(st);
}

int jinst_alloc_pass(jinst_pass *out, jinst_alloc_sites **sites)
{
	alloc_state *st = calloc(1, sizeof(*st));
	if (!st || jinst_alloc_sites_new(&st->sites)) {
		free(st);
		return JINST_ENOMEM;
	}
	*out = (jinst_pass){.version = JINST_PASS_VERSION, .name = "alloc", .state = st, .begin = alloc_begin,
	                    .method = alloc_method, .free = alloc_free};
	*sites = st->sites;
	return 0;
}
