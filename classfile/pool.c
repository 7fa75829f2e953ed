/*
 * The constant pool: reading entries by index, and the pool builder.
 *
 * Entries of the parsed class are decoded on demand from their offsets. The
 * builder appends: existing indices never move (invariant 3 of DESIGN.md), so
 * every copied attribute and method stays valid. Appended entries are
 * deduplicated against all entries. The first few additions to a class
 * (a pass adding its hook references: a dozen entries) look their entry up
 * through the few appended entries and, unless it names one of those, by
 * its encoded bytes in the pool's bytes (memchr on its rarest byte, then a
 * check that the hit starts an entry): hashing every entry of the pool for
 * them cost more than the rest of the pass. From
 * the seventeenth addition on, an open-addressing hash table keyed by the
 * xxhash of (tag, contents) answers, built then over every entry. Both
 * find the lowest index of equal entries, so the output is the same.
 */
#include "internal.h"

#include <xxhash.h>

#define POOL_MAX 65535 /* constant_pool_count is a u2 */

struct jinst_pool {
	uint16_t count;          /* current constant_pool_count */
	uint16_t added;          /* number of appended entries (slots, long/double count 2) */
	jinst_cp_entry *entries; /* appended entries by index - original count */
	uint32_t entries_cap;
	uint16_t *table;         /* hash slots holding indices; 0 = empty; NULL until built */
	uint32_t unhashed;       /* additions looked up without the table */
	uint32_t table_mask;
	uint32_t used;
};

uint16_t jinst_cp_count(const jinst_class *c)
{
	return c->pool ? c->pool->count : c->cp_count;
}

uint16_t jinst_cp_original_count(const jinst_class *c)
{
	return c->cp_count;
}

uint8_t jinst_cp_tag(const jinst_class *c, uint16_t index)
{
	if (index < c->cp_count)
		return c->cp_tags[index];
	if (c->pool && index < c->pool->count)
		return c->pool->entries[index - c->cp_count].tag;
	return 0;
}

uint32_t jinst_cp_offset(const jinst_class *c, uint16_t index)
{
	return index < c->cp_count ? c->cp_offsets[index] : 0;
}

static void decode_entry(const jinst_class *c, uint16_t index, jinst_cp_entry *e)
{
	const uint8_t *p = c->bytes + c->cp_offsets[index];
	e->tag = p[0];
	p++;
	switch (e->tag) {
	case JINST_CP_UTF8:
		e->u.utf8.length = jinst_be16(p);
		e->u.utf8.bytes = p + 2;
		break;
	case JINST_CP_INTEGER:
	case JINST_CP_FLOAT:
		e->u.u4 = jinst_be32(p);
		break;
	case JINST_CP_LONG:
	case JINST_CP_DOUBLE:
		e->u.u8 = (uint64_t)jinst_be32(p) << 32 | jinst_be32(p + 4);
		break;
	case JINST_CP_CLASS:
	case JINST_CP_STRING:
	case JINST_CP_METHOD_TYPE:
	case JINST_CP_MODULE:
	case JINST_CP_PACKAGE:
		e->u.index = jinst_be16(p);
		break;
	case JINST_CP_FIELDREF:
	case JINST_CP_METHODREF:
	case JINST_CP_INTERFACE_METHODREF:
		e->u.ref.class_index = jinst_be16(p);
		e->u.ref.name_and_type_index = jinst_be16(p + 2);
		break;
	case JINST_CP_NAME_AND_TYPE:
		e->u.nat.name_index = jinst_be16(p);
		e->u.nat.descriptor_index = jinst_be16(p + 2);
		break;
	case JINST_CP_METHOD_HANDLE:
		e->u.handle.kind = p[0];
		e->u.handle.reference_index = jinst_be16(p + 1);
		break;
	case JINST_CP_DYNAMIC:
	case JINST_CP_INVOKE_DYNAMIC:
		e->u.dyn.bootstrap_method_attr_index = jinst_be16(p);
		e->u.dyn.name_and_type_index = jinst_be16(p + 2);
		break;
	default: /* not a tag the reader lets through */
		memset(&e->u, 0, sizeof(e->u));
		break;
	}
}

