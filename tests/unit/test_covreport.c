/*
 * The coverage report model and writers (report/covreport*.c), on models
 * built by hand: grouping by package and source file, the merge of lines
 * two classes share, the counters that sum up, JaCoCo's names, and names
 * made to break the formats (markup, quotes, commas, path separators) in
 * XML, CSV and HTML. tests/coverage/report/ checks the real reports.
 *   test_covreport TMPDIR
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jinst/covreport.h"
#include "../testlib.h"

static const char *tmpdir;

/* A class of one method whose counters are those of its lines. */
static int add(jinst_covreport *r, const char *name, const char *source, const jinst_covreport_line *lines,
               size_t n, const char *iface)
{
	jinst_covreport_method m = {"run", "()V", n ? lines[0].nr : 0, {{0, 0}}, 0};
	jinst_covreport_class c = {0};
	c.name = (char *)name;
	c.source = (char *)source;
	c.super_name = "java/lang/Object";
	c.interface0 = (char *)iface;
	c.lines = (jinst_covreport_line *)lines;
	c.line_count = n;
	for (size_t i = 0; i < n; i++) {
		c.counters[JINST_CR_INSTRUCTION].missed += lines[i].instructions.missed;
		c.counters[JINST_CR_INSTRUCTION].covered += lines[i].instructions.covered;
		*(lines[i].instructions.covered ? &c.counters[JINST_CR_LINE].covered : &c.counters[JINST_CR_LINE].missed) +=
			1;
	}
	c.counters[JINST_CR_CLASS].covered = 1;
	m.name = "run";
	c.methods = &m;
	c.method_count = 1;
	return jinst_covreport_add_class(r, &c);
}

static char *slurp(FILE *f)
{
	long n = ftell(f);
	char *s = calloc((size_t)n + 1, 1);
	rewind(f);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = 0;
	return s;
}

static jinst_covreport *sample(void)
{
	static const jinst_covreport_line outer[] = {{3, {0, 2}, {0, 0}, 0}, {5, {1, 1}, {1, 1}, 0}};
	static const jinst_covreport_line anon[] = {{5, {3, 0}, {0, 0}, 0}, {6, {2, 0}, {0, 0}, 0}};
	static const jinst_covreport_line evil[] = {{1, {1, 0}, {0, 0}, 0}};
	jinst_covreport *r;
	CHECK(jinst_covreport_new(&r, "a<b>&\"c\"") == 0, "new");
	CHECK(add(r, "z/Outer$1", "Outer.java", anon, 2, "java/lang/Runnable") == 0, "anonymous class");
	CHECK(add(r, "z/Outer", "Outer.java", outer, 2, NULL) == 0, "outer class");
	CHECK(add(r, "Top", NULL, evil, 1, NULL) == 0, "unnamed package, no source");
	CHECK(add(r, "z/index", NULL, evil, 1, NULL) == 0, "a class named as the package page");
	CHECK(add(r, "a/x<y>\"q\",w/E'v&l", "../../e<v>il.java", evil, 1, NULL) == 0, "hostile names");
	CHECK(jinst_covreport_add_session(r, "late", 20, 30) == 0 && jinst_covreport_add_session(r, "early", 10, 11) == 0,
	      "sessions");
	CHECK(jinst_covreport_finish(r) == 0, "finish");
	return r;
}

static void test_grouping(void)
{
	jinst_covreport *r = sample();
	CHECK(r->package_count == 3, "three packages: %zu", r->package_count);
	CHECK(strcmp(r->packages[0].name, "") == 0 && strcmp(r->packages[2].name, "z") == 0, "packages sorted");
	const jinst_covreport_package *z = &r->packages[2];
	CHECK(z->class_count == 3 && strcmp(z->classes[0].name, "z/Outer") == 0 &&
	          strcmp(z->classes[2].name, "z/index") == 0,
	      "classes sorted");
	CHECK(z->source_count == 1 && z->sources[0].class_count == 2, "one source file of two classes");
	const jinst_covreport_source *s = &z->sources[0];
	CHECK(s->line_count == 3 && s->lines[1].nr == 5 && s->lines[1].instructions.missed == 4 &&
	          s->lines[1].instructions.covered == 1 && s->lines[1].branches.missed == 1,
	      "line 5 of both classes merged");
	/* Lines 3, 5 (executed), 6 (not): the classes say 1+1 and 0+2. */
	CHECK(s->counters[JINST_CR_LINE].covered == 2 && s->counters[JINST_CR_LINE].missed == 1,
	      "LINE of the file counted on merged lines: %u/%u", s->counters[JINST_CR_LINE].missed,
	      s->counters[JINST_CR_LINE].covered);
	CHECK(z->counters[JINST_CR_LINE].missed == 2 && z->counters[JINST_CR_INSTRUCTION].missed == 7,
	      "package from its source file and the class in none");
	CHECK(r->packages[0].counters[JINST_CR_INSTRUCTION].missed == 1, "a class in no source file counts");
	CHECK(r->counters[JINST_CR_CLASS].covered == 5, "bundle sums packages");
	CHECK(strcmp(r->sessions[0].name, "early") == 0, "sessions by start");
	char buf[256];
	jinst_covreport_java_class(buf, sizeof buf, &z->classes[1]);
	CHECK(strcmp(buf, "Outer.new Runnable() {...}") == 0, "anonymous class label: %s", buf);
	jinst_covreport_java_package(buf, sizeof buf, "");
	CHECK(strcmp(buf, "default") == 0, "unnamed package: %s", buf);
	jinst_covreport_free(r);
}

