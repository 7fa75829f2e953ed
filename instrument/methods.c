/*
 * The method table: the id each instrumented method's hooks take, and the
 * method's metadata for the reports (include/jinst/instrument.h).
 *
 * A method's id is handed out the first time a class holding it is
 * instrumented and is keyed by (class name, method name, descriptor): a
 * class retransformed, or a class of the same name defined by another
 * loader, gets the same ids, which is what the reports want since they
 * aggregate by name. The table is an id table (idtable.c: an array of
 * entries, an open-addressing hash of their keys, xxhash here), guarded by
 * one mutex; an uncontended lock
 * per method costs tens of nanoseconds against the microseconds a method's
 * instrumentation takes. Readers of the metadata take the lock too, since
 * the array moves when it grows; the count alone is published atomically.
 */
#include <stdlib.h>
#include <string.h>

#include "xxhash.h"

#include "internal.h"

static jinst_method_entry *entry(const jinst_method_table *t, uint32_t id)
{
	return jinst_idtable_at(&t->t, id);
}

int jinst_methods_init(jinst_method_table *t)
{
	memset(t, 0, sizeof(*t));
	jinst_idtable_init(&t->t, sizeof(jinst_method_entry));
	return pthread_mutex_init(&t->lock, NULL) ? JINST_ENOMEM : 0;
}

void jinst_methods_free(jinst_method_table *t)
{
	for (uint32_t i = 0; i < t->t.count; i++)
		free((char *)entry(t, i)->info.class_name);
	jinst_idtable_free(&t->t);
	pthread_mutex_destroy(&t->lock);
}

static uint64_t key_hash(const jinst_pass_class *c, const jinst_pass_method *k)
{
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, c->name, c->name_len + 1);
	XXH3_64bits_update(&st, k->name, k->name_len + 1);
	XXH3_64bits_update(&st, k->descriptor, k->desc_len + 1);
	return XXH3_64bits_digest(&st);
}

typedef struct method_key {
	const jinst_pass_class *c;
	const jinst_pass_method *k;
} method_key;

static bool key_equal(const void *entry, const void *key)
{
	const jinst_method_entry *e = entry;
	const jinst_pass_class *c = ((const method_key *)key)->c;
	const jinst_pass_method *k = ((const method_key *)key)->k;
	const char *p = e->info.class_name;
	size_t clen = c->name_len;
	return e->key_len == clen + k->name_len + k->desc_len + 3 && !memcmp(p, c->name, clen + 1) &&
	       !memcmp(p + clen + 1, k->name, k->name_len + 1) &&
	       !memcmp(p + clen + k->name_len + 2, k->descriptor, k->desc_len + 1);
}

/* A new entry for k (the lock held). */
static int add(jinst_method_table *t, const jinst_pass_class *c, const jinst_pass_method *k, uint64_t h,
               uint32_t flags, uint32_t *id)
{
	size_t clen = c->name_len, slen = c->source ? strlen(c->source) : 0;
	size_t key_len = clen + k->name_len + k->desc_len + 3;
	jinst_method_entry *e;
	if (jinst_idtable_reserve(&t->t, (void **)&e))
		return JINST_ENOMEM;
	char *block = malloc(key_len + (c->source ? slen + 1 : 0));
	if (!block)
		return JINST_ENOMEM;
	memcpy(block, c->name, clen + 1);
	memcpy(block + clen + 1, k->name, k->name_len + 1);
	memcpy(block + clen + k->name_len + 2, k->descriptor, k->desc_len + 1);
	if (c->source)
		memcpy(block + key_len, c->source, slen + 1);
	e->info.class_name = block;
	e->info.name = block + clen + 1;
	e->info.descriptor = block + clen + k->name_len + 2;
	e->info.source_file = c->source ? block + key_len : NULL;
	e->info.first_line = k->first_line;
	e->info.timed = flags & JINST_METHOD_TIMED;
	e->key_len = key_len;
	*id = jinst_idtable_add(&t->t, h, true);
	return 0;
}

int jinst_methods_assign(jinst_method_table *t, const jinst_pass_class *c, const jinst_pass_method *k,
                         uint32_t flags, uint32_t *id, jinst_diag *diag)
{
	uint64_t h = key_hash(c, k);
	method_key key = {c, k};
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if (!jinst_idtable_find(&t->t, id, h, key_equal, &key)) {
		entry(t, *id)->info.timed = flags & JINST_METHOD_TIMED;
	} else if (add(t, c, k, h, flags, id)) {
		rc = jinst_ins_fail(diag, JINST_ENOMEM, "out of memory for the method table");
	} else {
		atomic_store(&t->published, t->t.count);
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int jinst_instrument_reserve_method_range(jinst_instrument *ins, uint32_t count, uint32_t *first)
{
	jinst_method_table *t = &ins->methods;
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	*first = t->t.count;
	if (count > (uint32_t)INT32_MAX - t->t.count)
		rc = JINST_ETOOLARGE;
	/* Entries without a key: no slot finds them, and info says unknown. */
	for (uint32_t i = 0; !rc && i < count; i++) {
		void *e;
		if ((rc = jinst_idtable_reserve(&t->t, &e)))
			break;
		jinst_idtable_add(&t->t, 0, false);
	}
	if (rc)
		t->t.count = *first;
	atomic_store(&t->published, t->t.count);
	pthread_mutex_unlock(&t->lock);
	return rc;
}

uint32_t jinst_instrument_method_count(const jinst_instrument *ins)
{
	return atomic_load(&((jinst_instrument *)ins)->methods.published);
}

int jinst_instrument_method_info(const jinst_instrument *ins, uint32_t id, jinst_method_info *info)
{
	jinst_method_table *t = &((jinst_instrument *)ins)->methods; /* the lock is taken through non-const */
	int rc = JINST_EINVAL;
	pthread_mutex_lock(&t->lock);
	if (id < t->t.count && entry(t, id)->info.class_name) {
		*info = entry(t, id)->info;
		rc = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}
