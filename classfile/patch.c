/*
 * The code patcher (include/jinst/patch.h): hook calls inserted into a
 * method's code without the editor's node list, for the tracing shape that
 * instruments every method of every class a JVM loads.
 *
 * Why a second path. The editor (edit.c) turns every instruction into a
 * node, every referenced position into a label and every frame into a full
 * frame, then lays the code out again, derives frames and compresses them:
 * general, and several times the cost of reading and writing the class.
 * Inserting straight-line, stack-neutral code without branches changes
 * none of the control flow and none of the types at any position, so
 * everything can be streamed: the new code is the old code with the
 * inserted bytes spliced in, and every table keeps its entries, only their
 * offsets move.
 *
 * Open: one length walk over the code records where each instruction
 * starts (an array for the caller's iteration, a bitmap for checking the
 * offsets the tables name) and which instructions carry offsets (branches
 * and switches). The exception table and the Code attribute's headers are
 * looked at once, so that a method the fast path cannot take is declined
 * before the caller inserts anything.
 *
 * Layout: the points where the offsets shift are the insertion positions
 * and the switches. A switch's padding (0-3 bytes, JVMS 6.5 tableswitch)
 * brings its table to a multiple of four from the start of the code, so its
 * length depends on its new offset, which depends only on what comes
 * before it: one forward pass over the points in order gives, for each
 * point, the new offset of the position (where branches, handlers, frames
 * and table entries land: after the code inserted outside, before the code
 * inserted inside), the new offset of the instruction itself (where an
 * uninitialized(offset) type's `new` lands) and the shift that applies up
 * to the next point. Any original offset maps by a binary search over the
 * points.
 *
 * Commit: the code is copied in runs between the points and the
 * instructions with offsets; branches get their new relative offsets (a
 * 16-bit one that no longer fits declines: the editor widens it), switches
 * new padding and offsets. The exception table, LineNumberTable and
 * LocalVariable(Type)Table are rewritten entry by entry. The StackMapTable
 * is rewritten frame by frame in its compressed form: each frame's absolute
 * offset (JVMS 4.7.4: the first is offset_delta, each next one
 * offset_delta + 1 past the previous) is mapped, the new delta encoded in
 * the smallest form of the same kind (same_frame becomes
 * same_frame_extended past 63, and back), and uninitialized(offset) types
 * are remapped on the way. The appended handler gets a frame of its own
 * (locals [], stack [catch type]); whether that can be a
 * same_locals_1_stack_item depends on the number of locals of the frame
 * before, which the walk tracks (append adds, chop removes, full_frame
 * sets) from the method's initial frame (JVMS 4.10.1.6). The result is a
 * new Code attribute in the arena that the writer copies like any original
 * attribute. Nothing is installed before everything succeeded.
 */
#include "internal.h"
#include "jinst/patch.h"

typedef struct insertion {
	uint32_t offset;
	uint32_t rank; /* 0 outside, 1 inside: outside code always comes first */
	uint32_t seq;  /* call order, for a stable sort */
	uint32_t len;
	uint16_t depth;
	const uint8_t *bytes;
} insertion;

/* A position where offsets shift: an insertion position or a switch. */
typedef struct point {
	uint32_t orig;
	uint32_t pos;   /* new offset of the position (after outside code) */
	uint32_t insn;  /* new offset of the instruction (after inside code) */
	int32_t after;  /* shift for original offsets past orig, up to the next point */
	uint32_t ins_lo, ins_hi; /* its insertions */
} point;

typedef struct range {
	uint32_t start, end;
} range;

