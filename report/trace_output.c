/*
 * The trace outputs (include/jinst/report.h). Every input is a snapshot
 * taken while other threads may still run, so nothing in it is trusted:
 * lengths are checked before each read, node parents must come before their children,
 * and ids without a name are skipped.
 */
#include "jinst/report.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fold_internal.h"
#include "jinst/classfile.h"

/* Each clock's name, words, and what the profile's note says its times
 * come from; a clock of the future is one row here and one enumerator in
 * report.h. */
static const struct { const char *name, *words, *source; } clocks[] = {
	[JINST_TRACE_CLOCK_WALL] = {"wall", "wall time", "a clock that advances"},
	[JINST_TRACE_CLOCK_CPU] = {"cpu", "CPU time", "each thread's CPU time, read"},
};

const char *jinst_trace_clock_name(jinst_trace_clock clock)
{
	return (unsigned)clock < sizeof clocks / sizeof clocks[0] ? clocks[clock].name : NULL;
}

const char *jinst_trace_clock_words(jinst_trace_clock clock)
{
	return (unsigned)clock < sizeof clocks / sizeof clocks[0] ? clocks[clock].words : NULL;
}

typedef struct named {
	const char *cls, *name, *desc;
	int64_t a, b, c; /* count, or calls / total / self */
} named;

static int named_cmp(const void *pa, const void *pb)
{
	const named *x = pa, *y = pb;
	int r = strcmp(x->cls, y->cls);
	if (!r)
		r = strcmp(x->name, y->name);
	if (!r)
		r = strcmp(x->desc, y->desc);
	return r;
}

int jinst_trace_write_counts(FILE *f, const int64_t *counts, size_t n, jinst_trace_names names, void *ctx)
{
	named *v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		return JINST_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (counts[i] <= 0 || i > UINT32_MAX)
			continue;
		named e = {0};
		if (names(ctx, (uint32_t)i, &e.cls, &e.name, &e.desc) < 0)
			continue;
		e.a = counts[i];
		v[k++] = e;
	}
	qsort(v, k, sizeof *v, named_cmp);
	for (size_t i = 0; i < k; i++)
		fprintf(f, "%s\t%s\t%s\t%" PRId64 "\n", v[i].cls, v[i].name, v[i].desc, v[i].a);
	free(v);
	return ferror(f) ? JINST_EIO : 0;
}

/* Timed methods by self time, largest first, then the untimed (c < 0) by
 * count; equal ones by name, so the output is stable. */
static int by_self(const void *pa, const void *pb)
{
	const named *x = pa, *y = pb;
	if (x->c != y->c && (x->c >= 0 || y->c >= 0))
		return x->c > y->c ? -1 : 1;
	if (x->c < 0 && x->a != y->a)
		return x->a > y->a ? -1 : 1;
	return named_cmp(pa, pb);
}