int jinst_cp_get(const jinst_class *c, uint16_t index, jinst_cp_entry *out)
{
	if (index < c->cp_count && index) {
		if (!c->cp_tags[index])
			goto bad;
		decode_entry(c, index, out);
		return 0;
	}
	if (index == 0 || index >= jinst_cp_count(c) || jinst_cp_tag(c, index) == 0)
		goto bad;
	*out = c->pool->entries[index - c->cp_count];
	return 0;
bad:
	memset(out, 0, sizeof(*out));
	return JINST_EMALFORMED;
}

const uint8_t *jinst_cp_utf8(const jinst_class *c, uint16_t index, uint16_t *len)
{
	if (index < c->cp_count) {
		if (c->cp_tags[index] != JINST_CP_UTF8)
			return NULL;
		const uint8_t *p = c->bytes + c->cp_offsets[index];
		if (len)
			*len = jinst_be16(p + 1);
		return p + 3;
	}
	jinst_cp_entry e;
	if (jinst_cp_get(c, index, &e) || e.tag != JINST_CP_UTF8)
		return NULL;
	if (len)
		*len = e.u.utf8.length;
	return e.u.utf8.bytes;
}

const uint8_t *jinst_cp_name(const jinst_class *c, uint16_t index, uint16_t *len)
{
	jinst_cp_entry e;
	if (jinst_cp_get(c, index, &e))
		return NULL;
	switch (e.tag) {
	case JINST_CP_CLASS:
	case JINST_CP_STRING:
	case JINST_CP_METHOD_TYPE:
	case JINST_CP_MODULE:
	case JINST_CP_PACKAGE:
		return jinst_cp_utf8(c, e.u.index, len);
	default:
		return NULL;
	}
}

/* ---- the builder ------------------------------------------------------------------ */

/* Hash of (tag, contents). Entries are hashed by their meaning, never by padding. */
static uint64_t entry_hash(const jinst_cp_entry *e)
{
	if (e->tag == JINST_CP_UTF8)
		return XXH3_64bits_withSeed(e->u.utf8.bytes, e->u.utf8.length, JINST_CP_UTF8);
	uint8_t key[9];
	size_t n = 1;
	key[0] = e->tag;
	switch (e->tag) {
	case JINST_CP_INTEGER:
	case JINST_CP_FLOAT:
		memcpy(key + 1, &e->u.u4, 4);
		n += 4;
		break;
	case JINST_CP_LONG:
	case JINST_CP_DOUBLE:
		memcpy(key + 1, &e->u.u8, 8);
		n += 8;
		break;
	case JINST_CP_METHOD_HANDLE:
		key[1] = e->u.handle.kind;
		memcpy(key + 2, &e->u.handle.reference_index, 2);
		n += 3;
		break;
	case JINST_CP_CLASS:
	case JINST_CP_STRING:
	case JINST_CP_METHOD_TYPE:
	case JINST_CP_MODULE:
	case JINST_CP_PACKAGE:
		memcpy(key + 1, &e->u.index, 2);
		n += 2;
		break;
	default: /* the two-index forms share one layout */
		memcpy(key + 1, &e->u.ref.class_index, 2);
		memcpy(key + 3, &e->u.ref.name_and_type_index, 2);
		n += 4;
		break;
	}
	return XXH3_64bits(key, n);
}

bool jinst_cp_entry_equal(const jinst_cp_entry *a, const jinst_cp_entry *b)
{
	if (a->tag != b->tag)
		return false;
	switch (a->tag) {
	case 0: /* unusable slots */
		return true;
	case JINST_CP_UTF8:
		return a->u.utf8.length == b->u.utf8.length &&
		       memcmp(a->u.utf8.bytes, b->u.utf8.bytes, a->u.utf8.length) == 0;
	case JINST_CP_INTEGER:
	case JINST_CP_FLOAT:
		return a->u.u4 == b->u.u4;
	case JINST_CP_LONG:
	case JINST_CP_DOUBLE:
		return a->u.u8 == b->u.u8;
	case JINST_CP_METHOD_HANDLE:
		return a->u.handle.kind == b->u.handle.kind && a->u.handle.reference_index == b->u.handle.reference_index;
	case JINST_CP_CLASS:
	case JINST_CP_STRING:
	case JINST_CP_METHOD_TYPE:
	case JINST_CP_MODULE:
	case JINST_CP_PACKAGE:
		return a->u.index == b->u.index;
	default:
		return a->u.ref.class_index == b->u.ref.class_index &&
		       a->u.ref.name_and_type_index == b->u.ref.name_and_type_index;
	}
}

