/*
 * The editor's property check over a corpus: for every method of every
 * class under a folder (.class files and the .class entries of .jar files),
 * edit the code through include/jinst/edit.h with kept/derived frames only,
 * write the class, parse it again, and check that every edited method's
 * code decodes and its StackMapTable expands.
 *
 *   edit_check [--hooks] [--out DIR] [--limit N] FOLDER...
 *
 * Default edit: `sipush N; invokestatic jinstedit/Probe.probe(I)V` before every
 * original instruction (inside its labels; outside for the first one).
 * --hooks: the tracing pass's shape instead: an entry call outside the
 * first instruction (in constructors after the super()/this() call), an
 * exit call inside every *return, and a catch-all handler appended at the
 * end that calls exitThrow and rethrows, its range from after the entry
 * code (or the constructor call) to the end of the code.
 * --times: the same with a long local holding System.nanoTime() from the
 * entry on, declared in every kept frame, passed to exit(IJ)V and
 * exitThrow(IJ)V (the tracing pass's `times` mode).
 * --edges: the taken edge of every conditional branch through a trampoline
 * at the end of the code that calls probe (a coverage pass's shape), its
 * frame from jinst_edit_frame_before.
 * --pop: `iconst_0; pop` before every instruction instead (no class to
 * resolve: the JDK's own boot classes run it).
 * --out DIR: writes the edited classes under DIR (for a JVM to verify).
 *
 * Prints counts, failures by reason and the input throughput. Methods the
 * editor refuses with JINST_ETOOLARGE (a JVMS limit, the method left as it
 * was) are counted apart and do not fail the check.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "jinst/edit.h"
#include "check_walk.h"

static struct {
	unsigned long classes, class_failed, methods, edited, skipped_no_code, failed, too_large, insns, jsr;
	double bytes;
	double seconds;
} st;

typedef struct reason {
	char text[96];
	unsigned long count;
	char example[200];
} reason;
static reason reasons[256];
static int nreasons;

static bool hooks_mode, times_mode, edges_mode;
static const char *out_dir;
static bool pop_mode;
static unsigned long limit;

static void count_reason(const char *what, const jinst_diag *d, const char *where)
{
	char key[96];
	snprintf(key, sizeof(key), "%s %s: %.60s", what, jinst_strerror(d->code), d->message);
	/* Collapse numbers so similar failures group. */
	for (char *p = key; *p; p++)
		if (*p >= '0' && *p <= '9')
			*p = '#';
	for (int i = 0; i < nreasons; i++)
		if (strcmp(reasons[i].text, key) == 0) {
			reasons[i].count++;
			return;
		}
	if (nreasons < 256) {
		reason *r = &reasons[nreasons++];
		snprintf(r->text, sizeof(r->text), "%s", key);
		r->count = 1;
		snprintf(r->example, sizeof(r->example), "%s (%s)", where, d->where);
	}
}

static bool is_ctor(jinst_class *c, jinst_member *m)
{
	uint16_t len;
	const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(m), &len);
	return n && len == 6 && memcmp(n, "<init>", 6) == 0;
}

/* The invokespecial <init> that initializes `this` in a constructor: the
 * first one whose receiver is local 0, found by a depth walk of the
 * straight-line start (javac's shape; good enough for the check). */
static jinst_node *super_call(jinst_edit *ed, jinst_class *c)
{
	int pending_new = 0;
	for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n)) {
		const jinst_insn *in = jinst_node_insn(n);
		if (!in)
			continue;
		if (in->opcode == JINST_OP_NEW)
			pending_new++;
		if (in->opcode == JINST_OP_INVOKESPECIAL) {
			jinst_cp_entry e, nat;
			uint16_t len;
			if (jinst_cp_get(c, (uint16_t)in->operand, &e) || jinst_cp_get(c, e.u.ref.name_and_type_index, &nat))
				return NULL;
			const uint8_t *name = jinst_cp_utf8(c, nat.u.nat.name_index, &len);
			if (name && len == 6 && memcmp(name, "<init>", 6) == 0) {
				if (!pending_new)
					return n;
				pending_new--;
			}
		}
		uint8_t op = in->opcode;
		if ((op >= JINST_OP_IFEQ && op <= JINST_OP_JSR) || op == JINST_OP_TABLESWITCH || op == JINST_OP_LOOKUPSWITCH || op == JINST_OP_IFNULL || op == JINST_OP_IFNONNULL || op == JINST_OP_GOTO_W ||
		    op == JINST_OP_JSR_W || (op >= JINST_OP_IRETURN && op <= JINST_OP_RETURN) || op == JINST_OP_ATHROW)
			return NULL; /* control flow before the call: not handled here */
	}
	return NULL;
}

