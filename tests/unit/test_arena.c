/*
 * The arena (classfile/arena.c): alignment, independence of allocations,
 * zeroing, large blocks, reset and reuse. Run under ASan (which builds the
 * arena as plain malloc blocks) it also checks bounds and leaks; the default
 * build checks the bump allocator itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"
#include "../testlib.h"

#define N 2000

/* Sizes that cross the 8-byte alignment in every way, now and then large. */
static size_t size_of(unsigned i)
{
	if (i % 97 == 0)
		return 70000 + i; /* larger than the first block */
	return 1 + (i * 7919u) % 300;
}

/* Fills every allocation with its own byte, then checks none was overwritten. */
static void fill_and_check(jinst_arena *a, const char *round)
{
	static uint8_t *ptrs[N];
	for (unsigned i = 0; i < N; i++) {
		size_t n = size_of(i);
		ptrs[i] = jinst_arena_alloc(a, n);
		CHECK(ptrs[i] != NULL, "%s: alloc %zu", round, n);
		if (!ptrs[i])
			return;
		CHECK(((uintptr_t)ptrs[i] & 7) == 0, "%s: %p not 8-aligned", round, (void *)ptrs[i]);
		memset(ptrs[i], (int)(i & 0xFF), n);
	}
	for (unsigned i = 0; i < N; i++) {
		size_t n = size_of(i);
		for (size_t k = 0; k < n; k++)
			if (ptrs[i][k] != (uint8_t)(i & 0xFF)) {
				CHECK(0, "%s: allocation %u overwritten at %zu", round, i, k);
				break;
			}
	}
}

static void test_alloc_reset(void)
{
	jinst_arena *a = NULL;
	CHECK(jinst_arena_new(&a) == 0 && a, "new");
	if (!a)
		return;
	fill_and_check(a, "first");
	jinst_arena_reset(a);
	fill_and_check(a, "after reset");
	jinst_arena_reset(a);
	jinst_arena_reset(a); /* twice in a row is fine */
	fill_and_check(a, "after two resets");

	/* zalloc zeroes memory that earlier use left dirty. */
	jinst_arena_reset(a);
	for (int i = 0; i < 100; i++)
		memset(jinst_arena_alloc(a, 1000), 0xAA, 1000);
	jinst_arena_reset(a);
	for (int i = 0; i < 100; i++) {
		uint8_t *z = jinst_arena_zalloc(a, 1000);
		bool zero = z != NULL;
		for (int k = 0; zero && k < 1000; k++)
			zero = z[k] == 0;
		CHECK(zero, "zalloc %d", i);
	}
	jinst_arena_free(a);
}

static void test_large(void)
{
	jinst_arena *a = NULL;
	CHECK(jinst_arena_new(&a) == 0 && a, "new");
	if (!a)
		return;
	uint8_t *small = jinst_arena_alloc(a, 24);
	memset(small, 1, 24);
	/* Much larger than any block so far: its own block. */
	size_t big = 16u << 20;
	uint8_t *p = jinst_arena_alloc(a, big);
	CHECK(p && ((uintptr_t)p & 7) == 0, "16 MiB");
	if (p) {
		memset(p, 2, big);
		CHECK(p[0] == 2 && p[big - 1] == 2, "16 MiB writable");
	}
	uint8_t *after = jinst_arena_alloc(a, 40);
	CHECK(after && ((uintptr_t)after & 7) == 0, "after a large block");
	if (after)
		memset(after, 3, 40);
	CHECK(small[0] == 1 && small[23] == 1 && (!p || (p[0] == 2 && p[big - 1] == 2)), "nothing overlaps");
	/* After a reset the arena may keep the large block for the next class;
	 * allocations still work and are still aligned. */
	jinst_arena_reset(a);
	for (int i = 0; i < 10; i++) {
		uint8_t *q = jinst_arena_alloc(a, 1u << 20);
		CHECK(q && ((uintptr_t)q & 7) == 0, "1 MiB #%d after reset", i);
		if (q)
			memset(q, i, 1u << 20);
	}
	/* A request that cannot be met returns NULL instead of wrapping around. */
	CHECK(jinst_arena_alloc(a, SIZE_MAX - 4) == NULL, "SIZE_MAX - 4");
	CHECK(jinst_arena_alloc(a, 8) != NULL, "usable after a failed request");
	jinst_arena_free(a);
}

static void test_many_arenas(void)
{
	/* Create, use and free repeatedly: under ASan the leak check sees any block lost. */
	for (int round = 0; round < 200; round++) {
		jinst_arena *a = NULL;
		if (jinst_arena_new(&a) != 0 || !a) {
			CHECK(0, "new %d", round);
			return;
		}
		for (int i = 0; i < round; i++)
			jinst_arena_alloc(a, (size_t)(i * 113));
		if (round % 2)
			jinst_arena_reset(a);
		jinst_arena_free(a);
	}
	jinst_arena_free(NULL);
}

int main(void)
{
	test_alloc_reset();
	test_large();
	test_many_arenas();
	return check_report();
}
