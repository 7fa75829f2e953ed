/*
 * Bytecode: the decoder and the encoder (the opcode table is opcodes.c).
 *
 * The decoder makes one pass that fills jinst_insn records and checks
 * operands (constant-pool indices for range and tag, switch layouts, the
 * fixed bytes of invokeinterface and invokedynamic), marking where each
 * instruction starts; then every branch target must be such a start (JVMS
 * 4.9.1). Branch targets are stored as absolute offsets, so the encoder
 * rebuilds relative offsets from the instruction offsets, which is what lets
 * an editor move code later. Both take the common instructions through a
 * table-driven path (see form_of_kind).
 */
#include "internal.h"

static inline enum jinst_operand_kind operand_kind(uint8_t op)
{
	return (enum jinst_operand_kind)jinst_opcodes[op].kind;
}

/* The decoder and encoder take most instructions through one path that
 * picks the operand by its form, a few table lookups instead of a switch
 * on the operand kind (which mispredicts on nearly every instruction).
 * X: kinds with a layout of their own (wide, switches, goto_w and jsr_w,
 * invokeinterface, invokedynamic, multianewarray, invalid bytes). */
enum { X, N, U1, S1, U2, S2, B2 };
static const uint8_t form_of_kind[JINST_OPND_INVALID + 1] = {
	[JINST_OPND_NONE] = N, [JINST_OPND_LOCAL] = U1, [JINST_OPND_NEWARRAY] = U1, [JINST_OPND_CP1] = U1,
	[JINST_OPND_IINC] = U1, [JINST_OPND_BYTE] = S1, [JINST_OPND_CP2] = U2, [JINST_OPND_SHORT] = S2,
	[JINST_OPND_BRANCH2] = B2,
};

#define T(tag) (1u << JINST_CP_##tag)
/* The tags an opcode's constant-pool index may have (JVMS 6.5), by the
 * table's cp column, and the same in words for diagnostics. */
static const struct {
	uint32_t tags;
	const char *what;
} cp_kinds[] = {
	[JINST_OPCP_NONE] = {0, NULL},
	[JINST_OPCP_LOADABLE] = {T(INTEGER) | T(FLOAT) | T(STRING) | T(CLASS) | T(METHOD_HANDLE) | T(METHOD_TYPE) |
	                         T(DYNAMIC), "a loadable constant"},
	[JINST_OPCP_LOADABLE2] = {T(LONG) | T(DOUBLE) | T(DYNAMIC), "a Long, Double or Dynamic constant"},
	[JINST_OPCP_FIELDREF] = {T(FIELDREF), "a Fieldref"},
	[JINST_OPCP_METHODREF] = {T(METHODREF), "a Methodref"},
	[JINST_OPCP_ANY_METHODREF] = {T(METHODREF) | T(INTERFACE_METHODREF), "a Methodref or InterfaceMethodref"},
	[JINST_OPCP_INTERFACE_METHODREF] = {T(INTERFACE_METHODREF), "an InterfaceMethodref"},
	[JINST_OPCP_INVOKE_DYNAMIC] = {T(INVOKE_DYNAMIC), "an InvokeDynamic"},
	[JINST_OPCP_CLASS] = {T(CLASS), "a Class"},
};
#undef T

uint32_t jinst_insn_length(const uint8_t *code, uint32_t len, uint32_t pc)
{
	uint8_t op = code[pc];
	uint32_t n = jinst_opcodes[op].length;
	if (n)
		return pc + n <= len ? n : 0;
	switch (operand_kind(op)) {
	case JINST_OPND_WIDE:
		if (pc + 1 >= len)
			return 0;
		/* wide takes the loads, stores and ret (a u2 index) and iinc (u2, s2) */
		switch (operand_kind(code[pc + 1])) {
		case JINST_OPND_IINC: n = 6; break;
		case JINST_OPND_LOCAL: n = 4; break;
		default: return 0;
		}
		break;
	case JINST_OPND_TABLESWITCH:
	case JINST_OPND_LOOKUPSWITCH: {
		uint32_t base = (pc + 4) & ~3u; /* default offset after 0-3 bytes of padding */
		if (base + 8 > len)
			return 0;
		if (op == JINST_OP_TABLESWITCH) {
			if (base + 12 > len)
				return 0;
			int32_t lo = (int32_t)jinst_be32(code + base + 4), hi = (int32_t)jinst_be32(code + base + 8);
			if (hi < lo)
				return 0;
			uint64_t count = (uint64_t)((int64_t)hi - lo + 1);
			uint64_t end = base + 12 + count * 4;
			if (end > len)
				return 0;
			return (uint32_t)end - pc;
		}
		int32_t npairs = (int32_t)jinst_be32(code + base + 4);
		if (npairs < 0)
			return 0;
		uint64_t end = base + 8 + (uint64_t)npairs * 8;
		if (end > len)
			return 0;
		return (uint32_t)end - pc;
	}
	default:
		return 0;
	}
	return pc + n <= len ? n : 0;
}

