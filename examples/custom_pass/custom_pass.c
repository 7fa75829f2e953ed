/*
 * A pass of your own, run with jinst's tracing pass over a jar, through the
 * installed library (find_package(jinst) -> jinst::instrument and
 * jinst::archive, or pkg-config jinst-instrument jinst-archive):
 *
 *   custom_pass IN.jar OUT.jar
 *
 * Every class of IN.jar goes through the instrumenter once: the trace pass
 * (call counts: jinst/rt/Hooks.called(id) at each method's entry, as for a
 * class instrumented ahead of time) and the example's own pass
 * (athrows.c: a call to Throws.thrown(id) before each athrow). Every entry
 * of IN.jar is written to OUT.jar in its order with its metadata (time,
 * attributes, compression), classes instrumented, everything else as it
 * was; OUT.jar appears whole or not at all. Prints what was done and the
 * methods with the most athrow instructions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/archive.h"
#include "athrows.h"

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "custom_pass: %s: %s\n", what, why);
	return 1;
}

static int fail_diag(const jinst_diag *d)
{
	char msg[600];
	jinst_diag_format(d, msg, sizeof(msg));
	fprintf(stderr, "custom_pass: %s\n", msg);
	return 1;
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

/* Instruments IN's classes into OUT. The writer borrows each entry's bytes
 * until it commits, so they are kept in kept[], one per entry. */
static int copy(jinst_archive *in, jinst_archive_writer *out, uint8_t **kept, jinst_instrument *ins,
                jinst_arena *arena)
{
	for (size_t i = 0; i < jinst_archive_count(in); i++) {
		jinst_archive_entry e;
		uint8_t *bytes, *done = NULL;
		size_t len, out_len = 0, nlen;
		jinst_diag d;
		if (jinst_archive_entry_at(&e, in, i, &d) || jinst_archive_read(&bytes, &len, in, i, &d))
			return fail_diag(&d);
		nlen = strlen(e.name);
		if (nlen > 6 && !strcmp(e.name + nlen - 6, ".class") &&
		    jinst_instrument_class(ins, arena, bytes, len, NULL, 0, NULL, &done, &out_len, &d)) {
			char msg[600];
			jinst_diag_format(&d, msg, sizeof(msg));
			fprintf(stderr, "custom_pass: %s left as it was: %s\n", e.name, msg);
		}
		jinst_arena_reset(arena);
		if (done) {
			free(bytes);
			bytes = done;
			len = out_len;
		}
		kept[i] = bytes;
		if (jinst_archive_writer_add(out, &e, bytes, len, &d))
			return fail_diag(&d);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: custom_pass IN.jar OUT.jar\n");
		return 2;
	}
	jinst_archive *in = NULL;
	jinst_archive_writer *out = NULL;
	jinst_diag d;
	if (jinst_archive_open(&in, argv[1], NULL, &d) || jinst_archive_writer_new(&out, argv[2], &d)) {
		jinst_archive_close(in);
		return fail_diag(&d);
	}

	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.passes = JINST_PASS_COUNT;          /* the trace pass, counts only */
	o.hooks_class = JINST_RUNTIME_HOOKS;  /* instrumented ahead of time: the runtime is on the class path */
	jinst_instrument *ins = NULL;
	jinst_arena *arena = NULL;
	jinst_pass pass;
	athrows *figures;
	size_t n = jinst_archive_count(in);
	uint8_t **kept = calloc(n ? n : 1, sizeof(*kept));
	int rc = !kept || jinst_instrument_new(&ins, &o, &d) || jinst_arena_new(&arena) ||
	         athrows_new(&pass, &figures, "Throws") || jinst_instrument_add_pass(ins, &pass, &d);
	if (rc)
		rc = fail("jinst", "cannot set up the instrumenter");
	else
		rc = copy(in, out, kept, ins, arena);
	if (!rc && jinst_archive_writer_commit(out, &d))
		rc = fail_diag(&d);
	else if (rc)
		jinst_archive_writer_discard(out);
	jinst_archive_close(in);
	for (size_t i = 0; kept && i < n; i++)
		free(kept[i]);
	free(kept);
	if (!rc)
		report(figures, ins);
	jinst_instrument_free(ins);
	jinst_arena_free(arena);
	return rc;
}
