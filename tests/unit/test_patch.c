/*
 * Unit tests of the code patcher (include/jinst/patch.h) on methods built
 * here byte by byte, each holding one kind of thing that moves: forward
 * and backward branches, goto_w and jsr_w, tableswitch and lookupswitch at
 * every padding before and after, exception ranges, line and local
 * variable tables, frames of every compressed kind, uninitialized(offset)
 * types; then every path that declines or refuses.
 *
 * The relocation check does not recompute the layout: the insertions are
 * `nop`s and the built code holds none, so in the output every non-nop
 * instruction is an original one, in order, and the run of nops before it
 * is what went in outside and inside it. From that alone the check knows
 * where each original position went (after the outside nops, before the
 * inside ones) and where each instruction went, and asserts that every
 * branch and switch target, table entry, frame offset and uninitialized
 * type names the right one; non-branch operands must be unchanged.
 */
#include <string.h>

#include "jinst/edit.h"
#include "jinst/patch.h"
#include "../testlib.h"

/* ---- building a class ---- */

typedef struct buf {
	uint8_t b[70000 * 2];
	size_t n;
} buf;

static void u1(buf *o, uint32_t v)
{
	o->b[o->n++] = (uint8_t)v;
}

static void u2(buf *o, uint32_t v)
{
	u1(o, v >> 8);
	u1(o, v);
}

static void u4(buf *o, uint32_t v)
{
	u2(o, v >> 16);
	u2(o, v);
}

static void utf8(buf *o, const char *s)
{
	u1(o, 1);
	u2(o, (uint32_t)strlen(s));
	memcpy(o->b + o->n, s, strlen(s));
	o->n += strlen(s);
}

enum { CP_T_CLASS = 2, CP_CODE = 7, CP_SMT = 8, CP_LNT = 9, CP_LVT = 10, CP_X = 11, CP_I = 12, CP_RVTA = 13,
       CP_COUNT = 14 };

typedef struct method_spec {
	uint16_t major;
	const uint8_t *code;
	uint32_t code_length;
	const uint16_t *exc; /* start, end, handler, type per entry */
	uint32_t nexc;
	const uint8_t *smt; /* StackMapTable info (with its count), NULL: none */
	uint32_t smt_len;
	const uint16_t *lnt; /* start_pc, line */
	uint32_t nlnt;
	const uint16_t *lvt; /* start_pc, length, index */
	uint32_t nlvt;
	bool type_annotations; /* an (empty) RuntimeVisibleTypeAnnotations in the code */
	uint16_t minor;        /* with major 45 and minor < 3: the old Code layout */
} method_spec;

/* A class T with one method `static m(I)V` built from spec. */
static void build(buf *o, const method_spec *s)
{
	o->n = 0;
	u4(o, 0xCAFEBABE);
	u2(o, s->minor);
	u2(o, s->major);
	u2(o, CP_COUNT);
	utf8(o, "T");                  /* 1 */
	u1(o, 7), u2(o, 1);            /* 2 Class T */
	utf8(o, "java/lang/Object");   /* 3 */
	u1(o, 7), u2(o, 3);            /* 4 Class Object */
	utf8(o, "m");                  /* 5 */
	utf8(o, "(I)V");               /* 6 */
	utf8(o, "Code");               /* 7 */
	utf8(o, "StackMapTable");      /* 8 */
	utf8(o, "LineNumberTable");    /* 9 */
	utf8(o, "LocalVariableTable"); /* 10 */
	utf8(o, "x");                  /* 11 */
	utf8(o, "I");                  /* 12 */
	utf8(o, "RuntimeVisibleTypeAnnotations"); /* 13 */
	u2(o, 0x21), u2(o, CP_T_CLASS), u2(o, 4), u2(o, 0), u2(o, 0);
	u2(o, 1);                      /* methods_count */
	u2(o, 0x0008), u2(o, 5), u2(o, 6), u2(o, 1);
	u2(o, CP_CODE);
	size_t len_at = o->n;
	u4(o, 0);
	if (s->major == 45 && s->minor < 3)
		u1(o, 8), u1(o, 4), u2(o, s->code_length);
	else
		u2(o, 8), u2(o, 4), u4(o, s->code_length);
	memcpy(o->b + o->n, s->code, s->code_length);
	o->n += s->code_length;
	u2(o, s->nexc);
	for (uint32_t i = 0; i < s->nexc * 4; i++)
		u2(o, s->exc[i]);
	u2(o, (s->smt ? 1u : 0u) + (s->nlnt ? 1u : 0u) + (s->nlvt ? 1u : 0u) + (s->type_annotations ? 1u : 0u));
	if (s->smt) {
		u2(o, CP_SMT), u4(o, s->smt_len);
		memcpy(o->b + o->n, s->smt, s->smt_len);
		o->n += s->smt_len;
	}
	if (s->nlnt) {
		u2(o, CP_LNT), u4(o, 2 + 4 * s->nlnt), u2(o, s->nlnt);
		for (uint32_t i = 0; i < s->nlnt * 2; i++)
			u2(o, s->lnt[i]);
	}
	if (s->nlvt) {
		u2(o, CP_LVT), u4(o, 2 + 10 * s->nlvt), u2(o, s->nlvt);
		for (uint32_t i = 0; i < s->nlvt; i++)
			u2(o, s->lvt[3 * i]), u2(o, s->lvt[3 * i + 1]), u2(o, CP_X), u2(o, CP_I), u2(o, s->lvt[3 * i + 2]);
	}
	if (s->type_annotations)
		u2(o, CP_RVTA), u4(o, 2), u2(o, 0);
	uint32_t attr_len = (uint32_t)(o->n - len_at - 4);
	o->b[len_at] = (uint8_t)(attr_len >> 24), o->b[len_at + 1] = (uint8_t)(attr_len >> 16);
	o->b[len_at + 2] = (uint8_t)(attr_len >> 8), o->b[len_at + 3] = (uint8_t)attr_len;
	u2(o, 0); /* class attributes */
}