struct jinst_patch {
	jinst_class *cls;
	jinst_member *method;
	jinst_attr *attr;
	const uint8_t *info;       /* the Code attribute's info */
	uint32_t info_len;
	uint16_t max_stack, max_locals;
	uint32_t code_length;
	const uint8_t *code;
	uint32_t tail;             /* offset in info of exception_table_length */
	uint16_t nframes;          /* number_of_entries of the StackMapTable, 0 without */
	bool has_frames;
	uint16_t *starts;          /* instruction offsets */
	uint32_t count;
	uint8_t *is_start;         /* bitmap over code_length + 1 */
	uint8_t *dead;             /* instructions after an unconditional transfer */
	uint8_t *need;             /* at commit (50+): positions that need a frame, cleared by the frames */
	uint16_t *fix;             /* offsets of branches and switches */
	uint32_t nfix;
	insertion *ins;
	uint32_t nins, cap;
	bool sorted;
	const uint8_t *handler;
	uint32_t handler_len;
	uint16_t handler_depth, catch_type;
	range *ranges;
	uint32_t nranges, rcap;
	point *pts;
	uint32_t npts;
	bool spent;
};

static inline bool is_start(const jinst_patch *p, uint32_t off)
{
	return off < p->code_length && (p->is_start[off >> 3] >> (off & 7) & 1);
}

static inline bool has_offsets(uint8_t op)
{
	return jinst_opcodes[op].flags & (JINST_OPF_BRANCH | JINST_OPF_SWITCH);
}

/* goto, goto_w, the switches, ret, *return, athrow: no fall-through. */
static inline bool is_transfer(uint8_t op)
{
	return jinst_opcodes[op].flags & JINST_OPF_UNCONDITIONAL;
}

static inline bool is_switch(uint8_t op)
{
	return jinst_opcodes[op].flags & JINST_OPF_SWITCH;
}

static inline void set_bit(uint8_t *map, uint32_t off)
{
	map[off >> 3] |= (uint8_t)(1u << (off & 7));
}