static void table_insert(jinst_pool *p, uint64_t h, uint16_t index)
{
	uint32_t i = (uint32_t)h & p->table_mask;
	while (p->table[i])
		i = (i + 1) & p->table_mask;
	p->table[i] = index;
	p->used++;
}

/* An open-addressing table of pool indexes, zeroed: a power of two at least
 * `least` slots and twice `entries`, so probes stay short. */
static uint16_t *index_table(jinst_class *c, uint32_t least, uint32_t entries, uint32_t *size_out)
{
	uint32_t size = least;
	while (size < entries * 2)
		size *= 2;
	*size_out = size;
	return jinst_arena_zalloc(c->arena, size * sizeof(uint16_t));
}

static int table_alloc(jinst_class *c, jinst_pool *p, uint32_t min_entries)
{
	uint32_t size;
	uint16_t *t = index_table(c, 64, min_entries, &size);
	if (!t)
		return JINST_ENOMEM;
	p->table = t;
	p->table_mask = size - 1;
	p->used = 0;
	return 0;
}

static int table_rebuild(jinst_class *c, jinst_pool *p, uint32_t min_entries)
{
	int rc = table_alloc(c, p, min_entries);
	if (rc)
		return rc;
	for (uint32_t i = 1; i < p->count; i++) {
		jinst_cp_entry e;
		if (jinst_cp_get(c, (uint16_t)i, &e))
			continue;
		/* Keep the first of duplicate entries: look it up before inserting. */
		uint64_t h = entry_hash(&e);
		uint32_t s = (uint32_t)h & p->table_mask;
		bool dup = false;
		for (; p->table[s]; s = (s + 1) & p->table_mask) {
			jinst_cp_entry o;
			jinst_cp_get(c, p->table[s], &o);
			if (jinst_cp_entry_equal(&o, &e)) {
				dup = true;
				break;
			}
		}
		if (!dup)
			table_insert(p, h, (uint16_t)i);
	}
	return 0;
}

static int pool_init(jinst_class *c)
{
	jinst_pool *p = jinst_arena_zalloc(c->arena, sizeof(*p));
	if (!p)
		return JINST_ENOMEM;
	p->count = c->cp_count;
	c->pool = p;
	return 0;
}

/* Lookups before the table: additions up to this many, Utf8 up to this long. */
#define UNHASHED_ADDS 16
#define UNHASHED_UTF8 250

/* How common a byte is in a constant pool, roughly: the search below
 * anchors on the rarest byte of what it looks for. */
static int byte_commonness(uint8_t b)
{
	if (b <= 0x01 || (b >= 'a' && b <= 'z') || b == '/' || b == ';' || b == 'L' || b == '(' || b == ')')
		return 2;
	if (b >= 'A' && b <= 'Z')
		return 1;
	return 0;
}

/* The lowest index of an original entry whose encoding is key[0..n), or
 * 0. Original entries lie in index order in the bytes (the slot after a
 * Long or Double has offset 0 and sorts with its entry), so a hit is an
 * entry when the index search finds one starting there. */
static uint16_t find_original(const jinst_class *c, const uint8_t *key, size_t n)
{
	size_t k = n - 1; /* the anchor: the rarest byte, the last of equals */
	for (size_t i = n - 1; i-- > 0;)
		if (byte_commonness(key[i]) < byte_commonness(key[k]))
			k = i;
	const uint8_t *base = c->bytes, *from = base + 10 + k, *end = base + c->cp_end;
	const uint32_t *off = c->cp_offsets;
	while (from < end) {
		const uint8_t *hit = memchr(from, key[k], (size_t)(end - from));
		if (!hit)
			return 0;
		from = hit + 1;
		const uint8_t *at = hit - k;
		if ((size_t)(end - at) < n || memcmp(at, key, n) != 0)
			continue;
		uint32_t h = (uint32_t)(at - base);
		uint32_t lo = 1, hi = c->cp_count;
		while (lo < hi) { /* the first index whose offset is >= h */
			uint32_t mid = (lo + hi) / 2;
			uint32_t o = off[mid] ? off[mid] : off[mid - 1];
			if (o < h)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < c->cp_count && off[lo] == h && c->cp_tags[lo] == key[0])
			return (uint16_t)lo;
	}
	return 0;
}

