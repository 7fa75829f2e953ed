/*
 * The coverage data file's bytes (docs/coverage-format.md): the reader, the
 * writer, and the atomic write to a file.
 *
 * The reader walks the file with one bounds-checked cursor whose error
 * sticks (the first failure's offset and reason are kept, later reads give
 * zeros), so a record is checked once rather than at every field. The
 * body is read up to the last four bytes, which must be the CRC, and the
 * model is handed out only when every record, the canonical order, the end
 * and the CRC have passed: a file is read whole or not at all. Every count
 * is checked against the bytes left before anything is allocated for it,
 * so a lying count costs nothing.
 *
 * The writer sizes the file exactly first, so it allocates once (from the
 * caller's allocator: the agent may want JVMTI memory) and can refuse a
 * model too large for the format before writing anything.
 *
 * Appending is read, merge, write under a lock. The lock cannot be on the
 * data file itself, which the write replaces by rename (a waiter would
 * hold a lock on the old file); so it is on PATH.lock, which is never
 * removed (removing it would let a waiter lock a file nobody else sees).
 */
#define _POSIX_C_SOURCE 200809L
#include "covdata_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jinst/util.h"

#define HEADER_LEN (JINST_COVDATA_MAGIC_LEN + 2)
#define MIN_SESSION 18u /* u2 name length, two s8 */
#define MIN_CLASS 15u   /* u8 identity, u2 name length, u4 probe count, u1 kind */

/* CRC-32 (zip's, java.util.zip.CRC32's), four bits at a time: a table of 16
 * that needs no initialisation, fast enough for files of a few megabytes. */
static const uint32_t crc_nibble[16] = {
	0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
	0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c, 0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

static uint32_t crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		c = (c >> 4) ^ crc_nibble[c & 15];
		c = (c >> 4) ^ crc_nibble[c & 15];
	}
	return c ^ 0xffffffffu;
}

bool jinst_covdata_is(const uint8_t *bytes, size_t len)
{
	return bytes && len >= JINST_COVDATA_MAGIC_LEN && memcmp(bytes, JINST_COVDATA_MAGIC, JINST_COVDATA_MAGIC_LEN) == 0;
}

/* ---- reading ---------------------------------------------------------------- */

typedef struct cursor {
	const uint8_t *p;
	size_t end, pos;
	int err;             /* first failure, sticky */
	size_t err_pos;
	char where[160];     /* the element being read */
	char message[256];
} cursor;

