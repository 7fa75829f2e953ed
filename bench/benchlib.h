/*
 * What the C benchmarks share: a folder of classes read into memory, a
 * monotonic clock, and the median of timed passes printed in one format
 *
 *   jinst NAME: C classes, B bytes, median S s: X classes/s, Y MB/s
 *
 * which the bench scripts read next to their peer's figures. Header-only;
 * each benchmark includes it once (after defining _XOPEN_SOURCE 700).
 */
#ifndef JINST_BENCHLIB_H
#define JINST_BENCHLIB_H

#include <ftw.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct corpus {
	uint8_t **bytes;
	size_t *lens;
	size_t count, cap, total;
};

static struct corpus corpus;

static int corpus_load_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
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
		fprintf(stderr, "cannot read %s\n", path);
		return -1;
	}
	size_t got = fread(buf, 1, (size_t)st->st_size, f);
	fclose(f);
	if (got != (size_t)st->st_size) {
		free(buf);
		fprintf(stderr, "short read of %s\n", path);
		return -1;
	}
	corpus.bytes[corpus.count] = buf;
	corpus.lens[corpus.count++] = got;
	corpus.total += got;
	return 0;
}

/* Reads every .class under dir; 0 when at least one was read. The peer runs
 * in a JVM whose heap is committed up front (-Xms); the counterpart here:
 * freed memory stays with the process, so that no pass pays page faults for
 * memory the previous one gave back. */
static int corpus_load(const char *dir)
{
#ifdef __GLIBC__
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
	return nftw(dir, corpus_load_one, 64, FTW_PHYS) != 0 || corpus.count == 0 ? -1 : 0;
}

static void corpus_free(void)
{
	for (size_t i = 0; i < corpus.count; i++)
		free(corpus.bytes[i]);
	free(corpus.bytes);
	free(corpus.lens);
}

static double bench_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Times `iterations` calls of pass(ctx) (at most 64) and prints the median
 * over `classes` classes of `bytes` input bytes. */
static void bench_time(const char *name, int iterations, void (*pass)(void *ctx), void *ctx, size_t classes,
                       size_t bytes)
{
	double times[64];
	if (iterations > 64)
		iterations = 64;
	for (int i = 0; i < iterations; i++) {
		double t0 = bench_now();
		pass(ctx);
		times[i] = bench_now() - t0;
	}
	qsort(times, (size_t)iterations, sizeof times[0], bench_cmp_double);
	double median = times[iterations / 2];
	printf("jinst %s: %zu classes, %zu bytes, median %.3f s: %.0f classes/s, %.1f MB/s\n", name, classes, bytes,
	       median, (double)classes / median, (double)bytes / median / 1e6);
	fflush(stdout);
}

#endif
