/*
 * The registry of feature modules (modules.h): the one place a module is
 * added. Order is help's order, and the order the core calls the enabled
 * modules in: capabilities, passes (the instrumenter runs them in this
 * order), start, dump, stop.
 */
#include "modules.h"

#include "alloc.h"
#include "coverage.h"
#include "monitor.h"
#include "natives.h"
#include "trace.h"

const jinst_agent_module *const jinst_agent_modules[] = {
	&jinst_trace_module,
	&jinst_coverage_module,
	&jinst_monitor_module,
	&jinst_alloc_module,
	&jinst_natives_module,
	NULL,
};