static void cfail(cursor *c, int code, size_t pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void cfail(cursor *c, int code, size_t pos, const char *fmt, ...)
{
	if (c->err)
		return;
	c->err = code;
	c->err_pos = pos;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

static size_t left(const cursor *c)
{
	return c->err ? 0 : c->end - c->pos;
}

static const uint8_t *take(cursor *c, size_t n)
{
	if (left(c) < n) {
		cfail(c, JINST_EMALFORMED, c->pos, "truncated: %zu bytes needed, %zu left", n, left(c));
		return NULL;
	}
	const uint8_t *p = c->p + c->pos;
	c->pos += n;
	return p;
}

static uint64_t be(cursor *c, size_t n)
{
	const uint8_t *p = take(c, n);
	uint64_t v = 0;
	for (size_t i = 0; p && i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* A minimal unsigned LEB128 of at most 64 bits (the format's rule, so that
 * every value has one encoding). */
static uint64_t uleb(cursor *c)
{
	size_t start = c->pos;
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		const uint8_t *p = take(c, 1);
		if (!p)
			return 0;
		if (shift == 63 && *p > 1) {
			cfail(c, JINST_EMALFORMED, start, "a count longer than 64 bits");
			return 0;
		}
		v |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p & 0x80)) {
			if (*p == 0 && shift)
				cfail(c, JINST_EMALFORMED, start, "a count encoded with padding (not minimal)");
			return v;
		}
	}
}

/* A name (u2 length, modified UTF-8) as a malloc'd C string. */
static char *name(cursor *c, size_t *len)
{
	size_t start = c->pos;
	*len = (size_t)be(c, 2);
	const uint8_t *p = take(c, *len);
	if (!p)
		return NULL;
	if (!jinst_mutf8_valid(p, *len)) {
		cfail(c, JINST_EMALFORMED, start, "a name that is not modified UTF-8");
		return NULL;
	}
	char *s = malloc(*len + 1);
	if (!s) {
		cfail(c, JINST_ENOMEM, start, "out of memory");
		return NULL;
	}
	memcpy(s, p, *len);
	s[*len] = 0;
	return s;
}

/* A count of elements of at least min bytes each, checked against the
 * bytes left before the caller allocates for it. */
static uint32_t count(cursor *c, unsigned min, const char *what)
{
	size_t start = c->pos;
	uint32_t n = (uint32_t)be(c, 4);
	if (n > left(c) / min)
		cfail(c, JINST_EMALFORMED, start, "%u %s cannot fit in the %zu bytes left", n, what, left(c));
	return n;
}

static void read_sessions(cursor *c, jinst_covdata *d)
{
	uint32_t n = count(c, MIN_SESSION, "sessions");
	for (uint32_t i = 0; i < n && !c->err; i++) {
		size_t start = c->pos, len;
		snprintf(c->where, sizeof(c->where), "session %u", i);
		char *s = name(c, &len);
		int64_t start_ms = (int64_t)be(c, 8), dump_ms = (int64_t)be(c, 8);
		if (c->err) {
			free(s);
			return;
		}
		if (covdata_push_session(d, s, start_ms, dump_ms)) {
			cfail(c, JINST_ENOMEM, start, "out of memory");
			return;
		}
		if (i && covdata_session_cmp(&d->sessions[i - 1], &d->sessions[i]) >= 0)
			cfail(c, JINST_EMALFORMED, start, "sessions out of order or repeated");
	}
}

static void read_probes(cursor *c, covdata_rec *r)
{
	uint32_t n = r->c.probe_count;
	size_t start = c->pos, need = r->c.kind == JINST_COVDATA_BOOLEANS ? ((size_t)n + 7) / 8 : n;
	if (need > left(c)) {
		cfail(c, JINST_EMALFORMED, start, "%u probes cannot fit in the %zu bytes left", n, left(c));
		return;
	}
	if (r->c.kind == JINST_COVDATA_BOOLEANS) {
		uint8_t *b = calloc(n ? n : 1, 1);
		r->c.booleans = b;
		const uint8_t *bits = take(c, need);
		if (!b) {
			cfail(c, JINST_ENOMEM, start, "out of memory");
			return;
		}
		for (uint32_t i = 0; i < n; i++)
			b[i] = bits[i / 8] >> (i % 8) & 1;
		if (n % 8 && bits[need - 1] >> (n % 8))
			cfail(c, JINST_EMALFORMED, start + need - 1, "padding bits after the last probe are not 0");
		return;
	}
	uint64_t *v = calloc(n ? n : 1, sizeof *v);
	r->c.counts = v;
	if (!v) {
		cfail(c, JINST_ENOMEM, start, "out of memory");
		return;
	}
	for (uint32_t i = 0; i < n && !c->err; i++)
		v[i] = uleb(c);
}

static void read_class(cursor *c, jinst_covdata *d, uint32_t i)
{
	size_t start = c->pos;
	covdata_rec r = {0};
	snprintf(c->where, sizeof(c->where), "class %u", i);
	r.c.identity = be(c, 8);
	char *s = name(c, &r.name_len);
	r.c.name = s;
	if (s)
		snprintf(c->where, sizeof(c->where), "class %u (%s)", i, s);
	if (s && !*s)
		cfail(c, JINST_EMALFORMED, start + 8, "an empty class name");
	size_t at = c->pos;
	r.c.probe_count = (uint32_t)be(c, 4);
	r.c.kind = (int)be(c, 1);
	if (r.c.probe_count > JINST_COVDATA_MAX_PROBES)
		cfail(c, JINST_ETOOLARGE, at, "%u probes, more than the format's %u", r.c.probe_count,
		      JINST_COVDATA_MAX_PROBES);
	if (r.c.kind != JINST_COVDATA_BOOLEANS && r.c.kind != JINST_COVDATA_COUNTS)
		cfail(c, JINST_EMALFORMED, at + 4, "unknown probe kind %d", r.c.kind);
	if (!c->err)
		read_probes(c, &r);
	if (c->err) {
		free(s);
		free((uint8_t *)r.c.booleans);
		free((uint64_t *)r.c.counts);
		return;
	}
	if (covdata_push_rec(d, &r)) {
		cfail(c, JINST_ENOMEM, start, "out of memory");
		return;
	}
	if (i && covdata_class_cmp(&d->recs[i - 1].c, &d->recs[i].c) >= 0)
		cfail(c, JINST_EMALFORMED, start, "classes out of order or repeated");
}

/* Magic and version: 0, or the error to return (diag filled). */
static int read_header(cursor *c)
{
	snprintf(c->where, sizeof(c->where), "header");
	if (!jinst_covdata_is(c->p, c->end)) {
		cfail(c, JINST_EMALFORMED, 0, "not a jinst coverage data file (no magic)");
		return c->err;
	}
	c->pos = JINST_COVDATA_MAGIC_LEN;
	unsigned version = (unsigned)be(c, 2);
	if (!c->err && version == 0)
		cfail(c, JINST_EMALFORMED, JINST_COVDATA_MAGIC_LEN, "format version 0");
	if (!c->err && version > JINST_COVDATA_VERSION)
		cfail(c, JINST_EUNSUPPORTED, JINST_COVDATA_MAGIC_LEN,
		      "format version %u, newer than this jinst reads (%u)", version, JINST_COVDATA_VERSION);
	return c->err;
}

static int cursor_diag(const cursor *c, jinst_diag *diag)
{
	if (diag) {
		diag->code = c->err;
		diag->offset = c->err_pos > UINT32_MAX ? UINT32_MAX - 1 : (uint32_t)c->err_pos;
		snprintf(diag->where, sizeof(diag->where), "%s", c->where);
		snprintf(diag->message, sizeof(diag->message), "%s", c->message);
	}
	return c->err;
}

static void read_body(cursor *c, jinst_covdata *d)
{
	read_sessions(c, d);
	uint32_t n = c->err ? 0 : count(c, MIN_CLASS, "classes");
	for (uint32_t i = 0; i < n && !c->err; i++)
		read_class(c, d, i);
	if (c->err)
		return;
	snprintf(c->where, sizeof(c->where), "end");
	if (c->pos != c->end) {
		cfail(c, JINST_EMALFORMED, c->pos, "%zu bytes after the last class", c->end - c->pos);
		return;
	}
	const uint8_t *q = c->p + c->end;
	uint32_t want = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
	if (crc32(c->p, c->end) != want)
		cfail(c, JINST_EMALFORMED, c->end, "CRC mismatch: the file is damaged");
}

int jinst_covdata_read(jinst_covdata **out, const uint8_t *bytes, size_t len, jinst_diag *diag)
{
	*out = NULL;
	cursor c = {.p = bytes, .end = len};
	if (!bytes && len)
		return JINST_EINVAL;
	if (len > JINST_COVDATA_MAX_SIZE) {
		cfail(&c, JINST_ETOOLARGE, 0, "%zu bytes, more than the format's %zu", len, JINST_COVDATA_MAX_SIZE);
		return cursor_diag(&c, diag);
	}
	if (read_header(&c))
		return cursor_diag(&c, diag);
	if (len < HEADER_LEN + 4 + 4 + 4) {
		cfail(&c, JINST_EMALFORMED, len, "truncated: %zu bytes, fewer than an empty file's", len);
		return cursor_diag(&c, diag);
	}
	c.end = len - 4; /* the CRC */
	jinst_covdata *d;
	if (jinst_covdata_new(&d))
		return JINST_ENOMEM;
	read_body(&c, d);
	if (c.err) {
		jinst_covdata_free(d);
		return cursor_diag(&c, diag);
	}
	*out = d;
	return 0;
}

int jinst_covdata_read_file(jinst_covdata **out, const char *path, jinst_diag *diag)
{
	uint8_t *bytes;
	size_t len;
	*out = NULL;
	int rc = jinst_file_read(&bytes, &len, path, JINST_COVDATA_MAX_SIZE, diag);
	if (rc)
		return rc;
	rc = jinst_covdata_read(out, bytes, len, diag);
	free(bytes);
	return rc;
}

/* ---- writing ------------------------------------------------------------- */

static size_t uleb_len(uint64_t v)
{
	size_t n = 1;
	while (v >>= 7)
		n++;
	return n;
}

static size_t probes_len(const jinst_covdata_class *c)
{
	if (c->kind == JINST_COVDATA_BOOLEANS)
		return ((size_t)c->probe_count + 7) / 8;
	size_t n = 0;
	for (uint32_t i = 0; i < c->probe_count; i++)
		n += uleb_len(c->counts[i]);
	return n;
}

static uint8_t *put_be(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return p + n;
}

static uint8_t *put_name(uint8_t *p, const char *s)
{
	size_t n = strlen(s);
	p = put_be(p, n, 2);
	memcpy(p, s, n);
	return p + n;
}

static uint8_t *put_probes(uint8_t *p, const jinst_covdata_class *c)
{
	uint32_t n = c->probe_count;
	if (c->kind == JINST_COVDATA_BOOLEANS) {
		size_t bytes = ((size_t)n + 7) / 8;
		memset(p, 0, bytes);
		for (uint32_t i = 0; i < n; i++)
			p[i / 8] |= (uint8_t)((c->booleans[i] != 0) << (i % 8));
		return p + bytes;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v = c->counts[i];
		for (; v >= 0x80; v >>= 7)
			*p++ = (uint8_t)(v | 0x80);
		*p++ = (uint8_t)v;
	}
	return p;
}

int jinst_covdata_write(uint8_t **out, size_t *len, const jinst_covdata *data, const jinst_allocator *alloc)
{
	*out = NULL;
	*len = 0;
	if (!data)
		return JINST_EINVAL;
	jinst_covdata *d = (jinst_covdata *)data; /* sorting changes no content */
	covdata_sort(d);
	/* Each term is bounded (names by 65,535, probes by 2^24 * 10), so the
	 * sum cannot wrap before the limit is seen. */
	size_t n = HEADER_LEN + 4 + 4 + 4;
	for (size_t i = 0; i < d->nsessions && n <= JINST_COVDATA_MAX_SIZE; i++)
		n += 2 + strlen(d->sessions[i].name) + 16;
	for (size_t i = 0; i < d->nrecs && n <= JINST_COVDATA_MAX_SIZE; i++)
		n += MIN_CLASS + d->recs[i].name_len + probes_len(&d->recs[i].c);
	if (n > JINST_COVDATA_MAX_SIZE)
		return JINST_ETOOLARGE;
	uint8_t *buf = alloc ? alloc->alloc(alloc->ctx, n) : malloc(n);
	if (!buf)
		return JINST_ENOMEM;
	uint8_t *p = buf;
	memcpy(p, JINST_COVDATA_MAGIC, JINST_COVDATA_MAGIC_LEN);
	p = put_be(p + JINST_COVDATA_MAGIC_LEN, JINST_COVDATA_VERSION, 2);
	p = put_be(p, d->nsessions, 4);
	for (size_t i = 0; i < d->nsessions; i++) {
		p = put_name(p, d->sessions[i].name);
		p = put_be(p, (uint64_t)d->sessions[i].start_ms, 8);
		p = put_be(p, (uint64_t)d->sessions[i].dump_ms, 8);
	}
	p = put_be(p, d->nrecs, 4);
	for (size_t i = 0; i < d->nrecs; i++) {
		const jinst_covdata_class *c = &d->recs[i].c;
		p = put_be(p, c->identity, 8);
		p = put_name(p, c->name);
		p = put_be(p, c->probe_count, 4);
		p = put_be(p, (uint64_t)c->kind, 1);
		p = put_probes(p, c);
	}
	p = put_be(p, crc32(buf, (size_t)(p - buf)), 4);
	*out = buf;
	*len = (size_t)(p - buf);
	return 0;
}

/* diag names the path in `where`, as jinst_file_read's does. */
static int io_fail(jinst_diag *diag, const char *path, const char *what, int err)
{
	if (diag) {
		diag->code = JINST_EIO;
		diag->offset = JINST_NO_OFFSET;
		snprintf(diag->where, sizeof(diag->where), "%s", path);
		snprintf(diag->message, sizeof(diag->message), "%s: %s", what, strerror(err));
	}
	return JINST_EIO;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* path followed by suffix, malloc'd (NULL when out of memory). */
static char *path_with(const char *path, const char *suffix)
{
	size_t n = strlen(path), k = strlen(suffix);
	char *s = malloc(n + k + 1);
	if (s) {
		memcpy(s, path, n);
		memcpy(s + n, suffix, k + 1);
	}
	return s;
}

/* The bytes to a temporary file beside path (same folder, so the rename
 * stays within one file system and is atomic, POSIX rename()), flushed to
 * disk before the rename, so a crash leaves the old file or the new one. A
 * file that exists keeps its permissions; a new one gets rw-r--r--. */
static int write_atomic(const char *path, const uint8_t *bytes, size_t len, jinst_diag *diag)
{
	char *tmp = path_with(path, ".XXXXXX");
	if (!tmp)
		return JINST_ENOMEM;
	struct stat st;
	mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 0777) : 0644;
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int rc = io_fail(diag, path, "cannot create a temporary file beside it", errno);
		free(tmp);
		return rc;
	}
	const char *what = NULL;
	if (fchmod(fd, mode) != 0)
		what = "cannot set the temporary file's permissions";
	else if (write_all(fd, bytes, len) != 0)
		what = "cannot write";
	else if (fsync(fd) != 0)
		what = "cannot flush";
	int err = errno;
	if (close(fd) != 0 && !what) {
		what = "cannot write";
		err = errno;
	}
	if (!what && rename(tmp, path) != 0) {
		what = "cannot rename the temporary file over it";
		err = errno;
	}
	int rc = 0;
	if (what) {
		unlink(tmp);
		rc = io_fail(diag, path, what, err);
	}
	free(tmp);
	return rc;
}

