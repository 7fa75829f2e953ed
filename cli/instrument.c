/*
 * jinst instrument: the agent's passes applied ahead of time, for programs
 * that run without the agent (docs/ARCHITECTURE.md, "The runtime without
 * the agent").
 *
 * One instrumenter serves the whole run. Its hooks_class is
 * JINST_RUNTIME_HOOKS: the injected calls name jinst/rt/Hooks, which the
 * application's loader finds in jinst-runtime.jar on the class path (the
 * bridge in java.lang is the agent's and cannot live on a class path), and
 * coverage asks for its probes by the class's identity and name, so jars
 * instrumented in separate runs never clash. Each class's identity is
 * that of the bytes read (the input is the original), so `jinst report`
 * maps the data back to the class files the user keeps. A class carrying
 * the marker, or naming the runtime, is copied as it is and counted as
 * skipped: instrumenting twice would count twice.
 *
 * Method ids (trace) are constants in the code and rows of the method
 * table. The workers would hand them out in the order they reach the
 * methods, which differs from run to run; one thread first walks the
 * inputs in order and reserves them, so the same inputs give the same
 * bytes. Each jar or folder written gets the table of its own classes'
 * ids (the writer's extra-entries hook), and so does each other place in
 * it a loader reads classes from: a nested archive, WEB-INF/classes/.
 *
 * Ids are relative to the run, so that jars of separate runs share a JVM:
 * the run's key hashes the options and every class met by that walk; each
 * folder holding an instrumented class (in nested jars too) gets the run's
 * class, $JinstRunKEY, whose BASE the code adds to its ids, and the tables
 * name the key (docs/ARCHITECTURE.md, "Method ids of separate runs").
 *
 * The mirror (mirror.c) does the files: inputs of any shape, classes
 * spread over the worker pool, outputs written whole or not at all.
 * Coverage is placed before trace, as in the agent (the instrumenter runs
 * the built-in passes in that order), so probes sit on the original code.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jinst/archive.h"
#include "jinst/coverage.h"
#include "jinst/instrument.h"
#include "jinst/report.h"
#include "mirror.h"

#define ALREADY "already instrumented"

/* A class instrumented: where it came from (its job's name up to the first
 * '!': the jar, or the class file of a folder), its job's name whole and
 * its internal name. */
typedef struct seen {
	char *source;
	char *job;
	char *name;
} seen;

typedef struct offline {
	jinst_instrument *ins;
	bool tables;            /* trace passes: each output carries the method table */
	/* With tables and no lone class file among the inputs, ids are relative
	 * to the run (jinst_instrument_set_run_class): its key, class name and
	 * method count, all fixed before the first class. */
	bool relative;
	uint64_t key;
	char run_class[sizeof(JINST_RUN_CLASS_PREFIX) + 16];
	uint32_t count;
	_Atomic size_t written; /* method tables handed to the mirror */
	/* The classes instrumented so far, for the tables (workers add, under
	 * the lock); the ones a table names, sorted, while it is written. */
	pthread_mutex_t lock;
	seen *seen;
	size_t nseen, cap;
	bool out_of_memory;
	const char **chosen;
	size_t nchosen;
	const char *last_class; /* the class of the last row asked for, and whether it is chosen */
	bool last_chosen;
	/* Coverage asked; with another pass too (a class another pass changed
	 * may still lack coverage). */
	bool coverage, coverage_and_more;
	/* Warnings of classes the writer counts as changed, printed and
	 * counted after the run (workers add, under the lock). */
	char **warnings;
	size_t nwarnings, capwarnings;
	/* The same for notes (modules met), each said once. */
	char **notes;
	size_t nnotes, capnotes;
	/* --trace=times: whether a method is timed in a class may differ
	 * between classes of one name (a multi-release jar's copies), which
	 * share its id, and the instrumenter keeps the flag of the last one
	 * instrumented. Classes of one name are instrumented in turn (the
	 * stripe of their name's lock) and each id is timed when the code of
	 * any of them times it: per id, in timed. by_class: every id by its
	 * class name, sorted, to find a class's ids. */
	bool leaves;
	uint8_t *timed;
	struct class_id {
		const char *name;
		uint32_t id;
	} *by_class;
	pthread_mutex_t stripes[64];
} offline;

