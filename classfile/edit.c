/*
 * The code editor (include/jinst/edit.h): open a method's code as a list of
 * nodes, walk it, edit it. Committing is edit_commit.c's, with edit_layout.c
 * and edit_frames.c.
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
 */
#include <stddef.h>

#include "edit_internal.h"

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
int jinst_ed_key_of(jinst_edit *ed, jinst_node *n, uint16_t *key)
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
		int rc = jinst_ed_key_of(ed, &ed->nodes[ed->idx_at[off]], &t[i].value);
		if (rc)
			return jinst_fail(diag, rc, JINST_NO_OFFSET, "too many Uninitialized types");
	}
	return 0;
}

jinst_ftype *jinst_ed_copy_types(jinst_arena *A, const jinst_ftype *t, uint16_t n)
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
		f->locals = jinst_ed_copy_types(ed->A, ff[i].locals, ff[i].nlocals);
		f->stack = jinst_ed_copy_types(ed->A, ff[i].stack, ff[i].nstack);
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

/* One node per original instruction, and the offset -> node and offset ->
 * label maps (-1: none yet). */
static int open_nodes(jinst_edit *ed, const jinst_insn *insns, uint32_t n, jinst_diag *diag)
{
	uint32_t len = ed->code->code_length;
	ed->ninsns = n;
	ed->nodes = jinst_arena_alloc(ed->A, ((size_t)n + 1) * sizeof(jinst_node));
	ed->idx_at = jinst_arena_alloc(ed->A, ((size_t)len + 1) * sizeof(int32_t));
	ed->lab_at = jinst_arena_alloc(ed->A, ((size_t)len + 1) * sizeof(jinst_label));
	if (!ed->nodes || !ed->idx_at || !ed->lab_at)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
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
	return 0;
}

/* A switch's copy whose default and targets are labels. */
static int label_switch(jinst_edit *ed, jinst_insn *in, jinst_diag *diag)
{
	jinst_label l;
	jinst_switch *sw = jinst_arena_alloc(ed->A, sizeof(*sw));
	int32_t *t = jinst_arena_alloc(ed->A, ((size_t)in->sw->count + 1) * sizeof(int32_t));
	if (!sw || !t)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	*sw = *in->sw;
	int rc = ref(ed, (uint32_t)sw->default_target, &l, diag, "switch");
	sw->default_target = (int32_t)l;
	for (uint32_t k = 0; k < sw->count && !rc; k++) {
		rc = ref(ed, (uint32_t)in->sw->targets[k], &l, diag, "switch");
		t[k] = (int32_t)l;
	}
	sw->targets = t;
	in->sw = sw;
	return rc;
}

/* Branch operands and switch targets become labels. */
static int label_jumps(jinst_edit *ed, jinst_diag *diag)
{
	int rc = 0;
	for (uint32_t i = 0; i < ed->ninsns && !rc; i++) {
		jinst_insn *in = &ed->nodes[i].insn;
		jinst_label l;
		if (is_branch(in)) {
			rc = ref(ed, (uint32_t)in->operand, &l, diag, "branch");
			in->operand = (int32_t)l;
		} else if (in->sw) {
			rc = label_switch(ed, in, diag);
		}
	}
	return rc;
}

/* The exception table, its positions as labels. */
static int open_exception_table(jinst_edit *ed, jinst_diag *diag)
{
	const jinst_code *code = ed->code;
	ed->orig_nex = ed->nex = code->exception_count;
	if (!grow(ed->A, (void **)&ed->ex, &ed->cap_ex, ed->nex + 1, sizeof(xentry)))
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	int rc = 0;
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
	return rc;
}

/* The Code attribute's own attributes that name positions, and its first
 * StackMapTable (opened when the frames are kept). */
static int open_code_attrs(jinst_edit *ed, jinst_diag *diag)
{
	const jinst_code *code = ed->code;
	ed->tracked = jinst_arena_alloc(ed->A, ((size_t)code->attrs.count + 1) * sizeof(tracked_attr));
	if (!ed->tracked)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	jinst_attr *smt = NULL;
	int rc = 0;
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
	return rc;
}

/* Whether the original code has a position the verifier wants a frame at
 * (JVMS 4.10.1: a branch or switch target, a handler, code after an
 * unconditional transfer; a jsr's target needs none). A method of 50 or
 * later that has one and no StackMapTable comes from a VM that does not
 * verify its class (classfile/patch.c, "Methods without frames"). */
