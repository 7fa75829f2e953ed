/*
 * Instruments every class of folders and jars with the trace pass, the way
 * the offline tool will: for the JVM tests (instrumented classes written to
 * a folder, with the method table mapping ids to methods in
 * META-INF/jinst/methods.tsv, where the runtime finds it on the class path)
 * and for corpus runs (figures only). Usage:
 *   instrument_tree [-r] [-n] [-v] OUT_DIR|- IN...
 * -r instruments as for a retransformation (the rules are checked);
 * -a adds the allocation pass (include/jinst/alloc.h);
 * -n runs no pass (copies the classes, for a baseline); -v names each
 * method or class left alone.
 * Prints: classes, instrumented, unchanged, left alone by reason; methods
 * instrumented, left alone by reason; time and throughput.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zip.h>

#include "jinst/alloc.h"
#include "jinst/instrument.h"
#include "jinst/report.h"

#include "../testlib.h"

typedef struct reasons {
	char name[32][64];
	uint64_t count[32];
	int n;
} reasons;

static reasons class_reasons, method_reasons;
static const char *out_dir;
static uint32_t flags;
static jinst_instrument *ins;
static jinst_arena *arena;
static uint64_t n_classes, n_changed, n_same, n_failed, bytes_in, bytes_out, changed_in;
static int verbose, no_pass, alloc_pass;

static void count_reason(reasons *r, const char *what)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->name[i], what)) {
			r->count[i]++;
			return;
		}
	if (r->n < 32) {
		snprintf(r->name[r->n], sizeof(r->name[0]), "%s", what);
		r->count[r->n++] = 1;
	}
}

static void left_alone(void *ctx, const char *cls, const char *method, const char *desc, const jinst_diag *why)
{
	(void)ctx;
	char key[64];
	/* the reason without what is particular to the method */
	snprintf(key, sizeof(key), "%s %.40s", jinst_strerror(why->code), why->message);
	char *digit = strpbrk(key, "0123456789");
	if (digit)
		*digit = '\0';
	count_reason(&method_reasons, key);
	if (verbose)
		fprintf(stderr, "left alone: %s.%s%s: %s %s\n", cls, method, desc, jinst_strerror(why->code), why->message);
}

static int mkdirs(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0777) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return 0;
}

static void write_out(const char *rel, const uint8_t *b, size_t n)
{
	if (!out_dir)
		return;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", out_dir, rel);
	FILE *f = mkdirs(path) ? NULL : fopen(path, "wb");
	if (!f || fwrite(b, 1, n, f) != n) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(2);
	}
	fclose(f);
}

static void one_class(const char *rel, const uint8_t *b, size_t n)
{
	uint8_t *out;
	size_t out_len;
	jinst_diag d;
	n_classes++;
	bytes_in += n;
	jinst_arena_reset(arena);
	int rc = jinst_instrument_class(ins, arena, b, n, NULL, flags, NULL, &out, &out_len, &d);
	if (rc) {
		n_failed++;
		char key[64];
		snprintf(key, sizeof(key), "%s %.40s", jinst_strerror(rc), d.message);
		char *digit = strpbrk(key, "0123456789");
		if (digit)
			*digit = '\0';
		count_reason(&class_reasons, key);
		if (verbose)
			fprintf(stderr, "class left alone: %s: %s %s\n", rel, jinst_strerror(rc), d.message);
		write_out(rel, b, n);
	} else if (out) {
		n_changed++;
		bytes_out += out_len;
		changed_in += n;
		write_out(rel, out, out_len);
		free(out);
	} else {
		n_same++;
		write_out(rel, b, n);
	}
}

static void walk_dir(const char *root, const char *rel)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n] = malloc(strlen(rel) + strlen(e->d_name) + 2);
		sprintf(names[n++], "%s%s%s", rel, *rel ? "/" : "", e->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		char p[4096];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", root, names[i]);
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			walk_dir(root, names[i]);
		} else {
			size_t l = strlen(names[i]);
			if (l > 6 && !strcmp(names[i] + l - 6, ".class")) {
				size_t len;
				uint8_t *b = test_read_file(p, &len);
				if (b)
					one_class(names[i], b, len);
				free(b);
			} else if (l > 4 && !strcmp(names[i] + l - 4, ".jar")) {
				int err;
				zip_t *z = zip_open(p, ZIP_RDONLY, &err);
				zip_int64_t ne = z ? zip_get_num_entries(z, 0) : 0;
				for (zip_int64_t k = 0; k < ne; k++) {
					zip_stat_t zs;
					const char *en = zip_get_name(z, (zip_uint64_t)k, 0);
					size_t el = en ? strlen(en) : 0;
					if (el < 7 || strcmp(en + el - 6, ".class") || zip_stat_index(z, (zip_uint64_t)k, 0, &zs))
						continue;
					uint8_t *b = malloc(zs.size ? zs.size : 1);
					zip_file_t *zf = zip_fopen_index(z, (zip_uint64_t)k, 0);
					if (zf && zip_fread(zf, b, zs.size) == (zip_int64_t)zs.size)
						one_class(en, b, zs.size);
					if (zf)
						zip_fclose(zf);
					free(b);
				}
				if (z)
					zip_discard(z);
			}
		}
		free(names[i]);
	}
	free(names);
}

