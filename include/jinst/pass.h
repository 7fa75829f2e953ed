/*
 * Writing an instrumentation pass: what a feature (tracing, coverage, a
 * pass of your own) does to a class, run by the instrumenter
 * (include/jinst/instrument.h) with the other passes in one parse and one
 * write. Library jinst_instrument.
 *
 * How a class goes through the passes. The instrumenter parses the class,
 * checks that it is selected and not instrumented already (its marker, see
 * below), then, for each pass in the order they were added:
 *
 *   begin(pass, class)            may decline the class (JINST_PASS_SKIP:
 *                                 nothing to do; jinst_pass_decline: it
 *                                 cannot), record per-class metadata, look
 *                                 at methods
 *   method(pass, class, method)   once per method with code (not abstract,
 *                                 not native), in the class's order
 *   end(pass, class, written)     the class was written with the passes'
 *                                 changes (written) or left as it was
 *
 * with all passes' begin before the first method call and every pass's
 * method calls for one method together (pass 1 then pass 2 on method 1,
 * then on method 2, ...), so a later pass sees an earlier one's code.
 * A begin may add methods to the class (jinst_class_add_method; the
 * natives pass does, include/jinst/instrument.h): the instrumenter then
 * lists the methods again, so the passes after it see and instrument the
 * new ones (a pass before it sees them in its method calls too).
 *
 * A method edits its method's code through the code patcher
 * (include/jinst/patch.h) or the editor (include/jinst/edit.h). It returns
 * 0 when it changed the method, JINST_PASS_SKIP when it left it alone on
 * purpose, or a negative JINST_E* code when it could not instrument it: the
 * method must then be exactly as it was before the call (the patcher and
 * the editor guarantee that when they fail), the instrumenter reports it
 * (jinst_instrument_options.left_alone) and the other passes and methods go
 * on. A negative return from begin leaves the whole class alone. A begin
 * that cannot do its work on a class it would instrument (code it cannot
 * follow, say) declines it with jinst_pass_decline: the class goes on
 * through the other passes, and the instrumenter reports the loss as for a
 * method (the note, jinst_instrument_options.declined, the counts).
 *
 * Hooks. A pass that calls the runtime takes the Methodref of a hook from
 * jinst_pass_hook_ref (the runtime's table, include/jinst/instrument.h),
 * or of any static method from jinst_pass_methodref: the constant-pool
 * entries are added the first time a pass asks, so a class gets only the
 * references its passes use. Constants never move (DESIGN.md, invariant 3).
 *
 * Ids. jinst_pass_method_id gives a method the small integer the hooks take
 * (the instrumenter's method table, keyed by class, name and descriptor, so
 * a class instrumented again gets the same ids) and records its metadata.
 *
 * The marker. Every class the instrumenter writes carries a class attribute
 * "JinstInstrumented" with the names of the passes that changed it and the
 * identity of the original class (the 64-bit xxhash of its bytes as first
 * seen, XXH64 with seed 0). A class that has it, or that already refers to
 * the runtime's classes, is never instrumented again: not by the agent, not
 * offline, not by both one after the other.
 *
 * Threads: a pass's functions are called from every thread that
 * instruments at once, each with its own class; what a pass keeps across
 * classes (its state) it must guard itself.
 */
#ifndef JINST_PASS_H
#define JINST_PASS_H

#include "jinst/classfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pass's "not this one" (positive, so never mistaken for an error). */
#define JINST_PASS_SKIP 1

/* The class being instrumented and the method being instrumented, as the
 * instrumenter hands them to a pass; valid during the call. */
typedef struct jinst_pass_class jinst_pass_class;
typedef struct jinst_pass_method jinst_pass_method;

typedef struct jinst_pass {
	uint32_t version;  /* JINST_PASS_VERSION */
	/* Short and stable ([a-z0-9_-]): written into the marker of every class
	 * the pass changes, and shown in messages. */
	const char *name;
	void *state;       /* the pass's own, handed to every call */
	/* Each may be NULL (begin: take the class; end: nothing to do). */
	int (*begin)(void *state, jinst_pass_class *cls, jinst_diag *diag);
	int (*method)(void *state, jinst_pass_class *cls, jinst_pass_method *m, jinst_diag *diag);
	void (*end)(void *state, jinst_pass_class *cls, bool written);
	/* Called by jinst_instrument_free for the passes it was given. */
	void (*free)(void *state);
} jinst_pass;
#define JINST_PASS_VERSION 1

/* ---- the class ---- */

jinst_class *jinst_pass_class_model(jinst_pass_class *cls);
/* Internal name ("com/x/Foo"), NUL-terminated modified UTF-8. */
const char *jinst_pass_class_name(const jinst_pass_class *cls);
/* SourceFile, or NULL. */
const char *jinst_pass_class_source(const jinst_pass_class *cls);
/* The identity of the original class (see above). */
uint64_t jinst_pass_class_identity(const jinst_pass_class *cls);
/* The flags of jinst_instrument_class (JINST_INSTRUMENT_RETRANSFORM...). */
uint32_t jinst_pass_class_flags(const jinst_pass_class *cls);
/* The methods with code, in the class's order (what method() is called for). */
uint32_t jinst_pass_class_method_count(const jinst_pass_class *cls);
jinst_pass_method *jinst_pass_class_method(jinst_pass_class *cls, uint32_t i);

/* The Methodref of hook (enum jinst_hook_id) in the class's pool, added on
 * the first call for this class. */
int jinst_pass_hook_ref(jinst_pass_class *cls, int hook, uint16_t *index);
/* The Methodref of any method, added (or found) in the class's pool. */
int jinst_pass_methodref(jinst_pass_class *cls, const char *owner, const char *name, const char *descriptor,
                         uint16_t *index);

/* ---- the method ---- */

jinst_member *jinst_pass_method_member(jinst_pass_method *m);
/* NUL-terminated, modified UTF-8. */
const char *jinst_pass_method_name(const jinst_pass_method *m);
const char *jinst_pass_method_descriptor(const jinst_pass_method *m);
bool jinst_pass_method_is_init(const jinst_pass_method *m); /* "<init>" */
/* Whether the method is the natives pass's wrapper of a native (its code
 * loads the arguments, calls the native JINST_NATIVE_PREFIX name and
 * returns; instrument.h): a pass may hook the native's calls there. */
bool jinst_pass_method_is_native_wrapper(const jinst_pass_method *m);
/* The method's Code, decoded, as it stands now (after the passes before
 * this one); NULL when it does not decode. */
const jinst_code *jinst_pass_method_code(jinst_pass_method *m);
/* The lowest line of its LineNumberTable, 0 without one (of the original). */
uint32_t jinst_pass_method_first_line(const jinst_pass_method *m);

enum {
	/* Its calls are timed (jinst_method_info.timed). */
	JINST_METHOD_TIMED = 0x1
};
/* The method's id in the instrumenter's table (assigned on the first call
 * for its class, name and descriptor; the same id when the class is
 * instrumented again), with flags (JINST_METHOD_*) recorded for it. */
int jinst_pass_method_id(jinst_pass_method *m, uint32_t flags, uint32_t *id);

/* Formats a failure into diag (which may be NULL) and returns code: a
 * pass's one-line way to say why. */
int jinst_pass_fail(jinst_diag *diag, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Formats why a pass cannot instrument the class into diag, code the
 * negative JINST_E* reason, and returns JINST_PASS_SKIP: begin's way to
 * decline a class it would instrument, which the instrumenter reports
 * (where JINST_PASS_SKIP alone is "nothing to do here", said to no one). */
int jinst_pass_decline(jinst_diag *diag, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif
