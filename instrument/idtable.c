/*
 * The id tables of the instrumenter: entries numbered from 0 in the order
 * they were added, and found again by key. The method table (methods.c),
 * the coverage pass's classes (probe_classes.c), the monitor pass's lock
 * sites (monitor_sites.c) and the allocation pass's sites (alloc_sites.c)
 * are each one of these, under a mutex of their own; the entry type, the
 * key, its hash and its comparison are theirs.
 *
 * Entries live in one array that doubles when full, so an id indexes it
 * and a reader takes the owner's lock (the array moves). The keys go
 * through an open-addressing index with linear probing: slots of (id + 1,
 * the low 32 bits of the key's hash), 0 when free, a power of two at least
 * twice the keyed entries, so a probe run stays short and a lookup mostly
 * compares the hash in the slot before it touches an entry. The index
 * doubles from the slots themselves (their hash bits pick the new place),
 * with no call back into the owner. An entry added without a key (a
 * method id handed out ahead, jinst_instrument_reserve_method_range) has
 * an id and no slot.
 *
 * Adding is two steps, so that an owner whose entry needs memory of its
 * own (its strings) adds nothing when that fails: jinst_idtable_reserve
 * makes room and hands out the next entry zeroed; jinst_idtable_add
 * counts it and indexes it, and cannot fail.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void jinst_idtable_init(jinst_idtable *t, size_t entry_size)
{
	memset(t, 0, sizeof(*t));
	t->size = entry_size;
}

void jinst_idtable_free(jinst_idtable *t)
{
	free(t->entries);
	free(t->slots);
	t->entries = NULL;
	t->slots = NULL;
}

int jinst_idtable_find(const jinst_idtable *t, uint32_t *id, uint64_t hash, jinst_idtable_same same,
                       const void *key)
{
	if (!t->nslots)
		return JINST_ENOTFOUND;
	uint32_t mask = t->nslots - 1, h = (uint32_t)hash;
	for (uint32_t i = h & mask; t->slots[i].id1; i = (i + 1) & mask)
		if (t->slots[i].hash == h && same(jinst_idtable_at(t, t->slots[i].id1 - 1), key)) {
			*id = t->slots[i].id1 - 1;
			return 0;
		}
	return JINST_ENOTFOUND;
}

static void put(jinst_idslot *slots, uint32_t nslots, uint32_t h, uint32_t id1)
{
	uint32_t i = h & (nslots - 1);
	while (slots[i].id1)
		i = (i + 1) & (nslots - 1);
	slots[i] = (jinst_idslot){id1, h};
}

/* The index doubled (64 slots at first). */
static int grow_slots(jinst_idtable *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 64;
	jinst_idslot *s = calloc(n, sizeof(*s));
	if (!s)
		return JINST_ENOMEM;
	for (uint32_t i = 0; i < t->nslots; i++)
		if (t->slots[i].id1)
			put(s, n, t->slots[i].hash, t->slots[i].id1);
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

int jinst_idtable_reserve(jinst_idtable *t, void **entry)
{
	if (t->count >= INT32_MAX)
		return JINST_ENOMEM;
	if (t->count == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		void *e = realloc(t->entries, (size_t)cap * t->size);
		if (!e)
			return JINST_ENOMEM;
		t->entries = e;
		t->cap = cap;
	}
	if ((uint64_t)(t->keyed + 1) * 2 > t->nslots && grow_slots(t))
		return JINST_ENOMEM;
	*entry = jinst_idtable_at(t, t->count);
	memset(*entry, 0, t->size);
	return 0;
}

uint32_t jinst_idtable_add(jinst_idtable *t, uint64_t hash, bool keyed)
{
	uint32_t id = t->count++;
	if (keyed) {
		put(t->slots, t->nslots, (uint32_t)hash, id + 1);
		t->keyed++;
	}
	return id;
}
