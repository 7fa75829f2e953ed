/*
 * The pass interface (label unit): a pass of the test's own beside the
 * trace pass in one parse and one write, several passes on one method, the
 * hooks' references added only when used, the class identity and the
 * JinstInstrumented marker, and a class never instrumented twice.
 *   test_passes DATA_CLASSES TRACE_CLASSES
 */
#include <string.h>

#include "jinst/instrument.h"
#include "jinst/opcodes.h"
#include "jinst/patch.h"

#include "../testlib.h"


static jinst_arena *arena;

/* ---- a pass of the test's own: a call before every athrow ---- */

typedef struct throws {
	unsigned begun, methods, athrows, ended, written;
	bool skip_classes;  /* decline every class in begin */
} throws;

static const char probe_owner[] = "jinsttest/Probe", probe_name[] = "thrown", probe_desc[] = "(I)V";

static int throws_begin(void *state, jinst_pass_class *cls, jinst_diag *diag)
{
	(void)diag;
	throws *t = state;
	t->begun++;
	CHECK(jinst_pass_class_method_count(cls) > 0 && jinst_pass_class_name(cls)[0], "begin sees the class");
	return t->skip_classes ? JINST_PASS_SKIP : 0;
}

static int throws_method(void *state, jinst_pass_class *cls, jinst_pass_method *m, jinst_diag *diag)
{
	throws *t = state;
	t->methods++;
	jinst_class *c = jinst_pass_class_model(cls);
	jinst_patch *p;
	int rc = jinst_patch_open(&p, c, jinst_pass_method_member(m), diag);
	if (rc)
		return rc == JINST_EUNSUPPORTED ? JINST_PASS_SKIP : rc;
	uint16_t ref;
	uint32_t id, n = jinst_patch_count(p), found = 0;
	if ((rc = jinst_pass_method_id(m, 0, &id)) || (rc = jinst_pass_methodref(cls, probe_owner, probe_name, probe_desc, &ref)))
		return rc;
	uint8_t call[] = {JINST_OP_SIPUSH, (uint8_t)(id >> 8), (uint8_t)id, JINST_OP_INVOKESTATIC, (uint8_t)(ref >> 8),
	                  (uint8_t)ref};
	for (uint32_t i = 0; i < n && !rc; i++)
		if (jinst_patch_opcode(p, i) == JINST_OP_ATHROW) {
			found++;
			rc = jinst_patch_insert(p, jinst_patch_offset(p, i), JINST_BEFORE_INSIDE, call, sizeof(call), 1);
		}
	if (!rc && found)
		rc = jinst_patch_commit(p, diag);
	t->athrows += found;
	return rc ? rc : found ? 0 : JINST_PASS_SKIP;
}

static void throws_end(void *state, jinst_pass_class *cls, bool written)
{
	(void)cls;
	throws *t = state;
	t->ended++;
	t->written += written;
}

static jinst_pass throws_pass(throws *t)
{
	jinst_pass p = {JINST_PASS_VERSION, "throws", t, throws_begin, throws_method, throws_end, NULL};
	return p;
}

/* ---- what an output holds ---- */

static bool utf8_is(jinst_class *c, uint16_t index, const char *want)
{
	uint16_t len = 0;
	const uint8_t *s = jinst_cp_utf8(c, index, &len);
	return s && len == strlen(want) && !memcmp(s, want, len);
}

/* How many Methodrefs to name the pool has, and how many invokestatic of
 * name the code runs (whatever the owner). */
static unsigned refs_to(jinst_class *c, const char *name)
{
	unsigned n = 0;
	for (uint16_t i = 1; i < jinst_cp_count(c); i++) {
		jinst_cp_entry r, nat;
		if (jinst_cp_tag(c, i) == JINST_CP_METHODREF && !jinst_cp_get(c, i, &r) &&
		    !jinst_cp_get(c, r.u.ref.name_and_type_index, &nat) && utf8_is(c, nat.u.nat.name_index, name))
			n++;
	}
	return n;
}

static unsigned calls_to(jinst_class *c, const char *name)
{
	unsigned n = 0;
	for (uint16_t k = 0; k < jinst_class_method_count(c); k++) {
		jinst_member *m = jinst_class_method(c, k);
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		jinst_code *code;
		jinst_insn *in;
		uint32_t count;
		if (!a || jinst_attr_decode(c, a, (void **)&code, NULL) || jinst_code_decode(c, code, &in, &count, NULL))
			continue;
		for (uint32_t i = 0; i < count; i++) {
			jinst_cp_entry r, nat;
			if (in[i].opcode == JINST_OP_INVOKESTATIC && !jinst_cp_get(c, (uint16_t)in[i].operand, &r) &&
			    !jinst_cp_get(c, r.u.ref.name_and_type_index, &nat) && utf8_is(c, nat.u.nat.name_index, name))
				n++;
		}
	}
	return n;
}

