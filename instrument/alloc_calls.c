/*
 * The allocation pass's calls (alloc.c): the calls whose normal return is
 * an object the callee made without a `new` in the caller, which a native
 * allocated (Object.clone, java.lang.reflect.Array's newArray, the
 * reflection's constructor accessors). Those natives cannot be wrapped for
 * the hook: java/lang/Object and most of the reflection load before any
 * agent, and a retransformation cannot add a wrapper. The call site can.
 *
 *   clone()Ljava/lang/Object;        on an array: allocAny (an array's
 *                                    clone is always the VM's);
 *                                    else allocClone with the receiver
 *                                    (kept by a `dup` before the call) and,
 *                                    under invokespecial, the class its
 *                                    lookup starts at (JVMS 6.5: the current
 *                                    class when named, else its direct
 *                                    superclass): the runtime counts the
 *                                    object only when no class from there
 *                                    down to Object declares clone(), so that
 *                                    the call reached Object.clone itself.
 *                                    An override's own super.clone() counts
 *                                    its object; the call of the override
 *                                    does not count it again. A clone()
 *                                    of another descriptor is an override's
 *                                    (covariant), never Object's.
 *   Array.newInstance(Class, int)    allocAny: one array, its elements null
 *   Array.newInstance(Class, int[])  allocArrays: every array of the given
 *                                    dimensions, as for multianewarray
 *   Constructor.newInstance          allocAny; the constructor runs, but no
 *   Class.newInstance                `new` of the caller's counts it
 *
 * Left alone: ObjectInputStream.readObject (it returns a graph, or an
 * object read before: a back-reference is not new), MethodHandle
 * invocations (signature-polymorphic: whatever the target returns), and
 * the reflective calls the JDK's reflection makes itself (java/lang/Class,
 * java/lang/reflect, java/lang/invoke, jdk/internal/reflect, sun/reflect:
 * Class.newInstance calls Constructor.newInstance), so that, with the JDK
 * instrumented too, the program's call is the one that counts.
 *
 * The site's type is the declared one: the class of a checkcast right
 * after the call, else the receiver's static type for clone() (the
 * current class under invokespecial), else java/lang/Object; the runtime
 * measures each object by its own class and counts it under the site of
 * that class (the same site with the object's class as its type, which
 * the agent assigns in this table: runtime-java's Alloc.siteOf).
 */
#include <string.h>

#include "internal.h"
#include "jinst/opcodes.h"

static bool utf8_is(const uint8_t *p, uint16_t n, const char *s)
{
	return p && strlen(s) == n && !memcmp(p, s, n);
}

static const struct {
	const char *owner, *name, *descriptor;
	uint8_t opcode;
	int hook;
} reflective[] = {
	{"java/lang/reflect/Array", "newInstance", "(Ljava/lang/Class;I)Ljava/lang/Object;", JINST_OP_INVOKESTATIC,
	 JINST_HOOK_ALLOC_ANY},
	{"java/lang/reflect/Array", "newInstance", "(Ljava/lang/Class;[I)Ljava/lang/Object;", JINST_OP_INVOKESTATIC,
	 JINST_HOOK_ALLOC_ARRAYS},
	{"java/lang/reflect/Constructor", "newInstance", "([Ljava/lang/Object;)Ljava/lang/Object;",
	 JINST_OP_INVOKEVIRTUAL, JINST_HOOK_ALLOC_ANY},
	{"java/lang/Class", "newInstance", "()Ljava/lang/Object;", JINST_OP_INVOKEVIRTUAL, JINST_HOOK_ALLOC_ANY},
};

