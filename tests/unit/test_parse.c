/*
 * jinst_class_parse() on the classes of tests/data (argv[1] is
 * tests/data/classes). Every expectation comes from the Java sources in
 * tests/data/src and from what javac is specified to generate for them
 * (JLS 8.8.9 default constructors, 8.9.2 enum members, 8.10.3 record members,
 * 15.27.4 lambda bodies as private synthetic methods, bridge methods), not
 * from the parser's own output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"
#include "../testlib.h"

static const char *data_dir;

static bool mutf8_eq(const uint8_t *s, uint16_t len, const char *want)
{
	return s && len == strlen(want) && memcmp(s, want, len) == 0;
}

static jinst_class *parse_ok(const char *rel, uint8_t **bytes, size_t *len)
{
	*bytes = test_load(data_dir, rel, len);
	jinst_class *cls = NULL;
	jinst_diag d;
	memset(&d, 0, sizeof(d));
	int rc = jinst_class_parse(&cls, *bytes, *len, NULL, NULL, &d);
	if (rc != 0) {
		char buf[512];
		jinst_diag_format(&d, buf, sizeof(buf));
		printf("FAIL parse %s: %s\n", rel, buf);
		exit(1);
	}
	return cls;
}

/* The internal name of the Class at index (cp_name), compared with want. */
static bool class_is(const jinst_class *cls, uint16_t index, const char *want)
{
	uint16_t len = 0;
	if (jinst_cp_tag(cls, index) != JINST_CP_CLASS)
		return false;
	const uint8_t *name = jinst_cp_name(cls, index, &len);
	return mutf8_eq(name, len, want);
}

static jinst_member *find_member(jinst_class *cls, bool method, const char *name, const char *desc)
{
	uint16_t n = method ? jinst_class_method_count(cls) : jinst_class_field_count(cls);
	for (uint16_t i = 0; i < n; i++) {
		jinst_member *m = method ? jinst_class_method(cls, i) : jinst_class_field(cls, i);
		uint16_t nl, dl;
		const uint8_t *nm = jinst_cp_utf8(cls, jinst_member_name_index(m), &nl);
		const uint8_t *ds = jinst_cp_utf8(cls, jinst_member_descriptor_index(m), &dl);
		if (mutf8_eq(nm, nl, name) && (!desc || mutf8_eq(ds, dl, desc)))
			return m;
	}
	return NULL;
}

/* The attribute named name in a list (by its name, not by the kind that
 * attr.c assigns, so this test only depends on the parser). */
