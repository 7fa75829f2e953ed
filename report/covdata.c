/*
 * The coverage data model and its merge (include/jinst/covdata.h; the file
 * format is docs/coverage-format.md, its bytes are covdata_io.c's).
 *
 * How it works. Records are appended to one array as they come (the agent
 * adds them in class-load order, a merge in its input's order) and found
 * again by an open-addressing index keyed by the hash of the name alone:
 * every record of one name sits on one probe sequence, so one walk finds
 * the record of (name, identity) and, on the way, any record of that name
 * with another identity (a conflict). The canonical order the file needs
 * is made only when someone reads the model (an accessor, find, the
 * writer): one sort, which drops the index (it names positions). A model
 * in order, as the reader builds it, is searched by bisection, so reading
 * it changes nothing and threads may share it; the index is built again
 * only when records are added or merged in.
 *
 * A merge first checks everything that could refuse it (probe counts) and
 * reports conflicts against dst as it was, then changes dst; so a refused
 * merge leaves dst as it was, and records that src brings in together are
 * never reported as conflicting with one another.
 */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "covdata_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(jinst_diag *diag, int code, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(jinst_diag *diag, int code, const char *where, const char *fmt, ...)
{
	if (!diag)
		return code;
	diag->code = code;
	diag->offset = JINST_NO_OFFSET;
	snprintf(diag->where, sizeof(diag->where), "%s", where);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(diag->message, sizeof(diag->message), fmt, ap);
	va_end(ap);
	return code;
}

bool covdata_name_ok(const char *name, size_t *len)
{
	if (!name)
		return false;
	size_t n = strnlen(name, (size_t)JINST_COVDATA_MAX_NAME + 1);
	*len = n;
	return n <= JINST_COVDATA_MAX_NAME && jinst_mutf8_valid((const uint8_t *)name, n);
}

int jinst_covdata_new(jinst_covdata **out)
{
	*out = calloc(1, sizeof(jinst_covdata));
	if (!*out)
		return JINST_ENOMEM;
	(*out)->sorted = true;
	return 0;
}

static void rec_free(covdata_rec *r)
{
	free((char *)r->c.name);
	free((uint8_t *)r->c.booleans);
	free((uint64_t *)r->c.counts);
}

void jinst_covdata_free(jinst_covdata *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nsessions; i++)
		free((char *)d->sessions[i].name);
	for (size_t i = 0; i < d->nrecs; i++)
		rec_free(&d->recs[i]);
	free(d->sessions);
	free(d->recs);
	free(d->index);
	free(d);
}

/* ---- order ---------------------------------------------------------------- */

int covdata_session_cmp(const jinst_covdata_session *a, const jinst_covdata_session *b)
{
	if (a->start_ms != b->start_ms)
		return a->start_ms < b->start_ms ? -1 : 1;
	if (a->dump_ms != b->dump_ms)
		return a->dump_ms < b->dump_ms ? -1 : 1;
	return strcmp(a->name, b->name); /* unsigned bytes, C11 7.24.4 */
}

int covdata_class_cmp(const jinst_covdata_class *a, const jinst_covdata_class *b)
{
	int r = strcmp(a->name, b->name);
	if (r)
		return r;
	return a->identity < b->identity ? -1 : a->identity > b->identity;
}

static int session_qcmp(const void *a, const void *b)
{
	return covdata_session_cmp(a, b);
}

static int rec_qcmp(const void *a, const void *b)
{
	return covdata_class_cmp(&((const covdata_rec *)a)->c, &((const covdata_rec *)b)->c);
}

void covdata_sort(jinst_covdata *d)
{
	if (d->sorted)
		return;
	if (d->nsessions > 1) /* qsort's array may not be NULL, even empty */
		qsort(d->sessions, d->nsessions, sizeof *d->sessions, session_qcmp);
	if (d->nrecs > 1)
		qsort(d->recs, d->nrecs, sizeof *d->recs, rec_qcmp);
	free(d->index);
	d->index = NULL;
	d->index_cap = 0;
	d->sorted = true;
}

/* ---- the index ---------------------------------------------------------- */

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3u;
	return h;
}

static void index_put(uint32_t *index, size_t cap, const char *name, uint32_t pos)
{
	size_t i = name_hash(name) & (cap - 1);
	while (index[i])
		i = (i + 1) & (cap - 1);
	index[i] = pos + 1;
}

