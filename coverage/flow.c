/*
 * Probe placement: JaCoCo 0.8.6's control-flow analysis (its
 * LabelFlowAnalyzer, LabelInfo, MethodProbesAdapter and ClassProbesAdapter)
 * over jinst's decoded code.
 *
 * JaCoCo reads a method through ASM, which puts a Label at every position
 * that something names (a branch or switch target, an exception range or
 * handler, a LineNumberTable or LocalVariableTable entry, a stack map
 * frame). Its label flow then walks the method once: each exception table
 * entry marks its start and its handler as targets, each jump and switch
 * its targets (a switch once per distinct target), the position at offset
 * 0 is a target (the method's entry), and a label reached by falling
 * through from the previous instruction is a "successor". A label with two
 * of these ways in is a multi-target. A line whose code holds a method
 * invocation marks its first label too, so that an exception thrown by the
 * call leaves the code before it covered.
 *
 * The second walk hands out the probe ids in code order: a probe on the
 * fall-through into a label that is a successor and a multi-target (or
 * starts such a line), before every return and athrow, on a jump to a
 * multi-target, and on each distinct switch edge to one (the default
 * first). Only the multi-target question needs a label; the others (which
 * positions hold one at all) matter to the analysis, where an instruction
 * without a label after a goto still counts as reached from it, as in
 * JaCoCo's InstructionsBuilder.
 *
 * jsr and ret are refused: JaCoCo inlines subroutines before this pass,
 * which changes the code the ids refer to.
 */
#include <stdio.h>

#include "internal.h"

int cov_fail(jinst_diag *diag, int code, const char *where, const char *message)
{
	if (diag) {
		memset(diag, 0, sizeof *diag);
		diag->code = code;
		diag->offset = JINST_NO_OFFSET;
		snprintf(diag->where, sizeof diag->where, "%s", where ? where : "");
		snprintf(diag->message, sizeof diag->message, "%s", message);
	}
	return code;
}

static void *zalloc(jinst_arena *arena, size_t count, size_t size)
{
	return jinst_arena_zalloc(arena, count ? count * size : 1);
}

/* A position ASM labels, when it starts an instruction. */
static void mark_label(cov_flow *f, uint32_t offset)
{
	if (offset < f->code_length && f->index_of[offset] >= 0)
		f->flags[f->index_of[offset]] |= COV_LABEL;
}

static int32_t index_at(const cov_flow *f, int32_t offset)
{
	if (offset < 0 || (uint32_t)offset >= f->code_length)
		return -1;
	return f->index_of[offset];
}

static void decode_lines(cov_flow *f, jinst_class *cls, jinst_attr *a)
{
	void *model = NULL;
	if (jinst_attr_decode(cls, a, &model, NULL) || !model)
		return;
	const jinst_line_numbers *ln = model;
	/* ASM keeps entries in table order per label and ignores line 0; the
	 * last one at a position is the line the analysis sees from there. */
	for (uint16_t k = 0; k < ln->count; k++) {
		uint32_t pc = ln->items[k].start_pc;
		mark_label(f, pc);
		if (pc < f->code_length && f->index_of[pc] >= 0 && ln->items[k].line_number != 0) {
			f->line_here[f->index_of[pc]] = ln->items[k].line_number;
			if (f->nlines[f->index_of[pc]] < UINT8_MAX)
				f->nlines[f->index_of[pc]]++;
		}
	}
}

static void decode_locals(cov_flow *f, jinst_class *cls, jinst_attr *a)
{
	void *model = NULL;
	if (jinst_attr_decode(cls, a, &model, NULL) || !model)
		return;
	const jinst_local_variables *lv = model;
	for (uint16_t k = 0; k < lv->count; k++) {
		mark_label(f, lv->items[k].start_pc);
		mark_label(f, (uint32_t)lv->items[k].start_pc + lv->items[k].length);
	}
}

static void mark_uninitialized(cov_flow *f, const jinst_vtype *types, uint16_t count)
{
	for (uint16_t k = 0; k < count; k++)
		if (types[k].tag == JINST_VT_UNINITIALIZED)
			mark_label(f, types[k].value);
}

static void decode_frames(cov_flow *f, jinst_class *cls, jinst_attr *a)
{
	void *model = NULL;
	if (jinst_attr_decode(cls, a, &model, NULL) || !model)
		return;
	const jinst_stack_map *map = model;
	uint32_t offset = 0;
	for (uint16_t k = 0; k < map->count; k++) {
		const jinst_frame *fr = &map->frames[k];
		offset = k == 0 ? fr->offset_delta : offset + fr->offset_delta + 1;
		mark_label(f, offset);
		if (offset < f->code_length && f->index_of[offset] >= 0)
			f->flags[f->index_of[offset]] |= COV_FRAME;
		mark_uninitialized(f, fr->locals, fr->nlocals);
		mark_uninitialized(f, fr->stack, fr->nstack);
	}
}

