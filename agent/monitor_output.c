/*
 * The monitor module's outputs, from rows (monitor.h): one row per place
 * (a lock site, or where wait() was called) and lock class.
 *
 *   OUT.monitors.txt  ranked by time waiting to acquire: the sites (every
 *                     lock class of a site added up), then the lock
 *                     classes (every site added up), then every row; as
 *                     HPROF's monitor=y listed its MONITOR TIME by the
 *                     time threads spent blocked
 *   OUT.monitors.tsv  every row, the first line naming the columns, times
 *                     in nanoseconds, for a spreadsheet or a script
 *
 * Classes are named as Java writes them (q.K, int[]) and places as a stack
 * trace does (q.K.main(K.java:4)), as alloc's outputs name them, so that a
 * site can be matched between the two; the TSV keeps the method's
 * descriptor in a column of its own. monitor_run.c opens the files.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"

/* Most time waiting first; then most contended, most enters; then by
 * name, so the same data gives the same bytes. */
static int row_cmp(const void *pa, const void *pb)
{
	const jinst_monitor_row *a = pa, *b = pb;
	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns ? -1 : 1;
	if (a->contended != b->contended)
		return a->contended > b->contended ? -1 : 1;
	if (a->enters != b->enters)
		return a->enters > b->enters ? -1 : 1;
	if (a->waited_ns != b->waited_ns)
		return a->waited_ns > b->waited_ns ? -1 : 1;
	int c = strcmp(a->class_name, b->class_name);
	if (!c)
		c = strcmp(a->method, b->method);
	if (!c)
		c = strcmp(a->descriptor, b->descriptor);
	if (!c && a->line != b->line)
		c = a->line < b->line ? -1 : 1;
	if (!c)
		c = strcmp(a->kind, b->kind);
	return c ? c : strcmp(a->lock_class, b->lock_class);
}

static void add(jinst_monitor_row *to, const jinst_monitor_row *r)
{
	to->enters += r->enters;
	to->contended += r->contended;
	to->wait_ns += r->wait_ns;
	to->waits += r->waits;
	to->waited_ns += r->waited_ns;
	if (r->max_wait_ns > to->max_wait_ns)
		to->max_wait_ns = r->max_wait_ns;
}

/* rows summed by place (by_class false: the lock class becomes "*") or by
 * lock class (the place becomes "*"); malloc'ed, *out_n of them. */
static jinst_monitor_row *group(const jinst_monitor_row *rows, size_t n, bool by_class, size_t *out_n)
{
	jinst_monitor_row *g = malloc((n ? n : 1) * sizeof(*g));
	size_t k = 0;
	if (!g)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const jinst_monitor_row *r = &rows[i];
		size_t j = 0;
		for (; j < k; j++) {
			const jinst_monitor_row *q = &g[j];
			if (by_class ? !strcmp(q->lock_class, r->lock_class)
			             : q->line == r->line && !strcmp(q->class_name, r->class_name) && !strcmp(q->method, r->method) &&
			                   !strcmp(q->descriptor, r->descriptor) && !strcmp(q->kind, r->kind))
				break;
		}
		if (j == k) {
			g[k] = *r;
			g[k].enters = g[k].contended = g[k].wait_ns = g[k].max_wait_ns = g[k].waits = g[k].waited_ns = 0;
			if (by_class)
				g[k].class_name = g[k].method = g[k].descriptor = g[k].kind = "*", g[k].line = 0;
			else
				g[k].lock_class = "*";
			k++;
		}
		add(&g[j], r);
	}
	qsort(g, k, sizeof(*g), row_cmp);
	*out_n = k;
	return g;
}

static void place(FILE *f, const jinst_monitor_row *r)
{
	char name[1200];
	if (!strcmp(r->kind, "*"))
		return;
	jinst_agent_place_name(r->class_name, r->method, r->source, r->line, name, sizeof name);
	fprintf(f, "  %s (%s%s)", name, r->kind, r->instrumented ? "" : ", not instrumented");
}

static void table(FILE *f, const char *title, const jinst_monitor_row *g, size_t k, uint64_t total)
{
	fprintf(f, "%s\n", title);
	fprintf(f, "rank   self  accum   wait ms    max ms  contended     enters  waits   wait() ms  lock class  place\n");
	double accum = 0;
	for (size_t i = 0; i < k; i++) {
		const jinst_monitor_row *r = &g[i];
		double self = total ? 100.0 * (double)r->wait_ns / (double)total : 0;
		accum += self;
		char lock[512];
		jinst_agent_java_name(r->lock_class, lock, sizeof lock);
		fprintf(f, "%4zu %5.1f%% %5.1f%% %9.3f %9.3f %10llu %10llu %6llu %11.3f  %s", i + 1, self, accum,
		        (double)r->wait_ns / 1e6, (double)r->max_wait_ns / 1e6, (unsigned long long)r->contended,
		        (unsigned long long)r->enters, (unsigned long long)r->waits, (double)r->waited_ns / 1e6, lock);
		place(f, r);
		fputc('\n', f);
	}
	fputc('\n', f);
}

int jinst_monitor_write_report(FILE *f, jinst_monitor_row *rows, size_t n)
{
	size_t ns, nc;
	jinst_monitor_row *sites = group(rows, n, false, &ns), *classes = group(rows, n, true, &nc);
	int rc = sites && classes ? 0 : JINST_ENOMEM;
	if (!rc) {
		jinst_monitor_row all = {.enters = 0};
		for (size_t i = 0; i < n; i++)
			add(&all, &rows[i]);
		qsort(rows, n, sizeof(*rows), row_cmp);
		fprintf(f, "MONITORS BEGIN (enters %llu, contended %llu, waiting to acquire %.3f ms, wait() calls %llu, "
		           "%.3f ms)\n",
		        (unsigned long long)all.enters, (unsigned long long)all.contended, (double)all.wait_ns / 1e6,
		        (unsigned long long)all.waits, (double)all.waited_ns / 1e6);
		fprintf(f, "enters: counted by the bytecode at instrumented sites; contention and wait(): timed by the VM's "
		           "JVMTI monitor events, wall clock\n\n");
		table(f, "BY SITE, ranked by time waiting to acquire", sites, ns, all.wait_ns);
		table(f, "BY LOCK CLASS", classes, nc, all.wait_ns);
		table(f, "BY SITE AND LOCK CLASS", rows, n, all.wait_ns);
		fprintf(f, "MONITORS END\n");
	}
	free(sites);
	free(classes);
	return rc;
}

int jinst_monitor_write_tsv(FILE *f, jinst_monitor_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), row_cmp);
	fprintf(f, "kind\tclass\tmethod\tdescriptor\tsource\tline\tlock_class\tenters\tcontended\twait_ns\t"
	           "max_wait_ns\twaits\twaited_ns\tinstrumented\n");
	for (size_t i = 0; i < n; i++) {
		const jinst_monitor_row *r = &rows[i];
		char cls[512], lock[512];
		jinst_agent_java_name(r->class_name, cls, sizeof cls);
		jinst_agent_java_name(r->lock_class, lock, sizeof lock);
		fprintf(f, "%s\t%s\t%s\t%s\t%s\t%u\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%s\n", r->kind, cls,
		        r->method, r->descriptor, r->source ? r->source : "", r->line, lock, (unsigned long long)r->enters,
		        (unsigned long long)r->contended, (unsigned long long)r->wait_ns, (unsigned long long)r->max_wait_ns,
		        (unsigned long long)r->waits, (unsigned long long)r->waited_ns, r->instrumented ? "y" : "n");
	}
	return 0;
}
