/*
 * The join of two reference types in the inference's type lattice (JVMS
 * 4.10.1.2): null goes into anything, arrays of references merge by their
 * elements, other arrays and mixes give Object, two classes give their
 * nearest common super class. Only that last case needs the class
 * hierarchy, which the caller's jinst_hierarchy answers from class files
 * (it never loads a class); interfaces merge like Object, as the verifier
 * treats them.
 */
#include "infer_internal.h"

/* Copies name into the arena as a NUL-terminated string for the hierarchy. */
static const char *cstr(infer *I, const uint8_t *s, uint16_t len)
{
	char *p = jinst_arena_alloc(I->c->arena, (size_t)len + 1);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

/* Super classes of name, nearest first, into chain (at most cap). */
static int super_chain(infer *I, const char *name, const char **chain, int cap, bool *iface, int *n)
{
	*n = 0;
	*iface = false;
	const char *cur = name;
	while (cur && *n < cap) {
		chain[(*n)++] = cur;
		const char *super = NULL;
		bool is_iface = false;
		if (strcmp(cur, "java/lang/Object") == 0)
			break;
		if (!I->h || !I->h->lookup || I->h->lookup(I->h->ctx, cur, &super, &is_iface) != 0)
			return jinst_fail(I->diag, JINST_EHIERARCHY, JINST_NO_OFFSET, "class %s is unknown to the hierarchy", cur);
		if (cur == name)
			*iface = is_iface;
		cur = super ? super : "java/lang/Object";
	}
	return 0;
}

/* Common super class of two class (not array) names (JVMS 4.10.1.2 isAssignable, as HotSpot merges). */
static int merge_classes(infer *I, const vt *a, const vt *b, vt *out)
{
	const char *ca[64], *cb[64];
	int na, nb;
	bool ia, ib;
	const char *sa = cstr(I, a->name, a->name_length), *sb = cstr(I, b->name, b->name_length);
	if (!sa || !sb)
		return jinst_fail(I->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	int rc = super_chain(I, sa, ca, 64, &ia, &na);
	if (!rc)
		rc = super_chain(I, sb, cb, 64, &ib, &nb);
	if (rc)
		return rc;
	if (ia || ib) {
		*out = obj_str("java/lang/Object");
		return 0;
	}
	for (int i = 0; i < na; i++)
		for (int k = 0; k < nb; k++)
			if (strcmp(ca[i], cb[k]) == 0) {
				*out = obj((const uint8_t *)ca[i], (uint16_t)strlen(ca[i]));
				return 0;
			}
	*out = obj_str("java/lang/Object");
	return 0;
}

/* Merges two reference types to the most specific type both are assignable
 * to, as the verifier sees assignability (JVMS 4.10.1.2): null goes into
 * anything, arrays of references merge by element, other arrays and mixes of
 * arrays and classes give Object, uninitialized types merge only with
 * themselves (else top). */
int jinst_infer_merge_refs(infer *I, const vt *a, const vt *b, vt *out)
{
	if (a->tag != JINST_VT_OBJECT && a->tag != JINST_VT_NULL) {
		*out = I->top; /* uninitialized types merge only with themselves */
		return 0;
	}
	if (b->tag != JINST_VT_OBJECT && b->tag != JINST_VT_NULL) {
		*out = I->top;
		return 0;
	}
	if (a->tag == JINST_VT_NULL) {
		*out = *b; /* null is assignable to every class and array type */
		return 0;
	}
	if (b->tag == JINST_VT_NULL) {
		*out = *a;
		return 0;
	}
	bool aa = a->name[0] == '[', ba = b->name[0] == '[';
	if (aa && ba) {
		/* Arrays of references merge element-wise; anything else is Object
		 * (or Cloneable/Serializable, which the verifier treats as Object). */
		const uint8_t *ea = a->name + 1, *eb = b->name + 1;
		uint16_t la = (uint16_t)(a->name_length - 1), lb = (uint16_t)(b->name_length - 1);
		bool ra = ea[0] == 'L' || ea[0] == '[', rb = eb[0] == 'L' || eb[0] == '[';
		if (!ra || !rb) {
			*out = obj_str("java/lang/Object");
			return 0;
		}
		vt xa = ea[0] == 'L' ? obj(ea + 1, (uint16_t)(la - 2)) : obj(ea, la);
		vt xb = eb[0] == 'L' ? obj(eb + 1, (uint16_t)(lb - 2)) : obj(eb, lb);
		vt m;
		int rc = jinst_infer_merge_refs(I, &xa, &xb, &m);
		if (rc)
			return rc;
		rc = jinst_infer_array_of(I, m, out);
		return rc == JINST_ENOMEM ? jinst_fail(I->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory") : rc;
	}
	if (aa || ba) {
		*out = obj_str("java/lang/Object");
		return 0;
	}
	return merge_classes(I, a, b, out);
}

/* anewarray's type: an array of the class, or one more dimension. */
int jinst_infer_array_of(infer *I, vt e, vt *out)
{
	if (e.tag != JINST_VT_OBJECT || e.name_length > UINT16_MAX - 2)
		return JINST_EMALFORMED;
	bool arr = e.name[0] == '[';
	uint8_t *s = jinst_arena_alloc(I->c->arena, (size_t)e.name_length + 3);
	if (!s)
		return JINST_ENOMEM;
	size_t k = 0;
	s[k++] = '[';
	if (!arr)
		s[k++] = 'L';
	memcpy(s + k, e.name, e.name_length);
	k += e.name_length;
	if (!arr)
		s[k++] = ';';
	*out = obj(s, (uint16_t)k);
	return 0;
}
