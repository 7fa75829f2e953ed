/* jinst merge, and jinst dump of a coverage data file (.cov): the work is
 * include/jinst/covdata.h's; this file parses arguments and prints. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "jinst/covdata.h"
#include "jinst/instrument.h"
#include "jinst/util.h"

static const char merge_usage[] = "usage: jinst merge -o OUT IN...\n";

/* A name as people read it: modified UTF-8 to UTF-8 (the same for ASCII),
 * a NUL character (C0 80) shown as \0, into buf of NAME_BUF bytes; a name
 * too long for it as it is. */
#define NAME_BUF 2048
static const char *readable(const char *mutf8, char *buf)
{
	char utf[NAME_BUF / 2];
	long n = jinst_mutf8_to_utf8((const uint8_t *)mutf8, strlen(mutf8), utf, sizeof(utf));
	if (n < 0 || (size_t)n >= sizeof(utf))
		return mutf8;
	size_t k = 0;
	for (long i = 0; i < n; i++) {
		if (!utf[i])
			buf[k++] = '\\';
		buf[k++] = utf[i] ? utf[i] : '0';
	}
	buf[k] = 0;
	return buf;
}

/* "jinst CMD: FILE: why (at byte N, where)" on one line. */
static void print_read_error(const char *cmd, const char *path, const jinst_diag *diag)
{
	fprintf(stderr, "jinst %s: %s: %s", cmd, path, diag->message);
	if (diag->code != JINST_EIO && diag->code != JINST_ENOTFOUND && diag->offset != JINST_NO_OFFSET)
		fprintf(stderr, " (at byte %" PRIu32 ", %s)", diag->offset, diag->where);
	fputc('\n', stderr);
}

/* ---- inputs -------------------------------------------------------------- */

static bool same_session(const jinst_covdata_session *a, const jinst_covdata_session *b)
{
	return a->start_ms == b->start_ms && a->dump_ms == b->dump_ms && strcmp(a->name, b->name) == 0;
}

/* Sessions of in already in so_far: a file and a merge that holds it. */
static void print_repeated_sessions(const char *cmd, const char *path, const jinst_covdata *in,
                                    const jinst_covdata *so_far)
{
	char buf[NAME_BUF];
	for (size_t i = 0; so_far && i < jinst_covdata_session_count(in); i++) {
		const jinst_covdata_session *s = jinst_covdata_session_at(in, i);
		for (size_t k = 0; k < jinst_covdata_session_count(so_far); k++)
			if (same_session(s, jinst_covdata_session_at(so_far, k))) {
				fprintf(stderr,
				        "jinst %s: %s: session %s (start %" PRId64 " ms) is in an earlier input too: "
				        "its hits are added again\n",
				        cmd, path, *s->name ? readable(s->name, buf) : "(unnamed)", s->start_ms);
				break;
			}
	}
}

int cli_covdata_read_input(cov_inputs *seen, jinst_covdata **out, const char *cmd, const char *path,
                           const jinst_covdata *so_far, jinst_diag *diag)
{
	uint8_t *bytes;
	size_t len;
	*out = NULL;
	int rc = jinst_file_read(&bytes, &len, path, JINST_COVDATA_MAX_SIZE, diag);
	if (rc)
		return rc;
	uint64_t hash = jinst_instrument_identity(bytes, len);
	for (size_t i = 0; i < seen->count; i++)
		if (seen->items[i].size == len && seen->items[i].hash == hash) {
			if (strcmp(path, seen->items[i].path) == 0)
				fprintf(stderr, "jinst %s: %s: given twice: read once\n", cmd, path);
			else
				fprintf(stderr, "jinst %s: %s: the same bytes as %s: read once\n", cmd, path,
				        seen->items[i].path);
			free(bytes);
			return 0;
		}
	rc = jinst_covdata_read(out, bytes, len, diag);
	free(bytes);
	struct cov_input *items = rc ? NULL : realloc(seen->items, (seen->count + 1) * sizeof *items);
	if (!rc && !items) {
		jinst_covdata_free(*out);
		*out = NULL;
		rc = JINST_ENOMEM;
		snprintf(diag->message, sizeof diag->message, "out of memory");
	}
	if (rc)
		return rc;
	seen->items = items;
	seen->items[seen->count++] = (struct cov_input){path, len, hash};
	print_repeated_sessions(cmd, path, *out, so_far);
	return 0;
}

