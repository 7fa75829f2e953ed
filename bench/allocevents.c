/*
 * bench/alloc's peer: the allocation events JVMTI offers instead of
 * bytecode instrumentation, at their most complete, in a small agent.
 *
 *   -agentpath:libjinst_allocevents.so=sampled,out=PATH
 *   -agentpath:libjinst_allocevents.so=vmobject,out=PATH
 *
 * sampled   SampledObjectAlloc with SetHeapSamplingInterval(0): the VM
 *           posts an event for every object the Java heap hands out
 *           (JVMTI 11), its size and class as the event gives them
 * vmobject  VMObjectAlloc: an event for each object the VM allocates
 *           itself (reflection, clone(), JNI), none for bytecode's
 *
 * Each event only adds its object to two counters, objects and bytes (no
 * site, no type: a useful tool would also walk the stack and name the
 * class), so the peer's cost is the least the events themselves cost. At
 * VM death: "objects<TAB>bytes" to PATH.
 */
#include <jni.h>
#include <jvmti.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static _Atomic long objects, bytes;
static char out_path[1024] = "allocevents.tsv";

static void record(jlong size)
{
	atomic_fetch_add_explicit(&objects, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&bytes, (long)size, memory_order_relaxed);
}

static void JNICALL on_sampled(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
			       jlong size)
{
	(void)jvmti, (void)jni, (void)thread, (void)object, (void)klass;
	record(size);
}

static void JNICALL on_vm_object(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
				 jlong size)
{
	(void)jvmti, (void)jni, (void)thread, (void)object, (void)klass;
	record(size);
}

static void JNICALL on_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti, (void)jni;
	FILE *f = fopen(out_path, "w");
	if (!f)
		return;
	fprintf(f, "%ld\t%ld\n", atomic_load(&objects), atomic_load(&bytes));
	fclose(f);
}

/* The options: "sampled" or "vmobject", then ",out=PATH". */
static int parse(const char *options, int *sampled)
{
	if (!options)
		return -1;
	const char *rest;
	if (strncmp(options, "sampled", 7) == 0) {
		*sampled = 1;
		rest = options + 7;
	} else if (strncmp(options, "vmobject", 8) == 0) {
		*sampled = 0;
		rest = options + 8;
	} else {
		return -1;
	}
	if (strncmp(rest, ",out=", 5) == 0)
		snprintf(out_path, sizeof out_path, "%s", rest + 5);
	else if (*rest)
		return -1;
	return 0;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	int sampled;
	jvmtiEnv *jvmti;
	if (parse(options, &sampled) != 0) {
		fprintf(stderr, "allocevents: options sampled|vmobject[,out=PATH], not '%s'\n", options ? options : "");
		return JNI_ERR;
	}
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK)
		return JNI_ERR;
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	if (sampled)
		caps.can_generate_sampled_object_alloc_events = 1;
	else
		caps.can_generate_vm_object_alloc_events = 1;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.SampledObjectAlloc = on_sampled;
	cb.VMObjectAlloc = on_vm_object;
	cb.VMDeath = on_death;
	jvmtiEvent event = sampled ? JVMTI_EVENT_SAMPLED_OBJECT_ALLOC : JVMTI_EVENT_VM_OBJECT_ALLOC;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE ||
	    (sampled && (*jvmti)->SetHeapSamplingInterval(jvmti, 0) != JVMTI_ERROR_NONE) ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, event, NULL) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL) != JVMTI_ERROR_NONE) {
		fprintf(stderr, "allocevents: the VM refused the %s events\n", sampled ? "sampled" : "VM object");
		return JNI_ERR;
	}
	return JNI_OK;
}
