/*
 * The code patcher (include/jinst/patch.h) against the code editor over a
 * corpus: every method of every class (.class files and the .class entries
 * of .jar files under the folders) gets the same insertions once through
 * the patcher and once through the editor; both classes are written and
 * read again, and for each method the two results must agree: the same
 * code bytes, exception table, max_locals, line and local variable tables,
 * the same frames once expanded (the editor may encode a frame in another
 * compressed form, and it may add constants), and a max_stack of the
 * patcher's at least the editor's (the editor's is exact, the patcher's
 * conservative). Methods the patcher declines are counted by reason.
 *
 *   patch_check [--everywhere|--handler] [--pop] [--out DIR] [--limit N] FOLDER...
 *
 * Default: the tracing shape of bench/frames: `sipush id; invokestatic
 * enter(I)V` outside the first instruction, `sipush id; invokestatic
 * exit(I)V` inside every *return.
 * --everywhere: before every instruction, outside or inside by a
 * pseudo-random draw (outside for the first one), 1 to 4 bytes of `nop`s
 * or `iconst_0; pop`, so that every switch meets every padding and every
 * branch, table entry and frame moves by varied amounts.
 * --handler: the tracing shape plus the trace pass's catch-all: a handler
 * appended after the code (`sipush id; invokestatic exitThrow(I)V;
 * athrow`, with --pop `nop; athrow`) over the whole original code, its
 * frame locals [] and stack [Throwable]; constructors get none (their
 * range starts after the super() call, which the trace pass finds).
 * --pop: `iconst_0; pop` instead of the hook calls (nothing to resolve:
 * a JDK's own boot classes can run it).
 * --out DIR: writes the patched classes under DIR (for tests/jvm/verify.sh).
 *
 * Exit status: 0 when every method agrees, 1 otherwise, 77 without classes.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jinst/edit.h"
#include "jinst/patch.h"
#include "check_walk.h"

static struct {
	unsigned long classes, class_failed, identical, methods, patched, declined, both_failed, mismatched, insertions;
} st;

static bool everywhere, pop_mode, handler_mode;
static const char *out_dir;
static unsigned long limit;

typedef struct reason {
	char text[96];
	unsigned long count;
	char example[200];
} reason;
static reason reasons[128];
static int nreasons;

static void count_reason(const char *what, const char *message, const char *where)
{
	char key[96];
	snprintf(key, sizeof(key), "%s: %.70s", what, message);
	for (char *p = key; *p; p++)
		if (*p >= '0' && *p <= '9')
			*p = '#';
	for (int i = 0; i < nreasons; i++)
		if (strcmp(reasons[i].text, key) == 0) {
			reasons[i].count++;
			return;
		}
	if (nreasons < 128) {
		reason *r = &reasons[nreasons++];
		snprintf(r->text, sizeof(r->text), "%s", key);
		r->count = 1;
		snprintf(r->example, sizeof(r->example), "%s", where);
	}
}

/* One insertion: its bytes, and the same as instructions for the editor. */
typedef struct seq {
	uint8_t bytes[6];
	uint32_t len;
	uint16_t depth;
	jinst_insn insns[4];
	uint32_t n;
} seq;

static seq hook_seq(int32_t id, uint16_t ref)
{
	seq s = {{0x11, (uint8_t)(id >> 8), (uint8_t)id, 0xb8, (uint8_t)(ref >> 8), (uint8_t)ref}, 6, 1, {{0}}, 2};
	s.insns[0] = (jinst_insn){.opcode = JINST_OP_SIPUSH, .operand = id};
	s.insns[1] = (jinst_insn){.opcode = JINST_OP_INVOKESTATIC, .operand = ref};
	if (pop_mode) {
		s = (seq){{0x03, 0x57}, 2, 1, {{0}}, 2};
		s.insns[0] = (jinst_insn){.opcode = JINST_OP_ICONST_0};
		s.insns[1] = (jinst_insn){.opcode = JINST_OP_POP};
	}
	return s;
}

/* 1-4 bytes: nops, or iconst_0; pop (then nops). */
static seq filler(uint32_t draw)
{
	seq s = {{0}, 1 + draw % 4, 0, {{0}}, 0};
	s.n = s.len;
	uint32_t k = 0;
	if (draw & 4 && s.len >= 2) {
		s.bytes[0] = JINST_OP_ICONST_0;
		s.bytes[1] = JINST_OP_POP;
		s.insns[0] = (jinst_insn){.opcode = JINST_OP_ICONST_0};
		s.insns[1] = (jinst_insn){.opcode = JINST_OP_POP};
		s.depth = 1;
		k = 2;
	}
	for (; k < s.len; k++) {
		s.bytes[k] = JINST_OP_NOP;
		s.insns[k] = (jinst_insn){.opcode = JINST_OP_NOP};
	}
	return s;
}

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	return x ^ (x >> 16);
}

