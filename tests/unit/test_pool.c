/*
 * The constant-pool builder (DESIGN.md invariant 3): existing indices never
 * move, new entries are appended and deduplicated against every entry
 * (original or appended), Long and Double take two slots, and the pool
 * refuses with JINST_ETOOLARGE to pass 65,535 entries. A written class
 * re-parses with the new entries resolving, and javap (when on PATH) reads it.
 * argv[1] is tests/data/classes; argv[2], optional, a scratch folder.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jinst/classfile.h"
#include "../testlib.h"

static const char *data_dir;
static const char *scratch_dir;

static jinst_class *parse(const uint8_t *bytes, size_t len)
{
	jinst_class *cls = NULL;
	jinst_diag d;
	memset(&d, 0, sizeof(d));
	if (jinst_class_parse(&cls, bytes, len, NULL, NULL, &d) != 0) {
		char buf[512];
		jinst_diag_format(&d, buf, sizeof(buf));
		printf("FAIL parse: %s\n", buf);
		exit(1);
	}
	return cls;
}

static bool write_class(jinst_class *cls, uint8_t **out, size_t *len)
{
	jinst_diag d;
	memset(&d, 0, sizeof(d));
	int rc = jinst_class_write(cls, NULL, out, len, &d);
	if (rc != 0) {
		char buf[512];
		jinst_diag_format(&d, buf, sizeof(buf));
		printf("FAIL write: %s\n", buf);
		return false;
	}
	return true;
}

/* Snapshot of every original entry, to prove that no index moves. */
typedef struct snapshot {
	uint16_t count;
	jinst_cp_entry *e;
	uint32_t *offset;
} snapshot;

static void take(snapshot *s, const jinst_class *cls)
{
	s->count = jinst_cp_count(cls);
	s->e = calloc(s->count, sizeof(*s->e));
	s->offset = calloc(s->count, sizeof(*s->offset));
	for (uint16_t i = 1; i < s->count; i++) {
		if (jinst_cp_get(cls, i, &s->e[i]) != 0)
			s->e[i].tag = 0;
		s->offset[i] = jinst_cp_offset(cls, i);
	}
}

static void check_unmoved(const snapshot *s, const jinst_class *cls, const char *when)
{
	unsigned moved = 0;
	for (uint16_t i = 1; i < s->count; i++) {
		jinst_cp_entry e;
		if (jinst_cp_get(cls, i, &e) != 0)
			e.tag = 0;
		if (!jinst_cp_entry_equal(&e, &s->e[i]) || jinst_cp_offset(cls, i) != s->offset[i])
			moved++;
	}
	CHECK(moved == 0, "%s: %u original entries changed", when, moved);
}

static void drop(snapshot *s)
{
	free(s->e);
	free(s->offset);
}

/* The first index holding an entry equal to e, or 0. */
static uint16_t find_entry(const jinst_class *cls, const jinst_cp_entry *want)
{
	for (uint16_t i = 1; i < jinst_cp_count(cls); i++) {
		jinst_cp_entry e;
		if (jinst_cp_get(cls, i, &e) == 0 && jinst_cp_entry_equal(&e, want))
			return i;
	}
	return 0;
}

static uint16_t find_utf8(const jinst_class *cls, const char *s)
{
	jinst_cp_entry e = {.tag = JINST_CP_UTF8};
	e.u.utf8.bytes = (const uint8_t *)s;
	e.u.utf8.length = (uint16_t)strlen(s);
	return find_entry(cls, &e);
}

static bool utf8_is(const jinst_class *cls, uint16_t index, const char *want)
{
	uint16_t len;
	const uint8_t *s = jinst_cp_utf8(cls, index, &len);
	return s && len == strlen(want) && memcmp(s, want, len) == 0;
}

