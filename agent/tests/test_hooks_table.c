/*
 * The hook table (instrument/hooks.c) against runtime-java's compiled
 * classes, read with the class-file library, so the passes and the runtime
 * cannot drift apart:
 *   - the bridge (ARGV[2], java/lang/$JinstHooks) is the table's owner; every
 *     hook is a public static method of it with that descriptor, and it has
 *     no other; each one's code is the one line `jinst.rt.Hooks.NAME(args)`
 *     (its arguments loaded, invokestatic, return or areturn), so the
 *     JIT inlines it whole, or (coverage's) Hooks' own body, instruction by
 *     instruction, naming the same members and numbers, within C1's 35 bytes (called's
 *     within 64, enter's and exit's within 96: body_limit);
 *   - jinst/rt/Hooks (ARGV[1]) has the same public static methods, no other.
 * Both are compiled for Java 8 (major 52).
 */
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/instrument.h"
#include "jinst/opcodes.h"
#include <stdio.h>
#include "hooks_modes.h"
#include "../../tests/testlib.h"

static const char runtime_hooks[] = JINST_RUNTIME_HOOKS;

static bool utf8_is(const uint8_t *p, uint16_t n, const char *s)
{
	return p && strlen(s) == n && !memcmp(p, s, n);
}

/* The bridge body a hook needs: each argument loaded (iload_<n>, lload_<n>,
 * aload_<n> by its slot), then the invokestatic (3 bytes, at *call), then
 * the return of the descriptor's kind; its length, 0 for a descriptor the
 * table should not have. */
static uint32_t bridge_shape(const char *desc, uint8_t *ops, uint32_t *call)
{
	uint32_t n = 0, slot = 0;
	const char *p = desc + 1;
	for (; *p != ')' && *p && slot < 4 && n < 4; p++, n++) {
		if (*p == 'I') {
			ops[n] = (uint8_t)(0x1a + slot++);           /* iload_<n> */
		} else if (*p == 'J') {
			ops[n] = (uint8_t)(0x1e + slot);             /* lload_<n> */
			slot += 2;
		} else if (*p == 'L' && strchr(p, ';')) {
			ops[n] = (uint8_t)(0x2a + slot++);           /* aload_<n> */
			p = strchr(p, ';');
		} else {
			return 0;
		}
	}
	if (*p++ != ')' || slot > 4)
		return 0;
	*call = n;
	n += 3;
	ops[n++] = *p == 'V' ? 0xb1 : *p == '[' ? 0xb0 : 0; /* return, areturn */
	return ops[n - 1] ? n : 0;
}

/* Whether m's code is exactly the one call of jinst/rt/Hooks.h: its
 * arguments loaded, invokestatic, return (bridge_shape). */
static bool calls_runtime(jinst_class *cls, jinst_member *m, const jinst_hook *h)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	jinst_code *code = NULL;
	uint8_t ops[8];
	uint32_t call = 0, len = bridge_shape(h->descriptor, ops, &call);
	if (!len || !a || jinst_attr_decode(cls, a, (void **)&code, NULL) || !code || code->code_length != len)
		return false;
	const uint8_t *b = code->code;
	for (uint32_t i = 0; i < len; i++)
		if (i != call + 1 && i != call + 2 && b[i] != (i == call ? 0xb8 : ops[i]))
			return false;
	jinst_cp_entry ref, nat;
	if (jinst_cp_get(cls, (uint16_t)(b[call + 1] << 8 | b[call + 2]), &ref) ||
	    ref.tag != JINST_CP_METHODREF || jinst_cp_get(cls, ref.u.ref.name_and_type_index, &nat))
		return false;
	uint16_t l1, l2, l3;
	const uint8_t *owner = jinst_cp_name(cls, ref.u.ref.class_index, &l1);
	const uint8_t *name = jinst_cp_utf8(cls, nat.u.nat.name_index, &l2);
	const uint8_t *desc = jinst_cp_utf8(cls, nat.u.nat.descriptor_index, &l3);
	return utf8_is(owner, l1, runtime_hooks) && utf8_is(name, l2, h->name) && utf8_is(desc, l3, h->descriptor);
}

static jinst_code *code_of(jinst_class *cls, jinst_member *m)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	jinst_code *code = NULL;
	return a && !jinst_attr_decode(cls, a, (void **)&code, NULL) ? code : NULL;
}

/* The member a constant-pool reference names, as "owner.name:desc". */
static void member_at(jinst_class *cls, uint16_t index, char *out, size_t size)
{
	jinst_cp_entry ref, nat;
	out[0] = '\0';
	if (jinst_cp_get(cls, index, &ref) || (ref.tag != JINST_CP_METHODREF && ref.tag != JINST_CP_FIELDREF) ||
	    jinst_cp_get(cls, ref.u.ref.name_and_type_index, &nat))
		return;
	uint16_t l1 = 0, l2 = 0, l3 = 0;
	const uint8_t *o = jinst_cp_name(cls, ref.u.ref.class_index, &l1);
	const uint8_t *n = jinst_cp_utf8(cls, nat.u.nat.name_index, &l2);
	const uint8_t *d = jinst_cp_utf8(cls, nat.u.nat.descriptor_index, &l3);
	snprintf(out, size, "%.*s.%.*s:%.*s", (int)l1, o ? (const char *)o : "", (int)l2, n ? (const char *)n : "",
	         (int)l3, d ? (const char *)d : "");
}

