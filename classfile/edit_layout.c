/*
 * The code editor's commit, first half: stack depths, layout, encoding.
 *
 * Stack depths. Before layout a depth-only data flow (no types) walks the
 * new code from its entry and from every handler; it finds the new
 * max_stack and refuses code where depths go negative or disagree at a
 * merge, which is how an unbalanced insertion is caught before it reaches
 * a verifier. Each frame starts a walk too, with the depth of its stack:
 * the verifier checks code that carries a frame even where nothing reaches
 * it (the nop...athrow that replaces dead code). max_stack never drops
 * below the original one, which covered code the flow does not reach.
 *
 * Layout (JVMS 4.7.3, 6.5 goto_w). Offsets follow from sizes, and sizes
 * depend on offsets twice: switch padding (0-3 bytes to a multiple of 4)
 * and branch reach (s2 offsets reach +-32 KiB). Each pass assigns offsets
 * from the current sizes, then widens every 16-bit branch that does not
 * reach: goto/jsr to goto_w/jsr_w, a conditional branch to the inverted
 * branch over a goto_w (8 bytes). Padding changes as code moves, so every
 * pass checks again every branch still short. A branch once widened stays
 * widened: the set of wide branches only grows, so the passes end, and the
 * last pass, which widened nothing, has checked every short branch at the
 * final offsets. When the code is under 32 KiB no branch can miss its
 * target, and the common case is a single pass.
 */
#include "edit_internal.h"

/* ---- commit: stack depths ------------------------------------------------------------ */

/* Descriptor of a field or method reference (or InvokeDynamic). */
static const uint8_t *ref_descriptor(jinst_class *c, uint16_t index, uint16_t *len)
{
	/* The references of the original pool straight from the class bytes:
	 * all four kinds keep their NameAndType index at the same place (JVMS
	 * 4.4.2, 4.4.10), and the NameAndType its descriptor index. */
	if (index < c->cp_count && (c->cp_tags[index] == JINST_CP_FIELDREF || c->cp_tags[index] == JINST_CP_METHODREF ||
	                            c->cp_tags[index] == JINST_CP_INTERFACE_METHODREF ||
	                            c->cp_tags[index] == JINST_CP_INVOKE_DYNAMIC)) {
		uint16_t nt = jinst_be16(c->bytes + c->cp_offsets[index] + 3);
		if (nt < c->cp_count && c->cp_tags[nt] == JINST_CP_NAME_AND_TYPE)
			return jinst_cp_utf8(c, jinst_be16(c->bytes + c->cp_offsets[nt] + 3), len);
	}
	jinst_cp_entry e, nat;
	if (jinst_cp_get(c, index, &e))
		return NULL;
	uint16_t nt;
	if (e.tag == JINST_CP_INVOKE_DYNAMIC)
		nt = e.u.dyn.name_and_type_index;
	else if (e.tag == JINST_CP_FIELDREF || e.tag == JINST_CP_METHODREF || e.tag == JINST_CP_INTERFACE_METHODREF)
		nt = e.u.ref.name_and_type_index;
	else
		return NULL;
	if (jinst_cp_get(c, nt, &nat) || nat.tag != JINST_CP_NAME_AND_TYPE)
		return NULL;
	return jinst_cp_utf8(c, nat.u.nat.descriptor_index, len);
}

/* Words a method descriptor's arguments take, and its return type's. */
static bool method_words(const uint8_t *d, uint16_t len, int *args, int *ret)
{
	int n = 0;
	uint16_t i = 1;
	if (!len || d[0] != '(')
		return false;
	while (i < len && d[i] != ')') {
		if (d[i] == 'J' || d[i] == 'D') {
			n += 2;
			i++;
			continue;
		}
		while (i < len && d[i] == '[')
			i++;
		if (i < len && d[i] == 'L')
			while (i < len && d[i] != ';')
				i++;
		i++;
		n++;
	}
	if (i + 1 >= len)
		return false;
	char r = (char)d[i + 1];
	*args = n;
	*ret = r == 'V' ? 0 : r == 'J' || r == 'D' ? 2 : 1;
	return true;
}

