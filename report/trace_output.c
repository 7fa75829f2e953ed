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
                              long tick_us, jinst_trace_names names, void *ctx)
{
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
	fprintf(f, "CPU TIME (ms) BEGIN (total = %.3f) wall time, self and inclusive, per method\n", sum / 1e6);
	if (tick_us > 0)
		fprintf(f, "(times from a clock that advances every %ld us, each advance given to the stack where it\n"
		           " falls: self to the method on top, inclusive to each method on the stack; counts exact)\n",
		        tick_us);
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
	fprintf(f, "CPU TIME (ms) END\n");
	free(v);
	return ferror(f) ? JINST_EIO : 0;
}

/* ---- folded stacks ----------------------------------------------------
 *
 * The snapshot holds a call tree per thread. A line of the output is a
 * stack, and the same stack occurs in several threads and, through
 * overloads (work(I) and work(J) both print as A.work), several times in
 * one tree. Giving each node its own copy of its path, as a first version
 * did, costs the node count times the stack's printed length: javac with
 * the JDK traced has millions of nodes a hundred frames deep, and that took
 * tens of gigabytes. So the stacks are interned instead, into one trie keyed
 * by (parent stack, frame text), whose size is the number of distinct
 * stacks; the self times of the nodes are added to their stack; and the
 * lines are printed by a depth-first walk over the trie that keeps only
 * the current path. The order is the walk's: each stack before its callees,
 * callees by frame text (bytewise). That is `sort`'s order but where a frame
 * is a prefix of a sibling's (a.b, a.b1), and keeps every subtree together,
 * as flame-graph tools want.
 */

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

#define FOLD_NONE UINT32_MAX
/* The method id a call tree gives the node that holds the calls of a caller
 * whose thread's tree was full (runtime-java's Ctx.FULL, -1 there). */
#define FOLD_FULL (UINT32_MAX - 1)

typedef struct fold_stack {
	uint32_t parent, frame;
	int64_t self;
} fold_stack;

typedef struct folder {
	/* frames: the distinct texts "class.method"; fhash: their indexes + 1 */
	char **text;
	size_t nframes, capframes;
	uint32_t *fhash;
	size_t fhcap;
	/* method id -> frame (FOLD_NONE: no name), open addressing on the id */
	uint32_t *mid, *mframe;
	size_t mcap, mcount;
	/* stacks: 0 the root; shash: indexes + 1, keyed by (parent, frame) */
	fold_stack *st;
	size_t nst, capst;
	uint32_t *shash;
	size_t shcap;
} folder;

static uint64_t fold_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static uint64_t fold_text_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Doubles a table of indexes + 1 and reinserts, each entry's hash given by
 * rehash. 0 or JINST_ENOMEM. */
static int fold_regrow(uint32_t **table, size_t *cap, uint64_t (*rehash)(const folder *, uint32_t), const folder *fo)
{
	size_t ncap = *cap ? 2 * *cap : 1024;
	uint32_t *t = calloc(ncap, sizeof *t);
	if (!t)
		return JINST_ENOMEM;
	for (size_t i = 0; i < *cap; i++) {
		uint32_t v = (*table)[i];
		if (!v)
			continue;
		size_t k = rehash(fo, v - 1) & (ncap - 1);
		while (t[k])
			k = (k + 1) & (ncap - 1);
		t[k] = v;
	}
	free(*table);
	*table = t;
	*cap = ncap;
	return 0;
}

static uint64_t fold_frame_rehash(const folder *fo, uint32_t i)
{
	return fold_text_hash(fo->text[i]);
}

static uint64_t fold_stack_key(uint32_t parent, uint32_t frame)
{
	return fold_mix(((uint64_t)parent << 32) | frame);
}

static uint64_t fold_stack_rehash(const folder *fo, uint32_t i)
{
	return fold_stack_key(fo->st[i].parent, fo->st[i].frame);
}