static size_t encode_entry(const jinst_cp_entry *e, uint8_t *q);

/* Whether e names an appended entry: no original entry can equal it. */
static bool names_added(const jinst_class *c, const jinst_cp_entry *e)
{
	switch (e->tag) {
	case JINST_CP_CLASS:
	case JINST_CP_STRING:
	case JINST_CP_METHOD_TYPE:
	case JINST_CP_MODULE:
	case JINST_CP_PACKAGE:
		return e->u.index >= c->cp_count;
	case JINST_CP_METHOD_HANDLE:
		return e->u.handle.reference_index >= c->cp_count;
	case JINST_CP_FIELDREF:
	case JINST_CP_METHODREF:
	case JINST_CP_INTERFACE_METHODREF:
	case JINST_CP_NAME_AND_TYPE:
	case JINST_CP_DYNAMIC:
	case JINST_CP_INVOKE_DYNAMIC: /* the two-index forms share one layout */
		return e->u.ref.class_index >= c->cp_count || e->u.ref.name_and_type_index >= c->cp_count;
	default:
		return false;
	}
}

/* jinst_cp_add's lookup without the table: 0 when there is no equal
 * entry. The appended entries are looked at first: one exists only when
 * no original entry equals it, so the lowest index is the same. */
static uint16_t find_unhashed(const jinst_class *c, const jinst_pool *p, const jinst_cp_entry *e)
{
	for (uint32_t i = 0; i < p->added; i++)
		if (p->entries[i].tag == e->tag && jinst_cp_entry_equal(&p->entries[i], e))
			return (uint16_t)(c->cp_count + i);
	if (names_added(c, e))
		return 0;
	uint8_t key[3 + UNHASHED_UTF8];
	return find_original(c, key, encode_entry(e, key));
}

/* The Class-name table holds only the original pool's Class constants (a
 * tenth to a fifth of a pool), keyed by the bytes of their names; appended
 * ones are not in it, and jinst_cp_find_class looks through them after. */
static const uint8_t *class_name_at(const jinst_class *c, uint16_t index, uint16_t *len)
{
	const uint8_t *p = c->bytes + c->cp_offsets[index];
	return jinst_cp_utf8(c, jinst_be16(p + 1), len);
}

static int class_names_build(jinst_class *c)
{
	uint32_t n = 0;
	for (uint32_t i = 1; i < c->cp_count; i++)
		n += c->cp_tags[i] == JINST_CP_CLASS;
	uint32_t size;
	uint16_t *t = index_table(c, 16, n, &size);
	if (!t)
		return JINST_ENOMEM;
	uint32_t mask = size - 1;
	for (uint32_t i = 1; i < c->cp_count; i++) {
		if (c->cp_tags[i] != JINST_CP_CLASS)
			continue;
		uint16_t len;
		const uint8_t *name = class_name_at(c, (uint16_t)i, &len);
		if (!name)
			continue;
		uint32_t s = (uint32_t)XXH3_64bits(name, len) & mask;
		bool dup = false;
		for (; t[s] && !dup; s = (s + 1) & mask) {
			uint16_t ol;
			const uint8_t *o = class_name_at(c, t[s], &ol);
			dup = ol == len && memcmp(o, name, len) == 0; /* keep the first */
		}
		if (!dup)
			t[s] = (uint16_t)i;
	}
	c->class_names = t;
	c->class_names_mask = mask;
	return 0;
}

