/*
 * The option halves of the registry's modules (modules.c), in its order:
 * what jinst_agent_options_parse needs of a module (name, options, settings,
 * checks) and nothing of its life in a VM. jinst attach links this with
 * options.c, trace.c and coverage.c to validate options with the agent's
 * own parser before it touches a VM; test_options checks that the two
 * registries list the same modules with the same tables.
 */
#include "alloc.h"
#include "coverage.h"
#include "monitor.h"
#include "natives.h"
#include "trace.h"

static const jinst_agent_module trace_options_only = {JINST_TRACE_MODULE_OPTIONS};
static const jinst_agent_module coverage_options_only = {JINST_COVERAGE_MODULE_OPTIONS};
static const jinst_agent_module monitor_options_only = {JINST_MONITOR_MODULE_OPTIONS};
static const jinst_agent_module alloc_options_only = {JINST_ALLOC_MODULE_OPTIONS};
static const jinst_agent_module natives_options_only = {JINST_NATIVES_MODULE_OPTIONS};

const jinst_agent_module *const jinst_agent_option_modules[] = {
	&trace_options_only,
	&coverage_options_only,
	&monitor_options_only,
	&alloc_options_only,
	&natives_options_only,
	NULL,
};
