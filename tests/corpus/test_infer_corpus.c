/*
 * Frame inference against the frames the compilers wrote, over a corpus.
 *
 *   test_infer_corpus CORPUS [HIERARCHY_PATH...]
 *
 * Pass 1 reads the class header of every class in CORPUS and in the extra
 * paths (the JDK the corpus was compiled against: a jimage tree or jmods)
 * into a name -> (super, interface) map, the hierarchy the inference asks.
 * Pass 2 takes every method of every class of version 50 or more: the
 * unreachable code is patched (jinst_code_patch_unreachable), the frames
 * are inferred (jinst_frames_infer) and compared with the StackMapTable the
 * class carries (none meaning no frame at all).
 *
 * A difference is not a failure by itself: a compiler writes the declared
 * types of its variables and drops the ones out of scope, where data flow
 * finds the exact ones. Each differing type is put in a category:
 *   narrower  ours is assignable to the compiler's (a subclass, null for a
 *             reference, a type where the compiler has top);
 *   wider     the compiler's is assignable to ours (we merged to a common
 *             super class the compiler knew better, an interface seen as
 *             Object);
 *   suspect   neither: different kinds, top where the compiler has a type,
 *             unrelated classes, another stack height, a frame missing.
 * Methods with jsr/ret (which carry no frames) are inlined
 * (jinst_code_inline_subroutines) and must infer. The test fails on any
 * suspect difference and on any error but EHIERARCHY (a class outside the
 * corpus).
 * Exit 77 when CORPUS is not there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jinst/opcodes.h"
#include "jinst/classfile.h"
#include "jinst/infer.h"

#include "jinst/archive.h"
#include "../testlib.h"
#include "sample.h"

/* ---- the hierarchy: an open-addressing map over the corpus's class headers ---- */

typedef struct entry {
	char *name, *super;
	bool iface;
} entry;

typedef struct hmap {
	entry *slots;
	size_t cap, count;
} hmap;

