/*
 * The code editor's frames: kept, given and derived.
 *
 * Frames (JVMS 4.7.4, 4.10.1). See edit.h for the rules. After layout the
 * list is walked once: each instruction that needs a frame and has none
 * gets one derived from the last frame before it, by running the abstract
 * interpreter of infer.c (jinst_sim_step) over the straight-line code in
 * between; the derived frame is then the starting point for the next one,
 * so the whole walk stays linear.
 */
#include "edit_internal.h"

/* ---- commit: frames ---------------------------------------------------------------------- */

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
int jinst_ed_derive(jinst_edit *ed, jinst_sim *s, const jinst_full_frame *from, jinst_node *from_node, jinst_node *to,
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
			int rc = jinst_ed_key_of(ed, n, &key);
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
jinst_full_frame *jinst_ed_with_declared(jinst_edit *ed, jinst_full_frame *f)
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

/* The interpreter's state with room for max_locals and max_stack words. */
static int new_sim(jinst_edit *ed, jinst_sim *s, uint16_t max_stack, jinst_diag *diag)
{
	*s = (jinst_sim){.max_locals = ed->max_locals, .max_stack = max_stack, .new_class = sim_new_class, .ctx = ed};
	s->locals = jinst_arena_alloc(ed->A, ((size_t)s->max_locals + 1) * sizeof(jinst_ftype));
	s->stack = jinst_arena_alloc(ed->A, ((size_t)s->max_stack + 1) * sizeof(jinst_ftype));
	if (!s->locals || !s->stack)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	return 0;
}

/* A handler's frame: nothing in the locals, the caught class on the stack. */
static jinst_full_frame *handler_frame(jinst_edit *ed, const label_info *handler)
{
	jinst_full_frame *f = jinst_arena_zalloc(ed->A, sizeof(*f));
	jinst_ftype *t = jinst_arena_alloc(ed->A, sizeof(*t));
	if (!f || !t)
		return NULL;
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
	return f;
}

/* The walk over the list: what the labels since the last instruction say. */
typedef struct frame_walk {
	jinst_sim s;
	jinst_full_frame *cur, *given, *kept; /* the last frame placed; the frames of the labels */
	jinst_node *cur_node;
	bool need;           /* a target, or after an unconditional transfer */
	label_info *handler; /* a handler's label */
} frame_walk;

/* The frame before instruction n, or NULL when it needs none: given, kept
 * (with the declared locals), a handler's, or derived from the last one. */
static int frame_at(jinst_edit *ed, frame_walk *w, jinst_node *n, jinst_full_frame **out, jinst_diag *diag)
{
	jinst_full_frame *f = w->given;
	if (!f && w->kept && !(f = jinst_ed_with_declared(ed, w->kept)))
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	if (!f && w->need && w->handler) {
		if (!(f = handler_frame(ed, w->handler)))
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	} else if (!f && w->need) {
		int rc = jinst_ed_derive(ed, &w->s, w->cur, w->cur_node, n, &f, diag);
		if (rc)
			return rc;
	}
	*out = f;
	return 0;
}

/* The frames placed, each at the node it goes before. */
static int place_frames(jinst_edit *ed, frame_walk *w, placed_frame **out, uint32_t *count, jinst_diag *diag)
{
	placed_frame *pf = NULL;
	uint32_t np = 0, cap = 0;
	bool after = false;
	for (jinst_node *n = ed->head; n; n = n->next) {
		if (n->kind == NODE_LABEL) {
			label_info *li = &ed->labels[n->label];
			if (li->frame) {
				if (li->given)
					w->given = li->frame;
				else
					w->kept = li->frame;
			}
			w->need |= li->target;
			if (li->handler)
				w->handler = li;
			continue;
		}
		w->need |= after;
		jinst_full_frame *f = NULL;
		int rc = frame_at(ed, w, n, &f, diag);
		if (rc)
			return rc;
		if (f) {
			if (!grow(ed->A, (void **)&pf, &cap, np + 1, sizeof(*pf)))
				return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
			pf[np++] = (placed_frame){n, f};
			w->cur = f;
			w->cur_node = n;
		}
		w->given = w->kept = NULL;
		w->handler = NULL;
		w->need = false;
		after = unconditional(n->insn.opcode) || n->form == FORM_INVERT;
	}
	*out = pf;
	*count = np;
	return 0;
}

static bool has_uninitialized(const jinst_full_frame *f)
{
	bool uninit = false;
	for (uint16_t k = 0; k < f->nlocals; k++)
		uninit |= f->locals[k].tag == JINST_VT_UNINITIALIZED;
	for (uint16_t k = 0; k < f->nstack; k++)
		uninit |= f->stack[k].tag == JINST_VT_UNINITIALIZED;
	return uninit;
}

/* o's Uninitialized types (copied first) naming the new offset of their `new`. */
static int remap_uninitialized(jinst_edit *ed, jinst_full_frame *o, const jinst_full_frame *f, jinst_diag *diag)
{
	o->locals = jinst_ed_copy_types(ed->A, f->locals, f->nlocals);
	o->stack = jinst_ed_copy_types(ed->A, f->stack, f->nstack);
	if (!o->locals || !o->stack)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (int pass = 0; pass < 2; pass++) {
		jinst_ftype *t = pass ? o->stack : o->locals;
		uint16_t nt = pass ? o->nstack : o->nlocals;
		for (uint16_t k = 0; k < nt; k++) {
			if (t[k].tag != JINST_VT_UNINITIALIZED)
				continue;
			jinst_node *nn = t[k].value < ed->nkeys ? ed->keys[t[k].value] : NULL;
			if (!nn || nn->removed)
				return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "a frame names Uninitialized of a removed new");
			t[k].value = (uint16_t)nn->offset;
		}
	}
	return 0;
}

/* The frames of the new code, as full frames at the new offsets (see edit.h). */
/* Needs the target and handler marks of check_placed. */
int jinst_ed_keep_frames(jinst_edit *ed, uint32_t max_stack, jinst_full_frame **out, uint32_t *count, jinst_diag *diag)
{
	frame_walk w = {0};
	placed_frame *pf = NULL;
	uint32_t np = 0;
	int rc = new_sim(ed, &w.s, (uint16_t)(max_stack ? max_stack : 1), diag);
	if (rc || (rc = place_frames(ed, &w, &pf, &np, diag)))
		return rc;
	/* At the new offsets, Uninitialized types naming the new offset of their `new`. */
	jinst_full_frame *o = jinst_arena_alloc(ed->A, ((size_t)np + 1) * sizeof(*o));
	if (!o)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	for (uint32_t i = 0; i < np; i++) {
		o[i] = *pf[i].f;
		o[i].offset = pf[i].at->offset;
		if (has_uninitialized(pf[i].f) && (rc = remap_uninitialized(ed, &o[i], pf[i].f, diag)))
			return rc;
	}
	*out = o;
	*count = np;
	return 0;
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
		                                  : jinst_ed_with_declared(ed, ed->labels[p->label].frame);
		if (!from)
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
		from_node = p;
	}
	/* Room for the stack: what the method had, and at most two words more
	 * for each instruction from there (no instruction adds more). */
	uint32_t words = ed->code->max_stack + 2;
	for (jinst_node *p = from_node ? from_node : ed->head; p && p != n; p = p->next)
		words += p->kind == NODE_INSN ? 2 : 0;
	jinst_sim s;
	int rc = new_sim(ed, &s, (uint16_t)(words > 65535 ? 65535 : words), diag);
	if (rc)
		return rc;
	jinst_full_frame *f;
	rc = jinst_ed_derive(ed, &s, from, from_node, n, &f, diag);
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
