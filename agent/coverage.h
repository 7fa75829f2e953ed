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
	bool append;        /* append=y: merge into the OUT.cov there is */
	char session[256];  /* session=, "" for jinst-PID */
} jinst_coverage_config;

extern const jinst_agent_module jinst_coverage_module;

#endif
