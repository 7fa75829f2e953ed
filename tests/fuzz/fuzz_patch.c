/*
 * libFuzzer target for the code patcher (include/jinst/patch.h).
 *
 * The input is a class file; the choices come from a hash of it, so one
 * input is one deterministic run. Once the class parses, each method with
 * code is opened by the patcher (or declined with a diagnostic, the method
 * untouched), gets 1 to 4 stack-neutral insertions (`nop`s, `iconst_0;
 * pop`, or a static call with a constant argument) at chosen instructions,
 * outside or inside, sometimes an appended catch-all handler over a chosen
 * range, and is committed. A failed commit leaves the method exactly as it
 * was. The same choices go through the code editor on a second copy of
 * the class. The patched class must write and parse again; for every
 * patched method whose original code decodes and whose frames expand, the
 * new code must decode and its frames expand, and where the editor
 * succeeded too, code bytes, exception table and expanded frames must be
 * the editor's. The same run again must give the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_classfile.h"
#include "jinst/classfile.h"
#include "jinst/edit.h"
#include "jinst/patch.h"

typedef struct choice {
	uint32_t offset;
	enum jinst_where where;
	uint8_t bytes[6];
	uint32_t len;
	uint16_t depth;
	jinst_insn insns[4];
	uint32_t n;
} choice;

typedef struct plan {
	choice c[4];
	uint32_t count;
	bool handler;
	uint32_t start, end; /* the handler's range, original offsets */
} plan;

static void pick(choice *c, uint32_t r, uint16_t probe, bool have_probe)
{
	memset(c, 0, sizeof(*c));
	if (have_probe && (r & 1)) {
		uint16_t id = (uint16_t)(r >> 8 & 0x7fff);
		uint8_t b[6] = {0x11, (uint8_t)(id >> 8), (uint8_t)id, 0xb8, (uint8_t)(probe >> 8), (uint8_t)probe};
		memcpy(c->bytes, b, 6);
		c->len = 6;
		c->depth = 1;
		c->insns[0] = (jinst_insn){.opcode = JINST_OP_SIPUSH, .operand = id};
		c->insns[1] = (jinst_insn){.opcode = JINST_OP_INVOKESTATIC, .operand = probe};
		c->n = 2;
	} else if (r & 2) {
		c->bytes[0] = JINST_OP_ICONST_0;
		c->bytes[1] = JINST_OP_POP;
		c->len = 2;
		c->depth = 1;
		c->insns[0] = (jinst_insn){.opcode = JINST_OP_ICONST_0};
		c->insns[1] = (jinst_insn){.opcode = JINST_OP_POP};
		c->n = 2;
	} else {
		c->len = c->n = 1 + (r >> 4) % 3; /* nops */
	}
}

static bool patched[65536], compare[65536], orig_ok[65536];

static bool method_sound_d(jinst_class *c, jinst_member *m, jinst_diag *dd);

static bool method_sound(jinst_class *c, jinst_member *m)
{
	bool ok = false;
	jinst_diag d;
	d.message[0] = 0;
	ok = method_sound_d(c, m, &d);
	if (!ok && getenv("FUZZ_PATCH_DEBUG"))
		fprintf(stderr, "unsound: %s (%s)\n", d.message, d.where);
	return ok;
}
static bool method_sound_d(jinst_class *c, jinst_member *m, jinst_diag *dd)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	void *model;
	jinst_diag *d = dd;
	if (!a || jinst_attr_decode(c, a, &model, d))
		return false;
	jinst_code *code = model;
	jinst_insn *insns;
	uint32_t count;
	if (jinst_code_decode(c, code, &insns, &count, d))
		return false;
	jinst_attr *sa = jinst_attr_find(&code->attrs, JINST_ATTR_STACK_MAP_TABLE);
	jinst_full_frame *frames;
	if (sa && (jinst_attr_decode(c, sa, &model, d) || jinst_stack_map_expand(c, m, model, &frames, d)))
		return false;
	return true;
}

/* Whether the method's max_stack covers what its code needs, as the
 * editor computes it (the patcher trusts it and adds to it). */
static bool max_stack_sound(jinst_class *c, jinst_member *m)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	void *model;
	if (!a || jinst_attr_decode(c, a, &model, NULL))
		return false;
	uint16_t declared = ((jinst_code *)model)->max_stack;
	jinst_edit_options o = JINST_EDIT_OPTIONS_INIT;
	o.flags = JINST_EDIT_REENCODE;
	jinst_edit *ed;
	if (jinst_edit_open(&ed, c, m, &o, NULL))
		return false;
	int rc = jinst_edit_commit(ed, NULL);
	jinst_edit_free(ed);
	return rc == 0 && ((jinst_code *)a->model)->max_stack <= declared;
}

