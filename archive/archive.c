/*
 * Archives over libzip (include/jinst/archive.h).
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

/* zlib's level for deflated entries: 6, what `jar` and zlib default to.
 * libzip takes 0 for 9, the slowest, which was half of `jinst instrument`'s
 * time on one core for a few per cent of size. */
#define DEFLATE_LEVEL 6

#include "jinst/archive.h"

struct jinst_archive {
	zip_t *zip;
	char *name;
	uint64_t max_entry_size;
};

struct jinst_archive_writer {
	zip_t *zip;
	zip_source_t *buffer; /* a memory writer's bytes; NULL when writing to path */
	char *path;           /* the path, or the name of a memory writer */
	size_t count;
};

static int fail(jinst_diag *diag, int code, const char *archive, const char *entry, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail(jinst_diag *diag, int code, const char *archive, const char *entry, const char *fmt, ...)
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
	return fail(diag, code_of(ze), archive, entry, "%s", zip_error_strerror(ze));
}

/* ---- reading ------------------------------------------------------------------ */

static int open_source(jinst_archive **out, zip_source_t *src, zip_error_t *ze, const char *name,
                       const jinst_archive_options *opts, jinst_diag *diag)
{
	jinst_archive *a = calloc(1, sizeof(*a));
	char *copy = strdup(name);
	zip_t *z = src ? zip_open_from_source(src, ZIP_RDONLY, ze) : NULL;
	if (!z || !a || !copy) {
		int rc = z ? fail(diag, JINST_ENOMEM, name, NULL, "out of memory") : fail_zip(diag, name, NULL, ze);
		if (z)
			zip_discard(z);
		else if (src)
			zip_source_free(src);
		free(a);
		free(copy);
		return rc;
	}
	a->zip = z;
	a->name = copy;
	a->max_entry_size = opts && opts->max_entry_size ? opts->max_entry_size : JINST_ARCHIVE_MAX_ENTRY_DEFAULT;
	*out = a;
	return 0;
}

/* A .jmod is "JM" 1 0 and then a zip (jdk.internal.jmod.JmodFile). */
static bool jmod_header(const uint8_t *p, size_t len)
{
	return len >= 4 && memcmp(p, "JM\x01\x00", 4) == 0;
}

int jinst_archive_open(jinst_archive **out, const char *path, const jinst_archive_options *opts,
                       jinst_diag *diag)
{
	*out = NULL;
	uint8_t head[4];
	size_t got = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return fail(diag, errno == ENOENT ? JINST_ENOTFOUND : JINST_EIO, path, NULL, "%s", strerror(errno));
	got = fread(head, 1, sizeof(head), f);
	fclose(f);
	zip_error_t ze;
	zip_error_init(&ze);
	zip_source_t *src = zip_source_file_create(path, jmod_header(head, got) ? 4 : 0, -1, &ze);
	int rc = open_source(out, src, &ze, path, opts, diag);
	zip_error_fini(&ze);
	return rc;
}

int jinst_archive_open_memory(jinst_archive **out, const uint8_t *data, size_t len, const char *name,
                              const jinst_archive_options *opts, jinst_diag *diag)
{
	*out = NULL;
	size_t skip = jmod_header(data, len) ? 4 : 0;
	zip_error_t ze;
	zip_error_init(&ze);
	zip_source_t *src = zip_source_buffer_create(data + skip, len - skip, 0, &ze);
	int rc = open_source(out, src, &ze, name ? name : "(memory)", opts, diag);
	zip_error_fini(&ze);
	return rc;
}

