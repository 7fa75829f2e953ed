/*
 * Internals of libjinst_instrument shared between its modules.
 */
#ifndef JINST_INSTRUMENT_INTERNAL_H
#define JINST_INSTRUMENT_INTERNAL_H

#include "jinst/edit.h"
#include "jinst/instrument.h"

/* Fills diag (which may be NULL) and returns code. */
int jinst_ins_fail(jinst_diag *diag, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The trace pass on one method with code (trace.c): entry hook, exit hook
 * before every return, catch-all calling the exceptional-exit hook; with
 * entry_only (JINST_PASS_COUNT, or a leaf) the counting hook alone. hook_refs: the
 * Methodref of each hook (enum jinst_hook_id) in cls's pool. On failure the
 * method is left as it was. */
int jinst_trace_method(jinst_class *cls, jinst_member *m, uint32_t id, const uint16_t *hook_refs, bool entry_only,
                       jinst_diag *diag);

/* Whether the method, with this code, is a leaf (jinst_method_info.timed
 * says what that is); false when its code does not decode. */
bool jinst_trace_is_leaf(jinst_class *cls, const jinst_member *m, const jinst_code *code);

#endif
