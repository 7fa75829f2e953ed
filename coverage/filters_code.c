/*
 * The filters that match javac's code patterns inside a method, as JaCoCo
 * 0.8.6 does (SynchronizedFilter, StringSwitchJavacFilter,
 * TryWithResourcesJavac11Filter, FinallyFilter).
 *
 * JaCoCo matches on ASM's tree, where labels, line numbers and frames are
 * nodes between the instructions. Its matchers mostly skip them (here:
 * instruction i + 1 is the next one), but a few steps walk raw nodes:
 * those count the nodes ASM puts before an instruction (raw_back).
 *
 * Finally: javac copies a finally block at every exit of its try block and
 * into the catch-any handler (astore t; BLOCK; aload t; athrow). Each copy
 * at an exit whose opcodes equal the handler's BLOCK is merged into the
 * handler's instructions (one covered copy covers the handler's), the
 * handler's astore, aload and athrow are ignored, and a goto that ends a
 * copy is ignored.
 */
#include "internal.h"

uint8_t cov_asm_opcode(uint8_t op)
{
	if (op >= JINST_OP_ILOAD_0 && op <= JINST_OP_ALOAD_3)
		return (uint8_t)(JINST_OP_ILOAD + (op - JINST_OP_ILOAD_0) / 4);
	if (op >= JINST_OP_ISTORE_0 && op <= JINST_OP_ASTORE_3)
		return (uint8_t)(JINST_OP_ISTORE + (op - JINST_OP_ISTORE_0) / 4);
	if (op == JINST_OP_LDC_W || op == JINST_OP_LDC2_W)
		return JINST_OP_LDC;
	if (op == JINST_OP_GOTO_W)
		return JINST_OP_GOTO;
	if (op == JINST_OP_JSR_W)
		return JINST_OP_JSR;
	return op;
}

int32_t cov_var_index(const jinst_insn *in)
{
	if (in->opcode >= JINST_OP_ILOAD_0 && in->opcode <= JINST_OP_ALOAD_3)
		return (in->opcode - JINST_OP_ILOAD_0) % 4;
	if (in->opcode >= JINST_OP_ISTORE_0 && in->opcode <= JINST_OP_ASTORE_3)
		return (in->opcode - JINST_OP_ISTORE_0) % 4;
	return in->operand;
}

static void ignore_range(cov_filtered *out, int32_t from, int32_t to)
{
	for (int32_t i = from; i <= to; i++)
		out->ignore[i] = true;
}

static int32_t at(const cov_flow *f, uint32_t offset)
{
	return offset < f->code_length ? f->index_of[offset] : -1;
}

static uint8_t op_at(const cov_flow *f, int32_t i)
{
	return (i >= 0 && (uint32_t)i < f->n) ? cov_asm_opcode(f->insns[i].opcode) : 0xff;
}

/* ---- SynchronizedFilter ---------------------------------------------------------- */

static void synchronized_handlers(const cov_flow *f, cov_filtered *out)
{
	for (uint16_t k = 0; k < f->code->exception_count; k++) {
		const jinst_exception_entry *e = &f->code->exceptions[k];
		int32_t h = at(f, e->handler_pc);
		if (e->catch_type || e->start_pc == e->handler_pc || h < 0)
			continue;
		if (op_at(f, h) == JINST_OP_ALOAD && op_at(f, h + 1) == JINST_OP_MONITOREXIT &&
		    op_at(f, h + 2) == JINST_OP_ATHROW) {
			ignore_range(out, h, h + 2); /* ecj */
		} else if (op_at(f, h) == JINST_OP_ASTORE && op_at(f, h + 1) == JINST_OP_ALOAD &&
		           op_at(f, h + 2) == JINST_OP_MONITOREXIT && op_at(f, h + 3) == JINST_OP_ALOAD &&
		           op_at(f, h + 4) == JINST_OP_ATHROW &&
		           cov_var_index(&f->insns[h]) == cov_var_index(&f->insns[h + 3])) {
			ignore_range(out, h, h + 4); /* javac */
		}
	}
}

/* ---- StringSwitchJavacFilter ------------------------------------------------------- */

/* The instruction `steps` raw nodes before instruction i, or -1 when that
 * node is a label, line number or frame. */
