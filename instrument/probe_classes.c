/*
 * The coverage pass's class table: an id per class identity, handed to the
 * probe hooks as a constant, and what the agent needs to write the data
 * (identity, name, probe count).
 *
 * Keyed by (identity, name): a class retransformed (the agent passes the
 * identity of its first load) or defined by a second loader from the same
 * bytes gets the id it had, so its probes land in the same array; another
 * version of a class (other bytes, other identity) gets an id of its own.
 * Ids are dense from 0 (or from the start an agent's new session sets, past
 * the ids of the sessions before it), in the order classes are first
 * instrumented. A mutex guards the table; `published` lets readers see the
 * count without it, after the entry is complete.
 *
 * The flat array: while the agent has set a range, a new class also takes
 * the next probe count indices of it, if they fit; it keeps them as it
 * keeps its id. A class that does not fit gets none, and a smaller one
 * after it may still fit: the range is never handed out twice.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int jinst_probe_classes_init(jinst_probe_classes *t)
{
	memset(t, 0, sizeof(*t));
	return pthread_mutex_init(&t->lock, NULL) ? JINST_ENOMEM : 0;
}

void jinst_probe_classes_free(jinst_probe_classes *t)
{
	for (uint32_t i = 0; i < t->count; i++)
		free((char *)t->entries[i].class_name);
	free(t->entries);
	free(t->slots);
	pthread_mutex_destroy(&t->lock);
}

static uint64_t slot_hash(uint64_t identity, const char *name)
{
	uint64_t h = identity ^ 0x9e3779b97f4a7c15u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	return h;
}

/* Doubles the slot array (a power of two, at least twice count). */
static int rehash(jinst_probe_classes *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 64;
	uint32_t *s = calloc(n, sizeof(*s));
	if (!s)
		return JINST_ENOMEM;
	for (uint32_t i = 0; i < t->count; i++) {
		uint32_t j = (uint32_t)slot_hash(t->entries[i].identity, t->entries[i].class_name) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

static int add(jinst_probe_classes *t, uint64_t identity, const char *name, uint32_t probes, bool flat_ok,
               uint32_t slot, uint32_t *id)
{
	if (t->count == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		jinst_probe_class_info *e = realloc(t->entries, cap * sizeof(*e));
		if (!e)
			return JINST_ENOMEM;
		t->entries = e;
		t->cap = cap;
	}
	size_t n = strlen(name) + 1;
	char *copy = malloc(n);
	if (!copy)
		return JINST_ENOMEM;
	memcpy(copy, name, n);
	uint32_t flat = JINST_NO_FLAT;
	if (flat_ok && t->flat_end - t->flat_next >= probes) {
		flat = t->flat_next;
		t->flat_next += probes;
	}
	t->entries[t->count] = (jinst_probe_class_info){identity, copy, probes, flat};
	t->slots[slot] = t->count + 1;
	*id = t->base + t->count++;
	atomic_store(&t->published, t->count);
	return 0;
}

int jinst_probe_classes_assign(jinst_probe_classes *t, uint64_t identity, const char *name, uint32_t probes,
                               bool flat_ok, uint32_t *id, uint32_t *flat)
{
	pthread_mutex_lock(&t->lock);
	int rc = 0;
	if (t->count * 2 >= t->nslots)
		rc = rehash(t);
	uint32_t j = rc ? 0 : (uint32_t)slot_hash(identity, name) & (t->nslots - 1);
	for (; !rc && t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		const jinst_probe_class_info *e = &t->entries[t->slots[j] - 1];
		if (e->identity == identity && !strcmp(e->class_name, name)) {
			*id = t->base + t->slots[j] - 1;
			*flat = e->flat;
			/* One identity, one placement: a count that differs would
			 * make the runtime's array and the report disagree. */
			rc = e->probe_count == probes ? 1 : JINST_EINVAL;
		}
	}
	/* Past 2^24 ids the runtime hands out its sink (Coverage.MAX_ID). */
	if (!rc)
		rc = t->base + t->count < (UINT32_C(1) << 24) ? add(t, identity, name, probes, flat_ok, j, id) : JINST_EINVAL;
	if (!rc)
		*flat = t->entries[*id - t->base].flat;
	pthread_mutex_unlock(&t->lock);
	return rc < 0 ? rc : 0;
}

uint32_t jinst_instrument_probe_class_count(const jinst_instrument *ins)
{
	const jinst_probe_classes *t = &ins->probe_classes;
	return t->base + atomic_load(&((jinst_probe_classes *)t)->published);
}

int jinst_instrument_probe_class_start(jinst_instrument *ins, uint32_t first)
{
	jinst_probe_classes *t = &ins->probe_classes;
	pthread_mutex_lock(&t->lock);
	int rc = t->count || first > (UINT32_C(1) << 24) ? JINST_EINVAL : 0;
	if (!rc)
		t->base = first;
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int jinst_instrument_probe_flat_range(jinst_instrument *ins, uint32_t next, uint32_t end)
{
	if (next > end)
		return JINST_EINVAL;
	jinst_probe_classes *t = &ins->probe_classes;
	pthread_mutex_lock(&t->lock);
	t->flat_next = next;
	t->flat_end = end;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

uint32_t jinst_instrument_probe_flat_next(const jinst_instrument *ins)
{
	jinst_probe_classes *t = &((jinst_instrument *)ins)->probe_classes;
	pthread_mutex_lock(&t->lock);
	uint32_t next = t->flat_next;
	pthread_mutex_unlock(&t->lock);
	return next;
}

int jinst_instrument_probe_class_info(const jinst_instrument *ins, uint32_t id, jinst_probe_class_info *info)
{
	jinst_probe_classes *t = &((jinst_instrument *)ins)->probe_classes;
	if (id < t->base || id >= jinst_instrument_probe_class_count(ins))
		return JINST_EINVAL;
	pthread_mutex_lock(&t->lock);
	*info = t->entries[id - t->base];
	pthread_mutex_unlock(&t->lock);
	return 0;
}
