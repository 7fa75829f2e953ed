/*
 * Class paths (include/jinst/classpath.h): an ordered list of entries, each
 * able to say "here are the bytes of pkg/Cls" or "not here".
 *
 * Entries and how they find a class:
 *   zip (jar, zip, .jmod): the entry PREFIX pkg/Cls.class, PREFIX "" for a
 *     jar and "classes/" for a .jmod, whose zip starts after a 4-byte "JM"
 *     header (the archive layer, include/jinst/archive.h, skips it).
 *     A multi-release jar (manifest "Multi-Release: true") is first asked for
 *     META-INF/versions/N/pkg/Cls.class, N from the release set down to 9.
 *     An archive is for one thread at a time: each has its own mutex.
 *   folder: the file FOLDER/pkg/Cls.class.
 *   module tree (as `jimage extract` writes): FOLDER/MODULE/pkg/Cls.class.
 *     The package folders are indexed once when the entry is added, so a
 *     read opens one file (or a few, for a package split across modules).
 *   runtime image (lib/modules): /MODULE/pkg/Cls.class, the module from the
 *     image's own package table (jimage.c).
 * Folders are read with open/read on each call, so they need no lock.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "jinst/archive.h"
#include "jinst/util.h"

#define NAME_MAX_LEN 2048

int jinst_classpath_fail(jinst_diag *diag, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = jinst_diag_vfail(diag, code, "", fmt, ap);
	va_end(ap);
	return rc;
}

typedef enum { ENTRY_ZIP, ENTRY_FOLDER, ENTRY_MODULES, ENTRY_IMAGE } entry_kind;

/* A package folder of a module tree: package "java/lang" is in module. */
typedef struct package_node {
	struct package_node *next; /* in its bucket; same package again for a split package */
	uint32_t hash;
	const char *module;        /* borrowed from the entry's module list */
	char package[];
} package_node;

typedef struct path_entry {
	entry_kind kind;
	char *path;
	/* zip */
	jinst_archive *zip;
	pthread_mutex_t lock;
	bool lock_made;
	const char *prefix;
	bool multi_release;
	/* module tree */
	char **modules;
	size_t module_count;
	package_node **buckets;
	size_t bucket_count; /* a power of two */
	/* runtime image */
	jinst_jimage *image;
} path_entry;

struct jinst_classpath {
	path_entry **entries;
	size_t count, cap;
	int release;
	jinst_hierarchy_cache *cache;
};

/* ---- helpers ------------------------------------------------------------------ */

static char *path_join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *p = malloc(na + nb + 2);
	if (p) {
		memcpy(p, a, na);
		p[na] = '/';
		memcpy(p + na + 1, b, nb + 1);
	}
	return p;
}

static bool is_folder(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whole file into a malloc'd buffer. JINST_ENOTFOUND when it does not exist
 * or is no regular file (a folder named like a class). */
static int file_read(const char *path, uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	jinst_diag d;
	int rc = jinst_file_read(bytes, len, path, 0, &d);
	if (rc == JINST_ENOTFOUND)
		return rc;
	if (rc)
		return jinst_classpath_fail(diag, rc, "%s: %s", path, d.message);
	return 0;
}

/* A class name fit to become a path: no empty, "." or ".." segment, so a
 * name never reaches outside an entry's folder. */
static bool name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (const char *seg = name;;) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);
		if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return false;
		if (!end)
			return true;
		seg = end + 1;
	}
}

/* ---- entries ------------------------------------------------------------------- */

static void entry_free(path_entry *e)
{
	if (!e)
		return;
	if (e->zip && e->lock_made)
		pthread_mutex_destroy(&e->lock);
	jinst_archive_close(e->zip);
	for (size_t i = 0; i < e->bucket_count; i++)
		for (package_node *p = e->buckets[i], *next; p; p = next) {
			next = p->next;
			free(p);
		}
	free(e->buckets);
	for (size_t i = 0; i < e->module_count; i++)
		free(e->modules[i]);
	free(e->modules);
	jinst_jimage_close(e->image);
	free(e->path);
	free(e);
}