int jinst_trace_write_profile(FILE *f, const int64_t *times, size_t n, const int64_t *counts, size_t ncounts,
                              long tick_us, jinst_trace_clock clock, jinst_trace_names names, void *ctx)
{
	const char *cname = jinst_trace_clock_name(clock), *words = jinst_trace_clock_words(clock);
	if (!cname)
		return JINST_EINVAL;
	/* HPROF's "CPU TIME (ms)" header, with the clock it really is */
	char head[32];
	size_t h = 0;
	for (; words[h] && h < sizeof head - 1; h++)
		head[h] = (char)(words[h] >= 'a' && words[h] <= 'z' ? words[h] - 'a' + 'A' : words[h]);
	head[h] = 0;
	size_t all = n > ncounts ? n : ncounts;
	named *v = malloc((all ? all : 1) * sizeof *v);
	if (!v)
		return JINST_ENOMEM;
	size_t k = 0, untimed = 0;
	double sum = 0;
	for (size_t i = 0; i < all && i <= UINT32_MAX; i++) {
		const int64_t *t = i < n ? times + 3 * i : NULL;
		int64_t entered = i < ncounts ? counts[i] : 0;
		if ((!t || t[0] <= 0) && entered <= 0)
			continue;
		named e = {0};
		if (names(ctx, (uint32_t)i, &e.cls, &e.name, &e.desc) < 0)
			continue;
		if (t && t[0] > 0) {
			e.a = t[0];
			e.b = t[1] > 0 ? t[1] : 0;
			e.c = t[2] > 0 ? t[2] : 0;
			sum += (double)e.c;
		} else {
			e.a = entered;
			e.b = e.c = -1;
			untimed++;
		}
		v[k++] = e;
	}
	qsort(v, k, sizeof *v, by_self);
	/* HPROF cpu=times prints rank, self %, accumulated %, count and the
	 * method; times in milliseconds are added, as it has no trace column. */
	fprintf(f, "%s (ms) BEGIN (total = %.3f) clock %s, unit ms: %s, self and inclusive, per method\n", head,
	        sum / 1e6, cname, words);
	if (tick_us > 0)
		fprintf(f, "(times from %s every %ld us, each advance given to the stack where it\n"
		           " falls: self to the method on top, inclusive to each method on the stack; counts exact)\n",
		        clocks[clock].source, tick_us);
	else /* the figures are not a measure of the clock the header names */
		fputs("(no clock ran (tick=0): the times are only those the program gave by hand through\n"
		      " jinst.rt.Hooks.sample, none otherwise; counts exact)\n",
		      f);
	if (untimed)
		fprintf(f, "(%zu %s counted, not timed, %s marked -: leaves, which have no loop and call nothing\n"
		           " but on the way to a throw; their time is their callers' self time (leaves=time times them))\n",
		        untimed, untimed == 1 ? "method" : "methods", untimed == 1 ? "is" : "are");
	fprintf(f, "%5s %7s %7s %10s %12s %12s  %s\n", "rank", "self", "accum", "count", "self ms", "total ms",
	        "method");
	double acc = 0;
	for (size_t i = 0; i < k; i++) {
		if (v[i].c < 0) {
			fprintf(f, "%5zu %7s %7s %10" PRId64 " %12s %12s  %s.%s%s\n", i + 1, "-", "-", v[i].a, "-", "-",
			        v[i].cls, v[i].name, v[i].desc);
			continue;
		}
		double pct = sum > 0 ? 100.0 * (double)v[i].c / sum : 0;
		acc += pct;
		fprintf(f, "%5zu %6.2f%% %6.2f%% %10" PRId64 " %12.3f %12.3f  %s.%s%s\n", i + 1, pct, acc, v[i].a,
		        (double)v[i].c / 1e6, (double)v[i].b / 1e6, v[i].cls, v[i].name, v[i].desc);
	}
	fprintf(f, "%s (ms) END\n", head);
	free(v);
	return ferror(f) ? JINST_EIO : 0;
}

/* ---- folded stacks (the trie: fold.c) ------------------------------------ */

typedef struct sbuf {
	char *p;
	size_t len, cap;
	int err;
} sbuf;

static void sb_add(sbuf *s, const char *text, size_t n)
{
	if (s->err)
		return;
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		while (s->len + n + 1 > cap)
			cap *= 2;
		char *p = realloc(s->p, cap);
		if (!p) {
			s->err = JINST_ENOMEM;
			return;
		}
		s->p = p;
		s->cap = cap;
	}
	memcpy(s->p + s->len, text, n);
	s->len += n;
	s->p[s->len] = 0;
}

static void sb_str(sbuf *s, const char *text)
{
	sb_add(s, text, strlen(text));
}


/* Prints every stack with self time, depth first (fold.c). A stack
 * whose inclusive time is below min (and its callees) is not printed: its
 * time goes to one SMALL frame under its caller, printed right after the
 * caller (SMALL sorts before class names). */
static const char SMALL[] = "(small stacks)";

