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
 * it a loader reads classes from: a nested archive, WEB-INF/classes/
 * (instrument_tables.c).
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
#include "instrument_internal.h"

#define ALREADY "already instrumented"

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
	if (*n) /* an empty list is NULL, which qsort may not be given */
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

#define LEFT_ALONE "left alone: "

/* What the note d says a pass left alone (a method past 64 KiB, a class
 * coverage cannot follow), as "not instrumented: ...", malloc'd, and cut
 * from the note (what it says before stays a note); NULL when nothing. */
static char *losses(jinst_diag *d)
{
	char *left = strstr(d->message, LEFT_ALONE);
	if (!left)
		return NULL;
	char line[sizeof(d->message) + 32];
	snprintf(line, sizeof(line), "not instrumented: %s", left + strlen(LEFT_ALONE));
	*left = '\0';
	return strdup(line);
}

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
		/* What a pass left alone: a warning, as for a class, since its
		 * data will be missing. */
		char *lost = losses(&d);
		if (lost)
			add_warning(O, name, lost);
		free(lost);
		if (d.message[0])
			*message = strdup(d.message);
		return MIRROR_CHANGED;
	}
	/* Counted by reason in the summary; never instrumented twice. */
	if (!strncmp(d.message, ALREADY, strlen(ALREADY))) {
		*message = strdup(d.message);
		return MIRROR_SKIPPED;
	}
	note_module(O, arena, name, in, len);
	/* A class a pass declined and no other changed: copied unchanged, its
	 * data missing. */
	if ((*message = losses(&d)))
		return MIRROR_FAILED;
	if (d.message[0])
		*message = strdup(d.message);
	return MIRROR_UNCHANGED;
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
	offline O = {.tables = (A->passes & (JINST_PASS_TRACE | JINST_PASS_COUNT)) != 0,
	             .leaves = (A->passes & JINST_PASS_TRACE) && (A->passes & JINST_PASS_COUNT_LEAVES),
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
	mo->extra = offline_method_tables;
	mo->nested_extra = offline_nested_tables;
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
