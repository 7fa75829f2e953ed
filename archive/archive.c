/*
 * Archives read over libzip (include/jinst/archive.h); the writer is
 * zipwrite.c, the records as stored zipdir.c.
 *
 * libzip does the zip format; this layer decides what is trusted. An
 * entry's recorded size is checked against the limit before a buffer is
 * allocated, and the entry is then read one byte past that size: libzip
 * checks the CRC when its stream reaches the end, and a byte past the
 * recorded size means the directory lies (a zip bomb's usual shape). Names
 * are used as stored (ZIP_FL_ENC_RAW), never converted from a guessed
 * encoding, so a name written back is the name that was read.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "jinst/util.h"

#include "internal.h"

int archive_fail(jinst_diag *diag, int code, const char *archive, const char *entry, const char *fmt, ...)
{
	if (!diag)
		return code;
	diag->code = code;
	diag->offset = JINST_NO_OFFSET;
	snprintf(diag->where, sizeof(diag->where), "%s%s%s", archive, entry ? "!" : "", entry ? entry : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(diag->message, sizeof(diag->message), fmt, ap);
	va_end(ap);
	return code;
}

/* The JINST_E* code for a libzip error. */
static int code_of(const zip_error_t *ze)
{
	switch (zip_error_code_zip(ze)) {
	case ZIP_ER_MEMORY: return JINST_ENOMEM;
	case ZIP_ER_NOENT: return JINST_ENOTFOUND;
	case ZIP_ER_OPEN:
	case ZIP_ER_READ:
	case ZIP_ER_SEEK:
	case ZIP_ER_WRITE:
	case ZIP_ER_CLOSE:
	case ZIP_ER_RENAME:
	case ZIP_ER_TMPOPEN:
	case ZIP_ER_REMOVE: return JINST_EIO;
	case ZIP_ER_COMPNOTSUPP:
	case ZIP_ER_ENCRNOTSUPP:
	case ZIP_ER_NOPASSWD: return JINST_EUNSUPPORTED;
	case ZIP_ER_INVAL: return JINST_EINVAL;
	default: return JINST_EMALFORMED;
	}
}

static int fail_zip(jinst_diag *diag, const char *archive, const char *entry, zip_error_t *ze)
{
	return archive_fail(diag, code_of(ze), archive, entry, "%s", zip_error_strerror(ze));
}

/* ---- reading ------------------------------------------------------------------ */

/* The archive over bytes (borrowed: a file's mapping, or the caller's). */
static int open_bytes(jinst_archive **out, const uint8_t *data, size_t len, const char *name,
                      const jinst_archive_options *opts, jinst_diag *diag)
{
	/* A .jmod is "JM" 1 0 and then a zip (jdk.internal.jmod.JmodFile). */
	size_t skip = len >= 4 && memcmp(data, "JM\x01\x00", 4) == 0 ? 4 : 0;
	zip_error_t ze;
	zip_error_init(&ze);
	zip_source_t *src = zip_source_buffer_create(len ? data + skip : NULL, len - skip, 0, &ze);
	jinst_archive *a = calloc(1, sizeof(*a));
	char *copy = strdup(name);
	zip_t *z = src ? zip_open_from_source(src, ZIP_RDONLY, &ze) : NULL;
	int rc = 0;
	if (!z || !a || !copy) {
		rc = z ? archive_fail(diag, JINST_ENOMEM, name, NULL, "out of memory") : fail_zip(diag, name, NULL, &ze);
		if (z)
			zip_discard(z);
		else if (src)
			zip_source_free(src);
		free(a);
		free(copy);
	} else {
		*a = (jinst_archive){.zip = z, .name = copy, .bytes = data ? data + skip : NULL, .len = len - skip};
		a->max_entry_size = opts && opts->max_entry_size ? opts->max_entry_size : JINST_ARCHIVE_MAX_ENTRY_DEFAULT;
		*out = a;
	}
	zip_error_fini(&ze);
	return rc;
}

/* A file is mapped, not read: entries are read where they lie, and the
 * writer copies their records from the same bytes. What cannot be mapped
 * (a pipe) is read whole. */
int jinst_archive_open(jinst_archive **out, const char *path, const jinst_archive_options *opts,
                       jinst_diag *diag)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return archive_fail(diag, errno == ENOENT ? JINST_ENOTFOUND : JINST_EIO, path, NULL, "%s", strerror(errno));
	struct stat st;
	void *map = MAP_FAILED;
	size_t len = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
		len = (size_t)st.st_size;
		map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	close(fd);
	uint8_t *owned = NULL;
	if (map == MAP_FAILED) {
		int rc = jinst_file_read(&owned, &len, path, 0, diag);
		if (rc)
			return rc;
	}
	const uint8_t *bytes = map != MAP_FAILED ? map : owned;
	int rc = open_bytes(out, bytes, len, path, opts, diag);
	if (rc) {
		if (map != MAP_FAILED)
			munmap(map, len);
		free(owned);
		return rc;
	}
	(*out)->map = map != MAP_FAILED ? map : NULL;
	(*out)->map_len = len;
	(*out)->owned = owned;
	return 0;
}

int jinst_archive_open_memory(jinst_archive **out, const uint8_t *data, size_t len, const char *name,
                              const jinst_archive_options *opts, jinst_diag *diag)
{
	*out = NULL;
	return open_bytes(out, data, len, name ? name : "(memory)", opts, diag);
}

void jinst_archive_close(jinst_archive *a)
{
	if (!a)
		return;
	zip_discard(a->zip);
	if (a->map)
		munmap(a->map, a->map_len);
	free(a->owned);
	zipdir_free(a->dir);
	free(a->dir);
	free(a->name);
	free(a);
}

