/*
 * A reader of the JDK runtime image (lib/modules, the "jimage" format of
 * JDK 9 and later), enough to find a class's bytes by name without a JVM.
 *
 * The format. The file starts with a header of seven u4 in the byte order of
 * the platform that built it (the magic 0xCAFEDADA tells which):
 *   magic, version (major << 16 | minor, 1.0), flags, resource_count,
 *   table_length, locations_size, strings_size.
 * Then come the index tables:
 *   redirect[table_length]  s4: perfect-hash redirection,
 *   offsets[table_length]   u4: where each location's attributes start,
 *   locations[locations_size]: the location attribute streams,
 *   strings[strings_size]:   NUL-terminated names (modified UTF-8).
 * Resource contents follow from index_size = 28 + 8 * table_length +
 * locations_size + strings_size on.
 *
 * A location is a stream of attributes, each a byte (kind << 3 | length - 1)
 * then `length` bytes of a big-endian value, ended by kind 0: MODULE (1),
 * PARENT (2), BASE (3) and EXTENSION (4) are offsets in strings and spell the
 * resource's full name "/MODULE/PARENT/BASE.EXTENSION" (empty parts and
 * their separators left out); OFFSET (5) is where the content starts after
 * index_size; COMPRESSED (6) and UNCOMPRESSED (7) are its sizes, COMPRESSED
 * 0 when it is stored as is.
 *
 * Finding a name is a perfect-hash lookup: h = hash(name, 0x01000193) mod
 * table_length; redirect[h] is 0 when no name hashes there, negative -1 - i
 * when the slot holds one name, at index i, and positive (a new seed s)
 * when several do, whose index is then hash(name, s) mod table_length. A
 * name that is not in the image can land on any slot, so the location found
 * is checked against the name.
 *
 * A resource stored compressed (jlink --compress) starts with a header of
 * 29 bytes in the header's byte order: u4 magic 0xCAFEFAFA, u8 compressed
 * size, u8 uncompressed size, u4 decompressor name offset in strings, u4
 * its configuration's offset, u1 is_terminal. The name says how the bytes
 * after it were compressed: "zip" is a zlib stream (what jlink's
 * --compress=2 and zip-N write); "compact-cp" (--compress=1) is a class
 * file whose constant-pool strings live in the image's strings table:
 * magic, versions and constant_pool_count are as in the class, then each
 * entry is as in the class except two tags that stand for a Utf8 entry:
 *   23: a compressed int, the offset of the string in strings;
 *   25: a descriptor split up: a compressed int (the offset of the
 *       descriptor with every class name cut out, "(L;I)V"), a compressed
 *       int (the byte length of what follows), then for every 'L' of that
 *       descriptor two compressed ints, the offsets of the package
 *       ("java/lang", may be empty) and of the simple name ("String").
 * Everything after the constant pool is as in the class. A compressed int
 * is 4 bytes big-endian, unless the first byte has its top bit set: then
 * bits 6-5 give the length (1 to 3 bytes) and the value is bits 4-0 of
 * that byte followed by the other bytes, big-endian.
 * What comes out may start with another such header: compressions stack,
 * and are undone until the content no longer starts with the magic.
 *
 * A class name says its package but not its module. The image answers that
 * too: the resource "/packages/PKG" (PKG with dots) holds pairs of u4 in the
 * header's byte order (is_empty, module name offset in strings), one for
 * each module that has the package; the module of a class is the one whose
 * package is not empty.
 *
 * The whole file is mapped read-only, so every read is a bounds-checked look
 * at memory and any number of threads may read at once with no lock.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"

#define JIMAGE_MAGIC 0xCAFEDADAu
#define JIMAGE_HEADER_SIZE 28u
#define JIMAGE_COMPRESSED_MAGIC 0xCAFEFAFAu
#define JIMAGE_COMPRESSED_HEADER_SIZE 29u
#define JIMAGE_MAX_RESOURCE (1u << 30)

enum { ATTR_END, ATTR_MODULE, ATTR_PARENT, ATTR_BASE, ATTR_EXTENSION, ATTR_OFFSET,
       ATTR_COMPRESSED, ATTR_UNCOMPRESSED, ATTR_COUNT };

struct jinst_jimage {
	const uint8_t *map;
	size_t size;
	bool swap; /* the image's byte order is not little-endian */
	uint32_t table_length, locations_size, strings_size;
	const uint8_t *redirect, *offsets, *locations, *strings;
	uint64_t index_size;
};

