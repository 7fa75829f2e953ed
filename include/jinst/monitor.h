/*
 * The monitor pass: a hook at every lock a method takes, so that the
 * runtime counts the enters of each lock site exactly, per thread, and
 * the agent can put each contended enter it times (JVMTI
 * MonitorContendedEnter/Entered) at the site the pass named.
 * Library jinst_instrument.
 *
 * A lock site is a place in the code that takes a monitor: the
 * monitorenters of one line of one method (class, method name,
 * descriptor, line; 0 when the method has no LineNumberTable), or a
 * synchronized method itself, whose monitor the VM takes before the first
 * instruction runs. Each site gets a small id the first time the pass
 * meets it, keyed by those names, so a class retransformed (or the same
 * class in another loader) keeps its sites' ids.
 *
 * What the pass inserts (no monitorenter or monitorexit is touched, no
 * branch and no handler is added, so HotSpot still matches every method's
 * monitors and compiles it as before):
 *
 *   before each monitorenter    dup; push site; invokestatic monitorEnter(Ljava/lang/Object;I)V
 *   at entry of a synchronized  aload_0 (or ldc ThisClass when static); push site;
 *   method                      invokestatic monitorEnter(Ljava/lang/Object;I)V
 *
 * The hook (JINST_HOOK_MONITOR_ENTER) runs just before the VM takes the
 * monitor (a synchronized method's: just after), with the object locked;
 * a null (the monitorenter then throws) is not an enter. A static
 * synchronized method of a class file before 49 (no ldc of a class) has
 * no entry hook: its enters are not counted.
 */
#ifndef JINST_MONITOR_H
#define JINST_MONITOR_H

#include "jinst/pass.h"

#ifdef __cplusplus
extern "C" {
#endif

enum jinst_monitor_site_kind {
	JINST_MONITOR_SITE_BLOCK = 1,   /* monitorenter (a synchronized block) */
	JINST_MONITOR_SITE_METHOD = 2   /* a synchronized method's own monitor */
};

typedef struct jinst_monitor_site_info {
	const char *class_name;   /* internal name, modified UTF-8 */
	const char *method;
	const char *descriptor;
	const char *source_file;  /* NULL when the class has no SourceFile */
	uint32_t line;            /* a block's line; a method's first line; 0: none */
	enum jinst_monitor_site_kind kind;
} jinst_monitor_site_info;

/* The sites a monitor pass handed out ids to. Threads: any number at once. */
typedef struct jinst_monitor_sites jinst_monitor_sites;

/* A monitor pass, for jinst_instrument_add_pass, and its table of sites
 * (borrowed: the pass's state, freed with the instrumenter that the pass
 * is given to, or by out->free when it is given to none). */
int jinst_monitor_pass(jinst_pass *out, jinst_monitor_sites **sites);

/* One past the highest site id handed out. */
uint32_t jinst_monitor_sites_count(const jinst_monitor_sites *sites);
/* 0 with *info (strings live as long as the table), JINST_EINVAL for an
 * unknown id. */
int jinst_monitor_sites_info(const jinst_monitor_sites *sites, uint32_t id, jinst_monitor_site_info *info);
/* The id of the site (class, method, descriptor, line, kind); for
 * JINST_MONITOR_SITE_METHOD the line is ignored. 0 with *id, or
 * JINST_ENOTFOUND when the pass never met it. */
int jinst_monitor_sites_find(const jinst_monitor_sites *sites, uint32_t *id, const char *class_name,
                             const char *method, const char *descriptor, uint32_t line,
                             enum jinst_monitor_site_kind kind);

#ifdef __cplusplus
}
#endif
#endif