/* owner.name:desc of the ref at index. */
static bool ref_is(const jinst_class *cls, uint16_t index, uint8_t tag, const char *owner, const char *name,
                   const char *desc)
{
	jinst_cp_entry r, c, nat;
	if (jinst_cp_get(cls, index, &r) != 0 || r.tag != tag || jinst_cp_get(cls, r.u.ref.class_index, &c) != 0 ||
	    c.tag != JINST_CP_CLASS || jinst_cp_get(cls, r.u.ref.name_and_type_index, &nat) != 0 ||
	    nat.tag != JINST_CP_NAME_AND_TYPE)
		return false;
	return utf8_is(cls, c.u.index, owner) && utf8_is(cls, nat.u.nat.name_index, name) &&
	       utf8_is(cls, nat.u.nat.descriptor_index, desc);
}

struct added {
	uint16_t utf8, klass, string, integer, lng, nat, field, method, imethod, dbl, mtype, handle, dyn;
};

static void add_entries(jinst_class *cls, struct added *a)
{
	uint16_t count0 = jinst_cp_count(cls);
	uint16_t again;

	/* A new Utf8 goes at the end; adding it again gives the same index. */
	CHECK(jinst_cp_add_utf8(cls, "jinst/NewName", 13, &a->utf8) == 0 && a->utf8 == count0, "utf8 at %u", a->utf8);
	CHECK(jinst_cp_count(cls) == count0 + 1, "count %u", jinst_cp_count(cls));
	CHECK(jinst_cp_add_utf8(cls, "jinst/NewName", 13, &again) == 0 && again == a->utf8, "utf8 dedup");
	CHECK(jinst_cp_count(cls) == count0 + 1, "dedup adds nothing");

	/* The input is copied: the caller's buffer can change afterwards. */
	char buf[] = "jinst$copied";
	uint16_t copied;
	CHECK(jinst_cp_add_utf8(cls, buf, strlen(buf), &copied) == 0, "copied");
	memset(buf, 'x', strlen(buf));
	CHECK(utf8_is(cls, copied, "jinst$copied"), "utf8 copied");

	CHECK(jinst_cp_add_class(cls, "jinst/Hooks", &a->klass) == 0, "class");
	CHECK(jinst_cp_tag(cls, a->klass) == JINST_CP_CLASS, "class tag");
	CHECK(jinst_cp_add_string(cls, "hello from jinst", &a->string) == 0, "string");
	CHECK(jinst_cp_add_integer(cls, -123456789, &a->integer) == 0, "integer");
	CHECK(jinst_cp_add_name_and_type(cls, "enter", "(I)V", &a->nat) == 0, "nat");
	CHECK(jinst_cp_add_fieldref(cls, "jinst/Hooks", "engaged", "Z", &a->field) == 0, "fieldref");
	CHECK(jinst_cp_add_methodref(cls, "jinst/Hooks", "enter", "(I)V", &a->method) == 0, "methodref");
	CHECK(jinst_cp_add_methodref(cls, "jinst/Hooks", "enter", "(I)V", &again) == 0 && again == a->method,
	      "methodref dedup");
	CHECK(jinst_cp_add_interface_methodref(cls, "jinst/Probe", "hit", "(II)V", &a->imethod) == 0, "imethodref");
	/* The same Class reached from the methodref is the one added before. */
	jinst_cp_entry m;
	CHECK(jinst_cp_get(cls, a->method, &m) == 0 && m.u.ref.class_index == a->klass, "methodref reuses the Class");

	/* Long and Double take two slots (JVMS 4.4.5). */
	uint16_t before = jinst_cp_count(cls);
	CHECK(jinst_cp_add_long(cls, 0x1122334455667788LL, &a->lng) == 0 && a->lng == before, "long at %u", a->lng);
	CHECK(jinst_cp_count(cls) == before + 2, "long takes two slots: count %u", jinst_cp_count(cls));
	jinst_cp_entry e;
	CHECK(jinst_cp_tag(cls, a->lng + 1) == 0 && jinst_cp_get(cls, a->lng + 1, &e) != 0, "slot after the long");
	jinst_cp_entry d = {.tag = JINST_CP_DOUBLE};
	d.u.u8 = 0x400921FB54442D18ull; /* pi */
	CHECK(jinst_cp_add(cls, &d, &a->dbl) == 0 && a->dbl == before + 2 && jinst_cp_count(cls) == before + 4,
	      "double");
	CHECK(jinst_cp_add(cls, &d, &again) == 0 && again == a->dbl && jinst_cp_count(cls) == before + 4, "double dedup");
	uint16_t after_double;
	CHECK(jinst_cp_add_integer(cls, 77777777, &after_double) == 0 && after_double == before + 4,
	      "the entry after a double at %u", after_double);

	/* MethodType, MethodHandle, Dynamic through the generic entry point. */
	uint16_t desc;
	CHECK(jinst_cp_add_utf8(cls, "(J)J", 4, &desc) == 0, "desc");
	jinst_cp_entry mt = {.tag = JINST_CP_METHOD_TYPE};
	mt.u.index = desc;
	CHECK(jinst_cp_add(cls, &mt, &a->mtype) == 0, "method type");
	jinst_cp_entry mh = {.tag = JINST_CP_METHOD_HANDLE};
	mh.u.handle.kind = 6; /* REF_invokeStatic */
	mh.u.handle.reference_index = a->method;
	CHECK(jinst_cp_add(cls, &mh, &a->handle) == 0, "method handle");
	jinst_cp_entry dyn = {.tag = JINST_CP_DYNAMIC};
	uint16_t dnat;
	CHECK(jinst_cp_add_name_and_type(cls, "constant", "J", &dnat) == 0, "dyn nat");
	dyn.u.dyn.bootstrap_method_attr_index = 0;
	dyn.u.dyn.name_and_type_index = dnat;
	CHECK(jinst_cp_add(cls, &dyn, &a->dyn) == 0, "dynamic");
	CHECK(jinst_cp_add(cls, &dyn, &again) == 0 && again == a->dyn, "dynamic dedup");

	/* Refused: references to the wrong kind of entry, invalid modified UTF-8.
	 * Nothing is added. */
	uint16_t count = jinst_cp_count(cls), bad;
	jinst_cp_entry wrong = {.tag = JINST_CP_CLASS};
	wrong.u.index = a->klass; /* a Class naming a Class */
	CHECK(jinst_cp_add(cls, &wrong, &bad) < 0, "Class -> Class refused");
	jinst_cp_entry range = {.tag = JINST_CP_STRING};
	range.u.index = 0xFFFF;
	CHECK(jinst_cp_add(cls, &range, &bad) < 0, "String -> #65535 refused");
	CHECK(jinst_cp_add_utf8(cls, "a\0b", 3, &bad) < 0, "raw NUL refused");
	CHECK(jinst_cp_add_utf8(cls, "\xF0\x9F\x98\x80", 4, &bad) < 0, "4-byte form refused");
	jinst_cp_entry badtag = {.tag = 2};
	CHECK(jinst_cp_add(cls, &badtag, &bad) < 0, "tag 2 refused");
	CHECK(jinst_cp_count(cls) == count, "nothing added by refused entries");
}