/* An index for at least want records (load at most one half). */
static int index_ensure(jinst_covdata *d, size_t want)
{
	if (d->index && want * 2 <= d->index_cap)
		return 0;
	size_t cap = 64;
	while (cap < want * 2)
		cap *= 2;
	uint32_t *index = calloc(cap, sizeof *index);
	if (!index)
		return JINST_ENOMEM;
	for (size_t i = 0; i < d->nrecs; i++)
		index_put(index, cap, d->recs[i].c.name, (uint32_t)i);
	free(d->index);
	d->index = index;
	d->index_cap = cap;
	return 0;
}

/* Whether r is the record of name and identity (returned), or of that name
 * with another identity (kept in *other when it is the smallest so far). */
static bool consider(covdata_rec *r, const char *name, uint64_t identity, covdata_rec **other)
{
	if (strcmp(r->c.name, name) != 0)
		return false;
	if (r->c.identity == identity)
		return true;
	if (!*other || r->c.identity < (*other)->c.identity)
		*other = r;
	return false;
}

/* The record of name and identity (or NULL), and in *other the first
 * record, in canonical order, of that name with another identity (or NULL).
 * A model in order is searched by bisection, which changes nothing, so
 * such a model can be read from several threads; one out of order by its
 * index, which every caller that can leave a model out of order (add,
 * merge) has built first. */
static covdata_rec *lookup(const jinst_covdata *d, const char *name, uint64_t identity, covdata_rec **other)
{
	covdata_rec *found = NULL;
	*other = NULL;
	if (d->sorted) {
		size_t lo = 0, hi = d->nrecs;
		while (lo < hi) { /* the first record of name or after it */
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(d->recs[mid].c.name, name) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo; i < d->nrecs && !strcmp(d->recs[i].c.name, name); i++)
			if (consider(&d->recs[i], name, identity, other))
				found = &d->recs[i];
		return found;
	}
	for (size_t i = name_hash(name) & (d->index_cap - 1); d->index[i]; i = (i + 1) & (d->index_cap - 1))
		if (consider(&d->recs[d->index[i] - 1], name, identity, other))
			found = &d->recs[d->index[i] - 1];
	return found;
}

/* ---- adding ------------------------------------------------------------- */

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(*v, c * size);
	if (!p)
		return JINST_ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

int covdata_push_session(jinst_covdata *d, char *name, int64_t start_ms, int64_t dump_ms)
{
	if (grow((void **)&d->sessions, &d->session_cap, d->nsessions, sizeof *d->sessions)) {
		free(name);
		return JINST_ENOMEM;
	}
	d->sessions[d->nsessions++] = (jinst_covdata_session){name, start_ms, dump_ms};
	return 0;
}

int covdata_push_rec(jinst_covdata *d, const covdata_rec *rec)
{
	covdata_rec r = *rec;
	if (d->nrecs >= JINST_COVDATA_MAX_SIZE / 15 ||
	    grow((void **)&d->recs, &d->rec_cap, d->nrecs, sizeof *d->recs)) {
		rec_free(&r);
		return JINST_ENOMEM;
	}
	d->recs[d->nrecs++] = r;
	if (d->index)
		index_put(d->index, d->index_cap, r.c.name, (uint32_t)(d->nrecs - 1));
	return 0;
}

int jinst_covdata_add_session(jinst_covdata *d, const char *name, int64_t start_ms, int64_t dump_ms)
{
	size_t len;
	if (!d || !covdata_name_ok(name, &len))
		return JINST_EINVAL;
	jinst_covdata_session s = {name, start_ms, dump_ms};
	for (size_t i = 0; i < d->nsessions; i++)
		if (covdata_session_cmp(&d->sessions[i], &s) == 0)
			return 0;
	char *copy = malloc(len + 1);
	if (!copy)
		return JINST_ENOMEM;
	memcpy(copy, name, len + 1);
	int rc = covdata_push_session(d, copy, start_ms, dump_ms);
	if (!rc && d->nsessions > 1 && covdata_session_cmp(&d->sessions[d->nsessions - 2], &s) > 0)
		d->sorted = false;
	return rc;
}

