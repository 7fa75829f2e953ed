/*
 * Attribute models (JVMS 4.7): the name table and the decoders (the
 * encoders are attr_encode.c's).
 *
 * Each decoder reads an attribute's info with the bounds-checked reader over
 * the class bytes (so diagnostics carry file offsets), checks each count
 * against the bytes left before allocating, checks constant-pool indices
 * for the tag the JVMS requires, and must consume the info exactly. Each
 * encoder writes the JVMS layout back, so decode + encode of an unchanged
 * attribute gives the original bytes.
 */
#include "internal.h"

#define CTX(x) (1u << (x))
#define C_CLASS CTX(JINST_CTX_CLASS)
#define C_FIELD CTX(JINST_CTX_FIELD)
#define C_METHOD CTX(JINST_CTX_METHOD)
#define C_CODE CTX(JINST_CTX_CODE)
#define C_RC CTX(JINST_CTX_RECORD_COMPONENT)

/* JVMS 4.7, table 4.7-C: where each attribute may appear. */
static const struct {
	const char *name;
	uint8_t len;
	uint8_t ctx;
} kinds[JINST_ATTR_KIND_COUNT] = {
#define K(kind, str, where) [kind] = {str, sizeof(str) - 1, where}
	K(JINST_ATTR_CONSTANT_VALUE, "ConstantValue", C_FIELD),
	K(JINST_ATTR_CODE, "Code", C_METHOD),
	K(JINST_ATTR_STACK_MAP_TABLE, "StackMapTable", C_CODE),
	K(JINST_ATTR_EXCEPTIONS, "Exceptions", C_METHOD),
	K(JINST_ATTR_INNER_CLASSES, "InnerClasses", C_CLASS),
	K(JINST_ATTR_ENCLOSING_METHOD, "EnclosingMethod", C_CLASS),
	K(JINST_ATTR_SYNTHETIC, "Synthetic", C_CLASS | C_FIELD | C_METHOD),
	K(JINST_ATTR_SIGNATURE, "Signature", C_CLASS | C_FIELD | C_METHOD | C_RC),
	K(JINST_ATTR_SOURCE_FILE, "SourceFile", C_CLASS),
	K(JINST_ATTR_SOURCE_DEBUG_EXTENSION, "SourceDebugExtension", C_CLASS),
	K(JINST_ATTR_LINE_NUMBER_TABLE, "LineNumberTable", C_CODE),
	K(JINST_ATTR_LOCAL_VARIABLE_TABLE, "LocalVariableTable", C_CODE),
	K(JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE, "LocalVariableTypeTable", C_CODE),
	K(JINST_ATTR_DEPRECATED, "Deprecated", C_CLASS | C_FIELD | C_METHOD),
	K(JINST_ATTR_RUNTIME_VISIBLE_ANNOTATIONS, "RuntimeVisibleAnnotations", C_CLASS | C_FIELD | C_METHOD | C_RC),
	K(JINST_ATTR_RUNTIME_INVISIBLE_ANNOTATIONS, "RuntimeInvisibleAnnotations", C_CLASS | C_FIELD | C_METHOD | C_RC),
	K(JINST_ATTR_RUNTIME_VISIBLE_PARAMETER_ANNOTATIONS, "RuntimeVisibleParameterAnnotations", C_METHOD),
	K(JINST_ATTR_RUNTIME_INVISIBLE_PARAMETER_ANNOTATIONS, "RuntimeInvisibleParameterAnnotations", C_METHOD),
	K(JINST_ATTR_RUNTIME_VISIBLE_TYPE_ANNOTATIONS, "RuntimeVisibleTypeAnnotations",
	  C_CLASS | C_FIELD | C_METHOD | C_CODE | C_RC),
	K(JINST_ATTR_RUNTIME_INVISIBLE_TYPE_ANNOTATIONS, "RuntimeInvisibleTypeAnnotations",
	  C_CLASS | C_FIELD | C_METHOD | C_CODE | C_RC),
	K(JINST_ATTR_ANNOTATION_DEFAULT, "AnnotationDefault", C_METHOD),
	K(JINST_ATTR_BOOTSTRAP_METHODS, "BootstrapMethods", C_CLASS),
	K(JINST_ATTR_METHOD_PARAMETERS, "MethodParameters", C_METHOD),
	K(JINST_ATTR_MODULE, "Module", C_CLASS),
	K(JINST_ATTR_MODULE_PACKAGES, "ModulePackages", C_CLASS),
	K(JINST_ATTR_MODULE_MAIN_CLASS, "ModuleMainClass", C_CLASS),
	K(JINST_ATTR_NEST_HOST, "NestHost", C_CLASS),
	K(JINST_ATTR_NEST_MEMBERS, "NestMembers", C_CLASS),
	K(JINST_ATTR_RECORD, "Record", C_CLASS),
	K(JINST_ATTR_PERMITTED_SUBCLASSES, "PermittedSubclasses", C_CLASS),
#undef K
};