static int edit_probe(jinst_class *c, jinst_edit *ed, uint16_t probe)
{
	int k = 0;
	jinst_node *first = jinst_edit_first_insn(ed);
	for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n)) {
		if (!jinst_node_insn(n) || jinst_node_original_offset(n) == JINST_NO_OFFSET)
			continue;
		jinst_insn seq[2] = {{.opcode = JINST_OP_SIPUSH, .operand = k++ & 0x7fff}, {.opcode = JINST_OP_INVOKESTATIC, .operand = probe}};
		if (pop_mode) { /* iconst_0; pop: no class to resolve, so boot classes can run it */
			seq[0] = (jinst_insn){.opcode = JINST_OP_ICONST_0};
			seq[1] = (jinst_insn){.opcode = JINST_OP_POP};
		}
		int rc = jinst_edit_insert(ed, n, n == first ? JINST_BEFORE_OUTSIDE : JINST_BEFORE_INSIDE, seq, 2, NULL);
		if (rc)
			return rc;
		st.insns++;
	}
	(void)c;
	return 0;
}

/* --edges: the taken edge of every conditional branch goes through a
 * trampoline at the end of the code (a coverage probe's shape):
 *   if<cond> T   ->   if<cond> P ... P: sipush k; invokestatic probe; goto T
 * P's frame is the frame before the branch minus what the branch pops. */
static int edit_edges(jinst_class *c, jinst_edit *ed, uint16_t probe)
{
	bool frames = jinst_class_major_version(c) >= 50;
	int k = 0;
	for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n)) {
		const jinst_insn *in = jinst_node_insn(n);
		if (!in || jinst_node_original_offset(n) == JINST_NO_OFFSET ||
		    !((in->opcode >= JINST_OP_IFEQ && in->opcode <= JINST_OP_IF_ACMPNE) || in->opcode == JINST_OP_IFNULL || in->opcode == JINST_OP_IFNONNULL))
			continue;
		jinst_label p;
		jinst_diag d;
		int rc = jinst_edit_new_label(ed, &p);
		if (rc)
			return rc;
		if (frames) {
			jinst_full_frame f;
			rc = jinst_edit_frame_before(ed, n, &f, &d);
			if (rc)
				return rc;
			uint16_t pops = in->opcode >= JINST_OP_IF_ICMPEQ && in->opcode <= JINST_OP_IF_ACMPNE ? 2 : 1;
			if (f.nstack < pops)
				return JINST_EMALFORMED;
			f.nstack = (uint16_t)(f.nstack - pops);
			rc = jinst_edit_set_frame(ed, p, &f);
			if (rc)
				return rc;
		}
		jinst_insn t[4] = {{.opcode = JINST_OP_LABEL, .operand = (int32_t)p},
		                   {.opcode = JINST_OP_SIPUSH, .operand = k++ & 0x7fff},
		                   {.opcode = JINST_OP_INVOKESTATIC, .operand = probe},
		                   {.opcode = JINST_OP_GOTO, .operand = in->operand}};
		jinst_insn b = {.opcode = in->opcode, .operand = (int32_t)p};
		jinst_node *next = jinst_node_next(n);
		rc = jinst_edit_insert(ed, NULL, JINST_AFTER, t, 4, NULL);
		if (!rc)
			rc = jinst_edit_replace(ed, n, &b, 1);
		if (rc)
			return rc;
		st.insns++;
		n = jinst_node_prev(next); /* the replacement */
	}
	return 0;
}

