/*
 * Replays fuzz inputs without libFuzzer: runs LLVMFuzzerTestOneInput over
 * every file in the folders (or files) given on the command line. Built in
 * every configuration so ctest replays the saved corpus (label `fuzz`).
 * Each input is copied into a buffer of its exact size, so an ASan build
 * catches any read past its end.
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_classfile.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", path);
		return -1;
	}
	/* Exact-size copy: no slack after the input for a reader to hide in. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs path (a file, or every regular file in a folder tree, in name order). */
static int run_path(const char *path, unsigned *count)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (run_file(path) != 0)
			return -1;
		++*count;
		return 0;
	}
	DIR *dir = opendir(path);
	if (!dir) {
		perror(path);
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));
			if (!nn) {
				rc = -1;
				break;
			}
			names = nn;
		}
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		if (!(names[n] = malloc(len))) {
			rc = -1;
			break;
		}
		snprintf(names[n++], len, "%s/%s", path, e->d_name);
	}
	closedir(dir);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0 && run_path(names[i], count) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	unsigned count = 0;
	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &count) != 0)
			return 1;
	printf("replayed %u inputs\n", count);
	return count ? 0 : 1;
}
