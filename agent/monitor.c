/*
 * The monitor module's option (monitor): the option half of its table
 * (monitor.h, JINST_MONITOR_MODULE_OPTIONS), which calls no JNI or JVMTI,
 * so that jinst attach validates options with the agent's own parser. The
 * module's life in the VM is monitor_run.c.
 */
#include <string.h>

#include "monitor.h"

static int parse_on(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	(void)v, (void)vn, (void)err, (void)esize;
	((jinst_monitor_config *)c)->on = true;
	return 0;
}

void jinst_monitor_defaults(void *c)
{
	memset(c, 0, sizeof(jinst_monitor_config));
}

const jinst_agent_option jinst_monitor_options[] = {
	{"monitor", NULL,
	 "lock sites (synchronized blocks and methods) per lock class: enters,\n"
	 "contended enters, time waiting to acquire (total, max), wait() calls\n"
	 "and time: OUT.monitors.txt (ranked) and OUT.monitors.tsv",
	 parse_on},
	{NULL, NULL, NULL, NULL}};
