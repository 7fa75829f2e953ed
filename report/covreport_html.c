/*
 * The HTML coverage report: a folder of static pages that works offline.
 *
 * Layout, as JaCoCo's: index.html lists the packages; PKG/index.html
 * (PKG the Java package name, "default" for the unnamed one) lists its
 * classes and its source files; PKG/CLASS.html lists a class's methods,
 * each linked to its first line; PKG/SOURCE.html shows the source with each
 * line with code coloured as JaCoCo colours it (fc covered, pc partly
 * covered, nc missed), its branches in words ("1 of 2 branches missed") and
 * its hit count when the data has counts. Every page carries its own style
 * sheet, so a page copied alone still reads; there is no script and no
 * external asset. Every text from the data or the sources is escaped, and
 * file names made of class and source names keep only [A-Za-z0-9._$-]
 * (others as _XX), so no name can leave the folder or break a link.
 *
 * The tables are JaCoCo's: Element, Missed Instructions (a bar) and Cov.,
 * Missed Branches (a bar) and Cov., then missed and total complexity,
 * lines, methods, classes; a Total row first. Percentages are rounded down,
 * as JaCoCo's; "n/a" when there is nothing to count.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup, mkdir, localtime_r */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "jinst/covreport.h"

#define BAR_WIDTH 120

static const char style[] =
	"body{font-family:sans-serif;font-size:10pt;margin:1em;color:#222}"
	"h1{font-size:16pt}a{color:#06c;text-decoration:none}a:hover{text-decoration:underline}"
	"table.coverage{border-collapse:collapse;margin-bottom:1em}"
	"table.coverage th,table.coverage td{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right;"
	"white-space:nowrap}"
	"table.coverage th:first-child,table.coverage td:first-child{text-align:left}"
	"table.coverage thead th{background:#e0e0e0}table.coverage tr.total td{font-weight:bold;background:#f0f0f0}"
	".bar{display:inline-block;height:10px;vertical-align:middle;white-space:nowrap}"
	".bar span{display:inline-block;height:10px}.bar .bm{background:#d33}.bar .bc{background:#3a3}"
	".note{background:#fff3cd;border:1px solid #e0c060;padding:4px 8px;margin:8px 0}"
	"table.source{border-collapse:collapse;font-family:monospace;font-size:10pt}"
	"table.source td{padding:0 6px;white-space:pre;vertical-align:top}"
	"table.source td.nr{color:#888;text-align:right;border-right:1px solid #ccc}"
	"table.source td.hits,table.source td.br{color:#555;font-size:9pt;font-family:sans-serif}"
	"tr.fc td.code{background:#ccffcc}tr.pc td.code{background:#ffffcc}tr.nc td.code{background:#ffaaaa}"
	"tr.fc td.br,tr.fc td.hits{background:#e6ffe6}tr.pc td.br,tr.pc td.hits{background:#ffffe0}"
	"tr.nc td.br,tr.nc td.hits{background:#ffdddd}"
	".legend span{padding:0 6px;margin-right:6px}.legend .fc{background:#ccffcc}.legend .pc{background:#ffffcc}"
	".legend .nc{background:#ffaaaa}.crumbs{margin-bottom:1em;color:#666}"
	".footer{margin-top:2em;color:#888;font-size:8pt}";

typedef struct page {
	FILE *f;
	char path[4096];
	jinst_diag *diag;
} page;

static void esc(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(s[i], f);
		}
	}
}

static void esc_s(FILE *f, const char *s)
{
	esc(f, s, strlen(s));
}

/* A file name from any text: [A-Za-z0-9._$-] kept, others _XX; never "." or "..". */
static void safe_name(char *buf, size_t size, const char *s, const char *suffix)
{
	size_t k = 0;
	if (*s == '.' && size > 1)
		buf[k++] = '_';
	for (; *s && k + 4 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		    c == '_' || c == '$' || c == '-')
			buf[k++] = (char)c;
		else
			k += (size_t)snprintf(buf + k, size - k, "_%02X", c);
	}
	snprintf(buf + k, size - k, "%s", suffix);
}

/* The page of a class or source file: its safe name and ".html", never the
 * package's own index.html. */
static void page_name(char *buf, size_t size, const char *name)
{
	safe_name(buf, size, strcmp(name, "index") == 0 ? "index_" : name, ".html");
}

