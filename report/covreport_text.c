/*
 * The text writers of coverage reports: JaCoCo's XML and CSV, LCOV
 * tracefiles, the console summary.
 *
 * XML follows JaCoCo 0.8.6's XMLFormatter byte for byte: no whitespace
 * between elements; report, then sessioninfo (by start), packages; in a
 * package its classes (methods, then counters), its source files (lines
 * with code, then counters), its counters; a counter only when its total
 * is not 0, in the order INSTRUCTION, BRANCH, LINE, COMPLEXITY, METHOD,
 * CLASS; attribute text with <, >, " and & escaped, as XMLElement.quote
 * does. JaCoCo lists packages, classes and source files in the order of its
 * HashMaps; here they are sorted by name (the only difference, which a
 * reader of the format cannot rely on either).
 *
 * LCOV has no partial lines and no instruction counts: DA gives the hit
 * count when recorded, else 1 for a line with a covered instruction and 0
 * for the others; each line's branches are BRDA entries numbered 0..n-1 of
 * block 0, the covered ones first (JaCoCo counts branches per line, not
 * which one ran), "-" for the branches of a line that never ran.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup, mkdir */
#include <inttypes.h>
#include <string.h>

#include "jinst/covreport.h"

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '&': fputs("&amp;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void xml_attr(FILE *f, const char *name, const char *value)
{
	fprintf(f, " %s=\"", name);
	xml_text(f, value);
	fputc('"', f);
}

static void xml_counters(FILE *f, const jinst_counter *c)
{
	for (int i = 0; i < JINST_CR_COUNT; i++)
		if (c[i].missed || c[i].covered)
			fprintf(f, "<counter type=\"%s\" missed=\"%" PRIu32 "\" covered=\"%" PRIu32 "\"/>",
			        jinst_covreport_counter_name(i), c[i].missed, c[i].covered);
}

static void xml_class(FILE *f, const jinst_covreport_class *c)
{
	fputs("<class", f);
	xml_attr(f, "name", c->name);
	if (c->source)
		xml_attr(f, "sourcefilename", c->source);
	fputc('>', f);
	for (size_t i = 0; i < c->method_count; i++) {
		const jinst_covreport_method *m = &c->methods[i];
		fputs("<method", f);
		xml_attr(f, "name", m->name);
		xml_attr(f, "desc", m->desc);
		if (m->line)
			fprintf(f, " line=\"%" PRIu32 "\"", m->line);
		fputc('>', f);
		xml_counters(f, m->counters);
		fputs("</method>", f);
	}
	xml_counters(f, c->counters);
	fputs("</class>", f);
}

static void xml_source(FILE *f, const jinst_covreport_source *s)
{
	fputs("<sourcefile", f);
	xml_attr(f, "name", s->name);
	fputc('>', f);
	for (size_t i = 0; i < s->line_count; i++) {
		const jinst_covreport_line *l = &s->lines[i];
		fprintf(f,
		        "<line nr=\"%" PRIu32 "\" mi=\"%" PRIu32 "\" ci=\"%" PRIu32 "\" mb=\"%" PRIu32 "\" cb=\"%" PRIu32
		        "\"/>",
		        l->nr, l->instructions.missed, l->instructions.covered, l->branches.missed, l->branches.covered);
	}
	xml_counters(f, s->counters);
	fputs("</sourcefile>", f);
}

int jinst_covreport_write_xml(FILE *f, const jinst_covreport *r)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
	      "<!DOCTYPE report PUBLIC \"-//JACOCO//DTD Report 1.1//EN\" \"report.dtd\"><report",
	      f);
	xml_attr(f, "name", r->name);
	fputc('>', f);
	for (size_t i = 0; i < r->session_count; i++) {
		fputs("<sessioninfo", f);
		xml_attr(f, "id", r->sessions[i].name);
		fprintf(f, " start=\"%" PRId64 "\" dump=\"%" PRId64 "\"/>", r->sessions[i].start_ms,
		        r->sessions[i].dump_ms);
	}
	for (size_t p = 0; p < r->package_count; p++) {
		const jinst_covreport_package *pk = &r->packages[p];
		fputs("<package", f);
		xml_attr(f, "name", pk->name);
		fputc('>', f);
		for (size_t i = 0; i < pk->class_count; i++)
			xml_class(f, &pk->classes[i]);
		for (size_t i = 0; i < pk->source_count; i++)
			xml_source(f, &pk->sources[i]);
		xml_counters(f, pk->counters);
		fputs("</package>", f);
	}
	xml_counters(f, r->counters);
	fputs("</report>", f);
	return ferror(f) ? JINST_EIO : 0;
}