static int entry_push(jinst_classpath *cp, path_entry *e, jinst_diag *diag)
{
	if (cp->count == cp->cap) {
		size_t cap = cp->cap ? cp->cap * 2 : 8;
		path_entry **entries = realloc(cp->entries, cap * sizeof(*entries));
		if (!entries) {
			entry_free(e);
			return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
		}
		cp->entries = entries;
		cp->cap = cap;
	}
	cp->entries[cp->count++] = e;
	return 0;
}

static path_entry *entry_new(entry_kind kind, const char *path)
{
	path_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->kind = kind;
	e->path = strdup(path);
	if (!e->path) {
		free(e);
		return NULL;
	}
	return e;
}

/* ---- zip, jar, jmod ------------------------------------------------------------- */

/* Reads the zip entry res into a malloc'd buffer. Called with e->lock held. */
static int zip_entry_read(path_entry *e, const char *res, uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	size_t index;
	if (jinst_archive_find(&index, e->zip, res) != 0)
		return JINST_ENOTFOUND;
	jinst_diag d;
	int rc = jinst_archive_read(bytes, len, e->zip, index, &d);
	if (rc)
		return jinst_classpath_fail(diag, rc == JINST_ENOMEM ? rc : JINST_EIO, "%s: %s: %s", e->path, res, d.message);
	return 0;
}

/* Whether the jar's manifest says "Multi-Release: true" (JAR File
 * Specification, main attributes; the name is case-insensitive). */
static bool zip_multi_release(path_entry *e)
{
	uint8_t *mf;
	size_t len;
	if (zip_entry_read(e, "META-INF/MANIFEST.MF", &mf, &len, NULL) != 0)
		return false;
	bool yes = false;
	static const char key[] = "Multi-Release:";
	for (size_t i = 0; i + sizeof(key) - 1 <= len && !yes; i++) {
		if ((i > 0 && mf[i - 1] != '\n') || strncasecmp((const char *)mf + i, key, sizeof(key) - 1) != 0)
			continue;
		size_t j = i + sizeof(key) - 1;
		while (j < len && mf[j] == ' ')
			j++;
		yes = len - j >= 4 && strncasecmp((const char *)mf + j, "true", 4) == 0 &&
		      (len - j == 4 || mf[j + 4] == '\r' || mf[j + 4] == '\n' || mf[j + 4] == ' ');
	}
	free(mf);
	return yes;
}

static int add_zip(jinst_classpath *cp, const char *path, const char *prefix, jinst_diag *diag)
{
	path_entry *e = entry_new(ENTRY_ZIP, path);
	if (!e)
		return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
	e->prefix = prefix;
	/* Classes are at most 1 GiB, the archive layer's default limit. */
	jinst_diag d;
	int rc = jinst_archive_open(&e->zip, path, NULL, &d);
	if (rc) {
		entry_free(e);
		return jinst_classpath_fail(diag, JINST_EIO, "%s: %s", path, d.message);
	}
	if (pthread_mutex_init(&e->lock, NULL) != 0) {
		entry_free(e);
		return jinst_classpath_fail(diag, JINST_ENOMEM, "no mutex for %s", path);
	}
	e->lock_made = true;
	e->multi_release = prefix[0] == '\0' && zip_multi_release(e);
	return entry_push(cp, e, diag);
}

static int zip_read(const jinst_classpath *cp, path_entry *e, const char *name, uint8_t **bytes, size_t *len,
                    jinst_diag *diag)
{
	char res[NAME_MAX_LEN + 64];
	int rc = JINST_ENOTFOUND;
	pthread_mutex_lock(&e->lock);
	if (e->multi_release)
		for (int v = cp->release; v >= 9 && rc == JINST_ENOTFOUND; v--) {
			snprintf(res, sizeof(res), "META-INF/versions/%d/%s.class", v, name);
			rc = zip_entry_read(e, res, bytes, len, diag);
		}
	if (rc == JINST_ENOTFOUND) {
		snprintf(res, sizeof(res), "%s%s.class", e->prefix, name);
		rc = zip_entry_read(e, res, bytes, len, diag);
	}
	pthread_mutex_unlock(&e->lock);
	return rc;
}

/* ---- folders and module trees ---------------------------------------------------- */

