/*
 * The code patcher's layout and commit (see patch.c for how the patcher
 * works): the points where offsets shift, the mapping of original offsets
 * through them, and the new Code attribute written in one pass over the old
 * one into a buffer sized for the worst case.
 */
#include "patch_internal.h"

/* ---- layout ---- */

static int cmp_insertion(const void *a, const void *b)
{
	const insertion *x = a, *y = b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static inline uint32_t switch_pad(uint32_t at)
{
	return 3 - (at & 3);
}

/* The points in order, and the new code length (without the handler). */
static int layout(jinst_patch *p, uint32_t *new_len)
{
	if (!p->sorted)
		qsort(p->ins, p->nins, sizeof(*p->ins), cmp_insertion);
	p->pts = jinst_arena_alloc(p->cls->arena, ((size_t)p->nins + p->nfix + 1) * sizeof(point));
	if (!p->pts)
		return JINST_ENOMEM;
	uint32_t i = 0, f = 0, n = 0;
	int64_t shift = 0;
	for (;;) {
		while (f < p->nfix && !is_switch(p->code[p->fix[f]]))
			f++;
		uint32_t at = UINT32_MAX;
		if (i < p->nins)
			at = p->ins[i].offset;
		if (f < p->nfix && p->fix[f] < at)
			at = p->fix[f];
		if (at == UINT32_MAX)
			break;
		point *pt = &p->pts[n++];
		pt->orig = at;
		pt->ins_lo = i;
		int64_t out = 0, in = 0;
		for (; i < p->nins && p->ins[i].offset == at; i++)
			*(p->ins[i].rank ? &in : &out) += p->ins[i].len;
		pt->ins_hi = i;
		int64_t pos = at + shift + out, insn = pos + in;
		if (insn > 65535)
			return JINST_ETOOLARGE;
		pt->pos = (uint32_t)pos;
		pt->insn = (uint32_t)insn;
		shift += out + in;
		if (f < p->nfix && p->fix[f] == at) {
			shift += (int64_t)switch_pad((uint32_t)insn) - switch_pad(at);
			f++;
		}
		pt->after = (int32_t)shift;
	}
	p->npts = n;
	int64_t len = (int64_t)p->code_length + shift;
	if (len > 65535)
		return JINST_ETOOLARGE;
	*new_len = (uint32_t)len;
	return 0;
}

/* The last point at or before off, or NULL. */
static inline const point *point_at(const jinst_patch *p, uint32_t off)
{
	uint32_t lo = 0, hi = p->npts;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (p->pts[mid].orig <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &p->pts[lo - 1] : NULL;
}

/* New offset of the position off (branch targets, tables, frames). */
static inline uint32_t map_pos(const jinst_patch *p, uint32_t off)
{
	const point *pt = point_at(p, off);
	if (!pt)
		return off;
	return pt->orig == off ? pt->pos : (uint32_t)((int64_t)off + pt->after);
}

/* New offset of the instruction at off itself (an uninitialized type's `new`). */
static inline uint32_t map_insn(const jinst_patch *p, uint32_t off)
{
	const point *pt = point_at(p, off);
	if (!pt)
		return off;
	return pt->orig == off ? pt->insn : (uint32_t)((int64_t)off + pt->after);
}

/* ---- commit ---- */

/* Output cursor: the buffer is sized for the worst case up front. */
typedef struct out {
	uint8_t *p;
} out;

static inline void put_u1(out *o, uint8_t v)
{
	*o->p++ = v;
}

static inline void put_u2(out *o, uint16_t v)
{
	jinst_put_u2(o->p, v);
	o->p += 2;
}

static inline void put_u4(out *o, uint32_t v)
{
	jinst_put_u4(o->p, v);
	o->p += 4;
}

/* Branches and switches at their new offset `now`. */
static int relocate(jinst_patch *p, uint32_t at, uint32_t now, out *o, jinst_diag *diag)
{
	const uint8_t *code = p->code;
	uint8_t op = code[at];
	if (is_switch(op)) {
		uint32_t base = (at + 4) & ~3u;
		put_u1(o, op);
		for (uint32_t k = switch_pad(now); k; k--)
			put_u1(o, 0);
		uint32_t n, head;
		if (op == JINST_OP_TABLESWITCH) {
			int32_t lo = (int32_t)jinst_be32(code + base + 4), hi = (int32_t)jinst_be32(code + base + 8);
			n = (uint32_t)((int64_t)hi - lo + 1);
			head = 12;
		} else {
			n = jinst_be32(code + base + 4);
			head = 8;
		}
		/* default (and low, high or npairs), then the offsets (or pairs). */
		const uint8_t *q = code + base;
		for (uint32_t k = 0; k < head / 4 + n * (op == JINST_OP_LOOKUPSWITCH ? 2u : 1u); k++, q += 4) {
			bool is_target = k == 0 || (op == JINST_OP_TABLESWITCH ? k >= 3 : (k >= 2 && k % 2 == 1));
			if (!is_target) {
				put_u4(o, jinst_be32(q));
				continue;
			}
			int64_t t = (int64_t)at + (int32_t)jinst_be32(q);
			if (t < 0 || !is_start(p, (uint32_t)t))
				return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "switch at %u: target %lld not an instruction",
				                  (unsigned)at, (long long)t);
			if (p->need)
				set_bit(p->need, (uint32_t)t);
			put_u4(o, (uint32_t)((int64_t)map_pos(p, (uint32_t)t) - now));
		}
		return 0;
	}
	bool wide = jinst_opcodes[op].kind == JINST_OPND_BRANCH4;
	int32_t rel = wide ? (int32_t)jinst_be32(code + at + 1) : (int16_t)jinst_be16(code + at + 1);
	int64_t t = (int64_t)at + rel;
	if (t < 0 || !is_start(p, (uint32_t)t))
		return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "branch at %u: target %lld not an instruction",
		                  (unsigned)at, (long long)t);
	/* jsr's target is a subroutine: no frame there (and none before 51). */
	if (p->need && !(jinst_opcodes[op].flags & JINST_OPF_SUBROUTINE))
		set_bit(p->need, (uint32_t)t);
	int64_t nrel = (int64_t)map_pos(p, (uint32_t)t) - now;
	put_u1(o, op);
	if (wide) {
		put_u4(o, (uint32_t)nrel);
	} else {
		if (nrel < INT16_MIN || nrel > INT16_MAX)
			return jinst_fail(diag, JINST_EUNSUPPORTED, JINST_NO_OFFSET,
			                  "branch at %u no longer reaches its target: left to the editor", (unsigned)at);
		put_u2(o, (uint16_t)(int16_t)nrel);
	}
	return 0;
}