static int edit_method(jinst_class *c, jinst_member *m, const plan *pl, uint16_t thr)
{
	jinst_edit *ed;
	jinst_diag d;
	int rc = jinst_edit_open(&ed, c, m, NULL, &d);
	if (rc)
		return rc;
	jinst_label start = JINST_NO_LABEL, end = JINST_NO_LABEL, h = JINST_NO_LABEL;
	if (pl->handler && ((rc = jinst_edit_label_at(ed, pl->start, &start)) ||
	                    (rc = jinst_edit_label_at(ed, pl->end, &end))))
		goto out;
	for (uint32_t i = 0; !rc && i < pl->count; i++)
		rc = jinst_edit_insert(ed, jinst_edit_at(ed, pl->c[i].offset), pl->c[i].where, pl->c[i].insns, pl->c[i].n,
		                       NULL);
	if (!rc && pl->handler) {
		jinst_insn hs[3] = {{.opcode = JINST_OP_LABEL}, {.opcode = JINST_OP_NOP}, {.opcode = JINST_OP_ATHROW}};
		rc = jinst_edit_new_label(ed, &h);
		hs[0].operand = (int32_t)h;
		if (!rc)
			rc = jinst_edit_insert(ed, NULL, JINST_AFTER, hs, 3, NULL);
		static const char throwable[] = "java/lang/Throwable";
		jinst_ftype t = {JINST_VT_OBJECT, thr, sizeof(throwable) - 1, (const uint8_t *)throwable};
		jinst_full_frame fr = {0, 0, 1, NULL, &t};
		if (!rc)
			rc = jinst_edit_set_frame(ed, h, &fr);
		if (!rc)
			rc = jinst_edit_add_handler(ed, start, end, h, 0);
	}
	if (!rc)
		rc = jinst_edit_commit(ed, &d);
out:
	jinst_edit_free(ed);
	return rc;
}

/* Patches (and, with ec, edits) every method; the patched class's bytes. */
static uint8_t *patch_all(const uint8_t *data, size_t size, size_t *len, jinst_class *ec)
{
	memset(patched, 0, sizeof patched);
	memset(compare, 0, sizeof compare);
	jinst_class *c = NULL;
	jinst_diag d = {0};
	*len = 0;
	if (jinst_class_parse(&c, data, size, NULL, NULL, &d))
		return NULL;
	uint64_t s = fuzz_seed(data, size);
	uint16_t probe = 0, eprobe = 0, thr = 0;
	bool have_probe = jinst_cp_add_methodref(c, "jinst/Probe", "probe", "(I)V", &probe) == 0;
	if (ec && have_probe)
		CHECK(jinst_cp_add_methodref(ec, "jinst/Probe", "probe", "(I)V", &eprobe) == 0 && eprobe == probe,
		      "the pool builder gave the same class other indices");
	if (ec && jinst_cp_add_class(ec, "java/lang/Throwable", &thr))
		thr = 0;
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		if (!a)
			continue;
		const uint8_t *info = a->info;
		uint32_t alen = a->length;
		jinst_patch *p;
		int rc = jinst_patch_open(&p, c, m, &d);
		if (rc) {
			CHECK(rc < 0 && d.code == rc && d.message[0], "open: rc %d, diag code %d", rc, d.code);
			CHECK(a->info == info && a->length == alen && !a->modified, "a failed open changed the method");
			continue;
		}
		uint32_t n;
		const uint16_t *offs = jinst_patch_offsets(p, &n);
		CHECK(n > 0, "code without instructions");
		uint32_t code_len;
		jinst_patch_code(p, &code_len);
		plan pl = {.count = 1 + fuzz_next(&s) % 4};
		for (uint32_t k = 0; k < pl.count; k++) {
			uint32_t r = fuzz_next(&s);
			pick(&pl.c[k], r, probe, have_probe);
			pl.c[k].offset = offs[fuzz_next(&s) % n];
			pl.c[k].where = (r & 8) ? JINST_BEFORE_OUTSIDE : JINST_BEFORE_INSIDE;
		}
		uint32_t hr = fuzz_next(&s);
		if (hr % 3 == 0) {
			pl.handler = true;
			uint32_t a0 = fuzz_next(&s) % n, a1 = fuzz_next(&s) % (n + 1);
			if (a1 <= a0)
				a1 = a0 + 1;
			pl.start = offs[a0];
			pl.end = a1 == n ? code_len : offs[a1];
		}
		for (uint32_t k = 0; !rc && k < pl.count; k++)
			rc = jinst_patch_insert(p, pl.c[k].offset, pl.c[k].where, pl.c[k].bytes, pl.c[k].len, pl.c[k].depth);
		if (!rc && pl.handler) {
			static const uint8_t h[] = {0x00, 0xbf}; /* nop, athrow */
			rc = jinst_patch_set_handler(p, h, 2, 0, 0);
			if (!rc)
				rc = jinst_patch_add_range(p, pl.start, pl.end);
		}
		if (!rc) {
			rc = jinst_patch_commit(p, &d);
			if (rc)
				CHECK(rc < 0 && d.code == rc && d.message[0], "commit: rc %d, diag code %d", rc, d.code);
		}
		if (rc) {
			CHECK(a->info == info && a->length == alen && !a->modified, "a failed patch changed the method");
			continue;
		}
		patched[i] = true;
		if (ec && i < jinst_class_method_count(ec) &&
		    edit_method(ec, jinst_class_method(ec, i), &pl, thr) == 0)
			compare[i] = true;
	}
	uint8_t *out = NULL;
	int rc = jinst_class_write(c, NULL, &out, len, &d);
	if (rc) {
		CHECK(rc < 0 && d.code == rc && d.message[0], "write: rc %d", rc);
		out = NULL;
		*len = 0;
	}
	jinst_class_free(c);
	return out;
}

