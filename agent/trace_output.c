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

/* ---- folded stacks ---------------------------------------------------- *
 *
 * The threads' call trees are merged into one tree first: a node per
 * (merged parent, frame), found through a hash table (a frame is
 * "class.method": overloads share one), holding the self
 * time of that stack summed over the threads. The lines are then written by
 * a walk of the merged tree with one growing path buffer, parents before
 * children and children in the order of their frame names, so each line
 * costs its own length once. The former way, a string per node of each
 * tree then a sort of the strings, cost the sum of all path lengths in
 * copies and far more in comparisons of long common prefixes: a 3 s javac
 * run traced whole (650,000 stacks, 37 frames deep on average, 1.1 GB of
 * output) took 7.5 s to write.
 */

typedef struct fnode {
	uint32_t parent, first, next; /* children linked through first/next; 0 is none (the root) */
	int64_t method;               /* the frame's index in ftree.frames (overloads share a frame) */
	int64_t self;
	const char *frame;            /* "class.method" */
} fnode;

typedef struct ftree {
	fnode *n;
	size_t count, cap;
	uint32_t *slots;   /* hash of (parent, frame) -> node index; 0 empty */
	size_t nslots;
	char **frames;     /* the distinct frame strings, owned */
	size_t nframes, capframes;
	uint32_t *fslots;  /* hash of a frame string -> its index + 1; 0 empty */
	size_t nfslots;
} ftree;

static uint64_t fhash(const char *a, size_t la, const char *b, size_t lb)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < la; i++)
		h = (h ^ (uint8_t)a[i]) * 0x100000001b3ull;
	h = (h ^ '.') * 0x100000001b3ull;
	for (size_t i = 0; i < lb; i++)
		h = (h ^ (uint8_t)b[i]) * 0x100000001b3ull;
	return h;
}

/* The index of frame "cls.name" in t->frames, added when new; -1 on failure. */
static int64_t fframe(ftree *t, const char *cls, const char *name, int *err)
{
	size_t lc = strlen(cls), ln = strlen(name);
	if ((t->nframes + 1) * 2 > t->nfslots) {
		size_t ns = t->nfslots ? 2 * t->nfslots : 1024;
		uint32_t *fs = calloc(ns, sizeof *fs);
		if (!fs) {
			*err = JINST_ENOMEM;
			return -1;
		}
		for (size_t i = 0; i < t->nframes; i++) {
			const char *fr = t->frames[i], *dot = strrchr(fr, '.');
			size_t k = (size_t)fhash(fr, (size_t)(dot - fr), dot + 1, strlen(dot + 1)) & (ns - 1);
			while (fs[k])
				k = (k + 1) & (ns - 1);
			fs[k] = (uint32_t)i + 1;
		}
		free(t->fslots);
		t->fslots = fs;
		t->nfslots = ns;
	}
	size_t k = (size_t)fhash(cls, lc, name, ln) & (t->nfslots - 1);
	for (; t->fslots[k]; k = (k + 1) & (t->nfslots - 1)) {
		const char *fr = t->frames[t->fslots[k] - 1];
		if (!strncmp(fr, cls, lc) && fr[lc] == '.' && !strcmp(fr + lc + 1, name))
			return t->fslots[k] - 1;
	}
	if (t->nframes == t->capframes || t->nframes >= UINT32_MAX - 1) {
		size_t cap = t->capframes ? 2 * t->capframes : 256;
		char **f = t->nframes < UINT32_MAX - 1 ? realloc(t->frames, cap * sizeof *f) : NULL;
		if (!f) {
			*err = JINST_ENOMEM;
			return -1;
		}
		t->frames = f;
		t->capframes = cap;
	}
	char *fr = malloc(lc + ln + 2);
	if (!fr) {
		*err = JINST_ENOMEM;
		return -1;
	}
	memcpy(fr, cls, lc);
	fr[lc] = '.';
	memcpy(fr + lc + 1, name, ln + 1);
	t->frames[t->nframes] = fr;
	t->fslots[k] = (uint32_t)++t->nframes;
	return (int64_t)t->nframes - 1;
}

