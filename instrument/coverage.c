/*
 * The coverage pass: probes at the sites of the shared placement
 * (include/jinst/coverage.h, JaCoCo's), so that the analyzer, which runs
 * the same placement over the same original class, reads each probe id as
 * the same edge.
 *
 * The probe array. The class gets an id (probe_classes.c, by identity), a
 * constant in its code. Each method begins with
 *
 *     push class id; push probe count; invokestatic probes(II)[Z; astore L
 *
 * Ids are handed out per instrumenter, so code instrumented ahead of time
 * (hooks_class set, or JINST_PASS_COVERAGE_IDENTITY) asks by the class's
 * identity instead, which no other run can give another class, and by its
 * name, which the runtime writes in the record without any table:
 *
 *     ldc2_w identity; push probe count; ldc "pkg/Name";
 *     invokestatic probesFor(JILjava/lang/String;)[Z; astore L
 *
 * outside the labels of its first instruction (a loop back to offset 0
 * does not ask again), L a new local declared in every frame of the method.
 * In a constructor this runs before super(...): it touches neither `this`
 * nor anything uninitialized, which JVMS 4.10.1.9 allows. A probe is then
 *
 *     aload L; push id; iconst_1; bastore                (booleans)
 *     aload L; push id; dup2; laload; lconst_1; ladd; lastore   (counts)
 *
 * The runtime never returns null or an array shorter than the count
 * (runtime-java/jinst/rt/Coverage.java), so a probe cannot throw.
 *
 * A method of one probe (no branch: a getter, a setter, a delegation; half
 * the methods of Xalan and H2, and the ones most often inlined) gets
 * neither the entry nor the local; its probe is one call that sets it:
 *
 *     push class id; push probe count; push id; invokestatic hit(III)V
 *
 * (hitCount for counts). It grows by 10 bytes where the array form adds
 * 17 and a local, which is what decides whether C1 (35 bytes, a few stack
 * and local slots) and C2 (35 bytes at cold sites) still inline it. By
 * identity, such a method takes the array form: a call that set the probe
 * would carry four constants (11 to 13 bytes), and the offline runtime
 * has no such hook yet.
 *
 * The flat array. While the agent has given the instrumenter a range of
 * java.lang.$JinstProbes.P (booleans by class id only), the class takes
 * probe count indices of it, and its code stores there with no hook:
 *
 *     getstatic P; push range + id; iconst_1; bastore
 *
 * at each site, or past three sites getstatic P; astore L at the entry and
 * aload L at the sites (the entry's 4 or 5 bytes then pay off). P is a
 * static final: the JIT reads it as a constant, the store needs no range
 * check, and nothing is called at entry (docs/ARCHITECTURE.md).
 *
 * The sites, through the code editor (include/jinst/edit.h):
 *  - BEFORE (return, athrow): inside the instruction's labels, so every
 *    jump to it runs the probe;
 *  - FALLTHROUGH: outside the labels of the instruction, so only the edge
 *    from the previous instruction runs it;
 *  - JUMP on goto: inside the goto's labels; on a conditional jump, the
 *    jump is replaced by its inverse to a new label, then the probe and a
 *    goto to the old target, then the label: the taken edge runs the
 *    probe, the other falls through as before (the label's frame is the
 *    fall-through state, which the editor derives); a FALLTHROUGH probe
 *    into the next instruction goes after that label, in the same
 *    replacement (before it, the inverted jump would skip it);
 *  - SWITCH: every entry of the switch naming the target names instead a
 *    trampoline appended after the code (label, probe, goto target), whose
 *    frame is the switch's minus the key it pops.
 *
 * All sites of a method go in one edit; any failure (the code grows past
 * 64 KiB, say) leaves the method exactly as it was and the instrumenter
 * reports it, its probes never set. A class whose placement fails (jsr/ret,
 * which the analyzer refuses too) is declined whole, and reported
 * (jinst_pass_decline); one with no probe is passed over.
 *
 * Per class, what begin learns (the plan, the id) is kept for the method
 * calls in a thread-local slot: the instrumenter runs one class's begin,
 * methods and end on one thread, without interleaving another class.
 */
