/*
 * The hooks the passes call: one table, read by the passes (which emit
 * invokestatic owner.name:descriptor) and by the test that checks
 * runtime-java's compiled jinst/rt/Hooks against it, so the two never drift.
 */
#include "jinst/instrument.h"

static const jinst_hook hooks[JINST_HOOK_COUNT] = {{"jinst/rt/Hooks","enter","(I)V"},{"jinst/rt/Hooks","exit","(I)V"},{"jinst/rt/Hooks","exitThrow","(I)V"}};

const jinst_hook *jinst_hooks(void)
{
	return hooks;
}
