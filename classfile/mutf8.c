/*
 * Modified UTF-8 (JVMS 4.4.7): like UTF-8, but NUL is C0 80 and characters
 * above U+FFFF are a surrogate pair of two 3-byte forms. Validation follows
 * HotSpot's rules so that we accept exactly the names the VM accepts: no 0
 * byte, no lone continuation byte, no 4-byte forms, no overlong forms except
 * C0 80 (class files up to version 47 may use overlong forms).
 */
#include "internal.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* jinst_mutf8_error_at one character at a time: the reference, and the way
 * to find where invalid text goes wrong. */
long jinst_mutf8_error_at_scalar(const uint8_t *s, size_t len, bool lenient)
{
	size_t i = 0;
	while (i < len) {
		if (len - i >= 8) {
			uint64_t v;
			memcpy(&v, s + i, 8);
			if (jinst_nonascii_bits(v) == 0) {
				i += 8;
				continue;
			}
		}
		uint8_t c = s[i];
		if (c != 0 && c < 0x80) {
			i++;
			continue;
		}
		switch (c >> 4) {
		case 0xC:
		case 0xD: {
			if (len - i < 2 || (s[i + 1] & 0xC0) != 0x80)
				return (long)i;
			unsigned cp = (unsigned)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
			if (!lenient && cp != 0 && cp < 0x80)
				return (long)i;
			i += 2;
			break;
		}
		case 0xE: {
			if (len - i < 2 || (s[i + 1] & 0xC0) != 0x80)
				return (long)i;
			if (len - i < 3 || (s[i + 2] & 0xC0) != 0x80)
				return (long)i;
			unsigned cp = (unsigned)(c & 0x0F) << 12 | (unsigned)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
			if (!lenient && cp < 0x800)
				return (long)i;
			i += 3;
			break;
		}
		default: /* 0, lone continuation 8x-Bx, 4-byte forms Fx */
			return (long)i;
		}
	}
	return -1;
}

#ifdef __SSE2__
/* The bytes of block v that break a rule, given b1 and b2, the blocks that
 * start one and two bytes before v: a byte is judged by itself and its two
 * predecessors only, so blocks may overlap and come in any order. */
static inline __m128i block_errors(__m128i v, __m128i b1, __m128i b2, bool lenient)
{
	/* As signed bytes: 80-BF is -128..-65, C0-DF -64..-33, E0-EF -32..-17, F0-FF -16..-1. */
	const __m128i zero = _mm_setzero_si128();
	__m128i cont = _mm_cmpgt_epi8(_mm_set1_epi8(-64), v);
	__m128i below_f0 = _mm_cmpgt_epi8(_mm_set1_epi8(-16), v);
	/* A byte is a continuation exactly when the byte before leads a
	 * sequence (C0-EF) or the one two before leads a 3-byte one (E0-EF). */
	__m128i lead_before = _mm_and_si128(_mm_cmpgt_epi8(b1, _mm_set1_epi8(-65)),
	                                    _mm_cmpgt_epi8(_mm_set1_epi8(-16), b1));
	__m128i lead3_two_before = _mm_and_si128(_mm_cmpgt_epi8(b2, _mm_set1_epi8(-33)),
	                                         _mm_cmpgt_epi8(_mm_set1_epi8(-16), b2));
	__m128i err = _mm_xor_si128(cont, _mm_or_si128(lead_before, lead3_two_before));
	/* Bytes that never occur: 00 and F0-FF. */
	err = _mm_or_si128(err, _mm_cmpeq_epi8(v, zero));
	err = _mm_or_si128(err, _mm_andnot_si128(below_f0, _mm_cmpgt_epi8(zero, v)));
	if (!lenient) {
		/* Overlong forms: C1 xx; C0 followed by anything but 80; E0 followed by 80-9F. */
		err = _mm_or_si128(err, _mm_cmpeq_epi8(v, _mm_set1_epi8((char)0xC1)));
		err = _mm_or_si128(err, _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8((char)0x80)),
		                                         _mm_cmpeq_epi8(b1, _mm_set1_epi8((char)0xC0))));
		err = _mm_or_si128(err, _mm_and_si128(_mm_cmpgt_epi8(_mm_set1_epi8(-96), v),
		                                      _mm_cmpeq_epi8(b1, _mm_set1_epi8((char)0xE0))));
	}
	return err;
}