#include <string.h>

#include "internal.h"
#include "jinst/coverage.h"

typedef struct cov_class {
	const jinst_pass_class *pc;  /* the class being instrumented, or NULL */
	jinst_coverage_plan *plan;
	jinst_coverage_entry entry;  /* how its methods ask: hooks 0 until a method needs them */
	uint16_t next;               /* the plan's method to look at first */
} cov_class;

static _Thread_local cov_class current;

/* The flat array (runtime-java/bridge/java/lang/$JinstProbes.java). */
#define FLAT_OWNER "java/lang/$JinstProbes"
#define FLAT_NAME "P"

static bool counts_mode(void *state)
{
	return ((uint32_t)(uintptr_t)state & JINST_PASS_COVERAGE_COUNTS) != 0;
}

/* The probe's instructions into seq (room for 7), the array pushed by
 * load (aload L, or getstatic of the flat array) and probe the index in it;
 * their count, 0 on error. */
static uint32_t probe_code(jinst_class *c, bool counts, jinst_insn load, uint32_t probe, jinst_insn *seq, int *rc)
{
	seq[0] = load;
	if ((*rc = jinst_ins_push_int(c, probe, &seq[1])))
		return 0;
	if (!counts) {
		seq[2] = jinst_ins_op(JINST_OP_ICONST_1, 0);
		seq[3] = jinst_ins_op(JINST_OP_BASTORE, 0);
		return 4;
	}
	seq[2] = jinst_ins_op(JINST_OP_DUP2, 0);
	seq[3] = jinst_ins_op(JINST_OP_LALOAD, 0);
	seq[4] = jinst_ins_op(JINST_OP_LCONST_1, 0);
	seq[5] = jinst_ins_op(JINST_OP_LADD, 0);
	seq[6] = jinst_ins_op(JINST_OP_LASTORE, 0);
	return 7;
}

/* The inverse of a conditional jump (JVMS 6.5: ifeq..if_acmpne pair up
 * as even/odd neighbours from 0x99; ifnull/ifnonnull likewise). */
static uint8_t inverse(uint8_t opcode)
{
	if (opcode >= JINST_OP_IFEQ && opcode <= JINST_OP_IF_ACMPNE)
		return (uint8_t)(JINST_OP_IFEQ + ((opcode - JINST_OP_IFEQ) ^ 1));
	return opcode == JINST_OP_IFNULL ? JINST_OP_IFNONNULL : JINST_OP_IFNULL;
}

typedef struct method_edit {
	jinst_class *c;
	jinst_edit *ed;
	bool counts, frames;
	uint32_t local;  /* the array's local, or NO_LOCAL */
} method_edit;

enum { NO_LOCAL = 0x10000 };

static int at_node(method_edit *e, uint32_t offset, jinst_node **n)
{
	*n = jinst_edit_at(e->ed, offset);
	return *n ? 0 : JINST_EINVAL;
}

/* Whether next is the first original instruction after n. */
static bool next_original(const jinst_node *n, const jinst_node *next)
{
	for (const jinst_node *k = jinst_node_next(n); k; k = jinst_node_next(k))
		if (jinst_node_original_offset(k) != JINST_NO_OFFSET)
			return k == next;
	return false;
}

/* The jump site s; *used: 2 when the plan's next site, a fall-through
 * into the instruction after a conditional jump, went in with it. That
 * probe follows the skip label: the skip label stands just before the next
 * instruction, so an insertion outside that instruction's labels would
 * land before it, where the inverted jump skips it. */
