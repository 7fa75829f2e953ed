/*
 * Method ids relative to a run (docs/ARCHITECTURE.md, "Method ids of
 * separate runs"): the run's class as jinst_instrument_run_class writes it,
 * the trace pass reading its BASE from the class's own package, and ranges
 * reserved among an instrumenter's ids.
 *   test_runs CLASSES_DIR   (tests/data/classes)
 * HotSpot runs all of it in jvm_offline_runs_*.
 */
#include <string.h>

#include "jinst/instrument.h"

#include "../testlib.h"

#define RUN "$JinstRun0123456789abcdef"

static bool utf8_is(const jinst_class *c, uint16_t index, const char *s)
{
	uint16_t n;
	const uint8_t *u = jinst_cp_utf8(c, index, &n);
	return u && n == strlen(s) && memcmp(u, s, n) == 0;
}

/* Whether the pool has a Class constant naming name. */
static bool names_class(const jinst_class *c, const char *name)
{
	for (uint16_t i = 1; i < jinst_cp_count(c); i++) {
		uint16_t n;
		const uint8_t *s = jinst_cp_tag(c, i) == JINST_CP_CLASS ? jinst_cp_name(c, i, &n) : NULL;
		if (s && n == strlen(name) && memcmp(s, name, n) == 0)
			return true;
	}
	return false;
}

static void names(void)
{
	static const char *const bad[] = {"pkg/Foo", "pkg/$JinstRun0123", "pkg/$JinstRun0123456789ABCDEF",
	                                  "pkg/$JinstRun0123456789abcdef0", "$JinstRun0123456789abcdeg", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t *b = (uint8_t *)"x";
		size_t n = 1;
		CHECK(jinst_instrument_run_class(&b, &n, bad[i], 1, 2) == JINST_EINVAL && !b && !n, "name '%s'", bad[i]);
	}
}

/* The class of a run in package pkg ("" or "a/b/"): its name, version,
 * flags, its one field and one method, and every instrumenter leaving it
 * alone. */
static void run_class(const char *pkg, jinst_arena *arena)
{
	char name[128];
	snprintf(name, sizeof(name), "%s" RUN, pkg);
	uint8_t *b;
	size_t n;
	CHECK(jinst_instrument_run_class(&b, &n, name, 0x0123456789abcdefull, 42) == 0 && b, "%s", name);
	if (!b)
		return;
	jinst_class *c;
	jinst_diag d;
	CHECK(jinst_class_parse(&c, b, n, arena, NULL, &d) == 0, "%s parses: %s", name, d.message);
	uint16_t len;
	const uint8_t *cn = jinst_class_name(c, &len);
	CHECK(cn && len == strlen(name) && !memcmp(cn, name, len), "its name");
	CHECK(jinst_class_major_version(c) == 49, "version %u", jinst_class_major_version(c));
	CHECK(jinst_class_access_flags(c) == (JINST_ACC_PUBLIC | JINST_ACC_FINAL | JINST_ACC_SUPER | JINST_ACC_SYNTHETIC),
	      "flags %#x",
	      jinst_class_access_flags(c));
	CHECK(jinst_class_field_count(c) == 1 && jinst_class_method_count(c) == 1, "members");
	jinst_member *f = jinst_class_field(c, 0), *m = jinst_class_method(c, 0);
	CHECK(f && utf8_is(c, jinst_member_name_index(f), JINST_RUN_BASE_FIELD) &&
	          utf8_is(c, jinst_member_descriptor_index(f), "I") &&
	          jinst_member_access_flags(f) ==
	                  (JINST_ACC_PUBLIC | JINST_ACC_STATIC | JINST_ACC_FINAL | JINST_ACC_SYNTHETIC),
	      "public static final int BASE");
	CHECK(m && utf8_is(c, jinst_member_name_index(m), "<clinit>"), "<clinit>");
	CHECK(names_class(c, JINST_RUNTIME_RUNS) && names_class(c, JINST_RUNTIME_HOOKS), "names the runtime");
	jinst_marker mk;
	CHECK(jinst_instrument_read_marker(arena, b, n, &mk, &d) == 0 && mk.runtime_refs, "seen as instrumented");
	free(b);
}

/* An instrumenter as jinst instrument --trace makes it. */
static jinst_instrument *make(void)
{
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.hooks_class = JINST_RUNTIME_HOOKS;
	jinst_instrument *ins = NULL;
	jinst_diag d;
	CHECK(jinst_instrument_new(&ins, &o, &d) == 0, "instrumenter: %s", d.message);
	return ins;
}

