/*
 * The coverage pass (label unit), on real classes: for every class of the
 * arguments, the plan of the placement over the original bytes against
 * what the pass wrote.
 *  - the class has an id whose info holds its identity, name and the
 *    plan's probe count; the same id when instrumented again as a
 *    retransformation with the same identity, a new one for other bytes;
 *  - each method with sites begins with push id, push count, invokestatic
 *    probes (or probeCounts), astore; instrumented ahead of time (the
 *    runtime's hooks class), with ldc2_w identity, push count, ldc name,
 *    invokestatic jinst/rt/Hooks.probesFor (or probeCountsFor), astore,
 *    the identity the class's (or the one the caller gave), the name its
 *    own; each probe id of the plan is stored
 *    exactly once in the code (aload, push id, iconst_1, bastore; under
 *    counts the dup2 ... lastore sequence) where control can reach it,
 *    none that is not in the plan; but a method of one probe (one site,
 *    before an instruction or on a fall-through) has no entry sequence and
 *    sets it with one call, push id, push count, push probe, invokestatic
 *    hit (or hitCount), where control can reach it (by identity it has
 *    the entry sequence as the others);
 *  - with a flat range (the agent's java.lang.$JinstProbes.P) as far as
 *    it goes: getstatic P; push range + id; iconst_1; bastore for each
 *    probe, after getstatic P; astore L (then aload L) in a method of more
 *    than three; the Fieldref only in the classes that have a range, and
 *    the range used up;
 *  - a class of no probes is not changed by the pass; a method left alone
 *    (huge(I)I of the trace test program, too large afterwards) is
 *    exactly as it was.
 *   test_coverage_pass DIR...   (class files directly in each DIR or below)
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/coverage.h"
#include "jinst/instrument.h"
#include "jinst/opcodes.h"

#include "../testlib.h"

static jinst_arena *arena;
static unsigned classes_checked, probes_checked, left_alone, one_probe_methods, array_methods, flat_classes;

/* The int an iconst/bipush/sipush/ldc at code[i] pushes; its length, 0 if none. */
static uint32_t push_at(jinst_class *c, const uint8_t *code, uint32_t len, uint32_t i, int64_t *v)
{
	uint8_t op = code[i];
	if (op >= JINST_OP_ICONST_0 && op <= JINST_OP_ICONST_5)
		return *v = op - JINST_OP_ICONST_0, 1;
	if (op == JINST_OP_BIPUSH && i + 1 < len)
		return *v = (int8_t)code[i + 1], 2;
	if (op == JINST_OP_SIPUSH && i + 2 < len)
		return *v = (int16_t)(code[i + 1] << 8 | code[i + 2]), 3;
	jinst_cp_entry e;
	uint16_t k = op == JINST_OP_LDC ? code[i + 1] : op == JINST_OP_LDC_W ? (uint16_t)(code[i + 1] << 8 | code[i + 2]) : 0;
	if (k && !jinst_cp_get(c, k, &e) && e.tag == JINST_CP_INTEGER)
		return *v = (int32_t)e.u.u4, op == JINST_OP_LDC ? 2 : 3;
	return 0;
}

