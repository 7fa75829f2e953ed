/*
 * The natives module (natives.c, natives_run.c): native methods wrapped
 * through JVMTI SetNativeMethodPrefix, so that the trace pass and the
 * others instrument their wrappers (instrument/natives.c). Its settings are
 * here for the registry and the tests; the two functions at the end are
 * for the core, which must keep the wrappers a class has in every later
 * version of it.
 */
#ifndef JINST_AGENT_NATIVES_H
#define JINST_AGENT_NATIVES_H

#include "modules.h"

typedef struct jinst_natives_config {
	bool intrinsics;    /* natives=all: @IntrinsicCandidate natives too */
} jinst_natives_config;

extern const jinst_agent_module jinst_natives_module;

/* natives.c: the option half of the table, for jinst_natives_module
 * (natives_run.c) and the option registry the CLI links (options_modules.c). */
extern const jinst_agent_option jinst_natives_option_rows[];
void jinst_natives_defaults(void *config);
#define JINST_NATIVES_MODULE_OPTIONS                                                                  \
	.name = "natives", .summary = "native methods wrapped (SetNativeMethodPrefix), so the other passes see them", \
	.by_default = false, .options = jinst_natives_option_rows, .config_size = sizeof(jinst_natives_config), \
	.defaults = jinst_natives_defaults, .needs_one_of = "trace+monitor",                                    \
	.alone = "natives records nothing alone: it lets trace= count and time native methods "              \
	         "(trace=counts,natives) and monitor see synchronized ones (monitor,natives); add one of them"

/* natives_run.c, for the core. Once a class of this VM has wrappers, every
 * instrumenter of a later session keeps them on retransformation, natives
 * on or not (the VM refuses a version without them): */
void jinst_natives_carry(jinst_instrument *ins);
/* and `stop` hands back the original bytes with the wrappers the VM's
 * class has (jinst_agent_class_redefined, on the load hook's thread): 0
 * with *out (malloc'd) when it has some, 1 when none (hand back the bytes
 * as they are), a negative JINST_E* code when they cannot be made. */
int jinst_natives_rewrap(const unsigned char *bytes, jint len, uint8_t **out, size_t *out_len);

#endif
