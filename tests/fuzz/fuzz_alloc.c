/*
 * libFuzzer target for the allocation pass (include/jinst/alloc.h): its
 * data flow over `new` and its uninitialized references, and its hooks,
 * alone or after the trace or coverage pass, on any class file.
 *
 * The input is a class file; the passes beside the allocation pass come
 * from a hash of it. Nothing may crash whatever the bytes. When the class
 * is instrumented, the output must parse; every call of an allocation hook
 * must be `dup; push SITE; invokestatic` (or, for a `new` whose reference
 * ECJ drops, `invokespecial <init>; push SITE; invokestatic`; for a
 * clone() that may reach an override, `dup; invoke...; dup_x1;
 * aconst_null | ldc START; push SITE; invokestatic`) with SITE a site of
 * the table, whose fields are all there; when no method was left alone,
 * there must be exactly one array hook per newarray, anewarray and
 * multianewarray of the input, beside the hooks after calls (neither
 * checked when the input calls an allocation hook itself); and a second
 * instrumenter must write the same bytes and hand out the same sites.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "jinst/alloc.h"
#include "jinst/instrument.h"
#include "jinst/opcodes.h"

static const uint32_t modes[] = {0, JINST_PASS_TRACE, JINST_PASS_COUNT | JINST_PASS_COVERAGE};

static void count_left(void *ctx, const char *c, const char *m, const char *d, const jinst_diag *why)
{
	(void)c, (void)m, (void)d, (void)why;
	(*(unsigned *)ctx)++;
}

typedef struct outcome {
	int rc;
	uint8_t *out;
	size_t len;
	unsigned left;
	jinst_instrument *ins;
	jinst_alloc_sites *sites;
} outcome;

static void run(outcome *o, uint32_t passes, jinst_arena *arena, const uint8_t *data, size_t size)
{
	memset(o, 0, sizeof(*o));
	jinst_instrument_options opts = JINST_INSTRUMENT_OPTIONS_INIT;
	opts.passes = passes;
	opts.left_alone = count_left;
	opts.left_alone_ctx = &o->left;
	jinst_diag d;
	CHECK(jinst_instrument_new(&o->ins, &opts, &d) == 0, "no instrumenter: %s", d.message);
	jinst_pass pass;
	CHECK(jinst_alloc_pass(&pass, &o->sites) == 0, "no pass");
	CHECK(jinst_instrument_add_pass(o->ins, &pass, &d) == 0, "pass refused: %s", d.message);
	jinst_arena_reset(arena);
	o->rc = jinst_instrument_class(o->ins, arena, data, size, NULL, 0, NULL, &o->out, &o->len, &d);
	CHECK(o->rc <= 0 && (!o->rc || !o->out), "instrument returned %d with bytes", o->rc);
}

/* The name of the allocation hook an invokestatic calls (owner, name and
 * descriptor those of the hook table), or "": an input's own call of a
 * method named alloc... is not one. */
static const char *callee(jinst_class *c, uint16_t index)
{
	jinst_cp_entry e, nt;
	uint16_t on = 0, nn = 0, dn = 0;
	const uint8_t *owner = NULL, *name = NULL, *desc = NULL;
	if (jinst_cp_get(c, index, &e) || e.tag != JINST_CP_METHODREF || jinst_cp_get(c, e.u.ref.name_and_type_index, &nt))
		return "";
	owner = jinst_cp_name(c, e.u.ref.class_index, &on);
	name = jinst_cp_utf8(c, nt.u.nat.name_index, &nn);
	desc = jinst_cp_utf8(c, nt.u.nat.descriptor_index, &dn);
	if (!owner || !name || !desc)
		return "";
	for (int h = JINST_HOOK_ALLOC_OBJECT; h <= JINST_HOOK_ALLOC_CLONE; h++) {
		const jinst_hook *k = &jinst_hooks()[h];
		if (on == strlen(k->owner) && !memcmp(owner, k->owner, on) && nn == strlen(k->name) &&
		    !memcmp(name, k->name, nn) && dn == strlen(k->descriptor) && !memcmp(desc, k->descriptor, dn))
			return k->name;
	}
	return "";
}

enum census { ARRAYS, HOOKS, HOOK_CALLS };

/* Array instructions of the input (ARRAYS), array hooks of the output
 * (HOOKS, each checked for its shape and its site), or calls of any
 * allocation hook, unchecked (HOOK_CALLS); -1 when a method does not
 * decode. */
