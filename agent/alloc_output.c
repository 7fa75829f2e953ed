/*
 * The allocation module's outputs, from the rows alloc_run.c read:
 *
 *   OUT.alloc.txt     the ranked SITES table, in the style of HPROF's
 *                     heap=sites: rank, self and accumulated share of the
 *                     bytes (live bytes under alloc=live, as HPROF ordered
 *                     them), bytes and objects, the site
 *                     class.method(File:line) and the type; under depth=N
 *                     a trace column and, after SITES END, each trace's
 *                     frames, innermost first, as HPROF's TRACE records:
 *                     the site's method with the site's File:line, its
 *                     callers with "File:Unknown line", HPROF's words for
 *                     a frame without one (the shadow stack holds the
 *                     methods, not the lines they call from); identical
 *                     traces (two sites on one line under one stack) are
 *                     one record, numbered in the order of the ranks
 *   OUT.alloc.tsv     the same rows with named columns (rank bytes objects
 *                     class method descriptor source line type instruction,
 *                     then live_bytes live_objects, then stack)
 *   OUT.alloc.folded  folded stacks weighted by bytes: the trace's frames,
 *                     outermost first, then the site's method; one frame,
 *                     the site's method, without depth=N
 *
 * Frames are trace=times' method ids, named by the instrumenter's table.
 * With append=y (the core's option) each file gets the session after the
 * sessions before, under the line "# jinst session N, pid P, started
 * TIME" (output.c), as trace's outputs do.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc_output.h"
#include "modules.h"

static int by_bytes(const void *a, const void *b)
{
	const jinst_alloc_row *x = a, *y = b;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes < y->live_bytes ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->objects != y->objects)
		return x->objects < y->objects ? 1 : -1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* "pkg.Cls.method(File.java:12)", HPROF's and the stack trace's form. */
static void site_name(const jinst_alloc_site *s, char *out, size_t size)
{
	jinst_agent_place_name(s->class_name, s->method, s->source, s->line, out, size);
}

/* Method id's "pkg.Cls.method" (and its source file into *source, or
 * NULL); false when the instrumenter does not know it. */
static bool frame_name(int64_t id, char *out, size_t size, const char **source)
{
	jinst_method_info info;
	const jinst_instrument *ins = jinst_agent_instrumenter();
	char cls[512];
	if (id < 0 || id > UINT32_MAX || !ins || jinst_instrument_method_info(ins, (uint32_t)id, &info) < 0)
		return false;
	jinst_agent_java_name(info.class_name, cls, sizeof cls);
	snprintf(out, size, "%s.%s", cls, info.name);
	if (source)
		*source = info.source_file;
	return true;
}

bool jinst_alloc_is_site_method(int64_t id, const jinst_alloc_site *s)
{
	jinst_method_info info;
	const jinst_instrument *ins = jinst_agent_instrumenter();
	return id >= 0 && id <= UINT32_MAX && ins && jinst_instrument_method_info(ins, (uint32_t)id, &info) == 0 &&
	       !strcmp(info.class_name, s->class_name) && !strcmp(info.name, s->method) &&
	       !strcmp(info.descriptor, s->descriptor);
}

/* A row's trace as a record prints it: its frames, and the site's line
 * when the innermost frame is the site's method (else 0). */
typedef struct trace_key {
	size_t row;
	uint32_t line;
	const int64_t *frames;
	int depth;
} trace_key;

static int same_trace(const trace_key *x, const trace_key *y)
{
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	for (int d = 0; d < x->depth; d++)
		if (x->frames[d] != y->frames[d])
			return x->frames[d] < y->frames[d] ? -1 : 1;
	return 0;
}

static int by_trace(const void *a, const void *b)
{
	const trace_key *x = a, *y = b;
	int c = same_trace(x, y);
	return c ? c : x->row < y->row ? -1 : x->row > y->row;
}

/* Each row's TRACE number into number[] (1, 2... in the order of the
 * ranks, one per distinct trace; without memory, a record per row). */
static void number_traces(const jinst_alloc_report *r, size_t *number)
{
	trace_key *k = calloc(r->count + 1, sizeof *k);
	size_t *first = calloc(r->count + 1, sizeof *first);
	if (!k || !first) {
		free(k);
		free(first);
		for (size_t i = 0; i < r->count; i++)
			number[i] = i + 1;
		return;
	}
	for (size_t i = 0; i < r->count; i++) {
		jinst_alloc_site s;
		bool site = jinst_alloc_sites_get(&s, r->sites, r->rows[i].site) == 0;
		bool first_is_site = site && jinst_alloc_is_site_method(r->rows[i].frames[0], &s);
		k[i] = (trace_key){i, first_is_site ? s.line : 0, r->rows[i].frames, r->depth};
	}
	qsort(k, r->count, sizeof *k, by_trace);
	/* each row's trace's first row: the lowest rank, first of its trace
	 * in the sort (whose last key is the row) */
	for (size_t i = 0; i < r->count; i++)
		first[k[i].row] = i && !same_trace(&k[i], &k[i - 1]) ? first[k[i - 1].row] : k[i].row;
	size_t n = 0;
	for (size_t i = 0; i < r->count; i++)
		number[i] = first[i] == i ? ++n : number[first[i]];
	free(k);
	free(first);
}