int jinst_patch_open(jinst_patch **out, jinst_class *c, jinst_member *m, jinst_diag *diag)
{
	*out = NULL;
	if (diag) {
		diag->code = 0;
		diag->offset = JINST_NO_OFFSET;
		diag->where[0] = diag->message[0] = '\0';
	}
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	if (!a)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "method without Code");
	if (c->old_code_layout)
		return jinst_fail(diag, JINST_EUNSUPPORTED, a->offset, "Code of version 45.0-45.2: left to the editor");
	if (a->modified || !a->info)
		return jinst_fail(diag, JINST_EUNSUPPORTED, a->offset, "Code already edited through its model");
	jinst_reader r;
	jinst_reader_init(&r, a->info, 0, a->length);
	uint16_t max_stack = jinst_rd_u2(&r), max_locals = jinst_rd_u2(&r);
	uint32_t len = jinst_rd_u4(&r);
	if (r.bad || len == 0 || len > 65535)
		return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: code_length %u", (unsigned)len);
	const uint8_t *code = jinst_rd_bytes(&r, len);
	uint32_t tail = r.pos;
	uint16_t nexc = jinst_rd_u2(&r);
	jinst_rd_bytes(&r, (uint32_t)nexc * 8);
	uint16_t nattrs = jinst_rd_u2(&r);
	if (r.bad)
		return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: truncated");
	jinst_arena *arena = c->arena;
	jinst_patch *p = jinst_arena_zalloc(arena, sizeof(*p));
	if (!p)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint16_t i = 0; i < nattrs; i++) {
		uint16_t name = jinst_rd_u2(&r);
		uint32_t alen = jinst_rd_u4(&r);
		const uint8_t *ainfo = jinst_rd_bytes(&r, alen);
		if (r.bad)
			return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: attribute %u truncated", (unsigned)i);
		switch (jinst_attr_kind_at(c, name, JINST_CTX_CODE)) {
		case JINST_ATTR_LINE_NUMBER_TABLE:
		case JINST_ATTR_LOCAL_VARIABLE_TABLE:
		case JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE:
			break;
		case JINST_ATTR_STACK_MAP_TABLE:
			if (c->major_version < 50)
				return jinst_fail(diag, JINST_EUNSUPPORTED, a->offset,
				                  "StackMapTable before version 50: left to the editor");
			if (p->has_frames || alen < 2)
				return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: second or short StackMapTable");
			p->has_frames = true;
			p->nframes = jinst_be16(ainfo);
			break;
		default: {
			uint16_t nl;
			const uint8_t *n = jinst_cp_utf8(c, name, &nl);
			return jinst_fail(diag, JINST_EUNSUPPORTED, a->offset, "Code attribute %.*s: left to the editor",
			                  n ? (int)nl : 1, n ? (const char *)n : "?");
		}
		}
	}
	if (r.pos != r.end)
		return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: %u bytes after its attributes",
		                  (unsigned)(r.end - r.pos));

	p->starts = jinst_arena_alloc(arena, (size_t)len * sizeof(uint16_t));
	p->is_start = jinst_arena_zalloc(arena, len / 8 + 1);
	p->dead = jinst_arena_zalloc(arena, len / 8 + 1);
	if (!p->starts || !p->is_start || !p->dead)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	/* The offsets of branches and switches go in the same array from its
	 * end down: there are at most as many of them as instructions, and
	 * both together at most code_length. */
	uint16_t *fix_end = p->starts + len, *fix = fix_end;
	uint32_t n = 0;
	for (uint32_t pc = 0; pc < len;) {
		uint32_t l = jinst_opcodes[code[pc]].length;
		if (!l || pc + l > len)
			l = jinst_insn_length(code, len, pc);
		if (!l)
			return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: bad instruction at %u", (unsigned)pc);
		if (&p->starts[n] == fix)
			return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: too many instructions");
		p->starts[n++] = (uint16_t)pc;
		set_bit(p->is_start, pc);
		uint8_t op = code[pc] == JINST_OP_WIDE ? code[pc + 1] : code[pc];
		if (is_transfer(op) && pc + l < len)
			set_bit(p->dead, pc + l);
		if (has_offsets(code[pc])) {
			/* A branch is 3 or 5 bytes and a switch at least 16: the
			 * two arrays never meet, but say so to the reader. */
			if (fix - 1 < &p->starts[n])
				return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: too many branches");
			*--fix = (uint16_t)pc;
		}
		pc += l;
	}
	/* Reversed: ascending offsets. */
	p->nfix = (uint32_t)(fix_end - fix);
	p->fix = jinst_arena_alloc(arena, (size_t)p->nfix * sizeof(uint16_t) + 2);
	if (!p->fix)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < p->nfix; i++)
		p->fix[i] = fix_end[-1 - (long)i];
	p->cls = c;
	p->method = m;
	p->attr = a;
	p->info = a->info;
	p->info_len = a->length;
	p->max_stack = max_stack;
	p->max_locals = max_locals;
	p->code_length = len;
	p->code = code;
	p->tail = tail;
	p->count = n;
	p->sorted = true;
	*out = p;
	return 0;
}

uint32_t jinst_patch_count(const jinst_patch *p)
{
	return p->count;
}

uint32_t jinst_patch_offset(const jinst_patch *p, uint32_t i)
{
	return i < p->count ? p->starts[i] : JINST_NO_OFFSET;
}

uint8_t jinst_patch_opcode(const jinst_patch *p, uint32_t i)
{
	return i < p->count ? p->code[p->starts[i]] : 0;
}

const uint16_t *jinst_patch_offsets(const jinst_patch *p, uint32_t *count)
{
	*count = p->count;
	return p->starts;
}

const uint8_t *jinst_patch_code(const jinst_patch *p, uint32_t *length)
{
	*length = p->code_length;
	return p->code;
}

/* Straight line, no offsets, no transfer but a final athrow when `handler`. */
static bool straight_line(const uint8_t *code, uint32_t len, bool handler)
{
	for (uint32_t pc = 0; pc < len;) {
		uint8_t op = code[pc];
		uint32_t l = jinst_insn_length(code, len, pc);
		if (!l || jinst_opcodes[op].flags & (JINST_OPF_BRANCH | JINST_OPF_SWITCH | JINST_OPF_SUBROUTINE | JINST_OPF_RETURN))
			return false;
		if (op == JINST_OP_WIDE && code[pc + 1] == JINST_OP_RET)
			return false;
		if (op == JINST_OP_ATHROW && !(handler && pc + 1 == len))
			return false;
		pc += l;
	}
	return !handler || (len && code[len - 1] == JINST_OP_ATHROW);
}