/* What a field or method reference's descriptor says about stack words,
 * packed in 16 bits: RW_KNOWN once worked out; RW_FIELD with the value's
 * words (as a field descriptor: 1 or 2); RW_METHOD when it parses as a
 * method descriptor, with the arguments' words (bits 0-8) and the return
 * value's. The depth flow asks this of every invoke and field access, the
 * same few references again and again across a class's methods, so the
 * answer is kept per class by pool index (the pool only grows and its
 * entries never change, so an answer stays true), for the original pool
 * and the first RW_ADDED entries added to it: a pass's hook (the coverage
 * probes' call at every method's entry) is an added reference, and
 * working it out again for each method was 1% of `jinst instrument
 * --coverage`. */
#define RW_ADDED 64
#define RW_KNOWN 0x8000u
#define RW_FIELD 0x4000u
#define RW_METHOD 0x2000u
#define RW_FIELD_SHIFT 11
#define RW_RET_SHIFT 9

static int ref_words(jinst_class *c, uint16_t index, uint16_t *out)
{
	bool cacheable = index < (uint32_t)c->cp_count + RW_ADDED;
	if (cacheable && !c->ref_words)
		c->ref_words = jinst_arena_zalloc(c->arena, ((size_t)c->cp_count + RW_ADDED) * sizeof(uint16_t));
	if (cacheable && c->ref_words && c->ref_words[index]) {
		*out = c->ref_words[index];
		return 0;
	}
	uint16_t dl;
	const uint8_t *d = ref_descriptor(c, index, &dl);
	if (!d || !dl)
		return -1;
	uint16_t w = RW_KNOWN | RW_FIELD | (uint16_t)((d[0] == 'J' || d[0] == 'D' ? 2u : 1u) << RW_FIELD_SHIFT);
	int args, ret;
	if (method_words(d, dl, &args, &ret) && args <= 0x1ff)
		w |= RW_METHOD | (uint16_t)((unsigned)ret << RW_RET_SHIFT) | (uint16_t)args;
	if (cacheable && c->ref_words)
		c->ref_words[index] = w;
	*out = w;
	return 0;
}

int jinst_insn_effect(jinst_class *c, const jinst_insn *in, int *pops, int *pushes)
{
	uint8_t op = in->opcode;
	const jinst_opcode_info *info = &jinst_opcodes[op];
	if (info->pops != JINST_OP_VARIES) {
		*pops = info->pops;
		*pushes = info->pushes;
		return 0;
	}
	uint16_t words;
	if (info->flags & JINST_OPF_FIELD) {
		if (ref_words(c, (uint16_t)in->operand, &words) || !(words & RW_FIELD))
			return -1;
		int w = (words >> RW_FIELD_SHIFT) & 3;
		*pops = (op == JINST_OP_PUTSTATIC ? w : 0) + (op == JINST_OP_GETFIELD ? 1 : 0) +
		        (op == JINST_OP_PUTFIELD ? w + 1 : 0);
		*pushes = op == JINST_OP_GETSTATIC || op == JINST_OP_GETFIELD ? w : 0;
		return 0;
	}
	if (info->flags & JINST_OPF_INVOKE) {
		if (ref_words(c, (uint16_t)in->operand, &words) || !(words & RW_METHOD))
			return -1;
		*pops = (words & 0x1ff) + (op == JINST_OP_INVOKESTATIC || op == JINST_OP_INVOKEDYNAMIC ? 0 : 1);
		*pushes = (words >> RW_RET_SHIFT) & 3;
		return 0;
	}
	if (op == JINST_OP_MULTIANEWARRAY) {
		*pops = in->operand2;
		*pushes = 1;
		return 0;
	}
	return -1;
}

typedef struct pending {
	jinst_node *n;
	int32_t depth;
} pending;

