/*
 * The trace outputs (report/trace_output.c) from synthetic snapshots laid out
 * as runtime-java's Hooks.snapshot* return them: sorting, totals, self time
 * of folded stacks merged across threads, JSON escaping. Writes the Chrome
 * JSON to ARGV[1] so a second test can parse it with python3.
 */
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/report.h"
#include "../testlib.h"

/* The folded stacks' first line: their clock and unit. */
#define FOLDED_HEAD "# jinst folded stacks: clock wall, unit ns (self wall time per stack, in nanoseconds)\n"
static const jinst_trace_clock wall = JINST_TRACE_CLOCK_WALL;

static const char *const methods[][3] = {
	{"p/B", "run", "()V"},                     /* 0 */
	{"p/A", "work", "(I)J"},                   /* 1 */
	{"p/A", "<init>", "()V"},                  /* 2 */
	{"p/A", "work", "(J)J"},                   /* 3 */
	{"q/Q\"x", "odd\\name", "(Ljava/lang/String;)V"}, /* 4: needs escaping in JSON */
};

static int names(void *ctx, uint32_t id, const char **c, const char **n, const char **d)
{
	(void)ctx;
	if (id >= sizeof methods / sizeof methods[0])
		return -1;
	*c = methods[id][0];
	*n = methods[id][1];
	*d = methods[id][2];
	return 0;
}

/* For the folded stacks' order: ids 5, 6, 7 are p/A.b, p/A.b1, p/A.c. */
static int names2(void *ctx, uint32_t id, const char **c, const char **n, const char **d)
{
	static const char *const more[][3] = {{"p/A", "b", "()V"}, {"p/A", "b1", "()V"}, {"p/A", "c", "()V"}};
	if (id >= 5 && id <= 7) {
		*c = more[id - 5][0];
		*n = more[id - 5][1];
		*d = more[id - 5][2];
		return 0;
	}
	return names(ctx, id, c, n, d);
}

/* Methods 0 to 4: 2 counted only, 3 with a backslash, a tab, a newline and a
 * carriage return in its names. */
static int method(void *ctx, uint32_t id, const char **c, const char **n, const char **d, int *timed)
{
	*timed = id != 2;
	if (id == 3) {
		*c = "p/T\\ab";
		*n = "a\tb\nc\r";
		*d = "()V";
		return 0;
	}
	return names(ctx, id, c, n, d);
}

/* What f received, as a string. */
static char *contents(FILE *f)
{
	long n = ftell(f);
	char *s = calloc((size_t)n + 1, 1);
	rewind(f);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = 0;
	fclose(f);
	return s;
}