/* ---- the relocation check ---- */

typedef struct plan {
	uint32_t offset;
	enum jinst_where where;
	uint32_t nops;
} plan;

static const uint8_t nops[65535];

static jinst_code *code_of(jinst_class *c)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(jinst_class_method(c, 0)), JINST_ATTR_CODE);
	void *m = NULL;
	return a && jinst_attr_decode(c, a, &m, NULL) == 0 ? m : NULL;
}

static void *sub(jinst_class *c, jinst_code *code, enum jinst_attr_kind kind)
{
	jinst_attr *a = jinst_attr_find(&code->attrs, kind);
	void *m = NULL;
	if (a && jinst_attr_decode(c, a, &m, NULL))
		return NULL;
	return m;
}

static bool is_branch(uint8_t op)
{
	return (op >= JINST_OP_IFEQ && op <= JINST_OP_JSR) || (op >= JINST_OP_IFNULL && op <= JINST_OP_JSR_W);
}

/* Patches the built class with the plan and checks the result against
 * the original as described above. */
static void check_relocation(const char *what, const method_spec *s, const plan *pl, uint32_t npl)
{
	static buf in;
	build(&in, s);
	jinst_class *c, *o;
	jinst_diag d;
	CHECK(jinst_class_parse(&o, in.b, in.n, NULL, NULL, &d) == 0, "%s: the built class parses: %s", what, d.message);
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, &d) == 0, "%s: parses", what);
	jinst_patch *p;
	int rc = jinst_patch_open(&p, c, jinst_class_method(c, 0), &d);
	CHECK(rc == 0, "%s: open: %s", what, d.message);
	if (rc)
		return;
	static uint32_t out_len[70000], in_len[70000];
	memset(out_len, 0, sizeof out_len);
	memset(in_len, 0, sizeof in_len);
	for (uint32_t i = 0; i < npl; i++) {
		rc = jinst_patch_insert(p, pl[i].offset, pl[i].where, nops, pl[i].nops, 0);
		CHECK(rc == 0, "%s: insert %u at %u: %d", what, pl[i].nops, pl[i].offset, rc);
		*(pl[i].where == JINST_BEFORE_INSIDE ? &in_len[pl[i].offset] : &out_len[pl[i].offset]) += pl[i].nops;
	}
	rc = jinst_patch_commit(p, &d);
	CHECK(rc == 0, "%s: commit: %s", what, d.message);
	uint8_t *w;
	size_t wl;
	CHECK(jinst_class_write(c, NULL, &w, &wl, &d) == 0, "%s: write", what);
	jinst_class *n;
	CHECK(jinst_class_parse(&n, w, wl, NULL, NULL, &d) == 0, "%s: output parses: %s", what, d.message);

	jinst_code *oc = code_of(o), *nc = code_of(n);
	jinst_insn *oi, *ni;
	uint32_t on, nn;
	CHECK(jinst_code_decode(o, oc, &oi, &on, &d) == 0, "%s: original decodes", what);
	CHECK(jinst_code_decode(n, nc, &ni, &nn, &d) == 0, "%s: output decodes: %s", what, d.message);
	/* Where each original instruction and position went. */
	static uint32_t pos[70000], at[70000];
	static int32_t index_of[70000];
	memset(index_of, 0xff, sizeof index_of);
	uint32_t k = 0, run = 0;
	bool in_run = false;
	for (uint32_t i = 0; i < nn; i++) {
		if (ni[i].opcode == JINST_OP_NOP) {
			if (!in_run)
				run = ni[i].offset;
			in_run = true;
			continue;
		}
		CHECK(k < on && ni[i].opcode == oi[k].opcode, "%s: instruction %u is the original's", what, k);
		if (k >= on)
			break;
		uint32_t orig = oi[k].offset;
		uint32_t inserted = in_run ? ni[i].offset - run : 0;
		CHECK(inserted == out_len[orig] + in_len[orig], "%s: %u bytes before original %u, %u inserted", what,
		      inserted, orig, out_len[orig] + in_len[orig]);
		at[orig] = ni[i].offset;
		pos[orig] = ni[i].offset - in_len[orig];
		index_of[orig] = (int32_t)k;
		if (!is_branch(oi[k].opcode) && !oi[k].sw)
			CHECK(ni[i].operand == oi[k].operand && ni[i].operand2 == oi[k].operand2,
			      "%s: operands of original %u unchanged", what, orig);
		in_run = false;
		k++;
	}
	CHECK(k == on && !in_run, "%s: all %u original instructions, nothing after them", what, on);
	pos[oc->code_length] = nc->code_length;
	index_of[oc->code_length] = (int32_t)on;
	k = 0;
	for (uint32_t i = 0; i < nn && k < on; i++) {
		if (ni[i].opcode == JINST_OP_NOP)
			continue;
		const jinst_insn *a = &oi[k++], *b = &ni[i];
		if (is_branch(a->opcode))
			CHECK((uint32_t)b->operand == pos[a->operand], "%s: branch at %u to %d lands at %d, not %u", what,
			      a->offset, a->operand, b->operand, pos[a->operand]);
		if (a->sw) {
			CHECK((uint32_t)b->sw->default_target == pos[a->sw->default_target], "%s: switch default", what);
			CHECK(b->sw->count == a->sw->count && b->sw->low == a->sw->low && b->sw->high == a->sw->high,
			      "%s: switch shape", what);
			for (uint32_t t = 0; t < a->sw->count && t < b->sw->count; t++) {
				CHECK((uint32_t)b->sw->targets[t] == pos[a->sw->targets[t]], "%s: switch at %u target %u", what,
				      a->offset, t);
				if (a->sw->keys)
					CHECK(b->sw->keys[t] == a->sw->keys[t], "%s: switch key %u", what, t);
			}
		}
	}
	CHECK(nc->max_locals == oc->max_locals && nc->max_stack >= oc->max_stack, "%s: max_locals, max_stack", what);
	CHECK(nc->exception_count == oc->exception_count, "%s: exception table length", what);
	for (uint32_t i = 0; i < oc->exception_count && i < nc->exception_count; i++) {
		const jinst_exception_entry *a = &oc->exceptions[i], *b = &nc->exceptions[i];
		CHECK(b->start_pc == pos[a->start_pc] && b->end_pc == pos[a->end_pc] && b->handler_pc == pos[a->handler_pc] &&
		      b->catch_type == a->catch_type, "%s: exception entry %u", what, i);
	}
	const jinst_line_numbers *ol = sub(o, oc, JINST_ATTR_LINE_NUMBER_TABLE), *nl = sub(n, nc, JINST_ATTR_LINE_NUMBER_TABLE);
	CHECK(!ol == !nl, "%s: LineNumberTable kept", what);
	for (uint32_t i = 0; ol && nl && i < ol->count; i++)
		CHECK(nl->items[i].start_pc == pos[ol->items[i].start_pc] && nl->items[i].line_number == ol->items[i].line_number,
		      "%s: line entry %u", what, i);
	const jinst_local_variables *ov = sub(o, oc, JINST_ATTR_LOCAL_VARIABLE_TABLE),
	                            *nv = sub(n, nc, JINST_ATTR_LOCAL_VARIABLE_TABLE);
	CHECK(!ov == !nv, "%s: LocalVariableTable kept", what);
	for (uint32_t i = 0; ov && nv && i < ov->count; i++) {
		const jinst_local_variable *a = &ov->items[i], *b = &nv->items[i];
		CHECK(b->start_pc == pos[a->start_pc] && b->start_pc + b->length == pos[a->start_pc + a->length] &&
		      b->index == a->index && b->name_index == a->name_index, "%s: local entry %u", what, i);
	}
	const jinst_stack_map *om = sub(o, oc, JINST_ATTR_STACK_MAP_TABLE), *nm = sub(n, nc, JINST_ATTR_STACK_MAP_TABLE);
	CHECK(!om == !nm, "%s: StackMapTable kept", what);
	if (om && nm) {
		jinst_full_frame *of, *nf;
		CHECK(jinst_stack_map_expand(o, jinst_class_method(o, 0), om, &of, &d) == 0, "%s: original frames", what);
		CHECK(jinst_stack_map_expand(n, jinst_class_method(n, 0), nm, &nf, &d) == 0, "%s: frames expand: %s", what,
		      d.message);
		CHECK(nm->count == om->count, "%s: frame count", what);
		for (uint32_t i = 0; i < om->count && i < nm->count; i++) {
			CHECK(nf[i].offset == pos[of[i].offset], "%s: frame %u at %u, not %u", what, i, nf[i].offset,
			      pos[of[i].offset]);
			CHECK(nf[i].nlocals == of[i].nlocals && nf[i].nstack == of[i].nstack, "%s: frame %u sizes", what, i);
			for (uint32_t j = 0; j < of[i].nlocals + of[i].nstack && nf[i].nlocals == of[i].nlocals &&
			                     nf[i].nstack == of[i].nstack; j++) {
				const jinst_ftype *a = j < of[i].nlocals ? &of[i].locals[j] : &of[i].stack[j - of[i].nlocals];
				const jinst_ftype *b = j < nf[i].nlocals ? &nf[i].locals[j] : &nf[i].stack[j - nf[i].nlocals];
				if (a->tag == JINST_VT_UNINITIALIZED)
					CHECK(b->tag == a->tag && b->value == at[a->value], "%s: frame %u: uninitialized(%u) names the new `new` at %u, not %u",
					      what, i, a->value, at[a->value], b->value);
				else
					CHECK(jinst_ftype_equal(a, b), "%s: frame %u type %u", what, i, j);
			}
			/* The most compact form of the same kind. */
			uint32_t delta = i ? nf[i].offset - nf[i - 1].offset - 1 : nf[i].offset;
			uint8_t ot = om->frames[i].type, nt = nm->frames[i].type;
			if (ot <= 63 || ot == 251)
				CHECK(delta <= 63 ? nt == delta : nt == 251, "%s: frame %u same kind %u -> %u", what, i, ot, nt);
			else if (ot <= 127 || ot == 247)
				CHECK(delta <= 63 ? nt == 64 + delta : nt == 247, "%s: frame %u same_locals_1 %u -> %u", what, i, ot, nt);
			else
				CHECK(nt == ot, "%s: frame %u kind kept", what, i);
		}
	}
	free(w);
	jinst_class_free(c);
	jinst_class_free(o);
	jinst_class_free(n);
}