/* The depth-only data flow (see the essay at the top). */
int jinst_ed_depth_flow(jinst_edit *ed, uint32_t *max_stack, jinst_diag *diag)
{
	pending *work = NULL;
	uint32_t nwork = 0, cap = 0;
	if (!grow(ed->A, (void **)&work, &cap, ed->nex + 1, sizeof(pending)))
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	work[nwork++] = (pending){ed->head, 0};
	for (uint32_t i = 0; i < ed->nex; i++)
		work[nwork++] = (pending){ed->labels[ed->ex[i].handler].node, 1};
	/* Code with a frame is checked by the verifier even where nothing
	 * reaches it (the nop...athrow that replaces dead code carries one), so
	 * each frame starts a walk with its own depth. */
	for (uint32_t i = 0; i < ed->nlabels; i++) {
		const label_info *li = &ed->labels[i];
		if (!li->frame || !li->node)
			continue;
		int32_t words = 0;
		for (uint16_t k = 0; k < li->frame->nstack; k++)
			words += cat2(&li->frame->stack[k]) ? 2 : 1;
		if (!grow(ed->A, (void **)&work, &cap, nwork + 1, sizeof(pending)))
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		work[nwork++] = (pending){li->node, words};
	}
	int32_t max = 0;
	while (nwork) {
		pending p = work[--nwork];
		int32_t d = p.depth;
		jinst_node *n = p.n;
		for (; n; n = n->next) {
			if (n->depth >= 0) {
				if (n->depth != d)
					return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
					                  "stack depths %d and %d meet (at original pc %d or after)", n->depth, d,
					                  node_where(n));
				break;
			}
			n->depth = d;
			if (n->kind == NODE_LABEL)
				continue;
			const jinst_insn *in = &n->insn;
			const jinst_opcode_info *info = &jinst_opcodes[in->opcode];
			int pops = info->pops, pushes = info->pushes; /* most opcodes: the table's, without the call */
			if (info->pops == JINST_OP_VARIES && jinst_insn_effect(ed->c, in, &pops, &pushes))
				return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "%s: bad constant #%d",
				                  jinst_opcode_name(in->opcode), in->operand);
			if (d < pops)
				return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
				                  "stack underflow: %s pops %d of %d words (original pc %d or after)",
				                  jinst_opcode_name(in->opcode), pops, d, node_where(n));
			int32_t nd = d - pops + pushes;
			if (nd > max)
				max = nd;
			uint8_t op = in->opcode;
			bool jsr = op == JINST_OP_JSR || op == JINST_OP_JSR_W;
			if (is_branch(in) || in->sw) {
				uint32_t ntargets = in->sw ? in->sw->count + 1 : 1;
				if (!grow(ed->A, (void **)&work, &cap, nwork + ntargets, sizeof(pending)))
					return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
				if (in->sw) {
					work[nwork++] = (pending){ed->labels[in->sw->default_target].node, nd};
					for (uint32_t k = 0; k < in->sw->count; k++)
						work[nwork++] = (pending){ed->labels[in->sw->targets[k]].node, nd};
				} else {
					work[nwork++] = (pending){ed->labels[in->operand].node, nd};
				}
			}
			if (unconditional(op))
				break;
			d = jsr ? d : nd; /* after a jsr, the subroutine's ret comes back with the depth of the call */
		}
		if (!n)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "code falls off its end");
	}
	*max_stack = (uint32_t)max;
	return 0;
}

/* ---- commit: layout ------------------------------------------------------------------- */

static uint64_t node_size(const jinst_node *n, uint32_t pc)
{
	const jinst_insn *in = &n->insn;
	switch (kind_of(in)) {
	case JINST_OPND_NONE: return 1;
	case JINST_OPND_LOCAL: return in->wide ? 4 : 2;
	case JINST_OPND_BYTE: case JINST_OPND_CP1: case JINST_OPND_NEWARRAY: return 2;
	case JINST_OPND_SHORT: case JINST_OPND_CP2: return 3;
	case JINST_OPND_IINC: return in->wide ? 6 : 3;
	case JINST_OPND_BRANCH2: return n->form == FORM_NORMAL ? 3 : n->form == FORM_WIDE ? 5 : 8;
	case JINST_OPND_BRANCH4: case JINST_OPND_INVOKEINTERFACE: case JINST_OPND_INVOKEDYNAMIC: return 5;
	case JINST_OPND_MULTIANEWARRAY: return 4;
	case JINST_OPND_TABLESWITCH: return ((pc + 4) & ~3u) - pc + 12 + 4 * (uint64_t)in->sw->count;
	case JINST_OPND_LOOKUPSWITCH: return ((pc + 4) & ~3u) - pc + 8 + 8 * (uint64_t)in->sw->count;
	default: return 1;
	}
}