static int fold_print(FILE *f, const folder *fo, double min_share)
{
	fold_order o = {0};
	size_t *pos = malloc(fo->nst * sizeof *pos), *len = malloc(fo->nst * sizeof *len);
	uint32_t *at = malloc(fo->nst * sizeof *at);
	sbuf path = {0};
	int err = 0;
	if (!pos || !len || !at || (err = fold_order_make(&o, fo)) != 0) {
		err = JINST_ENOMEM;
		goto out;
	}
	const fold_child *ch = o.ch;
	const size_t *first = o.first;
	const int64_t *incl = o.incl;
	int64_t min = (int64_t)(min_share * (double)incl[0]);
	/* at[d]: the stack at depth d; pos[d]: its next child; len[d]: the
	 * path's length up to it */
	size_t d = 0;
	at[0] = 0;
	pos[0] = first[0];
	len[0] = 0;
	bool entered = true;
	while (!path.err) {
		if (entered) {
			entered = false;
			/* the small callees of the stack just entered, as one */
			int64_t small = 0;
			for (size_t i = first[at[d]]; i < first[at[d] + 1]; i++)
				if (incl[ch[i].stack] < min)
					small += incl[ch[i].stack];
			if (small > 0) {
				path.len = len[d];
				if (d > 0)
					sb_add(&path, ";", 1);
				sb_add(&path, SMALL, sizeof SMALL - 1);
				if (path.err)
					break;
				fwrite(path.p, 1, path.len, f);
				fprintf(f, " %" PRId64 "\n", small);
			}
		}
		if (pos[d] == first[at[d] + 1]) {
			if (d == 0)
				break;
			d--;
			continue;
		}
		const fold_child *c = &ch[pos[d]++];
		if (incl[c->stack] < min || incl[c->stack] == 0)
			continue;
		path.len = len[d];
		if (d > 0)
			sb_add(&path, ";", 1);
		sb_str(&path, c->text);
		if (path.err)
			break;
		int64_t v = fo->st[c->stack].self;
		if (v > 0) {
			fwrite(path.p, 1, path.len, f);
			fprintf(f, " %" PRId64 "\n", v);
		}
		d++;
		at[d] = c->stack;
		pos[d] = first[c->stack];
		len[d] = path.len;
		entered = true;
	}
	err = path.err;
out:
	fold_order_free(&o);
	free(pos);
	free(len);
	free(at);
	free(path.p);
	return err;
}

int jinst_trace_write_folded(FILE *f, const int64_t *tree, size_t len, double min_share, jinst_trace_clock clock,
                             jinst_trace_names names, void *ctx)
{
	if (!jinst_trace_clock_name(clock))
		return JINST_EINVAL;
	/* no number at the end: the tools skip the line as no stack */
	fprintf(f, "# jinst folded stacks: clock %s, unit ns (self %s per stack, in nanoseconds)\n",
	        jinst_trace_clock_name(clock), jinst_trace_clock_words(clock));
	folder fo;
	int err = fold_build(&fo, tree, len, names, ctx);
	if (!err)
		err = fold_print(f, &fo, min_share);
	fold_free(&fo);
	if (err)
		return err;
	return ferror(f) ? JINST_EIO : 0;
}

/* ---- Chrome trace-event JSON --------------------------------------------- */

/* A JSON string body: quotes, backslashes and control characters escaped;
 * other bytes as they are (names are UTF-8, or modified UTF-8 from the VM). */
static void json_str(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
}