void cli_cov_inputs_free(cov_inputs *seen)
{
	free(seen->items);
	seen->items = NULL;
	seen->count = 0;
}

/* ---- jinst merge ----------------------------------------------------------- */

typedef struct merge_ctx {
	const char *input;
	int conflicts;
} merge_ctx;

static void print_conflict(void *p, const char *name, uint64_t identity, uint64_t other)
{
	merge_ctx *m = p;
	char buf[NAME_BUF];
	fprintf(stderr,
	        "jinst merge: %s: class %s has identity %016" PRIx64 ", already merged with %016" PRIx64
	        ": two versions of the class, kept apart\n",
	        m->input, readable(name, buf), other, identity);
	m->conflicts++;
}

static void print_inner_conflict(void *p, const char *name, uint64_t identity, uint64_t other)
{
	merge_ctx *m = p;
	char buf[NAME_BUF];
	fprintf(stderr, "jinst merge: %s: class %s has identities %016" PRIx64 " and %016" PRIx64 ", kept apart\n",
	        m->input, readable(name, buf), identity, other);
	m->conflicts++;
}

/* Reads and merges every input into out: 0, or 1 after a line saying why.
 * *merged: the inputs merged (an input given twice is merged once). */
static int merge_inputs(jinst_covdata *out, char **inputs, int n, int *conflicts, int *merged)
{
	merge_ctx m = {0};
	cov_inputs seen = {0};
	for (int i = 0; i < n; i++) {
		jinst_covdata *in;
		jinst_diag diag = {0};
		if (cli_covdata_read_input(&seen, &in, "merge", inputs[i], out, &diag)) {
			print_read_error("merge", inputs[i], &diag);
			cli_cov_inputs_free(&seen);
			return 1;
		}
		if (!in)
			continue;
		++*merged;
		m.input = inputs[i];
		jinst_covdata_conflicts(in, print_inner_conflict, &m);
		int rc = jinst_covdata_merge(out, in, print_conflict, &m, &diag);
		jinst_covdata_free(in);
		if (rc == JINST_ENOMEM)
			fputs("jinst: out of memory\n", stderr);
		else if (rc)
			fprintf(stderr, "jinst merge: %s: class %s: %s\n", inputs[i], diag.where, diag.message);
		if (rc) {
			cli_cov_inputs_free(&seen);
			return 1;
		}
	}
	cli_cov_inputs_free(&seen);
	*conflicts = m.conflicts;
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	const char *output = NULL;
	char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
	int n = 0;
	if (!inputs)
		return 1;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc && !output) {
			output = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "jinst merge: %s '%s'\n%s",
			        strcmp(argv[i], "-o") == 0 ? (output ? "a second output" : "no file after") : "unknown option",
			        argv[i], merge_usage);
			free(inputs);
			return 2;
		} else {
			inputs[n++] = argv[i];
		}
	}
	if (!output || !n) {
		fprintf(stderr, "jinst merge: %s\n%s", output ? "no input" : "no output (-o OUT)", merge_usage);
		free(inputs);
		return 2;
	}
	jinst_covdata *out;
	if (jinst_covdata_new(&out)) {
		free(inputs);
		return 1;
	}
	int conflicts = 0, merged = 0, rc = merge_inputs(out, inputs, n, &conflicts, &merged);
	jinst_diag diag = {0};
	if (!rc && jinst_covdata_write_file(output, out, &diag)) {
		fprintf(stderr, "jinst merge: %s: %s\n", output, diag.message);
		rc = 1;
	}
	if (!rc)
		printf("%s: %d files merged: %zu sessions, %zu classes, %d identity conflicts\n", output, merged,
		       jinst_covdata_session_count(out), jinst_covdata_class_count(out), conflicts);
	jinst_covdata_free(out);
	free(inputs);
	return rc;
}

