/*
 * Modified UTF-8 (JVMS 4.4.7): validation and conversion to and from
 * standard UTF-8. In modified UTF-8 NUL is C0 80, characters above U+FFFF
 * are a surrogate pair of two 3-byte forms, and 4-byte forms never occur.
 */
#include <stdio.h>
#include <string.h>

#include "jinst/classfile.h"
#include "../testlib.h"

#define S(lit) (const uint8_t *)(lit), sizeof(lit) - 1

static void test_valid(void)
{
	static const struct {
		const char *s;
		size_t len;
		bool valid;
		const char *why;
	} cases[] = {
		{"", 0, true, "empty"},
		{"java/lang/Object", 16, true, "ASCII"},
		{"\xC0\x80", 2, true, "NUL as C0 80"},
		{"a\xC0\x80z", 4, true, "embedded NUL"},
		{"\xC3\xA9", 2, true, "2-byte form"},
		{"\xE4\xB8\x96", 3, true, "3-byte form"},
		{"\xED\xA0\xBD\xED\xB8\x80", 6, true, "surrogate pair (U+1F600)"},
		{"\xED\xA0\x80", 3, true, "a lone surrogate is still a 3-byte form"},
		{"\x7F", 1, true, "DEL"},
		{"\x00", 1, false, "raw NUL"},
		{"ab\x00", 3, false, "raw NUL at the end"},
		{"\xF0\x9F\x98\x80", 4, false, "4-byte form"},
		{"\xC3", 1, false, "2-byte form cut off"},
		{"abc\xE4\xB8", 5, false, "3-byte form cut off"},
		{"\x80", 1, false, "lone continuation byte"},
		{"a\xBFz", 3, false, "lone continuation byte inside"},
		{"\xE4\x41\x41", 3, false, "3-byte lead followed by ASCII"},
		{"\xC3\xC3", 2, false, "2-byte lead followed by a lead"},
		{"\xFF", 1, false, "FF"},
		{"\xF8\x88\x80\x80\x80", 5, false, "5-byte form"},
		{"\xED\xA0", 2, false, "surrogate cut off"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(jinst_mutf8_valid((const uint8_t *)cases[i].s, cases[i].len) == cases[i].valid, "%s",
		      cases[i].why);

	/* The validator must not read past len: a valid prefix of an invalid buffer. */
	CHECK(jinst_mutf8_valid((const uint8_t *)"ab\xFF", 2), "prefix before FF");
	/* Long ASCII runs (a fast path) followed by a defect at every alignment. */
	uint8_t buf[80];
	for (size_t at = 0; at < sizeof(buf); at++) {
		memset(buf, 'x', sizeof(buf));
		CHECK(jinst_mutf8_valid(buf, sizeof(buf)), "ASCII");
		buf[at] = 0;
		CHECK(!jinst_mutf8_valid(buf, sizeof(buf)), "NUL at %zu", at);
		buf[at] = 0x80;
		CHECK(!jinst_mutf8_valid(buf, sizeof(buf)), "continuation at %zu", at);
		buf[at] = 0xE4;
		CHECK(!jinst_mutf8_valid(buf, sizeof(buf)), "E4 + ASCII at %zu", at);
	}
}

static void test_to_utf8(void)
{
	char out[64];
	long n = jinst_mutf8_to_utf8(S("h\xC3\xA9llo"), out, sizeof(out));
	CHECK(n == 6 && strcmp(out, "h\xC3\xA9llo") == 0, "2-byte form unchanged: %ld", n);

	n = jinst_mutf8_to_utf8(S("a\xC0\x80z"), out, sizeof(out));
	CHECK(n == 3 && memcmp(out, "a\0z", 4) == 0, "C0 80 becomes NUL: %ld", n);

	n = jinst_mutf8_to_utf8(S("\xED\xA0\xBD\xED\xB8\x80!"), out, sizeof(out));
	CHECK(n == 5 && strcmp(out, "\xF0\x9F\x98\x80!") == 0, "surrogates joined: %ld", n);

	n = jinst_mutf8_to_utf8(S("\xE4\xB8\x96\xE7\x95\x8C"), out, sizeof(out));
	CHECK(n == 6 && strcmp(out, "\xE4\xB8\x96\xE7\x95\x8C") == 0, "3-byte forms unchanged: %ld", n);

	/* snprintf conventions: the full length, at most size bytes with a NUL. */
	memset(out, '#', sizeof(out));
	n = jinst_mutf8_to_utf8(S("abcdef"), out, 4);
	CHECK(n == 6 && memcmp(out, "abc", 4) == 0 && out[4] == '#', "truncated output: %ld", n);
	memset(out, '#', sizeof(out));
	n = jinst_mutf8_to_utf8(S("abcdef"), out, 0);
	CHECK(n == 6 && out[0] == '#', "size 0 writes nothing: %ld", n);
	n = jinst_mutf8_to_utf8(S("abcdef"), NULL, 0);
	CHECK(n == 6, "NULL with size 0 measures: %ld", n);
	n = jinst_mutf8_to_utf8(S("\xED\xA0\xBD\xED\xB8\x80"), NULL, 0);
	CHECK(n == 4, "measure a pair: %ld", n);
	n = jinst_mutf8_to_utf8(S(""), out, sizeof(out));
	CHECK(n == 0 && out[0] == '\0', "empty");

	CHECK(jinst_mutf8_to_utf8(S("\x00"), out, sizeof(out)) == JINST_EMALFORMED, "raw NUL");
	CHECK(jinst_mutf8_to_utf8(S("\xF0\x9F\x98\x80"), out, sizeof(out)) == JINST_EMALFORMED, "4-byte form");
	CHECK(jinst_mutf8_to_utf8(S("\xC3"), out, sizeof(out)) == JINST_EMALFORMED, "cut off");
	CHECK(jinst_mutf8_to_utf8(S("\x80"), out, sizeof(out)) == JINST_EMALFORMED, "lone continuation");

	/* A lone surrogate has no UTF-8 form: an error, or some bytes, but within bounds. */
	memset(out, '#', sizeof(out));
	n = jinst_mutf8_to_utf8(S("\xED\xA0\x80"), out, 2);
	CHECK(n == JINST_EMALFORMED || (n >= 0 && out[2] == '#'), "lone surrogate: %ld", n);
}

static void test_to_mutf8(void)
{
	uint8_t out[64];
	long n = jinst_utf8_to_mutf8("a\0z", 3, out, sizeof(out));
	CHECK(n == 4 && memcmp(out, "a\xC0\x80z", 5) == 0, "NUL becomes C0 80: %ld", n);

	n = jinst_utf8_to_mutf8("\xF0\x9F\x98\x80", 4, out, sizeof(out));
	CHECK(n == 6 && memcmp(out, "\xED\xA0\xBD\xED\xB8\x80", 7) == 0, "U+1F600 as a surrogate pair: %ld", n);

	n = jinst_utf8_to_mutf8("\xF4\x8F\xBF\xBF", 4, out, sizeof(out));
	CHECK(n == 6 && memcmp(out, "\xED\xAF\xBF\xED\xBF\xBF", 7) == 0, "U+10FFFF: %ld", n);

	n = jinst_utf8_to_mutf8("\xF0\x90\x80\x80", 4, out, sizeof(out));
	CHECK(n == 6 && memcmp(out, "\xED\xA0\x80\xED\xB0\x80", 7) == 0, "U+10000: %ld", n);

	n = jinst_utf8_to_mutf8("h\xC3\xA9llo \xE4\xB8\x96", 10, out, sizeof(out));
	CHECK(n == 10 && memcmp(out, "h\xC3\xA9llo \xE4\xB8\x96", 11) == 0, "BMP unchanged: %ld", n);

	memset(out, '#', sizeof(out));
	n = jinst_utf8_to_mutf8("\0\0\0", 3, out, 3);
	CHECK(n == 6 && out[2] == 0 && out[3] == '#', "truncated output keeps the NUL within size: %ld", n);
	n = jinst_utf8_to_mutf8("\0\0\0", 3, NULL, 0);
	CHECK(n == 6, "measure: %ld", n);

	CHECK(jinst_utf8_to_mutf8("\xFF", 1, out, sizeof(out)) == JINST_EMALFORMED, "FF");
	CHECK(jinst_utf8_to_mutf8("\xC3", 1, out, sizeof(out)) == JINST_EMALFORMED, "cut off");
	CHECK(jinst_utf8_to_mutf8("\x80", 1, out, sizeof(out)) == JINST_EMALFORMED, "lone continuation");
	CHECK(jinst_utf8_to_mutf8("\xF0\x9F\x98", 3, out, sizeof(out)) == JINST_EMALFORMED, "4-byte cut off");
}

/* Both ways: UTF-8 -> modified -> UTF-8 is the identity, and the middle is valid. */
static void test_round_trip(void)
{
	static const struct {
		const char *s;
		size_t len;
	} cases[] = {
		{"plain", sizeof("plain") - 1},
		{"\0", sizeof("\0") - 1},
		{"\0\0", sizeof("\0\0") - 1},
		{"x\0y\0", sizeof("x\0y\0") - 1},
		{"\xC2\x80\xDF\xBF", sizeof("\xC2\x80\xDF\xBF") - 1},
		{"\xE0\xA0\x80\xEF\xBF\xBF", sizeof("\xE0\xA0\x80\xEF\xBF\xBF") - 1},
		{"\xF0\x9F\x98\x80\xF0\x9F\x98\x81", sizeof("\xF0\x9F\x98\x80\xF0\x9F\x98\x81") - 1},
		{"mixed \xC3\xA9 \xE4\xB8\x96 \xF0\x9F\x98\x80 \0 end", sizeof("mixed \xC3\xA9 \xE4\xB8\x96 \xF0\x9F\x98\x80 \0 end") - 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t m[128];
		char back[128];
		long n = jinst_utf8_to_mutf8(cases[i].s, cases[i].len, m, sizeof(m));
		CHECK(n > 0 && (size_t)n < sizeof(m), "case %zu: %ld", i, n);
		if (n <= 0)
			continue;
		CHECK(jinst_mutf8_valid(m, (size_t)n), "case %zu: output is modified UTF-8", i);
		CHECK(memchr(m, 0, (size_t)n) == NULL, "case %zu: no raw NUL", i);
		long k = jinst_mutf8_to_utf8(m, (size_t)n, back, sizeof(back));
		CHECK(k == (long)cases[i].len && memcmp(back, cases[i].s, cases[i].len) == 0 && back[k] == 0,
		      "case %zu: round trip %ld", i, k);
	}
}

int main(void)
{
	test_valid();
	test_to_utf8();
	test_to_mutf8();
	test_round_trip();
	return check_report();
}