/* Every instruction of the built code gets nops, 1 to 4 by a draw,
 * outside or inside (outside never after a transfer: declined). */
static uint32_t plan_everywhere(const method_spec *s, uint32_t seed, plan *pl)
{
	jinst_class *c;
	static buf in;
	build(&in, s);
	if (jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL))
		return 0;
	jinst_patch *p;
	if (jinst_patch_open(&p, c, jinst_class_method(c, 0), NULL)) {
		jinst_class_free(c);
		return 0;
	}
	uint32_t n, len, k = 0;
	const uint16_t *offs = jinst_patch_offsets(p, &n);
	const uint8_t *code = jinst_patch_code(p, &len);
	uint8_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		bool dead = jinst_opcodes[prev].flags & JINST_OPF_UNCONDITIONAL;
		pl[k++] = (plan){offs[i], !dead && (seed >> 20 & 1) ? JINST_BEFORE_OUTSIDE : JINST_BEFORE_INSIDE,
		                 1 + (seed >> 16) % 4};
		prev = code[offs[i]];
	}
	jinst_class_free(c);
	return k;
}

/* ---- the cases ---- */

/* Branches both ways, goto_w, jsr_w and a subroutine (version 49: no frames). */
static const uint8_t branches[] = {
	0x1a,                         /* 0: iload_0 */
	0x99, 0x00, 0x0d,             /* 1: ifeq 14 */
	0xc8, 0x00, 0x00, 0x00, 0x0f, /* 4: goto_w 19 */
	0x1a,                         /* 9: iload_0 */
	0xa7, 0xff, 0xf7,             /* 10: goto 1 */
	0x04,                         /* 13: iconst_1 */
	0xc9, 0x00, 0x00, 0x00, 0x06, /* 14: jsr_w 20 */
	0xb1,                         /* 19: return */
	0x4c,                         /* 20: astore_1 */
	0xa9, 0x01,                   /* 21: ret 1 */
	0xc8, 0xff, 0xff, 0xff, 0xe9, /* 23: goto_w 0 */
};
static const uint16_t branches_exc[] = {0, 13, 20, 0, 9, 28, 19, 4};
static const uint16_t branches_lnt[] = {0, 1, 9, 2, 19, 3, 23, 4};
static const uint16_t branches_lvt[] = {0, 28, 0, 9, 4, 1};

