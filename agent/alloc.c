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
	jinst_alloc_config *k = c;
	k->check = k->live = false;
	k->named = true;
	return 0;
}

static int parse_mode(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_alloc_config *k = c;
	k->check = k->live = false;
	k->named = true;
	for (size_t i = 0; i <= vn;) {
		size_t j = i;
		while (j < vn && v[j] != '+')
			j++;
		if (jinst_option_is(v + i, j - i, "check"))
			k->check = true;
		else if (jinst_option_is(v + i, j - i, "live"))
			k->live = true;
		else if (!jinst_option_is(v + i, j - i, "sites"))
			return jinst_option_error(err, esize, "alloc=%.*s: expected sites, live or check ('+' between)",
			                          (int)vn, v);
		i = j + 1;
	}
	return 0;
}

static int parse_depth(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	long n = jinst_option_number(v, vn, 64);
	if (n < 1)
		return jinst_option_error(err, esize, "depth=%.*s: expected 1 to 64 frames", (int)vn, v);
	((jinst_alloc_config *)c)->depth = (int)n;
	return 0;
}

int jinst_alloc_check(void *c, char *err, size_t esize)
{
	const jinst_alloc_config *k = c;
	/* depth= alone would turn the module on, as any of its options does:
	 * HPROF's users mean the depth of its stack traces, and would get
	 * allocation sites instead of what they asked for. */
	if (k->depth && !k->named)
		return jinst_option_error(err, esize,
		                          "depth=%d goes with alloc (alloc,depth=%d: each allocation site split by the top "
		                          "%d frames of trace=times' stack); HPROF's depth= is the stack depth of its "
		                          "traces, which trace=times keeps whole",
		                          k->depth, k->depth, k->depth);
	if (k->live && k->depth)
		return jinst_option_error(err, esize, "alloc=live and depth= do not go together (live objects are per site)");
	return 0;
}

void jinst_alloc_defaults(void *c)
{
	memset(c, 0, sizeof(jinst_alloc_config));
}

const jinst_agent_option jinst_alloc_options[] = {
	{"alloc", NULL, "allocation sites: OUT.alloc.txt, OUT.alloc.tsv, OUT.alloc.folded", parse_on},
	{"alloc", "MODES",
	 "allocation sites, '+' between modes [sites]\n"
	 "  sites  objects and bytes per site (class, method, line, type)\n"
	 "  live   also the objects and bytes still live at each write: every\n"
	 "         object tagged, a full collection, then the tagged objects\n"
	 "         counted (slow)\n"
	 "  check  every object's bytes also asked of GetObjectSize and\n"
	 "         compared (slow: for tests)",
	 parse_mode},
	{"depth", "N",
	 "with alloc: each site split by the top N frames (1 to 64) of the\n"
	 "  call stack as trace=times keeps it (its timed methods); without\n"
	 "  trace=times, sites only; without alloc, refused",
	 parse_depth},
	{NULL, NULL, NULL, NULL}};
