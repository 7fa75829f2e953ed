/*
 * The archive writer (include/jinst/archive.h): zips written here, not
 * through libzip, so an entry copied from another archive keeps its
 * records as they were.
 *
 * An entry copied as it was is its bytes from its local header to the end
 * of its data descriptor, and its central record, each copied whole; only
 * the central record's offset of the local header changes. An entry whose
 * data is replaced keeps the same two records with its CRC, sizes (and
 * the method, when its own was neither stored nor deflated) changed in
 * place, in the 32-bit fields or in the Zip64 extra field that holds them,
 * and a data descriptor of the same shape after the new data. A local
 * header whose entry has a data descriptor may carry zeros for CRC and
 * sizes (what the JDK's ZipOutputStream writes); zeros stay zeros. Every
 * other byte (versions, flags, times, attributes, extra fields, comments)
 * is the input's: libzip rewrote the records from its model and added
 * its own extra fields.
 *
 * Data comes compressed: jinst_archive_pack (pack.c) deflates on any
 * thread, so a caller with a pool compresses on all of its cores and the
 * writer only appends bytes. Records are appended to
 * memory (local records in one buffer, central ones in another); finishing
 * puts the directory and the end records after the data, with Zip64 end
 * records when the input had them or the counts need them. A path writer
 * writes its bytes to a new file beside the path and renames it into
 * place, so a failure leaves no half archive behind.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define MAX32 0xffffffffu

typedef struct wbuf {
	uint8_t *p;
	size_t len, cap;
} wbuf;

struct jinst_archive_writer {
	wbuf data;       /* local headers, data, descriptors */
	wbuf cen;        /* central records */
	size_t count;
	size_t *names;   /* a set of names written: cen offset + 1, 0 empty */
	size_t names_cap;
	bool zip64;      /* end with Zip64 records */
	uint8_t *comment;
	size_t comment_len;
	char *path;      /* the path, or the name of a memory writer */
	bool memory;
};

/* n more bytes at the end of b, or NULL. */
static uint8_t *grow(wbuf *b, size_t n)
{
	if (n > SIZE_MAX / 2 - b->len)
		return NULL;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p)
			return NULL;
		b->p = p;
		b->cap = cap;
	}
	uint8_t *at = b->p + b->len;
	b->len += n;
	return at;
}

static uint64_t name_hash(const uint8_t *s, size_t n)
{
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211u;
	return h;
}

/* The slot of the name of the central record at cen (or of name), in the set. */
static size_t *name_slot(jinst_archive_writer *w, const uint8_t *name, size_t n)
{
	size_t mask = w->names_cap - 1;
	for (size_t i = name_hash(name, n) & mask;; i = (i + 1) & mask) {
		size_t at = w->names[i];
		if (!at)
			return &w->names[i];
		const uint8_t *c = w->cen.p + at - 1;
		if (rd16(c + 28) == n && memcmp(c + 46, name, n) == 0)
			return &w->names[i];
	}
}

/* Notes the name of the central record at cen; half full at most. */
static int note_name(jinst_archive_writer *w, size_t cen)
{
	if ((w->count + 1) * 2 > w->names_cap) {
		size_t cap = w->names_cap ? w->names_cap * 2 : 64;
		size_t *old = w->names, old_cap = w->names_cap;
		if (!(w->names = calloc(cap, sizeof(*w->names)))) {
			w->names = old;
			return JINST_ENOMEM;
		}
		w->names_cap = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i])
				*name_slot(w, w->cen.p + old[i] - 1 + 46, rd16(w->cen.p + old[i] - 1 + 28)) = old[i];
		free(old);
	}
	size_t *s = name_slot(w, w->cen.p + cen + 46, rd16(w->cen.p + cen + 28));
	if (!*s)
		*s = cen + 1;
	return 0;
}

static bool holds_name(jinst_archive_writer *w, const char *name)
{
	return w->names_cap && *name_slot(w, (const uint8_t *)name, strlen(name)) != 0;
}

/* ---- copying entries ---------------------------------------------------------------- */

/* Sets a size or CRC in a record: its 32-bit field at f, or the Zip64
 * field at z (offset from the record, 0 for none) when f holds 0xFFFFFFFF.
 * A zero stays zero when keep_zero (a local header before a descriptor). */
static int set_field(uint8_t *rec, size_t f, uint16_t z, uint64_t v, bool keep_zero)
{
	if (z && rd32(rec + f) == MAX32) {
		if (!(keep_zero && rd64(rec + z) == 0))
			wr64(rec + z, v);
		return 0;
	}
	if (keep_zero && rd32(rec + f) == 0)
		return 0;
	if (v >= MAX32)
		return -1;
	wr32(rec + f, (uint32_t)v);
	return 0;
}