uint16_t jinst_cp_find_class(jinst_class *c, const uint8_t *name, uint16_t len)
{
	if (!c->class_names && class_names_build(c))
		return 0;
	uint32_t mask = c->class_names_mask;
	for (uint32_t s = (uint32_t)XXH3_64bits(name, len) & mask; c->class_names[s]; s = (s + 1) & mask) {
		uint16_t ol;
		const uint8_t *o = class_name_at(c, c->class_names[s], &ol);
		if (ol == len && memcmp(o, name, len) == 0)
			return c->class_names[s];
	}
	/* Then the appended ones, a few dozen at most (a pass's hooks, the
	 * probe array's [Z that every frame of every method names): without
	 * them, each method's frames added that name again through
	 * jinst_cp_add, 3% of `jinst instrument --coverage`. */
	const jinst_pool *p = c->pool;
	for (uint32_t i = 0; p && i < p->added; i++) {
		const jinst_cp_entry *e = &p->entries[i];
		uint16_t ol;
		const uint8_t *o;
		if (e->tag == JINST_CP_CLASS && (o = jinst_cp_utf8(c, e->u.index, &ol)) && ol == len &&
		    memcmp(o, name, len) == 0)
			return (uint16_t)(c->cp_count + i);
	}
	return 0;
}

/* An appended entry may only refer to existing entries of the kinds JVMS 4.4 names. */
static bool refs_valid(const jinst_class *c, const jinst_cp_entry *e)
{
	switch (e->tag) {
	case JINST_CP_UTF8:
	case JINST_CP_INTEGER:
	case JINST_CP_FLOAT:
	case JINST_CP_LONG:
	case JINST_CP_DOUBLE:
		return true;
	case JINST_CP_CLASS:
	case JINST_CP_STRING:
	case JINST_CP_METHOD_TYPE:
	case JINST_CP_MODULE:
	case JINST_CP_PACKAGE:
		return jinst_cp_tag(c, e->u.index) == JINST_CP_UTF8;
	case JINST_CP_FIELDREF:
	case JINST_CP_METHODREF:
	case JINST_CP_INTERFACE_METHODREF:
		return jinst_cp_tag(c, e->u.ref.class_index) == JINST_CP_CLASS &&
		       jinst_cp_tag(c, e->u.ref.name_and_type_index) == JINST_CP_NAME_AND_TYPE;
	case JINST_CP_NAME_AND_TYPE:
		return jinst_cp_tag(c, e->u.nat.name_index) == JINST_CP_UTF8 &&
		       jinst_cp_tag(c, e->u.nat.descriptor_index) == JINST_CP_UTF8;
	case JINST_CP_METHOD_HANDLE: {
		uint8_t t = jinst_cp_tag(c, e->u.handle.reference_index);
		return e->u.handle.kind >= 1 && e->u.handle.kind <= 9 &&
		       (t == JINST_CP_FIELDREF || t == JINST_CP_METHODREF || t == JINST_CP_INTERFACE_METHODREF);
	}
	case JINST_CP_DYNAMIC:
	case JINST_CP_INVOKE_DYNAMIC:
		return jinst_cp_tag(c, e->u.dyn.name_and_type_index) == JINST_CP_NAME_AND_TYPE;
	default:
		return false;
	}
}

