/*
 * The coverage data file (report/covdata*.c, docs/coverage-format.md):
 * bytes built by hand from the specification, write -> read back equal,
 * the merge rules, conflicts, and refusals: every truncation, every flipped
 * bit, a newer version, the limits, non-canonical encodings.
 *   test_covdata TMPDIR
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include "jinst/covdata.h"
#include "../testlib.h"

static const char *tmpdir;

/* A check in a loop: counted, and false once it fails. */
#define CHECK_ONCE(cond) check_once((cond), #cond, __LINE__)
static bool check_once(bool ok, const char *what, int line)
{
	CHECK(ok, "line %d: %s", line, what);
	return ok;
}

/* CRC-32 bit by bit (the reference definition, independent of the
 * library's table). */
static uint32_t ref_crc(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

/* Rewrites the last four bytes as the CRC of the rest. */
static void fix_crc(uint8_t *p, size_t n)
{
	uint32_t c = ref_crc(p, n - 4);
	p[n - 4] = (uint8_t)(c >> 24), p[n - 3] = (uint8_t)(c >> 16), p[n - 2] = (uint8_t)(c >> 8), p[n - 1] = (uint8_t)c;
}

static jinst_covdata_class bools(const char *name, uint64_t id, uint32_t n, const uint8_t *b)
{
	return (jinst_covdata_class){id, name, n, JINST_COVDATA_BOOLEANS, b, NULL};
}

static jinst_covdata_class counts(const char *name, uint64_t id, uint32_t n, const uint64_t *c)
{
	return (jinst_covdata_class){id, name, n, JINST_COVDATA_COUNTS, NULL, c};
}

static void add(jinst_covdata *d, jinst_covdata_class c)
{
	jinst_diag diag;
	int rc = jinst_covdata_add_class(d, &c, &diag);
	CHECK(rc == 0, "add %s: %d %s", c.name, rc, diag.message);
}

static uint8_t *encode(const jinst_covdata *d, size_t *len)
{
	uint8_t *out;
	int rc = jinst_covdata_write(&out, len, d, NULL);
	CHECK(rc == 0, "write: %d", rc);
	return rc ? NULL : out;
}

static bool same_bytes(const jinst_covdata *a, const jinst_covdata *b)
{
	size_t la, lb;
	uint8_t *x = encode(a, &la), *y = encode(b, &lb);
	bool same = x && y && la == lb && memcmp(x, y, la) == 0;
	free(x);
	free(y);
	return same;
}

/* The encoding of one session and one boolean class, byte by byte from
 * docs/coverage-format.md. */
static void test_spec_bytes(void)
{
	jinst_covdata *d;
	CHECK(jinst_covdata_new(&d) == 0, "new");
	CHECK(jinst_covdata_add_session(d, "s", 1, 0x0102) == 0, "session");
	uint8_t b[10] = {1, 0, 1, 0, 0, 0, 0, 0, 0, 1};
	add(d, bools("A", 0x0102030405060708u, 10, b));
	uint64_t c[3] = {0, 300, UINT64_MAX};
	add(d, counts("B", 9, 3, c));
	static const uint8_t want[] = {
		0x89, 'J', 'C', 'O', 'V', 0x0d, 0x0a, 0x1a, 0, 1,                 /* magic, version */
		0, 0, 0, 1, 0, 1, 's', 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 2, /* session */
		0, 0, 0, 2,                                                       /* classes */
		1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 'A', 0, 0, 0, 10, 0, 0x05, 0x02,   /* bits 0, 2; 9 */
		0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 'B', 0, 0, 0, 3, 1, 0x00, 0xac, 0x02, /* 0, 300 */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,     /* 2^64 - 1 */
		0, 0, 0, 0};                                                      /* CRC below */
	uint8_t expect[sizeof want];
	memcpy(expect, want, sizeof want);
	fix_crc(expect, sizeof expect);
	size_t len;
	uint8_t *out = encode(d, &len);
	CHECK(out && len == sizeof expect && memcmp(out, expect, len) == 0, "the encoding differs from the specification");
	free(out);
	jinst_covdata_free(d);
}

/* A model with every kind of content: sessions added out of order, both
 * kinds, zero probes, a non-ASCII name, two identities of one name. */
static jinst_covdata *sample(void)
{
	static const uint8_t b1[9] = {1, 0, 0, 1, 1, 0, 0, 0, 1};
	static const uint64_t c1[5] = {0, 1, 127, 128, UINT64_MAX};
	jinst_covdata *d;
	CHECK(jinst_covdata_new(&d) == 0, "new");
	CHECK(jinst_covdata_add_session(d, "later", 2000, 2500) == 0, "session");
	CHECK(jinst_covdata_add_session(d, "host-1 \xc3\xa9t\xc3\xa9", 1000, 1500) == 0, "session");
	CHECK(jinst_covdata_add_session(d, "", -5, 0) == 0, "session");
	add(d, bools("p/Zed", 7, 9, b1));
	add(d, counts("p/Caf\xc3\xa9$1", 3, 5, c1));
	add(d, bools("p/Empty", 1, 0, NULL));
	add(d, bools("p/Zed", 2, 9, b1));
	return d;
}

static void check_equal(const jinst_covdata *a, const jinst_covdata *b)
{
	CHECK(jinst_covdata_session_count(a) == jinst_covdata_session_count(b), "session counts");
	for (size_t i = 0; i < jinst_covdata_session_count(a); i++) {
		const jinst_covdata_session *x = jinst_covdata_session_at(a, i), *y = jinst_covdata_session_at(b, i);
		CHECK(!strcmp(x->name, y->name) && x->start_ms == y->start_ms && x->dump_ms == y->dump_ms, "session %zu", i);
	}
	CHECK(jinst_covdata_class_count(a) == jinst_covdata_class_count(b), "class counts");
	for (size_t i = 0; i < jinst_covdata_class_count(a); i++) {
		const jinst_covdata_class *x = jinst_covdata_class_at(a, i), *y = jinst_covdata_class_at(b, i);
		bool same = !strcmp(x->name, y->name) && x->identity == y->identity && x->kind == y->kind &&
		            x->probe_count == y->probe_count;
		for (uint32_t k = 0; same && k < x->probe_count; k++)
			same = x->kind == JINST_COVDATA_BOOLEANS ? x->booleans[k] == y->booleans[k] : x->counts[k] == y->counts[k];
		CHECK(same, "class %zu (%s)", i, x->name);
	}
}

static void test_roundtrip(void)
{
	jinst_covdata *d = sample(), *back;
	size_t len;
	uint8_t *bytes = encode(d, &len);
	jinst_diag diag;
	int rc = jinst_covdata_read(&back, bytes, len, &diag);
	CHECK(rc == 0, "read back: %d %s", rc, diag.message);
	if (!rc) {
		check_equal(d, back);
		CHECK(same_bytes(d, back), "written again, different bytes");
	}
	/* Canonical order: sessions by start, classes by name then identity. */
	CHECK(jinst_covdata_session_at(d, 0)->start_ms == -5 && !strcmp(jinst_covdata_session_at(d, 2)->name, "later"),
	      "session order");
	const jinst_covdata_class *z = jinst_covdata_class_at(d, 2);
	CHECK(!strcmp(jinst_covdata_class_at(d, 0)->name, "p/Caf\xc3\xa9$1") && z && !strcmp(z->name, "p/Zed") &&
	          z->identity == 2,
	      "class order");
	CHECK(jinst_covdata_class_hits(jinst_covdata_find(d, "p/Zed", 7)) == 4, "hits of p/Zed");
	CHECK(jinst_covdata_class_hits(jinst_covdata_find(back, "p/Caf\xc3\xa9$1", 3)) == 4, "hits of p/Café$1");
	CHECK(jinst_covdata_find(d, "p/Zed", 8) == NULL && jinst_covdata_class_at(d, 4) == NULL, "no such record");
	free(bytes);
	jinst_covdata_free(d);
	jinst_covdata_free(back);
}

typedef struct seen {
	int calls;
	char name[64];
	uint64_t id, other;
} seen;

static void on_conflict(void *ctx, const char *name, uint64_t id, uint64_t other)
{
	seen *s = ctx;
	s->calls++;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->id = id, s->other = other;
}

static void test_merge_rules(void)
{
	static const uint8_t b1[4] = {1, 0, 0, 0}, b2[4] = {0, 0, 1, 0};
	static const uint64_t c1[4] = {5, 0, UINT64_MAX - 1, 0}, c2[4] = {1, 0, 7, 0};
	jinst_covdata *a, *b;
	jinst_covdata_new(&a);
	jinst_covdata_new(&b);
	add(a, bools("B", 1, 4, b1));
	add(b, bools("B", 1, 4, b2));
	add(a, counts("C", 1, 4, c1));
	add(b, counts("C", 1, 4, c2));
	add(a, bools("M", 1, 4, b1));
	add(b, counts("M", 1, 4, c2));
	add(b, bools("B", 9, 4, b1)); /* another version of B */
	jinst_covdata_add_session(a, "a", 1, 2);
	jinst_covdata_add_session(b, "b", 3, 4);
	jinst_covdata_add_session(b, "a", 1, 2);

	jinst_covdata *ab, *ba;
	jinst_covdata_new(&ab);
	jinst_covdata_new(&ba);
	seen s = {0};
	CHECK(jinst_covdata_merge(ab, a, NULL, NULL, NULL) == 0 && jinst_covdata_merge(ab, b, on_conflict, &s, NULL) == 0,
	      "merge a, b");
	CHECK(jinst_covdata_merge(ba, b, NULL, NULL, NULL) == 0 && jinst_covdata_merge(ba, a, NULL, NULL, NULL) == 0,
	      "merge b, a");
	CHECK(same_bytes(ab, ba), "merge(a, b) and merge(b, a) differ");
	CHECK(s.calls == 1 && !strcmp(s.name, "B") && s.id == 1 && s.other == 9, "conflict %d %s %llx %llx", s.calls,
	      s.name, (unsigned long long)s.id, (unsigned long long)s.other);
	CHECK(jinst_covdata_class_count(ab) == 4 && jinst_covdata_session_count(ab) == 2, "kept apart, sessions united");
	const jinst_covdata_class *x = jinst_covdata_find(ab, "B", 1);
	CHECK(x && x->kind == JINST_COVDATA_BOOLEANS && x->booleans[0] && !x->booleans[1] && x->booleans[2],
	      "booleans ORed");
	x = jinst_covdata_find(ab, "C", 1);
	CHECK(x && x->counts[0] == 6 && x->counts[1] == 0 && x->counts[2] == UINT64_MAX, "counts added, saturating");
	x = jinst_covdata_find(ab, "M", 1);
	CHECK(x && x->kind == JINST_COVDATA_COUNTS && x->counts[0] == 2 && x->counts[1] == 0 && x->counts[2] == 7,
	      "booleans with counts: counts, a true boolean adds 1");
	x = jinst_covdata_find(ba, "M", 1);
	CHECK(x && x->kind == JINST_COVDATA_COUNTS && x->counts[0] == 2, "counts with booleans");
	CHECK(jinst_covdata_conflicts(ab, on_conflict, &s) == 1 && s.calls == 2, "conflicts listed");

	jinst_covdata_free(a);
	jinst_covdata_free(b);
	jinst_covdata_free(ab);
	jinst_covdata_free(ba);
}

/* Booleans meeting counts: the grouping decides how many 1s are added (the
 * documented limit of the rules), never the covered status. */
static void test_merge_grouping(void)
{
	static const uint8_t hit[1] = {1};
	static const uint64_t zero[1] = {0};
	jinst_covdata *x, *y, *z, *xy, *yz;
	jinst_covdata_new(&x), jinst_covdata_new(&y), jinst_covdata_new(&z);
	add(x, bools("G", 1, 1, hit));
	add(y, bools("G", 1, 1, hit));
	add(z, counts("G", 1, 1, zero));
	jinst_covdata_new(&xy), jinst_covdata_new(&yz);
	CHECK(!jinst_covdata_merge(xy, x, NULL, NULL, NULL) && !jinst_covdata_merge(xy, y, NULL, NULL, NULL) &&
	          !jinst_covdata_merge(xy, z, NULL, NULL, NULL),
	      "(x y) z");
	CHECK(!jinst_covdata_merge(yz, y, NULL, NULL, NULL) && !jinst_covdata_merge(yz, z, NULL, NULL, NULL) &&
	          !jinst_covdata_merge(yz, x, NULL, NULL, NULL),
	      "(y z) x");
	CHECK(jinst_covdata_find(xy, "G", 1)->counts[0] == 1 && jinst_covdata_find(yz, "G", 1)->counts[0] == 2,
	      "booleans ORed first add 1 once, one by one 1 each");
	jinst_covdata_free(x), jinst_covdata_free(y), jinst_covdata_free(z);
	jinst_covdata_free(xy), jinst_covdata_free(yz);
}

/* Same identity, other probe count: refused, dst unchanged. */
static void test_merge_refused(void)
{
	static const uint8_t b1[4] = {1, 0, 0, 0};
	jinst_covdata *ab, *bad;
	jinst_covdata_new(&ab);
	add(ab, bools("C", 1, 4, b1));
	add(ab, bools("D", 1, 4, b1));
	jinst_covdata_new(&bad);
	add(bad, bools("A0", 1, 1, b1));
	add(bad, bools("C", 1, 3, b1));
	size_t before_len, after_len;
	uint8_t *before = encode(ab, &before_len);
	jinst_diag diag;
	int rc = jinst_covdata_merge(ab, bad, NULL, NULL, &diag);
	CHECK(rc == JINST_EUNSUPPORTED && strstr(diag.message, "with 4 probes and with 3"), "%d %s", rc, diag.message);
	uint8_t *after = encode(ab, &after_len);
	CHECK(before && after && before_len == after_len && !memcmp(before, after, after_len), "dst changed");
	jinst_covdata_class c3 = bools("C", 1, 3, b1);
	CHECK(jinst_covdata_add_class(ab, &c3, NULL) == JINST_EUNSUPPORTED, "added with another probe count");
	CHECK(jinst_covdata_find(ab, "C", 1)->probe_count == 4, "the record changed");
	free(before);
	free(after);
	jinst_covdata_free(bad);
	jinst_covdata_free(ab);
}

static void test_add_checks(void)
{
	static const uint8_t b1[2] = {1, 7};
	jinst_covdata *d;
	jinst_covdata_new(&d);
	jinst_covdata_class bad = bools("bad\xc0", 1, 1, b1);
	CHECK(jinst_covdata_add_class(d, &bad, NULL) == JINST_EINVAL, "not modified UTF-8");
	bad = bools("", 1, 1, b1);
	CHECK(jinst_covdata_add_class(d, &bad, NULL) == JINST_EINVAL, "empty name");
	bad = bools("K", 1, 1, b1);
	bad.kind = 7;
	CHECK(jinst_covdata_add_class(d, &bad, NULL) == JINST_EINVAL, "unknown kind");
	bad = bools("K", 1, JINST_COVDATA_MAX_PROBES + 1, b1);
	CHECK(jinst_covdata_add_class(d, &bad, NULL) == JINST_ETOOLARGE, "too many probes");
	bad = bools("K", 1, 2, NULL);
	CHECK(jinst_covdata_add_class(d, &bad, NULL) == JINST_EINVAL, "no data");
	CHECK(jinst_covdata_add_session(d, "x\xed\xa0", 0, 0) == JINST_EINVAL, "session name");
	CHECK(jinst_covdata_class_count(d) == 0 && jinst_covdata_session_count(d) == 0, "nothing added");
	add(d, bools("K", 1, 2, b1));
	add(d, bools("K", 1, 2, b1)); /* merged into the first */
	CHECK(jinst_covdata_add_session(d, "s", 1, 1) == 0 && jinst_covdata_add_session(d, "s", 1, 1) == 0, "session");
	const jinst_covdata_class *k = jinst_covdata_class_at(d, 0);
	CHECK(jinst_covdata_class_count(d) == 1 && jinst_covdata_session_count(d) == 1 && k->booleans[1] == 1,
	      "added twice: one record (booleans as 0 or 1), one session");
	jinst_covdata_free(d);
}

static int read_rc(const uint8_t *p, size_t n, jinst_diag *diag)
{
	jinst_covdata *d = (jinst_covdata *)1;
	int rc = jinst_covdata_read(&d, p, n, diag);
	CHECK(rc == 0 || d == NULL, "a refused read handed out a model");
	jinst_covdata_free(d);
	return rc;
}

static void test_damage(void)
{
	jinst_covdata *d = sample();
	size_t len;
	uint8_t *bytes = encode(d, &len);
	CHECK(read_rc(bytes, len, NULL) == 0, "the intact file");
	for (size_t n = 0; n < len; n++) {
		uint8_t *prefix = malloc(n ? n : 1); /* exactly n bytes, for ASan */
		memcpy(prefix, bytes, n);
		int rc = read_rc(prefix, n, NULL);
		CHECK(rc == JINST_EMALFORMED, "truncated to %zu of %zu bytes: %d", n, len, rc);
		free(prefix);
	}
	for (size_t i = 0; i < len * 8; i++) {
		bytes[i / 8] ^= (uint8_t)(1 << (i % 8));
		int rc = read_rc(bytes, len, NULL);
		/* A probe count's high bits read as past the limit. */
		CHECK(rc == JINST_EMALFORMED || rc == JINST_ETOOLARGE || (rc == JINST_EUNSUPPORTED && i / 8 < 10),
		      "bit %zu flipped: %d", i, rc);
		bytes[i / 8] ^= (uint8_t)(1 << (i % 8));
	}
	uint8_t *longer = malloc(len + 1);
	memcpy(longer, bytes, len);
	longer[len] = 0;
	CHECK(read_rc(longer, len + 1, NULL) == JINST_EMALFORMED, "a byte after the CRC");
	free(longer);
	free(bytes);
	jinst_covdata_free(d);
}

/* An encoding of two classes, whose CRC the tests fix after each change,
 * to check the rules that the CRC alone would not. Its layout: [10]
 * session count, [14] class count, [18] class A (8 identity, 2 + 1 name,
 * [29] 4 probe count, [33] kind, [34] 2 counts), [36] class B. */
static uint8_t *two_classes(size_t *len)
{
	jinst_covdata *d;
	jinst_covdata_new(&d);
	static const uint64_t c[2] = {1, 2};
	add(d, counts("A", 1, 2, c));
	add(d, counts("B", 1, 2, c));
	uint8_t *p = encode(d, len);
	jinst_covdata_free(d);
	return p;
}

static void test_rules(void)
{
	size_t len;
	uint8_t *p = two_classes(&len);
	jinst_diag diag;
	p[9] = 2;
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == JINST_EUNSUPPORTED &&
	          !strcmp(diag.message, "format version 2, newer than this jinst reads (1)") && diag.offset == 8,
	      "newer: %s", diag.message);
	p[9] = 0;
	CHECK(read_rc(p, len, NULL) == JINST_EMALFORMED, "version 0");
	p[9] = 1;
	p[28] = 'C'; /* A renamed C: out of order */
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == JINST_EMALFORMED && strstr(diag.message, "out of order"), "%s", diag.message);
	p[28] = 'B'; /* repeated */
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == JINST_EMALFORMED && strstr(diag.message, "out of order"), "%s", diag.message);
	p[28] = 'A';
	p[33] = 2; /* kind 2 */
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == JINST_EMALFORMED && strstr(diag.message, "kind"), "%s", diag.message);
	p[33] = 0; /* booleans: 2 probes in the byte 0x01 then a byte 0x02 left over */
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == JINST_EMALFORMED, "%s", diag.message);
	free(p);
}

