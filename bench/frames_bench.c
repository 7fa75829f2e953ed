/*
 * Frame work of the class-file library over a folder of classes held in
 * memory, the jinst side of bench/frames:
 *
 *   recompute  every method's StackMapTable computed anew by type inference
 *              (jinst_frames_recompute), class-hierarchy questions answered
 *              by a cache over the same classes (filled in the untimed check
 *              pass, as ASM's peer builds its map before timing); classes
 *              older than version 50 carry no frames and are left out, as
 *              on the ASM side;
 *   insert     the tracing shape with frames kept: `sipush id;
 *              invokestatic enter(I)V` at entry and `sipush id;
 *              invokestatic exit(I)V` before every return, as ASM's
 *              AdviceAdapter peer inserts them, through the code patcher
 *              (jinst/patch.h) and, for the methods it declines, the code
 *              editor (their number is printed).
 *
 *   jinst-bench-frames [--iterations N] [--mode recompute|insert] DIR
 *
 * An untimed pass first checks the work: every output must parse again and
 * every rewritten method's frames must expand; a class that fails is
 * counted, reported and left out of the timed passes, as on the ASM side.
 */
#define _XOPEN_SOURCE 700
#include "jinst/classfile.h"
#include "jinst/edit.h"
#include "jinst/hierarchy.h"
#include "jinst/infer.h"
#include "jinst/patch.h"
#include "benchlib.h"

typedef struct named {
	char *name;
	size_t index;
} named;

static named *names;
static size_t nnames;

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

/* The corpus as a class source for the hierarchy cache. */
static int corpus_read(void *ctx, const char *name, const uint8_t **bytes, size_t *len)
{
	(void)ctx;
	named key = {(char *)name, 0};
	const named *hit = bsearch(&key, names, nnames, sizeof *names, cmp_named);
	if (!hit)
		return JINST_ENOTFOUND;
	*bytes = corpus.bytes[hit->index];
	*len = corpus.lens[hit->index];
	return 0;
}

static void index_names(jinst_arena *arena)
{
	names = calloc(corpus.count, sizeof *names);
	for (size_t i = 0; names && i < corpus.count; i++) {
		jinst_class *c;
		uint16_t n;
		jinst_arena_reset(arena);
		if (jinst_class_parse(&c, corpus.bytes[i], corpus.lens[i], arena, NULL, NULL) != 0)
			continue;
		const uint8_t *s = jinst_class_name(c, &n);
		if (!s)
			continue;
		names[nnames].name = strndup((const char *)s, n);
		names[nnames++].index = i;
	}
	qsort(names, nnames, sizeof *names, cmp_named);
}

typedef struct mode {
	const char *name;
	jinst_arena *arena;
	jinst_hierarchy hierarchy;
	bool *included;
	size_t classes, bytes;
	/* one class: 0, or a negative code with diag filled */
	int (*one)(struct mode *m, jinst_class *c, jinst_diag *diag);
} mode;

static int recompute_one(mode *m, jinst_class *c, jinst_diag *diag)
{
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *meth = jinst_class_method(c, i);
		if (!jinst_attr_find(jinst_member_attrs(meth), JINST_ATTR_CODE))
			continue;
		int rc = jinst_frames_recompute(c, meth, &m->hierarchy, diag);
		if (rc)
			return rc;
	}
	return 0;
}

/* The general path: the code editor, for methods the patcher declines. */
static int insert_edit(jinst_class *c, jinst_member *meth, int32_t mid, uint16_t enter, uint16_t exit_,
                       jinst_diag *diag)
{
	jinst_edit *ed;
	int rc = jinst_edit_open(&ed, c, meth, NULL, diag);
	if (rc)
		return rc;
	jinst_insn call[2] = {{.opcode = 0x11, .operand = mid}, {.opcode = 0xb8, .operand = enter}};
	rc = jinst_edit_insert(ed, jinst_edit_first_insn(ed), JINST_BEFORE_OUTSIDE, call, 2, NULL);
	call[1].operand = exit_;
	for (jinst_node *n = jinst_edit_first(ed); !rc && n; n = jinst_node_next(n)) {
		const jinst_insn *in = jinst_node_insn(n);
		if (in && in->opcode >= 0xac && in->opcode <= 0xb1)
			rc = jinst_edit_insert(ed, n, JINST_BEFORE_INSIDE, call, 2, NULL);
	}
	if (!rc)
		rc = jinst_edit_commit(ed, diag);
	jinst_edit_free(ed);
	return rc;
}

