/*
 * The allocation pass's site table (include/jinst/alloc.h): ids by (class,
 * method, descriptor, line, type, kind), handed out on first sight, so the
 * same site in a class instrumented again keeps its id. The kind is part of
 * the key: a `new X` and an `x.clone()` on one line (or in a method without
 * line numbers) are two sites, each reported as what it is.
 *
 * An id table (idtable.c): entries in an array that grows by doubling,
 * each owning one block that holds its strings, found through an
 * open-addressing hash of the XXH64 of the key's bytes. One mutex guards
 * it all:
 * a pass asks once per allocation instruction of a class it instruments,
 * the agent once per site at each dump; neither is hot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jinst/alloc.h"
#include "xxhash.h"

typedef struct site_entry {
	jinst_alloc_site site;
	char *block;   /* the strings, one allocation */
} site_entry;

struct jinst_alloc_sites {
	pthread_mutex_t lock;
	jinst_idtable t; /* of site_entry */
};

static site_entry *entry(const jinst_alloc_sites *s, uint32_t id)
{
	return jinst_idtable_at(&s->t, id);
}

int jinst_alloc_sites_new(jinst_alloc_sites **out)
{
	jinst_alloc_sites *s = calloc(1, sizeof(*s));
	if (!s)
		return JINST_ENOMEM;
	if (pthread_mutex_init(&s->lock, NULL)) {
		free(s);
		return JINST_ENOMEM;
	}
	jinst_idtable_init(&s->t, sizeof(site_entry));
	*out = s;
	return 0;
}

void jinst_alloc_sites_free(jinst_alloc_sites *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->t.count; i++)
		free(entry(s, i)->block);
	jinst_idtable_free(&s->t);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* The key: the five fields as text with their NULs (the line in decimal),
 * the source after them, and the kind. */
typedef struct site_key {
	char line[12];
	const char *parts[6];
	size_t lens[6];
	uint8_t kind;
} site_key;

static void key_make(const jinst_alloc_site *k, site_key *key)
{
	snprintf(key->line, sizeof(key->line), "%u", k->line);
	key->parts[0] = k->class_name;
	key->parts[1] = k->method;
	key->parts[2] = k->descriptor;
	key->parts[3] = k->type;
	key->parts[4] = key->line;
	key->parts[5] = k->source ? k->source : "";
	for (int i = 0; i < 6; i++)
		key->lens[i] = strlen(key->parts[i]) + 1;
	key->kind = k->kind;
}

/* Whether entry e holds the key's kind and first five parts (the source
 * follows from the class). */
static bool key_equal(const void *entry, const void *key)
{
	const site_entry *e = entry;
	const site_key *k = key;
	const char *p = e->block;
	if (e->site.kind != k->kind)
		return false;
	for (int i = 0; i < 5; i++) {
		if (memcmp(p, k->parts[i], k->lens[i]))
			return false;
		p += k->lens[i];
	}
	return true;
}

/* A new entry for the key (under the lock). */
static int add_entry(jinst_alloc_sites *s, const jinst_alloc_site *k, const site_key *key, uint64_t h,
                     uint32_t *id)
{
	site_entry *e;
	if (jinst_idtable_reserve(&s->t, (void **)&e))
		return JINST_ENOMEM;
	size_t total = 0;
	for (int i = 0; i < 6; i++)
		total += key->lens[i];
	char *b = malloc(total);
	if (!b)
		return JINST_ENOMEM;
	char *at[6], *p = b;
	for (int i = 0; i < 6; i++) {
		memcpy(p, key->parts[i], key->lens[i]);
		at[i] = p;
		p += key->lens[i];
	}
	e->block = b;
	e->site = (jinst_alloc_site){at[0], at[1], at[2], k->source ? at[5] : NULL, at[3], k->line, k->kind};
	*id = jinst_idtable_add(&s->t, h, true);
	return 0;
}

int jinst_alloc_sites_assign(uint32_t *id, jinst_alloc_sites *s, const jinst_alloc_site *k)
{
	if (!s || !k || !k->class_name || !k->method || !k->descriptor || !k->type)
		return JINST_EINVAL;
	site_key key;
	key_make(k, &key);
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	for (int i = 0; i < 5; i++)
		XXH64_update(&st, key.parts[i], key.lens[i]);
	/* The kind mixed into the digest (the lookup compares it too). */
	uint64_t h = XXH64_digest(&st) ^ ((uint64_t)k->kind + 1) * 0x9E3779B97F4A7C15u;
	pthread_mutex_lock(&s->lock);
	int rc = jinst_idtable_find(&s->t, id, h, key_equal, &key);
	if (rc == JINST_ENOTFOUND)
		rc = add_entry(s, k, &key, h, id);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

uint32_t jinst_alloc_sites_count(const jinst_alloc_sites *s)
{
	if (!s)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	uint32_t n = s->t.count;
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
	return n;
}

int jinst_alloc_sites_get(jinst_alloc_site *out, const jinst_alloc_sites *s, uint32_t id)
{
	int rc = JINST_EINVAL;
	if (!s)
		return rc;
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	if (id < s->t.count) {
		*out = entry(s, id)->site;
		rc = 0;
	}
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
	return rc;
}
