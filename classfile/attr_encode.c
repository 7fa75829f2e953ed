/*
 * Attribute encoding (the other half of attr.c): a model back into
 * attribute info bytes, for attributes that were modified or when the
 * writer is asked to encode from the models. One function per attribute
 * kind, dispatched through a table by kind built from the same rows as the
 * decoders' (JINST_ATTR_MODELS in internal.h), over helpers for the shared
 * structures (annotations, element values, verification types).
 */
#include "internal.h"

typedef struct enc {
	jinst_class *c;
	jinst_buf *o;
	bool from_model; /* Code: decode and encode the instructions too */
	jinst_diag *diag;
} enc;

/* ---- shared structures ----------------------------------------------------------- */

static void enc_element_value(jinst_buf *o, const jinst_element_value *v);

static void enc_annotation(jinst_buf *o, const jinst_annotation *a)
{
	jinst_buf_u2(o, a->type_index);
	jinst_buf_u2(o, a->count);
	for (uint32_t i = 0; i < a->count; i++) {
		jinst_buf_u2(o, a->pairs[i].name_index);
		enc_element_value(o, &a->pairs[i].value);
	}
}

static void enc_element_value(jinst_buf *o, const jinst_element_value *v)
{
	jinst_buf_u1(o, v->tag);
	switch (v->tag) {
	case 'e':
		jinst_buf_u2(o, v->u.enum_const.type_name_index);
		jinst_buf_u2(o, v->u.enum_const.const_name_index);
		break;
	case '@':
		enc_annotation(o, &v->u.annotation);
		break;
	case '[':
		jinst_buf_u2(o, v->u.array.count);
		for (uint32_t i = 0; i < v->u.array.count; i++)
			enc_element_value(o, &v->u.array.values[i]);
		break;
	case 'c':
		jinst_buf_u2(o, v->u.class_info_index);
		break;
	default:
		jinst_buf_u2(o, v->u.const_value_index);
		break;
	}
}

static void enc_annotations(jinst_buf *o, const jinst_annotations *as)
{
	jinst_buf_u2(o, as->count);
	for (uint32_t i = 0; i < as->count; i++)
		enc_annotation(o, &as->items[i]);
}

static void put_index_list(jinst_buf *o, uint16_t n, const uint16_t *items)
{
	jinst_buf_u2(o, n);
	for (uint32_t i = 0; i < n; i++)
		jinst_buf_u2(o, items[i]);
}

static void enc_vtypes(jinst_buf *o, const jinst_vtype *v, uint16_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		jinst_buf_u1(o, v[i].tag);
		if (v[i].tag == JINST_VT_OBJECT || v[i].tag == JINST_VT_UNINITIALIZED)
			jinst_buf_u2(o, v[i].value);
	}
}

static void enc_stack_map(jinst_buf *o, const jinst_stack_map *m)
{
	jinst_buf_u2(o, m->count);
	for (uint32_t i = 0; i < m->count; i++) {
		const jinst_frame *f = &m->frames[i];
		jinst_buf_u1(o, f->type);
		if (f->type <= 63)
			continue;
		if (f->type <= 127) {
			enc_vtypes(o, f->stack, 1);
			continue;
		}
		jinst_buf_u2(o, f->offset_delta);
		if (f->type == 247) {
			enc_vtypes(o, f->stack, 1);
		} else if (f->type >= 252 && f->type <= 254) {
			enc_vtypes(o, f->locals, f->nlocals);
		} else if (f->type == 255) {
			jinst_buf_u2(o, f->nlocals);
			enc_vtypes(o, f->locals, f->nlocals);
			jinst_buf_u2(o, f->nstack);
			enc_vtypes(o, f->stack, f->nstack);
		}
	}
}

/* JVMS 4.7.20.1: the target_info union, by target_type. */
static void enc_type_target(jinst_buf *o, const jinst_type_annotation *t)
{
	switch (t->target_type) {
	case 0x00: case 0x01: case 0x16: jinst_buf_u1(o, (uint8_t)t->a); break;
	case 0x10: case 0x17: case 0x42: case 0x43: case 0x44: case 0x45: case 0x46: jinst_buf_u2(o, t->a); break;
	case 0x11: case 0x12: jinst_buf_u1(o, (uint8_t)t->a); jinst_buf_u1(o, (uint8_t)t->b); break;
	case 0x40: case 0x41:
		jinst_buf_u2(o, t->table_length);
		for (uint32_t k = 0; k < t->table_length; k++) {
			jinst_buf_u2(o, t->table[k].start_pc);
			jinst_buf_u2(o, t->table[k].length);
			jinst_buf_u2(o, t->table[k].index);
		}
		break;
	case 0x47: case 0x48: case 0x49: case 0x4A: case 0x4B:
		jinst_buf_u2(o, t->a);
		jinst_buf_u1(o, (uint8_t)t->b);
		break;
	default: break;
	}
}