/* A switch at offset k (0-3: every padding) with its targets, default
 * last; frames (version 50) at each target. */
static void switch_method(bool table, uint32_t k, uint8_t *code, uint32_t *len, uint8_t *smt, uint32_t *smt_len)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < k; i++)
		code[n++] = JINST_OP_ILOAD_0; /* iload_0 */
	uint32_t at = n;
	code[n++] = table ? JINST_OP_TABLESWITCH : JINST_OP_LOOKUPSWITCH;
	while (n % 4)
		code[n++] = 0;
	uint32_t def_at = n;
	n += 4;
	if (table) {
		uint32_t v[2] = {0, 1};
		for (int i = 0; i < 2; i++)
			code[n] = 0, code[n + 1] = 0, code[n + 2] = 0, code[n + 3] = (uint8_t)v[i], n += 4;
	} else {
		code[n] = 0, code[n + 1] = 0, code[n + 2] = 0, code[n + 3] = 2, n += 4;
	}
	uint32_t slots = n;
	n += table ? 8 : 16;
	/* targets: three returns */
	uint32_t t0 = n, t1 = n + 1, t2 = n + 2;
	code[n++] = JINST_OP_RETURN, code[n++] = JINST_OP_RETURN, code[n++] = JINST_OP_RETURN;
	uint32_t rel[3] = {t0 - at, t1 - at, t2 - at};
	code[def_at] = 0, code[def_at + 1] = 0, code[def_at + 2] = 0, code[def_at + 3] = (uint8_t)rel[2];
	for (int i = 0; i < 2; i++) {
		uint32_t q = table ? slots + 4 * (uint32_t)i : slots + 8 * (uint32_t)i;
		if (!table) /* key, then offset */
			code[q] = 0, code[q + 1] = 0, code[q + 2] = 0, code[q + 3] = (uint8_t)(1 + 4 * i), q += 4;
		code[q] = 0, code[q + 1] = 0, code[q + 2] = 0, code[q + 3] = (uint8_t)rel[i];
	}
	*len = n;
	uint32_t m = 0;
	smt[m++] = 0, smt[m++] = 3;
	smt[m++] = (uint8_t)t0; /* same_frame */
	smt[m++] = 0;
	smt[m++] = 0;
	*smt_len = m;
}

