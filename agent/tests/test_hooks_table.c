/*
 * The hook table (instrument/hooks.c) against runtime-java's compiled
 * jinst/rt/Hooks (ARGV[1]), read with the class-file library: every hook is
 * a public static method of that class with that descriptor, and the class
 * has no other public static method, so the passes and the runtime cannot
 * drift apart.
 */
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/instrument.h"
#include "../../tests/testlib.h"

static bool utf8_is(const uint8_t *p, uint16_t n, const char *s)
{
	return p && strlen(s) == n && !memcmp(p, s, n);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		printf("usage: test_hooks_table Hooks.class\n");
		return 2;
	}
	size_t len;
	uint8_t *bytes = test_read_file(argv[1], &len);
	CHECK(bytes != NULL, "cannot read %s", argv[1]);
	if (!bytes)
		return check_report();
	jinst_class *cls;
	jinst_diag diag;
	int r = jinst_class_parse(&cls, bytes, len, NULL, NULL, &diag);
	CHECK(r == 0, "parse: %d", r);
	if (r < 0)
		return check_report();
	const jinst_hook *hooks = jinst_hooks();
	uint16_t n;
	const uint8_t *name = jinst_cp_name(cls, jinst_class_this_class(cls), &n);
	for (int h = 0; h < JINST_HOOK_COUNT; h++)
		CHECK(utf8_is(name, n, hooks[h].owner), "hook %d owner %s is not the class", h, hooks[h].owner);
	CHECK(jinst_class_major_version(cls) == 52, "runtime compiled for major %u, not 52 (Java 8)",
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
			}
		CHECK(known, "public static %.*s%.*s is not in the hook table", (int)nn, (const char *)mn, (int)dn,
		      (const char *)md);
	}
	for (int h = 0; h < JINST_HOOK_COUNT; h++)
		CHECK(found[h], "hook %s.%s%s is not a public static method of the runtime", hooks[h].owner,
		      hooks[h].name, hooks[h].descriptor);
	CHECK(public_static == JINST_HOOK_COUNT, "%u public static methods", public_static);
	jinst_class_free(cls);
	free(bytes);
	return check_report();
}
