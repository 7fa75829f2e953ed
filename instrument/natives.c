/*
 * The natives pass: native methods made visible to the other passes.
 *
 * A native method has no bytecode, so no pass can put a hook in it. JVMTI's
 * SetNativeMethodPrefix lets an agent wrap it instead (JVMTI spec,
 * SetNativeMethodPrefix): the native `m` becomes the native `$$jinst$$m`
 * (same descriptor, same flags), and a new method `m` with m's access but
 * ACC_NATIVE, and m's attributes (throws, annotations, Signature), holds
 *
 *     load this (instance methods) and every argument
 *     invokestatic $$jinst$$m | invokespecial $$jinst$$m
 *     <t>return
 *
 * which the passes after this one instrument like any method. invokespecial
 * names the class itself: an exact call, as for a private method, so a
 * subclass's own `$$jinst$$m` (a native of the same name it wrapped too)
 * never receives the call the way invokevirtual would send it there. The
 * VM binds the prefixed native to m's implementation: JNI's automatic
 * lookup of `$$jinst$$m` fails, the VM strips the prefixes the agents set
 * and finds the non-native `m` of the same descriptor, whose JNI name
 * (Java_pkg_Cls_m) it looks up instead; RegisterNatives for `m` finds a
 * non-native `m` and tries the prefixes, first to last, until it finds a
 * native. Several agents' prefixes chain the same way.
 *
 * Never wrapped:
 *  - signature-polymorphic methods (JVMS 2.9.3: MethodHandle's and
 *    VarHandle's native varargs methods of one Object[] parameter): the VM
 *    links their calls itself, by name;
 *  - @CallerSensitive natives: their implementations count frames to the
 *    caller (Reflection.getCallerClass insists on its own frame and the
 *    next), and a wrapper is one frame more;
 *  - @IntrinsicCandidate natives (jdk.internal.vm.annotation, or
 *    jdk.internal.HotSpotIntrinsicCandidate before JDK 16), unless asked:
 *    HotSpot finds an intrinsic by the method's class, name, descriptor and
 *    flags, ACC_NATIVE among them, which neither the wrapper nor the
 *    renamed native has, so wrapped they lose their intrinsic (their calls
 *    count exactly, and run as JNI calls: CRC32, say, much slower); the
 *    annotation is then dropped from both, or HotSpot's CheckIntrinsics
 *    prints a line for each on stdout;
 *  - the natives of the JDK's own native lookup (jdk/internal/loader's
 *    NativeLibrary and NativeLibraries): the VM binds a native it does not
 *    find in its own libraries through ClassLoader.findNative, which ends
 *    in NativeLibrary.findEntry0 (JDK 17: NativeLibraries.findEntry0); a
 *    wrapped one calls its prefixed native, whose binding runs that very
 *    lookup again, without end (javac on JDK 25, include=**: a
 *    StackOverflowError through $$jinst$$findEntry0, or SystemImage's
 *    initializer failing);
 *  - constructors and initializers, which cannot be native, a native
 *    wrapped already (its name begins with the prefix), a method whose
 *    prefixed name the class has already, and the natives the filter
 *    declines.
 *
 * Retransformation can add no method (JVMTI RetransformClasses), and the VM
 * hands the agent the class's bytes as they were before its first
 * transformation, natives unwrapped. So the pass wraps at a first load only
 * and, when the VM retransforms, wraps again exactly the natives the filter
 * says the class has wrapped (the agent asks the VM), so the new version
 * has the shape of the one it replaces; the rules checker (rules.c) proves
 * the shape: each wrapped native renamed in its place, its wrapper appended
 * in the same order, nothing else moved.
 *
 * The pass works in begin: it adds methods, which the instrumenter then
 * lists with the others (driver.c), and so must come before every pass
 * that instruments methods but after coverage, whose placement must see
 * the class as the analyzer will (a native has no probe, nor may its
 * wrapper).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool is(const uint8_t *s, uint16_t len, const char *word)
{
	return s && len == strlen(word) && !memcmp(s, word, len);
}

static bool intrinsic_type(jinst_class *c, uint16_t type_index)
{
	uint16_t len;
	const uint8_t *t = jinst_cp_utf8(c, type_index, &len);
	return is(t, len, "Ljdk/internal/vm/annotation/IntrinsicCandidate;") ||
	       is(t, len, "Ljdk/internal/HotSpotIntrinsicCandidate;");
}

/* Drops @IntrinsicCandidate from a native about to be wrapped (its
 * wrapper copies its attributes): neither the wrapper nor the renamed
 * native is the method HotSpot's intrinsic names (name, descriptor and
 * flags, ACC_NATIVE among them), and with the annotation left on them its
 * CheckIntrinsics prints a line for each on the program's stdout. */