static void enc_type_annotation(jinst_buf *o, const jinst_type_annotation *t)
{
	jinst_buf_u1(o, t->target_type);
	enc_type_target(o, t);
	jinst_buf_u1(o, t->path_length);
	for (uint32_t k = 0; k < t->path_length; k++) {
		jinst_buf_u1(o, t->path[k].kind);
		jinst_buf_u1(o, t->path[k].argument_index);
	}
	enc_annotation(o, &t->annotation);
}

/* The code decoded and encoded again, which must give as many bytes. */
static int enc_instructions(jinst_class *c, const jinst_code *code, jinst_buf *o, jinst_diag *diag)
{
	jinst_buf_reserve(o, code->code_length + 16);
	jinst_insn *insns;
	uint32_t n;
	int rc = jinst_code_decode(c, code, &insns, &n, diag);
	if (rc)
		return rc;
	size_t at = o->len;
	rc = jinst_code_encode(c, insns, n, o, diag);
	if (rc)
		return rc;
	if (o->len - at != code->code_length)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "code re-encoded to %zu bytes, not %u",
		                  o->len - at, (unsigned)code->code_length);
	return 0;
}

/* ---- one encoder per attribute kind ---------------------------------------------- */

static int enc_code_attr(enc *e, const void *model)
{
	const jinst_code *code = model;
	jinst_class *c = e->c;
	jinst_buf *o = e->o;
	if (c->old_code_layout) {
		jinst_buf_u1(o, (uint8_t)code->max_stack);
		jinst_buf_u1(o, (uint8_t)code->max_locals);
		jinst_buf_u2(o, (uint16_t)code->code_length);
	} else {
		jinst_buf_u2(o, code->max_stack);
		jinst_buf_u2(o, code->max_locals);
		jinst_buf_u4(o, code->code_length);
	}
	if (e->from_model) {
		int rc = enc_instructions(c, code, o, e->diag);
		if (rc)
			return rc;
	} else {
		jinst_buf_bytes(o, code->code, code->code_length);
	}
	jinst_buf_u2(o, code->exception_count);
	for (uint32_t i = 0; i < code->exception_count; i++) {
		const jinst_exception_entry *x = &code->exceptions[i];
		jinst_buf_u2(o, x->start_pc);
		jinst_buf_u2(o, x->end_pc);
		jinst_buf_u2(o, x->handler_pc);
		jinst_buf_u2(o, x->catch_type);
	}
	return jinst_attrs_write(c, (jinst_attr_list *)&code->attrs, e->from_model, o, e->diag);
}

static int enc_stack_map_table(enc *e, const void *model)
{
	enc_stack_map(e->o, model);
	return 0;
}

/* ConstantValue, Signature, SourceFile, ModuleMainClass, NestHost. */
static int enc_index(enc *e, const void *model)
{
	jinst_buf_u2(e->o, ((const jinst_attr_index *)model)->index);
	return 0;
}

/* Exceptions, NestMembers, PermittedSubclasses, ModulePackages. */
static int enc_index_list(enc *e, const void *model)
{
	const jinst_index_list *x = model;
	put_index_list(e->o, x->count, x->items);
	return 0;
}

static int enc_inner_classes(enc *e, const void *model)
{
	const jinst_inner_classes *x = model;
	jinst_buf *o = e->o;
	jinst_buf_u2(o, x->count);
	for (uint32_t i = 0; i < x->count; i++) {
		jinst_buf_u2(o, x->items[i].inner_class_info_index);
		jinst_buf_u2(o, x->items[i].outer_class_info_index);
		jinst_buf_u2(o, x->items[i].inner_name_index);
		jinst_buf_u2(o, x->items[i].inner_class_access_flags);
	}
	return 0;
}

static int enc_enclosing_method(enc *e, const void *model)
{
	const jinst_enclosing_method *x = model;
	jinst_buf_u2(e->o, x->class_index);
	jinst_buf_u2(e->o, x->method_index);
	return 0;
}

/* SourceDebugExtension. */
static int enc_blob(enc *e, const void *model)
{
	const jinst_blob *x = model;
	jinst_buf_bytes(e->o, x->bytes, x->length);
	return 0;
}

static int enc_line_numbers(enc *e, const void *model)
{
	const jinst_line_numbers *x = model;
	jinst_buf *o = e->o;
	jinst_buf_u2(o, x->count);
	for (uint32_t i = 0; i < x->count; i++) {
		jinst_buf_u2(o, x->items[i].start_pc);
		jinst_buf_u2(o, x->items[i].line_number);
	}
	return 0;
}

/* LocalVariableTable, LocalVariableTypeTable. */
static int enc_local_variables(enc *e, const void *model)
{
	const jinst_local_variables *x = model;
	jinst_buf *o = e->o;
	jinst_buf_u2(o, x->count);
	for (uint32_t i = 0; i < x->count; i++) {
		const jinst_local_variable *v = &x->items[i];
		jinst_buf_u2(o, v->start_pc);
		jinst_buf_u2(o, v->length);
		jinst_buf_u2(o, v->name_index);
		jinst_buf_u2(o, v->descriptor_index);
		jinst_buf_u2(o, v->index);
	}
	return 0;
}

