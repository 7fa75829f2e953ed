/*
 * jinst roundtrip: parse and write every class and compare.
 *
 * Classes are gathered in batches (up to 64 MB) in the order the inputs give
 * them; the worker pool (include/jinst/util.h) takes classes from the batch
 * and leaves a verdict in each slot, two arenas per pool thread; the
 * verdicts are printed in input order, so the output is the same whatever
 * the number of threads.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "jinst/archive.h"
#include "jinst/util.h"

enum verdict { V_IDENTICAL, V_EQUIVALENT, V_DIFFER, V_REJECTED };

typedef struct item {
	char *name;
	uint8_t *bytes;
	size_t len;
	enum verdict verdict;
	char *message; /* reason for DIFFER / REJECTED, or a note */
	bool newer;    /* version above what this jinst knows */
} item;

typedef struct rt {
	bool deep, quiet, progress;
	int jobs;
	item *items;
	size_t n, cap, bytes;
	jinst_pool *pool;
	jinst_arena **arenas; /* two per pool thread */
	size_t counts[4], total, file_errors;
} rt;

#define BATCH_BYTES (64u << 20)

static char *fmt_diag(const char *what, const jinst_diag *d)
{
	char msg[700], full[800];
	jinst_diag_format(d, msg, sizeof(msg));
	snprintf(full, sizeof(full), "%s%s", what, msg);
	return strdup(full);
}

/* The first line where two canonical renderings differ, named by the element it belongs to. */
static char *first_difference(const text *a, const text *b)
{
	const char *pa = a->data ? a->data : "", *pb = b->data ? b->data : "";
	const char *section = NULL;
	size_t section_len = 0;
	for (;;) {
		const char *ea = strchr(pa, '\n'), *eb = strchr(pb, '\n');
		size_t la = ea ? (size_t)(ea - pa) : strlen(pa), lb = eb ? (size_t)(eb - pb) : strlen(pb);
		if (la != lb || memcmp(pa, pb, la) != 0) {
			char buf[1024];
			snprintf(buf, sizeof(buf), "%.*s%s'%.*s' became '%.*s'", (int)(section_len > 200 ? 200 : section_len),
			         section ? section : "", section ? ": " : "", (int)(la > 300 ? 300 : la), pa,
			         (int)(lb > 300 ? 300 : lb), pb);
			return strdup(buf);
		}
		if (pa[0] != ' ') {
			section = pa;
			section_len = la;
		}
		if (!ea || !eb)
			return strdup("renderings differ in length");
		pa = ea + 1;
		pb = eb + 1;
	}
}

static void check(rt *R, item *it, jinst_arena *arena, jinst_arena *arena2)
{
	jinst_arena_reset(arena);
	jinst_class *c;
	jinst_diag d;
	if (jinst_class_parse(&c, it->bytes, it->len, arena, NULL, &d)) {
		it->verdict = V_REJECTED;
		it->message = fmt_diag("", &d);
		return;
	}
	it->newer = !jinst_class_version_known(c);
	jinst_write_options opts = JINST_WRITE_OPTIONS_INIT;
	if (R->deep)
		opts.flags |= JINST_WRITE_FROM_MODEL;
	uint8_t *out;
	size_t len;
	if (jinst_class_write(c, &opts, &out, &len, &d)) {
		it->verdict = V_REJECTED;
		it->message = fmt_diag("write: ", &d);
		return;
	}
	if (len == it->len && memcmp(out, it->bytes, len) == 0) {
		it->verdict = V_IDENTICAL;
		free(out);
		return;
	}
	if (!R->deep) {
		size_t k = 0;
		while (k < len && k < it->len && out[k] == it->bytes[k])
			k++;
		char buf[160];
		snprintf(buf, sizeof(buf), "output (%zu bytes) first differs from the input (%zu bytes) at offset %zu",
		         len, it->len, k);
		it->verdict = V_DIFFER;
		it->message = strdup(buf);
		free(out);
		return;
	}
	/* Deep: not the same bytes; does it mean the same? */
	jinst_arena_reset(arena2);
	jinst_class *c2;
	if (jinst_class_parse(&c2, out, len, arena2, NULL, &d)) {
		it->verdict = V_DIFFER;
		it->message = fmt_diag("output does not parse: ", &d);
		free(out);
		return;
	}
	text ta = {0}, tb = {0};
	int rc = render_class(c, RENDER_CANON, &ta, &d);
	if (rc) {
		it->verdict = V_REJECTED;
		it->message = fmt_diag("", &d);
	} else if ((rc = render_class(c2, RENDER_CANON, &tb, &d)) != 0) {
		it->verdict = V_DIFFER;
		it->message = fmt_diag("output does not decode: ", &d);
	} else if (ta.len == tb.len && memcmp(ta.data, tb.data, ta.len) == 0) {
		it->verdict = V_EQUIVALENT;
	} else {
		it->verdict = V_DIFFER;
		it->message = first_difference(&ta, &tb);
	}
	text_free(&ta);
	text_free(&tb);
	free(out);
}

