/*
 * The runtime's hooks, one table: the passes read it to emit their calls,
 * and a test compares it with the methods of runtime-java's bridge and Hooks
 * classes. Their owner is the bridge java.lang.$JinstHooks, which every
 * loader finds (it must delegate java.*), and which calls jinst.rt.Hooks
 * from the bootstrap loader (docs/ARCHITECTURE.md, "How injected code reaches the runtime").
 */
#include "jinst/instrument.h"

static const jinst_hook hooks[JINST_HOOK_COUNT] = {
	[JINST_HOOK_ENTER] = {"java/lang/$JinstHooks", "enter", "(I)V"},
	[JINST_HOOK_EXIT] = {"java/lang/$JinstHooks", "exit", "(I)V"},
	[JINST_HOOK_EXIT_THROW] = {"java/lang/$JinstHooks", "exitThrow", "(I)V"},
	[JINST_HOOK_CALLED] = {"java/lang/$JinstHooks", "called", "(I)V"},
	[JINST_HOOK_PROBES] = {"java/lang/$JinstHooks", "probes", "(II)[Z"},
	[JINST_HOOK_PROBE_COUNTS] = {"java/lang/$JinstHooks", "probeCounts", "(II)[J"},
	[JINST_HOOK_HIT] = {"java/lang/$JinstHooks", "hit", "(III)V"},
	[JINST_HOOK_HIT_COUNT] = {"java/lang/$JinstHooks", "hitCount", "(III)V"},
	[JINST_HOOK_PROBES_FOR] = {"java/lang/$JinstHooks", "probesFor", "(JILjava/lang/String;)[Z"},
	[JINST_HOOK_PROBE_COUNTS_FOR] = {"java/lang/$JinstHooks", "probeCountsFor", "(JILjava/lang/String;)[J"},
	[JINST_HOOK_MONITOR_ENTER] = {"java/lang/$JinstHooks", "monitorEnter", "(Ljava/lang/Object;I)V"},
	[JINST_HOOK_ALLOC_OBJECT] = {"java/lang/$JinstHooks", "allocObject", "(Ljava/lang/Object;I)V"},
	[JINST_HOOK_ALLOC_ARRAY] = {"java/lang/$JinstHooks", "allocArray", "(Ljava/lang/Object;I)V"},
	[JINST_HOOK_ALLOC_ARRAYS] = {"java/lang/$JinstHooks", "allocArrays", "(Ljava/lang/Object;I)V"},
	[JINST_HOOK_ALLOC_ANY] = {"java/lang/$JinstHooks", "allocAny", "(Ljava/lang/Object;I)V"},
	[JINST_HOOK_ALLOC_CLONE] = {"java/lang/$JinstHooks", "allocClone",
	                            "(Ljava/lang/Object;Ljava/lang/Object;Ljava/lang/String;I)V"},
};

const jinst_hook *jinst_hooks(void)
{
	return hooks;
}
