/*
 * The allocation pass (include/jinst/alloc.h) on javac's code: the
 * fixture of jvm_alloc (jinstcheck/AllocSites and its nested classes, from
 * the agent's test classes). Every `new`, every array instruction and
 * every call that returns what a native made (clone(), reflection) gets
 * its hook; the sites carry the method, line, type and kind of the source
 * (the `new` that never completes among them: hooked, it simply never
 * runs); a clone() that may reach an override gets allocClone with the
 * class its lookup starts at; the ids are kept when a class is
 * instrumented again (as for a retransformation, and after other classes
 * took ids), and the bytes are the same.
 *   test_alloc_pass CHECKS_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/alloc.h"
#include "jinst/instrument.h"
#include "jinst/opcodes.h"
#include "../../tests/testlib.h"

typedef struct tally {
	unsigned news, arrays, calls, object_hooks, array_hooks, call_hooks;
	/* allocClone hooks, with `aconst_null` (the receiver's class) or the
	 * String of the class the lookup starts at (the last one here) */
	unsigned clone_hooks, started;
	char start[64];
} tally;

static bool is(const uint8_t *p, uint16_t n, const char *s)
{
	return p && n == strlen(s) && !memcmp(p, s, n);
}

/* The method a call names: owner, name and descriptor ("" when none). */
static void member(jinst_class *c, const jinst_insn *in, const uint8_t *m[3], uint16_t l[3])
{
	jinst_cp_entry e, nt;
	m[0] = m[1] = m[2] = NULL;
	l[0] = l[1] = l[2] = 0;
	if (!(jinst_opcodes[in->opcode].flags & JINST_OPF_INVOKE) || in->opcode == JINST_OP_INVOKEDYNAMIC ||
	    jinst_cp_get(c, (uint16_t)in->operand, &e) || jinst_cp_get(c, e.u.ref.name_and_type_index, &nt))
		return;
	m[0] = jinst_cp_name(c, e.u.ref.class_index, &l[0]);
	m[1] = jinst_cp_utf8(c, nt.u.nat.name_index, &l[1]);
	m[2] = jinst_cp_utf8(c, nt.u.nat.descriptor_index, &l[2]);
}

/* Whether in is a call that returns what a native made: clone() of
 * Object's descriptor, Array.newInstance, Constructor.newInstance,
 * Class.newInstance (the fixture calls no other). */
static bool allocating_call(jinst_class *c, const jinst_insn *in)
{
	const uint8_t *m[3];
	uint16_t l[3];
	member(c, in, m, l);
	return (is(m[1], l[1], "clone") && is(m[2], l[2], "()Ljava/lang/Object;")) ||
	       (is(m[1], l[1], "newInstance") &&
	        (is(m[0], l[0], "java/lang/reflect/Array") || is(m[0], l[0], "java/lang/reflect/Constructor") ||
	         is(m[0], l[0], "java/lang/Class")));
}

/* One hook of the output (in[j] its invokestatic, name its method) into t. */
static void tally_hook(tally *t, jinst_class *c, const jinst_insn *in, uint32_t j, const uint8_t *name, uint16_t l)
{
	bool after_call = j >= 3 && (jinst_opcodes[in[j - 3].opcode].flags & JINST_OPF_INVOKE);
	t->object_hooks += is(name, l, "allocObject");
	t->array_hooks += is(name, l, "allocArray") || (is(name, l, "allocArrays") && !after_call);
	t->call_hooks += is(name, l, "allocAny") || is(name, l, "allocClone") || (is(name, l, "allocArrays") && after_call);
	if (!is(name, l, "allocClone"))
		return;
	t->clone_hooks++;
	uint16_t n = 0;
	const uint8_t *start = in[j - 2].opcode == JINST_OP_LDC || in[j - 2].opcode == JINST_OP_LDC_W
	                               ? jinst_cp_name(c, (uint16_t)in[j - 2].operand, &n)
	                               : NULL;
	if (start) {
		t->started++;
		snprintf(t->start, sizeof t->start, "%.*s", (int)n, (const char *)start);
	}
}

/* The allocation instructions and hooks of a class file. */
static tally count(const uint8_t *bytes, size_t len)
{
	tally t = {0};
	jinst_class *c;
	if (jinst_class_parse(&c, bytes, len, NULL, NULL, NULL))
		return t;
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(jinst_class_method(c, i)), JINST_ATTR_CODE);
		jinst_code *code;
		jinst_insn *in;
		uint32_t n = 0;
		if (!a || jinst_attr_decode(c, a, (void **)&code, NULL) || jinst_code_decode(c, code, &in, &n, NULL))
			n = 0;
		for (uint32_t j = 0; j < n; j++) {
			jinst_cp_entry e, nt;
			uint16_t l = 0;
			const uint8_t *name = NULL;
			t.news += in[j].opcode == JINST_OP_NEW;
			t.arrays += in[j].opcode == JINST_OP_NEWARRAY || in[j].opcode == JINST_OP_ANEWARRAY ||
			            in[j].opcode == JINST_OP_MULTIANEWARRAY;
			t.calls += allocating_call(c, &in[j]);
			if (in[j].opcode == JINST_OP_INVOKESTATIC && !jinst_cp_get(c, (uint16_t)in[j].operand, &e) &&
			    !jinst_cp_get(c, e.u.ref.name_and_type_index, &nt))
				name = jinst_cp_utf8(c, nt.u.nat.name_index, &l);
			if (name && l > 5 && !memcmp(name, "alloc", 5))
				tally_hook(&t, c, in, j, name, l);
		}
	}
	jinst_class_free(c);
	return t;
}

