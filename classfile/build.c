/*
 * Building members: a method added to a class, a member renamed or given
 * other access flags, and a Code attribute made from nothing.
 *
 * A class's methods are one array in the arena, read in order from the
 * bytes. A method added is a new array of one more (the old one stays in
 * the arena until it is reset, so a stale pointer reads the old copy and
 * never freed memory), the new member last, with no original bytes: its
 * offset and end are 0 and it is marked modified, so the writer encodes it
 * and writes the new methods_count where it would have copied the old one.
 * Attributes given to it are copies of the class's own: their info and
 * pool indices stay valid because the pool only grows.
 *
 * A Code attribute from nothing is written as its info bytes, the form the
 * patcher leaves (patch_commit.c): max_stack, max_locals, code_length, the
 * code, no handler, no attribute. Straight-line code needs no
 * StackMapTable (JVMS 4.10.1: frames are required only at branch targets
 * and handlers), so max_stack is one walk of the stack effects
 * (jinst_insn_effect, the editor's depth flow) and max_locals the larger
 * of the arguments' words and the highest local the code touches. Code
 * with jumps, switches or handlers needs frames: that is the editor's
 * work (include/jinst/edit.h), and here it is refused.
 */
#include "internal.h"

int jinst_class_add_method(jinst_member **out, jinst_class *c, uint16_t access_flags, const char *name,
                           const char *descriptor, const jinst_attr *attrs, uint16_t attr_count, jinst_diag *diag)
{
	if (out)
		*out = NULL;
	if (!name || !descriptor || (attr_count && !attrs))
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "a method needs a name and a descriptor");
	if (c->method_count == UINT16_MAX)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "65,535 methods already");
	uint16_t name_index, desc_index;
	int rc = jinst_cp_add_utf8(c, name, strlen(name), &name_index);
	if (!rc)
		rc = jinst_cp_add_utf8(c, descriptor, strlen(descriptor), &desc_index);
	if (rc)
		return jinst_fail(diag, rc, JINST_NO_OFFSET, "cannot add the method's name and descriptor to the pool");
	jinst_member *ms = jinst_arena_alloc(c->arena, ((size_t)c->method_count + 1) * sizeof(*ms));
	jinst_attr *items = attr_count ? jinst_arena_alloc(c->arena, (size_t)attr_count * sizeof(*items)) : NULL;
	if (!ms || (attr_count && !items))
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	if (c->method_count)
		memcpy(ms, c->methods, (size_t)c->method_count * sizeof(*ms));
	if (attr_count)
		memcpy(items, attrs, (size_t)attr_count * sizeof(*items));
	jinst_member *m = &ms[c->method_count];
	memset(m, 0, sizeof(*m));
	m->access_flags = access_flags;
	m->name_index = name_index;
	m->descriptor_index = desc_index;
	m->modified = m->method = m->attrs_read = true;
	m->cls = c;
	m->attrs.count = attr_count;
	m->attrs.items = items;
	c->methods = ms;
	c->method_count++;
	c->methods_added++;
	if (out)
		*out = m;
	return 0;
}

int jinst_member_set_name(jinst_class *c, jinst_member *m, const char *name, jinst_diag *diag)
{
	uint16_t index;
	int rc = name ? jinst_cp_add_utf8(c, name, strlen(name), &index) : JINST_EINVAL;
	if (rc)
		return jinst_fail(diag, rc, JINST_NO_OFFSET, "cannot add the name to the pool");
	/* The list must be read from the original bytes before the member is
	 * encoded anew (the writer reads it only from there). */
	if ((rc = jinst_member_attrs_load(m, diag)))
		return rc;
	m->name_index = index;
	m->modified = true;
	return 0;
}

int jinst_member_set_access_flags(jinst_class *c, jinst_member *m, uint16_t access_flags)
{
	(void)c;
	int rc = jinst_member_attrs_load(m, NULL);
	if (rc)
		return rc;
	m->access_flags = access_flags;
	m->modified = true;
	return 0;
}