static int jump_site(method_edit *e, const jinst_probe_site *s, uint32_t left, const jinst_insn (*probes)[7],
                     uint32_t np, uint32_t *used)
{
	jinst_node *n;
	int rc = at_node(e, s->offset, &n);
	if (rc)
		return rc;
	const jinst_insn *in = jinst_node_insn(n);
	if (in->opcode == JINST_OP_GOTO || in->opcode == JINST_OP_GOTO_W)
		return jinst_edit_insert(e->ed, n, JINST_BEFORE_INSIDE, probes[0], np, NULL);
	if (!(jinst_opcodes[in->opcode].flags & JINST_OPF_BRANCH) || in->opcode == JINST_OP_JSR ||
	    in->opcode == JINST_OP_JSR_W)
		return JINST_EINVAL;
	jinst_label skip;
	if ((rc = jinst_edit_new_label(e->ed, &skip)))
		return rc;
	jinst_insn seq[17];
	seq[0] = jinst_ins_op(inverse(in->opcode), (int32_t)skip);
	memcpy(&seq[1], probes[0], np * sizeof(seq[0]));
	seq[np + 1] = jinst_ins_op(JINST_OP_GOTO, in->operand);
	seq[np + 2] = jinst_ins_op(JINST_OP_LABEL, (int32_t)skip);
	uint32_t count = np + 3;
	if (left > 1 && s[1].kind == JINST_PROBE_FALLTHROUGH && next_original(n, jinst_edit_at(e->ed, s[1].offset))) {
		memcpy(&seq[count], probes[1], np * sizeof(seq[0]));
		count += np;
		*used = 2;
	}
	return jinst_edit_replace(e->ed, n, seq, count);
}

/* The switch at sites[0].offset, with every one of its sites (they are
 * consecutive in the plan: code order): one replacement. *used: how many. */
static int switch_sites(method_edit *e, const jinst_probe_site *sites, uint32_t left, uint32_t *used,
                        const jinst_probe_site *first_probe_of, jinst_insn (*probes)[7], uint32_t np)
{
	jinst_node *n;
	int rc = at_node(e, sites[0].offset, &n);
	if (rc)
		return rc;
	const jinst_insn *in = jinst_node_insn(n);
	if (!in->sw)
		return JINST_EINVAL;
	jinst_full_frame fr;
	if (e->frames && (rc = jinst_edit_frame_before(e->ed, n, &fr, NULL)))
		return rc;
	if (e->frames && fr.nstack)
		fr.nstack--; /* the key */
	jinst_arena *A = jinst_class_arena(e->c);
	jinst_switch *sw = jinst_arena_alloc(A, sizeof(*sw));
	int32_t *targets = jinst_arena_alloc(A, (size_t)(in->sw->count ? in->sw->count : 1) * sizeof(*targets));
	if (!sw || !targets)
		return JINST_ENOMEM;
	*sw = *in->sw;
	memcpy(targets, in->sw->targets, in->sw->count * sizeof(*targets));
	sw->targets = targets;
	uint32_t k = 0;
	for (; k < left && sites[k].kind == JINST_PROBE_SWITCH && sites[k].offset == sites[0].offset; k++) {
		jinst_label to, tramp;
		if ((rc = jinst_edit_label_at(e->ed, sites[k].target, &to)) || (rc = jinst_edit_new_label(e->ed, &tramp)))
			return rc;
		for (uint32_t i = 0; i < sw->count; i++)
			if (sw->targets[i] == (int32_t)to)
				sw->targets[i] = (int32_t)tramp;
		if (sw->default_target == (int32_t)to)
			sw->default_target = (int32_t)tramp;
		jinst_insn seq[9];
		seq[0] = jinst_ins_op(JINST_OP_LABEL, (int32_t)tramp);
		memcpy(&seq[1], probes[&sites[k] - first_probe_of], np * sizeof(seq[0]));
		seq[np + 1] = jinst_ins_op(JINST_OP_GOTO, (int32_t)to);
		if ((rc = jinst_edit_insert(e->ed, NULL, JINST_AFTER, seq, np + 2, NULL)) ||
		    (e->frames && (rc = jinst_edit_set_frame(e->ed, tramp, &fr))))
			return rc;
	}
	jinst_insn repl = *in;
	repl.sw = sw;
	*used = k;
	return jinst_edit_replace(e->ed, n, &repl, 1);
}

/* The entry code: the array into the new local, declared in every frame;
 * with a flat range, the flat array's constant (getstatic, no call). */