/* Frames of every compressed kind over straight code, deltas near 63. */
static const uint8_t frames_smt[] = {
	0, 8,
	10,                         /* same_frame at 10 */
	64 + 9, 1,                  /* same_locals_1_stack_item [int] at 20 */
	247, 0, 69, 7, 0, 2,        /* ..._extended [T] at 90 */
	252, 0, 9, 1,               /* append [int] at 100 */
	250, 0, 9,                  /* chop 1 at 110 */
	251, 0, 5,                  /* same_frame_extended with a small delta at 116 */
	63,                         /* same_frame at 180 */
	255, 0, 9, 0, 2, 1, 2, 0, 1, 7, 0, 4, /* full [int float] [Object] at 190 */
};

/* new T; dup; iload_0; ifeq; iconst_1; goto; iconst_0; pop pop pop; return,
 * frames naming uninitialized(0) at both joins (version 52). */
static const uint8_t uninit_code[] = {
	0x1a, 0x57,             /* 0: iload_0; pop */
	0xbb, 0x00, 0x02,       /* 2: new T */
	0x59,                   /* 5: dup */
	0x1a,                   /* 6: iload_0 */
	0x99, 0x00, 0x07,       /* 7: ifeq 14 */
	0x04,                   /* 10: iconst_1 */
	0xa7, 0x00, 0x04,       /* 11: goto 15 */
	0x03,                   /* 14: iconst_0 */
	0x57, 0x57, 0x57,       /* 15: pop pop pop */
	0xb1,                   /* 18: return */
};
static const uint8_t uninit_smt[] = {
	0, 2,
	255, 0, 14, 0, 1, 1, 0, 2, 8, 0, 2, 8, 0, 2,       /* 14: [int] [U(2) U(2)] */
	255, 0, 0, 0, 1, 1, 0, 3, 8, 0, 2, 8, 0, 2, 1,    /* 15: [int] [U(2) U(2) int] */
};

static void test_relocation(void)
{
	method_spec b = {49, branches, sizeof branches, branches_exc, 2, NULL, 0, branches_lnt, 4, branches_lvt, 2, false, 0};
	static plan pl[70000];
	for (uint32_t seed = 1; seed <= 40; seed++) {
		uint32_t n = plan_everywhere(&b, seed, pl);
		check_relocation("branches", &b, pl, n);
	}
	/* Only at the start; only before the subroutine; big enough that
	 * goto_w's offsets pass 16 bits. */
	check_relocation("branches, entry only", &b, (plan[]){{0, JINST_BEFORE_OUTSIDE, 3}}, 1);
	check_relocation("branches, subroutine", &b, (plan[]){{20, JINST_BEFORE_INSIDE, 2}}, 1);

	for (int table = 0; table < 2; table++)
		for (uint32_t k = 0; k < 4; k++)
			for (uint32_t ins = 1; ins <= 4; ins++) {
				uint8_t code[64], smt[16];
				uint32_t len, sl;
				switch_method(table, k, code, &len, smt, &sl);
				method_spec s = {50, code, len, NULL, 0, smt, sl, NULL, 0, NULL, 0, false, 0};
				char what[64];
				snprintf(what, sizeof what, "%s at padding %u, %u inserted before", table ? "tableswitch" : "lookupswitch",
				         3 - k, ins);
				/* ins nops before the switch: its padding goes from 3-k to (3-k-ins) mod 4 */
				check_relocation(what, &s, (plan[]){{k, JINST_BEFORE_INSIDE, ins}}, 1);
				check_relocation(what, &s, (plan[]){{0, JINST_BEFORE_OUTSIDE, ins}, {len - 2, JINST_BEFORE_INSIDE, ins}}, 2);
				static plan everywhere[64];
				uint32_t n = plan_everywhere(&s, k * 8 + ins, everywhere);
				check_relocation(what, &s, everywhere, n);
			}

	uint8_t straight[201];
	memset(straight, 0x1a, 200);
	straight[200] = JINST_OP_RETURN;
	method_spec f = {50, straight, sizeof straight, NULL, 0, frames_smt, sizeof frames_smt, NULL, 0, NULL, 0, false, 0};
	check_relocation("frames, nothing moves past them", &f, (plan[]){{195, JINST_BEFORE_INSIDE, 2}}, 1);
	check_relocation("frames, deltas grow past 63", &f,
	                 (plan[]){{5, JINST_BEFORE_INSIDE, 4}, {15, JINST_BEFORE_INSIDE, 4}, {150, JINST_BEFORE_OUTSIDE, 3}}, 3);
	check_relocation("frames, inside and outside at frames", &f,
	                 (plan[]){{10, JINST_BEFORE_OUTSIDE, 1}, {10, JINST_BEFORE_INSIDE, 2}, {20, JINST_BEFORE_INSIDE, 64},
	                          {180, JINST_BEFORE_OUTSIDE, 1}, {190, JINST_BEFORE_INSIDE, 1}}, 5);
	static plan fp[256];
	for (uint32_t seed = 1; seed <= 10; seed++)
		check_relocation("frames everywhere", &f, fp, plan_everywhere(&f, seed, fp));

	method_spec u = {52, uninit_code, sizeof uninit_code, NULL, 0, uninit_smt, sizeof uninit_smt, NULL, 0, NULL, 0, false, 0};
	check_relocation("uninitialized, inside before the new", &u, (plan[]){{2, JINST_BEFORE_INSIDE, 3}}, 1);
	check_relocation("uninitialized, outside before the new", &u, (plan[]){{2, JINST_BEFORE_OUTSIDE, 2}}, 1);
	static plan up[32];
	for (uint32_t seed = 1; seed <= 10; seed++)
		check_relocation("uninitialized everywhere", &u, up, plan_everywhere(&u, seed, up));
}

