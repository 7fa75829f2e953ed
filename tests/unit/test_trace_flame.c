/*
 * The flame graph writer (report/trace_flame.c): a synthetic tree of
 * 100,000 distinct stacks written in bounded time and size, every stack in
 * the data with its inclusive and self time, the clock named; names that
 * would break a page (<, ", </script>, <!--, control characters, bytes that
 * are not UTF-8) kept inside the data block. With an output folder, it
 * leaves there big.html (its last method ids have those names) and
 * names.html, which agent/tests/flame/flame_check.py gives xmllint --html
 * and (big.html) headless Chromium.
 *
 * test_trace_flame [OUTDIR]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jinst/classfile.h"
#include "jinst/report.h"
#include "../testlib.h"

enum { FRAMES = 100000, METHODS = 5000, CHAIN = 2500 };

static const char *const nasty[][2] = {
	{"p/A<b>\"q\"&amp;", "run"},
	{"p/B", "</script><script>alert(1)</script>"},
	{"p/C<!--", "x-->y"},
	{"p/D\x01\x1f\\", "tab\there"},
	{"p/E\xed\xa0\x80\xc0\x80", "caf\xc3\xa9"}, /* modified UTF-8: a surrogate, NUL; then valid é */
};

/* Method id i is pkg/sub/Ci.mi, for ids below METHODS, but the last few,
 * which have the names above (a browser test searches the page for them);
 * the rest have no name. */
static int synth_names(void *ctx, uint32_t id, const char **c, const char **n, const char **d)
{
	static char cls[METHODS][24], name[METHODS][16];
	const uint32_t first_nasty = METHODS - sizeof nasty / sizeof nasty[0];
	(void)ctx;
	if (id >= METHODS)
		return -1;
	if (id >= first_nasty) {
		*c = nasty[id - first_nasty][0];
		*n = nasty[id - first_nasty][1];
		*d = "()V";
		return 0;
	}
	if (!cls[id][0]) {
		snprintf(cls[id], sizeof cls[id], "pkg/sub/C%u", (unsigned)id);
		snprintf(name[id], sizeof name[id], "m%u", (unsigned)id);
	}
	*c = cls[id];
	*n = name[id];
	*d = "()V";
	return 0;
}

static int nasty_names(void *ctx, uint32_t id, const char **c, const char **n, const char **d)
{
	(void)ctx;
	if (id >= sizeof nasty / sizeof nasty[0])
		return -1;
	*c = nasty[id][0];
	*n = nasty[id][1];
	*d = "()V";
	return 0;
}