/* Whether m of cls has the code of m2 of c2 (the same instructions, the
 * same members named), in at most max bytes. */
static bool same_body(jinst_class *cls, jinst_member *m, jinst_class *c2, jinst_member *m2, uint32_t max)
{
	jinst_code *a = code_of(cls, m), *b = m2 ? code_of(c2, m2) : NULL;
	jinst_insn *x, *y;
	uint32_t nx, ny;
	if (!a || !b || a->code_length > max || a->code_length != b->code_length ||
	    jinst_code_decode(cls, a, &x, &nx, NULL) || jinst_code_decode(c2, b, &y, &ny, NULL) || nx != ny)
		return false;
	for (uint32_t i = 0; i < nx; i++) {
		if (x[i].opcode != y[i].opcode || x[i].length != y[i].length || x[i].sw || y[i].sw)
			return false;
		bool member = jinst_opcodes[x[i].opcode].flags & (JINST_OPF_INVOKE | JINST_OPF_FIELD);
		char mx[300], my[300];
		if (member) {
			member_at(cls, (uint16_t)x[i].operand, mx, sizeof mx);
			member_at(c2, (uint16_t)y[i].operand, my, sizeof my);
			if (!mx[0] || strcmp(mx, my))
				return false;
		} else if (x[i].opcode == JINST_OP_LDC || x[i].opcode == JINST_OP_LDC_W || x[i].opcode == JINST_OP_LDC2_W) {
			/* a number past sipush's (Grid.WIDTH): the same value */
			jinst_cp_entry ex, ey;
			if (jinst_cp_get(cls, (uint16_t)x[i].operand, &ex) || jinst_cp_get(c2, (uint16_t)y[i].operand, &ey) ||
			    ex.tag != ey.tag || (ex.tag != JINST_CP_INTEGER && ex.tag != JINST_CP_LONG) ||
			    !jinst_cp_entry_equal(&ex, &ey))
				return false;
		} else if (x[i].operand != y[i].operand || x[i].operand2 != y[i].operand2) {
			return false;
		}
	}
	return true;
}

/* The most bytes a hook's body in the bridge may have: C1's 35, but for
 * the trace hooks every method runs (called, enter, exit), which C1
 * refuses anyway (its stack limit refuses a long increment, its size the
 * rest), and whose bodies are there for the interpreter's call they save. */
static uint32_t body_limit(int h)
{
	switch (h) {
	case JINST_HOOK_CALLED: return 64;
	case JINST_HOOK_ENTER:
	case JINST_HOOK_EXIT: return 96;
	default: return 35;
	}
}

/* Hooks' public static method of this name and descriptor, or NULL. */
static jinst_member *method_of(jinst_class *cls, const jinst_hook *h)
{
	for (uint16_t i = 0; cls && i < jinst_class_method_count(cls); i++) {
		jinst_member *m = jinst_class_method(cls, i);
		uint16_t nn, dn;
		const uint8_t *mn = jinst_cp_utf8(cls, jinst_member_name_index(m), &nn);
		const uint8_t *md = jinst_cp_utf8(cls, jinst_member_descriptor_index(m), &dn);
		if (utf8_is(mn, nn, h->name) && utf8_is(md, dn, h->descriptor))
			return m;
	}
	return NULL;
}

/* The class at path is named `expect` and its public static methods are
 * the hooks; when hooks_cls is given (the bridge), each one calls
 * jinst/rt/Hooks' namesake or has its body. */
