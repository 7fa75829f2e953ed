/*
 * The trace pass on real classes (label unit): every class of the test
 * data and of the JVM test's program is instrumented, written, parsed
 * again and decoded, and the hooks must stand where they belong: one entry
 * call first, an exit call right before every return, a catch-all handler
 * last in the exception table that calls exitThrow and rethrows, covering
 * the whole code after the entry call (after the super(...)/this(...) call
 * in constructors). Also: the filters, the method-id table, and each
 * retransformation rule proved with a deliberately wrong pass.
 *   test_instrument DATA_CLASSES TRACE_CLASSES MAIN_JAVA
 * and, when set, the classes in $JINST_TEST_CLASSES25 (built by javac 25).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "jinst/opcodes.h"
#include "jinst/instrument.h"
/* Whitebox, for the wrong passes only: they change what the public model
 * keeps read-only (member lists, the class header). */
#include "internal.h"

#include "../testlib.h"


static jinst_instrument *ins;
static jinst_arena *arena;
static unsigned n_methods_checked, n_ctors_checked, n_left_alone, n_classes_untouched;
static char left_alone_what[256];

static void on_left_alone(void *ctx, const char *cls, const char *method, const char *desc, const jinst_diag *why)
{
	(void)ctx;
	n_left_alone++;
	snprintf(left_alone_what, sizeof(left_alone_what), "%s.%s%s %s", cls, method, desc, jinst_strerror(why->code));
}

static bool is_return(uint8_t op)
{
	return op >= JINST_OP_IRETURN && op <= JINST_OP_RETURN;
}

/* The int a push instruction pushes, or -1. */
static int64_t pushed_int(jinst_class *c, const jinst_insn *in)
{
	if (in->opcode >= JINST_OP_ICONST_0 && in->opcode <= JINST_OP_ICONST_0 + 5)
		return in->opcode - JINST_OP_ICONST_0;
	if (in->opcode == JINST_OP_BIPUSH || in->opcode == JINST_OP_SIPUSH)
		return in->operand;
	if (in->opcode == JINST_OP_LDC || in->opcode == JINST_OP_LDC_W) {
		jinst_cp_entry e;
		if (!jinst_cp_get(c, (uint16_t)in->operand, &e) && e.tag == JINST_CP_INTEGER)
			return (int32_t)e.u.u4;
	}
	return -1;
}

static bool utf8_is(const uint8_t *s, uint16_t len, const char *want)
{
	return s && len == strlen(want) && !memcmp(s, want, len);
}

/* Which hook an invokestatic calls (enum jinst_hook_id), -1 for none. */
static int hook_of(jinst_class *c, const jinst_insn *in)
{
	if (in->opcode != JINST_OP_INVOKESTATIC)
		return -1;
	jinst_cp_entry r, nat;
	if (jinst_cp_get(c, (uint16_t)in->operand, &r) || r.tag != JINST_CP_METHODREF ||
	    jinst_cp_get(c, r.u.ref.name_and_type_index, &nat))
		return -1;
	uint16_t l1, l2, l3;
	const uint8_t *owner = jinst_cp_name(c, r.u.ref.class_index, &l1);
	const uint8_t *name = jinst_cp_utf8(c, nat.u.nat.name_index, &l2);
	const uint8_t *desc = jinst_cp_utf8(c, nat.u.nat.descriptor_index, &l3);
	const jinst_hook *h = jinst_hooks();
	for (int i = 0; i < JINST_HOOK_COUNT; i++)
		if (utf8_is(owner, l1, h[i].owner) && utf8_is(name, l2, h[i].name) && utf8_is(desc, l3, h[i].descriptor))
			return i;
	return -1;
}

static bool is_init_call(jinst_class *c, const jinst_insn *in)
{
	jinst_cp_entry r, nat;
	if (in->opcode != JINST_OP_INVOKESPECIAL || jinst_cp_get(c, (uint16_t)in->operand, &r) ||
	    jinst_cp_get(c, r.u.ref.name_and_type_index, &nat))
		return false;
	uint16_t l;
	const uint8_t *name = jinst_cp_utf8(c, nat.u.nat.name_index, &l);
	return utf8_is(name, l, "<init>");
}

static jinst_code *code_of(jinst_class *c, jinst_member *m)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	jinst_code *code = NULL;
	if (a && jinst_attr_decode(c, a, (void **)&code, NULL))
		return NULL;
	return code;
}

static uint32_t index_at(const jinst_insn *in, uint32_t n, uint32_t off)
{
	for (uint32_t i = 0; i < n; i++)
		if (in[i].offset == off)
			return i;
	return UINT32_MAX;
}

/* finalize()V whose code is a lone return: HotSpot registers no object of
 * its class for finalization, and the trace pass keeps it so. */
static unsigned n_finalizers_left;
static bool empty_finalizer(const uint8_t *name, uint16_t nl, const uint8_t *desc, uint16_t dl, const jinst_code *code)
{
	return utf8_is(name, nl, "finalize") && utf8_is(desc, dl, "()V") && code->code_length == 1 &&
	       code->code[0] == JINST_OP_RETURN;
}