/* Instruments path's class (flags as for jinst_instrument_class); its
 * bytes into *out (malloc'd). */
static int instrument(jinst_instrument *ins, jinst_arena *arena, const char *path, uint32_t flags, uint8_t **out,
                      size_t *out_len, tally *in)
{
	size_t len;
	uint8_t *bytes = test_read_file(path, &len);
	CHECK(bytes != NULL, "cannot read %s", path);
	if (!bytes)
		return -1;
	uint64_t identity = jinst_instrument_identity(bytes, len);
	jinst_diag d;
	jinst_arena_reset(arena);
	int rc = jinst_instrument_class(ins, arena, bytes, len, flags ? &identity : NULL, flags, NULL, out, out_len, &d);
	CHECK(rc == 0 && *out, "%s: %d %s", path, rc, d.message);
	if (in)
		*in = count(bytes, len);
	free(bytes);
	return rc;
}

/* The site of (method, line, type), or -1. */
static long find_site(const jinst_alloc_sites *sites, const char *method, uint32_t line, const char *type)
{
	for (uint32_t i = 0; i < jinst_alloc_sites_count(sites); i++) {
		jinst_alloc_site s;
		if (!jinst_alloc_sites_get(&s, sites, i) && !strcmp(s.method, method) && s.line == line &&
		    !strcmp(s.type, type))
			return i;
	}
	return -1;
}

/* The line of "// site:tag" in the fixture's source. */
static uint32_t tag_line(const char *src, const char *tag)
{
	char want[64], buf[512];
	snprintf(want, sizeof want, "// site:%s", tag);
	FILE *f = fopen(src, "r");
	uint32_t n = 0, line = 0;
	while (f && !line && fgets(buf, sizeof buf, f)) {
		n++;
		char *p = strstr(buf, want);
		if (p && (p[strlen(want)] == '\n' || p[strlen(want)] == '\0'))
			line = n;
	}
	if (f)
		fclose(f);
	return line;
}

static void check_sites(const jinst_alloc_sites *sites, const char *src)
{
	static const struct { const char *tag, *method, *type; uint8_t kind; } want[] = {
		{"failing", "exceptions", "jinstcheck/AllocSites$Failing", JINST_ALLOC_OBJECT},
		{"nested", "objects", "jinstcheck/AllocSites$Pair", JINST_ALLOC_OBJECT},
		{"nested", "objects", "java/lang/Object", JINST_ALLOC_OBJECT},
		{"booleans", "arrays", "[Z", JINST_ALLOC_ARRAY},
		{"rows", "arrays", "[[I", JINST_ALLOC_ARRAY},
		{"strings", "arrays", "[Ljava/lang/String;", JINST_ALLOC_ARRAY},
		{"multi.partial", "multi", "[[[I", JINST_ALLOC_ARRAYS},
		{"clinit", "<clinit>", "[I", JINST_ALLOC_ARRAY},
		/* calls: the declared type (a checkcast after the call, the
		 * receiver's static type, or Object) */
		{"clone.booleans", "copy", "[Z", JINST_ALLOC_ANY},
		{"clone.rows", "copy", "[[I", JINST_ALLOC_ANY},
		{"ewe.call", "clones", "jinstcheck/AllocSites$Ewe", JINST_ALLOC_ANY},
		{"reflect.one", "clones", "java/lang/Object", JINST_ALLOC_ANY},
		{"reflect.multi", "reflective", "[[Ljava/lang/String;", JINST_ALLOC_ANY},
		{"reflect.holder", "reflective", "jinstcheck/AllocSites$Holder", JINST_ALLOC_ANY},
		{"reflect.class", "reflective", "jinstcheck/AllocSites$Bare", JINST_ALLOC_ANY},
		{"reflect.failing", "reflective", "java/lang/Object", JINST_ALLOC_ANY},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		uint32_t line = tag_line(src, want[i].tag);
		long id = find_site(sites, want[i].method, line, want[i].type);
		jinst_alloc_site s;
		CHECK(line && id >= 0 && !jinst_alloc_sites_get(&s, sites, (uint32_t)id) && s.kind == want[i].kind &&
		          !strcmp(s.class_name, "jinstcheck/AllocSites") && s.source && !strcmp(s.source, "AllocSites.java"),
		      "no site %s.%s line %u %s", want[i].method, want[i].tag, line, want[i].type);
	}
}

