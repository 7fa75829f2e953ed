/*
 * The code editor's commit: the tables remapped to the new offsets, and
 * the swap into the Code model.
 *
 * Atomicity. The commit computes everything (bytes, tables, frames) into
 * new arena memory and only then swaps it into the Code model, so a
 * failure at any step leaves the method as it was.
 */
#include "edit_internal.h"

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

/* JINST_EDIT_BALANCED: the original max_stack plus the highest any run of
 * inserted instructions climbs. A run starts at an original instruction's
 * position or at a label, where the caller vouches the stack is no deeper
 * than the original code's somewhere, so counting from 0 there bounds it. */
static int inserted_depth(jinst_edit *ed, uint32_t *max_stack, jinst_diag *diag)
{
	int32_t run = 0, most = 0;
	for (const jinst_node *n = ed->head; n; n = n->next) {
		if (n->kind == NODE_LABEL || n->orig != JINST_NO_OFFSET) {
			run = 0;
			continue;
		}
		int pops, pushes;
		if (jinst_insn_effect(ed->c, &n->insn, &pops, &pushes))
			return jinst_fail(diag, JINST_EMALFORMED, JINST_NO_OFFSET, "%s: bad constant #%d",
			                  jinst_opcode_name(n->insn.opcode), n->insn.operand);
		run += pushes - pops;
		if (run > most)
			most = run;
	}
	*max_stack = (uint32_t)ed->code->max_stack + (uint32_t)most;
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
	rc = ed->opts.flags & JINST_EDIT_BALANCED ? inserted_depth(ed, &depth, diag) : jinst_ed_depth_flow(ed, &depth, diag);
	if (rc)
		return rc;
	uint32_t max_stack = depth > code->max_stack ? depth : code->max_stack;
	uint32_t limit = ed->c->old_code_layout ? 255 : 65535;
	if (max_stack > limit || ed->max_locals > limit)
		return jinst_fail(diag, JINST_ETOOLARGE, JINST_NO_OFFSET, "max_stack %u / max_locals %u over %u",
		                  (unsigned)max_stack, ed->max_locals, (unsigned)limit);
	uint32_t code_length = 0, ninverted = 0;
	rc = jinst_ed_layout(ed, &code_length, &ninverted, diag);
	if (rc)
		return rc;
	uint8_t *bytes = NULL;
	(void)ninverted;
	rc = jinst_ed_encode(ed, code_length, &bytes, diag);
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
	if (ed->opts.frames == JINST_EDIT_FRAMES_KEEP && jinst_edit_writes_frames(ed)) {
		frames = true;
		rc = jinst_ed_keep_frames(ed, max_stack, &ff, &nff, diag);
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