static int edit_hooks(jinst_class *c, jinst_member *m, jinst_edit *ed, uint16_t enter, uint16_t exit,
                      uint16_t exit_throw, uint16_t nano, int id)
{
	/* --times: a new long local holds System.nanoTime() from the entry on;
	 * the exits pass it along: exit(IJ)V, exitThrow(IJ)V. */
	uint16_t t0 = 0;
	if (times_mode) {
		jinst_ftype lt = {JINST_VT_LONG, 0, 0, NULL};
		int rc = jinst_edit_new_local(ed, JINST_VT_LONG, &t0);
		if (!rc)
			rc = jinst_edit_declare_local(ed, t0, &lt);
		if (rc)
			return rc;
	}
	jinst_insn entry[4] = {{.opcode = JINST_OP_SIPUSH, .operand = id}, {.opcode = JINST_OP_INVOKESTATIC, .operand = enter},
	                       {.opcode = JINST_OP_INVOKESTATIC, .operand = nano}, {.opcode = JINST_OP_LSTORE, .operand = t0}};
	jinst_insn ex[3] = {{.opcode = JINST_OP_SIPUSH, .operand = id}, {.opcode = JINST_OP_LLOAD, .operand = t0},
	                    {.opcode = JINST_OP_INVOKESTATIC, .operand = exit}};
	if (!times_mode)
		ex[1] = ex[2];
	uint32_t nentry = times_mode ? 4 : 2, nexit = times_mode ? 3 : 2;
	jinst_node *first = jinst_edit_first_insn(ed);
	/* Exits first, so the walk sees only original instructions. */
	for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n)) {
		const jinst_insn *in = jinst_node_insn(n);
		if (in && in->opcode >= JINST_OP_IRETURN && in->opcode <= JINST_OP_RETURN && jinst_node_original_offset(n) != JINST_NO_OFFSET) {
			int rc = jinst_edit_insert(ed, n, JINST_BEFORE_INSIDE, ex, nexit, NULL);
			if (rc)
				return rc;
		}
	}
	jinst_label start = JINST_NO_LABEL, handler = JINST_NO_LABEL;
	int rc = jinst_edit_new_label(ed, &start);
	if (!rc)
		rc = jinst_edit_new_label(ed, &handler);
	if (rc)
		return rc;
	if (is_ctor(c, m)) {
		jinst_node *call = super_call(ed, c);
		if (!call)
			return 1; /* skipped */
		rc = jinst_edit_place(ed, start, call, JINST_AFTER);
	} else {
		rc = jinst_edit_place(ed, start, first, JINST_BEFORE_OUTSIDE);
	}
	if (!rc)
		rc = jinst_edit_insert(ed, first, JINST_BEFORE_OUTSIDE, entry, nentry, NULL);
	jinst_insn h[5] = {{.opcode = JINST_OP_LABEL, .operand = (int32_t)handler},
	                   {.opcode = JINST_OP_SIPUSH, .operand = id},
	                   {.opcode = JINST_OP_LLOAD, .operand = t0},
	                   {.opcode = JINST_OP_INVOKESTATIC, .operand = exit_throw},
	                   {.opcode = JINST_OP_ATHROW}};
	if (!times_mode)
		h[2] = h[3], h[3] = h[4];
	if (!rc)
		rc = jinst_edit_insert(ed, NULL, JINST_AFTER, h, times_mode ? 5 : 4, NULL);
	if (!rc)
		rc = jinst_edit_add_handler(ed, start, jinst_edit_end_label(ed), handler, 0);
	if (!rc) {
		/* Locals [] (or top up to the long, which the handler reads), the
		 * Throwable on the stack. */
		jinst_ftype thr = {JINST_VT_OBJECT, 0, 19, (const uint8_t *)"java/lang/Throwable"};
		jinst_ftype *locals = NULL;
		uint16_t nlocals = 0;
		if (times_mode) {
			locals = calloc((size_t)t0 + 1, sizeof(*locals)); /* zeroed: top */
			if (!locals)
				return JINST_ENOMEM;
			locals[t0].tag = JINST_VT_LONG;
			nlocals = (uint16_t)(t0 + 1);
		}
		jinst_full_frame f = {0, nlocals, 1, locals, &thr};
		rc = jinst_edit_set_frame(ed, handler, &f);
		free(locals);
	}
	return rc;
}