const char *jinst_attr_kind_name(enum jinst_attr_kind kind)
{
	return kind > 0 && kind < JINST_ATTR_KIND_COUNT ? kinds[kind].name : NULL;
}

/* The kind named name[0..len) in whatever context, or UNKNOWN. */
static enum jinst_attr_kind kind_named(const uint8_t *name, uint16_t len)
{
	for (int k = 1; k < JINST_ATTR_KIND_COUNT; k++)
		if (kinds[k].len == len && kinds[k].name[0] == name[0] && memcmp(kinds[k].name, name, len) == 0)
			return (enum jinst_attr_kind)k;
	return JINST_ATTR_UNKNOWN;
}

enum jinst_attr_kind jinst_attr_kind_of(const uint8_t *name, uint16_t len, enum jinst_attr_context ctx)
{
	enum jinst_attr_kind k = kind_named(name, len);
	return k && (kinds[k].ctx & CTX(ctx)) ? k : JINST_ATTR_UNKNOWN;
}

enum jinst_attr_kind jinst_attr_kind_at(jinst_class *c, uint16_t name_index, enum jinst_attr_context ctx)
{
	uint16_t len;
	const uint8_t *name;
	if (name_index >= c->cp_count || c->cp_tags[name_index] != JINST_CP_UTF8 ||
	    (!c->attr_kinds && !(c->attr_kinds = jinst_arena_zalloc(c->arena, c->cp_count)))) {
		name = jinst_cp_utf8(c, name_index, &len);
		return name ? jinst_attr_kind_of(name, len, ctx) : JINST_ATTR_UNKNOWN;
	}
	uint8_t k = c->attr_kinds[name_index];
	if (!k) {
		name = jinst_cp_utf8(c, name_index, &len);
		c->attr_kinds[name_index] = k = (uint8_t)(1 + kind_named(name, len));
	}
	k--;
	return k && (kinds[k].ctx & CTX(ctx)) ? (enum jinst_attr_kind)k : JINST_ATTR_UNKNOWN;
}

/* ---- decoding -------------------------------------------------------------------- */

typedef struct dec {
	jinst_class *c;
	jinst_reader r;
	jinst_diag *diag;
	const char *what; /* attribute name for messages */
	int depth;
} dec;

#define MAX_DEPTH 256 /* nesting of annotations inside element values */

static bool loadable_tag(uint8_t t)
{
	return t == JINST_CP_INTEGER || t == JINST_CP_FLOAT || t == JINST_CP_LONG || t == JINST_CP_DOUBLE ||
	       t == JINST_CP_CLASS || t == JINST_CP_STRING || t == JINST_CP_METHOD_HANDLE ||
	       t == JINST_CP_METHOD_TYPE || t == JINST_CP_DYNAMIC;
}

static int truncated(dec *d)
{
	return jinst_fail(d->diag, JINST_EMALFORMED, d->r.pos, "%s runs past its attribute_length", d->what);
}

static void *alloc_n(dec *d, uint32_t n, size_t size, uint32_t min_bytes_each)
{
	/* Refuse counts the remaining bytes cannot hold before allocating. */
	if ((uint64_t)n * min_bytes_each > jinst_rd_left(&d->r)) {
		d->r.bad = true;
		return NULL;
	}
	void *p = jinst_arena_alloc(d->c->arena, n ? (size_t)n * size : 1);
	if (!p)
		d->r.bad = true;
	return p;
}

