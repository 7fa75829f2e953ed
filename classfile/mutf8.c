/*
 * Modified UTF-8 (JVMS 4.4.7): like UTF-8, but NUL is C0 80 and characters
 * above U+FFFF are a surrogate pair of two 3-byte forms. Validation follows
 * HotSpot's rules so that we accept exactly the names the VM accepts: no 0
 * byte, no lone continuation byte, no 4-byte forms, no overlong forms except
 * C0 80 (class files up to version 47 may use overlong forms).
 */
#include "internal.h"


static inline bool word_is_plain_ascii(uint64_t v)
{
	/* No byte with the high bit and no zero byte. */
	uint64_t zero = (v - 0x0101010101010101ull) & ~v;
	return ((v | zero) & 0x8080808080808080ull) == 0;
}

/* Index of the first invalid byte (for a bad or cut-off sequence, its lead
 * byte), or -1 when s is valid. */
long jinst_mutf8_error_at(const uint8_t *s, size_t len, bool lenient)
{
	size_t i = 0;
	while (i < len) {
		if (len - i >= 8) {
			uint64_t v;
			memcpy(&v, s + i, 8);
			if (word_is_plain_ascii(v)) {
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

bool jinst_mutf8_check_slow(const uint8_t *s, size_t len, bool lenient)
{
	return jinst_mutf8_error_at(s, len, lenient) < 0;
}