/* ---- declines and refusals ---- */

static void test_declines(void)
{
	static buf in;
	jinst_class *c;
	jinst_patch *p;
	jinst_diag d;
	static uint8_t big[70000];

	/* Type annotations in the code: declined at open. */
	method_spec ta = {52, uninit_code, sizeof uninit_code, NULL, 0, uninit_smt, sizeof uninit_smt, NULL, 0, NULL, 0, true, 0};
	build(&in, &ta);
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL) == 0, "type annotations: parses");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == JINST_EUNSUPPORTED && d.code == JINST_EUNSUPPORTED,
	      "type annotations in code: declined");
	jinst_class_free(c);

	/* A StackMapTable before version 50: declined. */
	method_spec old = {49, uninit_code, sizeof uninit_code, NULL, 0, uninit_smt, sizeof uninit_smt, NULL, 0, NULL, 0, false, 0};
	build(&in, &old);
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL) == 0, "old: parses");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == JINST_EUNSUPPORTED, "StackMapTable before 50: declined");
	jinst_class_free(c);

	/* Version 50 with a StackMapTable that misses a frame the branches
	 * need (the one at 15): declined at commit, method untouched. */
	static const uint8_t partial_smt[] = {0, 1, 255, 0, 14, 0, 1, 1, 0, 2, 8, 0, 2, 8, 0, 2};
	method_spec nof = {52, uninit_code, sizeof uninit_code, NULL, 0, partial_smt, sizeof partial_smt, NULL, 0, NULL, 0, false, 0};
	build(&in, &nof);
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL) == 0, "a frame missing: parses");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == 0, "a frame missing: opens");
	CHECK(jinst_patch_insert(p, 0, JINST_BEFORE_OUTSIDE, nops, 1, 0) == 0, "a frame missing: inserts");
	CHECK(jinst_patch_commit(p, &d) == JINST_EUNSUPPORTED, "a frame missing: declined (%s)", d.message);
	uint8_t *w;
	size_t wl;
	CHECK(jinst_class_write(c, NULL, &w, &wl, &d) == 0 && wl == in.n && memcmp(w, in.b, wl) == 0,
	      "a declined commit leaves the class as it was");
	free(w);
	jinst_class_free(c);

	/* Outside after an unconditional transfer; API misuse. */
	method_spec u = {52, uninit_code, sizeof uninit_code, NULL, 0, uninit_smt, sizeof uninit_smt, NULL, 0, NULL, 0, false, 0};
	build(&in, &u);
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL) == 0, "parses");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == 0, "opens");
	CHECK(jinst_patch_insert(p, 14, JINST_BEFORE_OUTSIDE, nops, 1, 0) == JINST_EUNSUPPORTED,
	      "outside after goto: declined");
	CHECK(jinst_patch_insert(p, 14, JINST_BEFORE_INSIDE, nops, 1, 0) == 0, "inside after goto: fine");
	CHECK(jinst_patch_insert(p, 3, JINST_BEFORE_INSIDE, nops, 1, 0) == JINST_EINVAL, "mid-instruction: refused");
	CHECK(jinst_patch_insert(p, 19, JINST_BEFORE_INSIDE, nops, 1, 0) == JINST_EINVAL, "past the end: refused");
	static const uint8_t ret[] = {0xb1}, branch[] = {0xa7, 0x00, 0x00}, thr[] = {0xbf}, sw[] = {0xaa};
	CHECK(jinst_patch_insert(p, 0, JINST_BEFORE_INSIDE, ret, 1, 0) == JINST_EINVAL, "a return: refused");
	CHECK(jinst_patch_insert(p, 0, JINST_BEFORE_INSIDE, branch, 3, 0) == JINST_EINVAL, "a branch: refused");
	CHECK(jinst_patch_insert(p, 0, JINST_BEFORE_INSIDE, thr, 1, 0) == JINST_EINVAL, "athrow: refused");
	CHECK(jinst_patch_insert(p, 0, JINST_BEFORE_INSIDE, sw, 1, 0) == JINST_EINVAL, "a switch: refused");
	CHECK(jinst_patch_set_handler(p, nops, 2, 0, 0) == JINST_EINVAL, "a handler not ending in athrow: refused");
	CHECK(jinst_patch_add_range(p, 5, 5) == JINST_EINVAL && jinst_patch_add_range(p, 3, 6) == JINST_EINVAL,
	      "empty or misplaced ranges: refused");
	CHECK(jinst_patch_add_range(p, 0, 19) == 0, "a range to the end");
	CHECK(jinst_patch_commit(p, &d) == JINST_EINVAL, "ranges without a handler: refused");
	jinst_class_free(c);

	/* A 16-bit branch that no longer reaches: declined; too long: ETOOLARGE. */
	method_spec b = {49, branches, sizeof branches, branches_exc, 2, NULL, 0, branches_lnt, 4, branches_lvt, 2, false, 0};
	build(&in, &b);
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL) == 0, "parses");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == 0, "opens");
	CHECK(jinst_patch_insert(p, 4, JINST_BEFORE_INSIDE, big, 40000, 0) == 0, "40,000 nops before the goto_w");
	CHECK(jinst_patch_commit(p, &d) == JINST_EUNSUPPORTED, "ifeq over 40,000 bytes: declined (%s)", d.message);
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == 0, "opens again");
	CHECK(jinst_patch_insert(p, 9, JINST_BEFORE_INSIDE, big, 40000, 0) == 0, "40,000 nops after the goto_w");
	CHECK(jinst_patch_insert(p, 19, JINST_BEFORE_INSIDE, big, 40000, 0) == 0, "and 40,000 more");
	CHECK(jinst_patch_commit(p, &d) == JINST_ETOOLARGE, "code over 65,535 bytes: refused");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == 0, "opens again");
	CHECK(jinst_patch_insert(p, 19, JINST_BEFORE_INSIDE, big, 30000, 0) == 0, "30,000 nops before the return");
	CHECK(jinst_patch_commit(p, &d) == 0, "goto_w and the backward branches still reach: %s", d.message);
	jinst_class_free(c);
	plan pl[1] = {{19, JINST_BEFORE_INSIDE, 8}};
	check_relocation("branches, a few bytes", &b, pl, 1);

	/* The Code layout of 45.0-45.2 (u1 max_stack and max_locals, u2 code_length). */
	method_spec oldest = {45, branches, sizeof branches, NULL, 0, NULL, 0, NULL, 0, NULL, 0, false, 2};
	build(&in, &oldest);
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, &d) == 0, "45.2: parses: %s", d.message);
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == JINST_EUNSUPPORTED, "45.2: declined");
	jinst_class_free(c);

	/* A method already edited through the Code model (the editor): declined. */
	build(&in, &u);
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL) == 0, "parses");
	jinst_edit *ed;
	CHECK(jinst_edit_open(&ed, c, jinst_class_method(c, 0), NULL, &d) == 0, "the editor opens");
	jinst_insn nop = {.opcode = JINST_OP_NOP};
	CHECK(jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_BEFORE_OUTSIDE, &nop, 1, NULL) == 0 &&
	      jinst_edit_commit(ed, &d) == 0, "the editor commits");
	jinst_edit_free(ed);
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == JINST_EUNSUPPORTED, "edited code: declined");
	jinst_class_free(c);
}

