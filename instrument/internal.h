/*
 * Internals of libjinst_instrument shared between its modules:
 *
 *   instrument.c  the instrumenter's life, its options and class filters
 *   methods.c     the method table (ids and their metadata)
 *   driver.c      one class through every pass: parse, select, passes, marker, write, rules
 *   pass.c        what a pass sees of the class and the method (include/jinst/pass.h)
 *   marker.c      the identity and the JinstInstrumented attribute
 *   trace.c       the trace pass and the ranges of constructors it covers
 *   coverage.c    the coverage pass: probe arrays at entry, probes at the placement's sites
 *   probe_classes.c  the coverage pass's class ids
 *   hooks.c       the runtime's hook table
 *   monitor.c, monitor_sites.c  the monitor pass and its lock sites (monitor_internal.h)
 *   rules.c       the retransformation rules
 *   natives.c     the natives pass: native methods wrapped (SetNativeMethodPrefix)
 *   flow.c        the marks of uninitialized references (trace: `this` in constructors; alloc: each `new`)
 *   idtable.c     entries by id, found by key: the tables of methods, classes and sites
 *   emit.c        what the passes insert: instructions built, encoded for the patcher, the editor's frame
 */
#ifndef JINST_INSTRUMENT_INTERNAL_H
#define JINST_INSTRUMENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "jinst/edit.h"
#include "jinst/instrument.h"

/* idtable.c: entries by id (0, 1, ... in the order added), found by key
 * through an index of the keys' hashes. No lock: the owner's. */
typedef struct jinst_idslot {
	uint32_t id1;  /* id + 1, 0 when free */
	uint32_t hash; /* the low bits of the key's hash */
} jinst_idslot;
typedef struct jinst_idtable {
	void *entries; /* count entries of size bytes */
	size_t size;
	uint32_t count, cap;
	jinst_idslot *slots;
	uint32_t nslots, keyed; /* 0 or a power of two, at least twice keyed */
} jinst_idtable;
/* Whether entry holds key (one the owner passed to jinst_idtable_find). */
typedef bool (*jinst_idtable_same)(const void *entry, const void *key);
void jinst_idtable_init(jinst_idtable *t, size_t entry_size);
/* Frees the arrays (what the entries own is the owner's to free). */
void jinst_idtable_free(jinst_idtable *t);
static inline void *jinst_idtable_at(const jinst_idtable *t, uint32_t id)
{
	return (char *)t->entries + (size_t)id * t->size;
}
/* 0 with *id of the entry of this hash that same() takes for key, or
 * JINST_ENOTFOUND. */
int jinst_idtable_find(const jinst_idtable *t, uint32_t *id, uint64_t hash, jinst_idtable_same same,
                       const void *key);
/* Room for one more entry: *entry, the next id's, zeroed for the owner to
 * fill; nothing is added yet. JINST_ENOMEM (also past INT32_MAX ids). */
int jinst_idtable_reserve(jinst_idtable *t, void **entry);
/* Adds the entry reserve handed out: its id, found under hash from now on
 * unless keyed is false (an id without a key). */
uint32_t jinst_idtable_add(jinst_idtable *t, uint64_t hash, bool keyed);

/* One method in the table: its info's strings in one block starting at
 * info.class_name (NULL: an id reserved ahead, without a key). */
typedef struct jinst_method_entry {
	jinst_method_info info;
	size_t key_len; /* class, name and descriptor with their NULs */
} jinst_method_entry;

typedef struct jinst_method_table {
	pthread_mutex_t lock;       /* guards all below but published */
	jinst_idtable t;            /* of jinst_method_entry */
	_Atomic uint32_t published; /* count, readable without the lock */
} jinst_method_table;

/* The coverage pass's classes (probe_classes.c): entries by id, found by
 * (identity, name). */
typedef struct jinst_probe_classes {
	pthread_mutex_t lock;
	jinst_idtable t;                 /* of jinst_probe_class_info, class_name malloc'ed */
	_Atomic uint32_t published;
	uint32_t base;                   /* the id of entries[0] (jinst_instrument_probe_class_start) */
	uint32_t flat_next, flat_end;    /* the flat array's free range (jinst_instrument_probe_flat_range) */
} jinst_probe_classes;

struct jinst_instrument {
	char **include, **exclude;  /* NULL-terminated copies, or NULL */
	void (*left_alone)(void *ctx, const char *class_name, const char *method, const char *descriptor,
	                   const jinst_diag *why);
	void *left_alone_ctx;
	void (*declined)(void *ctx, const char *class_name, const char *pass, const jinst_diag *why);
	char *hooks_class;          /* or NULL: the table's owners */
	char *run_class;            /* or NULL: method ids are constants (options.run_class) */

	jinst_pass *passes;
	uint32_t pass_count;

	jinst_method_table methods;
	jinst_probe_classes probe_classes;

