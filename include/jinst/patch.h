/*
 * The code patcher: the fast path for the commonest edit, stack-neutral
 * straight-line code inserted at original instruction positions (hook calls
 * at method entry and before returns), plus at most one exception handler
 * appended after the code. It streams over the method's Code attribute
 * without building instruction nodes or expanding frames: unchanged runs
 * of bytes are copied, and only what moves is re-encoded (branch offsets,
 * switch padding, the exception table, LineNumberTable,
 * LocalVariable(Type)Table and StackMapTable offsets, uninitialized(offset)
 * types). See classfile/patch.c for how.
 *
 * Semantics are the code editor's (include/jinst/edit.h): JINST_BEFORE_OUTSIDE
 * code runs only when control falls into the position (branches, handlers,
 * frames and ranges starting there keep naming the original instruction),
 * JINST_BEFORE_INSIDE code is reached by everything that reached the
 * instruction (its frame moves onto the inserted code). At one position
 * outside code precedes inside code whatever the order of the calls.
 *
 * Declines. jinst_patch_open, _insert and _commit return JINST_EUNSUPPORTED
 * when the method is outside the fast path: the old (45.0-45.2) Code
 * layout, a Code attribute other than LineNumberTable, LocalVariableTable,
 * LocalVariableTypeTable and StackMapTable (type annotations in code name
 * offsets this module does not remap), a StackMapTable before version 50,
 * a Code model already edited through the model, a 16-bit branch whose
 * new offset would overflow, code inserted outside an instruction that
 * follows an unconditional transfer (it would need a frame of its own), or
 * (version 50 and later) a branch target, handler or instruction after an
 * unconditional transfer without a frame in the StackMapTable (the
 * patcher keeps frames, it derives none). The caller then uses the code
 * editor, which handles all of these (it widens branches, derives frames).
 * A method of version 50 or later that needs frames and has no
 * StackMapTable at all (the bytes a VM rebuilds for a class it does not
 * verify, see classfile/patch.c) is patched and gets none, nor does the
 * appended handler, as the editor does (jinst_edit_writes_frames).
 * The patcher does not check stack depths (the editor refuses code whose
 * depths do not balance); it trusts the method's max_stack. Malformed code
 * gives JINST_EMALFORMED, a JVMS 4.11 limit JINST_ETOOLARGE. Any error
 * leaves the method exactly as it was.
 *
 * max_stack grows conservatively: code inserted outside offset 0 runs on
 * an empty stack and needs its own depth; anywhere else it needs the old
 * max_stack plus its depth. The editor computes the exact figure, so the
 * two may differ there (ours is never smaller, given a right max_stack).
 *
 * Memory: everything comes from the class's arena. After a successful
 * commit the method's Code attribute holds the new bytes (decode it again
 * for a model: a model decoded before the commit describes the old code).
 * One patcher per method at a time.
 */
#ifndef JINST_PATCH_H
#define JINST_PATCH_H

#include "jinst/classfile.h"
#include "jinst/edit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jinst_patch jinst_patch;

/* Reads method's Code in one length walk. JINST_EINVAL without Code. */
int jinst_patch_open(jinst_patch **out, jinst_class *cls, jinst_member *method, jinst_diag *diag);

/* The original instructions, in code order: i from 0 to count-1. The
 * opcode of a wide instruction is 0xc4 (wide). */
uint32_t jinst_patch_count(const jinst_patch *p);
uint32_t jinst_patch_offset(const jinst_patch *p, uint32_t i);
uint8_t jinst_patch_opcode(const jinst_patch *p, uint32_t i);
/* All of them at once: offsets[0..count) ascending (code is at most
 * 65,535 bytes). Borrowed. */
const uint16_t *jinst_patch_offsets(const jinst_patch *p, uint32_t *count);
/* The original code bytes. */
const uint8_t *jinst_patch_code(const jinst_patch *p, uint32_t *length);

/* Inserts code[0..len) before the original instruction at offset (where is
 * BEFORE_INSIDE or BEFORE_OUTSIDE; AFTER is BEFORE_OUTSIDE of the next
 * instruction). The code must be straight-line and leave the stack as it
 * found it: no branch, switch, jsr/ret, return or athrow; depth is the most
 * words it pushes. It is copied. Successive insertions on one side of one
 * position keep their order. */
int jinst_patch_insert(jinst_patch *p, uint32_t offset, enum jinst_where where, const uint8_t *code, uint32_t len,
                       uint16_t depth);

/* Appends a handler after the last instruction: code[0..len) (straight
 * line, ending with athrow; depth: the most words it pushes on top of the
 * exception) entered with locals [] and the exception on the stack, its
 * frame naming catch_type (0: any, java/lang/Throwable). Once per patch. */
int jinst_patch_set_handler(jinst_patch *p, const uint8_t *code, uint32_t len, uint16_t depth, uint16_t catch_type);
/* An exception-table entry [start, end) of original positions (end may be
 * the code length) to the appended handler, after the method's own
 * entries, in call order. A range starting at a position does not cover
 * code inserted outside it, as in the editor. */
int jinst_patch_add_range(jinst_patch *p, uint32_t start, uint32_t end);

/* Builds the new Code attribute and installs it (see above). A patch
 * without insertions commits nothing. The patch is spent afterwards. */
int jinst_patch_commit(jinst_patch *p, jinst_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