static int emit_code(jinst_patch *p, uint8_t *start, out *o, jinst_diag *diag)
{
	uint32_t cur = 0, pi = 0, fi = 0;
	for (;;) {
		uint32_t at = UINT32_MAX;
		if (pi < p->npts)
			at = p->pts[pi].orig;
		if (fi < p->nfix && p->fix[fi] < at)
			at = p->fix[fi];
		if (at == UINT32_MAX)
			break;
		memcpy(o->p, p->code + cur, at - cur);
		o->p += at - cur;
		cur = at;
		if (pi < p->npts && p->pts[pi].orig == at) {
			const point *pt = &p->pts[pi++];
			for (uint32_t k = pt->ins_lo; k < pt->ins_hi; k++) {
				memcpy(o->p, p->ins[k].bytes, p->ins[k].len);
				o->p += p->ins[k].len;
			}
		}
		if (fi < p->nfix && p->fix[fi] == at) {
			int rc = relocate(p, at, (uint32_t)(o->p - start), o, diag);
			if (rc)
				return rc;
			cur = at + jinst_insn_length(p->code, p->code_length, at);
			fi++;
		}
	}
	memcpy(o->p, p->code + cur, p->code_length - cur);
	o->p += p->code_length - cur;
	return 0;
}

/* An original position a table names: an instruction, or with end the end of the code. */
static inline bool position_ok(const jinst_patch *p, uint32_t off, bool end)
{
	return is_start(p, off) || (end && off == p->code_length);
}