static void check_added(const jinst_class *cls, const struct added *a, const char *when)
{
	jinst_cp_entry e;
	CHECK(utf8_is(cls, a->utf8, "jinst/NewName"), "%s: utf8", when);
	uint16_t len;
	const uint8_t *n = jinst_cp_name(cls, a->klass, &len);
	CHECK(n && len == 11 && memcmp(n, "jinst/Hooks", 11) == 0, "%s: class", when);
	CHECK(jinst_cp_get(cls, a->string, &e) == 0 && e.tag == JINST_CP_STRING && utf8_is(cls, e.u.index, "hello from jinst"),
	      "%s: string", when);
	CHECK(jinst_cp_get(cls, a->integer, &e) == 0 && e.tag == JINST_CP_INTEGER && e.u.u4 == (uint32_t)-123456789,
	      "%s: integer", when);
	CHECK(jinst_cp_get(cls, a->lng, &e) == 0 && e.tag == JINST_CP_LONG && e.u.u8 == 0x1122334455667788ull,
	      "%s: long", when);
	CHECK(jinst_cp_get(cls, a->dbl, &e) == 0 && e.tag == JINST_CP_DOUBLE && e.u.u8 == 0x400921FB54442D18ull,
	      "%s: double", when);
	CHECK(jinst_cp_get(cls, a->nat, &e) == 0 && e.tag == JINST_CP_NAME_AND_TYPE && utf8_is(cls, e.u.nat.name_index, "enter") &&
	              utf8_is(cls, e.u.nat.descriptor_index, "(I)V"),
	      "%s: nat", when);
	CHECK(ref_is(cls, a->field, JINST_CP_FIELDREF, "jinst/Hooks", "engaged", "Z"), "%s: fieldref", when);
	CHECK(ref_is(cls, a->method, JINST_CP_METHODREF, "jinst/Hooks", "enter", "(I)V"), "%s: methodref", when);
	CHECK(ref_is(cls, a->imethod, JINST_CP_INTERFACE_METHODREF, "jinst/Probe", "hit", "(II)V"), "%s: imethodref",
	      when);
	CHECK(jinst_cp_get(cls, a->mtype, &e) == 0 && e.tag == JINST_CP_METHOD_TYPE && utf8_is(cls, e.u.index, "(J)J"),
	      "%s: method type", when);
	CHECK(jinst_cp_get(cls, a->handle, &e) == 0 && e.tag == JINST_CP_METHOD_HANDLE && e.u.handle.kind == 6 &&
	              e.u.handle.reference_index == a->method,
	      "%s: method handle", when);
	CHECK(jinst_cp_get(cls, a->dyn, &e) == 0 && e.tag == JINST_CP_DYNAMIC && e.u.dyn.bootstrap_method_attr_index == 0,
	      "%s: dynamic", when);
}

