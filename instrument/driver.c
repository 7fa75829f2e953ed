/*
 * One class through every pass (include/jinst/pass.h has the order of the
 * calls): parse once, select, refuse what is instrumented already, let each
 * pass begin, run the passes method by method, mark, write once, and check
 * the retransformation rules when the VM retransforms.
 *
 * Failing open (DESIGN.md, invariant 1). A method a pass cannot instrument
 * keeps what it had before that pass (the patcher and the editor change
 * nothing when they fail), is reported, and the rest goes on; any failure
 * of the class as a whole returns an error and no bytes, and the caller
 * keeps the original.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *jinst_ins_cstr(jinst_arena *A, const uint8_t *s, uint16_t len, size_t *out_len)
{
	char *p = jinst_arena_alloc(A, (size_t)len + 1);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	if (out_len)
		*out_len = len;
	return p;
}

/* The lowest line of the method's LineNumberTable(s), 0 without one. */
static uint32_t first_line(jinst_class *c, jinst_member *m)
{
	jinst_attr *code_attr = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	jinst_code *code;
	if (!code_attr || jinst_attr_decode(c, code_attr, (void **)&code, NULL) || !code)
		return 0;
	uint32_t line = 0;
	for (uint16_t i = 0; i < code->attrs.count; i++) {
		jinst_attr *a = &code->attrs.items[i];
		jinst_line_numbers *ln;
		if (a->kind != JINST_ATTR_LINE_NUMBER_TABLE || jinst_attr_decode(c, a, (void **)&ln, NULL) || !ln)
			continue;
		for (uint16_t j = 0; j < ln->count; j++)
			if (!line || ln->items[j].line_number < line)
				line = ln->items[j].line_number;
	}
	return line;
}

static const char *source_file(jinst_class *c)
{
	jinst_attr *a = jinst_attr_find(jinst_class_attrs(c), JINST_ATTR_SOURCE_FILE);
	jinst_attr_index *ix;
	if (!a || jinst_attr_decode(c, a, (void **)&ix, NULL) || !ix)
		return NULL;
	uint16_t len;
	const uint8_t *s = jinst_cp_utf8(c, ix->index, &len);
	return s ? jinst_ins_cstr(jinst_class_arena(c), s, len, NULL) : NULL;
}

/* Whether the class has a native PREFIXname of that descriptor: name is
 * then the natives pass's wrapper (natives.c). */
static bool wraps_native(jinst_class *c, const jinst_pass_method *k)
{
	size_t p = sizeof(JINST_NATIVE_PREFIX) - 1;
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		uint16_t nl, dl;
		const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(m), &nl);
		const uint8_t *d = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &dl);
		if ((jinst_member_access_flags(m) & JINST_ACC_NATIVE) && n && d && nl == p + k->name_len &&
		    dl == k->desc_len && !memcmp(n, JINST_NATIVE_PREFIX, p) && !memcmp(n + p, k->name, k->name_len) &&
		    !memcmp(d, k->descriptor, dl))
			return true;
	}
	return false;
}

/* The methods with code: abstract and native ones have none. Listed
 * again when a pass's begin added methods (natives.c). */
static int list_methods(jinst_pass_class *pc, jinst_diag *diag)
{
	jinst_class *c = pc->c;
	jinst_arena *A = jinst_class_arena(c);
	uint16_t count = jinst_class_method_count(c);
	pc->methods = jinst_arena_zalloc(A, (size_t)(count ? count : 1) * sizeof(*pc->methods));
	if (!pc->methods)
		return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
	pc->method_count = pc->natives = 0;
	for (uint16_t i = 0; i < count; i++) {
		jinst_member *m = jinst_class_method(c, i);
		pc->natives += (jinst_member_access_flags(m) & JINST_ACC_NATIVE) != 0;
		if ((jinst_member_access_flags(m) & (JINST_ACC_ABSTRACT | JINST_ACC_NATIVE)) ||
		    !jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE))
			continue;
		uint16_t l1, l2;
		const uint8_t *name = jinst_cp_utf8(c, jinst_member_name_index(m), &l1);
		const uint8_t *desc = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &l2);
		if (!name || !desc)
			return jinst_ins_fail(diag, JINST_EMALFORMED, "method %u: name or descriptor not a Utf8", i);
		jinst_pass_method *k = &pc->methods[pc->method_count++];
		k->cls = pc;
		k->m = m;
		k->name = jinst_ins_cstr(A, name, l1, &k->name_len);
		k->descriptor = jinst_ins_cstr(A, desc, l2, &k->desc_len);
		if (!k->name || !k->descriptor)
			return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
		k->first_line = first_line(c, m);
	}
	for (uint32_t i = 0; pc->natives && i < pc->method_count; i++)
		pc->methods[i].native_wrapper = wraps_native(c, &pc->methods[i]);
	return 0;
}

