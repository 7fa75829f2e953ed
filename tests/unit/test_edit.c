/*
 * The code editor (include/jinst/edit.h) over real class files: the
 * editor's cases (tests/data/src/edit, javac 17 -g) and a jsr/ret method
 * built here in the layout of a version 49 class file.
 *
 * The relocation oracle is arithmetic, not the editor's own bookkeeping:
 * k_i nops are inserted before original instruction i, so each original
 * position moves by a known amount; every branch, switch, exception entry,
 * line number, local variable range, type annotation and frame of the new
 * code must land where that arithmetic says.
 *
 *   test_edit CLASSES_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/edit.h"
#include "../testlib.h"

static const char *dir;

typedef struct loaded {
	uint8_t *bytes;
	size_t len;
	jinst_class *c;
} loaded;

/* The class load() reads: the editor's cases, or the jsr/ret ones. */
static const char *cur_class = "edit/jinstedit/EditCases.class";

static loaded load(void)
{
	loaded l;
	l.bytes = test_load(dir, cur_class, &l.len);
	jinst_diag d;
	if (jinst_class_parse(&l.c, l.bytes, l.len, NULL, NULL, &d)) {
		printf("FAIL cannot parse %s: %s\n", cur_class, d.message);
		exit(1);
	}
	return l;
}

static void unload(loaded *l)
{
	jinst_class_free(l->c);
	free(l->bytes);
}

static jinst_code *code_of(jinst_class *c, jinst_member *m)
{
	jinst_code *code;
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	if (!a || jinst_attr_decode(c, a, (void **)&code, NULL))
		return NULL;
	return code;
}

static void *sub_model(jinst_class *c, jinst_code *code, enum jinst_attr_kind kind)
{
	void *model = NULL;
	jinst_attr *a = jinst_attr_find(&code->attrs, kind);
	if (a)
		jinst_attr_decode(c, a, &model, NULL);
	return model;
}

/* Decoded current code of m, and its frames expanded (count in *nframes). */
static uint32_t decode(jinst_class *c, jinst_member *m, jinst_insn **insns, jinst_full_frame **frames,
                       uint32_t *nframes)
{
	jinst_code *code = code_of(c, m);
	uint32_t n = 0;
	jinst_diag d;
	int rc = jinst_code_decode(c, code, insns, &n, &d);
	CHECK(rc == 0, "code decodes: %s", d.message);
	if (frames) {
		jinst_stack_map *map = sub_model(c, code, JINST_ATTR_STACK_MAP_TABLE);
		*nframes = map ? map->count : 0;
		*frames = NULL;
		if (map) {
			rc = jinst_stack_map_expand(c, m, map, frames, &d);
			CHECK(rc == 0, "frames expand: %s", d.message);
		}
	}
	return rc ? 0 : n;
}

static const jinst_insn *insn_at(const jinst_insn *insns, uint32_t n, uint32_t off)
{
	for (uint32_t i = 0; i < n; i++)
		if (insns[i].offset == off)
			return &insns[i];
	return NULL;
}

static bool ftype_eq(const jinst_ftype *a, const jinst_ftype *b)
{
	if (a->tag != b->tag)
		return false;
	if (a->tag == JINST_VT_OBJECT)
		return a->name_length == b->name_length && !memcmp(a->name, b->name, a->name_length);
	return true;
}

static jinst_node *nop_seq_last;

static int insert_nops(jinst_edit *ed, jinst_node *n, enum jinst_where where, uint32_t k)
{
	jinst_insn nops[8];
	memset(nops, 0, sizeof(nops));
	return k ? jinst_edit_insert(ed, n, where, nops, k, &nop_seq_last) : 0;
}

/* ---- relocation with the arithmetic oracle ---- */

typedef struct orig_state {
	jinst_insn *insns;
	uint32_t n, code_length;
	jinst_exception_entry *ex;
	uint16_t nex;
	jinst_line_numbers lnt;
	jinst_local_variables lvt, lvtt;
	jinst_full_frame *frames;
	uint32_t nframes;
	jinst_type_annotations ta;
} orig_state;

static orig_state snapshot(jinst_class *c, jinst_member *m)
{
	orig_state o;
	memset(&o, 0, sizeof(o));
	jinst_code *code = code_of(c, m);
	o.code_length = code->code_length;
	o.n = decode(c, m, &o.insns, &o.frames, &o.nframes);
	o.nex = code->exception_count;
	o.ex = malloc((o.nex + 1u) * sizeof(*o.ex));
	memcpy(o.ex, code->exceptions, o.nex * sizeof(*o.ex));
	jinst_line_numbers *l = sub_model(c, code, JINST_ATTR_LINE_NUMBER_TABLE);
	jinst_local_variables *v = sub_model(c, code, JINST_ATTR_LOCAL_VARIABLE_TABLE);
	jinst_local_variables *vt = sub_model(c, code, JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE);
	jinst_type_annotations *ta = sub_model(c, code, JINST_ATTR_RUNTIME_VISIBLE_TYPE_ANNOTATIONS);
	if (l)
		o.lnt = *l;
	if (v)
		o.lvt = *v;
	if (vt)
		o.lvtt = *vt;
	if (ta)
		o.ta = *ta;
	return o;
}

/* Where original offset `off` (an instruction or the end) is in the new
 * code, as a position (what a label there names), given k per instruction. */
typedef struct oracle {
	const orig_state *o;
	jinst_edit *ed;
	enum jinst_where where;
	const uint32_t *k;
	uint32_t new_length;
} oracle;

static uint32_t insn_index(const orig_state *o, uint32_t off)
{
	for (uint32_t i = 0; i < o->n; i++)
		if (o->insns[i].offset == off)
			return i;
	return UINT32_MAX;
}

static uint32_t new_insn(const oracle *q, uint32_t off)
{
	return jinst_node_offset(jinst_edit_at(q->ed, off));
}

static uint32_t pos(const oracle *q, uint32_t off)
{
	if (off == q->o->code_length)
		return q->new_length;
	uint32_t i = insn_index(q->o, off);
	uint32_t at = new_insn(q, off);
	return q->where == JINST_BEFORE_INSIDE ? at - q->k[i] : at;
}

static bool ends_block(uint8_t op)
{
	return jinst_opcodes[op].flags & JINST_OPF_UNCONDITIONAL;
}

static unsigned paddings_seen;

/* Inserts k_i nops before every original instruction i (where), commits,
 * and checks the new code against the oracle. */
