/*
 * The coverage module's options (coverage=, session=) and its pass:
 * the option half of its table (coverage.h, JINST_COVERAGE_MODULE_OPTIONS),
 * which calls no JNI or JVMTI, so that jinst attach validates options with
 * the agent's own parser before it touches a VM. The module's life in the
 * VM is coverage_run.c.
 */
#include <string.h>

#include "coverage.h"

/* ---- options ----------------------------------------------------------- */

static int parse_on(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	(void)v, (void)vn, (void)err, (void)esize;
	((jinst_coverage_config *)c)->counts = false;
	return 0;
}

static int parse_mode(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_coverage_config *k = c;
	if (jinst_option_is(v, vn, "counts"))
		k->counts = true;
	else if (jinst_option_is(v, vn, "booleans"))
		k->counts = false;
	else
		return jinst_option_error(err, esize, "coverage=%.*s: expected booleans or counts", (int)vn, v);
	return 0;
}

static int parse_session(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_coverage_config *k = c;
	if (vn >= sizeof k->session)
		return jinst_option_error(err, esize, "session=: at most %zu bytes", sizeof k->session - 1);
	memcpy(k->session, v, vn);
	k->session[vn] = 0;
	return 0;
}

void jinst_coverage_defaults(void *c)
{
	memset(c, 0, sizeof(jinst_coverage_config));
}

const jinst_agent_option jinst_coverage_options[] = {
	{"coverage", NULL, "code coverage, per probe hit or not: OUT.cov", parse_on},
	{"coverage", "MODE",
	 "code coverage [booleans]\n"
	 "  booleans  whether each probe ran (JaCoCo's data)\n"
	 "  counts    how often each probe ran",
	 parse_mode},
	{"session", "NAME", "coverage: the session's name in OUT.cov [jinst-PID]", parse_session},
	{NULL, NULL, NULL, NULL}};

uint32_t jinst_coverage_passes(const void *c)
{
	return ((const jinst_coverage_config *)c)->counts ? JINST_PASS_COVERAGE_COUNTS : JINST_PASS_COVERAGE;
}

