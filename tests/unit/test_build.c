/*
 * Building members (classfile/build.c): a native method renamed and made a
 * new method's callee, the new method given straight-line code, written,
 * parsed again and written again; the code's bytes, max_stack and
 * max_locals against what javac's own wrappers would hold; the refusals.
 * argv[1] is tests/data/classes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/opcodes.h"
#include "../testlib.h"

static jinst_class *parse(const uint8_t *bytes, size_t len)
{
	jinst_class *cls = NULL;
	jinst_diag d;
	memset(&d, 0, sizeof(d));
	if (jinst_class_parse(&cls, bytes, len, NULL, NULL, &d) != 0) {
		char buf[512];
		jinst_diag_format(&d, buf, sizeof(buf));
		printf("FAIL parse: %s\n", buf);
		exit(1);
	}
	return cls;
}

static jinst_member *find(jinst_class *c, const char *name)
{
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		uint16_t len;
		const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(m), &len);
		if (n && len == strlen(name) && !memcmp(n, name, len))
			return m;
	}
	return NULL;
}

static jinst_insn op(uint8_t opcode, int32_t operand)
{
	jinst_insn in;
	memset(&in, 0, sizeof(in));
	in.opcode = opcode;
	in.operand = operand;
	return in;
}

/* m renamed to PREFIXm, and a new m (not native) calling it: the shape of
 * the natives pass, given the argument loads and the return by hand. */
static jinst_member *wrap(jinst_class *c, const char *name, const char *desc, const jinst_insn *loads,
                          uint32_t nloads, uint8_t invoke, uint8_t ret)
{
	jinst_diag d;
	jinst_member *native = find(c, name);
	CHECK(native != NULL, "%s not found", name);
	if (!native)
		return NULL;
	char prefixed[128];
	snprintf(prefixed, sizeof prefixed, "$$jinst$$%s", name);
	uint16_t flags = jinst_member_access_flags(native);
	jinst_attr_list *attrs = jinst_member_attrs(native);
	CHECK(jinst_member_set_name(c, native, prefixed, &d) == 0, "rename %s: %s", name, d.message);
	jinst_member *w = NULL;
	CHECK(jinst_class_add_method(&w, c, (uint16_t)(flags & ~JINST_ACC_NATIVE), name, desc, attrs->items, attrs->count,
	                             &d) == 0,
	      "add %s: %s", name, d.message);
	uint16_t ref;
	uint16_t len;
	const uint8_t *owner = jinst_class_name(c, &len);
	char owner_s[128];
	snprintf(owner_s, sizeof owner_s, "%.*s", (int)len, (const char *)owner);
	CHECK(jinst_cp_add_methodref(c, owner_s, prefixed, desc, &ref) == 0, "methodref");
	jinst_insn code[16];
	memcpy(code, loads, nloads * sizeof(*code));
	code[nloads] = op(invoke, ref);
	code[nloads + 1] = op(ret, 0);
	CHECK(jinst_code_build(c, w, code, nloads + 2, &d) == 0, "code of %s: %s", name, d.message);
	return w;
}

/* The Code of method name in a parsed class, decoded. */
static jinst_code *code_of(jinst_class *c, const char *name)
{
	jinst_member *m = find(c, name);
	jinst_attr *a = m ? jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE) : NULL;
	jinst_code *code = NULL;
	if (a && jinst_attr_decode(c, a, (void **)&code, NULL))
		code = NULL;
	return code;
}

static void check_written(const uint8_t *out, size_t len, uint16_t methods)
{
	jinst_class *c = parse(out, len);
	CHECK(jinst_class_method_count(c) == methods, "%u methods", jinst_class_method_count(c));
	jinst_member *add = find(c, "add"), *native = find(c, "$$jinst$$add");
	CHECK(add && jinst_member_access_flags(add) == (JINST_ACC_PUBLIC | JINST_ACC_STATIC), "add's flags");
	CHECK(native && jinst_member_access_flags(native) == (JINST_ACC_PUBLIC | JINST_ACC_STATIC | JINST_ACC_NATIVE),
	      "$$jinst$$add's flags");
	jinst_code *code = code_of(c, "add");
	CHECK(code && code->max_stack == 2 && code->max_locals == 2 && code->code_length == 6, "add's Code");
	if (code) {
		CHECK(code->code[0] == JINST_OP_ILOAD_0 && code->code[1] == JINST_OP_ILOAD_1 &&
		              code->code[2] == JINST_OP_INVOKESTATIC && code->code[5] == JINST_OP_IRETURN,
		      "add's bytes");
		jinst_cp_entry ref, nat;
		uint16_t nl;
		CHECK(jinst_cp_get(c, (uint16_t)(code->code[3] << 8 | code->code[4]), &ref) == 0 &&
		              jinst_cp_get(c, ref.u.ref.name_and_type_index, &nat) == 0,
		      "add calls a Methodref");
		const uint8_t *n = jinst_cp_utf8(c, nat.u.nat.name_index, &nl);
		CHECK(n && nl == 12 && !memcmp(n, "$$jinst$$add", 12), "add calls $$jinst$$add");
	}
	/* this, a long, a double, an Object: six words in, a long out. */
	code = code_of(c, "mix");
	CHECK(code && code->max_stack == 6 && code->max_locals == 6 && code->code_length == 9, "mix's Code: %u %u %u",
	      code ? code->max_stack : 0, code ? code->max_locals : 0, code ? code->code_length : 0);
	jinst_member *touch = find(c, "touch");
	CHECK(touch && jinst_attr_find(jinst_member_attrs(touch), JINST_ATTR_EXCEPTIONS), "touch keeps its throws");
	CHECK(jinst_member_access_flags(touch) == (JINST_ACC_PROTECTED | JINST_ACC_SYNCHRONIZED), "touch's flags");
	/* A local past 255 takes the wide form. */
	code = code_of(c, "far");
	CHECK(code && code->max_locals == 301 && code->code_length == 5 && code->code[0] == JINST_OP_WIDE,
	      "far's wide load");
	/* Unchanged, it writes back as it was read, and from the model alike. */
	uint8_t *again = NULL, *model = NULL;
	size_t again_len = 0, model_len = 0;
	jinst_write_options wo = JINST_WRITE_OPTIONS_INIT;
	wo.flags = JINST_WRITE_FROM_MODEL;
	CHECK(jinst_class_write(c, NULL, &again, &again_len, NULL) == 0 && again_len == len && !memcmp(again, out, len),
	      "written again, the same bytes");
	CHECK(jinst_class_write(c, &wo, &model, &model_len, NULL) == 0 && model_len == len && !memcmp(model, out, len),
	      "written from the model, the same bytes");
	free(again);
	free(model);
	jinst_class_free(c);
}