int jinst_code_decode(jinst_class *c, const jinst_code *code, jinst_insn **insns, uint32_t *count, jinst_diag *diag)
{
	int32_t *insn_at;
	uint32_t *jumps, njumps;
	return jinst_code_decode_at(c, code, insns, count, &insn_at, &jumps, &njumps, diag);
}

/* What the decoder reads from: the code, and where it lies for diagnostics. */
typedef struct decoder {
	jinst_class *c;
	const uint8_t *b;
	uint32_t len;
	uint32_t base;     /* offset of the code in the class file */
	uint32_t readable; /* bytes readable from b: len, or len + 4 inside the class file */
	jinst_diag *diag;
} decoder;

/* An offset the code jumps to, or -1 outside the code (checked afterwards). */
static inline int32_t target_of(const decoder *d, uint32_t pc, const uint8_t *rel)
{
	int64_t t = (int64_t)pc + (int32_t)jinst_be32(rel);
	return t < 0 || t >= d->len ? -1 : (int32_t)t;
}

static int bad_instruction(const decoder *d, uint32_t pc)
{
	uint8_t op = d->b[pc];
	if (operand_kind(op) == JINST_OPND_INVALID)
		return jinst_fail(d->diag, JINST_EMALFORMED, d->base + pc, "invalid opcode 0x%02x at pc %u", op,
		                  (unsigned)pc);
	return jinst_fail(d->diag, JINST_EMALFORMED, d->base + pc, "malformed or truncated %s at pc %u",
	                  jinst_opcodes[op].name, (unsigned)pc);
}

/* The operand field of a common form from the top of the next four bytes,
 * sign-extended for the signed forms, made absolute for branches. The last
 * instructions of the code read their operands zero-padded. */
static inline void decode_form(const decoder *d, jinst_insn *in, uint32_t pc, uint32_t l, uint8_t form)
{
	static const uint8_t shift[7] = {0, 32, 24, 24, 16, 16, 16};
	static const uint32_t sign[7] = {0, 0, 0, 0x80, 0, 0x8000, 0x8000};
	const uint8_t *p = d->b + pc + 1;
	uint8_t padded[4] = {0};
	const uint8_t *q = p;
	if (pc + 5 > d->readable) {
		memcpy(padded, p, l - 1);
		q = padded;
	}
	uint32_t field = (uint32_t)((uint64_t)jinst_be32(q) >> shift[form]);
	int32_t value = (int32_t)((field ^ sign[form]) - sign[form]);
	in->operand = value + (form == B2 ? (int32_t)pc : 0);
	if (in->opcode == JINST_OP_IINC)
		in->operand2 = (int8_t)q[1];
}

