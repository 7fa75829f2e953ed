/*
 * The runtime's hooks, one table: the passes read it to emit their calls,
 * and a test compares it with the methods of runtime-java's Hooks class.
 */
#include "jinst/instrument.h"

static const jinst_hook hooks[JINST_HOOK_COUNT] = {{"jinst/rt/Hooks","enter","(I)V"},{"jinst/rt/Hooks","exit","(I)V"},{"jinst/rt/Hooks","exitThrow","(I)V"},{"jinst/rt/Hooks","called","(I)V"}};

const jinst_hook *jinst_hooks(void)
{
	return hooks;
}