static int32_t raw_back(const cov_flow *f, int32_t i, uint32_t steps)
{
	while (steps > 0 && i >= 0) {
		uint32_t extra = (f->flags[i] & COV_LABEL) ? 1u + f->nlines[i] + !!(f->flags[i] & COV_FRAME) : 0u;
		if (extra >= steps)
			return -1;
		steps -= extra + 1;
		i--;
	}
	return i;
}

bool cov_invoke_is(jinst_class *cls, const jinst_insn *in, const char *owner, const char *name, const char *desc)
{
	jinst_cp_entry ref, nat;
	uint16_t len;
	if (in->opcode != JINST_OP_INVOKEVIRTUAL || jinst_cp_get(cls, (uint16_t)in->operand, &ref) ||
	    jinst_cp_get(cls, ref.u.ref.name_and_type_index, &nat))
		return false;
	const uint8_t *o = jinst_cp_name(cls, ref.u.ref.class_index, &len);
	if (!o || len != strlen(owner) || memcmp(o, owner, len))
		return false;
	const uint8_t *n = jinst_cp_utf8(cls, nat.u.nat.name_index, &len);
	if (!n || len != strlen(name) || memcmp(n, name, len))
		return false;
	const uint8_t *d = jinst_cp_utf8(cls, nat.u.nat.descriptor_index, &len);
	return d && len == strlen(desc) && !memcmp(d, desc, len);
}

static bool var_is(const cov_flow *f, int32_t i, uint8_t op, int32_t var)
{
	return op_at(f, i) == op && cov_var_index(&f->insns[i]) == var;
}

/* One case of the hash switch: aload s; ldc; equals; ifeq; const; istore c;
 * then the second switch's label, or a goto to it. Returns the index after
 * the case, -1 when it is no such case, or -2 after the last one. */
static int32_t string_case(jinst_class *cls, const cov_flow *f, int32_t i, int32_t s, int32_t c, uint32_t dflt)
{
	if (!var_is(f, i, JINST_OP_ALOAD, s) || op_at(f, i + 1) != JINST_OP_LDC || op_at(f, i + 2) != JINST_OP_INVOKEVIRTUAL ||
	    !cov_invoke_is(cls, &f->insns[i + 2], "java/lang/String", "equals", "(Ljava/lang/Object;)Z") ||
	    op_at(f, i + 3) != JINST_OP_IFEQ || op_at(f, i + 4) == 0xff || !var_is(f, i + 5, JINST_OP_ISTORE, c))
		return -1;
	if ((uint32_t)(i + 6) < f->n && f->insns[i + 6].offset == dflt)
		return -2;
	if (op_at(f, i + 6) != JINST_OP_GOTO || (uint32_t)f->insns[i + 6].operand != dflt)
		return -1;
	return i + 7;
}

static void string_switch(jinst_class *cls, const cov_flow *f, int32_t sw, cov_filtered *out)
{
	uint32_t dflt = (uint32_t)f->insns[sw].sw->default_target;
	int32_t i = raw_back(f, sw, 4);
	if (i < 0 || f->insns[i].opcode != JINST_OP_ICONST_M1 || op_at(f, i + 1) != JINST_OP_ISTORE ||
	    op_at(f, i + 2) != JINST_OP_ALOAD || op_at(f, i + 3) != JINST_OP_INVOKEVIRTUAL ||
	    !cov_invoke_is(cls, &f->insns[i + 3], "java/lang/String", "hashCode", "()I"))
		return;
	int32_t c = cov_var_index(&f->insns[i + 1]), s = cov_var_index(&f->insns[i + 2]);
	int32_t k = i + 5;
	while (k >= 0)
		k = string_case(cls, f, k, s, c, dflt);
	int32_t second = at(f, dflt);
	if (k != -2 || second < 0 || !var_is(f, second, JINST_OP_ILOAD, c) ||
	    (op_at(f, second + 1) != JINST_OP_TABLESWITCH && op_at(f, second + 1) != JINST_OP_LOOKUPSWITCH))
		return;
	ignore_range(out, sw, second - 1);
}

/* ---- TryWithResourcesJavac11Filter ------------------------------------------------ */

typedef struct twr {
	jinst_class *cls;
	const cov_flow *f;
	int32_t r;             /* the resource's local, once bound */
	uint16_t owner_len;
	const uint8_t *owner;  /* owner of the first close() */
} twr;