static void relocate(const char *name, const char *desc, enum jinst_where where, uint32_t shift)
{
	loaded l = load();
	jinst_member *m = test_method(l.c, name, desc);
	orig_state o = snapshot(l.c, m);
	uint32_t *k = calloc(o.n + 1, sizeof(*k));
	jinst_edit *ed;
	jinst_diag d;
	CHECK(jinst_edit_open(&ed, l.c, m, NULL, &d) == 0, "open %s: %s", name, d.message);
	for (uint32_t i = 0; i < o.n; i++) {
		/* The first instruction gets `shift` (0-3) and the others 4, so
		 * every switch lands at each padding over the four shifts. */
		k[i] = i == 0 ? shift : 4;
		jinst_node *n = jinst_edit_at(ed, o.insns[i].offset);
		CHECK(n && jinst_node_original_offset(n) == o.insns[i].offset, "node at %u", o.insns[i].offset);
		CHECK(insert_nops(ed, n, where, k[i]) == 0, "insert");
	}
	int rc = jinst_edit_commit(ed, &d);
	CHECK(rc == 0, "commit %s: %s", name, d.message);
	jinst_code *code = code_of(l.c, m);
	oracle q = {&o, ed, where, k, code->code_length};
	uint32_t added = 0;
	for (uint32_t i = 0; i < o.n; i++)
		added += k[i];
	jinst_insn *ni;
	jinst_full_frame *nf;
	uint32_t nnf;
	uint32_t nn = decode(l.c, m, &ni, &nf, &nnf);
	CHECK(nn == o.n + added, "%s: %u instructions, expected %u", name, nn, o.n + added);
	for (uint32_t i = 0; i < o.n; i++) {
		const jinst_insn *a = &o.insns[i];
		uint32_t at = new_insn(&q, a->offset);
		const jinst_insn *b = insn_at(ni, nn, at);
		CHECK(b && b->opcode == a->opcode, "%s: %s from pc %u not at %u", name, jinst_opcode_name(a->opcode),
		      a->offset, at);
		if (!b)
			continue;
		enum jinst_operand_kind kind = jinst_opcode_operands(a->opcode);
		if (kind == JINST_OPND_BRANCH2 || kind == JINST_OPND_BRANCH4) {
			CHECK((uint32_t)b->operand == pos(&q, (uint32_t)a->operand), "%s: %s at %u jumps to %d, expected %u",
			      name, jinst_opcode_name(a->opcode), at, b->operand, pos(&q, (uint32_t)a->operand));
		} else if (a->sw) {
			paddings_seen |= 1u << ((b->offset + 1) % 4);
			CHECK(b->sw->count == a->sw->count && b->sw->low == a->sw->low && b->sw->high == a->sw->high,
			      "%s: switch shape", name);
			CHECK((uint32_t)b->sw->default_target == pos(&q, (uint32_t)a->sw->default_target), "%s: default",
			      name);
			for (uint32_t t = 0; t < a->sw->count && t < b->sw->count; t++) {
				CHECK((uint32_t)b->sw->targets[t] == pos(&q, (uint32_t)a->sw->targets[t]), "%s: case %u", name,
				      t);
				if (a->sw->keys)
					CHECK(b->sw->keys[t] == a->sw->keys[t], "%s: key %u", name, t);
			}
		} else {
			CHECK(b->operand == a->operand && b->operand2 == a->operand2, "%s: operands of %s", name,
			      jinst_opcode_name(a->opcode));
		}
	}
	/* Exception table. */
	CHECK(code->exception_count == o.nex, "%s: %u exception entries, expected %u", name, code->exception_count,
	      o.nex);
	for (uint16_t i = 0; i < o.nex && i < code->exception_count; i++) {
		const jinst_exception_entry *a = &o.ex[i], *b = &code->exceptions[i];
		CHECK(b->start_pc == pos(&q, a->start_pc) && b->end_pc == pos(&q, a->end_pc) &&
		      b->handler_pc == pos(&q, a->handler_pc) && b->catch_type == a->catch_type,
		      "%s: exception %u is %u-%u->%u, expected %u-%u->%u", name, i, b->start_pc, b->end_pc, b->handler_pc,
		      pos(&q, a->start_pc), pos(&q, a->end_pc), pos(&q, a->handler_pc));
	}
	/* LineNumberTable. */
	jinst_line_numbers *lnt = sub_model(l.c, code, JINST_ATTR_LINE_NUMBER_TABLE);
	CHECK(lnt && lnt->count == o.lnt.count, "%s: line numbers", name);
	for (uint32_t i = 0; lnt && i < o.lnt.count && i < lnt->count; i++)
		CHECK(lnt->items[i].start_pc == pos(&q, o.lnt.items[i].start_pc) &&
		      lnt->items[i].line_number == o.lnt.items[i].line_number, "%s: line %u at %u", name,
		      lnt->items[i].line_number, lnt->items[i].start_pc);
	/* LocalVariableTable and LocalVariableTypeTable. */
	for (int t = 0; t < 2; t++) {
		const jinst_local_variables *a = t ? &o.lvtt : &o.lvt;
		jinst_local_variables *b =
		    sub_model(l.c, code, t ? JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE : JINST_ATTR_LOCAL_VARIABLE_TABLE);
		CHECK(a->count == (b ? b->count : 0), "%s: local variable table %d count", name, t);
		for (uint32_t i = 0; b && i < a->count && i < b->count; i++) {
			uint32_t s = pos(&q, a->items[i].start_pc), e = pos(&q, (uint32_t)a->items[i].start_pc + a->items[i].length);
			CHECK(b->items[i].start_pc == s && b->items[i].length == e - s && b->items[i].index == a->items[i].index,
			      "%s: local %u range %u+%u, expected %u+%u", name, b->items[i].index, b->items[i].start_pc,
			      b->items[i].length, s, e - s);
		}
	}
	/* Type annotations: offsets follow their instruction; localvar ranges
	 * are positions. */
	jinst_type_annotations *ta = sub_model(l.c, code, JINST_ATTR_RUNTIME_VISIBLE_TYPE_ANNOTATIONS);
	CHECK(o.ta.count == (ta ? ta->count : 0), "%s: type annotations", name);
	for (uint32_t i = 0; ta && i < o.ta.count && i < ta->count; i++) {
		const jinst_type_annotation *a = &o.ta.items[i], *b = &ta->items[i];
		if (a->target_type >= 0x43 && a->target_type <= 0x4b)
			CHECK(b->a == new_insn(&q, a->a), "%s: type annotation 0x%02x at %u, expected %u", name,
			      a->target_type, b->a, new_insn(&q, a->a));
		if (a->target_type == 0x40 || a->target_type == 0x41)
			for (uint32_t j = 0; j < a->table_length; j++) {
				uint32_t s = pos(&q, a->table[j].start_pc);
				uint32_t e = pos(&q, (uint32_t)a->table[j].start_pc + a->table[j].length);
				CHECK(b->table[j].start_pc == s && b->table[j].length == e - s, "%s: localvar annotation", name);
			}
	}
	/* Frames: every original one where its position went, same types; the
	 * Uninitialized ones name their `new` at its new offset. */
	uint32_t matched = 0;
	for (uint32_t i = 0; i < o.nframes; i++) {
		const jinst_full_frame *a = &o.frames[i];
		uint32_t at = pos(&q, a->offset);
		const jinst_full_frame *b = NULL;
		for (uint32_t j = 0; j < nnf; j++)
			if (nf[j].offset == at)
				b = &nf[j];
		CHECK(b != NULL, "%s: no frame at %u (was %u)", name, at, a->offset);
		if (!b)
			continue;
		matched++;
		bool same = a->nlocals == b->nlocals && a->nstack == b->nstack;
		for (uint16_t t = 0; same && t < a->nlocals + a->nstack; t++) {
			const jinst_ftype *x = t < a->nlocals ? &a->locals[t] : &a->stack[t - a->nlocals];
			const jinst_ftype *y = t < a->nlocals ? &b->locals[t] : &b->stack[t - a->nlocals];
			same = ftype_eq(x, y) && (x->tag != JINST_VT_UNINITIALIZED || y->value == new_insn(&q, x->value));
		}
		CHECK(same, "%s: frame at %u differs from the original at %u", name, at, a->offset);
	}
	/* Inside, frames move with their labels and none is added; outside,
	 * the nops after an unconditional transfer get derived frames. */
	if (where == JINST_BEFORE_INSIDE)
		CHECK(nnf == o.nframes, "%s: %u frames, expected %u", name, nnf, o.nframes);
	for (uint32_t j = 0; j < nnf; j++) {
		bool original = false;
		for (uint32_t i = 0; i < o.nframes; i++)
			original |= pos(&q, o.frames[i].offset) == nf[j].offset;
		if (original)
			continue;
		const jinst_insn *prev = NULL;
		for (uint32_t i = 0; i < nn; i++)
			if (ni[i].offset < nf[j].offset)
				prev = &ni[i];
		CHECK(prev && ends_block(prev->opcode), "%s: extra frame at %u not after a block end", name, nf[j].offset);
	}
	/* max_stack stays; nothing was added to the stack. */
	CHECK(code->max_locals == jinst_edit_max_locals(ed), "%s: max_locals", name);
	free(k);
	free(o.ex);
	unload(&l);
}

static void test_relocation(void)
{
	static const char *const methods[][2] = {
		{"loop", "(I)I"}, {"whileAtStart", "(I)I"}, {"table", "(I)Ljava/lang/String;"}, {"lookup", "(I)I"},
		{"tryCatch", "(Ljava/lang/String;)I"}, {"uninit", "(Z)Ljava/lang/String;"}, {"longs", "(JD)J"},
		{"annotated", "(Ljava/lang/Object;)I"}, {"max", "(Ljava/util/List;)Ljava/lang/Comparable;"},
		{"nested", "(II)I"}, {"<init>", "(Z)V"}, {"<init>", "(I)V"}, {"main", "([Ljava/lang/String;)V"},
		{"guard", "(I)V"},
	};
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		for (uint32_t shift = 0; shift < 4; shift++) {
			relocate(methods[i][0], methods[i][1], JINST_BEFORE_INSIDE, shift);
			relocate(methods[i][0], methods[i][1], JINST_BEFORE_OUTSIDE, shift);
		}
	CHECK(paddings_seen == 0xf, "switches seen at paddings mask 0x%x, expected all four", paddings_seen);
	/* finally blocks as subroutines (ECJ -1.4, class file 46): jsr targets
	 * and the ranges around them move like any branch. */
	cur_class = "jsr/jinstjsr/Finally.class";
	static const char *const jsr_methods[][2] = {
		{"body", "(I)I"}, {"nested", "(Ljava/lang/String;)Ljava/lang/String;"}, {"main", "([Ljava/lang/String;)V"},
	};
	for (size_t i = 0; i < sizeof(jsr_methods) / sizeof(jsr_methods[0]); i++)
		for (uint32_t shift = 0; shift < 4; shift++) {
			relocate(jsr_methods[i][0], jsr_methods[i][1], JINST_BEFORE_INSIDE, shift);
			relocate(jsr_methods[i][0], jsr_methods[i][1], JINST_BEFORE_OUTSIDE, shift);
		}
	cur_class = "edit/jinstedit/EditCases.class";
}

/* ---- widening ---- */

static uint32_t count_op(const jinst_insn *in, uint32_t n, uint8_t op)
{
	uint32_t c = 0;
	for (uint32_t i = 0; i < n; i++)
		c += in[i].opcode == op;
	return c;
}

/* `loop`: a forward if_icmpge over the body and a backward goto. 40,000
 * bytes of nops in the body put both out of 16-bit reach. */
