/*
 * Throughput of the code editor on the tracing pass's shape, the peer of
 * bench/AsmAdvice.java: over a folder of classes held in memory, each class
 * is parsed, every method with code gets an entry call (outside the first
 * instruction, or after the super()/this() call in constructors), an exit
 * call inside every return and a catch-all handler at the end with its
 * frame given; frames kept; the class is written.
 *
 *   jinst-bench-edit [--iterations N] DIR
 *
 * One untimed pass first checks the work is real (every class written
 * parses again, and the methods edited are counted); then N timed passes,
 * median reported:
 *
 *   jinst edit: C classes, B bytes, median S s: X classes/s, Y MB/s
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jinst/edit.h"

static struct {
	uint8_t **bytes;
	size_t *lens;
	size_t count, cap, total;
} corpus;

static int load_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t n = strlen(path);
	(void)ftw;
	if (type != FTW_F || n < 6 || strcmp(path + n - 6, ".class") != 0)
		return 0;
	if (corpus.count == corpus.cap) {
		corpus.cap = corpus.cap ? corpus.cap * 2 : 4096;
		corpus.bytes = realloc(corpus.bytes, corpus.cap * sizeof(*corpus.bytes));
		corpus.lens = realloc(corpus.lens, corpus.cap * sizeof(*corpus.lens));
		if (!corpus.bytes || !corpus.lens)
			return -1;
	}
	uint8_t *buf = malloc(st->st_size ? (size_t)st->st_size : 1);
	FILE *f = buf ? fopen(path, "rb") : NULL;
	if (!f) {
		free(buf);
		return -1;
	}
	size_t got = fread(buf, 1, (size_t)st->st_size, f);
	fclose(f);
	corpus.bytes[corpus.count] = buf;
	corpus.lens[corpus.count++] = got;
	corpus.total += got;
	return 0;
}

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The invokespecial <init> of `this` in a constructor's straight-line start. */
static jinst_node *super_call(jinst_edit *ed, jinst_class *c)
{
	int pending_new = 0;
	for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n)) {
		const jinst_insn *in = jinst_node_insn(n);
		if (!in)
			continue;
		uint8_t op = in->opcode;
		if (op == 0xbb)
			pending_new++;
		if (op == 0xb7) {
			jinst_cp_entry e, nat;
			uint16_t len;
			if (jinst_cp_get(c, (uint16_t)in->operand, &e) || jinst_cp_get(c, e.u.ref.name_and_type_index, &nat))
				return NULL;
			const uint8_t *name = jinst_cp_utf8(c, nat.u.nat.name_index, &len);
			if (name && len == 6 && memcmp(name, "<init>", 6) == 0) {
				if (!pending_new)
					return n;
				pending_new--;
			}
		}
		if ((op >= 0x99 && op <= 0xa8) || op == 0xaa || op == 0xab || op == 0xc6 || op == 0xc7 || op == 0xc8 ||
		    op == 0xc9 || (op >= 0xac && op <= 0xb1) || op == 0xbf)
			return NULL;
	}
	return NULL;
}

static int hooks(jinst_class *c, jinst_member *m, uint16_t enter, uint16_t exit_, uint16_t exit_throw, int id)
{
	jinst_edit *ed;
	jinst_diag d;
	int rc = jinst_edit_open(&ed, c, m, NULL, &d);
	if (rc)
		return rc;
	jinst_insn entry[2] = {{.opcode = 0x11, .operand = id}, {.opcode = 0xb8, .operand = enter}};
	jinst_insn ex[2] = {{.opcode = 0x11, .operand = id}, {.opcode = 0xb8, .operand = exit_}};
	for (jinst_node *n = jinst_edit_first(ed); n && !rc; n = jinst_node_next(n)) {
		const jinst_insn *in = jinst_node_insn(n);
		if (in && in->opcode >= 0xac && in->opcode <= 0xb1 && jinst_node_original_offset(n) != JINST_NO_OFFSET)
			rc = jinst_edit_insert(ed, n, JINST_BEFORE_INSIDE, ex, 2, NULL);
	}
	jinst_node *first = jinst_edit_first_insn(ed);
	jinst_label start = JINST_NO_LABEL, handler = JINST_NO_LABEL;
	if (!rc)
		rc = jinst_edit_new_label(ed, &start);
	if (!rc)
		rc = jinst_edit_new_label(ed, &handler);
	uint16_t nl;
	const uint8_t *name = jinst_cp_utf8(c, jinst_member_name_index(m), &nl);
	if (!rc && nl == 6 && !memcmp(name, "<init>", 6)) {
		jinst_node *call = super_call(ed, c);
		rc = call ? jinst_edit_place(ed, start, call, JINST_AFTER) : JINST_EUNSUPPORTED;
	} else if (!rc) {
		rc = jinst_edit_place(ed, start, first, JINST_BEFORE_OUTSIDE);
	}
	if (!rc)
		rc = jinst_edit_insert(ed, first, JINST_BEFORE_OUTSIDE, entry, 2, NULL);
	jinst_insn h[4] = {{.opcode = JINST_OP_LABEL, .operand = (int32_t)handler}, {.opcode = 0x11, .operand = id},
	                   {.opcode = 0xb8, .operand = exit_throw}, {.opcode = 0xbf}};
	if (!rc)
		rc = jinst_edit_insert(ed, NULL, JINST_AFTER, h, 4, NULL);
	if (!rc)
		rc = jinst_edit_add_handler(ed, start, jinst_edit_end_label(ed), handler, 0);
	jinst_ftype thr = {JINST_VT_OBJECT, 0, 19, (const uint8_t *)"java/lang/Throwable"};
	jinst_full_frame hf = {0, 0, 1, NULL, &thr};
	if (!rc)
		rc = jinst_edit_set_frame(ed, handler, &hf);
	if (!rc)
		rc = jinst_edit_commit(ed, &d);
	jinst_edit_free(ed);
	return rc;
}