static bool close_call(twr *m, int32_t i)
{
	jinst_cp_entry ref, nat;
	uint16_t len, olen;
	uint8_t op = op_at(m->f, i);
	if ((op != JINST_OP_INVOKEINTERFACE && op != JINST_OP_INVOKEVIRTUAL) ||
	    jinst_cp_get(m->cls, (uint16_t)m->f->insns[i].operand, &ref) ||
	    jinst_cp_get(m->cls, ref.u.ref.name_and_type_index, &nat))
		return false;
	const uint8_t *n = jinst_cp_utf8(m->cls, nat.u.nat.name_index, &len);
	if (!n || len != 5 || memcmp(n, "close", 5))
		return false;
	const uint8_t *d = jinst_cp_utf8(m->cls, nat.u.nat.descriptor_index, &len);
	if (!d || len != 3 || memcmp(d, "()V", 3))
		return false;
	const uint8_t *o = jinst_cp_name(m->cls, ref.u.ref.class_index, &olen);
	if (!m->owner) {
		m->owner = o;
		m->owner_len = olen;
		return true;
	}
	return o && olen == m->owner_len && !memcmp(o, m->owner, olen);
}

static bool bind(const cov_flow *f, int32_t i, uint8_t op, int32_t *var)
{
	if (op_at(f, i) != op)
		return false;
	if (*var < 0)
		*var = cov_var_index(&f->insns[i]);
	return *var == cov_var_index(&f->insns[i]);
}

/* [aload r; ifnull] aload r; invoke close()V from i: the index of the
 * invoke, or -1. */
static int32_t javac_close(twr *m, int32_t i, bool null_check)
{
	if (null_check) {
		if (!bind(m->f, i, JINST_OP_ALOAD, &m->r) || op_at(m->f, i + 1) != JINST_OP_IFNULL)
			return -1;
		i += 2;
	}
	if (!bind(m->f, i, JINST_OP_ALOAD, &m->r) || !close_call(m, i + 1))
		return -1;
	return i + 1;
}

static void twr_match(jinst_class *cls, const cov_flow *f, int32_t h, bool null_check, cov_filtered *out)
{
	twr m = {cls, f, -1, 0, NULL};
	int32_t primary = -1, t = -1;
	if (!bind(f, h, JINST_OP_ASTORE, &primary))
		return;
	int32_t i = javac_close(&m, h + 1, null_check);
	if (i < 0 || op_at(f, i + 1) != JINST_OP_GOTO || !bind(f, i + 2, JINST_OP_ASTORE, &t) ||
	    !bind(f, i + 3, JINST_OP_ALOAD, &primary) || !bind(f, i + 4, JINST_OP_ALOAD, &t) ||
	    !cov_invoke_is(cls, &f->insns[i + 5], "java/lang/Throwable", "addSuppressed", "(Ljava/lang/Throwable;)V") ||
	    !bind(f, i + 6, JINST_OP_ALOAD, &primary) || op_at(f, i + 7) != JINST_OP_ATHROW)
		return;
	int32_t end = i + 7, close = -1, k = h;
	/* The close on the normal path: the nearest one before the handler. */
	while (--k >= 0 && (close = javac_close(&m, k, null_check)) < 0)
		;
	if (k < 0)
		return;
	ignore_range(out, k, op_at(f, close + 1) == JINST_OP_GOTO ? close + 1 : close);
	ignore_range(out, h, end);
}

static void try_with_resources(jinst_class *cls, const cov_flow *f, cov_filtered *out)
{
	for (uint16_t k = 0; k < f->code->exception_count; k++) {
		const jinst_exception_entry *e = &f->code->exceptions[k];
		uint16_t len;
		const uint8_t *type = e->catch_type ? jinst_cp_name(cls, e->catch_type, &len) : NULL;
		int32_t h = at(f, e->handler_pc);
		if (!type || len != 19 || memcmp(type, "java/lang/Throwable", 19) || h < 0)
			continue;
		twr_match(cls, f, h, true, out);
		twr_match(cls, f, h, false, out);
	}
}

/* ---- FinallyFilter ------------------------------------------------------------------ */

/* Instructions of the handler's block: astore t ... aload t; athrow. */
static uint32_t finally_size(const cov_flow *f, int32_t e)
{
	if (op_at(f, e) != JINST_OP_ASTORE)
		return 0;
	int32_t var = cov_var_index(&f->insns[e]);
	uint32_t size = 0;
	int32_t i = e + 1;
	for (; !var_is(f, i, JINST_OP_ALOAD, var); i++, size++)
		if ((uint32_t)i >= f->n)
			return 0;
	return op_at(f, i + 1) == JINST_OP_ATHROW ? size : 0;
}