static void test_widening(void)
{
	loaded l = load();
	jinst_member *m = test_method(l.c, "loop", "(I)I");
	orig_state o = snapshot(l.c, m);
	uint32_t cond = UINT32_MAX, jump = UINT32_MAX, body = UINT32_MAX;
	for (uint32_t i = 0; i < o.n; i++) {
		if (o.insns[i].opcode == JINST_OP_IF_ICMPGE) /* if_icmpge */
			cond = i, body = i + 1;
		if (o.insns[i].opcode == JINST_OP_GOTO)
			jump = i;
	}
	CHECK(cond != UINT32_MAX && jump != UINT32_MAX, "loop has if_icmpge and goto");
	if (cond == UINT32_MAX || jump == UINT32_MAX)
		return;
	jinst_edit *ed;
	jinst_diag d;
	CHECK(jinst_edit_open(&ed, l.c, m, NULL, &d) == 0, "open: %s", d.message);
	static jinst_insn nops[40000];
	CHECK(jinst_edit_insert(ed, jinst_edit_at(ed, o.insns[body].offset), JINST_BEFORE_INSIDE, nops, 40000, NULL) == 0,
	      "insert");
	CHECK(jinst_edit_commit(ed, &d) == 0, "commit: %s", d.message);
	jinst_insn *ni;
	jinst_full_frame *nf;
	uint32_t nnf, nn = decode(l.c, m, &ni, &nf, &nnf);
	uint32_t target_cond = new_insn(&(oracle){&o, ed, JINST_BEFORE_INSIDE, NULL, 0}, (uint32_t)o.insns[cond].operand);
	uint32_t target_jump = new_insn(&(oracle){&o, ed, JINST_BEFORE_INSIDE, NULL, 0}, (uint32_t)o.insns[jump].operand);
	uint32_t at_cond = new_insn(&(oracle){&o, ed, JINST_BEFORE_INSIDE, NULL, 0}, o.insns[cond].offset);
	uint32_t at_jump = new_insn(&(oracle){&o, ed, JINST_BEFORE_INSIDE, NULL, 0}, o.insns[jump].offset);
	const jinst_insn *c1 = insn_at(ni, nn, at_cond), *c2 = insn_at(ni, nn, at_cond + 3);
	/* if_icmpge T  ->  if_icmplt +8; goto_w T */
	CHECK(c1 && c1->opcode == JINST_OP_IF_ICMPLT && (uint32_t)c1->operand == at_cond + 8, "inverted branch over the goto_w");
	CHECK(c2 && c2->opcode == JINST_OP_GOTO_W && (uint32_t)c2->operand == target_cond, "goto_w to the old target");
	const jinst_insn *g = insn_at(ni, nn, at_jump);
	CHECK(g && g->opcode == JINST_OP_GOTO_W && (uint32_t)g->operand == target_jump, "goto widened to goto_w");
	CHECK(count_op(ni, nn, JINST_OP_GOTO) == 0, "no goto left");
	/* The instruction after the goto_w of the rewrite is a new branch
	 * target after an unconditional transfer: it has a derived frame equal
	 * to the locals at the branch (n, sum, i) with an empty stack. */
	const jinst_full_frame *f = NULL;
	for (uint32_t j = 0; j < nnf; j++)
		if (nf[j].offset == at_cond + 8)
			f = &nf[j];
	CHECK(f && f->nstack == 0 && f->nlocals == 3 && f->locals[0].tag == JINST_VT_INTEGER &&
	          f->locals[2].tag == JINST_VT_INTEGER, "derived frame after the rewritten branch");
	CHECK(code_of(l.c, m)->code_length == o.code_length + 40000 + 5 + 2, "length: +40000 nops, +5 rewrite, +2 goto_w");
	/* The class writes and parses again. */
	uint8_t *out = NULL;
	size_t len;
	CHECK(jinst_class_write(l.c, NULL, &out, &len, &d) == 0, "write: %s", d.message);
	jinst_class *cls2 = NULL;
	CHECK(jinst_class_parse(&cls2, out, len, NULL, NULL, &d) == 0, "reparse: %s", d.message);
	jinst_class_free(cls2);
	free(out);
	free(o.ex);
	unload(&l);
}

/* ---- a jsr/ret method (version 49, as javac 1.4 wrote finally) ---- */

static uint8_t *jsr_class(size_t *len, bool old_layout)
{
	static const uint8_t head[] = {
		0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 49, 0, 8,
		1, 0, 1, 'T',                                                     /* #1 Utf8 T */
		7, 0, 1,                                                          /* #2 Class T */
		1, 0, 16, 'j', 'a', 'v', 'a', '/', 'l', 'a', 'n', 'g', '/', 'O', 'b', 'j', 'e', 'c', 't',
		7, 0, 3,                                                          /* #4 Class Object */
		1, 0, 1, 'm', 1, 0, 3, '(', ')', 'I', 1, 0, 4, 'C', 'o', 'd', 'e', /* #5 #6 #7 */
		0, 0x21, 0, 2, 0, 4, 0, 0, 0, 0, 0, 1,
		0, 0x09, 0, 5, 0, 6, 0, 1, 0, 7, 0, 0, 0, 22, /* Code: 8 + 10 code bytes + 4 */
		0, 2, 0, 1, 0, 0, 0, 10,
		/* 0: jsr 6; 3: iconst_1; 4: ireturn; 5: nop; 6: astore_0; 7: ret 0; 9: nop */
		0xa8, 0, 6, 0x04, 0xac, 0x00, 0x4b, 0xa9, 0, 0x00,
		0, 0, 0, 0, /* no exceptions, no attributes */
		0, 0};
	uint8_t *b = malloc(sizeof(head));
	memcpy(b, head, sizeof(head));
	*len = sizeof(head);
	if (old_layout) {
		/* Version 45.0: Code has u1 max_stack, u1 max_locals, u2 code_length
		 * (JVMS 4.7.3 before 45.3), 4 bytes fewer. */
		static const uint8_t code_head[] = {0, 0, 0, 18, 2, 1, 0, 10};
		size_t at = 0;
		while (memcmp(b + at, "\0\x07\0\0\0\x16", 6) != 0) /* name #7, length 22 */
			at++;
		b[7] = 45;
		memcpy(b + at + 2, code_head, sizeof(code_head));
		memmove(b + at + 2 + sizeof(code_head), b + at + 2 + 12, *len - (at + 2 + 12));
		*len -= 4;
	}
	return b;
}

static void test_jsr(void)
{
	size_t len;
	uint8_t *bytes = jsr_class(&len, false);
	jinst_class *c;
	jinst_diag d;
	CHECK(jinst_class_parse(&c, bytes, len, NULL, NULL, &d) == 0, "parse the jsr class: %s", d.message);
	jinst_member *m = jinst_class_method(c, 0);
	jinst_edit *ed;
	CHECK(jinst_edit_open(&ed, c, m, NULL, &d) == 0, "open: %s", d.message);
	/* 40,000 nops between the jsr and its subroutine. */
	static jinst_insn nops[40000];
	CHECK(jinst_edit_insert(ed, jinst_edit_at(ed, 5), JINST_BEFORE_INSIDE, nops, 40000, NULL) == 0, "insert");
	CHECK(jinst_edit_commit(ed, &d) == 0, "commit: %s", d.message);
	jinst_insn *ni;
	uint32_t nn = decode(c, m, &ni, NULL, NULL);
	CHECK(nn > 0 && ni[0].opcode == JINST_OP_JSR_W && (uint32_t)ni[0].operand == jinst_node_offset(jinst_edit_at(ed, 6)),
	      "jsr widened to jsr_w, to the subroutine");
	CHECK(jinst_node_offset(jinst_edit_at(ed, 6)) == 6 + 2 + 40000, "subroutine moved by the nops and the jsr_w");
	jinst_code *code = code_of(c, m);
	CHECK(code->max_stack == 2 && !sub_model(c, code, JINST_ATTR_STACK_MAP_TABLE),
	      "max_stack kept, no StackMapTable for version 49");
	uint8_t *out = NULL;
	size_t olen;
	CHECK(jinst_class_write(c, NULL, &out, &olen, &d) == 0, "write: %s", d.message);
	free(out);
	jinst_class_free(c);
	free(bytes);
}

/* Class files before 45.3 hold max_stack and max_locals in one byte: 255
 * is their limit (JVMS 4.7.3, 4.11). */
