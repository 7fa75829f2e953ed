/*
 * Class paths and the hierarchy cache over real inputs (label `unit`):
 *   test_classpath image MODULES CORPUS     every class of a runtime image against
 *                                           the `jimage extract` tree of the same image
 *   test_classpath jmod JMOD CORPUS_MODULE  every class of a .jmod against that tree
 *   test_classpath javap CP                 every class of a jar or folder: bytes, and
 *                                           the cache's answers against javap's
 *   test_classpath jdk JAVA_HOME CORPUS     the resolver over a JDK, and over the
 *                                           module tree, which must agree class by class
 *   test_classpath jmods JAVA_HOME WORK     the same against a JDK home with jmods/ only
 *   test_classpath threads JAVA_HOME [JAR]  4 threads x every JDK class (and JAR's)
 *   test_classpath compressed JAVA_HOME WORK images jlink compressed, against a stored one
 *   test_classpath damaged MODULES WORK     a cut image, and copies with bytes changed
 *   test_classpath infer JAVA_HOME          frames for all of java.base through the resolver
 *   test_classpath multirelease DATA WORK   META-INF/versions/N of multi-release jars
 *   test_classpath errors DATA_CLASSES WORK missing, unreadable and wrong entries
 * Exit 77 (skipped) when the JDK or the corpus is not there.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zip.h>

#include "jinst/classpath.h"
#include "jinst/infer.h"
#include "../testlib.h"

#define SKIP 77

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* ---- a growable list of strings ---------------------------------------------------- */

typedef struct strings {
	char **items;
	size_t count, cap;
} strings;

static void strings_add(strings *s, const char *str, size_t n)
{
	if (s->count == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->items = realloc(s->items, s->cap * sizeof(*s->items));
		if (!s->items)
			abort();
	}
	char *copy = malloc(n + 1);
	if (!copy)
		abort();
	memcpy(copy, str, n);
	copy[n] = '\0';
	s->items[s->count++] = copy;
}

static void strings_free(strings *s)
{
	for (size_t i = 0; i < s->count; i++)
		free(s->items[i]);
	free(s->items);
}

/* Every NAME.class under dir (relative paths), recursively. */
static void walk_classes(const char *root, const char *rel, strings *out)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), rel[0] ? "%s/%s" : "%s%s", root, rel);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char sub[4096], path[8192 + 16];
		snprintf(sub, sizeof(sub), rel[0] ? "%s/%s" : "%s%s", rel, de->d_name);
		snprintf(path, sizeof(path), "%s/%s", root, sub);
		struct stat st;
		if (stat(path, &st) != 0)
			continue;
		size_t n = strlen(sub);
		if (S_ISDIR(st.st_mode))
			walk_classes(root, sub, out);
		else if (n > 6 && strcmp(sub + n - 6, ".class") == 0)
			strings_add(out, sub, n);
	}
	closedir(d);
}

/* ---- image: every class of lib/modules against the extracted tree ------------------ */

static int collect_classes(void *ctx, const char *path)
{
	size_t n = strlen(path);
	if (n > 6 && strcmp(path + n - 6, ".class") == 0)
		strings_add(ctx, path, n);
	return 0;
}

static int test_image(const char *modules, const char *corpus)
{
	if (!exists(modules) || !exists(corpus)) {
		printf("SKIP: %s or %s missing\n", modules, corpus);
		return SKIP;
	}
	jinst_diag diag = {0};
	jinst_jimage *img;
	int rc = jinst_jimage_open(&img, modules, &diag);
	CHECK(rc == 0, "open %s: %s", modules, diag.message);
	if (rc)
		return check_report();
	jinst_classpath *cp;
	CHECK(jinst_classpath_new(&cp) == 0, "classpath_new");
	CHECK(jinst_classpath_add(cp, modules, &diag) == 0, "add %s: %s", modules, diag.message);

	strings paths = {0};
	double t0 = now();
	CHECK(jinst_jimage_foreach(img, collect_classes, &paths) == 0, "foreach");
	size_t identical = 0, by_name = 0;
	uint64_t bytes_total = 0;
	for (size_t i = 0; i < paths.count; i++) {
		const char *p = paths.items[i];
		const uint8_t *bytes;
		size_t len;
		rc = jinst_jimage_find(img, p, &bytes, &len, &diag);
		CHECK(rc == 0, "find %s: %s", p, diag.message);
		if (rc)
			continue;
		size_t want_len;
		uint8_t *want = test_load(corpus, p + 1, &want_len);
		bool same = len == want_len && memcmp(bytes, want, len) == 0;
		CHECK(same, "%s: %zu bytes in the image, %zu in the corpus", p, len, want_len);
		identical += same;
		bytes_total += len;
		/* By class name, through the package table: the same bytes. */
		const char *name = strchr(p + 1, '/') + 1;
		size_t n = strlen(name) - 6;
		if (!(n == 11 && strncmp(name, "module-info", 11) == 0)) {
			char cls[2048];
			memcpy(cls, name, n);
			cls[n] = '\0';
			uint8_t *got;
			size_t got_len;
			rc = jinst_classpath_read(cp, cls, &got, &got_len, &diag);
			CHECK(rc == 0 && got_len == want_len && memcmp(got, want, got_len) == 0, "read %s: %s", cls,
			      rc ? diag.message : "other bytes");
			by_name += rc == 0;
			free(got);
		}
		free(want);
	}
	double t1 = now();
	strings corpus_classes = {0};
	walk_classes(corpus, "", &corpus_classes);
	CHECK(corpus_classes.count == paths.count, "%zu classes in the image, %zu in the corpus", paths.count,
	      corpus_classes.count);
	CHECK(paths.count > 20000, "only %zu classes in a JDK image", paths.count);
	const uint8_t *b;
	size_t l;
	CHECK(jinst_jimage_find(img, "/java.base/java/lang/NoSuchClass.class", &b, &l, NULL) == JINST_ENOTFOUND,
	      "a missing resource");
	CHECK(jinst_jimage_find(img, "/java.desktop/java/lang/Object.class", &b, &l, NULL) == JINST_ENOTFOUND,
	      "a class in another module");
	const char *m = jinst_jimage_package_module(img, "java/lang");
	CHECK(m && strcmp(m, "java.base") == 0, "java/lang is in %s", m ? m : "(none)");
	printf("%s: %zu classes (%.1f MB) identical to %s, %zu of them read by name; %zu classes in the corpus; %.2f s\n",
	       modules, identical, bytes_total / 1e6, corpus, by_name, corpus_classes.count, t1 - t0);
	strings_free(&corpus_classes);
	strings_free(&paths);
	jinst_classpath_free(cp);
	jinst_jimage_close(img);
	return check_report();
}

/* ---- jmod: every class of a .jmod against the module's extracted tree -------------- */

/* jlink rewrites a few classes when it builds an image (its
 * generate-jli-classes and system-modules plugins: other members and access
 * flags, the same super class) and adds others (SystemModules$*,
 * BoundMethodHandle$Species_*): those differ from the jmod or are not in it. */
static const char *const rewritten[] = {
	"java/lang/invoke/DelegatingMethodHandle$Holder", "java/lang/invoke/DirectMethodHandle$Holder",
	"java/lang/invoke/Invokers$Holder", "java/lang/invoke/LambdaForm$Holder",
	"jdk/internal/module/SystemModulesMap", NULL};

static bool is_rewritten(const char *name)
{
	for (int k = 0; rewritten[k]; k++)
		if (strcmp(name, rewritten[k]) == 0)
			return true;
	return false;
}