static uint8_t *instrument(jinst_instrument *ins, const uint8_t *b, size_t len, const uint64_t *identity,
                           size_t *out_len, jinst_diag *d)
{
	uint8_t *out = NULL;
	jinst_arena_reset(arena);
	int rc = jinst_instrument_class(ins, arena, b, len, identity, 0, NULL, &out, out_len, d);
	CHECK(rc == 0, "instrument: %s %s", jinst_strerror(rc), d->message);
	return out;
}

/* ---- the checks ---- */

static void check_marker(const char *data)
{
	size_t len, out_len, again_len;
	uint8_t *b = test_load(data, "main/jinsttest/Features.class", &len);
	jinst_instrument *ins;
	jinst_diag d;
	CHECK(!jinst_instrument_new(&ins, NULL, NULL), "new");
	jinst_marker mk;
	CHECK(!jinst_instrument_read_marker(arena, b, len, &mk, NULL) && !mk.present && !mk.runtime_refs,
	      "a class never instrumented has no marker");
	uint8_t *out = instrument(ins, b, len, NULL, &out_len, &d);
	CHECK(out && !jinst_instrument_read_marker(arena, out, out_len, &mk, NULL) && mk.present && mk.runtime_refs,
	      "the output has the marker");
	CHECK(mk.identity == jinst_instrument_identity(b, len) && !strcmp(mk.passes, "trace"),
	      "marker: identity %016llx, passes '%s'", (unsigned long long)mk.identity, mk.passes);
	/* XXH64 of a known input, so the identity is the documented function */
	CHECK(jinst_instrument_identity((const uint8_t *)"", 0) == 0xef46db3751d8e999ULL, "XXH64 of nothing");

	uint8_t *again = instrument(ins, out, out_len, NULL, &again_len, &d);
	CHECK(!again && strstr(d.message, "already instrumented (it has the JinstInstrumented attribute)"),
	      "instrumented output is not instrumented again: '%s'", d.message);

	uint64_t first = 0x0123456789abcdefULL;
	free(out);
	out = instrument(ins, b, len, &first, &out_len, &d);
	CHECK(out && !jinst_instrument_read_marker(arena, out, out_len, &mk, NULL) && mk.identity == first,
	      "the identity the caller gives is the marker's");
	free(out);
	jinst_instrument_free(ins);
	free(b);
}

/* Features with a reference to owner.dump()V added to its pool, and nothing else changed. */
static uint8_t *with_ref(const uint8_t *b, size_t len, const char *owner, size_t *out_len)
{
	jinst_class *c = NULL;
	uint16_t ix;
	uint8_t *out = NULL;
	jinst_arena_reset(arena);
	CHECK(!jinst_class_parse(&c, b, len, arena, NULL, NULL) && !jinst_cp_add_methodref(c, owner, "dump", "()V", &ix) &&
	          !jinst_class_write(c, NULL, &out, out_len, NULL),
	      "a reference to %s added", owner);
	jinst_class_free(c);
	return out;
}

static void check_runtime_refs(const char *data)
{
	size_t len, ref_len, out_len;
	uint8_t *b = test_load(data, "main/jinsttest/Features.class", &len);
	jinst_instrument *ins;
	jinst_diag d;
	CHECK(!jinst_instrument_new(&ins, NULL, NULL), "new");
	/* A program may call the runtime's other classes itself. */
	uint8_t *ref = with_ref(b, len, "jinst/rt/Control", &ref_len);
	uint8_t *out = instrument(ins, ref, ref_len, NULL, &out_len, &d);
	CHECK(out != NULL, "a class calling jinst/rt/Control is instrumented: '%s'", d.message);
	free(out);
	free(ref);
	/* Naming the hooks' class, with or without the marker, it was instrumented. */
	ref = with_ref(b, len, JINST_RUNTIME_HOOKS, &ref_len);
	out = instrument(ins, ref, ref_len, NULL, &out_len, &d);
	CHECK(!out && strstr(d.message, "already instrumented (it refers to " JINST_RUNTIME_HOOKS ")"),
	      "a class naming the hooks is not instrumented again: '%s'", d.message);
	free(ref);
	jinst_instrument_free(ins);
	free(b);
}