/* Assigns offsets until every 16-bit branch reaches; the code length, or
 * JINST_ETOOLARGE. */
int jinst_ed_layout(jinst_edit *ed, uint32_t *code_length, uint32_t *ninverted, jinst_diag *diag)
{
	uint32_t inv = 0;
	for (;;) {
		uint64_t pc = 0;
		for (jinst_node *n = ed->head; n; n = n->next) {
			n->offset = pc > 0xFFFFFF ? 0xFFFFFF : (uint32_t)pc;
			if (n->kind == NODE_INSN)
				pc += node_size(n, n->offset);
		}
		if (pc > 65535)
			return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET,
			                  "code would be %llu bytes, over the 65535 of JVMS 4.7.3", (unsigned long long)pc);
		*code_length = (uint32_t)pc;
		if (pc <= 32767)
			break; /* nothing can be out of reach */
		bool changed = false;
		for (jinst_node *n = ed->head; n; n = n->next) {
			if (n->kind != NODE_INSN || n->form != FORM_NORMAL || kind_of(&n->insn) != JINST_OPND_BRANCH2)
				continue;
			int64_t delta = (int64_t)ed->labels[n->insn.operand].node->offset - n->offset;
			if (delta >= INT16_MIN && delta <= INT16_MAX)
				continue;
			uint8_t op = n->insn.opcode;
			n->form = op == JINST_OP_GOTO || op == JINST_OP_JSR ? FORM_WIDE : FORM_INVERT;
			inv += n->form == FORM_INVERT;
			changed = true;
		}
		if (!changed)
			break;
	}
	*ninverted = inv;
	return 0;
}

static uint8_t inverted(uint8_t op)
{
	/* The conditions come in pairs, each the other's negation: ifeq/ifne,
	 * iflt/ifge, ... from ifeq, and ifnull/ifnonnull. */
	return op >= JINST_OP_IFNULL ? (uint8_t)(op ^ 1) : (uint8_t)(((op - JINST_OP_IFEQ) ^ 1) + JINST_OP_IFEQ);
}

/* A branch at its new offset pc: goto_w or jsr_w when widened, an inverted
 * if over a goto_w when its condition is (see the layout). */
static inline void encode_branch(const jinst_edit *ed, const jinst_node *n, enum jinst_operand_kind k, uint8_t *o)
{
	const jinst_insn *in = &n->insn;
	uint32_t pc = n->offset, target = ed->labels[in->operand].node->offset;
	uint8_t op = in->opcode;
	if (k == JINST_OPND_BRANCH4 || n->form == FORM_WIDE) {
		o[0] = k == JINST_OPND_BRANCH4 ? op : op == JINST_OP_GOTO ? JINST_OP_GOTO_W : JINST_OP_JSR_W;
		jinst_put_u4(o + 1, target - pc);
	} else if (n->form == FORM_INVERT) {
		/* if<!cond> over the goto_w: lands on what follows the pair. */
		o[0] = inverted(op);
		jinst_put_u2(o + 1, 8);
		o[3] = JINST_OP_GOTO_W;
		jinst_put_u4(o + 4, target - (pc + 3));
	} else {
		o[0] = op;
		jinst_put_u2(o + 1, (uint16_t)(target - pc));
	}
}

