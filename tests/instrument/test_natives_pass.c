/*
 * The natives pass (label unit), on tests/data's Natives and on the JDK's
 * own classes read from JDK_HOME/lib/modules:
 *  - at a first load with trace=counts, every native of Natives is renamed
 *    in its place and gets a wrapper, appended in order, with the native's
 *    flags but ACC_NATIVE and its attributes (throws), whose code the trace
 *    pass instrumented: the counting hook, then the arguments loaded, the
 *    exact call (invokestatic or invokespecial of $$jinst$$m) and the
 *    return; a pass after natives sees the wrappers as wrappers; the
 *    marker names natives;
 *  - retransformed with a filter that says the VM has the wrappers: the
 *    same shape again, the rules checker content; with a filter that says
 *    it has one, that one; without a filter: none;
 *  - the rules checker refuses a wrapper with other flags, a native renamed
 *    without its wrapper, wrappers out of order;
 *  - the JDK: MethodHandle's signature-polymorphic natives and
 *    Reflection.getCallerClass (@CallerSensitive) and the native lookup's
 *    NativeLibraries never wrapped, BootLoader beside it is; CRC32's
 *    @IntrinsicCandidate natives only with JINST_NATIVES_INTRINSICS;
 *    Adler32's update(II)I wrapped, updateBytes not; every class of the
 *    image wrapped (intrinsics too): written, parsed again with one method
 *    more per native wrapped, within the rules, nothing left to wrap.
 *   test_natives_pass DATA_CLASSES JDK_HOME
 */
#include <stdlib.h>
#include <string.h>

#include "jinst/classpath.h"
#include "jinst/instrument.h"
#include "jinst/opcodes.h"

#include "../testlib.h"

static jinst_arena *arena;

static jinst_class *parse(const uint8_t *bytes, size_t len)
{
	jinst_class *c = NULL;
	if (jinst_class_parse(&c, bytes, len, NULL, NULL, NULL)) {
		printf("FAIL: output does not parse\n");
		exit(1);
	}
	return c;
}

/* The names of the class's methods, in order, joined by spaces. */
static void method_names(jinst_class *c, char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = 0;
	for (uint16_t i = 0; i < jinst_class_method_count(c) && at < size; i++) {
		uint16_t len;
		const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(jinst_class_method(c, i)), &len);
		at += (size_t)snprintf(buf + at, size - at, "%s%.*s", i ? " " : "", (int)len, (const char *)n);
	}
}

static jinst_member *find(jinst_class *c, const char *name)
{
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		uint16_t len;
		const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(jinst_class_method(c, i)), &len);
		if (n && len == strlen(name) && !memcmp(n, name, len))
			return jinst_class_method(c, i);
	}
	return NULL;
}

/* ---- a pass after natives: which methods it sees as wrappers ---- */

typedef struct seen {
	char wrappers[512];
} seen;

static int seen_method(void *state, jinst_pass_class *cls, jinst_pass_method *m, jinst_diag *diag)
{
	(void)cls, (void)diag;
	seen *s = state;
	if (jinst_pass_method_is_native_wrapper(m)) {
		size_t at = strlen(s->wrappers);
		snprintf(s->wrappers + at, sizeof s->wrappers - at, "%s%s", at ? " " : "", jinst_pass_method_name(m));
	}
	return JINST_PASS_SKIP;
}

/* The filter of an agent whose VM holds the wrappers of `held` (names
 * separated by spaces; NULL: none) and whose prefix is in place. */
static bool held_filter(void *ctx, const char *cls, const char *name, const char *desc, bool retransform)
{
	(void)cls, (void)desc;
	const char *held = ctx;
	if (!retransform)
		return true;
	char key[128];
	snprintf(key, sizeof key, " %s ", name);
	char padded[512];
	snprintf(padded, sizeof padded, " %s ", held ? held : "");
	return strstr(padded, key) != NULL;
}

static jinst_instrument *instrumenter(uint32_t passes, jinst_native_filter filter, void *ctx, uint32_t flags,
                                      seen *s)
{
	jinst_instrument_options io = JINST_INSTRUMENT_OPTIONS_INIT;
	io.passes = passes;
	jinst_instrument *ins = NULL;
	jinst_diag d;
	CHECK(jinst_instrument_new(&ins, &io, &d) == 0, "new: %s", d.message);
	if (s) {
		jinst_pass p = {JINST_PASS_VERSION, "seen", s, NULL, seen_method, NULL, NULL};
		CHECK(jinst_instrument_add_pass(ins, &p, &d) == 0, "add seen: %s", d.message);
	}
	jinst_natives_options no = JINST_NATIVES_OPTIONS_INIT;
	no.filter = filter;
	no.ctx = ctx;
	no.flags = flags;
	CHECK(jinst_instrument_set_natives(ins, &no, &d) == 0, "natives: %s", d.message);
	CHECK(jinst_instrument_set_natives(ins, &no, &d) != 0, "natives twice");
	return ins;
}