static bool tag_ok(dec *d, uint32_t at, uint16_t index, uint8_t tag, bool zero_ok)
{
	if (index == 0 && zero_ok)
		return true;
	if (jinst_cp_tag(d->c, index) == tag)
		return true;
	if (!d->r.bad)
		jinst_fail(d->diag, JINST_EMALFORMED, at, "%s: #%u is a %s, %s expected", d->what, (unsigned)index,
		           jinst_cp_tag_name(jinst_cp_tag(d->c, index)), jinst_cp_tag_name(tag));
	d->r.bad = true;
	return false;
}

static uint16_t rd_index(dec *d, uint8_t tag, bool zero_ok)
{
	uint32_t at = d->r.pos;
	uint16_t v = jinst_rd_u2(&d->r);
	if (!d->r.bad)
		tag_ok(d, at, v, tag, zero_ok);
	return v;
}

static int fail_or_truncated(dec *d)
{
	return d->diag && d->diag->code ? d->diag->code : truncated(d);
}

static int dec_index_list(dec *d, jinst_index_list *l, uint8_t tag)
{
	l->count = jinst_rd_u2(&d->r);
	l->items = alloc_n(d, l->count, 2, 2);
	for (uint32_t i = 0; i < l->count && !d->r.bad; i++)
		l->items[i] = rd_index(d, tag, false);
	return 0;
}

static int dec_element_value(dec *d, jinst_element_value *v);

static int dec_annotation(dec *d, jinst_annotation *a)
{
	if (++d->depth > MAX_DEPTH) {
		d->r.bad = true;
		return jinst_fail(d->diag, JINST_EMALFORMED, d->r.pos, "%s: annotations nested too deep", d->what);
	}
	a->type_index = rd_index(d, JINST_CP_UTF8, false);
	a->count = jinst_rd_u2(&d->r);
	a->pairs = alloc_n(d, a->count, sizeof(jinst_element_pair), 3);
	for (uint32_t i = 0; i < a->count && !d->r.bad; i++) {
		a->pairs[i].name_index = rd_index(d, JINST_CP_UTF8, false);
		if (dec_element_value(d, &a->pairs[i].value))
			return -1;
	}
	d->depth--;
	return d->r.bad ? -1 : 0;
}

static int dec_element_value(dec *d, jinst_element_value *v)
{
	uint32_t at = d->r.pos;
	v->tag = jinst_rd_u1(&d->r);
	if (d->r.bad)
		return -1;
	switch (v->tag) {
	case 'B': case 'C': case 'I': case 'S': case 'Z':
		v->u.const_value_index = rd_index(d, JINST_CP_INTEGER, false);
		break;
	case 'D': v->u.const_value_index = rd_index(d, JINST_CP_DOUBLE, false); break;
	case 'F': v->u.const_value_index = rd_index(d, JINST_CP_FLOAT, false); break;
	case 'J': v->u.const_value_index = rd_index(d, JINST_CP_LONG, false); break;
	case 's': v->u.const_value_index = rd_index(d, JINST_CP_UTF8, false); break;
	case 'c': v->u.class_info_index = rd_index(d, JINST_CP_UTF8, false); break;
	case 'e':
		v->u.enum_const.type_name_index = rd_index(d, JINST_CP_UTF8, false);
		v->u.enum_const.const_name_index = rd_index(d, JINST_CP_UTF8, false);
		break;
	case '@':
		return dec_annotation(d, &v->u.annotation);
	case '[':
		if (++d->depth > MAX_DEPTH) {
			d->r.bad = true;
			return jinst_fail(d->diag, JINST_EMALFORMED, at, "%s: element values nested too deep", d->what);
		}
		v->u.array.count = jinst_rd_u2(&d->r);
		v->u.array.values = alloc_n(d, v->u.array.count, sizeof(jinst_element_value), 3);
		for (uint32_t i = 0; i < v->u.array.count && !d->r.bad; i++)
			if (dec_element_value(d, &v->u.array.values[i]))
				return -1;
		d->depth--;
		break;
	default:
		d->r.bad = true;
		return jinst_fail(d->diag, JINST_EMALFORMED, at, "%s: bad element_value tag 0x%02x", d->what, v->tag);
	}
	return d->r.bad ? -1 : 0;
}