/* The positions ASM labels, and the lines the code's tables set. */
static void read_code_attrs(cov_flow *f, jinst_class *cls, jinst_code *code)
{
	for (uint16_t k = 0; k < code->exception_count; k++) {
		mark_label(f, code->exceptions[k].start_pc);
		mark_label(f, code->exceptions[k].end_pc);
		mark_label(f, code->exceptions[k].handler_pc);
	}
	for (uint16_t k = 0; k < code->attrs.count; k++) {
		jinst_attr *a = &code->attrs.items[k];
		if (a->kind == JINST_ATTR_LINE_NUMBER_TABLE)
			decode_lines(f, cls, a);
		else if (a->kind == JINST_ATTR_LOCAL_VARIABLE_TABLE || a->kind == JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE)
			decode_locals(f, cls, a);
		else if (a->kind == JINST_ATTR_STACK_MAP_TABLE)
			decode_frames(f, cls, a);
	}
}

/* Ways into each position, counted as LabelInfo.setTarget/setSuccessor do:
 * a second one makes it a multi-target. */
typedef struct ways {
	uint8_t *target;  /* setTarget seen */
	uint32_t *done;   /* switch serial that last named it (switch dedup) */
} ways;

static void set_target(cov_flow *f, ways *w, int32_t i)
{
	if (i < 0)
		return;
	if (w->target[i] || (f->flags[i] & COV_SUCCESSOR))
		f->flags[i] |= COV_MULTI;
	else
		w->target[i] = 1;
}

static void set_successor(cov_flow *f, ways *w, uint32_t i)
{
	f->flags[i] |= COV_SUCCESSOR;
	if (w->target[i])
		f->flags[i] |= COV_MULTI;
}

static bool falls_through(uint8_t op)
{
	return !cov_is_return(op) && !cov_is_goto(op) && !cov_is_switch(op);
}

/* LabelFlowAnalyzer: exception entries first, then the instructions. */
static void label_flow(cov_flow *f, const jinst_code *code, ways *w)
{
	for (uint16_t k = code->exception_count; k-- > 0;) {
		set_target(f, w, index_at(f, code->exceptions[k].start_pc));
		set_target(f, w, index_at(f, code->exceptions[k].handler_pc));
	}
	bool successor = false;
	int32_t line_start = -1;
	for (uint32_t i = 0; i < f->n; i++) {
		const jinst_insn *in = &f->insns[i];
		if (f->flags[i] & COV_LABEL) {
			if (i == 0)
				set_target(f, w, 0);
			if (successor)
				set_successor(f, w, i);
		}
		if (f->line_here[i])
			line_start = (int32_t)i;
		if (cov_is_jump(in->opcode)) {
			set_target(f, w, index_at(f, in->operand));
		} else if (cov_is_switch(in->opcode)) {
			uint32_t serial = i + 1;
			int32_t d = index_at(f, in->sw->default_target);
			set_target(f, w, d);
			if (d >= 0)
				w->done[d] = serial;
			for (uint32_t k = 0; k < in->sw->count; k++) {
				int32_t t = index_at(f, in->sw->targets[k]);
				if (t >= 0 && w->done[t] != serial) {
					set_target(f, w, t);
					w->done[t] = serial;
				}
			}
		} else if (cov_is_invoke(in->opcode) && line_start >= 0) {
			f->flags[line_start] |= COV_INVOKE_LINE;
		}
		successor = falls_through(in->opcode);
	}
}

/* MethodProbesAdapter.markLabels: the switch's probes, default first, one
 * per distinct multi-target. */
static int place_switch(cov_flow *f, jinst_arena *arena, uint32_t i, ways *w, uint32_t *id)
{
	const jinst_switch *sw = f->insns[i].sw;
	int32_t *p = zalloc(arena, (size_t)sw->count + 1, sizeof *p);
	if (!p)
		return JINST_ENOMEM;
	uint32_t serial = f->n + i + 1; /* distinct from label_flow's serials */
	for (uint32_t k = 0; k <= sw->count; k++) {
		int32_t t = index_at(f, k == 0 ? sw->default_target : sw->targets[k - 1]);
		if (t < 0 || w->done[t] == serial) {
			p[k] = COV_DUP;
			continue;
		}
		w->done[t] = serial;
		p[k] = (f->flags[t] & COV_MULTI) ? (int32_t)(*id)++ : COV_NO_PROBE;
	}
	f->sw_probe[i] = p;
	return 0;
}

