/*
 * Frame inference (classfile/infer.c) on small real classes:
 * tests/data/classes/infer, from javac (infer/Cases: one verifier rule per
 * method, with javac's own frames to compare) and from ASM
 * (tests/data/src/gen/GenInfer.java: category-2 stack shuffles, long halves
 * overwritten, unreachable code, jsr/ret), which carry no frames.
 *
 *   test_infer CLASSES_DIR [OUT_DIR]
 *
 * With OUT_DIR, the rewritten classes are written to OUT_DIR/infer/ for the
 * JVM to load (tests/unit/jvm_infer.sh).
 */
#include <string.h>

#include "jinst/opcodes.h"
#include "jinst/classfile.h"
#include "jinst/infer.h"

#include "../testlib.h"

static const char *dir;

/* ---- a hierarchy: the JDK classes the cases meet, and the cases' own ---- */

typedef struct known {
	const char *name, *super;
	bool iface;
} known;

static const known jdk[] = {
	{"java/lang/Object", NULL, false},
	{"java/lang/String", "java/lang/Object", false},
	{"java/lang/Number", "java/lang/Object", false},
	{"java/lang/Integer", "java/lang/Number", false},
	{"java/lang/Throwable", "java/lang/Object", false},
	{"java/lang/Exception", "java/lang/Throwable", false},
	{"java/lang/RuntimeException", "java/lang/Exception", false},
	{"java/lang/ArithmeticException", "java/lang/RuntimeException", false},
	{"java/lang/StringBuffer", "java/lang/Object", false},
	{"Fin", "java/lang/Object", false},
	{"infer/Cases", "java/lang/Object", false},
	{"infer/Cases$A", "java/lang/Object", false},
	{"infer/Cases$B", "infer/Cases$A", false},
	{"infer/Cases$B2", "infer/Cases$B", false},
	{"infer/Cases$C", "infer/Cases$A", false},
	{"infer/Cases$D", "java/lang/Object", false},
	{"infer/Cases$E", "java/lang/Object", false},
	{"infer/Cases$I", "java/lang/Object", true},
	{"infer/Cases$Holder", "java/lang/Object", false},
	{NULL, NULL, false},
};

/* Knows java/util/ArrayList too. */
static const known util[] = {
	{"java/util/ArrayList", "java/util/AbstractList", false},
	{"java/util/AbstractList", "java/util/AbstractCollection", false},
	{"java/util/AbstractCollection", "java/lang/Object", false},
	{NULL, NULL, false},
};

static int lookup(void *ctx, const char *name, const char **super, bool *iface)
{
	const known *const *tables = ctx;
	for (; *tables; tables++)
		for (const known *k = *tables; k->name; k++)
			if (strcmp(k->name, name) == 0) {
				*super = k->super;
				*iface = k->iface;
				return 0;
			}
	return JINST_EHIERARCHY;
}

static const known *const small_tables[] = {jdk, NULL};
static const known *const util_tables[] = {jdk, util, NULL};
static const jinst_hierarchy small = {lookup, (void *)small_tables};
static const jinst_hierarchy with_util = {lookup, (void *)util_tables};

/* ---- helpers ---- */

typedef struct loaded {
	uint8_t *bytes;
	jinst_class *cls;
} loaded;

static loaded load(const char *rel)
{
	loaded l;
	size_t len;
	l.bytes = test_load(dir, rel, &len);
	jinst_diag d = {0};
	if (jinst_class_parse(&l.cls, l.bytes, len, NULL, NULL, &d)) {
		printf("FAIL cannot parse %s: %s\n", rel, d.message);
		exit(1);
	}
	return l;
}

static void unload(loaded *l)
{
	jinst_class_free(l->cls);
	free(l->bytes);
}

static jinst_code *code_of(jinst_class *c, jinst_member *m)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	jinst_code *code = NULL;
	if (!a || jinst_attr_decode(c, a, (void **)&code, NULL)) {
		printf("FAIL no code\n");
		exit(1);
	}
	return code;
}

typedef struct frames {
	jinst_full_frame *f;
	uint32_t n;
	int rc;
	jinst_diag diag;
} frames;

static frames infer(jinst_class *c, const char *name, const char *desc, const jinst_hierarchy *h)
{
	frames r = {0};
	jinst_member *m = test_method(c, name, desc);
	r.rc = jinst_frames_infer(c, m, code_of(c, m), h, &r.f, &r.n, &r.diag);
	return r;
}

