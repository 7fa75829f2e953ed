/*
 * Attribute encoding (the other half of attr.c): a model back into
 * attribute info bytes, one function per structure (annotations, element
 * values, stack maps, Code), for attributes that were modified or when the
 * writer is asked to encode from the models.
 */
#include "internal.h"

/* ---- encoding -------------------------------------------------------------------- */

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

static void enc_index_list(jinst_buf *o, uint16_t n, const uint16_t *items)
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

static int enc_code(jinst_class *c, const jinst_code *code, bool from_model, jinst_buf *o, jinst_diag *diag)
{
	if (c->old_code_layout) {
		jinst_buf_u1(o, (uint8_t)code->max_stack);
		jinst_buf_u1(o, (uint8_t)code->max_locals);
		jinst_buf_u2(o, (uint16_t)code->code_length);
	} else {
		jinst_buf_u2(o, code->max_stack);
		jinst_buf_u2(o, code->max_locals);
		jinst_buf_u4(o, code->code_length);
	}
	if (from_model) {
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
	} else {
		jinst_buf_bytes(o, code->code, code->code_length);
	}
	jinst_buf_u2(o, code->exception_count);
	for (uint32_t i = 0; i < code->exception_count; i++) {
		const jinst_exception_entry *e = &code->exceptions[i];
		jinst_buf_u2(o, e->start_pc);
		jinst_buf_u2(o, e->end_pc);
		jinst_buf_u2(o, e->handler_pc);
		jinst_buf_u2(o, e->catch_type);
	}
	return jinst_attrs_write(c, (jinst_attr_list *)&code->attrs, from_model, o, diag);
}