int main(int argc, char **argv)
{
	/* counts: zero counts and unknown ids (7) left out; sorted by names */
	int64_t counts[8] = {5, 3, 0, 1, 0, 0, 0, 9};
	FILE *f = tmpfile();
	CHECK(jinst_trace_write_counts(f, counts, 8, names, NULL) == 0, "counts");
	char *s = contents(f);
	CHECK(!strcmp(s, "p/A\twork\t(I)J\t3\np/A\twork\t(J)J\t1\np/B\trun\t()V\t5\n"), "counts:\n%s", s);
	free(s);

	/* the method table: every id with a method (not 5), escapes, flags */
	f = tmpfile();
	CHECK(jinst_trace_write_methods(f, 6, method, NULL) == 0, "methods");
	s = contents(f);
	CHECK(!strcmp(s, "# jinst methods 1\n0\tp/B\trun\t()V\ttimed\n1\tp/A\twork\t(I)J\ttimed\n"
	                 "2\tp/A\t<init>\t()V\tcounted\n3\tp/T\\\\ab\ta\\tb\\nc\\r\t()V\ttimed\n"
	                 "4\tq/Q\"x\todd\\\\name\t(Ljava/lang/String;)V\ttimed\n"),
	      "methods:\n%s", s);
	free(s);

	/* a run's table: its key and count first, the same rows */
	f = tmpfile();
	CHECK(jinst_trace_write_run_methods(f, 0x00ab0000000000cdull, 6, method, NULL) == 0, "run methods");
	s = contents(f);
	const char *run = "# jinst methods 2\nrun\t00ab0000000000cd\t6\n0\tp/B\trun\t()V\ttimed\n1\tp/A\twork\t";
	CHECK(!strncmp(s, run, strlen(run)) && strstr(s, "\n4\tq/Q\"x\todd\\\\name\t"), "run methods:\n%s", s);
	free(s);

	/* profile: ranked by self time, percentages of the total self time */
	int64_t times[3 * 4] = {1, 10000000, 1000000, /* run: 10 ms total, 1 ms self */
	                        4, 6000000, 6000000,  /* work(I): 6 ms self */
	                        0, 0, 0,
	                        2, 3000000, 3000000}; /* work(J): 3 ms */
	f = tmpfile();
	CHECK(jinst_trace_write_profile(f, times, 4, NULL, 0, 0, wall, names, NULL) == 0, "profile");
	s = contents(f);
	CHECK(strstr(s, "total = 10.000") != NULL, "total:\n%s", s);
	char *r1 = strstr(s, "    1  60.00%  60.00%          4        6.000        6.000  p/A.work(I)J");
	char *r2 = strstr(s, "    2  30.00%  90.00%          2        3.000        3.000  p/A.work(J)J");
	char *r3 = strstr(s, "    3  10.00% 100.00%          1        1.000       10.000  p/B.run()V");
	CHECK(r1 && r2 && r3 && r1 < r2 && r2 < r3, "ranks:\n%s", s);
	CHECK(!strstr(s, "<init>"), "a method without calls is listed:\n%s", s);
	CHECK(!strstr(s, "not timed"), "a note on untimed methods without any:\n%s", s);
	CHECK(!strstr(s, "(times from a clock"), "a note on the clock's period without one:\n%s", s);
	CHECK(strstr(s, "\n(no clock ran (tick=0): the times are only those the program gave by hand"),
	      "tick=0: not said that no clock ran:\n%s", s);
	static const char head[] = "WALL TIME (ms) BEGIN (total = 10.000) clock wall, unit ms: wall time,";
	CHECK(!strncmp(s, head, sizeof head - 1) &&
	          strstr(s, "\nWALL TIME (ms) END\n"),
	      "the clock and the unit in the header:\n%s", s);
	CHECK(jinst_trace_write_profile(f, times, 4, NULL, 0, 0, (jinst_trace_clock)99, names, NULL) == JINST_EINVAL,
	      "a clock that is none");
	free(s);

	/* profile with counts: methods entered without a time (<init>, a leaf
	 * counted 7 times; odd\name, 2 entries and no time) follow the timed
	 * ones, by count, marked "-"; ids beyond the times (4) count too; a
	 * timed method's count is the one of the times; the clock's period
	 * is said */
	int64_t entered[5] = {1, 5, 7, 2, 2};
	f = tmpfile();
	CHECK(jinst_trace_write_profile(f, times, 4, entered, 5, 250, wall, names, NULL) == 0,
	      "profile with counts");
	s = contents(f);
	CHECK(strstr(s, "total = 10.000") != NULL, "total with counts:\n%s", s);
	r1 = strstr(s, "    1  60.00%  60.00%          4        6.000        6.000  p/A.work(I)J");
	r3 = strstr(s, "    3  10.00% 100.00%          1        1.000       10.000  p/B.run()V");
	char *r4 = strstr(s, "    4       -       -          7            -            -  p/A.<init>()V");
	char *r5 = strstr(s, "    5       -       -          2            -            -  q/Q\"x.odd\\name(Ljava/lang/String;)V");
	CHECK(r1 && r3 && r4 && r5 && r1 < r3 && r3 < r4 && r4 < r5, "untimed ranks:\n%s", s);
	CHECK(strstr(s, "(2 methods counted, not timed, are marked -") != NULL, "untimed note:\n%s", s);
	CHECK(strstr(s, "(times from a clock that advances every 250 us") != NULL && !strstr(s, "no clock ran"),
	      "clock note:\n%s", s);
	free(s);

	/* one method untimed: the note says so in the singular */
	f = tmpfile();
	CHECK(jinst_trace_write_profile(f, times, 4, entered, 4, 250, wall, names, NULL) == 0,
	      "profile, one untimed");
	s = contents(f);
	CHECK(strstr(s, "(1 method counted, not timed, is marked -") != NULL, "untimed note, singular:\n%s", s);
	free(s);

	/* clock=cpu: the same times, named CPU time in the header (HPROF's
	 * very words) and the note, and in the folded stacks' first line */
	f = tmpfile();
	CHECK(jinst_trace_write_profile(f, times, 4, NULL, 0, 1000, JINST_TRACE_CLOCK_CPU, names, NULL) == 0,
	      "cpu profile");
	s = contents(f);
	static const char cpu_head[] = "CPU TIME (ms) BEGIN (total = 10.000) clock cpu, unit ms: CPU time, self";
	CHECK(!strncmp(s, cpu_head, sizeof cpu_head - 1) && strstr(s, "\nCPU TIME (ms) END\n") &&
	          strstr(s, "(times from each thread's CPU time, read every 1000 us, each advance given"),
	      "the cpu clock in the header and the note:\n%s", s);
	free(s);
	int64_t one[] = {1, 1, 0, 0, 7};
	f = tmpfile();
	CHECK(jinst_trace_write_folded(f, one, sizeof one / sizeof one[0], 0, JINST_TRACE_CLOCK_CPU, names, NULL) == 0,
	      "cpu folded");
	s = contents(f);
	CHECK(!strcmp(s, "# jinst folded stacks: clock cpu, unit ns (self CPU time per stack, in nanoseconds)\n"
	                 "p/B.run 7\n"),
	      "cpu folded:\n%s", s);
	free(s);

	/* folded: two threads with the same stack run;work(I) merge, and the
	 * overloads work(I) and work(J) print as one frame; nodes are parent,
	 * method, self ns */
	int64_t tree[] = {2,
	                  /* thread 1: run (50 self) -> work(I) (30), run -> work(J) (20) */
	                  3, 0, 0, 50, 1, 1, 30, 1, 3, 20,
	                  /* thread 2: run (0) -> work(I) (50); a node with a bad parent is ignored */
	                  3, 0, 0, 0, 1, 1, 50, 9, 1, 5};
	f = tmpfile();
	CHECK(jinst_trace_write_folded(f, tree, sizeof tree / sizeof tree[0], 0, wall, names, NULL) == 0,
	      "folded");
	s = contents(f);
	CHECK(!strcmp(s, FOLDED_HEAD "p/B.run 50\np/B.run;p/A.work 100\n"), "folded:\n%s", s);
	free(s);
	/* A truncated snapshot is not read past its end. */
	f = tmpfile();
	CHECK(jinst_trace_write_folded(f, tree, 7, 0, wall, names, NULL) == 0, "truncated folded");
	free(contents(f));

	/* folded, order: each stack before its callees, callees by frame text,
	 * a subtree kept together even where a frame is a prefix of a
	 * sibling's ("p/A.b" then its callee, then "p/A.b1", where sort(1)
	 * would put "p/A.b1" between them) */
	int64_t otree[] = {1, 4, 0, 0, 60, /* 1: run, 100 inclusive */
	                   1, 6, 10,       /* 2: run -> b1 */
	                   1, 5, 10,       /* 3: run -> b, 30 inclusive */
	                   3, 7, 20};      /* 4: run -> b -> c */
	f = tmpfile();
	CHECK(jinst_trace_write_folded(f, otree, sizeof otree / sizeof otree[0], 0, wall, names2, NULL) == 0,
	      "folded order");
	s = contents(f);
	CHECK(!strcmp(s, FOLDED_HEAD "p/B.run 60\np/B.run;p/A.b 10\np/B.run;p/A.b;p/A.c 20\np/B.run;p/A.b1 10\n"),
	      "folded order:\n%s", s);
	free(s);
	/* folded, pruned at 0.35 of the whole (35 of 100 ns): b1 (10) and b
	 * (30 with its callee c) are under it; their 40 ns print as one
	 * "(small stacks)" frame right after run, and the total stays 100 */
	f = tmpfile();
	CHECK(jinst_trace_write_folded(f, otree, sizeof otree / sizeof otree[0], 0.35, wall, names2, NULL) == 0,
	      "folded min");
	s = contents(f);
	CHECK(!strcmp(s, FOLDED_HEAD "p/B.run 60\np/B.run;(small stacks) 40\n"), "folded min:\n%s", s);
	free(s);
	/* at 0.25 (25 ns): b (30 inclusive) stays, its callee c (20) and b1
	 * (10) are small, each under its own caller */
	f = tmpfile();
	CHECK(jinst_trace_write_folded(f, otree, sizeof otree / sizeof otree[0], 0.25, wall, names2, NULL) == 0,
	      "folded min 2");
	s = contents(f);
	CHECK(!strcmp(s, FOLDED_HEAD "p/B.run 60\np/B.run;(small stacks) 10\np/B.run;p/A.b 10\n"
	                             "p/B.run;p/A.b;(small stacks) 20\n"),
	      "folded min 2:\n%s", s);
	free(s);
	/* folded, a full tree: the node of method -1 (the runtime's Ctx.FULL)
	 * holds the calls a caller made once its thread's tree was full; it
	 * prints as "(tree full)" under that caller, and its time is not the
	 * caller's own: run 100 = work 30 + (tree full) 45 + 25 self */
	int64_t ftree[] = {1, 3, 0, 0, 25, /* 1: run */
	                   1, 1, 30,       /* 2: run -> work(I) */
	                   1, -1, 45};     /* 3: run -> (tree full) */
	f = tmpfile();
	CHECK(jinst_trace_write_folded(f, ftree, sizeof ftree / sizeof ftree[0], 0, wall, names, NULL) == 0,
	      "folded full");
	s = contents(f);
	CHECK(!strcmp(s, FOLDED_HEAD "p/B.run 25\np/B.run;(tree full) 45\np/B.run;p/A.work 30\n"), "folded full:\n%s", s);
	free(s);
	/* folded, deep and wide: 500 threads, each a chain 400 calls deep with
	 * its time in the leaf, make one line (the same stack everywhere);
	 * stacks are shared, not copied per node (200000 nodes of paths up to
	 * 400 frames would take gigabytes) */
	enum { DEEP_THREADS = 500, DEEP = 400 };
	size_t dlen = 1 + (size_t)DEEP_THREADS * (1 + 3 * DEEP);
	int64_t *deep = malloc(dlen * sizeof *deep);
	CHECK(deep != NULL, "memory");
	size_t k = 0;
	deep[k++] = DEEP_THREADS;
	for (int t = 0; t < DEEP_THREADS; t++) {
		deep[k++] = DEEP;
		for (int j = 1; j <= DEEP; j++) {
			deep[k++] = j - 1;
			deep[k++] = j == DEEP ? 7 : 5 + (j % 2); /* b, b1, b, ..., c */
			deep[k++] = j == DEEP ? 3 : 0;           /* self 3 ns in the leaf only */
		}
	}
	f = tmpfile();
	CHECK(jinst_trace_write_folded(f, deep, dlen, 0, wall, names2, NULL) == 0, "folded deep");
	s = contents(f);
	size_t lines = 0;
	for (char *c = s; *c; c++)
		lines += *c == '\n';
	CHECK(lines == 2 && strstr(s, ";p/A.c 1500\n") && !strncmp(s + strlen(FOLDED_HEAD), "p/A.b1;p/A.b;", 13),
	      "folded deep: %zu lines", lines);
	free(s);
	free(deep);

	/* chrome: one thread with a name needing escapes, B/E pairs */
	int64_t events[] = {2,
	                    11, 4, 0, 1000, 0 << 1, 1500, 4 << 1, 2500, 4 << 1 | 1, 5000, 0 << 1 | 1,
	                    12, 2, 3, 2000, 1 << 1, 2600, 1 << 1 | 1};
	const char *tnames[] = {"main \"quoted\"", "worker\n1"};
	f = argc > 1 ? fopen(argv[1], "w+") : tmpfile();
	CHECK(f != NULL, "cannot open %s", argc > 1 ? argv[1] : "a temporary file");
	if (f) {
		CHECK(jinst_trace_write_chrome(f, events, sizeof events / sizeof events[0], tnames, 2, 77, wall, names, NULL) == 0,
		      "chrome");
		s = contents(f);
		CHECK(strstr(s, "\"name\":\"main \\\"quoted\\\"\"") != NULL, "thread name escaped:\n%s", s);
		CHECK(strstr(s, "\"name\":\"worker\\u000a1\"") != NULL, "control character escaped:\n%s", s);
		CHECK(strstr(s, "\"ph\":\"B\",\"pid\":77,\"tid\":11,\"ts\":0.000,\"name\":\"p/B.run\"") != NULL,
		      "first event at 0:\n%s", s);
		CHECK(strstr(s, "\"ph\":\"E\",\"pid\":77,\"tid\":12,\"ts\":1.600,\"name\":\"p/A.work\"") != NULL,
		      "microseconds:\n%s", s);
		CHECK(strstr(s, "q/Q\\\"x.odd\\\\name") != NULL, "method name escaped:\n%s", s);
		CHECK(strstr(s, "\"dropped\":3") != NULL, "dropped:\n%s", s);
		CHECK(strstr(s, "\"otherData\":{\"tool\":\"jinst\",\"clock\":\"wall\",\"unit\":\"us\"") != NULL,
		      "the clock and the unit:\n%s", s);
		free(s);
	}
	return check_report();
}
