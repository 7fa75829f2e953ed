/*
 * The writer (cli/mirror.h) under a transformation of the test's own, for
 * what `jinst rewrite` does not reach: the extra-entries hook (appended to
 * a jar, a folder and a jar inside the folder, replacing an entry of its
 * name in place, a failing hook failing the run with nothing written), the results changed,
 * unchanged, skipped with reasons and failed, and their counts.
 *
 * The transformation changes a class by appending "+jinst", skips one whose
 * name holds "Skip" (reason "asked to"), fails one whose name holds "Fail".
 *
 *     test_mirror WORK_DIR
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../testlib.h"
#include "jinst/archive.h"
#include "mirror.h"

static enum mirror_result transform(void *ctx, jinst_arena *arena, const char *name, const uint8_t *in, size_t len,
                                    uint8_t **out, size_t *out_len, char **message)
{
	(void)ctx;
	(void)arena;
	if (strstr(name, "Skip")) {
		*message = strdup("asked to");
		return MIRROR_SKIPPED;
	}
	if (strstr(name, "Fail")) {
		*message = strdup("a failure for the test");
		return MIRROR_FAILED;
	}
	if (strstr(name, "Same"))
		return MIRROR_UNCHANGED;
	*out = malloc(len + 6);
	memcpy(*out, in, len);
	memcpy(*out + len, "+jinst", 6);
	*out_len = len + 6;
	return MIRROR_CHANGED;
}

static int extras_called;

static char *dup_text(const char *s)
{
	return strdup(s);
}

static int extra(void *ctx, const char *input, mirror_extra **entries, size_t *n)
{
	extras_called++;
	if (ctx && strcmp(ctx, "fail") == 0)
		return -1;
	mirror_extra *x = calloc(2, sizeof(*x));
	x[0] = (mirror_extra){dup_text("res/replace.txt"), (uint8_t *)dup_text("replaced"), 8};
	char table[512];
	int k = snprintf(table, sizeof(table), "# jinst methods 1\n# %s\n", strrchr(input, '/') + 1);
	x[1] = (mirror_extra){dup_text("META-INF/jinst/methods.tsv"), (uint8_t *)dup_text(table), (size_t)k};
	*entries = x;
	*n = 2;
	return 0;
}

static const char *const names[] = {"META-INF/", "p/A.class", "res/replace.txt", "p/SkipMe.class",
                                    "p/FailMe.class", "p/Same.class", "res/last.txt"};
#define NNAMES (sizeof(names) / sizeof(names[0]))

static void make_jar(const char *path)
{
	jinst_archive_writer *w;
	jinst_diag d;
	CHECK(jinst_archive_writer_new(&w, path, &d) == 0, "writer: %s", d.message);
	for (size_t i = 0; i < NNAMES; i++) {
		jinst_archive_entry e = {.name = names[i], .method = i % 2 ? JINST_ARCHIVE_STORED : JINST_ARCHIVE_DEFLATED,
		                         .mtime = 1100000000 + (int64_t)i * 1000, .opsys = 3,
		                         .external_attributes = 0100644u << 16};
		const char *data = i == 0 ? "" : names[i];
		CHECK(jinst_archive_writer_add(w, &e, (const uint8_t *)data, strlen(data), &d) == 0, "add: %s", d.message);
	}
	CHECK(jinst_archive_writer_commit(w, &d) == 0, "commit: %s", d.message);
}

/* Entry i of the archive at path is name with bytes want. */
static void check_entry(jinst_archive *a, size_t i, const char *name, const char *want)
{
	jinst_archive_entry e;
	jinst_diag d;
	uint8_t *bytes;
	size_t len;
	if (jinst_archive_entry_at(&e, a, i, &d) != 0 || jinst_archive_read(&bytes, &len, a, i, &d) != 0) {
		CHECK(false, "entry %zu: %s", i, d.message);
		return;
	}
	CHECK(strcmp(e.name, name) == 0, "entry %zu is %s, not %s", i, e.name, name);
	CHECK(len == strlen(want) && memcmp(bytes, want, len) == 0, "%s holds %.*s, not %s", name, (int)len,
	      (const char *)bytes, want);
	free(bytes);
}

/* k copies of the four classes of names[]. */
static void check_stats(const mirror_stats *s, size_t k)
{
	CHECK(s->classes == 4 * k, "%zu classes", s->classes);
	CHECK(s->counts[MIRROR_CHANGED] == k && s->counts[MIRROR_UNCHANGED] == k && s->counts[MIRROR_SKIPPED] == k &&
	          s->counts[MIRROR_FAILED] == k,
	      "counts %zu %zu %zu %zu", s->counts[0], s->counts[1], s->counts[2], s->counts[3]);
	CHECK(s->nskipped == 1 && strcmp(s->skipped[0].text, "asked to") == 0 && s->skipped[0].count == k,
	      "skip reasons");
	CHECK(s->warnings == k && s->errors == 0, "%zu warnings, %zu errors", s->warnings, s->errors);
}

/* The archive at path holds names[] as the test's transformation and
 * extra hook leave them, the hook called for input base. */
static void check_jar(const char *path, const char *base)
{
	jinst_archive *a;
	jinst_diag d;
	if (jinst_archive_open(&a, path, NULL, &d) != 0) {
		CHECK(false, "%s", d.message);
		return;
	}
	char table[300];
	snprintf(table, sizeof(table), "# jinst methods 1\n# %s\n", base);
	CHECK(jinst_archive_count(a) == NNAMES + 1, "%zu entries", jinst_archive_count(a));
	check_entry(a, 1, "p/A.class", "p/A.class+jinst");
	check_entry(a, 2, "res/replace.txt", "replaced");
	check_entry(a, 3, "p/SkipMe.class", "p/SkipMe.class");
	check_entry(a, 4, "p/FailMe.class", "p/FailMe.class");
	check_entry(a, 6, "res/last.txt", "res/last.txt");
	check_entry(a, 7, "META-INF/jinst/methods.tsv", table);
	jinst_archive_entry e;
	CHECK(jinst_archive_entry_at(&e, a, 2, &d) == 0 && e.method == JINST_ARCHIVE_DEFLATED &&
	          e.mtime == 1100002000,
	      "the replaced entry lost its method or time");
	jinst_archive_close(a);
}

static void jar_case(const char *work, mirror_options *o)
{
	char in[4096], out[4096];
	snprintf(in, sizeof(in), "%s/in.jar", work);
	snprintf(out, sizeof(out), "%s/out.jar", work);
	make_jar(in);
	const char *inputs[] = {in};
	mirror_stats s;
	CHECK(mirror_run(inputs, 1, out, o, &s) == 0, "the jar was not written");
	check_stats(&s, 1);
	mirror_stats_free(&s);
	check_jar(out, "in.jar");
}

static void write_file(const char *path, const char *content)
{
	FILE *f = fopen(path, "wb");
	fputs(content, f);
	fclose(f);
}

static void folder_case(const char *work, mirror_options *o)
{
	char in[4096], out[4096], p[4200];
	snprintf(in, sizeof(in), "%s/tree", work);
	snprintf(out, sizeof(out), "%s/tree-out", work);
	snprintf(p, sizeof(p), "%s/p", in);
	mkdir(in, 0777);
	mkdir(p, 0777);
	snprintf(p, sizeof(p), "%s/res", in);
	mkdir(p, 0777);
	for (size_t i = 1; i < NNAMES; i++) {
		snprintf(p, sizeof(p), "%s/%s", in, names[i]);
		write_file(p, names[i]);
	}
	snprintf(p, sizeof(p), "%s/lib", in);
	mkdir(p, 0777);
	snprintf(p, sizeof(p), "%s/lib/in.jar", in);
	make_jar(p);
	const char *inputs[] = {in};
	mirror_stats s;
	CHECK(mirror_run(inputs, 1, out, o, &s) == 0, "the folder was not written");
	check_stats(&s, 2);
	mirror_stats_free(&s);
	static const char *const want[][2] = {{"p/A.class", "p/A.class+jinst"},
	                                      {"res/replace.txt", "replaced"},
	                                      {"p/FailMe.class", "p/FailMe.class"},
	                                      {"META-INF/jinst/methods.tsv", "# jinst methods 1\n# tree\n"}};
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", out, want[i][0]);
		FILE *f = fopen(p, "rb");
		char buf[256] = {0};
		size_t got = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		CHECK(got == strlen(want[i][1]) && memcmp(buf, want[i][1], got) == 0, "%s holds '%s'", want[i][0], buf);
	}
	/* A jar inside the folder: its classes and its own extra entries. */
	snprintf(p, sizeof(p), "%s/lib/in.jar", out);
	check_jar(p, "in.jar");
}

static void failing_hook(const char *work, mirror_options *o)
{
	char in[4096], out[4096];
	snprintf(in, sizeof(in), "%s/in.jar", work);
	snprintf(out, sizeof(out), "%s/never.jar", work);
	o->ctx = (void *)"fail";
	const char *inputs[] = {in};
	mirror_stats s;
	CHECK(mirror_run(inputs, 1, out, o, &s) == -1, "a failing hook did not fail the run");
	CHECK(s.errors > 0, "no error counted");
	mirror_stats_free(&s);
	struct stat st;
	CHECK(stat(out, &st) != 0, "an output was written after the hook failed");
	o->ctx = NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_mirror WORK_DIR\n");
		return 2;
	}
	mkdir(argv[1], 0777);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/in.jar '%s'/out.jar '%s'/tree '%s'/tree-out", argv[1], argv[1], argv[1],
	         argv[1]);
	CHECK(system(cmd) == 0, "cannot clean %s", argv[1]);
	mirror_options o = MIRROR_OPTIONS_INIT("test", "changed");
	o.transform = transform;
	o.extra = extra;
	o.jobs = 3;
	jar_case(argv[1], &o);
	folder_case(argv[1], &o);
	failing_hook(argv[1], &o);
	CHECK(extras_called == 4, "the hook was called %d times for 3 inputs and a jar in a folder", extras_called);
	return check_report();
}