static void check_refusals(jinst_class *c)
{
	jinst_diag d;
	jinst_member *m = NULL;
	CHECK(jinst_class_add_method(&m, c, JINST_ACC_STATIC, "refused", "()I", NULL, 0, &d) == 0, "add refused()I");
	jinst_insn go[2] = {op(JINST_OP_ICONST_0, 0), op(JINST_OP_GOTO, 0)};
	CHECK(jinst_code_build(c, m, go, 2, &d) == JINST_EUNSUPPORTED, "a jump needs frames");
	jinst_insn off[1] = {op(JINST_OP_ICONST_0, 0)};
	CHECK(jinst_code_build(c, m, off, 1, &d) == JINST_EINVAL, "code running off its end");
	jinst_insn under[1] = {op(JINST_OP_IRETURN, 0)};
	CHECK(jinst_code_build(c, m, under, 1, &d) == JINST_EINVAL, "a return of nothing");
	jinst_insn ldc[2] = {op(JINST_OP_LDC, 300), op(JINST_OP_IRETURN, 0)};
	CHECK(jinst_code_build(c, m, ldc, 2, &d) == JINST_EINVAL, "ldc past 255");
	jinst_insn early[3] = {op(JINST_OP_ICONST_0, 0), op(JINST_OP_IRETURN, 0), op(JINST_OP_NOP, 0)};
	CHECK(jinst_code_build(c, m, early, 3, &d) == JINST_EINVAL, "a return before the end");
	jinst_insn ok[2] = {op(JINST_OP_ICONST_0, 0), op(JINST_OP_IRETURN, 0)};
	CHECK(jinst_code_build(c, m, ok, 2, &d) == 0, "refused()I's code: %s", d.message);
	CHECK(jinst_code_build(c, m, ok, 2, &d) == JINST_EINVAL, "a second Code");
	CHECK(jinst_code_build(c, find(c, "nothing"), ok, 2, &d) == JINST_EINVAL, "Code for a native");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_build CLASSES_DIR\n");
		return 2;
	}
	size_t len;
	uint8_t *bytes = test_load(argv[1], "natives/natives/Natives.class", &len);
	jinst_class *c = parse(bytes, len);
	uint16_t before = jinst_class_method_count(c);
	jinst_insn add[2] = {op(JINST_OP_ILOAD_0, 0), op(JINST_OP_ILOAD_1, 0)};
	wrap(c, "add", "(II)I", add, 2, JINST_OP_INVOKESTATIC, JINST_OP_IRETURN);
	jinst_insn mix[4] = {op(JINST_OP_ALOAD_0, 0), op(JINST_OP_LLOAD_1, 0), op(JINST_OP_DLOAD_3, 0),
	                     op(JINST_OP_ALOAD, 5)};
	wrap(c, "mix", "(JDLjava/lang/Object;)J", mix, 4, JINST_OP_INVOKESPECIAL, JINST_OP_LRETURN);
	jinst_insn touch[2] = {op(JINST_OP_ALOAD_0, 0), op(JINST_OP_ALOAD_1, 0)};
	wrap(c, "touch", "(Ljava/lang/String;)V", touch, 2, JINST_OP_INVOKESPECIAL, JINST_OP_RETURN);
	jinst_diag d;
	jinst_member *far = NULL;
	CHECK(jinst_class_add_method(&far, c, JINST_ACC_STATIC, "far", "()I", NULL, 0, &d) == 0, "add far");
	jinst_insn load[2] = {op(JINST_OP_ILOAD, 300), op(JINST_OP_IRETURN, 0)};
	CHECK(far && jinst_code_build(c, far, load, 2, &d) == 0, "far's code: %s", d.message);
	uint8_t *out = NULL;
	size_t out_len = 0;
	CHECK(jinst_class_write(c, NULL, &out, &out_len, &d) == 0, "write: %s", d.message);
	if (out)
		check_written(out, out_len, (uint16_t)(before + 4));
	check_refusals(c);
	free(out);
	jinst_class_free(c);
	free(bytes);
	return check_report();
}