static int test_jmod(const char *jmod, const char *corpus_module)
{
	if (!exists(jmod) || !exists(corpus_module)) {
		printf("SKIP: %s or %s missing\n", jmod, corpus_module);
		return SKIP;
	}
	/* The test's own view of the jmod: libzip over the bytes after "JM\1\0". */
	size_t all_len;
	uint8_t *all = test_read_file(jmod, &all_len);
	CHECK(all && all_len > 4, "read %s", jmod);
	if (!all || all_len <= 4)
		return check_report();
	zip_error_t ze;
	zip_error_init(&ze);
	zip_source_t *src = zip_source_buffer_create(all + 4, all_len - 4, 0, &ze);
	zip_t *z = src ? zip_open_from_source(src, ZIP_RDONLY, &ze) : NULL;
	CHECK(z, "libzip opens %s after its header", jmod);
	if (!z)
		return check_report();
	jinst_classpath *cp;
	jinst_diag diag = {0};
	CHECK(jinst_classpath_new(&cp) == 0, "classpath_new");
	CHECK(jinst_classpath_add(cp, jmod, &diag) == 0, "add %s: %s", jmod, diag.message);
	size_t same_as_zip = 0, same_as_corpus = 0, count = 0, differ = 0;
	for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); i++) {
		const char *e = zip_get_name(z, (zip_uint64_t)i, 0);
		size_t n = strlen(e);
		if (strncmp(e, "classes/", 8) != 0 || n < 14 || strcmp(e + n - 6, ".class") != 0)
			continue;
		count++;
		char cls[2048];
		snprintf(cls, sizeof(cls), "%.*s", (int)(n - 14), e + 8);
		uint8_t *got;
		size_t got_len;
		int rc = jinst_classpath_read(cp, cls, &got, &got_len, &diag);
		CHECK(rc == 0, "read %s: %s", cls, diag.message);
		if (rc)
			continue;
		zip_stat_t zs;
		zip_stat_index(z, (zip_uint64_t)i, 0, &zs);
		uint8_t *zbytes = malloc(zs.size + 1);
		zip_file_t *f = zip_fopen_index(z, (zip_uint64_t)i, 0);
		bool zok = f && zip_fread(f, zbytes, zs.size) == (zip_int64_t)zs.size;
		if (f)
			zip_fclose(f);
		bool same = zok && got_len == zs.size && memcmp(got, zbytes, got_len) == 0;
		CHECK(same, "%s: other bytes than the jmod entry", cls);
		same_as_zip += same;
		free(zbytes);

		size_t want_len;
		uint8_t *want = test_load(corpus_module, e + 8, &want_len);
		same = got_len == want_len && memcmp(got, want, got_len) == 0;
		bool jlink = is_rewritten(cls);
		CHECK(same || jlink, "%s: other bytes than the corpus", cls);
		same_as_corpus += same;
		differ += !same;
		free(want);
		free(got);
	}
	strings corpus_classes = {0};
	walk_classes(corpus_module, "", &corpus_classes);
	CHECK(count > 1000 && count <= corpus_classes.count, "%zu classes in the jmod, %zu in the corpus", count,
	      corpus_classes.count);
	printf("%s: %zu classes, all %zu read back as the jmod holds them; %zu identical to %s, "
	       "%zu rewritten by jlink; the image has %zu classes more\n",
	       jmod, count, same_as_zip, same_as_corpus, corpus_module, differ, corpus_classes.count - count);
	strings_free(&corpus_classes);
	jinst_classpath_free(cp);
	zip_close(z);
	free(all);
	return check_report();
}

/* ---- javap as the oracle of super class, interfaces and kind ----------------------- */

typedef struct javap_class {
	char name[512];
	char super_name[512]; /* "" for none */
	bool is_interface;
	strings interfaces;
} javap_class;

/* Parses a javap declaration line ("public final class a.B<T> extends a.C<T>
 * implements a.D, a.E {") after removing generic arguments. */
static bool javap_parse(const char *line, javap_class *out)
{
	char flat[8192];
	size_t n = 0;
	int depth = 0;
	for (const char *p = line; *p && n + 1 < sizeof(flat); p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>')
			depth--;
		else if (depth == 0)
			flat[n++] = *p == '.' ? '/' : (*p == ',' || *p == '\n') ? ' ' : *p;
	}
	flat[n] = '\0';
	memset(out, 0, sizeof(*out));
	enum { MODS, NAME, EXTENDS, IMPLEMENTS, DONE } state = MODS;
	char *save = NULL;
	for (char *tok = strtok_r(flat, " ", &save); tok && state != DONE; tok = strtok_r(NULL, " ", &save)) {
		if (state == MODS) {
			if (strcmp(tok, "class") == 0 || strcmp(tok, "interface") == 0) {
				out->is_interface = tok[0] == 'i';
				state = NAME;
			}
		} else if (state == NAME) {
			snprintf(out->name, sizeof(out->name), "%s", tok);
			state = EXTENDS;
		} else if (strcmp(tok, "extends") == 0) {
			state = EXTENDS;
		} else if (strcmp(tok, "implements") == 0) {
			state = IMPLEMENTS;
		} else if (strcmp(tok, "{") == 0 || strcmp(tok, "permits") == 0) {
			state = DONE;
		} else if (state == EXTENDS && !out->is_interface) {
			snprintf(out->super_name, sizeof(out->super_name), "%s", tok);
		} else {
			strings_add(&out->interfaces, tok, strlen(tok));
		}
	}
	if (!out->name[0])
		return false;
	/* javap leaves out "extends java.lang.Object"; interfaces have Object as super class. */
	if (!out->super_name[0] && strcmp(out->name, "java/lang/Object") != 0)
		strcpy(out->super_name, "java/lang/Object");
	return true;
}

/* Runs javap over names (internal form) on class path cp; one declaration per class. */
static size_t javap_run(const char *cp, strings *names, javap_class **out)
{
	const char *home = getenv("JAVA_HOME");
	char javap[1024];
	snprintf(javap, sizeof(javap), "%s/bin/javap", home && *home ? home : "/usr/lib/jvm/java-17-openjdk-amd64");
	if (!exists(javap))
		return 0;
	char listfile[] = "/tmp/jinst-javap-XXXXXX";
	int fd = mkstemp(listfile);
	if (fd < 0)
		return 0;
	FILE *lf = fdopen(fd, "w");
	for (size_t i = 0; i < names->count; i++) {
		for (const char *p = names->items[i]; *p; p++)
			fputc(*p == '/' ? '.' : *p, lf);
		fputc('\n', lf);
	}
	fclose(lf);
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "xargs -a '%s' '%s' -cp '%s'", listfile, javap, cp);
	FILE *p = popen(cmd, "r");
	*out = calloc(names->count + 1, sizeof(**out));
	size_t count = 0;
	char line[16384];
	while (p && fgets(line, sizeof(line), p)) {
		if (line[0] == ' ' || line[0] == '}' || strncmp(line, "Compiled from", 13) == 0 || !strchr(line, '{'))
			continue;
		if (count < names->count && javap_parse(line, &(*out)[count]))
			count++;
	}
	if (p)
		pclose(p);
	remove(listfile);
	return count;
}

