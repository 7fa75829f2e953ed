/*
 * StackMapTable expansion (JVMS 4.7.4, 4.10.1.6): turns the compact frames
 * into full frames at absolute offsets. The first frame is implicit: it
 * comes from the method descriptor, `this` being uninitializedThis in
 * constructors (other than Object's). Every later frame is a delta against
 * the previous one, so expansion walks the table once, copying the locals
 * only when they change.
 */
#include "internal.h"

bool jinst_descriptor_type(const uint8_t **p, const uint8_t *end, jinst_ftype *t)
{
	const uint8_t *s = *p;
	t->value = 0;
	t->name = NULL;
	t->name_length = 0;
	if (s >= end)
		return false;
	switch (*s) {
	case 'B': case 'C': case 'I': case 'S': case 'Z': t->tag = JINST_VT_INTEGER; *p = s + 1; return true;
	case 'F': t->tag = JINST_VT_FLOAT; *p = s + 1; return true;
	case 'J': t->tag = JINST_VT_LONG; *p = s + 1; return true;
	case 'D': t->tag = JINST_VT_DOUBLE; *p = s + 1; return true;
	case 'L': {
		const uint8_t *e = memchr(s, ';', (size_t)(end - s));
		if (!e || e == s + 1 || s[1] == '[')
			return false; /* no name, or an array where a class must be */
		t->tag = JINST_VT_OBJECT;
		t->name = s + 1;
		t->name_length = (uint16_t)(e - s - 1);
		*p = e + 1;
		return true;
	}
	case '[': {
		const uint8_t *q = s;
		while (q < end && *q == '[')
			q++;
		if (q - s > 255)
			return false;
		jinst_ftype elem;
		if (!jinst_descriptor_type(&q, end, &elem))
			return false;
		t->tag = JINST_VT_OBJECT;
		t->name = s;
		t->name_length = (uint16_t)(q - s);
		*p = q;
		return true;
	}
	default:
		return false;
	}
}

bool jinst_ftype_equal(const jinst_ftype *a, const jinst_ftype *b)
{
	return jinst_ftype_same(a, b);
}

static void resolve(const jinst_class *c, const jinst_vtype *v, jinst_ftype *t)
{
	t->tag = v->tag;
	t->value = v->value;
	t->name = NULL;
	t->name_length = 0;
	if (v->tag == JINST_VT_OBJECT)
		t->name = jinst_cp_name(c, v->value, &t->name_length);
}

/* The locals of the implicit first frame, from the method descriptor. */
static int initial_locals(jinst_class *c, const jinst_member *m, jinst_ftype **locals, uint16_t *count,
                          jinst_diag *diag)
{
	uint16_t dlen, nlen;
	const uint8_t *desc = jinst_cp_utf8(c, m->descriptor_index, &dlen);
	const uint8_t *name = jinst_cp_utf8(c, m->name_index, &nlen);
	if (!desc || !name)
		return jinst_fail(diag, JINST_EMALFORMED, m->offset, "method name or descriptor is not a Utf8");
	/* The initial frame: at most 255 parameter slots plus `this` (JVMS 4.3.3). */
	jinst_ftype *init = jinst_arena_alloc(c->arena, 257 * sizeof(*init));
	if (!init)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	uint16_t n = 0;
	if (!(m->access_flags & JINST_ACC_STATIC)) {
		uint16_t cl;
		const uint8_t *cn = jinst_class_name(c, &cl);
		if (!cn || !cl || cn[0] == '[')
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "this_class does not name a class");
		bool ctor = nlen == 6 && memcmp(name, "<init>", 6) == 0;
		bool object = cn && cl == 16 && memcmp(cn, "java/lang/Object", 16) == 0;
		init[n].tag = ctor && !object ? JINST_VT_UNINITIALIZED_THIS : JINST_VT_OBJECT;
		init[n].value = init[n].tag == JINST_VT_OBJECT ? c->this_class : 0;
		init[n].name = cn;
		init[n].name_length = cn ? cl : 0;
		if (init[n].tag != JINST_VT_OBJECT) {
			init[n].name = NULL;
			init[n].name_length = 0;
		}
		n++;
	}
	const uint8_t *p = desc, *end = desc + dlen;
	if (p >= end || *p != '(')
		return jinst_fail(diag, JINST_EMALFORMED, m->offset + 4, "method descriptor does not start with '('");
	p++;
	while (p < end && *p != ')') {
		if (n >= 256 || !jinst_descriptor_type(&p, end, &init[n]))
			return jinst_fail(diag, JINST_EMALFORMED, m->offset + 4, "malformed method descriptor");
		n++;
	}
	if (p >= end)
		return jinst_fail(diag, JINST_EMALFORMED, m->offset + 4, "malformed method descriptor");
	*locals = init;
	*count = n;
	return 0;
}