static void test_limits(void)
{
	size_t len;
	uint8_t *p = two_classes(&len);
	jinst_diag diag;
	p[29] = 0xff; /* probe count 0xff000002 */
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == JINST_ETOOLARGE, "%s", diag.message);
	p[29] = 0, p[30] = 0x10; /* 0x00100002: within the limit, more than the bytes left */
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == JINST_EMALFORMED && strstr(diag.message, "cannot fit"), "%s", diag.message);
	p[30] = 0;
	p[14] = 0xff; /* class count */
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == JINST_EMALFORMED && strstr(diag.message, "cannot fit"), "%s", diag.message);
	p[14] = 0, p[10] = 0x7f; /* session count */
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == JINST_EMALFORMED && strstr(diag.message, "cannot fit"), "%s", diag.message);
	p[10] = 0;
	fix_crc(p, len);
	CHECK(read_rc(p, len, &diag) == 0, "restored: %s", diag.message);
	CHECK(read_rc(p, JINST_COVDATA_MAX_SIZE + 1, &diag) == JINST_ETOOLARGE, "size limit: nothing read");
	free(p);
}

/* Non-minimal counts and padding bits: each value would read as the same
 * data, so the canonical form refuses them. */
static void test_canonical(void)
{
	static const uint8_t bits[] = {0x89, 'J', 'C', 'O', 'V', 0x0d, 0x0a, 0x1a, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1,
	                               0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 'A', 0, 0, 0, 3, 0, 0x0d, 0, 0, 0, 0};
	static const uint8_t pad[] = {0x89, 'J', 'C', 'O', 'V', 0x0d, 0x0a, 0x1a, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1,
	                              0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 'A', 0, 0, 0, 1, 1, 0x81, 0x00, 0, 0, 0, 0};
	uint8_t p[sizeof pad];
	jinst_diag diag;
	memcpy(p, bits, sizeof bits);
	fix_crc(p, sizeof bits);
	CHECK(read_rc(p, sizeof bits, &diag) == JINST_EMALFORMED && strstr(diag.message, "padding bits"), "%s",
	      diag.message);
	p[34] = 0x05;
	fix_crc(p, sizeof bits);
	CHECK(read_rc(p, sizeof bits, &diag) == 0, "bits 101: %s", diag.message);
	memcpy(p, pad, sizeof pad);
	fix_crc(p, sizeof pad);
	CHECK(read_rc(p, sizeof pad, &diag) == JINST_EMALFORMED && strstr(diag.message, "not minimal"), "%s",
	      diag.message);
}