static int test_javap(const char *path)
{
	if (!exists(path)) {
		printf("SKIP: %s missing\n", path);
		return SKIP;
	}
	jinst_classpath *cp;
	jinst_diag diag = {0};
	CHECK(jinst_classpath_new(&cp) == 0, "classpath_new");
	int rc = jinst_classpath_add(cp, path, &diag);
	CHECK(rc == 0, "add %s: %s", path, diag.message);
	if (rc)
		return check_report();

	/* The classes and their bytes, from the test's own reading of the entry. */
	strings names = {0};
	size_t same_bytes = 0;
	struct stat st;
	stat(path, &st);
	if (S_ISDIR(st.st_mode)) {
		strings files = {0};
		walk_classes(path, "", &files);
		for (size_t i = 0; i < files.count; i++) {
			size_t n = strlen(files.items[i]) - 6;
			if (strcmp(files.items[i], "module-info.class") == 0)
				continue;
			strings_add(&names, files.items[i], n);
			size_t want_len, got_len;
			uint8_t *want = test_load(path, files.items[i], &want_len), *got = NULL;
			rc = jinst_classpath_read(cp, names.items[names.count - 1], &got, &got_len, &diag);
			same_bytes += rc == 0 && got_len == want_len && memcmp(got, want, got_len) == 0;
			free(want);
			free(got);
		}
		strings_free(&files);
	} else {
		int err;
		zip_t *z = zip_open(path, ZIP_RDONLY, &err);
		CHECK(z, "libzip opens %s", path);
		for (zip_int64_t i = 0; z && i < zip_get_num_entries(z, 0); i++) {
			const char *e = zip_get_name(z, (zip_uint64_t)i, 0);
			size_t n = strlen(e);
			if (n < 7 || strcmp(e + n - 6, ".class") != 0 || strncmp(e, "META-INF/", 9) == 0 ||
			    strcmp(e, "module-info.class") == 0)
				continue;
			strings_add(&names, e, n - 6);
			zip_stat_t zs;
			zip_stat_index(z, (zip_uint64_t)i, 0, &zs);
			uint8_t *want = malloc(zs.size + 1), *got = NULL;
			zip_file_t *f = zip_fopen_index(z, (zip_uint64_t)i, 0);
			size_t got_len;
			bool read_ok = f && zip_fread(f, want, zs.size) == (zip_int64_t)zs.size;
			if (f)
				zip_fclose(f);
			rc = jinst_classpath_read(cp, names.items[names.count - 1], &got, &got_len, &diag);
			same_bytes += read_ok && rc == 0 && got_len == zs.size && memcmp(got, want, got_len) == 0;
			free(want);
			free(got);
		}
		if (z)
			zip_close(z);
	}
	CHECK(names.count > 0 && same_bytes == names.count, "%zu of %zu classes read back identical", same_bytes,
	      names.count);

	javap_class *want = NULL;
	size_t got = javap_run(path, &names, &want);
	if (got == 0) {
		printf("SKIP: no javap output\n");
		free(want);
		strings_free(&names);
		jinst_classpath_free(cp);
		return SKIP;
	}
	CHECK(got == names.count, "javap described %zu of %zu classes", got, names.count);
	jinst_hierarchy_cache *cache;
	jinst_classpath_cache(cp, &cache);
	jinst_hierarchy h;
	jinst_classpath_hierarchy(cp, &h);
	size_t agree = 0;
	for (size_t i = 0; i < got; i++) {
		const javap_class *w = &want[i];
		const jinst_class_info *info;
		rc = jinst_hierarchy_cache_query(cache, w->name, &info, &diag);
		CHECK(rc == 0, "query %s: %s", w->name, diag.message);
		if (rc)
			continue;
		bool ok = strcmp(info->super_name ? info->super_name : "", w->super_name) == 0 &&
		          ((info->access_flags & JINST_ACC_INTERFACE) != 0) == w->is_interface &&
		          info->interface_count == w->interfaces.count;
		for (size_t k = 0; ok && k < w->interfaces.count; k++)
			ok = strcmp(info->interfaces[k], w->interfaces.items[k]) == 0;
		const char *super_name;
		bool is_interface;
		ok = ok && h.lookup(h.ctx, w->name, &super_name, &is_interface) == 0 && super_name == info->super_name &&
		     is_interface == w->is_interface;
		CHECK(ok, "%s: super %s interface %d (%u interfaces); javap says super %s interface %d (%zu)", w->name,
		      info->super_name ? info->super_name : "-", (info->access_flags & JINST_ACC_INTERFACE) != 0,
		      info->interface_count, w->super_name, w->is_interface, w->interfaces.count);
		agree += ok;
	}
	printf("%s: %zu classes read back identical; the resolver agrees with javap on %zu of %zu\n", path, same_bytes,
	       agree, got);
	for (size_t i = 0; i < got; i++)
		strings_free(&want[i].interfaces);
	free(want);
	strings_free(&names);
	jinst_classpath_free(cp);
	return check_report();
}

/* ---- the resolver over a JDK, and over its module tree ---------------------------- */

/* Same name, super class, interfaces and access flags (or, when not
 * all_flags, the same ACC_INTERFACE bit). */
static bool same_info(const jinst_class_info *a, const jinst_class_info *b, bool all_flags)
{
	uint16_t mask = all_flags ? 0xFFFF : JINST_ACC_INTERFACE;
	if (strcmp(a->name, b->name) != 0 || (a->access_flags & mask) != (b->access_flags & mask) ||
	    a->interface_count != b->interface_count)
		return false;
	if ((a->super_name == NULL) != (b->super_name == NULL) ||
	    (a->super_name && strcmp(a->super_name, b->super_name) != 0))
		return false;
	for (uint16_t i = 0; i < a->interface_count; i++)
		if (strcmp(a->interfaces[i], b->interfaces[i]) != 0)
			return false;
	return true;
}

/* The class names of an image (no module-info), from its own location table. */
static int collect_names(void *ctx, const char *path)
{
	size_t n = strlen(path);
	if (n <= 6 || strcmp(path + n - 6, ".class") != 0)
		return 0;
	const char *name = strchr(path + 1, '/') + 1;
	if (strcmp(name, "module-info.class") != 0)
		strings_add(ctx, name, strlen(name) - 6);
	return 0;
}

static void image_names(const char *java_home, strings *names)
{
	char modules[4096];
	snprintf(modules, sizeof(modules), "%s/lib/modules", java_home);
	jinst_jimage *img;
	if (jinst_jimage_open(&img, modules, NULL) != 0)
		return;
	jinst_jimage_foreach(img, collect_names, names);
	jinst_jimage_close(img);
}

/* other: a second class path of the same JDK (its module tree, or a JDK
 * home with jmods only), which must give the same answers. The image holds
 * classes jlink made (SystemModules$*) that no jmod has: with
 * allow_missing, a few classes may be missing from other. */
