/*
 * A pass of your own (include/jinst/pass.h): it counts the athrow
 * instructions of every method, keeps the figures for a report, and puts a
 * call before each athrow to a static method of the program's choosing,
 * Throws.thrown(int id), with the method's id from the instrumenter's table.
 * The instrumenter runs it beside the tracing pass, in one parse and one
 * write of each class.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "athrows.h"
#include "jinst/patch.h"

struct athrows {
	pthread_mutex_t lock;   /* classes are instrumented on many threads at once */
	athrows_method *methods;
	size_t count, cap;
	char owner[256];        /* the class holding thrown(I)V */
};

/* Keeps one method's figure. */
static int record(athrows *t, const jinst_pass_class *cls, const jinst_pass_method *m, uint32_t count)
{
	size_t need = strlen(jinst_pass_class_name(cls)) + strlen(jinst_pass_method_name(m)) +
	              strlen(jinst_pass_method_descriptor(m)) + 3;
	char *s = malloc(need);
	if (!s)
		return JINST_ENOMEM;
	pthread_mutex_lock(&t->lock);
	if (t->count == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		athrows_method *p = realloc(t->methods, cap * sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&t->lock);
			free(s);
			return JINST_ENOMEM;
		}
		t->methods = p;
		t->cap = cap;
	}
	/* "class.name descriptor": one allocation, split by the pointers */
	athrows_method *e = &t->methods[t->count++];
	strcpy(s, jinst_pass_class_name(cls));
	e->class_name = s;
	e->method = strcpy(s + strlen(s) + 1, jinst_pass_method_name(m));
	e->descriptor = strcpy((char *)e->method + strlen(e->method) + 1, jinst_pass_method_descriptor(m));
	e->athrows = count;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static int athrows_method_pass(void *state, jinst_pass_class *cls, jinst_pass_method *m, jinst_diag *diag)
{
	athrows *t = state;
	jinst_patch *p;
	int rc = jinst_patch_open(&p, jinst_pass_class_model(cls), jinst_pass_method_member(m), diag);
	if (rc)
		return rc;
	uint32_t n = jinst_patch_count(p), found = 0;
	for (uint32_t i = 0; i < n; i++)
		found += jinst_patch_opcode(p, i) == JINST_OP_ATHROW;
	if (!found) /* nothing to do: the method is not changed by this pass */
		return JINST_PASS_SKIP;
	uint32_t id;
	uint16_t ref;
	if ((rc = jinst_pass_method_id(m, 0, &id)) ||
	    (rc = jinst_pass_methodref(cls, t->owner, "thrown", "(I)V", &ref)))
		return jinst_pass_fail(diag, rc, "cannot add Throws.thrown to the constant pool");
	if (id > 32767)
		return jinst_pass_fail(diag, JINST_ETOOLARGE, "id %u does not fit sipush", id);
	/* sipush id; invokestatic thrown(I)V: the exception stays under the id */
	const uint8_t call[] = {JINST_OP_SIPUSH, (uint8_t)(id >> 8), (uint8_t)id,
	                        JINST_OP_INVOKESTATIC, (uint8_t)(ref >> 8), (uint8_t)ref};
	for (uint32_t i = 0; i < n && !rc; i++)
		if (jinst_patch_opcode(p, i) == JINST_OP_ATHROW)
			rc = jinst_patch_insert(p, jinst_patch_offset(p, i), JINST_BEFORE_INSIDE, call, sizeof(call), 1);
	if (!rc)
		rc = jinst_patch_commit(p, diag);
	/* The patcher declines what it does not handle (a method's type
	 * annotations, say): this pass leaves such a method alone, and the
	 * instrumenter reports it. */
	return rc ? rc : record(t, cls, m, found);
}

static void athrows_free(void *state)
{
	athrows *t = state;
	for (size_t i = 0; i < t->count; i++)
		free((char *)t->methods[i].class_name);
	free(t->methods);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

int athrows_new(jinst_pass *out, athrows **state, const char *owner)
{
	athrows *t = calloc(1, sizeof(*t));
	if (!t || strlen(owner) >= sizeof(t->owner) || pthread_mutex_init(&t->lock, NULL)) {
		free(t);
		return JINST_ENOMEM;
	}
	strcpy(t->owner, owner);
	memset(out, 0, sizeof(*out));
	out->version = JINST_PASS_VERSION;
	out->name = "athrows";
	out->state = t;
	out->method = athrows_method_pass;
	out->free = athrows_free;
	*state = t;
	return 0;
}

const athrows_method *athrows_methods(const athrows *t, size_t *count)
{
	*count = t->count;
	return t->methods;
}
