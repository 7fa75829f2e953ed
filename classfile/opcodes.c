/*
 * The opcode table (include/jinst/opcodes.h) as the array every decoder
 * and pass indexes by opcode byte: one row of 16 bytes per byte value, so
 * a loop over code reads an instruction's length, operand kind and flags
 * from one cache line of a 4 KiB table that stays in L1.
 */
#include "internal.h"

#define ROW(name, mnemonic, code, kind, length, pops, pushes, result, cp, flags) \
	[code] = {mnemonic, JINST_OPND_##kind, length, pops, pushes, JINST_OPR_##result, JINST_OPCP_##cp, flags},
/* A byte that is no opcode: 0xca (breakpoint), 0xfe and 0xff (impdep1, impdep2)
 * are reserved (JVMS 6.2) and refused like the unassigned ones. */
#define NO {NULL, JINST_OPND_INVALID, 0, JINST_OP_VARIES, JINST_OP_VARIES, JINST_OPR_OTHER, JINST_OPCP_NONE, 0}
#define NO8 NO, NO, NO, NO, NO, NO, NO, NO

const jinst_opcode_info jinst_opcodes[256] = {
	JINST_OPCODES(ROW)
	[0xca] = NO8, NO8, NO8, NO8, NO8, NO8, NO, NO, NO, NO, NO, NO,
};

const char *jinst_opcode_name(uint8_t opcode)
{
	return jinst_opcodes[opcode].name;
}

enum jinst_operand_kind jinst_opcode_operands(uint8_t opcode)
{
	return (enum jinst_operand_kind)jinst_opcodes[opcode].kind;
}
