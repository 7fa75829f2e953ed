/*
 * StackMapTable compression (JVMS 4.7.4): full frames at absolute offsets,
 * as frame inference or an editor produce them, back into the compact
 * encoding a class file carries.
 *
 * Each frame is written as a delta against the one before it (the first
 * against the frame the method descriptor implies), in the smallest form
 * that says it: same_frame when locals match and the stack is empty,
 * same_locals_1_stack_item when one stack item is all that differs, chop
 * when up to three trailing locals went away, append when up to three
 * were added, and full_frame otherwise; the _extended variants take over
 * when the offset delta does not fit in the frame type. Locals are compared
 * as a StackMapTable lists them (a long or double is one entry), which is
 * also how chop and append count (JVMS 4.7.4, "k" verification types).
 *
 * Object types that carry no constant (value 0: a name taken from a
 * descriptor or computed by a merge) get a Class constant: first looked up
 * by name among the original pool's Class constants (a small table built
 * once per class), else through the pool builder, which finds an appended
 * one before it appends. Nearly every such name is already in the pool, so
 * most classes never build the builder's table over their whole pool.
 */
#include "internal.h"

#include "jinst/infer.h"

static bool ftypes_equal(const jinst_ftype *a, const jinst_ftype *b, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		if (!jinst_ftype_same(&a[i], &b[i]))
			return false;
	return true;
}

static int to_vtype(jinst_class *c, const jinst_ftype *t, jinst_vtype *v, jinst_diag *diag)
{
	v->tag = t->tag;
	v->value = 0;
	if (t->tag == JINST_VT_UNINITIALIZED) {
		v->value = t->value;
	} else if (t->tag == JINST_VT_OBJECT) {
		if (t->value && jinst_cp_tag(c, t->value) == JINST_CP_CLASS) {
			v->value = t->value;
			return 0;
		}
		if (!t->name || !t->name_length)
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "object type with neither a constant nor a name");
		if ((v->value = jinst_cp_find_class(c, t->name, t->name_length)) != 0)
			return 0;
		uint16_t utf8;
		int rc = jinst_cp_add_utf8(c, (const char *)t->name, t->name_length, &utf8);
		if (rc)
			return jinst_fail(diag, rc, JINST_NO_OFFSET, "cannot add the class name %.*s to the constant pool",
			                  (int)t->name_length, (const char *)t->name);
		jinst_cp_entry e = {.tag = JINST_CP_CLASS, .u.index = utf8};
		rc = jinst_cp_add(c, &e, &v->value);
		if (rc)
			return jinst_fail(diag, rc, JINST_NO_OFFSET, "cannot add class %.*s to the constant pool",
			                  (int)t->name_length, (const char *)t->name);
	} else if (t->tag > JINST_VT_UNINITIALIZED) {
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "verification type tag %u", t->tag);
	}
	return 0;
}

static int to_vtypes(jinst_class *c, const jinst_ftype *t, uint16_t n, jinst_vtype **out, jinst_diag *diag)
{
	*out = NULL;
	if (!n)
		return 0;
	jinst_vtype *v = jinst_arena_alloc(c->arena, (size_t)n * sizeof(*v));
	if (!v)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint16_t i = 0; i < n; i++) {
		int rc = to_vtype(c, &t[i], &v[i], diag);
		if (rc)
			return rc;
	}
	*out = v;
	return 0;
}

int jinst_stack_map_compress(jinst_class *c, const jinst_member *m, const jinst_full_frame *frames, uint32_t count,
                             jinst_stack_map **out, jinst_diag *diag)
{
	*out = NULL;
	if (count > UINT16_MAX)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "%u frames, a StackMapTable holds at most 65535",
		                  (unsigned)count);
	const jinst_ftype *prev;
	uint16_t nprev;
	int rc = jinst_initial_frame(c, m, &prev, &nprev, diag);
	if (rc)
		return rc;
	jinst_stack_map *map = jinst_arena_zalloc(c->arena, sizeof(*map));
	jinst_frame *fs = jinst_arena_zalloc(c->arena, (count ? count : 1) * sizeof(*fs));
	if (!map || !fs)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	int64_t last = -1;
	for (uint32_t i = 0; i < count; i++) {
		const jinst_full_frame *f = &frames[i];
		jinst_frame *o = &fs[i];
		int64_t delta = (int64_t)f->offset - last - 1;
		if (delta < 0 || delta > UINT16_MAX)
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "frame %u at offset %u does not follow offset %lld",
			                  (unsigned)i, (unsigned)f->offset, (long long)last);
		last = f->offset;
		o->offset_delta = (uint16_t)delta;
		bool same_locals = f->nlocals == nprev && ftypes_equal(f->locals, prev, nprev);
		if (same_locals && f->nstack == 0) {
			o->type = delta <= 63 ? (uint8_t)delta : 251;
		} else if (same_locals && f->nstack == 1) {
			o->type = delta <= 63 ? (uint8_t)(64 + delta) : 247;
			o->nstack = 1;
			rc = to_vtypes(c, f->stack, 1, &o->stack, diag);
		} else if (f->nstack == 0 && f->nlocals < nprev && nprev - f->nlocals <= 3 &&
		           ftypes_equal(f->locals, prev, f->nlocals)) {
			o->type = (uint8_t)(251 - (nprev - f->nlocals));
		} else if (f->nstack == 0 && f->nlocals > nprev && f->nlocals - nprev <= 3 &&
		           ftypes_equal(f->locals, prev, nprev)) {
			o->type = (uint8_t)(251 + (f->nlocals - nprev));
			o->nlocals = (uint16_t)(f->nlocals - nprev);
			rc = to_vtypes(c, f->locals + nprev, o->nlocals, &o->locals, diag);
		} else {
			o->type = 255;
			o->nlocals = f->nlocals;
			o->nstack = f->nstack;
			rc = to_vtypes(c, f->locals, f->nlocals, &o->locals, diag);
			if (!rc)
				rc = to_vtypes(c, f->stack, f->nstack, &o->stack, diag);
		}
		if (rc)
			return rc;
		prev = f->locals;
		nprev = f->nlocals;
	}
	map->count = (uint16_t)count;
	map->frames = fs;
	*out = map;
	return 0;
}

