/*
 * The code editor (include/jinst/edit.h): decode, edit, lay out, remap,
 * frame and install one method's code.
 *
 * The list. Original instructions are decoded once into an array of nodes
 * (so the node of an original offset is one index away), label nodes are
 * made for every original position anything refers to, and all of them
 * are linked into one doubly linked list in code order. Inserted code is
 * allocated in one block per insertion from the class arena; nothing is
 * malloc'd per instruction. References are label ids everywhere: an
 * instruction's branch operand, a switch's targets, an exception entry, a
 * line number, a local variable range, a frame. Two references name an
 * instruction rather than a position, and follow it wherever code is
 * inserted around it: a type annotation on an instruction (its node), and
 * the `new` of an Uninitialized type (a small key, what fits the frames'
 * 16-bit value field, with a key table mapping it to the `new` node).
 *
 * Inside and outside. A position is the run of labels before an
 * instruction. Inside insertion goes between the labels and the
 * instruction, outside insertion before the labels; the first inside
 * insertion at a position without labels makes one, so the boundary exists
 * and outside code always comes first, whatever the order of the calls.
 *
 * Layout (JVMS 4.7.3, 6.5 goto_w). Offsets follow from sizes, and sizes
 * depend on offsets twice: switch padding (0-3 bytes to a multiple of 4)
 * and branch reach (s2 offsets reach +-32 KiB). Each pass assigns offsets
 * from the current sizes, then widens every 16-bit branch that does not
 * reach: goto/jsr to goto_w/jsr_w, a conditional branch to the inverted
 * branch over a goto_w (8 bytes). Padding changes as code moves, so every
 * pass checks again every branch still short. A branch once widened stays
 * widened: the set of wide branches only grows, so the passes end, and the
 * last pass, which widened nothing, has checked every short branch at the
 * final offsets. When the code is under 32 KiB no branch can miss its
 * target, and the common case is a single pass.
 *
 * Stack depths. Before layout a depth-only data flow (no types) walks the
 * new code from its entry and from every handler; it finds the new
 * max_stack and refuses code where depths go negative or disagree at a
 * merge, which is how an unbalanced insertion is caught before it reaches
 * a verifier. Each frame starts a walk too, with the depth of its stack:
 * the verifier checks code that carries a frame even where nothing reaches
 * it (the nop...athrow that replaces dead code). max_stack never drops
 * below the original one, which covered code the flow does not reach.
 *
 * Frames (JVMS 4.7.4, 4.10.1). See edit.h for the rules. After layout the
 * list is walked once: each instruction that needs a frame and has none
 * gets one derived from the last frame before it, by running the abstract
 * interpreter of infer.c (jinst_sim_step) over the straight-line code in
 * between; the derived frame is then the starting point for the next one,
 * so the whole walk stays linear.
 *
 * Atomicity. The commit computes everything (bytes, tables, frames) into
 * new arena memory and only then swaps it into the Code model, so a
 * failure at any step leaves the method as it was.
 */
#include "internal.h"

#include "jinst/edit.h"

enum { NODE_INSN = 0, NODE_LABEL = 1 };
enum { FORM_NORMAL = 0, FORM_WIDE = 1, FORM_INVERT = 2 };
#define NO_KEY UINT16_MAX
/* In a tracked attribute's refs: an original instruction (index in nodes), not a label. */
#define INSN_REF 0x80000000u

struct jinst_node {
	jinst_node *prev, *next;
	jinst_insn insn;   /* branch operands and switch targets are label ids */
	uint32_t orig;     /* original offset, JINST_NO_OFFSET for inserted code and labels */
	uint32_t label;    /* label nodes: the label id */
	uint32_t offset;   /* laid-out offset (labels: of what follows) */
	int32_t depth;     /* stack depth before, -1 before the depth flow reaches it */
	uint16_t key;      /* `new` nodes: the Uninitialized key, NO_KEY until one is given */
	uint8_t kind;      /* NODE_* */
	uint8_t form;      /* FORM_* of a 16-bit branch */
	bool removed;
	bool frame_needed; /* instruction nodes, during commit */
};

typedef struct label_info {
	jinst_node *node;        /* NULL until placed */
	jinst_full_frame *frame; /* kept (original) or given frame */
	bool given;              /* the frame came from jinst_edit_set_frame */
	bool target;             /* during commit: a branch, switch or handler reaches it */
	uint16_t catch_type;     /* during commit, for handlers: the first entry's catch type */
	bool handler;
} label_info;

typedef struct xentry {
	jinst_label start, end, handler;
	uint16_t catch_type;
} xentry;

/* A Code attribute whose positions were turned into labels, in the order
 * the commit walks the model again. */
typedef struct tracked_attr {
	jinst_attr *a;
	jinst_label *refs;
} tracked_attr;

typedef struct declared {
	uint16_t index;
	jinst_ftype type;
} declared;

struct jinst_edit {
	jinst_class *c;
	jinst_member *m;
	jinst_attr *code_attr;
	jinst_code *code;
	jinst_arena *A;
	jinst_edit_options opts;
	bool closed, dirty, has_map;
	jinst_node *head, *tail;
	jinst_node *nodes; /* the original instructions, in order */
	uint32_t ninsns;
	int32_t *idx_at;   /* original offset -> index in nodes, -1 inside an instruction */
	jinst_label *lab_at; /* original offset -> its label, JINST_NO_LABEL */
	label_info *labels;
	uint32_t nlabels, cap_labels;
	jinst_label end_label;
	xentry *ex;
	uint32_t nex, cap_ex, orig_nex;
	tracked_attr *tracked;
	uint32_t ntracked;
	jinst_node **keys; /* Uninitialized key -> `new` node */
	uint32_t nkeys, cap_keys;
	declared *decl;
	uint32_t ndecl, cap_decl;
	uint16_t max_locals;
	jinst_full_frame initial; /* the method's implicit first frame, once derive needs it (locals set) */
	const uint8_t *orig_code; /* the code the original nodes were decoded from */
};

static bool cat2(const jinst_ftype *t);

/* Grows an arena array to hold at least need items (the old block is left
 * in the arena: growth doubles, so the waste stays below the final size). */
static bool grow(jinst_arena *A, void **items, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return true;
	uint32_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *p = jinst_arena_alloc(A, (size_t)n * size);
	if (!p)
		return false;
	if (*cap)
		memcpy(p, *items, (size_t)*cap * size);
	*items = p;
	*cap = n;
	return true;
}

static inline enum jinst_operand_kind kind_of(const jinst_insn *in)
{
	return (enum jinst_operand_kind)jinst_opcodes[in->opcode].kind;
}

static bool is_branch(const jinst_insn *in)
{
	enum jinst_operand_kind k = kind_of(in);
	return k == JINST_OPND_BRANCH2 || k == JINST_OPND_BRANCH4;
}

/* Ends a basic block with no fall-through: goto, goto_w, switches, returns, athrow, ret. */
static bool unconditional(uint8_t op)
{
	return jinst_opcodes[op].flags & JINST_OPF_UNCONDITIONAL;
}

static int new_label(jinst_edit *ed, jinst_label *out)
{
	if (!grow(ed->A, (void **)&ed->labels, &ed->cap_labels, ed->nlabels + 1, sizeof(label_info)))
		return JINST_ENOMEM;
	memset(&ed->labels[ed->nlabels], 0, sizeof(label_info));
	*out = ed->nlabels++;
	return 0;
}

static void link_before(jinst_edit *ed, jinst_node *at, jinst_node *first, jinst_node *last)
{
	if (!at) { /* append */
		first->prev = ed->tail;
		last->next = NULL;
		if (ed->tail)
			ed->tail->next = first;
		else
			ed->head = first;
		ed->tail = last;
		return;
	}
	first->prev = at->prev;
	last->next = at;
	if (at->prev)
		at->prev->next = first;
	else
		ed->head = first;
	at->prev = last;
}

static void unlink_node(jinst_edit *ed, jinst_node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		ed->head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		ed->tail = n->prev;
	n->prev = n->next = NULL;
}

/* The node before which something inserted at (at, where) goes; NULL: the
 * end. Outside an original instruction means before the labels of its
 * position, and so before the code inserted inside it since. */
static jinst_node *insertion_point(const jinst_edit *ed, jinst_node *at, enum jinst_where where)
{
	if (!at)
		return NULL;
	if (where == JINST_AFTER)
		return at->next;
	if (where == JINST_BEFORE_OUTSIDE && at->kind == NODE_INSN) {
		if (at->orig != JINST_NO_OFFSET && ed->lab_at[at->orig] != JINST_NO_LABEL)
			at = ed->labels[ed->lab_at[at->orig]].node;
		while (at->prev && at->prev->kind == NODE_LABEL)
			at = at->prev;
	}
	return at;
}

/* The Uninitialized key of a `new` node. */
static int key_of(jinst_edit *ed, jinst_node *n, uint16_t *key)
{
	if (n->key == NO_KEY) {
		if (ed->nkeys >= NO_KEY)
			return JINST_ETOOLARGE;
		if (!grow(ed->A, (void **)&ed->keys, &ed->cap_keys, ed->nkeys + 1, sizeof(jinst_node *)))
			return JINST_ENOMEM;
		ed->keys[ed->nkeys] = n;
		n->key = (uint16_t)ed->nkeys++;
	}
	*key = n->key;
	return 0;
}

/* ---- open ------------------------------------------------------------------------ */

/* The label of an original offset during open (created, not yet linked). */
static int ref(jinst_edit *ed, uint32_t off, jinst_label *out, jinst_diag *diag, const char *what)
{
	if (off > ed->code->code_length || (off < ed->code->code_length && ed->idx_at[off] < 0))
		return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "%s names pc %u, not an instruction", what,
		                  (unsigned)off);
	if (ed->lab_at[off] == JINST_NO_LABEL) {
		jinst_label l;
		if (new_label(ed, &l))
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		ed->lab_at[off] = l;
	}
	*out = ed->lab_at[off];
	return 0;
}

