/*
 * The monitor pass (include/jinst/monitor.h): the lock hook before every
 * monitorenter and at the entry of every synchronized method.
 *
 * Why only a hook before the enter, and no exit hooks. What the hook must
 * give is the number of enters of each site, exactly: the call just
 * before the monitorenter is reached by every path that reaches the
 * monitorenter (it goes inside the instruction's labels,
 * JINST_BEFORE_INSIDE), and the object is the one the instruction locks
 * (`dup` of the top of the stack). Contention and its time come from the
 * VM (JVMTI MonitorContendedEnter/Entered, which fire only on the slow
 * path), so nothing has to run when the lock is released. Leaving
 * monitorenter and monitorexit where they are, with no handler and no
 * branch added, keeps HotSpot's monitor matching of every method as it
 * was: a method whose monitors the JIT cannot pair is never compiled, and
 * an exit hook in a handler of its own would have been one more path to
 * pair. The synchronized method's monitor is taken by the VM before the
 * first instruction, so its hook runs at entry, outside the first
 * instruction's labels (a loop back to offset 0 is no new enter).
 *
 * Sites are lines: the monitorenters of one line are one site (javac
 * gives each `synchronized` block one monitorenter), which is also what
 * the agent can name from a JVMTI frame (the location's line), with no
 * table of offsets after instrumentation. Lines are those of the code the
 * pass sees (passes before it keep the LineNumberTable right).
 *
 * Two paths, as the trace pass: the patcher streams the insertions over
 * the code; what it declines the editor does.
 */
#include <stdlib.h>
#include <string.h>

#include "jinst/patch.h"
#include "monitor_internal.h"

/* The hook's call: a push of the site and the invokestatic (5 bytes at
 * most before it: the object's push). */
typedef struct lock_code {
	jinst_insn seq[3];
	uint32_t n;
} lock_code;

/* The line of the instruction at offset: the entry of the
 * LineNumberTable(s) with the greatest start_pc not past it (JVMS 4.7.12;
 * what JVMTI GetLineNumberTable gives the agent for a location), 0 when
 * there is none. */
static uint32_t line_at(jinst_class *c, const jinst_code *code, uint32_t offset)
{
	uint32_t best = 0, best_pc = 0;
	bool found = false;
	for (uint32_t i = 0; i < code->attrs.count; i++) {
		jinst_attr *a = &code->attrs.items[i];
		jinst_line_numbers *ln;
		if (a->kind != JINST_ATTR_LINE_NUMBER_TABLE || jinst_attr_decode(c, a, (void **)&ln, NULL))
			continue;
		for (uint16_t j = 0; j < ln->count; j++)
			if (ln->items[j].start_pc <= offset && (!found || ln->items[j].start_pc >= best_pc)) {
				found = true;
				best_pc = ln->items[j].start_pc;
				best = ln->items[j].line_number;
			}
	}
	return best;
}

/* One method's insertions: at each of its monitorenters (offsets at[0..n))
 * the object's dup and the call with its site, and for a synchronized
 * method the object and the call at entry (entry.n 0: none). */
typedef struct plan {
	uint32_t *at;
	lock_code *block;
	uint32_t n;
	jinst_insn entry_obj;
	lock_code entry;
} plan;

static int patch(jinst_class *c, jinst_member *m, const plan *p, jinst_diag *diag)
{
	jinst_patch *pt;
	uint8_t b[16];
	int rc = jinst_patch_open(&pt, c, m, diag);
	if (rc)
		return rc;
	if (p->entry.n) {
		uint32_t k = jinst_ins_encode(&p->entry_obj, 1, b);
		k += jinst_ins_encode(p->entry.seq, p->entry.n, b + k);
		if ((rc = jinst_patch_insert(pt, 0, JINST_BEFORE_OUTSIDE, b, k, 2)))
			return rc;
	}
	for (uint32_t i = 0; i < p->n; i++) {
		b[0] = JINST_OP_DUP;
		uint32_t k = 1 + jinst_ins_encode(p->block[i].seq, p->block[i].n, b + 1);
		if ((rc = jinst_patch_insert(pt, p->at[i], JINST_BEFORE_INSIDE, b, k, 2)))
			return rc;
	}
	return jinst_patch_commit(pt, diag);
}

static int edit(jinst_edit *ed, const void *ctx)
{
	const plan *p = ctx;
	jinst_insn seq[4];
	int rc;
	if (p->entry.n) {
		jinst_node *first = jinst_edit_first_insn(ed);
		if (!first)
			return JINST_EMALFORMED;
		seq[0] = p->entry_obj;
		memcpy(&seq[1], p->entry.seq, p->entry.n * sizeof(*seq));
		if ((rc = jinst_edit_insert(ed, first, JINST_BEFORE_OUTSIDE, seq, p->entry.n + 1, NULL)))
			return rc;
	}
	for (uint32_t i = 0; i < p->n; i++) {
		jinst_node *at = jinst_edit_at(ed, p->at[i]);
		if (!at)
			return JINST_EMALFORMED;
		seq[0] = jinst_ins_op(JINST_OP_DUP, 0);
		memcpy(&seq[1], p->block[i].seq, p->block[i].n * sizeof(*seq));
		if ((rc = jinst_edit_insert(ed, at, JINST_BEFORE_INSIDE, seq, p->block[i].n + 1, NULL)))
			return rc;
	}
	return 0;
}

