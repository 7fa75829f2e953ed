/*
 * Rendering a class as text, in two modes. RENDER_DUMP is the javap -v
 * style listing people read. RENDER_CANON says what the class means: every
 * constant-pool index outside the pool listing is replaced by what it
 * resolves to, and frames are expanded to full frames. Two classes with the same
 * canonical rendering mean the same, whatever their encoding; this is how
 * `jinst roundtrip --deep` checks the encoders.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct r {
	jinst_class *c;
	enum render_mode mode;
	text *t;
	jinst_diag *diag;
	int rc;
} r;

#define DUMP(R) ((R)->mode == RENDER_DUMP)

/* Modified UTF-8 as readable text: printable UTF-8 as is, controls escaped. */
static void put_mutf8(r *R, const uint8_t *s, uint16_t len)
{
	char stack[1024];
	char *buf = stack;
	long n = jinst_mutf8_to_utf8(s, len, buf, sizeof(stack));
	if (n < 0) {
		text_printf(R->t, "<bad utf8>");
		return;
	}
	if ((size_t)n >= sizeof(stack)) {
		buf = malloc((size_t)n + 1);
		if (!buf)
			return;
		jinst_mutf8_to_utf8(s, len, buf, (size_t)n + 1);
	}
	for (long i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)buf[i];
		if (ch == '\\')
			text_put(R->t, "\\\\", 2);
		else if (ch == '\n')
			text_put(R->t, "\\n", 2);
		else if (ch == '\t')
			text_put(R->t, "\\t", 2);
		else if (ch == '\r')
			text_put(R->t, "\\r", 2);
		else if (ch < 0x20 || ch == 0x7f)
			text_printf(R->t, "\\u%04x", ch);
		else
			text_put(R->t, (const char *)&buf[i], 1);
	}
	if (buf != stack)
		free(buf);
}

static void put_utf8_at(r *R, uint16_t index)
{
	uint16_t len;
	const uint8_t *s = jinst_cp_utf8(R->c, index, &len);
	if (s)
		put_mutf8(R, s, len);
	else
		text_printf(R->t, "<#%u?>", index);
}

static const char *const handle_kinds[10] = {
	"?", "REF_getField", "REF_getStatic", "REF_putField", "REF_putStatic", "REF_invokeVirtual",
	"REF_invokeStatic", "REF_invokeSpecial", "REF_newInvokeSpecial", "REF_invokeInterface",
};

/* What constant `index` resolves to, with no index in it. */
static void put_const(r *R, uint16_t index)
{
	jinst_cp_entry e;
	if (index == 0) {
		text_printf(R->t, "<none>");
		return;
	}
	if (jinst_cp_get(R->c, index, &e)) {
		text_printf(R->t, "<bad #%u>", index);
		return;
	}
	switch (e.tag) {
	case JINST_CP_UTF8:
		put_mutf8(R, e.u.utf8.bytes, e.u.utf8.length);
		break;
	case JINST_CP_INTEGER:
		text_printf(R->t, "%" PRId32, (int32_t)e.u.u4);
		break;
	case JINST_CP_FLOAT: {
		float f;
		memcpy(&f, &e.u.u4, 4);
		if (DUMP(R))
			text_printf(R->t, "%.9gf", (double)f);
		else
			text_printf(R->t, "float:0x%08" PRIx32, e.u.u4);
		break;
	}
	case JINST_CP_LONG:
		text_printf(R->t, "%" PRId64 "l", (int64_t)e.u.u8);
		break;
	case JINST_CP_DOUBLE: {
		double d;
		memcpy(&d, &e.u.u8, 8);
		if (DUMP(R))
			text_printf(R->t, "%.17gd", d);
		else
			text_printf(R->t, "double:0x%016" PRIx64, e.u.u8);
		break;
	}
	case JINST_CP_CLASS:
	case JINST_CP_MODULE:
	case JINST_CP_PACKAGE:
		put_utf8_at(R, e.u.index);
		break;
	case JINST_CP_STRING:
		text_put(R->t, "\"", 1);
		put_utf8_at(R, e.u.index);
		text_put(R->t, "\"", 1);
		break;
	case JINST_CP_METHOD_TYPE:
		put_utf8_at(R, e.u.index);
		break;
	case JINST_CP_FIELDREF:
	case JINST_CP_METHODREF:
	case JINST_CP_INTERFACE_METHODREF:
		put_const(R, e.u.ref.class_index);
		text_put(R->t, ".", 1);
		put_const(R, e.u.ref.name_and_type_index);
		break;
	case JINST_CP_NAME_AND_TYPE:
		put_utf8_at(R, e.u.nat.name_index);
		text_put(R->t, ":", 1);
		put_utf8_at(R, e.u.nat.descriptor_index);
		break;
	case JINST_CP_METHOD_HANDLE:
		text_printf(R->t, "%s ", e.u.handle.kind <= 9 ? handle_kinds[e.u.handle.kind] : "?");
		put_const(R, e.u.handle.reference_index);
		break;
	case JINST_CP_DYNAMIC:
	case JINST_CP_INVOKE_DYNAMIC:
		text_printf(R->t, "bootstrap[%u]:", e.u.dyn.bootstrap_method_attr_index);
		put_const(R, e.u.dyn.name_and_type_index);
		break;
	default:
		text_printf(R->t, "<tag %u>", e.tag);
	}
}

