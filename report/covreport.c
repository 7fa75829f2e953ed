/*
 * The coverage report model (include/jinst/covreport.h).
 *
 * Classes are appended as they come, each a deep copy. finish sorts them
 * by (package, name), cuts the sorted run into packages (a package is the
 * run of classes whose names agree up to the last '/'), and within a
 * package groups them by SourceFile: the source files of a package are the
 * distinct SourceFile names of its classes, sorted, and a source file's
 * lines are the merge of its classes' lines (counters added, as JaCoCo's
 * SourceFileCoverageImpl.increment does; hits the highest). Counters sum
 * upwards: class into source file, source file (and a class in none) into
 * package, package into the bundle; a source file's LINE counter is counted
 * on its merged lines, as JaCoCo's SourceNodeImpl.incrementLine does.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup, mkdir */
#include <stdlib.h>
#include <string.h>

#include "jinst/covreport.h"

typedef struct cr_internal {
	size_t class_count, class_cap;
	jinst_covreport_class *classes;
	bool finished;
} cr_internal;

static const char *const counter_names[JINST_CR_COUNT] = {"INSTRUCTION", "BRANCH", "LINE",
                                                         "COMPLEXITY",  "METHOD", "CLASS"};

const char *jinst_covreport_counter_name(enum jinst_covreport_counter c)
{
	return (unsigned)c < JINST_CR_COUNT ? counter_names[c] : "?";
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int jinst_covreport_new(jinst_covreport **out, const char *name)
{
	*out = NULL;
	jinst_covreport *r = calloc(1, sizeof *r);
	cr_internal *in = calloc(1, sizeof *in);
	if (!r || !in || !(r->name = strdup(name ? name : ""))) {
		free(r);
		free(in);
		return JINST_ENOMEM;
	}
	r->internal = in;
	*out = r;
	return 0;
}

void jinst_covreport_class_clear(jinst_covreport_class *cls)
{
	if (!cls)
		return;
	for (size_t i = 0; i < cls->method_count; i++) {
		free(cls->methods[i].name);
		free(cls->methods[i].desc);
	}
	free(cls->methods);
	free(cls->lines);
	free(cls->name);
	free(cls->source);
	free(cls->super_name);
	free(cls->interface0);
	memset(cls, 0, sizeof *cls);
}

void jinst_covreport_free(jinst_covreport *r)
{
	if (!r)
		return;
	cr_internal *in = r->internal;
	for (size_t i = 0; in && i < in->class_count; i++)
		jinst_covreport_class_clear(&in->classes[i]);
	free(in ? in->classes : NULL);
	free(in);
	for (size_t p = 0; p < r->package_count; p++) {
		jinst_covreport_package *pk = &r->packages[p];
		for (size_t s = 0; s < pk->source_count; s++) {
			free(pk->sources[s].lines);
			free(pk->sources[s].classes);
		}
		free(pk->sources);
		free(pk->name);
	}
	free(r->packages);
	for (size_t i = 0; i < r->session_count; i++)
		free(r->sessions[i].name);
	free(r->sessions);
	for (size_t i = 0; i < r->mismatch_count; i++) {
		free(r->mismatches[i].name);
		free(r->mismatches[i].where);
	}
	free(r->mismatches);
	free(r->name);
	free(r);
}

int jinst_covreport_add_session(jinst_covreport *r, const char *name, int64_t start_ms, int64_t dump_ms)
{
	jinst_covreport_session *s = realloc(r->sessions, (r->session_count + 1) * sizeof *s);
	if (!s)
		return JINST_ENOMEM;
	r->sessions = s;
	s += r->session_count;
	if (!(s->name = strdup(name ? name : "")))
		return JINST_ENOMEM;
	s->start_ms = start_ms;
	s->dump_ms = dump_ms;
	r->session_count++;
	return 0;
}

int jinst_covreport_add_mismatch(jinst_covreport *r, const char *name, const char *where, uint64_t file_identity,
                                 uint64_t data_identity)
{
	jinst_covreport_mismatch *m = realloc(r->mismatches, (r->mismatch_count + 1) * sizeof *m);
	if (!m)
		return JINST_ENOMEM;
	r->mismatches = m;
	m += r->mismatch_count;
	m->name = strdup(name);
	m->where = strdup(where);
	m->file_identity = file_identity;
	m->data_identity = data_identity;
	r->mismatch_count++;
	return m->name && m->where ? 0 : JINST_ENOMEM;
}

static int copy_class(jinst_covreport_class *dst, const jinst_covreport_class *src)
{
	*dst = *src;
	dst->name = strdup(src->name);
	dst->source = dup_or_null(src->source);
	dst->super_name = dup_or_null(src->super_name);
	dst->interface0 = dup_or_null(src->interface0);
	dst->methods = calloc(src->method_count + 1, sizeof *dst->methods);
	dst->lines = malloc((src->line_count + 1) * sizeof *dst->lines);
	dst->method_count = 0;
	if (!dst->name || !dst->methods || !dst->lines || (src->source && !dst->source) ||
	    (src->super_name && !dst->super_name) || (src->interface0 && !dst->interface0))
		return JINST_ENOMEM;
	if (src->line_count)
		memcpy(dst->lines, src->lines, src->line_count * sizeof *dst->lines);
	for (size_t i = 0; i < src->method_count; i++) {
		jinst_covreport_method *m = &dst->methods[dst->method_count++];
		*m = src->methods[i];
		m->name = strdup(src->methods[i].name);
		m->desc = strdup(src->methods[i].desc);
		if (!m->name || !m->desc)
			return JINST_ENOMEM;
	}
	return 0;
}

int jinst_covreport_add_class(jinst_covreport *r, const jinst_covreport_class *cls)
{
	cr_internal *in = r->internal;
	if (in->finished)
		return JINST_EINVAL;
	if (in->class_count == in->class_cap) {
		size_t cap = in->class_cap ? in->class_cap * 2 : 16;
		jinst_covreport_class *c = realloc(in->classes, cap * sizeof *c);
		if (!c)
			return JINST_ENOMEM;
		in->classes = c;
		in->class_cap = cap;
	}
	jinst_covreport_class *dst = &in->classes[in->class_count++];
	int rc = copy_class(dst, cls);
	if (rc)
		jinst_covreport_class_clear(dst);
	return rc;
}

/* ---- finish ----------------------------------------------------------------- */

static size_t package_len(const char *name)
{
	const char *slash = strrchr(name, '/');
	return slash ? (size_t)(slash - name) : 0;
}

static int class_cmp(const void *a, const void *b)
{
	const jinst_covreport_class *x = a, *y = b;
	size_t lx = package_len(x->name), ly = package_len(y->name);
	int c = memcmp(x->name, y->name, lx < ly ? lx : ly);
	if (c)
		return c;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int session_cmp(const void *a, const void *b)
{
	const jinst_covreport_session *x = a, *y = b;
	return (x->start_ms > y->start_ms) - (x->start_ms < y->start_ms);
}

static void add_counters(jinst_counter *dst, const jinst_counter *src)
{
	for (int i = 0; i < JINST_CR_COUNT; i++) {
		dst[i].missed += src[i].missed;
		dst[i].covered += src[i].covered;
	}
}

static int line_cmp(const void *a, const void *b)
{
	const jinst_covreport_line *x = a, *y = b;
	return (x->nr > y->nr) - (x->nr < y->nr);
}

/* The lines of the classes of one source file, merged by number. */
static int merge_lines(jinst_covreport_source *s, const jinst_covreport_class *classes)
{
	size_t n = 0;
	for (size_t i = 0; i < s->class_count; i++)
		n += classes[s->classes[i]].line_count;
	jinst_covreport_line *all = malloc((n + 1) * sizeof *all);
	if (!all)
		return JINST_ENOMEM;
	n = 0;
	for (size_t i = 0; i < s->class_count; i++) {
		const jinst_covreport_class *c = &classes[s->classes[i]];
		memcpy(all + n, c->lines, c->line_count * sizeof *all);
		n += c->line_count;
	}
	qsort(all, n, sizeof *all, line_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && all[k - 1].nr == all[i].nr) {
			jinst_covreport_line *l = &all[k - 1];
			l->instructions.missed += all[i].instructions.missed;
			l->instructions.covered += all[i].instructions.covered;
			l->branches.missed += all[i].branches.missed;
			l->branches.covered += all[i].branches.covered;
			l->hits = l->hits > all[i].hits ? l->hits : all[i].hits;
		} else {
			all[k++] = all[i];
		}
	}
	s->lines = all;
	s->line_count = k;
	return 0;
}

static int source_cmp(const void *a, const void *b)
{
	return strcmp(((const jinst_covreport_source *)a)->name, ((const jinst_covreport_source *)b)->name);
}

/* The source files of a package: the distinct SourceFile names of its classes. */
static int group_sources(jinst_covreport_package *p)
{
	p->sources = calloc(p->class_count + 1, sizeof *p->sources);
	if (!p->sources)
		return JINST_ENOMEM;
	for (size_t i = 0; i < p->class_count; i++) {
		const jinst_covreport_class *c = &p->classes[i];
		if (!c->source)
			continue;
		size_t s = 0;
		while (s < p->source_count && strcmp(p->sources[s].name, c->source) != 0)
			s++;
		if (s == p->source_count)
			p->sources[p->source_count++].name = c->source;
	}
	qsort(p->sources, p->source_count, sizeof *p->sources, source_cmp);
	for (size_t s = 0; s < p->source_count; s++) {
		jinst_covreport_source *src = &p->sources[s];
		if (!(src->classes = malloc(p->class_count * sizeof *src->classes)))
			return JINST_ENOMEM;
		for (size_t i = 0; i < p->class_count; i++) {
			if (p->classes[i].source && strcmp(p->classes[i].source, src->name) == 0) {
				src->classes[src->class_count++] = i;
				add_counters(src->counters, p->classes[i].counters);
			}
		}
		int rc = merge_lines(src, p->classes);
		if (rc)
			return rc;
		/* A line two classes share (an anonymous class's first line) is
		 * one line of the file: its LINE counter comes from the merged
		 * lines, executed when one of its instructions ran. */
		jinst_counter lines = {0, 0};
		for (size_t l = 0; l < src->line_count; l++)
			*(src->lines[l].instructions.covered ? &lines.covered : &lines.missed) += 1;
		src->counters[JINST_CR_LINE] = lines;
		add_counters(p->counters, src->counters);
	}
	/* As JaCoCo's PackageCoverageImpl: the source files, and the classes in none. */
	for (size_t i = 0; i < p->class_count; i++)
		if (!p->classes[i].source)
			add_counters(p->counters, p->classes[i].counters);
	return 0;
}

int jinst_covreport_finish(jinst_covreport *r)
{
	cr_internal *in = r->internal;
	if (in->finished)
		return JINST_EINVAL;
	in->finished = true;
	/* qsort may not be given NULL, even for no element (C11 7.22.5). */
	if (r->session_count)
		qsort(r->sessions, r->session_count, sizeof *r->sessions, session_cmp);
	if (in->class_count)
		qsort(in->classes, in->class_count, sizeof *in->classes, class_cmp);
	r->packages = calloc(in->class_count + 1, sizeof *r->packages);
	if (!r->packages)
		return JINST_ENOMEM;
	for (size_t i = 0; i < in->class_count;) {
		size_t len = package_len(in->classes[i].name), j = i + 1;
		while (j < in->class_count && package_len(in->classes[j].name) == len &&
		       memcmp(in->classes[j].name, in->classes[i].name, len) == 0)
			j++;
		jinst_covreport_package *p = &r->packages[r->package_count++];
		if (!(p->name = strndup(in->classes[i].name, len)))
			return JINST_ENOMEM;
		p->classes = &in->classes[i];
		p->class_count = j - i;
		int rc = group_sources(p);
		if (rc)
			return rc;
		add_counters(r->counters, p->counters);
		i = j;
	}
	return 0;
}

/* ---- names ------------------------------------------------------------------- */

void jinst_covreport_java_package(char *buf, size_t size, const char *pkg)
{
	snprintf(buf, size, "%s", *pkg ? pkg : "default");
	for (char *p = buf; *p; p++)
		if (*p == '/')
			*p = '.';
}

/* The name after the last '/', '$' shown as '.'. */
static void short_name(char *buf, size_t size, const char *name, size_t len)
{
	const char *start = name;
	for (size_t i = 0; i < len; i++)
		if (name[i] == '/')
			start = name + i + 1;
	snprintf(buf, size, "%.*s", (int)(len - (size_t)(start - name)), start);
	for (char *p = buf; *p; p++)
		if (*p == '$')
			*p = '.';
}

void jinst_covreport_java_class(char *buf, size_t size, const jinst_covreport_class *cls)
{
	const char *dollar = strrchr(cls->name, '$');
	const char *super = cls->interface0 ? cls->interface0 : cls->super_name;
	/* JavaNames.isAnonymous: the part after the last '$' starts with a digit. */
	if (dollar && dollar[1] >= '0' && dollar[1] <= '9' && super) {
		char outer[512], sup[256];
		short_name(outer, sizeof outer, cls->name, (size_t)(dollar - cls->name));
		short_name(sup, sizeof sup, super, strlen(super));
		snprintf(buf, size, "%s.new %s() {...}", outer, sup);
		return;
	}
	short_name(buf, size, cls->name, strlen(cls->name));
}