/* Converts a frame's types for the editor: Uninitialized(offset) -> key. */
static int adopt_types(jinst_edit *ed, jinst_ftype *t, uint16_t n, jinst_diag *diag)
{
	for (uint16_t i = 0; i < n; i++) {
		if (t[i].tag != JINST_VT_UNINITIALIZED)
			continue;
		uint32_t off = t[i].value;
		if (off >= ed->code->code_length || ed->idx_at[off] < 0 || ed->nodes[ed->idx_at[off]].insn.opcode != JINST_OP_NEW)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
			                  "StackMapTable: Uninitialized(%u) does not name a new", (unsigned)off);
		int rc = key_of(ed, &ed->nodes[ed->idx_at[off]], &t[i].value);
		if (rc)
			return jinst_fail(diag, rc, JINST_NO_OFFSET, "too many Uninitialized types");
	}
	return 0;
}

static jinst_ftype *copy_types(jinst_arena *A, const jinst_ftype *t, uint16_t n)
{
	jinst_ftype *p = jinst_arena_alloc(A, ((size_t)n + 1) * sizeof(*p));
	if (p && n)
		memcpy(p, t, (size_t)n * sizeof(*p));
	return p;
}

static int open_frames(jinst_edit *ed, jinst_attr *smt, jinst_diag *diag)
{
	jinst_stack_map *map;
	int rc = jinst_attr_decode(ed->c, smt, (void **)&map, diag);
	if (rc)
		return rc;
	jinst_full_frame *ff;
	rc = jinst_stack_map_expand(ed->c, ed->m, map, &ff, diag);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < map->count; i++) {
		jinst_label l;
		if (ff[i].offset >= ed->code->code_length)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "StackMapTable frame at pc %u past the code",
			                  (unsigned)ff[i].offset);
		rc = ref(ed, ff[i].offset, &l, diag, "StackMapTable");
		if (rc)
			return rc;
		jinst_full_frame *f = jinst_arena_alloc(ed->A, sizeof(*f));
		if (!f)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		*f = ff[i];
		bool uninit = false;
		for (uint16_t k = 0; k < f->nlocals; k++)
			uninit |= f->locals[k].tag == JINST_VT_UNINITIALIZED;
		for (uint16_t k = 0; k < f->nstack; k++)
			uninit |= f->stack[k].tag == JINST_VT_UNINITIALIZED;
		ed->labels[l].frame = f;
		if (!uninit)
			continue;
		/* Expanded frames share locals arrays between frames: copy before
		 * turning offsets into keys. */
		f->locals = copy_types(ed->A, ff[i].locals, ff[i].nlocals);
		f->stack = copy_types(ed->A, ff[i].stack, ff[i].nstack);
		if (!f->locals || !f->stack)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		rc = adopt_types(ed, f->locals, f->nlocals, diag);
		if (!rc)
			rc = adopt_types(ed, f->stack, f->nstack, diag);
		if (rc)
			return rc;
	}
	return 0;
}

/* Counts the positions a Code sub-attribute names, for its refs array. */
static uint32_t attr_ref_count(const jinst_attr *a)
{
	switch (a->kind) {
	case JINST_ATTR_LINE_NUMBER_TABLE:
		return ((const jinst_line_numbers *)a->model)->count;
	case JINST_ATTR_LOCAL_VARIABLE_TABLE:
	case JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE:
		return 2u * ((const jinst_local_variables *)a->model)->count;
	case JINST_ATTR_RUNTIME_VISIBLE_TYPE_ANNOTATIONS:
	case JINST_ATTR_RUNTIME_INVISIBLE_TYPE_ANNOTATIONS: {
		const jinst_type_annotations *x = a->model;
		uint32_t n = 0;
		for (uint32_t i = 0; i < x->count; i++) {
			uint8_t t = x->items[i].target_type;
			if (t == 0x40 || t == 0x41)
				n += 2u * x->items[i].table_length;
			else if (t >= 0x43 && t <= 0x4b)
				n++;
		}
		return n;
	}
	default:
		return 0;
	}
}

static int open_attr(jinst_edit *ed, jinst_attr *a, jinst_diag *diag)
{
	int rc = jinst_attr_decode(ed->c, a, NULL, diag);
	if (rc)
		return rc;
	uint32_t n = attr_ref_count(a);
	tracked_attr *t = &ed->tracked[ed->ntracked++];
	t->a = a;
	t->refs = jinst_arena_alloc(ed->A, ((size_t)n + 1) * sizeof(jinst_label));
	if (!t->refs)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	const char *what = jinst_attr_kind_name((enum jinst_attr_kind)a->kind);
	uint32_t k = 0;
	switch (a->kind) {
	case JINST_ATTR_LINE_NUMBER_TABLE: {
		const jinst_line_numbers *x = a->model;
		for (uint32_t i = 0; i < x->count && !rc; i++) {
			/* A line entry at or past the end names no instruction; the
			 * JVM ignores it, and so does the editor (it is dropped). */
			if (x->items[i].start_pc >= ed->code->code_length)
				t->refs[k++] = JINST_NO_LABEL;
			else
				rc = ref(ed, x->items[i].start_pc, &t->refs[k++], diag, what);
		}
		break;
	}
	case JINST_ATTR_LOCAL_VARIABLE_TABLE:
	case JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE: {
		const jinst_local_variables *x = a->model;
		for (uint32_t i = 0; i < x->count && !rc; i++) {
			rc = ref(ed, x->items[i].start_pc, &t->refs[k++], diag, what);
			if (!rc)
				rc = ref(ed, (uint32_t)x->items[i].start_pc + x->items[i].length, &t->refs[k++], diag, what);
		}
		break;
	}
	default: {
		const jinst_type_annotations *x = a->model;
		for (uint32_t i = 0; i < x->count && !rc; i++) {
			const jinst_type_annotation *ta = &x->items[i];
			if (ta->target_type == 0x40 || ta->target_type == 0x41) {
				for (uint32_t j = 0; j < ta->table_length && !rc; j++) {
					rc = ref(ed, ta->table[j].start_pc, &t->refs[k++], diag, what);
					if (!rc)
						rc = ref(ed, (uint32_t)ta->table[j].start_pc + ta->table[j].length, &t->refs[k++], diag,
						         what);
				}
			} else if (ta->target_type >= 0x43 && ta->target_type <= 0x4b) {
				/* These name the instruction itself (the `new`, the cast...),
				 * not a position: they follow the instruction wherever code is
				 * inserted around it. */
				if (ta->a >= ed->code->code_length || ed->idx_at[ta->a] < 0)
					rc = jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "%s names pc %u, not an instruction",
					                what, (unsigned)ta->a);
				else
					t->refs[k++] = INSN_REF | (uint32_t)ed->idx_at[ta->a];
			}
		}
		break;
	}
	}
	return rc;
}

/* Makes ln the node of label l (ln zeroed or fresh from the arena). */
static jinst_node *label_node(jinst_edit *ed, jinst_node *ln, jinst_label l)
{
	ln->kind = NODE_LABEL;
	ln->label = l;
	ln->orig = JINST_NO_OFFSET;
	ln->key = NO_KEY;
	ed->labels[l].node = ln;
	return ln;
}

