/*
 * Reports: the trace outputs (counts TSV, ranked profile, folded stacks,
 * Chrome JSON), written from the snapshots the runtime's Hooks class
 * returns (runtime-java/jinst/rt/Hooks.java, snapshot*): plain arrays of
 * longs, so these functions know nothing of JNI or JVMTI and a unit test,
 * the agent at VM death and a `jinst report` command can all feed them.
 * Method names come from a callback (the instrumenter's metadata in the
 * agent). Library jinst_report; functions return 0 or a negative JINST_E*
 * code (JINST_ENOMEM, JINST_EIO when the stream fails).
 */
#ifndef JINST_REPORT_H
#define JINST_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Names of method id: 0 and the three strings (internal class name, method
 * name, descriptor), or negative for an unknown id (its data is skipped). */
typedef int (*jinst_trace_names)(void *ctx, uint32_t id, const char **class_name, const char **name,
                                 const char **descriptor);

/* The clock a trace's times come from. Every output that holds times says
 * which, by the name and words of jinst_trace_clock_name/_words: a clock
 * is one enumerator here and one row of their table (trace_output.c). */
typedef enum jinst_trace_clock {
	JINST_TRACE_CLOCK_WALL = 0, /* CLOCK_MONOTONIC, System.nanoTime's */
	JINST_TRACE_CLOCK_CPU = 1   /* each thread's CPU time (user and system) */
} jinst_trace_clock;

/* "wall", "cpu"; NULL for a value that is no clock. */
const char *jinst_trace_clock_name(jinst_trace_clock clock);
/* "wall time", "CPU time"; NULL for a value that is no clock. */
const char *jinst_trace_clock_words(jinst_trace_clock clock);

/* counts: n entry counts indexed by id. One line per method with a nonzero
 * count, class<TAB>method<TAB>descriptor<TAB>count, sorted by the three
 * names (bytewise). Counts are exact calls, no clock's. */
int jinst_trace_write_counts(FILE *f, const int64_t *counts, size_t n, jinst_trace_names names, void *ctx);

/* times: 3n longs (calls, inclusive ns, self ns) per id, calls 0 for a
 * method that is not timed; counts: ncounts entry counts per id (may be
 * NULL with 0); tick_us: the clock's period, said in the header, or 0:
 * no clock ran (tick=0), said too; clock: what the times measure, named in the header
 * ("WALL TIME (ms) BEGIN ... clock wall, unit ms"). A ranked profile in the
 * manner of HPROF's cpu=times, by self time; then, marked "-", the methods
 * that were entered and are not timed (counted only), by entry count. */
int jinst_trace_write_profile(FILE *f, const int64_t *times, size_t n, const int64_t *counts, size_t ncounts,
                              long tick_us, jinst_trace_clock clock, jinst_trace_names names, void *ctx);

/* tree: the call trees (thread count; per thread: node count, then parent,
 * method, self ns per node, node 0 being the root). Folded stacks, one line
 * per distinct stack over all threads: "frame;frame N" with frame =
 * class.method and N the self nanoseconds of the stack's last frame;
 * method -1 is the frame "(tree full)", the time a full tree kept under
 * the caller; equal stacks merged; in tree order: each stack before its
 * callees, callees by frame text (bytewise), so every subtree is contiguous.
 * A stack whose inclusive time is below min_share of the whole (0 to 1)
 * is left out with its callees: their time is printed as one frame
 * "(small stacks)" under its caller, right after the caller's line. (A
 * flame graph cannot show them: 0.00001 of the whole is a hundredth of a
 * pixel of a 1000-pixel graph; javac with the JDK traced has millions of
 * them.) Memory grows with the distinct stacks, not with their printed length.
 * The first line is a comment, "# jinst folded stacks: clock wall, unit ns
 * ...", which flamegraph.pl, inferno and speedscope skip (it ends in no
 * number). */
int jinst_trace_write_folded(FILE *f, const int64_t *tree, size_t len, double min_share, jinst_trace_clock clock,
                             jinst_trace_names names, void *ctx);

/* The flame graph of the same trees: one self-contained HTML page (its
 * script and style inside, no other file, nothing fetched), the stacks
 * interned, ordered and pruned at min_share as the folded stacks are, drawn
 * on a canvas with zoom, search and tooltips. calls: ncalls exact entry
 * counts per method id (may be NULL with 0), shown per frame as the calls
 * of its method over all stacks; title: a line shown above the graph
 * (e.g. the command line; may be NULL). Names and title are escaped for a
 * script block (no "</script>" nor "<!--" can end it). */
int jinst_trace_write_flame(FILE *f, const int64_t *tree, size_t len, double min_share, const int64_t *calls,
                            size_t ncalls, const char *title, jinst_trace_clock clock, jinst_trace_names names,
                            void *ctx);

/* events: the timelines (thread count; per thread: thread id, event count,
 * dropped, then nanoTime and word per event, word = id << 1 | is_exit);
 * thread_names[i] names the i-th thread (may be NULL). Chrome/Perfetto
 * trace-event JSON with B/E events, microsecond timestamps from the first
 * event, and pid as given; otherData names the clock and the unit
 * ("clock": "wall", "unit": "us"). */
int jinst_trace_write_chrome(FILE *f, const int64_t *events, size_t len, const char *const *thread_names,
                             size_t thread_name_count, long pid, jinst_trace_clock clock, jinst_trace_names names,
                             void *ctx);

/* The names of method id and whether its calls are timed (it has exit
 * hooks): 0, or negative for an id with no method (left out). */
typedef int (*jinst_trace_method)(void *ctx, uint32_t id, const char **class_name, const char **name,
                                  const char **descriptor, int *timed);

/* Where code instrumented ahead of time carries its method table, beside
 * its classes, for the runtime to name the ids with when no agent runs. */
#define JINST_METHOD_TABLE_RESOURCE "META-INF/jinst/methods.tsv"

/* The method table of ids 0 to n - 1: a line "# jinst methods 1", then
 * per method id<TAB>class<TAB>method<TAB>descriptor<TAB>timed|counted,
 * names as given (internal class names) with backslash, tab, newline and
 * carriage return written as \\, \t, \n, \r. runtime-java's MethodTable
 * reads it. */
int jinst_trace_write_methods(FILE *f, uint32_t n, jinst_trace_method method, void *ctx);

/* The method table of a run whose ids are relative to it (include/jinst/
 * instrument.h, jinst_instrument_set_run_class): a line "# jinst methods
 * 2", a line run<TAB>KEY<TAB>n (the run key in 16 lowercase hex digits,
 * the run's method count), then the rows as above, ids within the run.
 * The runtime names id BASE + i with row i, BASE being the run's. */
int jinst_trace_write_run_methods(FILE *f, uint64_t key, uint32_t n, jinst_trace_method method, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