static int place_probes(cov_flow *f, jinst_arena *arena, ways *w, uint32_t *id)
{
	uint32_t first = *id;
	for (uint32_t i = 0; i < f->n; i++) {
		const jinst_insn *in = &f->insns[i];
		uint8_t fl = f->flags[i];
		f->fall_probe[i] = COV_NO_PROBE;
		f->insn_probe[i] = COV_NO_PROBE;
		if ((fl & COV_SUCCESSOR) && (fl & (COV_MULTI | COV_INVOKE_LINE)))
			f->fall_probe[i] = (int32_t)(*id)++;
		if (cov_is_return(in->opcode)) {
			f->insn_probe[i] = (int32_t)(*id)++;
		} else if (cov_is_jump(in->opcode)) {
			int32_t t = index_at(f, in->operand);
			if (t >= 0 && (f->flags[t] & COV_MULTI))
				f->insn_probe[i] = (int32_t)(*id)++;
		} else if (cov_is_switch(in->opcode)) {
			int rc = place_switch(f, arena, i, w, id);
			if (rc)
				return rc;
		}
	}
	f->probe_count = *id - first;
	return 0;
}

static int alloc_flow(cov_flow *f, jinst_arena *arena, ways *w)
{
	f->index_of = jinst_arena_alloc(arena, ((size_t)f->code_length + 1) * sizeof *f->index_of);
	f->flags = zalloc(arena, f->n, sizeof *f->flags);
	f->line_here = zalloc(arena, f->n, sizeof *f->line_here);
	f->nlines = zalloc(arena, f->n, sizeof *f->nlines);
	f->fall_probe = zalloc(arena, f->n, sizeof *f->fall_probe);
	f->insn_probe = zalloc(arena, f->n, sizeof *f->insn_probe);
	f->sw_probe = zalloc(arena, f->n, sizeof *f->sw_probe);
	w->target = zalloc(arena, f->n, sizeof *w->target);
	w->done = zalloc(arena, f->n, sizeof *w->done);
	if (!f->index_of || !f->flags || !f->line_here || !f->nlines || !f->fall_probe || !f->insn_probe || !f->sw_probe ||
	    !w->target || !w->done)
		return JINST_ENOMEM;
	for (uint32_t k = 0; k <= f->code_length; k++)
		f->index_of[k] = -1;
	for (uint32_t i = 0; i < f->n; i++)
		f->index_of[f->insns[i].offset] = (int32_t)i;
	return 0;
}

/* Marks the positions jumps and switches name, and refuses subroutines. */
static int mark_targets(cov_flow *f, jinst_diag *diag)
{
	for (uint32_t i = 0; i < f->n; i++) {
		const jinst_insn *in = &f->insns[i];
		if (in->opcode == JINST_OP_JSR || in->opcode == JINST_OP_JSR_W || in->opcode == JINST_OP_RET)
			return cov_fail(diag, JINST_EUNSUPPORTED, "coverage", "jsr/ret: subroutines are not supported");
		if (cov_is_jump(in->opcode)) {
			mark_label(f, (uint32_t)in->operand);
		} else if (cov_is_switch(in->opcode)) {
			mark_label(f, (uint32_t)in->sw->default_target);
			for (uint32_t k = 0; k < in->sw->count; k++)
				mark_label(f, (uint32_t)in->sw->targets[k]);
		}
	}
	return 0;
}

int cov_flow_build(cov_flow *f, jinst_class *cls, jinst_member *method, jinst_arena *arena, uint32_t *next_id,
                   jinst_diag *diag)
{
	memset(f, 0, sizeof *f);
	f->method = method;
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(method), JINST_ATTR_CODE);
	if (!a)
		return 0;
	void *model = NULL;
	int rc = jinst_attr_decode(cls, a, &model, diag);
	if (rc)
		return rc;
	jinst_code *code = model;
	f->code = code;
	rc = jinst_code_decode(cls, code, &f->insns, &f->n, diag);
	if (rc)
		return rc;
	f->code_length = code->code_length;
	ways w;
	rc = alloc_flow(f, arena, &w);
	if (rc)
		return rc;
	rc = mark_targets(f, diag);
	if (rc)
		return rc;
	read_code_attrs(f, cls, code);
	label_flow(f, code, &w);
	return place_probes(f, arena, &w, next_id);
}