static int apply(jinst_class *c, jinst_member *m, const plan *p, jinst_diag *diag)
{
	int rc = patch(c, m, p, diag);
	if (rc == 0 || rc == JINST_ENOMEM)
		return rc;
	return jinst_ins_edit(c, m, edit, p, "editing", diag);
}

/* The call of the hook with site id. */
static int lock_code_make(jinst_pass_class *pc, jinst_monitor_sites *sites, const jinst_monitor_site_info *k,
                          lock_code *out)
{
	uint32_t id;
	uint16_t ref = 0;
	int rc = jinst_monitor_sites_assign(sites, k, &id);
	if (!rc)
		rc = jinst_ins_push_int(jinst_pass_class_model(pc), id, &out->seq[0]);
	if (!rc)
		rc = jinst_pass_hook_ref(pc, JINST_HOOK_MONITOR_ENTER, &ref);
	out->seq[1] = jinst_ins_op(JINST_OP_INVOKESTATIC, ref);
	out->n = 2;
	return rc;
}

/* The object a synchronized method locks, pushed at its entry: `this`, or
 * its class (ldc of a Class: class files 49 and later). false: no hook. */
static bool entry_object(jinst_class *c, jinst_member *m, jinst_insn *out)
{
	if (!(jinst_member_access_flags(m) & JINST_ACC_STATIC)) {
		*out = jinst_ins_op(JINST_OP_ALOAD_0, 0);
		return true;
	}
	if (jinst_class_major_version(c) < 49)
		return false;
	*out = jinst_ins_op(JINST_OP_LDC_W, jinst_class_this_class(c));
	return true;
}

static int monitor_method(void *state, jinst_pass_class *pc, jinst_pass_method *pm, jinst_diag *diag)
{
	jinst_monitor_sites *sites = state;
	jinst_class *c = jinst_pass_class_model(pc);
	jinst_member *m = jinst_pass_method_member(pm);
	const jinst_code *code = jinst_pass_method_code(pm);
	jinst_insn *in;
	uint32_t n;
	int rc;
	if (!code)
		return jinst_pass_fail(diag, JINST_EMALFORMED, "the Code attribute does not decode");
	if ((rc = jinst_code_decode(c, code, &in, &n, diag)))
		return rc;
	jinst_arena *A = jinst_class_arena(c);
	plan p;
	memset(&p, 0, sizeof(p));
	uint32_t blocks = 0;
	for (uint32_t i = 0; i < n; i++)
		blocks += in[i].opcode == JINST_OP_MONITORENTER;
	jinst_monitor_site_info k = {jinst_pass_class_name(pc), jinst_pass_method_name(pm),
	                             jinst_pass_method_descriptor(pm), jinst_pass_class_source(pc), 0,
	                             JINST_MONITOR_SITE_METHOD};
	bool sync = (jinst_member_access_flags(m) & JINST_ACC_SYNCHRONIZED) && entry_object(c, m, &p.entry_obj);
	if (!sync && !blocks)
		return JINST_PASS_SKIP;
	if (blocks && (!(p.at = jinst_arena_alloc(A, blocks * sizeof(*p.at))) ||
	               !(p.block = jinst_arena_alloc(A, blocks * sizeof(*p.block)))))
		return JINST_ENOMEM;
	if (sync) {
		k.line = jinst_pass_method_first_line(pm);
		if ((rc = lock_code_make(pc, sites, &k, &p.entry)))
			return jinst_pass_fail(diag, rc, "cannot add the lock hook to the constant pool");
	}
	k.kind = JINST_MONITOR_SITE_BLOCK;
	for (uint32_t i = 0; i < n; i++) {
		if (in[i].opcode != JINST_OP_MONITORENTER)
			continue;
		k.line = line_at(c, code, in[i].offset);
		p.at[p.n] = in[i].offset;
		if ((rc = lock_code_make(pc, sites, &k, &p.block[p.n++])))
			return jinst_pass_fail(diag, rc, "cannot add the lock hook to the constant pool");
	}
	return apply(c, m, &p, diag);
}

static void monitor_free(void *state)
{
	jinst_monitor_sites_free(state);
}

int jinst_monitor_pass(jinst_pass *out, jinst_monitor_sites **sites)
{
	jinst_monitor_sites *t;
	int rc = jinst_monitor_sites_new(&t);
	if (rc)
		return rc;
	*out = (jinst_pass){.version = JINST_PASS_VERSION, .name = "monitor", .state = t, .method = monitor_method,
	                    .free = monitor_free};
	*sites = t;
	return 0;
}