static int method(void *ctx, uint32_t id, const char **cls, const char **name, const char **desc, int *timed)
{
	(void)ctx;
	jinst_method_info mi;
	if (jinst_instrument_method_info(ins, id, &mi))
		return -1;
	*cls = mi.class_name;
	*name = mi.name;
	*desc = mi.descriptor;
	*timed = mi.timed;
	return 0;
}

/* The ids' methods, where the runtime looks for them (on the class path
 * with the classes). */
static void write_method_table(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", out_dir, JINST_METHOD_TABLE_RESOURCE);
	FILE *f = mkdirs(path) ? NULL : fopen(path, "w");
	int r = f ? jinst_trace_write_methods(f, jinst_instrument_method_count(ins), method, NULL) : -1;
	if (!f || fclose(f) || r) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	uint32_t passes = JINST_PASS_TRACE;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "-r"))
			flags |= JINST_INSTRUMENT_RETRANSFORM;
		else if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "-n"))
			no_pass = 1;
		else if (!strcmp(argv[i], "-c"))
			passes |= JINST_PASS_COVERAGE;
		else if (!strcmp(argv[i], "-C"))
			passes |= JINST_PASS_COVERAGE_COUNTS;
		else if (!strcmp(argv[i], "-a"))
			alloc_pass = 1;
		else if (!strcmp(argv[i], "-x"))
			passes &= ~(uint32_t)JINST_PASS_TRACE;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: instrument_tree [-r] [-v] [-n] [-c|-C] [-x] [-a] OUT_DIR|- IN...\n"
		                "  -c, -C  coverage probes (booleans, counts); -x  no trace pass; -a  the allocation pass\n");
		return 2;
	}
	out_dir = strcmp(argv[i], "-") ? argv[i] : NULL;
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.left_alone = left_alone;
	o.hooks_class = JINST_RUNTIME_HOOKS; /* offline: the runtime is on the class path */
	o.passes = passes;
	if (no_pass)
		o.passes = 0;
	jinst_diag d;
	if (jinst_instrument_new(&ins, &o, &d) || jinst_arena_new(&arena))
		return 2;
	jinst_pass pass;
	jinst_alloc_sites *sites;
	if (alloc_pass && !no_pass && (jinst_alloc_pass(&pass, &sites) || jinst_instrument_add_pass(ins, &pass, &d)))
		return 2;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i++; i < argc; i++)
		walk_dir(argv[i], "");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	jinst_instrument_counts c;
	jinst_instrument_get_counts(ins, &c);
	printf("classes %llu: instrumented %llu, nothing to do %llu, left alone %llu\n", (unsigned long long)n_classes,
	       (unsigned long long)n_changed, (unsigned long long)n_same, (unsigned long long)n_failed);
	for (int k = 0; k < class_reasons.n; k++)
		printf("  class left alone: %llu %s\n", (unsigned long long)class_reasons.count[k], class_reasons.name[k]);
	printf("methods instrumented %llu, left alone %llu, ids %u\n", (unsigned long long)c.methods_instrumented,
	       (unsigned long long)c.methods_left_alone, jinst_instrument_method_count(ins));
	for (int k = 0; k < method_reasons.n; k++)
		printf("  method left alone: %llu %s\n", (unsigned long long)method_reasons.count[k], method_reasons.name[k]);
	printf("time %.3f s, %.0f classes/s, %.1f MB/s in, output %.1f%% of the instrumented classes' input\n", s,
	       (double)n_classes / s, (double)bytes_in / s / 1e6,
	       changed_in ? 100.0 * (double)bytes_out / (double)changed_in : 0.0);
	if (out_dir)
		write_method_table();
	jinst_instrument_free(ins);
	jinst_arena_free(arena);
	return 0;
}