/* The frames javac wrote, expanded. */
static frames written(jinst_class *c, const char *name, const char *desc)
{
	frames r = {0};
	jinst_member *m = test_method(c, name, desc);
	jinst_attr *a = jinst_attr_find(&code_of(c, m)->attrs, JINST_ATTR_STACK_MAP_TABLE);
	jinst_stack_map *map = NULL;
	if (a && (r.rc = jinst_attr_decode(c, a, (void **)&map, &r.diag)) == 0) {
		r.rc = jinst_stack_map_expand(c, m, map, &r.f, &r.diag);
		r.n = map->count;
	}
	return r;
}

/* "pc [locals] [stack]" of a frame, types by the names test_ftype_text gives. */
static const char *show(const jinst_full_frame *f)
{
	static char buf[1024];
	size_t k = (size_t)snprintf(buf, sizeof(buf), "%u [", (unsigned)f->offset);
	for (uint16_t i = 0; i < f->nlocals + f->nstack + 1 && k < sizeof(buf) - 80; i++) {
		if (i == f->nlocals) {
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "] [");
			continue;
		}
		const jinst_ftype *t = i < f->nlocals ? &f->locals[i] : &f->stack[i - f->nlocals - 1];
		char one[200];
		test_ftype_text(t, one, sizeof(one));
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s", one,
		                      i + 1 == f->nlocals || i == f->nlocals + f->nstack ? "" : ", ");
	}
	snprintf(buf + k, sizeof(buf) - k, "]");
	return buf;
}

/* Whether frame f reads as `expect` ("pc [int, top] [java/lang/Object]"). */
static bool frame_is(const jinst_full_frame *f, const char *expect)
{
	return strcmp(show(f), expect) == 0;
}

static bool same_frames(const frames *a, const frames *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		const jinst_full_frame *x = &a->f[i], *y = &b->f[i];
		if (x->offset != y->offset || x->nlocals != y->nlocals || x->nstack != y->nstack)
			return false;
		for (uint16_t k = 0; k < x->nlocals; k++)
			if (!jinst_ftype_equal(&x->locals[k], &y->locals[k]))
				return false;
		for (uint16_t k = 0; k < x->nstack; k++)
			if (!jinst_ftype_equal(&x->stack[k], &y->stack[k]))
				return false;
	}
	return true;
}

/* Checks that our frames for a javac method are javac's, frame for frame. */
static void check_as_javac(jinst_class *c, const char *name, const char *desc)
{
	frames ours = infer(c, name, desc, &small), theirs = written(c, name, desc);
	CHECK(ours.rc == 0, "%s%s: %s", name, desc, ours.diag.message);
	CHECK(theirs.rc == 0 && theirs.n > 0, "%s%s: javac's frames", name, desc);
	bool same = same_frames(&ours, &theirs);
	CHECK(same, "%s%s: frames differ from javac's", name, desc);
	for (uint32_t i = 0; !same && i < ours.n; i++)
		printf("  ours   %s\n", show(&ours.f[i]));
	for (uint32_t i = 0; !same && i < theirs.n; i++)
		printf("  javac  %s\n", show(&theirs.f[i]));
}

static void expect_frames(const frames *r, const char *what, const char *const *expect, uint32_t n)
{
	CHECK(r->rc == 0, "%s: %s", what, r->diag.message);
	CHECK(r->n == n, "%s: %u frames, expected %u", what, (unsigned)r->n, (unsigned)n);
	for (uint32_t i = 0; i < r->n && i < n; i++)
		CHECK(frame_is(&r->f[i], expect[i]), "%s: frame %u is %s, expected %s", what, (unsigned)i, show(&r->f[i]),
		      expect[i]);
}

/* With an output folder, writes the class there (for tests/unit/jvm_infer.sh). */
static const char *out_dir;

/* With major not 0, the written class claims that version instead. */
static void write_class_as(jinst_class *c, const char *rel, uint8_t major)
{
	if (!out_dir)
		return;
	uint8_t *bytes;
	size_t len;
	jinst_diag d = {0};
	int rc = jinst_class_write(c, NULL, &bytes, &len, &d);
	CHECK(rc == 0, "write %s: %s", rel, d.message);
	if (rc)
		return;
	if (major)
		bytes[7] = major;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", out_dir, rel);
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(bytes, 1, len, f) == len, "write %s", path);
	if (f)
		fclose(f);
	free(bytes);
}

