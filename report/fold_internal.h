/*
 * The call trees of a trace=times snapshot, interned into one trie of
 * distinct stacks (fold.c), which the folded stacks and the flame graph
 * are written from. Internal to report/.
 */
#ifndef JINST_REPORT_FOLD_INTERNAL_H
#define JINST_REPORT_FOLD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "jinst/report.h"

#define FOLD_NONE UINT32_MAX
/* The method id a call tree gives the node that holds the calls of a caller
 * whose thread's tree was full (runtime-java's Ctx.FULL, -1 there). */
#define FOLD_FULL (UINT32_MAX - 1)

typedef struct fold_stack {
	uint32_t parent, frame;
	int64_t self;
} fold_stack;

/* The trie: the distinct frame texts, the method ids that name them, the
 * distinct stacks with their self time. */
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

/* Interns every thread's tree of a snapshot (see jinst_trace_write_folded);
 * fold_free frees what it holds, also after a failure. 0 or JINST_ENOMEM. */
int fold_build(folder *fo, const int64_t *tree, size_t len, jinst_trace_names names, void *ctx);
void fold_free(folder *fo);

typedef struct fold_child {
	uint32_t parent, stack;
	const char *text;
} fold_child;



/* The order the outputs walk the trie in: ch, the stacks but the root,
 * by parent then frame text; the children of stack p are ch[first[p]] to
 * ch[first[p + 1] - 1]; incl, each stack's inclusive time. */
typedef struct fold_order {
	fold_child *ch;
	size_t *first;
	int64_t *incl;
} fold_order;

int fold_order_make(fold_order *o, const folder *fo);
void fold_order_free(fold_order *o);

#endif
