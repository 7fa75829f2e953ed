/*
 * jinst instrumentation: the instrumenter that the JVMTI agent (at load
 * time) and the offline tool (ahead of time) run over a class, and the
 * passes it runs. Library jinst_instrument; knows nothing of JVMTI, zip or
 * files (DESIGN.md, layers). Writing a pass: include/jinst/pass.h.
 *
 * An instrumenter holds the configuration (which passes, which classes) and
 * the metadata tables: the methods it handed ids to, with their class,
 * name, descriptor, source file and lines. Ids are small integers,
 * assigned in the order methods are instrumented, starting at 0, and passed
 * to the hooks as constants. Ids are keyed by (class name, method name,
 * descriptor): a class instrumented again (retransformation, or a class of
 * the same name in another loader) keeps the ids of its first
 * instrumentation.
 *
 * Threads: jinst_instrument_class and the metadata functions may be called
 * from any number of threads at once (the agent's ClassFileLoadHook runs on
 * many); _new, _add_pass and _free from one, before and after.
 */
#ifndef JINST_INSTRUMENT_H
#define JINST_INSTRUMENT_H

#include "jinst/classfile.h"
#include "jinst/pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's hooks: one table, read by the passes and by a test against
 * runtime-java, so the two never drift. */
typedef struct jinst_hook {
	const char *owner;      /* internal name of the class holding it */
	const char *name;
	const char *descriptor;
} jinst_hook;

enum jinst_hook_id {
	JINST_HOOK_ENTER,       /* method entry (method id) */
	JINST_HOOK_EXIT,        /* normal exit, before every return (method id) */
	JINST_HOOK_EXIT_THROW,  /* exceptional exit, from a catch-all that rethrows (method id) */
	JINST_HOOK_CALLED,      /* method entry, counted and not timed (method id): no exit hooks pair with it */
	/* Coverage, once at method entry: (class id, probe count) -> the
	 * class's boolean[] probes, at least that long, never null; the
	 * method keeps it in a local and each probe stores true into it. */
	JINST_HOOK_PROBES,
	JINST_HOOK_PROBE_COUNTS, /* the same for coverage=counts: long[] hit counts, each probe adds 1 */
	/* Coverage in a method of one probe, at the probe: (class id, probe
	 * count, probe id) sets it, with no array kept in a local. */
	JINST_HOOK_HIT,
	JINST_HOOK_HIT_COUNT,    /* the same for coverage=counts: adds 1 */
	/* Coverage by identity (code instrumented ahead of time): (identity,
	 * probe count, internal class name) -> the class's boolean[] probes,
	 * found in the runtime's table keyed by identity, so that classes
	 * instrumented in separate runs never share an array. */
	JINST_HOOK_PROBES_FOR,
	JINST_HOOK_PROBE_COUNTS_FOR, /* the same for coverage=counts: long[] hit counts */
	/* The monitor pass (include/jinst/monitor.h): (the object about to be
	 * locked, lock site id), before each monitorenter and at the entry of a
	 * synchronized method. */
	JINST_HOOK_MONITOR_ENTER,
	/* Allocation (include/jinst/alloc.h), after the object or array is
	 * made: (the new reference, site id). */
	JINST_HOOK_ALLOC_OBJECT,     /* new, once its constructor returned */
	JINST_HOOK_ALLOC_ARRAY,      /* newarray, anewarray */
	JINST_HOOK_ALLOC_ARRAYS,     /* multianewarray: every array of the given dimensions */
	JINST_HOOK_ALLOC_ANY,        /* a new object of any class, from a call (clone, reflection): that object alone */
	/* A clone() call that may reach an override: (receiver, result, the
	 * class its lookup starts at or null for the receiver's, site id);
	 * counted only when the lookup found Object.clone itself. */
	JINST_HOOK_ALLOC_CLONE,
	JINST_HOOK_COUNT
};

/* The hook table, JINST_HOOK_COUNT entries. */
const jinst_hook *jinst_hooks(void);

/* The package of the runtime's own classes, never instrumented, and its
 * class of hooks, which code instrumented ahead of time names (the runtime
 * is then on the class path: jinst-runtime.jar). */
#define JINST_RUNTIME_PACKAGE "jinst/rt/"
#define JINST_RUNTIME_HOOKS "jinst/rt/Hooks"

/* The built-in trace pass, selected by jinst_instrument_options.passes (the
 * instrumenter adds it first, before the passes of jinst_instrument_add_pass). */
