/*
 * The run's class: what makes method ids of separate offline runs never
 * clash (docs/ARCHITECTURE.md, "Method ids of separate runs").
 *
 * A run of `jinst instrument --trace` numbers its methods 0..count-1 and
 * names itself by a run key. Its code pushes a method's id as the run's
 * BASE plus the id within the run; BASE is the one static final field of
 * a small class in the package of the method's class, whose initializer
 * asks the runtime for the start of the run's range:
 *
 *     public final synthetic class PKG/$JinstRun<key> {
 *         public static final synthetic int BASE;
 *         static { BASE = jinst.rt.Runs.methodBase(KEY, COUNT, $JinstRun<key>.class); }
 *     }
 *
 * Public, class and field: a class of the same package name defined by
 * another loader (Jython's, defining the classes it compiles, whose
 * parent holds the run's class) is in another run-time package (JVMS
 * 5.3), where a package-private class is out of its reach (JVMS 5.4.4).
 *
 * The runtime hands each key one range, the same for every copy of the
 * class (each package, each loader), so two runs never share an id and the
 * ids stay dense. A static final of an initialized class is a constant to
 * HotSpot's compilers, so once compiled the push is a constant again.
 *
 * The bytes are written here directly, with a constant pool in a fixed
 * order: the class is the same for every package of a run but for its
 * name. Version 49 needs no StackMapTable (JVMS 4.10.1 applies from 50),
 * has ACC_SYNTHETIC and ldc of a Class (JVMS 4.4.1), and loads on every VM
 * the runtime runs on.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum {
	CP_UTF8 = 1,
	CP_INTEGER = 3,
	CP_LONG = 5,
	CP_CLASS = 7,
	CP_FIELDREF = 9,
	CP_METHODREF = 10,
	CP_NAME_AND_TYPE = 12
};

/* The pool's indices (a Long takes two). */
enum {
	I_NAME = 1, I_THIS, I_OBJECT_NAME, I_OBJECT, I_BASE, I_INT, I_CLINIT, I_VOID, I_CODE, I_KEY,
	I_RUNS_NAME = I_KEY + 2, I_RUNS, I_HOOK_NAME, I_HOOK_DESC, I_HOOK_NAT, I_HOOK, I_BASE_NAT, I_BASE_REF,
	I_COUNT, I_MARK_NAME, I_MARK, POOL_COUNT
};

typedef struct out {
	uint8_t *p;
} out;

static void u1(out *o, uint32_t v) { *o->p++ = (uint8_t)v; }
static void u2(out *o, uint32_t v) { u1(o, v >> 8); u1(o, v); }
static void u4(out *o, uint32_t v) { u2(o, v >> 16); u2(o, v); }

static void utf8(out *o, const char *s)
{
	size_t n = strlen(s);
	u1(o, CP_UTF8);
	u2(o, (uint32_t)n);
	memcpy(o->p, s, n);
	o->p += n;
}

static void cls(out *o, uint32_t name)
{
	u1(o, CP_CLASS);
	u2(o, name);
}

static void ref2(out *o, uint32_t tag, uint32_t a, uint32_t b)
{
	u1(o, tag);
	u2(o, a);
	u2(o, b);
}

/* Whether name's last segment is the prefix and 16 hex digits. */
static bool run_name(const char *name)
{
	const char *slash = strrchr(name, '/'), *simple = slash ? slash + 1 : name;
	size_t k = sizeof(JINST_RUN_CLASS_PREFIX) - 1;
	if (strncmp(simple, JINST_RUN_CLASS_PREFIX, k) || strlen(simple + k) != 16)
		return false;
	return strspn(simple + k, "0123456789abcdef") == 16;
}