/* Methods the patcher declined (counted in the check pass). */
static long fallbacks;
static bool counting;

/* The fast path: the patcher (include/jinst/patch.h), the editor when it declines. */
static int insert_one(mode *m, jinst_class *c, jinst_diag *diag)
{
	(void)m;
	uint16_t enter, exit_;
	int rc = jinst_cp_add_methodref(c, "jinst/rt/Hooks", "enter", "(I)V", &enter);
	if (!rc)
		rc = jinst_cp_add_methodref(c, "jinst/rt/Hooks", "exit", "(I)V", &exit_);
	static int32_t id;
	for (uint16_t i = 0; !rc && i < jinst_class_method_count(c); i++) {
		jinst_member *meth = jinst_class_method(c, i);
		if (!jinst_attr_find(jinst_member_attrs(meth), JINST_ATTR_CODE))
			continue;
		int32_t mid = id++ & 0x7fff;
		uint8_t call[6] = {0x11, (uint8_t)(mid >> 8), (uint8_t)mid, 0xb8, (uint8_t)(enter >> 8), (uint8_t)enter};
		jinst_patch *p;
		rc = jinst_patch_open(&p, c, meth, diag);
		if (!rc)
			rc = jinst_patch_insert(p, 0, JINST_BEFORE_OUTSIDE, call, 6, 1);
		call[4] = (uint8_t)(exit_ >> 8);
		call[5] = (uint8_t)exit_;
		if (!rc) {
			uint32_t n;
			const uint16_t *at = jinst_patch_offsets(p, &n);
			const uint8_t *code = jinst_patch_code(p, &(uint32_t){0});
			for (uint32_t k = 0; !rc && k < n; k++)
				if (code[at[k]] >= 0xac && code[at[k]] <= 0xb1)
					rc = jinst_patch_insert(p, at[k], JINST_BEFORE_INSIDE, call, 6, 1);
		}
		if (!rc)
			rc = jinst_patch_commit(p, diag);
		if (rc && rc != JINST_ENOMEM) {
			if (counting)
				fallbacks++;
			rc = insert_edit(c, meth, mid, enter, exit_, diag);
		}
	}
	return rc;
}

/* One class through the mode and the writer; *out set when wanted. */
static int run_class(mode *m, size_t i, uint8_t **out, size_t *len, jinst_diag *diag)
{
	jinst_class *c;
	jinst_arena_reset(m->arena);
	int rc = jinst_class_parse(&c, corpus.bytes[i], corpus.lens[i], m->arena, NULL, diag);
	if (!rc)
		rc = m->one(m, c, diag);
	if (!rc)
		rc = jinst_class_write(c, NULL, out, len, diag);
	return rc;
}

static void timed_pass(void *ctx)
{
	mode *m = ctx;
	for (size_t i = 0; i < corpus.count; i++) {
		if (!m->included[i])
			continue;
		uint8_t *out;
		size_t len;
		if (run_class(m, i, &out, &len, NULL) == 0)
			free(out);
	}
}

