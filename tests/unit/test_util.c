/*
 * jinst_util (include/jinst/util.h): the worker pool runs every task once,
 * on the worker numbers it promises, run after run, whether a run is one
 * call or started and finished apart (the caller's thread, worker 0, takes
 * no task before the finish); whole-file reads and
 * folder listings give the codes the header promises.
 *
 *     test_util DATA_DIR
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/util.h"
#include "../testlib.h"

#define TASKS 20000

typedef struct tally {
	_Atomic int runs[TASKS];
	_Atomic int bad_worker;
	_Atomic int early; /* tasks worker 0 ran before the finish */
	_Atomic bool finishing;
	int threads;
} tally;

static void count(void *ctx, int worker, size_t i)
{
	tally *t = ctx;
	if (worker < 0 || worker >= t->threads)
		atomic_fetch_add(&t->bad_worker, 1);
	if (worker == 0 && !atomic_load(&t->finishing))
		atomic_fetch_add(&t->early, 1);
	atomic_fetch_add(&t->runs[i], 1);
}

static void pool(int threads)
{
	jinst_pool *p;
	CHECK(jinst_pool_new(&p, threads) == 0, "pool of %d", threads);
	static tally t;
	memset(&t, 0, sizeof(t));
	t.threads = jinst_pool_threads(p);
	CHECK(t.threads >= 1 && t.threads <= threads, "%d threads of %d", t.threads, threads);
	for (int round = 1; round <= 4; round++) {
		if (round % 2) {
			atomic_store(&t.finishing, true);
			jinst_pool_run(p, TASKS, count, &t);
		} else {
			atomic_store(&t.finishing, false);
			jinst_pool_start(p, TASKS, count, &t);
			atomic_store(&t.finishing, true);
			jinst_pool_finish(p);
		}
		jinst_pool_run(p, 0, count, &t);
		jinst_pool_start(p, 0, count, &t);
		jinst_pool_finish(p);
		int wrong = 0;
		for (size_t i = 0; i < TASKS; i++)
			wrong += atomic_load(&t.runs[i]) != round;
		CHECK(wrong == 0, "%d threads, round %d: %d tasks not run exactly once", threads, round, wrong);
	}
	CHECK(atomic_load(&t.bad_worker) == 0, "worker numbers out of range");
	CHECK(atomic_load(&t.early) == 0, "%d tasks run by the caller before the finish", atomic_load(&t.early));
	jinst_pool_free(p);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_util DATA_DIR\n");
		return 2;
	}
	pool(1);
	pool(2);
	pool(8);
	jinst_pool *p;
	CHECK(jinst_pool_new(&p, 0) == JINST_EINVAL, "a pool of no threads");
	jinst_pool_free(NULL);

	const char *dir = argv[1];
	char path[4096];
	uint8_t *bytes;
	size_t len;
	jinst_diag d;
	snprintf(path, sizeof(path), "%s/no-such-file", dir);
	CHECK(jinst_file_read(&bytes, &len, path, 0, &d) == JINST_ENOTFOUND && strcmp(d.where, path) == 0,
	      "missing file: %d", d.code);
	CHECK(jinst_file_read(&bytes, &len, dir, 0, &d) == JINST_ENOTFOUND, "a folder: %d", d.code);
	char **names;
	size_t n;
	CHECK(jinst_dir_list(&names, &n, dir, &d) == 0 && n > 0, "list %s: %s", dir, d.message);
	for (size_t i = 1; i < n; i++)
		CHECK(strcmp(names[i - 1], names[i]) < 0, "not sorted: %s, %s", names[i - 1], names[i]);
	size_t file = n;
	for (size_t i = 0; i < n && file == n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (strstr(names[i], ".class"))
			file = i;
	}
	jinst_dir_list_free(names, n);
	CHECK(file < n, "no class file in %s", dir);
	if (file < n) {
		size_t want = 0;
		uint8_t *ref = test_read_file(path, &want);
		CHECK(jinst_file_read(&bytes, &len, path, 0, &d) == 0 && len == want && memcmp(bytes, ref, len) == 0,
		      "%s read back", path);
		free(bytes);
		CHECK(jinst_file_read(&bytes, &len, path, want - 1, &d) == JINST_ETOOLARGE, "limit: %d", d.code);
		free(ref);
	}
	CHECK(jinst_dir_list(&names, &n, "/no/such/folder", &d) == JINST_EIO, "list a missing folder");
	return check_report();
}