uint32_t jinst_jimage_hash(const char *s, size_t len, uint32_t seed)
{
	uint32_t h = seed;
	for (size_t i = 0; i < len; i++)
		h = (h * JINST_JIMAGE_HASH_SEED) ^ (uint8_t)s[i];
	return h & 0x7FFFFFFFu;
}

/* A u4 of the header or tables, in the image's byte order. */
static uint32_t image_u4(const jinst_jimage *img, const uint8_t *p)
{
	if (img->swap)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t image_u8(const jinst_jimage *img, const uint8_t *p)
{
	uint64_t lo = image_u4(img, p), hi = image_u4(img, p + 4);
	return img->swap ? lo << 32 | hi : hi << 32 | lo;
}

/* The NUL-terminated string at offset in the strings table, or NULL. */
static const char *image_string(const jinst_jimage *img, uint64_t offset)
{
	if (offset >= img->strings_size)
		return NULL;
	const char *s = (const char *)img->strings + offset;
	return memchr(s, '\0', img->strings_size - offset) ? s : NULL;
}

typedef struct location {
	uint64_t attr[ATTR_COUNT];
	const char *module, *parent, *base, *extension;
} location;

/* Decodes the location whose attributes start at offset; false when it runs
 * out of the table or names a string outside it. */
static bool location_read(const jinst_jimage *img, uint32_t offset, location *loc)
{
	memset(loc, 0, sizeof(*loc));
	uint32_t pos = offset;
	for (;;) {
		if (pos >= img->locations_size)
			return false;
		uint8_t b = img->locations[pos++];
		unsigned kind = b >> 3, n = (b & 7u) + 1;
		if (kind == ATTR_END)
			break;
		if (kind >= ATTR_COUNT || img->locations_size - pos < n)
			return false;
		uint64_t v = 0;
		for (unsigned i = 0; i < n; i++)
			v = v << 8 | img->locations[pos++];
		loc->attr[kind] = v;
	}
	loc->module = image_string(img, loc->attr[ATTR_MODULE]);
	loc->parent = image_string(img, loc->attr[ATTR_PARENT]);
	loc->base = image_string(img, loc->attr[ATTR_BASE]);
	loc->extension = image_string(img, loc->attr[ATTR_EXTENSION]);
	return loc->module && loc->parent && loc->base && loc->extension;
}

/* Whether s starts with part; advances s past it. */
static bool eat(const char **s, const char *part)
{
	size_t n = strlen(part);
	if (strncmp(*s, part, n) != 0)
		return false;
	*s += n;
	return true;
}

/* Whether the location's full name is path. */
static bool location_is(const location *loc, const char *path)
{
	const char *p = path;
	if (loc->module[0] && !(eat(&p, "/") && eat(&p, loc->module) && eat(&p, "/")))
		return false;
	if (loc->parent[0] && !(eat(&p, loc->parent) && eat(&p, "/")))
		return false;
	if (!eat(&p, loc->base))
		return false;
	if (loc->extension[0] && !(eat(&p, ".") && eat(&p, loc->extension)))
		return false;
	return *p == '\0';
}

/* The location of path; false when the image has no such resource. */
static bool image_locate(const jinst_jimage *img, const char *path, location *loc)
{
	if (!img->table_length)
		return false;
	size_t len = strlen(path);
	uint32_t slot = jinst_jimage_hash(path, len, JINST_JIMAGE_HASH_SEED) % img->table_length;
	int32_t redirect = (int32_t)image_u4(img, img->redirect + 4u * slot);
	uint32_t index;
	if (redirect < 0)
		index = (uint32_t)(-1 - (int64_t)redirect);
	else if (redirect > 0)
		index = jinst_jimage_hash(path, len, (uint32_t)redirect) % img->table_length;
	else
		return false;
	if (index >= img->table_length)
		return false;
	return location_read(img, image_u4(img, img->offsets + 4u * index), loc) && location_is(loc, path);
}

int jinst_jimage_open(jinst_jimage **out, const char *path, jinst_diag *diag)
{
	if (!out || !path)
		return jinst_classpath_fail(diag, JINST_EINVAL, "NULL image or path");
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return jinst_classpath_fail(diag, JINST_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int err = errno;
		close(fd);
		return jinst_classpath_fail(diag, JINST_EIO, "%s: %s", path, err ? strerror(err) : "not a file");
	}
	if ((uint64_t)st.st_size < JIMAGE_HEADER_SIZE) {
		close(fd);
		return jinst_classpath_fail(diag, JINST_EUNSUPPORTED, "%s: too short for a jimage header", path);
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int err = errno;
	close(fd);
	if (map == MAP_FAILED)
		return jinst_classpath_fail(diag, JINST_EIO, "%s: mmap: %s", path, strerror(err));

	jinst_jimage *img = calloc(1, sizeof(*img));
	if (!img) {
		munmap(map, (size_t)st.st_size);
		return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
	}
	img->map = map;
	img->size = (size_t)st.st_size;
	const uint8_t *h = img->map;
	uint32_t magic_le = (uint32_t)h[3] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[1] << 8 | h[0];
	uint32_t magic_be = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	int rc = 0;
	if (magic_le != JIMAGE_MAGIC && magic_be != JIMAGE_MAGIC) {
		rc = jinst_classpath_fail(diag, JINST_EUNSUPPORTED, "%s: not a jimage (no magic CAFEDADA)", path);
		goto fail;
	}
	img->swap = magic_le != JIMAGE_MAGIC;
	uint32_t version = image_u4(img, h + 4);
	if (version >> 16 != 1) {
		rc = jinst_classpath_fail(diag, JINST_EUNSUPPORTED, "%s: jimage version %u.%u (1.x known)", path,
		                   version >> 16, version & 0xFFFF);
		goto fail;
	}
	img->table_length = image_u4(img, h + 16);
	img->locations_size = image_u4(img, h + 20);
	img->strings_size = image_u4(img, h + 24);
	img->index_size = (uint64_t)JIMAGE_HEADER_SIZE + 8ull * img->table_length + img->locations_size +
	                  img->strings_size;
	if (img->index_size > img->size) {
		rc = jinst_classpath_fail(diag, JINST_EUNSUPPORTED, "%s: jimage index (%llu bytes) past the end of the file",
		                   path, (unsigned long long)img->index_size);
		goto fail;
	}
	img->redirect = h + JIMAGE_HEADER_SIZE;
	img->offsets = img->redirect + 4ull * img->table_length;
	img->locations = img->offsets + 4ull * img->table_length;
	img->strings = img->locations + img->locations_size;
	*out = img;
	return 0;
fail:
	jinst_jimage_close(img);
	return rc;
}

void jinst_jimage_close(jinst_jimage *image)
{
	if (!image)
		return;
	munmap((void *)image->map, image->size);
	free(image);
}

/* The stored bytes of a located resource (compressed or not), bounds-checked. */
static int location_stored(const jinst_jimage *img, const location *loc, const char *path,
                           const uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	uint64_t start = img->index_size + loc->attr[ATTR_OFFSET];
	uint64_t n = loc->attr[ATTR_COMPRESSED] ? loc->attr[ATTR_COMPRESSED] : loc->attr[ATTR_UNCOMPRESSED];
	if (start < img->index_size || start > img->size || img->size - start < n)
		return jinst_classpath_fail(diag, JINST_EMALFORMED, "%s: content past the end of the image", path);
	*bytes = img->map + start;
	*len = (size_t)n;
	return 0;
}

/* The content of a located resource stored as is. */
static int location_content(const jinst_jimage *img, const location *loc, const char *path,
                            const uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	if (loc->attr[ATTR_COMPRESSED])
		return jinst_classpath_fail(diag, JINST_EUNSUPPORTED, "%s: compressed in the image", path);
	return location_stored(img, loc, path, bytes, len, diag);
}

/* ---- compact-cp ---- */

typedef struct cursor {
	const uint8_t *p, *end;
	bool bad;
} cursor;

static uint32_t cur_byte(cursor *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

static uint32_t cur_compressed_int(cursor *c)
{
	uint32_t b = cur_byte(c);
	if (!(b & 0x80)) {
		uint32_t v = b;
		for (int i = 0; i < 3; i++)
			v = v << 8 | cur_byte(c);
		return v;
	}
	unsigned len = (b >> 5) & 3;
	if (len == 0) {
		c->bad = true;
		return 0;
	}
	uint32_t v = b & 0x1F;
	for (unsigned i = 1; i < len; i++)
		v = v << 8 | cur_byte(c);
	return v;
}

typedef struct sink {
	uint8_t *p, *end;
	bool bad;
} sink;

static void sink_put(sink *s, const void *bytes, size_t n)
{
	if (s->bad || (size_t)(s->end - s->p) < n) {
		s->bad = true;
		return;
	}
	memcpy(s->p, bytes, n);
	s->p += n;
}

static void sink_byte(sink *s, uint8_t b)
{
	sink_put(s, &b, 1);
}

/* Rebuilds the class of a compact-cp resource into out[0..size). */
static bool undo_compact_cp(const jinst_jimage *img, const uint8_t *in, size_t in_len, uint8_t *out, size_t size)
{
	/* Sizes of the constant-pool entries that are copied as they are, by tag. */
	static const uint8_t entry_size[21] = {0, 0, 0, 4, 4, 8, 8, 2, 2, 4, 4, 4, 4, 0, 0, 3, 2, 0, 4, 2, 2};
	cursor c = {in, in + in_len, false};
	sink s = {out, out + size, false};
	if (in_len < 10)
		return false;
	sink_put(&s, in, 10); /* magic, minor_version, major_version, constant_pool_count */
	uint32_t count = (uint32_t)in[8] << 8 | in[9];
	c.p += 10;
	for (uint32_t i = 1; i < count && !c.bad && !s.bad; i++) {
		uint32_t tag = cur_byte(&c);
		if (tag == 23) {
			const char *str = image_string(img, cur_compressed_int(&c));
			size_t n = str ? strlen(str) : 0;
			if (!str || n > 0xFFFF)
				return false;
			uint8_t head[3] = {JINST_CP_UTF8, (uint8_t)(n >> 8), (uint8_t)n};
			sink_put(&s, head, 3);
			sink_put(&s, str, n);
		} else if (tag == 25) {
			const char *desc = image_string(img, cur_compressed_int(&c));
			uint32_t index_bytes = cur_compressed_int(&c);
			if (!desc || c.bad || index_bytes > (size_t)(c.end - c.p))
				return false;
			cursor idx = {c.p, c.p + index_bytes, false};
			c.p += index_bytes;
			sink_byte(&s, JINST_CP_UTF8);
			uint8_t *length_at = s.p;
			sink_put(&s, (const uint8_t[2]){0, 0}, 2); /* the length, once known */
			uint8_t *start = s.p;
			for (const char *d = desc; *d; d++) {
				sink_byte(&s, (uint8_t)*d);
				if (*d != 'L' || index_bytes == 0)
					continue;
				const char *pkg = image_string(img, cur_compressed_int(&idx));
				const char *cls = image_string(img, cur_compressed_int(&idx));
				if (!pkg || !cls || idx.bad)
					return false;
				if (*pkg) {
					sink_put(&s, pkg, strlen(pkg));
					sink_byte(&s, '/');
				}
				sink_put(&s, cls, strlen(cls));
			}
			size_t n = (size_t)(s.p - start);
			if (s.bad || n > 0xFFFF)
				return false;
			length_at[0] = (uint8_t)(n >> 8);
			length_at[1] = (uint8_t)n;
		} else if (tag == JINST_CP_UTF8) {
			if ((size_t)(c.end - c.p) < 2)
				return false;
			size_t n = 2 + ((size_t)c.p[0] << 8 | c.p[1]);
			if ((size_t)(c.end - c.p) < n)
				return false;
			sink_byte(&s, (uint8_t)tag);
			sink_put(&s, c.p, n);
			c.p += n;
		} else if (tag < sizeof(entry_size) && entry_size[tag]) {
			size_t n = entry_size[tag];
			if ((size_t)(c.end - c.p) < n)
				return false;
			sink_byte(&s, (uint8_t)tag);
			sink_put(&s, c.p, n);
			c.p += n;
			if (tag == JINST_CP_LONG || tag == JINST_CP_DOUBLE)
				i++; /* JVMS 4.4.5: they take two slots */
		} else {
			return false; /* Dynamic (17) and unknown tags have no known size here */
		}
	}
	if (c.bad || s.bad)
		return false;
	sink_put(&s, c.p, (size_t)(c.end - c.p)); /* the rest of the class */
	return !s.bad && s.p == s.end;
}

/* Undoes the compressions of a stored resource into a malloc'd buffer. */
static int decompress(const jinst_jimage *img, const char *path, const uint8_t *in, size_t in_len,
                      uint64_t want, uint8_t **out, size_t *out_len, jinst_diag *diag)
{
	uint8_t *owned = NULL;
	const uint8_t *cur = in;
	size_t cur_len = in_len;
	int rc = 0;
	for (int depth = 0; cur_len >= JIMAGE_COMPRESSED_HEADER_SIZE && image_u4(img, cur) == JIMAGE_COMPRESSED_MAGIC;
	     depth++) {
		uint64_t csize = image_u8(img, cur + 4), usize = image_u8(img, cur + 12);
		const char *how = image_string(img, image_u4(img, cur + 20));
		if (depth >= 8 || csize > cur_len - JIMAGE_COMPRESSED_HEADER_SIZE || usize > JIMAGE_MAX_RESOURCE) {
			rc = jinst_classpath_fail(diag, JINST_EMALFORMED, "%s: bad compression header", path);
			break;
		}
		bool zip = how && strcmp(how, "zip") == 0, compact = how && strcmp(how, "compact-cp") == 0;
		if (!zip && !compact) {
			rc = jinst_classpath_fail(diag, JINST_EUNSUPPORTED, "%s: compressed with %s (not read)", path,
			                           how ? how : "an unnamed decompressor");
			break;
		}
		uint8_t *next = malloc(usize ? (size_t)usize : 1);
		if (!next) {
			rc = jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
			break;
		}
		const uint8_t *data = cur + JIMAGE_COMPRESSED_HEADER_SIZE;
		if (zip) {
			uLongf got = (uLongf)usize;
			int z = uncompress(next, &got, data, (uLong)csize);
			if (z != Z_OK || got != usize) {
				free(next);
				rc = jinst_classpath_fail(diag, JINST_EMALFORMED, "%s: zip data does not inflate (zlib %d)", path, z);
				break;
			}
		} else if (!undo_compact_cp(img, data, (size_t)csize, next, (size_t)usize)) {
			free(next);
			rc = jinst_classpath_fail(diag, JINST_EMALFORMED, "%s: compact-cp data does not rebuild a class", path);
			break;
		}
		free(owned);
		owned = next;
		cur = next;
		cur_len = (size_t)usize;
	}
	if (rc == 0 && cur_len != want)
		rc = jinst_classpath_fail(diag, JINST_EMALFORMED, "%s: %zu bytes once decompressed, the image says %llu",
		                           path, cur_len, (unsigned long long)want);
	if (rc == 0 && !owned) {
		if (!(owned = malloc(cur_len ? cur_len : 1)))
			rc = jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
		else
			memcpy(owned, cur, cur_len);
	}
	if (rc != 0) {
		free(owned);
		return rc;
	}
	*out = owned;
	*out_len = cur_len;
	return 0;
}

int jinst_jimage_find(const jinst_jimage *image, const char *path, const uint8_t **bytes,
                      size_t *len, jinst_diag *diag)
{
	if (!image || !path || !bytes || !len)
		return jinst_classpath_fail(diag, JINST_EINVAL, "NULL image, path or output");
	location loc;
	if (!image_locate(image, path, &loc))
		return jinst_classpath_fail(diag, JINST_ENOTFOUND, "%s: not in the image", path);
	return location_content(image, &loc, path, bytes, len, diag);
}

int jinst_jimage_read(const jinst_jimage *image, const char *path, uint8_t **bytes, size_t *len,
                      jinst_diag *diag)
{
	if (!image || !path || !bytes || !len)
		return jinst_classpath_fail(diag, JINST_EINVAL, "NULL image, path or output");
	location loc;
	if (!image_locate(image, path, &loc))
		return jinst_classpath_fail(diag, JINST_ENOTFOUND, "%s: not in the image", path);
	const uint8_t *stored = NULL;
	size_t stored_len = 0;
	int rc = location_stored(image, &loc, path, &stored, &stored_len, diag);
	if (rc != 0)
		return rc;
	if (loc.attr[ATTR_UNCOMPRESSED] > JIMAGE_MAX_RESOURCE)
		return jinst_classpath_fail(diag, JINST_EUNSUPPORTED, "%s: too large to read", path);
	return decompress(image, path, stored, stored_len, loc.attr[ATTR_UNCOMPRESSED], bytes, len, diag);
}

const char *jinst_jimage_package_module(const jinst_jimage *image, const char *package)
{
	char path[1024];
	size_t n = strlen(package);
	if (!image || n == 0 || n + sizeof("/packages/") > sizeof(path))
		return NULL;
	memcpy(path, "/packages/", 10);
	for (size_t i = 0; i < n; i++)
		path[10 + i] = package[i] == '/' ? '.' : package[i];
	path[10 + n] = '\0';
	location loc;
	if (!image_locate(image, path, &loc))
		return NULL;
	/* The table is small; jlink may have compressed it like any resource. */
	const uint8_t *content = NULL;
	uint8_t *inflated = NULL;
	size_t len = 0;
	if (location_content(image, &loc, path, &content, &len, NULL) != 0) {
		if (jinst_jimage_read(image, path, &inflated, &len, NULL) != 0)
			return NULL;
		content = inflated;
	}
	const char *module = NULL;
	for (size_t i = 0; i + 8 <= len && !module; i += 8)
		if (image_u4(image, content + i) == 0)
			module = image_string(image, image_u4(image, content + i + 4));
	free(inflated);
	return module;
}

int jinst_jimage_foreach(const jinst_jimage *image, int (*fn)(void *ctx, const char *path), void *ctx)
{
	if (!image || !fn)
		return JINST_EINVAL;
	char path[4096];
	for (uint32_t i = 0; i < image->table_length; i++) {
		location loc;
		if (!location_read(image, image_u4(image, image->offsets + 4u * i), &loc))
			return JINST_EMALFORMED;
		size_t n = loc.module[0] ? (size_t)snprintf(path, sizeof(path), "/%s/", loc.module) : 0;
		if (n < sizeof(path) && loc.parent[0])
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%s/", loc.parent);
		if (n < sizeof(path))
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%s", loc.base);
		if (n < sizeof(path) && loc.extension[0])
			n += (size_t)snprintf(path + n, sizeof(path) - n, ".%s", loc.extension);
		if (n >= sizeof(path))
			return JINST_ETOOLARGE;
		int rc = fn(ctx, path);
		if (rc)
			return rc;
	}
	return 0;
}