static uint8_t *run(jinst_instrument *ins, const uint8_t *in, size_t len, uint32_t flags, size_t *out_len)
{
	uint8_t *out = NULL;
	jinst_diag d;
	uint64_t identity = 7;
	int rc = jinst_instrument_class(ins, arena, in, len, flags ? &identity : NULL, flags, NULL, &out, out_len, &d);
	CHECK(rc == 0, "instrument: %s: %s", jinst_strerror(rc), d.message);
	jinst_arena_reset(arena);
	return out;
}

/* add(II)I's wrapper under trace=counts: the hook, the loads, the call. */
static void check_wrapper_code(jinst_class *c)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(find(c, "add")), JINST_ATTR_CODE);
	jinst_code *code = NULL;
	CHECK(a && !jinst_attr_decode(c, a, (void **)&code, NULL) && code, "add has code");
	if (!code)
		return;
	const uint8_t *p = code->code;
	uint32_t n = code->code_length;
	CHECK(n == 10 && p[1] == JINST_OP_INVOKESTATIC && p[4] == JINST_OP_ILOAD_0 && p[5] == JINST_OP_ILOAD_1 &&
	              p[6] == JINST_OP_INVOKESTATIC && p[9] == JINST_OP_IRETURN,
	      "add: the hook, iload_0, iload_1, invokestatic, ireturn (%u bytes)", n);
	jinst_attr *m = jinst_attr_find(jinst_member_attrs(find(c, "mix")), JINST_ATTR_CODE);
	code = NULL;
	CHECK(m && !jinst_attr_decode(c, m, (void **)&code, NULL) && code && code->code[code->code_length - 4] ==
	                                                                        JINST_OP_INVOKESPECIAL,
	      "mix calls its native exactly");
	jinst_member *touch = find(c, "touch");
	CHECK(touch && jinst_member_access_flags(touch) == (JINST_ACC_PROTECTED | JINST_ACC_SYNCHRONIZED) &&
	              jinst_attr_find(jinst_member_attrs(touch), JINST_ATTR_EXCEPTIONS),
	      "touch: its flags but native, its throws");
	jinst_member *native = find(c, "$$jinst$$touch");
	CHECK(native && jinst_member_access_flags(native) ==
	                        (JINST_ACC_PROTECTED | JINST_ACC_SYNCHRONIZED | JINST_ACC_NATIVE),
	      "$$jinst$$touch keeps its flags");
}

static const char first_shape[] = "<init> $$jinst$$add $$jinst$$mix $$jinst$$touch $$jinst$$names $$jinst$$nothing "
                                  "plain add mix touch names nothing";

static void check_natives_class(const char *data)
{
	size_t len, out_len;
	uint8_t *bytes = test_load(data, "natives/natives/Natives.class", &len);
	seen s = {{0}};
	jinst_instrument *ins = instrumenter(JINST_PASS_COUNT, held_filter, NULL, 0, &s);
	uint8_t *out = run(ins, bytes, len, 0, &out_len);
	CHECK(out != NULL, "Natives instrumented");
	if (out) {
		jinst_class *c = parse(out, out_len);
		char names[512];
		method_names(c, names, sizeof names);
		CHECK(!strcmp(names, first_shape), "first load: %s", names);
		check_wrapper_code(c);
		CHECK(!strcmp(s.wrappers, "add mix touch names nothing"), "seen as wrappers: %s", s.wrappers);
		jinst_marker mk;
		CHECK(jinst_instrument_read_marker(arena, out, out_len, &mk, NULL) == 0 && strstr(mk.passes, "natives"),
		      "marker names natives: %s", mk.passes);
		CHECK(jinst_instrument_check_rules(arena, bytes, len, out, out_len, NULL) == 0, "rules take the wrap");
		jinst_class_free(c);
		free(out);
	}
	jinst_instrument_free(ins);
	/* Retransformed: all the VM has, one, none. */
	const char *held[3] = {"add mix touch names nothing", "mix", NULL};
	const char *shapes[3] = {first_shape, "<init> add $$jinst$$mix touch names nothing plain mix",
	                         "<init> add mix touch names nothing plain"};
	for (int i = 0; i < 3; i++) {
		ins = instrumenter(JINST_PASS_COUNT, i < 2 ? held_filter : NULL, (void *)held[i], 0, NULL);
		out = run(ins, bytes, len, JINST_INSTRUMENT_RETRANSFORM, &out_len);
		CHECK(out != NULL, "retransformed %d", i);
		char names[512] = "";
		if (out) {
			jinst_class *c = parse(out, out_len);
			method_names(c, names, sizeof names);
			jinst_class_free(c);
		}
		CHECK(!strcmp(names, shapes[i]), "retransformed %d: %s", i, names);
		free(out);
		jinst_instrument_free(ins);
	}
	free(bytes);
}