/* A method patched twice: the second patcher reads the first one's Code,
 * which lives outside the class bytes, and so does every later decode. */
static void test_twice(void)
{
	static buf in;
	method_spec u = {52, uninit_code, sizeof uninit_code, NULL, 0, uninit_smt, sizeof uninit_smt, NULL, 0, NULL, 0, false, 0};
	build(&in, &u);
	jinst_class *c;
	jinst_patch *p;
	jinst_diag d;
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL) == 0, "parses");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == 0 &&
	      jinst_patch_insert(p, 2, JINST_BEFORE_INSIDE, nops, 3, 0) == 0 && jinst_patch_commit(p, &d) == 0,
	      "first patch");
	jinst_code *mid = code_of(c);
	CHECK(mid && mid->code_length == 22 && mid->code[5] == JINST_OP_NEW, "the first patch's code decodes in place");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == 0, "second open: %s", d.message);
	uint32_t len;
	const uint8_t *code = jinst_patch_code(p, &len);
	CHECK(len == 22 && code[5] == JINST_OP_NEW, "the second patcher sees the first one's code");
	CHECK(jinst_patch_insert(p, 5, JINST_BEFORE_OUTSIDE, nops, 1, 0) == 0 && jinst_patch_commit(p, &d) == 0,
	      "second patch: %s", d.message);
	uint8_t *w;
	size_t wl;
	CHECK(jinst_class_write(c, NULL, &w, &wl, &d) == 0, "writes");
	jinst_class *n;
	CHECK(jinst_class_parse(&n, w, wl, NULL, NULL, &d) == 0, "output parses");
	jinst_code *nc = code_of(n);
	const jinst_stack_map *m = nc ? sub(n, nc, JINST_ATTR_STACK_MAP_TABLE) : NULL;
	jinst_full_frame *f;
	CHECK(nc && nc->code_length == 23 && nc->code[6] == JINST_OP_NEW, "4 nops before the new");
	CHECK(m && m->count == 2 && jinst_stack_map_expand(n, jinst_class_method(n, 0), m, &f, &d) == 0, "frames");
	if (m && m->count == 2)
		CHECK(f[0].offset == 18 && f[0].stack[0].tag == JINST_VT_UNINITIALIZED && f[0].stack[0].value == 6,
		      "uninitialized(6), the frame at 18");
	free(w);
	jinst_class_free(n);
	jinst_class_free(c);
}