static int test_jdk(const char *java_home, const char *other, bool allow_missing)
{
	char modules[4096];
	snprintf(modules, sizeof(modules), "%s/lib/modules", java_home);
	if (!exists(modules)) {
		printf("SKIP: %s missing\n", modules);
		return SKIP;
	}
	jinst_classpath *cp;
	jinst_diag diag = {0};
	CHECK(jinst_classpath_new(&cp) == 0, "classpath_new");
	CHECK(jinst_classpath_add_jdk(cp, java_home, &diag) == 0, "add_jdk %s: %s", java_home, diag.message);
	jinst_hierarchy h;
	CHECK(jinst_classpath_hierarchy(cp, &h) == 0, "hierarchy");

	/* ArrayList up to Object, one super class at a time. */
	static const char *const chain[] = {"java/util/ArrayList", "java/util/AbstractList",
	                                    "java/util/AbstractCollection", "java/lang/Object", NULL};
	for (int i = 0; chain[i]; i++) {
		const char *super_name = "unset";
		bool is_interface = true;
		int rc = h.lookup(h.ctx, chain[i], &super_name, &is_interface);
		CHECK(rc == 0 && !is_interface, "%s: rc %d interface %d", chain[i], rc, is_interface);
		CHECK(rc == 0 && (chain[i + 1] ? super_name && strcmp(super_name, chain[i + 1]) == 0 : super_name == NULL),
		      "super of %s is %s, not %s", chain[i], super_name ? super_name : "NULL",
		      chain[i + 1] ? chain[i + 1] : "NULL");
	}
	const char *super_name;
	bool is_interface = false;
	CHECK(h.lookup(h.ctx, "java/util/List", &super_name, &is_interface) == 0 && is_interface &&
	          super_name && strcmp(super_name, "java/lang/Object") == 0,
	      "java/util/List is an interface whose super class is Object");
	jinst_hierarchy_cache *cache;
	jinst_classpath_cache(cp, &cache);
	const jinst_class_info *info;
	CHECK(jinst_hierarchy_cache_query(cache, "java/util/ArrayList", &info, NULL) == 0 && info->interface_count >= 1 &&
	          strcmp(info->interfaces[0], "java/util/List") == 0,
	      "ArrayList implements List first");

	/* Unknown, twice: one read only. */
	jinst_hierarchy_stats before, after;
	jinst_hierarchy_cache_stats(cache, &before);
	CHECK(h.lookup(h.ctx, "jinst/NoSuchClass", &super_name, &is_interface) == JINST_EHIERARCHY, "unknown class");
	CHECK(jinst_hierarchy_cache_query(cache, "jinst/NoSuchClass", &info, &diag) == JINST_EHIERARCHY &&
	          info == NULL && strstr(diag.message, "jinst/NoSuchClass"),
	      "unknown class again: %s", diag.message);
	jinst_hierarchy_cache_stats(cache, &after);
	CHECK(after.reads == before.reads + 1 && after.unknown == before.unknown + 1 && after.queries == before.queries + 2,
	      "two queries of an unknown class: %llu reads, %llu unknown answers stored",
	      (unsigned long long)(after.reads - before.reads), (unsigned long long)(after.unknown - before.unknown));
	/* A known class asked again is not read again. */
	CHECK(h.lookup(h.ctx, "java/util/ArrayList", &super_name, &is_interface) == 0, "ArrayList again");
	jinst_hierarchy_cache_stats(cache, &before);
	CHECK(before.reads == after.reads, "a cached class is read again");

	/* The same JDK read another way gives the same answer for every class. */
	if (exists(other)) {
		jinst_classpath *tcp;
		CHECK(jinst_classpath_new(&tcp) == 0, "classpath_new");
		CHECK(jinst_classpath_add(tcp, other, &diag) == 0, "add %s: %s", other, diag.message);
		jinst_hierarchy_cache *tcache;
		jinst_classpath_cache(tcp, &tcache);
		strings names = {0};
		image_names(java_home, &names);
		size_t agree = 0, interfaces = 0, missing = 0;
		double t0 = now();
		for (size_t i = 0; i < names.count; i++) {
			const jinst_class_info *a, *b;
			int ra = jinst_hierarchy_cache_query(cache, names.items[i], &a, &diag);
			CHECK(ra == 0, "image: %s: %s", names.items[i], diag.message);
			int rb = jinst_hierarchy_cache_query(tcache, names.items[i], &b, &diag);
			if (rb != 0 && allow_missing) {
				printf("not in %s: %s\n", other, names.items[i]);
				missing++;
				continue;
			}
			CHECK(rb == 0, "%s: %s: %s", other, names.items[i], diag.message);
			if (ra == 0 && rb == 0) {
				bool all_flags = !(allow_missing && is_rewritten(names.items[i]));
				CHECK(same_info(a, b, all_flags), "%s: the image and %s disagree", names.items[i], other);
				agree += same_info(a, b, all_flags);
				interfaces += (a->access_flags & JINST_ACC_INTERFACE) != 0;
			}
		}
		CHECK(missing <= names.count / 100, "%zu classes missing from %s", missing, other);
		printf("%s and %s agree on %zu of %zu classes (%zu interfaces, %zu missing); %.2f s\n", java_home, other,
		       agree, names.count, interfaces, missing, now() - t0);
		strings_free(&names);
		jinst_classpath_free(tcp);
	} else {
		printf("no %s: the cross-check is skipped\n", other);
	}
	jinst_classpath_free(cp);
	return check_report();
}

/* ---- threads ---------------------------------------------------------------------- */

enum { THREADS = 4 };

typedef struct worker {
	jinst_hierarchy h;
	const strings *names;
	const char *const *want_super; /* from a one-thread pass */
	const bool *want_interface;
	size_t start;
	int passes;
	size_t bad;
} worker;

static void *worker_run(void *arg)
{
	worker *w = arg;
	size_t n = w->names->count;
	for (int pass = 0; pass < w->passes; pass++)
		for (size_t k = 0; k < n; k++) {
			size_t i = (w->start + k) % n;
			const char *super_name;
			bool is_interface;
			if (w->h.lookup(w->h.ctx, w->names->items[i], &super_name, &is_interface) != 0 ||
			    is_interface != w->want_interface[i] || (super_name == NULL) != (w->want_super[i] == NULL) ||
			    (super_name && strcmp(super_name, w->want_super[i]) != 0))
				w->bad++;
		}
	return NULL;
}

static double run_threads(jinst_hierarchy h, const strings *names, const char **want_super,
                          const bool *want_interface, int passes, size_t *bad)
{
	pthread_t t[THREADS];
	worker w[THREADS];
	double t0 = now();
	for (int i = 0; i < THREADS; i++) {
		w[i] = (worker){h, names, want_super, want_interface, names->count * (size_t)i / THREADS, passes, 0};
		pthread_create(&t[i], NULL, worker_run, &w[i]);
	}
	*bad = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		*bad += w[i].bad;
	}
	return now() - t0;
}

/* The classes of a jar (no META-INF/, no module-info). */
static void jar_names(const char *jar, strings *names)
{
	int err;
	zip_t *z = zip_open(jar, ZIP_RDONLY, &err);
	for (zip_int64_t i = 0; z && i < zip_get_num_entries(z, 0); i++) {
		const char *e = zip_get_name(z, (zip_uint64_t)i, 0);
		size_t n = strlen(e);
		if (n > 6 && strcmp(e + n - 6, ".class") == 0 && strncmp(e, "META-INF/", 9) != 0 &&
		    strcmp(e, "module-info.class") != 0)
			strings_add(names, e, n - 6);
	}
	if (z)
		zip_close(z);
}

/* Every class of a JDK (and of jar, first on the class path, when given)
 * looked up by 4 threads at once: cold, then warm. */