/* A constant as an operand: "#7 // java/lang/Object" in a dump, the constant itself in canon. */
static void put_ref(r *R, uint16_t index)
{
	if (DUMP(R)) {
		text_printf(R->t, "#%u", index);
		if (index) {
			text_put(R->t, " // ", 4);
			const char *tag = jinst_cp_tag_name(jinst_cp_tag(R->c, index));
			text_printf(R->t, "%s ", tag);
			put_const(R, index);
		}
	} else {
		text_printf(R->t, "%s ", index ? jinst_cp_tag_name(jinst_cp_tag(R->c, index)) : "");
		put_const(R, index);
	}
}

static void flags(r *R, uint16_t f, int kind /* 0 class, 1 field, 2 method, 3 other */)
{
	static const struct { uint16_t bit; const char *name[4]; } names[] = {
		{0x0001, {"public", "public", "public", "public"}}, {0x0002, {0, "private", "private", "private"}},
		{0x0004, {0, "protected", "protected", "protected"}}, {0x0008, {0, "static", "static", "static"}},
		{0x0010, {"final", "final", "final", "final"}}, {0x0020, {"super", 0, "synchronized", "open"}},
		{0x0040, {0, "volatile", "bridge", "static_phase"}}, {0x0080, {0, "transient", "varargs", 0}},
		{0x0100, {0, 0, "native", 0}}, {0x0200, {"interface", 0, 0, "interface"}},
		{0x0400, {"abstract", 0, "abstract", "abstract"}}, {0x0800, {0, 0, "strict", 0}},
		{0x1000, {"synthetic", "synthetic", "synthetic", "synthetic"}},
		{0x2000, {"annotation", 0, 0, "annotation"}}, {0x4000, {"enum", "enum", 0, "enum"}},
		{0x8000, {"module", 0, 0, "mandated"}},
	};
	text_printf(R->t, "0x%04x", f);
	if (!DUMP(R))
		return;
	text_put(R->t, " (", 2);
	bool first = true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(f & names[i].bit))
			continue;
		const char *n = names[i].name[kind];
		text_printf(R->t, "%s%s", first ? "" : " ", n ? n : "?");
		first = false;
	}
	text_put(R->t, ")", 1);
}

static void indent(r *R, int depth)
{
	for (int i = 0; i < depth; i++)
		text_put(R->t, "  ", 2);
}

static void attrs(r *R, jinst_attr_list *list, int depth, const jinst_member *method, const jinst_code *code);

static void element_value(r *R, const jinst_element_value *v);