static void free_seen(offline *O)
{
	for (size_t i = 0; i < O->nseen; i++) {
		free(O->seen[i].source);
		free(O->seen[i].job);
		free(O->seen[i].name);
	}
	free(O->seen);
}

/* Notes a class just instrumented: job is the writer's name of it ("PATH",
 * "JAR!ENTRY", "JAR!INNER.jar!ENTRY"), the name the class's own (modified
 * UTF-8, as the instrumenter's method table has it). */
static void note_class(offline *O, jinst_arena *arena, const char *job, const uint8_t *in, size_t len)
{
	jinst_class *c;
	jinst_diag d;
	uint16_t n = 0;
	const uint8_t *name = jinst_class_parse(&c, in, len, arena, NULL, &d) == 0 ? jinst_class_name(c, &n) : NULL;
	seen e = {strndup(job, strcspn(job, "!")), strdup(job), name ? strndup((const char *)name, n) : NULL};
	pthread_mutex_lock(&O->lock);
	if (O->nseen == O->cap) {
		size_t cap = O->cap ? O->cap * 2 : 256;
		seen *p = realloc(O->seen, cap * sizeof(*p));
		if (p) {
			O->seen = p;
			O->cap = cap;
		}
	}
	if (e.source && e.job && e.name && O->nseen < O->cap) {
		O->seen[O->nseen++] = e;
	} else {
		O->out_of_memory = true; /* a table would miss it: its output fails */
		free(e.source);
		free(e.job);
		free(e.name);
	}
	pthread_mutex_unlock(&O->lock);
}

static char *diag_text(const char *what, const jinst_diag *d)
{
	char msg[700], full[800];
	jinst_diag_format(d, msg, sizeof(msg));
	snprintf(full, sizeof(full), "%s%s", what, msg);
	return strdup(full);
}

/* "WHERE: TEXT" appended to a list of O's (under the lock: workers add). */
static void add_line(offline *O, char ***list, size_t *n, size_t *cap, const char *where, const char *what)
{
	size_t k = strlen(where) + strlen(what) + 3;
	char *w = malloc(k);
	if (w)
		snprintf(w, k, "%s: %s", where, what);
	pthread_mutex_lock(&O->lock);
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **p = realloc(*list, c * sizeof(*p));
		if (p) {
			*list = p;
			*cap = c;
		}
	}
	if (w && *n < *cap)
		(*list)[(*n)++] = w;
	else
		free(w);
	pthread_mutex_unlock(&O->lock);
}

/* A warning of job, kept for the end of the run. */
static void add_warning(offline *O, const char *job, const char *what)
{
	add_line(O, &O->warnings, &O->nwarnings, &O->capwarnings, job, what);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A list's lines in name order (the workers' order changes from run to
 * run), each said once with kind ("warning: ", "note: "; NULL: none
 * said); the count said; freed. */
static size_t print_lines(char ***list, size_t *n, size_t *cap, const char *kind)
{
	size_t said = 0;
	qsort(*list, *n, sizeof(**list), by_text);
	for (size_t i = 0; kind && i < *n; i++) {
		if (!i || strcmp((*list)[i - 1], (*list)[i])) {
			fprintf(stderr, "jinst instrument: %s%s\n", kind, (*list)[i]);
			said++;
		}
	}
	for (size_t i = 0; i < *n; i++)
		free((*list)[i]);
	free(*list);
	*list = NULL;
	*n = *cap = 0;
	return said;
}

/* A module descriptor (module-info.class, ACC_MODULE) of the jar or folder
 * job came from: a note of how its instrumented classes reach
 * jinst-runtime.jar. On the module path the module reads only the modules
 * it requires, and the runtime is no module of the program's: from the
 * class path it is in the unnamed module, which --add-reads lets the
 * module read (JEP 261). */
