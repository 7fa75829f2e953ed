/*
 * The allocation module (alloc.c, alloc_run.c): objects and bytes per
 * allocation site, HPROF's heap=sites rebuilt with the allocation pass
 * (include/jinst/alloc.h). Its settings are here for the registry and the
 * tests.
 */
#ifndef JINST_AGENT_ALLOC_H
#define JINST_AGENT_ALLOC_H

#include "modules.h"

typedef struct jinst_alloc_config {
	bool check;  /* alloc=check: every object's bytes compared with GetObjectSize */
	bool live;   /* alloc=live: live objects and bytes per site at each write */
	int depth;   /* depth=N: frames of trace=times' shadow stack per allocation (0: none) */
	bool named;  /* alloc or alloc= given (depth= without them is refused) */
} jinst_alloc_config;

extern const jinst_agent_module jinst_alloc_module;

/* alloc.c: the option half of the table, for jinst_alloc_module
 * (alloc_run.c) and the option registry the CLI links (options_modules.c). */
extern const jinst_agent_option jinst_alloc_options[];
void jinst_alloc_defaults(void *config);
int jinst_alloc_check(void *config, char *err, size_t err_size);
#define JINST_ALLOC_MODULE_OPTIONS                                                                              \
	.name = "alloc", .summary = "allocation sites: objects and bytes per site, as HPROF's heap=sites",        \
	.by_default = false, .options = jinst_alloc_options, .config_size = sizeof(jinst_alloc_config),          \
	.defaults = jinst_alloc_defaults, .check = jinst_alloc_check

#endif