static bool needs_frames(const jinst_edit *ed)
{
	if (ed->code->exception_count)
		return true;
	for (uint32_t i = 0; i < ed->ninsns; i++) {
		const jinst_insn *in = &ed->nodes[i].insn;
		if ((is_branch(in) && !(jinst_opcodes[in->opcode].flags & JINST_OPF_SUBROUTINE)) || in->sw ||
		    (unconditional(in->opcode) && i + 1 < ed->ninsns))
			return true;
	}
	return false;
}

static void append_node(jinst_edit *ed, jinst_node **prev, jinst_node *nd)
{
	nd->prev = *prev;
	if (*prev)
		(*prev)->next = nd;
	else
		ed->head = nd;
	*prev = nd;
}

/* Links the list: each instruction after the label of its offset, the end label last. */
static int link_nodes(jinst_edit *ed, jinst_diag *diag)
{
	uint32_t n = ed->ninsns, len = ed->code->code_length;
	jinst_node *lnodes = jinst_arena_zalloc(ed->A, ((size_t)ed->nlabels + 1) * sizeof(jinst_node));
	if (!lnodes)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	jinst_node *prev = NULL;
	uint32_t nl = 0;
	for (uint32_t i = 0; i <= n; i++) {
		uint32_t off = i < n ? ed->nodes[i].orig : len;
		jinst_label l = ed->lab_at[off];
		if (l != JINST_NO_LABEL)
			append_node(ed, &prev, label_node(ed, &lnodes[nl++], l));
		if (i < n)
			append_node(ed, &prev, &ed->nodes[i]);
	}
	prev->next = NULL;
	ed->tail = prev;
	return 0;
}

int jinst_edit_open(jinst_edit **out, jinst_class *c, jinst_member *m, const jinst_edit_options *opts,
                    jinst_diag *diag)
{
	*out = NULL;
	int rc = jinst_member_attrs_load(m, diag);
	if (rc)
		return rc;
	jinst_attr *ca = jinst_attr_find(&m->attrs, JINST_ATTR_CODE);
	if (!ca)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "method has no Code");
	jinst_code *code;
	if ((rc = jinst_attr_decode(c, ca, (void **)&code, diag)))
		goto fail;
	jinst_edit *ed = jinst_arena_zalloc(c->arena, sizeof(*ed));
	if (!ed)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	ed->c = c;
	ed->m = m;
	ed->code_attr = ca;
	ed->code = code;
	ed->A = c->arena;
	ed->opts = (jinst_edit_options)JINST_EDIT_OPTIONS_INIT;
	if (opts) /* a version 1 caller's struct ends before the decoded instructions */
		memcpy(&ed->opts, opts, opts->version >= 2 ? sizeof(*opts) : offsetof(jinst_edit_options, decoded));
	ed->max_locals = code->max_locals;
	ed->orig_code = code->code;
	const jinst_insn *insns = ed->opts.decoded;
	uint32_t n = ed->opts.decoded_count;
	if (!insns || !n || ed->opts.decoded_code != code->code) {
		jinst_insn *fresh;
		if ((rc = jinst_code_decode(c, code, &fresh, &n, diag)))
			goto fail;
		insns = fresh;
	}
	ed->opts.decoded = NULL; /* not kept past the open */
	if ((rc = open_nodes(ed, insns, n, diag)) ||
	    (rc = label_jumps(ed, diag)) || (rc = ref(ed, code->code_length, &ed->end_label, diag, "end")) ||
	    (rc = open_exception_table(ed, diag)) || (rc = open_code_attrs(ed, diag)) || (rc = link_nodes(ed, diag)))
		goto fail;
	ed->frameless = c->major_version >= 50 && !ed->has_map && needs_frames(ed);
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

bool jinst_edit_writes_frames(const jinst_edit *ed)
{
	return ed->opts.frames == JINST_EDIT_FRAMES_ALL ||
	       (ed->opts.frames == JINST_EDIT_FRAMES_KEEP && (ed->has_map || (ed->c->major_version >= 50 && !ed->frameless)));
}

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
	f->locals = jinst_ed_copy_types(ed->A, frame->locals, frame->nlocals);
	f->stack = jinst_ed_copy_types(ed->A, frame->stack, frame->nstack);
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
				int rc = jinst_ed_key_of(ed, &ed->nodes[ed->idx_at[off]], &t[i].value);
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