/* The plan for one method: where, how, what; the same for both paths. */
typedef struct plan_item {
	uint32_t offset;
	enum jinst_where where;
	seq s;
} plan_item;

static uint32_t make_plan(const uint16_t *offs, uint32_t n, const uint8_t *code, uint32_t salt, uint16_t enter,
                          uint16_t exit_, plan_item *out)
{
	uint32_t k = 0;
	int32_t id = (int32_t)(salt & 0x7fff);
	if (!everywhere) {
		out[k++] = (plan_item){0, JINST_BEFORE_OUTSIDE, hook_seq(id, enter)};
		for (uint32_t i = 0; i < n; i++)
			if (jinst_opcodes[code[offs[i]]].flags & JINST_OPF_RETURN)
				out[k++] = (plan_item){offs[i], JINST_BEFORE_INSIDE, hook_seq(id, exit_)};
		return k;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t d = mix(salt * 65599u + offs[i]);
		/* Outside code after goto, a switch, a return, athrow or ret would
		 * be reached by nothing (the patcher declines it): inside there. */
		uint8_t prev = i ? code[offs[i - 1]] : 0;
		if (prev == JINST_OP_WIDE)
			prev = code[offs[i - 1] + 1];
		bool dead = jinst_opcodes[prev].flags & JINST_OPF_UNCONDITIONAL;
		bool outside = i == 0 || (!dead && (d & 8));
		out[k++] = (plan_item){offs[i], outside ? JINST_BEFORE_OUTSIDE : JINST_BEFORE_INSIDE, filler(d)};
	}
	return k;
}

/* The catch-all of --handler: its code as bytes and as instructions. */
typedef struct handler {
	bool on;
	uint8_t bytes[8];
	uint32_t len;
	jinst_insn insns[4];
	uint32_t n;
} handler;

static handler make_handler(int32_t id, uint16_t exit_throw)
{
	handler h = {true, {0x11, (uint8_t)(id >> 8), (uint8_t)id, 0xb8, (uint8_t)(exit_throw >> 8), (uint8_t)exit_throw, 0xbf},
	             7, {{0}}, 3};
	h.insns[0] = (jinst_insn){.opcode = JINST_OP_SIPUSH, .operand = id};
	h.insns[1] = (jinst_insn){.opcode = JINST_OP_INVOKESTATIC, .operand = exit_throw};
	h.insns[2] = (jinst_insn){.opcode = JINST_OP_ATHROW};
	if (pop_mode) {
		h = (handler){true, {0x00, 0xbf}, 2, {{0}}, 2};
		h.insns[0] = (jinst_insn){.opcode = JINST_OP_NOP};
		h.insns[1] = (jinst_insn){.opcode = JINST_OP_ATHROW};
	}
	return h;
}

static int run_patch(jinst_class *c, jinst_member *m, const plan_item *plan, uint32_t k, const handler *h,
                     jinst_diag *d)
{
	jinst_patch *p;
	int rc = jinst_patch_open(&p, c, m, d);
	for (uint32_t i = 0; !rc && i < k; i++)
		rc = jinst_patch_insert(p, plan[i].offset, plan[i].where, plan[i].s.bytes, plan[i].s.len, plan[i].s.depth);
	if (!rc && h->on) {
		uint32_t len;
		jinst_patch_code(p, &len);
		rc = jinst_patch_set_handler(p, h->bytes, h->len, 1, 0);
		if (!rc)
			rc = jinst_patch_add_range(p, 0, len);
	}
	if (!rc)
		rc = jinst_patch_commit(p, d);
	return rc;
}

