/*
 * The corpus walk of edit_check and patch_check: jinst_walk
 * (include/jinst/archive.h) over one argument (a folder, a .class or a jar), each class handed on
 * with the name it takes in an --out folder: its path under the folder
 * walked, or JAR.jar/ENTRY for a jar's entry (one folder per jar, the
 * layout tests/jvm/verify.sh reads). Files that cannot be read are
 * reported on stderr and skipped. check_write_out writes a class there.
 * With sample > 1, 1 class in sample (sample.h).
 */
#ifndef JINST_TESTS_CHECK_WALK_H
#define JINST_TESTS_CHECK_WALK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jinst/archive.h"
#include "sample.h"

typedef void (*check_class_fn)(const uint8_t *bytes, size_t len, const char *name);

typedef struct check_walk_ctx {
	const char *root;
	check_class_fn fn;
	unsigned long sample;
} check_walk_ctx;

static inline int check_walk_class(void *ctx, const char *name, const uint8_t *bytes, size_t len)
{
	const check_walk_ctx *w = ctx;
	size_t rl = strlen(w->root);
	const char *rel = name;
	if (!strncmp(name, w->root, rl) && name[rl] == '/')
		rel = name + rl + 1;
	const char *bang = strchr(rel, '!');
	char out[4096];
	if (bang) {
		/* .../x.jar!p/C.class: x.jar/p/C.class */
		const char *base = rel;
		for (const char *p = rel; p < bang; p++)
			if (*p == '/')
				base = p + 1;
		snprintf(out, sizeof(out), "%.*s/%s", (int)(bang - base), base, bang + 1);
		rel = out;
	}
	if (corpus_sampled(rel, w->sample))
		w->fn(bytes, len, rel);
	return 0;
}

static inline void check_walk_error(void *ctx, const char *name, const char *message)
{
	(void)ctx;
	fprintf(stderr, "%s: %s\n", name, message);
}

static inline void check_walk(const char *root, check_class_fn fn, unsigned long sample)
{
	check_walk_ctx w = {root, fn, sample};
	jinst_walk(root, NULL, 0, check_walk_class, check_walk_error, &w);
}

/* Writes bytes to DIR/NAME, making the folders on the way; exits on failure. */
static inline void check_write_out(const char *dir, const char *name, const uint8_t *b, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0777);
			*p = '/';
		}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b, 1, len, f) != len) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
	fclose(f);
}

#endif
