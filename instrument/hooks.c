/*
 * The runtime's hooks, one table: the passes read it to emit their calls,
 * and a test compares it with the methods of runtime-java's Hooks class.
 */
#include "jinst/instrument.h"

static const jinst_hook hooks[JINST_HOOK_COUNT] = {
	[JINST_HOOK_ENTER] = {"jinst/rt/Hooks", "enter", "(I)V"},
	[JINST_HOOK_EXIT] = {"jinst/rt/Hooks", "exit", "(I)V"},
	[JINST_HOOK_EXIT_THROW] = {"jinst/rt/Hooks", "exitThrow", "(I)V"},
	[JINST_HOOK_CALLED] = {"jinst/rt/Hooks", "called", "(I)V"},
};

const jinst_hook *jinst_hooks(void)
{
	return hooks;
}