int jinst_trace_write_chrome(FILE *f, const int64_t *events, size_t len, const char *const *thread_names,
                             size_t thread_name_count, long pid, jinst_trace_clock clock, jinst_trace_names names,
                             void *ctx)
{
	if (!jinst_trace_clock_name(clock))
		return JINST_EINVAL;
	/* First pass: the earliest timestamp, so times start near 0. */
	int64_t t0 = INT64_MAX, dropped = 0;
	size_t k = 0;
	int64_t threads = len > 0 ? events[k++] : 0;
	for (int64_t t = 0; t < threads && len - k >= 3; t++) {
		int64_t n = events[k + 1];
		dropped += events[k + 2] > 0 ? events[k + 2] : 0;
		k += 3;
		if (n < 0 || (uint64_t)n > (len - k) / 2)
			break;
		if (n > 0 && events[k] < t0)
			t0 = events[k];
		k += 2 * (size_t)n;
	}
	if (t0 == INT64_MAX)
		t0 = 0;
	/* The policy in the file itself: a reader of a truncated timeline
	 * learns that its end is missing, and why. */
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"jinst\",\"clock\":\"%s\",\"unit\":\"us\","
	           "\"dropped\":%" PRId64 ",\n"
	           "\"kept\":\"each thread's first calls, entry and exit, up to maxevents events per thread; "
	           "the calls after its buffer filled are not recorded: dropped counts them (per thread: "
	           "its thread_name's args); threads that ended keep at most maxevents/100 timelines (at least "
	           "1024) and 10 x maxevents events between them, those created first, the calls of the others "
	           "counted under (ended threads)\"},\n"
	           "\"traceEvents\":[\n", jinst_trace_clock_name(clock), dropped);
	fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,\"args\":{\"name\":\"java\"}}", pid);
	k = 1;
	for (int64_t t = 0; t < threads && len - k >= 3; t++) {
		int64_t tid = events[k], n = events[k + 1], lost = events[k + 2];
		k += 3;
		if (n < 0 || (uint64_t)n > (len - k) / 2)
			break;
		if ((size_t)t < thread_name_count && thread_names && thread_names[t]) {
			fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%" PRId64 ",\"args\":{\"name\":\"",
			        pid, tid);
			json_str(f, thread_names[t]);
			fprintf(f, "\",\"dropped\":%" PRId64 "}}", lost > 0 ? lost : 0);
		}
		for (int64_t i = 0; i < n; i++, k += 2) {
			int64_t ts = events[k], word = events[k + 1];
			const char *cls, *name, *desc;
			if (word < 0 || names(ctx, (uint32_t)((uint64_t)word >> 1), &cls, &name, &desc) < 0)
				continue;
			int64_t rel = ts > t0 ? ts - t0 : 0;
			fprintf(f, ",\n{\"ph\":\"%c\",\"pid\":%ld,\"tid\":%" PRId64 ",\"ts\":%" PRId64 ".%03d,\"name\":\"",
			        (word & 1) ? 'E' : 'B', pid, tid, rel / 1000, (int)(rel % 1000));
			json_str(f, cls);
			fputc('.', f);
			json_str(f, name);
			fputs("\",\"cat\":\"java\"", f);
			if (!(word & 1)) {
				fputs(",\"args\":{\"descriptor\":\"", f);
				json_str(f, desc);
				fputs("\"}", f);
			}
			fputc('}', f);
		}
	}
	fputs("\n]}\n", f);
	return ferror(f) ? JINST_EIO : 0;
}

/* ---- the method table ------------------------------------------------ */

static void table_field(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\\': fputs("\\\\", f); break;
		case '\t': fputs("\\t", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		default: fputc(*s, f);
		}
	}
}

static int write_method_rows(FILE *f, uint32_t n, jinst_trace_method method, void *ctx)
{
	for (uint32_t id = 0; id < n; id++) {
		const char *cls, *name, *desc;
		int timed = 0;
		if (method(ctx, id, &cls, &name, &desc, &timed) < 0)
			continue;
		fprintf(f, "%" PRIu32 "\t", id);
		table_field(f, cls);
		fputc('\t', f);
		table_field(f, name);
		fputc('\t', f);
		table_field(f, desc);
		fputs(timed ? "\ttimed\n" : "\tcounted\n", f);
	}
	return ferror(f) ? JINST_EIO : 0;
}

int jinst_trace_write_methods(FILE *f, uint32_t n, jinst_trace_method method, void *ctx)
{
	fputs("# jinst methods 1\n", f);
	return write_method_rows(f, n, method, ctx);
}

int jinst_trace_write_run_methods(FILE *f, uint64_t key, uint32_t n, jinst_trace_method method, void *ctx)
{
	fprintf(f, "# jinst methods 2\nrun\t%016" PRIx64 "\t%" PRIu32 "\n", key, n);
	return write_method_rows(f, n, method, ctx);
}