/* The new data's local header, data and descriptor, after r's local header. */
static int put_new_local(jinst_archive_writer *w, const uint8_t *src, const zip_rec *r,
                         const jinst_archive_packed *p)
{
	size_t dlen = r->desc_len;
	uint8_t *l = grow(&w->data, r->loc_len + p->len + dlen);
	if (!l)
		return JINST_ENOMEM;
	memcpy(l, src + r->loc, r->loc_len);
	bool desc = r->flags & 8;
	wr16(l + 8, p->method);
	if (!(desc && rd32(l + 14) == 0))
		wr32(l + 14, p->crc);
	if (set_field(l, 18, r->loc_z_csize, p->len, desc) || set_field(l, 22, r->loc_z_usize, p->size, desc))
		return JINST_ETOOLARGE;
	memcpy(l + r->loc_len, p->data, p->len);
	uint8_t *d = l + r->loc_len + p->len;
	if (dlen) {
		size_t k = dlen == 16 || dlen == 24 ? 4 : 0; /* with its signature */
		memcpy(d, src + r->loc + r->loc_len + r->csize, k);
		wr32(d + k, p->crc);
		if (r->wide_desc) {
			wr64(d + k + 4, p->len);
			wr64(d + k + 12, p->size);
		} else if (p->len >= MAX32 || p->size >= MAX32) {
			return JINST_ETOOLARGE;
		} else {
			wr32(d + k + 4, (uint32_t)p->len);
			wr32(d + k + 8, (uint32_t)p->size);
		}
	}
	return 0;
}

/* Entry r of src (its records, and p's data or its own) appended to w. */
static int put_entry(jinst_archive_writer *w, const uint8_t *src, const zip_rec *r, const jinst_archive_packed *p)
{
	size_t data_len = w->data.len, cen_len = w->cen.len;
	uint64_t offset = w->data.len;
	int rc = 0;
	if (p) {
		rc = put_new_local(w, src, r, p);
	} else {
		size_t n = r->loc_len + (size_t)r->csize + r->desc_len;
		uint8_t *l = grow(&w->data, n);
		if (l)
			memcpy(l, src + r->loc, n);
		else
			rc = JINST_ENOMEM;
	}
	uint8_t *c = rc ? NULL : grow(&w->cen, r->cen_len);
	if (!rc && !c)
		rc = JINST_ENOMEM;
	if (!rc) {
		memcpy(c, src + r->cen, r->cen_len);
		if (p) {
			wr16(c + 10, p->method);
			wr32(c + 16, p->crc);
			if (set_field(c, 20, r->cen_z_csize, p->len, false) || set_field(c, 24, r->cen_z_usize, p->size, false))
				rc = JINST_ETOOLARGE;
		}
		if (!rc && set_field(c, 42, r->cen_z_loc, offset, false))
			rc = JINST_ETOOLARGE;
	}
	if (!rc)
		rc = note_name(w, cen_len);
	if (rc) {
		/* A failed copy leaves no entry behind. */
		w->data.len = data_len;
		w->cen.len = cen_len;
		return rc;
	}
	w->count++;
	return 0;
}

int jinst_archive_writer_copy_packed(jinst_archive_writer *w, jinst_archive *from, size_t index,
                                     const jinst_archive_packed *p, jinst_diag *diag)
{
	const zipdir *dir;
	int rc = zipdir_get(&dir, from, diag);
	if (rc)
		return rc;
	if (index >= dir->count)
		return archive_fail(diag, JINST_EINVAL, from->name, NULL, "no entry %zu", index);
	w->zip64 |= dir->zip64;
	rc = put_entry(w, from->bytes, &dir->recs[index], p);
	if (rc == JINST_ETOOLARGE)
		return archive_fail(diag, rc, w->path, NULL, "entry %zu of %s: a size or offset past 4 GiB where the "
		                    "entry has no Zip64 field for it", index, from->name);
	if (rc)
		return archive_fail(diag, rc, w->path, NULL, "out of memory");
	return 0;
}

int jinst_archive_writer_copy(jinst_archive_writer *w, jinst_archive *from, size_t index, const uint8_t *bytes,
                              size_t len, jinst_diag *diag)
{
	if (!bytes)
		return jinst_archive_writer_copy_packed(w, from, index, NULL, diag);
	jinst_archive_entry e;
	int rc = jinst_archive_entry_at(&e, from, index, diag);
	if (rc)
		return rc;
	jinst_archive_packed p;
	rc = jinst_archive_pack(&p, bytes, len, e.method == JINST_ARCHIVE_STORED ? JINST_ARCHIVE_STORED
	                                                                         : JINST_ARCHIVE_DEFLATED, diag);
	if (rc == 0)
		rc = jinst_archive_writer_copy_packed(w, from, index, &p, diag);
	jinst_archive_packed_free(&p);
	return rc;
}