static int run_edit(jinst_class *c, jinst_member *m, const plan_item *plan, uint32_t k, const handler *h,
                    jinst_diag *d)
{
	jinst_edit *ed;
	int rc = jinst_edit_open(&ed, c, m, NULL, d);
	if (rc)
		return rc;
	/* As the trace pass does it (instrument/trace.c): the range's labels first. */
	jinst_label start = JINST_NO_LABEL, hl = JINST_NO_LABEL;
	if (h->on)
		rc = jinst_edit_label_at(ed, 0, &start);
	for (uint32_t i = 0; !rc && i < k; i++)
		rc = jinst_edit_insert(ed, jinst_edit_at(ed, plan[i].offset), plan[i].where, plan[i].s.insns, plan[i].s.n,
		                       NULL);
	if (!rc && h->on) {
		jinst_insn hs[5] = {{.opcode = JINST_OP_LABEL}};
		rc = jinst_edit_new_label(ed, &hl);
		hs[0].operand = (int32_t)hl;
		memcpy(&hs[1], h->insns, h->n * sizeof(*h->insns));
		if (!rc)
			rc = jinst_edit_insert(ed, NULL, JINST_AFTER, hs, h->n + 1, NULL);
		static const char throwable[] = "java/lang/Throwable";
		jinst_ftype t = {JINST_VT_OBJECT, 0, sizeof(throwable) - 1, (const uint8_t *)throwable};
		jinst_full_frame fr = {0, 0, 1, NULL, &t};
		if (!rc)
			rc = jinst_edit_set_frame(ed, hl, &fr);
		if (!rc)
			rc = jinst_edit_add_handler(ed, start, jinst_edit_end_label(ed), hl, 0);
	}
	if (!rc)
		rc = jinst_edit_commit(ed, d);
	jinst_edit_free(ed);
	return rc;
}

static jinst_code *code_of(jinst_class *c, jinst_member *m)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	void *model;
	if (!a || jinst_attr_decode(c, a, &model, NULL))
		return NULL;
	return model;
}

static void *sub_model(jinst_class *c, jinst_code *code, enum jinst_attr_kind kind, bool *bad)
{
	jinst_attr *a = jinst_attr_find(&code->attrs, kind);
	void *model = NULL;
	if (a && jinst_attr_decode(c, a, &model, NULL))
		*bad = true;
	return model;
}

static bool same_lvt(const jinst_local_variables *x, const jinst_local_variables *y)
{
	if (!x || !y)
		return x == y;
	return x->count == y->count && (!x->count || !memcmp(x->items, y->items, x->count * sizeof(*x->items)));
}

/* "" when method i of the two classes agrees, else what differs. */
static const char *compare_method(jinst_class *pc, jinst_class *ec, uint16_t i)
{
	jinst_member *pm = jinst_class_method(pc, i), *em = jinst_class_method(ec, i);
	jinst_code *p = code_of(pc, pm), *e = code_of(ec, em);
	if (!p || !e)
		return p || e ? "Code present in one only, or undecodable" : "";
	if (p->code_length != e->code_length || memcmp(p->code, e->code, p->code_length))
		return "code bytes differ";
	if (p->max_locals != e->max_locals)
		return "max_locals differs";
	if (p->max_stack < e->max_stack)
		return "max_stack below the editor's";
	if (p->exception_count != e->exception_count)
		return "exception table lengths differ";
	for (uint32_t k = 0; k < p->exception_count; k++)
		if (memcmp(&p->exceptions[k], &e->exceptions[k], sizeof(p->exceptions[k])))
			return "exception table differs";
	bool bad = false;
	const jinst_line_numbers *pl = sub_model(pc, p, JINST_ATTR_LINE_NUMBER_TABLE, &bad),
	                         *el = sub_model(ec, e, JINST_ATTR_LINE_NUMBER_TABLE, &bad);
	if (bad)
		return "a table does not decode";
	if (!pl != !el || (pl && (pl->count != el->count ||
	                          (pl->count && memcmp(pl->items, el->items, pl->count * sizeof(*pl->items))))))
		return "LineNumberTable differs";
	if (!same_lvt(sub_model(pc, p, JINST_ATTR_LOCAL_VARIABLE_TABLE, &bad),
	              sub_model(ec, e, JINST_ATTR_LOCAL_VARIABLE_TABLE, &bad)))
		return "LocalVariableTable differs";
	if (!same_lvt(sub_model(pc, p, JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE, &bad),
	              sub_model(ec, e, JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE, &bad)))
		return "LocalVariableTypeTable differs";
	const jinst_stack_map *ps = sub_model(pc, p, JINST_ATTR_STACK_MAP_TABLE, &bad),
	                      *es = sub_model(ec, e, JINST_ATTR_STACK_MAP_TABLE, &bad);
	if (bad)
		return "a table does not decode";
	uint32_t pn = ps ? ps->count : 0, en = es ? es->count : 0;
	if (pn != en)
		return "frame counts differ";
	if (!pn)
		return "";
	jinst_full_frame *pf, *ef;
	if (jinst_stack_map_expand(pc, pm, ps, &pf, NULL) || jinst_stack_map_expand(ec, em, es, &ef, NULL))
		return "frames do not expand";
	for (uint32_t k = 0; k < pn; k++) {
		if (pf[k].offset != ef[k].offset || pf[k].nlocals != ef[k].nlocals || pf[k].nstack != ef[k].nstack)
			return "frame offsets or sizes differ";
		for (uint32_t j = 0; j < pf[k].nlocals; j++)
			if (!jinst_ftype_equal(&pf[k].locals[j], &ef[k].locals[j]))
				return "frame locals differ";
		for (uint32_t j = 0; j < pf[k].nstack; j++)
			if (!jinst_ftype_equal(&pf[k].stack[j], &ef[k].stack[j]))
				return "frame stacks differ";
	}
	return "";
}