/* Appends "pass: what CODE: why" to the note in diag->message, the class's
 * losses so far being pc->losses. */
static void note_loss(jinst_diag *diag, jinst_pass_class *pc, const char *pass, const char *what, const char *desc,
                      const jinst_diag *why)
{
	if (!diag)
		return;
	size_t used = strlen(diag->message), room = sizeof(diag->message) - used;
	if (room > 1)
		snprintf(diag->message + used, room, "%s%s: %s%s %s%s%s", pc->losses ? "; " : "left alone: ", pass, what,
		         desc, jinst_strerror(why->code), why->message[0] ? ": " : "", why->message);
	pc->losses++;
}

/* Every pass on every method; *done counts the methods some pass changed. */
static void run_methods(jinst_pass_class *pc, const bool *taken, jinst_diag *diag, uint32_t *done)
{
	jinst_instrument *ins = pc->ins;
	for (uint32_t i = 0; i < pc->method_count; i++) {
		jinst_pass_method *k = &pc->methods[i];
		for (uint32_t p = 0; p < ins->pass_count; p++) {
			jinst_pass *pass = &ins->passes[p];
			if (!taken[p] || !pass->method)
				continue;
			jinst_diag why;
			jinst_ins_diag_clear(&why);
			int rc = pass->method(pass->state, pc, k, &why);
			if (rc == 0) {
				k->changed = true;
				pc->changed_by |= 1u << p;
			} else if (rc < 0) {
				why.code = rc;
				note_loss(diag, pc, pass->name, k->name, k->descriptor, &why);
				atomic_fetch_add(&ins->methods_left_alone, 1);
				if (ins->left_alone)
					ins->left_alone(ins->left_alone_ctx, pc->name, k->name, k->descriptor, &why);
			}
		}
		*done += k->changed;
	}
}

static void end_passes(jinst_pass_class *pc, const bool *taken, bool written)
{
	for (uint32_t p = 0; p < pc->ins->pass_count; p++)
		if (taken[p] && pc->ins->passes[p].end)
			pc->ins->passes[p].end(pc->ins->passes[p].state, pc, written);
}

static int write_class(jinst_pass_class *pc, const uint8_t *bytes, size_t len, uint8_t **out, size_t *out_len,
                       jinst_arena *arena, jinst_diag *diag)
{
	jinst_diag wd;
	int rc = jinst_marker_add(pc, diag);
	if (!rc && (rc = jinst_class_write(pc->c, NULL, out, out_len, &wd)) && diag) {
		diag->code = wd.code;
		snprintf(diag->message, sizeof(diag->message), "write: %.60s: %.180s", wd.where, wd.message);
	}
	if (rc || !(pc->flags & JINST_INSTRUMENT_RETRANSFORM))
		return rc;
	rc = jinst_instrument_check_rules(arena, bytes, len, *out, *out_len, &wd);
	if (rc) {
		free(*out);
		*out = NULL;
		*out_len = 0;
		if (diag) {
			diag->code = rc;
			snprintf(diag->message, sizeof(diag->message), "%s", wd.message);
		}
	}
	return rc;
}

/* Parses and selects: 0 with pc->c, its name, methods and source, or 0
 * with pc->c NULL when there is nothing to do (diag's message may say why). */
static int prepare(jinst_pass_class *pc, const uint8_t *bytes, size_t len, jinst_arena *arena, jinst_diag *diag)
{
	jinst_class *c;
	int rc = jinst_class_parse(&c, bytes, len, arena, NULL, diag);
	if (rc)
		return rc;
	pc->c = c;
	uint16_t nlen;
	const uint8_t *nm = jinst_class_name(c, &nlen);
	pc->name = nm ? jinst_ins_cstr(jinst_class_arena(c), nm, nlen, &pc->name_len) : NULL;
	if (!pc->name)
		return jinst_ins_fail(diag, JINST_EMALFORMED, "no class name");
	if (diag)
		snprintf(diag->where, sizeof(diag->where), "class %s", pc->name);
	const char *why;
	if (!jinst_instrument_wants(pc->ins, pc->name) || (jinst_class_access_flags(c) & JINST_ACC_MODULE))
		goto nothing;
	if (jinst_marker_found(c, pc->ins->hooks_class, &why)) {
		/* Offline, then loaded with the agent, say: twice would count twice. */
		if (diag)
			snprintf(diag->message, sizeof(diag->message), "already instrumented (%s)", why);
		goto nothing;
	}
	if ((rc = list_methods(pc, diag)))
		return rc;
	if (!pc->method_count && !pc->natives)
		goto nothing;
	pc->source = source_file(c);
	return 0;
nothing:
	jinst_class_free(c);
	pc->c = NULL;
	return 0;
}

