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

/* Computes the frames the verifier needs for a method's code: at every
 * branch target and exception handler and after every unconditional
 * transfer, as full frames (arena-allocated). Object types carry names
 * (value 0); the encoder finds or adds their Class constants.
 * JINST_EUNSUPPORTED for jsr/ret and for unreachable code (not yet handled);
 * JINST_EHIERARCHY when a merge needs a class the hierarchy does not know. */
int jinst_frames_infer(jinst_class *cls, const jinst_member *method, const jinst_code *code,
                       const jinst_hierarchy *hierarchy, jinst_full_frame **frames, uint32_t *count,
                       jinst_diag *diag);

/* Recomputes the method's StackMapTable from its code: infers the frames,
 * compresses them and installs them (jinst_code_set_stack_map). The frames
 * of class files older than 50 are not needed by the verifier; callers
 * decide whether to ask for them. */
int jinst_frames_recompute(jinst_class *cls, jinst_member *method, const jinst_hierarchy *hierarchy,
                           jinst_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