static void check_class(const uint8_t *bytes, size_t len, const char *name)
{
	if (limit && st.classes >= limit)
		return;
	st.classes++;
	jinst_arena *pa, *ea;
	if (jinst_arena_new(&pa) || jinst_arena_new(&ea)) {
		fprintf(stderr, "patch_check: out of memory\n");
		exit(1);
	}
	jinst_class *pc, *ec;
	jinst_diag d;
	if (jinst_class_parse(&pc, bytes, len, pa, NULL, &d) || jinst_class_parse(&ec, bytes, len, ea, NULL, &d)) {
		jinst_arena_free(pa);
		jinst_arena_free(ea);
		return; /* not a class this library reads: nothing to compare */
	}
	uint16_t penter = 0, pexit = 0, eenter = 0, eexit = 0, pthrow = 0, ethrow = 0;
	if (!everywhere && !pop_mode &&
	    (jinst_cp_add_methodref(pc, "jinst/rt/Hooks", "enter", "(I)V", &penter) ||
	     jinst_cp_add_methodref(pc, "jinst/rt/Hooks", "exit", "(I)V", &pexit) ||
	     jinst_cp_add_methodref(ec, "jinst/rt/Hooks", "enter", "(I)V", &eenter) ||
	     jinst_cp_add_methodref(ec, "jinst/rt/Hooks", "exit", "(I)V", &eexit) || penter != eenter ||
	     pexit != eexit ||
	     (handler_mode && (jinst_cp_add_methodref(pc, "jinst/rt/Hooks", "exitThrow", "(I)V", &pthrow) ||
	                       jinst_cp_add_methodref(ec, "jinst/rt/Hooks", "exitThrow", "(I)V", &ethrow) ||
	                       pthrow != ethrow)))) {
		st.class_failed++;
		count_reason("class", "hook constants differ or fail", name);
		goto done;
	}
	uint16_t nm = jinst_class_method_count(pc);
	bool *cmp = calloc(nm + 1u, 1);
	for (uint16_t i = 0; i < nm; i++) {
		jinst_member *pm = jinst_class_method(pc, i), *em = jinst_class_method(ec, i);
		if (!jinst_attr_find(jinst_member_attrs(pm), JINST_ATTR_CODE))
			continue;
		st.methods++;
		/* The plan comes from the patcher's walk; without one, from the editor's list. */
		jinst_patch *probe;
		jinst_diag pd, ed;
		int prc = jinst_patch_open(&probe, pc, pm, &pd);
		uint32_t n = 0, code_len = 0;
		const uint16_t *offs = prc ? NULL : jinst_patch_offsets(probe, &n);
		const uint8_t *code = prc ? NULL : jinst_patch_code(probe, &code_len);
		plan_item *plan = malloc((n + 1) * sizeof(*plan));
		uint32_t k = prc ? 0 : make_plan(offs, n, code, (uint32_t)st.methods, penter, pexit, plan);
		handler h = {0};
		uint16_t nl;
		const uint8_t *mn = jinst_cp_utf8(pc, jinst_member_name_index(pm), &nl);
		if (handler_mode && !(mn && nl == 6 && memcmp(mn, "<init>", 6) == 0))
			h = make_handler((int32_t)(st.methods & 0x7fff), pthrow);
		if (!prc)
			prc = run_patch(pc, pm, plan, k, &h, &pd);
		if (prc) {
			/* declined: the editor does it, as every user of the patcher does */
			st.declined++;
			char where[200];
			snprintf(where, sizeof(where), "%s method #%u", name, (unsigned)i);
			count_reason(jinst_strerror(prc), pd.message, where);
			free(plan);
			continue;
		}
		st.insertions += k;
		int erc = run_edit(ec, em, plan, k, &h, &ed);
		free(plan);
		if (erc) {
			/* The editor refuses what the patcher did (a limit it meets
			 * first, say): not comparable, so not counted as agreeing. */
			st.both_failed++;
			char where[200];
			snprintf(where, sizeof(where), "%s method #%u", name, (unsigned)i);
			count_reason("editor failed where the patcher did not", ed.message, where);
			continue;
		}
		st.patched++;
		cmp[i] = true;
	}
	uint8_t *pout, *eout;
	size_t plen, elen;
	if (jinst_class_write(pc, NULL, &pout, &plen, &d)) {
		st.class_failed++;
		count_reason("write (patched)", d.message, name);
		free(cmp);
		goto done;
	}
	if (jinst_class_write(ec, NULL, &eout, &elen, &d)) {
		st.class_failed++;
		count_reason("write (edited)", d.message, name);
		free(pout);
		free(cmp);
		goto done;
	}
	if (out_dir) {
		/* HotSpot relies on java/lang/Object's code being javac's (its
		 * <init> is a lone `return` the VM rewrites to register
		 * finalizers, and an empty finalize() means none): a patched
		 * Object crashes the VM at start-up, so it is written as it was
		 * (compared all the same). */
		uint16_t cn_len;
		const uint8_t *cn = jinst_class_name(pc, &cn_len);
		if (cn && cn_len == 16 && memcmp(cn, "java/lang/Object", 16) == 0)
			check_write_out(out_dir, name, bytes, len);
		else
			check_write_out(out_dir, name, pout, plen);
	}
	if (plen == elen && memcmp(pout, eout, plen) == 0) {
		st.identical++;
	} else {
		jinst_arena *ra, *rb;
		jinst_class *pr, *er;
		if (jinst_arena_new(&ra) || jinst_arena_new(&rb))
			exit(1);
		if (jinst_class_parse(&pr, pout, plen, ra, NULL, &d) || jinst_class_parse(&er, eout, elen, rb, NULL, &d)) {
			st.class_failed++;
			count_reason("output does not parse", d.message, name);
		} else {
			for (uint16_t i = 0; i < nm; i++) {
				if (!cmp[i])
					continue;
				const char *why = compare_method(pr, er, i);
				if (*why) {
					st.mismatched++;
					char where[200];
					snprintf(where, sizeof(where), "%s method #%u", name, (unsigned)i);
					count_reason("MISMATCH", why, where);
				}
			}
		}
		jinst_arena_free(ra);
		jinst_arena_free(rb);
	}
	free(pout);
	free(eout);
	free(cmp);
done:
	jinst_arena_free(pa);
	jinst_arena_free(ea);
}