enum {
	JINST_PASS_TRACE = 0x1,     /* entry, exit and exceptional exit hooks in every method with code */
	/* The counting hook (JINST_HOOK_CALLED) alone in every method with
	 * code, no exit hooks and no handler: all that exact call counts need,
	 * and smaller code for the JIT (javac, every class traced, 44 files:
	 * 3.97 s against 3.20 s with the full trace pass, 2.05 s plain).
	 * Ignored when JINST_PASS_TRACE is set too. */
	JINST_PASS_COUNT = 0x2,
	/* With JINST_PASS_TRACE: leaves (jinst_method_info.timed) get the
	 * counting hook alone, like JINST_PASS_COUNT, and the rest the whole
	 * trace shape. A leaf's run is a few instructions, shorter than the
	 * two clock reads that would time it, and leaves take a large share
	 * of the calls of most programs; counted only, they cost an array
	 * increment, and their time is their caller's self time. */
	JINST_PASS_COUNT_LEAVES = 0x4,
	/* Coverage probes (instrument/coverage.c) where the shared placement
	 * puts them (include/jinst/coverage.h, JaCoCo's sites): each method
	 * asks the runtime once at entry for its class's probe array
	 * (JINST_HOOK_PROBES, with the class's id and probe count, see
	 * jinst_instrument_probe_class_info), keeps it in a new local, and each
	 * probe stores true into its element. Run before the trace pass, so it
	 * places its probes on the original code. */
	JINST_PASS_COVERAGE = 0x8,
	/* The same with hit counts (JINST_HOOK_PROBE_COUNTS, a long[]; each
	 * probe adds 1). Wins over JINST_PASS_COVERAGE when both are set. */
	JINST_PASS_COVERAGE_COUNTS = 0x10,
	/* With either coverage pass: each method asks for its class's probes
	 * by the class's identity and name (JINST_HOOK_PROBES_FOR,
	 * JINST_HOOK_PROBE_COUNTS_FOR) instead of by the instrumenter's class
	 * id. Implied when hooks_class is set (code instrumented ahead of time,
	 * whose ids would clash with another run's). */
	JINST_PASS_COVERAGE_IDENTITY = 0x20
};

typedef struct jinst_instrument_options {
	uint32_t version;           /* JINST_INSTRUMENT_OPTIONS_VERSION */
	uint32_t passes;            /* JINST_PASS_* */
	/* Glob patterns on internal class names ('*' within a package level,
	 * '**' across levels; '.' is read as '/'), NULL-terminated lists or NULL.
	 * A class is instrumented when it matches an include (or there are
	 * none) and no exclude. The runtime's own classes never are. */
	const char *const *include;
	const char *const *exclude;
	/* Called (from the thread instrumenting the class) for each method
	 * left as it was while the rest of its class is instrumented; the
	 * strings are modified UTF-8 and live for the call. May be NULL. */
	void (*left_alone)(void *ctx, const char *class_name, const char *method, const char *descriptor,
	                   const jinst_diag *why);
	void *left_alone_ctx;
	/* Called (as left_alone, with left_alone_ctx) for a class a pass
	 * declined because it cannot instrument it (jinst_pass_decline: the
	 * coverage pass and jsr/ret, say); the other passes still ran. May be
	 * NULL. */
	void (*declined)(void *ctx, const char *class_name, const char *pass, const jinst_diag *why);
	/* The class the injected calls name instead of each hook's owner
	 * (internal name), or NULL for the table's owner. Set (code
	 * instrumented ahead of time), it also has coverage ask by identity
	 * (JINST_PASS_COVERAGE_IDENTITY). */
	const char *hooks_class;
} jinst_instrument_options;
#define JINST_INSTRUMENT_OPTIONS_VERSION 3
#define JINST_INSTRUMENT_OPTIONS_INIT                                                                          \
	{JINST_INSTRUMENT_OPTIONS_VERSION, JINST_PASS_TRACE, NULL, NULL, NULL, NULL, NULL, NULL}

typedef struct jinst_instrument jinst_instrument;

int jinst_instrument_new(jinst_instrument **out, const jinst_instrument_options *opts, jinst_diag *diag);
void jinst_instrument_free(jinst_instrument *ins); /* NULL is fine */

/* Adds a pass, run after the built-in ones and those added before it. The
 * instrumenter copies *pass and owns its state from then on (pass->free is
 * called by jinst_instrument_free, also when this call fails). */
int jinst_instrument_add_pass(jinst_instrument *ins, const jinst_pass *pass, jinst_diag *diag);

/* Whether the options select the class with this internal name. */
bool jinst_instrument_wants(const jinst_instrument *ins, const char *class_name);