static int drop_intrinsic(jinst_class *c, jinst_member *m)
{
	jinst_attr_list *attrs = jinst_member_attrs(m);
	for (uint16_t i = 0; attrs && i < attrs->count; i++) {
		jinst_attr *a = &attrs->items[i];
		jinst_annotations *as;
		if (a->kind != JINST_ATTR_RUNTIME_VISIBLE_ANNOTATIONS || jinst_attr_decode(c, a, (void **)&as, NULL) || !as)
			continue;
		jinst_annotations *kept = jinst_arena_alloc(jinst_class_arena(c), sizeof(*kept));
		jinst_annotation *items = jinst_arena_alloc(jinst_class_arena(c), (as->count + 1u) * sizeof(*items));
		if (!kept || !items)
			return JINST_ENOMEM;
		kept->count = 0;
		kept->items = items;
		for (uint16_t k = 0; k < as->count; k++)
			if (!intrinsic_type(c, as->items[k].type_index))
				items[kept->count++] = as->items[k];
		if (kept->count != as->count) {
			a->model = kept;
			a->modified = true;
		}
	}
	return 0;
}

/* The annotation types that keep a native from being wrapped. */
static bool annotated(jinst_class *c, jinst_member *m, bool intrinsics)
{
	jinst_attr_list *attrs = jinst_member_attrs(m);
	for (uint16_t i = 0; attrs && i < attrs->count; i++) {
		jinst_annotations *as;
		if (attrs->items[i].kind != JINST_ATTR_RUNTIME_VISIBLE_ANNOTATIONS ||
		    jinst_attr_decode(c, &attrs->items[i], (void **)&as, NULL) || !as)
			continue;
		for (uint16_t k = 0; k < as->count; k++) {
			uint16_t len;
			const uint8_t *t = jinst_cp_utf8(c, as->items[k].type_index, &len);
			if (is(t, len, "Ljdk/internal/reflect/CallerSensitive;") || is(t, len, "Lsun/reflect/CallerSensitive;"))
				return true;
			if (!intrinsics && intrinsic_type(c, as->items[k].type_index))
				return true;
		}
	}
	return false;
}

/* JVMS 2.9.3. */
static bool signature_polymorphic(const char *class_name, uint16_t flags, const char *desc)
{
	return (!strcmp(class_name, "java/lang/invoke/MethodHandle") || !strcmp(class_name, "java/lang/invoke/VarHandle")) &&
	       (flags & JINST_ACC_VARARGS) && !strncmp(desc, "([Ljava/lang/Object;)", 21);
}

/* The classes whose natives bind the others (above). */
static bool binds_natives(const char *class_name)
{
	return !strcmp(class_name, "jdk/internal/loader/NativeLibrary") ||
	       !strcmp(class_name, "jdk/internal/loader/NativeLibraries");
}

static bool has_method(jinst_class *c, const char *name, const char *desc)
{
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		uint16_t nl, dl;
		const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(m), &nl);
		const uint8_t *d = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &dl);
		if (is(n, nl, name) && is(d, dl, desc))
			return true;
	}
	return false;
}

/* The load of a local of descriptor type t (its first character), the
 * short form below 4. */
