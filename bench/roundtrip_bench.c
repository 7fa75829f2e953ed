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
#include "jinst/classfile.h"
#include "benchlib.h"

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

struct mode {
	jinst_arena *arena;
	uint32_t flags;
};

static void timed_pass(void *ctx)
{
	struct mode *m = ctx;
	pass(m->arena, m->flags, 0);
}

static int run(const char *name, jinst_arena *arena, uint32_t flags, int iterations)
{
	long failed = pass(arena, flags, 1);

	if (failed) {
		fprintf(stderr, "jinst %s: %ld of %zu classes failed the check\n", name, failed,
			corpus.count);
		return 1;
	}
	struct mode m = {arena, flags};
	bench_time(name, iterations, timed_pass, &m, corpus.count, corpus.total);
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
	if (corpus_load(dir) != 0) {
		fprintf(stderr, "jinst-bench-roundtrip: no classes read from %s\n", dir);
		return 1;
	}
	if (jinst_arena_new(&arena) < 0)
		return 1;
	if (!mode || strcmp(mode, "default") == 0)
		rc |= run("default", arena, 0, iterations);
	if (!mode || strcmp(mode, "deep") == 0)
		rc |= run("deep", arena, JINST_WRITE_FROM_MODEL, iterations);
	jinst_arena_free(arena);
	corpus_free();
	return rc;
}
