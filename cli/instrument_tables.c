/*
 * What jinst instrument adds to its outputs beside the classes
 * (instrument.c's header says why): each output's method tables, at its
 * root and at every other place a loader reads classes from (a nested
 * archive, WEB-INF/classes/, BOOT-INF/classes/), and the run's class
 * beside every package it instrumented. The mirror asks for them through
 * its extra-entries hooks once an output's classes are all instrumented.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "instrument_internal.h"
#include "jinst/report.h"

/* ---- the method table ------------------------------------------------------- */

static char *concat(const char *a, size_t n, const char *b, const char *c);

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A row of the table when the id's class is one of this output's. */
static int method_row(void *ctx, uint32_t id, const char **cls, const char **name, const char **desc, int *timed)
{
	offline *O = ctx;
	jinst_method_info mi;
	if (jinst_instrument_method_info(O->ins, id, &mi))
		return -1;
	/* Ids come class by class: one search per class, not per method (a
	 * search per id and output was a sixth of the time of the corpus's
	 * 100 jars under --trace, on the writer's thread). */
	if (O->last_class != mi.class_name && (!O->last_class || strcmp(O->last_class, mi.class_name) != 0)) {
		O->last_class = mi.class_name;
		O->last_chosen = bsearch(&mi.class_name, O->chosen, O->nchosen, sizeof(*O->chosen), by_name) != NULL;
	}
	if (!O->last_chosen)
		return -1;
	*cls = mi.class_name;
	*name = mi.name;
	*desc = mi.descriptor;
	*timed = O->timed ? O->timed[id] : mi.timed;
	return 0;
}

/* Whether a class from source is on the class path with input: a jar's
 * classes (nested jars' too) are the jar's; a folder's, its class files.
 * The writer calls the hook for each input and for each archive inside a
 * folder input, which goes on a class path by itself. */
static bool belongs(const char *source, const char *input, bool folder)
{
	if (!folder)
		return strcmp(source, input) == 0;
	size_t n = strlen(input), k = strlen(source);
	return strncmp(source, input, n) == 0 && (input[n - 1] == '/' || source[n] == '/') && k > 6 &&
	       strcmp(source + k - 6, ".class") == 0;
}

/* The names of the classes seen that keep(c, arg) takes, sorted, into
 * O->chosen. */
static int choose_where(offline *O, bool (*keep)(const seen *c, const void *arg), const void *arg)
{
	O->nchosen = 0;
	O->last_class = NULL;
	/* The pool may be noting the next input's classes meanwhile. */
	pthread_mutex_lock(&O->lock);
	O->chosen = malloc((O->nseen ? O->nseen : 1) * sizeof(*O->chosen));
	if (!O->chosen) {
		pthread_mutex_unlock(&O->lock);
		return -1;
	}
	for (size_t i = 0; i < O->nseen; i++)
		if (keep(&O->seen[i], arg))
			O->chosen[O->nchosen++] = O->seen[i].name;
	pthread_mutex_unlock(&O->lock);
	qsort(O->chosen, O->nchosen, sizeof(*O->chosen), by_name);
	return 0;
}

struct of_input {
	const char *input;
	bool folder;
};

static bool of_input(const seen *c, const void *arg)
{
	const struct of_input *a = arg;
	return belongs(c->source, a->input, a->folder);
}

/* The names of the classes of input, sorted, into O->chosen. */
static int choose(offline *O, const char *input)
{
	struct stat st;
	struct of_input a = {input, stat(input, &st) == 0 && S_ISDIR(st.st_mode)};
	return choose_where(O, of_input, &a);
}

struct of_root {
	const char *prefix, *root;
	size_t k, r;
	bool deep;
};

static bool of_root(const seen *c, const void *arg)
{
	const struct of_root *a = arg;
	return !strncmp(c->job, a->prefix, a->k) && !strncmp(c->job + a->k, a->root, a->r) &&
	       (a->deep || !strchr(c->job + a->k, '!'));
}

/* The classes whose jobs start with prefix then root, sorted, into
 * O->chosen: deep, those of the archives in there too; else only its own
 * entries (no '!' after prefix). */
static int choose_jobs(offline *O, const char *prefix, const char *root, bool deep)
{
	struct of_root a = {prefix, root, strlen(prefix), strlen(root), deep};
	return choose_where(O, of_root, &a);
}

