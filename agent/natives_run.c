/*
 * The natives module in the VM: the prefix, which natives to wrap, and the
 * wrappers kept in every later version of a class.
 *
 * Start asks for can_set_native_method_prefix and sets JINST_NATIVE_PREFIX
 * (JVMTI SetNativeMethodPrefix, per environment: the VM chains the prefixes
 * of every agent that sets one). A VM that refuses either leaves the natives
 * as they are, with one line saying so, and the other modules run on. The
 * prefix stays set after `stop`: a wrapped native not bound yet is bound
 * through it whenever it is first called.
 *
 * The pass (instrument/natives.c) asks the filter here for each native it
 * may wrap. At a first load: yes once the prefix is set and the module is on
 * in this session. When the VM retransforms the class (the core's load hook
 * says which, jinst_agent_class_redefined): whether the class as the VM
 * holds it has `$$jinst$$m` of that descriptor (native, or wrapped in turn
 * by an agent after us), asked of the VM (GetClassMethods), since the bytes the VM hands in are those before the
 * first transformation and a version without the wrappers it has, or with
 * wrappers it has not, is refused. For the same reason the pass stays in
 * every later session's instrumenter once a class was wrapped (carry), and
 * `stop` hands back the original bytes with those wrappers (rewrap).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "natives.h"

static struct {
	atomic_int prefix_set;        /* SetNativeMethodPrefix done */
	atomic_int ever;              /* a class of this VM was given wrappers */
	atomic_long wrapped;          /* natives wrapped at first loads, this session */
	const jinst_instrument *wraps; /* the instrumenter of the session with natives on */
} nt;

/* Whether the VM's version of klass has PREFIXname of desc: native, or
 * wrapped in turn by an agent whose transformation follows ours (its
 * prefix then comes first: $$other$$$$jinst$$m). */
static bool vm_has_wrapper(jclass klass, const char *name, const char *desc)
{
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	jint count = 0;
	jmethodID *methods = NULL;
	if (!klass || (*jvmti)->GetClassMethods(jvmti, klass, &count, &methods) != JVMTI_ERROR_NONE)
		return false;
	size_t p = strlen(JINST_NATIVE_PREFIX);
	bool found = false;
	for (jint i = 0; i < count && !found; i++) {
		char *n = NULL, *sig = NULL;
		if ((*jvmti)->GetMethodName(jvmti, methods[i], &n, &sig, NULL) == JVMTI_ERROR_NONE)
			found = !strncmp(n, JINST_NATIVE_PREFIX, p) && !strcmp(n + p, name) && !strcmp(sig, desc);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)n);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
	return found;
}

/* ctx: the session's instrumenter when the module is on in it, else NULL. */
static bool filter(void *ctx, const char *class_name, const char *name, const char *desc, bool retransform)
{
	(void)class_name;
	/* (the VM is asked only once some class has wrappers: one
	 * GetClassMethods walk per native of each class retransformed) */
	if (retransform)
		return atomic_load(&nt.ever) && vm_has_wrapper(jinst_agent_class_redefined(), name, desc);
	if (!ctx || !atomic_load(&nt.prefix_set))
		return false;
	atomic_store(&nt.ever, 1);
	atomic_fetch_add(&nt.wrapped, 1);
	return true;
}

static int natives_add_passes(const void *config, jinst_instrument *ins, jinst_diag *diag)
{
	const jinst_natives_config *k = config;
	jinst_natives_options o = JINST_NATIVES_OPTIONS_INIT;
	o.flags = k->intrinsics ? JINST_NATIVES_INTRINSICS : 0;
	o.filter = filter;
	o.ctx = ins;
	nt.wraps = ins;
	return jinst_instrument_set_natives(ins, &o, diag);
}

void jinst_natives_carry(jinst_instrument *ins)
{
	bool on = nt.wraps == ins;
	nt.wraps = NULL; /* (the next instrumenter may take this one's address) */
	if (on || !atomic_load(&nt.ever))
		return;
	jinst_natives_options o = JINST_NATIVES_OPTIONS_INIT;
	o.filter = filter;
	jinst_diag diag;
	if (jinst_instrument_set_natives(ins, &o, &diag) < 0)
		jinst_agent_log("natives: wrapped classes cannot be retransformed: %s", diag.message);
}

int jinst_natives_rewrap(const unsigned char *bytes, jint len, uint8_t **out, size_t *out_len)
{
	*out = NULL;
	*out_len = 0;
	if (!atomic_load(&nt.ever))
		return 1;
	jinst_class *c = NULL;
	jinst_natives_options o = JINST_NATIVES_OPTIONS_INIT;
	o.filter = filter;
	uint32_t wrapped = 0;
	int r = jinst_class_parse(&c, bytes, (size_t)len, NULL, NULL, NULL);
	if (!r)
		r = jinst_instrument_wrap_natives(&wrapped, c, &o, true, NULL);
	if (!r && wrapped)
		r = jinst_class_write(c, NULL, out, out_len, NULL);
	jinst_class_free(c);
	return r ? r : wrapped ? 0 : 1;
}

static bool natives_start(const void *config, JNIEnv *jni)
{
	(void)config, (void)jni;
	/* stop says what this session wrapped (the wrappers of the ones
	 * before stay, and are not counted again) */
	atomic_store(&nt.wrapped, 0);
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_set_native_method_prefix = 1;
	if (jinst_agent_jvmti_failed((*jvmti)->AddCapabilities(jvmti, &caps), "AddCapabilities(can_set_native_method_prefix)") ||
	    jinst_agent_jvmti_failed((*jvmti)->SetNativeMethodPrefix(jvmti, JINST_NATIVE_PREFIX), "SetNativeMethodPrefix")) {
		jinst_agent_log("natives: the VM refuses the native method prefix: native methods left as they are");
		return true;
	}
	atomic_store(&nt.prefix_set, 1);
	return true;
}

static void natives_stop(const void *config, JNIEnv *jni)
{
	(void)config, (void)jni;
	jinst_agent_log("natives: %ld native methods wrapped at their class's first load", atomic_load(&nt.wrapped));
}

const jinst_agent_module jinst_natives_module = {
	JINST_NATIVES_MODULE_OPTIONS,
	.add_passes = natives_add_passes,
	.start = natives_start,
	.stop = natives_stop,
	.restartable = true,
};