static int folder_read(path_entry *e, const char *module, const char *name, uint8_t **bytes, size_t *len,
                       jinst_diag *diag)
{
	char path[8192];
	int n = module ? snprintf(path, sizeof(path), "%s/%s/%s.class", e->path, module, name)
	               : snprintf(path, sizeof(path), "%s/%s.class", e->path, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return JINST_ENOTFOUND;
	return file_read(path, bytes, len, diag);
}

typedef struct package_list {
	package_node **nodes;
	size_t count, cap;
} package_list;

/* Adds every folder under root/rel (rel "" at the top) as a package of module. */
static int index_packages(package_list *list, const char *root, const char *rel, const char *module,
                          unsigned depth)
{
	if (depth > 64)
		return 0;
	char dir[8192];
	snprintf(dir, sizeof(dir), rel[0] ? "%s/%s" : "%s%s", root, rel);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue; /* ".", ".." and hidden folders: no package starts with a dot */
		char sub[8192];
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= (int)sizeof(sub) || !is_folder(sub))
			continue;
		char pkg[4096];
		if (snprintf(pkg, sizeof(pkg), rel[0] ? "%s/%s" : "%s%s", rel, de->d_name) >= (int)sizeof(pkg))
			continue;
		size_t n = strlen(pkg);
		if (list->count == list->cap) {
			size_t cap = list->cap ? list->cap * 2 : 256;
			package_node **nodes = realloc(list->nodes, cap * sizeof(*nodes));
			if (!nodes) {
				rc = JINST_ENOMEM;
				break;
			}
			list->nodes = nodes;
			list->cap = cap;
		}
		package_node *p = malloc(sizeof(*p) + n + 1);
		if (!p) {
			rc = JINST_ENOMEM;
			break;
		}
		memcpy(p->package, pkg, n + 1);
		p->hash = jinst_jimage_hash(pkg, n, JINST_JIMAGE_HASH_SEED);
		p->module = module;
		p->next = NULL;
		list->nodes[list->count++] = p;
		rc = index_packages(list, root, pkg, module, depth + 1);
	}
	closedir(d);
	return rc;
}

static int name_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether folder looks like a module tree: a subfolder holds module-info.class. */
static bool is_module_tree(const char *folder)
{
	DIR *d = opendir(folder);
	if (!d)
		return false;
	bool yes = false;
	struct dirent *de;
	while (!yes && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[8192];
		if (snprintf(path, sizeof(path), "%s/%s/module-info.class", folder, de->d_name) < (int)sizeof(path))
			yes = is_file(path);
	}
	closedir(d);
	return yes;
}

static int add_module_tree(jinst_classpath *cp, const char *path, jinst_diag *diag)
{
	path_entry *e = entry_new(ENTRY_MODULES, path);
	if (!e)
		return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
	DIR *d = opendir(path);
	if (!d) {
		int rc = jinst_classpath_fail(diag, JINST_EIO, "%s: %s", path, strerror(errno));
		entry_free(e);
		return rc;
	}
	size_t cap = 0;
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char sub[8192];
		if (snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= (int)sizeof(sub) || !is_folder(sub))
			continue;
		if (e->module_count == cap) {
			cap = cap ? cap * 2 : 64;
			char **modules = realloc(e->modules, cap * sizeof(*modules));
			if (!modules) {
				rc = JINST_ENOMEM;
				break;
			}
			e->modules = modules;
		}
		if (!(e->modules[e->module_count] = strdup(de->d_name))) {
			rc = JINST_ENOMEM;
			break;
		}
		e->module_count++;
	}
	closedir(d);
	/* Modules in name order, so a split package is searched in the same
	 * order whatever order the file system lists them in. */
	if (e->module_count)
		qsort(e->modules, e->module_count, sizeof(*e->modules), name_compare);
	package_list list = {0};
	for (size_t i = 0; rc == 0 && i < e->module_count; i++) {
		char root[8192];
		snprintf(root, sizeof(root), "%s/%s", path, e->modules[i]);
		rc = index_packages(&list, root, "", e->modules[i], 0);
	}
	if (rc == 0) {
		size_t buckets = 64;
		while (buckets < list.count * 2)
			buckets *= 2;
		if ((e->buckets = calloc(buckets, sizeof(*e->buckets))))
			e->bucket_count = buckets;
		else
			rc = JINST_ENOMEM;
	}
	/* Appending in reverse keeps each chain in module order. */
	for (size_t i = list.count; i-- > 0;) {
		package_node *p = list.nodes[i];
		if (rc == 0) {
			size_t b = p->hash & (e->bucket_count - 1);
			p->next = e->buckets[b];
			e->buckets[b] = p;
		} else {
			free(p);
		}
	}
	free(list.nodes);
	if (rc != 0) {
		entry_free(e);
		return jinst_classpath_fail(diag, rc, "%s: out of memory indexing the module tree", path);
	}
	return entry_push(cp, e, diag);
}