static const char *compare_method(jinst_class *pc, jinst_class *ec, uint16_t i)
{
	jinst_member *pm = jinst_class_method(pc, i), *em = jinst_class_method(ec, i);
	void *pmod, *emod;
	jinst_attr *pa = jinst_attr_find(jinst_member_attrs(pm), JINST_ATTR_CODE);
	jinst_attr *ea = jinst_attr_find(jinst_member_attrs(em), JINST_ATTR_CODE);
	if (!pa || !ea || jinst_attr_decode(pc, pa, &pmod, NULL) || jinst_attr_decode(ec, ea, &emod, NULL))
		return "Code";
	jinst_code *p = pmod, *e = emod;
	if (p->code_length != e->code_length || memcmp(p->code, e->code, p->code_length))
		return "code bytes";
	static char why[120];
	if (p->max_locals != e->max_locals || p->max_stack < e->max_stack) {
		snprintf(why, sizeof why, "max_locals %u/%u or max_stack %u/%u (patcher/editor)", p->max_locals,
		         e->max_locals, p->max_stack, e->max_stack);
		return why;
	}
	if (p->exception_count != e->exception_count ||
	    (p->exception_count && memcmp(p->exceptions, e->exceptions, p->exception_count * sizeof(*p->exceptions))))
		return "exception table";
	jinst_attr *ps = jinst_attr_find(&p->attrs, JINST_ATTR_STACK_MAP_TABLE);
	jinst_attr *es = jinst_attr_find(&e->attrs, JINST_ATTR_STACK_MAP_TABLE);
	if (!ps || !es)
		return ps || es ? "StackMapTable in one only" : "";
	jinst_full_frame *pf, *ef;
	if (jinst_attr_decode(pc, ps, &pmod, NULL) || jinst_attr_decode(ec, es, &emod, NULL) ||
	    jinst_stack_map_expand(pc, pm, pmod, &pf, NULL) || jinst_stack_map_expand(ec, em, emod, &ef, NULL))
		return "frames do not expand";
	const jinst_stack_map *pmap = pmod, *emap = emod;
	if (pmap->count != emap->count)
		return "frame count";
	for (uint32_t k = 0; k < pmap->count; k++) {
		if (pf[k].offset != ef[k].offset || pf[k].nlocals != ef[k].nlocals || pf[k].nstack != ef[k].nstack)
			return "frame offsets or sizes";
		for (uint32_t j = 0; j < pf[k].nlocals; j++)
			if (!jinst_ftype_equal(&pf[k].locals[j], &ef[k].locals[j]))
				return "frame locals";
		for (uint32_t j = 0; j < pf[k].nstack; j++)
			if (!jinst_ftype_equal(&pf[k].stack[j], &ef[k].stack[j]))
				return "frame stack";
	}
	return "";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jinst_class *orig = NULL, *ec = NULL;
	if (jinst_class_parse(&orig, data, size, NULL, NULL, NULL))
		return 0;
	for (uint16_t i = 0; i < jinst_class_method_count(orig); i++)
		orig_ok[i] = method_sound(orig, jinst_class_method(orig, i)) &&
		             max_stack_sound(orig, jinst_class_method(orig, i));
	jinst_class_free(orig);
	if (jinst_class_parse(&ec, data, size, NULL, NULL, NULL))
		return 0;
	size_t l1, l2, el = 0;
	uint8_t *w1 = patch_all(data, size, &l1, ec);
	uint8_t *ew = NULL;
	if (jinst_class_write(ec, NULL, &ew, &el, NULL))
		ew = NULL;
	jinst_class_free(ec);
	if (!w1) {
		free(ew);
		return 0;
	}
	jinst_class *c = NULL, *e = NULL;
	jinst_diag d = {0};
	int rc = jinst_class_parse(&c, w1, l1, NULL, NULL, &d);
	CHECK(rc == 0, "the output does not parse: %s", d.message);
	if (ew && jinst_class_parse(&e, ew, el, NULL, NULL, &d))
		e = NULL;
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		if (!patched[i] || !orig_ok[i])
			continue;
		jinst_member *m = jinst_class_method(c, i);
		CHECK(method_sound(c, m), "method %u: patched code does not decode or its frames do not expand", i);
		if (e && compare[i]) {
			const char *why = compare_method(c, e, i);
			CHECK(!*why, "method %u: the patcher and the editor differ: %s", i, why);
		}
	}
	jinst_class_free(c);
	jinst_class_free(e);
	free(ew);
	uint8_t *w2 = patch_all(data, size, &l2, NULL);
	CHECK(w2 && l2 == l1 && memcmp(w1, w2, l1) == 0, "the same patches gave other bytes");
	free(w2);
	free(w1);
	return 0;
}