size_t jinst_archive_count(const jinst_archive *a)
{
	zip_int64_t n = zip_get_num_entries(a->zip, 0);
	return n > 0 ? (size_t)n : 0;
}

int jinst_archive_entry_at(jinst_archive_entry *out, jinst_archive *a, size_t index, jinst_diag *diag)
{
	zip_stat_t st;
	zip_stat_init(&st);
	if (zip_stat_index(a->zip, index, ZIP_FL_ENC_RAW, &st) != 0)
		return fail_zip(diag, a->name, NULL, zip_get_error(a->zip));
	const zip_uint64_t need = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
	if ((st.valid & need) != need)
		return archive_fail(diag, JINST_EMALFORMED, a->name, NULL, "entry %zu: incomplete directory record", index);
	*out = (jinst_archive_entry){
		.name = st.name,
		.index = index,
		.size = st.size,
		.compressed_size = st.comp_size,
		.crc = st.valid & ZIP_STAT_CRC ? st.crc : 0,
		.method = (uint16_t)st.comp_method,
		.mtime = st.valid & ZIP_STAT_MTIME ? (int64_t)st.mtime : 0,
	};
	zip_uint8_t opsys;
	zip_uint32_t attrs;
	if (zip_file_get_external_attributes(a->zip, index, 0, &opsys, &attrs) == 0) {
		out->opsys = opsys;
		out->external_attributes = attrs;
	}
	zip_uint32_t clen = 0;
	const char *comment = zip_file_get_comment(a->zip, index, &clen, ZIP_FL_ENC_RAW);
	if (comment && clen) {
		out->comment = (const uint8_t *)comment;
		out->comment_len = (uint16_t)clen;
	}
	return 0;
}

int jinst_archive_find(size_t *index, jinst_archive *a, const char *name)
{
	zip_int64_t i = zip_name_locate(a->zip, name, ZIP_FL_ENC_RAW);
	if (i < 0)
		return JINST_ENOTFOUND;
	*index = (size_t)i;
	return 0;
}

int jinst_archive_read(uint8_t **bytes, size_t *len, jinst_archive *a, size_t index, jinst_diag *diag)
{
	*bytes = NULL;
	*len = 0;
	jinst_archive_entry e;
	int rc = jinst_archive_entry_at(&e, a, index, diag);
	if (rc)
		return rc;
	if (e.size > a->max_entry_size || e.size > SIZE_MAX - 1)
		return archive_fail(diag, JINST_ETOOLARGE, a->name, e.name, "%llu bytes is more than the limit of %llu",
		            (unsigned long long)e.size, (unsigned long long)a->max_entry_size);
	size_t size = (size_t)e.size;
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return archive_fail(diag, JINST_ENOMEM, a->name, e.name, "out of memory for %zu bytes", size);
	zip_file_t *f = zip_fopen_index(a->zip, index, 0);
	if (!f) {
		free(buf);
		return fail_zip(diag, a->name, e.name, zip_get_error(a->zip));
	}
	/* The recorded size, then one byte more: there must be none, and
	 * reaching the end makes libzip check the CRC. */
	zip_int64_t got = zip_fread(f, buf, size);
	uint8_t extra;
	zip_int64_t more = got >= 0 && (size_t)got == size ? zip_fread(f, &extra, 1) : 0;
	if (got < 0 || more < 0)
		rc = fail_zip(diag, a->name, e.name, zip_file_get_error(f));
	else if ((size_t)got != size)
		rc = archive_fail(diag, JINST_EMALFORMED, a->name, e.name, "%lld bytes where the directory says %zu",
		          (long long)got, size);
	else if (more > 0)
		rc = archive_fail(diag, JINST_EMALFORMED, a->name, e.name, "longer than the %zu bytes the directory says", size);
	zip_fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	*bytes = buf;
	*len = size;
	return 0;
}

const uint8_t *jinst_archive_comment(jinst_archive *a, size_t *len)
{
	int n = 0;
	const char *c = zip_get_archive_comment(a->zip, &n, ZIP_FL_ENC_RAW);
	*len = c && n > 0 ? (size_t)n : 0;
	return *len ? (const uint8_t *)c : NULL;
}

static zip_flags_t extra_flags(enum jinst_archive_extra_where where)
{
	return where == JINST_ARCHIVE_EXTRA_LOCAL ? ZIP_FL_LOCAL : ZIP_FL_CENTRAL;
}

int jinst_archive_extra_count(size_t *count, jinst_archive *a, size_t index, enum jinst_archive_extra_where where,
                              jinst_diag *diag)
{
	zip_int16_t n = zip_file_extra_fields_count(a->zip, index, extra_flags(where));
	if (n < 0)
		return fail_zip(diag, a->name, NULL, zip_get_error(a->zip));
	*count = (size_t)n;
	return 0;
}

int jinst_archive_extra(uint16_t *id, const uint8_t **data, uint16_t *len, jinst_archive *a, size_t index, size_t i,
                        enum jinst_archive_extra_where where, jinst_diag *diag)
{
	zip_uint16_t fid = 0, flen = 0;
	const zip_uint8_t *p = i <= UINT16_MAX ? zip_file_extra_field_get(a->zip, index, (zip_uint16_t)i, &fid, &flen,
	                                                                  extra_flags(where))
	                                       : NULL;
	if (!p)
		return fail_zip(diag, a->name, NULL, zip_get_error(a->zip));
	*id = fid;
	*data = p;
	*len = flen;
	return 0;
}