static inline __m128i load16(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* The first block: nothing comes before it. */
static inline __m128i first_block_errors(const uint8_t *s, bool lenient)
{
	__m128i v = load16(s);
	return block_errors(v, _mm_slli_si128(v, 1), _mm_slli_si128(v, 2), lenient);
}

/* Whether s is valid modified UTF-8. Every byte is judged by itself and its
 * two predecessors, 16 at a time, so no byte waits for the decoding of the
 * one before (text of mixed 1-, 2- and 3-byte forms, such as the JDK's
 * charset tables, otherwise costs a mispredicted branch per character).
 * The predecessors are loaded from memory rather than carried from block to
 * block, so the last block can be the string's last 16 bytes, overlapping
 * the one before: no copy of a partial block. */
bool jinst_mutf8_valid_sse2(const uint8_t *s, size_t len, bool lenient)
{
	if (len < 18) {
		/* Too short for a second block with two bytes before it: check a
		 * copy padded with 'A', which is neither a continuation nor NUL and
		 * so shows a sequence cut off by the end. */
		uint8_t pad[32];
		memset(pad, 'A', sizeof pad);
		memcpy(pad, s, len);
		__m128i err = _mm_or_si128(first_block_errors(pad, lenient),
		                           block_errors(load16(pad + 16), load16(pad + 15), load16(pad + 14), lenient));
		return _mm_movemask_epi8(err) == 0;
	}
	__m128i err = first_block_errors(s, lenient);
	size_t i = 16;
	for (; i + 16 <= len; i += 16)
		err = _mm_or_si128(err, block_errors(load16(s + i), load16(s + i - 1), load16(s + i - 2), lenient));
	if (i < len) {
		i = len - 16;
		err = _mm_or_si128(err, block_errors(load16(s + i), load16(s + i - 1), load16(s + i - 2), lenient));
	}
	/* A sequence cut off by the end: a lead byte last, or a 3-byte lead
	 * next to last. */
	__m128i last = load16(s + len - 16);
	__m128i below_f0 = _mm_cmpgt_epi8(_mm_set1_epi8(-16), last);
	unsigned lead = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpgt_epi8(last, _mm_set1_epi8(-65)), below_f0));
	unsigned lead3 = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpgt_epi8(last, _mm_set1_epi8(-33)), below_f0));
	return _mm_movemask_epi8(err) == 0 && !(lead & 0x8000) && !(lead3 & 0x4000);
}
#endif

/* Index of the first invalid byte (for a bad or cut-off sequence, its lead
 * byte), or -1 when s is valid. */
long jinst_mutf8_error_at(const uint8_t *s, size_t len, bool lenient)
{
#ifdef __SSE2__
	if (jinst_mutf8_valid_sse2(s, len, lenient))
		return -1;
#endif
	return jinst_mutf8_error_at_scalar(s, len, lenient);
}

void jinst_mutf8_mark(const uint8_t *s, size_t len, uint8_t *marks)
{
	size_t i = 0;
#ifdef __SSE2__
	const __m128i zero = _mm_setzero_si128();
	for (; i + 16 <= len; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		/* A byte's high bit, or all bits of a zero byte; one bit per byte. */
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(v, _mm_cmpeq_epi8(v, zero)));
		marks[i / 8] = (uint8_t)m;
		marks[i / 8 + 1] = (uint8_t)(m >> 8);
	}
#endif
	for (; i + 8 <= len; i += 8) {
		uint64_t v = jinst_le64(s + i);
		uint64_t x = jinst_nonascii_bits(v);
		/* Gather the eight high bits: bit 8j+7 goes to bit 56+j. */
		marks[i / 8] = (uint8_t)(((x >> 7) * 0x0102040810204080ull) >> 56);
	}
	if (i < len) {
		uint8_t m = 0;
		for (size_t j = i; j < len; j++)
			m |= (uint8_t)((s[j] == 0 || s[j] >= 0x80) << (j - i));
		marks[i / 8] = m;
	}
}

bool jinst_mutf8_valid(const uint8_t *bytes, size_t len)
{
	return jinst_mutf8_check(bytes, len, false);
}