static int check_class(const jinst_covdata_class *c, size_t *len, jinst_diag *diag)
{
	if (!c || !covdata_name_ok(c->name, len) || *len == 0)
		return fail(diag, JINST_EINVAL, "class", "the name is empty, longer than %u bytes or not modified UTF-8",
		            JINST_COVDATA_MAX_NAME);
	if (c->kind != JINST_COVDATA_BOOLEANS && c->kind != JINST_COVDATA_COUNTS)
		return fail(diag, JINST_EINVAL, c->name, "unknown probe kind %d", c->kind);
	if (c->probe_count > JINST_COVDATA_MAX_PROBES)
		return fail(diag, JINST_ETOOLARGE, c->name, "%u probes, more than the format's %u", c->probe_count,
		            JINST_COVDATA_MAX_PROBES);
	if (c->probe_count && !(c->kind == JINST_COVDATA_BOOLEANS ? (const void *)c->booleans : (const void *)c->counts))
		return fail(diag, JINST_EINVAL, c->name, "no probe data");
	return 0;
}

static int refuse_probe_counts(jinst_diag *diag, const jinst_covdata_class *a, const jinst_covdata_class *b)
{
	return fail(diag, JINST_EUNSUPPORTED, a->name,
	            "identity %016llx recorded with %u probes and with %u: two instrumentations of the same class",
	            (unsigned long long)a->identity, a->probe_count, b->probe_count);
}

/* dst takes c's data by the merge rules (the probe counts are equal). */
static int merge_data(covdata_rec *dst, const jinst_covdata_class *c)
{
	uint32_t n = c->probe_count;
	if (dst->c.kind == JINST_COVDATA_BOOLEANS && c->kind == JINST_COVDATA_BOOLEANS) {
		uint8_t *b = (uint8_t *)dst->c.booleans;
		for (uint32_t i = 0; i < n; i++)
			b[i] = b[i] || c->booleans[i];
		return 0;
	}
	if (dst->c.kind == JINST_COVDATA_BOOLEANS) { /* becomes a counts record */
		uint64_t *counts = malloc(((size_t)n ? n : 1) * sizeof *counts);
		if (!counts)
			return JINST_ENOMEM;
		for (uint32_t i = 0; i < n; i++)
			counts[i] = dst->c.booleans[i] != 0;
		free((uint8_t *)dst->c.booleans);
		dst->c.booleans = NULL;
		dst->c.counts = counts;
		dst->c.kind = JINST_COVDATA_COUNTS;
	}
	uint64_t *counts = (uint64_t *)dst->c.counts;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t add = c->kind == JINST_COVDATA_COUNTS ? c->counts[i] : c->booleans[i] != 0;
		counts[i] = counts[i] > UINT64_MAX - add ? UINT64_MAX : counts[i] + add;
	}
	return 0;
}

static int copy_class(covdata_rec *r, const jinst_covdata_class *c, size_t name_len)
{
	size_t n = c->probe_count ? c->probe_count : 1;
	*r = (covdata_rec){.c = *c, .name_len = name_len};
	char *name = malloc(name_len + 1);
	uint8_t *b = NULL;
	uint64_t *counts = NULL;
	if (c->kind == JINST_COVDATA_BOOLEANS)
		b = calloc(n, 1);
	else
		counts = calloc(n, sizeof *counts);
	if (!name || (!b && !counts)) {
		free(name);
		free(b);
		free(counts);
		return JINST_ENOMEM;
	}
	memcpy(name, c->name, name_len + 1);
	for (uint32_t i = 0; i < c->probe_count; i++)
		if (b)
			b[i] = c->booleans[i] != 0;
		else
			counts[i] = c->counts[i];
	r->c.name = name;
	r->c.booleans = b;
	r->c.counts = counts;
	return 0;
}

int jinst_covdata_add_class(jinst_covdata *d, const jinst_covdata_class *c, jinst_diag *diag)
{
	size_t len;
	if (!d)
		return JINST_EINVAL;
	int rc = check_class(c, &len, diag);
	if (rc)
		return rc;
	if (index_ensure(d, d->nrecs + 1))
		return JINST_ENOMEM;
	covdata_rec *other, *found = lookup(d, c->name, c->identity, &other);
	if (found && found->c.probe_count != c->probe_count)
		return refuse_probe_counts(diag, &found->c, c);
	if (found)
		return merge_data(found, c);
	covdata_rec r;
	if (copy_class(&r, c, len))
		return JINST_ENOMEM;
	rc = covdata_push_rec(d, &r);
	if (!rc && d->nrecs > 1 && covdata_class_cmp(&d->recs[d->nrecs - 2].c, &r.c) > 0) {
		d->sorted = false;
	}
	return rc;
}