static void annotation(r *R, const jinst_annotation *a)
{
	text_put(R->t, "@", 1);
	put_utf8_at(R, a->type_index);
	text_put(R->t, "(", 1);
	for (uint16_t i = 0; i < a->count; i++) {
		if (i)
			text_put(R->t, ", ", 2);
		put_utf8_at(R, a->pairs[i].name_index);
		text_put(R->t, "=", 1);
		element_value(R, &a->pairs[i].value);
	}
	text_put(R->t, ")", 1);
}

static void element_value(r *R, const jinst_element_value *v)
{
	switch (v->tag) {
	case 'e':
		put_utf8_at(R, v->u.enum_const.type_name_index);
		text_put(R->t, ".", 1);
		put_utf8_at(R, v->u.enum_const.const_name_index);
		break;
	case 'c':
		text_put(R->t, "class ", 6);
		put_utf8_at(R, v->u.class_info_index);
		break;
	case '@':
		annotation(R, &v->u.annotation);
		break;
	case '[':
		text_put(R->t, "[", 1);
		for (uint16_t i = 0; i < v->u.array.count; i++) {
			if (i)
				text_put(R->t, ", ", 2);
			element_value(R, &v->u.array.values[i]);
		}
		text_put(R->t, "]", 1);
		break;
	case 's':
		text_put(R->t, "\"", 1);
		put_utf8_at(R, v->u.const_value_index);
		text_put(R->t, "\"", 1);
		break;
	default:
		text_printf(R->t, "%c:", v->tag);
		put_const(R, v->u.const_value_index);
	}
}

static void annotations(r *R, const jinst_annotations *as, int depth)
{
	for (uint16_t i = 0; i < as->count; i++) {
		indent(R, depth);
		annotation(R, &as->items[i]);
		text_put(R->t, "\n", 1);
	}
}

static void vtype(r *R, const jinst_ftype *v)
{
	static const char *const names[] = {"top", "int", "float", "double", "long", "null", "uninitializedThis"};
	if (v->tag <= JINST_VT_UNINITIALIZED_THIS)
		text_printf(R->t, "%s", names[v->tag]);
	else if (v->tag == JINST_VT_UNINITIALIZED)
		text_printf(R->t, "uninitialized(%u)", v->value);
	else if (v->name) {
		put_mutf8(R, v->name, v->name_length);
	} else
		text_printf(R->t, "<bad class #%u>", v->value);
}

static void vtypes(r *R, const jinst_ftype *v, uint16_t n)
{
	text_put(R->t, "[", 1);
	for (uint16_t i = 0; i < n; i++) {
		if (i)
			text_put(R->t, ", ", 2);
		vtype(R, &v[i]);
	}
	text_put(R->t, "]", 1);
}

static void stack_map(r *R, const jinst_stack_map *m, const jinst_member *method, int depth)
{
	jinst_full_frame *full;
	int rc = jinst_stack_map_expand(R->c, method, m, &full, R->diag);
	if (rc) {
		R->rc = rc;
		return;
	}
	for (uint16_t i = 0; i < m->count; i++) {
		indent(R, depth);
		if (DUMP(R)) {
			uint8_t t = m->frames[i].type;
			const char *kind = t <= 63 ? "same" : t <= 127 ? "same_locals_1_stack_item"
			                 : t == 247 ? "same_locals_1_stack_item_extended" : t <= 250 ? "chop"
			                 : t == 251 ? "same_frame_extended" : t <= 254 ? "append" : "full_frame";
			text_printf(R->t, "frame_type = %u /* %s */ at %u: locals=", t, kind, (unsigned)full[i].offset);
		} else {
			text_printf(R->t, "frame at %u: locals=", (unsigned)full[i].offset);
		}
		vtypes(R, full[i].locals, full[i].nlocals);
		text_put(R->t, " stack=", 7);
		vtypes(R, full[i].stack, full[i].nstack);
		text_put(R->t, "\n", 1);
	}
}

