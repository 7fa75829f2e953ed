/*
 * One class's entry in a coverage report, from the class file and its
 * analysis (jinst_coverage_analyze): the names a report prints, converted
 * from modified UTF-8 once here so that the writers deal in UTF-8 only;
 * the lines with code (JaCoCo's ILine, EMPTY ones left out); the methods
 * the analysis kept, with their first line.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup, mkdir */
#include <stdlib.h>
#include <string.h>

#include "jinst/covreport.h"

/* A malloc'd UTF-8 copy of modified UTF-8 bytes, or NULL. */
static char *utf8_of(const uint8_t *b, uint16_t len)
{
	if (!b)
		return NULL;
	long n = jinst_mutf8_to_utf8(b, len, NULL, 0);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s)
		jinst_mutf8_to_utf8(b, len, s, (size_t)n + 1);
	return s;
}

static char *class_name_at(jinst_class *cf, uint16_t index)
{
	uint16_t len = 0;
	const uint8_t *b = index ? jinst_cp_name(cf, index, &len) : NULL;
	return utf8_of(b, len);
}

static char *source_file(jinst_class *cf)
{
	jinst_attr *a = jinst_attr_find(jinst_class_attrs(cf), JINST_ATTR_SOURCE_FILE);
	void *model = NULL;
	jinst_diag diag;
	if (!a || jinst_attr_decode(cf, a, &model, &diag) || !model)
		return NULL;
	uint16_t len;
	const uint8_t *b = jinst_cp_utf8(cf, ((jinst_attr_index *)model)->index, &len);
	return utf8_of(b, len);
}

static void counters_of(jinst_counter *dst, const jinst_coverage_node *n)
{
	dst[JINST_CR_INSTRUCTION] = n->instructions;
	dst[JINST_CR_BRANCH] = n->branches;
	dst[JINST_CR_LINE] = n->lines;
	dst[JINST_CR_COMPLEXITY] = n->complexity;
	dst[JINST_CR_METHOD] = n->methods;
	dst[JINST_CR_CLASS] = n->classes;
}

static int lines_of(jinst_covreport_class *cls, const jinst_coverage_node *n)
{
	size_t span = n->first_line ? n->last_line - n->first_line + 1 : 0;
	cls->lines = malloc((span + 1) * sizeof *cls->lines);
	if (!cls->lines)
		return JINST_ENOMEM;
	for (size_t i = 0; i < span; i++) {
		const jinst_coverage_line *l = &n->by_line[i];
		if (jinst_coverage_line_status(l) == JINST_COV_EMPTY)
			continue;
		jinst_covreport_line *out = &cls->lines[cls->line_count++];
		out->nr = n->first_line + (uint32_t)i;
		out->instructions = l->instructions;
		out->branches = l->branches;
		out->hits = l->hits;
	}
	return 0;
}

static int methods_of(jinst_covreport_class *cls, jinst_class *cf, const jinst_coverage_result *res)
{
	cls->methods = calloc((size_t)res->method_count + 1, sizeof *cls->methods);
	if (!cls->methods)
		return JINST_ENOMEM;
	for (uint16_t k = 0; k < res->method_count; k++) {
		const jinst_coverage_method_result *mr = &res->methods[k];
		jinst_member *m = jinst_class_method(cf, mr->method_index);
		jinst_covreport_method *out = &cls->methods[cls->method_count++];
		uint16_t len;
		const uint8_t *b = jinst_cp_utf8(cf, jinst_member_name_index(m), &len);
		out->name = utf8_of(b, len);
		b = jinst_cp_utf8(cf, jinst_member_descriptor_index(m), &len);
		out->desc = utf8_of(b, len);
		if (!out->name || !out->desc)
			return JINST_ENOMEM;
		out->line = mr->node.first_line;
		counters_of(out->counters, &mr->node);
		out->hits = mr->entry_hits;
	}
	return 0;
}

int jinst_covreport_class_from(jinst_covreport_class *cls, jinst_class *cf, const jinst_coverage_result *res,
                               jinst_diag *diag)
{
	memset(cls, 0, sizeof *cls);
	uint16_t len;
	const uint8_t *name = jinst_class_name(cf, &len);
	cls->name = utf8_of(name, len);
	cls->source = source_file(cf);
	cls->super_name = class_name_at(cf, jinst_class_super_class(cf));
	if (jinst_class_interface_count(cf))
		cls->interface0 = class_name_at(cf, jinst_class_interface(cf, 0));
	counters_of(cls->counters, &res->node);
	int rc = cls->name ? 0 : JINST_ENOMEM;
	if (!rc)
		rc = lines_of(cls, &res->node);
	if (!rc)
		rc = methods_of(cls, cf, res);
	if (rc) {
		jinst_covreport_class_clear(cls);
		diag->code = rc;
		diag->offset = JINST_NO_OFFSET;
		snprintf(diag->where, sizeof diag->where, "coverage report");
		snprintf(diag->message, sizeof diag->message, "out of memory");
	}
	return rc;
}