static int entry(method_edit *e, const jinst_coverage_entry *en)
{
	static const char bools[] = "[Z", longs[] = "[J";
	uint16_t local;
	int rc = jinst_edit_new_local(e->ed, JINST_VT_OBJECT, &local);
	jinst_ftype t = {JINST_VT_OBJECT, 0, 2, (const uint8_t *)(e->counts ? longs : bools)};
	if (rc || (rc = jinst_edit_declare_local(e->ed, local, &t)))
		return rc;
	e->local = local;
	jinst_insn seq[5];
	uint32_t n = 0;
	if (en->flat != JINST_NO_FLAT)
		seq[n++] = jinst_ins_op(JINST_OP_GETSTATIC, en->field);
	else if (en->identity)
		seq[n++] = jinst_ins_op(JINST_OP_LDC2_W, en->identity);
	else if ((rc = jinst_ins_push_int(e->c, en->class_id, &seq[n++])))
		return rc;
	if (en->flat == JINST_NO_FLAT) {
		if ((rc = jinst_ins_push_int(e->c, en->probe_count, &seq[n++])))
			return rc;
		if (en->identity)
			seq[n++] = jinst_ins_op(JINST_OP_LDC, en->name); /* the editor widens it to ldc_w past 255 */
		seq[n++] = jinst_ins_op(JINST_OP_INVOKESTATIC, en->hook);
	}
	seq[n++] = jinst_ins_op(JINST_OP_ASTORE, local);
	jinst_node *first = jinst_edit_first_insn(e->ed);
	return first ? jinst_edit_insert(e->ed, first, JINST_BEFORE_OUTSIDE, seq, n, NULL) : JINST_EMALFORMED;
}

/* A method of one probe: the call that sets it, at its site. */
static int place_one(method_edit *e, const jinst_probe_site *s, const jinst_coverage_entry *en)
{
	jinst_insn seq[4];
	jinst_node *n;
	int rc;
	if ((rc = jinst_ins_push_int(e->c, en->class_id, &seq[0])) ||
	    (rc = jinst_ins_push_int(e->c, en->probe_count, &seq[1])) || (rc = jinst_ins_push_int(e->c, s->id, &seq[2])) ||
	    (rc = at_node(e, s->offset, &n)))
		return rc;
	seq[3] = jinst_ins_op(JINST_OP_INVOKESTATIC, en->hit);
	return jinst_edit_insert(e->ed, n, s->kind == JINST_PROBE_BEFORE ? JINST_BEFORE_INSIDE : JINST_BEFORE_OUTSIDE,
	                         seq, 4, NULL);
}

/* Up to this many probes, a method with a flat range names the array at
 * each probe (3 bytes of getstatic where aload takes 1 or 2) and has no
 * entry code and no local; past it, the entry's 4 or 5 bytes pay off. */
enum { FLAT_NO_ENTRY = 3 };

/* Every site of one method into the open editor. */
static int place(method_edit *e, const jinst_coverage_method *pm, const jinst_coverage_entry *en)
{
	bool flat = en->flat != JINST_NO_FLAT;
	int rc = flat && pm->site_count <= FLAT_NO_ENTRY ? 0 : entry(e, en);
	jinst_insn load = e->local == NO_LOCAL ? jinst_ins_op(JINST_OP_GETSTATIC, en->field)
	                                       : jinst_ins_op(JINST_OP_ALOAD, (int32_t)e->local);
	jinst_insn(*probes)[7] = pm->site_count ? jinst_arena_alloc(jinst_class_arena(e->c),
	                                                            pm->site_count * sizeof(*probes)) : NULL;
	if (rc || (pm->site_count && !probes))
		return rc ? rc : JINST_ENOMEM;
	uint32_t np = 0;
	for (uint32_t i = 0; i < pm->site_count; i++)
		if (!(np = probe_code(e->c, e->counts, load, (flat ? en->flat : 0) + pm->sites[i].id, probes[i], &rc)))
			return rc;
	for (uint32_t i = 0; i < pm->site_count && !rc;) {
		const jinst_probe_site *s = &pm->sites[i];
		jinst_node *n;
		uint32_t used = 1;
		switch (s->kind) {
		case JINST_PROBE_BEFORE:
			if (!(rc = at_node(e, s->offset, &n)))
				rc = jinst_edit_insert(e->ed, n, JINST_BEFORE_INSIDE, probes[i], np, NULL);
			break;
		case JINST_PROBE_FALLTHROUGH:
			if (!(rc = at_node(e, s->offset, &n)))
				rc = jinst_edit_insert(e->ed, n, JINST_BEFORE_OUTSIDE, probes[i], np, NULL);
			break;
		case JINST_PROBE_JUMP: rc = jump_site(e, s, pm->site_count - i, (const jinst_insn(*)[7])&probes[i], np, &used); break;
		case JINST_PROBE_SWITCH:
			rc = switch_sites(e, s, pm->site_count - i, &used, pm->sites, probes, np);
			break;
		default: rc = JINST_EINVAL;
		}
		i += used;
	}
	return rc;
}