void jinst_archive_close(jinst_archive *a)
{
	if (!a)
		return;
	zip_discard(a->zip);
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
		return fail(diag, JINST_EMALFORMED, a->name, NULL, "entry %zu: incomplete directory record", index);
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
		return fail(diag, JINST_ETOOLARGE, a->name, e.name, "%llu bytes is more than the limit of %llu",
		            (unsigned long long)e.size, (unsigned long long)a->max_entry_size);
	size_t size = (size_t)e.size;
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return fail(diag, JINST_ENOMEM, a->name, e.name, "out of memory for %zu bytes", size);
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
		rc = fail(diag, JINST_EMALFORMED, a->name, e.name, "%lld bytes where the directory says %zu",
		          (long long)got, size);
	else if (more > 0)
		rc = fail(diag, JINST_EMALFORMED, a->name, e.name, "longer than the %zu bytes the directory says", size);
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

/* ---- writing ------------------------------------------------------------------ */

int jinst_archive_writer_new(jinst_archive_writer **out, const char *path, jinst_diag *diag)
{
	*out = NULL;
	jinst_archive_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return fail(diag, JINST_ENOMEM, path, NULL, "out of memory");
	}
	int zerr = 0;
	w->zip = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
	if (!w->zip) {
		zip_error_t ze;
		zip_error_init_with_code(&ze, zerr);
		int rc = fail_zip(diag, path, NULL, &ze);
		zip_error_fini(&ze);
		free(w->path);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int jinst_archive_writer_add(jinst_archive_writer *w, const jinst_archive_entry *meta, const uint8_t *bytes,
                             size_t len, jinst_diag *diag)
{
	const char *name = meta->name;
	zip_int64_t at;
	if (name[0] && name[strlen(name) - 1] == '/' && len == 0) {
		at = zip_dir_add(w->zip, name, ZIP_FL_ENC_RAW);
	} else {
		zip_source_t *src = zip_source_buffer(w->zip, bytes, len, 0);
		at = src ? zip_file_add(w->zip, name, src, ZIP_FL_ENC_RAW) : -1;
		if (at < 0 && src)
			zip_source_free(src);
	}
	if (at < 0)
		return fail_zip(diag, w->path, name, zip_get_error(w->zip));
	zip_uint64_t i = (zip_uint64_t)at;
	zip_int32_t method = meta->method == JINST_ARCHIVE_STORED ? ZIP_CM_STORE : ZIP_CM_DEFLATE;
	if (zip_set_file_compression(w->zip, i, method, DEFLATE_LEVEL) != 0 ||
	    zip_file_set_mtime(w->zip, i, (time_t)meta->mtime, 0) != 0 ||
	    zip_file_set_external_attributes(w->zip, i, 0, meta->opsys, meta->external_attributes) != 0 ||
	    (meta->comment_len &&
	     zip_file_set_comment(w->zip, i, (const char *)meta->comment, meta->comment_len, 0) != 0)) {
		int rc = fail_zip(diag, w->path, name, zip_get_error(w->zip));
		zip_delete(w->zip, i); /* a failed add leaves no entry behind */
		return rc;
	}
	w->count++;
	return 0;
}

int jinst_archive_writer_set_comment(jinst_archive_writer *w, const uint8_t *comment, size_t len, jinst_diag *diag)
{
	if (len > UINT16_MAX)
		return fail(diag, JINST_ETOOLARGE, w->path, NULL, "a comment of %zu bytes (at most 65535)", len);
	if (zip_set_archive_comment(w->zip, (const char *)comment, (zip_uint16_t)len) != 0)
		return fail_zip(diag, w->path, NULL, zip_get_error(w->zip));
	return 0;
}

void jinst_archive_writer_discard(jinst_archive_writer *w)
{
	if (!w)
		return;
	zip_discard(w->zip);
	if (w->buffer)
		zip_source_free(w->buffer);
	free(w->path);
	free(w);
}

int jinst_archive_writer_commit(jinst_archive_writer *w, jinst_diag *diag)
{
	int rc = 0;
	if (w->count == 0)
		rc = fail(diag, JINST_EUNSUPPORTED, w->path, NULL, "no entries (libzip writes no empty archive)");
	else if (zip_close(w->zip) != 0)
		rc = fail_zip(diag, w->path, NULL, zip_get_error(w->zip));
	else
		w->zip = NULL;
	jinst_archive_writer_discard(w);
	return rc;
}

/* ---- writing into memory, entries copied from another archive ----------------------- */

int jinst_archive_writer_new_memory(jinst_archive_writer **out, const char *name, jinst_diag *diag)
{
	*out = NULL;
	jinst_archive_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(name))) {
		free(w);
		return fail(diag, JINST_ENOMEM, name, NULL, "out of memory");
	}
	zip_error_t ze;
	zip_error_init(&ze);
	w->buffer = zip_source_buffer_create(NULL, 0, 0, &ze);
	w->zip = w->buffer ? zip_open_from_source(w->buffer, ZIP_TRUNCATE, &ze) : NULL;
	if (!w->zip) {
		int rc = fail_zip(diag, name, NULL, &ze);
		zip_error_fini(&ze);
		if (w->buffer)
			zip_source_free(w->buffer);
		free(w->path);
		free(w);
		return rc;
	}
	zip_error_fini(&ze);
	/* zip_close frees the source it wrote to unless it holds another
	 * reference: this one, read in jinst_archive_writer_finish. */
	zip_source_keep(w->buffer);
	*out = w;
	return 0;
}

static int copy_extra_fields(jinst_archive_writer *w, zip_uint64_t at, jinst_archive *from, size_t index,
                             const char *name, jinst_diag *diag)
{
	static const zip_flags_t where[2] = {ZIP_FL_CENTRAL, ZIP_FL_LOCAL};
	for (int k = 0; k < 2; k++) {
		zip_int16_t n = zip_file_extra_fields_count(from->zip, index, where[k]);
		if (n < 0)
			return fail_zip(diag, from->name, name, zip_get_error(from->zip));
		for (zip_uint16_t i = 0; i < (zip_uint16_t)n; i++) {
			zip_uint16_t id = 0, len = 0;
			const zip_uint8_t *p = zip_file_extra_field_get(from->zip, index, i, &id, &len, where[k]);
			if (!p)
				return fail_zip(diag, from->name, name, zip_get_error(from->zip));
			if (zip_file_extra_field_set(w->zip, at, id, ZIP_EXTRA_FIELD_NEW, p, len, where[k]) != 0)
				return fail_zip(diag, w->path, name, zip_get_error(w->zip));
		}
	}
	return 0;
}

