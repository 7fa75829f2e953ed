/*
 * The hooks' mode bits: what jinst.rt.Hooks records once engaged (its
 * static final COUNTS, TIMES, TREE, EVENTS and CPU; agent/tests/test_hooks_table.c
 * reads them from the compiled class and compares).
 */
#ifndef JINST_AGENT_HOOKS_MODES_H
#define JINST_AGENT_HOOKS_MODES_H

enum { HOOKS_COUNTS = 1, HOOKS_TIMES = 2, HOOKS_TREE = 4, HOOKS_EVENTS = 8, HOOKS_CPU = 16 };

#endif