static void instrument(jinst_instrument *ins, jinst_arena *arena, const uint8_t *in, size_t n, uint8_t **out,
                       size_t *out_len)
{
	jinst_diag d;
	jinst_arena_reset(arena);
	CHECK(jinst_instrument_class(ins, arena, in, n, NULL, 0, NULL, out, out_len, &d) == 0 && *out,
	      "instrumented: %s", d.message);
}

/* The trace pass under a run class: the class reads BASE from its own
 * package's run class; without one, never. */
static void relative(const uint8_t *in, size_t n, jinst_arena *arena)
{
	jinst_instrument *ins = make(), *plain = make();
	if (!ins || !plain)
		return;
	CHECK(jinst_instrument_set_run_class(ins, RUN) == 0, "set before any class");
	uint8_t *out = NULL, *out2 = NULL, *untouched = NULL;
	size_t len = 0, len2 = 0, ulen = 0;
	instrument(ins, arena, in, n, &out, &len);
	instrument(plain, arena, in, n, &out2, &len2);
	CHECK(jinst_instrument_set_run_class(ins, NULL) == JINST_EINVAL, "set after a class: refused");
	jinst_class *c;
	jinst_diag d;
	jinst_arena_reset(arena);
	CHECK(out && jinst_class_parse(&c, out, len, arena, NULL, &d) == 0 && names_class(c, "jinsttest/" RUN),
	      "relative ids read jinsttest/" RUN);
	CHECK(out2 && jinst_class_parse(&c, out2, len2, arena, NULL, &d) == 0 && !names_class(c, "jinsttest/" RUN),
	      "constant ids name no run class");
	/* The same class again: instrumented already, left alone. */
	jinst_arena_reset(arena);
	CHECK(jinst_instrument_class(ins, arena, out, len, NULL, 0, NULL, &untouched, &ulen, &d) == 0 && !untouched,
	      "instrumented twice");
	free(out);
	free(out2);
	jinst_instrument_free(ins);
	jinst_instrument_free(plain);
}

/* A range reserved between two classes: the second class's ids come after
 * it, and its ids have no info. */
static void ranges(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, jinst_arena *arena)
{
	jinst_instrument *ins = make();
	if (!ins)
		return;
	uint8_t *out;
	size_t len;
	instrument(ins, arena, a, an, &out, &len);
	free(out);
	uint32_t k = jinst_instrument_method_count(ins), first = 0, second = 0;
	CHECK(k > 0, "ids for the first class");
	CHECK(jinst_instrument_reserve_method_range(ins, 1000, &first) == 0 && first == k, "range from %u", first);
	CHECK(jinst_instrument_reserve_method_range(ins, 0, &second) == 0 && second == k + 1000, "empty range");
	CHECK(jinst_instrument_reserve_method_range(ins, UINT32_MAX, &second) == JINST_ETOOLARGE &&
	          jinst_instrument_method_count(ins) == k + 1000,
	      "a range past 2^31: refused, nothing taken");
	jinst_method_info mi;
	CHECK(jinst_instrument_method_info(ins, k, &mi) == JINST_EINVAL &&
	          jinst_instrument_method_info(ins, k + 999, &mi) == JINST_EINVAL,
	      "reserved ids have no info");
	instrument(ins, arena, b, bn, &out, &len);
	free(out);
	CHECK(jinst_instrument_method_count(ins) > k + 1000 && jinst_instrument_method_info(ins, k + 1000, &mi) == 0 &&
	          !strcmp(mi.class_name, "jinsttest/Color"),
	      "the next class's ids after the range");
	/* The first class again keeps its ids: a reserved entry matches no key. */
	uint32_t before = jinst_instrument_method_count(ins);
	instrument(ins, arena, a, an, &out, &len);
	free(out);
	CHECK(jinst_instrument_method_count(ins) == before, "new ids for a class seen before");
	jinst_instrument_free(ins);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_runs CLASSES_DIR\n");
		return 2;
	}
	jinst_arena *arena;
	if (jinst_arena_new(&arena))
		return 1;
	size_t fn, cn;
	uint8_t *features = test_load(argv[1], "main/jinsttest/Features.class", &fn);
	uint8_t *color = test_load(argv[1], "main/jinsttest/Color.class", &cn);
	names();
	run_class("", arena);
	run_class("a/b/", arena);
	relative(features, fn, arena);
	ranges(features, fn, color, cn, arena);
	free(features);
	free(color);
	jinst_arena_free(arena);
	return check_report();
}