static void dec_annotations(dec *d, jinst_annotations *as)
{
	as->count = jinst_rd_u2(&d->r);
	as->items = alloc_n(d, as->count, sizeof(jinst_annotation), 4);
	for (uint32_t i = 0; i < as->count && !d->r.bad; i++)
		if (dec_annotation(d, &as->items[i]))
			return;
}

static void dec_type_annotation(dec *d, jinst_type_annotation *t)
{
	uint32_t at = d->r.pos;
	t->target_type = jinst_rd_u1(&d->r);
	t->a = t->b = 0;
	t->table_length = 0;
	t->table = NULL;
	switch (t->target_type) {
	case 0x00: case 0x01: case 0x16: t->a = jinst_rd_u1(&d->r); break;
	case 0x10: case 0x17: case 0x42: case 0x43: case 0x44: case 0x45: case 0x46: t->a = jinst_rd_u2(&d->r); break;
	case 0x11: case 0x12: t->a = jinst_rd_u1(&d->r); t->b = jinst_rd_u1(&d->r); break;
	case 0x13: case 0x14: case 0x15: break;
	case 0x40: case 0x41:
		t->table_length = jinst_rd_u2(&d->r);
		t->table = alloc_n(d, t->table_length, sizeof(jinst_localvar_target), 6);
		for (uint32_t i = 0; i < t->table_length && !d->r.bad; i++) {
			t->table[i].start_pc = jinst_rd_u2(&d->r);
			t->table[i].length = jinst_rd_u2(&d->r);
			t->table[i].index = jinst_rd_u2(&d->r);
		}
		break;
	case 0x47: case 0x48: case 0x49: case 0x4A: case 0x4B:
		t->a = jinst_rd_u2(&d->r);
		t->b = jinst_rd_u1(&d->r);
		break;
	default:
		if (!d->r.bad)
			jinst_fail(d->diag, JINST_EMALFORMED, at, "%s: bad target_type 0x%02x", d->what, t->target_type);
		d->r.bad = true;
		return;
	}
	t->path_length = jinst_rd_u1(&d->r);
	t->path = alloc_n(d, t->path_length, sizeof(jinst_type_path_entry), 2);
	for (uint32_t i = 0; i < t->path_length && !d->r.bad; i++) {
		t->path[i].kind = jinst_rd_u1(&d->r);
		t->path[i].argument_index = jinst_rd_u1(&d->r);
	}
	if (!d->r.bad)
		dec_annotation(d, &t->annotation);
}

static void dec_vtypes(dec *d, jinst_vtype **out, uint16_t n)
{
	jinst_vtype *v = alloc_n(d, n, sizeof(jinst_vtype), 1);
	*out = v;
	for (uint32_t i = 0; i < n && !d->r.bad; i++) {
		uint32_t at = d->r.pos;
		v[i].tag = jinst_rd_u1(&d->r);
		v[i].value = 0;
		if (v[i].tag == JINST_VT_OBJECT)
			v[i].value = rd_index(d, JINST_CP_CLASS, false);
		else if (v[i].tag == JINST_VT_UNINITIALIZED)
			v[i].value = jinst_rd_u2(&d->r);
		else if (v[i].tag > JINST_VT_UNINITIALIZED && !d->r.bad) {
			jinst_fail(d->diag, JINST_EMALFORMED, at, "%s: bad verification type tag %u", d->what, v[i].tag);
			d->r.bad = true;
		}
	}
}