static void test_old_layout(void)
{
	size_t len;
	uint8_t *bytes = jsr_class(&len, true);
	jinst_class *c;
	jinst_diag d;
	CHECK(jinst_class_parse(&c, bytes, len, NULL, NULL, &d) == 0, "parse the 45.0 class: %s", d.message);
	jinst_member *m = jinst_class_method(c, 0);
	CHECK(code_of(c, m) && code_of(c, m)->max_stack == 2 && code_of(c, m)->code_length == 10, "old Code layout read");
	static jinst_insn pushes[300];
	for (int i = 0; i < 300; i++)
		pushes[i].opcode = JINST_OP_ICONST_0; /* iconst_0, left on the stack under the ireturn's value */
	jinst_edit *ed;
	CHECK(jinst_edit_open(&ed, c, m, NULL, &d) == 0, "open: %s", d.message);
	CHECK(jinst_edit_insert(ed, jinst_edit_at(ed, 3), JINST_BEFORE_INSIDE, pushes, 300, NULL) == 0, "insert");
	int rc = jinst_edit_commit(ed, &d);
	CHECK(rc == JINST_ETOOLARGE, "max_stack 301 in a 45.0 class: %s (%s)", jinst_strerror(rc), d.message);
	uint8_t *out = NULL;
	size_t olen;
	CHECK(jinst_class_write(c, NULL, &out, &olen, &d) == 0 && olen == len && !memcmp(out, bytes, len),
	      "the 45.0 class is unchanged");
	free(out);
	/* 200 fit: written in the old layout, read back. */
	CHECK(jinst_edit_open(&ed, c, m, NULL, &d) == 0, "open: %s", d.message);
	CHECK(jinst_edit_insert(ed, jinst_edit_at(ed, 3), JINST_BEFORE_INSIDE, pushes, 200, NULL) == 0, "insert");
	CHECK(jinst_edit_commit(ed, &d) == 0, "commit: %s", d.message);
	CHECK(jinst_class_write(c, NULL, &out, &olen, &d) == 0, "write: %s", d.message);
	jinst_class *again = NULL;
	CHECK(jinst_class_parse(&again, out, olen, NULL, NULL, &d) == 0, "reparse: %s", d.message);
	jinst_member *m2 = jinst_class_method(again, 0);
	CHECK(code_of(again, m2)->max_stack == 201 && code_of(again, m2)->code_length == 210, "max_stack %u, %u bytes",
	      code_of(again, m2)->max_stack, code_of(again, m2)->code_length);
	jinst_class_free(again);
	free(out);
	jinst_class_free(c);
	free(bytes);
}

/* ---- errors leave the method exactly as it was ---- */

static void unchanged(loaded *l, const char *what)
{
	uint8_t *out = NULL;
	size_t len;
	jinst_diag d;
	int rc = jinst_class_write(l->c, NULL, &out, &len, &d);
	CHECK(rc == 0 && len >= l->len, "%s: write", what);
	if (rc == 0) {
		bool same = len == l->len && memcmp(out, l->bytes, len) == 0;
		CHECK(same, "%s: the class is not byte for byte the original (%zu vs %zu bytes)", what, len, l->len);
		free(out);
	}
}

static void test_errors(void)
{
	jinst_diag d;
	jinst_edit *ed;
	static jinst_insn big[70000];
	/* Code over 65,535 bytes. */
	{
		loaded l = load();
		jinst_member *m = test_method(l.c, "loop", "(I)I");
		jinst_edit_open(&ed, l.c, m, NULL, &d);
		CHECK(jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_BEFORE_OUTSIDE, big, 70000, NULL) == 0, "insert");
		int rc = jinst_edit_commit(ed, &d);
		CHECK(rc == JINST_ETOOLARGE, "70,000 nops: %s (%s)", jinst_strerror(rc), d.message);
		CHECK(strstr(d.where, "loop") != NULL, "diagnostic names the method: %s", d.where);
		unchanged(&l, "code too large");
		unload(&l);
	}
	/* max_stack over 65,535: 32,768 dconst_0 left on the stack before a return. */
	{
		loaded l = load();
		jinst_member *m = test_method(l.c, "guard", "(I)V");
		jinst_edit_open(&ed, l.c, m, NULL, &d);
		for (int i = 0; i < 32768; i++)
			big[i].opcode = JINST_OP_DCONST_0;
		jinst_node *ret = jinst_edit_last(ed);
		while (ret && (!jinst_node_insn(ret) || jinst_node_insn(ret)->opcode != JINST_OP_RETURN))
			ret = jinst_node_prev(ret);
		CHECK(jinst_edit_insert(ed, ret, JINST_BEFORE_INSIDE, big, 32768, NULL) == 0, "insert");
		int rc = jinst_edit_commit(ed, &d);
		CHECK(rc == JINST_ETOOLARGE, "max_stack 65536+: %s (%s)", jinst_strerror(rc), d.message);
		unchanged(&l, "max_stack");
		memset(big, 0, sizeof(big));
		unload(&l);
	}
	/* max_locals: the allocator refuses past 65,535. */
	{
		loaded l = load();
		jinst_edit_open(&ed, l.c, test_method(l.c, "loop", "(I)I"), NULL, &d);
		uint16_t idx = 0;
		int rc = 0;
		while (!rc)
			rc = jinst_edit_new_local(ed, JINST_VT_LONG, &idx);
		CHECK(rc == JINST_ETOOLARGE && jinst_edit_max_locals(ed) >= 65534, "max_locals limit: %s at %u",
		      jinst_strerror(rc), jinst_edit_max_locals(ed));
		jinst_edit_free(ed);
		unchanged(&l, "max_locals");
		unload(&l);
	}
	/* A branch to a label never placed. */
	{
		loaded l = load();
		jinst_edit_open(&ed, l.c, test_method(l.c, "loop", "(I)I"), NULL, &d);
		jinst_label nowhere;
		jinst_edit_new_label(ed, &nowhere);
		jinst_insn g = {.opcode = JINST_OP_GOTO, .operand = (int32_t)nowhere};
		jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_BEFORE_OUTSIDE, &g, 1, NULL);
		int rc = jinst_edit_commit(ed, &d);
		CHECK(rc == JINST_EINVAL, "unplaced label: %s (%s)", jinst_strerror(rc), d.message);
		unchanged(&l, "unplaced label");
		unload(&l);
	}
	/* Unbalanced: a pop on an empty stack; a push before a loop's back edge. */
	{
		loaded l = load();
		jinst_edit_open(&ed, l.c, test_method(l.c, "loop", "(I)I"), NULL, &d);
		jinst_insn pop = {.opcode = JINST_OP_POP};
		jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_BEFORE_OUTSIDE, &pop, 1, NULL);
		int rc = jinst_edit_commit(ed, &d);
		CHECK(rc == JINST_EMALFORMED && strstr(d.message, "underflow"), "underflow: %s (%s)", jinst_strerror(rc),
		      d.message);
		unchanged(&l, "underflow");
		unload(&l);
	}
	{
		loaded l = load();
		jinst_member *m = test_method(l.c, "loop", "(I)I");
		jinst_edit_open(&ed, l.c, m, NULL, &d);
		jinst_node *g = NULL;
		for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n))
			if (jinst_node_insn(n) && jinst_node_insn(n)->opcode == JINST_OP_GOTO)
				g = n;
		jinst_insn push = {.opcode = JINST_OP_ICONST_0};
		jinst_edit_insert(ed, g, JINST_BEFORE_INSIDE, &push, 1, NULL);
		int rc = jinst_edit_commit(ed, &d);
		CHECK(rc == JINST_EMALFORMED && strstr(d.message, "meet"), "merge: %s (%s)", jinst_strerror(rc), d.message);
		unchanged(&l, "merge");
		unload(&l);
	}
	/* A handler label at the very end of the code. */
	{
		loaded l = load();
		jinst_edit_open(&ed, l.c, test_method(l.c, "loop", "(I)I"), NULL, &d);
		jinst_label s;
		jinst_edit_label_at(ed, 0, &s);
		jinst_edit_add_handler(ed, s, jinst_edit_end_label(ed), jinst_edit_end_label(ed), 0);
		int rc = jinst_edit_commit(ed, &d);
		CHECK(rc == JINST_EINVAL, "handler at the end: %s (%s)", jinst_strerror(rc), d.message);
		unchanged(&l, "handler at end");
		unload(&l);
	}
	/* Over 65,535 exception entries. */
	{
		loaded l = load();
		jinst_edit_open(&ed, l.c, test_method(l.c, "loop", "(I)I"), NULL, &d);
		jinst_label s, h;
		jinst_edit_label_at(ed, 0, &s);
		jinst_edit_new_label(ed, &h);
		jinst_insn rethrow[2] = {{.opcode = JINST_OP_LABEL, .operand = (int32_t)h}, {.opcode = JINST_OP_ATHROW}};
		jinst_edit_insert(ed, NULL, JINST_AFTER, rethrow, 2, NULL);
		int rc = 0;
		for (int i = 0; i < 65536 && !rc; i++)
			rc = jinst_edit_add_handler(ed, s, jinst_edit_end_label(ed), h, 0);
		CHECK(rc == 0, "add handlers");
		rc = jinst_edit_commit(ed, &d);
		CHECK(rc == JINST_ETOOLARGE, "65,536 handlers: %s (%s)", jinst_strerror(rc), d.message);
		unchanged(&l, "exception table");
		unload(&l);
	}
	/* Refused insertions: an invalid opcode, a label placed twice, a bad label. */
	{
		loaded l = load();
		jinst_edit_open(&ed, l.c, test_method(l.c, "loop", "(I)I"), NULL, &d);
		jinst_insn bad = {.opcode = 0xcb};
		CHECK(jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_AFTER, &bad, 1, NULL) == JINST_EINVAL,
		      "opcode 0xcb refused");
		jinst_insn wide = {.opcode = JINST_OP_WIDE};
		CHECK(jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_AFTER, &wide, 1, NULL) == JINST_EINVAL,
		      "a bare wide refused");
		jinst_insn br = {.opcode = JINST_OP_IFEQ, .operand = 999999};
		CHECK(jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_AFTER, &br, 1, NULL) == JINST_EINVAL,
		      "unknown label refused");
		jinst_label x;
		jinst_edit_new_label(ed, &x);
		CHECK(jinst_edit_place(ed, x, jinst_edit_first_insn(ed), JINST_AFTER) == 0, "place");
		CHECK(jinst_edit_place(ed, x, jinst_edit_first_insn(ed), JINST_AFTER) == JINST_EINVAL, "placed twice");
		jinst_edit_free(ed);
		unchanged(&l, "refused insertions");
		unload(&l);
	}
	/* No change: nothing is re-encoded. */
	{
		loaded l = load();
		jinst_edit_open(&ed, l.c, test_method(l.c, "tryCatch", NULL), NULL, &d);
		CHECK(jinst_edit_commit(ed, &d) == 0, "empty commit");
		unchanged(&l, "no edit");
		unload(&l);
	}
}

