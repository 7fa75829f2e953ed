/*
 * The monitor module's outputs (agent/monitor_output.c) from rows of the
 * test's own: the TSV's columns and rows in rank order (most time waiting
 * first, ties by contended enters, then enters), every figure as given;
 * the report's totals, its sites with every lock class added up (the
 * maximum the largest), its lock classes with every site added up, and its
 * ranks; classes and places named as Java and alloc's outputs name them
 * (a.B, int[], a.B.run(B.java:10)), a wait() row instrumented or not as
 * its row says.
 *   test_monitor_output WORK_DIR (made if missing)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "monitor.h"
#include "../../tests/testlib.h"

static char *slurp(const char *path)
{
	size_t n;
	uint8_t *b = test_read_file(path, &n);
	char *s = b ? realloc(b, n + 1) : NULL;
	if (s)
		s[n] = 0;
	return s;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The line of text holding every needle, or NULL. */
static const char *line_with(const char *text, const char *a, const char *b)
{
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)n, p);
		if (strstr(line, a) && (!b || strstr(line, b)))
			return p;
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

/* fn's output into path. */
static int write(const char *path, int (*fn)(FILE *, jinst_monitor_row *, size_t), jinst_monitor_row *rows, size_t n)
{
	FILE *f = fopen(path, "w");
	int rc = f ? fn(f, rows, n) : JINST_EIO;
	if (f && fclose(f) && !rc)
		rc = JINST_EIO;
	return rc;
}

static void check_tsv(const char *tsv, jinst_monitor_row *rows, size_t n)
{
	CHECK(write(tsv, jinst_monitor_write_tsv, rows, n) == 0, "tsv written");
	char *t = slurp(tsv);
	CHECK(t != NULL, "tsv read back");
	const char *want =
		"kind\tclass\tmethod\tdescriptor\tsource\tline\tlock_class\tenters\tcontended\twait_ns\tmax_wait_ns\twaits\t"
		"waited_ns\tinstrumented\n"
		"block\ta.B\trun\t()V\tB.java\t10\ta.Other\t50\t1\t9000000\t9000000\t0\t0\ty\n"
		"block\tjava.util.X\tf\t()V\t\t3\ta.Lock\t0\t2\t5000000\t4000000\t0\t0\tn\n"
		"block\ta.B\trun\t()V\tB.java\t10\ta.Lock\t100\t3\t3000000\t2000000\t0\t0\ty\n"
		"method\ta.C\tget\t()I\tC.java\t5\ta.C\t7\t0\t0\t0\t0\t0\ty\n"
		"wait\ta.B\tsleep\t()V\tB.java\t20\tjava.lang.Object\t0\t0\t0\t0\t2\t400000000\ty\n"
		"wait\tjava.util.X\tg\t()V\t\t4\tint[]\t0\t0\t0\t0\t1\t1000000\tn\n";
	CHECK(t && !strcmp(t, want), "the TSV, ranked:\n%s", t ? t : "");
	free(t);
}

static void check_report_file(const char *txt, jinst_monitor_row *rows, size_t n)
{
	CHECK(write(txt, jinst_monitor_write_report, rows, n) == 0, "report written");
	char *r = slurp(txt);
	CHECK(r && starts(r, "MONITORS BEGIN (enters 157, contended 6, waiting to acquire 17.000 ms, wait() calls 3, "
	                     "401.000 ms)\n"),
	      "the totals: %.120s", r ? r : "");
	const char *sites = r ? strstr(r, "BY SITE, ranked") : NULL, *classes = r ? strstr(r, "BY LOCK CLASS\n") : NULL;
	CHECK(sites && classes && sites < classes, "the two tables");
	/* a/B.run's two lock classes are one site: 12 ms, the larger max, 150 enters */
	const char *site = sites ? line_with(sites, "  a.B.run(B.java:10) (block)", NULL) : NULL;
	CHECK(site && site < classes && starts(site, "   1  70.6%  70.6%    12.000     9.000          4        150"),
	      "the site a/B.run: %.100s", site ? site : "");
	const char *x = sites ? line_with(sites, "java.util.X.f(Unknown Source:3) (block, not instrumented)", NULL) : NULL;
	CHECK(x && x < classes && starts(x, "   2  29.4% 100.0%     5.000"), "the site not instrumented: %.60s",
	      x ? x : "");
	/* a/Lock at two sites: 8 ms, 100 enters; a/Other 9 ms ranks first */
	const char *lock = classes ? line_with(classes, " a.Lock", NULL) : NULL;
	const char *other = classes ? line_with(classes, " a.Other", NULL) : NULL;
	CHECK(lock && starts(lock, "   2  47.1% 100.0%     8.000     4.000          5        100"),
	      "the lock class a/Lock: %.80s", lock ? lock : "");
	CHECK(other && starts(other, "   1  52.9%  52.9%     9.000"), "the lock class a/Other: %.60s",
	      other ? other : "");
	/* a wait() in a method with sites of the pass says so, one elsewhere not */
	CHECK(sites && line_with(sites, "  a.B.sleep(B.java:20) (wait)", NULL) &&
	          line_with(sites, " int[]  java.util.X.g(Unknown Source:4) (wait, not instrumented)", NULL),
	      "the wait() rows");
	CHECK(r && strstr(r, "MONITORS END\n"), "the end");
	free(r);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_monitor_output WORK_DIR\n");
		return 2;
	}
	jinst_monitor_row rows[] = {
		{"a/B", "run", "()V", "B.java", 10, "block", true, "a/Lock", 100, 3, 3000000, 2000000, 0, 0},
		{"a/B", "run", "()V", "B.java", 10, "block", true, "a/Other", 50, 1, 9000000, 9000000, 0, 0},
		{"a/C", "get", "()I", "C.java", 5, "method", true, "a/C", 7, 0, 0, 0, 0, 0},
		{"a/B", "sleep", "()V", "B.java", 20, "wait", true, "java/lang/Object", 0, 0, 0, 0, 2, 400000000},
		{"java/util/X", "f", "()V", NULL, 3, "block", false, "a/Lock", 0, 2, 5000000, 4000000, 0, 0},
		{"java/util/X", "g", "()V", NULL, 4, "wait", false, "[I", 0, 0, 0, 0, 1, 1000000},
	};
	size_t n = sizeof rows / sizeof rows[0];
	char tsv[1024], txt[1024];
	if (mkdir(argv[1], 0777) != 0 && errno != EEXIST) {
		perror(argv[1]);
		return 1;
	}
	snprintf(tsv, sizeof tsv, "%s/m.monitors.tsv", argv[1]);
	snprintf(txt, sizeof txt, "%s/m.monitors.txt", argv[1]);
	remove(tsv);
	remove(txt);
	check_tsv(tsv, rows, n);
	check_report_file(txt, rows, n);
	return check_report();
}
