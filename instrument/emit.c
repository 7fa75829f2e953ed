/*
 * What the passes insert, built and encoded: one place for the small
 * instruction sequences every pass writes (a push of an int, a call of a
 * hook), in the two forms the two insertion paths take.
 *
 * Each pass inserts through the code patcher first (include/jinst/patch.h),
 * which takes bytes and streams them into the code, and through the code
 * editor (include/jinst/edit.h) for what the patcher declines, which takes
 * jinst_insn and chooses encodings itself. So a pass builds its sequence
 * once as instructions (jinst_ins_op, jinst_ins_push_int) and hands the
 * patcher their bytes (jinst_ins_encode). The encoder writes the shortest
 * form of a constant load whatever the instruction asks for: `ldc` when
 * the pool index fits in a byte, `ldc_w` past it (JVMS 6.5 ldc, ldc_w), as
 * the editor does for an `ldc` past 255.
 *
 * jinst_ins_edit is the editor path's frame around a pass's insertions:
 * no StackMapTable derived below version 50 (the verifier infers types
 * there, JVMS 4.10.2, and such code may hold jsr/ret), the commit, the
 * editor freed, and a failure reported in the diagnostic.
 */
#include <string.h>

#include "internal.h"

int jinst_ins_push_int(jinst_class *c, uint32_t v, jinst_insn *in)
{
	memset(in, 0, sizeof(*in));
	if (v <= 5) {
		in->opcode = (uint8_t)(JINST_OP_ICONST_0 + v);
	} else if (v <= 127) {
		in->opcode = JINST_OP_BIPUSH;
		in->operand = (int32_t)v;
	} else if (v <= 32767) {
		in->opcode = JINST_OP_SIPUSH;
		in->operand = (int32_t)v;
	} else {
		uint16_t k;
		int rc = jinst_cp_add_integer(c, (int32_t)v, &k);
		if (rc)
			return rc;
		in->opcode = JINST_OP_LDC;
		in->operand = k;
	}
	return 0;
}

uint32_t jinst_ins_encode(const jinst_insn *seq, uint32_t n, uint8_t *b)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t op = seq[i].opcode;
		uint32_t v = (uint32_t)seq[i].operand;
		if (op == JINST_OP_LDC || op == JINST_OP_LDC_W)
			op = v > 255 ? JINST_OP_LDC_W : JINST_OP_LDC;
		b[k++] = op;
		switch (jinst_opcodes[op].kind) {
		case JINST_OPND_BYTE:
		case JINST_OPND_CP1:
			b[k++] = (uint8_t)v;
			break;
		case JINST_OPND_SHORT:
		case JINST_OPND_CP2:
			b[k++] = (uint8_t)(v >> 8);
			b[k++] = (uint8_t)v;
			break;
		default: /* the other kinds the passes insert take no operand */
			break;
		}
	}
	return k;
}

int jinst_ins_edit(jinst_class *c, jinst_member *m, jinst_ins_edit_fn fn, const void *ctx, const char *what,
                   jinst_diag *diag)
{
	return jinst_ins_edit_decoded(c, m, NULL, 0, NULL, 0, fn, ctx, what, diag);
}

int jinst_ins_edit_decoded(jinst_class *c, jinst_member *m, const jinst_insn *insns, uint32_t count,
                           const uint8_t *code, uint32_t flags, jinst_ins_edit_fn fn, const void *ctx,
                           const char *what, jinst_diag *diag)
{
	jinst_edit_options eo = JINST_EDIT_OPTIONS_INIT;
	eo.flags = flags;
	eo.decoded = insns;
	eo.decoded_count = count;
	eo.decoded_code = code;
	if (jinst_class_major_version(c) < 50)
		eo.frames = JINST_EDIT_FRAMES_NONE;
	jinst_edit *ed;
	int rc = jinst_edit_open(&ed, c, m, &eo, diag);
	if (rc)
		return rc;
	if ((rc = fn(ed, ctx)))
		jinst_ins_fail(diag, rc, "%s: %s", what, jinst_strerror(rc));
	else
		rc = jinst_edit_commit(ed, diag);
	jinst_edit_free(ed);
	return rc;
}
