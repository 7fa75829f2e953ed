/* jinst report: coverage data and class files to reports, with the flags of
 * JaCoCo's `jacococli report`. The data files are read and merged first
 * (a missing or damaged one stops everything before any work), then every
 * class of --classfiles is parsed, matched to its data by name and identity
 * (XXH64 of the class file; of several class files of one name, the one
 * the data were recorded for), analyzed (include/jinst/coverage.h) and added
 * to the report model (include/jinst/covreport.h); the outputs are written
 * last (report_out.c). A class file whose name has data but not for its
 * identity is named on stderr and in the report, never counted as missed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jinst/archive.h"
#include "jinst/covdata.h"
#include "jinst/coverage.h"
#include "jinst/covreport.h"
#include "jinst/instrument.h"
#include "report_cli.h"

static const char report_usage[] = "usage: jinst report DATA.cov... --classfiles PATH [options] "
                                   "(jinst help report)\n";

static int usage_error(const char *fmt, const char *arg)
{
	fputs("jinst report: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	fputs(report_usage, stderr);
	return 2;
}

/* Appends to a NULL-terminated list of borrowed strings. */
static int list_add(const char ***list, size_t *n, const char *s)
{
	const char **l = realloc(*list, (*n + 2) * sizeof *l);
	if (!l)
		return -1;
	l[(*n)++] = s;
	l[*n] = NULL;
	*list = l;
	return 0;
}

static const char **option_slot(report_args *a, const char *flag)
{
	static const char *const names[] = {"--xml", "--html", "--csv", "--lcov", "--name", "--encoding", "--tabwith"};
	const char **slots[] = {&a->xml, &a->html, &a->csv, &a->lcov, &a->name, &a->encoding, &a->tabwith};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(flag, names[i]) == 0)
			return slots[i];
	return NULL;
}

/* "DIR/" names DIR: the HTML report's temporary and aside folders are
 * named after it (DIR.tmp.XXXXXX), which with the slash would be inside
 * it, and a source root's slash would double in the paths joined to it. */
static void strip_slashes(char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
}

static int parse_args(report_args *a, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		if (arg[0] != '-' || strcmp(arg, "-") == 0) {
			if (list_add(&a->data, &a->data_count, arg))
				return 1;
			continue;
		}
		const char **slot = option_slot(a, arg);
		bool list = strcmp(arg, "--classfiles") == 0 || strcmp(arg, "--sourcefiles") == 0;
		if (!slot && !list)
			return usage_error("unknown option %s", arg);
		if (i + 1 >= argc)
			return usage_error("%s needs a value", arg);
		char *v = argv[++i];
		if (strcmp(arg, "--html") == 0 || strcmp(arg, "--sourcefiles") == 0)
			strip_slashes(v);
		if (slot)
			*slot = v;
		else if (strcmp(arg, "--classfiles") == 0 ? list_add(&a->classfiles, &a->classfile_count, v)
		                                            : list_add(&a->sourcefiles, &a->sourcefile_count, v))
			return 1;
	}
	if (!a->data_count)
		return usage_error("%s", "no coverage data file given");
	if (!a->classfile_count)
		return usage_error("%s", "no --classfiles given");
	char *end;
	a->tab_width = a->tabwith ? strtoul(a->tabwith, &end, 10) : 4;
	if (a->tabwith && (*end || !*a->tabwith || a->tab_width < 1 || a->tab_width > 16))
		return usage_error("--tabwith %s: a number of spaces from 1 to 16", a->tabwith);
	if (!a->name)
		a->name = "JaCoCo Coverage Report";
	return 0;
}

static void print_diag(const char *path, const jinst_diag *d)
{
	fprintf(stderr, "jinst report: %s: %s\n", path, d->message);
}