static int test_threads(const char *java_home, const char *jar)
{
	strings names = {0};
	if (jar && !exists(jar)) {
		printf("SKIP: %s missing\n", jar);
		return SKIP;
	}
	if (jar)
		jar_names(jar, &names);
	size_t jar_classes = names.count;
	image_names(java_home, &names);
	if (names.count == jar_classes) {
		printf("SKIP: no runtime image in %s\n", java_home);
		return SKIP;
	}
	/* The answers of one thread over its own class path. */
	jinst_classpath *ref;
	jinst_hierarchy rh;
	jinst_classpath_new(&ref);
	CHECK(!jar || jinst_classpath_add(ref, jar, NULL) == 0, "add %s", jar);
	CHECK(jinst_classpath_add_jdk(ref, java_home, NULL) == 0, "add_jdk");
	jinst_classpath_hierarchy(ref, &rh);
	const char **want_super = calloc(names.count, sizeof(*want_super));
	bool *want_interface = calloc(names.count, sizeof(*want_interface));
	double t0 = now();
	size_t known = 0;
	for (size_t i = 0; i < names.count; i++)
		known += rh.lookup(rh.ctx, names.items[i], &want_super[i], &want_interface[i]) == 0;
	double cold1 = now() - t0;
	CHECK(known == names.count, "one thread resolves %zu of %zu classes", known, names.count);
	t0 = now();
	for (int pass = 0; pass < 5; pass++)
		for (size_t i = 0; i < names.count; i++) {
			const char *super_name;
			bool is_interface;
			known -= rh.lookup(rh.ctx, names.items[i], &super_name, &is_interface) != 0 || super_name != want_super[i];
		}
	double warm1 = now() - t0;
	CHECK(known == names.count, "cached answers change");

	jinst_classpath *cp;
	jinst_hierarchy h;
	jinst_classpath_new(&cp);
	CHECK(!jar || jinst_classpath_add(cp, jar, NULL) == 0, "add %s", jar);
	CHECK(jinst_classpath_add_jdk(cp, java_home, NULL) == 0, "add_jdk");
	jinst_classpath_hierarchy(cp, &h);
	size_t bad;
	double cold = run_threads(h, &names, want_super, want_interface, 1, &bad);
	CHECK(bad == 0, "%zu answers differ from one thread's (cold)", bad);
	const int passes = 5;
	double warm = run_threads(h, &names, want_super, want_interface, passes, &bad);
	CHECK(bad == 0, "%zu answers differ from one thread's (warm)", bad);
	jinst_hierarchy_cache *cache;
	jinst_classpath_cache(cp, &cache);
	jinst_hierarchy_stats st;
	jinst_hierarchy_cache_stats(cache, &st);
	CHECK(st.classes == names.count && st.unknown == 0, "%llu classes stored for %zu names",
	      (unsigned long long)st.classes, names.count);
	CHECK(st.reads >= names.count && st.reads <= names.count * THREADS, "%llu reads", (unsigned long long)st.reads);
	if (jar)
		printf("%zu classes of %s first, then ", jar_classes, jar);
	printf("%zu classes: one thread, cold: %.2f s (%.0f lookups/s), warm: %.0f lookups/s; %d threads, cold: %.2f s, "
	       "%llu reads (%.0f lookups/s), warm: %.0f lookups/s\n",
	       names.count, cold1, names.count / cold1, 5 * names.count / warm1, THREADS, cold, (unsigned long long)st.reads,
	       THREADS * names.count / cold, THREADS * passes * names.count / warm);
	free(want_super);
	free(want_interface);
	jinst_classpath_free(cp);
	jinst_classpath_free(ref);
	strings_free(&names);
	return check_report();
}

/* ---- errors ---------------------------------------------------------------------- */

static void write_file(const char *path, const void *bytes, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(bytes, 1, len, f) != len) {
		printf("FAIL cannot write %s\n", path);
		exit(1);
	}
	fclose(f);
}

static int test_errors(const char *data_classes, const char *work)
{
	jinst_classpath *cp;
	jinst_diag diag = {0};
	CHECK(jinst_classpath_new(&cp) == 0, "classpath_new");
	char path[4096];
	snprintf(path, sizeof(path), "%s/no/such/file.jar", work);
	CHECK(jinst_classpath_add(cp, path, &diag) == JINST_EIO && strstr(diag.message, path),
	      "missing jar: %s", diag.message);
	CHECK(jinst_classpath_add_jdk(cp, work, &diag) == JINST_EIO && strstr(diag.message, work),
	      "not a JDK: %s", diag.message);

	/* A folder holding: a text file posing as a jar, a truncated class, and
	 * the bytes of one class under another's name. */
	mkdir(work, 0777);
	snprintf(path, sizeof(path), "%s/cp", work);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/cp/bad", work);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/text.jar", work);
	write_file(path, "not a jar\n", 10);
	CHECK(jinst_classpath_add(cp, path, &diag) == JINST_EUNSUPPORTED && strstr(diag.message, path),
	      "text file: %s", diag.message);
	snprintf(path, sizeof(path), "%s/broken.jar", work);
	write_file(path, "PK\3\4 and nothing of a zip", 26);
	CHECK(jinst_classpath_add(cp, path, &diag) == JINST_EIO && strstr(diag.message, path),
	      "broken zip: %s", diag.message);
	size_t len;
	uint8_t *features = test_load(data_classes, "main/jinsttest/Features.class", &len);
	snprintf(path, sizeof(path), "%s/cp/bad/Truncated.class", work);
	write_file(path, features, len / 2);
	snprintf(path, sizeof(path), "%s/cp/bad/Renamed.class", work);
	write_file(path, features, len);
	free(features);
	snprintf(path, sizeof(path), "%s/cp", work);
	CHECK(jinst_classpath_add(cp, path, &diag) == 0, "add %s: %s", path, diag.message);
	snprintf(path, sizeof(path), "%s/main", data_classes);
	CHECK(jinst_classpath_add(cp, path, &diag) == 0, "add %s: %s", path, diag.message);
	CHECK(cp != NULL, "class path");

	uint8_t *bytes;
	CHECK(jinst_classpath_read(cp, "../cp/bad/Renamed", &bytes, &len, &diag) == JINST_ENOTFOUND,
	      "a name that climbs out of its folder");
	CHECK(jinst_classpath_read(cp, "/etc/passwd", &bytes, &len, &diag) == JINST_ENOTFOUND, "an absolute name");
	CHECK(jinst_classpath_read(cp, "jinsttest/Features", &bytes, &len, &diag) == 0, "Features: %s", diag.message);
	free(bytes);

	jinst_hierarchy_cache *cache;
	jinst_classpath_cache(cp, &cache);
	const jinst_class_info *info;
	CHECK(jinst_hierarchy_cache_query(cache, "bad/Truncated", &info, &diag) == JINST_EHIERARCHY &&
	          strstr(diag.message, "parse"),
	      "truncated class: %s", diag.message);
	diag = (jinst_diag){0};
	CHECK(jinst_hierarchy_cache_query(cache, "bad/Renamed", &info, &diag) == JINST_EHIERARCHY &&
	          strstr(diag.message, "another class"),
	      "renamed class: %s", diag.message);
	diag = (jinst_diag){0};
	CHECK(jinst_hierarchy_cache_query(cache, "jinsttest/Features", &info, &diag) == 0 && info->super_name &&
	          strcmp(info->name, "jinsttest/Features") == 0,
	      "Features: %s", diag.message);
	jinst_hierarchy_stats st;
	jinst_hierarchy_cache_stats(cache, &st);
	CHECK(st.classes == 1 && st.unknown == 2 && st.reads == 3, "%llu classes, %llu unknown, %llu reads",
	      (unsigned long long)st.classes, (unsigned long long)st.unknown, (unsigned long long)st.reads);
	/* Asked again: stored answers, no read. */
	CHECK(jinst_hierarchy_cache_query(cache, "bad/Truncated", &info, NULL) == JINST_EHIERARCHY, "truncated again");
	jinst_hierarchy_cache_stats(cache, &st);
	CHECK(st.reads == 3, "%llu reads after asking again", (unsigned long long)st.reads);
	jinst_classpath_free(cp);
	return check_report();
}

/* ---- frame inference through the resolver ---------------------------------------- */

typedef struct infer_scan {
	jinst_classpath *cp;
	const jinst_hierarchy *h;
	size_t classes, methods, ok, hierarchy, other;
} infer_scan;