int jinst_initial_frame(jinst_class *c, const jinst_member *m, const jinst_ftype **locals, uint16_t *count,
                        jinst_diag *diag)
{
	if (c->init_member != m || c->init_key != ((uint64_t)m->access_flags << 32 | (uint32_t)m->name_index << 16 |
	                                            m->descriptor_index)) {
		jinst_ftype *l;
		uint16_t n;
		int rc = initial_locals(c, m, &l, &n, diag);
		if (rc)
			return rc;
		c->init_member = m;
		c->init_key = (uint64_t)m->access_flags << 32 | (uint32_t)m->name_index << 16 | m->descriptor_index;
		c->init_locals = l;
		c->init_count = n;
	}
	*locals = c->init_locals;
	*count = c->init_count;
	return 0;
}

int jinst_stack_map_expand(jinst_class *c, const jinst_member *m, const jinst_stack_map *map,
                           jinst_full_frame **frames, jinst_diag *diag)
{
	*frames = NULL;
	jinst_ftype *init;
	uint16_t n;
	int rc = initial_locals(c, m, &init, &n, diag);
	if (rc)
		return rc;
	uint32_t count = map ? map->count : 0;
	jinst_full_frame *out = jinst_arena_alloc(c->arena, (count ? count : 1) * sizeof(*out));
	if (!out)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	if (!map) {
		out[0] = (jinst_full_frame){0, n, 0, init, NULL};
		*frames = out;
		return 0;
	}
	jinst_ftype *locals = init;
	uint16_t nlocals = n;
	int64_t offset = -1;
	for (uint32_t i = 0; i < count; i++) {
		const jinst_frame *f = &map->frames[i];
		offset += (int64_t)f->offset_delta + 1;
		jinst_full_frame *o = &out[i];
		o->offset = (uint32_t)offset;
		o->nstack = 0;
		o->stack = NULL;
		uint8_t t = f->type;
		if (t >= 248 && t <= 250) {
			uint16_t k = (uint16_t)(251 - t);
			if (k > nlocals)
				return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
				                  "StackMapTable frame %u chops %u locals of %u", (unsigned)i, k, nlocals);
			nlocals = (uint16_t)(nlocals - k);
		} else if ((t >= 252 && t <= 254) || t == 255) {
			uint16_t keep = t == 255 ? 0 : nlocals;
			jinst_ftype *nl = jinst_arena_alloc(c->arena, ((size_t)keep + f->nlocals + 1) * sizeof(*nl));
			if (!nl)
				return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
			memcpy(nl, locals, keep * sizeof(*nl));
			for (uint16_t k = 0; k < f->nlocals; k++)
				resolve(c, &f->locals[k], &nl[keep + k]);
			locals = nl;
			nlocals = (uint16_t)(keep + f->nlocals);
		}
		if (f->nstack) {
			o->stack = jinst_arena_alloc(c->arena, f->nstack * sizeof(*o->stack));
			if (!o->stack)
				return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
			for (uint16_t k = 0; k < f->nstack; k++)
				resolve(c, &f->stack[k], &o->stack[k]);
			o->nstack = f->nstack;
		}
		o->locals = locals;
		o->nlocals = nlocals;
	}
	*frames = out;
	return 0;
}
