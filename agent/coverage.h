/*
 * The coverage module (coverage.c): probes at JaCoCo's sites, booleans or
 * hit counts, written to OUT.cov. Its settings are here for the registry
 * and the tests.
 */
#ifndef JINST_AGENT_COVERAGE_H
#define JINST_AGENT_COVERAGE_H

#include "modules.h"

typedef struct jinst_coverage_config {
	bool counts;        /* coverage=counts: hit counts, else booleans */
	char session[256];  /* session=, "" for jinst-PID */
} jinst_coverage_config;

extern const jinst_agent_module jinst_coverage_module;

/* coverage.c: the option half of the table, for jinst_coverage_module
 * (coverage_run.c) and the option registry the CLI links (options_modules.c). */
extern const jinst_agent_option jinst_coverage_options[];
void jinst_coverage_defaults(void *config);
uint32_t jinst_coverage_passes(const void *config);
#define JINST_COVERAGE_MODULE_OPTIONS                                                      \
	.name = "coverage", .summary = "code coverage: JaCoCo's probes, booleans or hit counts, into OUT.cov", \
	.by_default = false, .options = jinst_coverage_options, .config_size = sizeof(jinst_coverage_config), \
	.defaults = jinst_coverage_defaults

#endif