/* Parses, selects and begins: 0 with *pc ready and taken[] set, or 0 with
 * pc->c NULL when there is nothing to do. */
static int begin(jinst_pass_class *pc, bool *taken, const uint8_t *bytes, size_t len, jinst_arena *arena,
                 jinst_diag *diag)
{
	int rc = prepare(pc, bytes, len, arena, diag);
	if (rc || !pc->c)
		return rc;
	bool any = false;
	for (uint32_t p = 0; p < pc->ins->pass_count; p++) {
		jinst_pass *pass = &pc->ins->passes[p];
		uint16_t methods = jinst_class_method_count(pc->c);
		jinst_diag why;
		jinst_ins_diag_clear(&why);
		rc = pass->begin ? pass->begin(pass->state, pc, &why) : 0;
		/* A pass that added methods (natives.c) changed the class: the
		 * passes after it see them listed. */
		if (rc >= 0 && methods != jinst_class_method_count(pc->c)) {
			pc->changed_by |= 1u << p;
			int lr = list_methods(pc, diag);
			rc = lr ? lr : rc;
		}
		if (rc < 0) {
			if (diag && why.code) {
				if (!why.where[0]) /* "class NAME", from prepare */
					memcpy(why.where, diag->where, sizeof(why.where));
				*diag = why;
			}
			end_passes(pc, taken, false);
			return rc;
		}
		if (rc == JINST_PASS_SKIP && why.code < 0) {
			note_loss(diag, pc, pass->name, "the class", "", &why);
			atomic_fetch_add(&pc->ins->classes_declined, 1);
			if (pc->ins->declined)
				pc->ins->declined(pc->ins->left_alone_ctx, pc->name, pass->name, &why);
		}
		taken[p] = rc == 0;
		any |= taken[p];
	}
	if (any)
		return 0;
	jinst_class_free(pc->c);
	pc->c = NULL;
	return 0;
}

int jinst_ins_run(jinst_instrument *ins, jinst_arena *arena, const uint8_t *bytes, size_t len,
                  const uint64_t *identity, uint32_t flags, uint8_t **out, size_t *out_len, jinst_diag *diag,
                  uint32_t *done)
{
	jinst_pass_class pc;
	memset(&pc, 0, sizeof(pc));
	pc.ins = ins;
	pc.flags = flags;
	pc.identity = identity ? *identity : jinst_instrument_identity(bytes, len);
	bool taken[32] = {false};
	int rc = begin(&pc, taken, bytes, len, arena, diag);
	if (rc || !pc.c) {
		jinst_class_free(pc.c);
		return rc;
	}
	run_methods(&pc, taken, diag, done);
	bool changed = *done || pc.changed_by;
	if (changed)
		rc = write_class(&pc, bytes, len, out, out_len, arena, diag);
	end_passes(&pc, taken, changed && !rc);
	jinst_class_free(pc.c);
	return rc;
}

/* Ids are handed out in the order they are first asked for: on many
 * threads, in the order the threads happen to reach each method. Asked for
 * here first, class after class in the caller's order, they are the same
 * in every run. The trace pass asks for one per method with code, in
 * declaration order, and sets `timed` itself when it asks again. */
int jinst_instrument_reserve_ids(jinst_instrument *ins, jinst_arena *arena, const uint8_t *bytes, size_t len,
                                 jinst_diag *diag)
{
	bool traced = false;
	for (uint32_t p = 0; p < ins->pass_count; p++)
		traced |= strcmp(ins->passes[p].name, "trace") == 0;
	if (!traced)
		return 0;
	jinst_pass_class pc;
	memset(&pc, 0, sizeof(pc));
	pc.ins = ins;
	int rc = prepare(&pc, bytes, len, arena, diag);
	for (uint32_t i = 0; !rc && pc.c && i < pc.method_count; i++) {
		uint32_t id;
		rc = jinst_methods_assign(&ins->methods, &pc, &pc.methods[i], 0, &id, diag);
	}
	jinst_class_free(pc.c);
	return rc;
}