int jinst_edit_open(jinst_edit **out, jinst_class *c, jinst_member *m, const jinst_edit_options *opts,
                    jinst_diag *diag)
{
	*out = NULL;
	int lrc = jinst_member_attrs_load(m, diag);
	if (lrc)
		return lrc;
	jinst_attr *ca = jinst_attr_find(&m->attrs, JINST_ATTR_CODE);
	if (!ca)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "method has no Code");
	jinst_code *code;
	int rc = jinst_attr_decode(c, ca, (void **)&code, diag);
	if (rc)
		goto fail;
	jinst_arena *A = c->arena;
	jinst_edit *ed = jinst_arena_zalloc(A, sizeof(*ed));
	if (!ed)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	ed->c = c;
	ed->m = m;
	ed->code_attr = ca;
	ed->code = code;
	ed->A = A;
	ed->opts = opts ? *opts : (jinst_edit_options)JINST_EDIT_OPTIONS_INIT;
	ed->max_locals = code->max_locals;
	ed->orig_code = code->code;
	jinst_insn *insns;
	uint32_t n;
	rc = jinst_code_decode(c, code, &insns, &n, diag);
	if (rc)
		goto fail;
	uint32_t len = code->code_length;
	ed->ninsns = n;
	ed->nodes = jinst_arena_alloc(A, ((size_t)n + 1) * sizeof(jinst_node));
	ed->idx_at = jinst_arena_alloc(A, ((size_t)len + 1) * sizeof(int32_t));
	ed->lab_at = jinst_arena_alloc(A, ((size_t)len + 1) * sizeof(jinst_label));
	if (!ed->nodes || !ed->idx_at || !ed->lab_at) {
		rc = jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		goto fail;
	}
	memset(ed->idx_at, 0xff, ((size_t)len + 1) * sizeof(int32_t));
	memset(ed->lab_at, 0xff, ((size_t)len + 1) * sizeof(jinst_label));
	for (uint32_t i = 0; i < n; i++) {
		jinst_node *nd = &ed->nodes[i];
		nd->insn = insns[i];
		nd->orig = insns[i].offset;
		nd->label = JINST_NO_LABEL;
		nd->key = NO_KEY;
		nd->kind = NODE_INSN;
		nd->form = FORM_NORMAL;
		nd->removed = false;
		ed->idx_at[insns[i].offset] = (int32_t)i;
	}
	/* Branch operands and switch targets become labels. */
	for (uint32_t i = 0; i < n && !rc; i++) {
		jinst_insn *in = &ed->nodes[i].insn;
		jinst_label l;
		if (is_branch(in)) {
			rc = ref(ed, (uint32_t)in->operand, &l, diag, "branch");
			in->operand = (int32_t)l;
		} else if (in->sw) {
			jinst_switch *sw = jinst_arena_alloc(A, sizeof(*sw));
			int32_t *t = jinst_arena_alloc(A, ((size_t)in->sw->count + 1) * sizeof(int32_t));
			if (!sw || !t) {
				rc = jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
				break;
			}
			*sw = *in->sw;
			rc = ref(ed, (uint32_t)sw->default_target, &l, diag, "switch");
			sw->default_target = (int32_t)l;
			for (uint32_t k = 0; k < sw->count && !rc; k++) {
				rc = ref(ed, (uint32_t)in->sw->targets[k], &l, diag, "switch");
				t[k] = (int32_t)l;
			}
			sw->targets = t;
			in->sw = sw;
		}
	}
	if (rc)
		goto fail;
	rc = ref(ed, len, &ed->end_label, diag, "end");
	/* The exception table. */
	ed->orig_nex = ed->nex = code->exception_count;
	if (!rc && !grow(A, (void **)&ed->ex, &ed->cap_ex, ed->nex + 1, sizeof(xentry)))
		rc = jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < ed->nex && !rc; i++) {
		const jinst_exception_entry *e = &code->exceptions[i];
		xentry *x = &ed->ex[i];
		x->catch_type = e->catch_type;
		rc = ref(ed, e->start_pc, &x->start, diag, "exception_table");
		if (!rc)
			rc = ref(ed, e->end_pc, &x->end, diag, "exception_table");
		if (!rc)
			rc = ref(ed, e->handler_pc, &x->handler, diag, "exception_table");
	}
	/* The Code attribute's own attributes that name positions. */
	ed->tracked = jinst_arena_alloc(A, ((size_t)code->attrs.count + 1) * sizeof(tracked_attr));
	if (!rc && !ed->tracked)
		rc = jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	jinst_attr *smt = NULL;
	for (uint16_t i = 0; i < code->attrs.count && !rc; i++) {
		jinst_attr *a = &code->attrs.items[i];
		switch (a->kind) {
		case JINST_ATTR_LINE_NUMBER_TABLE:
		case JINST_ATTR_LOCAL_VARIABLE_TABLE:
		case JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE:
		case JINST_ATTR_RUNTIME_VISIBLE_TYPE_ANNOTATIONS:
		case JINST_ATTR_RUNTIME_INVISIBLE_TYPE_ANNOTATIONS:
			rc = open_attr(ed, a, diag);
			break;
		case JINST_ATTR_STACK_MAP_TABLE:
			if (!smt)
				smt = a;
			break;
		default:
			break;
		}
	}
	ed->has_map = smt != NULL;
	if (!rc && smt && ed->opts.frames == JINST_EDIT_FRAMES_KEEP)
		rc = open_frames(ed, smt, diag);
	if (rc)
		goto fail;
	/* Link the list: each instruction after the label of its offset, the end label last. */
	jinst_node *lnodes = jinst_arena_zalloc(A, ((size_t)ed->nlabels + 1) * sizeof(jinst_node));
	if (!lnodes) {
		rc = jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		goto fail;
	}
	jinst_node *prev = NULL;
	uint32_t nl = 0;
	for (uint32_t i = 0; i <= n; i++) {
		uint32_t off = i < n ? ed->nodes[i].orig : len;
		jinst_label l = ed->lab_at[off];
		if (l != JINST_NO_LABEL) {
			jinst_node *ln = label_node(ed, &lnodes[nl++], l);
			ln->prev = prev;
			if (prev)
				prev->next = ln;
			else
				ed->head = ln;
			prev = ln;
		}
		if (i < n) {
			jinst_node *nd = &ed->nodes[i];
			nd->prev = prev;
			if (prev)
				prev->next = nd;
			else
				ed->head = nd;
			prev = nd;
		}
	}
	prev->next = NULL;
	ed->tail = prev;
	*out = ed;
	return 0;
fail:
	jinst_diag_member(diag, c, m, true);
	return rc;
}

void jinst_edit_free(jinst_edit *ed)
{
	if (ed)
		ed->closed = true;
}

/* ---- walking ----------------------------------------------------------------------- */

jinst_node *jinst_edit_first(jinst_edit *ed) { return ed->head; }
jinst_node *jinst_edit_last(jinst_edit *ed) { return ed->tail; }
jinst_node *jinst_node_next(const jinst_node *n) { return n->next; }
jinst_node *jinst_node_prev(const jinst_node *n) { return n->prev; }
const jinst_insn *jinst_node_insn(const jinst_node *n) { return n->kind == NODE_INSN ? &n->insn : NULL; }
jinst_label jinst_node_label(const jinst_node *n) { return n->kind == NODE_LABEL ? n->label : JINST_NO_LABEL; }
uint32_t jinst_node_original_offset(const jinst_node *n) { return n->orig; }
uint32_t jinst_node_offset(const jinst_node *n) { return n->offset; }
uint16_t jinst_edit_max_locals(const jinst_edit *ed) { return ed->max_locals; }
jinst_label jinst_edit_end_label(jinst_edit *ed) { return ed->end_label; }

jinst_node *jinst_edit_at(jinst_edit *ed, uint32_t off)
{
	if (off >= ed->code->code_length || ed->idx_at[off] < 0)
		return NULL;
	jinst_node *n = &ed->nodes[ed->idx_at[off]];
	return n->removed ? NULL : n;
}

jinst_node *jinst_edit_first_insn(jinst_edit *ed)
{
	for (uint32_t i = 0; i < ed->ninsns; i++)
		if (!ed->nodes[i].removed)
			return &ed->nodes[i];
	return NULL;
}

/* ---- editing ----------------------------------------------------------------------- */

static int usable(jinst_edit *ed)
{
	return ed->closed ? JINST_EINVAL : 0;
}

static bool label_ok(const jinst_edit *ed, int64_t l)
{
	return l >= 0 && l < ed->nlabels;
}

int jinst_edit_new_label(jinst_edit *ed, jinst_label *out)
{
	if (usable(ed))
		return JINST_EINVAL;
	return new_label(ed, out);
}

int jinst_edit_label_at(jinst_edit *ed, uint32_t off, jinst_label *out)
{
	if (usable(ed))
		return JINST_EINVAL;
	if (off == ed->code->code_length) {
		*out = ed->end_label;
		return 0;
	}
	if (off > ed->code->code_length || ed->idx_at[off] < 0)
		return JINST_EINVAL;
	if (ed->lab_at[off] == JINST_NO_LABEL) {
		jinst_node *at = &ed->nodes[ed->idx_at[off]];
		jinst_label l;
		jinst_node *ln = jinst_arena_zalloc(ed->A, sizeof(*ln));
		if (!ln || new_label(ed, &l))
			return JINST_ENOMEM;
		label_node(ed, ln, l);
		/* A removed instruction's position is whatever followed it. */
		if (at->removed) {
			uint32_t i = (uint32_t)ed->idx_at[off];
			while (i < ed->ninsns && ed->nodes[i].removed)
				i++;
			at = i < ed->ninsns ? &ed->nodes[i] : ed->labels[ed->end_label].node;
		}
		link_before(ed, at, ln, ln);
		ed->lab_at[off] = l;
	}
	*out = ed->lab_at[off];
	return 0;
}

/* A label just before instruction node at (the label of its original
 * position when it is an original instruction). */
static int boundary(jinst_edit *ed, jinst_node *at)
{
	if (at->orig != JINST_NO_OFFSET) {
		jinst_label l;
		return jinst_edit_label_at(ed, at->orig, &l);
	}
	jinst_label l;
	jinst_node *ln = jinst_arena_zalloc(ed->A, sizeof(*ln));
	if (!ln || new_label(ed, &l))
		return JINST_ENOMEM;
	link_before(ed, at, label_node(ed, ln, l), ln);
	return 0;
}

int jinst_edit_place(jinst_edit *ed, jinst_label label, jinst_node *at, enum jinst_where where)
{
	if (usable(ed) || !label_ok(ed, label) || ed->labels[label].node)
		return JINST_EINVAL;
	jinst_node *ln = jinst_arena_zalloc(ed->A, sizeof(*ln));
	if (!ln)
		return JINST_ENOMEM;
	link_before(ed, insertion_point(ed, at, where), label_node(ed, ln, label), ln);
	ed->dirty = true;
	return 0;
}

/* Copies a caller's instruction into a node, choosing its encoding. */
static int adopt_insn(jinst_edit *ed, jinst_node *nd, const jinst_insn *src)
{
	jinst_insn in = *src;
	in.offset = 0;
	in.length = 0;
	in.wide = 0;
	enum jinst_operand_kind k = kind_of(&in);
	switch (k) {
	case JINST_OPND_INVALID:
	case JINST_OPND_WIDE:
		return JINST_EINVAL;
	case JINST_OPND_CP1:
		if (in.operand < 1 || in.operand > 65535)
			return JINST_EINVAL;
		if (in.operand > 255)
			in.opcode = JINST_OP_LDC_W;
		break;
	case JINST_OPND_LOCAL:
		if (in.operand < 0 || in.operand > 65535)
			return JINST_EINVAL;
		in.wide = in.operand > 255;
		break;
	case JINST_OPND_IINC:
		if (in.operand < 0 || in.operand > 65535 || in.operand2 < INT16_MIN || in.operand2 > INT16_MAX)
			return JINST_EINVAL;
		in.wide = in.operand > 255 || in.operand2 < -128 || in.operand2 > 127;
		break;
	case JINST_OPND_BRANCH2:
	case JINST_OPND_BRANCH4:
		if (!label_ok(ed, in.operand))
			return JINST_EINVAL;
		break;
	case JINST_OPND_TABLESWITCH:
	case JINST_OPND_LOOKUPSWITCH: {
		const jinst_switch *s = src->sw;
		if (!s || (in.opcode == JINST_OP_TABLESWITCH && (s->high < s->low || (int64_t)s->high - s->low + 1 != s->count)) ||
		    (in.opcode == JINST_OP_LOOKUPSWITCH && !s->keys && s->count) || !label_ok(ed, s->default_target))
			return JINST_EINVAL;
		jinst_switch *sw = jinst_arena_alloc(ed->A, sizeof(*sw));
		int32_t *t = jinst_arena_alloc(ed->A, ((size_t)s->count + 1) * sizeof(int32_t));
		int32_t *keys = in.opcode == JINST_OP_LOOKUPSWITCH ? jinst_arena_alloc(ed->A, ((size_t)s->count + 1) * sizeof(int32_t)) : NULL;
		if (!sw || !t || (in.opcode == JINST_OP_LOOKUPSWITCH && !keys))
			return JINST_ENOMEM;
		*sw = *s;
		for (uint32_t i = 0; i < s->count; i++) {
			if (!label_ok(ed, s->targets[i]))
				return JINST_EINVAL;
			t[i] = s->targets[i];
			if (keys)
				keys[i] = s->keys[i];
		}
		sw->targets = t;
		sw->keys = keys;
		in.sw = sw;
		break;
	}
	case JINST_OPND_CP2:
	case JINST_OPND_INVOKEINTERFACE:
	case JINST_OPND_INVOKEDYNAMIC:
	case JINST_OPND_MULTIANEWARRAY:
		if (in.operand < 1 || in.operand > 65535)
			return JINST_EINVAL;
		break;
	default:
		break;
	}
	if (k != JINST_OPND_TABLESWITCH && k != JINST_OPND_LOOKUPSWITCH)
		in.sw = NULL;
	nd->insn = in;
	nd->kind = NODE_INSN;
	nd->orig = JINST_NO_OFFSET;
	nd->label = JINST_NO_LABEL;
	nd->key = NO_KEY;
	nd->form = FORM_NORMAL;
	return 0;
}