/* Words of a method descriptor's arguments; -1 when it does not parse. */
static int argument_words(const uint8_t *d, uint16_t len)
{
	const uint8_t *p = d + 1, *end = d + len;
	int words = 0;
	if (!len || d[0] != '(')
		return -1;
	while (p < end && *p != ')') {
		jinst_ftype t;
		if (!jinst_descriptor_type(&p, end, &t))
			return -1;
		words += t.tag == JINST_VT_LONG || t.tag == JINST_VT_DOUBLE ? 2 : 1;
	}
	return p < end ? words : -1;
}

/* The local an instruction loads, stores or increments, and its words;
 * false for an instruction that touches none. */
static bool local_of(const jinst_insn *in, uint32_t *index, int *words)
{
	const jinst_opcode_info *info = &jinst_opcodes[in->opcode];
	if (in->opcode == JINST_OP_IINC) {
		*index = (uint32_t)in->operand;
		*words = 1;
		return true;
	}
	if (!(info->flags & (JINST_OPF_LOAD | JINST_OPF_STORE)))
		return false;
	*words = info->flags & JINST_OPF_LOAD ? info->pushes : info->pops;
	if (info->kind == JINST_OPND_LOCAL)
		*index = (uint32_t)in->operand;
	else if (in->opcode >= JINST_OP_ILOAD_0 && in->opcode <= JINST_OP_ALOAD_3)
		*index = (uint32_t)(in->opcode - JINST_OP_ILOAD_0) % 4;
	else
		*index = (uint32_t)(in->opcode - JINST_OP_ISTORE_0) % 4;
	return true;
}

/* Offsets, wide forms, max_stack and max_locals of straight-line code. */
static int lay_out(jinst_class *c, jinst_insn *v, uint32_t count, uint32_t *max_stack, uint32_t *max_locals,
                   uint32_t *length, jinst_diag *diag)
{
	uint32_t pc = 0;
	int32_t depth = 0, top = 0;
	for (uint32_t i = 0; i < count; i++) {
		jinst_insn *in = &v[i];
		const jinst_opcode_info *info = &jinst_opcodes[in->opcode];
		if (!info->name || in->opcode == JINST_OP_WIDE)
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "instruction %u: opcode 0x%02x", i, in->opcode);
		if (info->flags & (JINST_OPF_BRANCH | JINST_OPF_SWITCH | JINST_OPF_SUBROUTINE))
			return jinst_fail(diag, JINST_EUNSUPPORTED, JINST_NO_OFFSET,
			                  "instruction %u: %s needs frames (the code editor adds jumps)", i, info->name);
		if ((info->flags & JINST_OPF_UNCONDITIONAL) != 0 && i + 1 != count)
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "instruction %u: %s before the end", i,
			                  info->name);
		uint32_t local;
		int words, pops, pushes;
		bool touches = local_of(in, &local, &words);
		uint32_t most = info->kind == JINST_OPND_CP1 ? 255 : 65535;
		if ((touches || info->cp != JINST_OPCP_NONE) && (uint32_t)in->operand > most)
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "instruction %u: %s: operand %d", i,
			                  info->name, in->operand);
		in->wide = touches && info->kind != JINST_OPND_NONE &&
		           (local > 255 || (in->opcode == JINST_OP_IINC && (in->operand2 < -128 || in->operand2 > 127)));
		if (touches && local + (uint32_t)words > *max_locals)
			*max_locals = local + (uint32_t)words;
		if (jinst_insn_effect(c, in, &pops, &pushes))
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "instruction %u: %s: pool index %d", i,
			                  info->name, in->operand);
		if ((depth -= pops) < 0)
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "instruction %u: %s: stack underflow", i,
			                  info->name);
		if ((depth += pushes) > top)
			top = depth;
		in->offset = pc;
		in->length = (uint8_t)(in->wide ? (in->opcode == JINST_OP_IINC ? 6 : 4) : info->length);
		pc += in->length;
	}
	if (!count || !(jinst_opcodes[v[count - 1].opcode].flags & JINST_OPF_UNCONDITIONAL))
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "the code runs off its end");
	*max_stack = (uint32_t)top;
	*length = pc;
	return 0;
}