/* One pass; with check, counts edited methods and classes that fail. */
static long pass(jinst_arena *arena, int check, long *edited)
{
	long failed = 0;
	for (size_t i = 0; i < corpus.count; i++) {
		jinst_class *c, *again;
		jinst_diag d;
		uint8_t *out;
		size_t len;
		uint16_t enter, exit_, exit_throw;
		jinst_arena_reset(arena);
		if (jinst_class_parse(&c, corpus.bytes[i], corpus.lens[i], arena, NULL, &d) ||
		    jinst_cp_add_methodref(c, "jinst/Hooks", "enter", "(I)V", &enter) ||
		    jinst_cp_add_methodref(c, "jinst/Hooks", "exit", "(I)V", &exit_) ||
		    jinst_cp_add_methodref(c, "jinst/Hooks", "exitThrow", "(I)V", &exit_throw)) {
			failed++;
			continue;
		}
		for (uint16_t k = 0; k < jinst_class_method_count(c); k++) {
			jinst_member *m = jinst_class_method(c, k);
			if (!jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE))
				continue;
			int rc = hooks(c, m, enter, exit_, exit_throw, k);
			if (check && !rc)
				(*edited)++;
		}
		if (jinst_class_write(c, NULL, &out, &len, &d)) {
			failed++;
			continue;
		}
		if (check && jinst_class_parse(&again, out, len, arena, NULL, &d))
			failed++;
		free(out);
	}
	return failed;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int iterations = 7;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
			iterations = atoi(argv[++i]);
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
	}
	if (!dir || iterations < 1 || iterations > 64) {
		fprintf(stderr, "usage: jinst-bench-edit [--iterations N<=64] DIR\n");
		return 2;
	}
	if (nftw(dir, load_one, 64, FTW_PHYS) != 0 || !corpus.count) {
		fprintf(stderr, "jinst-bench-edit: no classes read from %s\n", dir);
		return 1;
	}
	jinst_arena *arena;
	if (jinst_arena_new(&arena))
		return 1;
	long edited = 0, failed = pass(arena, 1, &edited);
	if (failed) {
		fprintf(stderr, "jinst edit: %ld of %zu classes failed the check\n", failed, corpus.count);
		return 1;
	}
	/* Wall time, and the process's CPU time (the figure that holds on a
	 * shared machine; the C side runs on one thread). */
	double times[64], cpu[64];
	for (int i = 0; i < iterations; i++) {
		double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		pass(arena, 0, NULL);
		times[i] = clock_s(CLOCK_MONOTONIC) - t0;
		cpu[i] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	}
	qsort(times, (size_t)iterations, sizeof(times[0]), cmp_double);
	qsort(cpu, (size_t)iterations, sizeof(cpu[0]), cmp_double);
	double median = times[iterations / 2], cmedian = cpu[iterations / 2];
	printf("jinst edit: %zu classes (%ld methods edited), %zu bytes, median %.3f s: %.0f classes/s, %.1f MB/s; "
	       "CPU %.3f s: %.1f MB/s\n",
	       corpus.count, edited, corpus.total, median, (double)corpus.count / median, (double)corpus.total / median / 1e6,
	       cmedian, (double)corpus.total / cmedian / 1e6);
	jinst_arena_free(arena);
	return 0;
}