int jinst_edit_insert(jinst_edit *ed, jinst_node *at, enum jinst_where where, const jinst_insn *insns,
                      uint32_t count, jinst_node **last)
{
	if (usable(ed) || (at && at->removed) || (count && !insns))
		return JINST_EINVAL;
	if (last)
		*last = NULL;
	if (!count)
		return 0;
	jinst_node *block = jinst_arena_zalloc(ed->A, (size_t)count * sizeof(jinst_node));
	if (!block)
		return JINST_ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		jinst_node *nd = &block[i];
		if (insns[i].opcode == JINST_OP_LABEL) {
			jinst_label l = (jinst_label)insns[i].operand;
			if (!label_ok(ed, insns[i].operand) || ed->labels[l].node)
				return JINST_EINVAL;
			for (uint32_t k = 0; k < i; k++) /* the same label twice in one array */
				if (block[k].kind == NODE_LABEL && block[k].label == l)
					return JINST_EINVAL;
			nd->kind = NODE_LABEL;
			nd->label = l;
			nd->orig = JINST_NO_OFFSET;
			nd->key = NO_KEY;
			continue;
		}
		int rc = adopt_insn(ed, nd, &insns[i]);
		if (rc)
			return rc;
	}
	/* Code inserted inside a position goes after its labels; where there
	 * is none, a label is made first, so that code inserted outside later
	 * (which goes before the labels) still comes before this code. */
	if (at && where == JINST_BEFORE_INSIDE && at->kind == NODE_INSN && (!at->prev || at->prev->kind != NODE_LABEL)) {
		int rc = boundary(ed, at);
		if (rc)
			return rc;
	}
	/* Nothing is linked until every element is accepted. */
	for (uint32_t i = 0; i < count; i++) {
		block[i].prev = i ? &block[i - 1] : NULL;
		block[i].next = i + 1 < count ? &block[i + 1] : NULL;
		if (block[i].kind == NODE_LABEL)
			ed->labels[block[i].label].node = &block[i];
	}
	link_before(ed, insertion_point(ed, at, where), &block[0], &block[count - 1]);
	ed->dirty = true;
	if (last)
		*last = &block[count - 1];
	return 0;
}

int jinst_edit_remove(jinst_edit *ed, jinst_node *n)
{
	if (usable(ed) || !n || n->removed || n->kind != NODE_INSN)
		return JINST_EINVAL;
	unlink_node(ed, n);
	n->removed = true;
	ed->dirty = true;
	return 0;
}

int jinst_edit_replace(jinst_edit *ed, jinst_node *n, const jinst_insn *insns, uint32_t count)
{
	if (usable(ed) || !n || n->removed || n->kind != NODE_INSN)
		return JINST_EINVAL;
	int rc = jinst_edit_insert(ed, n, JINST_BEFORE_INSIDE, insns, count, NULL);
	return rc ? rc : jinst_edit_remove(ed, n);
}

int jinst_edit_add_handler(jinst_edit *ed, jinst_label start, jinst_label end, jinst_label handler,
                           uint16_t catch_type)
{
	if (usable(ed) || !label_ok(ed, start) || !label_ok(ed, end) || !label_ok(ed, handler))
		return JINST_EINVAL;
	if (catch_type && jinst_cp_tag(ed->c, catch_type) != JINST_CP_CLASS)
		return JINST_EINVAL;
	if (!grow(ed->A, (void **)&ed->ex, &ed->cap_ex, ed->nex + 1, sizeof(xentry)))
		return JINST_ENOMEM;
	ed->ex[ed->nex++] = (xentry){start, end, handler, catch_type};
	ed->dirty = true;
	return 0;
}

int jinst_edit_new_local(jinst_edit *ed, uint8_t tag, uint16_t *index)
{
	if (usable(ed))
		return JINST_EINVAL;
	uint32_t size = tag == JINST_VT_LONG || tag == JINST_VT_DOUBLE ? 2 : 1;
	if ((uint32_t)ed->max_locals + size > 65535)
		return JINST_ETOOLARGE;
	*index = ed->max_locals;
	ed->max_locals = (uint16_t)(ed->max_locals + size);
	ed->dirty = true;
	return 0;
}

int jinst_edit_declare_local(jinst_edit *ed, uint16_t index, const jinst_ftype *t)
{
	if (usable(ed) || !t || t->tag == JINST_VT_UNINITIALIZED || t->tag > JINST_VT_UNINITIALIZED)
		return JINST_EINVAL;
	if (!grow(ed->A, (void **)&ed->decl, &ed->cap_decl, ed->ndecl + 1, sizeof(declared)))
		return JINST_ENOMEM;
	declared *d = &ed->decl[ed->ndecl];
	d->index = index;
	d->type = *t;
	if (t->name && t->name_length) {
		uint8_t *s = jinst_arena_alloc(ed->A, t->name_length);
		if (!s)
			return JINST_ENOMEM;
		memcpy(s, t->name, t->name_length);
		d->type.name = s;
	}
	ed->ndecl++;
	ed->dirty = true;
	return 0;
}

int jinst_edit_set_frame(jinst_edit *ed, jinst_label label, const jinst_full_frame *frame)
{
	if (usable(ed) || !label_ok(ed, label) || !frame)
		return JINST_EINVAL;
	jinst_full_frame *f = jinst_arena_alloc(ed->A, sizeof(*f));
	if (!f)
		return JINST_ENOMEM;
	*f = *frame;
	f->offset = 0;
	f->locals = copy_types(ed->A, frame->locals, frame->nlocals);
	f->stack = copy_types(ed->A, frame->stack, frame->nstack);
	if (!f->locals || !f->stack)
		return JINST_ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		jinst_ftype *t = pass ? f->stack : f->locals;
		uint16_t n = pass ? f->nstack : f->nlocals;
		for (uint16_t i = 0; i < n; i++) {
			if (t[i].tag > JINST_VT_UNINITIALIZED)
				return JINST_EINVAL;
			if (t[i].tag == JINST_VT_OBJECT && !t[i].name) {
				t[i].name = jinst_cp_name(ed->c, t[i].value, &t[i].name_length);
				if (!t[i].name || jinst_cp_tag(ed->c, t[i].value) != JINST_CP_CLASS)
					return JINST_EINVAL;
			}
			if (t[i].tag == JINST_VT_UNINITIALIZED) {
				/* Given as the original offset of a `new`. */
				uint32_t off = t[i].value;
				if (off >= ed->code->code_length || ed->idx_at[off] < 0 ||
				    ed->nodes[ed->idx_at[off]].insn.opcode != JINST_OP_NEW)
					return JINST_EINVAL;
				int rc = key_of(ed, &ed->nodes[ed->idx_at[off]], &t[i].value);
				if (rc)
					return rc;
			}
		}
	}
	ed->labels[label].frame = f;
	ed->labels[label].given = true;
	ed->dirty = true;
	return 0;
}

/* ---- commit: stack depths ------------------------------------------------------------ */

/* Descriptor of a field or method reference (or InvokeDynamic). */
static const uint8_t *ref_descriptor(jinst_class *c, uint16_t index, uint16_t *len)
{
	/* The references of the original pool straight from the class bytes:
	 * all four kinds keep their NameAndType index at the same place (JVMS
	 * 4.4.2, 4.4.10), and the NameAndType its descriptor index. */
	if (index < c->cp_count && (c->cp_tags[index] == JINST_CP_FIELDREF || c->cp_tags[index] == JINST_CP_METHODREF ||
	                            c->cp_tags[index] == JINST_CP_INTERFACE_METHODREF ||
	                            c->cp_tags[index] == JINST_CP_INVOKE_DYNAMIC)) {
		uint16_t nt = jinst_be16(c->bytes + c->cp_offsets[index] + 3);
		if (nt < c->cp_count && c->cp_tags[nt] == JINST_CP_NAME_AND_TYPE)
			return jinst_cp_utf8(c, jinst_be16(c->bytes + c->cp_offsets[nt] + 3), len);
	}
	jinst_cp_entry e, nat;
	if (jinst_cp_get(c, index, &e))
		return NULL;
	uint16_t nt;
	if (e.tag == JINST_CP_INVOKE_DYNAMIC)
		nt = e.u.dyn.name_and_type_index;
	else if (e.tag == JINST_CP_FIELDREF || e.tag == JINST_CP_METHODREF || e.tag == JINST_CP_INTERFACE_METHODREF)
		nt = e.u.ref.name_and_type_index;
	else
		return NULL;
	if (jinst_cp_get(c, nt, &nat) || nat.tag != JINST_CP_NAME_AND_TYPE)
		return NULL;
	return jinst_cp_utf8(c, nat.u.nat.descriptor_index, len);
}