static jinst_insn load(char t, uint32_t local)
{
	uint8_t base = t == 'J' ? JINST_OP_LLOAD : t == 'F' ? JINST_OP_FLOAD : t == 'D' ? JINST_OP_DLOAD
	             : t == 'L' || t == '[' ? JINST_OP_ALOAD : JINST_OP_ILOAD;
	if (local > 3)
		return jinst_ins_op(base, (int32_t)local);
	return jinst_ins_op((uint8_t)(JINST_OP_ILOAD_0 + (base - JINST_OP_ILOAD) * 4 + local), 0);
}

static uint8_t return_of(char t)
{
	return t == 'V' ? JINST_OP_RETURN : t == 'J' ? JINST_OP_LRETURN : t == 'F' ? JINST_OP_FRETURN
	     : t == 'D' ? JINST_OP_DRETURN : t == 'L' || t == '[' ? JINST_OP_ARETURN : JINST_OP_IRETURN;
}

/* The wrapper's code into v (room for 258: 255 arguments at most, JVMS
 * 4.3.3, this, the call and the return); its length, 0 when the
 * descriptor does not parse. */
static uint32_t wrapper_code(const char *desc, bool is_static, uint16_t ref, jinst_insn *v)
{
	uint32_t n = 0, local = 0;
	if (!is_static)
		v[n++] = load('L', local++);
	const char *p = desc + 1;
	while (*p && *p != ')' && n < 256) {
		char t = *p;
		while (*p == '[')
			p++;
		if (*p == 'L')
			p = strchr(p, ';');
		if (!p || !*p)
			return 0;
		p++;
		v[n++] = load(t, local);
		local += t == 'J' || t == 'D' ? 2 : 1;
	}
	if (*p != ')')
		return 0;
	v[n++] = jinst_ins_op(is_static ? JINST_OP_INVOKESTATIC : JINST_OP_INVOKESPECIAL, ref);
	v[n++] = jinst_ins_op(return_of(p[1]), 0);
	return n;
}

/* Method i (native) becomes PREFIXname, and the wrapper name comes last. */
static int wrap(jinst_class *c, const char *class_name, uint16_t i, const char *name, const char *desc,
                jinst_diag *diag)
{
	jinst_arena *A = jinst_class_arena(c);
	size_t nl = strlen(name);
	char *prefixed = jinst_arena_alloc(A, sizeof(JINST_NATIVE_PREFIX) + nl);
	jinst_insn *v = jinst_arena_alloc(A, 258 * sizeof(*v));
	if (!prefixed || !v)
		return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
	memcpy(prefixed, JINST_NATIVE_PREFIX, sizeof(JINST_NATIVE_PREFIX) - 1);
	memcpy(prefixed + sizeof(JINST_NATIVE_PREFIX) - 1, name, nl + 1);
	jinst_member *native = jinst_class_method(c, i);
	uint16_t flags = jinst_member_access_flags(native);
	jinst_attr_list *attrs = jinst_member_attrs(native);
	uint16_t ref;
	int rc;
	if (!attrs || drop_intrinsic(c, native))
		return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
	if ((rc = jinst_member_set_name(c, native, prefixed, diag)) ||
	    (rc = jinst_class_add_method(NULL, c, (uint16_t)(flags & ~JINST_ACC_NATIVE), name, desc, attrs->items,
	                                 attrs->count, diag)) ||
	    (rc = jinst_cp_add_methodref(c, class_name, prefixed, desc, &ref))) {
		char why[sizeof(diag->message)];
		snprintf(why, sizeof why, "%s", diag ? diag->message : "");
		return jinst_ins_fail(diag, rc, "wrapping %s%s: %s", name, desc, why);
	}
	uint32_t n = wrapper_code(desc, (flags & JINST_ACC_STATIC) != 0, ref, v);
	if (!n)
		return jinst_ins_fail(diag, JINST_EMALFORMED, "%s%s: the descriptor does not parse", name, desc);
	jinst_member *w = jinst_class_method(c, (uint16_t)(jinst_class_method_count(c) - 1));
	return jinst_code_build(c, w, v, n, diag);
}