static void write_class(jinst_class *c, const char *rel)
{
	write_class_as(c, rel, 0);
}

/* ---- javac's cases ---- */

static void test_javac_cases(void)
{
	loaded l = load("infer/Cases.class");
	jinst_class *c = l.cls;
	/* Where data flow and javac's declared types agree, the frames are javac's. */
	check_as_javac(c, "newBeforeBranch", "(ZLjava/lang/Object;Ljava/lang/Object;)Linfer/Cases$Holder;");
	check_as_javac(c, "<init>", "(Z)V");
	check_as_javac(c, "refArrays", "(Z)I");
	check_as_javac(c, "primArrays", "(Z)I");
	check_as_javac(c, "classes", "(Z)Linfer/Cases$A;");
	check_as_javac(c, "wide", "(ZJD)J");

	/* The uninitialized type names the offset of its `new`, in the
	 * constructor `this` stays uninitializedThis across the branch. */
	frames r = infer(c, "newBeforeBranch", "(ZLjava/lang/Object;Ljava/lang/Object;)Linfer/Cases$Holder;", &small);
	const char *nb[] = {"12 [int, java/lang/Object, java/lang/Object] [uninitialized(0), uninitialized(0)]",
	                    "13 [int, java/lang/Object, java/lang/Object] [uninitialized(0), uninitialized(0), "
	                    "java/lang/Object]"};
	expect_frames(&r, "newBeforeBranch", nb, 2);
	r = infer(c, "<init>", "(Z)V", &small);
	const char *ctor[] = {"9 [uninitializedThis, int] [uninitializedThis]",
	                      "10 [uninitializedThis, int] [uninitializedThis, int]"};
	expect_frames(&r, "<init>(Z)", ctor, 2);

	/* B[] and C[] merge to A[], B[][] and C[][] to A[][]. */
	r = infer(c, "refArrays", "(Z)I", &small);
	CHECK(r.rc == 0 && r.n == 4, "refArrays: %d, %u frames", r.rc, (unsigned)r.n);
	if (r.n == 4) {
		CHECK(frame_is(&r.f[1], "15 [int] [[Linfer/Cases$A;]"), "refArrays: %s", show(&r.f[1]));
		CHECK(frame_is(&r.f[3], "35 [int, [Linfer/Cases$A;] [[[Linfer/Cases$A;]"), "refArrays: %s", show(&r.f[3]));
	}
	/* int[] with long[], and int[] with String[], merge to Object. */
	r = infer(c, "primArrays", "(Z)I", &small);
	CHECK(r.rc == 0 && r.n == 4, "primArrays: %d, %u frames", r.rc, (unsigned)r.n);
	if (r.n == 4) {
		CHECK(frame_is(&r.f[1], "13 [int] [java/lang/Object]"), "primArrays: %s", show(&r.f[1]));
		CHECK(frame_is(&r.f[3], "28 [int, java/lang/Object] [java/lang/Object]"), "primArrays: %s", show(&r.f[3]));
	}
	/* D and E share only the interface I: the verifier's merge is Object,
	 * where javac writes the declared I. */
	r = infer(c, "ifaces", "(Z)Linfer/Cases$I;", &small);
	const char *ifc[] = {"14 [int] []", "21 [int] [java/lang/Object]"};
	expect_frames(&r, "ifaces", ifc, 2);
	/* B2 and C: their nearest common super class A (B2's chain passes B). */
	r = infer(c, "classes", "(Z)Linfer/Cases$A;", &small);
	const char *cls[] = {"14 [int] []", "21 [int] [infer/Cases$A]"};
	expect_frames(&r, "classes", cls, 2);
	/* The handler sees `o` as String (before the store) and Integer (after):
	 * Object; `r` is int throughout. After the try data flow knows `o` is
	 * the Integer, where javac writes Object. */
	r = infer(c, "handlerStores", "(Z)I", &small);
	const char *hs[] = {"20 [int, int, java/lang/Object] [java/lang/RuntimeException]",
	                    "28 [int, int, java/lang/Integer] []"};
	expect_frames(&r, "handlerStores", hs, 2);

	/* null with String is String; null with null stays null, where javac
	 * writes the declared Object. */
	r = infer(c, "nulls", "(Z)Ljava/lang/String;", &small);
	const char *nl[] = {"8 [int] []", "10 [int] [java/lang/String]", "19 [int, java/lang/String, null] []"};
	expect_frames(&r, "nulls", nl, 3);

	/* A merge with a class the hierarchy does not know. */
	r = infer(c, "unknown", "(Z)Ljava/lang/Object;", &small);
	CHECK(r.rc == JINST_EHIERARCHY, "unknown: %d (%s)", r.rc, r.diag.message);
	CHECK(strstr(r.diag.message, "java/util/") != NULL, "unknown: the message names the class: %s", r.diag.message);
	r = infer(c, "unknown", "(Z)Ljava/lang/Object;", &with_util);
	const char *unk[] = {"14 [int] []", "21 [int] [java/lang/Object]"};
	expect_frames(&r, "unknown with java/util", unk, 2);
	/* No hierarchy at all: the same question cannot be answered. */
	r = infer(c, "unknown", "(Z)Ljava/lang/Object;", NULL);
	CHECK(r.rc == JINST_EHIERARCHY, "unknown without a hierarchy: %d", r.rc);
	unload(&l);
}