/* Words a method descriptor's arguments take, and its return type's. */
static bool method_words(const uint8_t *d, uint16_t len, int *args, int *ret)
{
	int n = 0;
	uint16_t i = 1;
	if (!len || d[0] != '(')
		return false;
	while (i < len && d[i] != ')') {
		if (d[i] == 'J' || d[i] == 'D') {
			n += 2;
			i++;
			continue;
		}
		while (i < len && d[i] == '[')
			i++;
		if (i < len && d[i] == 'L')
			while (i < len && d[i] != ';')
				i++;
		i++;
		n++;
	}
	if (i + 1 >= len)
		return false;
	char r = (char)d[i + 1];
	*args = n;
	*ret = r == 'V' ? 0 : r == 'J' || r == 'D' ? 2 : 1;
	return true;
}

/* What a field or method reference's descriptor says about stack words,
 * packed in 16 bits: RW_KNOWN once worked out; RW_FIELD with the value's
 * words (as a field descriptor: 1 or 2); RW_METHOD when it parses as a
 * method descriptor, with the arguments' words (bits 0-8) and the return
 * value's. The depth flow asks this of every invoke and field access, the
 * same few references again and again across a class's methods, so the
 * answer is kept per class by pool index (the pool only grows and its
 * entries never change, so an answer stays true). */
#define RW_KNOWN 0x8000u
#define RW_FIELD 0x4000u
#define RW_METHOD 0x2000u
#define RW_FIELD_SHIFT 11
#define RW_RET_SHIFT 9

static int ref_words(jinst_edit *ed, uint16_t index, uint16_t *out)
{
	jinst_class *c = ed->c;
	bool cacheable = index < c->cp_count;
	if (cacheable && !c->ref_words)
		c->ref_words = jinst_arena_zalloc(c->arena, (size_t)c->cp_count * sizeof(uint16_t));
	if (cacheable && c->ref_words && c->ref_words[index]) {
		*out = c->ref_words[index];
		return 0;
	}
	uint16_t dl;
	const uint8_t *d = ref_descriptor(c, index, &dl);
	if (!d || !dl)
		return -1;
	uint16_t w = RW_KNOWN | RW_FIELD | (uint16_t)((d[0] == 'J' || d[0] == 'D' ? 2u : 1u) << RW_FIELD_SHIFT);
	int args, ret;
	if (method_words(d, dl, &args, &ret) && args <= 0x1ff)
		w |= RW_METHOD | (uint16_t)((unsigned)ret << RW_RET_SHIFT) | (uint16_t)args;
	if (cacheable && c->ref_words)
		c->ref_words[index] = w;
	*out = w;
	return 0;
}

/* Words an instruction pops and pushes (jsr: what its target receives). */
static int effect(jinst_edit *ed, const jinst_insn *in, int *pops, int *pushes)
{
	uint8_t op = in->opcode;
	const jinst_opcode_info *info = &jinst_opcodes[op];
	if (info->pops != JINST_OP_VARIES) {
		*pops = info->pops;
		*pushes = info->pushes;
		return 0;
	}
	uint16_t words;
	if (info->flags & JINST_OPF_FIELD) {
		if (ref_words(ed, (uint16_t)in->operand, &words) || !(words & RW_FIELD))
			return -1;
		int w = (words >> RW_FIELD_SHIFT) & 3;
		*pops = (op == JINST_OP_PUTSTATIC ? w : 0) + (op == JINST_OP_GETFIELD ? 1 : 0) +
		        (op == JINST_OP_PUTFIELD ? w + 1 : 0);
		*pushes = op == JINST_OP_GETSTATIC || op == JINST_OP_GETFIELD ? w : 0;
		return 0;
	}
	if (info->flags & JINST_OPF_INVOKE) {
		if (ref_words(ed, (uint16_t)in->operand, &words) || !(words & RW_METHOD))
			return -1;
		*pops = (words & 0x1ff) + (op == JINST_OP_INVOKESTATIC || op == JINST_OP_INVOKEDYNAMIC ? 0 : 1);
		*pushes = (words >> RW_RET_SHIFT) & 3;
		return 0;
	}
	if (op == JINST_OP_MULTIANEWARRAY) {
		*pops = in->operand2;
		*pushes = 1;
		return 0;
	}
	return -1;
}

typedef struct pending {
	jinst_node *n;
	int32_t depth;
} pending;

static int node_where(const jinst_node *n)
{
	return n->orig != JINST_NO_OFFSET ? (int)n->orig : -1;
}

/* The depth-only data flow (see the essay at the top). */
static int depth_flow(jinst_edit *ed, uint32_t *max_stack, jinst_diag *diag)
{
	pending *work = NULL;
	uint32_t nwork = 0, cap = 0;
	if (!grow(ed->A, (void **)&work, &cap, ed->nex + 1, sizeof(pending)))
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	work[nwork++] = (pending){ed->head, 0};
	for (uint32_t i = 0; i < ed->nex; i++)
		work[nwork++] = (pending){ed->labels[ed->ex[i].handler].node, 1};
	/* Code with a frame is checked by the verifier even where nothing
	 * reaches it (the nop...athrow that replaces dead code carries one), so
	 * each frame starts a walk with its own depth. */
	for (uint32_t i = 0; i < ed->nlabels; i++) {
		const label_info *li = &ed->labels[i];
		if (!li->frame || !li->node)
			continue;
		int32_t words = 0;
		for (uint16_t k = 0; k < li->frame->nstack; k++)
			words += cat2(&li->frame->stack[k]) ? 2 : 1;
		if (!grow(ed->A, (void **)&work, &cap, nwork + 1, sizeof(pending)))
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		work[nwork++] = (pending){li->node, words};
	}
	int32_t max = 0;
	while (nwork) {
		pending p = work[--nwork];
		int32_t d = p.depth;
		jinst_node *n = p.n;
		for (; n; n = n->next) {
			if (n->depth >= 0) {
				if (n->depth != d)
					return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
					                  "stack depths %d and %d meet (at original pc %d or after)", n->depth, d,
					                  node_where(n));
				break;
			}
			n->depth = d;
			if (n->kind == NODE_LABEL)
				continue;
			const jinst_insn *in = &n->insn;
			int pops, pushes;
			if (effect(ed, in, &pops, &pushes))
				return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "%s: bad constant #%d",
				                  jinst_opcode_name(in->opcode), in->operand);
			if (d < pops)
				return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET,
				                  "stack underflow: %s pops %d of %d words (original pc %d or after)",
				                  jinst_opcode_name(in->opcode), pops, d, node_where(n));
			int32_t nd = d - pops + pushes;
			if (nd > max)
				max = nd;
			uint8_t op = in->opcode;
			bool jsr = op == JINST_OP_JSR || op == JINST_OP_JSR_W;
			if (is_branch(in) || in->sw) {
				uint32_t ntargets = in->sw ? in->sw->count + 1 : 1;
				if (!grow(ed->A, (void **)&work, &cap, nwork + ntargets, sizeof(pending)))
					return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
				if (in->sw) {
					work[nwork++] = (pending){ed->labels[in->sw->default_target].node, nd};
					for (uint32_t k = 0; k < in->sw->count; k++)
						work[nwork++] = (pending){ed->labels[in->sw->targets[k]].node, nd};
				} else {
					work[nwork++] = (pending){ed->labels[in->operand].node, nd};
				}
			}
			if (unconditional(op))
				break;
			d = jsr ? d : nd; /* after a jsr, the subroutine's ret comes back with the depth of the call */
		}
		if (!n)
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "code falls off its end");
	}
	*max_stack = (uint32_t)max;
	return 0;
}

/* ---- commit: layout ------------------------------------------------------------------- */

static uint64_t node_size(const jinst_node *n, uint32_t pc)
{
	const jinst_insn *in = &n->insn;
	switch (kind_of(in)) {
	case JINST_OPND_NONE: return 1;
	case JINST_OPND_LOCAL: return in->wide ? 4 : 2;
	case JINST_OPND_BYTE: case JINST_OPND_CP1: case JINST_OPND_NEWARRAY: return 2;
	case JINST_OPND_SHORT: case JINST_OPND_CP2: return 3;
	case JINST_OPND_IINC: return in->wide ? 6 : 3;
	case JINST_OPND_BRANCH2: return n->form == FORM_NORMAL ? 3 : n->form == FORM_WIDE ? 5 : 8;
	case JINST_OPND_BRANCH4: case JINST_OPND_INVOKEINTERFACE: case JINST_OPND_INVOKEDYNAMIC: return 5;
	case JINST_OPND_MULTIANEWARRAY: return 4;
	case JINST_OPND_TABLESWITCH: return ((pc + 4) & ~3u) - pc + 12 + 4 * (uint64_t)in->sw->count;
	case JINST_OPND_LOOKUPSWITCH: return ((pc + 4) & ~3u) - pc + 8 + 8 * (uint64_t)in->sw->count;
	default: return 1;
	}
}

/* Assigns offsets until every 16-bit branch reaches; the code length, or
 * JINST_ETOOLARGE. */
static int layout(jinst_edit *ed, uint32_t *code_length, uint32_t *ninverted, jinst_diag *diag)
{
	uint32_t inv = 0;
	for (;;) {
		uint64_t pc = 0;
		for (jinst_node *n = ed->head; n; n = n->next) {
			n->offset = pc > 0xFFFFFF ? 0xFFFFFF : (uint32_t)pc;
			if (n->kind == NODE_INSN)
				pc += node_size(n, n->offset);
		}
		if (pc > 65535)
			return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET,
			                  "code would be %llu bytes, over the 65535 of JVMS 4.7.3", (unsigned long long)pc);
		*code_length = (uint32_t)pc;
		if (pc <= 32767)
			break; /* nothing can be out of reach */
		bool changed = false;
		for (jinst_node *n = ed->head; n; n = n->next) {
			if (n->kind != NODE_INSN || n->form != FORM_NORMAL || kind_of(&n->insn) != JINST_OPND_BRANCH2)
				continue;
			int64_t delta = (int64_t)ed->labels[n->insn.operand].node->offset - n->offset;
			if (delta >= INT16_MIN && delta <= INT16_MAX)
				continue;
			uint8_t op = n->insn.opcode;
			n->form = op == JINST_OP_GOTO || op == JINST_OP_JSR ? FORM_WIDE : FORM_INVERT;
			inv += n->form == FORM_INVERT;
			changed = true;
		}
		if (!changed)
			break;
	}
	*ninverted = inv;
	return 0;
}