static void check_class(const uint8_t *bytes, size_t len, const char *name)
{
	if (limit && st.classes >= limit)
		return;
	st.classes++;
	st.bytes += (double)len;
	struct timespec t0, t1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	jinst_class *c;
	jinst_diag d = {0};
	if (jinst_class_parse(&c, bytes, len, NULL, NULL, &d)) {
		st.class_failed++;
		count_reason("parse", &d, name);
		return;
	}
	/* HotSpot relies on java/lang/Object's code being javac's (its <init>
	 * is a lone `return` the VM rewrites to register finalizers): an edited
	 * Object crashes the VM at start-up, so it is written as it is. */
	uint16_t cn_len;
	const uint8_t *cn = jinst_class_name(c, &cn_len);
	if (cn && cn_len == 16 && memcmp(cn, "java/lang/Object", 16) == 0) {
		if (out_dir)
			check_write_out(out_dir, name, bytes, len);
		jinst_class_free(c);
		return;
	}
	uint16_t probe = 0, enter = 0, exit_ = 0, exit_throw = 0, nano = 0;
	const char *xd = times_mode ? "(IJ)V" : "(I)V";
	int rc = hooks_mode ? jinst_cp_add_methodref(c, "jinstedit/Calls", "enter", "(I)V", &enter) |
	                          jinst_cp_add_methodref(c, "jinstedit/Calls", "exit", xd, &exit_) |
	                          jinst_cp_add_methodref(c, "jinstedit/Calls", "exitThrow", xd, &exit_throw) |
	                          (times_mode ? jinst_cp_add_methodref(c, "java/lang/System", "nanoTime", "()J", &nano) : 0)
	                    : jinst_cp_add_methodref(c, "jinstedit/Probe", "probe", "(I)V", &probe);
	if (rc) {
		st.class_failed++;
		d.code = rc;
		snprintf(d.message, sizeof(d.message), "pool full");
		count_reason("pool", &d, name);
		jinst_class_free(c);
		return;
	}
	bool *edited = calloc(jinst_class_method_count(c) + 1u, 1);
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		st.methods++;
		if (!jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE)) {
			st.skipped_no_code++;
			continue;
		}
		jinst_edit *ed;
		rc = jinst_edit_open(&ed, c, m, NULL, &d);
		if (rc) {
			st.failed++;
			count_reason("open", &d, name);
			continue;
		}
		rc = hooks_mode ? edit_hooks(c, m, ed, enter, exit_, exit_throw, nano, i)
		     : edges_mode ? edit_edges(c, ed, probe) : edit_probe(c, ed, probe);
		if (rc == 1) {
			st.skipped_no_code++;
			jinst_edit_free(ed);
			continue;
		}
		if (rc) {
			st.failed++;
			d.code = rc;
			snprintf(d.message, sizeof(d.message), "insertion refused");
			count_reason("insert", &d, name);
			jinst_edit_free(ed);
			continue;
		}
		rc = jinst_edit_commit(ed, &d);
		if (rc == JINST_ETOOLARGE) {
			/* A JVMS limit refused, the method left as it was: what must happen. */
			st.too_large++;
			count_reason("refused", &d, name);
			jinst_edit_free(ed);
			continue;
		}
		if (rc) {
			st.failed++;
			count_reason("commit", &d, name);
			jinst_edit_free(ed);
			continue;
		}
		st.edited++;
		edited[i] = true;
		for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n))
			if (jinst_node_insn(n) && (jinst_node_insn(n)->opcode == JINST_OP_JSR || jinst_node_insn(n)->opcode == JINST_OP_JSR_W)) {
				st.jsr++; /* subroutines (class files before 50) */
				break;
			}
		jinst_edit_free(ed); /* the nodes stay readable: they live in the class arena */
	}
	uint8_t *out;
	size_t olen;
	rc = jinst_class_write(c, NULL, &out, &olen, &d);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	st.seconds += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (rc) {
		st.class_failed++;
		count_reason("write", &d, name);
		free(edited);
		jinst_class_free(c);
		return;
	}
	if (out_dir)
		check_write_out(out_dir, name, out, olen);
	/* Parse again; every edited method's code decodes and its frames expand. */
	jinst_class *c2;
	if (jinst_class_parse(&c2, out, olen, NULL, NULL, &d)) {
		st.class_failed++;
		count_reason("reparse", &d, name);
	} else {
		for (uint16_t i = 0; i < jinst_class_method_count(c2); i++) {
			if (!edited[i])
				continue;
			jinst_member *m = jinst_class_method(c2, i);
			jinst_attr *ca = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
			jinst_code *code;
			jinst_insn *insns;
			uint32_t n;
			if (jinst_attr_decode(c2, ca, (void **)&code, &d) || jinst_code_decode(c2, code, &insns, &n, &d)) {
				st.failed++;
				count_reason("redecode", &d, name);
				continue;
			}
			jinst_attr *smt = jinst_attr_find(&code->attrs, JINST_ATTR_STACK_MAP_TABLE);
			if (smt) {
				jinst_stack_map *map;
				jinst_full_frame *ff;
				if (jinst_attr_decode(c2, smt, (void **)&map, &d) || jinst_stack_map_expand(c2, m, map, &ff, &d)) {
					st.failed++;
					count_reason("reexpand", &d, name);
					continue;
				}
				bool ok = true;
				for (uint32_t k = 0; k < map->count && ok; k++)
					ok = ff[k].offset < code->code_length;
				if (!ok) {
					st.failed++;
					d.code = JINST_EMALFORMED;
					snprintf(d.message, sizeof(d.message), "frame past the code");
					count_reason("reexpand", &d, name);
				}
			}
		}
		jinst_class_free(c2);
	}
	free(out);
	free(edited);
	jinst_class_free(c);
}