enum {
	/* The VM is retransforming or redefining the class: the output must have
	 * the input's shape (fields, methods, modifiers, super class, interfaces,
	 * NestHost, NestMembers, Record, PermittedSubclasses); a pass that would
	 * change it leaves the class alone (JINST_ERULES). */
	JINST_INSTRUMENT_RETRANSFORM = 0x1
};

/* Instruments one class with every pass. identity: the class's identity
 * (include/jinst/pass.h, the marker) when the caller knows it (the agent
 * retransforming a class: the hash of its bytes at first load), or NULL for
 * the hash of bytes. 0 with *out (from alloc, or malloc when alloc is
 * NULL) and *out_len; 0 with *out NULL when there is nothing to do (the
 * class is not selected, has no code to instrument, no pass changed it, or
 * it is instrumented already: offline, say; diag then says so); a negative code when
 * the class must be left alone, diag saying why. A method that cannot be
 * instrumented (too large afterwards...) is left as it was and the rest of
 * the class is still instrumented: the call still returns 0, and diag (code
 * 0) carries a note naming the methods left alone and why (message empty
 * when there were none), besides options.left_alone: "left alone: PASS:
 * NAME(DESC) CODE: why; ...", a class a pass declined as "PASS: the class
 * CODE: why" (options.declined), which a class no other pass changed
 * carries too, with *out NULL. arena: scratch for
 * this call, reset by the caller between calls. */
int jinst_instrument_class(jinst_instrument *ins, jinst_arena *arena, const uint8_t *bytes, size_t len,
                           const uint64_t *identity, uint32_t flags, const jinst_allocator *alloc, uint8_t **out,
                           size_t *out_len, jinst_diag *diag);

/* Hands out, on the caller's thread, the method ids the trace pass will
 * ask for when this class is instrumented (one per method with code, in
 * declaration order), when the options select the class and it is not
 * instrumented already; nothing without a trace pass. Ids otherwise follow
 * the order threads reach the methods in: a caller that instruments many
 * classes at once and wants the same bytes from every run (the offline
 * tool) calls this first for each class, in a fixed order. 0, or the
 * parse error with diag saying why. arena: scratch, as below. */
int jinst_instrument_reserve_ids(jinst_instrument *ins, jinst_arena *arena, const uint8_t *bytes, size_t len,
                                 jinst_diag *diag);

/* Method ids relative to a run (code instrumented ahead of time; see
 * docs/ARCHITECTURE.md, "Method ids of separate runs"). run_class is the
 * simple name of the run's class, JINST_RUN_CLASS_PREFIX and the run key
 * as 16 lowercase hex digits; the trace pass then pushes a method's id as
 * `getstatic PKG/RUN_CLASS.BASE:I; push id; iadd` (PKG the package of the
 * method's class; id 0: the getstatic alone), BASE being the first of the
 * run's ids, which the runtime hands out. The caller writes the class into
 * every package of the classes (jinst_instrument_run_class). Before any
 * class is instrumented, else JINST_EINVAL; NULL: ids are constants. */
int jinst_instrument_set_run_class(jinst_instrument *ins, const char *run_class);

/* The run's class: its one field BASE, set once by its initializer from
 * JINST_RUN_BASE_HOOK of JINST_RUNTIME_RUNS (run key, the run's method
 * count, the class itself) to the first of the run's ids. */
#define JINST_RUNTIME_RUNS "jinst/rt/Runs"
#define JINST_RUN_CLASS_PREFIX "$JinstRun"
#define JINST_RUN_BASE_FIELD "BASE"
#define JINST_RUN_BASE_HOOK "methodBase"
#define JINST_RUN_BASE_DESCRIPTOR "(JILjava/lang/Class;)I"

/* Writes the run's class named class_name (internal: the package of the
 * classes it serves, then the run class's simple name) for a run of key
 * and method_count ids: class file version 49 (no frames; loads on every
 * VM the runtime supports), final, synthetic, package-private, so that
 * classes of any version in its package may read it. Its pool names
 * JINST_RUNTIME_HOOKS, so no instrumenter takes it (the marker's rule).
 * Every package of a run gets the same bytes but for the name. 0 with
 * *out (malloc'd) and *out_len; JINST_EINVAL for a name not of that form,
 * JINST_ENOMEM. */
int jinst_instrument_run_class(uint8_t **out, size_t *out_len, const char *class_name, uint64_t key,
                               uint32_t method_count);

/* The identity of a class from its bytes (XXH64, seed 0). */
uint64_t jinst_instrument_identity(const uint8_t *bytes, size_t len);

