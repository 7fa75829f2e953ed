/*
 * libFuzzer target for the instrumenter as the offline tool drives it
 * (include/jinst/instrument.h): the ids reserved ahead
 * (jinst_instrument_reserve_ids), then the class instrumented with the
 * coverage and trace passes naming the runtime's hooks class, the ids
 * constants or relative to a run (jinst_instrument_set_run_class).
 *
 * The input is a class file; the passes and the ids' kind come from a hash
 * of it. Neither
 * call may crash whatever the bytes. When the class is instrumented, the
 * run must have asked for no id beyond those reserved (the ids and so the
 * bytes do not depend on the order classes are instrumented in), the
 * output must parse, carry the marker with the input's identity, and be
 * left alone when instrumented again; a second instrumenter must write
 * the same bytes. The natives pass's wrapping alone
 * (jinst_instrument_wrap_natives) on the same bytes: what it wraps writes,
 * parses, passes the retransformation rules against the input, and wraps
 * nothing more when wrapped again.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "jinst/instrument.h"

static const uint32_t modes[] = {
	JINST_PASS_TRACE,
	JINST_PASS_COUNT,
	JINST_PASS_TRACE | JINST_PASS_COUNT_LEAVES | JINST_PASS_COVERAGE,
	JINST_PASS_COUNT | JINST_PASS_COVERAGE_COUNTS,
};

/* The run class of this input's instrumenters, or NULL: constant ids. */
static const char *run_class;

static jinst_instrument *make(uint32_t passes)
{
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.passes = passes;
	o.hooks_class = JINST_RUNTIME_HOOKS;
	jinst_instrument *ins;
	jinst_diag d;
	CHECK(jinst_instrument_new(&ins, &o, &d) == 0, "no instrumenter: %s", d.message);
	return ins;
}

/* Reserves, then instruments: the bytes (malloc'd, or NULL) into *out. */
static int run(uint32_t passes, jinst_arena *arena, const uint8_t *data, size_t size, uint8_t **out, size_t *len,
               uint32_t *reserved, uint32_t *used)
{
	jinst_instrument *ins = make(passes);
	jinst_diag d;
	jinst_arena_reset(arena);
	int rr = jinst_instrument_reserve_ids(ins, arena, data, size, &d);
	CHECK(rr <= 0, "reserve returned %d", rr);
	*reserved = jinst_instrument_method_count(ins);
	CHECK(jinst_instrument_set_run_class(ins, run_class) == 0, "run class refused before any class");
	jinst_arena_reset(arena);
	int rc = jinst_instrument_class(ins, arena, data, size, NULL, 0, NULL, out, len, &d);
	CHECK(rc <= 0 && (!rc || !*out), "instrument returned %d with bytes", rc);
	*used = jinst_instrument_method_count(ins);
	CHECK(rr == 0 || *reserved == 0, "a failed reserve handed out %u ids", *reserved);
	jinst_instrument_free(ins);
	return rc;
}

/* Wraps the input's natives; a class it wrapped must write, obey the
 * rules, and have nothing left to wrap. */
static void check_natives(jinst_arena *arena, const uint8_t *data, size_t size)
{
	jinst_class *c = NULL, *w = NULL;
	uint32_t wrapped = 0, more = 0;
	uint8_t *out = NULL;
	size_t len = 0;
	if (jinst_class_parse(&c, data, size, NULL, NULL, NULL) || jinst_instrument_wrap_natives(&wrapped, c, NULL, false, NULL) ||
	    !wrapped) {
		jinst_class_free(c);
		return;
	}
	CHECK(jinst_class_write(c, NULL, &out, &len, NULL) == 0, "a wrapped class does not write");
	jinst_arena_reset(arena);
	CHECK(out && jinst_instrument_check_rules(arena, data, size, out, len, NULL) == 0, "the wrap breaks the rules");
	CHECK(out && jinst_class_parse(&w, out, len, NULL, NULL, NULL) == 0 &&
	              jinst_instrument_wrap_natives(&more, w, NULL, false, NULL) == 0 && more == 0,
	      "wrapped again, %u more", more);
	jinst_class_free(w);
	jinst_class_free(c);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t seed = fuzz_seed(data, size);
	uint32_t passes = modes[fuzz_next(&seed) % (sizeof(modes) / sizeof(modes[0]))];
	run_class = fuzz_next(&seed) & 1 ? JINST_RUN_CLASS_PREFIX "0123456789abcdef" : NULL;
	jinst_arena *arena;
	CHECK(jinst_arena_new(&arena) == 0, "no arena");
	uint8_t *out = NULL, *again = NULL, *twice = NULL;
	size_t len = 0, alen = 0, tlen = 0;
	uint32_t reserved, used, r2, u2;
	int rc = run(passes, arena, data, size, &out, &len, &reserved, &used);
	if (!rc && out) {
		CHECK(used == reserved, "ids beyond the reserved: %u reserved, %u after instrumenting", reserved, used);
		jinst_marker mk;
		jinst_diag d;
		jinst_arena_reset(arena);
		CHECK(jinst_instrument_read_marker(arena, out, len, &mk, &d) == 0 && mk.present, "no marker: %s",
		      d.message);
		CHECK(mk.identity == jinst_instrument_identity(data, size), "the marker's identity is not the input's");
		int rc2 = run(passes, arena, out, len, &twice, &tlen, &r2, &u2);
		CHECK(rc2 == 0 && !twice && r2 == 0, "instrumented twice (status %d, %u ids reserved)", rc2, r2);
		CHECK(run(passes, arena, data, size, &again, &alen, &r2, &u2) == 0 && again, "a second run failed");
		CHECK(alen == len && memcmp(again, out, len) == 0, "a second instrumenter wrote other bytes");
	}
	check_natives(arena, data, size);
	free(out);
	free(again);
	free(twice);
	jinst_arena_free(arena);
	return 0;
}