static int modules_read(path_entry *e, const char *name, uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	const char *slash = strrchr(name, '/');
	if (!slash)
		return JINST_ENOTFOUND; /* the unnamed package is in no module */
	size_t n = (size_t)(slash - name);
	uint32_t hash = jinst_jimage_hash(name, n, JINST_JIMAGE_HASH_SEED);
	for (package_node *p = e->buckets[hash & (e->bucket_count - 1)]; p; p = p->next) {
		if (p->hash != hash || strncmp(p->package, name, n) != 0 || p->package[n] != '\0')
			continue;
		int rc = folder_read(e, p->module, name, bytes, len, diag);
		if (rc != JINST_ENOTFOUND)
			return rc;
	}
	return JINST_ENOTFOUND;
}

/* ---- runtime image --------------------------------------------------------------- */

static int add_image(jinst_classpath *cp, const char *path, jinst_diag *diag)
{
	path_entry *e = entry_new(ENTRY_IMAGE, path);
	if (!e)
		return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
	int rc = jinst_jimage_open(&e->image, path, diag);
	if (rc != 0) {
		entry_free(e);
		return rc;
	}
	return entry_push(cp, e, diag);
}

static int image_read(path_entry *e, const char *name, uint8_t **bytes, size_t *len, jinst_diag *diag)
{
	const char *slash = strrchr(name, '/');
	if (!slash)
		return JINST_ENOTFOUND;
	char package[NAME_MAX_LEN + 1];
	size_t n = (size_t)(slash - name);
	memcpy(package, name, n);
	package[n] = '\0';
	const char *module = jinst_jimage_package_module(e->image, package);
	if (!module)
		return JINST_ENOTFOUND;
	char res[NAME_MAX_LEN + 512];
	if (snprintf(res, sizeof(res), "/%s/%s.class", module, name) >= (int)sizeof(res))
		return JINST_ENOTFOUND;
	return jinst_jimage_read(e->image, res, bytes, len, diag);
}

/* ---- the class path ------------------------------------------------------------- */

static int source_read(void *ctx, const char *name, const uint8_t **bytes, size_t *len)
{
	uint8_t *buf;
	int rc = jinst_classpath_read(ctx, name, &buf, len, NULL);
	if (rc == 0)
		*bytes = buf;
	return rc;
}

static void source_release(void *ctx, const uint8_t *bytes, size_t len)
{
	(void)ctx;
	(void)len;
	free((void *)bytes);
}

jinst_class_source jinst_classpath_source(jinst_classpath *cp)
{
	jinst_class_source s = {source_read, source_release, cp};
	return s;
}

int jinst_classpath_new(jinst_classpath **out)
{
	if (!out)
		return JINST_EINVAL;
	*out = NULL;
	jinst_classpath *cp = calloc(1, sizeof(*cp));
	if (!cp)
		return JINST_ENOMEM;
	jinst_class_source s = jinst_classpath_source(cp);
	int rc = jinst_hierarchy_cache_new(&cp->cache, &s);
	if (rc != 0) {
		free(cp);
		return rc;
	}
	*out = cp;
	return 0;
}

void jinst_classpath_free(jinst_classpath *cp)
{
	if (!cp)
		return;
	jinst_hierarchy_cache_free(cp->cache);
	for (size_t i = 0; i < cp->count; i++)
		entry_free(cp->entries[i]);
	free(cp->entries);
	free(cp);
}