static uint8_t inverted(uint8_t op)
{
	/* The conditions come in pairs, each the other's negation: ifeq/ifne,
	 * iflt/ifge, ... from ifeq, and ifnull/ifnonnull. */
	return op >= JINST_OP_IFNULL ? (uint8_t)(op ^ 1) : (uint8_t)(((op - JINST_OP_IFEQ) ^ 1) + JINST_OP_IFEQ);
}

/* The new code bytes, in the arena, written straight from the nodes: an
 * original instruction that names no position is copied from the original
 * code (its bytes do not depend on where it lands); branches and switches
 * get their offsets and padding; inserted instructions are encoded. */
static int encode(jinst_edit *ed, uint32_t code_length, uint8_t **bytes, jinst_diag *diag)
{
	uint8_t *p = jinst_arena_alloc(ed->A, (size_t)code_length + 8);
	if (!p)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (jinst_node *n = ed->head; n; n = n->next) {
		if (n->kind != NODE_INSN)
			continue;
		const jinst_insn *in = &n->insn;
		uint32_t pc = n->offset;
		uint8_t *o = p + pc, op = in->opcode;
		enum jinst_operand_kind k = kind_of(in);
		if (k == JINST_OPND_BRANCH2 || k == JINST_OPND_BRANCH4) {
			uint32_t target = ed->labels[in->operand].node->offset;
			if (k == JINST_OPND_BRANCH4 || n->form == FORM_WIDE) {
				o[0] = k == JINST_OPND_BRANCH4 ? op : op == JINST_OP_GOTO ? JINST_OP_GOTO_W : JINST_OP_JSR_W;
				jinst_put_u4(o + 1, target - pc);
			} else if (n->form == FORM_INVERT) {
				/* if<!cond> over the goto_w: lands on what follows the pair. */
				o[0] = inverted(op);
				jinst_put_u2(o + 1, 8);
				o[3] = JINST_OP_GOTO_W;
				jinst_put_u4(o + 4, target - (pc + 3));
			} else {
				o[0] = op;
				jinst_put_u2(o + 1, (uint16_t)(target - pc));
			}
			continue;
		}
		if (in->sw) {
			const jinst_switch *sw = in->sw;
			uint32_t at = (pc + 4) & ~3u;
			o[0] = op;
			for (uint32_t i = pc + 1; i < at; i++)
				p[i] = 0;
			jinst_put_u4(p + at, ed->labels[sw->default_target].node->offset - pc);
			at += 4;
			if (op == JINST_OP_TABLESWITCH) {
				jinst_put_u4(p + at, (uint32_t)sw->low);
				jinst_put_u4(p + at + 4, (uint32_t)sw->high);
				at += 8;
			} else {
				jinst_put_u4(p + at, sw->count);
				at += 4;
			}
			for (uint32_t i = 0; i < sw->count; i++) {
				if (op == JINST_OP_LOOKUPSWITCH) {
					jinst_put_u4(p + at, (uint32_t)sw->keys[i]);
					at += 4;
				}
				jinst_put_u4(p + at, ed->labels[sw->targets[i]].node->offset - pc);
				at += 4;
			}
			continue;
		}
		if (n->orig != JINST_NO_OFFSET) {
			memcpy(o, ed->orig_code + n->orig, in->length);
			continue;
		}
		uint16_t v = (uint16_t)in->operand;
		switch (k) {
		case JINST_OPND_NONE:
			o[0] = op;
			break;
		case JINST_OPND_LOCAL:
			if (in->wide) {
				o[0] = JINST_OP_WIDE;
				o[1] = op;
				jinst_put_u2(o + 2, v);
			} else {
				o[0] = op;
				o[1] = (uint8_t)v;
			}
			break;
		case JINST_OPND_IINC:
			if (in->wide) {
				o[0] = JINST_OP_WIDE;
				o[1] = op;
				jinst_put_u2(o + 2, v);
				jinst_put_u2(o + 4, (uint16_t)in->operand2);
			} else {
				o[0] = op;
				o[1] = (uint8_t)v;
				o[2] = (uint8_t)in->operand2;
			}
			break;
		case JINST_OPND_BYTE:
		case JINST_OPND_CP1:
		case JINST_OPND_NEWARRAY:
			o[0] = op;
			o[1] = (uint8_t)v;
			break;
		case JINST_OPND_SHORT:
		case JINST_OPND_CP2:
			o[0] = op;
			jinst_put_u2(o + 1, v);
			break;
		case JINST_OPND_INVOKEINTERFACE:
		case JINST_OPND_INVOKEDYNAMIC:
			o[0] = op;
			jinst_put_u2(o + 1, v);
			o[3] = k == JINST_OPND_INVOKEINTERFACE ? (uint8_t)in->operand2 : 0;
			o[4] = 0;
			break;
		case JINST_OPND_MULTIANEWARRAY:
			o[0] = op;
			jinst_put_u2(o + 1, v);
			o[3] = (uint8_t)in->operand2;
			break;
		default:
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "cannot encode %s", jinst_opcode_name(op));
		}
	}
	*bytes = p;
	return 0;
}

/* ---- commit: frames ---------------------------------------------------------------------- */

static bool cat2(const jinst_ftype *t)
{
	return t->tag == JINST_VT_LONG || t->tag == JINST_VT_DOUBLE;
}

static const jinst_ftype top_type = {JINST_VT_TOP, 0, 0, NULL};

/* A full frame into one slot per word; false when it does not fit. */
static bool to_slots(const jinst_full_frame *f, jinst_sim *s)
{
	for (uint32_t i = 0; i < s->max_locals; i++)
		s->locals[i] = top_type;
	uint32_t slot = 0;
	for (uint16_t i = 0; i < f->nlocals; i++) {
		if (slot + (cat2(&f->locals[i]) ? 2u : 1u) > s->max_locals)
			return false;
		s->locals[slot++] = f->locals[i];
		if (cat2(&f->locals[i]))
			s->locals[slot++] = top_type;
	}
	s->sp = 0;
	for (uint16_t i = 0; i < f->nstack; i++) {
		if ((uint32_t)s->sp + (cat2(&f->stack[i]) ? 2u : 1u) > s->max_stack)
			return false;
		s->stack[s->sp++] = f->stack[i];
		if (cat2(&f->stack[i]))
			s->stack[s->sp++] = top_type;
	}
	return true;
}

static jinst_full_frame *from_slots(jinst_edit *ed, const jinst_sim *s)
{
	jinst_full_frame *f = jinst_arena_alloc(ed->A, sizeof(*f));
	jinst_ftype *l = jinst_arena_alloc(ed->A, ((size_t)s->max_locals + 1) * sizeof(*l));
	jinst_ftype *st = jinst_arena_alloc(ed->A, ((size_t)s->sp + 1) * sizeof(*st));
	if (!f || !l || !st)
		return NULL;
	uint32_t last = 0;
	for (uint32_t i = 0; i < s->max_locals; i++)
		if (s->locals[i].tag != JINST_VT_TOP)
			last = i + 1;
	f->offset = 0;
	f->nlocals = f->nstack = 0;
	for (uint32_t i = 0; i < last; i++) {
		l[f->nlocals++] = s->locals[i];
		if (cat2(&s->locals[i]))
			i++;
	}
	for (uint32_t i = 0; i < s->sp; i++) {
		st[f->nstack++] = s->stack[i];
		if (cat2(&s->stack[i]))
			i++;
	}
	f->locals = l;
	f->stack = st;
	return f;
}

static jinst_ftype sim_new_class(void *ctx, uint16_t key)
{
	jinst_edit *ed = ctx;
	jinst_ftype t = top_type;
	if (key < ed->nkeys) {
		uint16_t index = (uint16_t)ed->keys[key]->insn.operand;
		t.name = jinst_cp_name(ed->c, index, &t.name_length);
		if (t.name) {
			t.tag = JINST_VT_OBJECT;
			t.value = index;
		}
	}
	return t;
}

/* The frame at `to`: from `from` (the frame before node from_node; NULL
 * for the method's entry) through the straight-line code in between. */
static int derive(jinst_edit *ed, jinst_sim *s, const jinst_full_frame *from, jinst_node *from_node, jinst_node *to,
                  jinst_full_frame **out, jinst_diag *diag)
{
	if (!from && !ed->initial.locals) {
		/* The method's implicit first frame, made when first needed. */
		jinst_full_frame *init;
		int rc = jinst_stack_map_expand(ed->c, ed->m, NULL, &init, diag);
		if (rc)
			return rc;
		ed->initial = *init;
	}
	if (!to_slots(from ? from : &ed->initial, s))
		return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "a frame does not fit max_locals/max_stack");
	for (jinst_node *n = from_node ? from_node : ed->head; n && n != to; n = n->next) {
		if (n->kind != NODE_INSN)
			continue;
		jinst_insn x = n->insn;
		if (x.opcode == JINST_OP_NEW) {
			uint16_t key;
			int rc = key_of(ed, n, &key);
			if (rc)
				return jinst_fail(diag, rc, JINST_NO_OFFSET, "too many Uninitialized types");
			x.offset = key;
		}
		int rc = jinst_sim_step(ed->c, s, &x, diag);
		if (rc) {
			if (diag && !diag->message[0])
				jinst_fail(diag, rc, JINST_NO_OFFSET, "cannot derive a frame through %s (original pc %d)",
				           jinst_opcode_name(x.opcode), node_where(n));
			return rc;
		}
	}
	*out = from_slots(ed, s);
	return *out ? 0 : jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
}