static void fail(jinst_diag *diag, const char *path)
{
	if (!diag)
		return;
	diag->code = JINST_EIO;
	diag->offset = JINST_NO_OFFSET;
	/* A long path is cut, on purpose: a precision says so to the compiler. */
	snprintf(diag->where, sizeof diag->where, "%.*s", (int)sizeof diag->where - 1, path);
	snprintf(diag->message, sizeof diag->message, "%.150s: %s", path, strerror(errno));
}

static int page_open(page *p, const char *dir, const char *sub, const char *file, const char *title,
                     const char *root)
{
	snprintf(p->path, sizeof p->path, "%s/%s%s%s", dir, sub ? sub : "", sub ? "/" : "", file);
	if (!(p->f = fopen(p->path, "w"))) {
		fail(p->diag, p->path);
		return JINST_EIO;
	}
	fputs("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>", p->f);
	esc_s(p->f, title);
	fprintf(p->f, "</title><style>%s</style></head><body><div class=\"crumbs\"><a href=\"%sindex.html\">", style,
	        root);
	return 0;
}

static int page_close(page *p)
{
	fputs("<div class=\"footer\">Created with jinst report</div></body></html>\n", p->f);
	int bad = ferror(p->f);
	if (fclose(p->f) || bad) {
		fail(p->diag, p->path);
		return JINST_EIO;
	}
	return 0;
}

/* ---- tables ------------------------------------------------------------------ */

static void bar(FILE *f, jinst_counter c)
{
	uint64_t total = (uint64_t)c.missed + c.covered;
	unsigned m = total ? (unsigned)(BAR_WIDTH * (uint64_t)c.missed / total) : 0;
	unsigned k = total ? (unsigned)(BAR_WIDTH * (uint64_t)c.covered / total) : 0;
	fprintf(f, "<td><span class=\"bar\" title=\"%" PRIu32 " of %" PRIu64 " missed\">", c.missed, total);
	if (m)
		fprintf(f, "<span class=\"bm\" style=\"width:%upx\"></span>", m);
	if (k)
		fprintf(f, "<span class=\"bc\" style=\"width:%upx\"></span>", k);
	fputs("</span></td>", f);
}

static void percent(FILE *f, jinst_counter c)
{
	uint64_t total = (uint64_t)c.missed + c.covered;
	if (total)
		fprintf(f, "<td>%" PRIu64 "%%</td>", (uint64_t)c.covered * 100 / total);
	else
		fputs("<td>n/a</td>", f);
}

static void counter_cells(FILE *f, const jinst_counter *c)
{
	bar(f, c[JINST_CR_INSTRUCTION]);
	percent(f, c[JINST_CR_INSTRUCTION]);
	bar(f, c[JINST_CR_BRANCH]);
	percent(f, c[JINST_CR_BRANCH]);
	static const int rest[] = {JINST_CR_COMPLEXITY, JINST_CR_LINE, JINST_CR_METHOD, JINST_CR_CLASS};
	for (int i = 0; i < 4; i++) {
		jinst_counter k = c[rest[i]];
		fprintf(f, "<td>%" PRIu32 "</td><td>%" PRIu64 "</td>", k.missed, (uint64_t)k.missed + k.covered);
	}
}

static void table_head(FILE *f, const char *element, const jinst_counter *total)
{
	fprintf(f,
	        "<table class=\"coverage\"><thead><tr><th>%s</th><th>Missed Instructions</th><th>Cov.</th>"
	        "<th>Missed Branches</th><th>Cov.</th><th>Missed</th><th>Cxty</th><th>Missed</th><th>Lines</th>"
	        "<th>Missed</th><th>Methods</th><th>Missed</th><th>Classes</th></tr></thead><tbody>"
	        "<tr class=\"total\"><td>Total</td>",
	        element);
	counter_cells(f, total);
	fputs("</tr>", f);
}

static void row_link(FILE *f, const char *href, const char *text, const jinst_counter *c)
{
	fputs("<tr><td><a href=\"", f);
	esc_s(f, href);
	fputs("\">", f);
	esc_s(f, text);
	fputs("</a></td>", f);
	counter_cells(f, c);
	fputs("</tr>", f);
}

