/*
 * Filters: the code a compiler generates that JaCoCo 0.8.6 leaves out of
 * its report (org.jacoco.core.internal.analysis.filter). Each one names the
 * JaCoCo filter it reproduces; docs/coverage-analysis.md lists them, and
 * those not done yet. These are the method-level ones: a filtered method has
 * no instruction left, so the report does not list it.
 *
 * Patterns are matched on the instructions alone: labels, line numbers and
 * frames are not instructions here, as JaCoCo's matchers skip them.
 */
#include "internal.h"

static bool utf8_is(jinst_class *cls, uint16_t index, const char *s)
{
	uint16_t len;
	const uint8_t *b = jinst_cp_utf8(cls, index, &len);
	return b && len == strlen(s) && memcmp(b, s, len) == 0;
}

/* Whether bytes[0..len) equal prefix + name + suffix. */
static bool utf8_is3(const uint8_t *b, uint16_t len, const char *prefix, const uint8_t *name, uint16_t nlen,
                     const char *suffix)
{
	size_t p = strlen(prefix), q = strlen(suffix);
	return b && len == p + nlen + q && memcmp(b, prefix, p) == 0 && memcmp(b + p, name, nlen) == 0 &&
	       memcmp(b + p + nlen, suffix, q) == 0;
}

static bool super_is(jinst_class *cls, const char *name)
{
	uint16_t sc = jinst_class_super_class(cls), len;
	const uint8_t *b = sc ? jinst_cp_name(cls, sc, &len) : NULL;
	return b && len == strlen(name) && memcmp(b, name, len) == 0;
}

static bool ref_is(jinst_class *cls, uint16_t index, const char *owner, const char *name, const char *desc)
{
	jinst_cp_entry ref, nat;
	if (jinst_cp_get(cls, index, &ref) || (ref.tag != JINST_CP_METHODREF && ref.tag != JINST_CP_INTERFACE_METHODREF))
		return false;
	if (jinst_cp_get(cls, ref.u.ref.name_and_type_index, &nat))
		return false;
	uint16_t len;
	const uint8_t *o = jinst_cp_name(cls, ref.u.ref.class_index, &len);
	if (owner && !(o && len == strlen(owner) && memcmp(o, owner, len) == 0))
		return false;
	return utf8_is(cls, nat.u.nat.name_index, name) && utf8_is(cls, nat.u.nat.descriptor_index, desc);
}

static bool indy_named(jinst_class *cls, uint16_t index, const char *name)
{
	jinst_cp_entry e, nat;
	if (jinst_cp_get(cls, index, &e) || e.tag != JINST_CP_INVOKE_DYNAMIC)
		return false;
	return !jinst_cp_get(cls, e.u.dyn.name_and_type_index, &nat) && utf8_is(cls, nat.u.nat.name_index, name);
}

static bool is_aload(const jinst_insn *in, int32_t var)
{
	if (in->opcode == JINST_OP_ALOAD)
		return var < 0 || in->operand == var;
	if (in->opcode >= JINST_OP_ALOAD_0 && in->opcode <= JINST_OP_ALOAD_3)
		return var < 0 || in->opcode - JINST_OP_ALOAD_0 == var;
	return false;
}

static bool is_iload(const jinst_insn *in)
{
	return in->opcode == JINST_OP_ILOAD || (in->opcode >= JINST_OP_ILOAD_0 && in->opcode <= JINST_OP_ILOAD_3);
}

typedef struct method_id {
	jinst_class *cls;
	uint16_t access;
	uint16_t name, desc;
} method_id;

/* SyntheticFilter (lambda bodies stay) and BridgeFilter. */
static bool synthetic_or_bridge(const method_id *m)
{
	uint16_t len;
	const uint8_t *name = jinst_cp_utf8(m->cls, m->name, &len);
	if (m->access & JINST_ACC_BRIDGE)
		return true;
	if (!(m->access & JINST_ACC_SYNTHETIC))
		return false;
	return !(name && len >= 7 && memcmp(name, "lambda$", 7) == 0);
}

/* EnumFilter: values() and valueOf(String) of an enum. */
static bool enum_members(const method_id *m)
{
	if (!super_is(m->cls, "java/lang/Enum"))
		return false;
	uint16_t clen, dlen;
	const uint8_t *cn = jinst_class_name(m->cls, &clen);
	const uint8_t *d = jinst_cp_utf8(m->cls, m->desc, &dlen);
	if (utf8_is(m->cls, m->name, "values"))
		return utf8_is3(d, dlen, "()[L", cn, clen, ";");
	if (utf8_is(m->cls, m->name, "valueOf"))
		return utf8_is3(d, dlen, "(Ljava/lang/String;)L", cn, clen, ";");
	return false;
}

