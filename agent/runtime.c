/*
 * The runtime in the bootstrap loader. The classes of runtime-java are
 * embedded in this library (runtime_classes.h) and defined with JNI
 * DefineClass and a NULL loader when the VM is live, so users deploy one
 * file and every loader reaches them through its parents. Injected code
 * calls the bridge, java.lang.$JinstHooks, which every loader must delegate
 * (docs/ARCHITECTURE.md, "How injected code reaches the runtime"); this
 * file also lets java.base, the bridge's module, read the runtime's, and
 * registers the runtime's natives.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/opcodes.h"
#include "runtime_classes.h"

static jclass hooks;  /* global reference to jinst/rt/Hooks */

jclass jinst_agent_hooks_class(void)
{
	return hooks;
}

/* The bridge (java/lang/$JinstHooks, in java.base) calls jinst/rt/Hooks, in
 * the bootstrap loader's unnamed module, which a named module does not read:
 * without this the first hook fails with IllegalAccessError. java.base is
 * made to read it, as Modules.transformedByAgent does for a module whose
 * classes an agent changed. JDK 8 has no modules (no Class.getModule). */
static bool bridge_reads_runtime(JNIEnv *jni)
{
	jclass cls = (*jni)->FindClass(jni, "java/lang/Class");
	jmethodID get_module = NULL;
	if (!jinst_agent_java_failed(jni, "FindClass(java/lang/Class)") && cls) {
		get_module = (*jni)->GetMethodID(jni, cls, "getModule", "()Ljava/lang/Module;");
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni); /* NoSuchMethodError: JDK 8 */
		(*jni)->DeleteLocalRef(jni, cls);
	}
	if (!get_module)
		return true;
	const char *owner = jinst_hooks()[JINST_HOOK_ENTER].owner;
	jclass bridge = (*jni)->FindClass(jni, owner);
	if (jinst_agent_java_failed(jni, owner) || !bridge)
		return false;
	jobject from = (*jni)->CallObjectMethod(jni, bridge, get_module);
	bool failed = jinst_agent_java_failed(jni, "the bridge's module") || !from;
	(*jni)->DeleteLocalRef(jni, bridge);
	if (failed)
		return false;
	jobject to = (*jni)->CallObjectMethod(jni, hooks, get_module);
	jvmtiEnv *jvmti = jinst_the_core.jvmti;
	bool ok = !jinst_agent_java_failed(jni, "the runtime's module") && to &&
	          !jinst_agent_jvmti_failed((*jvmti)->AddModuleReads(jvmti, from, to),
	                                    "AddModuleReads (java.base reads jinst/rt)");
	(*jni)->DeleteLocalRef(jni, from);
	if (to)
		(*jni)->DeleteLocalRef(jni, to);
	return ok;
}

/* jinst.rt.Control, the program's way in: its dump() calls the native
 * Hooks.dump0, so it is defined once the natives are registered; a program
 * that looks for it (Class.forName, in a loop, while the agent attaches)
 * would otherwise find it a moment before and get UnsatisfiedLinkError. */
#define CONTROL "jinst/rt/Control"

/*
 * Virtual threads count in their carrier's row of Grid (JDK 19 on, where
 * Thread has the intrinsic currentCarrierThread, package-private: the
 * bridge is in java.lang). The bridge's called reads the current thread
 * once, to find and check its row; in the bridge defined on such a VM it
 * reads the carrier instead, which for a platform thread is the thread
 * itself. Exact: a virtual thread leaves its carrier only where it blocks,
 * never inside the hook's increment, and the counts are per method, all
 * threads together. Each new virtual thread (one per task, thousands) had
 * its own context, its counts a table and its first calls the slow path:
 * 2.4x to 2.9x the plain rate after warm-up, where the pools took 1.1x to
 * 1.6x (docs/tracing-threads.md, "Virtual threads in their carrier's row").
 * Hooks.carrier0 gives the slow path the carrier to claim a row for.
 */
static jclass thread_class;       /* global reference, once the bridge reads carriers */
static jmethodID carrier_method;  /* Thread.currentCarrierThread, or NULL */

/* The bridge's bytes with called's Thread.currentThread() made
 * currentCarrierThread() (same descriptor, one constant-pool index): in
 * *out (malloc'd), true; false, with nothing to free, if anything fails. */
static bool carrier_bridge(const jinst_embedded_class *c, uint8_t **out, size_t *len)
{
	jinst_class *cls = NULL;
	bool ok = false;
	uint16_t from, to;
	if (jinst_class_parse(&cls, c->bytes, c->len, NULL, NULL, NULL) ||
	    jinst_cp_add_methodref(cls, "java/lang/Thread", "currentThread", "()Ljava/lang/Thread;", &from) ||
	    jinst_cp_add_methodref(cls, "java/lang/Thread", "currentCarrierThread", "()Ljava/lang/Thread;", &to))
		goto done;
	for (uint16_t i = 0; i < jinst_class_method_count(cls); i++) {
		jinst_member *m = jinst_class_method(cls, i);
		uint16_t n;
		const uint8_t *name = jinst_cp_utf8(cls, jinst_member_name_index(m), &n);
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		jinst_code *code = NULL;
		jinst_insn *insns;
		uint32_t count, patched = 0;
		if (!name || n != 6 || memcmp(name, "called", 6))
			continue;
		if (!a || jinst_attr_decode(cls, a, (void **)&code, NULL) || !code ||
		    jinst_code_decode(cls, code, &insns, &count, NULL))
			goto done;
		uint8_t *bytes = jinst_arena_alloc(jinst_class_arena(cls), code->code_length);
		if (!bytes)
			goto done;
		memcpy(bytes, code->code, code->code_length);
		for (uint32_t k = 0; k < count; k++)
			if (insns[k].opcode == JINST_OP_INVOKESTATIC && insns[k].operand == from) {
				bytes[insns[k].offset + 1] = (uint8_t)(to >> 8);
				bytes[insns[k].offset + 2] = (uint8_t)to;
				patched++;
			}
		if (patched != 1)
			goto done;
		code->code = bytes;
		a->modified = true;
		ok = !jinst_class_write(cls, NULL, out, len, NULL);
		break;
	}
done:
	jinst_class_free(cls);
	return ok;
}