void jinst_classpath_set_release(jinst_classpath *cp, int release)
{
	if (cp)
		cp->release = release;
}

/* Adds every file of folder whose name ends in suffix (or suffix2), in name
 * order (the file system's order is not stable across machines). */
static int add_folder_files(jinst_classpath *cp, const char *folder, const char *suffix, const char *suffix2,
                            size_t *added, jinst_diag *diag)
{
	*added = 0;
	DIR *d = opendir(folder);
	if (!d)
		return jinst_classpath_fail(diag, JINST_EIO, "%s: %s", folder, strerror(errno));
	char **names = NULL;
	size_t count = 0, cap = 0;
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d))) {
		size_t n = strlen(de->d_name), n1 = strlen(suffix), n2 = suffix2 ? strlen(suffix2) : 0;
		bool match = (n > n1 && strcmp(de->d_name + n - n1, suffix) == 0) ||
		             (suffix2 && n > n2 && strcmp(de->d_name + n - n2, suffix2) == 0);
		if (!match)
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 64;
			char **more = realloc(names, cap * sizeof(*names));
			if (!more) {
				rc = JINST_ENOMEM;
				break;
			}
			names = more;
		}
		if (!(names[count] = path_join(folder, de->d_name)))
			rc = JINST_ENOMEM;
		else
			count++;
	}
	closedir(d);
	if (count)
		qsort(names, count, sizeof(*names), name_compare);
	if (rc != 0)
		jinst_classpath_fail(diag, rc, "out of memory");
	for (size_t i = 0; i < count; i++) {
		if (rc == 0 && is_file(names[i]) && (rc = jinst_classpath_add(cp, names[i], diag)) == 0)
			++*added;
		free(names[i]);
	}
	free(names);
	return rc;
}

int jinst_classpath_add_jdk(jinst_classpath *cp, const char *java_home, jinst_diag *diag)
{
	if (!cp || !java_home)
		return jinst_classpath_fail(diag, JINST_EINVAL, "NULL class path or JDK home");
	static const char *const images[] = {"lib/modules", "jre/lib/rt.jar", "lib/rt.jar"};
	char *path = path_join(java_home, images[0]);
	if (!path)
		return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
	if (is_file(path)) {
		int rc = add_image(cp, path, diag);
		free(path);
		return rc;
	}
	free(path);

	/* No image: a JDK's jmods/ (every module, in name order). */
	char *jmods = path_join(java_home, "jmods");
	if (!jmods)
		return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
	size_t added = 0;
	int rc = is_folder(jmods) ? add_folder_files(cp, jmods, ".jmod", NULL, &added, diag) : 0;
	free(jmods);
	if (rc != 0 || added)
		return rc;

	/* JDK 8 and before. */
	for (size_t i = 1; i < sizeof(images) / sizeof(images[0]); i++) {
		if (!(path = path_join(java_home, images[i])))
			return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
		if (is_file(path)) {
			rc = add_zip(cp, path, "", diag);
			free(path);
			return rc;
		}
		free(path);
	}
	return jinst_classpath_fail(diag, JINST_EIO, "%s: no lib/modules, jmods/*.jmod or rt.jar: not a JDK home",
	                     java_home);
}

