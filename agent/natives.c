/*
 * The natives module's options (natives, natives=plain|all): the option half
 * of its table (natives.h, JINST_NATIVES_MODULE_OPTIONS), no JNI or JVMTI
 * calls, for jinst attach's parser. Its life in the VM is natives_run.c.
 */
#include <string.h>

#include "natives.h"

static int parse_on(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	(void)v, (void)vn, (void)err, (void)esize;
	((jinst_natives_config *)c)->intrinsics = false;
	return 0;
}

static int parse_mode(void *c, const char *v, size_t vn, char *err, size_t esize)
{
	jinst_natives_config *k = c;
	if (jinst_option_is(v, vn, "all"))
		k->intrinsics = true;
	else if (jinst_option_is(v, vn, "plain"))
		k->intrinsics = false;
	else
		return jinst_option_error(err, esize, "natives=%.*s: expected plain or all", (int)vn, v);
	return 0;
}

void jinst_natives_defaults(void *c)
{
	memset(c, 0, sizeof(jinst_natives_config));
}

const jinst_agent_option jinst_natives_option_rows[] = {
	{"natives", NULL,
	 "wrap the native methods of classes loaded from now on, so that\n"
	 "trace= counts and times them (trace=counts,natives) and monitor\n"
	 "sees synchronized ones; alone it records nothing, and is refused",
	 parse_on},
	{"natives", "MODE",
	 "which natives [plain]\n"
	 "  plain  all but @IntrinsicCandidate ones\n"
	 "  all    those too, which then lose their intrinsic and run as\n"
	 "         plain JNI calls (CRC32, say: much slower)",
	 parse_mode},
	{NULL, NULL, NULL, NULL}};