int jinst_patch_insert(jinst_patch *p, uint32_t offset, enum jinst_where where, const uint8_t *code, uint32_t len,
                       uint16_t depth)
{
	if (p->spent || !code || !len || len > 65535 || !straight_line(code, len, false))
		return JINST_EINVAL;
	if (where == JINST_AFTER) {
		if (!is_start(p, offset))
			return JINST_EINVAL;
		offset += jinst_insn_length(p->code, p->code_length, offset);
		where = JINST_BEFORE_OUTSIDE;
	}
	if (!is_start(p, offset) || (where != JINST_BEFORE_INSIDE && where != JINST_BEFORE_OUTSIDE))
		return JINST_EINVAL;
	/* Outside code after an unconditional transfer is reached by nothing
	 * and starts where the verifier wants a frame (JVMS 4.10.1.6): the
	 * editor derives one; here that is declined. */
	if (where == JINST_BEFORE_OUTSIDE && (p->dead[offset >> 3] >> (offset & 7) & 1))
		return JINST_EUNSUPPORTED;
	if (p->nins == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 8;
		insertion *n = jinst_arena_alloc(p->cls->arena, (size_t)cap * sizeof(*n));
		if (!n)
			return JINST_ENOMEM;
		if (p->nins)
			memcpy(n, p->ins, (size_t)p->nins * sizeof(*n));
		p->ins = n;
		p->cap = cap;
	}
	uint8_t *copy = jinst_arena_alloc(p->cls->arena, len);
	if (!copy)
		return JINST_ENOMEM;
	memcpy(copy, code, len);
	insertion *x = &p->ins[p->nins];
	*x = (insertion){offset, where == JINST_BEFORE_INSIDE ? 1u : 0u, p->nins, len, depth, copy};
	if (p->nins && (x[-1].offset > x->offset || (x[-1].offset == x->offset && x[-1].rank > x->rank)))
		p->sorted = false;
	p->nins++;
	return 0;
}

int jinst_patch_set_handler(jinst_patch *p, const uint8_t *code, uint32_t len, uint16_t depth, uint16_t catch_type)
{
	if (p->spent || p->handler || !code || !len || len > 65535 || !straight_line(code, len, true))
		return JINST_EINVAL;
	if (catch_type && jinst_cp_tag(p->cls, catch_type) != JINST_CP_CLASS)
		return JINST_EINVAL;
	uint8_t *copy = jinst_arena_alloc(p->cls->arena, len);
	if (!copy)
		return JINST_ENOMEM;
	memcpy(copy, code, len);
	p->handler = copy;
	p->handler_len = len;
	p->handler_depth = depth;
	p->catch_type = catch_type;
	return 0;
}

int jinst_patch_add_range(jinst_patch *p, uint32_t start, uint32_t end)
{
	if (p->spent || !is_start(p, start) || end <= start || (end != p->code_length && !is_start(p, end)))
		return JINST_EINVAL;
	if (p->nranges == p->rcap) {
		uint32_t cap = p->rcap ? p->rcap * 2 : 4;
		range *n = jinst_arena_alloc(p->cls->arena, (size_t)cap * sizeof(*n));
		if (!n)
			return JINST_ENOMEM;
		if (p->nranges)
			memcpy(n, p->ranges, (size_t)p->nranges * sizeof(*n));
		p->ranges = n;
		p->rcap = cap;
	}
	p->ranges[p->nranges++] = (range){start, end};
	return 0;
}

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