/* The untimed pass: which classes take part, and is their output sound? */
static long check_pass(mode *m, bool recompute)
{
	long failed = 0, old = 0;
	m->classes = m->bytes = 0;
	jinst_arena *scratch;
	if (jinst_arena_new(&scratch))
		return -1;
	for (size_t i = 0; i < corpus.count; i++) {
		jinst_diag d;
		uint8_t *out = NULL;
		size_t len;
		m->included[i] = false;
		if (recompute && corpus.lens[i] >= 8 && (corpus.bytes[i][6] << 8 | corpus.bytes[i][7]) < 50) {
			old++;
			continue;
		}
		int rc = run_class(m, i, &out, &len, &d);
		jinst_class *again = NULL;
		jinst_arena_reset(scratch);
		if (!rc)
			rc = jinst_class_parse(&again, out, len, scratch, NULL, &d);
		for (uint16_t k = 0; !rc && k < jinst_class_method_count(again); k++) {
			jinst_member *meth = jinst_class_method(again, k);
			jinst_attr *ca = jinst_attr_find(jinst_member_attrs(meth), JINST_ATTR_CODE);
			void *model;
			if (!ca || jinst_attr_decode(again, ca, &model, &d))
				continue;
			jinst_attr *sa = jinst_attr_find(&((jinst_code *)model)->attrs, JINST_ATTR_STACK_MAP_TABLE);
			jinst_full_frame *frames;
			if (sa && ((rc = jinst_attr_decode(again, sa, &model, &d)) == 0))
				rc = jinst_stack_map_expand(again, meth, model, &frames, &d);
		}
		free(out);
		if (rc) {
			char msg[600];
			jinst_diag_format(&d, msg, sizeof msg);
			if (failed < 10)
				fprintf(stderr, "jinst %s: class %zu left out: %s\n", m->name, i, msg);
			failed++;
			continue;
		}
		m->included[i] = true;
		m->classes++;
		m->bytes += corpus.lens[i];
	}
	jinst_arena_free(scratch);
	if (old)
		fprintf(stderr, "jinst %s: %ld classes older than version 50 left out (no frames)\n", m->name, old);
	return failed;
}

int main(int argc, char **argv)
{
	int iterations = 7;
	const char *dir = NULL, *which = NULL;
	int usage = 0, rc = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
			iterations = atoi(argv[++i]);
		else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
			which = argv[++i];
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else
			usage = 1;
	}
	if (which && strcmp(which, "recompute") != 0 && strcmp(which, "insert") != 0)
		usage = 1;
	if (usage || !dir || iterations < 1 || iterations > 64) {
		fprintf(stderr, "usage: jinst-bench-frames [--iterations N (1-64)] [--mode recompute|insert] DIR\n");
		return 2;
	}
	if (corpus_load(dir) != 0) {
		fprintf(stderr, "jinst-bench-frames: no classes read from %s\n", dir);
		return 1;
	}
	jinst_arena *arena;
	if (jinst_arena_new(&arena))
		return 1;
	index_names(arena);
	jinst_class_source source = {corpus_read, NULL, NULL};
	jinst_hierarchy_cache *cache;
	if (jinst_hierarchy_cache_new(&cache, &source))
		return 1;
	bool *included = calloc(corpus.count, sizeof *included);
	mode modes[2] = {
		{.name = "recompute", .arena = arena, .hierarchy = jinst_hierarchy_cache_view(cache), .included = included,
		 .one = recompute_one},
		{.name = "insert", .arena = arena, .included = included, .one = insert_one},
	};
	for (int k = 0; k < 2; k++) {
		mode *m = &modes[k];
		if (which && strcmp(which, m->name) != 0)
			continue;
		counting = true;
		long failed = check_pass(m, k == 0);
		counting = false;
		if (k == 1)
			printf("jinst insert (patcher): %ld methods declined by the patcher, done by the editor\n", fallbacks);
		if (failed < 0 || m->classes == 0) {
			fprintf(stderr, "jinst %s: nothing to time\n", m->name);
			rc = 1;
			continue;
		}
		if (failed)
			fprintf(stderr, "jinst %s: %ld classes failed the check and are left out\n", m->name, failed);
		bench_time(m->name, iterations, timed_pass, m, m->classes, m->bytes);
	}
	free(included);
	jinst_hierarchy_cache_free(cache);
	jinst_arena_free(arena);
	for (size_t i = 0; i < nnames; i++)
		free(names[i].name);
	free(names);
	corpus_free();
	return rc;
}