/* ---- new entries ------------------------------------------------------------------------ */

/* MS-DOS date and time (APPNOTE.TXT 4.4.6) of t in local time, the inverse
 * of libzip's reading (mktime). */
static void dos_time(int64_t t, uint16_t *time_out, uint16_t *date_out)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!localtime_r(&tt, &tm) || tm.tm_year < 80 || tm.tm_year > 207) {
		*time_out = 0;
		*date_out = 1 << 5 | 1; /* 1980-01-01 */
		return;
	}
	*time_out = (uint16_t)(tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec / 2);
	*date_out = (uint16_t)((tm.tm_year - 80) << 9 | (tm.tm_mon + 1) << 5 | tm.tm_mday);
}

/* A new entry's two records, as the JDK's ZipOutputStream writes them:
 * version 2.0, the UTF-8 flag for a name beyond ASCII, no extra field. */
static int put_new(jinst_archive_writer *w, const jinst_archive_entry *m, const jinst_archive_packed *p)
{
	size_t n = strlen(m->name);
	uint64_t offset = w->data.len;
	if (n > UINT16_MAX || offset >= MAX32 || p->len >= MAX32 || p->size >= MAX32)
		return JINST_ETOOLARGE;
	uint16_t flags = 0, t, d;
	for (size_t i = 0; i < n; i++)
		if ((uint8_t)m->name[i] >= 0x80)
			flags = 0x800;
	dos_time(m->mtime, &t, &d);
	uint8_t *l = grow(&w->data, 30 + n + p->len);
	uint8_t *c = l ? grow(&w->cen, 46 + n + m->comment_len) : NULL;
	if (!c)
		return JINST_ENOMEM;
	memset(l, 0, 30);
	wr32(l, 0x04034b50u);
	wr16(l + 4, 20);
	wr16(l + 6, flags);
	wr16(l + 8, p->method);
	wr16(l + 10, t);
	wr16(l + 12, d);
	wr32(l + 14, p->crc);
	wr32(l + 18, (uint32_t)p->len);
	wr32(l + 22, (uint32_t)p->size);
	wr16(l + 26, (uint16_t)n);
	memcpy(l + 30, m->name, n);
	memcpy(l + 30 + n, p->data, p->len);
	memset(c, 0, 46);
	wr32(c, 0x02014b50u);
	wr16(c + 4, (uint16_t)(m->opsys << 8 | 20));
	memcpy(c + 6, l + 4, 26); /* version needed to name length: as the local header */
	wr16(c + 32, m->comment_len);
	wr32(c + 38, m->external_attributes);
	wr32(c + 42, (uint32_t)offset);
	memcpy(c + 46, m->name, n);
	if (m->comment_len)
		memcpy(c + 46 + n, m->comment, m->comment_len);
	return 0;
}

int jinst_archive_writer_add(jinst_archive_writer *w, const jinst_archive_entry *meta, const uint8_t *bytes,
                             size_t len, jinst_diag *diag)
{
	const char *name = meta->name;
	if (holds_name(w, name))
		return archive_fail(diag, JINST_EINVAL, w->path, name, "the archive holds the name already");
	jinst_archive_packed p;
	uint16_t method = meta->method == JINST_ARCHIVE_STORED || (name[0] && name[strlen(name) - 1] == '/' && !len)
	                      ? JINST_ARCHIVE_STORED
	                      : JINST_ARCHIVE_DEFLATED;
	int rc = jinst_archive_pack(&p, bytes ? bytes : (const uint8_t *)"", len, method, diag);
	if (rc)
		return rc;
	size_t data_len = w->data.len, cen_len = w->cen.len;
	rc = put_new(w, meta, &p);
	if (rc == 0)
		rc = note_name(w, cen_len);
	jinst_archive_packed_free(&p);
	if (rc) {
		w->data.len = data_len;
		w->cen.len = cen_len;
		return archive_fail(diag, rc, w->path, name, rc == JINST_ETOOLARGE ? "past 4 GiB, or a name too long"
		                                                                   : "out of memory");
	}
	w->count++;
	return 0;
}

/* ---- the writer ----------------------------------------------------------------------------- */

static int new_writer(jinst_archive_writer **out, const char *path, bool memory, jinst_diag *diag)
{
	*out = NULL;
	jinst_archive_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return archive_fail(diag, JINST_ENOMEM, path, NULL, "out of memory");
	}
	w->memory = memory;
	*out = w;
	return 0;
}

int jinst_archive_writer_new(jinst_archive_writer **out, const char *path, jinst_diag *diag)
{
	return new_writer(out, path, false, diag);
}

int jinst_archive_writer_new_memory(jinst_archive_writer **out, const char *name, jinst_diag *diag)
{
	return new_writer(out, name, true, diag);
}