/* ---- ASM's cases ---- */

static void test_category2(void)
{
	loaded l = load("infer/Gen.class");
	jinst_class *c = l.cls;
	frames r = infer(c, "dupX2Long", "(I)I", &small);
	const char *x2[] = {"7 [int] [int, long, int]"};
	expect_frames(&r, "dup_x2 over a long", x2, 1);
	r = infer(c, "dup2Long", "(I)J", &small);
	const char *d2[] = {"7 [int] [long, int, long]", "17 [int] [long, long, long]"};
	expect_frames(&r, "dup2_x1 and dup2_x2 on longs", d2, 2);
	/* The long in 1-2 loses its second half to an int, the one in 3-4 its
	 * first half to a double: both slots left are top. */
	r = infer(c, "halves", "(I)I", &small);
	const char *hv[] = {"13 [int, top, int, top, double] []"};
	expect_frames(&r, "long halves", hv, 1);
	/* The handler of a range over invokespecial <init> sees local 0 both
	 * uninitialized (before) and initialized (after, where HotSpot looks):
	 * top, so neither fails. */
	r = infer(c, "initInTry", "()I", &small);
	const char *it[] = {"15 [] [java/lang/RuntimeException]"};
	expect_frames(&r, "init in a try", it, 1);
	unload(&l);
}

