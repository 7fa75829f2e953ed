/*
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

#include "fold_internal.h"

#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"

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

static int fold_child_cmp(const void *pa, const void *pb)
{
	const fold_child *x = pa, *y = pb;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(x->text, y->text);
}

int fold_build(folder *fo, const int64_t *tree, size_t len, jinst_trace_names names, void *ctx)
{
	memset(fo, 0, sizeof *fo);
	fo->capst = 256;
	fo->st = malloc(fo->capst * sizeof *fo->st);
	if (!fo->st)
		return JINST_ENOMEM;
	fo->st[fo->nst++] = (fold_stack){FOLD_NONE, FOLD_NONE, 0};
	size_t k = 0;
	int err = 0;
	int64_t threads = len > 0 ? tree[k++] : 0;
	for (int64_t t = 0; t < threads && k < len && !err; t++) {
		int64_t nodes = tree[k++];
		if (nodes < 0 || (uint64_t)nodes > (len - k) / 3)
			break;
		err = fold_thread(fo, tree + k, nodes, names, ctx);
		k += 3 * (size_t)nodes;
	}
	return err;
}

void fold_free(folder *fo)
{
	for (size_t i = 0; i < fo->nframes; i++)
		free(fo->text[i]);
	free(fo->text);
	free(fo->fhash);
	free(fo->mid);
	free(fo->mframe);
	free(fo->st);
	free(fo->shash);
	memset(fo, 0, sizeof *fo);
}

int fold_order_make(fold_order *o, const folder *fo)
{
	size_t n = fo->nst - 1; /* the stacks but the root */
	o->ch = malloc((n ? n : 1) * sizeof *o->ch);
	o->first = calloc(fo->nst + 1, sizeof *o->first);
	o->incl = malloc(fo->nst * sizeof *o->incl);
	if (!o->ch || !o->first || !o->incl) {
		fold_order_free(o);
		return JINST_ENOMEM;
	}
	/* inclusive times: a stack's parent was interned before it */
	for (size_t i = 0; i < fo->nst; i++)
		o->incl[i] = fo->st[i].self > 0 ? fo->st[i].self : 0;
	for (size_t i = fo->nst - 1; i > 0; i--)
		o->incl[fo->st[i].parent] += o->incl[i];
	for (size_t i = 0; i < n; i++)
		o->ch[i] = (fold_child){fo->st[i + 1].parent, (uint32_t)(i + 1), fo->text[fo->st[i + 1].frame]};
	qsort(o->ch, n, sizeof *o->ch, fold_child_cmp);
	for (size_t i = 0; i < n; i++)
		o->first[o->ch[i].parent + 1]++;
	for (size_t p = 0; p < fo->nst; p++)
		o->first[p + 1] += o->first[p];
	return 0;
}

void fold_order_free(fold_order *o)
{
	free(o->ch);
	free(o->first);
	free(o->incl);
	memset(o, 0, sizeof *o);
}
