/*
 * jinst_instrument_reserve_ids: ids taken first in a fixed order are the
 * ones the trace pass then uses, whatever order the classes are
 * instrumented in; without it they follow the order of instrumentation.
 *   test_reserve CLASSES_DIR   (tests/data/classes)
 */
#include <string.h>

#include "jinst/instrument.h"

#include "../testlib.h"

static const char *const names[] = {"main/jinsttest/Features.class", "main/jinsttest/Shape$Circle.class",
                                    "main/jinsttest/Color.class"};
#define N (sizeof(names) / sizeof(names[0]))

typedef struct class_bytes {
	uint8_t *b;
	size_t n;
} class_bytes;

/* An instrumenter as the offline tool makes it, and a scratch arena;
 * either failing ends the test. */
static jinst_instrument *make(uint32_t passes, jinst_arena **arena)
{
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.passes = passes;
	o.hooks_class = JINST_RUNTIME_HOOKS;
	jinst_instrument *ins;
	jinst_diag d;
	if (jinst_instrument_new(&ins, &o, &d) || jinst_arena_new(arena)) {
		printf("FAIL: no instrumenter or arena\n");
		exit(1);
	}
	return ins;
}

/* Instruments the classes in the order given (reserving first, in the
 * natural order, when asked); the outputs into out[], the method table's
 * class and method names into table. */
static void run(const class_bytes *in, const int *order, bool reserve, uint32_t passes, class_bytes *out, char *table,
                size_t size)
{
	jinst_arena *arena;
	jinst_instrument *ins = make(passes, &arena);
	jinst_diag d;
	for (size_t i = 0; reserve && i < N; i++) {
		jinst_arena_reset(arena);
		CHECK(jinst_instrument_reserve_ids(ins, arena, in[i].b, in[i].n, &d) == 0, "reserve %s", names[i]);
	}
	uint32_t reserved = jinst_instrument_method_count(ins);
	CHECK(reserve == (reserved > 0) || !(passes & (JINST_PASS_TRACE | JINST_PASS_COUNT)),
	      "reserved %u ids (reserve %d)", reserved, reserve);
	for (size_t k = 0; k < N; k++) {
		int i = order[k];
		jinst_arena_reset(arena);
		CHECK(jinst_instrument_class(ins, arena, in[i].b, in[i].n, NULL, 0, NULL, &out[i].b, &out[i].n, &d) == 0 &&
		          out[i].b,
		      "instrument %s: %s", names[i], d.message);
	}
	CHECK(!reserve || jinst_instrument_method_count(ins) == reserved, "the run added ids to the %u reserved: %u",
	      reserved, jinst_instrument_method_count(ins));
	table[0] = '\0';
	for (uint32_t id = 0; id < jinst_instrument_method_count(ins); id++) {
		jinst_method_info mi;
		CHECK(jinst_instrument_method_info(ins, id, &mi) == 0, "id %u", id);
		size_t used = strlen(table);
		snprintf(table + used, size - used, "%s.%s%s:%d\n", mi.class_name, mi.name, mi.descriptor, mi.timed);
	}
	jinst_arena_free(arena);
	jinst_instrument_free(ins);
}

static bool same(const class_bytes *a, const class_bytes *b)
{
	for (size_t i = 0; i < N; i++)
		if (a[i].n != b[i].n || memcmp(a[i].b, b[i].b, a[i].n) != 0)
			return false;
	return true;
}

static void free_all(class_bytes *a)
{
	for (size_t i = 0; i < N; i++)
		free(a[i].b);
}

static void orders(const class_bytes *in, uint32_t passes)
{
	static const int forward[N] = {0, 1, 2}, backward[N] = {2, 1, 0};
	static char t1[1 << 16], t2[1 << 16], t3[1 << 16];
	class_bytes a[N], b[N], c[N];
	run(in, forward, true, passes, a, t1, sizeof(t1));
	run(in, backward, true, passes, b, t2, sizeof(t2));
	CHECK(same(a, b), "passes %#x: reserved, two orders of instrumentation wrote different classes", passes);
	CHECK(strcmp(t1, t2) == 0, "passes %#x: reserved, the method tables differ:\n%s---\n%s", passes, t1, t2);
	CHECK(strstr(t1, "jinsttest/Features.") == t1, "passes %#x: the first ids are not Features' methods:\n%s",
	      passes, t1);
	/* The witness: without reserving, the order of instrumentation
	 * decides, so the check above can fail. */
	run(in, backward, false, passes, c, t3, sizeof(t3));
	CHECK(strcmp(t1, t3) != 0 && !same(a, c), "passes %#x: instrumented backwards without reserving, the same ids",
	      passes);
	free_all(a);
	free_all(b);
	free_all(c);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_reserve CLASSES_DIR\n");
		return 2;
	}
	class_bytes in[N];
	for (size_t i = 0; i < N; i++)
		in[i].b = test_load(argv[1], names[i], &in[i].n);
	orders(in, JINST_PASS_TRACE);
	orders(in, JINST_PASS_COUNT | JINST_PASS_COVERAGE);
	orders(in, JINST_PASS_TRACE | JINST_PASS_COUNT_LEAVES | JINST_PASS_COVERAGE_COUNTS);
	/* No trace pass: nothing to reserve. */
	jinst_arena *arena;
	jinst_instrument *ins = make(JINST_PASS_COVERAGE, &arena);
	jinst_diag d;
	CHECK(jinst_instrument_reserve_ids(ins, arena, in[0].b, in[0].n, &d) == 0 &&
	          jinst_instrument_method_count(ins) == 0,
	      "coverage alone: %u ids reserved", jinst_instrument_method_count(ins));
	/* A class that does not parse: its error. */
	jinst_instrument_free(ins);
	jinst_arena_free(arena);
	ins = make(JINST_PASS_TRACE, &arena);
	uint8_t bad[8] = {0xCA, 0xFE, 0xBA, 0xBF};
	CHECK(jinst_instrument_reserve_ids(ins, arena, bad, sizeof(bad), &d) == JINST_EMALFORMED, "bad magic: %s",
	      d.message);
	jinst_arena_free(arena);
	jinst_instrument_free(ins);
	free_all(in);
	return check_report();
}