static void code_body(r *R, jinst_code *code, const jinst_member *method, int depth)
{
	indent(R, depth);
	text_printf(R->t, "stack=%u, locals=%u, code_length=%u\n", code->max_stack, code->max_locals,
	            (unsigned)code->code_length);
	jinst_insn *ins;
	uint32_t n;
	int rc = jinst_code_decode(R->c, code, &ins, &n, R->diag);
	if (rc) {
		R->rc = rc;
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		const jinst_insn *in = &ins[i];
		indent(R, depth + 1);
		text_printf(R->t, "%5u: %s%s", (unsigned)in->offset, in->wide ? "wide " : "", jinst_opcode_name(in->opcode));
		switch (jinst_opcode_operands(in->opcode)) {
		case JINST_OPND_LOCAL:
		case JINST_OPND_BYTE:
		case JINST_OPND_SHORT:
		case JINST_OPND_NEWARRAY:
			text_printf(R->t, " %d", in->operand);
			break;
		case JINST_OPND_IINC:
			text_printf(R->t, " %d, %d", in->operand, in->operand2);
			break;
		case JINST_OPND_BRANCH2:
		case JINST_OPND_BRANCH4:
			text_printf(R->t, " %d", in->operand);
			break;
		case JINST_OPND_CP1:
		case JINST_OPND_CP2:
		case JINST_OPND_INVOKEDYNAMIC:
			text_put(R->t, " ", 1);
			put_ref(R, (uint16_t)in->operand);
			break;
		case JINST_OPND_INVOKEINTERFACE:
		case JINST_OPND_MULTIANEWARRAY:
			text_printf(R->t, " %d, ", in->operand2);
			put_ref(R, (uint16_t)in->operand);
			break;
		case JINST_OPND_TABLESWITCH:
		case JINST_OPND_LOOKUPSWITCH: {
			const jinst_switch *sw = in->sw;
			text_printf(R->t, " { // %u\n", (unsigned)sw->count);
			for (uint32_t k = 0; k < sw->count; k++) {
				indent(R, depth + 2);
				text_printf(R->t, "%11d: %d\n", sw->keys ? sw->keys[k] : (int32_t)(sw->low + (int64_t)k),
				            sw->targets[k]);
			}
			indent(R, depth + 2);
			text_printf(R->t, "    default: %d\n", sw->default_target);
			indent(R, depth + 1);
			text_put(R->t, "  }", 3);
			break;
		}
		default:
			break;
		}
		text_put(R->t, "\n", 1);
	}
	if (code->exception_count) {
		indent(R, depth);
		text_printf(R->t, "Exception table:\n");
		for (uint16_t i = 0; i < code->exception_count; i++) {
			const jinst_exception_entry *e = &code->exceptions[i];
			indent(R, depth + 1);
			text_printf(R->t, "from %u to %u target %u type ", e->start_pc, e->end_pc, e->handler_pc);
			if (e->catch_type)
				put_ref(R, e->catch_type);
			else
				text_printf(R->t, "any");
			text_put(R->t, "\n", 1);
		}
	}
	attrs(R, &code->attrs, depth, method, code);
}

static void index_list(r *R, const jinst_index_list *l, int depth)
{
	for (uint16_t i = 0; i < l->count; i++) {
		indent(R, depth);
		put_ref(R, l->items[i]);
		text_put(R->t, "\n", 1);
	}
}

/* ---- attributes: one printer per kind ---- */

/* A printer gets the attribute, its model (NULL for Synthetic, Deprecated
 * and unknown attributes), the depth of its lines and the method it is in.
 * A same-line printer goes on after the attribute's name and ends the line;
 * the others print their lines under it. */
typedef void attr_printer(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method);

static void print_unknown(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)m, (void)d, (void)method;
	text_printf(R->t, " %u bytes:", (unsigned)a->length);
	uint32_t show = DUMP(R) && a->length > 64 ? 64 : a->length;
	for (uint32_t i = 0; i < show; i++)
		text_printf(R->t, " %02x", a->info[i]);
	if (show < a->length)
		text_printf(R->t, " ...");
	text_put(R->t, "\n", 1);
}

/* Synthetic, Deprecated. */
static void print_flag(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)m, (void)d, (void)method;
	text_put(R->t, " true\n", 6);
}