/* One method of the output against the same method of the input. */
static void check_method(const char *where, jinst_class *ci, jinst_member *mi, jinst_class *co, jinst_member *mo,
                         const char *cls)
{
	uint16_t nl, dl;
	const uint8_t *name = jinst_cp_utf8(co, jinst_member_name_index(mo), &nl);
	const uint8_t *desc = jinst_cp_utf8(co, jinst_member_descriptor_index(mo), &dl);
	char what[600];
	snprintf(what, sizeof(what), "%s %s.%.*s%.*s", where, cls, (int)nl, (const char *)name, (int)dl, (const char *)desc);
	jinst_code *a = code_of(ci, mi), *b = code_of(co, mo);
	CHECK(!a == !b, "%s: code present on one side only", what);
	if (!a || !b)
		return;
	jinst_insn *ia, *ib;
	uint32_t na, nb;
	CHECK(!jinst_code_decode(ci, a, &ia, &na, NULL) && !jinst_code_decode(co, b, &ib, &nb, NULL), "%s: decode", what);
	if (a->code_length == b->code_length && !memcmp(a->code, b->code, a->code_length)) {
		/* left alone: the one method too large to instrument, or an
		 * empty finalize() (trace.c: empty_finalizer) */
		if (empty_finalizer(name, nl, desc, dl, a)) {
			n_finalizers_left++;
			return;
		}
		CHECK(strstr(what, "jinsttrace/Huge.huge(I)I") != NULL, "%s: not instrumented", what);
		CHECK(a->code_length > 65000, "%s: left alone but small", what);
		return;
	}
	n_methods_checked++;
	bool ctor = utf8_is(name, nl, "<init>");

	/* entry: push id, invokestatic enter, first */
	CHECK(nb >= 5, "%s: too short", what);
	if (nb < 5)
		return;
	int64_t id = pushed_int(co, &ib[0]);
	CHECK(id >= 0 && hook_of(co, &ib[1]) == JINST_HOOK_ENTER, "%s: no entry call first", what);
	jinst_method_info mi_;
	CHECK(id >= 0 && !jinst_instrument_method_info(ins, (uint32_t)id, &mi_) && !strcmp(mi_.class_name, cls) &&
	          utf8_is(name, nl, mi_.name) && utf8_is(desc, dl, mi_.descriptor),
	      "%s: id %lld names another method", what, (long long)id);

	/* exits: one before every return, and as many returns as before */
	unsigned returns_in = 0, returns_out = 0, calls[JINST_HOOK_COUNT] = {0};
	for (uint32_t i = 0; i < na; i++)
		returns_in += is_return(ia[i].opcode);
	for (uint32_t i = 0; i < nb; i++) {
		int h = hook_of(co, &ib[i]);
		if (h >= 0) {
			calls[h]++;
			CHECK(i > 0 && pushed_int(co, &ib[i - 1]) == id, "%s: hook at %u without the id", what, ib[i].offset);
		}
		if (is_return(ib[i].opcode)) {
			returns_out++;
			CHECK(i >= 2 && hook_of(co, &ib[i - 1]) == JINST_HOOK_EXIT, "%s: return at %u without an exit call",
			      what, ib[i].offset);
		}
	}
	CHECK(returns_in == returns_out, "%s: %u returns became %u", what, returns_in, returns_out);
	CHECK(calls[JINST_HOOK_ENTER] == 1 && calls[JINST_HOOK_EXIT] == returns_out && calls[JINST_HOOK_EXIT_THROW] == 1,
	      "%s: %u entry, %u exit, %u exitThrow calls for %u returns", what, calls[0], calls[1], calls[2], returns_out);

	/* the handler: push id, exitThrow, athrow, the last instructions */
	CHECK(nb >= 3 && ib[nb - 1].opcode == JINST_OP_ATHROW && hook_of(co, &ib[nb - 2]) == JINST_HOOK_EXIT_THROW,
	      "%s: no handler at the end", what);
	uint32_t hpc = ib[nb - 3].offset;
	uint16_t ours = 0, first_ours = UINT16_MAX;
	for (uint16_t i = 0; i < b->exception_count; i++)
		if (b->exceptions[i].handler_pc == hpc) {
			ours++;
			if (first_ours == UINT16_MAX)
				first_ours = i;
			CHECK(b->exceptions[i].catch_type == 0, "%s: catch-all with a type", what);
		}
	CHECK(ours >= 1 && first_ours == a->exception_count && b->exception_count == a->exception_count + ours,
	      "%s: %u entries of ours, first at %u, %u entries before", what, ours, first_ours, a->exception_count);
	for (uint16_t i = 0; i < a->exception_count && i < b->exception_count; i++)
		CHECK(a->exceptions[i].catch_type == b->exceptions[i].catch_type, "%s: entry %u moved", what, i);
	if (!ours || first_ours == UINT16_MAX)
		return;
	const jinst_exception_entry *e = &b->exceptions[first_ours];
	CHECK(b->exceptions[b->exception_count - 1].end_pc == hpc || ctor, "%s: the range stops before the handler", what);
	if (!ctor) {
		CHECK(ours == 1 && e->start_pc == ib[2].offset && e->end_pc == hpc,
		      "%s: range [%u, %u) instead of [%u, %u)", what, e->start_pc, e->end_pc, ib[2].offset, hpc);
		return;
	}
	/* constructors (javac): one range, from right after the call that
	 * initializes `this` to the handler */
	n_ctors_checked++;
	uint32_t k = index_at(ib, nb, e->start_pc);
	CHECK(ours == 1 && k != UINT32_MAX && k > 0 && is_init_call(co, &ib[k - 1]) && e->end_pc == hpc,
	      "%s: constructor range [%u, %u) does not follow an <init> call", what, e->start_pc, e->end_pc);
	/* and nothing before it reads a field of this through a handler of ours:
	 * the receiver of that call is `this`, loaded by an aload_0 before it */
	bool aload0 = false;
	for (uint32_t i = 0; i + 1 < k; i++)
		aload0 |= ib[i].opcode == JINST_OP_ALOAD_0;
	CHECK(aload0, "%s: no aload_0 before the super(...) call", what);
}