static void note_module(offline *O, jinst_arena *arena, const char *job, const uint8_t *in, size_t len)
{
	size_t k = strlen(job), m = strlen("module-info.class");
	if (k < m || strcmp(job + k - m, "module-info.class") || (k > m && job[k - m - 1] != '/' && job[k - m - 1] != '!'))
		return;
	jinst_class *c;
	jinst_diag d;
	if (jinst_class_parse(&c, in, len, arena, NULL, &d))
		return;
	jinst_attr *a = (jinst_class_access_flags(c) & JINST_ACC_MODULE)
	                        ? jinst_attr_find(jinst_class_attrs(c), JINST_ATTR_MODULE)
	                        : NULL;
	jinst_module *mod = NULL;
	uint16_t n = 0;
	const uint8_t *name = a && !jinst_attr_decode(c, a, (void **)&mod, NULL) && mod
	                              ? jinst_cp_name(c, mod->module_name_index, &n)
	                              : NULL;
	if (name && n < 200) {
		char says[1024], where[4096];
		/* the jar, or the folder of a folder's */
		size_t w = strchr(job, '!') ? strcspn(job, "!") : k > m + 1 ? k - m - 1 : k;
		snprintf(where, sizeof(where), "%.*s", (int)w, job);
		snprintf(says, sizeof(says),
		         "it is the module %.*s: on the module path it must be made to read jinst-runtime.jar, "
		         "from the class path: java -p OUT -cp PATH/jinst-runtime.jar --add-reads %.*s=ALL-UNNAMED "
		         "-m %.*s/CLASS",
		         (int)n, name, (int)n, name, (int)n, name);
		add_line(O, &O->notes, &O->nnotes, &O->capnotes, where, says);
	}
	jinst_class_free(c);
}

/* Why coverage could not place the probes of the class in (jsr/ret, code
 * it cannot decode), malloc'd; NULL when it can, or has none to place
 * (JaCoCo leaves those classes alone too), or the class is not selected.
 * The coverage pass declines such a class without a word. */
static char *no_coverage(offline *O, jinst_arena *arena, const uint8_t *in, size_t len)
{
	jinst_class *c;
	jinst_diag d;
	jinst_coverage_plan *plan;
	uint16_t n;
	memset(&d, 0, sizeof(d));
	if (jinst_class_parse(&c, in, len, arena, NULL, &d))
		return NULL;
	const uint8_t *name = jinst_class_name(c, &n);
	char *cname = name ? strndup((const char *)name, n) : NULL;
	bool wanted = cname && jinst_instrument_wants(O->ins, cname) && !(jinst_class_access_flags(c) & JINST_ACC_MODULE);
	free(cname);
	int rc = wanted ? jinst_coverage_place(&plan, c, &d) : 0;
	jinst_class_free(c);
	if (!rc || rc == JINST_ENOMEM)
		return NULL;
	return diag_text(O->coverage_and_more ? "no coverage: " : "not instrumented: ", &d);
}

/* Whether the instrumented class out carries coverage's probes (its
 * marker names the pass). */
static bool covered(jinst_arena *arena, const uint8_t *out, size_t len)
{
	jinst_marker mk;
	jinst_diag d;
	if (jinst_instrument_read_marker(arena, out, len, &mk, &d) || !mk.present)
		return true; /* nothing to go by: no word rather than a wrong one */
	for (const char *p = mk.passes; *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, "coverage", 8) && (p[8] == ',' || !p[8]))
			return true;
	return false;
}

#define LEFT_ALONE "left alone: "

static int by_class_name(const void *a, const void *b)
{
	const struct class_id *x = a, *y = b;
	int r = strcmp(x->name, y->name);
	return r ? r : x->id < y->id ? -1 : x->id > y->id;
}

/* Every reserved id by its class name (O->by_class), and O->timed, before
 * the workers start: the ids are all handed out by then. */
static int index_ids(offline *O)
{
	O->by_class = malloc((O->count ? O->count : 1) * sizeof(*O->by_class));
	O->timed = calloc(O->count ? O->count : 1, 1);
	if (!O->by_class || !O->timed)
		return -1;
	for (uint32_t id = 0; id < O->count; id++) {
		jinst_method_info mi;
		O->by_class[id] = (struct class_id){jinst_instrument_method_info(O->ins, id, &mi) ? "" : mi.class_name, id};
	}
	qsort(O->by_class, O->count, sizeof(*O->by_class), by_class_name);
	for (int i = 0; i < 64; i++)
		pthread_mutex_init(&O->stripes[i], NULL);
	return 0;
}