/* An original frame with the declared locals added. */
static jinst_full_frame *with_declared(jinst_edit *ed, jinst_full_frame *f)
{
	if (!ed->ndecl)
		return f;
	jinst_full_frame *g = jinst_arena_alloc(ed->A, sizeof(*g));
	jinst_ftype *l = jinst_arena_alloc(ed->A, ((size_t)f->nlocals + ed->max_locals + 1) * sizeof(*l));
	if (!g || !l)
		return NULL;
	*g = *f;
	memcpy(l, f->locals, (size_t)f->nlocals * sizeof(*l));
	uint32_t slots = 0, n = f->nlocals;
	for (uint16_t i = 0; i < f->nlocals; i++)
		slots += cat2(&f->locals[i]) ? 2 : 1;
	for (uint32_t k = 0; k < ed->ndecl; k++) {
		const declared *d = &ed->decl[k];
		if (slots > d->index)
			continue; /* the frame already says something there */
		while (slots < d->index) {
			l[n++] = top_type;
			slots++;
		}
		l[n++] = d->type;
		slots += cat2(&d->type) ? 2 : 1;
	}
	g->locals = l;
	g->nlocals = (uint16_t)n;
	return g;
}

typedef struct placed_frame {
	jinst_node *at;
	jinst_full_frame *f;
} placed_frame;

/* The frames of the new code, as full frames at the new offsets (see edit.h). */
/* Needs the target and handler marks of check_placed. */
static int keep_frames(jinst_edit *ed, uint32_t max_stack, jinst_full_frame **out, uint32_t *count, jinst_diag *diag)
{
	jinst_sim s = {.max_locals = ed->max_locals, .max_stack = (uint16_t)(max_stack ? max_stack : 1),
	               .new_class = sim_new_class, .ctx = ed};
	s.locals = jinst_arena_alloc(ed->A, ((size_t)s.max_locals + 1) * sizeof(jinst_ftype));
	s.stack = jinst_arena_alloc(ed->A, ((size_t)s.max_stack + 1) * sizeof(jinst_ftype));
	placed_frame *pf = NULL;
	uint32_t np = 0, cap = 0;
	if (!s.locals || !s.stack)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	jinst_full_frame *cur = NULL, *given = NULL, *kept = NULL;
	jinst_node *cur_node = NULL;
	bool need = false, after = false;
	label_info *handler = NULL;
	for (jinst_node *n = ed->head; n; n = n->next) {
		if (n->kind == NODE_LABEL) {
			label_info *li = &ed->labels[n->label];
			if (li->frame) {
				if (li->given)
					given = li->frame;
				else
					kept = li->frame;
			}
			need |= li->target;
			if (li->handler)
				handler = li;
			continue;
		}
		need |= after;
		jinst_full_frame *f = given;
		if (!f && kept && !(f = with_declared(ed, kept)))
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		if (!f && need && handler) {
			/* A handler: nothing in the locals, the caught class on the stack. */
			f = jinst_arena_zalloc(ed->A, sizeof(*f));
			jinst_ftype *t = jinst_arena_alloc(ed->A, sizeof(*t));
			if (!f || !t)
				return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
			if (handler->catch_type) {
				t->tag = JINST_VT_OBJECT;
				t->value = handler->catch_type;
				t->name = jinst_cp_name(ed->c, handler->catch_type, &t->name_length);
			} else {
				*t = (jinst_ftype){JINST_VT_OBJECT, 0, 19, (const uint8_t *)"java/lang/Throwable"};
			}
			f->stack = t;
			f->nstack = 1;
			f->locals = t; /* unused: nlocals is 0 */
		} else if (!f && need) {
			int rc = derive(ed, &s, cur, cur_node, n, &f, diag);
			if (rc)
				return rc;
		}
		if (f) {
			if (!grow(ed->A, (void **)&pf, &cap, np + 1, sizeof(*pf)))
				return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
			pf[np++] = (placed_frame){n, f};
			cur = f;
			cur_node = n;
		}
		given = kept = NULL;
		handler = NULL;
		need = false;
		after = unconditional(n->insn.opcode) || n->form == FORM_INVERT;
	}
	/* At the new offsets, Uninitialized types naming the new offset of their `new`. */
	jinst_full_frame *o = jinst_arena_alloc(ed->A, ((size_t)np + 1) * sizeof(*o));
	if (!o)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < np; i++) {
		const jinst_full_frame *f = pf[i].f;
		o[i] = *f;
		o[i].offset = pf[i].at->offset;
		bool uninit = false;
		for (uint16_t k = 0; k < f->nlocals; k++)
			uninit |= f->locals[k].tag == JINST_VT_UNINITIALIZED;
		for (uint16_t k = 0; k < f->nstack; k++)
			uninit |= f->stack[k].tag == JINST_VT_UNINITIALIZED;
		if (!uninit)
			continue;
		o[i].locals = copy_types(ed->A, f->locals, f->nlocals);
		o[i].stack = copy_types(ed->A, f->stack, f->nstack);
		if (!o[i].locals || !o[i].stack)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		for (int pass = 0; pass < 2; pass++) {
			jinst_ftype *t = pass ? o[i].stack : o[i].locals;
			uint16_t nt = pass ? o[i].nstack : o[i].nlocals;
			for (uint16_t k = 0; k < nt; k++) {
				if (t[k].tag != JINST_VT_UNINITIALIZED)
					continue;
				jinst_node *nn = t[k].value < ed->nkeys ? ed->keys[t[k].value] : NULL;
				if (!nn || nn->removed)
					return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET,
					                  "a frame names Uninitialized of a removed new");
				t[k].value = (uint16_t)nn->offset;
			}
		}
	}
	*out = o;
	*count = np;
	return 0;
}

/* ---- commit: tables ----------------------------------------------------------------------- */

static uint32_t at_label(const jinst_edit *ed, jinst_label l)
{
	return ed->labels[l].node->offset;
}

static int build_exceptions(jinst_edit *ed, uint32_t code_length, jinst_exception_entry **out, uint16_t *count,
                            uint32_t **index_map, jinst_diag *diag)
{
	jinst_exception_entry *e = jinst_arena_alloc(ed->A, ((size_t)ed->nex + 1) * sizeof(*e));
	uint32_t *map = jinst_arena_alloc(ed->A, ((size_t)ed->nex + 1) * sizeof(*map));
	if (!e || !map)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	uint32_t n = 0;
	for (uint32_t i = 0; i < ed->nex; i++) {
		const xentry *x = &ed->ex[i];
		uint32_t s = at_label(ed, x->start), end = at_label(ed, x->end), h = at_label(ed, x->handler);
		map[i] = UINT32_MAX;
		if (h >= code_length)
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "exception handler %u at the end of the code",
			                  (unsigned)i);
		if (s >= end)
			continue; /* the range lost all its code: the entry goes (JVMS 4.7.3: start_pc < end_pc) */
		map[i] = n;
		e[n++] = (jinst_exception_entry){(uint16_t)s, (uint16_t)end, (uint16_t)h, x->catch_type};
	}
	if (n > 65535)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "%u exception table entries, over 65535",
		                  (unsigned)n);
	*out = e;
	*count = (uint16_t)n;
	*index_map = map;
	return 0;
}

/* The new model of a tracked attribute. */
static int build_attr(jinst_edit *ed, const tracked_attr *t, uint32_t code_length, const uint32_t *ex_map,
                      void **model, jinst_diag *diag)
{
	const jinst_label *r = t->refs;
	switch (t->a->kind) {
	case JINST_ATTR_LINE_NUMBER_TABLE: {
		const jinst_line_numbers *x = t->a->model;
		jinst_line_numbers *y = jinst_arena_alloc(ed->A, sizeof(*y));
		jinst_line_number *it = jinst_arena_alloc(ed->A, ((size_t)x->count + 1) * sizeof(*it));
		if (!y || !it)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		uint32_t n = 0;
		for (uint32_t i = 0; i < x->count; i++) {
			if (r[i] == JINST_NO_LABEL)
				continue;
			uint32_t pc = at_label(ed, r[i]);
			if (pc < code_length)
				it[n++] = (jinst_line_number){(uint16_t)pc, x->items[i].line_number};
		}
		y->count = (uint16_t)n;
		y->items = it;
		*model = y;
		return 0;
	}
	case JINST_ATTR_LOCAL_VARIABLE_TABLE:
	case JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE: {
		const jinst_local_variables *x = t->a->model;
		jinst_local_variables *y = jinst_arena_alloc(ed->A, sizeof(*y));
		jinst_local_variable *it = jinst_arena_alloc(ed->A, ((size_t)x->count + 1) * sizeof(*it));
		if (!y || !it)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		uint32_t n = 0;
		for (uint32_t i = 0; i < x->count; i++) {
			uint32_t s = at_label(ed, r[2 * i]), e = at_label(ed, r[2 * i + 1]);
			if (s >= code_length || e < s)
				continue; /* its code is gone */
			it[n] = x->items[i];
			it[n].start_pc = (uint16_t)s;
			it[n].length = (uint16_t)(e - s);
			n++;
		}
		y->count = (uint16_t)n;
		y->items = it;
		*model = y;
		return 0;
	}
	default: {
		const jinst_type_annotations *x = t->a->model;
		jinst_type_annotations *y = jinst_arena_alloc(ed->A, sizeof(*y));
		jinst_type_annotation *it = jinst_arena_alloc(ed->A, ((size_t)x->count + 1) * sizeof(*it));
		if (!y || !it)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		uint32_t n = 0, k = 0;
		for (uint32_t i = 0; i < x->count; i++) {
			jinst_type_annotation a = x->items[i];
			bool keep = true;
			if (a.target_type == 0x40 || a.target_type == 0x41) {
				jinst_localvar_target *tt = jinst_arena_alloc(ed->A, ((size_t)a.table_length + 1) * sizeof(*tt));
				if (!tt)
					return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
				uint16_t m = 0;
				for (uint32_t j = 0; j < a.table_length; j++, k += 2) {
					uint32_t s = at_label(ed, r[k]), e = at_label(ed, r[k + 1]);
					if (s >= code_length || e < s)
						continue;
					tt[m] = a.table[j];
					tt[m].start_pc = (uint16_t)s;
					tt[m].length = (uint16_t)(e - s);
					m++;
				}
				a.table = tt;
				a.table_length = m;
				keep = m > 0;
			} else if (a.target_type >= 0x43 && a.target_type <= 0x4b) {
				const jinst_node *in = &ed->nodes[r[k++] & ~INSN_REF];
				a.a = (uint16_t)in->offset;
				keep = !in->removed;
			} else if (a.target_type == 0x42) {
				keep = a.a < ed->orig_nex && ex_map[a.a] != UINT32_MAX;
				if (keep)
					a.a = (uint16_t)ex_map[a.a];
			}
			if (keep)
				it[n++] = a;
		}
		y->count = (uint16_t)n;
		y->items = it;
		*model = y;
		return 0;
	}
	}
}