/* A switch at its new offset, with the padding that offset needs (JVMS 6.5). */
static void encode_switch(const jinst_edit *ed, const jinst_node *n, uint8_t *p)
{
	const jinst_insn *in = &n->insn;
	const jinst_switch *sw = in->sw;
	uint32_t pc = n->offset, at = (pc + 4) & ~3u;
	uint8_t op = in->opcode;
	p[pc] = op;
	for (uint32_t i = pc + 1; i < at; i++)
		p[i] = 0;
	jinst_put_u4(p + at, ed->labels[sw->default_target].node->offset - pc);
	at += 4;
	if (op == JINST_OP_TABLESWITCH) {
		jinst_put_u4(p + at, (uint32_t)sw->low);
		jinst_put_u4(p + at + 4, (uint32_t)sw->high);
		at += 8;
	} else {
		jinst_put_u4(p + at, sw->count);
		at += 4;
	}
	for (uint32_t i = 0; i < sw->count; i++) {
		if (op == JINST_OP_LOOKUPSWITCH) {
			jinst_put_u4(p + at, (uint32_t)sw->keys[i]);
			at += 4;
		}
		jinst_put_u4(p + at, ed->labels[sw->targets[i]].node->offset - pc);
		at += 4;
	}
}

/* An inserted instruction without offsets, from its operands. */
static int encode_inserted(const jinst_insn *in, enum jinst_operand_kind k, uint8_t *o, jinst_diag *diag)
{
	uint8_t op = in->opcode;
	uint16_t v = (uint16_t)in->operand;
	switch (k) {
	case JINST_OPND_NONE:
		o[0] = op;
		break;
	case JINST_OPND_LOCAL:
	case JINST_OPND_IINC:
		if (in->wide) {
			o[0] = JINST_OP_WIDE;
			o[1] = op;
			jinst_put_u2(o + 2, v);
			if (k == JINST_OPND_IINC)
				jinst_put_u2(o + 4, (uint16_t)in->operand2);
		} else {
			o[0] = op;
			o[1] = (uint8_t)v;
			if (k == JINST_OPND_IINC)
				o[2] = (uint8_t)in->operand2;
		}
		break;
	case JINST_OPND_BYTE:
	case JINST_OPND_CP1:
	case JINST_OPND_NEWARRAY:
		o[0] = op;
		o[1] = (uint8_t)v;
		break;
	case JINST_OPND_SHORT:
	case JINST_OPND_CP2:
		o[0] = op;
		jinst_put_u2(o + 1, v);
		break;
	case JINST_OPND_INVOKEINTERFACE:
	case JINST_OPND_INVOKEDYNAMIC:
		o[0] = op;
		jinst_put_u2(o + 1, v);
		o[3] = k == JINST_OPND_INVOKEINTERFACE ? (uint8_t)in->operand2 : 0;
		o[4] = 0;
		break;
	case JINST_OPND_MULTIANEWARRAY:
		o[0] = op;
		jinst_put_u2(o + 1, v);
		o[3] = (uint8_t)in->operand2;
		break;
	default:
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "cannot encode %s", jinst_opcode_name(op));
	}
	return 0;
}

/* The new code bytes, in the arena, written straight from the nodes: an
 * original instruction that names no position is copied from the original
 * code (its bytes do not depend on where it lands); branches and switches
 * get their offsets and padding; inserted instructions are encoded. */
int jinst_ed_encode(jinst_edit *ed, uint32_t code_length, uint8_t **bytes, jinst_diag *diag)
{
	uint8_t *p = jinst_arena_alloc(ed->A, (size_t)code_length + 8);
	if (!p)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (jinst_node *n = ed->head; n; n = n->next) {
		if (n->kind != NODE_INSN)
			continue;
		const jinst_insn *in = &n->insn;
		uint8_t *o = p + n->offset;
		enum jinst_operand_kind k = kind_of(in);
		if (k == JINST_OPND_BRANCH2 || k == JINST_OPND_BRANCH4) {
			encode_branch(ed, n, k, o);
		} else if (in->sw) {
			encode_switch(ed, n, p);
		} else if (n->orig != JINST_NO_OFFSET) {
			/* An original instruction without offsets: its bytes as they were. */
			memcpy(o, ed->orig_code + n->orig, in->length);
		} else {
			int rc = encode_inserted(in, k, o, diag);
			if (rc)
				return rc;
		}
	}
	*bytes = p;
	return 0;
}