static void test_text_escaping(void)
{
	jinst_covreport *r = sample();
	FILE *f = tmpfile();
	CHECK(jinst_covreport_write_xml(f, r) == 0, "xml");
	char *xml = slurp(f);
	fclose(f);
	CHECK(strstr(xml, "<report name=\"a&lt;b&gt;&amp;&quot;c&quot;\">") != NULL, "report name escaped");
	CHECK(strstr(xml, "name=\"a/x&lt;y&gt;&quot;q&quot;,w/E'v&amp;l\"") != NULL, "class name escaped");
	CHECK(strstr(xml, "sourcefilename=\"../../e&lt;v&gt;il.java\"") != NULL, "source name escaped");
	CHECK(strstr(xml, "<sessioninfo id=\"early\" start=\"10\" dump=\"11\"/><sessioninfo id=\"late\"") != NULL,
	      "sessions in order");
	free(xml);
	f = tmpfile();
	CHECK(jinst_covreport_write_csv(f, r) == 0, "csv");
	char *csv = slurp(f);
	fclose(f);
	CHECK(strstr(csv, "\"a<b>&\"\"c\"\"\",default,Top,1,0,") != NULL, "group quoted, unnamed package: %s", csv);
	CHECK(strstr(csv, ",\"a.x<y>\"\"q\"\",w\",E'v&l,") != NULL, "package with a comma quoted");
	free(csv);
	jinst_covreport_free(r);
}

static bool file_has(const char *path, const char *text)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	char *s = slurp(f);
	fclose(f);
	bool ok = s && strstr(s, text);
	free(s);
	return ok;
}

static char *source_of(void *ctx, const char *pkg, const char *name, size_t *len)
{
	(void)ctx;
	(void)name;
	if (strcmp(pkg, "z") != 0)
		return NULL;
	const char *text = "class Outer {\n\tint <x> = 1;\r\n\t\tif (a && b) {}\n  run(); // </td>\n\nend\n";
	*len = strlen(text);
	return strdup(text);
}

static void test_html(void)
{
	jinst_covreport *r = sample();
	char dir[512], path[1024];
	snprintf(dir, sizeof dir, "%s/covreport-html-XXXXXX", tmpdir);
	CHECK(mkdtemp(dir) != NULL, "temp folder");
	jinst_covreport_html_options o = JINST_COVREPORT_HTML_OPTIONS_INIT;
	o.source = source_of;
	o.tab_width = 4;
	jinst_diag diag;
	CHECK(jinst_covreport_write_html(dir, r, &o, &diag) == 0, "html: %s", diag.message);
	snprintf(path, sizeof path, "%s/index.html", dir);
	CHECK(file_has(path, "<h1>a&lt;b&gt;&amp;&quot;c&quot;</h1>"), "index title escaped");
	CHECK(file_has(path, "href=\"a.x_3Cy_3E_22q_22_2Cw/index.html\""), "package folder name made safe");
	snprintf(path, sizeof path, "%s/a.x_3Cy_3E_22q_22_2Cw/E_27v_26l.html", dir);
	CHECK(file_has(path, "<h1>E&#39;v&amp;l</h1>"), "class page name and title");
	snprintf(path, sizeof path, "%s/a.x_3Cy_3E_22q_22_2Cw/_.._2F.._2Fe_3Cv_3Eil.java.html", dir);
	CHECK(access(path, F_OK) == 0, "a source name cannot leave the folder");
	snprintf(path, sizeof path, "%s/z/Outer.java.html", dir);
	CHECK(file_has(path, "<tr id=\"L3\" class=\"fc\"><td class=\"nr\">3</td><td class=\"br\"></td>"
	                     "<td class=\"code\">        if (a &amp;&amp; b) {}</td>"),
	      "covered line, tabs expanded, text escaped");
	CHECK(file_has(path, "<tr id=\"L5\" class=\"pc\" title=\"1 of 2 branches missed.\">"), "partly covered line");
	CHECK(file_has(path, "<td class=\"br\">1 of 2 branches missed.</td><td class=\"code\">"), "branch words shown");
	CHECK(file_has(path, "<tr id=\"L6\" class=\"nc\">"), "missed line");
	CHECK(file_has(path, "<td class=\"code\">    int &lt;x&gt; = 1;</td>"), "CR dropped, markup escaped");
	CHECK(file_has(path, "run(); // &lt;/td&gt;"), "source cannot close a cell");
	snprintf(path, sizeof path, "%s/z/index_.html", dir);
	CHECK(file_has(path, "<h1>index</h1>"), "class index has its own page");
	snprintf(path, sizeof path, "%s/z/index.html", dir);
	CHECK(file_has(path, "<a href=\"index_.html\">index</a>") && file_has(path, "<h1>z</h1>"),
	      "the package page stays, linking the class page");
	snprintf(path, sizeof path, "%s/default/Top.html", dir);
	CHECK(file_has(path, "<td>run()V</td>"), "a method of a class without source is not linked");
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	CHECK(system(path) == 0, "clean up");
	jinst_covreport_free(r);
}

int main(int argc, char **argv)
{
	tmpdir = argc > 1 ? argv[1] : "/tmp";
	test_grouping();
	test_text_escaping();
	test_html();
	return check_report();
}