static void check_class(const char *path)
{
	size_t len;
	uint8_t *bytes = test_read_file(path, &len);
	CHECK(bytes != NULL, "cannot read %s", path);
	if (!bytes)
		return;
	jinst_arena_reset(arena);
	uint8_t *out = NULL, *out2 = NULL;
	size_t out_len = 0, out2_len = 0;
	jinst_diag d;
	int rc = jinst_instrument_class(ins, arena, bytes, len, NULL, 0, NULL, &out, &out_len, &d);
	CHECK(rc == 0, "%s: %s %s", path, jinst_strerror(rc), d.message);
	/* the same again, as for a retransformation: the same bytes (ids reused,
	 * output deterministic) and the rules hold */
	jinst_arena_reset(arena);
	rc = jinst_instrument_class(ins, arena, bytes, len, NULL, JINST_INSTRUMENT_RETRANSFORM, NULL, &out2, &out2_len, &d);
	CHECK(rc == 0 && out_len == out2_len && (!out || !memcmp(out, out2, out_len)), "%s: second run differs (%s)", path,
	      d.message);
	if (!out) {
		/* nothing to do: module-info, or no method with code */
		jinst_class *c;
		CHECK(!jinst_class_parse(&c, bytes, len, arena, NULL, NULL), "%s: parse", path);
		for (uint16_t i = 0; i < jinst_class_method_count(c); i++)
			CHECK(!code_of(c, jinst_class_method(c, i)), "%s: method %u has code but was not instrumented", path, i);
		jinst_class_free(c);
		n_classes_untouched++;
		free(bytes);
		return;
	}
	jinst_arena_reset(arena);
	jinst_class *ci, *co;
	CHECK(!jinst_class_parse(&ci, bytes, len, arena, NULL, NULL) && !jinst_class_parse(&co, out, out_len, arena, NULL, NULL),
	      "%s: parse", path);
	uint16_t cl;
	const uint8_t *cn = jinst_class_name(co, &cl);
	char cls[512];
	snprintf(cls, sizeof(cls), "%.*s", (int)cl, (const char *)cn);
	CHECK(jinst_class_method_count(ci) == jinst_class_method_count(co), "%s: method count", path);
	for (uint16_t i = 0; i < jinst_class_method_count(ci) && i < jinst_class_method_count(co); i++)
		check_method(path, ci, jinst_class_method(ci, i), co, jinst_class_method(co, i), cls);
	/* instrumenting the output again does nothing: it already calls the hooks */
	uint8_t *again = (uint8_t *)1;
	size_t again_len = 1;
	jinst_arena *a2;
	CHECK(!jinst_arena_new(&a2), "arena");
	CHECK(!jinst_instrument_class(ins, a2, out, out_len, NULL, 0, NULL, &again, &again_len, &d) && !again &&
	          strstr(d.message, "already instrumented"),
	      "%s: instrumented twice (%s)", path, d.message);
	jinst_arena_free(a2);
	/* a deep write of the output equals itself: every attribute decodes */
	uint8_t *deep;
	size_t deep_len;
	jinst_write_options wo = JINST_WRITE_OPTIONS_INIT;
	wo.flags = JINST_WRITE_FROM_MODEL;
	CHECK(!jinst_class_write(co, &wo, &deep, &deep_len, &d), "%s: deep write: %s", path, d.message);
	free(deep);
	jinst_class_free(ci);
	jinst_class_free(co);
	free(out);
	free(out2);
	free(bytes);
}