/* Many records added in a scrambled order, some names in two versions:
 * the index grows, one sort gives the canonical order, every record is
 * found, and a file of them reads back equal. */
static void test_many(void)
{
	enum { N = 20000 };
	static const uint64_t c[3] = {1, 0, 2};
	jinst_covdata *d;
	jinst_covdata_new(&d);
	for (unsigned k = 0; k < N; k++) {
		unsigned i = (unsigned)((k * 7919u) % N);
		char name[32];
		snprintf(name, sizeof(name), "p/C%05u", i);
		add(d, counts(name, i % 10 == 0 ? 2 : 1, 3, c));
		if (i % 10 == 0)
			add(d, counts(name, 1, 3, c));
	}
	CHECK(jinst_covdata_class_count(d) == N + N / 10, "%zu records", jinst_covdata_class_count(d));
	CHECK(jinst_covdata_conflicts(d, NULL, NULL) == N / 10, "conflicts");
	for (size_t i = 1; i < jinst_covdata_class_count(d); i++) {
		const jinst_covdata_class *x = jinst_covdata_class_at(d, i - 1), *y = jinst_covdata_class_at(d, i);
		int cmp = strcmp(x->name, y->name);
		if (!CHECK_ONCE(cmp < 0 || (cmp == 0 && x->identity < y->identity)))
			break;
	}
	jinst_covdata *back;
	size_t len;
	uint8_t *bytes = encode(d, &len);
	CHECK(bytes && jinst_covdata_read(&back, bytes, len, NULL) == 0, "read back");
	unsigned missing = 0;
	for (unsigned i = 0; i < N; i++) {
		char name[32];
		snprintf(name, sizeof(name), "p/C%05u", i);
		const jinst_covdata_class *x = jinst_covdata_find(back, name, i % 10 == 0 ? 2 : 1);
		missing += !x || x->counts[2] != 2;
	}
	CHECK(missing == 0, "%u records not found after reading", missing);
	free(bytes);
	jinst_covdata_free(d);
	jinst_covdata_free(back);
}