static int enc_annotations_attr(enc *e, const void *model)
{
	enc_annotations(e->o, model);
	return 0;
}

static int enc_parameter_annotations(enc *e, const void *model)
{
	const jinst_parameter_annotations *x = model;
	jinst_buf_u1(e->o, x->count);
	for (uint32_t i = 0; i < x->count; i++)
		enc_annotations(e->o, &x->parameters[i]);
	return 0;
}

static int enc_type_annotations(enc *e, const void *model)
{
	const jinst_type_annotations *x = model;
	jinst_buf_u2(e->o, x->count);
	for (uint32_t i = 0; i < x->count; i++)
		enc_type_annotation(e->o, &x->items[i]);
	return 0;
}

static int enc_annotation_default(enc *e, const void *model)
{
	enc_element_value(e->o, model);
	return 0;
}

static int enc_bootstrap_methods(enc *e, const void *model)
{
	const jinst_bootstrap_methods *x = model;
	jinst_buf_u2(e->o, x->count);
	for (uint32_t i = 0; i < x->count; i++) {
		jinst_buf_u2(e->o, x->items[i].method_ref);
		put_index_list(e->o, x->items[i].arg_count, x->items[i].args);
	}
	return 0;
}

static int enc_method_parameters(enc *e, const void *model)
{
	const jinst_method_parameters *x = model;
	jinst_buf_u1(e->o, x->count);
	for (uint32_t i = 0; i < x->count; i++) {
		jinst_buf_u2(e->o, x->items[i].name_index);
		jinst_buf_u2(e->o, x->items[i].access_flags);
	}
	return 0;
}

/* The exports or the opens of a Module: the same layout. */
static void enc_module_packages(jinst_buf *o, uint16_t n, const jinst_module_export *l)
{
	jinst_buf_u2(o, n);
	for (uint32_t i = 0; i < n; i++) {
		jinst_buf_u2(o, l[i].index);
		jinst_buf_u2(o, l[i].flags);
		put_index_list(o, l[i].to_count, l[i].to);
	}
}

static int enc_module(enc *e, const void *model)
{
	const jinst_module *x = model;
	jinst_buf *o = e->o;
	jinst_buf_u2(o, x->module_name_index);
	jinst_buf_u2(o, x->module_flags);
	jinst_buf_u2(o, x->module_version_index);
	jinst_buf_u2(o, x->requires_count);
	for (uint32_t i = 0; i < x->requires_count; i++) {
		jinst_buf_u2(o, x->requires[i].requires_index);
		jinst_buf_u2(o, x->requires[i].requires_flags);
		jinst_buf_u2(o, x->requires[i].requires_version_index);
	}
	enc_module_packages(o, x->exports_count, x->exports);
	enc_module_packages(o, x->opens_count, x->opens);
	put_index_list(o, x->uses_count, x->uses);
	jinst_buf_u2(o, x->provides_count);
	for (uint32_t i = 0; i < x->provides_count; i++) {
		jinst_buf_u2(o, x->provides[i].provides_index);
		put_index_list(o, x->provides[i].with_count, x->provides[i].with);
	}
	return 0;
}

static int enc_record(enc *e, const void *model)
{
	const jinst_record *x = model;
	jinst_buf_u2(e->o, x->count);
	for (uint32_t i = 0; i < x->count; i++) {
		jinst_buf_u2(e->o, x->components[i].name_index);
		jinst_buf_u2(e->o, x->components[i].descriptor_index);
		int rc = jinst_attrs_write(e->c, &x->components[i].attrs, e->from_model, e->o, e->diag);
		if (rc)
			return rc;
	}
	return 0;
}

/* The encoder of each attribute kind with a model. */
static int (*const encoders[JINST_ATTR_KIND_COUNT])(enc *e, const void *model) = {
#define ENCODER(kind, type, dec_name, enc_name) [kind] = enc_##enc_name,
	JINST_ATTR_MODELS(ENCODER)
#undef ENCODER
};

int jinst_attr_encode(jinst_class *c, jinst_attr *a, bool from_model, jinst_buf *o, jinst_diag *diag)
{
	if (!a->model) {
		int rc = jinst_attr_decode(c, a, NULL, diag);
		if (rc)
			return rc;
	}
	if (!a->model) { /* kinds without a model: Synthetic, Deprecated, unknown */
		jinst_buf_bytes(o, a->info, a->info ? a->length : 0);
		return 0;
	}
	if (a->kind >= JINST_ATTR_KIND_COUNT || !encoders[a->kind])
		return 0;
	enc e = {c, o, from_model, diag};
	return encoders[a->kind](&e, a->model);
}