/* Locals of the method's initial frame, in entries (JVMS 4.10.1.6). */
static int initial_locals(jinst_patch *p)
{
	uint16_t len;
	const uint8_t *d = jinst_cp_utf8(p->cls, p->method->descriptor_index, &len);
	int n = (p->method->access_flags & JINST_ACC_STATIC) ? 0 : 1;
	if (!d || !len || d[0] != '(')
		return -1;
	const uint8_t *q = d + 1, *end = d + len;
	jinst_ftype t;
	while (q < end && *q != ')') {
		if (!jinst_descriptor_type(&q, end, &t))
			return -1;
		n++;
	}
	if (q == end || ++q == end) /* no ')', or nothing after it */
		return -1;
	if (*q == 'V')
		q++;
	else if (!jinst_descriptor_type(&q, end, &t))
		return -1;
	return q == end ? n : -1;
}

static int copy_vtypes(jinst_patch *p, jinst_reader *r, uint32_t n, out *o)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t tag = jinst_rd_u1(r);
		if (r->bad || tag > JINST_VT_UNINITIALIZED)
			return JINST_EMALFORMED;
		put_u1(o, tag);
		if (tag == JINST_VT_OBJECT) {
			put_u2(o, jinst_rd_u2(r));
		} else if (tag == JINST_VT_UNINITIALIZED) {
			uint16_t off = jinst_rd_u2(r);
			if (r->bad || !is_start(p, off) || p->code[off] != JINST_OP_NEW)
				return JINST_EMALFORMED;
			put_u2(o, (uint16_t)map_insn(p, off));
		}
	}
	return r->bad ? JINST_EMALFORMED : 0;
}

static void put_frame_delta(out *o, uint8_t small_base, uint8_t ext, uint32_t nd)
{
	if (nd <= 63) {
		put_u1(o, (uint8_t)(small_base + nd));
	} else {
		put_u1(o, ext);
		put_u2(o, (uint16_t)nd);
	}
}

/* The handler's frame after a frame at prev_new (-1: none) with nloc locals. */
static void put_handler_frame(jinst_patch *p, out *o, int64_t prev_new, int nloc, uint32_t at, uint16_t cls)
{
	uint32_t nd = (uint32_t)(at - prev_new - 1);
	(void)p;
	if (nloc == 0) {
		put_frame_delta(o, 64, 247, nd);
	} else {
		put_u1(o, 255);
		put_u2(o, (uint16_t)nd);
		put_u2(o, 0);
		put_u2(o, 1);
	}
	put_u1(o, JINST_VT_OBJECT);
	put_u2(o, cls);
}

static int emit_frames(jinst_patch *p, jinst_reader *r, out *o, uint32_t handler_at, uint16_t handler_cls)
{
	uint16_t count = jinst_rd_u2(r);
	put_u2(o, (uint16_t)(count + (p->handler ? 1 : 0)));
	int64_t prev_old = -1, prev_new = -1;
	int nloc = initial_locals(p);
	for (uint32_t i = 0; i < count; i++) {
		uint8_t type = jinst_rd_u1(r);
		uint32_t delta;
		if (type <= 63)
			delta = type;
		else if (type <= 127)
			delta = type - 64u;
		else if (type >= 247)
			delta = jinst_rd_u2(r);
		else
			return JINST_EMALFORMED;
		if (r->bad)
			return JINST_EMALFORMED;
		int64_t old = prev_old + delta + 1;
		if (old >= p->code_length || !is_start(p, (uint32_t)old))
			return JINST_EMALFORMED;
		if (p->need)
			p->need[old >> 3] &= (uint8_t)~(1u << (old & 7));
		uint32_t now = map_pos(p, (uint32_t)old);
		uint32_t nd = (uint32_t)(now - prev_new - 1);
		prev_old = old;
		prev_new = now;
		int rc = 0;
		if (type <= 63 || type == 251) {
			put_frame_delta(o, 0, 251, nd);
		} else if (type <= 127 || type == 247) {
			put_frame_delta(o, 64, 247, nd);
			rc = copy_vtypes(p, r, 1, o);
		} else if (type <= 250) {
			put_u1(o, type);
			put_u2(o, (uint16_t)nd);
			nloc -= 251 - type;
		} else if (type <= 254) {
			put_u1(o, type);
			put_u2(o, (uint16_t)nd);
			rc = copy_vtypes(p, r, type - 251u, o);
			nloc += type - 251;
		} else {
			put_u1(o, type);
			put_u2(o, (uint16_t)nd);
			uint16_t nl = jinst_rd_u2(r);
			put_u2(o, nl);
			if (!rc)
				rc = copy_vtypes(p, r, nl, o);
			uint16_t ns = jinst_rd_u2(r);
			put_u2(o, ns);
			if (!rc)
				rc = copy_vtypes(p, r, ns, o);
			nloc = nl;
		}
		if (rc || r->bad)
			return JINST_EMALFORMED;
	}
	if (r->pos != r->end)
		return JINST_EMALFORMED;
	if (p->handler)
		put_handler_frame(p, o, prev_new, nloc, handler_at, handler_cls);
	return 0;
}