static void dec_stack_map(dec *d, jinst_stack_map *m)
{
	m->count = jinst_rd_u2(&d->r);
	m->frames = alloc_n(d, m->count, sizeof(jinst_frame), 1);
	for (uint32_t i = 0; i < m->count && !d->r.bad; i++) {
		jinst_frame *f = &m->frames[i];
		uint32_t at = d->r.pos;
		uint8_t t = f->type = jinst_rd_u1(&d->r);
		f->nlocals = f->nstack = 0;
		f->locals = f->stack = NULL;
		if (t <= 63) {
			f->offset_delta = t;
		} else if (t <= 127) {
			f->offset_delta = (uint16_t)(t - 64);
			f->nstack = 1;
			dec_vtypes(d, &f->stack, 1);
		} else if (t < 247) {
			if (!d->r.bad)
				jinst_fail(d->diag, JINST_EMALFORMED, at, "StackMapTable: reserved frame type %u", t);
			d->r.bad = true;
		} else if (t == 247) {
			f->offset_delta = jinst_rd_u2(&d->r);
			f->nstack = 1;
			dec_vtypes(d, &f->stack, 1);
		} else if (t <= 251) {
			f->offset_delta = jinst_rd_u2(&d->r);
		} else if (t <= 254) {
			f->offset_delta = jinst_rd_u2(&d->r);
			f->nlocals = (uint16_t)(t - 251);
			dec_vtypes(d, &f->locals, f->nlocals);
		} else {
			f->offset_delta = jinst_rd_u2(&d->r);
			f->nlocals = jinst_rd_u2(&d->r);
			dec_vtypes(d, &f->locals, f->nlocals);
			f->nstack = jinst_rd_u2(&d->r);
			dec_vtypes(d, &f->stack, f->nstack);
		}
	}
}

static void dec_code(dec *d, jinst_code *code)
{
	jinst_class *c = d->c;
	uint32_t at = d->r.pos;
	if (c->old_code_layout) {
		code->max_stack = jinst_rd_u1(&d->r);
		code->max_locals = jinst_rd_u1(&d->r);
		code->code_length = jinst_rd_u2(&d->r);
	} else {
		code->max_stack = jinst_rd_u2(&d->r);
		code->max_locals = jinst_rd_u2(&d->r);
		code->code_length = jinst_rd_u4(&d->r);
	}
	if (d->r.bad)
		return;
	if (code->code_length == 0 || code->code_length > 65535) {
		jinst_fail(d->diag, JINST_EMALFORMED, at + 4, "Code: code_length %u (must be 1 to 65535)",
		           (unsigned)code->code_length);
		d->r.bad = true;
		return;
	}
	code->code = jinst_rd_bytes(&d->r, code->code_length);
	code->exception_count = jinst_rd_u2(&d->r);
	code->exceptions = alloc_n(d, code->exception_count, sizeof(jinst_exception_entry), 8);
	for (uint32_t i = 0; i < code->exception_count && !d->r.bad; i++) {
		jinst_exception_entry *e = &code->exceptions[i];
		uint32_t eat = d->r.pos;
		e->start_pc = jinst_rd_u2(&d->r);
		e->end_pc = jinst_rd_u2(&d->r);
		e->handler_pc = jinst_rd_u2(&d->r);
		e->catch_type = rd_index(d, JINST_CP_CLASS, true);
		if (!d->r.bad && (e->start_pc >= e->end_pc || e->end_pc > code->code_length ||
		                  e->handler_pc >= code->code_length)) {
			/* Point at the field that is wrong (JVMS 4.7.3). */
			uint32_t field = e->end_pc > code->code_length ? 2 : e->start_pc >= e->end_pc ? 0 : 4;
			jinst_fail(d->diag, JINST_EMALFORMED, eat + field,
			           "Code: exception_table[%u] range %u-%u handler %u outside code of %u bytes",
			           (unsigned)i, e->start_pc, e->end_pc, e->handler_pc, (unsigned)code->code_length);
			d->r.bad = true;
		}
	}
	if (!d->r.bad && jinst_attrs_read(c, &d->r, JINST_CTX_CODE, &code->attrs, d->diag))
		d->r.bad = true;
}

