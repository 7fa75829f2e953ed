/* Walking class inputs: class files, folders, jars and jmods (include/jinst/archive.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jinst/archive.h"
#include "jinst/util.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool selected(const char *entry, const char *const *entries, int n)
{
	if (n == 0)
		return true;
	for (int i = 0; i < n; i++) {
		if (strcmp(entry, entries[i]) == 0)
			return true;
		/* "java/lang/String" or "java.lang.String" select "java/lang/String.class" too */
		size_t k = strlen(entries[i]);
		if (strncmp(entry, entries[i], k) == 0 && strcmp(entry + k, ".class") == 0)
			return true;
		char dotted[1024];
		snprintf(dotted, sizeof(dotted), "%s", entry);
		for (char *p = dotted; *p; p++)
			if (*p == '/')
				*p = '.';
		if (strncmp(dotted, entries[i], k) == 0 && strcmp(dotted + k, ".class") == 0)
			return true;
	}
	return false;
}

/* How deep jinst_walk_nested descends into jars in jars; a limit, so that
 * a crafted archive cannot recurse without end. */
#define MAX_NESTING 8

static bool nested_archive(const char *name)
{
	return ends_with(name, ".jar") || ends_with(name, ".zip") || ends_with(name, ".war") ||
	       ends_with(name, ".ear");
}

static int walk_zip(const char *path, const uint8_t *data, size_t len, const char *const *entries, int nentries,
                    int nesting, jinst_walk_class_fn fn, jinst_walk_error_fn err, void *ctx)
{
	if (ends_with(path, ".jmod") && (len < 4 || memcmp(data, "JM\x01\x00", 4) != 0)) {
		err(ctx, path, "not a jmod file (no JM header)");
		return 1;
	}
	jinst_archive *a;
	jinst_diag d;
	if (jinst_archive_open_memory(&a, data, len, path, NULL, &d) != 0) {
		char msg[300];
		snprintf(msg, sizeof(msg), "cannot open as a zip: %s", d.message);
		err(ctx, path, msg);
		return 1;
	}
	int errors = 0;
	size_t n = jinst_archive_count(a);
	for (size_t i = 0; i < n; i++) {
		jinst_archive_entry e;
		if (jinst_archive_entry_at(&e, a, i, NULL) != 0)
			continue;
		bool inner = nesting > 0 && nested_archive(e.name);
		if (!inner && (!ends_with(e.name, ".class") || !selected(e.name, entries, nentries)))
			continue;
		char name[4096];
		snprintf(name, sizeof(name), "%s!%s", path, e.name);
		uint8_t *bytes;
		size_t blen;
		if (jinst_archive_read(&bytes, &blen, a, i, &d) != 0) {
			err(ctx, name, d.message);
			errors++;
			if (d.code == JINST_ENOMEM)
				break;
			continue;
		}
		int stop = 0;
		if (inner && blen >= 4 && memcmp(bytes, "PK", 2) == 0)
			errors += walk_zip(name, bytes, blen, entries, nentries, nesting - 1, fn, err, ctx);
		else if (!inner)
			stop = fn(ctx, name, bytes, blen);
		free(bytes);
		if (stop < 0)
			break;
	}
	jinst_archive_close(a);
	return errors;
}

static int walk(const char *path, const char *const *entries, int nentries, int nesting, jinst_walk_class_fn fn,
                jinst_walk_error_fn err, void *ctx)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		err(ctx, path, strerror(errno));
		return 1;
	}
	jinst_diag d;
	if (S_ISDIR(st.st_mode)) {
		char **names;
		size_t n;
		if (jinst_dir_list(&names, &n, path, &d) != 0) {
			err(ctx, path, d.message);
			return 1;
		}
		int errors = 0;
		for (size_t i = 0; i < n; i++) {
			size_t len = strlen(path) + strlen(names[i]) + 2;
			char *child = malloc(len);
			if (!child) {
				err(ctx, path, "out of memory");
				errors++;
				break;
			}
			snprintf(child, len, "%s/%s", path, names[i]);
			struct stat cs;
			if (stat(child, &cs) == 0 &&
			    (S_ISDIR(cs.st_mode) || ends_with(child, ".class") || ends_with(child, ".jar") ||
			     ends_with(child, ".jmod")))
				errors += walk(child, NULL, 0, nesting, fn, err, ctx);
			free(child);
		}
		jinst_dir_list_free(names, n);
		return errors;
	}
	uint8_t *data;
	size_t len;
	if (jinst_file_read(&data, &len, path, 0, &d) != 0) {
		err(ctx, path, d.message);
		return 1;
	}
	int errors = 0;
	if (len >= 4 && (memcmp(data, "PK", 2) == 0 || memcmp(data, "JM\x01\x00", 4) == 0)) {
		errors = walk_zip(path, data, len, entries, nentries, nesting, fn, err, ctx);
	} else if (ends_with(path, ".jmod") || nested_archive(path)) {
		/* Named as an archive: its first bytes are no class file's. */
		err(ctx, path, ends_with(path, ".jmod") ? "not a jmod file (no JM header)"
		                                        : "not a zip archive (no PK signature)");
		errors = 1;
	} else {
		fn(ctx, path, data, len);
	}
	free(data);
	return errors;
}

int jinst_walk(const char *path, const char *const *entries, int nentries, jinst_walk_class_fn fn,
               jinst_walk_error_fn err, void *ctx)
{
	return walk(path, entries, nentries, 0, fn, err, ctx);
}

int jinst_walk_nested(const char *path, jinst_walk_class_fn fn, jinst_walk_error_fn err, void *ctx)
{
	return walk(path, NULL, 0, MAX_NESTING, fn, err, ctx);
}