static jinst_attr *attr_named(const jinst_class *cls, const jinst_attr_list *list, const char *name)
{
	for (uint16_t i = 0; i < list->count; i++) {
		uint16_t len;
		const uint8_t *s = jinst_cp_utf8(cls, list->items[i].name_index, &len);
		if (mutf8_eq(s, len, name))
			return &list->items[i];
	}
	return NULL;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The value of a field's ConstantValue attribute (JVMS 4.7.2). */
static int constant_value(jinst_class *cls, const char *field, jinst_cp_entry *e)
{
	jinst_member *m = find_member(cls, false, field, NULL);
	if (!m)
		return -1;
	jinst_attr *a = attr_named(cls, jinst_member_attrs(m), "ConstantValue");
	if (!a || a->length != 2 || !a->info)
		return -1;
	return jinst_cp_get(cls, be16(a->info), e);
}

struct shape {
	const char *file, *name, *super;
	uint16_t major, access;
	const char *interfaces[3];
	uint16_t fields, methods;
};

/* Counted from the sources; see the notes on each line. */
static const struct shape shapes[] = {
	/* 8 declared fields; 2 constructors, 12 methods, the bridge get()Object for
	 * Supplier.get, 2 lambda bodies (map, resources; Integer::sum needs none). */
	{"main/jinsttest/Features.class", "jinsttest/Features", "java/lang/Object", 61, 0x0021,
	 {"java/io/Serializable", "java/util/function/Supplier"}, 8, 17},
	/* Abstract because of constant bodies (JLS 8.9); RED GREEN BLUE rgb $VALUES;
	 * values valueOf <init> rgb describe $values <clinit>. */
	{"main/jinsttest/Color.class", "jinsttest/Color", "java/lang/Enum", 61, 0x4421, {NULL}, 5, 7},
	/* A constant body: final, not public; constructor and describe. */
	{"main/jinsttest/Color$1.class", "jinsttest/Color$1", "jinsttest/Color", 61, 0x4030, {NULL}, 0, 2},
	{"main/jinsttest/Shape.class", "jinsttest/Shape", "java/lang/Object", 61, 0x0601, {NULL}, 0, 1},
	/* Record: the component field; canonical constructor, area, toString,
	 * hashCode, equals, the accessor. */
	{"main/jinsttest/Shape$Circle.class", "jinsttest/Shape$Circle", "java/lang/Record", 61, 0x0031,
	 {"jinsttest/Shape"}, 1, 6},
	{"main/jinsttest/Shape$Square.class", "jinsttest/Shape$Square", "java/lang/Record", 61, 0x0031,
	 {"jinsttest/Shape"}, 2, 7},
	/* 13 elements. */
	{"main/jinsttest/Info.class", "jinsttest/Info", "java/lang/Object", 61, 0x2601,
	 {"java/lang/annotation/Annotation"}, 0, 13},
	{"main/jinsttest/Marker.class", "jinsttest/Marker", "java/lang/Object", 61, 0x2601,
	 {"java/lang/annotation/Annotation"}, 0, 0},
	/* Inner class: this$0 and the constructor taking the outer instance. */
	{"main/jinsttest/Features$Inner.class", "jinsttest/Features$Inner", "java/lang/Object", 61, 0x0021,
	 {NULL}, 1, 2},
	{"main/jinsttest/Features$Nested.class", "jinsttest/Features$Nested", "java/lang/Object", 61, 0x0020,
	 {NULL}, 1, 1},
	/* name greet of + the lambda body of of(). */
	{"main/jinsttest/Service.class", "jinsttest/Service", "java/lang/Object", 61, 0x0601, {NULL}, 0, 4},
	{"main/jinsttest/ServiceImpl.class", "jinsttest/ServiceImpl", "java/lang/Object", 61, 0x0021,
	 {"jinsttest/Service"}, 0, 2},
	{"main/module-info.class", "module-info", NULL, 61, 0x8000, {NULL}, 0, 0},
	/* --release 8: total; <init> add report main lambda$main$0. */
	{"release8/Legacy8.class", "Legacy8", "java/lang/Object", 52, 0x0021, {NULL}, 1, 5},
	/* -g:none: BIG; <init> loops nested. */
	{"nodebug/NoDebug.class", "NoDebug", "java/lang/Object", 61, 0x0021, {NULL}, 1, 3},
};

static void test_shapes(void)
{
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		const struct shape *x = &shapes[s];
		uint8_t *bytes;
		size_t len;
		jinst_class *cls = parse_ok(x->file, &bytes, &len);
		CHECK(jinst_class_major_version(cls) == x->major, "%s: major %u", x->file,
		      jinst_class_major_version(cls));
		CHECK(jinst_class_minor_version(cls) == 0, "%s", x->file);
		CHECK(jinst_class_version_known(cls), "%s", x->file);
		CHECK(jinst_class_access_flags(cls) == x->access, "%s: access 0x%04x", x->file,
		      jinst_class_access_flags(cls));
		uint16_t nl = 0;
		const uint8_t *name = jinst_class_name(cls, &nl);
		CHECK(mutf8_eq(name, nl, x->name), "%s: name %.*s", x->file, (int)nl, name ? (const char *)name : "");
		CHECK(class_is(cls, jinst_class_this_class(cls), x->name), "%s: this_class", x->file);
		if (x->super)
			CHECK(class_is(cls, jinst_class_super_class(cls), x->super), "%s: super_class", x->file);
		else
			CHECK(jinst_class_super_class(cls) == 0, "%s: module-info has no super_class", x->file);
		uint16_t ni = 0;
		while (ni < 3 && x->interfaces[ni])
			ni++;
		CHECK(jinst_class_interface_count(cls) == ni, "%s: %u interfaces", x->file,
		      jinst_class_interface_count(cls));
		for (uint16_t i = 0; i < ni && i < jinst_class_interface_count(cls); i++)
			CHECK(class_is(cls, jinst_class_interface(cls, i), x->interfaces[i]), "%s: interface %u",
			      x->file, i);
		CHECK(jinst_class_field_count(cls) == x->fields, "%s: %u fields", x->file, jinst_class_field_count(cls));
		CHECK(jinst_class_method_count(cls) == x->methods, "%s: %u methods", x->file,
		      jinst_class_method_count(cls));

		/* The class keeps the input, and every member's offset points at its
		 * access_flags in it. */
		size_t blen = 0;
		CHECK(jinst_class_bytes(cls, &blen) == bytes && blen == len, "%s: class bytes", x->file);
		for (int method = 0; method < 2; method++) {
			uint16_t n = method ? jinst_class_method_count(cls) : jinst_class_field_count(cls);
			for (uint16_t i = 0; i < n; i++) {
				jinst_member *m = method ? jinst_class_method(cls, i) : jinst_class_field(cls, i);
				uint32_t off = jinst_member_offset(m);
				CHECK(off + 6 <= len && be16(bytes + off) == jinst_member_access_flags(m) &&
				              be16(bytes + off + 2) == jinst_member_name_index(m) &&
				              be16(bytes + off + 4) == jinst_member_descriptor_index(m),
				      "%s: member %u at %u", x->file, i, off);
				CHECK(jinst_cp_tag(cls, jinst_member_name_index(m)) == JINST_CP_UTF8, "%s", x->file);
				jinst_attr_list *al = jinst_member_attrs(m);
				CHECK(al != NULL, "%s: attributes of member %u", x->file, i);
				for (uint16_t k = 0; al && k < al->count; k++) {
					jinst_attr *a = &al->items[k];
					CHECK(a->offset + 6 + a->length <= len && be16(bytes + a->offset) == a->name_index &&
					              a->info == bytes + a->offset + 6 && !a->modified,
					      "%s: attribute %u of member %u", x->file, k, i);
				}
			}
		}
		jinst_class_free(cls);
		free(bytes);
	}
}