static void dec_constant_value(dec *d, void *model)
{
	jinst_attr_index *x = model;
	uint32_t at = d->r.pos;
	x->index = jinst_rd_u2(&d->r);
	uint8_t t = jinst_cp_tag(d->c, x->index);
	if (!d->r.bad && t != JINST_CP_INTEGER && t != JINST_CP_FLOAT && t != JINST_CP_LONG &&
	    t != JINST_CP_DOUBLE && t != JINST_CP_STRING)
		d->r.bad = jinst_fail(d->diag, JINST_EMALFORMED, at, "ConstantValue: #%u is a %s, a constant expected",
		                      (unsigned)x->index, jinst_cp_tag_name(t)) != 0;
}

static void dec_utf8_index(dec *d, void *model)
{
	jinst_attr_index *x = model;
	x->index = rd_index(d, JINST_CP_UTF8, false);
}

static void dec_class_index(dec *d, void *model)
{
	jinst_attr_index *x = model;
	x->index = rd_index(d, JINST_CP_CLASS, false);
}

static void dec_class_list(dec *d, void *model)
{
	jinst_index_list *x = model;
	dec_index_list(d, x, JINST_CP_CLASS);
}

static void dec_package_list(dec *d, void *model)
{
	jinst_index_list *x = model;
	dec_index_list(d, x, JINST_CP_PACKAGE);
}

static void dec_inner_classes(dec *d, void *model)
{
	jinst_inner_classes *x = model;
	x->count = jinst_rd_u2(&d->r);
	x->items = alloc_n(d, x->count, sizeof(jinst_inner_class), 8);
	for (uint32_t i = 0; i < x->count && !d->r.bad; i++) {
		x->items[i].inner_class_info_index = rd_index(d, JINST_CP_CLASS, false);
		x->items[i].outer_class_info_index = rd_index(d, JINST_CP_CLASS, true);
		x->items[i].inner_name_index = rd_index(d, JINST_CP_UTF8, true);
		x->items[i].inner_class_access_flags = jinst_rd_u2(&d->r);
	}
}

static void dec_enclosing_method(dec *d, void *model)
{
	jinst_enclosing_method *x = model;
	x->class_index = rd_index(d, JINST_CP_CLASS, false);
	x->method_index = rd_index(d, JINST_CP_NAME_AND_TYPE, true);
}

static void dec_source_debug_extension(dec *d, void *model)
{
	jinst_blob *x = model;
	x->length = jinst_rd_left(&d->r);
	x->bytes = jinst_rd_bytes(&d->r, x->length);
}

static void dec_line_numbers(dec *d, void *model)
{
	jinst_line_numbers *x = model;
	x->count = jinst_rd_u2(&d->r);
	x->items = alloc_n(d, x->count, sizeof(jinst_line_number), 4);
	for (uint32_t i = 0; i < x->count && !d->r.bad; i++) {
		x->items[i].start_pc = jinst_rd_u2(&d->r);
		x->items[i].line_number = jinst_rd_u2(&d->r);
	}
}

static void dec_local_variables(dec *d, void *model)
{
	jinst_local_variables *x = model;
	x->count = jinst_rd_u2(&d->r);
	x->items = alloc_n(d, x->count, sizeof(jinst_local_variable), 10);
	for (uint32_t i = 0; i < x->count && !d->r.bad; i++) {
		x->items[i].start_pc = jinst_rd_u2(&d->r);
		x->items[i].length = jinst_rd_u2(&d->r);
		x->items[i].name_index = rd_index(d, JINST_CP_UTF8, false);
		x->items[i].descriptor_index = rd_index(d, JINST_CP_UTF8, false);
		x->items[i].index = jinst_rd_u2(&d->r);
	}
}

static void dec_annotations_attr(dec *d, void *model)
{
	jinst_annotations *x = model;
	dec_annotations(d, x);
}

static void dec_parameter_annotations(dec *d, void *model)
{
	jinst_parameter_annotations *x = model;
	x->count = jinst_rd_u1(&d->r);
	x->parameters = alloc_n(d, x->count, sizeof(jinst_annotations), 2);
	for (uint32_t i = 0; i < x->count && !d->r.bad; i++)
		dec_annotations(d, &x->parameters[i]);
}

static void dec_type_annotations(dec *d, void *model)
{
	jinst_type_annotations *x = model;
	x->count = jinst_rd_u2(&d->r);
	x->items = alloc_n(d, x->count, sizeof(jinst_type_annotation), 5);
	for (uint32_t i = 0; i < x->count && !d->r.bad; i++)
		dec_type_annotation(d, &x->items[i]);
}

