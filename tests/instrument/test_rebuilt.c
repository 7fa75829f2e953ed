/*
 * Class files as a VM rebuilds them for RetransformClasses (label unit).
 *
 * tests/data/classes/rebuilt/jdk17 holds the bytes JDK 17 handed the
 * ClassFileLoadHook when it retransformed classes the boot loader had
 * defined (tests/data/src/rebuilt/RebuiltDump.java wrote them, see
 * regen.sh); file/ holds the class files they were loaded from. HotSpot
 * keeps no StackMapTable for a class it does not verify, so every method
 * whose code needs frames has none in the rebuilt bytes. Checked:
 *   - the inputs: the same code as the files, without their frames;
 *   - the editor and the patcher on each method: the edit commits, and no
 *     StackMapTable is made up (jinst_edit_writes_frames says so first);
 *     the class files themselves keep their frames;
 *   - the instrumenter with each pass, as the agent retransforms: no method
 *     left alone, as many methods instrumented as from the class files, the
 *     original instructions after the entry hook.
 *   test_rebuilt REBUILT_DIR
 */
#include <string.h>

#include "jinst/edit.h"
#include "jinst/instrument.h"
#include "jinst/opcodes.h"
#include "jinst/patch.h"

#include "../testlib.h"

static const char *const names[] = {"jinstrebuilt/Branchy", "jinstrebuilt/Branchy$Sub"};
#define NCLASSES (sizeof(names) / sizeof(names[0]))

typedef struct input {
	uint8_t *file, *rebuilt;
	size_t file_len, rebuilt_len;
} input;

static input inputs[NCLASSES];

static jinst_code *code_of(jinst_class *c, jinst_member *m)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	void *code = NULL;
	return a && jinst_attr_decode(c, a, &code, NULL) == 0 ? code : NULL;
}

static bool has_frames(const jinst_code *code)
{
	return jinst_attr_find(&code->attrs, JINST_ATTR_STACK_MAP_TABLE) != NULL;
}

static const char *method_name(jinst_class *c, jinst_member *m, char *buf, size_t size)
{
	uint16_t ln, ld;
	const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(m), &ln);
	const uint8_t *d = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &ld);
	snprintf(buf, size, "%.*s%.*s", n ? (int)ln : 1, n ? (const char *)n : "?", d ? (int)ld : 0, d ? (const char *)d : "");
	return buf;
}

/* The method of c named as `what` (name and descriptor), or NULL: the VM
 * rebuilds the methods in its own order. */
static jinst_member *find_method(jinst_class *c, const char *what)
{
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		char buf[200];
		if (!strcmp(method_name(c, jinst_class_method(c, i), buf, sizeof buf), what))
			return jinst_class_method(c, i);
	}
	return NULL;
}

/* Whether the method named `what` has frames in the class file k. */
static bool file_has_frames(size_t k, const char *what)
{
	jinst_class *f;
	if (jinst_class_parse(&f, inputs[k].file, inputs[k].file_len, NULL, NULL, NULL))
		return false;
	jinst_member *m = find_method(f, what);
	jinst_code *code = m ? code_of(f, m) : NULL;
	bool r = code && has_frames(code);
	jinst_class_free(f);
	return r;
}

/* The rebuilt bytes have the files' methods and code, and no frames where
 * the files have them. */
static void test_inputs(void)
{
	unsigned frameless = 0;
	for (size_t k = 0; k < NCLASSES; k++) {
		jinst_class *f, *r;
		CHECK(jinst_class_parse(&f, inputs[k].file, inputs[k].file_len, NULL, NULL, NULL) == 0, "%s: file parses", names[k]);
		CHECK(jinst_class_parse(&r, inputs[k].rebuilt, inputs[k].rebuilt_len, NULL, NULL, NULL) == 0, "%s: rebuilt parses",
		      names[k]);
		CHECK(jinst_class_method_count(f) == jinst_class_method_count(r), "%s: as many methods", names[k]);
		for (uint16_t i = 0; i < jinst_class_method_count(r); i++) {
			char what[200];
			method_name(r, jinst_class_method(r, i), what, sizeof what);
			jinst_member *fm = find_method(f, what);
			jinst_code *fc = fm ? code_of(f, fm) : NULL, *rc = code_of(r, jinst_class_method(r, i));
			CHECK(fc && rc && fc->code_length == rc->code_length && !memcmp(fc->code, rc->code, fc->code_length),
			      "%s.%s: the file's code", names[k], what);
			CHECK(rc && !has_frames(rc), "%s.%s: no StackMapTable rebuilt", names[k], what);
			frameless += fc && has_frames(fc);
		}
		jinst_class_free(f);
		jinst_class_free(r);
	}
	CHECK(frameless >= 12, "the methods needing frames: %u", frameless);
}

/* Four bytes (two iconst_0; pop) at entry through the editor: switches
 * keep their padding. */