/* Processes appending to one file at once: under the lock, every
 * append's counts and session arrive (without it, some read the file
 * before another's rename and write back without its data). */
static void test_append(void)
{
	enum { PROCS = 4, TIMES = 25 };
	char path[4200];
	snprintf(path, sizeof(path), "%s/covdata_append.cov", tmpdir);
	unlink(path);
	pid_t pids[PROCS];
	for (int p = 0; p < PROCS; p++) {
		pids[p] = fork();
		if (pids[p] != 0)
			continue;
		int bad = 0;
		for (int t = 0; t < TIMES; t++) {
			jinst_covdata *d;
			jinst_covdata_new(&d);
			jinst_covdata_add_session(d, "proc", p, t);
			uint64_t c2[2] = {1, (uint64_t)t};
			jinst_covdata_class c = counts("X", 1, 2, c2);
			bad |= jinst_covdata_add_class(d, &c, NULL) || jinst_covdata_append_file(path, d, NULL, NULL, NULL);
			jinst_covdata_free(d);
		}
		_exit(bad);
	}
	int failed = 0;
	for (int p = 0; p < PROCS; p++) {
		int status;
		failed += waitpid(pids[p], &status, 0) != pids[p] || !WIFEXITED(status) || WEXITSTATUS(status);
	}
	CHECK(failed == 0, "%d appending processes failed", failed);
	jinst_covdata *d = NULL;
	CHECK(jinst_covdata_read_file(&d, path, NULL) == 0, "read %s", path);
	const jinst_covdata_class *x = jinst_covdata_find(d, "X", 1);
	CHECK(jinst_covdata_session_count(d) == PROCS * TIMES && x && x->counts[0] == PROCS * TIMES &&
	          x->counts[1] == PROCS * (TIMES * (TIMES - 1) / 2),
	      "appends lost: %zu sessions, counts %llu %llu", jinst_covdata_session_count(d),
	      x ? (unsigned long long)x->counts[0] : 0, x ? (unsigned long long)x->counts[1] : 0);
	jinst_covdata_free(d);
	unlink(path);
	strcat(path, ".lock");
	unlink(path);
}

