/* Reading whole files and listing folders (include/jinst/util.h). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jinst/util.h"

/* Reads fd to its end into buf (cap bytes so far, n used), growing it up to limit. */
static int read_stream(int fd, uint8_t **buf, size_t *n, size_t cap, size_t limit, const char *path,
                       jinst_diag *diag)
{
	for (;;) {
		if (*n == cap) {
			if (cap >= limit)
				return jinst_diag_fail(diag, JINST_ETOOLARGE, path, "larger than %zu bytes", limit);
			size_t ncap = cap < 65536 ? 65536 : cap * 2;
			if (ncap > limit)
				ncap = limit;
			uint8_t *p = realloc(*buf, ncap);
			if (!p)
				return jinst_diag_fail(diag, JINST_ENOMEM, path, "out of memory for %zu bytes", ncap);
			*buf = p;
			cap = ncap;
		}
		ssize_t got = read(fd, *buf + *n, cap - *n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return jinst_diag_fail(diag, JINST_EIO, path, "%s", strerror(errno));
		if (got == 0)
			return 0;
		*n += (size_t)got;
	}
}

int jinst_file_read(uint8_t **bytes, size_t *len, const char *path, size_t limit, jinst_diag *diag)
{
	*bytes = NULL;
	*len = 0;
	if (limit == 0)
		limit = SIZE_MAX;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int open_err = errno;
		return jinst_diag_fail(diag, open_err == ENOENT || open_err == ENOTDIR ? JINST_ENOTFOUND : JINST_EIO, path, "%s",
		            strerror(open_err));
	}
	struct stat st;
	int err = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
	if (err) {
		close(fd);
		return jinst_diag_fail(diag, err == EISDIR ? JINST_ENOTFOUND : JINST_EIO, path, "%s", strerror(err));
	}
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	if (S_ISREG(st.st_mode)) {
		/* The size first, so nothing is allocated for a file past the limit. */
		if ((uint64_t)st.st_size > limit) {
			close(fd);
			return jinst_diag_fail(diag, JINST_ETOOLARGE, path, "%lld bytes is more than %zu", (long long)st.st_size, limit);
		}
		cap = (size_t)st.st_size;
		buf = malloc(cap ? cap : 1);
		if (!buf) {
			close(fd);
			return jinst_diag_fail(diag, JINST_ENOMEM, path, "out of memory for %zu bytes", cap);
		}
		while (n < cap && rc == 0) {
			ssize_t got = read(fd, buf + n, cap - n);
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				rc = jinst_diag_fail(diag, JINST_EIO, path, "%s", strerror(errno));
			else if (got == 0)
				rc = jinst_diag_fail(diag, JINST_EIO, path, "shorter than its size");
			else
				n += (size_t)got;
		}
	} else {
		rc = read_stream(fd, &buf, &n, 0, limit, path, diag);
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	*bytes = buf;
	*len = n;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void jinst_dir_list_free(char **names, size_t count)
{
	for (size_t i = 0; names && i < count; i++)
		free(names[i]);
	free(names);
}

int jinst_dir_list(char ***names, size_t *count, const char *path, jinst_diag *diag)
{
	*names = NULL;
	*count = 0;
	DIR *d = opendir(path);
	if (!d)
		return jinst_diag_fail(diag, JINST_EIO, path, "%s", strerror(errno));
	char **list = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **p = realloc(list, cap * sizeof(*p));
			if (!p) {
				rc = jinst_diag_fail(diag, JINST_ENOMEM, path, "out of memory");
				break;
			}
			list = p;
		}
		if (!(list[n] = strdup(e->d_name)))
			rc = jinst_diag_fail(diag, JINST_ENOMEM, path, "out of memory");
		else
			n++;
	}
	closedir(d);
	if (rc) {
		jinst_dir_list_free(list, n);
		return rc;
	}
	if (n)
		qsort(list, n, sizeof(*list), cmp_str);
	*names = list;
	*count = n;
	return 0;
}
