/*
 * The JVM's opcodes (JVMS 6.5), in one table.
 *
 * JINST_OPCODES(X) calls X once per opcode, in opcode order:
 *
 *   X(NAME, mnemonic, code, kind, length, pops, pushes, result, cp, flags)
 *
 *   NAME      the JVMS mnemonic in upper case (JINST_OP_<NAME> below)
 *   mnemonic  the JVMS mnemonic, as `jinst dump` prints it
 *   code      the opcode byte
 *   kind      operand kind: JINST_OPND_<kind> (include/jinst/classfile.h)
 *   length    bytes of the instruction, 0 when variable (wide, switches)
 *   pops, pushes  stack slots taken and given (a long or double is two),
 *             VARIES when the constant pool or an operand decides (field
 *             access, invokes, multianewarray); jsr pushes its returnAddress
 *   result    JINST_OPR_<result>: the verification type of what it pushes
 *             when the opcode alone says it; OTHER when the pool, a local or
 *             the stack does (ldc, aload, the dup family, new, ...); NONE
 *             when it pushes nothing
 *   cp        JINST_OPCP_<cp>: the constant-pool entries its index may name
 *   flags     JINST_OPF_* below
 *
 * Every product table indexed by opcode is generated from this one: the
 * opcode enum here, and jinst_opcodes[] (classfile/opcodes.c), which the
 * decoder, encoder, code patcher, editor, inference, subroutine inliner,
 * the trace pass and `jinst dump` read.
 */
#ifndef JINST_OPCODES_H
#define JINST_OPCODES_H

#include "jinst/classfile.h"