/* ---- the tracing pass's shapes ---- */

/* Entry outside, exits inside, a catch-all at the end; in `times` mode a
 * long local holds System.nanoTime() from the entry on. */
static void hooks(const char *name, const char *desc, bool times)
{
	loaded l = load();
	jinst_class *c = l.c;
	jinst_member *m = test_method(c, name, desc);
	orig_state o = snapshot(c, m);
	uint16_t enter = 0, exit_ = 0, exit_throw = 0, nano = 0;
	const char *xd = times ? "(IJ)V" : "(I)V";
	CHECK(!jinst_cp_add_methodref(c, "jinst/Hooks", "enter", "(I)V", &enter) &&
	          !jinst_cp_add_methodref(c, "jinst/Hooks", "exit", xd, &exit_) &&
	          !jinst_cp_add_methodref(c, "jinst/Hooks", "exitThrow", xd, &exit_throw) &&
	          !jinst_cp_add_methodref(c, "java/lang/System", "nanoTime", "()J", &nano),
	      "pool");
	jinst_edit *ed;
	jinst_diag d;
	CHECK(jinst_edit_open(&ed, c, m, NULL, &d) == 0, "open: %s", d.message);
	uint16_t t0 = 0;
	if (times) {
		CHECK(jinst_edit_new_local(ed, JINST_VT_LONG, &t0) == 0, "local");
		CHECK(t0 == code_of(c, m)->max_locals, "the new local is at the old max_locals");
		jinst_ftype lt = {JINST_VT_LONG, 0, 0, NULL};
		CHECK(jinst_edit_declare_local(ed, t0, &lt) == 0, "declare");
	}
	jinst_insn entry[4] = {{.opcode = JINST_OP_SIPUSH, .operand = 7}, {.opcode = JINST_OP_INVOKESTATIC, .operand = enter},
	                       {.opcode = JINST_OP_INVOKESTATIC, .operand = nano}, {.opcode = JINST_OP_LSTORE, .operand = t0}};
	jinst_insn ex[3] = {{.opcode = JINST_OP_SIPUSH, .operand = 7}, {.opcode = JINST_OP_LLOAD, .operand = t0}, {.opcode = JINST_OP_INVOKESTATIC, .operand = exit_}};
	if (!times)
		ex[1] = ex[2];
	uint32_t nex_code = times ? 3 : 2, nentry = times ? 4 : 2;
	uint32_t entry_bytes = times ? 3 + 3 + 3 + 2 : 6, exit_bytes = times ? 3 + 2 + 3 : 6;
	for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n)) {
		const jinst_insn *in = jinst_node_insn(n);
		if (in && in->opcode >= JINST_OP_IRETURN && in->opcode <= JINST_OP_RETURN && jinst_node_original_offset(n) != JINST_NO_OFFSET)
			CHECK(jinst_edit_insert(ed, n, JINST_BEFORE_INSIDE, ex, nex_code, NULL) == 0, "exit");
	}
	jinst_node *first = jinst_edit_first_insn(ed);
	jinst_label start, handler;
	jinst_edit_new_label(ed, &start);
	jinst_edit_new_label(ed, &handler);
	bool ctor = strcmp(name, "<init>") == 0;
	jinst_node *super_call = NULL;
	if (ctor) {
		for (jinst_node *n = first; n && !super_call; n = jinst_node_next(n))
			if (jinst_node_insn(n) && jinst_node_insn(n)->opcode == JINST_OP_INVOKESPECIAL)
				super_call = n;
		CHECK(jinst_edit_place(ed, start, super_call, JINST_AFTER) == 0, "start after super()");
	} else {
		CHECK(jinst_edit_place(ed, start, first, JINST_BEFORE_OUTSIDE) == 0, "start");
	}
	CHECK(jinst_edit_insert(ed, first, JINST_BEFORE_OUTSIDE, entry, nentry, NULL) == 0, "entry");
	jinst_insn h[5] = {{.opcode = JINST_OP_LABEL, .operand = (int32_t)handler}, {.opcode = JINST_OP_SIPUSH, .operand = 7},
	                   {.opcode = JINST_OP_LLOAD, .operand = t0}, {.opcode = JINST_OP_INVOKESTATIC, .operand = exit_throw}, {.opcode = JINST_OP_ATHROW}};
	if (!times)
		h[2] = h[3], h[3] = h[4];
	CHECK(jinst_edit_insert(ed, NULL, JINST_AFTER, h, times ? 5 : 4, NULL) == 0, "handler code");
	CHECK(jinst_edit_add_handler(ed, start, jinst_edit_end_label(ed), handler, 0) == 0, "catch-all");
	jinst_ftype hl[300];
	for (uint16_t i = 0; i < 300; i++)
		hl[i] = (jinst_ftype){JINST_VT_TOP, 0, 0, NULL};
	jinst_ftype thr = {JINST_VT_OBJECT, 0, 19, (const uint8_t *)"java/lang/Throwable"};
	jinst_full_frame hf = {0, 0, 1, hl, &thr};
	if (times) { /* top up to the long: the handler reads it */
		uint16_t k = 0;
		for (uint32_t s = 0; s < t0; s++)
			hl[k++] = (jinst_ftype){JINST_VT_TOP, 0, 0, NULL};
		hl[k++] = (jinst_ftype){JINST_VT_LONG, 0, 0, NULL};
		hf.nlocals = k;
	}
	CHECK(jinst_edit_set_frame(ed, handler, &hf) == 0, "handler frame");
	int rc = jinst_edit_commit(ed, &d);
	CHECK(rc == 0, "%s: commit: %s", name, d.message);
	if (rc) {
		unload(&l);
		return;
	}
	jinst_code *code = code_of(c, m);
	jinst_insn *ni;
	jinst_full_frame *nf;
	uint32_t nnf, nn = decode(c, m, &ni, &nf, &nnf);
	/* The entry code is first (outside: nothing jumps to it). */
	CHECK(nn && ni[0].opcode == JINST_OP_SIPUSH && ni[1].opcode == JINST_OP_INVOKESTATIC && (uint32_t)ni[1].operand == enter, "%s: entry first",
	      name);
	uint32_t first_new = jinst_node_offset(first);
	CHECK(first_new == entry_bytes, "%s: first original instruction at %u", name, first_new);
	for (uint32_t i = 0; i < o.n; i++) {
		const jinst_insn *a = &o.insns[i];
		enum jinst_operand_kind k = jinst_opcode_operands(a->opcode);
		if (k != JINST_OPND_BRANCH2)
			continue;
		const jinst_insn *b = insn_at(ni, nn, jinst_node_offset(jinst_edit_at(ed, a->offset)));
		const jinst_insn *t = &o.insns[insn_index(&o, (uint32_t)a->operand)];
		uint32_t expect = jinst_node_offset(jinst_edit_at(ed, t->offset));
		if (t->opcode >= JINST_OP_IRETURN && t->opcode <= JINST_OP_RETURN)
			expect -= exit_bytes; /* a jump to a return runs the exit hook */
		CHECK(b && (uint32_t)b->operand == expect, "%s: branch at %u lands at %d, expected %u", name,
		      b ? b->offset : 0, b ? b->operand : -1, expect);
		CHECK(b && b->operand != 0, "%s: no branch runs the entry hook again", name);
	}
	/* Every return is preceded by its exit call. */
	uint32_t returns = 0;
	for (uint32_t i = 0; i < nn; i++) {
		if (ni[i].opcode < JINST_OP_IRETURN || ni[i].opcode > JINST_OP_RETURN)
			continue;
		returns++;
		CHECK(i >= 1 && ni[i - 1].opcode == JINST_OP_INVOKESTATIC && (uint32_t)ni[i - 1].operand == exit_, "%s: exit before return",
		      name);
	}
	CHECK(returns == count_op(o.insns, o.n, JINST_OP_IRETURN) + count_op(o.insns, o.n, JINST_OP_LRETURN) + count_op(o.insns, o.n, JINST_OP_ARETURN) +
	                     count_op(o.insns, o.n, JINST_OP_RETURN), "%s: returns", name);
	/* The catch-all is the last entry, from after the entry code (or the
	 * super call) to the handler, which ends the code. */
	const jinst_exception_entry *e = &code->exceptions[code->exception_count - 1];
	CHECK(code->exception_count == o.nex + 1, "%s: one entry added", name);
	uint32_t start_at = ctor ? jinst_node_offset(super_call) + 3 : entry_bytes;
	CHECK(e->start_pc == start_at && e->catch_type == 0 && e->end_pc == e->handler_pc,
	      "%s: catch-all %u-%u->%u, expected from %u", name, e->start_pc, e->end_pc, e->handler_pc, start_at);
	CHECK(ni[nn - 1].opcode == JINST_OP_ATHROW && e->handler_pc == code->code_length - (times ? 9 : 7),
	      "%s: handler at the end", name);
	for (uint16_t i = 0; i < o.nex; i++)
		CHECK(code->exceptions[i].catch_type == o.ex[i].catch_type, "%s: inner handlers first", name);
	/* Frames: the handler's as given; in times mode the long in every
	 * original frame (JVMS: after the store, before any of them). */
	const jinst_full_frame *hfr = NULL;
	for (uint32_t j = 0; j < nnf; j++)
		if (nf[j].offset == e->handler_pc)
			hfr = &nf[j];
	CHECK(hfr && hfr->nstack == 1 && hfr->stack[0].name_length == 19, "%s: handler frame", name);
	if (times) {
		CHECK(code->max_locals == t0 + 2, "%s: max_locals %u", name, code->max_locals);
		for (uint32_t j = 0; j < nnf; j++) {
			if (&nf[j] == hfr)
				continue;
			uint32_t slot = 0;
			bool found = false;
			for (uint16_t i = 0; i < nf[j].nlocals; i++) {
				if (slot == t0)
					found = nf[j].locals[i].tag == JINST_VT_LONG;
				slot += nf[j].locals[i].tag == JINST_VT_LONG || nf[j].locals[i].tag == JINST_VT_DOUBLE ? 2 : 1;
			}
			CHECK(found, "%s: frame at %u declares the long at %u", name, nf[j].offset, t0);
		}
	}
	CHECK(code->max_stack >= (times ? 3 : 1), "%s: max_stack %u", name, code->max_stack);
	uint8_t *out = NULL;
	size_t len;
	CHECK(jinst_class_write(c, NULL, &out, &len, &d) == 0, "%s: write: %s", name, d.message);
	free(out);
	free(o.ex);
	unload(&l);
}