static void check_class(const char *path, const char *expect, jinst_class *hooks_cls)
{
	bool bridge = hooks_cls != NULL;
	size_t len;
	uint8_t *bytes = test_read_file(path, &len);
	CHECK(bytes != NULL, "cannot read %s", path);
	if (!bytes)
		return;
	jinst_class *cls;
	jinst_diag diag;
	int r = jinst_class_parse(&cls, bytes, len, NULL, NULL, &diag);
	CHECK(r == 0, "parse %s: %d", path, r);
	if (r < 0) {
		free(bytes);
		return;
	}
	const jinst_hook *hooks = jinst_hooks();
	uint16_t n;
	const uint8_t *name = jinst_cp_name(cls, jinst_class_this_class(cls), &n);
	CHECK(utf8_is(name, n, expect), "%s is not %s", path, expect);
	CHECK(jinst_class_major_version(cls) == 52, "%s compiled for major %u, not 52 (Java 8)", expect,
	      jinst_class_major_version(cls));
	bool found[JINST_HOOK_COUNT] = {false};
	unsigned public_static = 0;
	for (uint16_t i = 0; i < jinst_class_method_count(cls); i++) {
		jinst_member *m = jinst_class_method(cls, i);
		uint16_t flags = jinst_member_access_flags(m);
		if ((flags & (JINST_ACC_PUBLIC | JINST_ACC_STATIC)) != (JINST_ACC_PUBLIC | JINST_ACC_STATIC))
			continue;
		public_static++;
		uint16_t nn, dn;
		const uint8_t *mn = jinst_cp_utf8(cls, jinst_member_name_index(m), &nn);
		const uint8_t *md = jinst_cp_utf8(cls, jinst_member_descriptor_index(m), &dn);
		bool known = false;
		for (int h = 0; h < JINST_HOOK_COUNT; h++)
			if (utf8_is(mn, nn, hooks[h].name) && utf8_is(md, dn, hooks[h].descriptor)) {
				known = true;
				found[h] = true;
				CHECK(!bridge || calls_runtime(cls, m, &hooks[h]) ||
				          same_body(cls, m, hooks_cls, method_of(hooks_cls, &hooks[h]),
				                    body_limit(h)),
				      "%s.%s%s is neither the one call of %s.%s%s nor its body", expect, hooks[h].name,
				      hooks[h].descriptor, runtime_hooks, hooks[h].name, hooks[h].descriptor);
			}
		CHECK(known, "%s: public static %.*s%.*s is not in the hook table", expect, (int)nn,
		      (const char *)mn, (int)dn, (const char *)md);
	}
	for (int h = 0; h < JINST_HOOK_COUNT; h++)
		CHECK(found[h], "hook %s%s is not a public static method of %s", hooks[h].name, hooks[h].descriptor,
		      expect);
	CHECK(public_static == JINST_HOOK_COUNT, "%s: %u public static methods", expect, public_static);
	jinst_class_free(cls);
	free(bytes);
}

/* Hooks' static final int NAME, from its ConstantValue; -1 without one. */
static long int_constant(jinst_class *cls, const char *name)
{
	for (uint16_t i = 0; i < jinst_class_field_count(cls); i++) {
		jinst_member *f = jinst_class_field(cls, i);
		uint16_t n;
		const uint8_t *fn = jinst_cp_utf8(cls, jinst_member_name_index(f), &n);
		jinst_attr *a = utf8_is(fn, n, name) ? jinst_attr_find(jinst_member_attrs(f), JINST_ATTR_CONSTANT_VALUE) : NULL;
		jinst_attr_index *ix;
		jinst_cp_entry e;
		if (a && !jinst_attr_decode(cls, a, (void **)&ix, NULL) && ix && !jinst_cp_get(cls, ix->index, &e) &&
		    e.tag == JINST_CP_INTEGER)
			return (int32_t)e.u.u4;
	}
	return -1;
}

/* The mode bits the agent engages the hooks with are Hooks' own. */
static void check_modes(const char *path)
{
	size_t len;
	uint8_t *bytes = test_read_file(path, &len);
	jinst_class *cls;
	if (!bytes || jinst_class_parse(&cls, bytes, len, NULL, NULL, NULL)) {
		CHECK(false, "cannot read %s", path);
		free(bytes);
		return;
	}
	static const struct { const char *name; long bit; } modes[] = {
		{"COUNTS", HOOKS_COUNTS}, {"TIMES", HOOKS_TIMES}, {"TREE", HOOKS_TREE}, {"EVENTS", HOOKS_EVENTS},
		{"CPU", HOOKS_CPU}};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		CHECK(int_constant(cls, modes[i].name) == modes[i].bit, "Hooks.%s is %ld, the agent's %ld", modes[i].name,
		      int_constant(cls, modes[i].name), modes[i].bit);
	jinst_class_free(cls);
	free(bytes);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		printf("usage: test_hooks_table Hooks.class Bridge.class [StandIn.class]\n");
		return 2;
	}
	const jinst_hook *hooks = jinst_hooks();
	for (int h = 1; h < JINST_HOOK_COUNT; h++)
		CHECK(!strcmp(hooks[h].owner, hooks[0].owner), "hook %d's owner %s is not %s", h, hooks[h].owner,
		      hooks[0].owner);
	size_t len;
	uint8_t *bytes = test_read_file(argv[1], &len);
	jinst_class *hooks_cls = NULL;
	CHECK(bytes && !jinst_class_parse(&hooks_cls, bytes, len, NULL, NULL, NULL), "cannot read %s", argv[1]);
	check_class(argv[2], hooks[0].owner, hooks_cls);
	check_class(argv[1], runtime_hooks, NULL);
	check_modes(argv[1]);
	/* tests/instrument's stand-in for the runtime, which offline tests run */
	if (argc > 3)
		check_class(argv[3], runtime_hooks, NULL);
	jinst_class_free(hooks_cls);
	free(bytes);
	return check_report();
}