int jinst_cp_add(jinst_class *c, const jinst_cp_entry *entry, uint16_t *index)
{
	if (!entry || !index || !refs_valid(c, entry))
		return JINST_EINVAL;
	if (!c->pool) {
		int rc = pool_init(c);
		if (rc)
			return rc;
	}
	jinst_pool *p = c->pool;
	if (!p->table && (++p->unhashed > UNHASHED_ADDS ||
	                  (entry->tag == JINST_CP_UTF8 && entry->u.utf8.length > UNHASHED_UTF8))) {
		int rc = table_rebuild(c, p, (uint32_t)p->count + 64u);
		if (rc)
			return rc;
	}
	uint64_t h = 0;
	if (!p->table) {
		uint16_t found = find_unhashed(c, p, entry);
		if (found) {
			*index = found;
			return 0;
		}
	} else {
		h = entry_hash(entry);
		for (uint32_t s = (uint32_t)h & p->table_mask; p->table[s]; s = (s + 1) & p->table_mask) {
			jinst_cp_entry o;
			jinst_cp_get(c, p->table[s], &o);
			if (jinst_cp_entry_equal(&o, entry)) {
				*index = p->table[s];
				return 0;
			}
		}
	}
	unsigned slots = entry->tag == JINST_CP_LONG || entry->tag == JINST_CP_DOUBLE ? 2 : 1;
	if ((uint32_t)p->count + slots > POOL_MAX)
		return JINST_ETOOLARGE;
	uint32_t need = (uint32_t)p->added + slots;
	if (need > p->entries_cap) {
		uint32_t cap = p->entries_cap ? p->entries_cap * 2 : 64;
		while (cap < need)
			cap *= 2;
		jinst_cp_entry *ne = jinst_arena_alloc(c->arena, cap * sizeof(*ne));
		if (!ne)
			return JINST_ENOMEM;
		if (p->added)
			memcpy(ne, p->entries, p->added * sizeof(*ne));
		p->entries = ne;
		p->entries_cap = cap;
	}
	jinst_cp_entry e = *entry;
	if (e.tag == JINST_CP_UTF8) {
		uint8_t *copy = jinst_arena_alloc(c->arena, e.u.utf8.length ? e.u.utf8.length : 1);
		if (!copy)
			return JINST_ENOMEM;
		memcpy(copy, e.u.utf8.bytes, e.u.utf8.length);
		e.u.utf8.bytes = copy;
	}
	uint16_t at = p->count;
	p->entries[p->added] = e;
	if (slots == 2)
		memset(&p->entries[p->added + 1], 0, sizeof(e));
	p->added = (uint16_t)(p->added + slots);
	p->count = (uint16_t)(p->count + slots);
	if (!p->table) {
		/* looked up by find_unhashed */
	} else if ((p->used + 1) * 2 > p->table_mask + 1) {
		int rc = table_rebuild(c, p, (uint32_t)p->count * 2);
		if (rc)
			return rc;
	} else {
		table_insert(p, h, at);
	}
	*index = at;
	return 0;
}

int jinst_cp_add_utf8(jinst_class *c, const char *mutf8, size_t len, uint16_t *index)
{
	if (len > 65535 || !jinst_mutf8_check((const uint8_t *)mutf8, len, false))
		return JINST_EINVAL;
	jinst_cp_entry e = {.tag = JINST_CP_UTF8};
	e.u.utf8.bytes = (const uint8_t *)mutf8;
	e.u.utf8.length = (uint16_t)len;
	return jinst_cp_add(c, &e, index);
}

static int add_indexed(jinst_class *c, uint8_t tag, const char *s, uint16_t *index)
{
	uint16_t u;
	int rc = jinst_cp_add_utf8(c, s, strlen(s), &u);
	if (rc)
		return rc;
	jinst_cp_entry e = {.tag = tag};
	e.u.index = u;
	return jinst_cp_add(c, &e, index);
}

int jinst_cp_add_class(jinst_class *c, const char *internal_name, uint16_t *index)
{
	return add_indexed(c, JINST_CP_CLASS, internal_name, index);
}

int jinst_cp_add_string(jinst_class *c, const char *mutf8, uint16_t *index)
{
	return add_indexed(c, JINST_CP_STRING, mutf8, index);
}

int jinst_cp_add_integer(jinst_class *c, int32_t value, uint16_t *index)
{
	jinst_cp_entry e = {.tag = JINST_CP_INTEGER};
	e.u.u4 = (uint32_t)value;
	return jinst_cp_add(c, &e, index);
}

int jinst_cp_add_long(jinst_class *c, int64_t value, uint16_t *index)
{
	jinst_cp_entry e = {.tag = JINST_CP_LONG};
	e.u.u8 = (uint64_t)value;
	return jinst_cp_add(c, &e, index);
}

int jinst_cp_add_name_and_type(jinst_class *c, const char *name, const char *descriptor, uint16_t *index)
{
	uint16_t n, d;
	int rc = jinst_cp_add_utf8(c, name, strlen(name), &n);
	if (!rc)
		rc = jinst_cp_add_utf8(c, descriptor, strlen(descriptor), &d);
	if (rc)
		return rc;
	jinst_cp_entry e = {.tag = JINST_CP_NAME_AND_TYPE};
	e.u.nat.name_index = n;
	e.u.nat.descriptor_index = d;
	return jinst_cp_add(c, &e, index);
}