static int infer_class(void *ctx, const char *path)
{
	infer_scan *s = ctx;
	size_t n = strlen(path);
	if (strncmp(path, "/java.base/", 11) != 0 || n < 17 || strcmp(path + n - 6, ".class") != 0 ||
	    strcmp(path, "/java.base/module-info.class") == 0)
		return 0;
	char name[2048];
	snprintf(name, sizeof(name), "%.*s", (int)(n - 17), path + 11);
	uint8_t *bytes;
	size_t len;
	jinst_class *cls;
	CHECK(jinst_classpath_read(s->cp, name, &bytes, &len, NULL) == 0, "read %s", name);
	if (jinst_class_parse(&cls, bytes, len, NULL, NULL, NULL) != 0) {
		CHECK(false, "parse %s", name);
		free(bytes);
		return 0;
	}
	s->classes++;
	for (uint16_t i = 0; i < jinst_class_method_count(cls); i++) {
		jinst_member *m = jinst_class_method(cls, i);
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		void *code;
		if (!a || jinst_attr_decode(cls, a, &code, NULL) != 0)
			continue;
		s->methods++;
		jinst_full_frame *frames;
		uint32_t count;
		jinst_diag diag = {0};
		int rc = jinst_frames_infer(cls, m, code, s->h, &frames, &count, &diag);
		s->ok += rc == 0;
		s->hierarchy += rc == JINST_EHIERARCHY;
		s->other += rc != 0 && rc != JINST_EHIERARCHY;
		if (s->h && rc == JINST_EHIERARCHY)
			CHECK(false, "%s: %s", name, diag.message);
	}
	jinst_class_free(cls);
	free(bytes);
	return 0;
}

/* Frames for every method of java.base: without a resolver the merges of
 * object types fail with EHIERARCHY; through the class path's, none does. */
static int test_infer(const char *java_home)
{
	char modules[4096];
	snprintf(modules, sizeof(modules), "%s/lib/modules", java_home);
	jinst_jimage *img;
	if (!exists(modules) || jinst_jimage_open(&img, modules, NULL) != 0) {
		printf("SKIP: %s missing\n", modules);
		return SKIP;
	}
	jinst_classpath *cp;
	jinst_classpath_new(&cp);
	CHECK(jinst_classpath_add_jdk(cp, java_home, NULL) == 0, "add_jdk");
	jinst_hierarchy h;
	jinst_classpath_hierarchy(cp, &h);
	infer_scan without = {cp, NULL, 0, 0, 0, 0, 0}, with = {cp, &h, 0, 0, 0, 0, 0};
	jinst_jimage_foreach(img, infer_class, &without);
	double t0 = now();
	jinst_jimage_foreach(img, infer_class, &with);
	double t = now() - t0;
	CHECK(without.hierarchy > 0, "no method of java.base needs the hierarchy?");
	CHECK(with.hierarchy == 0 && with.ok == without.ok + without.hierarchy,
	      "with the resolver: %zu ok, %zu EHIERARCHY", with.ok, with.hierarchy);
	jinst_hierarchy_cache *cache;
	jinst_classpath_cache(cp, &cache);
	jinst_hierarchy_stats st;
	jinst_hierarchy_cache_stats(cache, &st);
	printf("java.base: %zu classes, %zu methods; without a resolver %zu infer and %zu need the hierarchy; "
	       "with it %zu infer (%zu fail otherwise), %.2f s, %llu lookups of %llu classes\n",
	       with.classes, with.methods, without.ok, without.hierarchy, with.ok, with.other, t,
	       (unsigned long long)st.queries, (unsigned long long)st.classes);
	jinst_classpath_free(cp);
	jinst_jimage_close(img);
	return check_report();
}

/* ---- images jlink compressed ------------------------------------------------------ */

/* WORK/NAME/lib/modules made by JAVA_HOME's jlink for java.base with
 * --compress=LEVEL (kept for later runs); NULL when jlink fails. */
static const char *jlink_image(const char *java_home, const char *work, const char *name, int level, char *out,
                               size_t size)
{
	snprintf(out, size, "%s/%s/lib/modules", work, name);
	if (exists(out))
		return out;
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s' && '%s/bin/jlink' --compress=%d --add-modules java.base --output '%s/%s'",
	         work, name, java_home, level, work, name);
	return system(cmd) == 0 && exists(out) ? out : NULL;
}

typedef struct image_pair {
	const jinst_jimage *plain, *packed;
	size_t resources, identical;
} image_pair;

static int compare_resource(void *ctx, const char *path)
{
	image_pair *p = ctx;
	/* /packages/ and /modules/ hold offsets in the image's own strings. */
	if ((strncmp(path, "/packages", 9) == 0 && (path[9] == '/' || !path[9])) ||
	    (strncmp(path, "/modules", 8) == 0 && (path[8] == '/' || !path[8])))
		return 0;
	const uint8_t *want;
	size_t want_len, len;
	uint8_t *got = NULL;
	jinst_diag diag = {0};
	p->resources++;
	CHECK(jinst_jimage_find(p->plain, path, &want, &want_len, &diag) == 0, "plain image: %s: %s", path, diag.message);
	int rc = jinst_jimage_read(p->packed, path, &got, &len, &diag);
	CHECK(rc == 0, "compressed image: %s: %s", path, diag.message);
	bool same = rc == 0 && len == want_len && memcmp(got, want, len) == 0;
	CHECK(rc != 0 || same, "%s: other bytes once decompressed", path);
	p->identical += same;
	free(got);
	return 0;
}

/* java.base linked three times: stored, --compress=2 (zip) and
 * --compress=1 (compact-cp). Every resource of the compressed images reads
 * back as the stored one (but the image's own /packages and /modules). */