/* ---- CSV --------------------------------------------------------------------- */

/* A value quoted when it holds the separator or the quote (JaCoCo's DelimitedWriter). */
static void csv_value(FILE *f, const char *s)
{
	if (!strchr(s, ',') && !strchr(s, '"')) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int jinst_covreport_write_csv(FILE *f, const jinst_covreport *r)
{
	fputs("GROUP,PACKAGE,CLASS,INSTRUCTION_MISSED,INSTRUCTION_COVERED,BRANCH_MISSED,BRANCH_COVERED,"
	      "LINE_MISSED,LINE_COVERED,COMPLEXITY_MISSED,COMPLEXITY_COVERED,METHOD_MISSED,METHOD_COVERED\n",
	      f);
	char pkg[1024], cls[1024];
	for (size_t p = 0; p < r->package_count; p++) {
		const jinst_covreport_package *pk = &r->packages[p];
		jinst_covreport_java_package(pkg, sizeof pkg, pk->name);
		for (size_t i = 0; i < pk->class_count; i++) {
			/* JaCoCo's CSV has no row for a class without code. */
			jinst_counter n = pk->classes[i].counters[JINST_CR_INSTRUCTION];
			if (!n.missed && !n.covered)
				continue;
			jinst_covreport_java_class(cls, sizeof cls, &pk->classes[i]);
			csv_value(f, r->name);
			fputc(',', f);
			csv_value(f, pkg);
			fputc(',', f);
			csv_value(f, cls);
			for (int k = 0; k < JINST_CR_CLASS; k++)
				fprintf(f, ",%" PRIu32 ",%" PRIu32, pk->classes[i].counters[k].missed,
				        pk->classes[i].counters[k].covered);
			fputc('\n', f);
		}
	}
	return ferror(f) ? JINST_EIO : 0;
}

/* ---- LCOV -------------------------------------------------------------------- */

/* FN names may hold no comma: a descriptor has none, a class name may not. */
static void lcov_function(FILE *f, const char *cls, const jinst_covreport_method *m)
{
	for (const char *s = cls; *s; s++)
		fputc(*s == ',' ? '_' : *s, f);
	fprintf(f, "::%s%s", m->name, m->desc);
}

static uint64_t line_hits(const jinst_covreport *r, const jinst_covreport_line *l)
{
	if (r->counts && l->hits)
		return l->hits;
	return l->instructions.covered ? 1 : 0;
}

static void lcov_functions(FILE *f, const jinst_covreport *r, const jinst_covreport_package *pk,
                           const jinst_covreport_source *s)
{
	unsigned fnf = 0, fnh = 0;
	for (size_t k = 0; k < s->class_count; k++) {
		const jinst_covreport_class *c = &pk->classes[s->classes[k]];
		for (size_t i = 0; i < c->method_count; i++) {
			const jinst_covreport_method *m = &c->methods[i];
			if (!m->line)
				continue;
			fprintf(f, "FN:%" PRIu32 ",", m->line);
			lcov_function(f, c->name, m);
			fputc('\n', f);
			uint64_t hits = m->counters[JINST_CR_METHOD].covered ? (r->counts && m->hits ? m->hits : 1) : 0;
			fprintf(f, "FNDA:%" PRIu64 ",", hits);
			lcov_function(f, c->name, m);
			fputc('\n', f);
			fnf++;
			fnh += hits != 0;
		}
	}
	fprintf(f, "FNF:%u\nFNH:%u\n", fnf, fnh);
}

static void lcov_source(FILE *f, const jinst_covreport *r, const jinst_covreport_package *pk,
                        const jinst_covreport_source *s, const char *path)
{
	fprintf(f, "TN:\nSF:%s\n", path);
	lcov_functions(f, r, pk, s);
	unsigned brf = 0, brh = 0, lh = 0;
	for (size_t i = 0; i < s->line_count; i++) {
		const jinst_covreport_line *l = &s->lines[i];
		uint32_t nb = l->branches.missed + l->branches.covered;
		for (uint32_t b = 0; b < nb; b++) {
			fprintf(f, "BRDA:%" PRIu32 ",0,%" PRIu32 ",", l->nr, b);
			if (b < l->branches.covered)
				fputs("1\n", f);
			else
				fputs(l->instructions.covered ? "0\n" : "-\n", f);
		}
		brf += nb;
		brh += l->branches.covered;
	}
	for (size_t i = 0; i < s->line_count; i++) {
		uint64_t hits = line_hits(r, &s->lines[i]);
		fprintf(f, "DA:%" PRIu32 ",%" PRIu64 "\n", s->lines[i].nr, hits);
		lh += hits != 0;
	}
	fprintf(f, "BRF:%u\nBRH:%u\nLF:%zu\nLH:%u\nend_of_record\n", brf, brh, s->line_count, lh);
}

int jinst_covreport_write_lcov(FILE *f, const jinst_covreport *r, jinst_covreport_locate_fn locate, void *ctx)
{
	char path[4096];
	for (size_t p = 0; p < r->package_count; p++) {
		const jinst_covreport_package *pk = &r->packages[p];
		for (size_t i = 0; i < pk->source_count; i++) {
			const jinst_covreport_source *s = &pk->sources[i];
			if (!locate || !locate(ctx, pk->name, s->name, path, sizeof path))
				snprintf(path, sizeof path, "%s%s%s", pk->name, *pk->name ? "/" : "", s->name);
			lcov_source(f, r, pk, s, path);
		}
	}
	return ferror(f) ? JINST_EIO : 0;
}

/* ---- console ----------------------------------------------------------------- */

static void summary_line(FILE *f, const char *what, jinst_counter c)
{
	uint32_t total = c.missed + c.covered;
	if (total)
		fprintf(f, "  %-13s %8" PRIu32 " of %8" PRIu32 " covered  %6.2f%%\n", what, c.covered, total,
		        100.0 * c.covered / total);
	else
		fprintf(f, "  %-13s %8" PRIu32 " of %8" PRIu32 " covered       n/a\n", what, c.covered, total);
}

int jinst_covreport_write_summary(FILE *f, const jinst_covreport *r)
{
	fprintf(f, "%s: %zu session%s, %zu package%s\n", r->name, r->session_count, r->session_count == 1 ? "" : "s",
	        r->package_count, r->package_count == 1 ? "" : "s");
	summary_line(f, "classes", r->counters[JINST_CR_CLASS]);
	summary_line(f, "methods", r->counters[JINST_CR_METHOD]);
	summary_line(f, "lines", r->counters[JINST_CR_LINE]);
	summary_line(f, "branches", r->counters[JINST_CR_BRANCH]);
	summary_line(f, "instructions", r->counters[JINST_CR_INSTRUCTION]);
	summary_line(f, "complexity", r->counters[JINST_CR_COMPLEXITY]);
	for (size_t i = 0; i < r->mismatch_count; i++)
		fprintf(f, "  not reported: %s (%s): the class file is not the one the data was recorded for\n",
		        r->mismatches[i].name, r->mismatches[i].where);
	return ferror(f) ? JINST_EIO : 0;
}
