/*
 * The caching class-hierarchy resolver (include/jinst/hierarchy.h).
 *
 * How it works. A name is hashed once with XXH3; the top bits pick one of
 * SHARDS shards, the low bits a slot in that shard's open-addressing table
 * (linear probing, kept at most half full). A shard owns its entries and their
 * strings in its own arena and guards table, arena and counters with its own
 * mutex, so threads that ask about different classes rarely meet on a lock
 * (one global lock in every hook is the trap HPROF's Tracker fell into).
 *
 * A miss drops the lock, asks the source for the bytes and parses them with
 * jinst_class_parse, then takes the lock again, looks again (another thread
 * may have stored the answer meanwhile: its answer wins) and stores the
 * class's name, super class name, interface names and access flags. The bytes
 * and the parsed class are given back before the query returns: an entry
 * holds copies only, so a source may hand out short-lived buffers.
 *
 * Answers that do not change while the program runs are stored, the negative
 * ones too ("no such class", "these bytes are not that class"), so a frame
 * computation that asks about a missing class a thousand times reads once.
 * Failures that may pass (EIO, ENOMEM) are not stored.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <xxhash.h>

#include "internal.h"
#include "jinst/hierarchy.h"

#define SHARD_BITS 4
#define SHARDS (1u << SHARD_BITS)

/* Why a name is unknown, for the diagnostic of later queries. */
enum { KNOWN, NOT_FOUND, MALFORMED, OTHER_CLASS };

typedef struct entry {
	uint64_t hash;
	int why;
	jinst_class_info info; /* info.name is set for unknown names too */
} entry;

typedef struct shard {
	pthread_mutex_t lock;
	entry **slots; /* cap slots, NULL when free */
	size_t cap, count;
	jinst_arena *arena;
	uint64_t queries, reads, classes, unknown;
} shard;

struct jinst_hierarchy_cache {
	jinst_class_source source;
	shard shards[SHARDS];
};

int jinst_hierarchy_cache_new(jinst_hierarchy_cache **out, const jinst_class_source *source)
{
	if (!out || !source || !source->read)
		return JINST_EINVAL;
	*out = NULL;
	jinst_hierarchy_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return JINST_ENOMEM;
	c->source = *source;
	unsigned made = 0;
	for (; made < SHARDS; made++) {
		shard *s = &c->shards[made];
		if (jinst_arena_new(&s->arena) != 0)
			break;
		if (pthread_mutex_init(&s->lock, NULL) != 0) {
			jinst_arena_free(s->arena);
			break;
		}
	}
	if (made < SHARDS) {
		for (unsigned i = 0; i < made; i++) {
			pthread_mutex_destroy(&c->shards[i].lock);
			jinst_arena_free(c->shards[i].arena);
		}
		free(c);
		return JINST_ENOMEM;
	}
	*out = c;
	return 0;
}

void jinst_hierarchy_cache_free(jinst_hierarchy_cache *cache)
{
	if (!cache)
		return;
	for (unsigned i = 0; i < SHARDS; i++) {
		shard *s = &cache->shards[i];
		pthread_mutex_destroy(&s->lock);
		free(s->slots);
		jinst_arena_free(s->arena);
	}
	free(cache);
}

/* The entry for name in s, or NULL. Called with s->lock held. */
static entry *shard_find(const shard *s, uint64_t hash, const char *name)
{
	if (!s->cap)
		return NULL;
	for (size_t i = hash & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		entry *e = s->slots[i];
		if (!e)
			return NULL;
		if (e->hash == hash && strcmp(e->info.name, name) == 0)
			return e;
	}
}

/* Adds e (not yet in s). Called with s->lock held. */
static int shard_insert(shard *s, entry *e)
{
	if ((s->count + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		entry **slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return JINST_ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			entry *old = s->slots[i];
			if (!old)
				continue;
			size_t j = old->hash & (cap - 1);
			while (slots[j])
				j = (j + 1) & (cap - 1);
			slots[j] = old;
		}
		free(s->slots);
		s->slots = slots;
		s->cap = cap;
	}
	size_t i = e->hash & (s->cap - 1);
	while (s->slots[i])
		i = (i + 1) & (s->cap - 1);
	s->slots[i] = e;
	s->count++;
	return 0;
}

static const char *arena_string(jinst_arena *arena, const void *bytes, size_t len)
{
	char *p = jinst_arena_alloc(arena, len + 1);
	if (p) {
		memcpy(p, bytes, len);
		p[len] = '\0';
	}
	return p;
}

/* The name of the Class constant at index as a string in arena; "" for index
 * 0, NULL when out of memory or the constant is not a Class (the parser has
 * checked super_class and interfaces, so that does not happen). */
static const char *class_name(const jinst_class *cls, uint16_t index, jinst_arena *arena)
{
	uint16_t len = 0;
	const uint8_t *n = jinst_cp_name(cls, index, &len);
	return n ? arena_string(arena, n, len) : NULL;
}

/* The entry for a parsed class (cls NULL: an unknown name, for why), built in
 * s->arena. Called with s->lock held. */