/* ---- jinst dump FILE.cov --------------------------------------------------- */

/* ms since the epoch as 2026-01-02T03:04:05.678Z. */
static void print_time(int64_t ms)
{
	int64_t s = ms / 1000, frac = ms % 1000;
	if (frac < 0)
		s--, frac += 1000;
	time_t t = (time_t)s;
	struct tm tm;
	char buf[64];
	if (gmtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm))
		printf("%s.%03dZ", buf, (int)frac);
	else
		printf("%" PRId64 " ms", ms);
}

static void print_class(const jinst_covdata_class *c)
{
	char buf[NAME_BUF];
	printf("%s %016" PRIx64 " %s %" PRIu32 "/%" PRIu32 " hit", readable(c->name, buf), c->identity,
	       c->kind == JINST_COVDATA_BOOLEANS ? "booleans" : "counts", jinst_covdata_class_hits(c), c->probe_count);
	if (c->probe_count)
		fputs(c->kind == JINST_COVDATA_BOOLEANS ? " " : ":", stdout);
	for (uint32_t i = 0; i < c->probe_count; i++)
		if (c->kind == JINST_COVDATA_BOOLEANS)
			putchar(c->booleans[i] ? '1' : '0');
		else
			printf(" %" PRIu64, c->counts[i]);
	putchar('\n');
}

static void print_covdata(const char *path, size_t len, const jinst_covdata *d)
{
	char buf[NAME_BUF];
	printf("Coverage data %s (%zu bytes, format version %d)\n", path, len, JINST_COVDATA_VERSION);
	printf("sessions: %zu\n", jinst_covdata_session_count(d));
	for (size_t i = 0; i < jinst_covdata_session_count(d); i++) {
		const jinst_covdata_session *s = jinst_covdata_session_at(d, i);
		printf("  %s start ", *s->name ? readable(s->name, buf) : "(unnamed)");
		print_time(s->start_ms);
		fputs(" dump ", stdout);
		print_time(s->dump_ms);
		putchar('\n');
	}
	uint64_t hit = 0, total = 0;
	for (size_t i = 0; i < jinst_covdata_class_count(d); i++) {
		hit += jinst_covdata_class_hits(jinst_covdata_class_at(d, i));
		total += jinst_covdata_class_at(d, i)->probe_count;
	}
	printf("classes: %zu, probes hit %" PRIu64 " of %" PRIu64 ", identity conflicts %zu\n",
	       jinst_covdata_class_count(d), hit, total, jinst_covdata_conflicts(d, NULL, NULL));
	for (size_t i = 0; i < jinst_covdata_class_count(d); i++) {
		fputs("  ", stdout);
		print_class(jinst_covdata_class_at(d, i));
	}
}

int cli_dump_covdata(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t head[JINST_COVDATA_MAGIC_LEN];
	size_t got = f ? fread(head, 1, sizeof head, f) : 0;
	if (f)
		fclose(f);
	/* A .cov is read as one whatever its bytes, so that a damaged or empty
	 * one is refused as merge and report refuse it, not as a class file. */
	size_t n = strlen(path);
	bool named = n > 4 && strcmp(path + n - 4, ".cov") == 0;
	if (!named && !jinst_covdata_is(head, got))
		return -1;
	uint8_t *bytes;
	size_t len;
	jinst_diag diag = {0};
	jinst_covdata *d;
	int rc = jinst_file_read(&bytes, &len, path, JINST_COVDATA_MAX_SIZE, &diag);
	if (!rc) {
		rc = jinst_covdata_read(&d, bytes, len, &diag);
		free(bytes);
	}
	if (rc) {
		print_read_error("dump", path, &diag);
		return 1;
	}
	print_covdata(path, len, d);
	jinst_covdata_free(d);
	return 0;
}