static long census(jinst_arena *arena, const uint8_t *bytes, size_t len, enum census what, jinst_alloc_sites *sites)
{
	jinst_class *c;
	jinst_arena_reset(arena);
	if (jinst_class_parse(&c, bytes, len, arena, NULL, NULL))
		return -1;
	long n = 0;
	for (uint16_t i = 0; n >= 0 && i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		jinst_code *code;
		jinst_insn *in;
		uint32_t k;
		/* (the instrumenter leaves an abstract or native method's code
		 * alone: such a method has none that runs) */
		if (!a || (jinst_member_access_flags(m) & (JINST_ACC_ABSTRACT | JINST_ACC_NATIVE)))
			continue;
		if (jinst_attr_decode(c, a, (void **)&code, NULL) || jinst_code_decode(c, code, &in, &k, NULL)) {
			n = -1;
			break;
		}
		for (uint32_t j = 0; j < k; j++) {
			uint8_t op = in[j].opcode;
			if (what == ARRAYS) {
				n += op == JINST_OP_NEWARRAY || op == JINST_OP_ANEWARRAY || op == JINST_OP_MULTIANEWARRAY;
				continue;
			}
			if (op != JINST_OP_INVOKESTATIC)
				continue;
			const char *name = callee(c, (uint16_t)in[j].operand);
			if (!name[0])
				continue;
			if (what == HOOK_CALLS) {
				n++;
				continue;
			}
			/* allocClone: `dup` before the clone() call, then `dup_x1;
			 * aconst_null | ldc START` after it */
			bool clone = !strcmp(name, "allocClone");
			uint32_t at = clone ? j - 3 : j - 2; /* the dup or dup_x1 */
			CHECK(j >= (clone ? 5u : 2u), "%s at %u", name, j);
			CHECK(clone ? in[at].opcode == JINST_OP_DUP_X1 && in[at - 1].opcode >= JINST_OP_INVOKEVIRTUAL &&
			                  in[at - 1].opcode <= JINST_OP_INVOKEINTERFACE && in[at - 2].opcode == JINST_OP_DUP &&
			                  (in[j - 2].opcode == JINST_OP_ACONST_NULL || in[j - 2].opcode == JINST_OP_LDC ||
			                   in[j - 2].opcode == JINST_OP_LDC_W)
			            /* (ECJ's dropped `new`: the dup went after the `new`) */
			            : in[at].opcode == JINST_OP_DUP ||
			                  (!strcmp(name, "allocObject") && in[at].opcode == JINST_OP_INVOKESPECIAL),
			      "%s without its dup", name);
			uint8_t push = in[j - 1].opcode;
			CHECK(push == JINST_OP_BIPUSH || push == JINST_OP_SIPUSH || push == JINST_OP_LDC ||
			          push == JINST_OP_LDC_W || (push >= JINST_OP_ICONST_0 && push <= JINST_OP_ICONST_5),
			      "%s without its site", name);
			jinst_alloc_site s = {.kind = JINST_ALLOC_ANY}; /* (what an ldc's site is not checked for) */
			if (push != JINST_OP_LDC && push != JINST_OP_LDC_W) { /* (an ldc's site is an Integer) */
				int32_t id = push == JINST_OP_BIPUSH || push == JINST_OP_SIPUSH ? in[j - 1].operand
				                                                                : push - JINST_OP_ICONST_0;
				CHECK(id >= 0 && jinst_alloc_sites_get(&s, sites, (uint32_t)id) == 0 && s.class_name && s.method &&
				          s.descriptor && s.type && s.kind <= JINST_ALLOC_ANY,
				      "site %d not in the table", (int)id);
			}
			/* A call's hook follows the call, with a site of kind ANY. */
			bool call = at > 0 && (jinst_opcodes[in[at - 1].opcode].flags & JINST_OPF_INVOKE) &&
			            strcmp(name, "allocObject");
			CHECK(!call || s.kind == JINST_ALLOC_ANY,
			      "%s after a call with a site of kind %u", name, s.kind);
			n += !call && strcmp(name, "allocObject") != 0;
		}
	}
	jinst_class_free(c);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t seed = fuzz_seed(data, size);
	uint32_t passes = modes[fuzz_next(&seed) % (sizeof(modes) / sizeof(modes[0]))];
	jinst_arena *arena;
	CHECK(jinst_arena_new(&arena) == 0, "no arena");
	outcome a, b;
	run(&a, passes, arena, data, size);
	if (!a.rc && a.out) {
		/* An input that calls an allocation hook itself has calls the
		 * pass did not write, of any shape: its output's hooks are not
		 * checked. */
		if (census(arena, data, size, HOOK_CALLS, NULL) == 0) {
			long want = census(arena, data, size, ARRAYS, NULL);
			long got = census(arena, a.out, a.len, HOOKS, a.sites);
			CHECK(got >= 0 || want < 0, "the output does not decode");
			CHECK(a.left || want < 0 || got == want, "%ld array hooks for %ld array instructions", got, want);
		}
		run(&b, passes, arena, data, size);
		CHECK(!b.rc && b.len == a.len && !memcmp(a.out, b.out, a.len), "a second instrumenter wrote other bytes");
		uint32_t n = jinst_alloc_sites_count(a.sites);
		CHECK(n == jinst_alloc_sites_count(b.sites), "a second instrumenter handed out other sites");
		for (uint32_t i = 0; i < n; i++) {
			jinst_alloc_site x, y;
			CHECK(!jinst_alloc_sites_get(&x, a.sites, i) && !jinst_alloc_sites_get(&y, b.sites, i) &&
			          !strcmp(x.class_name, y.class_name) && !strcmp(x.method, y.method) &&
			          !strcmp(x.type, y.type) && x.line == y.line && x.kind == y.kind,
			      "site %u differs", i);
		}
		free(b.out);
		jinst_instrument_free(b.ins);
	}
	free(a.out);
	jinst_instrument_free(a.ins);
	jinst_arena_free(arena);
	return 0;
}