/* The totals in words, for people and for tests: id="total-KIND". */
static void totals(FILE *f, const jinst_counter *c)
{
	static const struct { int k; const char *id, *what; } rows[] = {
		{JINST_CR_CLASS, "classes", "classes"},       {JINST_CR_METHOD, "methods", "methods"},
		{JINST_CR_LINE, "lines", "lines"},             {JINST_CR_BRANCH, "branches", "branches"},
		{JINST_CR_INSTRUCTION, "instructions", "instructions"}};
	fputs("<p class=\"totals\">", f);
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		jinst_counter k = c[rows[i].k];
		fprintf(f, "%s<span id=\"total-%s\">%" PRIu32 " of %" PRIu64 " %s covered</span>", i ? " · " : "",
		        rows[i].id, k.covered, (uint64_t)k.missed + k.covered, rows[i].what);
	}
	fputs("</p>", f);
}

/* ---- pages ------------------------------------------------------------------- */

static void mismatch_notes(FILE *f, const jinst_covreport *r)
{
	for (size_t i = 0; i < r->mismatch_count; i++) {
		fprintf(f, "<div class=\"note\">Not reported: class <b>");
		esc_s(f, r->mismatches[i].name);
		fputs("</b> in ", f);
		esc_s(f, r->mismatches[i].where);
		fprintf(f,
		        " is not the class file the coverage data was recorded for (identity %016" PRIx64
		        ", data %016" PRIx64 ").</div>",
		        r->mismatches[i].file_identity, r->mismatches[i].data_identity);
	}
}

/* A time as JaCoCo's sessions page shows it (DateFormat's default date and
 * time in the en_US locale, the local time zone): "Nov 27, 2026, 3:12:51 PM". */
static void local_time(FILE *f, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char month[16];
	if (!localtime_r(&t, &tm) || !strftime(month, sizeof month, "%b", &tm)) {
		fprintf(f, "%" PRId64, ms);
		return;
	}
	fprintf(f, "%s %d, %d, %d:%02d:%02d %s", month, tm.tm_mday, tm.tm_year + 1900,
	        tm.tm_hour % 12 ? tm.tm_hour % 12 : 12, tm.tm_min, tm.tm_sec, tm.tm_hour < 12 ? "AM" : "PM");
}

static void sessions(FILE *f, const jinst_covreport *r)
{
	fprintf(f, "<h2>Sessions</h2><table class=\"coverage\"><thead><tr><th>Session</th><th>Start Time</th>"
	           "<th>Dump Time</th></tr></thead><tbody>");
	for (size_t i = 0; i < r->session_count; i++) {
		fputs("<tr><td>", f);
		esc_s(f, r->sessions[i].name);
		fputs("</td><td>", f);
		local_time(f, r->sessions[i].start_ms);
		fputs("</td><td>", f);
		local_time(f, r->sessions[i].dump_ms);
		fputs("</td></tr>", f);
	}
	fputs("</tbody></table>", f);
}

/* JaCoCo's pages leave out what holds no code (an interface of abstract
 * methods, and the package or source file of nothing else): no row, no page. */
static bool has_code(const jinst_counter *c)
{
	return c[JINST_CR_INSTRUCTION].missed + c[JINST_CR_INSTRUCTION].covered > 0;
}

static int index_page(const char *dir, const jinst_covreport *r, jinst_diag *diag)
{
	page p = {.diag = diag};
	int rc = page_open(&p, dir, NULL, "index.html", r->name, "");
	if (rc)
		return rc;
	esc_s(p.f, r->name);
	fputs("</a></div><h1>", p.f);
	esc_s(p.f, r->name);
	fputs("</h1>", p.f);
	mismatch_notes(p.f, r);
	totals(p.f, r->counters);
	table_head(p.f, "Package", r->counters);
	char pkg[1024], href[1100];
	for (size_t i = 0; i < r->package_count; i++) {
		if (!has_code(r->packages[i].counters))
			continue;
		jinst_covreport_java_package(pkg, sizeof pkg, r->packages[i].name);
		safe_name(href, sizeof href, pkg, "/index.html");
		row_link(p.f, href, pkg, r->packages[i].counters);
	}
	fputs("</tbody></table>", p.f);
	sessions(p.f, r);
	return page_close(&p);
}

static void crumbs(FILE *f, const jinst_covreport *r, const char *pkg, const char *leaf)
{
	esc_s(f, r->name);
	fputs("</a> › ", f);
	if (leaf) {
		fputs("<a href=\"index.html\">", f);
		esc_s(f, pkg);
		fputs("</a> › ", f);
		esc_s(f, leaf);
	} else {
		esc_s(f, pkg);
	}
	fputs("</div><h1>", f);
	esc_s(f, leaf ? leaf : pkg);
	fputs("</h1>", f);
}