static void dec_annotation_default(dec *d, void *model)
{
	jinst_element_value *x = model;
	dec_element_value(d, x);
}

static void dec_bootstrap_methods(dec *d, void *model)
{
	jinst_bootstrap_methods *x = model;
	x->count = jinst_rd_u2(&d->r);
	x->items = alloc_n(d, x->count, sizeof(jinst_bootstrap_method), 4);
	for (uint32_t i = 0; i < x->count && !d->r.bad; i++) {
		jinst_bootstrap_method *bm = &x->items[i];
		bm->method_ref = rd_index(d, JINST_CP_METHOD_HANDLE, false);
		bm->arg_count = jinst_rd_u2(&d->r);
		bm->args = alloc_n(d, bm->arg_count, 2, 2);
		for (uint32_t k = 0; k < bm->arg_count && !d->r.bad; k++) {
			uint32_t at = d->r.pos;
			bm->args[k] = jinst_rd_u2(&d->r);
			uint8_t t = jinst_cp_tag(d->c, bm->args[k]);
			if (!d->r.bad && !loadable_tag(t)) {
				jinst_fail(d->diag, JINST_EMALFORMED, at, "BootstrapMethods: argument #%u is a %s, a loadable constant expected",
				           (unsigned)bm->args[k], jinst_cp_tag_name(t));
				d->r.bad = true;
			}
		}
	}
}

static void dec_method_parameters(dec *d, void *model)
{
	jinst_method_parameters *x = model;
	x->count = jinst_rd_u1(&d->r);
	x->items = alloc_n(d, x->count, sizeof(jinst_method_parameter), 4);
	for (uint32_t i = 0; i < x->count && !d->r.bad; i++) {
		x->items[i].name_index = rd_index(d, JINST_CP_UTF8, true);
		x->items[i].access_flags = jinst_rd_u2(&d->r);
	}
}

static void dec_module(dec *d, void *model)
{
	jinst_module *x = model;
	x->module_name_index = rd_index(d, JINST_CP_MODULE, false);
	x->module_flags = jinst_rd_u2(&d->r);
	x->module_version_index = rd_index(d, JINST_CP_UTF8, true);
	x->requires_count = jinst_rd_u2(&d->r);
	x->requires = alloc_n(d, x->requires_count, sizeof(jinst_module_requires), 6);
	for (uint32_t i = 0; i < x->requires_count && !d->r.bad; i++) {
		x->requires[i].requires_index = rd_index(d, JINST_CP_MODULE, false);
		x->requires[i].requires_flags = jinst_rd_u2(&d->r);
		x->requires[i].requires_version_index = rd_index(d, JINST_CP_UTF8, true);
	}
	for (int pass = 0; pass < 2 && !d->r.bad; pass++) {
		uint16_t *cnt = pass ? &x->opens_count : &x->exports_count;
		jinst_module_export **list = pass ? &x->opens : &x->exports;
		*cnt = jinst_rd_u2(&d->r);
		*list = alloc_n(d, *cnt, sizeof(jinst_module_export), 6);
		for (uint32_t i = 0; i < *cnt && !d->r.bad; i++) {
			jinst_module_export *e = &(*list)[i];
			e->index = rd_index(d, JINST_CP_PACKAGE, false);
			e->flags = jinst_rd_u2(&d->r);
			e->to_count = jinst_rd_u2(&d->r);
			e->to = alloc_n(d, e->to_count, 2, 2);
			for (uint32_t k = 0; k < e->to_count && !d->r.bad; k++)
				e->to[k] = rd_index(d, JINST_CP_MODULE, false);
		}
	}
	x->uses_count = jinst_rd_u2(&d->r);
	x->uses = alloc_n(d, x->uses_count, 2, 2);
	for (uint32_t i = 0; i < x->uses_count && !d->r.bad; i++)
		x->uses[i] = rd_index(d, JINST_CP_CLASS, false);
	x->provides_count = jinst_rd_u2(&d->r);
	x->provides = alloc_n(d, x->provides_count, sizeof(jinst_module_provides), 4);
	for (uint32_t i = 0; i < x->provides_count && !d->r.bad; i++) {
		jinst_module_provides *p = &x->provides[i];
		p->provides_index = rd_index(d, JINST_CP_CLASS, false);
		p->with_count = jinst_rd_u2(&d->r);
		p->with = alloc_n(d, p->with_count, 2, 2);
		for (uint32_t k = 0; k < p->with_count && !d->r.bad; k++)
			p->with[k] = rd_index(d, JINST_CP_CLASS, false);
	}
}