/* Members, descriptors, attributes and constants of Features, from its source. */
static void test_features(void)
{
	uint8_t *bytes;
	size_t len;
	jinst_class *cls = parse_ok("main/jinsttest/Features.class", &bytes, &len);

	jinst_member *m = find_member(cls, true, "wideLocals", "(JD)J");
	CHECK(m && jinst_member_access_flags(m) == (JINST_ACC_PUBLIC | JINST_ACC_STATIC), "wideLocals");
	m = find_member(cls, true, "arrays", "(I)[[I");
	CHECK(m && jinst_member_access_flags(m) == (JINST_ACC_PUBLIC | JINST_ACC_SYNCHRONIZED), "arrays");
	m = find_member(cls, true, "counts", "([Ljava/lang/String;)Ljava/util/Map;");
	CHECK(m && jinst_member_access_flags(m) == (JINST_ACC_PUBLIC | JINST_ACC_STATIC | JINST_ACC_VARARGS), "counts");
	m = find_member(cls, true, "get", "()Ljava/lang/Object;");
	CHECK(m && (jinst_member_access_flags(m) & (JINST_ACC_BRIDGE | JINST_ACC_SYNTHETIC)) ==
	                   (JINST_ACC_BRIDGE | JINST_ACC_SYNTHETIC),
	      "the bridge get()Object");
	m = find_member(cls, true, "lambda$map$0", NULL);
	CHECK(m && (jinst_member_access_flags(m) & (JINST_ACC_PRIVATE | JINST_ACC_STATIC | JINST_ACC_SYNTHETIC)) ==
	                   (JINST_ACC_PRIVATE | JINST_ACC_STATIC | JINST_ACC_SYNTHETIC),
	      "lambda body");
	m = find_member(cls, false, "cache", "Ljava/util/Map;");
	CHECK(m && jinst_member_access_flags(m) == (JINST_ACC_PROTECTED | JINST_ACC_VOLATILE | JINST_ACC_TRANSIENT),
	      "cache");
	CHECK(m && attr_named(cls, jinst_member_attrs(m), "Signature"), "cache has a Signature");
	m = find_member(cls, true, "resources", "()Ljava/lang/String;");
	CHECK(m && attr_named(cls, jinst_member_attrs(m), "Code") && attr_named(cls, jinst_member_attrs(m), "Exceptions"),
	      "resources has Code and Exceptions");
	m = find_member(cls, true, "add", NULL);
	CHECK(m && attr_named(cls, jinst_member_attrs(m), "RuntimeVisibleParameterAnnotations") &&
	              attr_named(cls, jinst_member_attrs(m), "MethodParameters"),
	      "add has parameter annotations (@Marker) and MethodParameters (-parameters)");
	CHECK(!find_member(cls, true, "<clinit>", NULL), "no static initializer: every static final is a constant");

	/* ConstantValue of each type (JVMS 4.7.2). */
	jinst_cp_entry e;
	CHECK(constant_value(cls, "serialVersionUID", &e) == 0 && e.tag == JINST_CP_LONG &&
	              e.u.u8 == 0x123456789abcdef0ull,
	      "serialVersionUID");
	double ratio = 1.6180339887;
	uint64_t ratio_bits;
	memcpy(&ratio_bits, &ratio, 8);
	CHECK(constant_value(cls, "RATIO", &e) == 0 && e.tag == JINST_CP_DOUBLE && e.u.u8 == ratio_bits, "RATIO");
	CHECK(constant_value(cls, "HALF", &e) == 0 && e.tag == JINST_CP_FLOAT && e.u.u4 == 0x3f000000u, "HALF");
	CHECK(constant_value(cls, "ANSWER", &e) == 0 && e.tag == JINST_CP_INTEGER && e.u.u4 == 42, "ANSWER");
	CHECK(constant_value(cls, "GREETING", &e) == 0 && e.tag == JINST_CP_STRING, "GREETING");
	if (e.tag == JINST_CP_STRING) {
		/* "h\u00e9llo \u4e16\u754c \ud83d\ude00 nul:\u0000" in modified UTF-8:
		 * the supplementary character as two 3-byte surrogates, NUL as C0 80. */
		static const char want[] = "h\xC3\xA9llo \xE4\xB8\x96\xE7\x95\x8C \xED\xA0\xBD\xED\xB8\x80 nul:\xC0\x80";
		uint16_t sl;
		const uint8_t *s = jinst_cp_utf8(cls, e.u.index, &sl);
		CHECK(mutf8_eq(s, sl, want), "GREETING bytes");
		uint16_t nl;
		CHECK(jinst_cp_name(cls, 0, &nl) == NULL, "cp_name of index 0");
	}

	/* Class attributes javac writes for this source. */
	jinst_attr_list *ca = jinst_class_attrs(cls);
	const char *class_attrs[] = {"Signature", "SourceFile", "RuntimeVisibleAnnotations", "NestMembers",
	                             "InnerClasses", "BootstrapMethods"};
	for (size_t i = 0; i < sizeof(class_attrs) / sizeof(class_attrs[0]); i++)
		CHECK(attr_named(cls, ca, class_attrs[i]), "class attribute %s", class_attrs[i]);
	jinst_attr *sf = attr_named(cls, ca, "SourceFile");
	if (sf && sf->length == 2) {
		uint16_t l;
		const uint8_t *s = jinst_cp_utf8(cls, be16(sf->info), &l);
		CHECK(mutf8_eq(s, l, "Features.java"), "SourceFile");
	}
	jinst_class_free(cls);
	free(bytes);
}