static int package_page(const char *dir, const char *sub, const jinst_covreport *r,
                        const jinst_covreport_package *pk, const char *pkg, jinst_diag *diag)
{
	page p = {.diag = diag};
	int rc = page_open(&p, dir, sub, "index.html", pkg, "../");
	if (rc)
		return rc;
	crumbs(p.f, r, pkg, NULL);
	totals(p.f, pk->counters);
	table_head(p.f, "Class", pk->counters);
	char label[1024], href[1100];
	for (size_t i = 0; i < pk->class_count; i++) {
		if (!has_code(pk->classes[i].counters))
			continue;
		const char *simple = strrchr(pk->classes[i].name, '/');
		page_name(href, sizeof href, simple ? simple + 1 : pk->classes[i].name);
		jinst_covreport_java_class(label, sizeof label, &pk->classes[i]);
		row_link(p.f, href, label, pk->classes[i].counters);
	}
	fputs("</tbody></table>", p.f);
	table_head(p.f, "Source file", pk->counters);
	for (size_t i = 0; i < pk->source_count; i++) {
		if (!has_code(pk->sources[i].counters))
			continue;
		page_name(href, sizeof href, pk->sources[i].name);
		row_link(p.f, href, pk->sources[i].name, pk->sources[i].counters);
	}
	fputs("</tbody></table>", p.f);
	return page_close(&p);
}

static int class_page(const char *dir, const char *sub, const jinst_covreport *r, const jinst_covreport_class *c,
                      const char *pkg, jinst_diag *diag)
{
	char label[1024], file[1100], src[1100];
	const char *simple = strrchr(c->name, '/');
	page_name(file, sizeof file, simple ? simple + 1 : c->name);
	jinst_covreport_java_class(label, sizeof label, c);
	page p = {.diag = diag};
	int rc = page_open(&p, dir, sub, file, label, "../");
	if (rc)
		return rc;
	crumbs(p.f, r, pkg, label);
	totals(p.f, c->counters);
	table_head(p.f, "Method", c->counters);
	if (c->source)
		page_name(src, sizeof src, c->source);
	for (size_t i = 0; i < c->method_count; i++) {
		const jinst_covreport_method *m = &c->methods[i];
		char href[1200], text[2048];
		snprintf(href, sizeof href, "%s#L%" PRIu32, c->source ? src : "", m->line);
		snprintf(text, sizeof text, "%s%s", m->name, m->desc);
		if (c->source && m->line)
			row_link(p.f, href, text, m->counters);
		else {
			fputs("<tr><td>", p.f);
			esc_s(p.f, text);
			fputs("</td>", p.f);
			counter_cells(p.f, m->counters);
			fputs("</tr>", p.f);
		}
	}
	fputs("</tbody></table>", p.f);
	return page_close(&p);
}

/* ---- source pages ------------------------------------------------------------ */

static const char *status_class(const jinst_covreport_line *l)
{
	bool missed = l->instructions.missed || l->branches.missed;
	bool covered = l->instructions.covered || l->branches.covered;
	return missed && covered ? "pc" : covered ? "fc" : "nc";
}

static void branch_words(FILE *f, jinst_counter b)
{
	uint32_t total = b.missed + b.covered;
	if (!total)
		return;
	if (!b.missed)
		fprintf(f, "All %" PRIu32 " branches covered.", total);
	else if (!b.covered)
		fprintf(f, "All %" PRIu32 " branches missed.", total);
	else
		fprintf(f, "%" PRIu32 " of %" PRIu32 " branches missed.", b.missed, total);
}

/* One line's text, tabs expanded to the next multiple of tab. */
static void source_text(FILE *f, const char *s, size_t n, unsigned tab)
{
	size_t col = 0, start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '\t') {
			if (((unsigned char)s[i] & 0xC0) != 0x80)
				col++;
			continue;
		}
		esc(f, s + start, i - start);
		start = i + 1;
		if (i < n)
			for (size_t k = tab - col % tab; k; k--, col++)
				fputc(' ', f);
	}
}