/* Adding entries equal to original ones returns the original indices. */
static void test_dedup_original(jinst_class *cls)
{
	uint16_t count = jinst_cp_count(cls), idx;
	uint16_t code = find_utf8(cls, "Code");
	CHECK(code && jinst_cp_add_utf8(cls, "Code", 4, &idx) == 0 && idx == code, "Utf8 Code: %u vs %u", idx, code);
	jinst_cp_entry want = {.tag = JINST_CP_CLASS};
	want.u.index = find_utf8(cls, "java/lang/Object");
	uint16_t object = find_entry(cls, &want);
	CHECK(object && jinst_cp_add_class(cls, "java/lang/Object", &idx) == 0 && idx == object, "Class Object");
	CHECK(jinst_cp_add_methodref(cls, "java/lang/Object", "<init>", "()V", &idx) == 0 &&
	              ref_is(cls, idx, JINST_CP_METHODREF, "java/lang/Object", "<init>", "()V") && idx < count,
	      "Methodref Object.<init> is an original entry: %u", idx);
	CHECK(jinst_cp_add_fieldref(cls, "jinsttest/Features", "counter", "I", &idx) == 0 && idx < count,
	      "Fieldref counter: %u", idx);
	CHECK(jinst_cp_add_interface_methodref(cls, "java/util/List", "add", "(Ljava/lang/Object;)Z", &idx) == 0 &&
	              idx < count,
	      "List.add: %u", idx);
	want.tag = JINST_CP_INTEGER;
	want.u.u4 = 42;
	uint16_t answer = find_entry(cls, &want);
	CHECK(answer && jinst_cp_add_integer(cls, 42, &idx) == 0 && idx == answer, "Integer 42");
	want.tag = JINST_CP_LONG;
	want.u.u8 = 0x123456789abcdef0ull;
	uint16_t suid = find_entry(cls, &want);
	CHECK(suid && jinst_cp_add_long(cls, 0x123456789abcdef0LL, &idx) == 0 && idx == suid, "Long serialVersionUID");
	double ratio = 1.6180339887;
	want.tag = JINST_CP_DOUBLE;
	memcpy(&want.u.u8, &ratio, 8);
	uint16_t r = find_entry(cls, &want);
	CHECK(r && jinst_cp_add(cls, &want, &idx) == 0 && idx == r, "Double RATIO");
	/* Every original entry, offered again, comes back at an original index
	 * holding the same entry (the first of any duplicates). */
	unsigned bad = 0;
	for (uint16_t i = 1; i < count; i++) {
		jinst_cp_entry e, f;
		if (jinst_cp_get(cls, i, &e) != 0)
			continue;
		if (jinst_cp_add(cls, &e, &idx) != 0 || idx >= count || jinst_cp_get(cls, idx, &f) != 0 ||
		    !jinst_cp_entry_equal(&e, &f))
			bad++;
	}
	CHECK(bad == 0, "%u original entries not deduplicated", bad);
	CHECK(jinst_cp_count(cls) == count, "dedup of originals added %u entries", jinst_cp_count(cls) - count);
}