bool jinst_coverage_one_probe(const jinst_coverage_method *pm)
{
	return pm->site_count == 1 &&
	       (pm->sites[0].kind == JINST_PROBE_BEFORE || pm->sites[0].kind == JINST_PROBE_FALLTHROUGH);
}

/* jinst_coverage_insert's arguments, for jinst_ins_edit. */
typedef struct probes_edit {
	jinst_class *c;
	const jinst_coverage_method *pm;
	const jinst_coverage_entry *en;
	bool counts;
} probes_edit;

static int place_method(jinst_edit *ed, const void *ctx)
{
	const probes_edit *pe = ctx;
	/* Before 50 the editor derives no frames (jinst_ins_edit): none to declare in. */
	bool frames = jinst_class_major_version(pe->c) >= 50 && jinst_edit_writes_frames(ed);
	method_edit e = {pe->c, ed, pe->counts, frames, NO_LOCAL};
	const jinst_coverage_entry *en = pe->en;
	bool one = !en->identity && en->flat == JINST_NO_FLAT && jinst_coverage_one_probe(pe->pm);
	return one ? place_one(&e, &pe->pm->sites[0], en) : place(&e, pe->pm, en);
}

int jinst_coverage_insert(jinst_class *c, jinst_member *m, const jinst_coverage_method *pm,
                          const jinst_coverage_entry *en, bool counts, jinst_diag *diag)
{
	probes_edit pe = {c, pm, en, counts};
	/* Every probe, entry, inverted jump and trampoline keeps the stack
	 * balanced (see above), so the editor need not walk the method's
	 * depths to find max_stack. */
	return jinst_ins_edit_decoded(c, m, pm->insns, pm->insn_count, pm->code, JINST_EDIT_BALANCED, place_method, &pe,
	                              "placing probes", diag);
}

/* ---- the pass ---- */

/* Whether the class asks by identity: instrumented ahead of time, or asked to. */
static bool by_identity(void *state, const jinst_pass_class *pc)
{
	return ((uint32_t)(uintptr_t)state & JINST_PASS_COVERAGE_IDENTITY) || pc->ins->hooks_class;
}

/* The array hook of the class's entry code, and by identity its constants. */
static int entry_constants(void *state, jinst_pass_class *pc, jinst_coverage_entry *en)
{
	bool counts = counts_mode(state);
	if (!by_identity(state, pc))
		return jinst_pass_hook_ref(pc, counts ? JINST_HOOK_PROBE_COUNTS : JINST_HOOK_PROBES, &en->hook);
	int rc = jinst_pass_hook_ref(pc, counts ? JINST_HOOK_PROBE_COUNTS_FOR : JINST_HOOK_PROBES_FOR, &en->hook);
	if (!rc)
		rc = jinst_cp_add_long(pc->c, (int64_t)pc->identity, &en->identity);
	if (!rc)
		rc = jinst_cp_add_string(pc->c, pc->name, &en->name);
	return rc;
}