int jinst_patch_commit(jinst_patch *p, jinst_diag *diag)
{
	if (diag) {
		diag->code = 0;
		diag->offset = JINST_NO_OFFSET;
		diag->where[0] = diag->message[0] = '\0';
	}
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
	uint32_t handler_at = new_len;
	uint32_t total_len = new_len + p->handler_len;
	if (total_len > 65535)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "code over 65,535 bytes");

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
	if (max_stack > 65535)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "max_stack over 65,535");

	uint16_t handler_cls = p->catch_type, smt_name = 0;
	bool new_smt = false;
	if (p->handler && c->major_version >= 50) {
		/* The handler's frame follows from the method's initial one,
		 * which must make sense (a descriptor, this_class) even when the
		 * method had no frames before. */
		jinst_full_frame *init;
		if (initial_locals(p) < 0)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "method descriptor malformed");
		if ((rc = jinst_stack_map_expand(c, p->method, NULL, &init, diag)))
			return rc;
		if (!handler_cls && (rc = jinst_cp_add_class(c, "java/lang/Throwable", &handler_cls)))
			return jinst_fail(diag, rc, JINST_NO_OFFSET, "adding java/lang/Throwable: %s", jinst_strerror(rc));
		if (!p->has_frames) {
			new_smt = true;
			if ((rc = jinst_cp_add_utf8(c, "StackMapTable", 13, &smt_name)))
				return jinst_fail(diag, rc, JINST_NO_OFFSET, "adding StackMapTable: %s", jinst_strerror(rc));
		}
	}

	/* Worst case: the code grows as laid out, each frame by two bytes
	 * (a delta outgrowing its short form), plus the handler, its entries,
	 * its frame and perhaps a StackMapTable of its own. */
	size_t cap = (size_t)p->info_len + (total_len - p->code_length) + 2u * p->nframes + 8u * p->nranges + 64;
	uint8_t *buf = jinst_arena_alloc(c->arena, cap);
	if (!buf)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	/* Kept frames only move: every position that needs one must have one
	 * already (a class without them, say, is left to the editor, which
	 * derives them). */
	if (c->major_version >= 50) {
		p->need = jinst_arena_alloc(c->arena, p->code_length / 8 + 1);
		if (!p->need)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		memcpy(p->need, p->dead, p->code_length / 8 + 1);
	}
	out o = {buf};
	put_u2(&o, (uint16_t)max_stack);
	put_u2(&o, p->max_locals);
	put_u4(&o, total_len);
	uint8_t *code_start = o.p;
	if ((rc = emit_code(p, code_start, &o, diag)))
		return rc;
	if ((uint32_t)(o.p - code_start) != new_len)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "internal: code laid out to %u bytes, written %u",
		                  (unsigned)new_len, (unsigned)(o.p - code_start));
	if (p->handler) {
		memcpy(o.p, p->handler, p->handler_len);
		o.p += p->handler_len;
	}

	jinst_reader r;
	jinst_reader_init(&r, p->info, p->tail, p->info_len);
	uint16_t nexc = jinst_rd_u2(&r);
	put_u2(&o, (uint16_t)(nexc + p->nranges));
	for (uint32_t i = 0; i < nexc; i++) {
		uint16_t s = jinst_rd_u2(&r), e = jinst_rd_u2(&r), h = jinst_rd_u2(&r), t = jinst_rd_u2(&r);
		if (!position_ok(p, s, false) || !position_ok(p, e, true) || !position_ok(p, h, false) || s >= e)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
			                  "exception_table[%u]: %u-%u -> %u not on instructions", (unsigned)i, s, e, h);
		if (p->need)
			set_bit(p->need, h);
		put_u2(&o, (uint16_t)map_pos(p, s));
		put_u2(&o, (uint16_t)map_pos(p, e));
		put_u2(&o, (uint16_t)map_pos(p, h));
		put_u2(&o, t);
	}
	for (uint32_t i = 0; i < p->nranges; i++) {
		put_u2(&o, (uint16_t)map_pos(p, p->ranges[i].start));
		put_u2(&o, (uint16_t)map_pos(p, p->ranges[i].end));
		put_u2(&o, (uint16_t)handler_at);
		put_u2(&o, p->catch_type);
	}
	uint16_t nattrs = jinst_rd_u2(&r);
	put_u2(&o, (uint16_t)(nattrs + new_smt));
	for (uint32_t i = 0; i < nattrs; i++) {
		uint16_t name = jinst_rd_u2(&r);
		uint32_t alen = jinst_rd_u4(&r), at = r.pos;
		if (!jinst_rd_bytes(&r, alen))
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "Code attribute truncated");
		jinst_reader a;
		jinst_reader_init(&a, r.base, at, at + alen);
		put_u2(&o, name);
		uint8_t *len_at = o.p;
		o.p += 4;
		enum jinst_attr_kind kind = jinst_attr_kind_at(c, name, JINST_CTX_CODE);
		if (kind == JINST_ATTR_STACK_MAP_TABLE) {
			if (emit_frames(p, &a, &o, handler_at, handler_cls))
				return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "StackMapTable malformed");
		} else if (kind == JINST_ATTR_LINE_NUMBER_TABLE) {
			uint16_t n = jinst_rd_u2(&a);
			put_u2(&o, n);
			for (uint32_t k = 0; k < n; k++) {
				uint16_t s = jinst_rd_u2(&a), line = jinst_rd_u2(&a);
				if (a.bad || !position_ok(p, s, false))
					return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
					                  "LineNumberTable[%u]: start_pc %u not an instruction", (unsigned)k, s);
				put_u2(&o, (uint16_t)map_pos(p, s));
				put_u2(&o, line);
			}
		} else { /* LocalVariableTable, LocalVariableTypeTable (open let nothing else through) */
			uint16_t n = jinst_rd_u2(&a);
			put_u2(&o, n);
			for (uint32_t k = 0; k < n; k++) {
				uint16_t s = jinst_rd_u2(&a), l = jinst_rd_u2(&a), nm = jinst_rd_u2(&a), d = jinst_rd_u2(&a), slot = jinst_rd_u2(&a);
				if (a.bad || !position_ok(p, s, false) || !position_ok(p, (uint32_t)s + l, true))
					return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
					                  "local variable table[%u]: %u+%u not on instructions", (unsigned)k, s, l);
				uint32_t ns = map_pos(p, s), ne = map_pos(p, (uint32_t)s + l);
				put_u2(&o, (uint16_t)ns);
				put_u2(&o, (uint16_t)(ne - ns));
				put_u2(&o, nm);
				put_u2(&o, d);
				put_u2(&o, slot);
			}
		}
		if (a.bad || a.pos != a.end)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "Code attribute %u malformed", (unsigned)i);
		jinst_put_u4(len_at, (uint32_t)(o.p - len_at - 4));
	}
	if (new_smt) {
		put_u2(&o, smt_name);
		uint8_t *len_at = o.p;
		o.p += 4;
		put_u2(&o, 1);
		put_handler_frame(p, &o, -1, initial_locals(p), handler_at, handler_cls);
		jinst_put_u4(len_at, (uint32_t)(o.p - len_at - 4));
	}
	if (r.bad || r.pos != r.end)
		return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "Code attribute malformed");
	if (p->need)
		for (uint32_t i = 0; i <= p->code_length / 8; i++)
			if (p->need[i]) {
				uint32_t at = i * 8;
				while (!(p->need[i] >> (at & 7) & 1))
					at++;
				return jinst_fail(diag, JINST_EUNSUPPORTED, JINST_NO_OFFSET,
				                  "offset %u needs a frame and has none: left to the editor", (unsigned)at);
			}
	if ((size_t)(o.p - buf) > cap)
		abort(); /* the bound above is wrong: memory is already overwritten */

	jinst_attr *a = p->attr;
	a->info = buf;
	a->length = (uint32_t)(o.p - buf);
	a->model = NULL;
	a->modified = false;
	a->offset = 0;
	p->method->modified = true;
	return 0;
}