/* A wrapped Natives altered by alter, against the rules. */
static int rules_after(const uint8_t *bytes, size_t len, void (*alter)(jinst_class *c))
{
	jinst_class *c = parse(bytes, len);
	uint32_t wrapped;
	CHECK(jinst_instrument_wrap_natives(&wrapped, c, NULL, false, NULL) == 0 && wrapped == 5, "wrapped %u", wrapped);
	alter(c);
	uint8_t *out = NULL;
	size_t out_len = 0;
	CHECK(jinst_class_write(c, NULL, &out, &out_len, NULL) == 0, "write");
	int rc = jinst_instrument_check_rules(arena, bytes, len, out, out_len, NULL);
	free(out);
	jinst_class_free(c);
	return rc;
}

static void nothing(jinst_class *c) { (void)c; }
static void wrapper_flags(jinst_class *c) { jinst_member_set_access_flags(c, find(c, "add"), JINST_ACC_PUBLIC); }
static void unwrapped(jinst_class *c) { jinst_member_set_name(c, find(c, "add"), "$$jinst$$plain", NULL); }
static void out_of_order(jinst_class *c)
{
	jinst_member_set_name(c, find(c, "add"), "tmp", NULL);
	jinst_member_set_name(c, find(c, "mix"), "add", NULL);
	jinst_member_set_name(c, find(c, "tmp"), "mix", NULL);
}

static void check_rules(const char *data)
{
	size_t len;
	uint8_t *bytes = test_load(data, "natives/natives/Natives.class", &len);
	CHECK(rules_after(bytes, len, nothing) == 0, "the wrap as made");
	CHECK(rules_after(bytes, len, wrapper_flags) == JINST_ERULES, "a wrapper of other flags");
	CHECK(rules_after(bytes, len, unwrapped) == JINST_ERULES, "a native renamed without its wrapper");
	CHECK(rules_after(bytes, len, out_of_order) == JINST_ERULES, "wrappers out of order");
	free(bytes);
}

/* The natives of JDK class name the pass wraps, as "a b c". */
static void jdk_wrapped(jinst_classpath *cp, const char *name, uint32_t flags, char *buf, size_t size)
{
	uint8_t *bytes = NULL;
	size_t len = 0;
	buf[0] = 0;
	if (jinst_classpath_read(cp, name, &bytes, &len, NULL)) {
		snprintf(buf, size, "(not found)");
		return;
	}
	jinst_class *c = parse(bytes, len);
	uint16_t before = jinst_class_method_count(c);
	jinst_natives_options no = JINST_NATIVES_OPTIONS_INIT;
	no.flags = flags;
	uint32_t wrapped;
	CHECK(jinst_instrument_wrap_natives(&wrapped, c, &no, false, NULL) == 0, "%s wraps", name);
	size_t at = 0;
	for (uint16_t i = before; i < jinst_class_method_count(c) && at < size; i++) {
		uint16_t l;
		const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(jinst_class_method(c, i)), &l);
		at += (size_t)snprintf(buf + at, size - at, "%s%.*s", at ? " " : "", (int)l, (const char *)n);
	}
	jinst_class_free(c);
	free(bytes);
}