/* Finds a Fieldref/Methodref/InterfaceMethodref owner.name:desc by resolving entries. */
static uint16_t find_ref(const jinst_class *cls, uint8_t tag, const char *owner, const char *name, const char *desc)
{
	for (uint16_t i = 1; i < jinst_cp_count(cls); i++) {
		jinst_cp_entry e, nat;
		if (jinst_cp_get(cls, i, &e) != 0 || e.tag != tag)
			continue;
		if (!class_is(cls, e.u.ref.class_index, owner))
			continue;
		if (jinst_cp_get(cls, e.u.ref.name_and_type_index, &nat) != 0 || nat.tag != JINST_CP_NAME_AND_TYPE)
			continue;
		uint16_t nl, dl;
		const uint8_t *n = jinst_cp_utf8(cls, nat.u.nat.name_index, &nl);
		const uint8_t *d = jinst_cp_utf8(cls, nat.u.nat.descriptor_index, &dl);
		if (mutf8_eq(n, nl, name) && mutf8_eq(d, dl, desc))
			return i;
	}
	return 0;
}

/* jinst_cp_get for every index of every class, and one known entry of each tag. */
static void test_cp_get(void)
{
	const char *files[] = {"main/jinsttest/Features.class", "main/jinsttest/Service.class", "main/module-info.class",
	                       "nodebug/NoDebug.class", "release8/Legacy8.class"};
	unsigned seen[21] = {0};
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		uint8_t *bytes;
		size_t len;
		jinst_class *cls = parse_ok(files[f], &bytes, &len);
		uint16_t count = jinst_cp_count(cls);
		CHECK(count == be16(bytes + 8) && jinst_cp_original_count(cls) == count, "%s: count", files[f]);
		jinst_cp_entry e;
		CHECK(jinst_cp_get(cls, 0, &e) == JINST_EMALFORMED && jinst_cp_tag(cls, 0) == 0, "index 0");
		CHECK(jinst_cp_get(cls, count, &e) == JINST_EMALFORMED && jinst_cp_tag(cls, count) == 0, "index count");
		CHECK(jinst_cp_get(cls, 0xFFFF, &e) == JINST_EMALFORMED, "index 65535");
		uint16_t l;
		CHECK(jinst_cp_utf8(cls, count, &l) == NULL && jinst_cp_name(cls, count, &l) == NULL, "past the pool");
		bool after_wide = false;
		for (uint16_t i = 1; i < count; i++) {
			uint8_t tag = jinst_cp_tag(cls, i);
			int rc = jinst_cp_get(cls, i, &e);
			if (after_wide) {
				/* JVMS 4.4.5: the slot after a Long or Double is unusable. */
				CHECK(tag == 0 && rc == JINST_EMALFORMED, "%s: slot after a wide constant #%u", files[f], i);
				after_wide = false;
				continue;
			}
			CHECK(rc == 0 && tag == e.tag && tag >= 1 && tag <= 20, "%s: #%u", files[f], i);
			uint32_t off = jinst_cp_offset(cls, i);
			CHECK(off >= 10 && off < len && bytes[off] == tag, "%s: offset of #%u", files[f], i);
			seen[tag]++;
			after_wide = tag == JINST_CP_LONG || tag == JINST_CP_DOUBLE;
			switch (tag) {
			case JINST_CP_UTF8:
				CHECK(e.u.utf8.bytes == bytes + off + 3 && e.u.utf8.length == be16(bytes + off + 1),
				      "Utf8 #%u borrows the input", i);
				break;
			case JINST_CP_INTEGER:
			case JINST_CP_FLOAT:
				CHECK(e.u.u4 == ((uint32_t)be16(bytes + off + 1) << 16 | be16(bytes + off + 3)), "#%u", i);
				break;
			case JINST_CP_LONG:
			case JINST_CP_DOUBLE:
				CHECK(e.u.u8 >> 32 == ((uint32_t)be16(bytes + off + 1) << 16 | be16(bytes + off + 3)) &&
				              (uint32_t)e.u.u8 == ((uint32_t)be16(bytes + off + 5) << 16 | be16(bytes + off + 7)),
				      "#%u", i);
				break;
			case JINST_CP_CLASS:
			case JINST_CP_STRING:
			case JINST_CP_METHOD_TYPE:
			case JINST_CP_MODULE:
			case JINST_CP_PACKAGE:
				CHECK(e.u.index == be16(bytes + off + 1) && jinst_cp_tag(cls, e.u.index) == JINST_CP_UTF8,
				      "#%u", i);
				break;
			case JINST_CP_FIELDREF:
			case JINST_CP_METHODREF:
			case JINST_CP_INTERFACE_METHODREF:
				CHECK(e.u.ref.class_index == be16(bytes + off + 1) &&
				              e.u.ref.name_and_type_index == be16(bytes + off + 3) &&
				              jinst_cp_tag(cls, e.u.ref.class_index) == JINST_CP_CLASS &&
				              jinst_cp_tag(cls, e.u.ref.name_and_type_index) == JINST_CP_NAME_AND_TYPE,
				      "#%u", i);
				break;
			case JINST_CP_NAME_AND_TYPE:
				CHECK(e.u.nat.name_index == be16(bytes + off + 1) &&
				              e.u.nat.descriptor_index == be16(bytes + off + 3),
				      "#%u", i);
				break;
			case JINST_CP_METHOD_HANDLE:
				CHECK(e.u.handle.kind == bytes[off + 1] && e.u.handle.kind >= 1 && e.u.handle.kind <= 9 &&
				              e.u.handle.reference_index == be16(bytes + off + 2),
				      "#%u", i);
				break;
			case JINST_CP_DYNAMIC:
			case JINST_CP_INVOKE_DYNAMIC:
				CHECK(e.u.dyn.bootstrap_method_attr_index == be16(bytes + off + 1) &&
				              e.u.dyn.name_and_type_index == be16(bytes + off + 3),
				      "#%u", i);
				break;
			default:
				CHECK(0, "unexpected tag %u at #%u", tag, i);
			}
		}

		/* Known entries, from the sources. */
		if (f == 0) {
			CHECK(find_ref(cls, JINST_CP_METHODREF, "java/lang/Object", "<init>", "()V"), "super() call");
			CHECK(find_ref(cls, JINST_CP_FIELDREF, "jinsttest/Features", "counter", "I"), "counter");
			CHECK(find_ref(cls, JINST_CP_INTERFACE_METHODREF, "java/util/List", "add", "(Ljava/lang/Object;)Z"),
			      "List.add");
			CHECK(find_ref(cls, JINST_CP_METHODREF, "java/lang/String", "hashCode", "()I"), "switch on strings");
			CHECK(find_ref(cls, JINST_CP_METHODREF, "java/lang/Integer", "sum", "(II)I"), "Integer::sum");
		}
		if (f == 2) {
			/* module-info: the module's own name and the exported package. */
			bool module = false, package = false;
			for (uint16_t i = 1; i < count; i++) {
				uint16_t sl;
				const uint8_t *s;
				if (jinst_cp_tag(cls, i) == JINST_CP_MODULE && (s = jinst_cp_name(cls, i, &sl)) &&
				    mutf8_eq(s, sl, "jinst.testdata"))
					module = true;
				if (jinst_cp_tag(cls, i) == JINST_CP_PACKAGE && (s = jinst_cp_name(cls, i, &sl)) &&
				    mutf8_eq(s, sl, "jinsttest"))
					package = true;
			}
			CHECK(module && package, "Module jinst.testdata and Package jinsttest");
		}
		jinst_class_free(cls);
		free(bytes);
	}
	/* Every tag javac 17 emits for these sources. CONSTANT_Dynamic (17) is not
	 * among them; test_pool.c covers it through a written class. */
	const uint8_t tags[] = {1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16, 18, 19, 20};
	for (size_t i = 0; i < sizeof(tags); i++)
		CHECK(seen[tags[i]] > 0, "no constant with tag %u", tags[i]);
}

