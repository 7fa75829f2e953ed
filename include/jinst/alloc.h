/*
 * The allocation pass: a hook after every allocation instruction, each
 * with an allocation site id, for the agent's `alloc` (HPROF's heap=sites,
 * rebuilt with bytecode instrumentation). Library jinst_instrument.
 *
 * A site is (class, method, descriptor, line, allocated type): every
 * allocation of one type on one line of one method is one site, as HPROF's
 * were. Ids are handed out on first sight from the pass's table, keyed by
 * those five, so a class instrumented again (retransformed, or loaded by
 * another loader) gets the ids it had.
 *
 * What is hooked, each by `dup; push site; invokestatic HOOK(Object, int)V`
 * right after the instruction that leaves the new reference on the stack:
 *
 *   new T ... invokespecial T.<init>   after the constructor returns, on the
 *                                      copy javac's `dup` left: an exception
 *                                      between `new` and the end of the
 *                                      constructor records nothing
 *                                      (JINST_HOOK_ALLOC_OBJECT)
 *   newarray, anewarray                after it (JINST_HOOK_ALLOC_ARRAY)
 *   multianewarray                     after it (JINST_HOOK_ALLOC_ARRAYS): the
 *                                      runtime counts the arrays of every
 *                                      dimension given, by walking what the
 *                                      instruction made before anything else
 *                                      can store into it
 *
 *   a call whose normal return is what   after it (JINST_HOOK_ALLOC_ANY; for
 *   a native made: clone(),              Array.newInstance(Class, int[])
 *   Array.newInstance,                   JINST_HOOK_ALLOC_ARRAYS), a site of
 *   Constructor.newInstance,             kind JINST_ALLOC_ANY whose type is
 *   Class.newInstance                    the declared one; the runtime
 *                                        measures the object by its own class
 *   clone() that may run an override     JINST_HOOK_ALLOC_CLONE with the
 *                                        receiver: counted only when the
 *                                        call reached Object.clone, so an
 *                                        object is counted once, where the
 *                                        override's super.clone() made it
 *
 * The objects of a multianewarray's inner arrays and of those calls may be
 * of other classes than the site's type: the agent's runtime counts each
 * under the same site with its own class as the type
 * (jinst_alloc_sites_assign hands that out), a row per class.
 *
 * Those natives cannot be wrapped (java/lang/Object and the reflection
 * load before any agent), so their calls are hooked (docs/ARCHITECTURE.md,
 * "The allocation pass", Calls).
 */
#ifndef JINST_ALLOC_H
#define JINST_ALLOC_H

#include "jinst/pass.h"

#ifdef __cplusplus
extern "C" {
#endif

enum jinst_alloc_kind {
	JINST_ALLOC_OBJECT = 0, /* new */
	JINST_ALLOC_ARRAY = 1,  /* newarray, anewarray */
	JINST_ALLOC_ARRAYS = 2, /* multianewarray */
	JINST_ALLOC_ANY = 3     /* a call's new object, made by a native (clone, reflection) */
};

/* One site; strings NUL-terminated modified UTF-8, alive as long as the
 * pass. */
typedef struct jinst_alloc_site {
	const char *class_name;  /* internal name of the allocating class */
	const char *method;
	const char *descriptor;
	const char *source;      /* its SourceFile, or NULL */
	/* The allocated type: a class's internal name ("java/lang/String"),
	 * or an array's descriptor ("[I", "[[Ljava/lang/String;"). */
	const char *type;
	uint32_t line;           /* 0: the method has no LineNumberTable */
	uint8_t kind;            /* enum jinst_alloc_kind */
} jinst_alloc_site;

typedef struct jinst_alloc_sites jinst_alloc_sites;

/* Makes the pass and its site table into *out; *sites is the table
 * (borrowed: freed with the pass, by jinst_instrument_free once the pass
 * was added, or by out->free). */
int jinst_alloc_pass(jinst_pass *out, jinst_alloc_sites **sites);

/* Sites handed out so far (ids 0 .. count-1); any thread. */
uint32_t jinst_alloc_sites_count(const jinst_alloc_sites *sites);
/* Site id into *out; JINST_EINVAL past the count. */
int jinst_alloc_sites_get(jinst_alloc_site *out, const jinst_alloc_sites *sites, uint32_t id);
/* The id of a site, handed out on first sight (the pass's own way in;
 * public for tests and other passes that allocate). */
int jinst_alloc_sites_assign(uint32_t *id, jinst_alloc_sites *sites, const jinst_alloc_site *site);

#ifdef __cplusplus
}
#endif
#endif