/* The commit's output: the cursor, and what the handler's frame and entries need. */
typedef struct emit {
	out o;
	uint32_t handler_at;  /* new offset of the appended handler: the end of the laid-out code */
	uint16_t handler_cls; /* its catch type, java/lang/Throwable for any */
	uint16_t smt_name;    /* "StackMapTable", when the method had none and now needs one */
} emit;

static void clear_diag(jinst_diag *diag)
{
	if (diag) {
		diag->code = 0;
		diag->offset = JINST_NO_OFFSET;
		diag->where[0] = diag->message[0] = '\0';
	}
}

/* max_stack with the insertions and the handler (each runs on the stack it finds). */
static uint32_t new_max_stack(const jinst_patch *p)
{
	uint32_t max_stack = p->max_stack;
	for (uint32_t i = 0; i < p->nins; i++) {
		const insertion *x = &p->ins[i];
		/* Outside offset 0 is the method entry: the stack is empty. */
		uint32_t need = x->offset == 0 && x->rank == 0 ? x->depth : (uint32_t)p->max_stack + x->depth;
		if (need > max_stack)
			max_stack = need;
	}
	if (p->handler && 1u + p->handler_depth > max_stack)
		max_stack = 1u + p->handler_depth;
	return max_stack;
}

/* From version 50 the handler needs a frame: its catch type, and a
 * StackMapTable of its own when the method had none, go in the pool. */
static int prepare_handler_frame(jinst_patch *p, emit *e, jinst_diag *diag)
{
	jinst_class *c = p->cls;
	e->handler_cls = p->catch_type;
	e->smt_name = 0;
	if (!p->handler || c->major_version < 50 || p->frameless)
		return 0;
	/* The handler's frame follows from the method's initial one, which
	 * must make sense (a descriptor, this_class) even when the method had
	 * no frames before. */
	jinst_full_frame *init;
	int rc;
	if (initial_locals(p) < 0)
		return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "method descriptor malformed");
	if ((rc = jinst_stack_map_expand(c, p->method, NULL, &init, diag)))
		return rc;
	if (!e->handler_cls && (rc = jinst_cp_add_class(c, "java/lang/Throwable", &e->handler_cls)))
		return jinst_fail(diag, rc, JINST_NO_OFFSET, "adding java/lang/Throwable: %s", jinst_strerror(rc));
	if (!p->has_frames && (rc = jinst_cp_add_utf8(c, "StackMapTable", 13, &e->smt_name)))
		return jinst_fail(diag, rc, JINST_NO_OFFSET, "adding StackMapTable: %s", jinst_strerror(rc));
	return 0;
}

/* The original exception table moved, then the handler's ranges. */
static int emit_exception_table(jinst_patch *p, jinst_reader *r, emit *e, jinst_diag *diag)
{
	out *o = &e->o;
	uint16_t nexc = jinst_rd_u2(r);
	put_u2(o, (uint16_t)(nexc + p->nranges));
	for (uint32_t i = 0; i < nexc; i++) {
		uint16_t s = jinst_rd_u2(r), end = jinst_rd_u2(r), h = jinst_rd_u2(r), t = jinst_rd_u2(r);
		if (!position_ok(p, s, false) || !position_ok(p, end, true) || !position_ok(p, h, false) || s >= end)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
			                  "exception_table[%u]: %u-%u -> %u not on instructions", (unsigned)i, s, end, h);
		if (p->need)
			set_bit(p->need, h);
		put_u2(o, (uint16_t)map_pos(p, s));
		put_u2(o, (uint16_t)map_pos(p, end));
		put_u2(o, (uint16_t)map_pos(p, h));
		put_u2(o, t);
	}
	for (uint32_t i = 0; i < p->nranges; i++) {
		put_u2(o, (uint16_t)map_pos(p, p->ranges[i].start));
		put_u2(o, (uint16_t)map_pos(p, p->ranges[i].end));
		put_u2(o, (uint16_t)e->handler_at);
		put_u2(o, p->catch_type);
	}
	return 0;
}