static int cov_begin(void *state, jinst_pass_class *pc, jinst_diag *diag)
{
	(void)state;
	current.pc = NULL;
	jinst_coverage_plan *plan;
	jinst_diag why;
	int rc = jinst_coverage_place(&plan, pc->c, &why);
	if (rc == JINST_ENOMEM)
		return jinst_pass_fail(diag, rc, "out of memory");
	/* No placement (jsr/ret, which the analyzer refuses too: the report
	 * says so), a loss to report; nothing to probe, nothing to say. */
	if (rc)
		return jinst_pass_decline(diag, rc, "%s", why.message);
	if (!plan->probe_count)
		return JINST_PASS_SKIP;
	jinst_coverage_entry en = {0, plan->probe_count, 0, 0, 0, 0, JINST_NO_FLAT, 0};
	/* The flat array takes booleans asked by class id, and an index past
	 * sipush's range is an Integer constant per probe: the pool must have
	 * room for them (and the Fieldref's five entries). */
	bool flat_ok = !counts_mode(state) && !by_identity(state, pc) &&
	               (uint32_t)jinst_cp_count(pc->c) + plan->probe_count + 8 <= UINT16_MAX;
	rc = jinst_probe_classes_assign(&pc->ins->probe_classes, pc->identity, pc->name, plan->probe_count, flat_ok,
	                                &en.class_id, &en.flat);
	if (rc == JINST_EINVAL)
		return jinst_pass_decline(diag, rc, "its probes were placed before in another number than %u",
		                          plan->probe_count);
	if (rc == JINST_ETOOLARGE)
		return jinst_pass_decline(diag, rc, "2^24 classes have probes already");
	if (rc)
		return jinst_pass_fail(diag, rc, "out of memory");
	/* A class given a range when the pool had room (its first load) and
	 * without room now (the VM's bytes of a retransformation can differ)
	 * is left alone: the agent reads its probes from that range. */
	if (en.flat != JINST_NO_FLAT && !flat_ok)
		return jinst_pass_decline(diag, JINST_ETOOLARGE,
		                          "its constant pool has no room now for the %u probes it had before",
		                          plan->probe_count);
	current = (cov_class){pc, plan, en, 0};
	return 0;
}

static int cov_method(void *state, jinst_pass_class *pc, jinst_pass_method *pm, jinst_diag *diag)
{
	if (current.pc != pc)
		return JINST_PASS_SKIP;
	jinst_coverage_plan *plan = current.plan;
	const jinst_coverage_method *cm = NULL;
	for (uint16_t k = 0; k < plan->method_count && !cm; k++) {
		uint16_t i = (uint16_t)((current.next + k) % plan->method_count);
		if (jinst_class_method(pc->c, plan->methods[i].method_index) == pm->m) {
			cm = &plan->methods[i];
			current.next = (uint16_t)(i + 1);
		}
	}
	/* No site, no probe to set: the method stays as it is. */
	if (!cm || !cm->site_count)
		return JINST_PASS_SKIP;
	/* The hook's Methodref (or the flat array's Fieldref) on first use: a
	 * class carries only what it calls. */
	jinst_coverage_entry *en = &current.entry;
	bool counts = counts_mode(state), one = !by_identity(state, pc) && jinst_coverage_one_probe(cm);
	int rc = en->flat != JINST_NO_FLAT
	                 ? (en->field ? 0 : jinst_cp_add_fieldref(pc->c, FLAT_OWNER, FLAT_NAME, "[Z", &en->field))
	         : one ? (en->hit ? 0 : jinst_pass_hook_ref(pc, counts ? JINST_HOOK_HIT_COUNT : JINST_HOOK_HIT, &en->hit))
	               : (en->hook ? 0 : entry_constants(state, pc, en));
	if (rc)
		return jinst_pass_fail(diag, rc, "cannot add the probe hook and its constants to the constant pool");
	return jinst_coverage_insert(pc->c, pm->m, cm, en, counts, diag);
}

static void cov_end(void *state, jinst_pass_class *pc, bool written)
{
	(void)state;
	(void)written;
	if (current.pc == pc)
		current.pc = NULL;
}

void jinst_coverage_pass(jinst_pass *out, uint32_t passes)
{
	*out = (jinst_pass){.version = JINST_PASS_VERSION, .name = "coverage", .state = (void *)(uintptr_t)passes,
	                    .begin = cov_begin, .method = cov_method, .end = cov_end};
}