static void write_traces(FILE *f, const jinst_alloc_report *r, const size_t *number)
{
	char name[1200];
	size_t written = 0;
	for (size_t i = 0; i < r->count; i++) {
		if (number[i] <= written)
			continue;
		written = number[i];
		jinst_alloc_site s;
		bool site = jinst_alloc_sites_get(&s, r->sites, r->rows[i].site) == 0;
		fprintf(f, "TRACE %zu:\n", number[i]);
		for (int d = 0; d < r->depth && r->rows[i].frames[d] >= 0; d++) {
			const char *src = NULL;
			if (!frame_name(r->rows[i].frames[d], name, sizeof name, &src))
				fprintf(f, "\t(method %lld)\n", (long long)r->rows[i].frames[d]);
			else if (d == 0 && site && s.line && jinst_alloc_is_site_method(r->rows[i].frames[0], &s))
				fprintf(f, "\t%s(%s:%u)\n", name, src ? src : "Unknown Source", s.line);
			else
				fprintf(f, "\t%s(%s:Unknown line)\n", name, src ? src : "Unknown Source");
		}
	}
	fprintf(f, "TRACE END\n");
}

static void write_table(FILE *f, const jinst_alloc_report *r)
{
	char date[64], site[1200], type[512];
	time_t now = time(NULL);
	struct tm tm;
	strftime(date, sizeof date, "%a %b %d %H:%M:%S %Y", localtime_r(&now, &tm));
	fprintf(f, "SITES BEGIN (ordered by %s bytes) %s\n", r->live ? "live" : "allocated", date);
	fprintf(f, "total %lld bytes, %lld objects, %zu %s", (long long)r->bytes, (long long)r->objects, r->count,
	        r->depth ? "traces" : "sites");
	if (r->live)
		fprintf(f, "; live %lld bytes, %lld objects", (long long)r->live_bytes, (long long)r->live_objects);
	fprintf(f, "\n          percent%s          allocated\n", r->live ? "            live           " : "");
	fprintf(f, " rank   self  accum%s          bytes    objects%s  site  type\n",
	        r->live ? "          bytes    objects" : "", r->depth ? "  trace" : "");
	size_t *number = r->depth ? calloc(r->count + 1, sizeof *number) : NULL;
	if (number)
		number_traces(r, number);
	double accum = 0, total = (double)(r->live ? r->live_bytes : r->bytes);
	for (size_t i = 0; i < r->count; i++) {
		const jinst_alloc_row *w = &r->rows[i];
		jinst_alloc_site s;
		if (jinst_alloc_sites_get(&s, r->sites, w->site))
			continue;
		double self = total > 0 ? 100.0 * (double)(r->live ? w->live_bytes : w->bytes) / total : 0;
		accum += self;
		site_name(&s, site, sizeof site);
		jinst_agent_java_name(s.type, type, sizeof type);
		fprintf(f, "%5zu %5.2f%% %5.2f%%", i + 1, self, accum);
		if (r->live)
			fprintf(f, " %14lld %10lld", (long long)w->live_bytes, (long long)w->live_objects);
		fprintf(f, " %14lld %10lld", (long long)w->bytes, (long long)w->objects);
		if (r->depth)
			fprintf(f, " %6zu", number ? number[i] : i + 1);
		fprintf(f, "  %s  %s\n", site, type);
	}
	fprintf(f, "SITES END\n");
	if (number)
		write_traces(f, r, number);
	free(number);
}

/* The frames of a row, outermost first, ';' between (may be ""). */
static void stack_text(const jinst_alloc_report *r, const jinst_alloc_row *w, char *out, size_t size)
{
	size_t k = 0;
	out[0] = 0;
	for (int d = r->depth - 1; d >= 0 && k + 1 < size; d--) {
		char name[1200];
		if (w->frames[d] < 0)
			continue;
		if (!frame_name(w->frames[d], name, sizeof name, NULL))
			snprintf(name, sizeof name, "(method %lld)", (long long)w->frames[d]);
		k += (size_t)snprintf(out + k, size - k, "%s%s", k ? ";" : "", name);
	}
}