int jinst_classpath_add(jinst_classpath *cp, const char *path, jinst_diag *diag)
{
	if (!cp || !path)
		return jinst_classpath_fail(diag, JINST_EINVAL, "NULL class path or path");
	struct stat st;
	if (stat(path, &st) != 0)
		return jinst_classpath_fail(diag, JINST_EIO, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		static const char *const jdk_marks[] = {"lib/modules", "jmods", "jre/lib/rt.jar"};
		for (size_t i = 0; i < sizeof(jdk_marks) / sizeof(jdk_marks[0]); i++) {
			char *mark = path_join(path, jdk_marks[i]);
			if (!mark)
				return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
			struct stat ms;
			bool found = stat(mark, &ms) == 0;
			free(mark);
			if (found)
				return jinst_classpath_add_jdk(cp, path, diag);
		}
		if (is_module_tree(path))
			return add_module_tree(cp, path, diag);
		DIR *d = opendir(path); /* a folder we cannot list is most likely one we cannot read */
		if (!d)
			return jinst_classpath_fail(diag, JINST_EIO, "%s: %s", path, strerror(errno));
		closedir(d);
		path_entry *e = entry_new(ENTRY_FOLDER, path);
		return e ? entry_push(cp, e, diag) : jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
	}
	if (!S_ISREG(st.st_mode))
		return jinst_classpath_fail(diag, JINST_EIO, "%s: not a file or folder", path);
	uint8_t magic[4] = {0};
	FILE *f = fopen(path, "rb");
	if (!f)
		return jinst_classpath_fail(diag, JINST_EIO, "%s: %s", path, strerror(errno));
	size_t got = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	if (got == 4 && magic[0] == 'P' && magic[1] == 'K' &&
	    ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6)))
		return add_zip(cp, path, "", diag);
	if (got == 4 && magic[0] == 'J' && magic[1] == 'M' && magic[2] == 1 && magic[3] == 0)
		return add_zip(cp, path, "classes/", diag);
	if (got == 4 && ((magic[0] == 0xDA && magic[1] == 0xDA && magic[2] == 0xFE && magic[3] == 0xCA) ||
	                 (magic[0] == 0xCA && magic[1] == 0xFE && magic[2] == 0xDA && magic[3] == 0xDA)))
		return add_image(cp, path, diag);
	return jinst_classpath_fail(diag, JINST_EUNSUPPORTED, "%s: not a jar, zip, jmod or jimage", path);
}

int jinst_classpath_add_list(jinst_classpath *cp, const char *list, jinst_diag *diag)
{
	if (!cp || !list)
		return jinst_classpath_fail(diag, JINST_EINVAL, "NULL class path or list");
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n) {
			char *one = strndup(p, n);
			if (!one)
				return jinst_classpath_fail(diag, JINST_ENOMEM, "out of memory");
			int rc;
			size_t added;
			/* A last segment "*": every .jar and .JAR of the folder, as the java launcher expands it. */
			if (strcmp(one, "*") == 0)
				rc = add_folder_files(cp, ".", ".jar", ".JAR", &added, diag);
			else if (n >= 2 && strcmp(one + n - 2, "/*") == 0) {
				one[n - 2] = '\0';
				rc = add_folder_files(cp, one[0] ? one : "/", ".jar", ".JAR", &added, diag);
			} else
				rc = jinst_classpath_add(cp, one, diag);
			free(one);
			if (rc != 0)
				return rc;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

int jinst_classpath_read(jinst_classpath *cp, const char *name, uint8_t **bytes, size_t *len,
                         jinst_diag *diag)
{
	if (!cp || !name || !bytes || !len)
		return jinst_classpath_fail(diag, JINST_EINVAL, "NULL class path, name or output");
	*bytes = NULL;
	*len = 0;
	if (!name_ok(name))
		return jinst_classpath_fail(diag, JINST_ENOTFOUND, "%.200s: not a class name", name);
	for (size_t i = 0; i < cp->count; i++) {
		path_entry *e = cp->entries[i];
		int rc;
		switch (e->kind) {
		case ENTRY_ZIP: rc = zip_read(cp, e, name, bytes, len, diag); break;
		case ENTRY_FOLDER: rc = folder_read(e, NULL, name, bytes, len, diag); break;
		case ENTRY_MODULES: rc = modules_read(e, name, bytes, len, diag); break;
		default: rc = image_read(e, name, bytes, len, diag); break;
		}
		if (rc != JINST_ENOTFOUND)
			return rc;
	}
	return jinst_classpath_fail(diag, JINST_ENOTFOUND, "class %.200s is not on the class path", name);
}

int jinst_classpath_cache(jinst_classpath *cp, jinst_hierarchy_cache **cache)
{
	if (!cp || !cache)
		return JINST_EINVAL;
	*cache = cp->cache;
	return 0;
}

int jinst_classpath_hierarchy(jinst_classpath *cp, jinst_hierarchy *out)
{
	if (!cp || !out)
		return JINST_EINVAL;
	*out = jinst_hierarchy_cache_view(cp->cache);
	return 0;
}
