/* The fuzz targets' check: always on, whatever the build, and fatal, so
 * libFuzzer keeps the input that broke it. */
#ifndef JINST_FUZZ_CHECK_H
#define JINST_FUZZ_CHECK_H

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

#endif
