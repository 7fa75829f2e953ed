/*
 * The trace outputs (trace_output.h). Every input is a snapshot taken while
 * other threads may still run, so nothing in it is trusted: lengths are
 * checked before each read, node parents must come before their children,
 * and ids without a name are skipped.
 */
#include "trace_output.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"

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

/* By self time, largest first; equal times by name, so the output is stable. */
static int by_self(const void *pa, const void *pb)
{
	const named *x = pa, *y = pb;
	if (x->c != y->c)
		return x->c > y->c ? -1 : 1;
	return named_cmp(pa, pb);
}

int jinst_trace_write_profile(FILE *f, const int64_t *times, size_t n, jinst_trace_names names, void *ctx)
{
	named *v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		return JINST_ENOMEM;
	size_t k = 0;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		const int64_t *t = times + 3 * i;
		if (t[0] <= 0 || i > UINT32_MAX)
			continue;
		named e = {0};
		if (names(ctx, (uint32_t)i, &e.cls, &e.name, &e.desc) < 0)
			continue;
		e.a = t[0];
		e.b = t[1] > 0 ? t[1] : 0;
		e.c = t[2] > 0 ? t[2] : 0;
		sum += (double)e.c;
		v[k++] = e;
	}
	qsort(v, k, sizeof *v, by_self);
	/* HPROF cpu=times prints rank, self %, accumulated %, count and the
	 * method; times in milliseconds are added, as it has no trace column. */
	fprintf(f, "CPU TIME (ms) BEGIN (total = %.3f) wall time, self and inclusive, per method\n", sum / 1e6);
	fprintf(f, "%5s %7s %7s %10s %12s %12s  %s\n", "rank", "self", "accum", "count", "self ms", "total ms",
	        "method");
	double acc = 0;
	for (size_t i = 0; i < k; i++) {
		double pct = sum > 0 ? 100.0 * (double)v[i].c / sum : 0;
		acc += pct;
		fprintf(f, "%5zu %6.2f%% %6.2f%% %10" PRId64 " %12.3f %12.3f  %s.%s%s\n", i + 1, pct, acc, v[i].a,
		        (double)v[i].c / 1e6, (double)v[i].b / 1e6, v[i].cls, v[i].name, v[i].desc);
	}
	fprintf(f, "CPU TIME (ms) END\n");
	free(v);
	return ferror(f) ? JINST_EIO : 0;
}

/* ---- folded stacks ---------------------------------------------------- */

typedef struct stack_line {
	char *stack;
	int64_t value;
} stack_line;

static int line_cmp(const void *pa, const void *pb)
{
	return strcmp(((const stack_line *)pa)->stack, ((const stack_line *)pb)->stack);
}

/* A growable string. */
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

int jinst_trace_write_folded(FILE *f, const int64_t *tree, size_t len, jinst_trace_names names, void *ctx)
{
	stack_line *lines = NULL;
	size_t nlines = 0, caplines = 0;
	int err = 0;
	size_t k = 0;
	int64_t threads = len > 0 ? tree[k++] : 0;
	for (int64_t t = 0; t < threads && k < len && !err; t++) {
		int64_t nodes = tree[k++];
		if (nodes < 0 || (uint64_t)nodes > (len - k) / 4)
			break;
		const int64_t *node = tree + k; /* node j (1-based) at node[4 * (j - 1)] */
		k += 4 * (size_t)nodes;
		/* self = inclusive minus the children's inclusive; each node's
		 * frame string is its parent's plus its own. */
		int64_t *self = calloc((size_t)nodes + 1, sizeof *self);
		char **path = calloc((size_t)nodes + 1, sizeof *path);
		bool *ok = calloc((size_t)nodes + 1, sizeof *ok);
		if (!self || !path || !ok) {
			err = JINST_ENOMEM;
		} else {
			ok[0] = true;
			for (int64_t j = 1; j <= nodes; j++) {
				const int64_t *e = node + 4 * (j - 1);
				int64_t parent = e[0];
				self[j] += e[3];
				if (parent < 0 || parent >= j || !ok[parent])
					continue;
				if (parent > 0)
					self[parent] -= e[3];
				const char *cls, *name, *desc;
				if (e[1] < 0 || e[1] > UINT32_MAX || names(ctx, (uint32_t)e[1], &cls, &name, &desc) < 0)
					continue;
				sbuf s = {0};
				if (parent > 0) {
					sb_str(&s, path[parent]);
					sb_add(&s, ";", 1);
				}
				sb_str(&s, cls);
				sb_add(&s, ".", 1);
				sb_str(&s, name);
				if (s.err) {
					free(s.p);
					err = s.err;
					break;
				}
				path[j] = s.p;
				ok[j] = true;
			}
			for (int64_t j = 1; j <= nodes && !err; j++) {
				if (!ok[j] || self[j] <= 0)
					continue;
				if (nlines == caplines) {
					size_t cap = caplines ? 2 * caplines : 256;
					stack_line *p = realloc(lines, cap * sizeof *p);
					if (!p) {
						err = JINST_ENOMEM;
						break;
					}
					lines = p;
					caplines = cap;
				}
				lines[nlines].stack = path[j];
				lines[nlines].value = self[j];
				path[j] = NULL;
				nlines++;
			}
		}
		if (path)
			for (int64_t j = 0; j <= nodes; j++)
				free(path[j]);
		free(path);
		free(self);
		free(ok);
	}
	if (!err) {
		if (nlines)
			qsort(lines, nlines, sizeof *lines, line_cmp);
		for (size_t i = 0; i < nlines;) {
			int64_t v = lines[i].value;
			size_t j = i + 1;
			while (j < nlines && !strcmp(lines[j].stack, lines[i].stack))
				v += lines[j++].value;
			fprintf(f, "%s %" PRId64 "\n", lines[i].stack, v);
			i = j;
		}
	}
	for (size_t i = 0; i < nlines; i++)
		free(lines[i].stack);
	free(lines);
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
                             size_t thread_name_count, long pid, jinst_trace_names names, void *ctx)
{
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
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"jinst\",\"dropped\":%" PRId64 "},\n"
	           "\"traceEvents\":[\n", dropped);
	fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,\"args\":{\"name\":\"java\"}}", pid);
	k = 1;
	for (int64_t t = 0; t < threads && len - k >= 3; t++) {
		int64_t tid = events[k], n = events[k + 1];
		k += 3;
		if (n < 0 || (uint64_t)n > (len - k) / 2)
			break;
		if ((size_t)t < thread_name_count && thread_names && thread_names[t]) {
			fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%" PRId64 ",\"args\":{\"name\":\"",
			        pid, tid);
			json_str(f, thread_names[t]);
			fputs("\"}}", f);
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