static int32_t find_rep(const cov_filtered *out, int32_t i)
{
	while (out->rep[i] >= 0)
		i = out->rep[i];
	return i;
}

static void merge_into(cov_filtered *out, int32_t a, int32_t b)
{
	a = find_rep(out, a);
	b = find_rep(out, b);
	if (a != b)
		out->rep[b] = a;
}

static void finally_merge(const cov_flow *f, cov_filtered *out, uint32_t size, int32_t e, int32_t n)
{
	if (n < 0)
		return;
	for (uint32_t k = 0; k < size; k++)
		if (op_at(f, n + (int32_t)k) == 0xff || op_at(f, e + 1 + (int32_t)k) != op_at(f, n + (int32_t)k))
			return;
	out->ignore[e] = true;
	for (uint32_t k = 0; k < size; k++)
		merge_into(out, e + 1 + (int32_t)k, n + (int32_t)k);
	ignore_range(out, e + 1 + (int32_t)size, e + 2 + (int32_t)size);
	if (op_at(f, n + (int32_t)size) == JINST_OP_GOTO)
		out->ignore[n + (int32_t)size] = true;
}

static bool in_range(const jinst_exception_entry *t, uint32_t offset)
{
	return offset >= t->start_pc && offset < t->end_pc;
}

/* Whether instruction i lies in a range of some entry with handler h. */
static bool inside(const cov_flow *f, uint16_t handler_pc, int32_t i)
{
	for (uint16_t k = 0; k < f->code->exception_count; k++)
		if (f->code->exceptions[k].handler_pc == handler_pc && in_range(&f->code->exceptions[k], f->insns[i].offset))
			return true;
	return false;
}

/* The exits of one range of the catch-any: its jumps out, and its end when
 * the last instruction falls through. */
static void finally_exits(const cov_flow *f, cov_filtered *out, const jinst_exception_entry *t, uint32_t size, int32_t e)
{
	bool continues = false;
	int32_t i = at(f, t->start_pc);
	for (; i >= 0 && (uint32_t)i < f->n && f->insns[i].offset < t->end_pc; i++) {
		uint8_t op = f->insns[i].opcode;
		if (cov_is_jump(op)) {
			int32_t target = at(f, (uint32_t)f->insns[i].operand);
			if (target >= 0 && !inside(f, t->handler_pc, target))
				finally_merge(f, out, size, e, target);
			continues = !cov_is_goto(op);
		} else {
			continues = !cov_is_return(op);
		}
	}
	int32_t next = at(f, t->end_pc);
	if (continues && next >= 0 && !inside(f, t->handler_pc, next))
		finally_merge(f, out, size, e, next);
}

static void finally_block(const cov_flow *f, cov_filtered *out, uint16_t any)
{
	const jinst_exception_entry *c = &f->code->exceptions[any];
	int32_t e = at(f, c->handler_pc);
	uint32_t size = e >= 0 ? finally_size(f, e) : 0;
	if (!size)
		return;
	for (uint16_t k = 0; k < f->code->exception_count; k++) {
		const jinst_exception_entry *t = &f->code->exceptions[k];
		if (t->handler_pc == c->handler_pc)
			finally_exits(f, out, t, size, e);
		if (k != any && t->start_pc == c->start_pc && t->end_pc == c->end_pc) {
			/* javac's empty catch: the copy after its astore */
			int32_t h = at(f, t->handler_pc);
			if (h >= 0 && (uint32_t)h + 1 < f->n && !inside(f, c->handler_pc, h + 1))
				finally_merge(f, out, size, e, h + 1);
		}
	}
}

void cov_filter_code(jinst_class *cls, const cov_flow *f, cov_filtered *out)
{
	synchronized_handlers(f, out);
	for (uint32_t i = 0; i < f->n; i++)
		if (cov_is_switch(f->insns[i].opcode))
			string_switch(cls, f, (int32_t)i, out);
	try_with_resources(cls, f, out);
	cov_filter_ecj(cls, f, out);
	cov_filter_ecj_switch(cls, f, out);
	for (uint16_t k = 0; k < f->code->exception_count; k++)
		if (f->code->exceptions[k].catch_type == 0)
			finally_block(f, out, k);
}