static bool have_javap(void)
{
	return system("javap -version >/dev/null 2>&1") == 0;
}

/* javap reads the written class and prints the new constants. */
static void check_javap(const uint8_t *bytes, size_t len)
{
	if (!have_javap()) {
		printf("skip: javap not on PATH\n");
		return;
	}
	char dir[4096], path[4200], cmd[8600];
	snprintf(dir, sizeof(dir), "%s/test_pool.%ld", scratch_dir, (long)getpid());
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/Features.class", dir);
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(bytes, 1, len, f) == len, "write %s", path);
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "javap -v -p '%s' 2>&1", path);
	FILE *p = popen(cmd, "r");
	CHECK(p != NULL, "popen javap");
	if (!p)
		return;
	char line[4096];
	bool method = false, dbl = false, handle = false;
	unsigned lines = 0;
	while (fgets(line, sizeof(line), p)) {
		lines++;
		if (strstr(line, "Methodref") && strstr(line, "jinst/Hooks.enter:(I)V"))
			method = true;
		if (strstr(line, "= Double") && strstr(line, "3.141592653589793d"))
			dbl = true;
		if (strstr(line, "= MethodHandle") && strstr(line, "REF_invokeStatic jinst/Hooks.enter:(I)V"))
			handle = true;
		if (strstr(line, "Error") || strstr(line, "error:"))
			CHECK(0, "javap: %s", line);
	}
	int status = pclose(p);
	CHECK(status == 0, "javap exit status %d", status);
	CHECK(method && dbl && handle, "javap shows the new entries (%u lines: methodref %d double %d handle %d)", lines,
	      method, dbl, handle);
	remove(path);
	rmdir(dir);
}

static void test_build_write_reparse(void)
{
	size_t len;
	uint8_t *bytes = test_load(data_dir, "main/jinsttest/Features.class", &len);
	jinst_class *cls = parse(bytes, len);
	snapshot s;
	take(&s, cls);
	uint16_t count0 = jinst_cp_count(cls);

	test_dedup_original(cls);
	struct added a;
	add_entries(cls, &a);
	check_unmoved(&s, cls, "after adding");
	CHECK(jinst_cp_original_count(cls) == s.count, "original count after adding");
	check_added(cls, &a, "builder");
	uint16_t count1 = jinst_cp_count(cls);
	CHECK(jinst_cp_original_count(cls) == count0, "original count");

	uint8_t *out = NULL;
	size_t out_len = 0;
	if (write_class(cls, &out, &out_len)) {
		/* The written pool: the original entries byte for byte, then the new ones. */
		jinst_class *re = parse(out, out_len);
		CHECK(jinst_cp_count(re) == count1 && jinst_cp_original_count(re) == count1, "re-parsed count %u",
		      jinst_cp_count(re));
		CHECK(out[8] == count1 >> 8 && out[9] == (count1 & 0xFF), "constant_pool_count in the output");
		uint32_t end0 = 0;
		for (uint16_t i = count0 - 1; i > 0 && !end0; i--)
			if (jinst_cp_tag(cls, i))
				end0 = jinst_cp_offset(cls, i);
		CHECK(end0 && memcmp(out + 10, bytes + 10, end0 - 10) == 0, "original entries copied unchanged");
		check_unmoved(&s, re, "re-parsed");
		check_added(re, &a, "re-parsed");
		CHECK(jinst_class_method_count(re) == jinst_class_method_count(cls), "methods");
		/* The rest of the class follows the pool unchanged. */
		size_t tail0 = len - jinst_member_offset(jinst_class_field(cls, 0));
		size_t tail1 = out_len - jinst_member_offset(jinst_class_field(re, 0));
		CHECK(tail0 == tail1 && memcmp(out + out_len - tail1, bytes + len - tail0, tail0) == 0,
		      "fields, methods and attributes unchanged");
		/* And it round-trips. */
		uint8_t *out2 = NULL;
		size_t out2_len = 0;
		CHECK(write_class(re, &out2, &out2_len) && out2_len == out_len && memcmp(out2, out, out_len) == 0,
		      "written class round-trips");
		free(out2);
		check_javap(out, out_len);
		jinst_class_free(re);
	}
	free(out);
	drop(&s);
	jinst_class_free(cls);
	free(bytes);
}