/* The Code attribute's info: header, code, no handler, no attribute. */
static int code_info(jinst_class *c, const jinst_insn *v, uint32_t count, uint32_t max_stack, uint32_t max_locals,
                     uint32_t length, jinst_attr *a, jinst_diag *diag)
{
	jinst_buf b = {0};
	if (c->old_code_layout) {
		jinst_buf_u1(&b, (uint8_t)max_stack);
		jinst_buf_u1(&b, (uint8_t)max_locals);
		jinst_buf_u2(&b, (uint16_t)length);
	} else {
		jinst_buf_u2(&b, (uint16_t)max_stack);
		jinst_buf_u2(&b, (uint16_t)max_locals);
		jinst_buf_u4(&b, length);
	}
	int rc = jinst_code_encode(c, v, count, &b, diag);
	jinst_buf_u2(&b, 0);
	jinst_buf_u2(&b, 0);
	uint8_t *info = !rc && !b.oom ? jinst_arena_alloc(c->arena, b.len) : NULL;
	if (info)
		memcpy(info, b.data, b.len);
	a->info = info;
	a->length = (uint32_t)b.len;
	jinst_buf_free(&b);
	if (rc)
		return rc;
	return info ? 0 : jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
}

int jinst_code_build(jinst_class *c, jinst_member *m, const jinst_insn *insns, uint32_t count, jinst_diag *diag)
{
	int rc = jinst_member_attrs_load(m, diag);
	if (rc)
		return rc;
	if (!m->method || (m->access_flags & (JINST_ACC_NATIVE | JINST_ACC_ABSTRACT)) ||
	    jinst_attr_find(&m->attrs, JINST_ATTR_CODE))
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "a Code attribute goes to a method without one, "
		                                                       "neither native nor abstract");
	uint16_t dlen;
	const uint8_t *d = jinst_cp_utf8(c, m->descriptor_index, &dlen);
	int args = d ? argument_words(d, dlen) : -1;
	if (args < 0)
		return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "the method's descriptor does not parse");
	jinst_insn *v = jinst_arena_alloc(c->arena, (count ? count : 1) * sizeof(*v));
	jinst_attr *items = jinst_arena_alloc(c->arena, ((size_t)m->attrs.count + 1) * sizeof(*items));
	if (!v || !items)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	if (count)
		memcpy(v, insns, count * sizeof(*v));
	uint32_t max_stack = 0, max_locals = (uint32_t)args + ((m->access_flags & JINST_ACC_STATIC) ? 0 : 1), length = 0;
	if ((rc = lay_out(c, v, count, &max_stack, &max_locals, &length, diag)))
		return rc;
	uint32_t limit = c->old_code_layout ? 255 : 65535;
	if (max_stack > limit || max_locals > limit || length > 65535)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "max_stack %u, max_locals %u, %u bytes of code",
		                  max_stack, max_locals, length);
	jinst_attr a;
	memset(&a, 0, sizeof(a));
	a.kind = JINST_ATTR_CODE;
	if ((rc = jinst_cp_add_utf8(c, "Code", 4, &a.name_index)))
		return jinst_fail(diag, rc, JINST_NO_OFFSET, "cannot add \"Code\" to the pool");
	if ((rc = code_info(c, v, count, max_stack, max_locals, length, &a, diag)))
		return rc;
	if (m->attrs.count)
		memcpy(items, m->attrs.items, (size_t)m->attrs.count * sizeof(*items));
	items[m->attrs.count] = a;
	m->attrs.items = items;
	m->attrs.count++;
	m->modified = true;
	return 0;
}