static entry *entry_make(shard *s, uint64_t hash, const char *name, const jinst_class *cls, int why)
{
	entry *e = jinst_arena_zalloc(s->arena, sizeof(*e));
	if (!e)
		return NULL;
	e->hash = hash;
	e->why = why;
	e->info.name = arena_string(s->arena, name, strlen(name));
	if (!e->info.name)
		return NULL;
	if (!cls)
		return e;
	e->info.access_flags = jinst_class_access_flags(cls);
	uint16_t super = jinst_class_super_class(cls);
	if (super && !(e->info.super_name = class_name(cls, super, s->arena)))
		return NULL;
	uint16_t n = jinst_class_interface_count(cls);
	if (n) {
		const char **names = jinst_arena_alloc(s->arena, n * sizeof(*names));
		if (!names)
			return NULL;
		for (uint16_t i = 0; i < n; i++)
			if (!(names[i] = class_name(cls, jinst_class_interface(cls, i), s->arena)))
				return NULL;
		e->info.interfaces = names;
		e->info.interface_count = n;
	}
	return e;
}

static int answer(const entry *e, const jinst_class_info **info, jinst_diag *diag)
{
	*info = e->why == KNOWN ? &e->info : NULL;
	switch (e->why) {
	case KNOWN: return 0;
	case NOT_FOUND:
		return jinst_fail(diag, JINST_EHIERARCHY, JINST_NO_OFFSET, "class %s not found", e->info.name);
	case MALFORMED:
		return jinst_fail(diag, JINST_EHIERARCHY, JINST_NO_OFFSET, "class %s: its bytes do not parse",
		                  e->info.name);
	default:
		return jinst_fail(diag, JINST_EHIERARCHY, JINST_NO_OFFSET,
		                  "class %s: the bytes found for it hold another class", e->info.name);
	}
}

int jinst_hierarchy_cache_query(jinst_hierarchy_cache *cache, const char *name,
                                const jinst_class_info **info, jinst_diag *diag)
{
	if (!cache || !name || !info)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "NULL cache, name or info");
	*info = NULL;
	size_t name_len = strlen(name);
	uint64_t hash = XXH3_64bits(name, name_len);
	shard *s = &cache->shards[hash >> (64 - SHARD_BITS)];

	pthread_mutex_lock(&s->lock);
	s->queries++;
	entry *e = shard_find(s, hash, name);
	pthread_mutex_unlock(&s->lock);
	if (e)
		return answer(e, info, diag);

	/* A miss: read and parse with no lock held. */
	const uint8_t *bytes = NULL;
	size_t len = 0;
	int rc = cache->source.read(cache->source.ctx, name, &bytes, &len);
	jinst_class *cls = NULL;
	int why = NOT_FOUND;
	if (rc == 0) {
		why = MALFORMED;
		if (jinst_class_parse(&cls, bytes, len, NULL, NULL, NULL) == 0) {
			uint16_t this_len = 0;
			const uint8_t *this_name = jinst_class_name(cls, &this_len);
			why = this_name && this_len == name_len && memcmp(this_name, name, name_len) == 0
			          ? KNOWN : OTHER_CLASS;
		}
	} else if (rc != JINST_ENOTFOUND) {
		pthread_mutex_lock(&s->lock);
		s->reads++;
		pthread_mutex_unlock(&s->lock);
		return jinst_fail(diag, rc, JINST_NO_OFFSET, "class %s could not be read (%s)", name,
		                  jinst_strerror(rc));
	}

	pthread_mutex_lock(&s->lock);
	s->reads++;
	e = shard_find(s, hash, name);
	if (!e) {
		e = entry_make(s, hash, name, why == KNOWN ? cls : NULL, why);
		if (e && shard_insert(s, e) != 0)
			e = NULL;
		if (e) {
			if (why == KNOWN)
				s->classes++;
			else
				s->unknown++;
		}
	}
	pthread_mutex_unlock(&s->lock);

	jinst_class_free(cls);
	if (rc == 0 && cache->source.release)
		cache->source.release(cache->source.ctx, bytes, len);
	if (!e)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory caching class %s", name);
	return answer(e, info, diag);
}

static int view_lookup(void *ctx, const char *name, const char **super_name, bool *is_interface)
{
	const jinst_class_info *info;
	if (jinst_hierarchy_cache_query(ctx, name, &info, NULL) != 0)
		return JINST_EHIERARCHY;
	*super_name = info->super_name;
	*is_interface = (info->access_flags & JINST_ACC_INTERFACE) != 0;
	return 0;
}

jinst_hierarchy jinst_hierarchy_cache_view(jinst_hierarchy_cache *cache)
{
	jinst_hierarchy h = {view_lookup, cache};
	return h;
}

void jinst_hierarchy_cache_stats(jinst_hierarchy_cache *cache, jinst_hierarchy_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	if (!cache)
		return;
	for (unsigned i = 0; i < SHARDS; i++) {
		shard *s = &cache->shards[i];
		pthread_mutex_lock(&s->lock);
		stats->queries += s->queries;
		stats->reads += s->reads;
		stats->classes += s->classes;
		stats->unknown += s->unknown;
		pthread_mutex_unlock(&s->lock);
	}
}