int main(int argc, char **argv)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--hooks") == 0)
			hooks_mode = true;
		else if (strcmp(argv[i], "--times") == 0)
			hooks_mode = times_mode = true;
		else if (strcmp(argv[i], "--edges") == 0)
			edges_mode = true;
		else if (strcmp(argv[i], "--pop") == 0)
			pop_mode = true;
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			out_dir = argv[++i];
		else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
			limit = strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: edit_check [--hooks|--times|--edges|--pop] [--out DIR] [--limit N] FOLDER...\n");
			return 2;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "usage: edit_check [--hooks|--times|--edges|--pop] [--out DIR] [--limit N] FOLDER...\n");
		return 2;
	}
	/* A tree written for HotSpot is whole (tests/jvm samples what it verifies). */
	unsigned long sample = out_dir ? 1 : corpus_sample();
	for (; i < argc; i++)
		check_walk(argv[i], check_class, sample);
	for (int r = 0; r < nreasons; r++)
		printf("  %6lu  %s  e.g. %s\n", reasons[r].count, reasons[r].text, reasons[r].example);
	printf("%lu classes (%.1f MB), %lu not written; %lu methods: %lu edited, %lu without code or skipped, "
	       "%lu refused as too large, %lu failed; %lu with jsr; %lu probes; %.2f s, %.1f MB/s of input (parse+edit+write, CPU time)\n",
	       st.classes, st.bytes / 1e6, st.class_failed, st.methods, st.edited, st.skipped_no_code, st.too_large,
	       st.failed, st.jsr, st.insns, st.seconds, st.seconds > 0 ? st.bytes / 1e6 / st.seconds : 0.0);
	return st.classes == 0 ? 77 : (st.failed || st.class_failed) ? 1 : 0;
}