/* The JDK's reflection, which forwards one reflective allocation to another. */
static bool in_reflection(const char *class_name)
{
	static const char *const prefixes[] = {"java/lang/reflect/", "java/lang/invoke/", "jdk/internal/reflect/",
	                                       "sun/reflect/"};
	if (!strcmp(class_name, "java/lang/Class"))
		return true;
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (!strncmp(class_name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* A Class constant's name, NUL-terminated in the arena, '/' made '.' when
 * dotted (Class.getName's form). */
static const char *class_text(jinst_class *c, uint16_t index, bool dotted)
{
	uint16_t n;
	const uint8_t *name = jinst_cp_name(c, index, &n);
	char *t = name ? jinst_arena_alloc(jinst_class_arena(c), (size_t)n + 1) : NULL;
	if (!t)
		return NULL;
	for (uint16_t i = 0; i < n; i++)
		t[i] = dotted && name[i] == '/' ? '.' : (char)name[i];
	t[n] = 0;
	return t;
}

/* clone()Ljava/lang/Object; on owner: its hook, type and start. */
static int clone_call(jinst_class *c, const char *class_name, const jinst_insn *in, uint16_t owner,
                      jinst_alloc_call *out)
{
	const char *o = class_text(c, owner, false);
	if (!o)
		return JINST_EMALFORMED;
	if (o[0] == '[') {
		out->hook = JINST_HOOK_ALLOC_ANY;
		out->type = o;
		return 0;
	}
	out->hook = JINST_HOOK_ALLOC_CLONE;
	out->type = o;
	if (in->opcode != JINST_OP_INVOKESPECIAL)
		return 0;
	out->type = class_name;
	bool self = !strcmp(o, class_name);
	uint16_t from = self ? jinst_class_this_class(c) : jinst_class_super_class(c);
	const char *start = from ? class_text(c, from, true) : NULL;
	if (!start)
		return JINST_EMALFORMED;
	/* super.clone() of a direct subclass of Object: Object.clone, known here. */
	if (!strcmp(start, "java.lang.Object")) {
		out->hook = JINST_HOOK_ALLOC_ANY;
		return 0;
	}
	return jinst_cp_add_string(c, start, &out->start);
}

int jinst_alloc_call_at(jinst_class *c, const char *class_name, const jinst_insn *in, const jinst_insn *next,
                        jinst_alloc_call *out)
{
	memset(out, 0, sizeof(*out));
	out->hook = -1;
	uint8_t op = in->opcode;
	if (op != JINST_OP_INVOKEVIRTUAL && op != JINST_OP_INVOKESPECIAL && op != JINST_OP_INVOKESTATIC &&
	    op != JINST_OP_INVOKEINTERFACE)
		return 0;
	jinst_cp_entry e, nt;
	uint16_t nl, dl, ol;
	if (jinst_cp_get(c, (uint16_t)in->operand, &e) || jinst_cp_get(c, e.u.ref.name_and_type_index, &nt) ||
	    nt.tag != JINST_CP_NAME_AND_TYPE)
		return JINST_EMALFORMED;
	const uint8_t *name = jinst_cp_utf8(c, nt.u.nat.name_index, &nl);
	const uint8_t *desc = jinst_cp_utf8(c, nt.u.nat.descriptor_index, &dl);
	const uint8_t *owner = jinst_cp_name(c, e.u.ref.class_index, &ol);
	if (!name || !desc || !owner)
		return JINST_EMALFORMED;
	int rc = 0;
	if (utf8_is(name, nl, "clone") && utf8_is(desc, dl, "()Ljava/lang/Object;") && op != JINST_OP_INVOKESTATIC) {
		/* invokespecial of an interface's clone() runs a default method,
		 * never Object's (JVMS 5.4.3.4). */
		if (e.tag == JINST_CP_INTERFACE_METHODREF && op == JINST_OP_INVOKESPECIAL)
			return 0;
		rc = clone_call(c, class_name, in, e.u.ref.class_index, out);
	} else if (!in_reflection(class_name)) {
		for (size_t i = 0; i < sizeof reflective / sizeof reflective[0] && out->hook < 0; i++)
			if (op == reflective[i].opcode && utf8_is(owner, ol, reflective[i].owner) &&
			    utf8_is(name, nl, reflective[i].name) && utf8_is(desc, dl, reflective[i].descriptor)) {
				out->hook = reflective[i].hook;
				out->type = "java/lang/Object";
			}
	}
	if (rc || out->hook < 0)
		return rc;
	if (next && next->opcode == JINST_OP_CHECKCAST && !(out->type = class_text(c, (uint16_t)next->operand, false)))
		return JINST_EMALFORMED;
	return 0;
}