/* Fills the pool to the limit: refusal with ETOOLARGE, never a crash, and
 * the full pool still deduplicates, writes and re-parses. */
static void test_limit(void)
{
	size_t len;
	uint8_t *bytes = test_load(data_dir, "nodebug/NoDebug.class", &len);
	jinst_class *cls = parse(bytes, len);
	snapshot s;
	take(&s, cls);
	int rc = 0;
	int32_t v = 1000000;
	uint16_t idx, last = 0;
	/* Up to one free slot: a Long does not fit any more, an Integer does. */
	while (jinst_cp_count(cls) < 65534 && (rc = jinst_cp_add_integer(cls, v++, &idx)) == 0)
		last = idx;
	CHECK(rc == 0 && jinst_cp_count(cls) == 65534, "filled to 65534: rc %d count %u", rc, jinst_cp_count(cls));
	CHECK(jinst_cp_add_long(cls, 99, &idx) == JINST_ETOOLARGE, "a Long needs two slots, one is left");
	CHECK(jinst_cp_add_integer(cls, v++, &idx) == 0 && idx == 65534 && jinst_cp_count(cls) == 65535,
	      "the last slot: %u", idx);
	CHECK(jinst_cp_add_integer(cls, v++, &idx) == JINST_ETOOLARGE, "65,536th entry refused");
	CHECK(jinst_cp_add_methodref(cls, "a/New", "m", "()V", &idx) == JINST_ETOOLARGE, "methodref refused");
	CHECK(jinst_cp_add_utf8(cls, "fresh", 5, &idx) == JINST_ETOOLARGE, "utf8 refused");
	CHECK(jinst_cp_count(cls) == 65535, "count stays 65535");
	/* Existing entries still resolve to their indices. */
	CHECK(jinst_cp_add_integer(cls, 1000000, &idx) == 0 && idx == s.count, "dedup in a full pool: %u", idx);
	CHECK(jinst_cp_add_integer(cls, v - 2, &idx) == 0 && idx == 65534, "the last entry: %u", idx);
	(void)last;
	check_unmoved(&s, cls, "full pool");

	uint8_t *out = NULL;
	size_t out_len = 0;
	if (write_class(cls, &out, &out_len)) {
		jinst_class *re = parse(out, out_len);
		jinst_cp_entry e;
		CHECK(jinst_cp_count(re) == 65535, "re-parsed count %u", jinst_cp_count(re));
		CHECK(jinst_cp_get(re, 65534, &e) == 0 && e.tag == JINST_CP_INTEGER && e.u.u4 == (uint32_t)(v - 2),
		      "last entry after re-parse");
		check_unmoved(&s, re, "re-parsed full pool");
		jinst_class_free(re);
	}
	free(out);
	drop(&s);
	jinst_class_free(cls);

	/* Same with Longs only: the last one that fits ends at 65534. */
	cls = parse(bytes, len);
	int64_t l = 1;
	while ((rc = jinst_cp_add_long(cls, l++, &idx)) == 0)
		;
	CHECK(rc == JINST_ETOOLARGE && jinst_cp_count(cls) >= 65534, "longs: rc %d count %u", rc, jinst_cp_count(cls));
	jinst_class_free(cls);
	free(bytes);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s tests/data/classes [SCRATCH_DIR]\n", argv[0]);
		return 2;
	}
	data_dir = argv[1];
	scratch_dir = argc > 2 ? argv[2] : "/tmp";
	test_build_write_reparse();
	test_limit();
	return check_report();
}