int jinst_archive_writer_copy(jinst_archive_writer *w, jinst_archive *from, size_t index, const uint8_t *bytes,
                              size_t len, jinst_diag *diag)
{
	jinst_archive_entry e;
	int rc = jinst_archive_entry_at(&e, from, index, diag);
	if (rc)
		return rc;
	/* Untouched data goes over compressed: the same bytes, CRC and sizes,
	 * and no time spent inflating and deflating it again. */
	zip_source_t *src = bytes ? zip_source_buffer(w->zip, bytes, len, 0)
	                          : zip_source_zip(w->zip, from->zip, index, ZIP_FL_COMPRESSED, 0, -1);
	if (!src)
		return fail_zip(diag, w->path, e.name, zip_get_error(w->zip));
	zip_int64_t at = zip_file_add(w->zip, e.name, src, ZIP_FL_ENC_RAW);
	if (at < 0) {
		zip_source_free(src);
		if (zip_error_code_zip(zip_get_error(w->zip)) == ZIP_ER_EXISTS)
			return fail(diag, JINST_EINVAL, from->name, e.name,
			            "the name is in the archive twice (entry %zu again); a zip written keeps one", index);
		return fail_zip(diag, w->path, e.name, zip_get_error(w->zip));
	}
	zip_uint64_t i = (zip_uint64_t)at;
	/* Copied data keeps its method (libzip would deflate a stored one by
	 * default); new data is stored or deflated as the entry was. */
	zip_int32_t method = !bytes ? (zip_int32_t)e.method
	                            : e.method == JINST_ARCHIVE_STORED ? ZIP_CM_STORE : ZIP_CM_DEFLATE;
	if (zip_set_file_compression(w->zip, i, method, DEFLATE_LEVEL) != 0 ||
	    zip_file_set_mtime(w->zip, i, (time_t)e.mtime, 0) != 0 ||
	    zip_file_set_external_attributes(w->zip, i, 0, e.opsys, e.external_attributes) != 0 ||
	    (e.comment_len && zip_file_set_comment(w->zip, i, (const char *)e.comment, e.comment_len, 0) != 0))
		rc = fail_zip(diag, w->path, e.name, zip_get_error(w->zip));
	else
		rc = copy_extra_fields(w, i, from, index, e.name, diag);
	/* A failed copy leaves no entry behind. */
	if (rc)
		zip_delete(w->zip, i);
	else
		w->count++;
	return rc;
}

/* An archive with no entry: only the end of central directory record
 * (APPNOTE.TXT 4.3.16), which libzip will not write. */
static int empty_archive(jinst_archive_writer *w, uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	int clen = 0;
	const char *comment = zip_get_archive_comment(w->zip, &clen, ZIP_FL_ENC_RAW);
	size_t n = 22 + (size_t)(comment && clen > 0 ? clen : 0);
	uint8_t *p = calloc(1, n);
	if (!p)
		return fail(diag, JINST_ENOMEM, w->path, NULL, "out of memory");
	memcpy(p, "PK\x05\x06", 4);
	p[20] = (uint8_t)((n - 22) & 0xff);
	p[21] = (uint8_t)((n - 22) >> 8);
	if (n > 22)
		memcpy(p + 22, comment, n - 22);
	*bytes = p;
	*len = n;
	return 0;
}

static int read_buffer(jinst_archive_writer *w, uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	zip_stat_t st;
	zip_stat_init(&st);
	if (zip_source_open(w->buffer) != 0)
		return fail_zip(diag, w->path, NULL, zip_source_error(w->buffer));
	int rc = 0;
	uint8_t *p = NULL;
	if (zip_source_stat(w->buffer, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
		rc = fail_zip(diag, w->path, NULL, zip_source_error(w->buffer));
	} else if (st.size > SIZE_MAX - 1 || !(p = malloc((size_t)st.size + 1))) {
		rc = fail(diag, JINST_ENOMEM, w->path, NULL, "out of memory for %llu bytes", (unsigned long long)st.size);
	} else if (zip_source_read(w->buffer, p, st.size) != (zip_int64_t)st.size) {
		rc = fail_zip(diag, w->path, NULL, zip_source_error(w->buffer));
	}
	zip_source_close(w->buffer);
	if (rc) {
		free(p);
		return rc;
	}
	*bytes = p;
	*len = (size_t)st.size;
	return 0;
}

int jinst_archive_writer_finish(jinst_archive_writer *w, uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	*bytes = NULL;
	*len = 0;
	int rc;
	if (!w->buffer)
		rc = fail(diag, JINST_EINVAL, w->path, NULL, "not a memory writer");
	else if (w->count == 0)
		rc = empty_archive(w, bytes, len, diag);
	else if (zip_close(w->zip) != 0)
		rc = fail_zip(diag, w->path, NULL, zip_get_error(w->zip));
	else {
		w->zip = NULL;
		rc = read_buffer(w, bytes, len, diag);
	}
	jinst_archive_writer_discard(w);
	return rc;
}