/* The frame of method id: *frame (FOLD_NONE for an id without a name). */
static int fold_frame(folder *fo, uint32_t id, jinst_trace_names names, void *ctx, uint32_t *frame)
{
	size_t k = 0;
	if (fo->mcap) {
		for (k = fold_mix(id) & (fo->mcap - 1); fo->mid[k] != FOLD_NONE; k = (k + 1) & (fo->mcap - 1))
			if (fo->mid[k] == id) {
				*frame = fo->mframe[k];
				return 0;
			}
	}
	if (2 * (fo->mcount + 1) > fo->mcap) {
		size_t ncap = fo->mcap ? 2 * fo->mcap : 1024;
		uint32_t *ids = malloc(ncap * sizeof *ids), *frames = malloc(ncap * sizeof *frames);
		if (!ids || !frames) {
			free(ids);
			free(frames);
			return JINST_ENOMEM;
		}
		memset(ids, 0xff, ncap * sizeof *ids);
		for (size_t i = 0; i < fo->mcap; i++) {
			if (fo->mid[i] == FOLD_NONE)
				continue;
			size_t j = fold_mix(fo->mid[i]) & (ncap - 1);
			while (ids[j] != FOLD_NONE)
				j = (j + 1) & (ncap - 1);
			ids[j] = fo->mid[i];
			frames[j] = fo->mframe[i];
		}
		free(fo->mid);
		free(fo->mframe);
		fo->mid = ids;
		fo->mframe = frames;
		fo->mcap = ncap;
		for (k = fold_mix(id) & (ncap - 1); fo->mid[k] != FOLD_NONE; k = (k + 1) & (ncap - 1))
			;
	}
	uint32_t fr = FOLD_NONE;
	const char *cls, *name, *desc;
	if (id == FOLD_FULL) {
		cls = "(tree full)";
		name = NULL;
	}
	if (id == FOLD_FULL || names(ctx, id, &cls, &name, &desc) == 0) {
		size_t lc = strlen(cls), ln = name ? strlen(name) : 0;
		char *t = malloc(lc + ln + 2);
		if (!t)
			return JINST_ENOMEM;
		memcpy(t, cls, lc + 1);
		if (name) {
			t[lc] = '.';
			memcpy(t + lc + 1, name, ln + 1);
		}
		if (2 * (fo->nframes + 1) > fo->fhcap && fold_regrow(&fo->fhash, &fo->fhcap, fold_frame_rehash, fo)) {
			free(t);
			return JINST_ENOMEM;
		}
		size_t h = fold_text_hash(t) & (fo->fhcap - 1);
		for (; fo->fhash[h]; h = (h + 1) & (fo->fhcap - 1))
			if (!strcmp(fo->text[fo->fhash[h] - 1], t))
				break;
		if (fo->fhash[h]) {
			free(t);
			fr = fo->fhash[h] - 1;
		} else {
			if (fo->nframes == fo->capframes) {
				size_t cap = fo->capframes ? 2 * fo->capframes : 256;
				char **p = realloc(fo->text, cap * sizeof *p);
				if (!p) {
					free(t);
					return JINST_ENOMEM;
				}
				fo->text = p;
				fo->capframes = cap;
			}
			fr = (uint32_t)fo->nframes;
			fo->text[fo->nframes++] = t;
			fo->fhash[h] = fr + 1;
		}
	}
	fo->mid[k] = id;
	fo->mframe[k] = fr;
	fo->mcount++;
	*frame = fr;
	return 0;
}

/* The stack frame called from parent: *stack, interned. */
static int fold_stack_of(folder *fo, uint32_t parent, uint32_t frame, uint32_t *stack)
{
	if (2 * (fo->nst + 1) > fo->shcap && fold_regrow(&fo->shash, &fo->shcap, fold_stack_rehash, fo))
		return JINST_ENOMEM;
	size_t h = fold_stack_key(parent, frame) & (fo->shcap - 1);
	for (; fo->shash[h]; h = (h + 1) & (fo->shcap - 1)) {
		const fold_stack *x = &fo->st[fo->shash[h] - 1];
		if (x->parent == parent && x->frame == frame) {
			*stack = fo->shash[h] - 1;
			return 0;
		}
	}
	if (fo->nst >= UINT32_MAX - 1)
		return JINST_ENOMEM;
	if (fo->nst == fo->capst) {
		size_t cap = 2 * fo->capst;
		fold_stack *p = realloc(fo->st, cap * sizeof *p);
		if (!p)
			return JINST_ENOMEM;
		fo->st = p;
		fo->capst = cap;
	}
	*stack = (uint32_t)fo->nst;
	fo->st[fo->nst++] = (fold_stack){parent, frame, 0};
	fo->shash[h] = *stack + 1;
	return 0;
}

/* Adds one thread's tree (nodes records of parent, method, self ns; node
 * j at node[3 * (j - 1)]). */