	_Atomic uint64_t classes_seen, classes_instrumented, classes_left_alone;
	_Atomic uint64_t methods_instrumented, methods_left_alone, classes_declined;
};

struct jinst_pass_method {
	jinst_pass_class *cls;
	jinst_member *m;
	const char *name, *descriptor; /* NUL-terminated copies in the arena */
	size_t name_len, desc_len;
	uint32_t first_line;
	bool changed;                  /* some pass changed it */
	bool native_wrapper;           /* the natives pass's wrapper of a native (natives.c) */
};

struct jinst_pass_class {
	jinst_instrument *ins;
	jinst_class *c;
	const char *name;              /* arena copy */
	size_t name_len;
	const char *source;            /* arena copy, or NULL */
	uint64_t identity;
	uint32_t flags;
	jinst_pass_method *methods;
	uint32_t method_count;
	uint16_t hook_refs[JINST_HOOK_COUNT]; /* 0 until asked for */
	uint32_t changed_by;           /* bit i: pass i changed a method (or the class's methods: natives) */
	uint16_t natives;              /* its native methods */
	uint32_t losses;               /* methods left alone and passes that declined it, noted */
};

/* Fills diag (which may be NULL) and returns code. */
#define jinst_ins_fail jinst_pass_fail
void jinst_ins_diag_clear(jinst_diag *diag);
/* A NUL-terminated arena copy of a constant-pool string. */
const char *jinst_ins_cstr(jinst_arena *A, const uint8_t *s, uint16_t len, size_t *out_len);

/* methods.c */
int jinst_methods_init(jinst_method_table *t);
void jinst_methods_free(jinst_method_table *t);
int jinst_methods_assign(jinst_method_table *t, const jinst_pass_class *cls, const jinst_pass_method *m,
                         uint32_t flags, uint32_t *id, jinst_diag *diag);

/* driver.c */
int jinst_ins_run(jinst_instrument *ins, jinst_arena *arena, const uint8_t *bytes, size_t len,
                  const uint64_t *identity, uint32_t flags, uint8_t **out, size_t *out_len, jinst_diag *diag,
                  uint32_t *done);

/* marker.c */
/* Whether the class is instrumented already (marker or references to the
 * runtime), with *why saying how. */
bool jinst_marker_found(jinst_class *c, const char *hooks_class, const char **why);
/* Adds the marker naming the passes whose bits are set in changed_by. */
int jinst_marker_add(jinst_pass_class *cls, jinst_diag *diag);

/* trace.c: the built-in trace pass for these JINST_PASS_* bits. */
void jinst_trace_pass(jinst_pass *out, uint32_t passes);

/* emit.c: what the passes insert, built and encoded. */
/* An instruction: opcode and its one operand (0 for none). Inline: the
 * passes build one per instruction they insert (a call per one was 1% of
 * `jinst instrument --coverage`). */
static inline jinst_insn jinst_ins_op(uint8_t opcode, int32_t operand)
{
	jinst_insn in;
	memset(&in, 0, sizeof(in));
	in.opcode = opcode;
	in.operand = operand;
	return in;
}
/* Pushes the int constant v: iconst_<n>, bipush, sipush, or ldc of an
 * Integer added to the pool. */
int jinst_ins_push_int(jinst_class *c, uint32_t v, jinst_insn *in);
/* The bytes of seq[0..n) for the code patcher, 3 at most per instruction;
 * their length. Takes instructions without an operand, bipush, sipush,
 * ldc and ldc_w (either: ldc when the index fits in a byte, else ldc_w)
 * and those of a two-byte pool index (getstatic, invokestatic...). */
uint32_t jinst_ins_encode(const jinst_insn *seq, uint32_t n, uint8_t *b);
/* A pass's insertions into m through the code editor: fn(ed, ctx) on the
 * open editor (no frames derived before version 50), then the commit; a
 * failure of fn is reported as "WHAT: error". The method is unchanged on
 * error. */
typedef int (*jinst_ins_edit_fn)(jinst_edit *ed, const void *ctx);
int jinst_ins_edit(jinst_class *c, jinst_member *m, jinst_ins_edit_fn fn, const void *ctx, const char *what,
                   jinst_diag *diag);
/* The same, given the method's instructions decoded already from the code
 * bytes at code (jinst_edit_options.decoded), and the editor's flags
 * (JINST_EDIT_BALANCED for code that keeps the stack balanced). */
int jinst_ins_edit_decoded(jinst_class *c, jinst_member *m, const jinst_insn *insns, uint32_t count,
                           const uint8_t *code, uint32_t flags, jinst_ins_edit_fn fn, const void *ctx,
                           const char *what, jinst_diag *diag);

/* flow.c: the marks of uninitialized references, per stack slot and
 * local (0: none), from the code's entry and every handler. */