static uint32_t index_of(const jinst_insn *in, uint32_t count, int32_t offset)
{
	uint32_t lo = 0, hi = count;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (in[mid].offset < (uint32_t)offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool mark(bool *live, uint32_t i, uint32_t count)
{
	if (i >= count || live[i])
		return false;
	return live[i] = true;
}

/* Which instructions control can reach from the entry: through fall-
 * throughs, jumps, switches and handlers, to a fixed point. A probe the
 * code cannot reach is a probe lost (an inverted jump that skips the
 * fall-through probe after it, say). */
static bool *reachable(const jinst_code *code, const jinst_insn *in, uint32_t count)
{
	bool *live = calloc(count + 1, sizeof(*live)), changed = true;
	live[0] = count > 0;
	while (live && changed) {
		changed = false;
		for (uint32_t k = 0; k < count; k++) {
			if (!live[k])
				continue;
			uint32_t f = jinst_opcodes[in[k].opcode].flags;
			if (!(f & JINST_OPF_UNCONDITIONAL))
				changed |= mark(live, k + 1, count);
			if (f & JINST_OPF_BRANCH)
				changed |= mark(live, index_of(in, count, in[k].operand), count);
			for (uint32_t t = 0; in[k].sw && t <= in[k].sw->count; t++)
				changed |= mark(live, index_of(in, count, t < in[k].sw->count ? in[k].sw->targets[t]
				                                                              : in[k].sw->default_target),
				                count);
			for (uint16_t e = 0; e < code->exception_count; e++)
				if (in[k].offset >= code->exceptions[e].start_pc && in[k].offset < code->exceptions[e].end_pc)
					changed |= mark(live, index_of(in, count, code->exceptions[e].handler_pc), count);
		}
	}
	return live;
}

/* The decoded instrumented code and which instructions control reaches;
 * NULL (a failed check) when it does not decode. */
static bool *decode_live(jinst_class *c, const jinst_code *code, jinst_insn **in, uint32_t *count)
{
	if (jinst_code_decode(c, code, in, count, NULL)) {
		CHECK(false, "instrumented code does not decode");
		return NULL;
	}
	bool *live = reachable(code, *in, *count);
	CHECK(live != NULL, "out of memory");
	return live;
}

/* Probe v found at offset, reached (or in code the original cannot reach). */
static void note_probe(int64_t v, bool reached, uint32_t offset, uint32_t *seen, uint32_t n, const bool *dead,
                       uint32_t *stray)
{
	bool dead_before = v >= 0 && v < n && dead[v];
	CHECK(reached || dead_before, "probe %lld at offset %u cannot be reached", (long long)v, offset);
	if (v >= 0 && v < n)
		seen[v]++;
	else
		(*stray)++;
}

/* Counts, per probe id, the stores of the probe sequence in one method's
 * code that control can reach; the array is the local the entry stored it
 * into, or (field, not 0) the flat array's getstatic, whose indices start
 * at base. */
static void count_probes(jinst_class *c, const jinst_code *code, int local, uint16_t field, uint32_t base,
                         uint32_t *seen, uint32_t n, bool counts, const bool *dead, uint32_t *stray)
{
	jinst_insn *in;
	uint32_t count;
	bool *live = decode_live(c, code, &in, &count);
	if (!live)
		return;
	for (uint32_t k = 0; k + 3 < count; k++) {
		/* aload L or aload_<L>: original code never uses L (a new local) */
		bool load = local >= 0 ? (in[k].opcode == JINST_OP_ALOAD && in[k].operand == local) ||
		                                 (local <= 3 && in[k].opcode == 0x2a + local)
		                       : in[k].opcode == JINST_OP_GETSTATIC && in[k].operand == field;
		int64_t v;
		if (!load || !push_at(c, code->code, code->code_length, in[k + 1].offset, &v))
			continue;
		v -= base;
		bool is_probe = counts ? (k + 6 < count && in[k + 2].opcode == JINST_OP_DUP2 &&
		                          in[k + 3].opcode == JINST_OP_LALOAD && in[k + 6].opcode == JINST_OP_LASTORE)
		                       : (in[k + 2].opcode == JINST_OP_ICONST_1 && in[k + 3].opcode == JINST_OP_BASTORE);
		if (!is_probe)
			continue;
		note_probe(v, live[k], in[k].offset, seen, n, dead, stray);
	}
	free(live);
}

/* Counts, per probe id, the one-probe calls (push class id, push count,
 * push probe, invokestatic) in one method's code that control can reach. */
static void count_hits(jinst_class *c, const jinst_code *code, uint32_t id, uint32_t *seen, uint32_t n,
                       const bool *dead, uint32_t *stray, uint32_t *entries)
{
	jinst_insn *in;
	uint32_t count;
	bool *live = decode_live(c, code, &in, &count);
	if (!live)
		return;
	for (uint32_t k = 0; k + 3 < count; k++) {
		int64_t a, b, v;
		if (!push_at(c, code->code, code->code_length, in[k].offset, &a) || a != id ||
		    !push_at(c, code->code, code->code_length, in[k + 1].offset, &b) || b != n)
			continue;
		if (in[k + 2].opcode == JINST_OP_INVOKESTATIC) {
			(*entries)++; /* the array form's entry: not in a method of one probe */
			continue;
		}
		if (!push_at(c, code->code, code->code_length, in[k + 2].offset, &v) ||
		    in[k + 3].opcode != JINST_OP_INVOKESTATIC)
			continue;
		note_probe(v, live[k], in[k].offset, seen, n, dead, stray);
	}
	free(live);
}

/* A method of one probe: the instrumenter's rule (instrument/coverage.c). */
static bool one_probe(const jinst_coverage_method *pm)
{
	return pm->site_count == 1 &&
	       (pm->sites[0].kind == JINST_PROBE_BEFORE || pm->sites[0].kind == JINST_PROBE_FALLTHROUGH);
}

static jinst_code *code_of(jinst_class *c, jinst_member *m)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	jinst_code *code;
	return a && !jinst_attr_decode(c, a, (void **)&code, NULL) ? code : NULL;
}

/* dead[id]: the probe's site is code the original cannot reach (JaCoCo
 * places probes in dead code too): the edge into a fall-through site, the
 * instruction of the others. */
static void mark_dead(jinst_class *o, const jinst_code *was, const jinst_coverage_method *pm, bool *dead)
{
	jinst_insn *in;
	uint32_t count;
	if (jinst_code_decode(o, was, &in, &count, NULL))
		return;
	bool *live = reachable(was, in, count);
	for (uint32_t i = 0; live && i < pm->site_count; i++) {
		uint32_t k = index_of(in, count, (int32_t)pm->sites[i].offset);
		if (pm->sites[i].kind == JINST_PROBE_FALLTHROUGH)
			dead[pm->sites[i].id] = k == 0 || !live[k - 1];
		else
			dead[pm->sites[i].id] = k >= count || !live[k];
	}
	free(live);
}

/* What the entry sequence must ask with: the class id, or (offline) the
 * identity and the class's name. */
typedef struct expect {
	uint32_t id;
	uint64_t identity;
	bool offline, counts;
	const char *owner;  /* the hooks' class */
	uint32_t flat;      /* the class's range of the flat array, or JINST_NO_FLAT */
} expect;

/* The Fieldref of the flat array (java/lang/$JinstProbes.P:[Z), 0 if none. */
static uint16_t flat_field(jinst_class *c)
{
	for (uint16_t i = 1; i < jinst_cp_count(c); i++) {
		jinst_cp_entry ref, nat;
		uint16_t l1, l2, l3;
		if (jinst_cp_get(c, i, &ref) || ref.tag != JINST_CP_FIELDREF || jinst_cp_get(c, ref.u.ref.name_and_type_index, &nat))
			continue;
		const uint8_t *owner = jinst_cp_name(c, ref.u.ref.class_index, &l1);
		const uint8_t *name = jinst_cp_utf8(c, nat.u.nat.name_index, &l2);
		const uint8_t *desc = jinst_cp_utf8(c, nat.u.nat.descriptor_index, &l3);
		if (owner && l1 == 22 && !memcmp(owner, "java/lang/$JinstProbes", 22) && name && l2 == 1 && name[0] == 'P' &&
		    desc && l3 == 2 && !memcmp(desc, "[Z", 2))
			return i;
	}
	return 0;
}

/* A method of a class with a flat range: its probes, with the entry
 * getstatic P; astore L past three of them (instrument/coverage.c). */
static void check_flat_method(jinst_class *c, const jinst_code *code, const jinst_coverage_method *pm, uint16_t field,
                              const expect *x, uint32_t *seen, uint32_t n, const bool *dead, uint32_t *stray)
{
	int local = -1;
	if (pm->site_count > 3) {
		const uint8_t *b = code->code;
		bool entry = code->code_length > 4 && b[0] == JINST_OP_GETSTATIC && (uint16_t)(b[1] << 8 | b[2]) == field;
		local = !entry ? -1 : b[3] == JINST_OP_ASTORE ? b[4] : b[3] >= 0x4b && b[3] <= 0x4e ? b[3] - 0x4b : -1;
		CHECK(local >= 0, "method %u of %u probes: no entry getstatic P; astore", pm->method_index, pm->site_count);
	}
	count_probes(c, code, local, field, x->flat, seen, n, false, dead, stray);
}

/* Whether the Methodref at index is the identity hook on owner. */
static bool identity_hook(jinst_class *c, uint16_t index, bool counts, const char *hooks)
{
	jinst_cp_entry ref, nat;
	if (jinst_cp_get(c, index, &ref) || ref.tag != JINST_CP_METHODREF || jinst_cp_get(c, ref.u.ref.name_and_type_index, &nat))
		return false;
	const jinst_hook *h = &jinst_hooks()[counts ? JINST_HOOK_PROBE_COUNTS_FOR : JINST_HOOK_PROBES_FOR];
	uint16_t l1, l2, l3;
	const uint8_t *owner = jinst_cp_name(c, ref.u.ref.class_index, &l1);
	const uint8_t *name = jinst_cp_utf8(c, nat.u.nat.name_index, &l2);
	const uint8_t *desc = jinst_cp_utf8(c, nat.u.nat.descriptor_index, &l3);
	return owner && name && desc && l1 == strlen(hooks) && !memcmp(owner, hooks, l1) &&
	       l2 == strlen(h->name) && !memcmp(name, h->name, l2) && l3 == strlen(h->descriptor) &&
	       !memcmp(desc, h->descriptor, l3);
}

/* ldc2_w identity; push n; ldc (or ldc_w) the class's name; invokestatic
 * the identity hook: its length, 0 when the code does not begin so. */
static uint32_t identity_entry(jinst_class *c, const jinst_code *code, const expect *x, uint32_t n)
{
	const uint8_t *b = code->code;
	uint32_t len = code->code_length;
	jinst_cp_entry e;
	int64_t v;
	if (len < 12 || b[0] != JINST_OP_LDC2_W || jinst_cp_get(c, (uint16_t)(b[1] << 8 | b[2]), &e) ||
	    e.tag != JINST_CP_LONG || e.u.u8 != x->identity)
		return 0;
	uint32_t i = 3 + push_at(c, b, len, 3, &v);
	if (i == 3 || v != n || i + 6 > len || (b[i] != JINST_OP_LDC && b[i] != JINST_OP_LDC_W))
		return 0;
	uint16_t k = b[i] == JINST_OP_LDC ? b[i + 1] : (uint16_t)(b[i + 1] << 8 | b[i + 2]);
	i += b[i] == JINST_OP_LDC ? 2 : 3;
	uint16_t nl, tl;
	const uint8_t *want = jinst_cp_name(c, jinst_class_this_class(c), &nl);
	const uint8_t *got = !jinst_cp_get(c, k, &e) && e.tag == JINST_CP_STRING ? jinst_cp_utf8(c, e.u.index, &tl) : NULL;
	if (!got || !want || tl != nl || memcmp(got, want, nl) || b[i] != JINST_OP_INVOKESTATIC ||
	    !identity_hook(c, (uint16_t)(b[i + 1] << 8 | b[i + 2]), x->counts, x->owner))
		return 0;
	return i + 3;
}

/* The local of the entry sequence (push id, push n, invokestatic, astore
 * L; offline identity_entry's, astore L) at the start of code, -1 without one. */
static int entry_local(jinst_class *c, const jinst_code *code, const expect *x, uint32_t n)
{
	int64_t a, b;
	uint32_t at;
	if (x->offline) {
		if (!(at = identity_entry(c, code, x, n)))
			return -1;
	} else {
		uint32_t i = push_at(c, code->code, code->code_length, 0, &a);
		uint32_t j = i ? push_at(c, code->code, code->code_length, i, &b) : 0;
		if (!j || a != x->id || b != n || code->code[i + j] != JINST_OP_INVOKESTATIC)
			return -1;
		at = i + j + 3;
	}
	uint8_t st = code->code[at];
	return st == JINST_OP_ASTORE ? code->code[at + 1] : st >= 0x4b && st <= 0x4e ? st - 0x4b : -1;
}

static void check_output(const uint8_t *orig, size_t len, const uint8_t *out, size_t out_len, const expect *x)
{
	bool counts = x->counts;
	jinst_class *o, *c;
	if (jinst_class_parse(&o, orig, len, NULL, NULL, NULL) || jinst_class_parse(&c, out, out_len, NULL, NULL, NULL)) {
		CHECK(false, "parse");
		return;
	}
	jinst_coverage_plan *plan;
	CHECK(jinst_coverage_place(&plan, o, NULL) == 0, "placement of the original");
	uint32_t n = plan->probe_count;
	uint32_t *seen = calloc(n + 1, sizeof(*seen)), stray = 0;
	bool *dead = calloc(n + 1, sizeof(*dead));
	uint16_t field = flat_field(c);
	CHECK((x->flat != JINST_NO_FLAT) == (field != 0), "the flat array's Fieldref %s", field ? "without a range" : "missing");
	flat_classes += field != 0;
	for (uint16_t k = 0; k < plan->method_count; k++) {
		const jinst_coverage_method *pm = &plan->methods[k];
		const jinst_code *code = code_of(c, jinst_class_method(c, pm->method_index));
		const jinst_code *was = code_of(o, jinst_class_method(o, pm->method_index));
		if (!pm->site_count || !code || !was)
			continue;
		/* Left alone (too large afterwards, say): exactly as it was. */
		if (code->code_length == was->code_length && !memcmp(code->code, was->code, was->code_length)) {
			for (uint32_t k2 = 0; k2 < pm->site_count; k2++)
				seen[pm->sites[k2].id]++;
			left_alone++;
			continue;
		}
		mark_dead(o, was, pm, dead);
		if (field) {
			check_flat_method(c, code, pm, field, x, seen, n, dead, &stray);
			array_methods++;
			continue;
		}
		if (!x->offline && one_probe(pm)) {
			uint32_t entries = 0;
			count_hits(c, code, x->id, seen, n, dead, &stray, &entries);
			CHECK(entries == 0, "method %u of one probe asks for the array", pm->method_index);
			one_probe_methods++;
			continue;
		}
		int local = entry_local(c, code, x, n);
		CHECK(local >= 0, "method %u: no entry sequence (class id %u, identity %016llx, %u probes)", pm->method_index,
		      x->id, (unsigned long long)x->identity, n);
		count_probes(c, code, local, 0, 0, seen, n, counts, dead, &stray);
		array_methods++;
	}
	for (uint32_t p = 0; p < n; p++)
		CHECK(seen[p] == 1, "probe %u stored %u times", p, seen[p]);
	CHECK(stray == 0, "%u stores of ids outside the plan", stray);
	probes_checked += n;
	classes_checked++;
	free(seen);
	free(dead);
	jinst_class_free(o);
	jinst_class_free(c);
}

static void one_class(jinst_instrument *ins, const uint8_t *bytes, size_t len, bool counts, const char *offline)
{
	uint8_t *out = NULL;
	size_t out_len = 0;
	jinst_diag d;
	uint32_t before = jinst_instrument_probe_class_count(ins);
	int rc = jinst_instrument_class(ins, arena, bytes, len, NULL, 0, NULL, &out, &out_len, &d);
	jinst_arena_reset(arena);
	CHECK(rc == 0, "instrument: %d %s", rc, d.message);
	uint32_t after = jinst_instrument_probe_class_count(ins);
	if (!out) {
		CHECK(after == before, "a class left unchanged got an id");
		return;
	}
	CHECK(after == before + 1, "one new class id (%u -> %u)", before, after);
	jinst_probe_class_info info;
	CHECK(jinst_instrument_probe_class_info(ins, before, &info) == 0, "info of id %u", before);
	CHECK(info.identity == jinst_instrument_identity(bytes, len), "identity");
	expect x = {before, info.identity, offline != NULL, counts, offline, info.flat};
	check_output(bytes, len, out, out_len, &x);
	/* Again, as a retransformation of the same class: the same id. */
	uint8_t *again = NULL;
	size_t again_len;
	uint64_t identity = info.identity;
	rc = jinst_instrument_class(ins, arena, bytes, len, &identity, JINST_INSTRUMENT_RETRANSFORM, NULL, &again,
	                            &again_len, &d);
	jinst_arena_reset(arena);
	CHECK(rc == 0 && again && again_len == out_len && !memcmp(again, out, out_len),
	      "retransformed: the same bytes (%d)", rc);
	CHECK(jinst_instrument_probe_class_count(ins) == after, "retransformed: no new id");
	/* Another identity (other bytes, the same name): another id. */
	uint64_t other = identity + 1;
	free(again);
	again = NULL;
	rc = jinst_instrument_class(ins, arena, bytes, len, &other, 0, NULL, &again, &again_len, &d);
	jinst_arena_reset(arena);
	CHECK(rc == 0 && again && jinst_instrument_probe_class_count(ins) == after + 1, "other identity: a new id");
	jinst_probe_class_info oi = {0, NULL, 0, JINST_NO_FLAT};
	CHECK(jinst_instrument_probe_class_info(ins, after, &oi) == 0, "info of id %u", after);
	CHECK(oi.flat == JINST_NO_FLAT || info.flat == JINST_NO_FLAT || oi.flat >= info.flat + info.probe_count,
	      "other identity: a range of its own");
	expect y = {after, other, offline != NULL, counts, offline, oi.flat};
	if (again)
		check_output(bytes, len, again, again_len, &y);
	free(again);
	free(out);
}

/* offline: the identity hooks' class, or NULL for the class ids' form */
static void walk(jinst_instrument *ins, const char *dir, bool counts, const char *offline)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		size_t n = strlen(e->d_name), len;
		if (n > 6 && !strcmp(e->d_name + n - 6, ".class")) {
			uint8_t *b = test_read_file(path, &len);
			if (b)
				one_class(ins, b, len, counts, offline);
			free(b);
		} else {
			walk(ins, path, counts, offline);
		}
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		printf("usage: test_coverage_pass DIR...\n");
		return 2;
	}
	jinst_arena_new(&arena);
	/* booleans, counts; then both by identity: ahead of time (the
	 * runtime's hooks class), and by the pass's option; then booleans with
	 * a flat range, too small for all (the rest by class id), past
	 * sipush's reach (ldc of an Integer) */
	for (int mode = 0; mode < 7; mode++) {
		jinst_instrument_options o = JINST_INSTRUMENT_OPTIONS_INIT;
		o.passes = mode & 1 && mode < 6 ? JINST_PASS_COVERAGE_COUNTS : JINST_PASS_COVERAGE;
		if (mode / 2 == 1)
			o.hooks_class = JINST_RUNTIME_HOOKS;
		if (mode / 2 == 2)
			o.passes |= JINST_PASS_COVERAGE_IDENTITY;
		jinst_instrument *ins;
		CHECK(jinst_instrument_new(&ins, &o, NULL) == 0, "new");
		/* Counts by class id start their ids at 5000, as an agent's second
		 * session would: every id below is checked against the code. */
		uint32_t start = mode == 1 ? 5000 : 0;
		CHECK(jinst_instrument_probe_class_start(ins, start) == 0 &&
		      jinst_instrument_probe_class_count(ins) == start, "ids from %u", start);
		enum { FLAT_AT = 32600, FLAT_ROOM = 500 };
		unsigned flat_before = flat_classes;
		if (mode == 6)
			CHECK(jinst_instrument_probe_flat_range(ins, FLAT_AT, FLAT_AT + FLAT_ROOM) == 0, "flat range");
		for (int i = 1; i < argc; i++)
			walk(ins, argv[i], mode & 1 && mode < 6,
			     mode < 2 || mode == 6 ? NULL
			     : mode < 4       ? JINST_RUNTIME_HOOKS
			                      : jinst_hooks()[JINST_HOOK_PROBES_FOR].owner);
		uint32_t used = jinst_instrument_probe_flat_next(ins) - FLAT_AT;
		CHECK(mode == 6 ? flat_classes > flat_before + 5 && used > FLAT_ROOM - 50 && used <= FLAT_ROOM
		                : flat_classes == flat_before,
		      "mode %d: %u classes flat, %u of the range used", mode, flat_classes - flat_before, used);
		jinst_probe_class_info info;
		CHECK(jinst_instrument_probe_class_start(ins, 0) == JINST_EINVAL || jinst_instrument_probe_class_count(ins) == 0,
		      "a start after the first class refused");
		CHECK(!start || jinst_instrument_probe_class_info(ins, start - 1, &info) == JINST_EINVAL,
		      "no class before the start");
		jinst_instrument_free(ins);
	}
	printf("classes %u (flat %u), probes %u checked, methods of one probe %u, with the array %u, left alone %u\n",
	       classes_checked, flat_classes, probes_checked, one_probe_methods, array_methods, left_alone);
	CHECK(classes_checked > 10 && probes_checked > 100 && one_probe_methods > 10 && array_methods > 10,
	      "too little checked");
	jinst_arena_free(arena);
	return check_report();
}