static int add_ref(jinst_class *c, uint8_t tag, const char *owner, const char *name, const char *descriptor,
                   uint16_t *index)
{
	uint16_t k, nt;
	int rc = jinst_cp_add_class(c, owner, &k);
	if (!rc)
		rc = jinst_cp_add_name_and_type(c, name, descriptor, &nt);
	if (rc)
		return rc;
	jinst_cp_entry e = {.tag = tag};
	e.u.ref.class_index = k;
	e.u.ref.name_and_type_index = nt;
	return jinst_cp_add(c, &e, index);
}

int jinst_cp_add_fieldref(jinst_class *c, const char *owner, const char *name, const char *descriptor,
                          uint16_t *index)
{
	return add_ref(c, JINST_CP_FIELDREF, owner, name, descriptor, index);
}

int jinst_cp_add_methodref(jinst_class *c, const char *owner, const char *name, const char *descriptor,
                           uint16_t *index)
{
	return add_ref(c, JINST_CP_METHODREF, owner, name, descriptor, index);
}

int jinst_cp_add_interface_methodref(jinst_class *c, const char *owner, const char *name,
                                     const char *descriptor, uint16_t *index)
{
	return add_ref(c, JINST_CP_INTERFACE_METHODREF, owner, name, descriptor, index);
}

/* Encodes e at q, which has room for it; returns the bytes written. */
static size_t encode_entry(const jinst_cp_entry *e, uint8_t *q)
{
	q[0] = e->tag;
	switch (e->tag) {
	case JINST_CP_UTF8:
		jinst_put_u2(q + 1, e->u.utf8.length);
		memcpy(q + 3, e->u.utf8.bytes, e->u.utf8.length);
		return 3u + e->u.utf8.length;
	case JINST_CP_INTEGER:
	case JINST_CP_FLOAT:
		jinst_put_u4(q + 1, e->u.u4);
		return 5;
	case JINST_CP_LONG:
	case JINST_CP_DOUBLE:
		jinst_put_u4(q + 1, (uint32_t)(e->u.u8 >> 32));
		jinst_put_u4(q + 5, (uint32_t)e->u.u8);
		return 9;
	case JINST_CP_CLASS:
	case JINST_CP_STRING:
	case JINST_CP_METHOD_TYPE:
	case JINST_CP_MODULE:
	case JINST_CP_PACKAGE:
		jinst_put_u2(q + 1, e->u.index);
		return 3;
	case JINST_CP_METHOD_HANDLE:
		q[1] = e->u.handle.kind;
		jinst_put_u2(q + 2, e->u.handle.reference_index);
		return 4;
	default:
		jinst_put_u2(q + 1, e->u.ref.class_index);
		jinst_put_u2(q + 3, e->u.ref.name_and_type_index);
		return 5;
	}
}

/* The most any entry takes: a Utf8 of 65,535 bytes. */
static size_t entry_room(const jinst_cp_entry *e)
{
	return e->tag == JINST_CP_UTF8 ? 3u + e->u.utf8.length : 9u;
}

void jinst_cp_write_entry(const jinst_cp_entry *e, jinst_buf *out)
{
	if (jinst_buf_reserve(out, entry_room(e)))
		out->len += encode_entry(e, out->data + out->len);
}

/* The class's own entries, each decoded into a jinst_cp_entry and encoded
 * from it (deep mode: no bytes copied as they are). */
void jinst_cp_write_original(const jinst_class *c, jinst_buf *out)
{
	/* Encoded, the entries take the bytes they took in the input. */
	if (!jinst_buf_reserve(out, c->cp_end - 10))
		return;
	size_t at = out->len;
	for (uint32_t i = 1; i < c->cp_count; i++) {
		if (!c->cp_tags[i])
			continue;
		jinst_cp_entry e;
		decode_entry(c, (uint16_t)i, &e);
		at += encode_entry(&e, out->data + at);
	}
	out->len = at;
}

/* Appended entries, in index order. */
void jinst_cp_write_added(const jinst_class *c, jinst_buf *out)
{
	if (!c->pool)
		return;
	for (uint32_t i = 0; i < c->pool->added; i++)
		if (c->pool->entries[i].tag)
			jinst_cp_write_entry(&c->pool->entries[i], out);
}