/* Versions: strict mode, unknown versions, too old. */
static void test_versions(void)
{
	uint8_t *bytes;
	size_t len;
	jinst_class *cls = parse_ok("nodebug/NoDebug.class", &bytes, &len);
	jinst_class_free(cls);
	jinst_diag d;
	jinst_parse_options strict = JINST_PARSE_OPTIONS_INIT;
	strict.flags = JINST_PARSE_STRICT_VERSION;

	static const struct {
		uint16_t major, minor;
		int rc, strict_rc;
		bool known;
	} cases[] = {
		{45, 0, 0, 0, true},   /* Java 1.0.2 */
		{45, 3, 0, 0, true},
		{69, 0, 0, 0, true},   /* Java 25 */
		{69, 0xFFFF, 0, 0, true}, /* preview minor */
		{70, 0, 0, JINST_EUNSUPPORTED, false},
		{0xFFFF, 0, 0, JINST_EUNSUPPORTED, false},
		{44, 0, JINST_EUNSUPPORTED, JINST_EUNSUPPORTED, false},
		{0, 0, JINST_EUNSUPPORTED, JINST_EUNSUPPORTED, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bytes[4] = (uint8_t)(cases[i].minor >> 8);
		bytes[5] = (uint8_t)cases[i].minor;
		bytes[6] = (uint8_t)(cases[i].major >> 8);
		bytes[7] = (uint8_t)cases[i].major;
		memset(&d, 0, sizeof(d));
		cls = NULL;
		int rc = jinst_class_parse(&cls, bytes, len, NULL, NULL, &d);
		CHECK(rc == cases[i].rc, "version %u.%u: rc %d", cases[i].major, cases[i].minor, rc);
		if (rc == 0) {
			CHECK(jinst_class_major_version(cls) == cases[i].major &&
			              jinst_class_minor_version(cls) == cases[i].minor &&
			              jinst_class_version_known(cls) == cases[i].known,
			      "version %u.%u", cases[i].major, cases[i].minor);
			jinst_class_free(cls);
		} else {
			CHECK(d.code == rc && (d.offset == 4 || d.offset == 6), "version diag at the version: %u", d.offset);
		}
		memset(&d, 0, sizeof(d));
		rc = jinst_class_parse(&cls, bytes, len, NULL, &strict, &d);
		CHECK(rc == cases[i].strict_rc, "strict version %u.%u: rc %d", cases[i].major, cases[i].minor, rc);
		if (rc == 0)
			jinst_class_free(cls);
	}
	free(bytes);
}

/* A caller's arena: used by the class, survives it, reused after a reset. */
static void test_caller_arena(void)
{
	jinst_arena *arena = NULL;
	CHECK(jinst_arena_new(&arena) == 0, "arena");
	if (!arena)
		return;
	uint8_t *bytes;
	size_t len;
	jinst_class *c0 = parse_ok("main/jinsttest/Features.class", &bytes, &len);
	jinst_class_free(c0);
	for (int round = 0; round < 50; round++) {
		jinst_class *cls = NULL;
		jinst_diag d;
		memset(&d, 0, sizeof(d));
		CHECK(jinst_class_parse(&cls, bytes, len, arena, NULL, &d) == 0, "round %d", round);
		if (!cls)
			break;
		CHECK(jinst_class_arena(cls) == arena, "the class uses the caller's arena");
		CHECK(jinst_class_method_count(cls) == 17, "round %d", round);
		jinst_class_free(cls);
		jinst_arena_reset(arena);
	}
	jinst_arena_free(arena);
	free(bytes);
}

/* Bad arguments are refused, not dereferenced. */
static void test_bad_arguments(void)
{
	jinst_class *cls = NULL;
	jinst_diag d;
	memset(&d, 0, sizeof(d));
	int rc = jinst_class_parse(&cls, NULL, 100, NULL, NULL, &d);
	CHECK(rc < 0 && d.code == rc, "NULL bytes: rc %d", rc);
	memset(&d, 0, sizeof(d));
	static const uint8_t empty[1];
	rc = jinst_class_parse(&cls, empty, 0, NULL, NULL, &d);
	CHECK(rc == JINST_EMALFORMED, "empty input: rc %d", rc);
	rc = jinst_class_parse(&cls, empty, 0, NULL, NULL, NULL);
	CHECK(rc == JINST_EMALFORMED, "no diag: rc %d", rc);
	jinst_class_free(NULL);
	char buf[8];
	memset(&d, 0, sizeof(d));
	d.code = JINST_EMALFORMED;
	d.offset = 12345;
	strcpy(d.message, "a long message that does not fit");
	jinst_diag_format(&d, buf, sizeof(buf));
	CHECK(strlen(buf) == 7, "diag_format truncates: %s", buf);
	CHECK(strcmp(jinst_strerror(JINST_ETOOLARGE), "ETOOLARGE") == 0, "strerror");
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)be16(p) << 16 | be16(p + 2);
}

