/*
 * A pass of your own, run with jinst's tracing pass over a jar, through the
 * installed library (find_package(jinst) -> jinst::instrument, or
 * pkg-config jinst-instrument):
 *
 *   custom_pass IN.jar OUT.jar
 *
 * Every class of IN.jar goes through the instrumenter once: the trace pass
 * (call counts: jinst/rt/Hooks.called(id) at each method's entry, as for a
 * class instrumented ahead of time) and the example's own pass
 * (athrows.c: a call to Throws.thrown(id) before each athrow). Every entry
 * of IN.jar is written to OUT.jar in its order, classes instrumented,
 * everything else as it was. Prints what was done and the methods with the
 * most athrow instructions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "athrows.h"

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "custom_pass: %s: %s\n", what, why);
	return 1;
}

/* Entry i of in, whole, malloc'd. */
static uint8_t *read_entry(zip_t *in, zip_uint64_t i, size_t *len)
{
	zip_stat_t st;
	if (zip_stat_index(in, i, 0, &st) || !(st.valid & ZIP_STAT_SIZE))
		return NULL;
	zip_file_t *f = zip_fopen_index(in, i, 0);
	uint8_t *b = f ? malloc(st.size ? st.size : 1) : NULL;
	if (b && zip_fread(f, b, st.size) != (zip_int64_t)st.size) {
		free(b);
		b = NULL;
	}
	if (f)
		zip_fclose(f);
	*len = st.size;
	return b;
}

static int by_athrows(const void *a, const void *b)
{
	const athrows_method *x = a, *y = b;
	return x->athrows < y->athrows ? 1 : x->athrows > y->athrows ? -1 : strcmp(x->class_name, y->class_name);
}

static void report(const athrows *t, const jinst_instrument *ins)
{
	jinst_instrument_counts c;
	jinst_instrument_get_counts(ins, &c);
	printf("%llu classes: %llu instrumented, %llu left alone; %llu methods changed, %llu left alone\n",
	       (unsigned long long)c.classes_seen, (unsigned long long)c.classes_instrumented,
	       (unsigned long long)c.classes_left_alone, (unsigned long long)c.methods_instrumented,
	       (unsigned long long)c.methods_left_alone);
	size_t n;
	const athrows_method *ms = athrows_methods(t, &n);
	athrows_method *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!sorted)
		return;
	memcpy(sorted, ms, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), by_athrows);
	unsigned long total = 0;
	for (size_t i = 0; i < n; i++)
		total += sorted[i].athrows;
	printf("%zu methods throw, %lu athrow instructions; the most:\n", n, total);
	for (size_t i = 0; i < n && i < 5; i++)
		printf("  %4u  %s.%s%s\n", sorted[i].athrows, sorted[i].class_name, sorted[i].method, sorted[i].descriptor);
	free(sorted);
}

/* Instruments IN's classes into OUT (an archive being written). */
static int copy(zip_t *in, zip_t *out, jinst_instrument *ins, jinst_arena *arena)
{
	zip_int64_t n = zip_get_num_entries(in, 0);
	for (zip_uint64_t i = 0; i < (zip_uint64_t)n; i++) {
		const char *name = zip_get_name(in, i, 0);
		size_t len, nlen = name ? strlen(name) : 0, out_len = 0;
		uint8_t *bytes = name ? read_entry(in, i, &len) : NULL, *done = NULL;
		if (!bytes)
			return fail(name ? name : "an entry", "cannot read it");
		if (nlen > 6 && !strcmp(name + nlen - 6, ".class")) {
			jinst_diag d;
			jinst_arena_reset(arena);
			int rc = jinst_instrument_class(ins, arena, bytes, len, NULL, 0, NULL, &done, &out_len, &d);
			if (rc) {
				char msg[600];
				jinst_diag_format(&d, msg, sizeof(msg));
				fprintf(stderr, "custom_pass: %s left as it was: %s\n", name, msg);
			}
		}
		/* the source takes the buffer and frees it once the archive is
		 * written; an empty one it would keep, so it gets none */
		uint8_t *data = done ? done : bytes;
		size_t data_len = done ? out_len : len;
		if (done)
			free(bytes);
		if (!data_len) {
			free(data);
			data = NULL;
		}
		zip_source_t *src = zip_source_buffer(out, data, data_len, data != NULL);
		if (!src || zip_file_add(out, name, src, ZIP_FL_ENC_UTF_8) < 0) {
			zip_source_free(src);
			return fail(name, zip_strerror(out));
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: custom_pass IN.jar OUT.jar\n");
		return 2;
	}
	int err;
	zip_t *in = zip_open(argv[1], ZIP_RDONLY, &err);
	if (!in)
		return fail(argv[1], "not a readable jar");
	remove(argv[2]);
	zip_t *out = zip_open(argv[2], ZIP_CREATE | ZIP_EXCL, &err);
	if (!out) {
		zip_close(in);
		return fail(argv[2], "cannot be created");
	}

	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.passes = JINST_PASS_COUNT;          /* the trace pass, counts only */
	o.hooks_class = JINST_RUNTIME_HOOKS;  /* instrumented ahead of time: the runtime is on the class path */
	jinst_instrument *ins = NULL;
	jinst_arena *arena = NULL;
	jinst_pass pass;
	athrows *figures;
	jinst_diag d;
	int rc = jinst_instrument_new(&ins, &o, &d) || jinst_arena_new(&arena) ||
	         athrows_new(&pass, &figures, "Throws") || jinst_instrument_add_pass(ins, &pass, &d);
	if (rc)
		rc = fail("jinst", "cannot set up the instrumenter");
	else
		rc = copy(in, out, ins, arena);
	if (!rc && zip_close(out) < 0)
		rc = fail(argv[2], zip_strerror(out));
	else if (rc)
		zip_discard(out);
	zip_close(in);
	if (!rc)
		report(figures, ins);
	jinst_instrument_free(ins);
	jinst_arena_free(arena);
	return rc;
}
