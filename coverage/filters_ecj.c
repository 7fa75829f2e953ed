/*
 * JaCoCo 0.8.6's filters of the code Eclipse's compiler writes:
 * TryWithResourcesEcjFilter (each resource closed on the normal path, and
 * in a catch-any handler that closes the resources in reverse order,
 * adding suppressed exceptions, and rethrows) and StringSwitchEcjFilter
 * (a switch on String.hashCode() whose cases compare with equals() and
 * jump to the source's cases: the comparisons are ignored and the switch's
 * branches become the source's cases and the default).
 *
 * The matcher follows JaCoCo's: named locals, labels and close() owners
 * are bound on first sight and must match after that ("r0", "r1.end",
 * "last.t"...), including across the failed attempts of the backward search
 * for the normal path's first close, as in JaCoCo. The cursor is the index
 * of the last instruction matched: the next step looks at cursor + 1 (a
 * label between the two is skipped, as AbstractMatcher.next does; a step
 * that must see a label checks that one stands before cursor + 1).
 */
#include <stdio.h>

#include "internal.h"

#define ECJ_NULL INT32_MIN
#define ECJ_SLOTS 48

typedef struct ecj_slot {
	char key[40];
	int64_t value;        /* a local, a label's offset, or an owner's pool index */
} ecj_slot;

typedef struct ecj {
	jinst_class *cls;
	const cov_flow *f;
	int32_t cur;
	ecj_slot slots[ECJ_SLOTS];
	int nslots;
} ecj;

/* Binds kind:name to value the first time, then requires the same value. */
static bool bind(ecj *m, char kind, const char *name, int64_t value)
{
	char key[40];
	if (snprintf(key, sizeof key, "%c:%s", kind, name) >= (int)sizeof key)
		return false; /* a name this long is no filter's: no match */
	for (int k = 0; k < m->nslots; k++)
		if (!strcmp(m->slots[k].key, key))
			return m->slots[k].value == value;
	if (m->nslots == ECJ_SLOTS)
		return false;
	snprintf(m->slots[m->nslots].key, sizeof m->slots[m->nslots].key, "%s", key);
	m->slots[m->nslots++].value = value;
	return true;
}

static const jinst_insn *next_is(ecj *m, uint8_t op)
{
	if (m->cur == ECJ_NULL)
		return NULL;
	m->cur++;
	if ((uint32_t)m->cur >= m->f->n || cov_asm_opcode(m->f->insns[m->cur].opcode) != op) {
		m->cur = ECJ_NULL;
		return NULL;
	}
	return &m->f->insns[m->cur];
}

static void next_var(ecj *m, uint8_t op, const char *name)
{
	const jinst_insn *in = next_is(m, op);
	if (in && !bind(m, 'v', name, cov_var_index(in)))
		m->cur = ECJ_NULL;
}

static void next_jump(ecj *m, uint8_t op, const char *name)
{
	const jinst_insn *in = next_is(m, op);
	if (in && !bind(m, 'l', name, in->operand))
		m->cur = ECJ_NULL;
}

/* The position after the cursor is the label bound to name. */
static void next_label(ecj *m, const char *name)
{
	if (m->cur == ECJ_NULL)
		return;
	char key[40];
	snprintf(key, sizeof key, "l:%s", name);
	uint32_t at = (uint32_t)m->cur + 1;
	bool ok = at < m->f->n && (m->f->flags[at] & COV_LABEL);
	int k = 0;
	while (k < m->nslots && strcmp(m->slots[k].key, key))
		k++;
	if (!ok || k == m->nslots || m->slots[k].value != m->f->insns[at].offset)
		m->cur = ECJ_NULL;
}

/* aload name; invoke[virtual|interface] close()V of the owner bound to name. */
static void next_close(ecj *m, const char *name)
{
	next_var(m, JINST_OP_ALOAD, name);
	if (m->cur == ECJ_NULL || (uint32_t)++m->cur >= m->f->n) {
		m->cur = ECJ_NULL;
		return;
	}
	const jinst_insn *in = &m->f->insns[m->cur];
	jinst_cp_entry ref, nat;
	uint16_t len;
	if ((in->opcode != JINST_OP_INVOKEINTERFACE && in->opcode != JINST_OP_INVOKEVIRTUAL) ||
	    jinst_cp_get(m->cls, (uint16_t)in->operand, &ref) || jinst_cp_get(m->cls, ref.u.ref.name_and_type_index, &nat)) {
		m->cur = ECJ_NULL;
		return;
	}
	const uint8_t *n = jinst_cp_utf8(m->cls, nat.u.nat.name_index, &len);
	bool close = n && len == 5 && !memcmp(n, "close", 5);
	const uint8_t *d = jinst_cp_utf8(m->cls, nat.u.nat.descriptor_index, &len);
	close = close && d && len == 3 && !memcmp(d, "()V", 3);
	/* owners compare by the Utf8 that names their Class entry */
	jinst_cp_entry owner;
	if (!close || jinst_cp_get(m->cls, ref.u.ref.class_index, &owner) || !bind(m, 'o', name, owner.u.index))
		m->cur = ECJ_NULL;
}

