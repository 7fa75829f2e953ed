/*
 * Frame inference (the "all" rung of the frame-mode ladder): the types at
 * every point of a method, computed by data flow, for methods whose
 * StackMapTable is missing or must be rebuilt.
 */
#ifndef JINST_INFER_H
#define JINST_INFER_H

#include "jinst/classfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Answers questions about classes by internal name, from class bytes (jars,
 * folders, the JDK image), never by loading a class into a VM.
 * lookup: 0 with *super_name (NULL for java/lang/Object) and *is_interface,
 * or JINST_EHIERARCHY when the class is unknown. Returned strings must live
 * as long as the resolver. */
typedef struct jinst_hierarchy {
	int (*lookup)(void *ctx, const char *name, const char **super_name, bool *is_interface);
	void *ctx;
} jinst_hierarchy;

/* Replaces the code no path from the method's entry reaches (through
 * branches, switches, fall-through and the handlers of reached
 * instructions) by nop ... nop athrow, one run at a time, and cuts those
 * runs out of the exception table (splitting an entry around a run, dropping
 * one left empty). The code keeps its length, so no offset moves. A run
 * already in that form and outside every range is left alone. *patched
 * is the number of runs; when it is not 0, code->code and code->exceptions
 * point to new arena copies and max_stack is at least 1: the caller marks
 * the Code attribute modified and recomputes the frames. Other attributes
 * that point into a dead run (a type annotation on an instruction there)
 * are left as they are. */
int jinst_code_patch_unreachable(jinst_class *cls, jinst_code *code, uint32_t *patched, jinst_diag *diag);

/* Rewrites code that uses jsr/ret without them (classfile/jsr.c): every jsr
 * gets its own copy of its subroutine, appended after the body, entered by
 * aconst_null; goto (the null takes the return address's place) and left by
 * a goto where ret was; exception entries are repeated over the copies;
 * code no path reaches is left out. *copies is the number of subroutine copies (0: no jsr, code untouched).
 * Otherwise code->code, code_length, exceptions and attrs are new arena
 * copies: the LineNumberTable follows the copies (its attribute is marked
 * modified), the local variable tables are dropped, and the caller marks the
 * Code attribute modified and recomputes the frames. JINST_ETOOLARGE when
 * the code outgrows 65535 bytes or a 16-bit branch no longer reaches (no
 * branch is widened); JINST_EUNSUPPORTED for recursion, a ret that leaves
 * several subroutines at once, and more than 4096 copies (or 4M instructions
 * times copies). */
int jinst_code_inline_subroutines(jinst_class *cls, jinst_code *code, uint32_t *copies, jinst_diag *diag);

/* Computes the frames the verifier needs for a method's code: at every
 * branch target and exception handler and after every unconditional
 * transfer, as full frames (arena-allocated). Object types carry names
 * (value 0); the encoder finds or adds their Class constants.
 * Code no path reaches must be in the form jinst_code_patch_unreachable gives
 * it (nop ... athrow outside every exception range); it gets a frame of no
 * locals and a Throwable on the stack. JINST_EUNSUPPORTED for jsr/ret and for
 * other unreachable code;
 * JINST_EHIERARCHY when a merge needs a class the hierarchy does not know. */
int jinst_frames_infer(jinst_class *cls, const jinst_member *method, const jinst_code *code,
                       const jinst_hierarchy *hierarchy, jinst_full_frame **frames, uint32_t *count,
                       jinst_diag *diag);

/* Recomputes the method's StackMapTable from its code: inlines jsr/ret
 * subroutines (jinst_code_inline_subroutines), patches unreachable code
 * (jinst_code_patch_unreachable), infers the frames, compresses them and
 * installs them (jinst_code_set_stack_map). When the code itself had to be
 * rewritten, the Code's model takes the new code and is marked modified; on
 * any failure the method is left as it was. The frames of class files older
 * than 50 are not needed by the verifier; callers decide whether to ask for
 * them. */
int jinst_frames_recompute(jinst_class *cls, jinst_member *method, const jinst_hierarchy *hierarchy,
                           jinst_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