static void check_jdk(const char *home)
{
	jinst_classpath *cp = NULL;
	if (jinst_classpath_new(&cp) || jinst_classpath_add_jdk(cp, home, NULL)) {
		printf("no JDK at %s: its classes not checked\n", home);
		jinst_classpath_free(cp);
		return;
	}
	char got[512];
	jdk_wrapped(cp, "java/lang/invoke/MethodHandle", JINST_NATIVES_INTRINSICS, got, sizeof got);
	CHECK(!strcmp(got, ""), "MethodHandle: none, got %s", got);
	jdk_wrapped(cp, "jdk/internal/reflect/Reflection", JINST_NATIVES_INTRINSICS, got, sizeof got);
	CHECK(!strstr(got, "getCallerClass"), "Reflection: not getCallerClass, got %s", got);
	/* The native lookup's own natives (JDK 17: NativeLibraries.findEntry0,
	 * load, unload, findBuiltinLib): wrapped, they bound themselves
	 * through themselves without end. */
	jdk_wrapped(cp, "jdk/internal/loader/NativeLibraries", JINST_NATIVES_INTRINSICS, got, sizeof got);
	CHECK(!strcmp(got, ""), "NativeLibraries: none, got %s", got);
	jdk_wrapped(cp, "jdk/internal/loader/BootLoader", 0, got, sizeof got);
	CHECK(strstr(got, "getSystemPackageNames") != NULL, "BootLoader: its natives, got %s", got);
	jdk_wrapped(cp, "java/util/zip/CRC32", 0, got, sizeof got);
	CHECK(!strcmp(got, ""), "CRC32: none, got %s", got);
	jdk_wrapped(cp, "java/util/zip/CRC32", JINST_NATIVES_INTRINSICS, got, sizeof got);
	CHECK(!strcmp(got, "update updateBytes0 updateByteBuffer0"), "CRC32 with intrinsics: %s", got);
	jdk_wrapped(cp, "java/util/zip/Adler32", 0, got, sizeof got);
	CHECK(!strcmp(got, "update"), "Adler32: %s", got);
	jinst_classpath_free(cp);
}

/* ---- every class of the image ---- */

typedef struct sweep {
	jinst_jimage *image;
	unsigned classes, wrapped_classes, natives, failures;
} sweep;

/* One class of the image wrapped with intrinsics: written, parsed again,
 * the same count of methods plus one per native wrapped, within the rules,
 * nothing left to wrap. */
static int sweep_one(void *ctx, const char *path)
{
	sweep *w = ctx;
	size_t n = strlen(path);
	if (n < 7 || strcmp(path + n - 6, ".class") || strstr(path, "module-info"))
		return 0;
	uint8_t *bytes = NULL;
	size_t len = 0;
	jinst_class *c = NULL, *again = NULL;
	if (jinst_jimage_read(w->image, path, &bytes, &len, NULL) || jinst_class_parse(&c, bytes, len, NULL, NULL, NULL)) {
		free(bytes);
		return 0;
	}
	w->classes++;
	uint16_t before = jinst_class_method_count(c);
	jinst_natives_options no = JINST_NATIVES_OPTIONS_INIT;
	no.flags = JINST_NATIVES_INTRINSICS;
	uint32_t wrapped = 0, more = 0;
	uint8_t *out = NULL;
	size_t out_len = 0;
	bool ok = jinst_instrument_wrap_natives(&wrapped, c, &no, false, NULL) == 0;
	if (ok && wrapped) {
		w->wrapped_classes++;
		w->natives += wrapped;
		ok = jinst_class_write(c, NULL, &out, &out_len, NULL) == 0 &&
		     jinst_class_parse(&again, out, out_len, NULL, NULL, NULL) == 0 &&
		     jinst_class_method_count(again) == before + wrapped &&
		     jinst_instrument_check_rules(arena, bytes, len, out, out_len, NULL) == 0 &&
		     jinst_instrument_wrap_natives(&more, again, &no, false, NULL) == 0 && more == 0;
		jinst_arena_reset(arena);
	}
	if (!ok && w->failures++ < 5)
		printf("FAIL %s: not wrapped as it should be\n", path);
	jinst_class_free(again);
	jinst_class_free(c);
	free(out);
	free(bytes);
	return 0;
}

static void check_image(const char *home)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/lib/modules", home);
	sweep w = {0};
	if (jinst_jimage_open(&w.image, path, NULL)) {
		printf("no image at %s: not swept\n", path);
		return;
	}
	jinst_jimage_foreach(w.image, sweep_one, &w);
	jinst_jimage_close(w.image);
	printf("image: %u classes, %u with natives wrapped, %u natives\n", w.classes, w.wrapped_classes, w.natives);
	CHECK(w.failures == 0, "%u classes of the image wrapped wrong", w.failures);
	CHECK(w.classes > 1000 && w.natives > 500, "the image's natives: %u in %u classes", w.natives, w.classes);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_natives_pass DATA_CLASSES JDK_HOME\n");
		return 2;
	}
	jinst_arena_new(&arena);
	check_natives_class(argv[1]);
	check_rules(argv[1]);
	check_jdk(argv[2]);
	check_image(argv[2]);
	jinst_arena_free(arena);
	return check_report();
}