/* ConstantValue, Signature, SourceFile, ModuleMainClass, NestHost. */
static void print_index(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)d, (void)method;
	text_put(R->t, " ", 1);
	put_ref(R, ((jinst_attr_index *)m)->index);
	text_put(R->t, "\n", 1);
}

static void print_source_debug_extension(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)d, (void)method;
	jinst_blob *b = m;
	text_put(R->t, " ", 1);
	for (uint32_t i = 0; i < b->length; i++) {
		uint8_t ch = b->bytes[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			text_put(R->t, (const char *)&ch, 1);
		else
			text_printf(R->t, "\\x%02x", ch);
	}
	text_put(R->t, "\n", 1);
}

static void print_code(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a;
	code_body(R, m, method, d);
}

static void print_stack_map(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a;
	stack_map(R, m, method, d);
}

/* Exceptions, NestMembers, PermittedSubclasses, ModulePackages. */
static void print_index_list(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	index_list(R, m, d);
}

static void print_inner_classes(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_inner_classes *x = m;
	for (uint16_t i = 0; i < x->count; i++) {
		indent(R, d);
		text_put(R->t, "inner ", 6);
		put_ref(R, x->items[i].inner_class_info_index);
		text_put(R->t, " outer ", 7);
		put_ref(R, x->items[i].outer_class_info_index);
		text_put(R->t, " name ", 6);
		put_ref(R, x->items[i].inner_name_index);
		text_put(R->t, " flags ", 7);
		flags(R, x->items[i].inner_class_access_flags, 3);
		text_put(R->t, "\n", 1);
	}
}

static void print_enclosing_method(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_enclosing_method *x = m;
	indent(R, d);
	put_ref(R, x->class_index);
	text_put(R->t, " method ", 8);
	put_ref(R, x->method_index);
	text_put(R->t, "\n", 1);
}

static void print_line_numbers(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_line_numbers *x = m;
	for (uint16_t i = 0; i < x->count; i++) {
		indent(R, d);
		text_printf(R->t, "line %u: %u\n", x->items[i].line_number, x->items[i].start_pc);
	}
}

/* LocalVariableTable, LocalVariableTypeTable. */
static void print_local_variables(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_local_variables *x = m;
	for (uint16_t i = 0; i < x->count; i++) {
		const jinst_local_variable *v = &x->items[i];
		indent(R, d);
		text_printf(R->t, "start %u length %u slot %u name ", v->start_pc, v->length, v->index);
		put_utf8_at(R, v->name_index);
		text_put(R->t, " type ", 6);
		put_utf8_at(R, v->descriptor_index);
		text_put(R->t, "\n", 1);
	}
}

static void print_annotations(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	annotations(R, m, d);
}

static void print_parameter_annotations(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_parameter_annotations *x = m;
	for (uint16_t i = 0; i < x->count; i++) {
		indent(R, d);
		text_printf(R->t, "parameter %u:\n", i);
		annotations(R, &x->parameters[i], d + 1);
	}
}

static void print_type_annotations(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_type_annotations *x = m;
	for (uint16_t i = 0; i < x->count; i++) {
		const jinst_type_annotation *ta = &x->items[i];
		indent(R, d);
		text_printf(R->t, "target 0x%02x (%u, %u)", ta->target_type, ta->a, ta->b);
		for (uint16_t k = 0; k < ta->table_length; k++)
			text_printf(R->t, " [start %u length %u slot %u]", ta->table[k].start_pc, ta->table[k].length,
			            ta->table[k].index);
		text_put(R->t, " path [", 7);
		for (uint8_t k = 0; k < ta->path_length; k++)
			text_printf(R->t, "%s%u:%u", k ? ", " : "", ta->path[k].kind, ta->path[k].argument_index);
		text_put(R->t, "] ", 2);
		annotation(R, &ta->annotation);
		text_put(R->t, "\n", 1);
	}
}

static void print_annotation_default(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	indent(R, d);
	element_value(R, m);
	text_put(R->t, "\n", 1);
}

