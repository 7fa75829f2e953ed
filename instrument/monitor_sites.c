/*
 * The monitor pass's lock sites (include/jinst/monitor.h): an id per
 * (class, method, descriptor, line, kind), handed out on first request
 * and kept for the instrumenter's life, so a retransformed class gets the
 * ids it had.
 *
 * As the method table (methods.c): an id table (idtable.c: entries in an
 * array that grows, an open-addressing hash of their keys, xxhash here)
 * under one mutex.
 * The agent finds sites again from a JVMTI frame (class, method, line), on
 * the slow path of a contended enter only, so readers take the lock too.
 * Each entry's strings are one block (class, method, descriptor, source,
 * each with its NUL).
 */
#include <stdlib.h>
#include <string.h>

#include "xxhash.h"

#include "monitor_internal.h"

struct jinst_monitor_sites {
	pthread_mutex_t lock;
	jinst_idtable t; /* of jinst_monitor_site_info */
};

static jinst_monitor_site_info *entry(const jinst_monitor_sites *t, uint32_t id)
{
	return jinst_idtable_at(&t->t, id);
}

int jinst_monitor_sites_new(jinst_monitor_sites **out)
{
	jinst_monitor_sites *t = calloc(1, sizeof(*t));
	if (!t || pthread_mutex_init(&t->lock, NULL)) {
		free(t);
		return JINST_ENOMEM;
	}
	jinst_idtable_init(&t->t, sizeof(jinst_monitor_site_info));
	*out = t;
	return 0;
}

void jinst_monitor_sites_free(jinst_monitor_sites *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->t.count; i++)
		free((char *)entry(t, i)->class_name);
	jinst_idtable_free(&t->t);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* A method's site is one per method whatever its line. */
static uint32_t key_line(uint32_t line, enum jinst_monitor_site_kind kind)
{
	return kind == JINST_MONITOR_SITE_METHOD ? 0 : line;
}

static uint64_t key_hash(const jinst_monitor_site_info *k)
{
	XXH3_state_t st;
	uint32_t tail[2] = {key_line(k->line, k->kind), (uint32_t)k->kind};
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, k->class_name, strlen(k->class_name) + 1);
	XXH3_64bits_update(&st, k->method, strlen(k->method) + 1);
	XXH3_64bits_update(&st, k->descriptor, strlen(k->descriptor) + 1);
	XXH3_64bits_update(&st, tail, sizeof tail);
	return XXH3_64bits_digest(&st);
}

static bool key_equal(const void *entry, const void *key)
{
	const jinst_monitor_site_info *e = entry, *k = key;
	return e->kind == k->kind && key_line(e->line, k->kind) == key_line(k->line, k->kind) &&
	       !strcmp(e->class_name, k->class_name) && !strcmp(e->method, k->method) &&
	       !strcmp(e->descriptor, k->descriptor);
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

/* A new entry for k (under the lock). */
static int add(jinst_monitor_sites *t, const jinst_monitor_site_info *k, uint64_t h, uint32_t *id)
{
	jinst_monitor_site_info *e;
	if (jinst_idtable_reserve(&t->t, (void **)&e))
		return JINST_ENOMEM;
	*e = *k;
	if (!(e->class_name = strings(k, &e->method, &e->descriptor, &e->source_file)))
		return JINST_ENOMEM;
	*id = jinst_idtable_add(&t->t, h, true);
	return 0;
}

int jinst_monitor_sites_assign(jinst_monitor_sites *t, const jinst_monitor_site_info *k, uint32_t *id)
{
	uint64_t h = key_hash(k);
	pthread_mutex_lock(&t->lock);
	int rc = jinst_idtable_find(&t->t, id, h, key_equal, k);
	if (rc == JINST_ENOTFOUND)
		rc = add(t, k, h, id);
	pthread_mutex_unlock(&t->lock);
	return rc;
}

uint32_t jinst_monitor_sites_count(const jinst_monitor_sites *t)
{
	jinst_monitor_sites *w = (jinst_monitor_sites *)t;
	pthread_mutex_lock(&w->lock);
	uint32_t n = t->t.count;
	pthread_mutex_unlock(&w->lock);
	return n;
}

int jinst_monitor_sites_info(const jinst_monitor_sites *t, uint32_t id, jinst_monitor_site_info *info)
{
	jinst_monitor_sites *w = (jinst_monitor_sites *)t;
	int rc = JINST_EINVAL;
	pthread_mutex_lock(&w->lock);
	if (id < t->t.count) {
		*info = *entry(t, id);
		rc = 0;
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

int jinst_monitor_sites_find(const jinst_monitor_sites *t, uint32_t *id, const char *class_name, const char *method,
                             const char *descriptor, uint32_t line, enum jinst_monitor_site_kind kind)
{
	jinst_monitor_sites *w = (jinst_monitor_sites *)t;
	jinst_monitor_site_info k = {class_name, method, descriptor, NULL, line, kind};
	uint64_t h = key_hash(&k);
	pthread_mutex_lock(&w->lock);
	int rc = jinst_idtable_find(&t->t, id, h, key_equal, &k);
	pthread_mutex_unlock(&w->lock);
	return rc;
}
