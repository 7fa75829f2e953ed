/*
 * The allocation module's options (alloc, alloc=MODE): the option half of
 * its table (alloc.h, JINST_ALLOC_MODULE_OPTIONS), which calls no JNI or
 * JVMTI, so that jinst attach validates options with the agent's own
 * parser. The module's life in the VM is alloc_run.c.
 */
#include <string.h>

#include "alloc.h"

static int parse_on(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	(void)v, (void)vn, (void)err, (void)esize;
	((jinst_alloc_config *)c)->check = false;
	return 0;
}

static int parse_mode(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_alloc_config *k = c;
	if (jinst_option_is(v, vn, "sites"))
		k->check = false;
	else if (jinst_option_is(v, vn, "check"))
		k->check = true;
	else
		return jinst_option_error(err, esize, "alloc=%.*s: expected sites or check", (int)vn, v);
	return 0;
}

void jinst_alloc_defaults(void *c)
{
	memset(c, 0, sizeof(jinst_alloc_config));
}

const jinst_agent_option jinst_alloc_options[] = {
	{"alloc", NULL, "allocation sites: OUT.alloc.txt, OUT.alloc.tsv, OUT.alloc.folded", parse_on},
	{"alloc", "MODE",
	 "allocation sites [sites]\n"
	 "  sites  objects and bytes per site (class, method, line, type)\n"
	 "  check  the same, every object's bytes also asked of GetObjectSize\n"
	 "         and compared (slow: for tests)",
	 parse_mode},
	{NULL, NULL, NULL, NULL}};