/* The embedded classes, Control alone or every other one. */
static bool define_classes(JNIEnv *jni, bool control)
{
	for (unsigned i = 0; i < jinst_runtime_class_count; i++) {
		const jinst_embedded_class *c = &jinst_runtime_classes[i];
		if (!strcmp(c->name, CONTROL) != control)
			continue;
		/* Bootstrap loader (NULL): every loader delegates to it, so the
		 * injected calls resolve from any class that has one as ancestor. */
		const uint8_t *bytes = c->bytes;
		uint8_t *patched = NULL;
		size_t len = c->len;
		if (carrier_method && !strcmp(c->name, jinst_hooks()[JINST_HOOK_CALLED].owner)) {
			if (carrier_bridge(c, &patched, &len))
				bytes = patched;
			else
				carrier_method = NULL, len = c->len;
		}
		jclass k = (*jni)->DefineClass(jni, c->name, NULL, (const jbyte *)bytes, (jsize)len);
		free(patched);
		if ((*jni)->ExceptionCheck(jni)) {
			/* Defined already (the agent attached a second time). */
			(*jni)->ExceptionClear(jni);
			k = (*jni)->FindClass(jni, c->name);
			if (jinst_agent_java_failed(jni, c->name) || !k) {
				jinst_agent_log("cannot define %s in the bootstrap loader", c->name);
				return false;
			}
		}
		if (!strcmp(c->name, JINST_RUNTIME_HOOKS))
			hooks = (jclass)(*jni)->NewGlobalRef(jni, k);
		(*jni)->DeleteLocalRef(jni, k);
	}
	return control || hooks != NULL;
}

/* jinst.rt.Control.dump() */
static void JNICALL native_dump(JNIEnv *jni, jclass cls)
{
	(void)cls;
	jinst_agent_dump(jni);
}

/* jinst.rt.Hooks.methodBase0(count): a range of the instrumenter's ids for
 * a run instrumented ahead of time (jinst.rt.Runs), so that the ids the
 * agent hands out never meet it; -1 without an instrumenter. */
static jint JNICALL native_method_base(JNIEnv *jni, jclass cls, jint count)
{
	(void)jni, (void)cls;
	uint32_t first;
	if (count < 0 || jinst_load_reserve_methods((uint32_t)count, &first))
		return -1;
	return (jint)first;
}

/* jinst.rt.Hooks.carrier0(): the current thread's carrier, or null. */
static jobject JNICALL native_carrier(JNIEnv *jni, jclass cls)
{
	(void)cls;
	if (!carrier_method)
		return NULL;
	jobject t = (*jni)->CallStaticObjectMethod(jni, thread_class, carrier_method);
	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		return NULL;
	}
	return t;
}

/* Whether the VM has Thread.currentCarrierThread (carrier_method). A
 * second attach finds the bridge defined already, as the first made it. */
static void find_carrier(JNIEnv *jni)
{
	if (thread_class)
		return;
	jclass t = (*jni)->FindClass(jni, "java/lang/Thread");
	if (jinst_agent_java_failed(jni, "FindClass(java/lang/Thread)") || !t)
		return;
	carrier_method = (*jni)->GetStaticMethodID(jni, t, "currentCarrierThread", "()Ljava/lang/Thread;");
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni); /* before JDK 19 */
	if (carrier_method)
		thread_class = (jclass)(*jni)->NewGlobalRef(jni, t);
	if (!thread_class)
		carrier_method = NULL;
	(*jni)->DeleteLocalRef(jni, t);
}

bool jinst_runtime_define(JNIEnv *jni)
{
	find_carrier(jni);
	if (!define_classes(jni, false) || !bridge_reads_runtime(jni))
		return false;
	JNINativeMethod natives[] = {{(char *)"dump0", (char *)"()V", (void *)native_dump},
	                             {(char *)"methodBase0", (char *)"(I)I", (void *)native_method_base},
	                             {(char *)"carrier0", (char *)"()Ljava/lang/Thread;", (void *)native_carrier}};
	jint r = (*jni)->RegisterNatives(jni, hooks, natives, 3);
	if (jinst_agent_java_failed(jni, "RegisterNatives") || r != 0)
		return false;
	if (carrier_method) {
		jfieldID f = (*jni)->GetStaticFieldID(jni, hooks, "carriers", "Z");
		if (jinst_agent_java_failed(jni, "Hooks.carriers") || !f)
			return false;
		(*jni)->SetStaticBooleanField(jni, hooks, f, JNI_TRUE);
	}
	return define_classes(jni, true);
}
