/*
 * The method table: the id each instrumented method's hooks take, and the
 * method's metadata for the reports (include/jinst/instrument.h).
 *
 * A method's id is handed out the first time a class holding it is
 * instrumented and is keyed by (class name, method name, descriptor): a
 * class retransformed, or a class of the same name defined by another
 * loader, gets the same ids, which is what the reports want since they
 * aggregate by name. The table is one open-addressing hash (xxhash of the
 * key) over an array of entries, guarded by one mutex; an uncontended lock
 * per method costs tens of nanoseconds against the microseconds a method's
 * instrumentation takes. Readers of the metadata take the lock too, since
 * the array moves when it grows; the count alone is published atomically.
 */
#include <stdlib.h>
#include <string.h>

#include "xxhash.h"

#include "internal.h"

int jinst_methods_init(jinst_method_table *t)
{
	memset(t, 0, sizeof(*t));
	t->nslots = 1024;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->slots)
		return JINST_ENOMEM;
	if (pthread_mutex_init(&t->lock, NULL)) {
		free(t->slots);
		return JINST_ENOMEM;
	}
	return 0;
}

void jinst_methods_free(jinst_method_table *t)
{
	for (uint32_t i = 0; i < t->count; i++)
		free((char *)t->entries[i].info.class_name);
	free(t->entries);
	free(t->slots);
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

static bool key_equal(const jinst_method_entry *e, const jinst_pass_class *c, const jinst_pass_method *k)
{
	const char *p = e->info.class_name;
	size_t clen = c->name_len;
	return e->key_len == clen + k->name_len + k->desc_len + 3 && !memcmp(p, c->name, clen + 1) &&
	       !memcmp(p + clen + 1, k->name, k->name_len + 1) &&
	       !memcmp(p + clen + k->name_len + 2, k->descriptor, k->desc_len + 1);
}

static bool grow(jinst_method_table *t)
{
	if (t->count == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		jinst_method_entry *e = realloc(t->entries, (size_t)cap * sizeof(*e));
		if (!e)
			return false;
		t->entries = e;
		t->cap = cap;
	}
	if ((uint64_t)(t->count + 1) * 2 > t->nslots) {
		uint32_t n = t->nslots * 2;
		uint32_t *s = calloc(n, sizeof(*s));
		if (!s)
			return false;
		for (uint32_t i = 0; i < t->count; i++) {
			if (!t->entries[i].info.class_name)
				continue; /* reserved: no key */
			uint32_t j = (uint32_t)t->entries[i].hash & (n - 1);
			while (s[j])
				j = (j + 1) & (n - 1);
			s[j] = i + 1;
		}
		free(t->slots);
		t->slots = s;
		t->nslots = n;
	}
	return true;
}

/* A new entry for k (the lock held, room made by grow). */
static int add(jinst_method_table *t, const jinst_pass_class *c, const jinst_pass_method *k, uint64_t h,
               uint32_t flags)
{
	size_t clen = c->name_len, slen = c->source ? strlen(c->source) : 0;
	size_t key_len = clen + k->name_len + k->desc_len + 3;
	char *block = malloc(key_len + (c->source ? slen + 1 : 0));
	if (!block)
		return JINST_ENOMEM;
	jinst_method_entry *e = &t->entries[t->count];
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
	e->hash = h;
	e->key_len = key_len;
	uint32_t j = (uint32_t)h & (t->nslots - 1);
	while (t->slots[j])
		j = (j + 1) & (t->nslots - 1);
	t->slots[j] = t->count + 1;
	t->count++;
	return 0;
}

int jinst_methods_assign(jinst_method_table *t, const jinst_pass_class *c, const jinst_pass_method *k,
                         uint32_t flags, uint32_t *id, jinst_diag *diag)
{
	uint64_t h = key_hash(c, k);
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	uint32_t j = (uint32_t)h & (t->nslots - 1), s;
	while ((s = t->slots[j]) && !(t->entries[s - 1].hash == h && key_equal(&t->entries[s - 1], c, k)))
		j = (j + 1) & (t->nslots - 1);
	if (s) {
		*id = s - 1;
		t->entries[s - 1].info.timed = flags & JINST_METHOD_TIMED;
	} else if (t->count == INT32_MAX || !grow(t) || (rc = add(t, c, k, h, flags))) {
		rc = jinst_ins_fail(diag, JINST_ENOMEM, "out of memory for the method table");
	} else {
		*id = t->count - 1;
		atomic_store(&t->published, t->count);
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int jinst_instrument_reserve_method_range(jinst_instrument *ins, uint32_t count, uint32_t *first)
{
	jinst_method_table *t = &ins->methods;
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	*first = t->count;
	if (count > (uint32_t)INT32_MAX - t->count)
		rc = JINST_ETOOLARGE;
	/* Entries without a key: no slot finds them, and info says unknown. */
	for (uint32_t i = 0; !rc && i < count; i++) {
		if (!grow(t)) {
			rc = JINST_ENOMEM;
			break;
		}
		memset(&t->entries[t->count++], 0, sizeof(*t->entries));
	}
	if (rc)
		t->count = *first;
	atomic_store(&t->published, t->count);
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
	if (id < t->count && t->entries[id].info.class_name) {
		*info = t->entries[id].info;
		rc = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}