/* A model in order (as read) is shared by threads that only read it:
 * find, the accessors, the writer and merging from it change nothing.
 * (Built with -fsanitize=thread, this is where a race would show.) */
typedef struct reader_arg {
	const jinst_covdata *d;
	const uint8_t *bytes;
	size_t len;
	unsigned wrong;
} reader_arg;

static void *read_shared(void *p)
{
	reader_arg *a = p;
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < jinst_covdata_class_count(a->d); i++) {
			const jinst_covdata_class *c = jinst_covdata_class_at(a->d, i);
			a->wrong += jinst_covdata_find(a->d, c->name, c->identity) != c;
		}
		uint8_t *out;
		size_t len;
		jinst_covdata *copy;
		a->wrong += jinst_covdata_write(&out, &len, a->d, NULL) || len != a->len || memcmp(out, a->bytes, len);
		free(out);
		a->wrong += jinst_covdata_new(&copy) || jinst_covdata_merge(copy, a->d, NULL, NULL, NULL);
		jinst_covdata_free(copy);
	}
	return NULL;
}

static void test_shared_reads(void)
{
	jinst_covdata *d = sample(), *shared;
	size_t len;
	uint8_t *bytes = encode(d, &len);
	CHECK(bytes && jinst_covdata_read(&shared, bytes, len, NULL) == 0, "read");
	reader_arg args[4];
	pthread_t threads[4];
	for (int t = 0; t < 4; t++) {
		args[t] = (reader_arg){shared, bytes, len, 0};
		CHECK(pthread_create(&threads[t], NULL, read_shared, &args[t]) == 0, "thread %d", t);
	}
	for (int t = 0; t < 4; t++) {
		pthread_join(threads[t], NULL);
		CHECK(args[t].wrong == 0, "thread %d: %u wrong answers", t, args[t].wrong);
	}
	free(bytes);
	jinst_covdata_free(d);
	jinst_covdata_free(shared);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void test_files(void)
{
	char dir[4096], path[4200], bad[4200];
	snprintf(dir, sizeof(dir), "%s/covdata_files", tmpdir);
	snprintf(path, sizeof(path), "%s/out.cov", dir);
	snprintf(bad, sizeof(bad), "%s/no/such/dir/out.cov", dir);
	unlink(path);
	rmdir(dir);
	CHECK(mkdir(dir, 0755) == 0, "mkdir %s", dir);
	jinst_covdata *d = sample(), *back = NULL, *none = NULL;
	jinst_diag diag;
	CHECK(jinst_covdata_read_file(&none, path, &diag) == JINST_ENOTFOUND && !none, "missing file");
	CHECK(jinst_covdata_write_file(path, d, &diag) == 0, "write %s: %s", path, diag.message);
	CHECK(jinst_covdata_write_file(path, d, &diag) == 0, "write over it: %s", diag.message);
	CHECK(count_entries(dir) == 1, "a temporary file left beside the output");
	int rc = jinst_covdata_read_file(&back, path, &diag);
	CHECK(rc == 0, "read %s: %s", path, diag.message);
	if (!rc)
		CHECK(same_bytes(d, back), "the file reads back different");
	CHECK(jinst_covdata_write_file(bad, d, &diag) == JINST_EIO && !strcmp(diag.where, bad), "unwritable: %s",
	      diag.message);
	jinst_covdata_free(d);
	jinst_covdata_free(back);
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	tmpdir = argc > 1 ? argv[1] : "/tmp";
	test_spec_bytes();
	test_roundtrip();
	test_merge_rules();
	test_merge_refused();
	test_merge_grouping();
	test_add_checks();
	test_damage();
	test_rules();
	test_limits();
	test_canonical();
	test_many();
	test_shared_reads();
	test_files();
	test_append();
	CHECK(jinst_covdata_is((const uint8_t *)JINST_COVDATA_MAGIC "\0\1", 10) &&
	          !jinst_covdata_is((const uint8_t *)"\x89JCOV\r\n", 7),
	      "magic");
	jinst_covdata_free(NULL);
	return check_report();
}