/* A member's attribute list is built on first use, not at parse time. What it
 * holds must still be what the bytes say (each header read here from the
 * member's offset on), the same list on every call, and building some lists
 * and not others must not change a default write. A header that is wrong
 * must still fail the parse itself, at the header. */
static void test_member_attrs(void)
{
	uint8_t *bytes;
	size_t len;
	jinst_class *cls = parse_ok("main/jinsttest/Features.class", &bytes, &len);
	uint32_t first_attr = 0; /* offset of the first method attribute header */
	for (uint16_t i = 0; i < jinst_class_method_count(cls); i++) {
		jinst_member *m = jinst_class_method(cls, i);
		if (i % 2) /* every other method's list stays unbuilt */
			continue;
		uint32_t at = jinst_member_offset(m) + 6;
		uint16_t count = be16(bytes + at);
		at += 2;
		jinst_attr_list *al = jinst_member_attrs(m);
		CHECK(al && al->count == count && jinst_member_attrs(m) == al, "method %u: list of %u, built once", i, count);
		for (uint16_t k = 0; al && k < al->count && k < count; k++) {
			jinst_attr *a = &al->items[k];
			uint16_t nl;
			const uint8_t *name = jinst_cp_utf8(cls, be16(bytes + at), &nl);
			const char *kind = jinst_attr_kind_name((enum jinst_attr_kind)a->kind);
			CHECK(a->offset == at && a->name_index == be16(bytes + at) && a->length == be32(bytes + at + 2) &&
			              a->info == bytes + at + 6,
			      "method %u attribute %u header at %u", i, k, at);
			/* Every attribute javac writes on a method is one the JVMS names. */
			CHECK(kind && mutf8_eq(name, nl, kind), "method %u attribute %u kind %s", i, k, kind ? kind : "?");
			if (!first_attr)
				first_attr = at;
			at += 6 + be32(bytes + at + 2);
		}
	}
	jinst_write_options opts = JINST_WRITE_OPTIONS_INIT;
	uint8_t *out = NULL;
	size_t out_len = 0;
	jinst_diag d;
	CHECK(jinst_class_write(cls, &opts, &out, &out_len, &d) == 0 && out_len == len && memcmp(out, bytes, len) == 0,
	      "default write with some lists built gives back the input");
	free(out);
	uint16_t this_class = jinst_class_this_class(cls);
	jinst_class_free(cls);

	/* The first method attribute's name pointing at the class's Class entry. */
	CHECK(first_attr > 0, "Features has a method attribute");
	if (first_attr) {
		uint16_t saved = be16(bytes + first_attr);
		bytes[first_attr] = (uint8_t)(this_class >> 8);
		bytes[first_attr + 1] = (uint8_t)this_class;
		cls = NULL;
		memset(&d, 0, sizeof(d));
		int rc = jinst_class_parse(&cls, bytes, len, NULL, NULL, &d);
		CHECK(rc == JINST_EMALFORMED && d.offset == first_attr && strstr(d.message, "attribute_name_index") &&
		              strstr(d.where, "method"),
		      "attribute name not a Utf8: rc %d at %u (%s: %s)", rc, (unsigned)d.offset, d.where, d.message);
		jinst_class_free(cls);
		bytes[first_attr] = (uint8_t)(saved >> 8);
		bytes[first_attr + 1] = (uint8_t)saved;
	}
	free(bytes);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s tests/data/classes\n", argv[0]);
		return 2;
	}
	data_dir = argv[1];
	test_shapes();
	test_features();
	test_cp_get();
	test_member_attrs();
	test_versions();
	test_caller_arena();
	test_bad_arguments();
	return check_report();
}