/* PrivateEmptyNoArgConstructorFilter: private C() { super(); }. */
static bool private_empty_ctor(const method_id *m, const cov_flow *f)
{
	if (!(m->access & JINST_ACC_PRIVATE) || !utf8_is(m->cls, m->name, "<init>") || !utf8_is(m->cls, m->desc, "()V"))
		return false;
	uint16_t sc = jinst_class_super_class(m->cls), len;
	const uint8_t *sn = sc ? jinst_cp_name(m->cls, sc, &len) : NULL;
	char super_name[512];
	if (!sn || len >= sizeof super_name)
		return false;
	memcpy(super_name, sn, len);
	super_name[len] = 0;
	return f->n == 3 && is_aload(&f->insns[0], 0) && f->insns[1].opcode == JINST_OP_INVOKESPECIAL &&
	       ref_is(m->cls, (uint16_t)f->insns[1].operand, super_name, "<init>", "()V") &&
	       f->insns[2].opcode == JINST_OP_RETURN;
}

/* EnumEmptyConstructorFilter: an enum's E(String, int) { super(name, ordinal); }. */
static bool enum_empty_ctor(const method_id *m, const cov_flow *f)
{
	if (!super_is(m->cls, "java/lang/Enum") || !utf8_is(m->cls, m->name, "<init>") ||
	    !utf8_is(m->cls, m->desc, "(Ljava/lang/String;I)V"))
		return false;
	return f->n >= 5 && is_aload(&f->insns[0], 0) && is_aload(&f->insns[1], -1) && is_iload(&f->insns[2]) &&
	       f->insns[3].opcode == JINST_OP_INVOKESPECIAL &&
	       ref_is(m->cls, (uint16_t)f->insns[3].operand, "java/lang/Enum", "<init>", "(Ljava/lang/String;I)V") &&
	       f->insns[4].opcode == JINST_OP_RETURN;
}

/* RecordsFilter: equals, hashCode and toString made by ObjectMethods. */
static bool record_members(const method_id *m, const cov_flow *f)
{
	if (!super_is(m->cls, "java/lang/Record") || f->n < 3 || !is_aload(&f->insns[0], 0))
		return false;
	const jinst_insn *in = f->insns;
	if (utf8_is(m->cls, m->name, "equals") && utf8_is(m->cls, m->desc, "(Ljava/lang/Object;)Z"))
		return f->n >= 4 && is_aload(&in[1], -1) && in[2].opcode == JINST_OP_INVOKEDYNAMIC &&
		       indy_named(m->cls, (uint16_t)in[2].operand, "equals") && in[3].opcode == JINST_OP_IRETURN;
	if (utf8_is(m->cls, m->name, "hashCode") && utf8_is(m->cls, m->desc, "()I"))
		return in[1].opcode == JINST_OP_INVOKEDYNAMIC && indy_named(m->cls, (uint16_t)in[1].operand, "hashCode") &&
		       in[2].opcode == JINST_OP_IRETURN;
	if (utf8_is(m->cls, m->name, "toString") && utf8_is(m->cls, m->desc, "()Ljava/lang/String;"))
		return in[1].opcode == JINST_OP_INVOKEDYNAMIC && indy_named(m->cls, (uint16_t)in[1].operand, "toString") &&
		       in[2].opcode == JINST_OP_ARETURN;
	return false;
}

/* Whether an annotation type's simple name (after the last '/' or '$')
 * contains "Generated". */
static bool generated_type(jinst_class *cls, uint16_t type_index)
{
	uint16_t len;
	const uint8_t *d = jinst_cp_utf8(cls, type_index, &len);
	if (!d)
		return false;
	uint16_t from = 0;
	for (uint16_t k = 0; k < len; k++)
		if (d[k] == '/' || d[k] == '$')
			from = (uint16_t)(k + 1);
	for (uint16_t k = from; k + 9 <= len; k++)
		if (!memcmp(d + k, "Generated", 9))
			return true;
	return false;
}

static bool generated_in(jinst_class *cls, jinst_attr_list *attrs)
{
	for (uint16_t k = 0; attrs && k < attrs->count; k++) {
		jinst_attr *a = &attrs->items[k];
		void *model = NULL;
		if ((a->kind != JINST_ATTR_RUNTIME_VISIBLE_ANNOTATIONS && a->kind != JINST_ATTR_RUNTIME_INVISIBLE_ANNOTATIONS) ||
		    jinst_attr_decode(cls, a, &model, NULL) || !model)
			continue;
		const jinst_annotations *an = model;
		for (uint16_t i = 0; i < an->count; i++)
			if (generated_type(cls, an->items[i].type_index))
				return true;
	}
	return false;
}

/* AnnotationGeneratedFilter: the class or the method carries an annotation
 * named *Generated* (retention CLASS or RUNTIME: lombok's, Immutables'...). */
static bool annotated_generated(jinst_class *cls, jinst_member *method)
{
	return generated_in(cls, jinst_class_attrs(cls)) || generated_in(cls, jinst_member_attrs(method));
}

void cov_filter(jinst_class *cls, jinst_member *method, const cov_flow *f, cov_filtered *out)
{
	method_id m = {cls, jinst_member_access_flags(method), jinst_member_name_index(method),
	               jinst_member_descriptor_index(method)};
	if (synthetic_or_bridge(&m) || enum_members(&m) || private_empty_ctor(&m, f) || enum_empty_ctor(&m, f) ||
	    record_members(&m, f) || annotated_generated(cls, method)) {
		memset(out->ignore, 1, f->n);
		return;
	}
	cov_filter_code(cls, f, out);
}