static void test_hooks(void)
{
	for (int times = 0; times < 2; times++) {
		hooks("whileAtStart", "(I)I", times);
		hooks("guard", "(I)V", times);
		hooks("tryCatch", "(Ljava/lang/String;)I", times);
		hooks("table", "(I)Ljava/lang/String;", times);
		hooks("nested", "(II)I", times);
		hooks("uninit", "(Z)Ljava/lang/String;", times);
		hooks("<init>", "(I)V", times);
		hooks("longs", "(JD)J", times);
	}
}

/* ---- encodings chosen for the caller ---- */

static void test_encodings(void)
{
	loaded l = load();
	jinst_class *c = l.c;
	jinst_member *m = test_method(c, "loop", "(I)I");
	uint16_t idx = 0;
	for (int v = 1000; jinst_cp_count(c) < 300; v++)
		jinst_cp_add_integer(c, v, &idx);
	CHECK(idx > 255, "a constant above 255 (#%u)", idx);
	jinst_edit *ed;
	jinst_diag d;
	jinst_edit_open(&ed, c, m, NULL, &d);
	uint16_t local = 0;
	for (int i = 0; i < 300; i++)
		jinst_edit_new_local(ed, JINST_VT_INTEGER, &local);
	CHECK(local > 255, "a local above 255 (%u)", local);
	jinst_insn seq[5] = {{.opcode = JINST_OP_LDC, .operand = idx}, {.opcode = JINST_OP_ISTORE, .operand = local},
	                     {.opcode = JINST_OP_IINC, .operand = local, .operand2 = 1000}, {.opcode = JINST_OP_IINC, .operand = 3, .operand2 = -5},
	                     {.opcode = JINST_OP_ILOAD, .operand = 4}};
	jinst_insn tail[1] = {{.opcode = JINST_OP_POP}};
	CHECK(jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_BEFORE_OUTSIDE, seq, 5, NULL) == 0, "insert");
	CHECK(jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_BEFORE_OUTSIDE, tail, 1, NULL) == 0, "insert");
	CHECK(jinst_edit_commit(ed, &d) == 0, "commit: %s", d.message);
	jinst_insn *ni;
	uint32_t nn = decode(c, m, &ni, NULL, NULL);
	CHECK(nn > 6 && ni[0].opcode == JINST_OP_LDC_W && ni[0].operand == idx && ni[0].offset == 0, "ldc -> ldc_w");
	CHECK(ni[1].opcode == JINST_OP_ISTORE && ni[1].wide && ni[1].operand == local && ni[1].offset == 3, "wide istore");
	CHECK(ni[2].opcode == JINST_OP_IINC && ni[2].wide && ni[2].operand2 == 1000 && ni[2].offset == 7, "wide iinc");
	CHECK(ni[3].opcode == JINST_OP_IINC && !ni[3].wide && ni[3].operand2 == -5 && ni[3].offset == 13, "short iinc");
	CHECK(ni[4].opcode == JINST_OP_ILOAD && !ni[4].wide && ni[4].offset == 16, "short iload");
	CHECK(code_of(c, m)->max_locals == local + 1, "max_locals %u", code_of(c, m)->max_locals);
	unload(&l);
}

/* ---- remove and replace ---- */

static void test_replace(void)
{
	loaded l = load();
	jinst_member *m = test_method(l.c, "loop", "(I)I");
	orig_state o = snapshot(l.c, m);
	uint32_t iinc = UINT32_MAX;
	for (uint32_t i = 0; i < o.n; i++)
		if (o.insns[i].opcode == JINST_OP_IINC)
			iinc = i;
	jinst_edit *ed;
	jinst_diag d;
	jinst_edit_open(&ed, l.c, m, NULL, &d);
	/* iinc i,1 is the target of nothing but follows the body; replace it by
	 * iload; iconst_1; iadd; istore, and the first iconst_0 by bipush 0. */
	int32_t local = o.insns[iinc].operand;
	jinst_insn add[4] = {{.opcode = JINST_OP_ILOAD, .operand = local}, {.opcode = JINST_OP_ICONST_1}, {.opcode = JINST_OP_IADD},
	                     {.opcode = JINST_OP_ISTORE, .operand = local}};
	CHECK(jinst_edit_replace(ed, jinst_edit_at(ed, o.insns[iinc].offset), add, 4) == 0, "replace iinc");
	jinst_insn b0 = {.opcode = JINST_OP_BIPUSH, .operand = 0};
	CHECK(jinst_edit_replace(ed, jinst_edit_at(ed, 0), &b0, 1) == 0, "replace iconst_0");
	CHECK(jinst_edit_at(ed, 0) == NULL, "the replaced node is gone");
	CHECK(jinst_edit_remove(ed, jinst_edit_at(ed, 0)) == JINST_EINVAL, "removing nothing is refused");
	CHECK(jinst_edit_commit(ed, &d) == 0, "commit: %s", d.message);
	jinst_insn *ni;
	jinst_full_frame *nf;
	uint32_t nnf, nn = decode(l.c, m, &ni, &nf, &nnf);
	CHECK(nn == o.n + 3 && ni[0].opcode == JINST_OP_BIPUSH && ni[1].offset == 2, "bipush first");
	uint32_t at = o.insns[iinc].offset + 1;
	const jinst_insn *r = insn_at(ni, nn, at);
	CHECK(r && r->opcode == JINST_OP_ILOAD && r[1].opcode == JINST_OP_ICONST_1 && r[2].opcode == JINST_OP_IADD && r[3].opcode == JINST_OP_ISTORE,
	      "replacement in place at %u", at);
	CHECK(nnf == o.nframes, "frames kept");
	free(o.ex);
	unload(&l);
}

/* ---- jinst_edit_frame_before ---- */