/* ---- commit ------------------------------------------------------------------------------------ */

static bool placed(const jinst_edit *ed, jinst_label l)
{
	return ed->labels[l].node != NULL;
}

/* One walk before the rest of the commit: every label an instruction or
 * an exception entry names is placed; the depth flow's marks are cleared;
 * branch and switch targets and handlers are marked for the frames. */
static int check_placed(jinst_edit *ed, jinst_diag *diag)
{
	for (uint32_t i = 0; i < ed->nlabels; i++) {
		ed->labels[i].target = ed->labels[i].handler = false;
		ed->labels[i].catch_type = 0;
	}
	for (jinst_node *n = ed->head; n; n = n->next) {
		n->depth = -1;
		if (n->kind != NODE_INSN)
			continue;
		bool ok = true;
		if (is_branch(&n->insn)) {
			ok = placed(ed, n->insn.operand);
			ed->labels[n->insn.operand].target = true;
		} else if (n->insn.sw) {
			ok = placed(ed, n->insn.sw->default_target);
			ed->labels[n->insn.sw->default_target].target = true;
			for (uint32_t k = 0; k < n->insn.sw->count; k++) {
				ok &= placed(ed, n->insn.sw->targets[k]);
				ed->labels[n->insn.sw->targets[k]].target = true;
			}
		}
		if (!ok)
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "%s to a label that was never placed",
			                  jinst_opcode_name(n->insn.opcode));
	}
	for (uint32_t i = 0; i < ed->nex; i++) {
		if (!placed(ed, ed->ex[i].start) || !placed(ed, ed->ex[i].end) || !placed(ed, ed->ex[i].handler))
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "exception entry %u names a label never placed",
			                  (unsigned)i);
		const jinst_node *h = ed->labels[ed->ex[i].handler].node;
		while (h && h->kind == NODE_LABEL)
			h = h->next;
		if (!h)
			return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "exception handler %u at the end of the code",
			                  (unsigned)i);
	}
	for (uint32_t i = ed->nex; i-- > 0;) { /* the first entry's catch type wins */
		label_info *li = &ed->labels[ed->ex[i].handler];
		li->target = li->handler = true;
		li->catch_type = ed->ex[i].catch_type;
	}
	return 0;
}

static int commit(jinst_edit *ed, jinst_diag *diag)
{
	jinst_code *code = ed->code;
	int rc = check_placed(ed, diag);
	if (rc)
		return rc;
	if (!ed->head || ed->head == ed->labels[ed->end_label].node)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "no instruction left");
	uint32_t depth = 0;
	rc = depth_flow(ed, &depth, diag);
	if (rc)
		return rc;
	uint32_t max_stack = depth > code->max_stack ? depth : code->max_stack;
	uint32_t limit = ed->c->old_code_layout ? 255 : 65535;
	if (max_stack > limit || ed->max_locals > limit)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "max_stack %u / max_locals %u over %u",
		                  (unsigned)max_stack, ed->max_locals, (unsigned)limit);
	uint32_t code_length = 0, ninverted = 0;
	rc = layout(ed, &code_length, &ninverted, diag);
	if (rc)
		return rc;
	uint8_t *bytes = NULL;
	(void)ninverted;
	rc = encode(ed, code_length, &bytes, diag);
	if (rc)
		return rc;
	jinst_exception_entry *ex = NULL;
	uint16_t nex = 0;
	uint32_t *ex_map = NULL;
	rc = build_exceptions(ed, code_length, &ex, &nex, &ex_map, diag);
	if (rc)
		return rc;
	void **models = jinst_arena_alloc(ed->A, ((size_t)ed->ntracked + 1) * sizeof(void *));
	if (!models)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < ed->ntracked && !rc; i++)
		rc = build_attr(ed, &ed->tracked[i], code_length, ex_map, &models[i], diag);
	if (rc)
		return rc;
	/* Frames. */
	bool frames = false;
	jinst_stack_map *map = NULL;
	jinst_full_frame *ff = NULL;
	uint32_t nff = 0;
	if (ed->opts.frames == JINST_EDIT_FRAMES_KEEP && (ed->has_map || jinst_class_major_version(ed->c) >= 50)) {
		frames = true;
		rc = keep_frames(ed, max_stack, &ff, &nff, diag);
	} else if (ed->opts.frames == JINST_EDIT_FRAMES_ALL) {
		frames = true;
		jinst_code tmp = *code;
		tmp.code = bytes;
		tmp.code_length = code_length;
		tmp.max_stack = (uint16_t)max_stack;
		tmp.max_locals = ed->max_locals;
		tmp.exceptions = ex;
		tmp.exception_count = nex;
		rc = jinst_frames_infer(ed->c, ed->m, &tmp, ed->opts.hierarchy, &ff, &nff, diag);
	}
	if (!rc && frames && nff)
		rc = jinst_stack_map_compress(ed->c, ed->m, ff, nff, &map, diag);
	if (rc)
		return rc;
	/* Install: the attributes first, then the StackMapTable (which may
	 * move the attribute list), then the Code fields, which cannot fail. */
	void **old_models = jinst_arena_alloc(ed->A, ((size_t)ed->ntracked + 1) * sizeof(void *));
	bool *old_mod = jinst_arena_alloc(ed->A, (size_t)ed->ntracked + 1);
	if (!old_models || !old_mod)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < ed->ntracked; i++) {
		jinst_attr *a = ed->tracked[i].a;
		old_models[i] = a->model;
		old_mod[i] = a->modified;
		a->model = models[i];
		a->modified = true;
	}
	if (frames || ed->has_map) {
		rc = jinst_code_set_stack_map(ed->c, ed->m, map, diag);
		if (rc) {
			for (uint32_t i = 0; i < ed->ntracked; i++) {
				ed->tracked[i].a->model = old_models[i];
				ed->tracked[i].a->modified = old_mod[i];
			}
			return rc;
		}
	}
	code->code = bytes;
	code->code_length = code_length;
	code->max_stack = (uint16_t)max_stack;
	code->max_locals = ed->max_locals;
	code->exceptions = ex;
	code->exception_count = nex;
	ed->code_attr->modified = true;
	ed->m->modified = true;
	return 0;
}

int jinst_edit_commit(jinst_edit *ed, jinst_diag *diag)
{
	if (!ed || ed->closed)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "the editor is closed");
	if (diag) {
		diag->code = 0;
		diag->offset = JINST_NO_OFFSET;
		diag->where[0] = diag->message[0] = '\0';
	}
	ed->closed = true;
	if (!ed->dirty && !(ed->opts.flags & JINST_EDIT_REENCODE))
		return 0;
	int rc = commit(ed, diag);
	if (rc)
		jinst_diag_member(diag, ed->c, ed->m, true);
	return rc;
}

int jinst_edit_frame_before(jinst_edit *ed, jinst_node *n, jinst_full_frame *out, jinst_diag *diag)
{
	if (!ed || ed->closed || !n || !out || (n->kind == NODE_INSN && n->removed))
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "no such node in an open editor");
	/* The nearest frame at or before n: a label of n's position or before. */
	jinst_full_frame *from = NULL;
	jinst_node *from_node = NULL;
	for (jinst_node *p = n; p && !from; p = p->prev) {
		if (p->kind != NODE_LABEL || !ed->labels[p->label].frame)
			continue;
		from = ed->labels[p->label].given ? ed->labels[p->label].frame
		                                  : with_declared(ed, ed->labels[p->label].frame);
		if (!from)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		from_node = p;
	}
	/* Room for the stack: what the method had, and at most two words more
	 * for each instruction from there (no instruction adds more). */
	uint32_t words = ed->code->max_stack + 2;
	for (jinst_node *p = from_node ? from_node : ed->head; p && p != n; p = p->next)
		words += p->kind == NODE_INSN ? 2 : 0;
	jinst_sim s = {.max_locals = ed->max_locals, .max_stack = (uint16_t)(words > 65535 ? 65535 : words),
	               .new_class = sim_new_class, .ctx = ed};
	s.locals = jinst_arena_alloc(ed->A, ((size_t)s.max_locals + 1) * sizeof(jinst_ftype));
	s.stack = jinst_arena_alloc(ed->A, ((size_t)s.max_stack + 1) * sizeof(jinst_ftype));
	if (!s.locals || !s.stack)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	jinst_full_frame *f;
	int rc = derive(ed, &s, from, from_node, n, &f, diag);
	if (rc)
		return rc;
	*out = *f;
	/* Uninitialized types as the original offset of their `new` (what
	 * jinst_edit_set_frame takes), or 0xFFFF for a `new` the pass inserted. */
	for (int pass = 0; pass < 2; pass++) {
		jinst_ftype *t = pass ? out->stack : out->locals;
		uint16_t nt = pass ? out->nstack : out->nlocals;
		for (uint16_t k = 0; k < nt; k++)
			if (t[k].tag == JINST_VT_UNINITIALIZED && t[k].value < ed->nkeys) {
				uint32_t orig = ed->keys[t[k].value]->orig;
				t[k].value = orig == JINST_NO_OFFSET ? 0xFFFF : (uint16_t)orig;
			}
	}
	return 0;
}