static bool next_ecj_close(ecj *m, const char *name)
{
	char end[40];
	snprintf(end, sizeof end, "%s.end", name);
	next_var(m, JINST_OP_ALOAD, name);
	next_jump(m, JINST_OP_IFNULL, end);
	next_close(m, name);
	return m->cur != ECJ_NULL;
}

static bool next_ecj_close_and_throw(ecj *m, const char *name)
{
	next_var(m, JINST_OP_ALOAD, name);
	next_jump(m, JINST_OP_IFNULL, name);
	next_close(m, name);
	next_label(m, name);
	next_var(m, JINST_OP_ALOAD, "primaryExc");
	next_is(m, JINST_OP_ATHROW);
	return m->cur != ECJ_NULL;
}

static bool next_ecj_suppress(ecj *m, const char *name)
{
	char t[40], s[40], e[40];
	snprintf(t, sizeof t, "%s.t", name);
	snprintf(s, sizeof s, "%s.suppressStart", name);
	snprintf(e, sizeof e, "%s.suppressEnd", name);
	next_var(m, JINST_OP_ASTORE, t);
	next_var(m, JINST_OP_ALOAD, "primaryExc");
	next_jump(m, JINST_OP_IFNONNULL, s);
	next_var(m, JINST_OP_ALOAD, t);
	next_var(m, JINST_OP_ASTORE, "primaryExc");
	next_jump(m, JINST_OP_GOTO, e);
	next_label(m, s);
	next_var(m, JINST_OP_ALOAD, "primaryExc");
	next_var(m, JINST_OP_ALOAD, t);
	next_jump(m, JINST_OP_IF_ACMPEQ, e);
	next_var(m, JINST_OP_ALOAD, "primaryExc");
	next_var(m, JINST_OP_ALOAD, t);
	const jinst_insn *in = next_is(m, JINST_OP_INVOKEVIRTUAL);
	if (in && !cov_invoke_is(m->cls, in, "java/lang/Throwable", "addSuppressed", "(Ljava/lang/Throwable;)V"))
		m->cur = ECJ_NULL;
	next_label(m, e);
	return m->cur != ECJ_NULL;
}

/* The normal path's close of r0: the nearest start before the handler h. */
static int32_t find_first_close(ecj *m, int32_t h)
{
	for (int32_t k = h; k >= 0; k--) {
		m->cur = k - 1;
		if (next_ecj_close(m, "r0"))
			return k;
	}
	return -1;
}

static void resource_name(char *buf, size_t size, int i)
{
	snprintf(buf, size, "r%d", i);
}

static bool match_ecj(ecj *m, int32_t h, cov_filtered *out)
{
	char r[16];
	m->cur = h - 1;
	next_var(m, JINST_OP_ASTORE, "primaryExc");
	next_ecj_close_and_throw(m, "r0");
	int i = 1;
	int32_t c = m->cur;
	for (;; i++, c = m->cur) {
		resource_name(r, sizeof r, i);
		char end[40];
		snprintf(end, sizeof end, "%s.end", r);
		if (!next_ecj_close(m, r))
			break;
		next_jump(m, JINST_OP_GOTO, end);
		next_ecj_suppress(m, r);
		next_ecj_close_and_throw(m, r);
	}
	m->cur = c;
	next_ecj_suppress(m, "last");
	next_var(m, JINST_OP_ALOAD, "primaryExc");
	if (!next_is(m, JINST_OP_ATHROW))
		return false;
	int32_t end = m->cur, k = find_first_close(m, h);
	if (k < 0 || !next_is(m, JINST_OP_GOTO))
		return false;
	for (int32_t x = k; x <= m->cur; x++)
		out->ignore[x] = true;
	for (int32_t x = h; x <= end; x++)
		out->ignore[x] = true;
	return true;
}

static void match_ecj_no_flow_out(ecj *m, int32_t h, cov_filtered *out)
{
	char r[16];
	m->cur = h - 1;
	next_var(m, JINST_OP_ASTORE, "primaryExc");
	int i = 0;
	int32_t c = m->cur;
	for (;; i++, c = m->cur) {
		resource_name(r, sizeof r, i);
		if (!next_ecj_close_and_throw(m, r) || !next_ecj_suppress(m, r))
			break;
	}
	m->cur = c;
	next_var(m, JINST_OP_ALOAD, "primaryExc");
	if (!next_is(m, JINST_OP_ATHROW))
		return;
	int32_t end = m->cur, k = find_first_close(m, h);
	if (k < 0)
		return;
	for (int j = 1; j < i; j++) {
		resource_name(r, sizeof r, j);
		if (!next_ecj_close(m, r))
			return;
	}
	for (int32_t x = k; x <= m->cur; x++)
		out->ignore[x] = true;
	for (int32_t x = h; x <= end; x++)
		out->ignore[x] = true;
}