static void dec_record(dec *d, void *model)
{
	jinst_record *x = model;
	x->count = jinst_rd_u2(&d->r);
	x->components = alloc_n(d, x->count, sizeof(jinst_record_component), 6);
	for (uint32_t i = 0; i < x->count && !d->r.bad; i++) {
		x->components[i].name_index = rd_index(d, JINST_CP_UTF8, false);
		x->components[i].descriptor_index = rd_index(d, JINST_CP_UTF8, false);
		if (!d->r.bad && jinst_attrs_read(d->c, &d->r, JINST_CTX_RECORD_COMPONENT, &x->components[i].attrs, d->diag))
			d->r.bad = true;
	}
}

static void dec_code_attr(dec *d, void *model)
{
	jinst_code *x = model;
	dec_code(d, x);
}

static void dec_stack_map_table(dec *d, void *model)
{
	jinst_stack_map *x = model;
	dec_stack_map(d, x);
}

/* The decoder of each attribute kind with a model, and the model's size. */
static const struct {
	size_t size;
	void (*decode)(dec *d, void *model);
} decoders[JINST_ATTR_KIND_COUNT] = {
#define DECODER(kind, type, dec_name, enc_name) [kind] = {sizeof(type), dec_##dec_name},
	JINST_ATTR_MODELS(DECODER)
#undef DECODER
};

int jinst_attr_decode(jinst_class *c, jinst_attr *a, void **model, jinst_diag *diag)
{
	if (a->model || !a->info) {
		if (model)
			*model = a->model;
		return 0;
	}
	if (model)
		*model = NULL;
	if (diag) {
		diag->code = 0;
		diag->offset = JINST_NO_OFFSET;
		diag->where[0] = diag->message[0] = '\0';
	}
	dec d = {.c = c, .diag = diag, .what = a->kind ? kinds[a->kind].name : "attribute"};
	/* An attribute rebuilt by the patcher (patch_commit.c) holds info outside the
	 * class bytes: read it from its own start (its offsets are then
	 * relative to it in diagnostics). */
	uintptr_t base = (uintptr_t)c->bytes, info_at = (uintptr_t)a->info;
	if (info_at >= base && info_at - base <= c->len && a->length <= c->len - (info_at - base)) {
		uint32_t start = (uint32_t)(info_at - base);
		jinst_reader_init(&d.r, c->bytes, start, start + a->length);
	} else {
		jinst_reader_init(&d.r, a->info, 0, a->length);
	}
	if (a->kind == JINST_ATTR_SYNTHETIC || a->kind == JINST_ATTR_DEPRECATED) {
		if (a->length)
			return jinst_fail(diag, JINST_EMALFORMED, a->offset + 2, "%s: attribute_length %u, 0 expected", d.what,
			                  (unsigned)a->length);
		return 0;
	}
	if (a->kind >= JINST_ATTR_KIND_COUNT || !decoders[a->kind].decode)
		return 0; /* unknown */
	void *m = jinst_arena_zalloc(c->arena, decoders[a->kind].size);
	if (!m)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	decoders[a->kind].decode(&d, m);
	if (d.r.bad)
		return fail_or_truncated(&d);
	if (d.r.pos != d.r.end)
		return jinst_fail(diag, JINST_EMALFORMED, d.r.pos, "%s: %u bytes left over inside attribute_length %u",
		                  d.what, (unsigned)(d.r.end - d.r.pos), (unsigned)a->length);
	a->model = m;
	if (model)
		*model = m;
	return 0;
}