static void test_unreachable(void)
{
	loaded l = load("infer/Gen.class");
	jinst_class *c = l.cls;
	jinst_member *m = test_method(c, "dead", "(I)I");
	jinst_code *code = code_of(c, m);
	const uint8_t *before = code->code;

	/* Unpatched, the dead code cannot have a frame. */
	frames r = infer(c, "dead", "(I)I", &small);
	CHECK(r.rc == JINST_EUNSUPPORTED, "dead code unpatched: %d", r.rc);
	CHECK(strstr(r.diag.message, "unreachable code at pc 10") != NULL, "dead code unpatched: %s", r.diag.message);

	uint32_t runs = 0;
	jinst_diag d = {0};
	int rc = jinst_code_patch_unreachable(c, code, &runs, &d);
	CHECK(rc == 0 && runs == 2, "patch: %d, %u runs (%s)", rc, (unsigned)runs, d.message);
	CHECK(code->code != before && memcmp(before, code->code, 10) == 0 && memcmp(before + 15, code->code + 15, 8) == 0,
	      "patch: the live code is kept");
	static const uint8_t run1[] = {0x00, 0x00, 0x00, 0x00, 0xbf}, run2[] = {0x00, 0x00, 0xbf};
	CHECK(memcmp(code->code + 10, run1, 5) == 0, "patch: pc 10-14 become nop ... athrow");
	CHECK(memcmp(code->code + 23, run2, 3) == 0, "patch: pc 23-25 become nop nop athrow");
	/* [4, 20) -> 20 loses [10, 15) and splits; [10, 15) -> 23 covered only dead code. */
	CHECK(code->exception_count == 2, "patch: %u exception entries", code->exception_count);
	if (code->exception_count == 2) {
		const jinst_exception_entry *e = code->exceptions;
		CHECK(e[0].start_pc == 4 && e[0].end_pc == 10 && e[0].handler_pc == 20, "patch: entry 0 %u-%u %u",
		      e[0].start_pc, e[0].end_pc, e[0].handler_pc);
		CHECK(e[1].start_pc == 15 && e[1].end_pc == 20 && e[1].handler_pc == 20, "patch: entry 1 %u-%u %u",
		      e[1].start_pc, e[1].end_pc, e[1].handler_pc);
		CHECK(e[0].catch_type == e[1].catch_type && e[0].catch_type != 0, "patch: the catch type is kept");
	}
	r = infer(c, "dead", "(I)I", &small);
	const char *dead[] = {"10 [] [java/lang/Throwable]", "15 [int] []", "20 [int] [java/lang/RuntimeException]",
	                      "23 [] [java/lang/Throwable]"};
	expect_frames(&r, "dead code patched", dead, 4);

	/* A second patch finds nothing left to do. */
	const uint8_t *patched = code->code;
	rc = jinst_code_patch_unreachable(c, code, &runs, &d);
	CHECK(rc == 0 && runs == 0 && code->code == patched, "patch again: %d, %u runs", rc, (unsigned)runs);

	/* max_stack 0 grows to 1 for the Throwable of the dead run's frame. */
	m = test_method(c, "m", "()V");
	code = code_of(c, m);
	CHECK(code->max_stack == 0, "m: max_stack %u before", code->max_stack);
	rc = jinst_code_patch_unreachable(c, code, &runs, &d);
	CHECK(rc == 0 && runs == 1 && code->max_stack == 1, "m: %d, %u runs, max_stack %u", rc, (unsigned)runs,
	      code->max_stack);
	CHECK(code->code[1] == JINST_OP_NOP && code->code[2] == JINST_OP_ATHROW, "m: nop athrow");
	r = infer(c, "m", "()V", &small);
	const char *mm[] = {"1 [] [java/lang/Throwable]"};
	expect_frames(&r, "m patched", mm, 1);
	unload(&l);
}