static int test_compressed(const char *java_home, const char *work)
{
	char jlink[4096], p0[4096], p1[4096], p2[4096];
	snprintf(jlink, sizeof(jlink), "%s/bin/jlink", java_home);
	snprintf(p0, sizeof(p0), "%s/jmods/java.base.jmod", java_home);
	if (!exists(jlink) || !exists(p0)) {
		printf("SKIP: no jlink or jmods in %s\n", java_home);
		return SKIP;
	}
	mkdir(work, 0777);
	const char *plain = jlink_image(java_home, work, "rt0", 0, p0, sizeof(p0));
	const char *cpool = jlink_image(java_home, work, "rt1", 1, p1, sizeof(p1));
	const char *zipped = jlink_image(java_home, work, "rt2", 2, p2, sizeof(p2));
	CHECK(plain && cpool && zipped, "jlink made the three images in %s", work);
	if (!plain || !cpool || !zipped)
		return check_report();
	jinst_jimage *img0 = NULL, *img1 = NULL, *img2 = NULL;
	CHECK(jinst_jimage_open(&img0, plain, NULL) == 0 && jinst_jimage_open(&img1, cpool, NULL) == 0 &&
	          jinst_jimage_open(&img2, zipped, NULL) == 0,
	      "open the images");
	if (!img0 || !img1 || !img2) {
		jinst_jimage_close(img0);
		jinst_jimage_close(img1);
		jinst_jimage_close(img2);
		return check_report();
	}
	image_pair zip = {img0, img2, 0, 0}, cp = {img0, img1, 0, 0};
	jinst_jimage_foreach(img0, compare_resource, &zip);
	CHECK(zip.identical == zip.resources && zip.resources > 5000, "zip: %zu of %zu resources identical",
	      zip.identical, zip.resources);
	jinst_jimage_foreach(img0, compare_resource, &cp);
	CHECK(cp.identical == cp.resources && cp.resources > 5000, "compact-cp: %zu of %zu resources identical",
	      cp.identical, cp.resources);
	/* Through a class path: the resolver reads the compressed images. */
	jinst_classpath *path;
	jinst_classpath_new(&path);
	jinst_diag diag = {0};
	CHECK(jinst_classpath_add(path, cpool, &diag) == 0, "add %s: %s", cpool, diag.message);
	CHECK(jinst_classpath_add(path, zipped, &diag) == 0, "add %s: %s", zipped, diag.message);
	jinst_hierarchy h;
	jinst_classpath_hierarchy(path, &h);
	const char *super_name = NULL;
	bool is_interface = true;
	CHECK(h.lookup(h.ctx, "java/util/ArrayList", &super_name, &is_interface) == 0 && !is_interface && super_name &&
	          strcmp(super_name, "java/util/AbstractList") == 0,
	      "ArrayList from the zip image");
	/* Both compressed images again with 500 bytes of their contents
	 * changed: every read fails cleanly or gives the size the image says. */
	const char *const packed[] = {cpool, zipped};
	size_t damaged_ok[2] = {0, 0}, damaged_failed[2] = {0, 0};
	for (int k = 0; k < 2; k++) {
		size_t size;
		uint8_t *bytes = test_read_file(packed[k], &size);
		uint32_t head[7];
		memcpy(head, bytes, sizeof(head));
		size_t index = 28 + 8 * (size_t)head[4] + head[5] + head[6];
		uint32_t seed = 777u + (uint32_t)k;
		for (int i = 0; i < 500 && index < size; i++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = index + ((size_t)seed << 7 ^ seed >> 9) % (size - index);
			seed = seed * 1103515245u + 12345u;
			bytes[at] ^= (uint8_t)(1u << (seed >> 13) % 8);
		}
		char damaged[4200];
		snprintf(damaged, sizeof(damaged), "%s/damaged-%d.jimage", work, k);
		FILE *f = fopen(damaged, "wb");
		CHECK(f && fwrite(bytes, 1, size, f) == size, "write %s", damaged);
		if (f)
			fclose(f);
		free(bytes);
		jinst_jimage *img;
		if (jinst_jimage_open(&img, damaged, NULL) != 0) {
			CHECK(false, "open %s", damaged);
			continue;
		}
		strings paths = {0};
		jinst_jimage_foreach(img0, collect_classes, &paths);
		for (size_t i = 0; i < paths.count; i++) {
			uint8_t *got = NULL;
			size_t len = 0, want_len;
			const uint8_t *want;
			int rc = jinst_jimage_read(img, paths.items[i], &got, &len, NULL);
			jinst_jimage_find(img0, paths.items[i], &want, &want_len, NULL);
			CHECK(rc != 0 || len == want_len, "%s: %zu bytes, not %zu", paths.items[i], len, want_len);
			damaged_ok[k] += rc == 0;
			damaged_failed[k] += rc != 0;
			free(got);
		}
		strings_free(&paths);
		jinst_jimage_close(img);
	}
	printf("with 500 bytes changed: compact-cp %zu classes read, %zu refused; zip %zu read, %zu refused\n",
	       damaged_ok[0], damaged_failed[0], damaged_ok[1], damaged_failed[1]);
	CHECK(damaged_failed[1] > 0, "no damage seen in the zip image");
	printf("java.base linked with --compress=2 (zip): %zu of %zu resources read back identical; "
	       "with --compress=1 (compact-cp): %zu of %zu\n",
	       zip.identical, zip.resources, cp.identical, cp.resources);
	jinst_classpath_free(path);
	jinst_jimage_close(img0);
	jinst_jimage_close(img1);
	jinst_jimage_close(img2);
	return check_report();
}

/* ---- damaged images ---------------------------------------------------------------- */

static int count_resource(void *ctx, const char *path)
{
	(void)path;
	++*(size_t *)ctx;
	return 0;
}

/* What a reader does with an image: list it, find the module of a package,
 * read a few classes. Returns how many reads succeeded. */
static size_t exercise_image(const jinst_jimage *img, size_t *listed)
{
	static const char *const paths[] = {"/java.base/java/lang/Object.class", "/java.base/java/util/ArrayList.class",
	                                    "/java.desktop/java/awt/Frame.class", "/packages/java.lang"};
	*listed = 0;
	jinst_jimage_foreach(img, count_resource, listed);
	jinst_jimage_package_module(img, "java/lang");
	jinst_jimage_package_module(img, "java/util/concurrent");
	size_t ok = 0;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		uint8_t *bytes;
		size_t len;
		const uint8_t *borrowed;
		if (jinst_jimage_read(img, paths[i], &bytes, &len, NULL) == 0) {
			ok++;
			free(bytes);
		}
		jinst_jimage_find(img, paths[i], &borrowed, &len, NULL);
	}
	return ok;
}

/* The index of a real image (header, tables, strings) and the first MB of
 * its contents, then the same with bytes changed at random in the index:
 * what lies in the file reads as in the whole image, what lies past the end
 * is refused, and every read stays inside the file (ASan builds check). */
static int test_damaged(const char *modules, const char *work)
{
	/* The header, the index and the first MB of contents. */
	FILE *in = fopen(modules, "rb");
	uint32_t h[7];
	if (!in || fread(h, 4, 7, in) != 7 || h[0] != 0xCAFEDADAu) {
		printf("SKIP: no little-endian image at %s\n", modules);
		if (in)
			fclose(in);
		return SKIP;
	}
	size_t index = 28 + 8 * (size_t)h[4] + h[5] + h[6], keep = index + (1u << 20);
	uint8_t *all = malloc(keep);
	rewind(in);
	keep = fread(all, 1, keep, in);
	fclose(in);
	mkdir(work, 0777);
	char path[4096];
	snprintf(path, sizeof(path), "%s/damaged.jimage", work);

	FILE *f = fopen(path, "wb");
	fwrite(all, 1, keep, f);
	fclose(f);
	jinst_jimage *img;
	jinst_diag diag = {0};
	CHECK(jinst_jimage_open(&img, path, &diag) == 0, "open the cut image: %s", diag.message);
	size_t listed = 0;
	jinst_jimage *whole;
	if (img && jinst_jimage_open(&whole, modules, NULL) == 0) {
		CHECK(exercise_image(img, &listed) < 4, "reads past the end of a cut image");
		CHECK(listed == h[4], "%zu resources listed, the header says %u", listed, h[4]);
		/* Each class of java/lang: read whole when in the kept part, refused when not. */
		size_t in_part = 0, past = 0;
		strings names = {0};
		jinst_jimage_foreach(whole, collect_classes, &names);
		for (size_t i = 0; i < names.count; i++) {
			if (strncmp(names.items[i], "/java.base/java/lang/", 21) != 0)
				continue;
			const uint8_t *want;
			size_t want_len, len;
			uint8_t *got = NULL;
			CHECK(jinst_jimage_find(whole, names.items[i], &want, &want_len, NULL) == 0, "%s", names.items[i]);
			diag = (jinst_diag){0};
			int rc = jinst_jimage_read(img, names.items[i], &got, &len, &diag);
			if (rc == 0) {
				CHECK(len == want_len && memcmp(got, want, len) == 0, "%s: other bytes", names.items[i]);
				in_part++;
			} else {
				CHECK(rc == JINST_EMALFORMED && strstr(diag.message, "past the end"), "%s: %s", names.items[i],
				      diag.message);
				past++;
			}
			free(got);
		}
		CHECK(in_part > 0 && past > 0, "java/lang: %zu classes inside the cut image, %zu past its end", in_part,
		      past);
		strings_free(&names);
		jinst_jimage_close(whole);
	}
	jinst_jimage_close(img);
	snprintf(path, sizeof(path), "%s/short.jimage", work);
	f = fopen(path, "wb");
	fwrite(all, 1, index / 2, f);
	fclose(f);
	diag = (jinst_diag){0};
	CHECK(jinst_jimage_open(&img, path, &diag) == JINST_EUNSUPPORTED && strstr(diag.message, "past the end"),
	      "an image cut inside its index: %s", diag.message);

	uint8_t *mutant = malloc(keep);
	size_t opened = 0, reads = 0;
	uint32_t seed = 12345;
	const int rounds = 200;
	snprintf(path, sizeof(path), "%s/mutant.jimage", work);
	for (int r = 0; r < rounds; r++) {
		memcpy(mutant, all, keep);
		int flips = 1 + r % 16;
		for (int k = 0; k < flips; k++) {
			seed = seed * 1103515245u + 12345u;
			/* Mostly the tables and strings; now and then the header. */
			size_t at = (r % 10 == 0) ? (seed >> 8) % 28 : 28 + (seed >> 8) % (index - 28);
			seed = seed * 1103515245u + 12345u;
			mutant[at] = (uint8_t)(seed >> 16);
		}
		f = fopen(path, "wb");
		fwrite(mutant, 1, keep, f);
		fclose(f);
		if (jinst_jimage_open(&img, path, NULL) != 0)
			continue;
		opened++;
		reads += exercise_image(img, &listed);
		jinst_jimage_close(img);
	}
	printf("%s cut to %zu bytes (index and 1 MB); %d damaged copies: %zu opened, %zu reads "
	       "inside the file, no read outside it\n",
	       modules, keep, rounds, opened, reads);
	free(mutant);
	free(all);
	return check_report();
}

