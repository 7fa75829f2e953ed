/*
 * The class plan: every method with code, in method-table order, with its
 * probe sites (flow.c computes them), ids consecutive over the class as
 * JaCoCo's ClassProbesAdapter hands them out; and the class-level facts
 * JaCoCo's ProbeArrayStrategyFactory decides by.
 */
#include "internal.h"

static bool name_is(jinst_class *cls, uint16_t index, const char *s)
{
	uint16_t len;
	const uint8_t *b = jinst_cp_utf8(cls, index, &len);
	return b && len == strlen(s) && memcmp(b, s, len) == 0;
}

static uint32_t count_sites(const cov_flow *f)
{
	return f->probe_count;
}

static void add_site(jinst_probe_site *s, uint32_t *n, uint8_t kind, uint32_t offset, uint32_t target, int32_t id)
{
	s[*n] = (jinst_probe_site){kind, offset, target, (uint32_t)id};
	(*n)++;
}

static void list_switch(const cov_flow *f, uint32_t i, jinst_probe_site *s, uint32_t *n)
{
	const jinst_insn *in = &f->insns[i];
	for (uint32_t k = 0; k <= in->sw->count; k++) {
		int32_t id = f->sw_probe[i][k];
		if (id >= 0)
			add_site(s, n, JINST_PROBE_SWITCH, in->offset,
			         (uint32_t)(k == 0 ? in->sw->default_target : in->sw->targets[k - 1]), id);
	}
}

/* The sites of one method in id order (which is code order). */
static void list_sites(const cov_flow *f, jinst_probe_site *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->n; i++) {
		const jinst_insn *in = &f->insns[i];
		if (f->fall_probe[i] >= 0)
			add_site(s, &n, JINST_PROBE_FALLTHROUGH, in->offset, JINST_NO_OFFSET, f->fall_probe[i]);
		if (f->insn_probe[i] >= 0) {
			bool jump = cov_is_jump(in->opcode);
			add_site(s, &n, jump ? JINST_PROBE_JUMP : JINST_PROBE_BEFORE, in->offset,
			         jump ? (uint32_t)in->operand : JINST_NO_OFFSET, f->insn_probe[i]);
		}
		if (f->sw_probe[i])
			list_switch(f, i, s, &n);
	}
}

static uint32_t class_flags(jinst_class *cls)
{
	uint16_t acc = jinst_class_access_flags(cls);
	if (!(acc & (JINST_ACC_INTERFACE | JINST_ACC_MODULE)))
		return 0;
	for (uint16_t k = 0; k < jinst_class_method_count(cls); k++) {
		jinst_member *m = jinst_class_method(cls, k);
		if (!(jinst_member_access_flags(m) & JINST_ACC_ABSTRACT) &&
		    !name_is(cls, jinst_member_name_index(m), "<clinit>"))
			return JINST_COVERAGE_INTERFACE;
	}
	return JINST_COVERAGE_INTERFACE | JINST_COVERAGE_CLINIT_ONLY;
}

static bool has_code(jinst_member *m)
{
	return jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE) != NULL;
}

int jinst_coverage_place(jinst_coverage_plan **out, jinst_class *cls, jinst_diag *diag)
{
	if (!out || !cls)
		return cov_fail(diag, JINST_EINVAL, "coverage", "NULL argument");
	*out = NULL;
	jinst_arena *arena = jinst_class_arena(cls);
	jinst_coverage_plan *plan = jinst_arena_zalloc(arena, sizeof *plan);
	if (!plan)
		return JINST_ENOMEM;
	uint16_t total = jinst_class_method_count(cls), with_code = 0;
	for (uint16_t k = 0; k < total; k++)
		with_code += has_code(jinst_class_method(cls, k));
	plan->methods = jinst_arena_zalloc(arena, (size_t)(with_code ? with_code : 1) * sizeof *plan->methods);
	if (!plan->methods)
		return JINST_ENOMEM;
	uint32_t id = 0;
	for (uint16_t k = 0; k < total; k++) {
		jinst_member *m = jinst_class_method(cls, k);
		if (!has_code(m))
			continue;
		cov_flow f;
		int rc = cov_flow_build(&f, cls, m, arena, &id, diag);
		if (rc)
			return rc;
		jinst_coverage_method *cm = &plan->methods[plan->method_count++];
		cm->method_index = k;
		cm->first_probe = id - f.probe_count;
		cm->site_count = count_sites(&f);
		cm->insns = f.insns;
		cm->insn_count = f.n;
		cm->code = f.code ? f.code->code : NULL;
		cm->sites = jinst_arena_alloc(arena, (size_t)(cm->site_count ? cm->site_count : 1) * sizeof *cm->sites);
		if (!cm->sites)
			return JINST_ENOMEM;
		list_sites(&f, cm->sites);
	}
	plan->probe_count = id;
	plan->flags = class_flags(cls);
	*out = plan;
	return 0;
}