/* The method's Code attribute and its decoded model. */
static int method_code(jinst_class *c, jinst_member *m, jinst_attr **attr, jinst_code **code, jinst_diag *diag)
{
	*code = NULL;
	*attr = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	if (!*attr)
		return jinst_fail(diag, JINST_EINVAL, m->offset, "the method has no Code attribute");
	void *model;
	int rc = jinst_attr_decode(c, *attr, &model, diag);
	if (rc)
		return rc;
	*code = model;
	return 0;
}

int jinst_code_set_stack_map(jinst_class *c, jinst_member *m, jinst_stack_map *map, jinst_diag *diag)
{
	jinst_attr *code_attr;
	jinst_code *code;
	int rc = method_code(c, m, &code_attr, &code, diag);
	if (rc)
		return rc;
	jinst_attr_list *list = &code->attrs;
	jinst_attr *smt = jinst_attr_find(list, JINST_ATTR_STACK_MAP_TABLE);
	bool empty = !map || map->count == 0;
	if (smt && empty) {
		uint16_t at = (uint16_t)(smt - list->items);
		memmove(smt, smt + 1, (size_t)(list->count - at - 1) * sizeof(*smt));
		list->count--;
	} else if (smt) {
		smt->model = map;
		smt->modified = true;
	} else if (!empty) {
		if (list->count == UINT16_MAX)
			return jinst_fail(diag, JINST_ETOOLARGE, m->offset, "Code already has 65535 attributes");
		uint16_t name;
		rc = jinst_cp_add_utf8(c, "StackMapTable", 13, &name);
		if (rc)
			return jinst_fail(diag, rc, JINST_NO_OFFSET, "cannot add \"StackMapTable\" to the constant pool");
		jinst_attr *items = jinst_arena_alloc(c->arena, ((size_t)list->count + 1) * sizeof(*items));
		if (!items)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		if (list->count)
			memcpy(items, list->items, list->count * sizeof(*items));
		items[list->count] = (jinst_attr){.name_index = name, .kind = JINST_ATTR_STACK_MAP_TABLE,
		                                  .modified = true, .model = map};
		list->items = items;
		list->count++;
	} else {
		return 0; /* nothing there, nothing to put there */
	}
	code_attr->modified = true;
	return 0;
}

int jinst_frames_recompute(jinst_class *c, jinst_member *m, const jinst_hierarchy *h, jinst_diag *diag)
{
	jinst_attr *code_attr;
	jinst_code *code;
	int rc = method_code(c, m, &code_attr, &code, diag);
	if (rc)
		return rc;
	jinst_full_frame *frames;
	uint32_t count;
	rc = jinst_frames_infer(c, m, code, h, &frames, &count, diag);
	/* The type checker knows neither jsr/ret nor code no path reaches, the
	 * two things the inference refuses as EUNSUPPORTED: subroutines are
	 * inlined, then dead code patched (classfile/jsr.c, classfile/infer.c),
	 * and the inference runs again. Both work on a copy of the Code model,
	 * installed only once the frames are computed: a method that fails stays
	 * as it was. Nearly every method takes the first path alone. */
	uint32_t copies = 0, runs = 0;
	jinst_code work = *code;
	if (rc == JINST_EUNSUPPORTED) {
		jinst_diag first = diag ? *diag : (jinst_diag){0};
		rc = jinst_code_inline_subroutines(c, &work, &copies, diag);
		if (!rc)
			rc = jinst_code_patch_unreachable(c, &work, &runs, diag);
		if (!rc && !copies && !runs) {
			if (diag)
				*diag = first; /* nothing to rewrite: the first refusal stands */
			return JINST_EUNSUPPORTED;
		}
		if (!rc)
			rc = jinst_frames_infer(c, m, &work, h, &frames, &count, diag);
	}
	if (rc)
		return rc;
	jinst_stack_map *map;
	rc = jinst_stack_map_compress(c, m, frames, count, &map, diag);
	if (rc)
		return rc;
	if (copies || runs) {
		*code = work;
		code_attr->modified = true;
	}
	return jinst_code_set_stack_map(c, m, map, diag);
}
