/*
 * The natives test's JNI library: Natives.twice and Natives.mix found by
 * the VM's automatic lookup, Natives.registered bound by RegisterNatives
 * when the library loads (through the agent's prefix once jinst wrapped
 * it: the VM finds a non-native `registered` and tries the prefixes).
 */
#include <jni.h>

/* (what javah would declare) */
JNIEXPORT jint JNICALL Java_jinstnat_Natives_twice(JNIEnv *env, jclass cls, jint x);
JNIEXPORT jlong JNICALL Java_jinstnat_Natives_mix(JNIEnv *env, jobject self, jlong a, jint b);

JNIEXPORT jint JNICALL Java_jinstnat_Natives_twice(JNIEnv *env, jclass cls, jint x)
{
	(void)env, (void)cls;
	return 2 * x;
}

JNIEXPORT jlong JNICALL Java_jinstnat_Natives_mix(JNIEnv *env, jobject self, jlong a, jint b)
{
	(void)env, (void)self;
	return a * 31 + b;
}

static jint registered(JNIEnv *env, jclass cls, jint x)
{
	(void)env, (void)cls;
	return x + 7;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	(void)reserved;
	JNIEnv *env;
	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
		return JNI_ERR;
	jclass cls = (*env)->FindClass(env, "jinstnat/Natives");
	JNINativeMethod m = {"registered", "(I)I", (void *)registered};
	if (!cls || (*env)->RegisterNatives(env, cls, &m, 1) != 0)
		return JNI_ERR;
	return JNI_VERSION_1_8;
}