static int emit_line_numbers(jinst_patch *p, jinst_reader *a, out *o, jinst_diag *diag)
{
	uint16_t n = jinst_rd_u2(a);
	put_u2(o, n);
	for (uint32_t k = 0; k < n; k++) {
		uint16_t s = jinst_rd_u2(a), line = jinst_rd_u2(a);
		if (a->bad || !position_ok(p, s, false))
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
			                  "LineNumberTable[%u]: start_pc %u not an instruction", (unsigned)k, s);
		put_u2(o, (uint16_t)map_pos(p, s));
		put_u2(o, line);
	}
	return 0;
}

/* LocalVariableTable, LocalVariableTypeTable: each range moves by its ends. */
static int emit_local_variables(jinst_patch *p, jinst_reader *a, out *o, jinst_diag *diag)
{
	uint16_t n = jinst_rd_u2(a);
	put_u2(o, n);
	for (uint32_t k = 0; k < n; k++) {
		uint16_t s = jinst_rd_u2(a), l = jinst_rd_u2(a), nm = jinst_rd_u2(a), d = jinst_rd_u2(a), slot = jinst_rd_u2(a);
		if (a->bad || !position_ok(p, s, false) || !position_ok(p, (uint32_t)s + l, true))
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
			                  "local variable table[%u]: %u+%u not on instructions", (unsigned)k, s, l);
		uint32_t ns = map_pos(p, s), ne = map_pos(p, (uint32_t)s + l);
		put_u2(o, (uint16_t)ns);
		put_u2(o, (uint16_t)(ne - ns));
		put_u2(o, nm);
		put_u2(o, d);
		put_u2(o, slot);
	}
	return 0;
}

/* One attribute of the Code attribute, by its kind (open let through only
 * these: StackMapTable, LineNumberTable, LocalVariable(Type)Table). */
static int emit_code_attr(jinst_patch *p, jinst_reader *a, emit *e, uint16_t name, jinst_diag *diag)
{
	switch (jinst_attr_kind_at(p->cls, name, JINST_CTX_CODE)) {
	case JINST_ATTR_STACK_MAP_TABLE:
		if (emit_frames(p, a, &e->o, e->handler_at, e->handler_cls))
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "StackMapTable malformed");
		return 0;
	case JINST_ATTR_LINE_NUMBER_TABLE:
		return emit_line_numbers(p, a, &e->o, diag);
	default:
		return emit_local_variables(p, a, &e->o, diag);
	}
}

/* The Code attribute's attributes, each rewritten with its new length,
 * and a StackMapTable for the handler alone when the method had none. */
static int emit_code_attrs(jinst_patch *p, jinst_reader *r, emit *e, jinst_diag *diag)
{
	out *o = &e->o;
	uint16_t nattrs = jinst_rd_u2(r);
	put_u2(o, (uint16_t)(nattrs + (e->smt_name != 0)));
	for (uint32_t i = 0; i < nattrs; i++) {
		uint16_t name = jinst_rd_u2(r);
		uint32_t alen = jinst_rd_u4(r), at = r->pos;
		if (!jinst_rd_bytes(r, alen))
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "Code attribute truncated");
		jinst_reader a;
		jinst_reader_init(&a, r->base, at, at + alen);
		put_u2(o, name);
		uint8_t *len_at = o->p;
		o->p += 4;
		int rc = emit_code_attr(p, &a, e, name, diag);
		if (rc)
			return rc;
		if (a.bad || a.pos != a.end)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "Code attribute %u malformed", (unsigned)i);
		jinst_put_u4(len_at, (uint32_t)(o->p - len_at - 4));
	}
	if (e->smt_name) {
		put_u2(o, e->smt_name);
		uint8_t *len_at = o->p;
		o->p += 4;
		put_u2(o, 1);
		put_handler_frame(p, o, -1, initial_locals(p), e->handler_at, e->handler_cls);
		jinst_put_u4(len_at, (uint32_t)(o->p - len_at - 4));
	}
	return 0;
}