int jinst_archive_writer_set_comment(jinst_archive_writer *w, const uint8_t *comment, size_t len, jinst_diag *diag)
{
	if (len > UINT16_MAX)
		return archive_fail(diag, JINST_ETOOLARGE, w->path, NULL, "a comment of %zu bytes (at most 65535)", len);
	uint8_t *c = malloc(len ? len : 1);
	if (!c)
		return archive_fail(diag, JINST_ENOMEM, w->path, NULL, "out of memory");
	if (len)
		memcpy(c, comment, len);
	free(w->comment);
	w->comment = c;
	w->comment_len = len;
	return 0;
}

void jinst_archive_writer_discard(jinst_archive_writer *w)
{
	if (!w)
		return;
	free(w->data.p);
	free(w->cen.p);
	free(w->names);
	free(w->comment);
	free(w->path);
	free(w);
}

/* The directory and the end records after the data (APPNOTE.TXT 4.3.14 to
 * 4.3.16); Zip64 ones when the input had them or a value needs them. */
static int put_end(jinst_archive_writer *w)
{
	uint64_t off = w->data.len, size = w->cen.len, n = w->count;
	bool z64 = w->zip64 || n >= 0xffff || off >= MAX32 || size >= MAX32;
	uint8_t *p = grow(&w->data, size + (z64 ? 56 + 20 : 0) + 22 + w->comment_len);
	if (!p)
		return JINST_ENOMEM;
	if (size)
		memcpy(p, w->cen.p, size);
	p += size;
	if (z64) {
		memset(p, 0, 76);
		wr32(p, 0x06064b50u);
		wr64(p + 4, 44);
		wr16(p + 12, 45);
		wr16(p + 14, 45);
		wr64(p + 24, n);
		wr64(p + 32, n);
		wr64(p + 40, size);
		wr64(p + 48, off);
		wr32(p + 56, 0x07064b50u);
		wr64(p + 64, off + size);
		wr32(p + 72, 1);
		p += 76;
	}
	memset(p, 0, 22);
	wr32(p, 0x06054b50u);
	wr16(p + 8, n >= 0xffff ? 0xffff : (uint16_t)n);
	wr16(p + 10, n >= 0xffff ? 0xffff : (uint16_t)n);
	wr32(p + 12, size >= MAX32 ? MAX32 : (uint32_t)size);
	wr32(p + 16, off >= MAX32 ? MAX32 : (uint32_t)off);
	wr16(p + 20, (uint16_t)w->comment_len);
	if (w->comment_len)
		memcpy(p + 22, w->comment, w->comment_len);
	return 0;
}

int jinst_archive_writer_finish(jinst_archive_writer *w, uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	*bytes = NULL;
	*len = 0;
	int rc = !w->memory ? archive_fail(diag, JINST_EINVAL, w->path, NULL, "not a memory writer")
	         : put_end(w) ? archive_fail(diag, JINST_ENOMEM, w->path, NULL, "out of memory")
	                      : 0;
	if (rc == 0) {
		*bytes = w->data.p;
		*len = w->data.len;
		w->data.p = NULL;
	}
	jinst_archive_writer_discard(w);
	return rc;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int jinst_archive_writer_commit(jinst_archive_writer *w, jinst_diag *diag)
{
	if (w->memory || put_end(w)) {
		int rc = archive_fail(diag, w->memory ? JINST_EINVAL : JINST_ENOMEM, w->path, NULL,
		                      w->memory ? "a memory writer" : "out of memory");
		jinst_archive_writer_discard(w);
		return rc;
	}
	/* A new file beside the path, renamed over it once whole. */
	static _Atomic unsigned serial;
	size_t n = strlen(w->path) + 64;
	char *tmp = malloc(n);
	int fd = -1, rc = 0;
	if (!tmp)
		rc = archive_fail(diag, JINST_ENOMEM, w->path, NULL, "out of memory");
	else {
		snprintf(tmp, n, "%s.jinst-%ld-%u", w->path, (long)getpid(), serial++);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	}
	if (!rc && (fd < 0 || write_all(fd, w->data.p, w->data.len) != 0 || fsync(fd) != 0))
		rc = archive_fail(diag, JINST_EIO, w->path, NULL, "cannot write %s: %s", tmp, strerror(errno));
	if (fd >= 0 && close(fd) != 0 && !rc)
		rc = archive_fail(diag, JINST_EIO, w->path, NULL, "cannot write %s: %s", tmp, strerror(errno));
	if (!rc && rename(tmp, w->path) != 0)
		rc = archive_fail(diag, JINST_EIO, w->path, NULL, "cannot rename %s into place: %s", tmp, strerror(errno));
	if (rc && fd >= 0)
		unlink(tmp);
	free(tmp);
	jinst_archive_writer_discard(w);
	return rc;
}
