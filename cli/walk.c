/* Finding the classes in files, jars, jmods and folders, and the JDK. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "cli.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int read_file(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			uint8_t *p = realloc(buf, cap);
			if (!p) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = p;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return -1;
	}
	*out = buf;
	*len = n;
	return 0;
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

static int walk_zip(const char *path, const uint8_t *data, size_t len, const char *const *entries, int nentries,
                    class_fn fn, error_fn err, void *ctx)
{
	size_t skip = 0;
	if (ends_with(path, ".jmod")) {
		/* A jmod is "JM" 1 0 then a zip (jdk.internal.jmod.JmodFile). */
		if (len < 4 || memcmp(data, "JM\x01\x00", 4) != 0) {
			err(ctx, path, "not a jmod file (no JM header)");
			return 1;
		}
		skip = 4;
	}
	zip_error_t ze;
	zip_error_init(&ze);
	zip_source_t *src = zip_source_buffer_create(data + skip, len - skip, 0, &ze);
	zip_t *z = src ? zip_open_from_source(src, ZIP_RDONLY, &ze) : NULL;
	if (!z) {
		char msg[300];
		snprintf(msg, sizeof(msg), "cannot open as a zip: %s", zip_error_strerror(&ze));
		err(ctx, path, msg);
		if (src)
			zip_source_free(src);
		zip_error_fini(&ze);
		return 1;
	}
	int errors = 0;
	zip_int64_t n = zip_get_num_entries(z, 0);
	uint8_t *buf = NULL;
	size_t cap = 0;
	for (zip_int64_t i = 0; i < n; i++) {
		zip_stat_t st;
		if (zip_stat_index(z, (zip_uint64_t)i, 0, &st) || !(st.valid & ZIP_STAT_NAME) || !ends_with(st.name, ".class"))
			continue;
		if (!selected(st.name, entries, nentries))
			continue;
		char name[4096];
		snprintf(name, sizeof(name), "%s!%s", path, st.name);
		zip_file_t *zf = zip_fopen_index(z, (zip_uint64_t)i, 0);
		if (!zf) {
			err(ctx, name, zip_strerror(z));
			errors++;
			continue;
		}
		if (st.size + 1 > cap) {
			cap = (size_t)st.size + 1;
			uint8_t *p = realloc(buf, cap);
			if (!p) {
				zip_fclose(zf);
				err(ctx, name, "out of memory");
				errors++;
				break;
			}
			buf = p;
		}
		zip_int64_t got = zip_fread(zf, buf, st.size);
		zip_fclose(zf);
		if (got < 0 || (zip_uint64_t)got != st.size) {
			err(ctx, name, "cannot read the entry");
			errors++;
			continue;
		}
		if (fn(ctx, name, buf, (size_t)got) < 0)
			break;
	}
	free(buf);
	zip_discard(z);
	zip_error_fini(&ze);
	return errors;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int list_dir_sorted(const char *path, char ***names, size_t *count)
{
	*names = NULL;
	*count = 0;
	DIR *d = opendir(path);
	if (!d)
		return -1;
	char **list = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **p = realloc(list, cap * sizeof(*p));
			if (!p)
				break;
			list = p;
		}
		list[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(list, n, sizeof(*list), cmp_str);
	*names = list;
	*count = n;
	return 0;
}

int walk_path(const char *path, const char *const *entries, int nentries, class_fn fn, error_fn err, void *ctx)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		err(ctx, path, strerror(errno));
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		char **names;
		size_t n;
		if (list_dir_sorted(path, &names, &n) != 0) {
			err(ctx, path, strerror(errno));
			return 1;
		}
		int errors = 0;
		for (size_t i = 0; i < n; i++) {
			size_t len = strlen(path) + strlen(names[i]) + 2;
			char *child = malloc(len);
			snprintf(child, len, "%s/%s", path, names[i]);
			struct stat cs;
			if (stat(child, &cs) == 0 &&
			    (S_ISDIR(cs.st_mode) || ends_with(child, ".class") || ends_with(child, ".jar") ||
			     ends_with(child, ".jmod")))
				errors += walk_path(child, NULL, 0, fn, err, ctx);
			free(child);
			free(names[i]);
		}
		free(names);
		return errors;
	}
	uint8_t *data;
	size_t len;
	if (read_file(path, &data, &len)) {
		err(ctx, path, strerror(errno ? errno : EIO));
		return 1;
	}
	int errors = 0;
	if (len >= 4 && (memcmp(data, "PK", 2) == 0 || memcmp(data, "JM\x01\x00", 4) == 0))
		errors = walk_zip(path, data, len, entries, nentries, fn, err, ctx);
	else
		fn(ctx, path, data, len);
	free(data);
	return errors;
}

/* The JDK whose image answers for the platform's classes: --jdk, else
 * JAVA_HOME, else the one `java` on the PATH belongs to. */
char *cli_default_jdk(void)
{
	const char *home = getenv("JAVA_HOME");
	if (home && *home)
		return strdup(home);
	const char *path = getenv("PATH");
	if (!path)
		return NULL;
	char *copy = strdup(path), *save = NULL;
	char *found = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char cand[4096];
		snprintf(cand, sizeof(cand), "%s/java", dir);
		if (access(cand, X_OK) != 0)
			continue;
		char *real = realpath(cand, NULL);
		if (!real)
			continue;
		char *bin = strstr(real, "/bin/java");
		if (bin && bin[9] == '\0') {
			*bin = '\0';
			found = real;
		} else {
			free(real);
		}
	}
	free(copy);
	return found;
}
