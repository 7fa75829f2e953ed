/*
 * Parse+write throughput of the class-file library over a folder of classes
 * held in memory, in default mode (untouched parts copied) and deep mode
 * (JINST_WRITE_FROM_MODEL: everything decoded and encoded again).
 *
 *   jinst-bench-roundtrip [--iterations N] [--mode default|deep] DIR
 *
 * One untimed pass first checks the work is real: every default write must
 * give back the input bytes and every deep write must parse again. Then each
 * mode runs N timed passes and the median is reported, one line per mode:
 *
 *   jinst default: C classes, B bytes, median S s: X classes/s, Y MB/s
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jinst/classfile.h"

struct corpus {
	uint8_t **bytes;
	size_t *lens;
	size_t count, cap, total;
};

static struct corpus corpus;

static int load_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t n = strlen(path);
	FILE *f;
	(void)ftw;
	if (type != FTW_F || n < 6 || strcmp(path + n - 6, ".class") != 0)
		return 0;
	if (corpus.count == corpus.cap) {
		size_t cap = corpus.cap ? corpus.cap * 2 : 4096;
		uint8_t **b = realloc(corpus.bytes, cap * sizeof *b);
		size_t *l = b ? realloc(corpus.lens, cap * sizeof *l) : NULL;
		if (b)
			corpus.bytes = b;
		if (!l)
			return -1;
		corpus.lens = l;
		corpus.cap = cap;
	}
	uint8_t *buf = malloc(st->st_size ? (size_t)st->st_size : 1);
	if (!buf || !(f = fopen(path, "rb"))) {
		free(buf);
		fprintf(stderr, "jinst-bench-roundtrip: cannot read %s\n", path);
		return -1;
	}
	size_t got = fread(buf, 1, (size_t)st->st_size, f);
	fclose(f);
	if (got != (size_t)st->st_size) {
		free(buf);
		fprintf(stderr, "jinst-bench-roundtrip: short read of %s\n", path);
		return -1;
	}
	corpus.bytes[corpus.count] = buf;
	corpus.lens[corpus.count++] = got;
	corpus.total += got;
	return 0;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One pass over the corpus. With check set, verifies each result and returns
 * the number of classes that failed; otherwise returns 0 or the first error. */
static long pass(jinst_arena *arena, uint32_t flags, int check)
{
	long failed = 0;
	for (size_t i = 0; i < corpus.count; i++) {
		jinst_write_options opts = JINST_WRITE_OPTIONS_INIT;
		jinst_class *cls, *again;
		jinst_diag diag;
		uint8_t *out;
		size_t len;
		int ok;

		opts.flags = flags;
		jinst_arena_reset(arena);
		if (jinst_class_parse(&cls, corpus.bytes[i], corpus.lens[i], arena, NULL, &diag) < 0 ||
		    jinst_class_write(cls, &opts, &out, &len, &diag) < 0) {
			failed++;
			continue;
		}
		if (check) {
			if (flags & JINST_WRITE_FROM_MODEL)
				ok = jinst_class_parse(&again, out, len, arena, NULL, &diag) == 0;
			else
				ok = len == corpus.lens[i] && memcmp(out, corpus.bytes[i], len) == 0;
			failed += !ok;
		}
		free(out);
	}
	return failed;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int run(const char *name, jinst_arena *arena, uint32_t flags, int iterations)
{
	double times[64];
	long failed = pass(arena, flags, 1);

	if (failed) {
		fprintf(stderr, "jinst %s: %ld of %zu classes failed the check\n", name, failed,
			corpus.count);
		return 1;
	}
	for (int i = 0; i < iterations; i++) {
		double t0 = now();
		pass(arena, flags, 0);
		times[i] = now() - t0;
	}
	qsort(times, (size_t)iterations, sizeof times[0], cmp_double);
	double median = times[iterations / 2];
	printf("jinst %s: %zu classes, %zu bytes, median %.3f s: %.0f classes/s, %.1f MB/s\n", name,
	       corpus.count, corpus.total, median, (double)corpus.count / median,
	       (double)corpus.total / median / 1e6);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int iterations = 7;
	const char *dir = NULL;
	jinst_arena *arena;
	const char *mode = NULL;
	int rc = 0, usage = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
			iterations = atoi(argv[++i]);
		else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
			mode = argv[++i];
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else
			usage = 1;
	}
	if (mode && strcmp(mode, "default") != 0 && strcmp(mode, "deep") != 0)
		usage = 1;
	if (usage || !dir || iterations < 1 || iterations > 64) {
		fprintf(stderr, "usage: jinst-bench-roundtrip [--iterations N (1-64)] [--mode default|deep] DIR\n");
		return 2;
	}
	if (nftw(dir, load_one, 64, FTW_PHYS) != 0 || corpus.count == 0) {
		fprintf(stderr, "jinst-bench-roundtrip: no classes read from %s\n", dir);
		return 1;
	}
	/* The peer runs in a JVM whose heap is committed up front (-Xms); the
	 * counterpart here: freed memory stays with the process, so that no pass
	 * pays page faults for memory the previous one gave back. */
#ifdef __GLIBC__
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
	if (jinst_arena_new(&arena) < 0)
		return 1;
	if (!mode || strcmp(mode, "default") == 0)
		rc |= run("default", arena, 0, iterations);
	if (!mode || strcmp(mode, "deep") == 0)
		rc |= run("deep", arena, JINST_WRITE_FROM_MODEL, iterations);
	jinst_arena_free(arena);
	for (size_t i = 0; i < corpus.count; i++)
		free(corpus.bytes[i]);
	free(corpus.bytes);
	free(corpus.lens);
	return rc;
}