/* What the marker of an instrumented class says. */
typedef struct jinst_marker {
	bool present;       /* the class has a JinstInstrumented attribute */
	bool runtime_refs;  /* it refers to the runtime's classes (instrumented, marker or not) */
	uint64_t identity;  /* of the original class, when present */
	char passes[128];   /* the passes' names, comma-separated, when present */
} jinst_marker;
/* Reads the marker of a class file. 0 with *out (present false for a class
 * never instrumented); the parse error otherwise. arena: scratch. */
int jinst_instrument_read_marker(jinst_arena *arena, const uint8_t *bytes, size_t len, jinst_marker *out,
                                 jinst_diag *diag);

/* The retransformation rules (JVMTI RedefineClasses, RetransformClasses): 0 when
 * out has the shape of in (the same class access flags, name, super class,
 * interfaces, fields and methods with their names, descriptors and access
 * flags in the same order, NestHost, NestMembers, Record components and
 * PermittedSubclasses, compared by name, not by constant-pool index), or
 * that of in with natives wrapped as jinst_instrument_wrap_natives wraps
 * them (the VM's class has the wrappers: in is the bytes before them);
 * JINST_ERULES with diag naming the first difference; the parse error when
 * either does not parse. jinst_instrument_class runs it itself under
 * JINST_INSTRUMENT_RETRANSFORM. arena: scratch, as above. */
int jinst_instrument_check_rules(jinst_arena *arena, const uint8_t *in, size_t in_len, const uint8_t *out,
                                 size_t out_len, jinst_diag *diag);

/* ---- native methods (instrument/natives.c) ---- */

/* The prefix the natives pass gives a native it wraps (JVMTI
 * SetNativeMethodPrefix): `m` becomes the native `$$jinst$$m`, and a new,
 * non-native `m` calls it. */
#define JINST_NATIVE_PREFIX "$$jinst$$"

/* Asked for each native the pass would wrap (the rules below passed):
 * whether to wrap it. At a first load (retransform false), whether the
 * prefix is in place; when the VM retransforms the class (true), which can
 * add no method, whether the class as the VM holds it has the wrapper
 * already (its first load wrapped it): the answer must be exact, or the VM
 * refuses the new version. Called on the instrumenting thread. */
typedef bool (*jinst_native_filter)(void *ctx, const char *class_name, const char *name, const char *descriptor,
                                    bool retransform);

typedef struct jinst_natives_options {
	uint32_t version;            /* JINST_NATIVES_OPTIONS_VERSION */
	uint32_t flags;              /* JINST_NATIVES_* */
	/* NULL: wrap at a first load, never when retransforming. */
	jinst_native_filter filter;
	void *ctx;
} jinst_natives_options;
#define JINST_NATIVES_OPTIONS_VERSION 1
#define JINST_NATIVES_OPTIONS_INIT {JINST_NATIVES_OPTIONS_VERSION, 0, NULL, NULL}
enum {
	/* Wrap @IntrinsicCandidate natives too: they lose their intrinsic
	 * (HotSpot's names a native method: neither the wrapper nor the
	 * renamed native is one of that name), and the annotation. */
	JINST_NATIVES_INTRINSICS = 0x1
};

/* Wraps the native methods of a parsed class as the natives pass does
 * (instrument/natives.c says which and how): each native `m` renamed
 * JINST_NATIVE_PREFIX `m` in its place, a wrapper `m` appended, in the
 * class's order. retransform: as the filter's. 0 with *wrapped (0: the
 * class unchanged); on error, the class may be half changed: drop it. */
int jinst_instrument_wrap_natives(uint32_t *wrapped, jinst_class *cls, const jinst_natives_options *opts,
                                  bool retransform, jinst_diag *diag);

/* Adds the natives pass, which wraps natives at begin, so that the passes
 * after it instrument the wrappers as methods with code
 * (jinst_pass_method_is_native_wrapper): after coverage (the placement must
 * see the class as the analyzer does) and before every other pass. Before
 * any class is instrumented and once, else JINST_EINVAL. Under
 * JINST_INSTRUMENT_RETRANSFORM the rules checker takes a class wrapped as
 * the pass wraps (jinst_instrument_check_rules). */
int jinst_instrument_set_natives(jinst_instrument *ins, const jinst_natives_options *opts, jinst_diag *diag);