static size_t fslot(const ftree *t, uint32_t parent, int64_t method)
{
	uint64_t h = ((uint64_t)parent * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)method * 0xC2B2AE3D27D4EB4Full);
	h ^= h >> 29;
	return (size_t)h & (t->nslots - 1);
}

static int fgrow(ftree *t)
{
	size_t ns = t->nslots ? 2 * t->nslots : 1024;
	uint32_t *s = calloc(ns, sizeof *s);
	if (!s)
		return JINST_ENOMEM;
	free(t->slots);
	t->slots = s;
	t->nslots = ns;
	for (size_t i = 1; i < t->count; i++) {
		size_t k = fslot(t, t->n[i].parent, t->n[i].method);
		while (t->slots[k])
			k = (k + 1) & (t->nslots - 1);
		t->slots[k] = (uint32_t)i;
	}
	return 0;
}

/* The merged node of method's frame under parent, made when new; 0 for a
 * method without a name, and on failure (*err set). */
static uint32_t fchild(ftree *t, uint32_t parent, int64_t id, jinst_trace_names names, void *ctx, int *err)
{
	const char *cls, *name, *desc;
	if (id < 0 || id > UINT32_MAX || names(ctx, (uint32_t)id, &cls, &name, &desc) < 0)
		return 0;
	int64_t method = fframe(t, cls, name, err);
	if (method < 0)
		return 0;
	if ((t->count + 1) * 2 > t->nslots && (*err = fgrow(t)))
		return 0;
	size_t k = fslot(t, parent, method);
	for (; t->slots[k]; k = (k + 1) & (t->nslots - 1)) {
		fnode *e = &t->n[t->slots[k]];
		if (e->parent == parent && e->method == method)
			return t->slots[k];
	}
	if (t->count >= UINT32_MAX - 1) {
		*err = JINST_ENOMEM;
		return 0;
	}
	if (t->count == t->cap) {
		size_t cap = t->cap * 2;
		fnode *n = realloc(t->n, cap * sizeof *n);
		if (!n) {
			*err = JINST_ENOMEM;
			return 0;
		}
		t->n = n;
		t->cap = cap;
	}
	uint32_t i = (uint32_t)t->count++;
	fnode *e = &t->n[i];
	memset(e, 0, sizeof *e);
	e->parent = parent;
	e->method = method;
	e->frame = t->frames[method];
	e->next = t->n[parent].first;
	t->n[parent].first = i;
	t->slots[k] = i;
	return i;
}

typedef struct fchild_ref {
	const char *frame;
	uint32_t node;
} fchild_ref;

static int fchild_cmp(const void *pa, const void *pb)
{
	return strcmp(((const fchild_ref *)pa)->frame, ((const fchild_ref *)pb)->frame);
}

/* Writes the lines of the merged tree, depth first, each stack's line
 * before those of its callees and callees in the order of their frames. */
