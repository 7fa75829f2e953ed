/*
 * The monitor pass (label unit), on classes javac wrote: every monitorenter
 * preceded by `dup; push site; invokestatic monitorEnter`, each site id
 * naming the class, method, descriptor and the monitorenter's line; every
 * synchronized method's entry calling the hook with `this` or its class
 * (none for a static one of a class file before 49); monitorexits and
 * exception tables as they were; the same bytes and ids when the class is
 * instrumented again (retransformation); with the trace pass too.
 *   test_monitor_pass DATA_CLASSES TRACE_CLASSES
 */
#include <string.h>

#include "jinst/instrument.h"
#include "jinst/monitor.h"
#include "jinst/opcodes.h"

#include "../testlib.h"

static jinst_arena *arena;

static bool utf8_is(jinst_class *c, uint16_t index, const char *want)
{
	uint16_t len = 0;
	const uint8_t *s = jinst_cp_utf8(c, index, &len);
	return s && len == strlen(want) && !memcmp(s, want, len);
}

static bool calls_hook(jinst_class *c, const jinst_insn *in)
{
	jinst_cp_entry r, nat;
	return in->opcode == JINST_OP_INVOKESTATIC && !jinst_cp_get(c, (uint16_t)in->operand, &r) &&
	       !jinst_cp_get(c, r.u.ref.name_and_type_index, &nat) && utf8_is(c, nat.u.nat.name_index, "monitorEnter") &&
	       utf8_is(c, nat.u.nat.descriptor_index, "(Ljava/lang/Object;I)V");
}

/* The int an iconst/bipush/sipush/ldc pushes, or -1. */
static int64_t pushed(jinst_class *c, const jinst_insn *in)
{
	if (in->opcode >= JINST_OP_ICONST_0 && in->opcode <= JINST_OP_ICONST_5)
		return in->opcode - JINST_OP_ICONST_0;
	if (in->opcode == JINST_OP_BIPUSH || in->opcode == JINST_OP_SIPUSH)
		return in->operand;
	jinst_cp_entry e;
	if ((in->opcode == JINST_OP_LDC || in->opcode == JINST_OP_LDC_W) && !jinst_cp_get(c, (uint16_t)in->operand, &e) &&
	    e.tag == JINST_CP_INTEGER)
		return (int32_t)e.u.u4;
	return -1;
}

static uint32_t line_at(jinst_class *c, jinst_code *code, uint32_t offset)
{
	jinst_attr *a = jinst_attr_find(&code->attrs, JINST_ATTR_LINE_NUMBER_TABLE);
	jinst_line_numbers *ln;
	uint32_t line = 0, pc = 0;
	if (!a || jinst_attr_decode(c, a, (void **)&ln, NULL))
		return 0;
	for (uint16_t i = 0; i < ln->count; i++)
		if (ln->items[i].start_pc <= offset && ln->items[i].start_pc >= pc)
			pc = ln->items[i].start_pc, line = ln->items[i].line_number;
	return line;
}

typedef struct shape {
	uint32_t enters, exits, handlers, hooks, entry_hooks;
	uint32_t lines[64];   /* each monitorenter's line, in order */
} shape;

/* What one method of c holds; the hooks' sites checked against sites. */
static void method_shape(jinst_class *c, jinst_member *m, const jinst_monitor_sites *sites, shape *s)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	jinst_code *code;
	jinst_insn *in = NULL;
	uint32_t n = 0;
	memset(s, 0, sizeof(*s));
	if (!a)
		return;
	CHECK(!jinst_attr_decode(c, a, (void **)&code, NULL) && !jinst_code_decode(c, code, &in, &n, NULL), "decodes");
	s->handlers = code->exception_count;
	for (uint32_t i = 0; i < n; i++) {
		if (in[i].opcode == JINST_OP_MONITOREXIT)
			s->exits++;
		if (in[i].opcode == JINST_OP_MONITORENTER && s->enters < 64)
			s->lines[s->enters++] = line_at(c, code, in[i].offset);
		if (!calls_hook(c, &in[i]))
			continue;
		s->hooks++;
		CHECK(i >= 2, "the hook has its arguments");
		int64_t id = i >= 2 ? pushed(c, &in[i - 1]) : -1;
		jinst_monitor_site_info info;
		CHECK(id >= 0 && sites && !jinst_monitor_sites_info(sites, (uint32_t)id, &info), "site %lld", (long long)id);
		if (id < 0 || !sites || jinst_monitor_sites_info(sites, (uint32_t)id, &info))
			continue;
		CHECK(utf8_is(c, jinst_member_name_index(m), info.method) &&
		          utf8_is(c, jinst_member_descriptor_index(m), info.descriptor),
		      "site %lld names its method: %s%s", (long long)id, info.method, info.descriptor);
		if (i + 1 < n && in[i + 1].opcode == JINST_OP_MONITORENTER) {
			CHECK(in[i - 2].opcode == JINST_OP_DUP && info.kind == JINST_MONITOR_SITE_BLOCK, "dup; push; call; monitorenter");
			CHECK(info.line == line_at(c, code, in[i + 1].offset), "site line %u", info.line);
		} else {
			s->entry_hooks++;
			CHECK(i == 2 && info.kind == JINST_MONITOR_SITE_METHOD &&
			          (in[0].opcode == JINST_OP_ALOAD_0 || in[0].opcode == JINST_OP_LDC_W),
			      "a synchronized method's hook first, on this or its class");
		}
	}
}