int main(int argc, char **argv)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--everywhere") == 0)
			everywhere = true;
		else if (strcmp(argv[i], "--handler") == 0)
			handler_mode = true;
		else if (strcmp(argv[i], "--pop") == 0)
			pop_mode = true;
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out_dir = argv[++i];
		else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
			limit = strtoul(argv[++i], NULL, 10);
		else
			break;
	}
	if (i >= argc || argv[i][0] == '-') {
		fprintf(stderr, "usage: patch_check [--everywhere|--handler] [--pop] [--out DIR] [--limit N] FOLDER...\n");
		return 2;
	}
	/* A tree written for HotSpot is whole (tests/jvm samples what it verifies). */
	unsigned long sample = out_dir ? 1 : corpus_sample();
	for (; i < argc; i++)
		check_walk(argv[i], check_class, sample);
	for (int r = 0; r < nreasons; r++)
		printf("  %6lu  %s  e.g. %s\n", reasons[r].count, reasons[r].text, reasons[r].example);
	printf("%lu classes, %lu identical to the editor's, %lu failed; %lu methods: %lu patched and compared, "
	       "%lu declined (editor), %lu the editor refused, %lu mismatched; %lu insertions\n",
	       st.classes, st.identical, st.class_failed, st.methods, st.patched, st.declined, st.both_failed,
	       st.mismatched, st.insertions);
	return st.classes == 0 ? 77 : (st.mismatched || st.class_failed) ? 1 : 0;
}