#define JINST_OPCODES(X) \
	X(NOP, "nop", 0x00, NONE, 1, 0, 0, NONE, NONE, 0) \
	X(ACONST_NULL, "aconst_null", 0x01, NONE, 1, 0, 1, NULL, NONE, 0) \
	X(ICONST_M1, "iconst_m1", 0x02, NONE, 1, 0, 1, INT, NONE, 0) \
	X(ICONST_0, "iconst_0", 0x03, NONE, 1, 0, 1, INT, NONE, 0) \
	X(ICONST_1, "iconst_1", 0x04, NONE, 1, 0, 1, INT, NONE, 0) \
	X(ICONST_2, "iconst_2", 0x05, NONE, 1, 0, 1, INT, NONE, 0) \
	X(ICONST_3, "iconst_3", 0x06, NONE, 1, 0, 1, INT, NONE, 0) \
	X(ICONST_4, "iconst_4", 0x07, NONE, 1, 0, 1, INT, NONE, 0) \
	X(ICONST_5, "iconst_5", 0x08, NONE, 1, 0, 1, INT, NONE, 0) \
	X(LCONST_0, "lconst_0", 0x09, NONE, 1, 0, 2, LONG, NONE, 0) \
	X(LCONST_1, "lconst_1", 0x0a, NONE, 1, 0, 2, LONG, NONE, 0) \
	X(FCONST_0, "fconst_0", 0x0b, NONE, 1, 0, 1, FLOAT, NONE, 0) \
	X(FCONST_1, "fconst_1", 0x0c, NONE, 1, 0, 1, FLOAT, NONE, 0) \
	X(FCONST_2, "fconst_2", 0x0d, NONE, 1, 0, 1, FLOAT, NONE, 0) \
	X(DCONST_0, "dconst_0", 0x0e, NONE, 1, 0, 2, DOUBLE, NONE, 0) \
	X(DCONST_1, "dconst_1", 0x0f, NONE, 1, 0, 2, DOUBLE, NONE, 0) \
	X(BIPUSH, "bipush", 0x10, BYTE, 2, 0, 1, INT, NONE, 0) \
	X(SIPUSH, "sipush", 0x11, SHORT, 3, 0, 1, INT, NONE, 0) \
	X(LDC, "ldc", 0x12, CP1, 2, 0, 1, OTHER, LOADABLE, 0) \
	X(LDC_W, "ldc_w", 0x13, CP2, 3, 0, 1, OTHER, LOADABLE, 0) \
	X(LDC2_W, "ldc2_w", 0x14, CP2, 3, 0, 2, OTHER, LOADABLE2, 0) \
	X(ILOAD, "iload", 0x15, LOCAL, 2, 0, 1, INT, NONE, JINST_OPF_LOAD) \
	X(LLOAD, "lload", 0x16, LOCAL, 2, 0, 2, LONG, NONE, JINST_OPF_LOAD) \
	X(FLOAD, "fload", 0x17, LOCAL, 2, 0, 1, FLOAT, NONE, JINST_OPF_LOAD) \
	X(DLOAD, "dload", 0x18, LOCAL, 2, 0, 2, DOUBLE, NONE, JINST_OPF_LOAD) \
	X(ALOAD, "aload", 0x19, LOCAL, 2, 0, 1, OTHER, NONE, JINST_OPF_LOAD) \
	X(ILOAD_0, "iload_0", 0x1a, NONE, 1, 0, 1, INT, NONE, JINST_OPF_LOAD) \
	X(ILOAD_1, "iload_1", 0x1b, NONE, 1, 0, 1, INT, NONE, JINST_OPF_LOAD) \
	X(ILOAD_2, "iload_2", 0x1c, NONE, 1, 0, 1, INT, NONE, JINST_OPF_LOAD) \
	X(ILOAD_3, "iload_3", 0x1d, NONE, 1, 0, 1, INT, NONE, JINST_OPF_LOAD) \
	X(LLOAD_0, "lload_0", 0x1e, NONE, 1, 0, 2, LONG, NONE, JINST_OPF_LOAD) \
	X(LLOAD_1, "lload_1", 0x1f, NONE, 1, 0, 2, LONG, NONE, JINST_OPF_LOAD) \
	X(LLOAD_2, "lload_2", 0x20, NONE, 1, 0, 2, LONG, NONE, JINST_OPF_LOAD) \
	X(LLOAD_3, "lload_3", 0x21, NONE, 1, 0, 2, LONG, NONE, JINST_OPF_LOAD) \
	X(FLOAD_0, "fload_0", 0x22, NONE, 1, 0, 1, FLOAT, NONE, JINST_OPF_LOAD) \
	X(FLOAD_1, "fload_1", 0x23, NONE, 1, 0, 1, FLOAT, NONE, JINST_OPF_LOAD) \
	X(FLOAD_2, "fload_2", 0x24, NONE, 1, 0, 1, FLOAT, NONE, JINST_OPF_LOAD) \
	X(FLOAD_3, "fload_3", 0x25, NONE, 1, 0, 1, FLOAT, NONE, JINST_OPF_LOAD) \
	X(DLOAD_0, "dload_0", 0x26, NONE, 1, 0, 2, DOUBLE, NONE, JINST_OPF_LOAD) \
	X(DLOAD_1, "dload_1", 0x27, NONE, 1, 0, 2, DOUBLE, NONE, JINST_OPF_LOAD) \
	X(DLOAD_2, "dload_2", 0x28, NONE, 1, 0, 2, DOUBLE, NONE, JINST_OPF_LOAD) \
	X(DLOAD_3, "dload_3", 0x29, NONE, 1, 0, 2, DOUBLE, NONE, JINST_OPF_LOAD) \
	X(ALOAD_0, "aload_0", 0x2a, NONE, 1, 0, 1, OTHER, NONE, JINST_OPF_LOAD) \
	X(ALOAD_1, "aload_1", 0x2b, NONE, 1, 0, 1, OTHER, NONE, JINST_OPF_LOAD) \
	X(ALOAD_2, "aload_2", 0x2c, NONE, 1, 0, 1, OTHER, NONE, JINST_OPF_LOAD) \
	X(ALOAD_3, "aload_3", 0x2d, NONE, 1, 0, 1, OTHER, NONE, JINST_OPF_LOAD) \
	X(IALOAD, "iaload", 0x2e, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LALOAD, "laload", 0x2f, NONE, 1, 2, 2, LONG, NONE, 0) \
	X(FALOAD, "faload", 0x30, NONE, 1, 2, 1, FLOAT, NONE, 0) \
	X(DALOAD, "daload", 0x31, NONE, 1, 2, 2, DOUBLE, NONE, 0) \
	X(AALOAD, "aaload", 0x32, NONE, 1, 2, 1, OTHER, NONE, 0) \
	X(BALOAD, "baload", 0x33, NONE, 1, 2, 1, INT, NONE, 0) \
	X(CALOAD, "caload", 0x34, NONE, 1, 2, 1, INT, NONE, 0) \
	X(SALOAD, "saload", 0x35, NONE, 1, 2, 1, INT, NONE, 0) \
	X(ISTORE, "istore", 0x36, LOCAL, 2, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(LSTORE, "lstore", 0x37, LOCAL, 2, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(FSTORE, "fstore", 0x38, LOCAL, 2, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(DSTORE, "dstore", 0x39, LOCAL, 2, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(ASTORE, "astore", 0x3a, LOCAL, 2, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(ISTORE_0, "istore_0", 0x3b, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(ISTORE_1, "istore_1", 0x3c, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(ISTORE_2, "istore_2", 0x3d, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(ISTORE_3, "istore_3", 0x3e, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(LSTORE_0, "lstore_0", 0x3f, NONE, 1, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(LSTORE_1, "lstore_1", 0x40, NONE, 1, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(LSTORE_2, "lstore_2", 0x41, NONE, 1, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(LSTORE_3, "lstore_3", 0x42, NONE, 1, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(FSTORE_0, "fstore_0", 0x43, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(FSTORE_1, "fstore_1", 0x44, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(FSTORE_2, "fstore_2", 0x45, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(FSTORE_3, "fstore_3", 0x46, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(DSTORE_0, "dstore_0", 0x47, NONE, 1, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(DSTORE_1, "dstore_1", 0x48, NONE, 1, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(DSTORE_2, "dstore_2", 0x49, NONE, 1, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(DSTORE_3, "dstore_3", 0x4a, NONE, 1, 2, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(ASTORE_0, "astore_0", 0x4b, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(ASTORE_1, "astore_1", 0x4c, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(ASTORE_2, "astore_2", 0x4d, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(ASTORE_3, "astore_3", 0x4e, NONE, 1, 1, 0, OTHER, NONE, JINST_OPF_STORE) \
	X(IASTORE, "iastore", 0x4f, NONE, 1, 3, 0, NONE, NONE, 0) \
	X(LASTORE, "lastore", 0x50, NONE, 1, 4, 0, NONE, NONE, 0) \
	X(FASTORE, "fastore", 0x51, NONE, 1, 3, 0, NONE, NONE, 0) \
	X(DASTORE, "dastore", 0x52, NONE, 1, 4, 0, NONE, NONE, 0) \
	X(AASTORE, "aastore", 0x53, NONE, 1, 3, 0, NONE, NONE, 0) \
	X(BASTORE, "bastore", 0x54, NONE, 1, 3, 0, NONE, NONE, 0) \
	X(CASTORE, "castore", 0x55, NONE, 1, 3, 0, NONE, NONE, 0) \
	X(SASTORE, "sastore", 0x56, NONE, 1, 3, 0, NONE, NONE, 0) \
	X(POP, "pop", 0x57, NONE, 1, 1, 0, NONE, NONE, 0) \
	X(POP2, "pop2", 0x58, NONE, 1, 2, 0, NONE, NONE, 0) \
	X(DUP, "dup", 0x59, NONE, 1, 1, 2, OTHER, NONE, 0) \
	X(DUP_X1, "dup_x1", 0x5a, NONE, 1, 2, 3, OTHER, NONE, 0) \
	X(DUP_X2, "dup_x2", 0x5b, NONE, 1, 3, 4, OTHER, NONE, 0) \
	X(DUP2, "dup2", 0x5c, NONE, 1, 2, 4, OTHER, NONE, 0) \
	X(DUP2_X1, "dup2_x1", 0x5d, NONE, 1, 3, 5, OTHER, NONE, 0) \
	X(DUP2_X2, "dup2_x2", 0x5e, NONE, 1, 4, 6, OTHER, NONE, 0) \
	X(SWAP, "swap", 0x5f, NONE, 1, 2, 2, OTHER, NONE, 0) \
	X(IADD, "iadd", 0x60, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LADD, "ladd", 0x61, NONE, 1, 4, 2, LONG, NONE, 0) \
	X(FADD, "fadd", 0x62, NONE, 1, 2, 1, FLOAT, NONE, 0) \
	X(DADD, "dadd", 0x63, NONE, 1, 4, 2, DOUBLE, NONE, 0) \
	X(ISUB, "isub", 0x64, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LSUB, "lsub", 0x65, NONE, 1, 4, 2, LONG, NONE, 0) \
	X(FSUB, "fsub", 0x66, NONE, 1, 2, 1, FLOAT, NONE, 0) \
	X(DSUB, "dsub", 0x67, NONE, 1, 4, 2, DOUBLE, NONE, 0) \
	X(IMUL, "imul", 0x68, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LMUL, "lmul", 0x69, NONE, 1, 4, 2, LONG, NONE, 0) \
	X(FMUL, "fmul", 0x6a, NONE, 1, 2, 1, FLOAT, NONE, 0) \
	X(DMUL, "dmul", 0x6b, NONE, 1, 4, 2, DOUBLE, NONE, 0) \
	X(IDIV, "idiv", 0x6c, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LDIV, "ldiv", 0x6d, NONE, 1, 4, 2, LONG, NONE, 0) \
	X(FDIV, "fdiv", 0x6e, NONE, 1, 2, 1, FLOAT, NONE, 0) \
	X(DDIV, "ddiv", 0x6f, NONE, 1, 4, 2, DOUBLE, NONE, 0) \
	X(IREM, "irem", 0x70, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LREM, "lrem", 0x71, NONE, 1, 4, 2, LONG, NONE, 0) \
	X(FREM, "frem", 0x72, NONE, 1, 2, 1, FLOAT, NONE, 0) \
	X(DREM, "drem", 0x73, NONE, 1, 4, 2, DOUBLE, NONE, 0) \
	X(INEG, "ineg", 0x74, NONE, 1, 1, 1, INT, NONE, 0) \
	X(LNEG, "lneg", 0x75, NONE, 1, 2, 2, LONG, NONE, 0) \
	X(FNEG, "fneg", 0x76, NONE, 1, 1, 1, FLOAT, NONE, 0) \
	X(DNEG, "dneg", 0x77, NONE, 1, 2, 2, DOUBLE, NONE, 0) \
	X(ISHL, "ishl", 0x78, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LSHL, "lshl", 0x79, NONE, 1, 3, 2, LONG, NONE, 0) \
	X(ISHR, "ishr", 0x7a, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LSHR, "lshr", 0x7b, NONE, 1, 3, 2, LONG, NONE, 0) \
	X(IUSHR, "iushr", 0x7c, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LUSHR, "lushr", 0x7d, NONE, 1, 3, 2, LONG, NONE, 0) \
	X(IAND, "iand", 0x7e, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LAND, "land", 0x7f, NONE, 1, 4, 2, LONG, NONE, 0) \
	X(IOR, "ior", 0x80, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LOR, "lor", 0x81, NONE, 1, 4, 2, LONG, NONE, 0) \
	X(IXOR, "ixor", 0x82, NONE, 1, 2, 1, INT, NONE, 0) \
	X(LXOR, "lxor", 0x83, NONE, 1, 4, 2, LONG, NONE, 0) \
	X(IINC, "iinc", 0x84, IINC, 3, 0, 0, NONE, NONE, 0) \
	X(I2L, "i2l", 0x85, NONE, 1, 1, 2, LONG, NONE, 0) \
	X(I2F, "i2f", 0x86, NONE, 1, 1, 1, FLOAT, NONE, 0) \
	X(I2D, "i2d", 0x87, NONE, 1, 1, 2, DOUBLE, NONE, 0) \
	X(L2I, "l2i", 0x88, NONE, 1, 2, 1, INT, NONE, 0) \
	X(L2F, "l2f", 0x89, NONE, 1, 2, 1, FLOAT, NONE, 0) \
	X(L2D, "l2d", 0x8a, NONE, 1, 2, 2, DOUBLE, NONE, 0) \
	X(F2I, "f2i", 0x8b, NONE, 1, 1, 1, INT, NONE, 0) \
	X(F2L, "f2l", 0x8c, NONE, 1, 1, 2, LONG, NONE, 0) \
	X(F2D, "f2d", 0x8d, NONE, 1, 1, 2, DOUBLE, NONE, 0) \
	X(D2I, "d2i", 0x8e, NONE, 1, 2, 1, INT, NONE, 0) \
	X(D2L, "d2l", 0x8f, NONE, 1, 2, 2, LONG, NONE, 0) \
	X(D2F, "d2f", 0x90, NONE, 1, 2, 1, FLOAT, NONE, 0) \
	X(I2B, "i2b", 0x91, NONE, 1, 1, 1, INT, NONE, 0) \
	X(I2C, "i2c", 0x92, NONE, 1, 1, 1, INT, NONE, 0) \
	X(I2S, "i2s", 0x93, NONE, 1, 1, 1, INT, NONE, 0) \
	X(LCMP, "lcmp", 0x94, NONE, 1, 4, 1, INT, NONE, 0) \
	X(FCMPL, "fcmpl", 0x95, NONE, 1, 2, 1, INT, NONE, 0) \
	X(FCMPG, "fcmpg", 0x96, NONE, 1, 2, 1, INT, NONE, 0) \
	X(DCMPL, "dcmpl", 0x97, NONE, 1, 4, 1, INT, NONE, 0) \
	X(DCMPG, "dcmpg", 0x98, NONE, 1, 4, 1, INT, NONE, 0) \
	X(IFEQ, "ifeq", 0x99, BRANCH2, 3, 1, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IFNE, "ifne", 0x9a, BRANCH2, 3, 1, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IFLT, "iflt", 0x9b, BRANCH2, 3, 1, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IFGE, "ifge", 0x9c, BRANCH2, 3, 1, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IFGT, "ifgt", 0x9d, BRANCH2, 3, 1, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IFLE, "ifle", 0x9e, BRANCH2, 3, 1, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IF_ICMPEQ, "if_icmpeq", 0x9f, BRANCH2, 3, 2, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IF_ICMPNE, "if_icmpne", 0xa0, BRANCH2, 3, 2, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IF_ICMPLT, "if_icmplt", 0xa1, BRANCH2, 3, 2, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IF_ICMPGE, "if_icmpge", 0xa2, BRANCH2, 3, 2, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IF_ICMPGT, "if_icmpgt", 0xa3, BRANCH2, 3, 2, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IF_ICMPLE, "if_icmple", 0xa4, BRANCH2, 3, 2, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IF_ACMPEQ, "if_acmpeq", 0xa5, BRANCH2, 3, 2, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IF_ACMPNE, "if_acmpne", 0xa6, BRANCH2, 3, 2, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(GOTO, "goto", 0xa7, BRANCH2, 3, 0, 0, NONE, NONE, JINST_OPF_BRANCH | JINST_OPF_UNCONDITIONAL) \
	X(JSR, "jsr", 0xa8, BRANCH2, 3, 0, 1, OTHER, NONE, JINST_OPF_BRANCH | JINST_OPF_SUBROUTINE) \
	X(RET, "ret", 0xa9, LOCAL, 2, 0, 0, OTHER, NONE, JINST_OPF_UNCONDITIONAL | JINST_OPF_SUBROUTINE) \
	X(TABLESWITCH, "tableswitch", 0xaa, TABLESWITCH, 0, 1, 0, NONE, NONE, JINST_OPF_SWITCH | JINST_OPF_UNCONDITIONAL) \
	X(LOOKUPSWITCH, "lookupswitch", 0xab, LOOKUPSWITCH, 0, 1, 0, NONE, NONE, JINST_OPF_SWITCH | JINST_OPF_UNCONDITIONAL) \
	X(IRETURN, "ireturn", 0xac, NONE, 1, 1, 0, NONE, NONE, JINST_OPF_UNCONDITIONAL | JINST_OPF_RETURN) \
	X(LRETURN, "lreturn", 0xad, NONE, 1, 2, 0, NONE, NONE, JINST_OPF_UNCONDITIONAL | JINST_OPF_RETURN) \
	X(FRETURN, "freturn", 0xae, NONE, 1, 1, 0, NONE, NONE, JINST_OPF_UNCONDITIONAL | JINST_OPF_RETURN) \
	X(DRETURN, "dreturn", 0xaf, NONE, 1, 2, 0, NONE, NONE, JINST_OPF_UNCONDITIONAL | JINST_OPF_RETURN) \
	X(ARETURN, "areturn", 0xb0, NONE, 1, 1, 0, NONE, NONE, JINST_OPF_UNCONDITIONAL | JINST_OPF_RETURN) \
	X(RETURN, "return", 0xb1, NONE, 1, 0, 0, NONE, NONE, JINST_OPF_UNCONDITIONAL | JINST_OPF_RETURN) \
	X(GETSTATIC, "getstatic", 0xb2, CP2, 3, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, FIELDREF, JINST_OPF_FIELD) \
	X(PUTSTATIC, "putstatic", 0xb3, CP2, 3, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, FIELDREF, JINST_OPF_FIELD) \
	X(GETFIELD, "getfield", 0xb4, CP2, 3, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, FIELDREF, JINST_OPF_FIELD) \
	X(PUTFIELD, "putfield", 0xb5, CP2, 3, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, FIELDREF, JINST_OPF_FIELD) \
	X(INVOKEVIRTUAL, "invokevirtual", 0xb6, CP2, 3, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, METHODREF, JINST_OPF_INVOKE) \
	X(INVOKESPECIAL, "invokespecial", 0xb7, CP2, 3, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, ANY_METHODREF, JINST_OPF_INVOKE) \
	X(INVOKESTATIC, "invokestatic", 0xb8, CP2, 3, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, ANY_METHODREF, JINST_OPF_INVOKE) \
	X(INVOKEINTERFACE, "invokeinterface", 0xb9, INVOKEINTERFACE, 5, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, INTERFACE_METHODREF, JINST_OPF_INVOKE) \
	X(INVOKEDYNAMIC, "invokedynamic", 0xba, INVOKEDYNAMIC, 5, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, INVOKE_DYNAMIC, JINST_OPF_INVOKE) \
	X(NEW, "new", 0xbb, CP2, 3, 0, 1, OTHER, CLASS, 0) \
	X(NEWARRAY, "newarray", 0xbc, NEWARRAY, 2, 1, 1, OTHER, NONE, 0) \
	X(ANEWARRAY, "anewarray", 0xbd, CP2, 3, 1, 1, OTHER, CLASS, 0) \
	X(ARRAYLENGTH, "arraylength", 0xbe, NONE, 1, 1, 1, INT, NONE, 0) \
	X(ATHROW, "athrow", 0xbf, NONE, 1, 1, 0, NONE, NONE, JINST_OPF_UNCONDITIONAL | JINST_OPF_THROW) \
	X(CHECKCAST, "checkcast", 0xc0, CP2, 3, 1, 1, OTHER, CLASS, 0) \
	X(INSTANCEOF, "instanceof", 0xc1, CP2, 3, 1, 1, INT, CLASS, 0) \
	X(MONITORENTER, "monitorenter", 0xc2, NONE, 1, 1, 0, NONE, NONE, 0) \
	X(MONITOREXIT, "monitorexit", 0xc3, NONE, 1, 1, 0, NONE, NONE, 0) \
	X(WIDE, "wide", 0xc4, WIDE, 0, 0, 0, OTHER, NONE, 0) \
	X(MULTIANEWARRAY, "multianewarray", 0xc5, MULTIANEWARRAY, 4, JINST_OP_VARIES, JINST_OP_VARIES, OTHER, CLASS, 0) \
	X(IFNULL, "ifnull", 0xc6, BRANCH2, 3, 1, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(IFNONNULL, "ifnonnull", 0xc7, BRANCH2, 3, 1, 0, NONE, NONE, JINST_OPF_BRANCH) \
	X(GOTO_W, "goto_w", 0xc8, BRANCH4, 5, 0, 0, NONE, NONE, JINST_OPF_BRANCH | JINST_OPF_UNCONDITIONAL) \
	X(JSR_W, "jsr_w", 0xc9, BRANCH4, 5, 0, 1, OTHER, NONE, JINST_OPF_BRANCH | JINST_OPF_SUBROUTINE)

/* The opcodes by name: JINST_OP_NOP = 0x00 ... JINST_OP_JSR_W = 0xc9. */
enum jinst_opcode {
#define JINST_OPCODE_ENUM(name, mnemonic, code, ...) JINST_OP_##name = code,
	JINST_OPCODES(JINST_OPCODE_ENUM)
#undef JINST_OPCODE_ENUM
};

/* pops/pushes of an opcode whose effect the pool or an operand decides. */
#define JINST_OP_VARIES 0xff

/* What an opcode pushes, when the opcode alone says (JVMS 4.10.1.2 types). */
enum jinst_op_result {
	JINST_OPR_NONE,   /* pushes nothing */
	JINST_OPR_INT,
	JINST_OPR_FLOAT,
	JINST_OPR_LONG,   /* two slots: the long, then top */
	JINST_OPR_DOUBLE, /* the same */
	JINST_OPR_NULL,
	JINST_OPR_OTHER   /* the pool, a local or the stack decides */
};

/* The constant-pool entries an opcode's index may name (JVMS 6.5). */
enum jinst_op_cp {
	JINST_OPCP_NONE,                /* no index */
	JINST_OPCP_LOADABLE,            /* ldc, ldc_w: a loadable constant of one slot */
	JINST_OPCP_LOADABLE2,           /* ldc2_w: Long, Double or Dynamic */
	JINST_OPCP_FIELDREF,
	JINST_OPCP_METHODREF,           /* invokevirtual */
	JINST_OPCP_ANY_METHODREF,       /* invokespecial, invokestatic: Methodref or InterfaceMethodref */
	JINST_OPCP_INTERFACE_METHODREF, /* invokeinterface */
	JINST_OPCP_INVOKE_DYNAMIC,
	JINST_OPCP_CLASS
};

/* Flags of an opcode. A wide instruction is never one of the branches,
 * switches or returns (wide takes loads, stores, iinc and ret), so its
 * opcode byte says enough. */
enum {
	JINST_OPF_BRANCH = 1 << 0,        /* a BRANCH2 or BRANCH4 operand: if<cond>, goto, jsr, ifnull, ... */
	JINST_OPF_SWITCH = 1 << 1,        /* tableswitch, lookupswitch */
	JINST_OPF_UNCONDITIONAL = 1 << 2, /* never falls through: goto, goto_w, ret, switches, returns, athrow */
	JINST_OPF_SUBROUTINE = 1 << 3,    /* jsr, ret, jsr_w */
	JINST_OPF_RETURN = 1 << 4,        /* ireturn ... return */
	JINST_OPF_THROW = 1 << 5,         /* athrow */
	JINST_OPF_INVOKE = 1 << 6,        /* invokevirtual ... invokedynamic */
	JINST_OPF_FIELD = 1 << 7,         /* getstatic, putstatic, getfield, putfield */
	JINST_OPF_LOAD = 1 << 8,          /* a load of a local: <t>load, <t>load_<n> */
	JINST_OPF_STORE = 1 << 9          /* a store to a local: <t>store, <t>store_<n> */
};

/* An opcode's row of the table, by opcode byte. Bytes that are no opcode
 * (0xca-0xff) have name NULL, kind JINST_OPND_INVALID and length 0. */
typedef struct jinst_opcode_info {
	const char *name;
	uint8_t kind;   /* enum jinst_operand_kind */
	uint8_t length;
	uint8_t pops, pushes;
	uint8_t result; /* enum jinst_op_result */
	uint8_t cp;     /* enum jinst_op_cp */
	uint16_t flags; /* JINST_OPF_* */
} jinst_opcode_info;

extern const jinst_opcode_info jinst_opcodes[256];

#endif