/* <clinit>: BASE = hooks.methodBase(KEY, COUNT, THIS.class); return. */
static void clinit(out *o)
{
	static const uint8_t code[] = {
		JINST_OP_LDC2_W, 0, I_KEY, JINST_OP_LDC, I_COUNT, JINST_OP_LDC, I_THIS,
		JINST_OP_INVOKESTATIC, 0, I_HOOK, JINST_OP_PUTSTATIC, 0, I_BASE_REF, JINST_OP_RETURN};
	u2(o, JINST_ACC_STATIC | JINST_ACC_SYNTHETIC);
	u2(o, I_CLINIT);
	u2(o, I_VOID);
	u2(o, 1);
	u2(o, I_CODE);
	u4(o, 2 + 2 + 4 + sizeof(code) + 2 + 2);
	u2(o, 4); /* max_stack: a long, the count, the class */
	u2(o, 0); /* max_locals */
	u4(o, sizeof(code));
	memcpy(o->p, code, sizeof(code));
	o->p += sizeof(code);
	u2(o, 0); /* exception_table_length */
	u2(o, 0); /* attributes_count */
}

int jinst_instrument_run_class(uint8_t **out_bytes, size_t *out_len, const char *class_name, uint64_t key,
                               uint32_t method_count)
{
	*out_bytes = NULL;
	*out_len = 0;
	if (!class_name || !run_name(class_name) || strlen(class_name) > 60000 || method_count > INT32_MAX)
		return JINST_EINVAL;
	/* The fixed strings and structure take under 300 bytes. */
	size_t size = 300 + strlen(class_name);
	uint8_t *b = malloc(size);
	if (!b)
		return JINST_ENOMEM;
	out o = {b};
	u4(&o, 0xCAFEBABEu);
	u2(&o, 0);
	u2(&o, 49);
	u2(&o, POOL_COUNT);
	utf8(&o, class_name);
	cls(&o, I_NAME);
	utf8(&o, "java/lang/Object");
	cls(&o, I_OBJECT_NAME);
	utf8(&o, JINST_RUN_BASE_FIELD);
	utf8(&o, "I");
	utf8(&o, "<clinit>");
	utf8(&o, "()V");
	utf8(&o, "Code");
	u1(&o, CP_LONG);
	u4(&o, (uint32_t)(key >> 32));
	u4(&o, (uint32_t)key);
	utf8(&o, JINST_RUNTIME_RUNS);
	cls(&o, I_RUNS_NAME);
	utf8(&o, JINST_RUN_BASE_HOOK);
	utf8(&o, JINST_RUN_BASE_DESCRIPTOR);
	ref2(&o, CP_NAME_AND_TYPE, I_HOOK_NAME, I_HOOK_DESC);
	ref2(&o, CP_METHODREF, I_RUNS, I_HOOK_NAT);
	ref2(&o, CP_NAME_AND_TYPE, I_BASE, I_INT);
	ref2(&o, CP_FIELDREF, I_THIS, I_BASE_NAT);
	u1(&o, CP_INTEGER);
	u4(&o, method_count);
	/* Unused by the code: the reference that makes the agent and a later
	 * offline run leave the class alone (instrument/marker.c). */
	utf8(&o, JINST_RUNTIME_HOOKS);
	cls(&o, I_MARK_NAME);
	/* ACC_SUPER as javac sets it. */
	u2(&o, JINST_ACC_PUBLIC | JINST_ACC_FINAL | JINST_ACC_SUPER | JINST_ACC_SYNTHETIC);
	u2(&o, I_THIS);
	u2(&o, I_OBJECT);
	u2(&o, 0); /* interfaces */
	u2(&o, 1); /* fields: BASE */
	u2(&o, JINST_ACC_PUBLIC | JINST_ACC_STATIC | JINST_ACC_FINAL | JINST_ACC_SYNTHETIC);
	u2(&o, I_BASE);
	u2(&o, I_INT);
	u2(&o, 0);
	u2(&o, 1); /* methods: <clinit> */
	clinit(&o);
	u2(&o, 0); /* attributes */
	*out_len = (size_t)(o.p - b);
	*out_bytes = b;
	return 0;
}
