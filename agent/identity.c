/*
 * The identity of classes loaded before the agent attached.
 *
 * A class's identity is the XXH64 of its bytes as first loaded (the
 * marker, the coverage data's records), which is what a report matches
 * against the class files on disk. A class loaded before the attach never
 * went through the load hook: the bytes the VM hands to its first
 * retransformation are rebuilt from its internal form (JVMTI
 * RetransformClasses), equal in meaning but rarely byte for byte, so their
 * hash names no class file, and the coverage of the whole program would be
 * reported as of unknown classes.
 *
 * So before the retransformation at attach, for each picked class not seen
 * before, the agent reads the class file the class came from, as its own
 * loader finds it (Class.getResourceAsStream("/NAME.class"), which also
 * reads the JDK's modules), and keeps it with its shape: the set of its
 * methods' names, descriptors and code lengths. In the load hook, a rebuilt
 * class of the same shape is instrumented from that class file instead of
 * the rebuilt bytes, and takes its identity: the rebuilt bytes list the
 * methods in the VM's order, not the file's, and the coverage placement
 * numbers probes in the file's order. (can_maintain_original_method_order
 * would keep the file's order, but HotSpot grants it at startup only, and
 * it changes the order every JVMTI agent in the VM sees.)
 * Retransforming from other bytes of the same shape is what JVMTI allows
 * (HotSpot compares methods sorted by name). A class whose shape differs
 * (the file on the class path is another version, another agent changed
 * the class) is instrumented from its rebuilt bytes and keeps their hash:
 * a report then says its identity matches no class file, never reads its
 * probes against the wrong code. The files are kept while the VM runs, for
 * the sessions after a `stop`.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "core.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct learned {
	struct learned *next;
	char *name;
	uint64_t identity, shape;
	uint8_t *bytes;   /* the class file */
	size_t len;
} learned;

static struct {
	pthread_mutex_t lock;
	learned *list;
	jmethodID get_resource, read, close;
} id = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The set of the methods' names, descriptors and code lengths, hashed (a
 * sum of one hash per method: the order does not count); 0 when the bytes
 * do not parse. */
uint64_t jinst_identity_shape(const uint8_t *bytes, size_t len)
{
	jinst_class *c;
	if (jinst_class_parse(&c, bytes, len, NULL, NULL, NULL))
		return 0;
	uint64_t sum = jinst_class_method_count(c);
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		uint16_t ln, ld;
		const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(m), &ln);
		const uint8_t *d = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &ld);
		jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		jinst_code *code = NULL;
		uint32_t cl = a && !jinst_attr_decode(c, a, (void **)&code, NULL) && code ? code->code_length : 0;
		uint64_t h = 0xcbf29ce484222325u;
		for (uint16_t k = 0; n && k < ln; k++)
			h = (h ^ n[k]) * 0x100000001b3u;
		h = (h ^ '(') * 0x100000001b3u;
		for (uint16_t k = 0; d && k < ld; k++)
			h = (h ^ d[k]) * 0x100000001b3u;
		h = (h ^ cl) * 0x100000001b3u;
		sum += h ^ (h >> 29);
	}
	jinst_class_free(c);
	return sum ? sum : 1;
}

static bool find_methods(JNIEnv *jni)
{
	if (id.close)
		return true;
	jclass k = (*jni)->FindClass(jni, "java/lang/Class");
	jclass in = (*jni)->FindClass(jni, "java/io/InputStream");
	if (k)
		id.get_resource = (*jni)->GetMethodID(jni, k, "getResourceAsStream", "(Ljava/lang/String;)Ljava/io/InputStream;");
	if (in && id.get_resource && (id.read = (*jni)->GetMethodID(jni, in, "read", "([BII)I")))
		id.close = (*jni)->GetMethodID(jni, in, "close", "()V");
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (in)
		(*jni)->DeleteLocalRef(jni, in);
	return !jinst_agent_java_failed(jni, "Class.getResourceAsStream") && id.close;
}

