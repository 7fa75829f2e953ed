/*
 * What the passes share (label unit): the id table of instrument/idtable.c
 * and the encoder of instrument/emit.c, apart from the passes that use
 * them.
 *
 * The table: ids dense in the order added, every key found again after
 * the index has doubled many times, also when all keys share one hash (one
 * probe run through the whole index) or their low bits; an entry reserved
 * and not added is not counted; one added without a key has an id and is
 * never found.
 *
 * The encoder: each instruction a pass inserts in its JVMS encoding
 * (chapter 6), ldc and ldc_w alike written as ldc when the pool index
 * fits in a byte and as ldc_w past it. The push of an int: the shortest
 * form of each range, an Integer constant in the pool past sipush's.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#include "../testlib.h"

typedef struct entry {
	uint32_t key;
	uint32_t payload;
} entry;

static bool same(const void *e, const void *key)
{
	return ((const entry *)e)->key == *(const uint32_t *)key;
}

/* n keys under hash(key), every third one reserved and dropped first, and
 * every seventh id a keyless one between them. */
static void table_case(const char *what, uint64_t (*hash)(uint32_t), uint32_t n)
{
	jinst_idtable t;
	jinst_idtable_init(&t, sizeof(entry));
	uint32_t ids = 0, keyless = 0;
	for (uint32_t k = 0; k < n; k++) {
		entry *e;
		CHECK(jinst_idtable_reserve(&t, (void **)&e) == 0, "%s: reserve", what);
		CHECK(e->key == 0 && e->payload == 0, "%s: a reserved entry is zeroed", what);
		if (k % 3 == 0) /* dropped: reserved again below */
			CHECK(jinst_idtable_reserve(&t, (void **)&e) == 0 && t.count == ids, "%s: a drop counts nothing", what);
		if (k % 7 == 0) {
			CHECK(jinst_idtable_add(&t, hash(k), false) == ids++, "%s: keyless id", what);
			keyless++;
			CHECK(jinst_idtable_reserve(&t, (void **)&e) == 0, "%s: reserve", what);
		}
		e->key = k + 1;
		e->payload = k * 2;
		uint32_t id = jinst_idtable_add(&t, hash(k + 1), true);
		CHECK(id == ids++, "%s: key %u got id %u, not %u", what, k, id, ids - 1);
	}
	CHECK(t.count == ids && t.keyed == n, "%s: %u ids, %u keyed", what, t.count, t.keyed);
	CHECK(t.nslots >= 2 * n && (t.nslots & (t.nslots - 1)) == 0, "%s: %u slots for %u keys", what, t.nslots, n);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t key = k + 1, id = UINT32_MAX;
		int rc = jinst_idtable_find(&t, &id, hash(key), same, &key);
		CHECK(rc == 0, "%s: key %u not found (%d)", what, key, rc);
		const entry *e = rc ? NULL : jinst_idtable_at(&t, id);
		CHECK(e && e->key == key && e->payload == k * 2, "%s: key %u found at the wrong id %u", what, key, id);
	}
	/* The keyless entries' key is 0, under the hash they were added with. */
	uint32_t zero = 0, id;
	CHECK(jinst_idtable_find(&t, &id, hash(0), same, &zero) == JINST_ENOTFOUND, "%s: a keyless id found", what);
	uint32_t absent = n + 1;
	CHECK(jinst_idtable_find(&t, &id, hash(absent), same, &absent) == JINST_ENOTFOUND, "%s: an absent key found",
	      what);
	CHECK(keyless > 0, "%s: no keyless id", what);
	jinst_idtable_free(&t);
	jinst_idtable_free(&t); /* twice: the arrays are gone */
}

static uint64_t spread(uint32_t k)
{
	return (uint64_t)k * 0x9E3779B97F4A7C15u;
}

static uint64_t one_hash(uint32_t k)
{
	(void)k;
	return 42;
}

/* Keys that differ only above the low 32 bits the slots keep. */
static uint64_t high_bits(uint32_t k)
{
	return (uint64_t)k << 32 | 5;
}

static void test_table(void)
{
	jinst_idtable t;
	jinst_idtable_init(&t, sizeof(entry));
	uint32_t key = 1, id;
	CHECK(jinst_idtable_find(&t, &id, 1, same, &key) == JINST_ENOTFOUND, "an empty table finds nothing");
	jinst_idtable_free(&t);
	table_case("spread", spread, 5000);
	table_case("one hash", one_hash, 700);
	table_case("high bits", high_bits, 700);
}