static void put(char *out, size_t size, size_t *n, uint8_t b)
{
	if (*n < size)
		out[*n] = (char)b;
	(*n)++;
}

static void finish(char *out, size_t size, size_t n)
{
	if (size)
		out[n < size ? n : size - 1] = '\0';
}

long jinst_mutf8_to_utf8(const uint8_t *in, size_t len, char *out, size_t size)
{
	if (!jinst_mutf8_check(in, len, true))
		return JINST_EMALFORMED;
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		uint8_t c = in[i];
		if (c == 0xC0 && in[i + 1] == 0x80) {
			put(out, size, &n, 0);
			i += 2;
		} else if (c == 0xED && len - i >= 6 && (in[i + 1] & 0xF0) == 0xA0 && in[i + 3] == 0xED &&
		           (in[i + 4] & 0xF0) == 0xB0) {
			unsigned hi = 0xD000u | (unsigned)(in[i + 1] & 0x3F) << 6 | (in[i + 2] & 0x3F);
			unsigned lo = 0xD000u | (unsigned)(in[i + 4] & 0x3F) << 6 | (in[i + 5] & 0x3F);
			unsigned cp = 0x10000u + ((hi - 0xD800u) << 10) + (lo - 0xDC00u);
			put(out, size, &n, (uint8_t)(0xF0 | cp >> 18));
			put(out, size, &n, (uint8_t)(0x80 | (cp >> 12 & 0x3F)));
			put(out, size, &n, (uint8_t)(0x80 | (cp >> 6 & 0x3F)));
			put(out, size, &n, (uint8_t)(0x80 | (cp & 0x3F)));
			i += 6;
		} else {
			put(out, size, &n, c);
			i++;
		}
	}
	finish(out, size, n);
	return (long)n;
}

long jinst_utf8_to_mutf8(const char *input, size_t len, uint8_t *out, size_t size)
{
	const uint8_t *in = (const uint8_t *)input;
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		uint8_t c = in[i];
		if (c == 0) {
			put((char *)out, size, &n, 0xC0);
			put((char *)out, size, &n, 0x80);
			i++;
		} else if (c < 0x80) {
			put((char *)out, size, &n, c);
			i++;
		} else if ((c & 0xE0) == 0xC0) {
			if (len - i < 2 || (in[i + 1] & 0xC0) != 0x80)
				return JINST_EMALFORMED;
			put((char *)out, size, &n, c);
			put((char *)out, size, &n, in[i + 1]);
			i += 2;
		} else if ((c & 0xF0) == 0xE0) {
			if (len - i < 3 || (in[i + 1] & 0xC0) != 0x80 || (in[i + 2] & 0xC0) != 0x80)
				return JINST_EMALFORMED;
			for (int k = 0; k < 3; k++)
				put((char *)out, size, &n, in[i + k]);
			i += 3;
		} else if ((c & 0xF8) == 0xF0) {
			if (len - i < 4 || (in[i + 1] & 0xC0) != 0x80 || (in[i + 2] & 0xC0) != 0x80 ||
			    (in[i + 3] & 0xC0) != 0x80)
				return JINST_EMALFORMED;
			unsigned cp = (unsigned)(c & 0x07) << 18 | (unsigned)(in[i + 1] & 0x3F) << 12 |
			              (unsigned)(in[i + 2] & 0x3F) << 6 | (in[i + 3] & 0x3F);
			if (cp < 0x10000 || cp > 0x10FFFF)
				return JINST_EMALFORMED;
			cp -= 0x10000;
			unsigned units[2] = {0xD800u + (cp >> 10), 0xDC00u + (cp & 0x3FF)};
			for (int k = 0; k < 2; k++) {
				put((char *)out, size, &n, (uint8_t)(0xE0 | units[k] >> 12));
				put((char *)out, size, &n, (uint8_t)(0x80 | (units[k] >> 6 & 0x3F)));
				put((char *)out, size, &n, (uint8_t)(0x80 | (units[k] & 0x3F)));
			}
			i += 4;
		} else {
			return JINST_EMALFORMED;
		}
	}
	if (size)
		out[n < size ? n : size - 1] = 0;
	return (long)n;
}

