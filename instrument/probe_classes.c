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
 * instrumented. The table is an id table (idtable.c) under a mutex;
 * `published` lets readers see the count without it, after the entry is
 * complete.
 *
 * The flat array: while the agent has set a range, a new class also takes
 * the next probe count indices of it, if they fit; it keeps them as it
 * keeps its id. A class that does not fit gets none, and a smaller one
 * after it may still fit: the range is never handed out twice.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static jinst_probe_class_info *entry(const jinst_probe_classes *t, uint32_t index)
{
	return jinst_idtable_at(&t->t, index);
}

int jinst_probe_classes_init(jinst_probe_classes *t)
{
	memset(t, 0, sizeof(*t));
	jinst_idtable_init(&t->t, sizeof(jinst_probe_class_info));
	return pthread_mutex_init(&t->lock, NULL) ? JINST_ENOMEM : 0;
}

void jinst_probe_classes_free(jinst_probe_classes *t)
{
	for (uint32_t i = 0; i < t->t.count; i++)
		free((char *)entry(t, i)->class_name);
	jinst_idtable_free(&t->t);
	pthread_mutex_destroy(&t->lock);
}

static uint64_t slot_hash(uint64_t identity, const char *name)
{
	uint64_t h = identity ^ 0x9e3779b97f4a7c15u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3u;
	return h;
}

static bool same_class(const void *entry, const void *key)
{
	const jinst_probe_class_info *e = entry, *k = key;
	return e->identity == k->identity && !strcmp(e->class_name, k->class_name);
}

static int add(jinst_probe_classes *t, uint64_t identity, const char *name, uint32_t probes, bool flat_ok,
               uint64_t h, uint32_t *id)
{
	jinst_probe_class_info *e;
	if (jinst_idtable_reserve(&t->t, (void **)&e))
		return JINST_ENOMEM;
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
	*e = (jinst_probe_class_info){identity, copy, probes, flat};
	*id = t->base + jinst_idtable_add(&t->t, h, true);
	atomic_store(&t->published, t->t.count);
	return 0;
}

int jinst_probe_classes_assign(jinst_probe_classes *t, uint64_t identity, const char *name, uint32_t probes,
                               bool flat_ok, uint32_t *id, uint32_t *flat)
{
	uint64_t h = slot_hash(identity, name);
	jinst_probe_class_info key = {identity, name, 0, 0};
	uint32_t index;
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if (!jinst_idtable_find(&t->t, &index, h, same_class, &key)) {
		*id = t->base + index;
		*flat = entry(t, index)->flat;
		/* One identity, one placement: a count that differs would make
		 * the runtime's array and the report disagree. */
		if (entry(t, index)->probe_count != probes)
			rc = JINST_EINVAL;
	} else {
		/* Past 2^24 ids the runtime hands out its sink (Coverage.MAX_ID). */
		rc = t->base + t->t.count < (UINT32_C(1) << 24) ? add(t, identity, name, probes, flat_ok, h, id)
		                                                 : JINST_ETOOLARGE;
		if (!rc)
			*flat = entry(t, *id - t->base)->flat;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
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
	int rc = t->t.count || first > (UINT32_C(1) << 24) ? JINST_EINVAL : 0;
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
	*info = *entry(t, id - t->base);
	pthread_mutex_unlock(&t->lock);
	return 0;
}