static void test_jsr(void)
{
	loaded l = load("infer/Jsr.class");
	jinst_class *c = l.cls;
	frames r = infer(c, "f", "(I)I", &small);
	CHECK(r.rc == JINST_EUNSUPPORTED && strstr(r.diag.message, "jsr"), "jsr: %d (%s)", r.rc, r.diag.message);

	/* try { r = x; } finally { x++; }: the body (0-6), the handler (7-12)
	 * and the subroutine (13-17) that both jsr to. */
	jinst_code *code = code_of(c, test_method(c, "f", "(I)I"));
	CHECK(code->code_length == 19 && code->exception_count == 1, "jsr: %u bytes", (unsigned)code->code_length);
	uint32_t copies = 0;
	jinst_diag d = {0};
	int rc = jinst_code_inline_subroutines(c, code, &copies, &d);
	CHECK(rc == 0 && copies == 2, "inline: %d, %u copies (%s)", rc, (unsigned)copies, d.message);
	/* Each jsr becomes aconst_null; goto its own copy, each copy's ret a
	 * goto back after its jsr. */
	static const uint8_t expect[] = {
		0x1a, 0x3c,                   /*  0 iload_0, istore_1 */
		0x01, 0xa7, 0x00, 0x0c,       /*  2 aconst_null, goto 15 */
		0x1b, 0xac,                   /*  6 iload_1, ireturn */
		0x4d,                         /*  8 astore_2 */
		0x01, 0xa7, 0x00, 0x0c,       /*  9 aconst_null, goto 22 */
		0x2c, 0xbf,                   /* 13 aload_2, athrow */
		0x4e, 0x84, 0x00, 0x01,       /* 15 astore_3, iinc 0 1 */
		0xa7, 0xff, 0xf3,             /* 19 goto 6 */
		0x4e, 0x84, 0x00, 0x01,       /* 22 astore_3, iinc 0 1 */
		0xa7, 0xff, 0xf3,             /* 26 goto 13 */
	};
	CHECK(code->code_length == sizeof(expect) && memcmp(code->code, expect, sizeof(expect)) == 0,
	      "inline: %u bytes of code, not as expected", (unsigned)code->code_length);
	for (uint32_t i = 0; i < code->code_length && memcmp(code->code, expect, sizeof(expect)); i++)
		printf("  %2u: %02x\n", (unsigned)i, code->code[i]);
	CHECK(code->exception_count == 1 && code->exceptions[0].start_pc == 0 && code->exceptions[0].end_pc == 2 &&
	      code->exceptions[0].handler_pc == 8, "inline: exception table");
	r = infer(c, "f", "(I)I", &small);
	const char *fr[] = {"6 [int, int, top, null] []", "8 [int] [java/lang/Throwable]",
	                    "13 [int, top, java/lang/Throwable, null] []", "15 [int, int] [null]",
	                    "22 [int, top, java/lang/Throwable] [null]"};
	expect_frames(&r, "jsr inlined", fr, 5);

	/* A subroutine calling another: two copies of each, the inner ones
	 * returning into the outer copies; the range over the body stays one. */
	jinst_member *g = test_method(c, "g", "(I)I");
	code = code_of(c, g);
	rc = jinst_code_inline_subroutines(c, code, &copies, &d);
	CHECK(rc == 0 && copies == 4, "inline g: %d, %u copies (%s)", rc, (unsigned)copies, d.message);
	CHECK(code->exception_count == 1 && code->exceptions[0].start_pc == 0 && code->exceptions[0].end_pc == 7,
	      "inline g: exception table");
	r = infer(c, "g", "(I)I", &small);
	CHECK(r.rc == 0 && r.n > 0, "g inlined: %d (%s)", r.rc, r.diag.message);
	jinst_insn *insns;
	uint32_t n, jsrs = 0, rets = 0;
	rc = jinst_code_decode(c, code, &insns, &n, &d);
	for (uint32_t i = 0; !rc && i < n; i++) {
		jsrs += insns[i].opcode == JINST_OP_JSR || insns[i].opcode == JINST_OP_JSR_W;
		rets += insns[i].opcode == JINST_OP_RET;
	}
	CHECK(rc == 0 && jsrs == 0 && rets == 0, "inline g: %u jsr and %u ret left", (unsigned)jsrs, (unsigned)rets);
	/* Again: nothing left to inline. */
	rc = jinst_code_inline_subroutines(c, code, &copies, &d);
	CHECK(rc == 0 && copies == 0, "inline g again: %d, %u copies", rc, (unsigned)copies);

	/* Switches in the body and in the subroutine: the copies move them to
	 * offsets with other padding. */
	jinst_member *h = test_method(c, "h", "(I)I");
	code = code_of(c, h);
	rc = jinst_code_inline_subroutines(c, code, &copies, &d);
	CHECK(rc == 0 && copies == 3, "inline h: %d, %u copies (%s)", rc, (unsigned)copies, d.message);
	r = infer(c, "h", "(I)I", &small);
	CHECK(r.rc == 0 && r.n > 0, "h inlined: %d (%s)", r.rc, r.diag.message);
	rc = jinst_code_decode(c, code, &insns, &n, &d);
	uint32_t switches = 0;
	for (uint32_t i = 0; !rc && i < n; i++)
		switches += insns[i].sw != NULL;
	CHECK(rc == 0 && switches == 4, "inline h: %u switches (one in the body, one per copy)", (unsigned)switches);

	/* Written out, the JVM runs it (tests/unit/jvm_infer.sh): version 49
	 * needs no frames, so this checks the inlined code itself. */
	jinst_attr_find(jinst_member_attrs(test_method(c, "f", "(I)I")), JINST_ATTR_CODE)->modified = true;
	jinst_attr_find(jinst_member_attrs(g), JINST_ATTR_CODE)->modified = true;
	jinst_attr_find(jinst_member_attrs(h), JINST_ATTR_CODE)->modified = true;
	write_class(c, "infer/Jsr.class");
	unload(&l);
}

/* The whole road on ASM's class without frames: jinst_frames_recompute on
 * every method patches the dead code and installs the tables; the JVM then
 * verifies and runs it (tests/unit/jvm_infer.sh). */