static void print_bootstrap_methods(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_bootstrap_methods *x = m;
	for (uint16_t i = 0; i < x->count; i++) {
		indent(R, d);
		text_printf(R->t, "%u: ", i);
		put_ref(R, x->items[i].method_ref);
		text_put(R->t, "\n", 1);
		for (uint16_t k = 0; k < x->items[i].arg_count; k++) {
			indent(R, d + 1);
			put_ref(R, x->items[i].args[k]);
			text_put(R->t, "\n", 1);
		}
	}
}

static void print_method_parameters(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_method_parameters *x = m;
	for (uint8_t i = 0; i < x->count; i++) {
		indent(R, d);
		if (x->items[i].name_index)
			put_utf8_at(R, x->items[i].name_index);
		else
			text_put(R->t, "<no name>", 9);
		text_put(R->t, " ", 1);
		flags(R, x->items[i].access_flags, 3);
		text_put(R->t, "\n", 1);
	}
}

/* A Module's exports or opens: "exports p flags to m, n". */
static void print_module_packages(r *R, const char *what, uint16_t n, const jinst_module_export *l, int d)
{
	for (uint16_t i = 0; i < n; i++) {
		indent(R, d);
		text_put(R->t, what, strlen(what));
		put_ref(R, l[i].index);
		text_put(R->t, " ", 1);
		flags(R, l[i].flags, 3);
		for (uint16_t k = 0; k < l[i].to_count; k++) {
			text_put(R->t, k ? ", " : " to ", k ? 2 : 4);
			put_ref(R, l[i].to[k]);
		}
		text_put(R->t, "\n", 1);
	}
}

static void print_module_services(r *R, const jinst_module *x, int d)
{
	for (uint16_t i = 0; i < x->uses_count; i++) {
		indent(R, d);
		text_put(R->t, "uses ", 5);
		put_ref(R, x->uses[i]);
		text_put(R->t, "\n", 1);
	}
	for (uint16_t i = 0; i < x->provides_count; i++) {
		indent(R, d);
		text_put(R->t, "provides ", 9);
		put_ref(R, x->provides[i].provides_index);
		for (uint16_t k = 0; k < x->provides[i].with_count; k++) {
			text_put(R->t, k ? ", " : " with ", k ? 2 : 6);
			put_ref(R, x->provides[i].with[k]);
		}
		text_put(R->t, "\n", 1);
	}
}

static void print_module(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_module *x = m;
	indent(R, d);
	text_put(R->t, "module ", 7);
	put_ref(R, x->module_name_index);
	text_put(R->t, " ", 1);
	flags(R, x->module_flags, 3);
	text_put(R->t, " version ", 9);
	put_ref(R, x->module_version_index);
	text_put(R->t, "\n", 1);
	for (uint16_t i = 0; i < x->requires_count; i++) {
		indent(R, d + 1);
		text_put(R->t, "requires ", 9);
		put_ref(R, x->requires[i].requires_index);
		text_put(R->t, " ", 1);
		flags(R, x->requires[i].requires_flags, 3);
		text_put(R->t, " version ", 9);
		put_ref(R, x->requires[i].requires_version_index);
		text_put(R->t, "\n", 1);
	}
	print_module_packages(R, "exports ", x->exports_count, x->exports, d + 1);
	print_module_packages(R, "opens ", x->opens_count, x->opens, d + 1);
	print_module_services(R, x, d + 1);
}

static void print_record(r *R, const jinst_attr *a, void *m, int d, const jinst_member *method)
{
	(void)a, (void)method;
	jinst_record *x = m;
	for (uint16_t i = 0; i < x->count; i++) {
		indent(R, d);
		text_put(R->t, "component ", 10);
		put_utf8_at(R, x->components[i].name_index);
		text_put(R->t, " ", 1);
		put_utf8_at(R, x->components[i].descriptor_index);
		text_put(R->t, "\n", 1);
		attrs(R, &x->components[i].attrs, d + 1, NULL, NULL);
	}
}