static void check_one(void *p, int worker, size_t i)
{
	rt *R = p;
	check(R, &R->items[i], R->arenas[2 * worker], R->arenas[2 * worker + 1]);
}

static void run_batch(rt *R)
{
	if (!R->n)
		return;
	jinst_pool_run(R->pool, R->n, check_one, R);
	for (size_t i = 0; i < R->n; i++) {
		item *it = &R->items[i];
		R->counts[it->verdict]++;
		R->total++;
		if (it->newer)
			printf("%s: note: class-file version newer than %u, read as far as its structure parses\n", it->name,
			       JINST_MAX_SUPPORTED_MAJOR);
		if (it->verdict == V_DIFFER)
			printf("%s: differ: %s\n", it->name, it->message);
		else if (it->verdict == V_REJECTED)
			printf("%s: rejected: %s\n", it->name, it->message);
		free(it->name);
		free(it->bytes);
		free(it->message);
	}
	fflush(stdout);
	R->n = 0;
	R->bytes = 0;
	if (R->progress)
		fprintf(stderr, "\r%zu classes...", R->total);
}

static int add_class(void *p, const char *name, const uint8_t *bytes, size_t len)
{
	rt *R = p;
	if (R->n == R->cap) {
		R->cap = R->cap ? R->cap * 2 : 1024;
		item *ni = realloc(R->items, R->cap * sizeof(*ni));
		if (!ni) {
			fputs("jinst: out of memory\n", stderr);
			exit(1);
		}
		R->items = ni;
	}
	item *it = &R->items[R->n++];
	memset(it, 0, sizeof(*it));
	it->name = strdup(name);
	it->bytes = malloc(len ? len : 1);
	if (!it->name || !it->bytes) {
		fputs("jinst: out of memory\n", stderr);
		exit(1);
	}
	memcpy(it->bytes, bytes, len);
	it->len = len;
	R->bytes += len;
	if (R->bytes >= BATCH_BYTES)
		run_batch(R);
	return 0;
}

static void file_error(void *p, const char *name, const char *message)
{
	rt *R = p;
	printf("%s: error: %s\n", name, message);
	R->file_errors++;
}

int cmd_roundtrip(int argc, char **argv)
{
	rt R = {0};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	R.jobs = cpus > 0 ? (int)cpus : 1;
	int first = argc;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--deep") == 0) {
			R.deep = true;
		} else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			R.quiet = true;
		} else if (strcmp(argv[i], "-j") == 0 || strncmp(argv[i], "--jobs=", 7) == 0) {
			const char *v = argv[i][1] == 'j' ? (i + 1 < argc ? argv[++i] : NULL) : argv[i] + 7;
			char *end;
			long j = v ? strtol(v, &end, 10) : 0;
			if (!v || *end || j < 1 || j > 256) {
				fprintf(stderr, "jinst roundtrip: -j needs a number from 1 to 256\n");
				return 2;
			}
			R.jobs = (int)j;
		} else if (strcmp(argv[i], "--") == 0) {
			first = i + 1;
			break;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "jinst roundtrip: unknown option '%s'\nusage: jinst roundtrip [--deep] [--quiet] [-j N] PATH...\n",
			        argv[i]);
			return 2;
		} else {
			first = i;
			break;
		}
	}
	if (first >= argc) {
		fprintf(stderr, "jinst roundtrip: no path given\nusage: jinst roundtrip [--deep] [--quiet] [-j N] PATH...\n");
		return 2;
	}
	R.progress = !R.quiet && isatty(2);
	bool ok = jinst_pool_new(&R.pool, R.jobs) == 0;
	size_t narenas = ok ? 2 * (size_t)jinst_pool_threads(R.pool) : 0;
	ok = ok && (R.arenas = calloc(narenas, sizeof(*R.arenas))) != NULL;
	for (size_t i = 0; ok && i < narenas; i++)
		ok = jinst_arena_new(&R.arenas[i]) == 0;
	if (!ok) {
		fputs("jinst: out of memory\n", stderr);
		return 1;
	}
	for (int i = first; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "jinst roundtrip: options go before the paths: '%s'\n", argv[i]);
			return 2;
		}
		jinst_walk(argv[i], NULL, 0, add_class, file_error, &R);
	}
	run_batch(&R);
	free(R.items);
	for (int i = 0; i < 2 * jinst_pool_threads(R.pool); i++)
		jinst_arena_free(R.arenas[i]);
	free(R.arenas);
	jinst_pool_free(R.pool);
	if (R.progress)
		fputs("\r", stderr);
	printf("%zu classes: %zu identical, %zu equivalent, %zu differ, %zu rejected\n", R.total, R.counts[V_IDENTICAL],
	       R.counts[V_EQUIVALENT], R.counts[V_DIFFER], R.counts[V_REJECTED]);
	if (R.file_errors)
		printf("%zu files could not be read\n", R.file_errors);
	return R.counts[V_DIFFER] || R.counts[V_REJECTED] || R.file_errors ? 1 : 0;
}