int jinst_covdata_write_file(const char *path, const jinst_covdata *data, jinst_diag *diag)
{
	uint8_t *bytes;
	size_t len;
	if (!path)
		return JINST_EINVAL;
	int rc = jinst_covdata_write(&bytes, &len, data, NULL);
	if (rc) {
		if (diag) {
			diag->code = rc;
			diag->offset = JINST_NO_OFFSET;
			snprintf(diag->where, sizeof(diag->where), "%s", path);
			snprintf(diag->message, sizeof(diag->message), "%s",
			         rc == JINST_ETOOLARGE ? "the data would pass the format's size limit" : "out of memory");
		}
		return rc;
	}
	rc = write_atomic(path, bytes, len, diag);
	free(bytes);
	return rc;
}

/* An exclusive fcntl lock on PATH.lock, its descriptor in *fd. */
static int lock_beside(int *fd, const char *path, jinst_diag *diag)
{
	char *name = path_with(path, ".lock");
	if (!name)
		return JINST_ENOMEM;
	*fd = open(name, O_RDWR | O_CREAT, 0644);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int rc = 0;
	while (*fd >= 0 && (rc = fcntl(*fd, F_SETLKW, &fl)) != 0 && errno == EINTR)
		;
	if (*fd < 0 || rc != 0) {
		rc = io_fail(diag, name, "cannot lock", errno);
		if (*fd >= 0)
			close(*fd);
	}
	free(name);
	return rc;
}

int jinst_covdata_append_file(const char *path, const jinst_covdata *data, jinst_covdata_on_conflict on_conflict,
                              void *ctx, jinst_diag *diag)
{
	if (!path || !data)
		return JINST_EINVAL;
	int lock, rc = lock_beside(&lock, path, diag);
	if (rc)
		return rc;
	jinst_covdata *file;
	rc = jinst_covdata_read_file(&file, path, diag);
	if (rc == JINST_ENOTFOUND)
		rc = jinst_covdata_new(&file);
	if (!rc)
		rc = jinst_covdata_merge(file, data, on_conflict, ctx, diag);
	if (!rc)
		rc = jinst_covdata_write_file(path, file, diag);
	jinst_covdata_free(file);
	close(lock); /* releases the lock */
	return rc;
}