static const struct {
	bool same_line;
	attr_printer *print;
} printers[JINST_ATTR_KIND_COUNT] = {
	[JINST_ATTR_UNKNOWN] = {true, print_unknown},
	[JINST_ATTR_SYNTHETIC] = {true, print_flag},
	[JINST_ATTR_DEPRECATED] = {true, print_flag},
	[JINST_ATTR_CONSTANT_VALUE] = {true, print_index},
	[JINST_ATTR_SIGNATURE] = {true, print_index},
	[JINST_ATTR_SOURCE_FILE] = {true, print_index},
	[JINST_ATTR_MODULE_MAIN_CLASS] = {true, print_index},
	[JINST_ATTR_NEST_HOST] = {true, print_index},
	[JINST_ATTR_SOURCE_DEBUG_EXTENSION] = {true, print_source_debug_extension},
	[JINST_ATTR_CODE] = {false, print_code},
	[JINST_ATTR_STACK_MAP_TABLE] = {false, print_stack_map},
	[JINST_ATTR_EXCEPTIONS] = {false, print_index_list},
	[JINST_ATTR_NEST_MEMBERS] = {false, print_index_list},
	[JINST_ATTR_PERMITTED_SUBCLASSES] = {false, print_index_list},
	[JINST_ATTR_MODULE_PACKAGES] = {false, print_index_list},
	[JINST_ATTR_INNER_CLASSES] = {false, print_inner_classes},
	[JINST_ATTR_ENCLOSING_METHOD] = {false, print_enclosing_method},
	[JINST_ATTR_LINE_NUMBER_TABLE] = {false, print_line_numbers},
	[JINST_ATTR_LOCAL_VARIABLE_TABLE] = {false, print_local_variables},
	[JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE] = {false, print_local_variables},
	[JINST_ATTR_RUNTIME_VISIBLE_ANNOTATIONS] = {false, print_annotations},
	[JINST_ATTR_RUNTIME_INVISIBLE_ANNOTATIONS] = {false, print_annotations},
	[JINST_ATTR_RUNTIME_VISIBLE_PARAMETER_ANNOTATIONS] = {false, print_parameter_annotations},
	[JINST_ATTR_RUNTIME_INVISIBLE_PARAMETER_ANNOTATIONS] = {false, print_parameter_annotations},
	[JINST_ATTR_RUNTIME_VISIBLE_TYPE_ANNOTATIONS] = {false, print_type_annotations},
	[JINST_ATTR_RUNTIME_INVISIBLE_TYPE_ANNOTATIONS] = {false, print_type_annotations},
	[JINST_ATTR_ANNOTATION_DEFAULT] = {false, print_annotation_default},
	[JINST_ATTR_BOOTSTRAP_METHODS] = {false, print_bootstrap_methods},
	[JINST_ATTR_METHOD_PARAMETERS] = {false, print_method_parameters},
	[JINST_ATTR_MODULE] = {false, print_module},
	[JINST_ATTR_RECORD] = {false, print_record},
};

static void attr(r *R, jinst_attr *a, int depth, const jinst_member *method, const jinst_code *code)
{
	(void)code;
	void *m;
	indent(R, depth);
	put_utf8_at(R, a->name_index);
	text_put(R->t, ":", 1);
	if (DUMP(R))
		text_printf(R->t, " (length %u)", (unsigned)a->length);
	int rc = jinst_attr_decode(R->c, a, &m, R->diag);
	if (rc) {
		R->rc = rc;
		text_put(R->t, "\n", 1);
		return;
	}
	attr_printer *print = a->kind < JINST_ATTR_KIND_COUNT ? printers[a->kind].print : NULL;
	if (!print || !printers[a->kind].same_line)
		text_put(R->t, "\n", 1);
	if (print)
		print(R, a, m, depth + 1, method);
}

static void attrs(r *R, jinst_attr_list *list, int depth, const jinst_member *method, const jinst_code *code)
{
	for (uint16_t i = 0; i < list->count && !R->rc; i++)
		attr(R, &list->items[i], depth, method, code);
}

