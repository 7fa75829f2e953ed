/*
 * The allocation module's outputs (alloc_output.c), from plain rows: what
 * alloc_run.c reads from the runtime, handed to the writers.
 */
#ifndef JINST_AGENT_ALLOC_OUTPUT_H
#define JINST_AGENT_ALLOC_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jinst/alloc.h"

/* One site, or one site under one stack (depth=N). */
typedef struct jinst_alloc_row {
	uint32_t site;
	int64_t objects, bytes;
	int64_t live_objects, live_bytes; /* alloc=live's, else -1 */
	/* depth=N: the method ids of the top frames, innermost first, -1 past
	 * the bottom; NULL without depth. */
	const int64_t *frames;
} jinst_alloc_row;

typedef struct jinst_alloc_report {
	const jinst_alloc_sites *sites;
	jinst_alloc_row *rows;
	size_t count;
	int64_t bytes, objects, live_bytes, live_objects; /* the rows' totals */
	bool live;  /* the live figures are there */
	int depth;  /* frames per row (0: none) */
} jinst_alloc_report;

/* Whether method id (the instrumenter's) is site s's method. */
bool jinst_alloc_is_site_method(int64_t id, const jinst_alloc_site *s);

/* The outputs' extensions, NULL-terminated. */
extern const char *const jinst_alloc_exts[];

/* Sorts the rows (live bytes, bytes, objects, site) and writes
 * OUT.alloc.txt, OUT.alloc.tsv and OUT.alloc.folded, each through a file
 * beside it renamed over it, or with append=y after the sessions before
 * (output.c). */
void jinst_alloc_write(jinst_alloc_report *r);

#endif