static int edit_entry(jinst_class *c, jinst_member *m, bool *writes, jinst_diag *diag)
{
	jinst_edit *ed;
	int rc = jinst_edit_open(&ed, c, m, NULL, diag);
	if (rc)
		return rc;
	*writes = jinst_edit_writes_frames(ed);
	jinst_insn seq[4];
	memset(seq, 0, sizeof seq);
	seq[0].opcode = seq[2].opcode = JINST_OP_ICONST_0;
	seq[1].opcode = seq[3].opcode = JINST_OP_POP;
	rc = jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_BEFORE_OUTSIDE, seq, 4, NULL);
	if (!rc)
		rc = jinst_edit_commit(ed, diag);
	jinst_edit_free(ed);
	return rc;
}

/* The same four bytes through the patcher, and a handler over the code
 * (but in constructors, where `this` is uninitialized at first). */
static int patch_entry(jinst_class *c, jinst_member *m, bool ctor, jinst_diag *diag)
{
	static const uint8_t entry[] = {JINST_OP_ICONST_0, JINST_OP_POP, JINST_OP_ICONST_0, JINST_OP_POP};
	static const uint8_t handler[] = {JINST_OP_NOP, JINST_OP_ATHROW};
	jinst_patch *p;
	int rc = jinst_patch_open(&p, c, m, diag);
	uint32_t len;
	if (!rc)
		rc = jinst_patch_insert(p, 0, JINST_BEFORE_OUTSIDE, entry, sizeof entry, 1);
	if (!rc && !ctor && jinst_patch_code(p, &len) && !(rc = jinst_patch_set_handler(p, handler, sizeof handler, 0, 0)))
		rc = jinst_patch_add_range(p, 0, len);
	return rc ? rc : jinst_patch_commit(p, diag);
}

/* Each method edited alone (editor, or patcher), the class written and read
 * back: frames in the output exactly when the input had them. */
static void edit_each(size_t k, bool rebuilt, bool patcher)
{
	const uint8_t *bytes = rebuilt ? inputs[k].rebuilt : inputs[k].file;
	size_t len = rebuilt ? inputs[k].rebuilt_len : inputs[k].file_len;
	const char *how = patcher ? "patcher" : "editor", *from = rebuilt ? "rebuilt" : "file";
	jinst_class *c;
	CHECK(jinst_class_parse(&c, bytes, len, NULL, NULL, NULL) == 0, "%s parses", names[k]);
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		jinst_code *before = code_of(c, m);
		if (!before)
			continue;
		char what[200];
		method_name(c, m, what, sizeof what);
		/* The editor writes frames but for a rebuilt method that needs
		 * them (the file has some) and has none. */
		bool had = has_frames(before), ctor = !strncmp(what, "<init>", 6);
		bool expect = !rebuilt || !file_has_frames(k, what), writes = expect;
		uint32_t old_len = before->code_length;
		jinst_diag d;
		memset(&d, 0, sizeof d);
		int rc = patcher ? patch_entry(c, m, ctor, &d) : edit_entry(c, m, &writes, &d);
		CHECK(rc == 0, "%s %s.%s (%s): %s %s", how, names[k], what, from, jinst_strerror(rc), d.message);
		CHECK(writes == expect, "%s.%s (%s): the editor writes frames %d, expected %d", names[k], what, from, writes,
		      expect);
		jinst_code *after = code_of(c, m);
		CHECK(after && after->code_length >= old_len + 4 && has_frames(after) == had,
		      "%s %s.%s (%s): frames after %d, before %d", how, names[k], what, from, after && has_frames(after), had);
	}
	uint8_t *out = NULL;
	size_t out_len = 0;
	jinst_class *back = NULL;
	CHECK(jinst_class_write(c, NULL, &out, &out_len, NULL) == 0 &&
	          jinst_class_parse(&back, out, out_len, NULL, NULL, NULL) == 0,
	      "%s %s (%s): written and read back", how, names[k], from);
	jinst_class_free(back);
	free(out);
	jinst_class_free(c);
}

static void test_edits(void)
{
	for (size_t k = 0; k < NCLASSES; k++)
		for (int rebuilt = 0; rebuilt < 2; rebuilt++)
			for (int patcher = 0; patcher < 2; patcher++)
				edit_each(k, rebuilt, patcher);
}

typedef struct tally {
	unsigned left_alone;
} tally;

static void left_alone(void *ctx, const char *cls, const char *method, const char *desc, const jinst_diag *why)
{
	((tally *)ctx)->left_alone++;
	printf("left alone: %s.%s%s: %s %s\n", cls, method, desc, jinst_strerror(why->code), why->message);
}

/* The instructions of the original after the count hook's entry (push the
 * id, invokestatic): opcode for opcode. */