static int fwrite_tree(FILE *f, ftree *t)
{
	/* Each node's children, sorted by frame, in one array: node i's are
	 * kids[at[i] .. at[i] + nkids[i]). */
	size_t n = t->count;
	fchild_ref *kids = malloc((n ? n : 1) * sizeof *kids);
	size_t *at = calloc(n, sizeof *at);
	uint32_t *nkids = calloc(n, sizeof *nkids);
	uint32_t *stack = malloc((n ? n : 1) * sizeof *stack); /* nodes to visit; at most n */
	size_t *plen = calloc(n, sizeof *plen);                 /* path length before a node's frame */
	char *path = NULL;
	size_t pcap = 0;
	int err = 0;
	if (!kids || !at || !nkids || !stack || !plen) {
		err = JINST_ENOMEM;
		goto out;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		at[i] = k;
		for (uint32_t c = t->n[i].first; c; c = t->n[c].next)
			kids[k++] = (fchild_ref){t->n[c].frame, c};
		nkids[i] = (uint32_t)(k - at[i]);
		if (nkids[i] > 1)
			qsort(kids + at[i], nkids[i], sizeof *kids, fchild_cmp);
	}
	/* Pushed in reverse so the first child is visited first. */
	size_t sp = 0;
	for (uint32_t j = nkids[0]; j > 0; j--) {
		stack[sp++] = kids[at[0] + j - 1].node;
		plen[kids[at[0] + j - 1].node] = 0;
	}
	while (sp > 0 && !err) {
		uint32_t i = stack[--sp];
		const fnode *e = &t->n[i];
		size_t base = plen[i], fl = strlen(e->frame);
		size_t need = base + 1 + fl + 1;
		if (need > pcap) {
			size_t cap = pcap ? pcap : 4096;
			while (cap < need)
				cap *= 2;
			char *p = realloc(path, cap);
			if (!p) {
				err = JINST_ENOMEM;
				break;
			}
			path = p;
			pcap = cap;
		}
		size_t len = base;
		if (base > 0)
			path[len++] = ';';
		memcpy(path + len, e->frame, fl);
		len += fl;
		if (e->self > 0) {
			fwrite(path, 1, len, f);
			fprintf(f, " %" PRId64 "\n", e->self);
		}
		for (uint32_t j = nkids[i]; j > 0; j--) {
			uint32_t c = kids[at[i] + j - 1].node;
			plen[c] = len;
			stack[sp++] = c;
		}
	}
out:
	free(kids);
	free(at);
	free(nkids);
	free(stack);
	free(plen);
	free(path);
	return err;
}

int jinst_trace_write_folded(FILE *f, const int64_t *tree, size_t len, jinst_trace_names names, void *ctx)
{
	ftree t = {0};
	int err = 0;
	size_t k = 0;
	int64_t threads = len > 0 ? tree[k++] : 0;
	t.cap = 1024;
	t.n = calloc(t.cap, sizeof *t.n);
	if (!t.n || (err = fgrow(&t)))
		goto out;
	t.count = 1; /* the root */
	for (int64_t th = 0; th < threads && k < len && !err; th++) {
		int64_t nodes = tree[k++];
		if (nodes < 0 || (uint64_t)nodes > (len - k) / 4)
			break;
		const int64_t *node = tree + k; /* node j (1-based) at node[4 * (j - 1)] */
		k += 4 * (size_t)nodes;
		/* Per input node: its merged node (0: left out) and its self time,
		 * inclusive minus the children's inclusive. */
		uint32_t *map = calloc((size_t)nodes + 1, sizeof *map);
		int64_t *self = calloc((size_t)nodes + 1, sizeof *self);
		bool *ok = calloc((size_t)nodes + 1, sizeof *ok);
		if (!map || !self || !ok) {
			err = JINST_ENOMEM;
		} else {
			ok[0] = true;
			for (int64_t j = 1; j <= nodes && !err; j++) {
				const int64_t *e = node + 4 * (j - 1);
				int64_t parent = e[0];
				self[j] += e[3];
				if (parent < 0 || parent >= j || !ok[parent])
					continue;
				if (parent > 0)
					self[parent] -= e[3];
				uint32_t m = fchild(&t, map[parent], e[1], names, ctx, &err);
				if (!m)
					continue;
				map[j] = m;
				ok[j] = true;
			}
			for (int64_t j = 1; j <= nodes; j++)
				if (ok[j] && self[j] > 0)
					t.n[map[j]].self += self[j];
		}
		free(map);
		free(self);
		free(ok);
	}
	if (!err)
		err = fwrite_tree(f, &t);
out:
	for (size_t i = 0; i < t.nframes; i++)
		free(t.frames[i]);
	free(t.frames);
	free(t.n);
	free(t.slots);
	free(t.fslots);
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