/* Each method of c (instrumented) against the same of orig (the other
 * passes alone): the monitorenters, exits, handlers and lines as they
 * were, a hook per monitorenter and per synchronized method that can have
 * one. The monitorenters and synchronized methods seen are added up. */
static void compare_methods(jinst_class *orig, jinst_class *c, const jinst_monitor_sites *sites, const char *rel,
                            uint32_t *blocks, uint32_t *methods)
{
	for (uint16_t k = 0; k < jinst_class_method_count(c); k++) {
		jinst_member *m = jinst_class_method(c, k), *om = jinst_class_method(orig, k);
		shape was, now;
		method_shape(orig, om, NULL, &was);
		method_shape(c, m, sites, &now);
		uint16_t acc = jinst_member_access_flags(om);
		bool sync = (acc & JINST_ACC_SYNCHRONIZED) &&
		            (!(acc & JINST_ACC_STATIC) || jinst_class_major_version(orig) >= 49);
		CHECK(now.enters == was.enters && now.exits == was.exits && now.handlers == was.handlers,
		      "%s method %u: monitors and handlers as they were", rel, k);
		CHECK(!memcmp(now.lines, was.lines, sizeof(was.lines)), "%s method %u: the monitorenters' lines", rel, k);
		CHECK(now.hooks == was.enters + sync && now.entry_hooks == sync, "%s method %u: %u hooks for %u enters%s",
		      rel, k, now.hooks, was.enters, sync ? " and entry" : "");
		*blocks += was.enters;
		*methods += sync;
	}
}

static void check_class(const char *dir, const char *rel, uint32_t passes)
{
	size_t len, out_len, again_len;
	uint8_t *b = test_load(dir, rel, &len), *out = NULL, *again = NULL;
	jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
	o.passes = passes;
	jinst_instrument *ins;
	jinst_monitor_sites *sites;
	jinst_pass p;
	jinst_diag d;
	CHECK(!jinst_instrument_new(&ins, &o, NULL) && !jinst_monitor_pass(&p, &sites) &&
	          !jinst_instrument_add_pass(ins, &p, NULL),
	      "an instrumenter with the monitor pass");
	jinst_arena_reset(arena);
	CHECK(!jinst_instrument_class(ins, arena, b, len, NULL, 0, NULL, &out, &out_len, &d) && out, "%s: %s", rel,
	      d.message);
	uint32_t count = jinst_monitor_sites_count(sites);
	/* What the other passes alone make of the class: the monitor pass
	 * must add its hooks and change nothing else. */
	size_t base_len = len;
	uint8_t *base = NULL;
	jinst_instrument *alone;
	jinst_arena *a2 = NULL;
	CHECK(!jinst_arena_new(&a2), "arena");
	CHECK(!jinst_instrument_new(&alone, &o, NULL), "the other passes alone");
	if (passes)
		CHECK(!jinst_instrument_class(alone, a2, b, len, NULL, 0, NULL, &base, &base_len, &d) && base, "%s", rel);
	jinst_instrument_free(alone);
	jinst_class *orig = NULL, *c = NULL;
	CHECK(!jinst_class_parse(&orig, base ? base : b, base_len, a2, NULL, NULL) && out &&
	          !jinst_class_parse(&c, out, out_len, arena, NULL, NULL),
	      "both parse");
	uint32_t blocks = 0, methods = 0;
	if (c && orig)
		compare_methods(orig, c, sites, rel, &blocks, &methods);
	CHECK(count > 0 && count <= blocks + methods, "%s: %u sites for %u blocks and %u methods", rel, count, blocks,
	      methods);
	/* Again, as a retransformation: the same sites, the same bytes. */
	uint64_t id = jinst_instrument_identity(b, len);
	jinst_class_free(orig);
	orig = NULL;
	jinst_arena_reset(a2);
	CHECK(!jinst_instrument_class(ins, a2, b, len, &id, JINST_INSTRUMENT_RETRANSFORM, NULL, &again, &again_len, &d) &&
	          again && again_len == out_len && !memcmp(again, out, out_len) && jinst_monitor_sites_count(sites) == count,
	      "%s: instrumented again, the same bytes and sites", rel);
	jinst_class_free(orig);
	jinst_class_free(c);
	jinst_arena_free(a2);
	free(base);
	free(again);
	free(out);
	free(b);
	jinst_instrument_free(ins);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_monitor_pass DATA_CLASSES TRACE_CLASSES\n");
		return 2;
	}
	if (jinst_arena_new(&arena))
		return 1;
	for (uint32_t passes = 0; passes <= JINST_PASS_TRACE; passes += JINST_PASS_TRACE) {
		check_class(argv[2], "jinsttrace/Main.class", passes);
		check_class(argv[1], "jsr/Fin.class", passes);
		check_class(argv[1], "main/jinsttest/Features.class", passes);
	}
	jinst_arena_free(arena);
	return check_report();
}
