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

#include "internal.h"

#define JIMAGE_MAGIC 0xCAFEDADAu
#define JIMAGE_HEADER_SIZE 28u

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
		return jinst_cp_fail(diag, JINST_EINVAL, "NULL image or path");
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return jinst_cp_fail(diag, JINST_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int err = errno;
		close(fd);
		return jinst_cp_fail(diag, JINST_EIO, "%s: %s", path, err ? strerror(err) : "not a file");
	}
	if ((uint64_t)st.st_size < JIMAGE_HEADER_SIZE) {
		close(fd);
		return jinst_cp_fail(diag, JINST_EUNSUPPORTED, "%s: too short for a jimage header", path);
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int err = errno;
	close(fd);
	if (map == MAP_FAILED)
		return jinst_cp_fail(diag, JINST_EIO, "%s: mmap: %s", path, strerror(err));

	jinst_jimage *img = calloc(1, sizeof(*img));
	if (!img) {
		munmap(map, (size_t)st.st_size);
		return jinst_cp_fail(diag, JINST_ENOMEM, "out of memory");
	}
	img->map = map;
	img->size = (size_t)st.st_size;
	const uint8_t *h = img->map;
	uint32_t magic_le = (uint32_t)h[3] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[1] << 8 | h[0];
	uint32_t magic_be = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
	int rc = 0;
	if (magic_le != JIMAGE_MAGIC && magic_be != JIMAGE_MAGIC) {
		rc = jinst_cp_fail(diag, JINST_EUNSUPPORTED, "%s: not a jimage (no magic CAFEDADA)", path);
		goto fail;
	}
	img->swap = magic_le != JIMAGE_MAGIC;
	uint32_t version = image_u4(img, h + 4);
	if (version >> 16 != 1) {
		rc = jinst_cp_fail(diag, JINST_EUNSUPPORTED, "%s: jimage version %u.%u (1.x known)", path,
		                   version >> 16, version & 0xFFFF);
		goto fail;
	}
	img->table_length = image_u4(img, h + 16);
	img->locations_size = image_u4(img, h + 20);
	img->strings_size = image_u4(img, h + 24);
	img->index_size = (uint64_t)JIMAGE_HEADER_SIZE + 8ull * img->table_length + img->locations_size +
	                  img->strings_size;
	if (img->index_size > img->size) {
		rc = jinst_cp_fail(diag, JINST_EUNSUPPORTED, "%s: jimage index (%llu bytes) past the end of the file",
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

/* The content of a located resource, bounds-checked. */
static int location_content(const jinst_jimage *img, const location *loc, const char *path,
                            const uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	if (loc->attr[ATTR_COMPRESSED])
		return jinst_cp_fail(diag, JINST_EUNSUPPORTED, "%s: compressed in the image (not read)", path);
	uint64_t start = img->index_size + loc->attr[ATTR_OFFSET], n = loc->attr[ATTR_UNCOMPRESSED];
	if (start < img->index_size || start > img->size || img->size - start < n)
		return jinst_cp_fail(diag, JINST_EUNSUPPORTED, "%s: content past the end of the image", path);
	*bytes = img->map + start;
	*len = (size_t)n;
	return 0;
}

int jinst_jimage_find(const jinst_jimage *image, const char *path, const uint8_t **bytes,
                      size_t *len, jinst_diag *diag)
{
	if (!image || !path || !bytes || !len)
		return jinst_cp_fail(diag, JINST_EINVAL, "NULL image, path or output");
	location loc;
	if (!image_locate(image, path, &loc))
		return jinst_cp_fail(diag, JINST_ENOTFOUND, "%s: not in the image", path);
	return location_content(image, &loc, path, bytes, len, diag);
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
	const uint8_t *content;
	size_t len;
	if (!image_locate(image, path, &loc) || location_content(image, &loc, path, &content, &len, NULL) != 0)
		return NULL;
	for (size_t i = 0; i + 8 <= len; i += 8)
		if (image_u4(image, content + i) == 0)
			return image_string(image, image_u4(image, content + i + 4));
	return NULL;
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