static void test_frame_before(void)
{
	loaded l = load();
	jinst_member *m = test_method(l.c, "loop", "(I)I");
	orig_state o = snapshot(l.c, m);
	jinst_edit *ed;
	jinst_diag d;
	jinst_edit_open(&ed, l.c, m, NULL, &d);
	/* At each original frame's instruction: that frame. */
	for (uint32_t j = 0; j < o.nframes; j++) {
		jinst_full_frame f;
		CHECK(jinst_edit_frame_before(ed, jinst_edit_at(ed, o.frames[j].offset), &f, &d) == 0, "frame_before: %s",
		      d.message);
		bool same = f.nlocals == o.frames[j].nlocals && f.nstack == o.frames[j].nstack;
		for (uint16_t k = 0; same && k < f.nlocals; k++)
			same = ftype_eq(&f.locals[k], &o.frames[j].locals[k]);
		CHECK(same, "frame before pc %u is the original frame there", o.frames[j].offset);
	}
	/* Before the if_icmpge: n, sum, i in the locals; i and n on the stack. */
	for (uint32_t i = 0; i < o.n; i++) {
		if (o.insns[i].opcode != JINST_OP_IF_ICMPGE)
			continue;
		jinst_full_frame f;
		CHECK(jinst_edit_frame_before(ed, jinst_edit_at(ed, o.insns[i].offset), &f, &d) == 0, "frame_before");
		CHECK(f.nlocals == 3 && f.nstack == 2 && f.stack[0].tag == JINST_VT_INTEGER && f.stack[1].tag == JINST_VT_INTEGER,
		      "frame before if_icmpge: %u locals, %u stack", f.nlocals, f.nstack);
	}
	/* In a constructor, before the super call: uninitializedThis. */
	jinst_edit_free(ed);
	jinst_member *ctor = test_method(l.c, "<init>", "(I)V");
	jinst_edit_open(&ed, l.c, ctor, NULL, &d);
	jinst_node *call = NULL;
	for (jinst_node *n = jinst_edit_first(ed); n && !call; n = jinst_node_next(n))
		if (jinst_node_insn(n) && jinst_node_insn(n)->opcode == JINST_OP_INVOKESPECIAL)
			call = n;
	jinst_full_frame f;
	CHECK(call && jinst_edit_frame_before(ed, call, &f, &d) == 0 && f.nstack == 1 &&
	          f.stack[0].tag == JINST_VT_UNINITIALIZED_THIS, "uninitializedThis before super()");
	CHECK(jinst_edit_frame_before(ed, jinst_node_next(call), &f, &d) == 0 && f.nstack == 0 &&
	          f.locals[0].tag == JINST_VT_OBJECT, "this initialized after super()");
	jinst_edit_free(ed);
	free(o.ex);
	unload(&l);
}

/* ---- untouched methods are copied byte for byte ---- */

static void test_untouched(void)
{
	loaded l = load();
	jinst_edit *ed;
	jinst_diag d;
	jinst_edit_open(&ed, l.c, test_method(l.c, "loop", "(I)I"), NULL, &d);
	jinst_insn nop = {.opcode = JINST_OP_NOP};
	jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_BEFORE_OUTSIDE, &nop, 1, NULL);
	CHECK(jinst_edit_commit(ed, &d) == 0, "commit: %s", d.message);
	uint8_t *out = NULL;
	size_t len;
	jinst_class *c2 = NULL;
	CHECK(jinst_class_write(l.c, NULL, &out, &len, &d) == 0 && jinst_class_parse(&c2, out, len, NULL, NULL, &d) == 0,
	      "write and parse: %s", d.message);
	unsigned same = 0, edited = 0;
	for (uint16_t i = 0; i < jinst_class_method_count(c2); i++) {
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(jinst_class_method(l.c, i)), JINST_ATTR_CODE);
		jinst_attr *b = jinst_attr_find(jinst_member_attrs(jinst_class_method(c2, i)), JINST_ATTR_CODE);
		if (!a || !b)
			continue;
		uint16_t nl;
		const uint8_t *name = jinst_cp_utf8(l.c, jinst_member_name_index(jinst_class_method(l.c, i)), &nl);
		bool is_loop = nl == 4 && !memcmp(name, "loop", 4);
		/* a->info is the original attribute (the model changed, not the info). */
		bool eq = a->length == b->length && !memcmp(a->info, b->info, a->length);
		if (is_loop)
			edited += !eq && b->length == a->length + 1;
		else
			same += eq;
		CHECK(is_loop ? !eq : eq, "method %.*s: Code %s", nl, name, is_loop ? "unchanged" : "changed");
	}
	CHECK(edited == 1 && same >= 10, "%u untouched methods copied, %u edited", same, edited);
	jinst_class_free(c2);
	free(out);
	unload(&l);
}

/* ---- outside before inside, whatever the order of the calls ---- */

static void test_sides(void)
{
	loaded l = load();
	jinst_member *m = test_method(l.c, "loop", "(I)I");
	jinst_edit *ed;
	jinst_diag d;
	jinst_edit_open(&ed, l.c, m, NULL, &d);
	jinst_node *first = jinst_edit_first_insn(ed);
	jinst_insn in1 = {.opcode = JINST_OP_NOP}, in2 = {.opcode = JINST_OP_ICONST_0}, in3 = {.opcode = JINST_OP_POP};
	jinst_insn out1[2] = {{.opcode = JINST_OP_ICONST_1}, {.opcode = JINST_OP_POP}}, out2 = {.opcode = JINST_OP_ICONST_2}, out3 = {.opcode = JINST_OP_POP};
	/* inside: nop; then outside: iconst_1 pop; inside: iconst_0 pop; outside: iconst_2 pop */
	CHECK(jinst_edit_insert(ed, first, JINST_BEFORE_INSIDE, &in1, 1, NULL) == 0, "inside 1");
	CHECK(jinst_edit_insert(ed, first, JINST_BEFORE_OUTSIDE, out1, 2, NULL) == 0, "outside 1");
	CHECK(jinst_edit_insert(ed, first, JINST_BEFORE_INSIDE, &in2, 1, NULL) == 0, "inside 2");
	CHECK(jinst_edit_insert(ed, first, JINST_BEFORE_INSIDE, &in3, 1, NULL) == 0, "inside 3");
	CHECK(jinst_edit_insert(ed, first, JINST_BEFORE_OUTSIDE, &out2, 1, NULL) == 0, "outside 2");
	CHECK(jinst_edit_insert(ed, first, JINST_BEFORE_OUTSIDE, &out3, 1, NULL) == 0, "outside 3");
	CHECK(jinst_edit_commit(ed, &d) == 0, "commit: %s", d.message);
	jinst_insn *ni;
	uint32_t nn = decode(l.c, m, &ni, NULL, NULL);
	static const uint8_t expect[] = {0x04, 0x57, 0x05, 0x57, 0x00, 0x03, 0x57, 0x03 /* the original iconst_0 */};
	bool same = nn >= sizeof(expect);
	for (size_t i = 0; same && i < sizeof(expect); i++)
		same = ni[i].opcode == expect[i];
	CHECK(same, "outside code first, each side in call order: %02x %02x %02x %02x %02x %02x %02x %02x", ni[0].opcode, ni[1].opcode, ni[2].opcode, ni[3].opcode, ni[4].opcode, ni[5].opcode, ni[6].opcode, ni[7].opcode);
	unload(&l);
}

/* ---- two passes over the same method ---- */

/* A second editor opens what the first committed (code, tables and frames
 * from the models, not the original bytes) and relocates it again. */
static void test_two_passes(void)
{
	loaded l = load();
	jinst_member *m = test_method(l.c, "tryCatch", NULL);
	orig_state o = snapshot(l.c, m);
	jinst_diag d;
	for (int pass = 0; pass < 2; pass++) {
		jinst_edit *ed;
		CHECK(jinst_edit_open(&ed, l.c, m, NULL, &d) == 0, "pass %d: open: %s", pass, d.message);
		for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n))
			if (jinst_node_insn(n) && jinst_node_original_offset(n) != JINST_NO_OFFSET)
				CHECK(insert_nops(ed, n, JINST_BEFORE_INSIDE, 1) == 0, "insert");
		CHECK(jinst_edit_commit(ed, &d) == 0, "pass %d: commit: %s", pass, d.message);
	}
	/* The second pass sees the first one's nops as its own originals, so
	 * each original instruction i (0-based) is preceded by three nops
	 * (one, then one before it and one before its nop): it sits at its
	 * offset + 3 * (i + 1), and its labels at offset + 3 * i. */
	jinst_insn *ni;
	jinst_full_frame *nf;
	uint32_t nnf, nn = decode(l.c, m, &ni, &nf, &nnf);
	CHECK(nn == 4 * o.n, "%u instructions after two passes, expected %u", nn, 4 * o.n);
	for (uint32_t i = 0; i < o.n; i++) {
		const jinst_insn *b = insn_at(ni, nn, o.insns[i].offset + 3 * (i + 1));
		CHECK(b && b->opcode == o.insns[i].opcode, "instruction %u in place", i);
	}
	CHECK(nnf == o.nframes, "frames: %u, expected %u", nnf, o.nframes);
	for (uint32_t j = 0; j < nnf && j < o.nframes; j++) {
		uint32_t i = insn_index(&o, o.frames[j].offset);
		CHECK(nf[j].offset == o.frames[j].offset + 3 * i, "frame %u at %u", j, nf[j].offset);
	}
	jinst_code *code = code_of(l.c, m);
	for (uint16_t i = 0; i < o.nex; i++) {
		uint32_t si = insn_index(&o, o.ex[i].start_pc), hi = insn_index(&o, o.ex[i].handler_pc);
		CHECK(code->exceptions[i].start_pc == o.ex[i].start_pc + 3 * si &&
		          code->exceptions[i].handler_pc == o.ex[i].handler_pc + 3 * hi,
		      "exception entry %u", i);
	}
	uint8_t *out = NULL;
	size_t len;
	jinst_class *again = NULL;
	CHECK(jinst_class_write(l.c, NULL, &out, &len, &d) == 0 && jinst_class_parse(&again, out, len, NULL, NULL, &d) == 0,
	      "write and parse: %s", d.message);
	jinst_class_free(again);
	free(out);
	free(o.ex);
	unload(&l);
}