/* Every data file, merged into one model; NULL after a line on stderr. */
static jinst_covdata *read_data(const report_args *a)
{
	jinst_covdata *all = NULL;
	cov_inputs seen = {0};
	for (size_t i = 0; i < a->data_count; i++) {
		jinst_covdata *d;
		jinst_diag diag;
		if (cli_covdata_read_input(&seen, &d, "report", a->data[i], all, &diag)) {
			print_diag(a->data[i], &diag);
			jinst_covdata_free(all);
			all = NULL;
			break;
		}
		if (!d)
			continue;
		if (!all) {
			all = d;
			continue;
		}
		int rc = jinst_covdata_merge(all, d, NULL, NULL, &diag);
		jinst_covdata_free(d);
		if (rc) {
			print_diag(a->data[i], &diag);
			jinst_covdata_free(all);
			all = NULL;
			break;
		}
	}
	cli_cov_inputs_free(&seen);
	return all;
}

/* ---- classes ---------------------------------------------------------------- */

typedef struct walk_ctx {
	const jinst_covdata *data;
	jinst_covreport *report;
	seen_set seen;
	bool scan; /* the first walk: only seen_note */
	int failures;
	int instrumented; /* classes of --classfiles that carry jinst's marker */
} walk_ctx;

/* Some record of the name with another identity, or NULL. */
static const jinst_covdata_class *other_identity(const jinst_covdata *data, const char *name)
{
	size_t n = jinst_covdata_class_count(data), lo = 0, hi = n;
	while (lo < hi) { /* records are in canonical order: by name first */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(jinst_covdata_class_at(data, mid)->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	const jinst_covdata_class *c = jinst_covdata_class_at(data, lo);
	return c && strcmp(c->name, name) == 0 ? c : NULL;
}

static int add_analysis(walk_ctx *w, jinst_class *cls, const char *where, const jinst_covdata_class *rec)
{
	jinst_coverage_result *res;
	jinst_diag diag;
	int rc = jinst_coverage_analyze(&res, cls, rec ? rec->booleans : NULL, rec ? rec->counts : NULL,
	                                rec ? rec->probe_count : 0, NULL, &diag);
	if (rc) {
		/* Code with jsr/ret (JaCoCo inlines it; the coverage core does not
		 * place probes in it): the class is left out, the rest reported. */
		fprintf(stderr, "jinst report: %s: not %s: %s\n", where,
		        rc == JINST_EUNSUPPORTED ? "reported" : "analyzed", diag.message);
		w->failures += rc != JINST_EUNSUPPORTED;
		return 0;
	}
	/* JaCoCo's analyzer skips module-info; a class without code (an
	 * interface of abstract methods) is still in its XML, with no counter. */
	if (!res->skipped) {
		jinst_covreport_class rc_cls;
		rc = jinst_covreport_class_from(&rc_cls, cls, res, &diag);
		if (!rc)
			rc = jinst_covreport_add_class(w->report, &rc_cls);
		jinst_covreport_class_clear(&rc_cls);
		if (rec && rec->kind == JINST_COVDATA_COUNTS)
			w->report->counts = true;
	}
	jinst_coverage_result_free(res);
	return rc;
}

static int one_class(walk_ctx *w, jinst_class *cls, const char *name, const char *where, uint64_t identity)
{
	const jinst_covdata_class *rec = jinst_covdata_find(w->data, name, identity);
	if (w->scan)
		return seen_note(&w->seen, name, identity, rec != NULL, where) ? JINST_ENOMEM : 0;
	if (!seen_take(&w->seen, name, identity))
		return 0;
	const jinst_covdata_class *other = rec ? NULL : other_identity(w->data, name);
	if (other) {
		fprintf(stderr,
		        "jinst report: %s: class %s has identity %016" PRIx64 ", the data was recorded for %016" PRIx64
		        ": not reported\n",
		        where, name, identity, other->identity);
		return jinst_covreport_add_mismatch(w->report, name, where, identity, other->identity);
	}
	return add_analysis(w, cls, where, rec);
}

/* Instrumented classes named one by one; the rest are counted. */
#define NAMED_INSTRUMENTED 3

static int on_class(void *ctx, const char *where, const uint8_t *bytes, size_t len)
{
	walk_ctx *w = ctx;
	jinst_class *cls;
	jinst_diag diag;
	if (jinst_class_parse(&cls, bytes, len, NULL, NULL, &diag)) {
		if (w->scan) {
			fprintf(stderr, "jinst report: %s: not a class file: %s\n", where, diag.message);
			w->failures++;
		}
		return 0;
	}
	/* JaCoCo's Analyzer reports no synthetic class (package-info, javac's
	 * switch maps), whatever the data say. */
	if (jinst_class_access_flags(cls) & 0x1000) {
		jinst_class_free(cls);
		return 0;
	}
	/* An instrumented class's code holds the probes and hooks beside the
	 * program's: analyzed, it gives counters of code the program does not
	 * have (a class that never ran, 33 instructions for 9). JaCoCo's
	 * report refuses such classes too. */
	jinst_marker mk;
	if (w->scan && jinst_instrument_read_marker(NULL, bytes, len, &mk, &diag) == 0 && mk.present &&
	    ++w->instrumented <= NAMED_INSTRUMENTED) {
		uint16_t mlen;
		const uint8_t *m = jinst_class_name(cls, &mlen);
		fprintf(stderr, "jinst report: %s: class %.*s was instrumented by jinst (%s)\n", where,
		        m ? (int)mlen : 0, m ? (const char *)m : "", mk.passes);
	}
	uint16_t nlen;
	const uint8_t *n = jinst_class_name(cls, &nlen);
	char *name = n ? strndup((const char *)n, nlen) : NULL;
	int rc = name ? one_class(w, cls, name, where, jinst_instrument_identity(bytes, len)) : JINST_ENOMEM;
	free(name);
	jinst_class_free(cls);
	return rc;
}

static void on_walk_error(void *ctx, const char *name, const char *message)
{
	walk_ctx *w = ctx;
	if (!w->scan)
		return; /* said by the first walk */
	fprintf(stderr, "jinst report: %s: %s\n", name, message);
	w->failures++;
}

static int build_report(jinst_covreport *r, const jinst_covdata *data, const report_args *a)
{
	walk_ctx w = {data, r, {0}, true, 0, 0};
	for (size_t i = 0; i < jinst_covdata_session_count(data); i++) {
		const jinst_covdata_session *s = jinst_covdata_session_at(data, i);
		if (jinst_covreport_add_session(r, s->name, s->start_ms, s->dump_ms))
			return -1;
	}
	/* Two walks: the first finds which class file of each name to report
	 * (seen_note), the second reports it. */
	for (size_t i = 0; i < a->classfile_count; i++)
		jinst_walk_nested(a->classfiles[i], on_class, on_walk_error, &w);
	if (w.instrumented) {
		char named[32] = "";
		if (w.instrumented > NAMED_INSTRUMENTED)
			snprintf(named, sizeof named, " (%d named above)", NAMED_INSTRUMENTED);
		fprintf(stderr,
		        "jinst report: %d class%s of --classfiles %s instrumented by jinst%s: --classfiles takes the "
		        "original classes, those the program was instrumented from\n",
		        w.instrumented, w.instrumented == 1 ? "" : "es", w.instrumented == 1 ? "was" : "were",
		        named);
		w.failures++;
	}
	w.scan = false;
	for (size_t i = 0; !w.failures && i < a->classfile_count; i++)
		jinst_walk_nested(a->classfiles[i], on_class, on_walk_error, &w);
	seen_free(&w.seen);
	if (w.failures)
		return -1;
	return jinst_covreport_finish(r) ? -1 : 0;
}

int cmd_report(int argc, char **argv)
{
	report_args a = {0};
	int status = parse_args(&a, argc, argv);
	jinst_covdata *data = NULL;
	jinst_covreport *r = NULL;
	if (!status)
		status = report_check_outputs(&a) ? 1 : 0;
	if (!status && !(data = read_data(&a)))
		status = 1;
	if (!status && (jinst_covreport_new(&r, a.name) || build_report(r, data, &a)))
		status = 1;
	if (!status)
		status = report_write_outputs(r, &a) ? 1 : 0;
	jinst_covreport_free(r);
	jinst_covdata_free(data);
	free(a.data);
	free(a.classfiles);
	free(a.sourcefiles);
	return status;
}