static void check_entry_then_original(jinst_class *out, jinst_class *orig, const char *cls)
{
	for (uint16_t i = 0; i < jinst_class_method_count(orig); i++) {
		jinst_code *oc = code_of(orig, jinst_class_method(orig, i));
		jinst_code *nc = code_of(out, jinst_class_method(out, i));
		jinst_insn *o = NULL, *n = NULL;
		uint32_t no = 0, nn = 0;
		if (!oc)
			continue;
		CHECK(nc && !jinst_code_decode(orig, oc, &o, &no, NULL) && !jinst_code_decode(out, nc, &n, &nn, NULL) &&
		          nn == no + 2,
		      "%s: method %u: the entry hook and the original", cls, (unsigned)i);
		CHECK(nn >= 2 && n[1].opcode == JINST_OP_INVOKESTATIC, "%s: method %u: invokestatic first", cls, (unsigned)i);
		bool same = nn == no + 2;
		for (uint32_t j = 0; same && j < no; j++)
			same = n[j + 2].opcode == o[j].opcode;
		CHECK(same, "%s: method %u: the original instructions follow", cls, (unsigned)i);
	}
}

/* One class through an instrumenter of these passes: 0 with the output,
 * nothing left alone; the methods it instrumented. */
static uint64_t instrument(uint32_t passes, const uint8_t *bytes, size_t len, size_t k, const char *from,
                           jinst_arena *arena, bool counts_only)
{
	tally t = {0};
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.passes = passes;
	o.left_alone = left_alone;
	o.left_alone_ctx = &t;
	jinst_instrument *ins;
	jinst_diag d;
	memset(&d, 0, sizeof d);
	CHECK(jinst_instrument_new(&ins, &o, &d) == 0, "instrumenter: %s", d.message);
	uint64_t identity = jinst_instrument_identity(inputs[k].file, inputs[k].file_len);
	uint8_t *out = NULL;
	size_t out_len = 0;
	int rc = jinst_instrument_class(ins, arena, bytes, len, &identity, JINST_INSTRUMENT_RETRANSFORM, NULL, &out, &out_len,
	                                &d);
	CHECK(rc == 0 && out, "passes 0x%x, %s %s: %s %s", (unsigned)passes, names[k], from, jinst_strerror(rc), d.message);
	CHECK(t.left_alone == 0 && !d.message[0], "passes 0x%x, %s %s: %u methods left alone (%s)", (unsigned)passes,
	      names[k], from, t.left_alone, d.message);
	jinst_class *back = NULL, *orig = NULL;
	if (out && counts_only && !jinst_class_parse(&back, out, out_len, NULL, NULL, NULL) &&
	    !jinst_class_parse(&orig, bytes, len, NULL, NULL, NULL))
		check_entry_then_original(back, orig, names[k]);
	jinst_class_free(back);
	jinst_class_free(orig);
	jinst_instrument_counts c;
	jinst_instrument_get_counts(ins, &c);
	free(out);
	jinst_instrument_free(ins);
	jinst_arena_reset(arena);
	return c.methods_instrumented;
}

static void test_instrumenter(void)
{
	static const uint32_t pass_sets[] = {
		JINST_PASS_COUNT, JINST_PASS_TRACE, JINST_PASS_TRACE | JINST_PASS_COUNT_LEAVES, JINST_PASS_COVERAGE,
		JINST_PASS_COVERAGE_COUNTS | JINST_PASS_TRACE,
	};
	jinst_arena *arena;
	CHECK(jinst_arena_new(&arena) == 0, "arena");
	for (size_t p = 0; p < sizeof pass_sets / sizeof pass_sets[0]; p++)
		for (size_t k = 0; k < NCLASSES; k++) {
			bool counts = pass_sets[p] == JINST_PASS_COUNT;
			uint64_t from_file = instrument(pass_sets[p], inputs[k].file, inputs[k].file_len, k, "file", arena, counts);
			uint64_t rebuilt = instrument(pass_sets[p], inputs[k].rebuilt, inputs[k].rebuilt_len, k, "rebuilt", arena, counts);
			CHECK(rebuilt == from_file && rebuilt > 0, "passes 0x%x, %s: %llu methods instrumented, %llu from the file",
			      (unsigned)pass_sets[p], names[k], (unsigned long long)rebuilt, (unsigned long long)from_file);
		}
	jinst_arena_free(arena);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_rebuilt REBUILT_DIR\n");
		return 2;
	}
	for (size_t k = 0; k < NCLASSES; k++) {
		char rel[200];
		snprintf(rel, sizeof rel, "file/%s.class", names[k]);
		inputs[k].file = test_load(argv[1], rel, &inputs[k].file_len);
		snprintf(rel, sizeof rel, "jdk17/%s.class", names[k]);
		inputs[k].rebuilt = test_load(argv[1], rel, &inputs[k].rebuilt_len);
	}
	test_inputs();
	test_edits();
	test_instrumenter();
	for (size_t k = 0; k < NCLASSES; k++) {
		free(inputs[k].file);
		free(inputs[k].rebuilt);
	}
	return check_report();
}