static int fold_thread(folder *fo, const int64_t *node, int64_t nodes, jinst_trace_names names, void *ctx)
{
	uint32_t *map = malloc(((size_t)nodes + 1) * sizeof *map);
	int err = 0;
	if (!map)
		return JINST_ENOMEM;
	map[0] = 0;
	for (int64_t j = 1; j <= nodes; j++) {
		const int64_t *e = node + 3 * (j - 1);
		int64_t parent = e[0];
		map[j] = FOLD_NONE;
		if (parent < 0 || parent >= j || map[parent] == FOLD_NONE)
			continue;
		uint32_t frame;
		if (e[1] != -1 && (e[1] < 0 || e[1] >= FOLD_FULL))
			continue;
		if ((err = fold_frame(fo, e[1] == -1 ? FOLD_FULL : (uint32_t)e[1], names, ctx, &frame)) != 0)
			break;
		if (frame == FOLD_NONE)
			continue;
		if ((err = fold_stack_of(fo, map[parent], frame, &map[j])) != 0)
			break;
		if (e[2] > 0)
			fo->st[map[j]].self += e[2];
	}
	free(map);
	return err;
}

typedef struct fold_child {
	uint32_t parent, stack;
	const char *text;
} fold_child;

static int fold_child_cmp(const void *pa, const void *pb)
{
	const fold_child *x = pa, *y = pb;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* Prints every stack with self time, depth first (see above). A stack
 * whose inclusive time is below min (and its callees) is not printed: its
 * time goes to one SMALL frame under its caller, printed right after the
 * caller (SMALL sorts before class names). */
static const char SMALL[] = "(small stacks)";

static int fold_print(FILE *f, const folder *fo, double min_share)
{
	size_t n = fo->nst - 1; /* the stacks but the root */
	fold_child *ch = malloc((n ? n : 1) * sizeof *ch);
	size_t *first = calloc(fo->nst + 1, sizeof *first);
	size_t *pos = malloc(fo->nst * sizeof *pos), *len = malloc(fo->nst * sizeof *len);
	uint32_t *at = malloc(fo->nst * sizeof *at);
	int64_t *incl = malloc(fo->nst * sizeof *incl);
	sbuf path = {0};
	int err = 0;
	if (!ch || !first || !pos || !len || !at || !incl) {
		err = JINST_ENOMEM;
		goto out;
	}
	/* inclusive times: a stack's parent was interned before it */
	for (size_t i = 0; i < fo->nst; i++)
		incl[i] = fo->st[i].self > 0 ? fo->st[i].self : 0;
	for (size_t i = fo->nst - 1; i > 0; i--)
		incl[fo->st[i].parent] += incl[i];
	int64_t min = (int64_t)(min_share * (double)incl[0]);
	for (size_t i = 0; i < n; i++)
		ch[i] = (fold_child){fo->st[i + 1].parent, (uint32_t)(i + 1), fo->text[fo->st[i + 1].frame]};
	qsort(ch, n, sizeof *ch, fold_child_cmp);
	/* the children of p: ch[first[p]] to ch[first[p + 1] - 1] */
	for (size_t i = 0; i < n; i++)
		first[ch[i].parent + 1]++;
	for (size_t p = 0; p < fo->nst; p++)
		first[p + 1] += first[p];
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
	free(ch);
	free(first);
	free(pos);
	free(len);
	free(at);
	free(incl);
	free(path.p);
	return err;
}

int jinst_trace_write_folded(FILE *f, const int64_t *tree, size_t len, double min_share, jinst_trace_names names,
                             void *ctx)
{
	folder fo = {0};
	int err = 0;
	fo.capst = 256;
	fo.st = malloc(fo.capst * sizeof *fo.st);
	if (!fo.st)
		return JINST_ENOMEM;
	fo.st[fo.nst++] = (fold_stack){FOLD_NONE, FOLD_NONE, 0};
	size_t k = 0;
	int64_t threads = len > 0 ? tree[k++] : 0;
	for (int64_t t = 0; t < threads && k < len && !err; t++) {
		int64_t nodes = tree[k++];
		if (nodes < 0 || (uint64_t)nodes > (len - k) / 3)
			break;
		err = fold_thread(&fo, tree + k, nodes, names, ctx);
		k += 3 * (size_t)nodes;
	}
	if (!err)
		err = fold_print(f, &fo, min_share);
	for (size_t i = 0; i < fo.nframes; i++)
		free(fo.text[i]);
	free(fo.text);
	free(fo.fhash);
	free(fo.mid);
	free(fo.mframe);
	free(fo.st);
	free(fo.shash);
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