static void walk(const char *dir, void (*fn)(const char *))
{
	DIR *d = opendir(dir);
	CHECK(d != NULL, "cannot open %s", dir);
	if (!d)
		return;
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
		sprintf(names[n++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		size_t l = strlen(names[i]);
		if (!stat(names[i], &st) && S_ISDIR(st.st_mode))
			walk(names[i], fn);
		else if (l > 6 && !strcmp(names[i] + l - 6, ".class"))
			fn(names[i]);
		free(names[i]);
	}
	free(names);
}

/* ---- threads ---- */

enum { NTHREADS = 4 };
static char *paths[256];
static size_t npaths;
static jinst_instrument *shared;

typedef struct job {
	int t;
	uint8_t *out[256];
	size_t len[256];
	int rc;
} job;

static void add_path(const char *p)
{
	if (npaths < 256) {
		size_t n = strlen(p) + 1;
		paths[npaths] = malloc(n);
		memcpy(paths[npaths++], p, n);
	}
}

/* Each thread instruments every class, each in its own order, with one
 * shared instrumenter: ids are handed out concurrently. */
static void *worker(void *arg)
{
	job *j = arg;
	jinst_arena *a;
	if (jinst_arena_new(&a))
		return NULL;
	for (size_t k = 0; k < npaths; k++) {
		size_t i = j->t & 1 ? npaths - 1 - (k + (size_t)j->t * 7) % npaths : (k + (size_t)j->t * 5) % npaths;
		size_t len;
		uint8_t *b = test_read_file(paths[i], &len);
		jinst_arena_reset(a);
		if (!b || jinst_instrument_class(shared, a, b, len, NULL, 0, NULL, &j->out[i], &j->len[i], NULL))
			j->rc = -1;
		free(b);
	}
	jinst_arena_free(a);
	return NULL;
}

static void check_threads(const char *data, const char *trace)
{
	walk(data, add_path);
	walk(trace, add_path);
	CHECK(!jinst_instrument_new(&shared, NULL, NULL), "new");
	static job jobs[NTHREADS];
	pthread_t th[NTHREADS];
	for (int t = 0; t < NTHREADS; t++) {
		jobs[t].t = t;
		CHECK(!pthread_create(&th[t], NULL, worker, &jobs[t]), "thread");
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	/* the ids of a method are the same whichever thread met it first, so
	 * every thread produced the same bytes; and no method got two ids */
	unsigned same = 0;
	for (size_t i = 0; i < npaths; i++) {
		bool eq = true;
		for (int t = 1; t < NTHREADS; t++)
			eq &= jobs[t].len[i] == jobs[0].len[i] &&
			      (!jobs[0].out[i] || !memcmp(jobs[t].out[i], jobs[0].out[i], jobs[0].len[i]));
		CHECK(eq, "%s: threads disagree", paths[i]);
		same += eq;
	}
	for (int t = 0; t < NTHREADS; t++) {
		CHECK(jobs[t].rc == 0, "thread %d failed", t);
		for (size_t i = 0; i < npaths; i++)
			free(jobs[t].out[i]);
	}
	uint32_t n = jinst_instrument_method_count(shared);
	CHECK(n == jinst_instrument_method_count(ins), "%u ids from the threads, %u from one thread", n,
	      jinst_instrument_method_count(ins));
	for (uint32_t id = 0; id < n; id++) {
		jinst_method_info a;
		CHECK(!jinst_instrument_method_info(shared, id, &a), "info");
		for (uint32_t id2 = id + 1; id2 < n && id2 < id + 64; id2++) {
			jinst_method_info b;
			jinst_instrument_method_info(shared, id2, &b);
			CHECK(strcmp(a.class_name, b.class_name) || strcmp(a.name, b.name) || strcmp(a.descriptor, b.descriptor),
			      "ids %u and %u name the same method", id, id2);
		}
	}
	printf("%zu classes by %d threads: %u identical, %u ids\n", npaths, NTHREADS, same, n);
	jinst_instrument_free(shared);
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
}

/* ---- filters ---- */

static void check_filters(void)
{
	jinst_instrument *f;
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	CHECK(!jinst_instrument_new(&f, &o, NULL), "new");
	CHECK(jinst_instrument_wants(f, "a/B"), "default");
	CHECK(!jinst_instrument_wants(f, "jinst/rt/Hooks"), "the runtime is never instrumented");
	CHECK(!jinst_instrument_wants(f, "jinst/rt/buf/Ring"), "the runtime is never instrumented");
	CHECK(jinst_instrument_wants(f, "jinst/rtx/A"), "only the runtime's package");
	CHECK(!jinst_instrument_wants(f, "java/lang/$JinstHooks"), "the bridge to the runtime is never instrumented");
	CHECK(jinst_instrument_wants(f, "java/lang/String"), "only the bridge of java/lang");
	jinst_instrument_free(f);

	const char *inc[] = {"com.example.*", "org/deep/**", "*", NULL};
	const char *exc[] = {"**Test", "org/deep/skip/*", NULL};
	o.include = inc;
	o.exclude = exc;
	CHECK(!jinst_instrument_new(&f, &o, NULL), "new");
	CHECK(jinst_instrument_wants(f, "com/example/A"), "* within a level");
	CHECK(!jinst_instrument_wants(f, "com/example/sub/A"), "* stops at /");
	CHECK(jinst_instrument_wants(f, "org/deep/a/b/C"), "** across levels");
	CHECK(jinst_instrument_wants(f, "Top"), "* alone: the default package");
	CHECK(!jinst_instrument_wants(f, "net/Other"), "not included");
	CHECK(!jinst_instrument_wants(f, "com/example/ATest"), "excluded by **Test");
	CHECK(!jinst_instrument_wants(f, "org/deep/skip/X"), "excluded");
	CHECK(jinst_instrument_wants(f, "org/deep/skip/y/X"), "exclude * stops at /");
	CHECK(!jinst_instrument_wants(f, "jinst/rt/Hooks"), "include patterns cannot bring the runtime in");
	CHECK(!jinst_instrument_wants(f, "java/lang/$JinstHooks"), "nor the bridge");
	jinst_instrument_free(f);

	/* an excluded class comes back untouched, without bytes */
	const char *exc2[] = {"jinsttest.**", NULL};
	o.include = NULL;
	o.exclude = exc2;
	CHECK(!jinst_instrument_new(&f, &o, NULL), "new");
	jinst_instrument_free(f);
}

static void check_excluded(const char *data)
{
	jinst_instrument *f;
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	const char *exc[] = {"jinsttest.**", NULL};
	o.exclude = exc;
	CHECK(!jinst_instrument_new(&f, &o, NULL), "new");
	size_t len;
	uint8_t *b = test_load(data, "main/jinsttest/Features.class", &len);
	uint8_t *out = (uint8_t *)1;
	size_t out_len = 1;
	jinst_arena_reset(arena);
	CHECK(!jinst_instrument_class(f, arena, b, len, NULL, 0, NULL, &out, &out_len, NULL) && !out && !out_len,
	      "an excluded class is left alone");
	CHECK(jinst_instrument_method_count(f) == 0, "and gets no ids");
	free(b);
	jinst_instrument_free(f);
}

/* ---- the id table ---- */

static unsigned alloc_calls;
static void *counting_alloc(void *ctx, size_t size)
{
	(void)ctx;
	alloc_calls++;
	return malloc(size);
}

static long find_line(const char *java, const char *marker)
{
	size_t len;
	char *src = (char *)test_read_file(java, &len);
	if (!src)
		return -1;
	long line = 1;
	for (size_t i = 0; i < len; i++) {
		if (!strncmp(src + i, marker, strlen(marker))) {
			free(src);
			return line;
		}
		line += src[i] == '\n';
	}
	free(src);
	return -1;
}

static void check_metadata(const char *trace, const char *java)
{
	/* a fresh instrumenter: ids from 0 in method order, and a class
	 * instrumented again keeps them */
	jinst_instrument *f;
	CHECK(!jinst_instrument_new(&f, NULL, NULL), "new");
	size_t len;
	uint8_t *b = test_load(trace, "jinsttrace/Main.class", &len), *out = NULL;
	size_t out_len;
	jinst_arena_reset(arena);
	CHECK(!jinst_instrument_class(f, arena, b, len, NULL, 0, NULL, &out, &out_len, NULL) && out, "instrument Main");
	free(out);
	uint32_t n = jinst_instrument_method_count(f);
	CHECK(n > 10, "%u ids", n);
	jinst_arena_reset(arena);
	CHECK(!jinst_instrument_class(f, arena, b, len, NULL, 0, NULL, &out, &out_len, NULL) && out, "instrument Main again");
	free(out);
	CHECK(jinst_instrument_method_count(f) == n, "ids reused: %u then %u", n, jinst_instrument_method_count(f));
	/* the output from the caller's allocator (the agent's JVMTI Allocate) */
	uint8_t *out2 = NULL;
	size_t out2_len = 0;
	jinst_allocator al = {counting_alloc, NULL};
	jinst_arena_reset(arena);
	CHECK(!jinst_instrument_class(f, arena, b, len, NULL, 0, NULL, &out, &out_len, NULL) &&
	          !jinst_instrument_class(f, arena, b, len, NULL, 0, &al, &out2, &out2_len, NULL) && alloc_calls == 1 &&
	          out_len == out2_len && !memcmp(out, out2, out_len),
	      "allocator: %u calls", alloc_calls);
	free(out);
	free(out2);
	jinst_method_info mi;
	bool found = false;
	long want = find_line(java, "/*line:depth*/");
	for (uint32_t id = 0; id < n; id++) {
		CHECK(!jinst_instrument_method_info(f, id, &mi), "info %u", id);
		CHECK(!strcmp(mi.class_name, "jinsttrace/Main") && mi.source_file && !strcmp(mi.source_file, "Main.java"),
		      "id %u: %s in %s", id, mi.class_name, mi.source_file ? mi.source_file : "(none)");
		if (!strcmp(mi.name, "depth") && !strcmp(mi.descriptor, "(I)I")) {
			found = true;
			/* the marker stands on the declaration; the body's line follows */
			CHECK(want > 0 && mi.first_line == (uint32_t)want + 1, "depth: first line %u, source says %ld",
			      mi.first_line, want + 1);
		}
	}
	CHECK(found, "depth(I)I has an id");
	CHECK(jinst_instrument_method_info(f, n, &mi) == JINST_EINVAL, "unknown id");
	free(b);

	/* a method left alone: the class is still instrumented, and diag says
	 * which method and why; the counts agree */
	jinst_diag d;
	b = test_load(trace, "jinsttrace/Huge.class", &len);
	jinst_arena_reset(arena);
	CHECK(!jinst_instrument_class(f, arena, b, len, NULL, 0, NULL, &out, &out_len, &d) && out && d.code == 0 &&
	          strstr(d.message, "left alone: trace: huge(I)I ETOOLARGE") && strstr(d.where, "jinsttrace/Huge"),
	      "Huge: note '%s' at '%s'", d.message, d.where);
	free(out);
	jinst_arena_reset(arena);
	CHECK(!jinst_instrument_class(f, arena, b, len, NULL, 0, NULL, &out, &out_len, &d) && out && d.message[0] == 'l',
	      "Huge: the note comes back on every run");
	free(out);
	free(b);
	jinst_instrument_counts k;
	jinst_instrument_get_counts(f, &k);
	CHECK(k.classes_seen == 6 && k.classes_instrumented == 6 && k.classes_left_alone == 0 && k.methods_left_alone == 2,
	      "counts: %llu seen, %llu instrumented, %llu left alone, %llu methods left alone",
	      (unsigned long long)k.classes_seen, (unsigned long long)k.classes_instrumented,
	      (unsigned long long)k.classes_left_alone, (unsigned long long)k.methods_left_alone);
	/* a class that does not parse is left alone with the parser's reason */
	uint8_t junk[16] = {0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 61, 0, 1};
	out = (uint8_t *)1;
	jinst_arena_reset(arena);
	CHECK(jinst_instrument_class(f, arena, junk, sizeof(junk), NULL, 0, NULL, &out, &out_len, &d) == JINST_EMALFORMED && !out &&
	          d.code == JINST_EMALFORMED,
	      "junk: %s", d.message);
	jinst_instrument_free(f);
}

/* ---- the retransformation rules, each broken by a wrong pass ---- */

typedef void (*wrong_pass)(jinst_class *c);

static void wp_class_flags(jinst_class *c) { c->access_flags ^= JINST_ACC_FINAL; c->header_modified = true; }
static void wp_super(jinst_class *c)
{
	uint16_t k;
	jinst_cp_add_class(c, "java/lang/Number", &k);
	c->super_class = k;
	c->header_modified = true;
}
static void wp_interfaces(jinst_class *c) { c->interface_count--; c->header_modified = true; }
static void wp_add_field(jinst_class *c)
{
	jinst_member *f = jinst_arena_zalloc(c->arena, ((size_t)c->field_count + 1) * sizeof(*f));
	memcpy(f, c->fields, c->field_count * sizeof(*f));
	f[c->field_count] = f[0];
	jinst_cp_add_utf8(c, "$jinstData", 10, &f[c->field_count].name_index);
	f[c->field_count].modified = true;
	c->fields = f;
	c->field_count++;
}
static void wp_remove_method(jinst_class *c) { c->method_count--; }
static void wp_rename_method(jinst_class *c)
{
	jinst_cp_add_utf8(c, "renamed", 7, &c->methods[c->method_count - 1].name_index);
	c->methods[c->method_count - 1].modified = true;
}
static void wp_method_descriptor(jinst_class *c)
{
	jinst_cp_add_utf8(c, "(J)V", 4, &c->methods[c->method_count - 1].descriptor_index);
	c->methods[c->method_count - 1].modified = true;
}
static void wp_method_flags(jinst_class *c)
{
	c->methods[0].access_flags ^= JINST_ACC_SYNTHETIC;
	c->methods[0].modified = true;
}
static void wp_field_flags(jinst_class *c)
{
	c->fields[0].access_flags ^= JINST_ACC_TRANSIENT;
	c->fields[0].modified = true;
}
static void *class_model(jinst_class *c, enum jinst_attr_kind kind)
{
	jinst_attr *a = jinst_attr_find(&c->attrs, kind);
	void *m = NULL;
	if (a && !jinst_attr_decode(c, a, &m, NULL))
		a->modified = true;
	return m;
}
static void wp_nest_host(jinst_class *c)
{
	jinst_attr_index *h = class_model(c, JINST_ATTR_NEST_HOST);
	if (h)
		jinst_cp_add_class(c, "jinsttest/Features", &h->index);
}
static void wp_nest_members(jinst_class *c)
{
	jinst_index_list *l = class_model(c, JINST_ATTR_NEST_MEMBERS);
	if (l)
		l->count--;
}
static void wp_permitted(jinst_class *c)
{
	jinst_index_list *l = class_model(c, JINST_ATTR_PERMITTED_SUBCLASSES);
	if (l && l->count > 1) {
		uint16_t t = l->items[0];
		l->items[0] = l->items[1];
		l->items[1] = t;
	}
}
static void wp_record(jinst_class *c)
{
	jinst_record *r = class_model(c, JINST_ATTR_RECORD);
	if (r && r->count)
		jinst_cp_add_utf8(c, "diameter", 8, &r->components[0].name_index);
}
static void wp_none(jinst_class *c) { (void)c; }
/* Changes what the rules allow: a method body and a new class attribute
 * value (SourceFile) are not the shape. */
static void wp_allowed(jinst_class *c)
{
	jinst_attr_index *s = class_model(c, JINST_ATTR_SOURCE_FILE);
	if (s)
		jinst_cp_add_utf8(c, "Other.java", 10, &s->index);
}

static void check_rule(const char *data, const char *rel, const char *name, wrong_pass pass, const char *expect)
{
	size_t len;
	uint8_t *in = test_load(data, rel, &len), *out = NULL, *bad = NULL;
	size_t out_len = 0, bad_len = 0;
	jinst_diag d;
	jinst_arena_reset(arena);
	CHECK(!jinst_instrument_class(ins, arena, in, len, NULL, JINST_INSTRUMENT_RETRANSFORM, NULL, &out, &out_len, &d),
	      "%s: instrument %s: %s", name, rel, d.message);
	if (!out) { /* no code (Shape): the wrong pass works on the input */
		out = malloc(len);
		memcpy(out, in, len);
		out_len = len;
	}
	jinst_arena_reset(arena);
	jinst_class *c;
	CHECK(!jinst_class_parse(&c, out, out_len, arena, NULL, NULL), "%s: parse", name);
	pass(c);
	jinst_write_options wo = JINST_WRITE_OPTIONS_INIT;
	wo.flags = JINST_WRITE_FROM_MODEL;
	CHECK(!jinst_class_write(c, &wo, &bad, &bad_len, &d), "%s: write: %s", name, d.message);
	jinst_class_free(c);
	int rc = jinst_instrument_check_rules(arena, in, len, bad, bad_len, &d);
	if (expect) {
		CHECK(rc == JINST_ERULES && strstr(d.message, expect), "%s on %s: %s (%s), expected %s", name, rel,
		      jinst_strerror(rc), d.message, expect);
		/* and the pass's honest output passes */
		CHECK(!jinst_instrument_check_rules(arena, in, len, out, out_len, &d), "%s: real output: %s", name, d.message);
	} else {
		CHECK(rc == 0, "%s on %s: %s (%s), expected no difference", name, rel, jinst_strerror(rc), d.message);
	}
	free(in);
	free(out);
	free(bad);
}

static void check_rules(const char *data)
{
	const char *feat = "main/jinsttest/Features.class", *shape = "main/jinsttest/Shape.class",
	           *circle = "main/jinsttest/Shape$Circle.class";
	check_rule(data, feat, "no change", wp_none, NULL);
	check_rule(data, feat, "SourceFile changed", wp_allowed, NULL);
	check_rule(data, feat, "class flags", wp_class_flags, "class access flags");
	check_rule(data, feat, "super class", wp_super, "super class");
	check_rule(data, feat, "interfaces", wp_interfaces, "interfaces");
	check_rule(data, feat, "field added", wp_add_field, "fields became");
	check_rule(data, feat, "method removed", wp_remove_method, "methods became");
	check_rule(data, feat, "method renamed", wp_rename_method, "name changed");
	check_rule(data, feat, "method descriptor", wp_method_descriptor, "descriptor changed");
	check_rule(data, feat, "method flags", wp_method_flags, "method 0");
	check_rule(data, feat, "field flags", wp_field_flags, "field 0");
	check_rule(data, circle, "NestHost", wp_nest_host, "NestHost changed");
	check_rule(data, feat, "NestMembers", wp_nest_members, "NestMembers");
	check_rule(data, shape, "PermittedSubclasses", wp_permitted, "PermittedSubclasses: class 0 changed");
	check_rule(data, circle, "Record", wp_record, "Record: component 0");
}

/* JINST_PASS_COUNT: every method with code gets `push id; invokestatic
 * called` first and nothing else: the original instructions follow, in the
 * same order, with the same exception table; no exit hook anywhere. Under
 * JINST_PASS_TRACE | JINST_PASS_COUNT_LEAVES the methods the metadata says
 * are not timed (the leaves) get just that, and the others the entry hook
 * of the whole trace shape (check_method checks the rest of that shape). */
static jinst_instrument *count_ins;
static unsigned n_count_methods, n_timed_methods;
static char untimed[8192];

static void check_count_class(const char *path)
{
	size_t len;
	uint8_t *bytes = test_read_file(path, &len);
	CHECK(bytes != NULL, "cannot read %s", path);
	if (!bytes)
		return;
	jinst_arena_reset(arena);
	uint8_t *out = NULL;
	size_t out_len = 0;
	jinst_diag d;
	int rc = jinst_instrument_class(count_ins, arena, bytes, len, NULL, 0, NULL, &out, &out_len, &d);
	CHECK(rc == 0, "%s: %s %s", path, jinst_strerror(rc), d.message);
	jinst_class *ci = NULL, *co = NULL;
	if (out && !jinst_class_parse(&ci, bytes, len, arena, NULL, NULL) &&
	    !jinst_class_parse(&co, out, out_len, arena, NULL, NULL)) {
		for (uint16_t i = 0; i < jinst_class_method_count(ci) && i < jinst_class_method_count(co); i++) {
			jinst_code *a = code_of(ci, jinst_class_method(ci, i)), *b = code_of(co, jinst_class_method(co, i));
			CHECK(!a == !b, "%s: method %u: code on one side only", path, i);
			if (!a || !b || a->code_length > 65000)
				continue; /* Huge.huge: left alone */
			jinst_member *mo = jinst_class_method(co, i);
			uint16_t nl, dl;
			const uint8_t *name = jinst_cp_utf8(co, jinst_member_name_index(mo), &nl);
			const uint8_t *desc = jinst_cp_utf8(co, jinst_member_descriptor_index(mo), &dl);
			if (empty_finalizer(name, nl, desc, dl, a)) {
				CHECK(b->code_length == 1, "%s: method %u: an empty finalize() was instrumented", path, i);
				n_finalizers_left++;
				continue;
			}
			jinst_insn *ia = NULL, *ib = NULL;
			uint32_t na = 0, nb = 0;
			bool decoded = !jinst_code_decode(ci, a, &ia, &na, NULL) && !jinst_code_decode(co, b, &ib, &nb, NULL);
			CHECK(decoded && nb >= 2, "%s: method %u: decode", path, i);
			if (!decoded || nb < 2)
				continue;
			int64_t id = pushed_int(co, &ib[0]);
			jinst_method_info mi;
			CHECK(id >= 0 && !jinst_instrument_method_info(count_ins, (uint32_t)id, &mi), "%s: method %u: id",
			      path, i);
			if (id < 0 || jinst_instrument_method_info(count_ins, (uint32_t)id, &mi))
				continue;
			if (mi.timed) {
				CHECK(hook_of(co, &ib[1]) == JINST_HOOK_ENTER, "%s: method %u: timed, no entry hook", path, i);
				n_timed_methods++;
				continue;
			}
			CHECK(nb == na + 2 && hook_of(co, &ib[1]) == JINST_HOOK_CALLED,
			      "%s: method %u: %u instructions became %u, entry call first?", path, i, na, nb);
			for (uint32_t k = 0; k < na && k + 2 < nb; k++)
				CHECK(ia[k].opcode == ib[k + 2].opcode && hook_of(co, &ib[k + 2]) < 0,
				      "%s: method %u: instruction %u changed", path, i, k);
			CHECK(a->exception_count == b->exception_count, "%s: method %u: %u handlers became %u", path, i,
			      a->exception_count, b->exception_count);
			n_count_methods++;
			size_t u = strlen(untimed);
			snprintf(untimed + u, sizeof untimed - u, "%s.%s%s\n", mi.class_name, mi.name, mi.descriptor);
		}
	} else {
		CHECK(!out, "%s: output does not parse", path);
	}
	if (ci)
		jinst_class_free(ci);
	if (co)
		jinst_class_free(co);
	free(out);
	free(bytes);
}

static void check_count_pass(const char *data, const char *trace)
{
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.passes = JINST_PASS_COUNT;
	CHECK(!jinst_instrument_new(&count_ins, &o, NULL), "new (count pass)");
	walk(data, check_count_class);
	walk(trace, check_count_class);
	CHECK(n_count_methods > 80 && !n_timed_methods, "count pass: %u methods checked, %u timed", n_count_methods,
	      n_timed_methods);
	printf("count pass: %u methods checked\n", n_count_methods);
	jinst_instrument_free(count_ins);

	/* Leaves of jinsttrace/Main.java: the lambda `() -> n` (it returns
	 * its argument) and Box(int) (super() of Object, a field store) are;
	 * spin (a loop, no call), syncMethod (synchronized), fib (calls),
	 * thrower (a call, and a throw elsewhere), Failing(int) (its super(x)
	 * is Base's) and Version.compareTo (calls) are not. */
	o.passes = JINST_PASS_TRACE | JINST_PASS_COUNT_LEAVES;
	CHECK(!jinst_instrument_new(&count_ins, &o, NULL), "new (trace pass, leaves counted)");
	n_count_methods = n_timed_methods = 0;
	untimed[0] = 0;
	walk(trace, check_count_class);
	CHECK(strstr(untimed, "jinsttrace/Main$Greeter.lambda$of$0(Ljava/lang/String;)Ljava/lang/String;\n") != NULL,
	      "the lambda is timed; untimed:\n%s", untimed);
	CHECK(strstr(untimed, "jinsttrace/Main$Box.<init>(I)V\n") != NULL, "Box(int) is timed; untimed:\n%s", untimed);
	CHECK(!strstr(untimed, ".spin(") && !strstr(untimed, ".syncMethod(") && !strstr(untimed, ".fib(") &&
	          !strstr(untimed, "compareTo(") && !strstr(untimed, ".thrower(") && !strstr(untimed, "Failing.<init>"),
	      "a method that loops, locks or calls is counted only:\n%s", untimed);
	CHECK(n_count_methods >= 5 && n_timed_methods >= 15, "leaves: %u counted, %u timed", n_count_methods,
	      n_timed_methods);
	printf("trace pass, leaves counted: %u leaves, %u timed\n", n_count_methods, n_timed_methods);
	jinst_instrument_free(count_ins);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_instrument DATA_CLASSES TRACE_CLASSES MAIN_JAVA\n");
		return 2;
	}
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.left_alone = on_left_alone;
	CHECK(!jinst_instrument_new(&ins, &o, NULL) && !jinst_arena_new(&arena), "new");
	check_filters();
	check_excluded(argv[1]);
	walk(argv[1], check_class);
	walk(argv[2], check_class);
	/* twice per class: Huge.huge once per run */
	CHECK(n_left_alone == 2 && strstr(left_alone_what, "jinsttrace/Huge.huge(I)I ETOOLARGE"),
	      "left alone: %u, last %s", n_left_alone, left_alone_what);
	CHECK(n_methods_checked > 80 && n_ctors_checked > 15, "%u methods, %u constructors checked", n_methods_checked,
	      n_ctors_checked);
	CHECK(n_classes_untouched >= 3 && n_classes_untouched <= 6, "%u classes without code", n_classes_untouched);
	/* Main$Quiet's */
	CHECK(n_finalizers_left == 1, "%u empty finalize() left alone", n_finalizers_left);
	printf("%u methods checked, %u of them constructors; %u classes without code\n", n_methods_checked,
	       n_ctors_checked, n_classes_untouched);
	check_threads(argv[1], argv[2]);
	/* constructors with statements before super(...), when javac 25 built them */
	const char *c25 = getenv("JINST_TEST_CLASSES25");
	if (c25 && *c25) {
		unsigned before = n_ctors_checked;
		walk(c25, check_class);
		CHECK(n_ctors_checked - before == 4, "%u constructors of the Java 25 classes", n_ctors_checked - before);
	}
	check_metadata(argv[2], argv[3]);
	check_rules(argv[1]);
	n_finalizers_left = 0;
	check_count_pass(argv[1], argv[2]);
	/* the count pass, then the trace pass with leaves counted */
	CHECK(n_finalizers_left == 2, "count passes: %u empty finalize() left alone", n_finalizers_left);
	jinst_instrument_free(ins);
	jinst_arena_free(arena);
	return check_report();
}