/* Whether native method m, named name, is one to wrap. */
static bool wanted(jinst_class *c, const char *class_name, jinst_member *m, const char *name, const char *desc,
                   const jinst_natives_options *o, bool retransform)
{
	uint16_t flags = jinst_member_access_flags(m);
	/* When the VM retransforms, the filter's answer is the VM's class: a
	 * native wrapped under JINST_NATIVES_INTRINSICS then is one now. */
	if (!(flags & JINST_ACC_NATIVE) || name[0] == '<' ||
	    !strncmp(name, JINST_NATIVE_PREFIX, sizeof(JINST_NATIVE_PREFIX) - 1) ||
	    signature_polymorphic(class_name, flags, desc) || binds_natives(class_name) ||
	    annotated(c, m, retransform || (o->flags & JINST_NATIVES_INTRINSICS) != 0))
		return false;
	char prefixed[512];
	if (snprintf(prefixed, sizeof prefixed, "%s%s", JINST_NATIVE_PREFIX, name) >= (int)sizeof prefixed ||
	    has_method(c, prefixed, desc))
		return false;
	return o->filter ? o->filter(o->ctx, class_name, name, desc, retransform) : !retransform;
}

int jinst_instrument_wrap_natives(uint32_t *wrapped, jinst_class *c, const jinst_natives_options *opts,
                                  bool retransform, jinst_diag *diag)
{
	*wrapped = 0;
	jinst_natives_options def = JINST_NATIVES_OPTIONS_INIT;
	const jinst_natives_options *o = opts ? opts : &def;
	if (o->version != JINST_NATIVES_OPTIONS_VERSION)
		return jinst_ins_fail(diag, JINST_EINVAL, "natives options version %u", o->version);
	/* JVMS 4.6: no interface method is native. */
	if (jinst_class_access_flags(c) & JINST_ACC_INTERFACE)
		return 0;
	jinst_arena *A = jinst_class_arena(c);
	uint16_t nlen;
	const uint8_t *cn = jinst_class_name(c, &nlen);
	const char *class_name = cn ? jinst_ins_cstr(A, cn, nlen, NULL) : NULL;
	if (!class_name)
		return jinst_ins_fail(diag, cn ? JINST_ENOMEM : JINST_EMALFORMED, "no class name");
	uint16_t count = jinst_class_method_count(c);
	for (uint16_t i = 0; i < count; i++) {
		jinst_member *m = jinst_class_method(c, i);
		if (!(jinst_member_access_flags(m) & JINST_ACC_NATIVE))
			continue;
		uint16_t l1, l2;
		const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(m), &l1);
		const uint8_t *d = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &l2);
		const char *name = n ? jinst_ins_cstr(A, n, l1, NULL) : NULL;
		const char *desc = d ? jinst_ins_cstr(A, d, l2, NULL) : NULL;
		if (!name || !desc)
			return jinst_ins_fail(diag, JINST_EMALFORMED, "method %u: name or descriptor not a Utf8", i);
		if (!wanted(c, class_name, m, name, desc, o, retransform))
			continue;
		int rc = wrap(c, class_name, i, name, desc, diag);
		if (rc)
			return rc;
		++*wrapped;
	}
	return 0;
}

static int natives_begin(void *state, jinst_pass_class *pc, jinst_diag *diag)
{
	uint32_t wrapped;
	int rc = jinst_instrument_wrap_natives(&wrapped, pc->c, state,
	                                       (pc->flags & JINST_INSTRUMENT_RETRANSFORM) != 0, diag);
	if (rc)
		return rc;
	return wrapped ? 0 : JINST_PASS_SKIP;
}

int jinst_natives_pass(jinst_pass *out, const jinst_natives_options *opts)
{
	jinst_natives_options *o = malloc(sizeof(*o));
	if (!o)
		return JINST_ENOMEM;
	*o = *opts;
	*out = (jinst_pass){.version = JINST_PASS_VERSION, .name = "natives", .state = o, .begin = natives_begin,
	                    .free = free};
	return 0;
}