static void write_tsv(FILE *f, const jinst_alloc_report *r)
{
	static const char *const kinds[] = {"new", "array", "multiarray", "native"};
	char type[512], cls[512], stack[8192];
	fprintf(f, "rank\tbytes\tobjects\tclass\tmethod\tdescriptor\tsource\tline\ttype\tinstruction%s%s\n",
	        r->live ? "\tlive_bytes\tlive_objects" : "", r->depth ? "\tstack" : "");
	for (size_t i = 0; i < r->count; i++) {
		const jinst_alloc_row *w = &r->rows[i];
		jinst_alloc_site s;
		if (jinst_alloc_sites_get(&s, r->sites, w->site))
			continue;
		jinst_agent_java_name(s.class_name, cls, sizeof cls);
		jinst_agent_java_name(s.type, type, sizeof type);
		fprintf(f, "%zu\t%lld\t%lld\t%s\t%s\t%s\t%s\t%u\t%s\t%s", i + 1, (long long)w->bytes, (long long)w->objects,
		        cls, s.method, s.descriptor, s.source ? s.source : "", s.line, type, kinds[s.kind < 4 ? s.kind : 0]);
		if (r->live)
			fprintf(f, "\t%lld\t%lld", (long long)w->live_bytes, (long long)w->live_objects);
		if (r->depth) {
			stack_text(r, w, stack, sizeof stack);
			fprintf(f, "\t%s", stack);
		}
		fputc('\n', f);
	}
}

/* A folded line and its bytes, for adding up equal lines. */
typedef struct folded_line {
	char *text;
	int64_t bytes;
} folded_line;

static int by_text(const void *a, const void *b)
{
	return strcmp(((const folded_line *)a)->text, ((const folded_line *)b)->text);
}

/* The frames (outermost first), then the site's method unless it is the
 * innermost frame already (a timed method that allocates). */
static char *folded_text(const jinst_alloc_report *r, const jinst_alloc_row *w)
{
	char stack[8192], cls[512], leaf[1200];
	jinst_alloc_site s;
	if (jinst_alloc_sites_get(&s, r->sites, w->site))
		return NULL;
	jinst_agent_java_name(s.class_name, cls, sizeof cls);
	snprintf(leaf, sizeof leaf, "%s.%s", cls, s.method);
	stack[0] = 0;
	if (r->depth)
		stack_text(r, w, stack, sizeof stack);
	size_t n = strlen(stack), l = strlen(leaf);
	bool same = n >= l && !strcmp(stack + n - l, leaf) && (n == l || stack[n - l - 1] == ';');
	size_t size = n + l + 2;
	char *t = malloc(size);
	if (t)
		snprintf(t, size, "%s%s%s", stack, n && !same ? ";" : "", same ? "" : leaf);
	return t;
}

static void write_folded(FILE *f, const jinst_alloc_report *r)
{
	folded_line *v = calloc(r->count + 1, sizeof *v);
	size_t m = 0;
	if (!v)
		return;
	for (size_t i = 0; i < r->count; i++)
		if ((v[m].text = folded_text(r, &r->rows[i])))
			v[m++].bytes = r->rows[i].bytes;
	qsort(v, m, sizeof *v, by_text);
	fprintf(f, "# jinst folded stacks: allocated bytes (%s)\n",
	        r->depth ? "trace=times' frames, then the allocating method" : "one frame, the allocating method");
	for (size_t i = 0; i < m;) {
		int64_t bytes = 0;
		size_t j = i;
		for (; j < m && !strcmp(v[i].text, v[j].text); j++)
			bytes += v[j].bytes;
		fprintf(f, "%s %lld\n", v[i].text, (long long)bytes);
		i = j;
	}
	for (size_t i = 0; i < m; i++)
		free(v[i].text);
	free(v);
}

const char *const jinst_alloc_exts[] = {".alloc.txt", ".alloc.tsv", ".alloc.folded", NULL};

typedef struct alloc_writer {
	void (*fn)(FILE *, const jinst_alloc_report *);
	const jinst_alloc_report *r;
} alloc_writer;

static int write_with(FILE *f, const void *ctx)
{
	const alloc_writer *w = ctx;
	w->fn(f, w->r);
	return 0;
}

void jinst_alloc_write(jinst_alloc_report *r)
{
	static void (*const writers[])(FILE *, const jinst_alloc_report *) = {write_table, write_tsv, write_folded};
	qsort(r->rows, r->count, sizeof *r->rows, by_bytes);
	for (size_t i = 0; jinst_alloc_exts[i]; i++)
		jinst_agent_output_write(jinst_alloc_exts[i], write_with, &(alloc_writer){writers[i], r});
}