/* Totals since jinst_instrument_new, for a summary line. */
typedef struct jinst_instrument_counts {
	uint64_t classes_seen;          /* jinst_instrument_class calls */
	uint64_t classes_instrumented;  /* returned new bytes */
	uint64_t classes_left_alone;    /* returned an error */
	uint64_t methods_instrumented;
	uint64_t methods_left_alone;    /* reported through left_alone */
	uint64_t classes_declined;      /* by some pass, reported through declined */
} jinst_instrument_counts;
void jinst_instrument_get_counts(const jinst_instrument *ins, jinst_instrument_counts *out);

/* The metadata of the methods instrumented so far. Strings are the class
 * file's, modified UTF-8 (as JVMTI's). A method that was given an id but
 * then left alone (left_alone) keeps its entry, never called. */
typedef struct jinst_method_info {
	const char *class_name;   /* internal name */
	const char *name;
	const char *descriptor;
	const char *source_file;  /* NULL when the class has no SourceFile */
	uint32_t first_line;      /* 0 when the method has no LineNumberTable */
	/* Whether its calls are timed (the whole trace shape), or only counted
	 * (JINST_PASS_COUNT, or a leaf under JINST_PASS_COUNT_LEAVES). A leaf
	 * is a method whose code can run only briefly and alone: no call but
	 * java/lang/Object.<init>() (empty, never instrumented) or on the way
	 * to an athrow (`throw new X(...)`), no backward branch (so no loop),
	 * no exception handler, no jsr/ret, no monitorenter, no array
	 * allocation, not synchronized. What it still runs (the constructor of
	 * what it throws, a <clinit> that new or getstatic starts) is timed
	 * and shows under the leaf's caller. */
	bool timed;
} jinst_method_info;

/* The classes the coverage pass gave probes, by class id (0, or the start
 * set, to count - 1: the constant their code passes to the probe hooks). A class keeps its id
 * when instrumented again with the same identity (retransformation, a
 * second loader of the same bytes); the probe array of id i has
 * probe_count elements, probe j set when the site of id j ran. A class
 * whose methods were all left alone keeps its entry, never set. */
typedef struct jinst_probe_class_info {
	uint64_t identity;        /* the class's identity (the marker's) */
	const char *class_name;   /* internal name, modified UTF-8; lives as long as ins */
	uint32_t probe_count;
	uint32_t flat;            /* its probes' first index in the flat array, or JINST_NO_FLAT */
} jinst_probe_class_info;

#define JINST_NO_FLAT UINT32_MAX

/* One past the highest class id handed out. */
uint32_t jinst_instrument_probe_class_count(const jinst_instrument *ins);
/* Ids start at first (at most 2^24) instead of 0; before any class is
 * instrumented, else JINST_EINVAL. An agent's new session starts past the
 * ids of the sessions before it: code of the old session still running
 * (a frame that entered an instrumented method before `stop`) calls the
 * hooks with its old ids, which must not name a new class's array. */
int jinst_instrument_probe_class_start(jinst_instrument *ins, uint32_t first);
/* Coverage's flat array (the agent's java.lang.$JinstProbes.P, booleans
 * only): classes the coverage pass meets from now on take the next probe
 * count indices from next while they fit below end (info.flat), and their
 * code stores into that array, a constant, instead of asking for an array
 * at each entry; the others ask by class id. Retransformed classes keep
 * their range. A new session starts past the old one's ranges (a frame of
 * old code still stores there). JINST_EINVAL when next > end. */
int jinst_instrument_probe_flat_range(jinst_instrument *ins, uint32_t next, uint32_t end);
/* The next index the flat array would give. */
uint32_t jinst_instrument_probe_flat_next(const jinst_instrument *ins);
/* 0 with *info, JINST_EINVAL for an unknown id (or one before the start). */
int jinst_instrument_probe_class_info(const jinst_instrument *ins, uint32_t id, jinst_probe_class_info *info);

uint32_t jinst_instrument_method_count(const jinst_instrument *ins);
/* 0 with *info (strings live as long as ins), JINST_EINVAL for an unknown id
 * (one of a range reserved below). */
int jinst_instrument_method_info(const jinst_instrument *ins, uint32_t id, jinst_method_info *info);
/* Reserves count consecutive ids from *first for methods the instrumenter
 * never sees (a run of code instrumented ahead of time, when the agent
 * runs its classes: the runtime's Runs asks), so that its own ids never
 * meet them; they have no info. 0, JINST_ETOOLARGE past 2^31 ids, or
 * JINST_ENOMEM (nothing reserved). */
int jinst_instrument_reserve_method_range(jinst_instrument *ins, uint32_t count, uint32_t *first);

#ifdef __cplusplus
}
#endif
#endif