static void member(r *R, jinst_member *m, bool method)
{
	text_printf(R->t, "%s ", method ? "method" : "field");
	put_utf8_at(R, jinst_member_name_index(m));
	if (!method)
		text_put(R->t, ":", 1);
	put_utf8_at(R, jinst_member_descriptor_index(m));
	text_put(R->t, " flags ", 7);
	flags(R, jinst_member_access_flags(m), method ? 2 : 1);
	text_put(R->t, "\n", 1);
	jinst_attr_list *list = jinst_member_attrs(m);
	if (!list) {
		R->rc = JINST_ENOMEM;
		if (R->diag) {
			R->diag->code = JINST_ENOMEM;
			snprintf(R->diag->message, sizeof R->diag->message, "out of memory for attributes");
		}
		return;
	}
	attrs(R, list, 1, method ? m : NULL, NULL);
}

static const char *java_release(uint16_t major)
{
	static char buf[16];
	if (major < 45)
		return "?";
	if (major <= 48)
		return major == 45 ? "1.0.2/1.1" : major == 46 ? "1.2" : major == 47 ? "1.3" : "1.4";
	snprintf(buf, sizeof(buf), "%u", major - 44);
	return buf;
}

int render_class(jinst_class *c, enum render_mode mode, text *t, jinst_diag *diag)
{
	r R = {.c = c, .mode = mode, .t = t, .diag = diag};
	uint16_t major = jinst_class_major_version(c);
	text_printf(t, "class ");
	put_const(&R, jinst_class_this_class(c));
	text_printf(t, "\nversion %u.%u", major, jinst_class_minor_version(c));
	if (DUMP(&R))
		text_printf(t, " (Java %s)", java_release(major));
	text_printf(t, "\nflags ");
	flags(&R, jinst_class_access_flags(c), 0);
	text_printf(t, "\nsuper ");
	put_const(&R, jinst_class_super_class(c));
	text_put(t, "\n", 1);
	for (uint16_t i = 0; i < jinst_class_interface_count(c); i++) {
		text_printf(t, "interface ");
		put_const(&R, jinst_class_interface(c, i));
		text_put(t, "\n", 1);
	}
	if (DUMP(&R))
		text_printf(t, "Constant pool (%u entries):\n", jinst_cp_count(c));
	for (uint32_t i = 1; i < jinst_cp_count(c); i++) {
		uint8_t tag = jinst_cp_tag(c, (uint16_t)i);
		if (!tag)
			continue;
		if (DUMP(&R)) {
			jinst_cp_entry e;
			jinst_cp_get(c, (uint16_t)i, &e);
			char idx[16];
			snprintf(idx, sizeof(idx), "#%u", (unsigned)i);
			text_printf(t, "%6s = %-18s ", idx, jinst_cp_tag_name(tag));
			switch (tag) {
			case JINST_CP_CLASS: case JINST_CP_STRING: case JINST_CP_METHOD_TYPE:
			case JINST_CP_MODULE: case JINST_CP_PACKAGE:
				text_printf(t, "#%u // ", e.u.index);
				break;
			case JINST_CP_FIELDREF: case JINST_CP_METHODREF: case JINST_CP_INTERFACE_METHODREF:
			case JINST_CP_NAME_AND_TYPE: case JINST_CP_DYNAMIC: case JINST_CP_INVOKE_DYNAMIC:
				text_printf(t, "#%u.#%u // ", e.u.ref.class_index, e.u.ref.name_and_type_index);
				break;
			case JINST_CP_METHOD_HANDLE:
				text_printf(t, "%u:#%u // ", e.u.handle.kind, e.u.handle.reference_index);
				break;
			default:
				break;
			}
		} else {
			text_printf(t, "constant #%u %s ", (unsigned)i, jinst_cp_tag_name(tag));
		}
		put_const(&R, (uint16_t)i);
		text_put(t, "\n", 1);
	}
	for (uint16_t i = 0; i < jinst_class_field_count(c) && !R.rc; i++)
		member(&R, jinst_class_field(c, i), false);
	for (uint16_t i = 0; i < jinst_class_method_count(c) && !R.rc; i++)
		member(&R, jinst_class_method(c, i), true);
	if (!R.rc) {
		text_printf(t, "class attributes\n");
		attrs(&R, jinst_class_attrs(c), 1, NULL, NULL);
	}
	return R.rc;
}