static void source_line(FILE *f, uint32_t nr, const jinst_covreport_line *l, const char *text, size_t n,
                        bool counts, unsigned tab)
{
	fprintf(f, "<tr id=\"L%" PRIu32 "\"", nr);
	if (l) {
		fprintf(f, " class=\"%s\"", status_class(l));
		if (l->branches.missed + l->branches.covered) {
			fputs(" title=\"", f);
			branch_words(f, l->branches);
			fputc('"', f);
		}
	}
	fprintf(f, "><td class=\"nr\">%" PRIu32 "</td>", nr);
	if (counts) {
		if (l && l->instructions.covered)
			fprintf(f, "<td class=\"hits\">%" PRIu64 "×</td>", l->hits);
		else
			fputs("<td class=\"hits\"></td>", f);
	}
	fputs("<td class=\"br\">", f);
	if (l)
		branch_words(f, l->branches);
	fputs("</td><td class=\"code\">", f);
	source_text(f, text, n, tab);
	fputs("</td></tr>", f);
}

static void source_body(FILE *f, const jinst_covreport_source *s, const char *text, size_t len, bool counts,
                        unsigned tab)
{
	fputs("<table class=\"source\"><tbody>", f);
	uint32_t last = s->line_count ? s->lines[s->line_count - 1].nr : 0;
	size_t pos = 0, k = 0;
	for (uint32_t nr = 1; (text && pos < len) || nr <= last; nr++) {
		size_t end = pos;
		while (text && end < len && text[end] != '\n')
			end++;
		size_t n = end - pos;
		if (n && text[pos + n - 1] == '\r')
			n--;
		while (k < s->line_count && s->lines[k].nr < nr)
			k++;
		const jinst_covreport_line *l = k < s->line_count && s->lines[k].nr == nr ? &s->lines[k] : NULL;
		source_line(f, nr, l, text ? text + pos : "", text ? n : 0, counts, tab);
		pos = end + 1;
	}
	fputs("</tbody></table>", f);
}

static int source_page(const char *dir, const char *sub, const jinst_covreport *r, const jinst_covreport_package *pk,
                       const jinst_covreport_source *s, const char *pkg, const jinst_covreport_html_options *o,
                       jinst_diag *diag)
{
	char file[1100];
	page_name(file, sizeof file, s->name);
	page p = {.diag = diag};
	int rc = page_open(&p, dir, sub, file, s->name, "../");
	if (rc)
		return rc;
	crumbs(p.f, r, pkg, s->name);
	totals(p.f, s->counters);
	fputs("<p class=\"legend\"><span class=\"fc\">covered</span><span class=\"pc\">partly covered</span>"
	      "<span class=\"nc\">missed</span></p>",
	      p.f);
	size_t len = 0;
	char *text = o->source ? o->source(o->ctx, pk->name, s->name, &len) : NULL;
	if (!text)
		fputs("<div class=\"note\">Source file not found: lines are shown without their text.</div>", p.f);
	source_body(p.f, s, text, len, r->counts, o->tab_width ? o->tab_width : 4);
	free(text);
	return page_close(&p);
}

static int package_pages(const char *dir, const jinst_covreport *r, const jinst_covreport_package *pk,
                         const jinst_covreport_html_options *o, jinst_diag *diag)
{
	char pkg[1024], sub[1100], path[4096];
	if (!has_code(pk->counters))
		return 0;
	jinst_covreport_java_package(pkg, sizeof pkg, pk->name);
	safe_name(sub, sizeof sub, pkg, "");
	snprintf(path, sizeof path, "%s/%s", dir, sub);
	if (mkdir(path, 0777) != 0) {
		fail(diag, path);
		return JINST_EIO;
	}
	int rc = package_page(dir, sub, r, pk, pkg, diag);
	for (size_t i = 0; !rc && i < pk->class_count; i++)
		if (has_code(pk->classes[i].counters))
			rc = class_page(dir, sub, r, &pk->classes[i], pkg, diag);
	for (size_t i = 0; !rc && i < pk->source_count; i++)
		if (has_code(pk->sources[i].counters))
			rc = source_page(dir, sub, r, pk, &pk->sources[i], pkg, o, diag);
	return rc;
}

int jinst_covreport_write_html(const char *dir, const jinst_covreport *r, const jinst_covreport_html_options *opts,
                               jinst_diag *diag)
{
	jinst_covreport_html_options o = JINST_COVREPORT_HTML_OPTIONS_INIT;
	if (opts)
		o = *opts;
	int rc = index_page(dir, r, diag);
	for (size_t i = 0; !rc && i < r->package_count; i++)
		rc = package_pages(dir, r, &r->packages[i], &o, diag);
	return rc;
}