/* ---- multi-release jars ------------------------------------------------------------ */

static void zip_put(zip_t *z, const char *name, const void *bytes, size_t len)
{
	zip_source_t *src = zip_source_buffer(z, bytes, len, 0);
	if (!src || zip_file_add(z, name, src, ZIP_FL_OVERWRITE) < 0) {
		printf("FAIL cannot add %s: %s\n", name, zip_strerror(z));
		exit(1);
	}
}

/* A jar whose jinsttest/Features has a Java 11 version (the bytes of
 * Shape, so the two are told apart): release 0 and 9 read the base entry,
 * 11 and 17 the versioned one; without "Multi-Release: true" the versions
 * are never read. */
static int test_multi_release(const char *data_classes, const char *parent)
{
	size_t base_len, v11_len;
	uint8_t *base = test_load(data_classes, "main/jinsttest/Features.class", &base_len);
	uint8_t *v11 = test_load(data_classes, "main/jinsttest/Shape.class", &v11_len);
	/* A folder of their own: the list test below takes every jar in it. */
	char work[2048];
	mkdir(parent, 0777);
	snprintf(work, sizeof(work), "%.2000s/multirelease", parent);
	mkdir(work, 0777);
	static const char *const manifests[] = {"Manifest-Version: 1.0\r\nMulti-Release: true\r\n\r\n",
	                                        "Manifest-Version: 1.0\r\n\r\n"};
	for (int plain = 0; plain < 2; plain++) {
		char jar[4096];
		snprintf(jar, sizeof(jar), "%s/%s.jar", work, plain ? "plain" : "multi");
		remove(jar);
		int err;
		zip_t *z = zip_open(jar, ZIP_CREATE | ZIP_TRUNCATE, &err);
		if (!z) {
			printf("FAIL cannot create %s\n", jar);
			return 1;
		}
		zip_put(z, "META-INF/MANIFEST.MF", manifests[plain], strlen(manifests[plain]));
		zip_put(z, "jinsttest/Features.class", base, base_len);
		zip_put(z, "META-INF/versions/11/jinsttest/Features.class", v11, v11_len);
		if (zip_close(z) != 0) {
			printf("FAIL cannot write %s\n", jar);
			return 1;
		}
		static const int releases[] = {0, 9, 11, 17};
		for (int r = 0; r < 4; r++) {
			jinst_classpath *cp;
			jinst_diag diag = {0};
			jinst_classpath_new(&cp);
			jinst_classpath_set_release(cp, releases[r]);
			CHECK(jinst_classpath_add(cp, jar, &diag) == 0, "add %s: %s", jar, diag.message);
			uint8_t *got = NULL;
			size_t len = 0;
			CHECK(jinst_classpath_read(cp, "jinsttest/Features", &got, &len, &diag) == 0, "read: %s", diag.message);
			bool versioned = !plain && releases[r] >= 11;
			CHECK(versioned ? len == v11_len && memcmp(got, v11, len) == 0
			                : len == base_len && memcmp(got, base, len) == 0,
			      "%s, release %d: the %s entry expected", jar, releases[r], versioned ? "versioned" : "base");
			free(got);
			jinst_classpath_free(cp);
		}
	}
	/* "WORK/" "*": both jars in name order, multi.jar first. */
	char list[4200];
	snprintf(list, sizeof(list), "%s/nothing.txt:%s/*", work, work);
	jinst_classpath *cp;
	jinst_diag diag = {0};
	jinst_classpath_new(&cp);
	jinst_classpath_set_release(cp, 17);
	CHECK(jinst_classpath_add_list(cp, list, &diag) == JINST_EIO && strstr(diag.message, "nothing.txt"),
	      "a missing first entry stops the list: %s", diag.message);
	jinst_classpath_free(cp);
	snprintf(list, sizeof(list), "%s/*", work);
	jinst_classpath_new(&cp);
	jinst_classpath_set_release(cp, 17);
	CHECK(jinst_classpath_add_list(cp, list, &diag) == 0, "add %s: %s", list, diag.message);
	uint8_t *got = NULL;
	size_t len = 0;
	CHECK(jinst_classpath_read(cp, "jinsttest/Features", &got, &len, &diag) == 0 && len == v11_len &&
	          memcmp(got, v11, len) == 0,
	      "%s: multi.jar's versioned class first", list);
	free(got);
	jinst_classpath_free(cp);
	snprintf(list, sizeof(list), "%s/no-such-folder/*", work);
	jinst_classpath_new(&cp);
	CHECK(jinst_classpath_add_list(cp, list, &diag) == JINST_EIO && strstr(diag.message, "no-such-folder"),
	      "%s: %s", list, diag.message);
	jinst_classpath_free(cp);
	free(base);
	free(v11);
	return check_report();
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "image") == 0)
		return test_image(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "jmod") == 0)
		return test_jmod(argv[2], argv[3]);
	if (argc >= 3 && strcmp(argv[1], "javap") == 0)
		return test_javap(argv[2]);
	if (argc >= 4 && strcmp(argv[1], "jdk") == 0)
		return test_jdk(argv[2], argv[3], false);
	if (argc >= 4 && strcmp(argv[1], "jmods") == 0) {
		/* A JDK home with jmods/ only: a link to the real one's. */
		char jmods[4096], home[4096];
		snprintf(jmods, sizeof(jmods), "%s/jmods", argv[2]);
		if (!exists(jmods)) {
			printf("SKIP: %s missing\n", jmods);
			return SKIP;
		}
		mkdir(argv[3], 0777);
		snprintf(home, sizeof(home), "%s/jdk", argv[3]);
		mkdir(home, 0777);
		char link[8192];
		snprintf(link, sizeof(link), "%s/jmods", home);
		if (!exists(link) && symlink(jmods, link) != 0) {
			printf("FAIL cannot link %s to %s: %s\n", link, jmods, strerror(errno));
			return 1;
		}
		return test_jdk(argv[2], home, true);
	}
	if (argc >= 3 && strcmp(argv[1], "threads") == 0)
		return test_threads(argv[2], argc >= 4 ? argv[3] : NULL);
	if (argc >= 4 && strcmp(argv[1], "damaged") == 0)
		return test_damaged(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "compressed") == 0)
		return test_compressed(argv[2], argv[3]);
	if (argc >= 3 && strcmp(argv[1], "infer") == 0)
		return test_infer(argv[2]);
	if (argc >= 4 && strcmp(argv[1], "multirelease") == 0)
		return test_multi_release(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "errors") == 0)
		return test_errors(argv[2], argv[3]);
	fprintf(stderr, "usage: test_classpath image|jmod|javap|jdk|threads|errors ARGS\n");
	return 2;
}