int jinst_attr_encode(jinst_class *c, jinst_attr *a, bool from_model, jinst_buf *o, jinst_diag *diag)
{
	if (!a->model) {
		int rc = jinst_attr_decode(c, a, NULL, diag);
		if (rc)
			return rc;
	}
	const void *m = a->model;
	if (!m) { /* kinds without a model: Synthetic, Deprecated, unknown */
		jinst_buf_bytes(o, a->info, a->info ? a->length : 0);
		return 0;
	}
	switch ((enum jinst_attr_kind)a->kind) {
	case JINST_ATTR_CONSTANT_VALUE:
	case JINST_ATTR_SIGNATURE:
	case JINST_ATTR_SOURCE_FILE:
	case JINST_ATTR_MODULE_MAIN_CLASS:
	case JINST_ATTR_NEST_HOST:
		jinst_buf_u2(o, ((const jinst_attr_index *)m)->index);
		break;
	case JINST_ATTR_EXCEPTIONS:
	case JINST_ATTR_NEST_MEMBERS:
	case JINST_ATTR_PERMITTED_SUBCLASSES:
	case JINST_ATTR_MODULE_PACKAGES: {
		const jinst_index_list *x = m;
		enc_index_list(o, x->count, x->items);
		break;
	}
	case JINST_ATTR_INNER_CLASSES: {
		const jinst_inner_classes *x = m;
		jinst_buf_u2(o, x->count);
		for (uint32_t i = 0; i < x->count; i++) {
			jinst_buf_u2(o, x->items[i].inner_class_info_index);
			jinst_buf_u2(o, x->items[i].outer_class_info_index);
			jinst_buf_u2(o, x->items[i].inner_name_index);
			jinst_buf_u2(o, x->items[i].inner_class_access_flags);
		}
		break;
	}
	case JINST_ATTR_ENCLOSING_METHOD: {
		const jinst_enclosing_method *x = m;
		jinst_buf_u2(o, x->class_index);
		jinst_buf_u2(o, x->method_index);
		break;
	}
	case JINST_ATTR_SOURCE_DEBUG_EXTENSION: {
		const jinst_blob *x = m;
		jinst_buf_bytes(o, x->bytes, x->length);
		break;
	}
	case JINST_ATTR_LINE_NUMBER_TABLE: {
		const jinst_line_numbers *x = m;
		jinst_buf_u2(o, x->count);
		for (uint32_t i = 0; i < x->count; i++) {
			jinst_buf_u2(o, x->items[i].start_pc);
			jinst_buf_u2(o, x->items[i].line_number);
		}
		break;
	}
	case JINST_ATTR_LOCAL_VARIABLE_TABLE:
	case JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE: {
		const jinst_local_variables *x = m;
		jinst_buf_u2(o, x->count);
		for (uint32_t i = 0; i < x->count; i++) {
			const jinst_local_variable *v = &x->items[i];
			jinst_buf_u2(o, v->start_pc);
			jinst_buf_u2(o, v->length);
			jinst_buf_u2(o, v->name_index);
			jinst_buf_u2(o, v->descriptor_index);
			jinst_buf_u2(o, v->index);
		}
		break;
	}
	case JINST_ATTR_RUNTIME_VISIBLE_ANNOTATIONS:
	case JINST_ATTR_RUNTIME_INVISIBLE_ANNOTATIONS:
		enc_annotations(o, m);
		break;
	case JINST_ATTR_RUNTIME_VISIBLE_PARAMETER_ANNOTATIONS:
	case JINST_ATTR_RUNTIME_INVISIBLE_PARAMETER_ANNOTATIONS: {
		const jinst_parameter_annotations *x = m;
		jinst_buf_u1(o, x->count);
		for (uint32_t i = 0; i < x->count; i++)
			enc_annotations(o, &x->parameters[i]);
		break;
	}
	case JINST_ATTR_RUNTIME_VISIBLE_TYPE_ANNOTATIONS:
	case JINST_ATTR_RUNTIME_INVISIBLE_TYPE_ANNOTATIONS: {
		const jinst_type_annotations *x = m;
		jinst_buf_u2(o, x->count);
		for (uint32_t i = 0; i < x->count; i++) {
			const jinst_type_annotation *t = &x->items[i];
			jinst_buf_u1(o, t->target_type);
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
			jinst_buf_u1(o, t->path_length);
			for (uint32_t k = 0; k < t->path_length; k++) {
				jinst_buf_u1(o, t->path[k].kind);
				jinst_buf_u1(o, t->path[k].argument_index);
			}
			enc_annotation(o, &t->annotation);
		}
		break;
	}
	case JINST_ATTR_ANNOTATION_DEFAULT:
		enc_element_value(o, m);
		break;
	case JINST_ATTR_BOOTSTRAP_METHODS: {
		const jinst_bootstrap_methods *x = m;
		jinst_buf_u2(o, x->count);
		for (uint32_t i = 0; i < x->count; i++) {
			jinst_buf_u2(o, x->items[i].method_ref);
			enc_index_list(o, x->items[i].arg_count, x->items[i].args);
		}
		break;
	}
	case JINST_ATTR_METHOD_PARAMETERS: {
		const jinst_method_parameters *x = m;
		jinst_buf_u1(o, x->count);
		for (uint32_t i = 0; i < x->count; i++) {
			jinst_buf_u2(o, x->items[i].name_index);
			jinst_buf_u2(o, x->items[i].access_flags);
		}
		break;
	}
	case JINST_ATTR_MODULE: {
		const jinst_module *x = m;
		jinst_buf_u2(o, x->module_name_index);
		jinst_buf_u2(o, x->module_flags);
		jinst_buf_u2(o, x->module_version_index);
		jinst_buf_u2(o, x->requires_count);
		for (uint32_t i = 0; i < x->requires_count; i++) {
			jinst_buf_u2(o, x->requires[i].requires_index);
			jinst_buf_u2(o, x->requires[i].requires_flags);
			jinst_buf_u2(o, x->requires[i].requires_version_index);
		}
		for (int pass = 0; pass < 2; pass++) {
			uint16_t n = pass ? x->opens_count : x->exports_count;
			const jinst_module_export *l = pass ? x->opens : x->exports;
			jinst_buf_u2(o, n);
			for (uint32_t i = 0; i < n; i++) {
				jinst_buf_u2(o, l[i].index);
				jinst_buf_u2(o, l[i].flags);
				enc_index_list(o, l[i].to_count, l[i].to);
			}
		}
		enc_index_list(o, x->uses_count, x->uses);
		jinst_buf_u2(o, x->provides_count);
		for (uint32_t i = 0; i < x->provides_count; i++) {
			jinst_buf_u2(o, x->provides[i].provides_index);
			enc_index_list(o, x->provides[i].with_count, x->provides[i].with);
		}
		break;
	}
	case JINST_ATTR_RECORD: {
		const jinst_record *x = m;
		jinst_buf_u2(o, x->count);
		for (uint32_t i = 0; i < x->count; i++) {
			jinst_buf_u2(o, x->components[i].name_index);
			jinst_buf_u2(o, x->components[i].descriptor_index);
			int rc = jinst_attrs_write(c, &x->components[i].attrs, from_model, o, diag);
			if (rc)
				return rc;
		}
		break;
	}
	case JINST_ATTR_CODE:
		return enc_code(c, m, from_model, o, diag);
	case JINST_ATTR_STACK_MAP_TABLE:
		enc_stack_map(o, m);
		break;
	default:
		break;
	}
	return 0;
}