int jinst_covdata_merge(jinst_covdata *dst, const jinst_covdata *src, jinst_covdata_on_conflict on_conflict,
                        void *ctx, jinst_diag *diag)
{
	if (!dst || !src || dst == src)
		return JINST_EINVAL;
	if (index_ensure(dst, dst->nrecs + src->nrecs))
		return JINST_ENOMEM;
	for (size_t i = 0; i < src->nrecs; i++) {
		covdata_rec *other, *found = lookup(dst, src->recs[i].c.name, src->recs[i].c.identity, &other);
		if (found && found->c.probe_count != src->recs[i].c.probe_count)
			return refuse_probe_counts(diag, &found->c, &src->recs[i].c);
	}
	/* In src's canonical order, so the conflicts come out in a stable order. */
	covdata_sort((jinst_covdata *)src);
	for (size_t i = 0; on_conflict && i < src->nrecs; i++) {
		const jinst_covdata_class *c = &src->recs[i].c;
		covdata_rec *other, *found = lookup(dst, c->name, c->identity, &other);
		if (!found && other)
			on_conflict(ctx, c->name, other->c.identity, c->identity);
	}
	for (size_t i = 0; i < src->nsessions; i++) {
		const jinst_covdata_session *s = &src->sessions[i];
		int rc = jinst_covdata_add_session(dst, s->name, s->start_ms, s->dump_ms);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < src->nrecs; i++) {
		int rc = jinst_covdata_add_class(dst, &src->recs[i].c, diag);
		if (rc)
			return rc;
	}
	return 0;
}

size_t jinst_covdata_conflicts(const jinst_covdata *data, jinst_covdata_on_conflict on_conflict, void *ctx)
{
	jinst_covdata *d = (jinst_covdata *)data; /* sorting changes no content */
	covdata_sort(d);
	size_t calls = 0, first = 0;
	for (size_t i = 1; i < d->nrecs; i++) {
		if (strcmp(d->recs[i].c.name, d->recs[first].c.name) != 0) {
			first = i;
			continue;
		}
		if (on_conflict)
			on_conflict(ctx, d->recs[i].c.name, d->recs[first].c.identity, d->recs[i].c.identity);
		calls++;
	}
	return calls;
}

/* ---- reading the model -------------------------------------------------- */

size_t jinst_covdata_session_count(const jinst_covdata *d)
{
	return d ? d->nsessions : 0;
}

const jinst_covdata_session *jinst_covdata_session_at(const jinst_covdata *d, size_t i)
{
	if (!d || i >= d->nsessions)
		return NULL;
	covdata_sort((jinst_covdata *)d);
	return &d->sessions[i];
}

size_t jinst_covdata_class_count(const jinst_covdata *d)
{
	return d ? d->nrecs : 0;
}

const jinst_covdata_class *jinst_covdata_class_at(const jinst_covdata *d, size_t i)
{
	if (!d || i >= d->nrecs)
		return NULL;
	covdata_sort((jinst_covdata *)d);
	return &d->recs[i].c;
}

const jinst_covdata_class *jinst_covdata_find(const jinst_covdata *d, const char *name, uint64_t identity)
{
	if (!d || !name)
		return NULL;
	/* Out of order (added to since it was last read in order): one sort,
	 * and every later lookup bisects. */
	covdata_sort((jinst_covdata *)d);
	covdata_rec *other, *found = lookup(d, name, identity, &other);
	return found ? &found->c : NULL;
}

uint32_t jinst_covdata_class_hits(const jinst_covdata_class *c)
{
	uint32_t hits = 0;
	for (uint32_t i = 0; c && i < c->probe_count; i++)
		hits += c->kind == JINST_COVDATA_BOOLEANS ? c->booleans[i] != 0 : c->counts[i] != 0;
	return hits;
}