static size_t hash_name(const char *s)
{
	size_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static entry *hmap_slot(hmap *m, const char *name)
{
	size_t i = hash_name(name) & (m->cap - 1);
	while (m->slots[i].name && strcmp(m->slots[i].name, name) != 0)
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static void hmap_put(hmap *m, const char *name, const char *super, bool iface)
{
	if ((m->count + 1) * 2 > m->cap) {
		hmap old = *m;
		m->cap = old.cap ? old.cap * 2 : 1024;
		m->slots = calloc(m->cap, sizeof(entry));
		m->count = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.slots[i].name)
				*hmap_slot(m, old.slots[i].name) = old.slots[i], m->count++;
		free(old.slots);
	}
	entry *e = hmap_slot(m, name);
	if (e->name)
		return; /* the first definition wins, as on a class path */
	e->name = strdup(name);
	e->super = super ? strdup(super) : NULL;
	e->iface = iface;
	m->count++;
}

static int lookup(void *ctx, const char *name, const char **super, bool *iface)
{
	hmap *m = ctx;
	entry *e = hmap_slot(m, name);
	if (!e->name)
		return JINST_EHIERARCHY;
	*super = e->super;
	*iface = e->iface;
	return 0;
}

static char *mutf8_cstr(const uint8_t *s, uint16_t len)
{
	char *p = malloc((size_t)len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

static int collect(void *ctx, const char *name, const uint8_t *bytes, size_t len)
{
	(void)name;
	jinst_class *c;
	if (jinst_class_parse(&c, bytes, len, NULL, NULL, NULL))
		return 0;
	uint16_t nl, sl = 0;
	const uint8_t *n = jinst_class_name(c, &nl);
	const uint8_t *s = jinst_class_super_class(c) ? jinst_cp_name(c, jinst_class_super_class(c), &sl) : NULL;
	if (n) {
		char *cn = mutf8_cstr(n, nl), *sn = s ? mutf8_cstr(s, sl) : NULL;
		hmap_put(ctx, cn, sn, (jinst_class_access_flags(c) & JINST_ACC_INTERFACE) != 0);
		free(cn);
		free(sn);
	}
	jinst_class_free(c);
	return 0;
}

static void walk_error(void *ctx, const char *name, const char *message)
{
	(void)ctx;
	printf("cannot read %s: %s\n", name, message);
}

/* ---- comparing ------------------------------------------------------------------ */

/* In order of concern: a method's worst type decides its category. */
enum { SAME, NARROWER, WIDER, UNKNOWN, SUSPECT };

typedef struct stats {
	hmap *h;
	jinst_arena *arena;
	unsigned long classes, methods, old_methods, jsr_methods, jsr_old_methods, patched_methods, patched_runs;
	unsigned long identical, differing, suspect_methods, frames_ours, frames_theirs;
	unsigned long types[5], extra_frames, unneeded_frames, dead_frames;
	unsigned long err_hierarchy, err_jsr, err_other;
	unsigned shown;
	char why[200]; /* the first suspect type of the frame compared last */
	unsigned long sample; /* 1 class in sample (sample.h) */
} stats;

/* Whether class `from` is assignable to class `to` as the verifier sees it
 * (JVMS 4.10.1.2: an interface target takes any reference); -1 when the
 * hierarchy does not know a class on the way. */
static int class_assignable(hmap *h, const char *from, const char *to)
{
	if (strcmp(to, "java/lang/Object") == 0)
		return 1;
	const char *super;
	bool iface;
	if (lookup(h, to, &super, &iface))
		return -1;
	if (iface)
		return 1;
	for (const char *cur = from; cur; ) {
		if (strcmp(cur, to) == 0)
			return 1;
		if (lookup(h, cur, &super, &iface))
			return -1;
		cur = super;
	}
	return 0;
}

static int ref_assignable(hmap *h, const uint8_t *f, uint16_t fl, const uint8_t *t, uint16_t tl)
{
	bool fa = fl && f[0] == '[', ta = tl && t[0] == '[';
	char *fs = mutf8_cstr(f, fl), *ts = mutf8_cstr(t, tl);
	int ok;
	if (ta && fa) {
		/* Element-wise for references, equal for primitives. */
		const uint8_t *fe = f + 1, *te = t + 1;
		uint16_t fel = (uint16_t)(fl - 1), tel = (uint16_t)(tl - 1);
		if ((fe[0] == 'L' || fe[0] == '[') && (te[0] == 'L' || te[0] == '[')) {
			if (fe[0] == 'L')
				fe++, fel = (uint16_t)(fel - 2);
			if (te[0] == 'L')
				te++, tel = (uint16_t)(tel - 2);
			ok = ref_assignable(h, fe, fel, te, tel);
		} else {
			ok = fl == tl && memcmp(f, t, fl) == 0;
		}
	} else if (fa) {
		ok = strcmp(ts, "java/lang/Object") == 0 || strcmp(ts, "java/lang/Cloneable") == 0 ||
		     strcmp(ts, "java/io/Serializable") == 0;
	} else if (ta) {
		ok = 0;
	} else {
		ok = class_assignable(h, fs, ts);
	}
	free(fs);
	free(ts);
	return ok;
}

/* Whether `from` is assignable to `to` (JVMS 4.10.1.2 isAssignable); -1
 * when that needs a class the hierarchy does not know. */
static int vt_assignable(hmap *h, const jinst_ftype *from, const jinst_ftype *to)
{
	if (to->tag == JINST_VT_TOP)
		return 1;
	if (from->tag == JINST_VT_NULL)
		return to->tag == JINST_VT_NULL || to->tag == JINST_VT_OBJECT;
	if (from->tag != to->tag)
		return 0;
	if (from->tag == JINST_VT_OBJECT)
		return ref_assignable(h, from->name, from->name_length, to->name, to->name_length);
	if (from->tag == JINST_VT_UNINITIALIZED)
		return from->value == to->value;
	return 1;
}

static int classify(hmap *h, const jinst_ftype *ours, const jinst_ftype *theirs)
{
	if (jinst_ftype_equal(ours, theirs))
		return SAME;
	int narrower = vt_assignable(h, ours, theirs);
	if (narrower == 1)
		return NARROWER;
	int wider = ours->tag != JINST_VT_TOP ? vt_assignable(h, theirs, ours) : 0;
	if (wider == 1)
		return WIDER;
	return narrower < 0 || wider < 0 ? UNKNOWN : SUSPECT;
}

/* A frame's locals slot by slot (a long or double and then top), into out. */
static uint32_t slots(const jinst_full_frame *f, const jinst_ftype **out, uint32_t cap)
{
	static const jinst_ftype top = {JINST_VT_TOP, 0, 0, NULL};
	uint32_t n = 0;
	for (uint16_t i = 0; i < f->nlocals && n + 2 <= cap; i++) {
		out[n++] = &f->locals[i];
		if (f->locals[i].tag == JINST_VT_LONG || f->locals[i].tag == JINST_VT_DOUBLE)
			out[n++] = &top;
	}
	return n;
}

static void note_suspect(stats *S, const char *where, uint32_t i, const jinst_ftype *o, const jinst_ftype *t)
{
	char a[80], b[80];
	test_ftype_text(o, a, sizeof(a));
	test_ftype_text(t, b, sizeof(b));
	snprintf(S->why, sizeof(S->why), "%s %u: ours %s, theirs %s", where, (unsigned)i, a, b);
}

static int compare_frames(stats *S, const jinst_full_frame *o, const jinst_full_frame *t)
{
	S->why[0] = '\0';
	static const jinst_ftype *so[65538], *st[65538];
	static const jinst_ftype top = {JINST_VT_TOP, 0, 0, NULL};
	int worst = SAME;
	if (o->nstack != t->nstack) {
		snprintf(S->why, sizeof(S->why), "stack heights %u and %u", o->nstack, t->nstack);
		return SUSPECT;
	}
	for (uint16_t i = 0; i < o->nstack; i++) {
		int k = classify(S->h, &o->stack[i], &t->stack[i]);
		if (k == SUSPECT && !S->why[0])
			note_suspect(S, "stack", i, &o->stack[i], &t->stack[i]);
		S->types[k]++;
		worst = k > worst ? k : worst;
	}
	uint32_t no = slots(o, so, 65538), nt = slots(t, st, 65538);
	for (uint32_t i = 0; i < no || i < nt; i++) {
		int k = classify(S->h, i < no ? so[i] : &top, i < nt ? st[i] : &top);
		if (k == SUSPECT && !S->why[0])
			note_suspect(S, "local", i, i < no ? so[i] : &top, i < nt ? st[i] : &top);
		S->types[k]++;
		worst = k > worst ? k : worst;
	}
	return worst;
}

static void show(stats *S, const char *cls, const char *method, const char *what)
{
	if (S->shown++ < 40)
		printf("  %s %s: %s\n", cls, method, what);
}

static bool uses_jsr(jinst_class *c, const jinst_code *code)
{
	jinst_insn *insns;
	uint32_t n;
	if (jinst_code_decode(c, code, &insns, &n, NULL))
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (insns[i].opcode == JINST_OP_JSR || insns[i].opcode == JINST_OP_JSR_W || insns[i].opcode == JINST_OP_RET)
			return true;
	return false;
}

/* Whether the verifier needs a frame at pc (JVMS 4.10.1): a branch or
 * switch target, a handler, or an instruction after one that does not fall
 * through. A compiler may write frames elsewhere too (javac does at the
 * head of a loop whose back edge it left out). */
static bool frame_needed(jinst_class *c, const jinst_code *code, uint32_t pc)
{
	jinst_insn *insns;
	uint32_t n;
	if (jinst_code_decode(c, code, &insns, &n, NULL))
		return true;
	for (uint16_t k = 0; k < code->exception_count; k++)
		if (code->exceptions[k].handler_pc == pc)
			return true;
	for (uint32_t i = 0; i < n; i++) {
		const jinst_insn *in = &insns[i];
		enum jinst_operand_kind kind = in->wide ? JINST_OPND_LOCAL : jinst_opcode_operands(in->opcode);
		if ((kind == JINST_OPND_BRANCH2 || kind == JINST_OPND_BRANCH4) && (uint32_t)in->operand == pc)
			return true;
		if (in->sw) {
			if ((uint32_t)in->sw->default_target == pc)
				return true;
			for (uint32_t t = 0; t < in->sw->count; t++)
				if ((uint32_t)in->sw->targets[t] == pc)
					return true;
		}
		uint8_t op = in->opcode;
		bool ends = op == JINST_OP_GOTO || op == JINST_OP_GOTO_W || (op >= JINST_OP_TABLESWITCH && op <= JINST_OP_RETURN) || op == JINST_OP_ATHROW || op == JINST_OP_RET;
		if (ends && i + 1 < n && insns[i + 1].offset == pc)
			return true;
	}
	return false;
}

static void check_method(stats *S, jinst_class *c, jinst_member *m, const char *cname)
{
	jinst_attr *ca = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	if (!ca)
		return;
	jinst_code *orig;
	if (jinst_attr_decode(c, ca, (void **)&orig, NULL))
		return;
	char mname[300];
	uint16_t nl, dl;
	const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(m), &nl);
	const uint8_t *d = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &dl);
	snprintf(mname, sizeof(mname), "%.*s%.*s", n ? nl : 0, n ? (const char *)n : "", d ? dl : 0,
	         d ? (const char *)d : "");
	bool old = jinst_class_major_version(c) < 50;
	S->methods++;
	if (uses_jsr(c, orig)) {
		/* No compiler writes frames for jsr code: inlined, it must infer. */
		S->jsr_methods++;
		if (old)
			S->jsr_old_methods++;
		jinst_code code = *orig;
		jinst_diag diag = {0};
		uint32_t copies = 0, runs = 0;
		jinst_full_frame *frames;
		uint32_t nframes;
		int rc = jinst_code_inline_subroutines(c, &code, &copies, &diag);
		if (!rc)
			rc = jinst_code_patch_unreachable(c, &code, &runs, &diag);
		if (!rc)
			rc = jinst_frames_infer(c, m, &code, &(jinst_hierarchy){lookup, S->h}, &frames, &nframes, &diag);
		if (rc == JINST_EHIERARCHY) {
			S->err_hierarchy++;
		} else if (rc) {
			S->err_jsr++;
			char buf[600];
			jinst_diag_format(&diag, buf, sizeof(buf));
			show(S, cname, mname, buf);
		}
		return;
	}
	if (old) {
		S->old_methods++;
		return;
	}
	jinst_code code = *orig; /* the patch must not touch the model other tests may see */
	jinst_diag diag = {0};
	uint32_t runs = 0;
	int rc = jinst_code_patch_unreachable(c, &code, &runs, &diag);
	if (!rc && runs) {
		S->patched_methods++;
		S->patched_runs += runs;
	}
	jinst_full_frame *ours = NULL;
	uint32_t nours = 0;
	if (!rc)
		rc = jinst_frames_infer(c, m, &code, &(jinst_hierarchy){lookup, S->h}, &ours, &nours, &diag);
	if (rc) {
		char buf[600];
		jinst_diag_format(&diag, buf, sizeof(buf));
		if (rc == JINST_EHIERARCHY) {
			S->err_hierarchy++;
		} else {
			S->err_other++;
			show(S, cname, mname, buf);
		}
		return;
	}
	jinst_attr *sa = jinst_attr_find(&orig->attrs, JINST_ATTR_STACK_MAP_TABLE);
	jinst_stack_map *map = NULL;
	if (sa && jinst_attr_decode(c, sa, (void **)&map, NULL))
		return;
	jinst_full_frame *theirs = NULL;
	uint32_t ntheirs = map ? map->count : 0;
	if (map && jinst_stack_map_expand(c, m, map, &theirs, NULL))
		return;
	S->frames_ours += nours;
	S->frames_theirs += ntheirs;
	int worst = SAME;
	uint32_t i = 0, k = 0;
	while (i < nours || k < ntheirs) {
		if (k >= ntheirs || (i < nours && ours[i].offset < theirs[k].offset)) {
			/* A frame the compiler did not write: only where code was patched
			 * (the compiler's dead code had none) is that expected. */
			S->extra_frames++;
			if (!runs) {
				worst = SUSPECT;
				char what[80];
				snprintf(what, sizeof(what), "extra frame at pc %u", (unsigned)ours[i].offset);
				show(S, cname, mname, what);
			}
			i++;
			continue;
		}
		if (i >= nours || theirs[k].offset < ours[i].offset) {
			if (frame_needed(c, &code, theirs[k].offset)) {
				worst = SUSPECT;
				char what[80];
				snprintf(what, sizeof(what), "no frame at pc %u", (unsigned)theirs[k].offset);
				show(S, cname, mname, what);
			} else {
				S->unneeded_frames++;
				worst = worst > NARROWER ? worst : NARROWER;
			}
			k++;
			continue;
		}
		if (runs && ours[i].nlocals == 0 && ours[i].nstack == 1 && ours[i].stack[0].tag == JINST_VT_OBJECT &&
		    ours[i].stack[0].name_length == 19 && memcmp(ours[i].stack[0].name, "java/lang/Throwable", 19) == 0 &&
		    code.code[ours[i].offset] != orig->code[ours[i].offset]) {
			S->dead_frames++; /* the compiler's frame of code that is now nop ... athrow */
			i++;
			k++;
			continue;
		}
		int w = compare_frames(S, &ours[i], &theirs[k]);
		if (w == SUSPECT) {
			char what[300];
			snprintf(what, sizeof(what), "frame at pc %u differs: %s", (unsigned)ours[i].offset, S->why);
			show(S, cname, mname, what);
		}
		worst = w > worst ? w : worst;
		i++;
		k++;
	}
	if (worst == SAME)
		S->identical++;
	else
		S->differing++;
	if (worst == SUSPECT)
		S->suspect_methods++;
}

static int check_class(void *ctx, const char *name, const uint8_t *bytes, size_t len)
{
	stats *S = ctx;
	if (!corpus_sampled(name, S->sample))
		return 0;
	jinst_arena_reset(S->arena);
	jinst_class *c;
	if (jinst_class_parse(&c, bytes, len, S->arena, NULL, NULL))
		return 0;
	S->classes++;
	uint16_t nl;
	const uint8_t *n = jinst_class_name(c, &nl);
	char cname[512];
	snprintf(cname, sizeof(cname), "%.*s", n ? nl : 0, n ? (const char *)n : name);
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++)
		check_method(S, c, jinst_class_method(c, i), cname);
	jinst_class_free(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_infer_corpus CORPUS [HIERARCHY_PATH...]\n");
		return 2;
	}
	struct stat st;
	if (stat(argv[1], &st) != 0) {
		printf("corpus %s not present: skipped\n", argv[1]);
		return 77;
	}
	hmap h = {0};
	for (int i = 1; i < argc; i++)
		jinst_walk(argv[i], NULL, 0, collect, walk_error, &h);
	stats S = {.h = &h, .sample = corpus_sample()};
	if (jinst_arena_new(&S.arena))
		return 1;
	jinst_walk(argv[1], NULL, 0, check_class, walk_error, &S);
	printf("%lu classes in the hierarchy\n", (unsigned long)h.count);
	printf("%lu classes, %lu methods with code; %lu of them in versions < 50 (no frames)\n", S.classes, S.methods,
	       S.old_methods);
	printf("jsr/ret: %lu methods (%lu in versions < 50), inlined and inferred but %lu\n", S.jsr_methods,
	       S.jsr_old_methods, S.err_jsr);
	printf("unreachable code patched: %lu methods, %lu runs; %lu frames of the compilers there replaced\n",
	       S.patched_methods, S.patched_runs, S.dead_frames);
	printf("frames: %lu inferred, %lu written by the compilers; %lu of ours where they wrote none, %lu of"
	       " theirs the verifier does not need\n", S.frames_ours, S.frames_theirs, S.extra_frames, S.unneeded_frames);
	printf("methods: %lu identical frames, %lu differing (%lu suspect)\n", S.identical, S.differing, S.suspect_methods);
	printf("types that differ: %lu narrower, %lu wider, %lu beyond the hierarchy, %lu suspect (%lu same)\n",
	       S.types[NARROWER], S.types[WIDER], S.types[UNKNOWN], S.types[SUSPECT], S.types[SAME]);
	printf("errors: %lu class unknown to the hierarchy, %lu other\n", S.err_hierarchy, S.err_other);
	jinst_arena_free(S.arena);
	for (size_t i = 0; i < h.cap; i++) {
		free(h.slots[i].name);
		free(h.slots[i].super);
	}
	free(h.slots);
	bool ok = S.classes > 0 && S.suspect_methods == 0 && S.err_other == 0 && S.err_jsr == 0;
	printf("%s\n", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