/* The class in's name, malloc'd, or NULL. */
static char *class_name_of(jinst_arena *arena, const uint8_t *in, size_t len)
{
	jinst_class *c;
	jinst_diag d;
	uint16_t n = 0;
	if (jinst_class_parse(&c, in, len, arena, NULL, &d))
		return NULL;
	const uint8_t *name = jinst_class_name(c, &n);
	char *r = name ? strndup((const char *)name, n) : NULL;
	jinst_class_free(c);
	return r;
}

/* jinst_instrument_class, and with O->leaves the timed flags of the
 * class's ids as it left them ORed into O->timed, taken while no class of
 * its name is being instrumented. */
static int instrument_class(offline *O, jinst_arena *arena, const uint8_t *in, size_t len, uint8_t **out,
                            size_t *out_len, jinst_diag *d)
{
	/* identity NULL: the hash of these bytes, the original class's. */
	char *cls = O->leaves ? class_name_of(arena, in, len) : NULL;
	if (!cls)
		return jinst_instrument_class(O->ins, arena, in, len, NULL, 0, NULL, out, out_len, d);
	pthread_mutex_t *stripe = &O->stripes[jinst_instrument_identity((const uint8_t *)cls, strlen(cls)) % 64];
	pthread_mutex_lock(stripe);
	int rc = jinst_instrument_class(O->ins, arena, in, len, NULL, 0, NULL, out, out_len, d);
	struct class_id key = {cls, 0};
	size_t lo = 0, hi = O->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (by_class_name(&O->by_class[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; !rc && *out && i < O->count && !strcmp(O->by_class[i].name, cls); i++) {
		jinst_method_info mi;
		if (!jinst_instrument_method_info(O->ins, O->by_class[i].id, &mi) && mi.timed)
			O->timed[O->by_class[i].id] = 1;
	}
	pthread_mutex_unlock(stripe);
	free(cls);
	return rc;
}

static enum mirror_result instrument_one(void *ctx, jinst_arena *arena, const char *name, const uint8_t *in,
                                         size_t len, uint8_t **out, size_t *out_len, char **message)
{
	offline *O = ctx;
	jinst_diag d;
	memset(&d, 0, sizeof(d));
	int rc = instrument_class(O, arena, in, len, out, out_len, &d);
	if (rc) {
		*message = diag_text("not instrumented: ", &d);
		return MIRROR_FAILED;
	}
	if (*out) {
		if (O->tables)
			note_class(O, arena, name, in, len);
		/* Methods left alone on an error (ETOOLARGE, say): a warning, as
		 * for a class, since their data will be missing; what the note
		 * says before them stays a note. */
		char *left = strstr(d.message, LEFT_ALONE);
		if (left) {
			char line[sizeof(d.message) + 32];
			snprintf(line, sizeof(line), "not instrumented: %s", left + strlen(LEFT_ALONE));
			add_warning(O, name, line);
			*left = '\0';
		}
		if (d.message[0])
			*message = strdup(d.message);
		char *why = O->coverage_and_more && !covered(arena, *out, *out_len) ? no_coverage(O, arena, in, len) : NULL;
		if (why)
			add_warning(O, name, why);
		free(why);
		return MIRROR_CHANGED;
	}
	/* Counted by reason in the summary; never instrumented twice. */
	if (!strncmp(d.message, ALREADY, strlen(ALREADY))) {
		*message = strdup(d.message);
		return MIRROR_SKIPPED;
	}
	note_module(O, arena, name, in, len);
	if (O->coverage && (*message = no_coverage(O, arena, in, len)))
		return MIRROR_FAILED;
	if (d.message[0])
		*message = strdup(d.message);
	return MIRROR_UNCHANGED;
}

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
static int method_table(void *ctx, const char *input, mirror_extra **entries, size_t *n)
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
static int nested_run_classes(void *ctx, const char *archive, mirror_extra **entries, size_t *n)
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

/* ---- ids in a fixed order --------------------------------------------------- */

typedef struct reserve {
	jinst_instrument *ins;
	jinst_arena *arena;
	uint64_t key;
	size_t input_len; /* the walk's names start with the input's path */
} reserve;

/* The run key: the hash of the options, then of each class's identity and
 * name in walk order (the name within its input, so that where the input
 * lies changes nothing), chained. The ids are a function of exactly these,
 * so two runs with one key number every method alike, and two runs that
 * number them differently have two keys (but for a 64-bit collision). */
static void chain(uint64_t *key, uint64_t identity, const char *what)
{
	size_t n = strlen(what);
	uint8_t *b = malloc(16 + n);
	if (!b)
		return;
	memcpy(b, key, 8);
	memcpy(b + 8, &identity, 8);
	memcpy(b + 16, what, n);
	*key = jinst_instrument_identity(b, 16 + n);
	free(b);
}

static int reserve_class(void *ctx, const char *name, const uint8_t *bytes, size_t len)
{
	reserve *r = ctx;
	jinst_diag d;
	jinst_arena_reset(r->arena);
	const char *within = name + (strlen(name) >= r->input_len ? r->input_len : 0);
	chain(&r->key, jinst_instrument_identity(bytes, len), within);
	/* A class it cannot read, the run reports. */
	jinst_instrument_reserve_ids(r->ins, r->arena, bytes, len, &d);
	return 0;
}

static void reserve_problem(void *ctx, const char *name, const char *message)
{
	/* The run reports it, once. */
	(void)ctx, (void)name, (void)message;
}

/* The workers hand out method ids in the order they reach the methods,
 * which changes from run to run; taken first, one thread walking the
 * inputs in order, the ids and so the outputs are the same in every run. */
static int reserve_ids(offline *O, const char *const *inputs, int n, uint64_t options)
{
	reserve r = {.ins = O->ins, .key = options};
	if (jinst_arena_new(&r.arena))
		return -1;
	for (int i = 0; i < n; i++) {
		r.input_len = strlen(inputs[i]);
		jinst_walk_nested(inputs[i], reserve_class, reserve_problem, &r);
	}
	jinst_arena_free(r.arena);
	O->key = r.key;
	O->count = jinst_instrument_method_count(O->ins);
	snprintf(O->run_class, sizeof(O->run_class), JINST_RUN_CLASS_PREFIX "%016" PRIx64, O->key);
	return O->relative && jinst_instrument_set_run_class(O->ins, O->run_class) ? -1 : 0;
}

/* Whether an input is a lone class file: its output is a class file, with
 * no place beside it for the run's class, so the run keeps constant ids. */
static bool lone_class(const char *const *inputs, int n)
{
	for (int i = 0; i < n; i++) {
		struct stat st;
		size_t k = strlen(inputs[i]);
		if (stat(inputs[i], &st) == 0 && S_ISREG(st.st_mode) && k > 6 && !strcmp(inputs[i] + k - 6, ".class"))
			return true;
	}
	return false;
}


/* ---- the command line ------------------------------------------------------- */

typedef struct args {
	uint32_t passes;
	const char *output;
	const char **inputs;
	int ninputs;
	const char **include, **exclude; /* NULL-terminated */
	size_t ninclude, nexclude;
} args;

/* --trace keeps the full shape in every method, so the run chooses counts
 * or times (-Djinst.trace); =counts puts the counting hook alone, all that
 * counts need; =times counts leaves only, as the agent's trace=times. */
static int parse_pass(args *A, const char *a)
{
	const char *v = strchr(a, '=');
	size_t k = v ? (size_t)(v - a) : strlen(a);
	if (k == 7 && strncmp(a, "--trace", 7) == 0) {
		uint32_t p = !v ? JINST_PASS_TRACE : strcmp(v, "=counts") == 0 ? JINST_PASS_COUNT
		             : strcmp(v, "=times") == 0                        ? JINST_PASS_TRACE | JINST_PASS_COUNT_LEAVES
		                                                               : 0;
		if (!p) {
			fprintf(stderr, "jinst instrument: --trace takes counts or times, not '%s'\n", v + 1);
			return 2;
		}
		A->passes = (A->passes & ~(uint32_t)(JINST_PASS_TRACE | JINST_PASS_COUNT | JINST_PASS_COUNT_LEAVES)) | p;
		return 0;
	}
	if (k == 10 && strncmp(a, "--coverage", 10) == 0) {
		uint32_t p = !v || strcmp(v, "=booleans") == 0 ? JINST_PASS_COVERAGE
		             : strcmp(v, "=counts") == 0         ? JINST_PASS_COVERAGE_COUNTS
		                                                 : 0;
		if (!p) {
			fprintf(stderr, "jinst instrument: --coverage takes booleans or counts, not '%s'\n", v + 1);
			return 2;
		}
		A->passes = (A->passes & ~(uint32_t)(JINST_PASS_COVERAGE | JINST_PASS_COVERAGE_COUNTS)) | p;
		return 0;
	}
	/* The agent's other passes record what only JVMTI gives at run time. */
	static const struct {
		const char *flag, *option, *why;
	} agent_only[] = {
		{"--alloc", "alloc", "an object's bytes come from JVMTI's GetObjectSize"},
		{"--monitor", "monitor", "contention comes from JVMTI's monitor events"},
		{"--natives", "natives", "native methods are wrapped through JVMTI's SetNativeMethodPrefix"},
	};
	for (size_t i = 0; i < sizeof agent_only / sizeof agent_only[0]; i++)
		if (k == strlen(agent_only[i].flag) && strncmp(a, agent_only[i].flag, k) == 0) {
			fprintf(stderr,
			        "jinst instrument: %s is not available ahead of time: %s. Run the program with the agent:\n"
			        "  java -agentpath:/PATH/libjinst.so=%s ...\n",
			        agent_only[i].flag, agent_only[i].why, agent_only[i].option);
			return 2;
		}
	return 1;
}

/* Patterns separated by '+' or ':' (the agent's include=), appended to a
 * NULL-terminated list. The argument is split in place: argv's strings are
 * the program's to modify (C11 5.1.2.2.1) and live for the run. */
static int add_globs(const char ***list, size_t *n, char *v, const char *flag)
{
	for (char *save = NULL, *p = strtok_r(v, "+:", &save); p; p = strtok_r(NULL, "+:", &save)) {
		const char **l = realloc(*list, (*n + 2) * sizeof(*l));
		if (!l)
			return 2;
		*list = l;
		l[(*n)++] = p;
		l[*n] = NULL;
	}
	if (!*n) {
		fprintf(stderr, "jinst instrument: %s needs patterns (com.example.** or com/example/*)\n", flag);
		return 2;
	}
	return 0;
}

static int parse_args(args *A, mirror_options *mo, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int rc = parse_pass(A, a), took;
		if (rc != 1) {
			if (rc)
				return rc;
		} else if ((took = mirror_option(mo, &A->output, argc, argv, &i)) != 0) {
			if (took < 0)
				return 2;
		} else if (strcmp(a, "--include") == 0 || strcmp(a, "--exclude") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "jinst instrument: %s needs patterns (com.example.** or com/example/*)\n", a);
				return 2;
			}
			bool inc = a[2] == 'i';
			if ((rc = add_globs(inc ? &A->include : &A->exclude, inc ? &A->ninclude : &A->nexclude, argv[++i], a)))
				return rc;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "jinst instrument: unknown option '%s' (see jinst instrument --help)\n", a);
			return 2;
		} else {
			A->inputs[A->ninputs++] = a;
		}
	}
	if (!A->passes) {
		fprintf(stderr, "jinst instrument: no pass given: add --coverage[=counts] for coverage reports, "
		                "--trace[=counts|times] for method calls, or both\n");
		return 2;
	}
	if (!A->ninputs) {
		fprintf(stderr, "jinst instrument: no input: give class files, folders, jars, wars or ears\n");
		return 2;
	}
	if (!A->output) {
		fprintf(stderr, "jinst instrument: no output: give -o OUT (a file or folder for one input, "
		                "a folder for several)\n");
		return 2;
	}
	return 0;
}

