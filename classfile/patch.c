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
 *
 * Methods without frames. From version 50 a method whose code needs frames
 * (a branch target, a handler, code after an unconditional transfer) may
 * still carry no StackMapTable: HotSpot keeps none for a class it does not
 * verify (ClassFileParser::parse_stackmap_table drops it unless the class
 * is verified or archived: the boot loader's classes by default), so the
 * class file JVMTI rebuilds for RetransformClasses has none, and the same
 * VM does not verify what the retransformation gives back (the same
 * Verifier::should_verify_for). Such a method is `frameless`: its code is
 * patched and it gets no StackMapTable, the appended handler no frame, as
 * before version 50. Inventing frames would need the class hierarchy, for
 * a VM that never reads them.
 */
#include "patch_internal.h"

static inline bool has_offsets(uint8_t op)
{
	return jinst_opcodes[op].flags & (JINST_OPF_BRANCH | JINST_OPF_SWITCH);
}

/* goto, goto_w, the switches, ret, *return, athrow: no fall-through. */
static inline bool is_transfer(uint8_t op)
{
	return jinst_opcodes[op].flags & JINST_OPF_UNCONDITIONAL;
}

static void clear_diag(jinst_diag *diag)
{
	if (diag) {
		diag->code = 0;
		diag->offset = JINST_NO_OFFSET;
		diag->where[0] = diag->message[0] = '\0';
	}
}

/* What the patcher needs of the Code attribute's header (JVMS 4.7.3). */
typedef struct code_header {
	uint16_t max_stack, max_locals;
	uint32_t len;
	const uint8_t *code;
	uint32_t tail; /* offset in info of exception_table_length */
	uint16_t nexc;
	uint16_t nattrs;
} code_header;

/* Reads a's header up to attributes_count, leaving r on the first attribute. */
static int read_header(const jinst_attr *a, jinst_reader *r, code_header *h, jinst_diag *diag)
{
	h->max_stack = jinst_rd_u2(r);
	h->max_locals = jinst_rd_u2(r);
	h->len = jinst_rd_u4(r);
	if (r->bad || h->len == 0 || h->len > 65535)
		return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: code_length %u", (unsigned)h->len);
	h->code = jinst_rd_bytes(r, h->len);
	h->tail = r->pos;
	h->nexc = jinst_rd_u2(r);
	jinst_rd_bytes(r, (uint32_t)h->nexc * 8);
	h->nattrs = jinst_rd_u2(r);
	if (r->bad)
		return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: truncated");
	return 0;
}

/* The Code attribute's own attributes: only those whose offsets the commit
 * knows how to move; the StackMapTable's frame count noted. */
static int check_code_attrs(jinst_patch *p, const jinst_attr *a, jinst_reader *r, uint16_t nattrs, jinst_diag *diag)
{
	jinst_class *c = p->cls;
	for (uint16_t i = 0; i < nattrs; i++) {
		uint16_t name = jinst_rd_u2(r);
		uint32_t alen = jinst_rd_u4(r);
		const uint8_t *ainfo = jinst_rd_bytes(r, alen);
		if (r->bad)
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
	if (r->pos != r->end)
		return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: %u bytes after its attributes",
		                  (unsigned)(r->end - r->pos));
	return 0;
}

/* The length walk: instruction starts (array and bitmap), the dead
 * positions after unconditional transfers, the branches and switches;
 * *needs_frames when a branch target or a dead position needs a frame. */
static int walk_code(jinst_patch *p, const jinst_attr *a, const uint8_t *code, uint32_t len, bool *needs_frames,
                     jinst_diag *diag)
{
	jinst_arena *arena = p->cls->arena;
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
		if (is_transfer(op) && pc + l < len) {
			set_bit(p->dead, pc + l);
			*needs_frames = true;
		}
		if (has_offsets(code[pc])) {
			/* A jsr's target needs none (no frame holds a return address). */
			*needs_frames |= !(jinst_opcodes[code[pc]].flags & JINST_OPF_SUBROUTINE);
			/* A branch is 3 or 5 bytes and a switch at least 16: the
			 * two arrays never meet, but say so to the reader. */
			if (fix - 1 < &p->starts[n])
				return jinst_fail(diag, JINST_EMALFORMED, a->offset, "Code: too many branches");
			*--fix = (uint16_t)pc;
		}
		pc += l;
	}
	p->count = n;
	/* Reversed: ascending offsets. */
	p->nfix = (uint32_t)(fix_end - fix);
	p->fix = jinst_arena_alloc(arena, (size_t)p->nfix * sizeof(uint16_t) + 2);
	if (!p->fix)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < p->nfix; i++)
		p->fix[i] = fix_end[-1 - (long)i];
	return 0;
}

int jinst_patch_open(jinst_patch **out, jinst_class *c, jinst_member *m, jinst_diag *diag)
{
	*out = NULL;
	clear_diag(diag);
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	if (!a)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "method without Code");
	if (c->old_code_layout)
		return jinst_fail(diag, JINST_EUNSUPPORTED, a->offset, "Code of version 45.0-45.2: left to the editor");
	if (a->modified || !a->info)
		return jinst_fail(diag, JINST_EUNSUPPORTED, a->offset, "Code already edited through its model");
	jinst_reader r;
	jinst_reader_init(&r, a->info, 0, a->length);
	code_header h = {0};
	int rc = read_header(a, &r, &h, diag);
	if (rc)
		return rc;
	jinst_patch *p = jinst_arena_zalloc(c->arena, sizeof(*p));
	if (!p)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	p->cls = c;
	bool needs_frames = h.nexc != 0;
	if ((rc = check_code_attrs(p, a, &r, h.nattrs, diag)) ||
	    (rc = walk_code(p, a, h.code, h.len, &needs_frames, diag)))
		return rc;
	p->frameless = c->major_version >= 50 && !p->has_frames && needs_frames;
	p->method = m;
	p->attr = a;
	p->info = a->info;
	p->info_len = a->length;
	p->max_stack = h.max_stack;
	p->max_locals = h.max_locals;
	p->code_length = h.len;
	p->code = h.code;
	p->tail = h.tail;
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
