/* The fuzz targets' check: always on, whatever the build, and fatal, so
 * libFuzzer keeps the input that broke it. */
#ifndef JINST_FUZZ_CHECK_H
#define JINST_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                \
	do {                                                                                \
		if (!(cond)) {                                                                  \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                               \
			fputc('\n', stderr);                                                        \
			abort();                                                                    \
		}                                                                               \
	} while (0)

/* FNV-1a over the input: the seed of every choice a target makes, so an
 * input replays the same choices. */
static inline uint64_t fuzz_seed(const uint8_t *data, size_t size)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211ull;
	return h;
}

/* The next choice (a 64-bit LCG, its high bits). */
static inline uint32_t fuzz_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

#endif