void cov_filter_ecj(jinst_class *cls, const cov_flow *f, cov_filtered *out)
{
	for (uint16_t k = 0; k < f->code->exception_count; k++) {
		const jinst_exception_entry *e = &f->code->exceptions[k];
		int32_t h = e->handler_pc < f->code_length ? f->index_of[e->handler_pc] : -1;
		if (e->catch_type || h < 0)
			continue;
		ecj m = {.cls = cls, .f = f};
		if (match_ecj(&m, h, out))
			continue;
		ecj again = {.cls = cls, .f = f};
		match_ecj_no_flow_out(&again, h, out);
	}
}

/* ---- StringSwitchEcjFilter ------------------------------------------------------------ */

static bool add_target(cov_filtered *out, int32_t sw, int32_t t)
{
	if (t < 0)
		return false;
	for (uint32_t k = 0; k < out->nrepl[sw]; k++)
		if (out->repl[sw][k] == t)
			return true;
	out->repl[sw][out->nrepl[sw]++] = t;
	return true;
}

/* The equals() chain of one hash code: aload s; ldc; equals; ifne CASE,
 * until a goto (the next hash code) or the default's label. The index of
 * the last instruction matched, or -1. */
static int32_t ecj_case(jinst_class *cls, const cov_flow *f, int32_t cur, int32_t var, uint32_t dflt, int32_t sw,
                        cov_filtered *out)
{
	for (;;) {
		if ((uint32_t)cur + 4 >= f->n)
			return -1;
		const jinst_insn *in = &f->insns[cur + 1];
		if (cov_asm_opcode(in[0].opcode) != JINST_OP_ALOAD || cov_var_index(&in[0]) != var ||
		    cov_asm_opcode(in[1].opcode) != JINST_OP_LDC ||
		    !cov_invoke_is(cls, &in[2], "java/lang/String", "equals", "(Ljava/lang/Object;)Z") ||
		    in[3].opcode != JINST_OP_IFNE)
			return -1;
		cur += 4;
		uint32_t target = (uint32_t)in[3].operand;
		if (!add_target(out, sw, target < f->code_length ? f->index_of[target] : -1) || (uint32_t)cur + 1 >= f->n)
			return -1;
		const jinst_insn *next = &f->insns[cur + 1];
		bool labelled = f->flags[cur + 1] & COV_LABEL;
		if (!labelled && cov_is_goto(next->opcode))
			return cur + 1;
		if (labelled && next->offset == dflt)
			return cur;
	}
}

static void ecj_string_switch(jinst_class *cls, const cov_flow *f, int32_t i, cov_filtered *out)
{
	int32_t sw = i + 2;
	if ((uint32_t)sw >= f->n || cov_asm_opcode(f->insns[i].opcode) != JINST_OP_ASTORE ||
	    !cov_invoke_is(cls, &f->insns[i + 1], "java/lang/String", "hashCode", "()I") ||
	    !cov_is_switch(f->insns[sw].opcode) || f->insns[sw].sw->count == 0 || out->repl[sw])
		return;
	uint32_t dflt = (uint32_t)f->insns[sw].sw->default_target;
	uint32_t hashes = f->insns[sw].sw->count;
	/* the default and one case per equals(): at most the code's instructions */
	out->repl[sw] = jinst_arena_alloc(jinst_class_arena(cls), ((size_t)f->n + 1) * sizeof(int32_t));
	if (!out->repl[sw])
		return;
	out->nrepl[sw] = 0;
	int32_t cur = sw;
	if (add_target(out, sw, dflt < f->code_length ? f->index_of[dflt] : -1))
		for (uint32_t h = 0; h < hashes && cur >= 0; h++)
			cur = ecj_case(cls, f, cur, cov_var_index(&f->insns[i]), dflt, sw, out);
	if (cur < 0) {
		out->repl[sw] = NULL;
		out->nrepl[sw] = 0;
		return;
	}
	for (int32_t x = sw + 1; x <= cur; x++)
		out->ignore[x] = true;
}

void cov_filter_ecj_switch(jinst_class *cls, const cov_flow *f, cov_filtered *out)
{
	for (uint32_t i = 0; i + 2 < f->n; i++)
		ecj_string_switch(cls, f, (int32_t)i, out);
}
