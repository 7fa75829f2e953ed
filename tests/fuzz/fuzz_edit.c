/*
 * libFuzzer target for the code editor (include/jinst/edit.h): decode,
 * edit, encode.
 *
 * The input is a class file followed by nothing else; the editing choices
 * come from a hash of the input, so one input is one deterministic run.
 * Whatever the input, once it parses, each method with code is opened for
 * editing (or refused with a diagnostic), gets a stack-neutral insertion
 * (`iconst_0; pop`, or a static call with a constant argument) before a
 * chosen instruction, inside or outside its labels, and is committed. A
 * failed commit leaves the method exactly as it was; a successful one must
 * write, the output must parse, the edited code must decode and its frames
 * expand. Then the same edits on the same input must give the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_classfile.h"
#include "jinst/classfile.h"
#include "jinst/edit.h"

/* Which methods an edit was committed to, by index. */
static bool edited[65536];

/* Edits every method; the written class, or NULL when the class did not write. */
static uint8_t *edit_all(const uint8_t *data, size_t size, size_t *len)
{
	memset(edited, 0, sizeof edited);
	jinst_class *c = NULL;
	jinst_diag d = {0};
	*len = 0;
	if (jinst_class_parse(&c, data, size, NULL, NULL, &d))
		return NULL;
	uint64_t s = fuzz_seed(data, size);
	uint16_t probe = 0;
	bool have_probe = jinst_cp_add_methodref(c, "jinst/Probe", "probe", "(I)V", &probe) == 0;
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		if (!a)
			continue;
		bool was_modified = a->modified;
		jinst_edit *ed;
		int rc = jinst_edit_open(&ed, c, m, NULL, &d);
		if (rc) {
			CHECK(rc < 0 && d.code == rc && d.message[0], "open: rc %d, diag code %d", rc, d.code);
			CHECK(a->modified == was_modified, "a failed open changed the method");
			continue;
		}
		/* Count the instructions, pick one and a kind of insertion. */
		uint32_t n = 0;
		for (jinst_node *k = jinst_edit_first(ed); k; k = jinst_node_next(k))
			n += jinst_node_insn(k) != NULL;
		uint32_t pick = n ? fuzz_next(&s) % n : 0, r = fuzz_next(&s);
		jinst_node *at = NULL;
		for (jinst_node *k = jinst_edit_first(ed); k; k = jinst_node_next(k))
			if (jinst_node_insn(k) && pick-- == 0) {
				at = k;
				break;
			}
		jinst_insn code[2];
		memset(code, 0, sizeof code);
		if (have_probe && (r & 1)) {
			code[0].opcode = JINST_OP_SIPUSH; /* sipush */
			code[0].operand = (int32_t)(r >> 8 & 0x7fff);
			code[1].opcode = JINST_OP_INVOKESTATIC; /* invokestatic */
			code[1].operand = probe;
		} else {
			code[0].opcode = JINST_OP_ICONST_0; /* iconst_0 */
			code[1].opcode = JINST_OP_POP; /* pop */
		}
		rc = at ? jinst_edit_insert(ed, at, (r & 2) ? JINST_BEFORE_OUTSIDE : JINST_BEFORE_INSIDE, code, 2, NULL) : 0;
		if (!rc)
			rc = jinst_edit_commit(ed, &d);
		if (rc) {
			CHECK(rc < 0 && d.code == rc && d.message[0], "edit: rc %d, diag code %d", rc, d.code);
			CHECK(a->modified == was_modified, "a failed edit changed the method");
		} else {
			edited[i] = at != NULL;
		}
		jinst_edit_free(ed);
	}
	uint8_t *out = NULL;
	int rc = jinst_class_write(c, NULL, &out, len, &d);
	if (rc) {
		/* A lazily decoded defect elsewhere in the class. */
		CHECK(rc < 0 && d.code == rc && d.message[0], "write: rc %d", rc);
		out = NULL;
		*len = 0;
	}
	jinst_class_free(c);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t l1, l2;
	uint8_t *w1 = edit_all(data, size, &l1);
	if (!w1)
		return 0;
	jinst_class *c = NULL;
	jinst_diag d = {0};
	int rc = jinst_class_parse(&c, w1, l1, NULL, NULL, &d);
	CHECK(rc == 0, "the output does not parse: %s", d.message);
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		void *model;
		if (!edited[i])
			continue; /* copied as it was, defects and all */
		CHECK(a && jinst_attr_decode(c, a, &model, &d) == 0, "method %u: written Code does not decode", i);
		jinst_code *code = model;
		jinst_insn *insns;
		uint32_t count;
		rc = jinst_code_decode(c, code, &insns, &count, &d);
		CHECK(rc == 0, "method %u: written code does not decode: %s", i, d.message);
		jinst_attr *sa = jinst_attr_find(&code->attrs, JINST_ATTR_STACK_MAP_TABLE);
		jinst_full_frame *frames;
		if (sa && jinst_attr_decode(c, sa, &model, &d) == 0)
			CHECK(jinst_stack_map_expand(c, m, model, &frames, &d) == 0, "method %u: frames: %s", i, d.message);
	}
	jinst_class_free(c);
	uint8_t *w2 = edit_all(data, size, &l2);
	CHECK(w2 && l2 == l1 && memcmp(w1, w2, l1) == 0, "the same edits gave other bytes");
	free(w2);
	free(w1);
	return 0;
}
