/*
 * The fast modified UTF-8 check (16 bytes at a time) against the one-
 * character-at-a-time reference: over millions of generated strings, both
 * modes (strict, and the lenient one of class files up to version 47), the
 * two must agree on every string, and jinst_mutf8_error_at must give the
 * reference's index. The strings are built from the byte classes the rules
 * tell apart, so every rule's edge is hit often.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static uint64_t state = 0x9E3779B97F4A7C15ull;

static uint32_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (uint32_t)(state >> 32);
}

/* A byte from one of the classes the rules distinguish. */
static uint8_t pick(void)
{
	static const uint8_t edges[] = {0x00, 0x01, 0x41, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0,
	                                0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xFF};
	uint32_t r = next();
	switch (r % 4) {
	case 0:
		return edges[(r >> 8) % sizeof edges];
	case 1:
		return (uint8_t)(0x80 | ((r >> 8) & 0x3F)); /* continuation */
	default:
		return (uint8_t)(r >> 8);
	}
}

/* Mostly valid text (so that a single defect is what decides), sometimes noise. */
static size_t generate(uint8_t *s, size_t max)
{
	size_t len = next() % max, i = 0;
	int noise = next() % 4 == 0;
	while (i < len) {
		uint32_t r = next();
		if (noise || r % 50 == 0) {
			s[i++] = pick();
			continue;
		}
		unsigned cp = (r >> 8) % 3 == 0 ? 1 + (r >> 12) % 0x7F : (r >> 10) & 0xFFFF;
		if (cp == 0 || cp >= 0x80) {
			if (cp < 0x800 && i + 2 <= len) {
				s[i++] = (uint8_t)(0xC0 | cp >> 6);
				s[i++] = (uint8_t)(0x80 | (cp & 0x3F));
			} else if (i + 3 <= len) {
				s[i++] = (uint8_t)(0xE0 | cp >> 12);
				s[i++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
				s[i++] = (uint8_t)(0x80 | (cp & 0x3F));
			} else {
				s[i++] = 'x';
			}
		} else {
			s[i++] = (uint8_t)cp;
		}
	}
	return len;
}

int main(void)
{
	enum { CASES = 3000000 };
	uint8_t s[96];
	unsigned long valid = 0, failures = 0;

	for (long n = 0; n < CASES; n++) {
		size_t len = generate(s, n % 2 ? 24 : sizeof s);
		for (int lenient = 0; lenient <= 1; lenient++) {
			long want = jinst_mutf8_error_at_scalar(s, len, lenient);
			long got = jinst_mutf8_error_at(s, len, lenient);
			int fast = -1;
#ifdef __SSE2__
			fast = jinst_mutf8_valid_sse2(s, len, lenient);
			if (fast != (want < 0))
				got = -2;
#endif
			valid += want < 0;
			if (got != want && failures++ < 20) {
				printf("FAIL lenient=%d len=%zu: reference %ld, fast %d, error_at %ld:", lenient, len,
				       want, fast, got);
				for (size_t i = 0; i < len; i++)
					printf(" %02X", s[i]);
				putchar('\n');
			}
		}
	}
	printf("%d strings, each in both modes, %lu checks valid: %lu failures\n", CASES, valid, failures);
	/* The generator must exercise both outcomes, or the test proves nothing. */
	if (valid < CASES / 4 || valid > 2u * CASES - CASES / 4) {
		printf("FAIL: generated strings are too one-sided (%lu valid)\n", valid);
		return 1;
	}
	return failures != 0;
}
