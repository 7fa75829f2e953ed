/*
 * The arena: a bump allocator for everything one class transformation needs.
 *
 * Memory comes in blocks; an allocation takes the next aligned bytes of the
 * current block, or opens a new block (at least twice the previous one, or as
 * large as the request). Nothing is freed individually. jinst_arena_reset()
 * keeps one block for the next class: when the class just done needed several
 * blocks, they are replaced by one block as large as all of them together, so
 * a thread that handles classes of similar size soon stops calling malloc.
 *
 * Built with JINST_DEBUG_ARENA (and in ASan builds) every allocation is its
 * own malloc block, so ASan and valgrind see each object's bounds.
 */
#include "internal.h"

#define ARENA_ALIGN 8
#define ARENA_FIRST_BLOCK (64 * 1024)

typedef jinst_arena_block arena_block; /* and struct jinst_arena: internal.h, for the inline fast path */

#define BLOCK_HEADER JINST_ARENA_HEADER
#define BLOCK_DATA(b) ((uint8_t *)(b) + BLOCK_HEADER)

static arena_block *block_new(size_t size)
{
	arena_block *b = malloc(BLOCK_HEADER + size);
	if (!b)
		return NULL;
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

int jinst_arena_new(jinst_arena **out)
{
	jinst_arena *a = calloc(1, sizeof(*a));
	if (!a)
		return JINST_ENOMEM;
#ifndef JINST_DEBUG_ARENA
	a->head = block_new(ARENA_FIRST_BLOCK);
	if (!a->head) {
		free(a);
		return JINST_ENOMEM;
	}
	a->total = ARENA_FIRST_BLOCK;
#endif
	*out = a;
	return 0;
}

/* In parentheses: internal.h makes the names macros for the library's own
 * calls (jinst_arena_bump), and these are the functions behind them. */
void *(jinst_arena_alloc)(jinst_arena *a, size_t size)
{
	if (size > SIZE_MAX / 4)
		return NULL;
#ifdef JINST_DEBUG_ARENA
	arena_block *b = block_new(size ? size : 1);
	if (!b)
		return NULL;
	b->next = a->head;
	a->head = b;
	return BLOCK_DATA(b);
#else
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	arena_block *b = a->head;
	if (b->size - b->used < size) {
		size_t want = b->size * 2;
		if (want < size)
			want = size;
		arena_block *nb = block_new(want);
		if (!nb)
			return NULL;
		nb->next = b;
		a->head = b = nb;
		a->total += want;
	}
	void *p = BLOCK_DATA(b) + b->used;
	b->used += size;
	return p;
#endif
}

void *(jinst_arena_zalloc)(jinst_arena *a, size_t size)
{
	void *p = (jinst_arena_alloc)(a, size);
	if (p)
		memset(p, 0, size);
	return p;
}

static void free_chain(arena_block *b)
{
	while (b) {
		arena_block *next = b->next;
		free(b);
		b = next;
	}
}

void jinst_arena_reset(jinst_arena *a)
{
	if (!a)
		return;
#ifdef JINST_DEBUG_ARENA
	free_chain(a->head);
	a->head = NULL;
#else
	if (a->head->next) {
		/* Several blocks: replace them with one that holds them all. */
		arena_block *one = block_new(a->total);
		if (one) {
			free_chain(a->head);
			a->head = one;
		} else {
			free_chain(a->head->next);
			a->head->next = NULL;
			a->total = a->head->size;
		}
	}
	a->head->used = 0;
#endif
}

void jinst_arena_free(jinst_arena *a)
{
	if (!a)
		return;
	free_chain(a->head);
	free(a);
}
