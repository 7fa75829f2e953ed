/*
 * A sample of a corpus: with JINST_CORPUS_SAMPLE=N in the environment the
 * corpus checks take 1 class in N, chosen by a hash of its name, so a run
 * takes the same classes every time (scripts/test.sh samples; unset or 1,
 * as in scripts/test-full.sh, every class).
 */
#ifndef JINST_TESTS_SAMPLE_H
#define JINST_TESTS_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* N from the environment; 1 when unset or not a positive number. */
static inline unsigned long corpus_sample(void)
{
	const char *s = getenv("JINST_CORPUS_SAMPLE");
	char *end;
	unsigned long n = s ? strtoul(s, &end, 10) : 1;
	if (!s || *end || n == 0)
		n = 1;
	if (n > 1)
		printf("sample: 1 class in %lu (JINST_CORPUS_SAMPLE)\n", n);
	return n;
}

/* Whether the class of this name is in a sample of 1 in n (FNV-1a). */
static inline bool corpus_sampled(const char *name, unsigned long n)
{
	if (n <= 1)
		return true;
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h % n == 0;
}

#endif