static void test_recompute(void)
{
	loaded l = load("infer/Gen.class");
	jinst_class *c = l.cls;
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		jinst_diag d = {0};
		int rc = jinst_frames_recompute(c, m, &small, &d);
		CHECK(rc == 0, "recompute method %u: %s", i, d.message);
	}
	jinst_member *dead = test_method(c, "dead", "(I)I");
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(dead), JINST_ATTR_CODE);
	jinst_code *code = code_of(c, dead);
	CHECK(a->modified && code->code[14] == JINST_OP_ATHROW && code->exception_count == 2, "recompute: dead code patched");
	jinst_attr *smt = jinst_attr_find(&code->attrs, JINST_ATTR_STACK_MAP_TABLE);
	CHECK(smt && smt->model && ((jinst_stack_map *)smt->model)->count == 4, "recompute: 4 frames installed");
	write_class(c, "infer/Gen.class");
	unload(&l);

	/* Code with jsr/ret takes the same road: inlined, then its frames. */
	l = load("infer/Jsr.class");
	c = l.cls;
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		jinst_diag d = {0};
		int rc = jinst_frames_recompute(c, m, &small, &d);
		CHECK(rc == 0, "recompute Jsr method %u: %s", i, d.message);
	}
	code = code_of(c, test_method(c, "g", "(I)I"));
	smt = jinst_attr_find(&code->attrs, JINST_ATTR_STACK_MAP_TABLE);
	CHECK(code->code_length == 52 && smt && smt->model, "recompute Jsr: g inlined (%u bytes) with frames",
	      (unsigned)code->code_length);
	/* Claiming version 51 (no jsr allowed, no fall-back to the old
	 * verifier), the class goes to HotSpot's type checker, which reads the
	 * frames. */
	write_class_as(c, "v51/infer/Jsr.class", 51);
	unload(&l);

	/* A method that cannot be done is left as it was. */
	l = load("infer/Cases.class");
	c = l.cls;
	jinst_member *m = test_method(c, "unknown", "(Z)Ljava/lang/Object;");
	jinst_diag d = {0};
	int rc = jinst_frames_recompute(c, m, &small, &d);
	CHECK(rc == JINST_EHIERARCHY, "recompute unknown: %d", rc);
	CHECK(!jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE)->modified, "recompute unknown: untouched");
	unload(&l);
}

/* Real jsr code: ecj's Java 1.4 finally blocks (tests/data/src/jsr/Fin.java).
 * Recomputed, it has no jsr or ret left and carries frames; written as
 * version 51, HotSpot's type checker must take it and it must print what
 * the original prints (jvm_infer.sh). */
static void test_ecj(void)
{
	loaded l = load("../jsr/Fin.class");
	jinst_class *c = l.cls;
	CHECK(jinst_class_major_version(c) == 48, "Fin: version %u", jinst_class_major_version(c));
	unsigned with_jsr = 0, framed = 0;
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		jinst_code *code = code_of(c, m);
		jinst_insn *insns;
		uint32_t n, jsrs = 0;
		jinst_diag d = {0};
		int rc = jinst_code_decode(c, code, &insns, &n, &d);
		for (uint32_t k = 0; !rc && k < n; k++)
			jsrs += insns[k].opcode == JINST_OP_JSR || insns[k].opcode == JINST_OP_JSR_W || insns[k].opcode == JINST_OP_RET;
		with_jsr += jsrs > 0;
		rc = jinst_frames_recompute(c, m, &small, &d);
		CHECK(rc == 0, "recompute Fin method %u: %s", i, d.message);
		code = code_of(c, m);
		rc = jinst_code_decode(c, code, &insns, &n, &d);
		jsrs = 0;
		for (uint32_t k = 0; !rc && k < n; k++)
			jsrs += insns[k].opcode == JINST_OP_JSR || insns[k].opcode == JINST_OP_JSR_W || insns[k].opcode == JINST_OP_RET;
		CHECK(rc == 0 && jsrs == 0, "Fin method %u: %u jsr/ret left", i, (unsigned)jsrs);
		framed += jinst_attr_find(&code->attrs, JINST_ATTR_STACK_MAP_TABLE) != NULL;
	}
	CHECK(with_jsr == 6, "Fin: %u methods with jsr/ret, expected a b c d e f", with_jsr);
	CHECK(framed >= 6, "Fin: %u methods with frames", framed);
	write_class_as(c, "v51/Fin.class", 51);
	unload(&l);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_infer CLASSES_DIR\n");
		return 2;
	}
	dir = argv[1];
	out_dir = argc > 2 ? argv[2] : NULL;
	test_javac_cases();
	test_category2();
	test_unreachable();
	test_jsr();
	test_recompute();
	test_ecj();
	return check_report();
}
