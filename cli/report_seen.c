/* jinst report's set of class names (report_cli.h): open addressing on the
 * name's FNV-1a hash, doubled when half full. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_cli.h"

static uint64_t fnv(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
	return h;
}

static bool seen_grow(seen_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	struct seen_entry *slots = calloc(cap, sizeof *slots);
	if (!slots)
		return false;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->slots[i].name)
			continue;
		size_t k = fnv(s->slots[i].name) & (cap - 1);
		while (slots[k].name)
			k = (k + 1) & (cap - 1);
		slots[k] = s->slots[i];
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return true;
}

/* The slot of name: its entry, or the free slot where it goes. */
static struct seen_entry *slot(seen_set *s, const char *name)
{
	size_t k = fnv(name) & (s->cap - 1);
	while (s->slots[k].name && strcmp(s->slots[k].name, name) != 0)
		k = (k + 1) & (s->cap - 1);
	return &s->slots[k];
}

int seen_note(seen_set *s, const char *name, uint64_t identity, bool has_data, const char *where)
{
	if ((s->count + 1) * 2 > s->cap && !seen_grow(s))
		return -1;
	struct seen_entry *e = slot(s, name);
	if (!e->name) {
		if (!(e->name = strdup(name)))
			return -1;
		e->chosen = identity;
		e->has_data = has_data;
		s->count++;
		return 0;
	}
	if (e->chosen == identity || (e->has_data && !has_data) || (!e->has_data && has_data)) {
		if (!e->has_data && has_data) { /* the version that ran */
			e->chosen = identity;
			e->has_data = true;
		}
		return 0;
	}
	fprintf(stderr,
	        "jinst report: %s: class %s (identity %016" PRIx64 ") was found before with identity %016" PRIx64
	        ": this one is not reported\n",
	        where, name, identity, e->chosen);
	return 0;
}

bool seen_take(seen_set *s, const char *name, uint64_t identity)
{
	if (!s->cap)
		return false;
	struct seen_entry *e = slot(s, name);
	if (!e->name || e->chosen != identity || e->reported)
		return false;
	e->reported = true;
	return true;
}

void seen_free(seen_set *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slots[i].name);
	free(s->slots);
}