typedef struct jinst_flow_state {
	uint16_t sp;
	uint32_t *stack, *locals;
} jinst_flow_state;
#define JINST_FLOW_THIS UINT32_MAX /* uninitializedThis, in local 0 at a constructor's entry */
enum { JINST_FLOW_MARKED = 1, JINST_FLOW_UNMARKED = 2 }; /* seen: reached with marks, without */
typedef struct jinst_flow jinst_flow;
struct jinst_flow_pending;
struct jinst_flow {
	/* the caller's */
	jinst_class *c;
	jinst_arena *A;
	const jinst_code *code;
	const jinst_insn *in; /* the code decoded */
	uint32_t n;
	uint16_t max_stack, max_locals;
	bool mark_news;       /* a `new` at index i pushes the mark i + 1 (else 0) */
	/* At an invokespecial <init> whose receiver, stack[receiver] of s, is
	 * marked (before its arguments are popped); *unmarked: follow no
	 * marks on from here. */
	int (*on_init)(jinst_flow *f, jinst_flow_state *s, uint32_t idx, uint16_t receiver, bool *unmarked);
	void *ctx;
	/* jinst_flow_run's */
	int32_t *at;          /* offset -> instruction index, -1 */
	uint8_t *seen;        /* per instruction: JINST_FLOW_MARKED | JINST_FLOW_UNMARKED */
	struct jinst_flow_pending *wl;
	uint32_t nwl, capwl;
};
/* Walks the code, local 0 marked this_mark at entry; what is not reached
 * before an error keeps seen 0. JINST_EUNSUPPORTED at jsr/ret with marks,
 * JINST_EMALFORMED for code the flow cannot follow. */
int jinst_flow_run(jinst_flow *f, uint32_t this_mark);
/* The marks of one reference become plain values (it is initialized). */
void jinst_flow_initialized(jinst_flow *f, jinst_flow_state *s, uint32_t mark);

/* coverage.c: the built-in coverage pass for these JINST_PASS_* bits. */
void jinst_coverage_pass(jinst_pass *out, uint32_t passes);
/* How a method asks for its class's probe array: hook (a Methodref) with
 * (class id, probe count), or, when identity is not 0, with (the Long
 * constant identity, probe count, the String constant name); hit: the
 * one-probe hook (by class id only). */
typedef struct jinst_coverage_entry {
	uint32_t class_id, probe_count;
	uint16_t hook, hit, identity, name;
	uint32_t flat;   /* the class's first index in the flat array, or JINST_NO_FLAT */
	uint16_t field;  /* the flat array's Fieldref, once a method needs it */
} jinst_coverage_entry;
/* One method's probes (the plan's sites of method m) through the code
 * editor, the array asked for as entry says, or for a method of one probe
 * by class id (jinst_coverage_one_probe) that probe set by entry's hook
 * (JINST_HOOK_HIT*); the method unchanged on error. */
struct jinst_coverage_method;
bool jinst_coverage_one_probe(const struct jinst_coverage_method *pm);
int jinst_coverage_insert(jinst_class *c, jinst_member *m, const struct jinst_coverage_method *pm,
                          const jinst_coverage_entry *entry, bool counts, jinst_diag *diag);
/* natives.c: the natives pass with these options (copied). */
int jinst_natives_pass(jinst_pass *out, const jinst_natives_options *opts);

/* probe_classes.c */
int jinst_probe_classes_init(jinst_probe_classes *t);
void jinst_probe_classes_free(jinst_probe_classes *t);
/* The id of (identity, name), assigned with probes on first request, and
 * its first index in the flat array (JINST_NO_FLAT: none; one is taken on
 * first request only when flat_ok); JINST_EINVAL when that class had
 * another probe count, JINST_ETOOLARGE past the runtime's 2^24 ids. */
int jinst_probe_classes_assign(jinst_probe_classes *t, uint64_t identity, const char *name, uint32_t probes,
                               bool flat_ok, uint32_t *id, uint32_t *flat);

/* The allocation pass's site table (alloc_sites.c; alloc.h has the rest). */
typedef struct jinst_alloc_sites jinst_alloc_sites;
int jinst_alloc_sites_new(jinst_alloc_sites **out);
void jinst_alloc_sites_free(jinst_alloc_sites *sites);

/* A call whose normal return is an object a native made (alloc_calls.c):
 * hook -1 when the call is none of those. */
typedef struct jinst_alloc_call {
	int hook;          /* JINST_HOOK_ALLOC_ANY, _ARRAYS or _CLONE */
	const char *type;  /* the declared type: internal name or array descriptor */
	uint16_t start;    /* _CLONE under invokespecial: the String constant naming the
	                    * class the lookup starts at; 0: the receiver's class */
} jinst_alloc_call;
/* in's call (next: the instruction after it, or NULL) in class_name's code. */
int jinst_alloc_call_at(jinst_class *c, const char *class_name, const jinst_insn *in, const jinst_insn *next,
                        jinst_alloc_call *out);

#endif