/* tableswitch and lookupswitch (JVMS 6.5): the targets absolute, in the arena. */
static int decode_switch(const decoder *d, jinst_insn *in, uint32_t pc)
{
	jinst_arena *A = d->c->arena;
	const uint8_t *b = d->b;
	uint8_t op = in->opcode;
	uint32_t at = (pc + 4) & ~3u;
	jinst_switch *sw = jinst_arena_alloc(A, sizeof(*sw));
	if (!sw)
		return jinst_fail(d->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory decoding code");
	sw->default_target = target_of(d, pc, b + at);
	sw->low = sw->high = 0;
	sw->keys = NULL;
	if (op == JINST_OP_TABLESWITCH) {
		sw->low = (int32_t)jinst_be32(b + at + 4);
		sw->high = (int32_t)jinst_be32(b + at + 8);
		sw->count = (uint32_t)((int64_t)sw->high - sw->low + 1);
		at += 12;
	} else {
		sw->count = jinst_be32(b + at + 4);
		at += 8;
		sw->keys = jinst_arena_alloc(A, (size_t)sw->count * 4 + 4);
	}
	sw->targets = jinst_arena_alloc(A, (size_t)sw->count * 4 + 4);
	if (!sw->targets || (op == JINST_OP_LOOKUPSWITCH && !sw->keys))
		return jinst_fail(d->diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory decoding code");
	for (uint32_t k = 0; k < sw->count; k++) {
		if (op == JINST_OP_LOOKUPSWITCH) {
			sw->keys[k] = (int32_t)jinst_be32(b + at);
			at += 4;
		}
		sw->targets[k] = target_of(d, pc, b + at);
		at += 4;
	}
	in->sw = sw;
	return 0;
}

/* The instructions of form X, each with a layout of its own. */
static int decode_other(const decoder *d, jinst_insn *in, uint32_t pc)
{
	const uint8_t *p = d->b + pc + 1;
	uint32_t at = d->base + pc;
	switch (operand_kind(in->opcode)) {
	case JINST_OPND_BRANCH4:
		in->operand = target_of(d, pc, p);
		return 0;
	case JINST_OPND_INVOKEINTERFACE:
		in->operand = jinst_be16(p);
		in->operand2 = p[2];
		if (p[2] == 0 || p[3] != 0)
			return jinst_fail(d->diag, JINST_EMALFORMED, at, "invokeinterface count %u / zero byte %u at pc %u",
			                  p[2], p[3], (unsigned)pc);
		return 0;
	case JINST_OPND_INVOKEDYNAMIC:
		in->operand = jinst_be16(p);
		if (p[2] || p[3])
			return jinst_fail(d->diag, JINST_EMALFORMED, at, "invokedynamic zero bytes not zero at pc %u",
			                  (unsigned)pc);
		return 0;
	case JINST_OPND_MULTIANEWARRAY:
		in->operand = jinst_be16(p);
		in->operand2 = p[2];
		if (p[2] == 0)
			return jinst_fail(d->diag, JINST_EMALFORMED, at, "multianewarray with 0 dimensions at pc %u",
			                  (unsigned)pc);
		return 0;
	case JINST_OPND_WIDE:
		in->wide = 1;
		in->opcode = p[0];
		in->operand = jinst_be16(p + 1);
		if (in->opcode == JINST_OP_IINC)
			in->operand2 = (int16_t)jinst_be16(p + 3);
		return 0;
	case JINST_OPND_TABLESWITCH:
	case JINST_OPND_LOOKUPSWITCH:
		return decode_switch(d, in, pc);
	default:
		return 0;
	}
}

/* The constant-pool index of in, for the tags its opcode allows (JVMS 6.5). */
static inline int check_cp_index(const decoder *d, const jinst_insn *in)
{
	uint8_t op = in->opcode;
	uint32_t tags = cp_kinds[jinst_opcodes[op].cp].tags;
	if (!tags || ((tags >> jinst_cp_tag_fast(d->c, (uint16_t)in->operand)) & 1))
		return 0;
	return jinst_fail(d->diag, JINST_EMALFORMED, d->base + in->offset, "%s at pc %u: #%d is a %s, %s expected",
	                  jinst_opcodes[op].name, (unsigned)in->offset, in->operand,
	                  jinst_cp_tag_name(jinst_cp_tag(d->c, (uint16_t)in->operand)), cp_kinds[jinst_opcodes[op].cp].what);
}

/* Every branch must land on an instruction start inside the code (JVMS 4.9.1). */
static int check_jumps(const decoder *d, const jinst_insn *insns, const int32_t *index_at, const uint32_t *jumps,
                       uint32_t njumps)
{
	for (uint32_t j = 0; j < njumps; j++) {
		const jinst_insn *in = &insns[jumps[j]];
		enum jinst_operand_kind k = operand_kind(in->wide ? JINST_OP_WIDE : in->opcode);
		int64_t bad = -2;
		if (k == JINST_OPND_BRANCH2 || k == JINST_OPND_BRANCH4) {
			if (in->operand < 0 || (uint32_t)in->operand >= d->len || index_at[in->operand] < 0)
				bad = in->operand;
		} else if (k == JINST_OPND_TABLESWITCH || k == JINST_OPND_LOOKUPSWITCH) {
			const jinst_switch *sw = in->sw;
			if (sw->default_target < 0 || index_at[sw->default_target] < 0)
				bad = sw->default_target;
			for (uint32_t t = 0; t < sw->count && bad == -2; t++)
				if (sw->targets[t] < 0 || index_at[sw->targets[t]] < 0)
					bad = sw->targets[t];
		}
		if (bad != -2)
			return jinst_fail(d->diag, JINST_EMALFORMED, d->base + in->offset,
			                  "%s at pc %u jumps to %lld, not an instruction", jinst_opcodes[in->opcode].name,
			                  (unsigned)in->offset, (long long)bad);
	}
	return 0;
}

static inline bool jumps_by_kind(enum jinst_operand_kind k)
{
	return k == JINST_OPND_BRANCH4 || k == JINST_OPND_TABLESWITCH || k == JINST_OPND_LOOKUPSWITCH;
}

/* One pass decodes: the instruction count is not known before, so the
 * array is sized for the worst case (one instruction per byte); the arena
 * makes that cheap. Branch targets are checked afterwards, once every
 * instruction start is known: index_at[pc] is the index of the instruction
 * starting at pc, -1 (all bits set) inside one. The instructions that jump
 * are listed by index, so that the check visits only them: each
 * instruction writes its index at the end of the list, and only a jump
 * moves the end on. */
static bool decode_arrays(jinst_arena *A, uint32_t len, int32_t **index_at, jinst_insn **insns, uint32_t **jumps)
{
	*index_at = jinst_arena_alloc(A, ((size_t)len + 1) * sizeof(**index_at));
	*insns = jinst_arena_alloc(A, (size_t)len * sizeof(**insns));
	*jumps = jinst_arena_alloc(A, ((size_t)len + 1) * sizeof(**jumps));
	if (!*index_at || !*insns || !*jumps)
		return false;
	memset(*index_at, 0xff, ((size_t)len + 1) * sizeof(**index_at));
	return true;
}

int jinst_code_decode_at(jinst_class *c, const jinst_code *code, jinst_insn **insns, uint32_t *count,
                         int32_t **insn_at, uint32_t **jump_list, uint32_t *jump_count, jinst_diag *diag)
{
	const uint8_t *b = code->code;
	uint32_t len = code->code_length;
	*insns = NULL;
	*count = 0;
	*insn_at = NULL;
	*jump_list = NULL;
	*jump_count = 0;
	int32_t *index_at;
	jinst_insn *out;
	uint32_t *jumps;
	if (!decode_arrays(c->arena, len, &index_at, &out, &jumps))
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory decoding code");
	/* The fast path reads the four bytes after an opcode at once. Past the
	 * code's end they are still there when the code lies in the class file,
	 * where a Code attribute holds at least exception_table_length and
	 * attributes_count after it (JVMS 4.7.3); code from elsewhere (an
	 * arena copy) has its last instructions' operands read zero-padded. */
	uintptr_t from = (uintptr_t)b, file = (uintptr_t)c->bytes;
	decoder d = {c, b, len, (uint32_t)(b - c->bytes), from >= file && from - file + len + 4 <= c->len ? len + 4 : len,
	             diag};
	uint32_t i = 0, njumps = 0;
	for (uint32_t pc = 0; pc < len; i++) {
		uint8_t op = b[pc];
		uint32_t l = jinst_opcodes[op].length;
		if (!l || pc + l > len)
			l = jinst_insn_length(b, len, pc);
		if (!l)
			return bad_instruction(&d, pc);
		index_at[pc] = (int32_t)i;
		jinst_insn *in = &out[i];
		*in = (jinst_insn){.offset = pc, .opcode = op, .length = l < 256 ? (uint8_t)l : 0};
		uint8_t form = form_of_kind[operand_kind(op)];
		jumps[njumps] = i;
		if (form != X) {
			decode_form(&d, in, pc, l, form);
			njumps += form == B2;
			if (op == JINST_OP_NEWARRAY && (in->operand < 4 || in->operand > 11)) /* JVMS 4.9.1 */
				return jinst_fail(diag, JINST_EMALFORMED, d.base + pc, "newarray of type %d at pc %u (4 to 11)",
				                  in->operand, (unsigned)pc);
		} else {
			int rc = decode_other(&d, in, pc);
			if (rc)
				return rc;
			njumps += jumps_by_kind(operand_kind(op));
		}
		int rc = check_cp_index(&d, in);
		if (rc)
			return rc;
		pc += l;
	}
	int rc = check_jumps(&d, out, index_at, jumps, njumps);
	if (rc)
		return rc;
	*insns = out;
	*count = i;
	*insn_at = index_at;
	*jump_list = jumps;
	*jump_count = njumps;
	return 0;
}

/* The instructions of form X: wide ones, switches, goto_w and jsr_w,
 * invokeinterface, invokedynamic, multianewarray. */
static void encode_other(const jinst_insn *in, uint32_t pc, jinst_buf *out)
{
	uint8_t op = in->opcode;
	size_t base = out->len - pc;
	if (in->wide) {
		jinst_buf_u1(out, JINST_OP_WIDE);
		jinst_buf_u1(out, op);
		jinst_buf_u2(out, (uint16_t)in->operand);
		if (op == JINST_OP_IINC)
			jinst_buf_u2(out, (uint16_t)in->operand2);
		return;
	}
	jinst_buf_u1(out, op);
	switch (operand_kind(op)) {
	case JINST_OPND_BRANCH4:
		jinst_buf_u4(out, (uint32_t)(in->operand - (int32_t)pc));
		break;
	case JINST_OPND_INVOKEINTERFACE:
		jinst_buf_u2(out, (uint16_t)in->operand);
		jinst_buf_u1(out, (uint8_t)in->operand2);
		jinst_buf_u1(out, 0);
		break;
	case JINST_OPND_INVOKEDYNAMIC:
		jinst_buf_u2(out, (uint16_t)in->operand);
		jinst_buf_u2(out, 0);
		break;
	case JINST_OPND_MULTIANEWARRAY:
		jinst_buf_u2(out, (uint16_t)in->operand);
		jinst_buf_u1(out, (uint8_t)in->operand2);
		break;
	case JINST_OPND_TABLESWITCH:
	case JINST_OPND_LOOKUPSWITCH: {
		const jinst_switch *sw = in->sw;
		while ((out->len - base) % 4)
			jinst_buf_u1(out, 0);
		jinst_buf_u4(out, (uint32_t)(sw->default_target - (int32_t)pc));
		if (op == JINST_OP_TABLESWITCH) {
			jinst_buf_u4(out, (uint32_t)sw->low);
			jinst_buf_u4(out, (uint32_t)sw->high);
		} else {
			jinst_buf_u4(out, sw->count);
		}
		for (uint32_t k = 0; k < sw->count; k++) {
			if (op == JINST_OP_LOOKUPSWITCH)
				jinst_buf_u4(out, (uint32_t)sw->keys[k]);
			jinst_buf_u4(out, (uint32_t)(sw->targets[k] - (int32_t)pc));
		}
		break;
	}
	default:
		break;
	}
}

int jinst_code_encode(jinst_class *c, const jinst_insn *insns, uint32_t count, jinst_buf *out, jinst_diag *diag)
{
	(void)c;
	size_t base = out->len;
	/* The fast path keeps the length in a local: the bytes it stores could
	 * alias out->len, which would chain every instruction to the last. */
	size_t at = base;
	for (uint32_t i = 0; i < count; i++) {
		const jinst_insn *in = &insns[i];
		uint8_t op = in->opcode;
		uint32_t pc = (uint32_t)(at - base);
		if (pc != in->offset) {
			out->len = at;
			if (out->oom) /* the slow path dropped bytes */
				break;
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET,
			                  "instruction %u encodes at pc %u but says offset %u", (unsigned)i, (unsigned)pc,
			                  (unsigned)in->offset);
		}
		uint8_t form = in->wide ? X : form_of_kind[operand_kind(op)];
		if (form != X) {
			if (out->cap - at < 5) {
				out->len = at;
				if (!jinst_buf_reserve(out, 5))
					break;
			}
			/* The operand as a big-endian word after the opcode, of which the
			 * instruction's length keeps what it needs. */
			static const uint8_t shift[7] = {0, 0, 24, 24, 16, 16, 16};
			static const uint32_t mask[7] = {0, 0, 0xFF, 0xFF, 0xFFFF, 0xFFFF, 0xFFFF};
			int32_t x = in->operand - (form == B2 ? (int32_t)pc : 0);
			if (form == B2 && (x < INT16_MIN || x > INT16_MAX)) {
				out->len = at;
				return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "%s at pc %u: offset %d does not fit",
				                  jinst_opcodes[op].name, (unsigned)pc, x);
			}
			uint32_t word = ((uint32_t)x & mask[form]) << shift[form];
			word |= op == JINST_OP_IINC ? ((uint32_t)in->operand2 & 0xFF) << 16 : 0;
			uint8_t *q = out->data + at;
			q[0] = op;
			q[1] = (uint8_t)(word >> 24);
			q[2] = (uint8_t)(word >> 16);
			q[3] = (uint8_t)(word >> 8);
			q[4] = (uint8_t)word;
			at += jinst_opcodes[op].length;
			continue;
		}
		out->len = at;
		encode_other(in, pc, out);
		at = out->len;
	}
	out->len = at;
	return out->oom ? jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory encoding code") : 0;
}