/* ---- instructions decoded already (jinst_edit_options.decoded) ---- */

/* One nop before every original instruction of m, opened with opts; the
 * class's bytes after the commit. */
static uint8_t *nops_everywhere(jinst_class *c, jinst_member *m, const jinst_edit_options *opts, size_t *len)
{
	jinst_diag d;
	jinst_edit *ed;
	CHECK(jinst_edit_open(&ed, c, m, opts, &d) == 0, "open: %s", d.message);
	for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n))
		if (jinst_node_insn(n) && jinst_node_original_offset(n) != JINST_NO_OFFSET)
			CHECK(insert_nops(ed, n, JINST_BEFORE_INSIDE, 1) == 0, "insert");
	CHECK(jinst_edit_commit(ed, &d) == 0, "commit: %s", d.message);
	jinst_edit_free(ed);
	uint8_t *out = NULL;
	CHECK(jinst_class_write(c, NULL, &out, len, &d) == 0, "write: %s", d.message);
	return out;
}

/* The editor takes the instructions it is given while the code is still
 * the bytes they came from, decodes again once the code changed, and reads
 * a version 1 caller's options only up to their end. */
static void test_decoded(void)
{
	loaded a = load(), b = load();
	jinst_member *ma = test_method(a.c, "loop", "(I)I"), *mb = test_method(b.c, "loop", "(I)I");
	jinst_insn *insns;
	uint32_t n = decode(a.c, ma, &insns, NULL, NULL);
	const uint8_t *code = code_of(a.c, ma)->code;
	jinst_edit_options given = JINST_EDIT_OPTIONS_INIT;
	given.decoded = insns, given.decoded_count = n, given.decoded_code = code;
	size_t la, lb;
	uint8_t *oa = nops_everywhere(a.c, ma, &given, &la), *ob = nops_everywhere(b.c, mb, NULL, &lb);
	CHECK(la == lb && memcmp(oa, ob, la) == 0, "decoded instructions: the bytes of a decoding editor");
	free(oa), free(ob);
	/* The code changed: the stale instructions are not used. */
	oa = nops_everywhere(a.c, ma, &given, &la), ob = nops_everywhere(b.c, mb, NULL, &lb);
	CHECK(la == lb && memcmp(oa, ob, la) == 0, "stale instructions: decoded again");
	free(oa), free(ob);
	unload(&a), unload(&b);

	/* The list the editor builds is the one it was given: all but the
	 * last instruction given, all but the last found (not committed). */
	a = load();
	ma = test_method(a.c, "loop", "(I)I");
	n = decode(a.c, ma, &insns, NULL, NULL);
	given.decoded = insns, given.decoded_count = n - 1, given.decoded_code = code_of(a.c, ma)->code;
	jinst_diag d;
	jinst_edit *ed;
	CHECK(jinst_edit_open(&ed, a.c, ma, &given, &d) == 0, "open: %s", d.message);
	uint32_t found = 0;
	for (jinst_node *k = jinst_edit_first(ed); k; k = jinst_node_next(k))
		found += jinst_node_insn(k) != NULL;
	CHECK(found == n - 1, "%u instructions in the editor, %u given", found, n - 1);
	jinst_edit_free(ed);
	unload(&a);

	/* Version 1: the fields past its end are not read. */
	a = load(), b = load();
	ma = test_method(a.c, "loop", "(I)I"), mb = test_method(b.c, "loop", "(I)I");
	jinst_edit_options v1 = JINST_EDIT_OPTIONS_INIT;
	v1.version = 1;
	v1.decoded = (const jinst_insn *)&v1, v1.decoded_count = 7, v1.decoded_code = code_of(a.c, ma)->code;
	oa = nops_everywhere(a.c, ma, &v1, &la), ob = nops_everywhere(b.c, mb, NULL, &lb);
	CHECK(la == lb && memcmp(oa, ob, la) == 0, "version 1 options: decoded by the editor");
	free(oa), free(ob);
	unload(&a), unload(&b);
}

/* ---- JINST_EDIT_BALANCED: max_stack without the depth flow ---- */

/* iconst_1; iconst_1; pop2 (two words up, then back) before every
 * original instruction of loop(I)I; its max_stack after the commit. */
static uint32_t two_up_everywhere(uint32_t flags, uint32_t *before)
{
	loaded l = load();
	jinst_member *m = test_method(l.c, "loop", "(I)I");
	*before = code_of(l.c, m)->max_stack;
	jinst_edit_options o = JINST_EDIT_OPTIONS_INIT;
	o.flags = flags;
	jinst_diag d;
	jinst_edit *ed;
	CHECK(jinst_edit_open(&ed, l.c, m, &o, &d) == 0, "open: %s", d.message);
	jinst_insn seq[3] = {{.opcode = JINST_OP_ICONST_1}, {.opcode = JINST_OP_ICONST_1}, {.opcode = JINST_OP_POP2}};
	for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n))
		if (jinst_node_insn(n) && jinst_node_original_offset(n) != JINST_NO_OFFSET)
			CHECK(jinst_edit_insert(ed, n, JINST_BEFORE_INSIDE, seq, 3, NULL) == 0, "insert");
	CHECK(jinst_edit_commit(ed, &d) == 0, "commit: %s", d.message);
	jinst_edit_free(ed);
	uint32_t after = code_of(l.c, m)->max_stack;
	unload(&l);
	return after;
}

/* The bound is the original's plus two, never below the exact figure the
 * depth flow gives (loop's deepest point has no room for two more). */
static void test_balanced(void)
{
	uint32_t before, exact = two_up_everywhere(0, &before), bound = two_up_everywhere(JINST_EDIT_BALANCED, &before);
	CHECK(bound == before + 2, "balanced: max_stack %u, the original's %u plus 2", bound, before);
	CHECK(exact <= bound && exact > before, "exact max_stack %u between %u and %u", exact, before, bound);
}

/* ---- JINST_EDIT_FRAMES_ALL: the same edit, frames recomputed ---- */

static int no_hierarchy(void *ctx, const char *name, const char **super_name, bool *is_interface)
{
	(void)ctx, (void)name, (void)super_name, (void)is_interface;
	return JINST_EHIERARCHY;
}

/* Probes before every instruction, frames kept (the default) or
 * recomputed: both put frames at the same offsets, and the recomputed ones
 * expand again. The methods merge no two class types, so the hierarchy is
 * never asked. */
static void test_frames_all(void)
{
	static const char *const methods[][2] = {
		{"loop", "(I)I"}, {"table", "(I)Ljava/lang/String;"}, {"guard", "(I)V"}, {"whileAtStart", "(I)I"},
		{"uninit", "(Z)Ljava/lang/String;"}, {"lookup", "(I)I"}, {"longs", "(JD)J"},
	};
	jinst_hierarchy h = {no_hierarchy, NULL};
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		uint32_t offsets[2][64], counts[2] = {0, 0};
		for (int mode = 0; mode < 2; mode++) {
			loaded l = load();
			jinst_member *m = test_method(l.c, methods[i][0], methods[i][1]);
			jinst_edit_options opts = JINST_EDIT_OPTIONS_INIT;
			opts.frames = mode ? JINST_EDIT_FRAMES_ALL : JINST_EDIT_FRAMES_KEEP;
			opts.hierarchy = &h;
			jinst_edit *ed;
			jinst_diag d;
			CHECK(jinst_edit_open(&ed, l.c, m, &opts, &d) == 0, "open");
			uint16_t probe;
			jinst_cp_add_methodref(l.c, "jinst/Probe", "probe", "(I)V", &probe);
			for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n)) {
				if (!jinst_node_insn(n) || jinst_node_original_offset(n) == JINST_NO_OFFSET)
					continue;
				jinst_insn seq[2] = {{.opcode = JINST_OP_SIPUSH, .operand = 1}, {.opcode = JINST_OP_INVOKESTATIC, .operand = probe}};
				jinst_edit_insert(ed, n, JINST_BEFORE_INSIDE, seq, 2, NULL);
			}
			int rc = jinst_edit_commit(ed, &d);
			CHECK(rc == 0, "%s mode %d: %s", methods[i][0], mode, d.message);
			jinst_insn *ni;
			jinst_full_frame *nf;
			uint32_t nnf = 0;
			decode(l.c, m, &ni, &nf, &nnf);
			for (uint32_t j = 0; j < nnf && j < 64; j++)
				offsets[mode][j] = nf[j].offset;
			counts[mode] = nnf;
			unload(&l);
		}
		CHECK(counts[0] == counts[1] && counts[0] > 0 &&
		          !memcmp(offsets[0], offsets[1], counts[0] * sizeof(uint32_t)),
		      "%s: %u kept frames, %u recomputed, at the same offsets", methods[i][0], counts[0], counts[1]);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		printf("usage: test_edit CLASSES_DIR\n");
		return 2;
	}
	dir = argv[1];
	test_relocation();
	test_widening();
	test_jsr();
	test_old_layout();
	test_errors();
	test_hooks();
	test_encodings();
	test_replace();
	test_frames_all();
	test_two_passes();
	test_sides();
	test_untouched();
	test_frame_before();
	test_decoded();
	test_balanced();
	return check_report();
}