/* Kept frames only move: every position that needs one must have one
 * already (a StackMapTable that misses one is left to the editor; a
 * method with none at all is frameless, see patch.c). The positions
 * start as the dead ones; branches, switches and handlers add theirs, the
 * kept frames clear theirs. */
static int start_frame_needs(jinst_patch *p, jinst_diag *diag)
{
	if (p->cls->major_version < 50 || p->frameless)
		return 0;
	p->need = jinst_arena_alloc(p->cls->arena, p->code_length / 8 + 1);
	if (!p->need)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	memcpy(p->need, p->dead, p->code_length / 8 + 1);
	return 0;
}

/* EUNSUPPORTED at the first position that needs a frame and has none. */
static int check_frame_needs(const jinst_patch *p, jinst_diag *diag)
{
	if (p->need)
		for (uint32_t i = 0; i <= p->code_length / 8; i++)
			if (p->need[i]) {
				uint32_t at = i * 8;
				while (!(p->need[i] >> (at & 7) & 1))
					at++;
				return jinst_fail(diag, JINST_EUNSUPPORTED, JINST_NO_OFFSET,
				                  "offset %u needs a frame and has none: left to the editor", (unsigned)at);
			}
	return 0;
}

/* The header and the code: insertions spliced in, offsets moved, the handler appended. */
static int emit_header_and_code(jinst_patch *p, emit *e, uint32_t max_stack, uint32_t new_len, jinst_diag *diag)
{
	out *o = &e->o;
	put_u2(o, (uint16_t)max_stack);
	put_u2(o, p->max_locals);
	put_u4(o, new_len + p->handler_len);
	uint8_t *code_start = o->p;
	int rc = emit_code(p, code_start, o, diag);
	if (rc)
		return rc;
	if ((uint32_t)(o->p - code_start) != new_len)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "internal: code laid out to %u bytes, written %u",
		                  (unsigned)new_len, (unsigned)(o->p - code_start));
	if (p->handler) {
		memcpy(o->p, p->handler, p->handler_len);
		o->p += p->handler_len;
	}
	return 0;
}

int jinst_patch_commit(jinst_patch *p, jinst_diag *diag)
{
	clear_diag(diag);
	if (p->spent)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "patch already committed");
	p->spent = true;
	if (!p->nins && !p->handler)
		return 0;
	if (!p->handler != !p->nranges)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "a handler needs ranges and ranges a handler");
	jinst_class *c = p->cls;
	uint32_t new_len;
	int rc = layout(p, &new_len);
	if (rc)
		return jinst_fail(diag, rc, JINST_NO_OFFSET, rc == JINST_ETOOLARGE ? "code over 65,535 bytes" : "out of memory");
	uint32_t total_len = new_len + p->handler_len;
	if (total_len > 65535)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "code over 65,535 bytes");
	uint32_t max_stack = new_max_stack(p);
	if (max_stack > 65535)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "max_stack over 65,535");
	emit e = {.handler_at = new_len};
	if ((rc = prepare_handler_frame(p, &e, diag)))
		return rc;

	/* Worst case: the code grows as laid out, each frame by two bytes
	 * (a delta outgrowing its short form), plus the handler, its entries,
	 * its frame and perhaps a StackMapTable of its own. */
	size_t cap = (size_t)p->info_len + (total_len - p->code_length) + 2u * p->nframes + 8u * p->nranges + 64;
	uint8_t *buf = jinst_arena_alloc(c->arena, cap);
	if (!buf)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	if ((rc = start_frame_needs(p, diag)))
		return rc;
	e.o.p = buf;
	jinst_reader r;
	jinst_reader_init(&r, p->info, p->tail, p->info_len);
	if ((rc = emit_header_and_code(p, &e, max_stack, new_len, diag)) ||
	    (rc = emit_exception_table(p, &r, &e, diag)) || (rc = emit_code_attrs(p, &r, &e, diag)))
		return rc;
	if (r.bad || r.pos != r.end)
		return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "Code attribute malformed");
	if ((rc = check_frame_needs(p, diag)))
		return rc;
	if ((size_t)(e.o.p - buf) > cap)
		abort(); /* the bound above is wrong: memory is already overwritten */

	jinst_attr *a = p->attr;
	a->info = buf;
	a->length = (uint32_t)(e.o.p - buf);
	a->model = NULL;
	a->modified = false;
	a->offset = 0;
	p->method->modified = true;
	return 0;
}
