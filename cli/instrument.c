/*
 * jinst instrument: the agent's passes applied ahead of time, for programs
 * that run without the agent (docs/ARCHITECTURE.md, "The runtime without
 * the agent").
 *
 * One instrumenter serves the whole run, so method ids and coverage class
 * ids are handed out once across every input. Its hooks_class is
 * JINST_RUNTIME_HOOKS: the injected calls name jinst/rt/Hooks, which the
 * application's loader finds in jinst-runtime.jar on the class path (the
 * bridge in java.lang is the agent's and cannot live on a class path).
 * Each class's identity is that of the bytes read (the input is the
 * original), so `jinst report` maps the data back to the class files the
 * user keeps. A class carrying the marker, or naming the runtime, is
 * copied as it is with a note: instrumenting twice would count twice.
 *
 * The mirror (mirror.c) does the files: inputs of any shape, classes
 * spread over the worker pool, outputs written whole or not at all.
 * Coverage is placed before trace, as in the agent (the instrumenter runs
 * the built-in passes in that order), so probes sit on the original code.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jinst/instrument.h"
#include "mirror.h"

#define ALREADY "already instrumented"

typedef struct offline {
	jinst_instrument *ins;
	_Atomic size_t already; /* classes copied because they carry the marker */
} offline;

static char *diag_text(const char *what, const jinst_diag *d)
{
	char msg[700], full[800];
	jinst_diag_format(d, msg, sizeof(msg));
	snprintf(full, sizeof(full), "%s%s", what, msg);
	return strdup(full);
}

static enum mirror_result instrument_one(void *ctx, jinst_arena *arena, const char *name, const uint8_t *in,
                                         size_t len, uint8_t **out, size_t *out_len, char **message)
{
	(void)name;
	offline *O = ctx;
	jinst_diag d;
	memset(&d, 0, sizeof(d));
	/* identity NULL: the hash of these bytes, the original class's. */
	int rc = jinst_instrument_class(O->ins, arena, in, len, NULL, 0, NULL, out, out_len, &d);
	if (rc) {
		*message = diag_text("not instrumented, copied: ", &d);
		return MIRROR_FAILED;
	}
	if (d.message[0])
		*message = strdup(d.message);
	if (*out)
		return MIRROR_CHANGED;
	if (strncmp(d.message, ALREADY, strlen(ALREADY)) == 0)
		atomic_fetch_add(&O->already, 1);
	return MIRROR_UNCHANGED;
}

/* ---- the command line ------------------------------------------------------- */

typedef struct args {
	uint32_t passes;
	const char *output;
	const char **inputs;
	int ninputs;
	const char **include, **exclude; /* NULL-terminated */
	size_t ninclude, nexclude;
	int jobs;
	bool force, quiet, verbose;
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

static int needs_value(const char *flag, int i, int argc)
{
	if (i + 1 < argc)
		return 0;
	fprintf(stderr, "jinst instrument: %s needs a value (see jinst instrument --help)\n", flag);
	return 2;
}

static int parse_args(args *A, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int rc = parse_pass(A, a);
		if (rc != 1) {
			if (rc)
				return rc;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
			if ((rc = needs_value(a, i, argc)))
				return rc;
			A->output = argv[++i];
		} else if (strcmp(a, "--include") == 0 || strcmp(a, "--exclude") == 0) {
			if ((rc = needs_value(a, i, argc)))
				return rc;
			bool inc = a[2] == 'i';
			rc = add_globs(inc ? &A->include : &A->exclude, inc ? &A->ninclude : &A->nexclude, argv[++i], a);
			if (rc)
				return rc;
		} else if (strcmp(a, "-j") == 0) {
			if ((rc = needs_value(a, i, argc)))
				return rc;
			char *end;
			long j = strtol(argv[++i], &end, 10);
			if (*end || j < 1 || j > 1024) {
				fprintf(stderr, "jinst instrument: -j takes a number of threads, 1 to 1024, not '%s'\n", argv[i]);
				return 2;
			}
			A->jobs = (int)j;
		} else if (strcmp(a, "--force") == 0) {
			A->force = true;
		} else if (strcmp(a, "--quiet") == 0) {
			A->quiet = true;
		} else if (strcmp(a, "--verbose") == 0) {
			A->verbose = true;
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

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void summary(const args *A, const offline *O, const mirror_stats *s, double secs)
{
	jinst_instrument_counts c;
	jinst_instrument_get_counts(O->ins, &c);
	printf("%s: %zu classes: %zu instrumented, %zu unchanged (%zu already instrumented), %zu not instrumented; "
	       "%llu methods instrumented, %llu left alone; %.2f s\n",
	       A->output, s->classes, s->counts[MIRROR_CHANGED], s->counts[MIRROR_UNCHANGED], atomic_load(&O->already),
	       s->counts[MIRROR_FAILED], (unsigned long long)c.methods_instrumented,
	       (unsigned long long)c.methods_left_alone, secs);
	if (s->errors)
		printf("%zu files could not be read or written\n", s->errors);
}

int cmd_instrument(int argc, char **argv)
{
	const char *inputs[argc + 1];
	args A = {.inputs = inputs};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	A.jobs = cpus > 0 ? (int)cpus : 1;
	int rc = parse_args(&A, argc, argv);
	if (rc) {
		free(A.include);
		free(A.exclude);
		return rc;
	}
	jinst_instrument_options io = JINST_INSTRUMENT_OPTIONS_INIT;
	io.passes = A.passes;
	io.include = A.include;
	io.exclude = A.exclude;
	io.hooks_class = JINST_RUNTIME_HOOKS;
	offline O = {0};
	jinst_diag d;
	if (jinst_instrument_new(&O.ins, &io, &d)) {
		char msg[600];
		jinst_diag_format(&d, msg, sizeof(msg));
		fprintf(stderr, "jinst instrument: %s\n", msg);
		free(A.include);
		free(A.exclude);
		return 2;
	}
	mirror_options mo = {.transform = instrument_one, .ctx = &O, .jobs = A.jobs,
	                     .progress = !A.quiet && isatty(2), .verbose = A.verbose};
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	mirror_stats s;
	mirror_run(inputs, A.ninputs, A.output, &mo, &s);
	summary(&A, &O, &s, seconds_since(&t0));
	jinst_instrument_free(O.ins);
	free(A.include);
	free(A.exclude);
	return s.errors ? 1 : 0;
}