/* The table of the classes in O->chosen, as the entry root + the table's
 * name (freeing O->chosen); *e NULL when none. */
static int table_of_chosen(offline *O, const char *root, mirror_extra **e);

/* The method table of input's output, where jinst-runtime.jar looks for
 * it (class loader resources), with the ids of the methods of the classes
 * this output holds, relative to the run. Ids are the run's: a class that
 * two inputs hold has the same ids in both tables, and the tables of all
 * outputs on one class path agree. *e NULL for an output whose classes got
 * no id; an input's own table (it was instrumented before) is then kept. */
static int table_entry(offline *O, const char *input, mirror_extra **e)
{
	*e = NULL;
	if (O->out_of_memory || choose(O, input))
		return -1;
	return table_of_chosen(O, "", e);
}

static int table_of_chosen(offline *O, const char *root, mirror_extra **e)
{
	*e = NULL;
	if (!O->nchosen) {
		free(O->chosen);
		O->chosen = NULL;
		return 0;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = -1;
	if (f) {
		rc = O->relative ? jinst_trace_write_run_methods(f, O->key, O->count, method_row, O)
		                 : jinst_trace_write_methods(f, O->count, method_row, O);
		rc = fclose(f) != 0 ? -1 : rc;
	}
	free(O->chosen);
	O->chosen = NULL;
	if (!rc && (*e = calloc(1, sizeof(**e))) &&
	    ((*e)->name = concat(root, strlen(root), JINST_METHOD_TABLE_RESOURCE, ""))) {
		(*e)->bytes = (uint8_t *)buf;
		(*e)->len = len;
		return 0;
	}
	free(*e);
	*e = NULL;
	free(buf);
	return -1;
}

/* Folders of an archive that a loader puts on the class path in place of
 * its root: a web application's (a war's, also inside an ear) and a
 * Spring Boot jar's. */
static const char *const class_roots[] = {"WEB-INF/classes/", "BOOT-INF/classes/"};

/* Appends to x the tables of the classes an archive holds (prefix: "JAR!"
 * or "OUTER!INNER.jar!", the start of their jobs' names) for each place
 * a class loader reads it from, as the root's table is for the root: with
 * nested, the archive's root, whose classes are those of its own archives
 * too (a nested jar goes on a class path by itself, in a war's WEB-INF/lib
 * or an ear); each class root in it. Tables on one class path that name
 * one class name it alike, so the runtime reads them all. */
static int root_tables(offline *O, const char *prefix, bool nested, mirror_extra **x, size_t *n)
{
	size_t nroots = sizeof(class_roots) / sizeof(class_roots[0]);
	for (size_t i = 0; i <= nroots; i++) {
		if (i == nroots && !nested)
			break;
		const char *root = i < nroots ? class_roots[i] : "";
		mirror_extra *e = NULL;
		if (O->out_of_memory || choose_jobs(O, prefix, root, i == nroots) || table_of_chosen(O, root, &e))
			return -1;
		if (!e)
			continue;
		mirror_extra *p = realloc(*x, (*n + 1) * sizeof(*p));
		if (!p) {
			free(e->name);
			free(e->bytes);
			free(e);
			return -1;
		}
		*x = p;
		p[(*n)++] = *e;
		free(e);
		atomic_fetch_add(&O->written, 1);
	}
	return 0;
}

/* ---- the run's classes ------------------------------------------------------ */

static int by_entry(const void *a, const void *b)
{
	return strcmp(((const mirror_extra *)a)->name, ((const mirror_extra *)b)->name);
}

/* A malloc'd string: the first n bytes of a, then b and c. */
static char *concat(const char *a, size_t n, const char *b, const char *c)
{
	size_t k = strlen(b), m = strlen(c);
	char *r = malloc(n + k + m + 1);
	if (r) {
		memcpy(r, a, n);
		memcpy(r + n, b, k);
		memcpy(r + n + k, c, m + 1);
	}
	return r;
}

/* The entry of the run's class beside the class whose job is prefix +
 * rest: "DIR/$JinstRunKEY.class" (DIR: rest's folder, BOOT-INF/classes/pkg/
 * or META-INF/versions/11/pkg/ as well as pkg/). Malloc'd. */
static char *run_entry(const offline *O, const char *rest)
{
	const char *slash = strrchr(rest, '/');
	return concat(rest, slash ? (size_t)(slash - rest) + 1 : 0, O->run_class, ".class");
}

/* That class's bytes into x, named after s's package. */
static int run_class_for(offline *O, const seen *s, mirror_extra *x)
{
	const char *pslash = strrchr(s->name, '/');
	char *cls = concat(s->name, pslash ? (size_t)(pslash - s->name) + 1 : 0, O->run_class, "");
	int rc = cls ? jinst_instrument_run_class(&x->bytes, &x->len, cls, O->key, O->count) : -1;
	free(cls);
	return rc;
}

/* Appends to x the run's classes an output needs: one in every folder
 * holding a class it instrumented (prefix: the start of their jobs' names,
 * "JAR!", "OUTER!INNER.jar!" or "DIR/", followed by the entry's path), in
 * name order, the first class of a folder naming its package. A class
 * reads its run's BASE from its own package, public: a class of that
 * package defined by another loader reads it too. */
static int run_classes(offline *O, const char *prefix, mirror_extra **x, size_t *n)
{
	size_t k = strlen(prefix), first = *n;
	/* The pool may be noting the next input's classes meanwhile. */
	pthread_mutex_lock(&O->lock);
	int rc = 0;
	for (size_t i = 0; i < O->nseen && !rc; i++) {
		const seen *s = &O->seen[i];
		if (strncmp(s->job, prefix, k) || strchr(s->job + k, '!'))
			continue;
		char *name = run_entry(O, s->job + k);
		bool known = false;
		for (size_t j = first; name && j < *n && !known; j++)
			known = !strcmp((*x)[j].name, name);
		mirror_extra *p = name && !known ? realloc(*x, (*n + 1) * sizeof(*p)) : NULL;
		if (!p) {
			free(name);
			rc = known ? 0 : -1;
			continue;
		}
		*x = p;
		mirror_extra *e = &p[(*n)++];
		*e = (mirror_extra){.name = name};
		rc = run_class_for(O, s, e);
	}
	pthread_mutex_unlock(&O->lock);
	if (!rc && *n > first)
		qsort(*x + first, *n - first, sizeof(**x), by_entry);
	return rc;
}

/* The mirror's extra entries of an input's output: its method table and
 * the run's classes beside its classes. */
int offline_method_tables(void *ctx, const char *input, mirror_extra **entries, size_t *n)
{
	offline *O = ctx;
	*entries = NULL;
	*n = 0;
	if (!O->tables)
		return 0;
	if (jinst_instrument_method_count(O->ins) != O->count) {
		fprintf(stderr, "jinst instrument: %s: methods were given ids beyond the %u reserved\n", input, O->count);
		return -1;
	}
	struct stat st;
	bool folder = stat(input, &st) == 0 && S_ISDIR(st.st_mode);
	size_t k = strlen(input);
	char *prefix = malloc(k + 2);
	mirror_extra *e = NULL;
	int rc = prefix ? table_entry(O, input, &e) : -1;
	bool table = !rc && e;
	if (table) {
		*entries = e;
		*n = 1;
	}
	if (!rc && prefix) {
		memcpy(prefix, input, k);
		strcpy(prefix + k, !folder ? "!" : k && input[k - 1] == '/' ? "" : "/");
		rc = root_tables(O, prefix, false, entries, n);
	}
	if (!rc && O->relative)
		rc = run_classes(O, prefix, entries, n);
	free(prefix);
	if (rc) {
		fprintf(stderr, "jinst instrument: %s: the method table could not be made\n", input);
		return -1;
	}
	if (table)
		atomic_fetch_add(&O->written, 1);
	return 0;
}

/* The extra entries of an archive inside an archive: its method tables
 * (its methods are in the outer archive's table too, but a war's
 * WEB-INF/lib jar or an ear's war is on a class path without its outer
 * archive) and the run's classes beside its classes. */
int offline_nested_tables(void *ctx, const char *archive, mirror_extra **entries, size_t *n)
{
	offline *O = ctx;
	*entries = NULL;
	*n = 0;
	if (!O->tables)
		return 0;
	char *prefix = concat(archive, strlen(archive), "!", "");
	int rc = prefix ? root_tables(O, prefix, true, entries, n) : -1;
	if (!rc && O->relative)
		rc = run_classes(O, prefix, entries, n);
	free(prefix);
	if (rc)
		fprintf(stderr, "jinst instrument: %s: the method tables or the run's classes could not be made\n", archive);
	return rc;
}