static void test_encode(void)
{
	static const struct {
		uint8_t op;
		int32_t operand;
		uint8_t bytes[3];
		uint8_t len;
	} cases[] = {
		{JINST_OP_ICONST_3, 0, {0x06}, 1},
		{JINST_OP_ACONST_NULL, 0, {0x01}, 1},
		{JINST_OP_DUP_X1, 0, {0x5a}, 1},
		{JINST_OP_ALOAD_0, 0, {0x2a}, 1},
		{JINST_OP_IADD, 0, {0x60}, 1},
		{JINST_OP_BIPUSH, 100, {0x10, 100}, 2},
		{JINST_OP_SIPUSH, 1000, {0x11, 0x03, 0xe8}, 3},
		{JINST_OP_LDC, 7, {0x12, 7}, 2},
		{JINST_OP_LDC_W, 255, {0x12, 0xff}, 2},
		{JINST_OP_LDC, 256, {0x13, 0x01, 0x00}, 3},
		{JINST_OP_LDC_W, 0x1234, {0x13, 0x12, 0x34}, 3},
		{JINST_OP_GETSTATIC, 0x0203, {0xb2, 0x02, 0x03}, 3},
		{JINST_OP_INVOKESTATIC, 0xfedc, {0xb8, 0xfe, 0xdc}, 3},
		{JINST_OP_LDC2_W, 9, {0x14, 0x00, 0x09}, 3},
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	jinst_insn seq[N];
	uint8_t want[3 * N], got[3 * N];
	uint32_t len = 0;
	for (uint32_t i = 0; i < N; i++) {
		seq[i] = jinst_ins_op(cases[i].op, cases[i].operand);
		uint8_t one[3];
		uint32_t k = jinst_ins_encode(&seq[i], 1, one);
		CHECK(k == cases[i].len && !memcmp(one, cases[i].bytes, k), "%s %d: %u bytes, %02x...",
		      jinst_opcode_name(cases[i].op), cases[i].operand, k, one[0]);
		memcpy(want + len, cases[i].bytes, cases[i].len);
		len += cases[i].len;
	}
	CHECK(jinst_ins_encode(seq, N, got) == len && !memcmp(got, want, len), "the sequence's bytes");
}

#define CLASS "main/jinsttest/Info.class"

/* jinst_ins_push_int: the shortest push of each range, and an Integer
 * constant past sipush, found or added in the pool. */
static void test_push_int(const char *classes)
{
	size_t n;
	uint8_t *b = test_load(classes, CLASS, &n);
	jinst_class *c = NULL;
	CHECK(b && jinst_class_parse(&c, b, n, NULL, NULL, NULL) == 0, "%s parses", CLASS);
	if (!c)
		return;
	static const struct {
		uint32_t v;
		uint8_t op;
	} cases[] = {{0, JINST_OP_ICONST_0}, {5, JINST_OP_ICONST_5}, {6, JINST_OP_BIPUSH}, {127, JINST_OP_BIPUSH},
	             {128, JINST_OP_SIPUSH}, {32767, JINST_OP_SIPUSH}, {32768, JINST_OP_LDC}, {1u << 30, JINST_OP_LDC}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jinst_insn in;
		CHECK(jinst_ins_push_int(c, cases[i].v, &in) == 0 && in.opcode == cases[i].op, "push %u: %s", cases[i].v,
		      jinst_opcode_name(in.opcode));
		jinst_cp_entry e;
		if (in.opcode == JINST_OP_LDC)
			CHECK(jinst_cp_get(c, (uint16_t)in.operand, &e) == 0 && e.tag == JINST_CP_INTEGER &&
			          e.u.u4 == cases[i].v,
			      "push %u: the constant", cases[i].v);
		else if (in.opcode == JINST_OP_BIPUSH || in.opcode == JINST_OP_SIPUSH)
			CHECK((uint32_t)in.operand == cases[i].v, "push %u: operand %d", cases[i].v, in.operand);
	}
	jinst_class_free(c);
	free(b);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_ins_shared DATA_CLASSES\n");
		return 2;
	}
	test_table();
	test_encode();
	test_push_int(argv[1]);
	return check_report();
}
