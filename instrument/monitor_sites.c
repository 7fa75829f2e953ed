/*
 * The monitor pass's lock sites (include/jinst/monitor.h): an id per
 * (class, method, descriptor, line, kind), handed out on first request
 * and kept for the instrumenter's life, so a retransformed class gets the
 * ids it had.
 *
 * As the method table (methods.c): entries in an array that grows, one
 * open-addressing hash of the key (xxhash) over their ids, one mutex.
 * The agent finds sites again from a JVMTI frame (class, method, line), on
 * the slow path of a contended enter only, so readers take the lock too.
 * Each entry's strings are one block (class, method, descriptor, source,
 * each with its NUL).
 */
#include <stdlib.h>
#include <string.h>

#include "xxhash.h"

#include "monitor_internal.h"

typedef struct site {
	jinst_monitor_site_info info;
	uint64_t hash;
} site;

struct jinst_monitor_sites {
	pthread_mutex_t lock;
	site *entries;
	uint32_t count, cap;
	uint32_t *slots;  /* id + 1, 0 when free */
	uint32_t nslots;  /* a power of two, at least twice count */
};

int jinst_monitor_sites_new(jinst_monitor_sites **out)
{
	jinst_monitor_sites *t = calloc(1, sizeof(*t));
	if (!t)
		return JINST_ENOMEM;
	t->nslots = 256;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->slots || pthread_mutex_init(&t->lock, NULL)) {
		free(t->slots);
		free(t);
		return JINST_ENOMEM;
	}
	*out = t;
	return 0;
}

void jinst_monitor_sites_free(jinst_monitor_sites *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->count; i++)
		free((char *)t->entries[i].info.class_name);
	free(t->entries);
	free(t->slots);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* A method's site is one per method whatever its line. */
static uint32_t key_line(uint32_t line, enum jinst_monitor_site_kind kind)
{
	return kind == JINST_MONITOR_SITE_METHOD ? 0 : line;
}

static uint64_t key_hash(const char *cls, const char *method, const char *desc, uint32_t line,
                         enum jinst_monitor_site_kind kind)
{
	XXH3_state_t st;
	uint32_t tail[2] = {key_line(line, kind), (uint32_t)kind};
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, cls, strlen(cls) + 1);
	XXH3_64bits_update(&st, method, strlen(method) + 1);
	XXH3_64bits_update(&st, desc, strlen(desc) + 1);
	XXH3_64bits_update(&st, tail, sizeof tail);
	return XXH3_64bits_digest(&st);
}

static bool key_equal(const site *e, uint64_t h, const char *cls, const char *method, const char *desc,
                      uint32_t line, enum jinst_monitor_site_kind kind)
{
	return e->hash == h && e->info.kind == kind && key_line(e->info.line, kind) == key_line(line, kind) &&
	       !strcmp(e->info.class_name, cls) && !strcmp(e->info.method, method) && !strcmp(e->info.descriptor, desc);
}

/* The slot of the key, or of the free slot where it would go. Under lock. */
static uint32_t *slot_of(const jinst_monitor_sites *t, uint64_t h, const char *cls, const char *method,
                         const char *desc, uint32_t line, enum jinst_monitor_site_kind kind)
{
	uint32_t mask = t->nslots - 1;
	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask)
		if (!t->slots[i] || key_equal(&t->entries[t->slots[i] - 1], h, cls, method, desc, line, kind))
			return &t->slots[i];
}

static bool grow(jinst_monitor_sites *t)
{
	if (t->count == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		site *e = realloc(t->entries, (size_t)cap * sizeof(*e));
		if (!e)
			return false;
		t->entries = e;
		t->cap = cap;
	}
	if ((uint64_t)(t->count + 1) * 2 <= t->nslots)
		return true;
	uint32_t n = t->nslots * 2, *s = calloc(n, sizeof(*s));
	if (!s)
		return false;
	for (uint32_t i = 0; i < t->count; i++) {
		uint32_t j = (uint32_t)t->entries[i].hash & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return true;
}

/* One block with the four strings (source may be NULL). */
static char *strings(const jinst_monitor_site_info *k, const char **method, const char **desc, const char **source)
{
	size_t a = strlen(k->class_name) + 1, b = strlen(k->method) + 1, c = strlen(k->descriptor) + 1;
	size_t d = k->source_file ? strlen(k->source_file) + 1 : 0;
	char *p = malloc(a + b + c + d);
	if (!p)
		return NULL;
	memcpy(p, k->class_name, a);
	memcpy(p + a, k->method, b);
	memcpy(p + a + b, k->descriptor, c);
	if (d)
		memcpy(p + a + b + c, k->source_file, d);
	*method = p + a;
	*desc = p + a + b;
	*source = d ? p + a + b + c : NULL;
	return p;
}

int jinst_monitor_sites_assign(jinst_monitor_sites *t, const jinst_monitor_site_info *k, uint32_t *id)
{
	uint64_t h = key_hash(k->class_name, k->method, k->descriptor, k->line, k->kind);
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	uint32_t *s = slot_of(t, h, k->class_name, k->method, k->descriptor, k->line, k->kind);
	if (*s) {
		*id = *s - 1;
	} else if (t->count >= INT32_MAX || !grow(t)) {
		rc = JINST_ENOMEM;
	} else {
		site *e = &t->entries[t->count];
		e->info = *k;
		e->hash = h;
		if (!(e->info.class_name = strings(k, &e->info.method, &e->info.descriptor, &e->info.source_file))) {
			rc = JINST_ENOMEM;
		} else {
			*slot_of(t, h, k->class_name, k->method, k->descriptor, k->line, k->kind) = t->count + 1;
			*id = t->count++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

uint32_t jinst_monitor_sites_count(const jinst_monitor_sites *t)
{
	jinst_monitor_sites *w = (jinst_monitor_sites *)t;
	pthread_mutex_lock(&w->lock);
	uint32_t n = t->count;
	pthread_mutex_unlock(&w->lock);
	return n;
}

int jinst_monitor_sites_info(const jinst_monitor_sites *t, uint32_t id, jinst_monitor_site_info *info)
{
	jinst_monitor_sites *w = (jinst_monitor_sites *)t;
	int rc = JINST_EINVAL;
	pthread_mutex_lock(&w->lock);
	if (id < t->count) {
		*info = t->entries[id].info;
		rc = 0;
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

int jinst_monitor_sites_find(const jinst_monitor_sites *t, uint32_t *id, const char *class_name, const char *method,
                             const char *descriptor, uint32_t line, enum jinst_monitor_site_kind kind)
{
	jinst_monitor_sites *w = (jinst_monitor_sites *)t;
	uint64_t h = key_hash(class_name, method, descriptor, line, kind);
	pthread_mutex_lock(&w->lock);
	uint32_t s = *slot_of(t, h, class_name, method, descriptor, line, kind);
	pthread_mutex_unlock(&w->lock);
	if (!s)
		return JINST_ENOTFOUND;
	*id = s - 1;
	return 0;
}
