/*
 * The allocation pass's site table (include/jinst/alloc.h): ids by (class,
 * method, descriptor, line, type, kind), handed out on first sight, so the
 * same site in a class instrumented again keeps its id. The kind is part of
 * the key: a `new X` and an `x.clone()` on one line (or in a method without
 * line numbers) are two sites, each reported as what it is.
 *
 * Entries live in an array that grows by doubling; each owns one block
 * holding its five strings. Lookups go through an open-addressed table of
 * id + 1 keyed by the XXH64 of the key's bytes. One mutex guards it all:
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
	size_t key_len;
	uint64_t hash;
} site_entry;

struct jinst_alloc_sites {
	pthread_mutex_t lock;
	site_entry *entries;
	uint32_t count, cap;
	uint32_t *slots; /* id + 1, 0 when free */
	uint32_t nslots; /* a power of two, at least twice count */
};

int jinst_alloc_sites_new(jinst_alloc_sites **out)
{
	jinst_alloc_sites *s = calloc(1, sizeof(*s));
	if (!s)
		return JINST_ENOMEM;
	if (pthread_mutex_init(&s->lock, NULL)) {
		free(s);
		return JINST_ENOMEM;
	}
	*out = s;
	return 0;
}

void jinst_alloc_sites_free(jinst_alloc_sites *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->count; i++)
		free(s->entries[i].block);
	free(s->entries);
	free(s->slots);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* The key: the five fields as text with their NULs (the line in decimal). */
static void key_make(const jinst_alloc_site *k, char *line, const char *parts[6], size_t lens[6])
{
	snprintf(line, 12, "%u", k->line);
	parts[0] = k->class_name;
	parts[1] = k->method;
	parts[2] = k->descriptor;
	parts[3] = k->type;
	parts[4] = line;
	parts[5] = k->source ? k->source : "";
	for (int i = 0; i < 6; i++)
		lens[i] = strlen(parts[i]) + 1;
}

/* Whether entry e holds the key's first five parts (the source follows
 * from the class). */
static bool key_equal(const site_entry *e, const char *const parts[6], const size_t lens[6])
{
	const char *p = e->block;
	for (int i = 0; i < 5; i++) {
		if (memcmp(p, parts[i], lens[i]))
			return false;
		p += lens[i];
	}
	return true;
}

static int grow_slots(jinst_alloc_sites *s)
{
	uint32_t n = s->nslots ? s->nslots * 2 : 256;
	uint32_t *t = calloc(n, sizeof(*t));
	if (!t)
		return JINST_ENOMEM;
	for (uint32_t i = 0; i < s->count; i++) {
		uint32_t j = (uint32_t)s->entries[i].hash & (n - 1);
		while (t[j])
			j = (j + 1) & (n - 1);
		t[j] = i + 1;
	}
	free(s->slots);
	s->slots = t;
	s->nslots = n;
	return 0;
}

/* A new entry for the key (under the lock, with room in the slots). */
static int add_entry(jinst_alloc_sites *s, const jinst_alloc_site *k, const char *const parts[6],
                     const size_t lens[6], uint64_t h, uint32_t *id)
{
	if (s->count == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		site_entry *e = realloc(s->entries, (size_t)cap * sizeof(*e));
		if (!e)
			return JINST_ENOMEM;
		s->entries = e;
		s->cap = cap;
	}
	size_t total = 0;
	for (int i = 0; i < 6; i++)
		total += lens[i];
	char *b = malloc(total);
	if (!b)
		return JINST_ENOMEM;
	char *at[6], *p = b;
	for (int i = 0; i < 6; i++) {
		memcpy(p, parts[i], lens[i]);
		at[i] = p;
		p += lens[i];
	}
	site_entry *e = &s->entries[s->count];
	e->block = b;
	e->key_len = total;
	e->hash = h;
	e->site = (jinst_alloc_site){at[0], at[1], at[2], k->source ? at[5] : NULL, at[3], k->line, k->kind};
	*id = s->count++;
	uint32_t j = (uint32_t)h & (s->nslots - 1);
	while (s->slots[j])
		j = (j + 1) & (s->nslots - 1);
	s->slots[j] = *id + 1;
	return 0;
}

int jinst_alloc_sites_assign(uint32_t *id, jinst_alloc_sites *s, const jinst_alloc_site *k)
{
	if (!s || !k || !k->class_name || !k->method || !k->descriptor || !k->type)
		return JINST_EINVAL;
	char line[12];
	const char *parts[6];
	size_t lens[6];
	key_make(k, line, parts, lens);
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	for (int i = 0; i < 5; i++)
		XXH64_update(&st, parts[i], lens[i]);
	/* The kind mixed into the digest (the lookup compares it too). */
	uint64_t h = XXH64_digest(&st) ^ ((uint64_t)k->kind + 1) * 0x9E3779B97F4A7C15u;
	int rc = 0;
	pthread_mutex_lock(&s->lock);
	if (2 * (s->count + 1) > s->nslots)
		rc = grow_slots(s);
	for (uint32_t j = (uint32_t)h & (s->nslots - 1); !rc; j = (j + 1) & (s->nslots - 1)) {
		uint32_t v = s->slots[j];
		if (!v) {
			rc = add_entry(s, k, parts, lens, h, id);
			break;
		}
		if (s->entries[v - 1].hash == h && s->entries[v - 1].site.kind == k->kind &&
		    key_equal(&s->entries[v - 1], parts, lens)) {
			*id = v - 1;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

uint32_t jinst_alloc_sites_count(const jinst_alloc_sites *s)
{
	if (!s)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	uint32_t n = s->count;
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
	return n;
}

int jinst_alloc_sites_get(jinst_alloc_site *out, const jinst_alloc_sites *s, uint32_t id)
{
	int rc = JINST_EINVAL;
	if (!s)
		return rc;
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
	if (id < s->count) {
		*out = s->entries[id].site;
		rc = 0;
	}
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
	return rc;
}