/* The options' part of the run key: the passes and the class filters. */
static uint64_t options_key(const args *A)
{
	uint64_t key = 0;
	chain(&key, A->passes, "passes");
	for (size_t i = 0; i < A->ninclude; i++)
		chain(&key, 1, A->include[i]);
	for (size_t i = 0; i < A->nexclude; i++)
		chain(&key, 2, A->exclude[i]);
	return key;
}

static int instrument_run(const args *A, mirror_options *mo)
{
	jinst_instrument_options io = JINST_INSTRUMENT_OPTIONS_INIT;
	io.passes = A->passes;
	io.include = A->include;
	io.exclude = A->exclude;
	io.hooks_class = JINST_RUNTIME_HOOKS;
	uint32_t coverage = JINST_PASS_COVERAGE | JINST_PASS_COVERAGE_COUNTS;
	offline O = {.tables = (A->passes & (JINST_PASS_TRACE | JINST_PASS_COUNT)) != 0,
	             .leaves = (A->passes & JINST_PASS_TRACE) && (A->passes & JINST_PASS_COUNT_LEAVES),
	             .coverage = (A->passes & coverage) != 0,
	             .coverage_and_more = (A->passes & coverage) && (A->passes & ~coverage),
	             .lock = PTHREAD_MUTEX_INITIALIZER};
	jinst_diag d;
	if (jinst_instrument_new(&O.ins, &io, &d)) {
		char msg[600];
		jinst_diag_format(&d, msg, sizeof(msg));
		fprintf(stderr, "jinst instrument: %s\n", msg);
		return 2;
	}
	O.relative = O.tables && !lone_class(A->inputs, A->ninputs);
	size_t warned = 0; /* the warnings said here, for the summary's count */
	if (O.tables && !O.relative) {
		fprintf(stderr, "jinst instrument: warning: a class file given alone has no folder for the run's class: "
		                "this run's method ids are constants, which another run's may share in one JVM\n");
		warned++;
	}
	if (O.tables && (reserve_ids(&O, A->inputs, A->ninputs, options_key(A)) || (O.leaves && index_ids(&O)))) {
		fprintf(stderr, "jinst instrument: out of memory\n");
		free(O.by_class);
		free(O.timed);
		jinst_instrument_free(O.ins);
		return 1;
	}
	mo->transform = instrument_one;
	mo->extra = method_table;
	mo->nested_extra = nested_run_classes;
	mo->ctx = &O;
	mirror_stats s;
	int run = mirror_run(A->inputs, A->ninputs, A->output, mo, &s);
	if (run == 0) {
		jinst_instrument_counts c;
		jinst_instrument_get_counts(O.ins, &c);
		s.warnings += print_lines(&O.warnings, &O.nwarnings, &O.capwarnings, "warning: ");
		if (c.classes_instrumented)
			print_lines(&O.notes, &O.nnotes, &O.capnotes, "note: ");
		/* Lone class files have no place for the table: the run names
		 * their methods by id only. */
		if (O.tables && c.methods_instrumented && !atomic_load(&O.written)) {
			fprintf(stderr, "jinst instrument: warning: no jar or folder output holds the method table (%s); "
			                "give a folder or jar, or the traces name methods by id\n",
			        JINST_METHOD_TABLE_RESOURCE);
			warned++;
		}
		s.warnings += warned;
		mirror_print_summary(mo, &s);
		printf("%llu methods instrumented, %llu left alone\n", (unsigned long long)c.methods_instrumented,
		       (unsigned long long)c.methods_left_alone);
	}
	print_lines(&O.warnings, &O.nwarnings, &O.capwarnings, NULL);
	print_lines(&O.notes, &O.nnotes, &O.capnotes, NULL);
	jinst_instrument_free(O.ins);
	free(O.by_class);
	free(O.timed);
	free_seen(&O);
	int status = run != 0 || s.errors ? 1 : 0;
	mirror_stats_free(&s);
	return status;
}

int cmd_instrument(int argc, char **argv)
{
	const char *inputs[argc + 1];
	args A = {.inputs = inputs};
	mirror_options mo = MIRROR_OPTIONS_INIT("instrument", "instrumented");
	mo.progress = isatty(2);
	/* The launcher ignores -cp under -jar, so the hooks would not be found. */
	mo.main_class_note = "`java -jar` takes no -cp: put jinst-runtime.jar on the boot class path "
	                     "(java -Xbootclasspath/a:PATH/jinst-runtime.jar -jar JAR) or on its manifest's Class-Path";
	int rc = parse_args(&A, &mo, argc, argv);
	if (!rc)
		rc = instrument_run(&A, &mo);
	free(A.include);
	free(A.exclude);
	return rc;
}