static void check_hook_refs(const char *data)
{
	size_t len, out_len;
	uint8_t *b = test_load(data, "main/jinsttest/Features.class", &len);
	jinst_diag d;
	jinst_class *c = NULL;
	jinst_instrument *ins;
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.passes = JINST_PASS_COUNT;
	CHECK(!jinst_instrument_new(&ins, &o, NULL), "new (counts)");
	uint8_t *out = instrument(ins, b, len, NULL, &out_len, &d);
	if (!out || jinst_class_parse(&c, out, out_len, arena, NULL, NULL)) {
		CHECK(false, "instrumented and parsed: '%s'", d.message);
		return;
	}
	CHECK(refs_to(c, "called") == 1 && !refs_to(c, "enter") && !refs_to(c, "exit") && !refs_to(c, "exitThrow"),
	      "counts: the counting hook alone in the pool");
	jinst_class_free(c);
	free(out);
	jinst_instrument_free(ins);

	o.passes = JINST_PASS_TRACE;
	o.hooks_class = "jinsttest/MyHooks";
	CHECK(!jinst_instrument_new(&ins, &o, NULL), "new (trace)");
	out = instrument(ins, b, len, NULL, &out_len, &d);
	if (!out || jinst_class_parse(&c, out, out_len, arena, NULL, NULL)) {
		CHECK(false, "instrumented and parsed: '%s'", d.message);
		return;
	}
	CHECK(!refs_to(c, "called") && refs_to(c, "enter") == 1 && refs_to(c, "exit") == 1 && refs_to(c, "exitThrow") == 1,
	      "trace: entry, exit and exceptional exit, not the counting hook");
	bool named = false;
	for (uint16_t i = 1; i < jinst_cp_count(c); i++) {
		jinst_cp_entry e;
		named |= jinst_cp_tag(c, i) == JINST_CP_CLASS && !jinst_cp_get(c, i, &e) &&
		         utf8_is(c, e.u.index, "jinsttest/MyHooks");
	}
	CHECK(named, "hooks_class names the hooks' owner");
	jinst_class_free(c);
	free(out);
	jinst_instrument_free(ins);
	free(b);
}

static void check_two_passes(const char *trace)
{
	size_t len, out_len;
	uint8_t *b = test_load(trace, "jinsttrace/Main.class", &len);
	jinst_diag d;
	jinst_class *c = NULL;
	jinst_instrument *ins;
	throws t = {0};
	jinst_pass p = throws_pass(&t);
	CHECK(!jinst_instrument_new(&ins, NULL, NULL) && !jinst_instrument_add_pass(ins, &p, NULL), "new + add_pass");
	jinst_pass dup = throws_pass(&t);
	CHECK(jinst_instrument_add_pass(ins, &dup, &d) == JINST_EINVAL && strstr(d.message, "already"),
	      "a second pass of one name is refused");
	uint8_t *out = instrument(ins, b, len, NULL, &out_len, &d);
	if (!out || jinst_class_parse(&c, out, out_len, arena, NULL, NULL)) {
		CHECK(false, "instrumented and parsed: '%s'", d.message);
		return;
	}
	CHECK(t.begun == 1 && t.ended == 1 && t.written == 1 && t.methods == jinst_instrument_method_count(ins) &&
	          t.athrows >= 1,
	      "throws: begun %u, %u methods, %u athrow, ended %u, written %u", t.begun, t.methods, t.athrows, t.ended,
	      t.written);
	CHECK(calls_to(c, probe_name) == t.athrows && calls_to(c, "exitThrow") >= 1,
	      "both passes' calls are in the code, on the same methods (%u thrown calls)", calls_to(c, probe_name));
	jinst_marker mk;
	CHECK(!jinst_instrument_read_marker(arena, out, out_len, &mk, NULL) && !strcmp(mk.passes, "trace,throws"),
	      "the marker names both passes: '%s'", mk.passes);
	jinst_class_free(c);
	free(out);

	/* A pass that declines every class: the trace pass alone changes it. */
	t.skip_classes = true;
	unsigned before = t.methods;
	out = instrument(ins, b, len, NULL, &out_len, &d);
	CHECK(out && t.methods == before && !jinst_instrument_read_marker(arena, out, out_len, &mk, NULL) &&
	          !strcmp(mk.passes, "trace"),
	      "a declined class: no method calls, marker '%s'", mk.passes);
	free(out);
	jinst_instrument_free(ins);
	free(b);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_passes DATA_CLASSES TRACE_CLASSES\n");
		return 2;
	}
	CHECK(!jinst_arena_new(&arena), "arena");
	check_marker(argv[1]);
	check_runtime_refs(argv[1]);
	check_hook_refs(argv[1]);
	check_two_passes(argv[2]);
	jinst_arena_free(arena);
	return check_report();
}