/* The whole stream into a malloc'ed buffer (*len bytes); NULL on failure. */
static uint8_t *read_all(JNIEnv *jni, jobject stream, jbyteArray chunk, size_t *len)
{
	size_t cap = 0;
	uint8_t *buf = NULL;
	*len = 0;
	for (;;) {
		jint n = (*jni)->CallIntMethod(jni, stream, id.read, chunk, 0, (jint)65536);
		if ((*jni)->ExceptionCheck(jni) || n < 0 || *len + (size_t)n > ((size_t)1 << 30))
			break;
		if (*len + (size_t)n > cap) {
			cap = (*len + (size_t)n) * 2;
			uint8_t *b = realloc(buf, cap);
			if (!b)
				break;
			buf = b;
		}
		(*jni)->GetByteArrayRegion(jni, chunk, 0, n, (jbyte *)buf + *len);
		*len += (size_t)n;
	}
	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		free(buf);
		return NULL;
	}
	return buf;
}

static bool learn_one(JNIEnv *jni, jclass k, const char *name, jbyteArray chunk)
{
	char path[1100];
	snprintf(path, sizeof path, "/%s.class", name);
	jstring s = (*jni)->NewStringUTF(jni, path);
	jobject stream = s ? (*jni)->CallObjectMethod(jni, k, id.get_resource, s) : NULL;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (s)
		(*jni)->DeleteLocalRef(jni, s);
	if (!stream)
		return false;
	size_t len;
	uint8_t *bytes = read_all(jni, stream, chunk, &len);
	(*jni)->CallVoidMethod(jni, stream, id.close);
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	(*jni)->DeleteLocalRef(jni, stream);
	learned *l = bytes ? calloc(1, sizeof *l) : NULL;
	if (l && (l->name = strdup(name))) {
		l->identity = jinst_instrument_identity(bytes, len);
		l->shape = jinst_identity_shape(bytes, len);
		l->bytes = bytes;
		l->len = len;
		pthread_mutex_lock(&id.lock);
		l->next = id.list;
		id.list = l;
		pthread_mutex_unlock(&id.lock);
		return true;
	}
	free(l);
	free(bytes);
	return false;
}

void jinst_identity_learn(JNIEnv *jni, jclass *classes, size_t count, bool (*seen)(const char *name))
{
	if (!count || !find_methods(jni))
		return;
	jbyteArray chunk = (*jni)->NewByteArray(jni, 65536);
	if (!chunk) {
		jinst_agent_java_failed(jni, "new byte[65536]");
		return;
	}
	size_t asked = 0, found = 0;
	for (size_t i = 0; i < count; i++) {
		char *sig = NULL;
		jvmtiEnv *jvmti = jinst_the_core.jvmti;
		if ((*jvmti)->GetClassSignature(jvmti, classes[i], &sig, NULL) != JVMTI_ERROR_NONE || !sig)
			continue;
		size_t n = strlen(sig);
		if (n >= 3 && n < 1024 && sig[0] == 'L') {
			sig[n - 1] = 0;
			if (!seen(sig + 1) && !jinst_identity_find(sig + 1, NULL, 0, NULL, NULL, NULL)) {
				asked++;
				found += learn_one(jni, classes[i], sig + 1, chunk);
			}
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	}
	(*jni)->DeleteLocalRef(jni, chunk);
	if (found < asked)
		jinst_agent_log("no class file found for %zu of %zu classes loaded before the agent: they keep the "
		                "identity of the bytes the VM rebuilds",
		                asked - found, asked);
}

bool jinst_identity_find(const char *name, const uint8_t *bytes, size_t len, uint64_t *identity,
                         const uint8_t **file, size_t *file_len)
{
	const learned *found = NULL;
	pthread_mutex_lock(&id.lock);
	for (const learned *l = id.list; l && !found; l = l->next)
		if (!strcmp(l->name, name))
			found = l;
	pthread_mutex_unlock(&id.lock);
	if (!found || !bytes)
		return found != NULL;
	if (jinst_identity_shape(bytes, len) != found->shape)
		return false;
	*identity = found->identity;
	*file = found->bytes;
	*file_len = found->len;
	return true;
}
