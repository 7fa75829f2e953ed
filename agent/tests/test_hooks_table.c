/*
 * The hook table (instrument/hooks.c) against runtime-java's compiled
 * classes, read with the class-file library, so the passes and the runtime
 * cannot drift apart:
 *   - the bridge (ARGV[2], java/lang/$JinstHooks) is the table's owner; every
 *     hook is a public static method of it with that descriptor, and it has
 *     no other; each one's code is the one line `jinst.rt.Hooks.NAME(args)`
 *     (its int arguments loaded, invokestatic, return or areturn), so the
 *     JIT inlines it whole;
 *   - jinst/rt/Hooks (ARGV[1]) has the same public static methods, no other.
 * Both are compiled for Java 8 (major 52).
 */
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/instrument.h"
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

/* The class at path is named `expect` and its public static methods are
 * the hooks; when bridge, each one calls jinst/rt/Hooks' namesake. */
static void check_class(const char *path, const char *expect, bool bridge)
{
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
				CHECK(!bridge || calls_runtime(cls, m, &hooks[h]),
				      "%s.%s%s is not the one call of %s.%s%s", expect, hooks[h].name,
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
		{"COUNTS", HOOKS_COUNTS}, {"TIMES", HOOKS_TIMES}, {"TREE", HOOKS_TREE}, {"EVENTS", HOOKS_EVENTS}};
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
	check_class(argv[2], hooks[0].owner, true);
	check_class(argv[1], runtime_hooks, false);
	check_modes(argv[1]);
	/* tests/instrument's stand-in for the runtime, which offline tests run */
	if (argc > 3)
		check_class(argv[3], runtime_hooks, false);
	return check_report();
}