static char *contents(FILE *f, size_t *len)
{
	fflush(f);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	*len = s && fread(s, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
	if (s)
		s[*len] = 0;
	fclose(f);
	return s;
}

/* The data block's text, borrowed from page (NUL put at its end). */
static char *data_block(char *page)
{
	const char *open = "<script id=\"data\" type=\"application/json\">";
	char *d = strstr(page, open);
	if (!d)
		return NULL;
	d += strlen(open);
	char *e = strstr(d, "</script>");
	if (e)
		*e = 0;
	return e ? d : NULL;
}

static FILE *output(const char *dir, const char *name)
{
	if (!dir)
		return tmpfile();
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return fopen(path, "w+");
}

/* 100,000 nodes in one thread, node j (from 1) called by node (j - 1) / 4,
 * so siblings are distinct methods and every node a distinct stack, but the
 * last CHAIN, each called by the one before: a stack 2,500 frames deep
 * (deeper than a canvas can be high at one row a frame). */
static void check_big(const char *dir)
{
	size_t len = 2 + 3 * (size_t)FRAMES;
	int64_t *tree = malloc(len * sizeof *tree), *calls = malloc(METHODS * sizeof *calls), self = 0;
	CHECK(tree && calls, "memory");
	if (!tree || !calls)
		return;
	tree[0] = 1;
	tree[1] = FRAMES;
	for (int64_t j = 1; j <= FRAMES; j++) {
		tree[2 + 3 * (j - 1)] = j > FRAMES - CHAIN ? j - 1 : (j - 1) / 4;
		tree[3 + 3 * (j - 1)] = j % METHODS;
		tree[4 + 3 * (j - 1)] = j % 1000 + 1;
		self += j % 1000 + 1;
	}
	for (int i = 0; i < METHODS; i++)
		calls[i] = 3 * i + 1;
	FILE *f = output(dir, "big.html");
	CHECK(f != NULL, "cannot write big.html");
	if (!f) {
		free(tree);
		free(calls);
		return;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(jinst_trace_write_flame(f, tree, len, 0, calls, METHODS, "</script><b>title</b>", JINST_TRACE_CLOCK_WALL,
	                              synth_names, NULL) == 0,
	      "write");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	size_t n;
	char *page = contents(f, &n);
	printf("100000 frames: %zu bytes in %.1f ms\n", n, ms);
	/* unsanitized, tens of ms; 4 s leaves room for ASan on a busy machine (1 s) */
	CHECK(ms < 4000, "%.1f ms to write", ms);
	CHECK(n > 1000000 && n < 8000000, "%zu bytes", n);
	char *d = page ? data_block(page) : NULL;
	CHECK(d != NULL, "no data block");
	if (d) {
		char want[64];
		snprintf(want, sizeof want, "\"nodes\":[-1,0,%lld,0,\n", (long long)self);
		CHECK(strstr(d, want) != NULL, "the root holds every nanosecond (%s)", want);
		CHECK(strstr(d, "\"clock\":\"wall\",\"clockWords\":\"wall time\",\"unit\":\"ns\"") != NULL, "clock and unit");
		/* one line per node after the root */
		size_t lines = 0;
		for (char *c = strstr(d, "\"nodes\":["); c && *c; c++)
			lines += *c == '\n';
		CHECK(lines == FRAMES, "%zu nodes", lines);
		/* frames are named in the order the tree first has them: m1, m2,
		 * m3..., each with its method's calls */
		CHECK(strstr(d, "\"names\":[\"pkg/sub/C1.m1\",\"pkg/sub/C2.m2\",") != NULL, "names");
		CHECK(strstr(d, "\"calls\":[4,7,10,") != NULL, "calls per frame");
	}
	free(page);
	free(tree);
	free(calls);
}

static void check_escapes(const char *dir)
{
	/* two threads: 0 -> (1, 2) and 3 -> 4 */
	int64_t tree[] = {2, 3, 0, 0, 10, 1, 1, 20, 1, 2, 30, 2, 0, 3, 40, 1, 4, 50};
	int64_t calls[] = {1, 2, 3, 4, 5};
	FILE *f = output(dir, "names.html");
	CHECK(f != NULL, "cannot write names.html");
	if (!f)
		return;
	CHECK(jinst_trace_write_flame(f, tree, sizeof tree / sizeof tree[0], 0, calls, 5, "</script><b>title</b>",
	                              JINST_TRACE_CLOCK_WALL, nasty_names, NULL) == 0,
	      "write");
	size_t n;
	char *page = contents(f, &n);
	char *d = page ? data_block(page) : NULL;
	CHECK(d != NULL, "no data block");
	if (!d) {
		free(page);
		return;
	}
	CHECK(!strstr(d, "<") && !strstr(d, ">") && !strstr(d, "&"), "a raw <, > or & in the data: %s", d);
	CHECK(strstr(d, "\"p/B.\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\"") != NULL,
	      "</script> escaped: %s", d);
	CHECK(strstr(d, "\"p/A\\u003cb\\u003e\\\"q\\\"\\u0026amp;.run\"") != NULL, "< \" & escaped: %s", d);
	CHECK(strstr(d, "\"p/D\\u0001\\u001f\\\\.tab\\u0009here\"") != NULL, "control characters: %s", d);
	CHECK(strstr(d, "\"p/E\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd.caf\xc3\xa9\"") != NULL, "not UTF-8: %s", d);
	CHECK(strstr(d, "\"title\":\"\\u003c/script\\u003e\\u003cb\\u003etitle\\u003c/b\\u003e\"") != NULL, "title");
	/* the stacks: p/A.run under the root, p/B under it; p/C under the
	 * root from the other thread; D and E under it */
	CHECK(strstr(d, "\"nodes\":[-1,0,150,0,\n0,1,60,10,\n1,2,20,20,\n2,2,30,30,\n3,1,90,40,\n4,2,50,50]") != NULL,
	      "nodes: %s", strstr(d, "\"nodes\""));
	free(page);
	CHECK(jinst_trace_write_flame(tmpfile(), tree, 3, 0, NULL, 0, NULL, (jinst_trace_clock)7, nasty_names, NULL) ==
	          JINST_EINVAL,
	      "a clock that is none");
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : NULL;
	check_big(dir);
	check_escapes(dir);
	return check_report();
}