/* The appended handler: its entry after the method's own, its frame. */
static void test_handler(void)
{
	static buf in;
	method_spec u = {52, uninit_code, sizeof uninit_code, NULL, 0, uninit_smt, sizeof uninit_smt, NULL, 0, NULL, 0, false, 0};
	build(&in, &u);
	jinst_class *c;
	jinst_patch *p;
	jinst_diag d;
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL) == 0, "parses");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == 0, "opens");
	static const uint8_t h[] = {0x00, 0xbf};
	CHECK(jinst_patch_insert(p, 0, JINST_BEFORE_OUTSIDE, nops, 2, 0) == 0, "entry");
	CHECK(jinst_patch_set_handler(p, h, 2, 0, 0) == 0, "handler");
	CHECK(jinst_patch_add_range(p, 0, 19) == 0, "range");
	CHECK(jinst_patch_commit(p, &d) == 0, "commit: %s", d.message);
	uint8_t *w;
	size_t wl;
	CHECK(jinst_class_write(c, NULL, &w, &wl, &d) == 0, "writes");
	jinst_class *n;
	CHECK(jinst_class_parse(&n, w, wl, NULL, NULL, &d) == 0, "output parses");
	jinst_code *code = code_of(n);
	CHECK(code && code->code_length == 19 + 2 + 2, "code: 2 + 19 + 2 bytes");
	CHECK(code && code->exception_count == 1 && code->exceptions[0].start_pc == 2 && code->exceptions[0].end_pc == 21 &&
	      code->exceptions[0].handler_pc == 21 && code->exceptions[0].catch_type == 0,
	      "the range covers the original code, not the entry code");
	const jinst_stack_map *m = code ? sub(n, code, JINST_ATTR_STACK_MAP_TABLE) : NULL;
	jinst_full_frame *f;
	CHECK(m && m->count == 3 && jinst_stack_map_expand(n, jinst_class_method(n, 0), m, &f, &d) == 0, "three frames");
	if (m && m->count == 3) {
		CHECK(f[2].offset == 21 && f[2].nlocals == 0 && f[2].nstack == 1 && f[2].stack[0].tag == JINST_VT_OBJECT &&
		      f[2].stack[0].name_length == 19 && memcmp(f[2].stack[0].name, "java/lang/Throwable", 19) == 0,
		      "the handler's frame: locals [], stack [Throwable]");
		CHECK(m->frames[2].type == 255, "after a frame with locals, a full_frame");
	}
	CHECK(code && code->max_stack >= 3, "max_stack");
	free(w);
	jinst_class_free(n);
	jinst_class_free(c);
}

/* Version 50 code that needs frames and has no StackMapTable at all (what
 * HotSpot rebuilds for a class it does not verify): patched, the handler
 * too, and no StackMapTable made up. */
static void test_frameless(void)
{
	static buf in;
	method_spec u = {52, uninit_code, sizeof uninit_code, NULL, 0, NULL, 0, NULL, 0, NULL, 0, false, 0};
	build(&in, &u);
	jinst_class *c;
	jinst_patch *p;
	jinst_diag d;
	CHECK(jinst_class_parse(&c, in.b, in.n, NULL, NULL, NULL) == 0, "frameless: parses");
	CHECK(jinst_patch_open(&p, c, jinst_class_method(c, 0), &d) == 0, "frameless: opens");
	static const uint8_t h[] = {0x00, 0xbf};
	CHECK(jinst_patch_insert(p, 0, JINST_BEFORE_OUTSIDE, nops, 2, 0) == 0, "frameless: entry");
	CHECK(jinst_patch_insert(p, 18, JINST_BEFORE_INSIDE, nops, 1, 0) == 0, "frameless: before the return");
	CHECK(jinst_patch_set_handler(p, h, 2, 0, 0) == 0, "frameless: handler");
	CHECK(jinst_patch_add_range(p, 0, 19) == 0, "frameless: range");
	CHECK(jinst_patch_commit(p, &d) == 0, "frameless: commit (%s)", d.message);
	uint8_t *w;
	size_t wl;
	CHECK(jinst_class_write(c, NULL, &w, &wl, &d) == 0, "frameless: writes");
	jinst_class *n;
	CHECK(jinst_class_parse(&n, w, wl, NULL, NULL, &d) == 0, "frameless: output parses");
	jinst_code *code = code_of(n);
	CHECK(code && code->code_length == 2 + 19 + 1 + 2, "frameless: 2 + 19 + 1 + 2 bytes");
	CHECK(code && code->code[9] == 0x99 && code->code[10] == 0 && code->code[11] == 7 && code->code[13] == 0xa7 &&
	          code->code[14] == 0 && code->code[15] == 4,
	      "frameless: the branches keep their targets");
	CHECK(code && code->exception_count == 1 && code->exceptions[0].handler_pc == 22, "frameless: the handler's entry");
	CHECK(code && !sub(n, code, JINST_ATTR_STACK_MAP_TABLE), "frameless: no StackMapTable made up");
	free(w);
	jinst_class_free(n);
	jinst_class_free(c);
}

int main(void)
{
	test_relocation();
	test_declines();
	test_handler();
	test_frameless();
	test_twice();
	return check_report();
}