/* The clone() calls of the nested classes: a super.clone() over Object's
 * is allocAny (the lookup ends at Object, known when instrumenting); one
 * over a class that may override it gets allocClone with that class's
 * name (JVMS 6.5: the direct superclass); a clone() on this gets the
 * receiver's class (aconst_null). */
static void clone_shapes(jinst_instrument *ins, jinst_arena *arena, const char *dir)
{
	static const struct { const char *cls, *start; unsigned any, clones, started; } want[] = {
		{"Ewe", "", 1, 0, 0},
		{"Ram", "jinstcheck.AllocSites$Ewe", 1, 1, 1}, /* its horns.clone(): allocAny */
		{"Plain", "", 0, 1, 0},
		{"Kid", "jinstcheck.AllocSites$Plain", 0, 1, 1},
		{"Stubborn", "", 0, 1, 0},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/jinstcheck/AllocSites$%s.class", dir, want[i].cls);
		uint8_t *out = NULL;
		size_t len = 0;
		tally in;
		if (instrument(ins, arena, path, 0, &out, &len, &in))
			continue;
		tally t = count(out, len);
		CHECK(in.calls == want[i].any + want[i].clones && t.call_hooks == in.calls &&
		          t.clone_hooks == want[i].clones && t.started == want[i].started && !strcmp(t.start, want[i].start),
		      "%s: %u calls, %u hooks, %u allocClone, %u started (%s)", want[i].cls, in.calls, t.call_hooks,
		      t.clone_hooks, t.started, t.start);
		free(out);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_alloc_pass CHECKS_DIR ALLOCSITES_JAVA\n");
		return 2;
	}
	char main_cls[4096], worker[4096];
	snprintf(main_cls, sizeof main_cls, "%s/jinstcheck/AllocSites.class", argv[1]);
	snprintf(worker, sizeof worker, "%s/jinstcheck/AllocSites$Worker.class", argv[1]);
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.passes = 0;
	jinst_instrument *ins;
	jinst_arena *arena;
	jinst_diag d;
	jinst_pass pass;
	jinst_alloc_sites *sites;
	if (jinst_instrument_new(&ins, &o, &d) || jinst_arena_new(&arena) || jinst_alloc_pass(&pass, &sites) ||
	    jinst_instrument_add_pass(ins, &pass, &d))
		return 2;
	uint8_t *first = NULL, *again = NULL, *w = NULL;
	size_t first_len = 0, again_len = 0, w_len = 0;
	tally in;
	instrument(ins, arena, main_cls, 0, &first, &first_len, &in);
	tally out = count(first, first_len);
	uint32_t n = jinst_alloc_sites_count(sites);
	CHECK(in.news >= 12 && out.object_hooks == in.news, "%u news, %u object hooks", in.news, out.object_hooks);
	CHECK(in.arrays > 15 && out.array_hooks == in.arrays, "%u array instructions, %u hooks", in.arrays,
	      out.array_hooks);
	CHECK(in.calls >= 18 && out.call_hooks == in.calls, "%u calls that allocate, %u hooks", in.calls,
	      out.call_hooks);
	/* e.clone() on an Ewe: the receiver's class decides, at run time */
	CHECK(out.clone_hooks == 1 && out.started == 0, "%u allocClone hooks, %u with a start", out.clone_hooks,
	      out.started);
	CHECK(n > 20 && n <= in.news + in.arrays + in.calls, "%u sites for %u instructions", n,
	      in.news + in.arrays + in.calls);
	check_sites(sites, argv[2]);
	clone_shapes(ins, arena, argv[1]);
	/* Another class takes ids; the first, instrumented again as for a
	 * retransformation, keeps its own and is written the same. */
	instrument(ins, arena, worker, 0, &w, &w_len, NULL);
	uint32_t after_worker = jinst_alloc_sites_count(sites);
	CHECK(after_worker > n, "the worker's sites: %u, then %u", n, after_worker);
	instrument(ins, arena, main_cls, JINST_INSTRUMENT_RETRANSFORM, &again, &again_len, NULL);
	CHECK(jinst_alloc_sites_count(sites) == after_worker, "instrumented again: %u sites, was %u",
	      jinst_alloc_sites_count(sites), after_worker);
	CHECK(again_len == first_len && !memcmp(again, first, first_len), "instrumented again: other bytes");
	printf("AllocSites: %u news, %u array instructions, %u calls, %u sites; %u with the worker's, kept when instrumented "
	       "again\n",
	       in.news, in.arrays, in.calls, n, after_worker);
	free(first);
	free(again);
	free(w);
	jinst_instrument_free(ins);
	jinst_arena_free(arena);
	return check_report();
}
