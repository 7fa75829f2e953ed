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

#include <string.h>

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

/* The embedded classes, Control alone or every other one. */
static bool define_classes(JNIEnv *jni, bool control)
{
	for (unsigned i = 0; i < jinst_runtime_class_count; i++) {
		const jinst_embedded_class *c = &jinst_runtime_classes[i];
		if (!strcmp(c->name, CONTROL) != control)
			continue;
		/* Bootstrap loader (NULL): every loader delegates to it, so the
		 * injected calls resolve from any class that has one as ancestor. */
		jclass k = (*jni)->DefineClass(jni, c->name, NULL, (const jbyte *)c->bytes, (jsize)c->len);
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

bool jinst_runtime_define(JNIEnv *jni)
{
	if (!define_classes(jni, false) || !bridge_reads_runtime(jni))
		return false;
	JNINativeMethod natives[] = {{(char *)"dump0", (char *)"()V", (void *)native_dump},
	                             {(char *)"methodBase0", (char *)"(I)I", (void *)native_method_base}};
	jint r = (*jni)->RegisterNatives(jni, hooks, natives, 2);
	return !jinst_agent_java_failed(jni, "RegisterNatives") && r == 0 && define_classes(jni, true);
}
