/*
 * A class's identity and the marker the instrumenter leaves in every class
 * it writes.
 *
 * Identity: XXH64 (seed 0) of the class bytes as first seen. A report joins
 * data to class files by it, so it must be the hash of the bytes a user
 * has, never of bytes a VM reconstituted on retransformation (their
 * constant pool may be ordered differently): the agent hands the identity
 * of the first load back in when it retransforms.
 *
 * The marker is a class attribute the VM ignores (JVMS 4.7.1: unknown
 * attributes are skipped), which the retransformation rules allow:
 *
 *   JinstInstrumented {
 *       u2 attribute_name_index;      "JinstInstrumented"
 *       u4 attribute_length;
 *       u1 format;                    1
 *       u8 identity;                  of the original class, big-endian
 *       u2 pass_count;
 *       u2 pass_name_index[pass_count];   CONSTANT_Utf8, the passes that changed the class
 *   }
 *
 * A class is taken as instrumented when it has the marker, and also when
 * it names a class of hooks: a retransformation may hand the agent bytes
 * the VM rebuilt without unknown attributes, but their constant pool keeps
 * every class reference.
 */
#include <stdio.h>
#include <string.h>

#include "xxhash.h"

#include "internal.h"

static const char marker_name[] = "JinstInstrumented";
enum { MARKER_FORMAT = 1 };

uint64_t jinst_instrument_identity(const uint8_t *bytes, size_t len)
{
	return XXH64(bytes, len, 0);
}

static bool utf8_is(const uint8_t *s, uint16_t len, const char *want)
{
	return s && len == strlen(want) && !memcmp(s, want, len);
}

static bool cp_utf8_is(jinst_class *c, uint16_t index, const char *want)
{
	uint16_t len = 0;
	const uint8_t *s = jinst_cp_utf8(c, index, &len);
	return utf8_is(s, len, want);
}

static jinst_attr *find_marker(jinst_class *c)
{
	jinst_attr_list *l = jinst_class_attrs(c);
	for (uint16_t i = 0; l && i < l->count; i++)
		if (cp_utf8_is(c, l->items[i].name_index, marker_name))
			return &l->items[i];
	return NULL;
}

/* The first class of hooks the pool names, or NULL. Only the hooks'
 * classes: a program may call the runtime's other classes itself
 * (jinst.rt.Control.dump()) and still be a class to instrument. */
static const char *runtime_ref(jinst_class *c, const char *hooks_class)
{
	/* The names and their lengths once a class, not a strlen of each per
	 * class entry of the pool (1% of `jinst instrument --coverage`). */
	const jinst_hook *h = jinst_hooks();
	const char *names[JINST_HOOK_COUNT + 2];
	size_t lens[JINST_HOOK_COUNT + 2];
	int n = 0;
	names[n++] = JINST_RUNTIME_HOOKS;
	if (hooks_class)
		names[n++] = hooks_class;
	for (int k = 0; k < JINST_HOOK_COUNT; k++)
		names[n++] = h[k].owner;
	for (int k = 0; k < n; k++)
		lens[k] = strlen(names[k]);
	uint16_t count = jinst_cp_count(c);
	for (uint16_t i = 1; i < count; i++) {
		uint16_t l;
		const uint8_t *cn;
		if (jinst_cp_tag(c, i) != JINST_CP_CLASS || !(cn = jinst_cp_name(c, i, &l)))
			continue;
		for (int k = 0; k < n; k++)
			if (l == lens[k] && memcmp(cn, names[k], l) == 0)
				return names[k];
	}
	return NULL;
}

bool jinst_marker_found(jinst_class *c, const char *hooks_class, const char **why)
{
	static _Thread_local char buf[160];
	const char *ref;
	if (find_marker(c)) {
		*why = "it has the JinstInstrumented attribute";
		return true;
	}
	if ((ref = runtime_ref(c, hooks_class))) {
		snprintf(buf, sizeof(buf), "it refers to %s", ref);
		*why = buf;
		return true;
	}
	return false;
}

static void put_u2(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int jinst_marker_add(jinst_pass_class *cls, jinst_diag *diag)
{
	jinst_class *c = cls->c;
	jinst_attr_list *l = jinst_class_attrs(c);
	jinst_arena *A = jinst_class_arena(c);
	uint16_t n = 0, name_index, pass_index[32];
	int rc = l ? jinst_cp_add_utf8(c, marker_name, sizeof(marker_name) - 1, &name_index) : JINST_ENOMEM;
	for (uint32_t p = 0; !rc && p < cls->ins->pass_count; p++)
		if (cls->changed_by & (1u << p)) {
			const char *pn = cls->ins->passes[p].name;
			rc = jinst_cp_add_utf8(c, pn, strlen(pn), &pass_index[n++]);
		}
	if (rc)
		return jinst_ins_fail(diag, rc, "cannot add the JinstInstrumented attribute");
	uint32_t len = 1 + 8 + 2 + 2u * n;
	uint8_t *info = jinst_arena_alloc(A, len);
	jinst_attr *items = jinst_arena_alloc(A, ((size_t)l->count + 1) * sizeof(*items));
	if (!info || !items || l->count == UINT16_MAX)
		return jinst_ins_fail(diag, info && items ? JINST_ETOOLARGE : JINST_ENOMEM,
		                      "cannot add the JinstInstrumented attribute");
	info[0] = MARKER_FORMAT;
	for (int i = 0; i < 8; i++)
		info[1 + i] = (uint8_t)(cls->identity >> (56 - 8 * i));
	put_u2(info + 9, n);
	for (uint16_t i = 0; i < n; i++)
		put_u2(info + 11 + 2 * i, pass_index[i]);
	if (l->count)
		memcpy(items, l->items, (size_t)l->count * sizeof(*items));
	memset(&items[l->count], 0, sizeof(*items));
	items[l->count].name_index = name_index;
	items[l->count].kind = JINST_ATTR_UNKNOWN;
	items[l->count].length = len;
	items[l->count].info = info;
	items[l->count].modified = true;
	l->items = items;
	l->count++;
	return 0;
}

/* Reads the marker's info into out; false when it is not of a known format. */
static bool read_info(jinst_class *c, const jinst_attr *a, jinst_marker *out)
{
	const uint8_t *p = a->info;
	if (!p || a->length < 11 || p[0] != MARKER_FORMAT)
		return false;
	uint16_t n = (uint16_t)(p[9] << 8 | p[10]);
	if (a->length != 11 + 2u * n)
		return false;
	out->identity = 0;
	for (int i = 0; i < 8; i++)
		out->identity = out->identity << 8 | p[1 + i];
	size_t used = 0;
	for (uint16_t i = 0; i < n; i++) {
		uint16_t len;
		const uint8_t *s = jinst_cp_utf8(c, (uint16_t)(p[11 + 2 * i] << 8 | p[12 + 2 * i]), &len);
		if (!s || used + len + 2 > sizeof(out->passes))
			return false;
		if (used)
			out->passes[used++] = ',';
		memcpy(out->passes + used, s, len);
		used += len;
		out->passes[used] = '\0';
	}
	return true;
}

int jinst_instrument_read_marker(jinst_arena *arena, const uint8_t *bytes, size_t len, jinst_marker *out,
                                 jinst_diag *diag)
{
	memset(out, 0, sizeof(*out));
	jinst_class *c;
	int rc = jinst_class_parse(&c, bytes, len, arena, NULL, diag);
	if (rc)
		return rc;
	jinst_attr *a = find_marker(c);
	out->runtime_refs = runtime_ref(c, NULL) != NULL;
	if (a && !read_info(c, a, out)) {
		jinst_class_free(c);
		return jinst_ins_fail(diag, JINST_EMALFORMED, "JinstInstrumented: not of format %d", MARKER_FORMAT);
	}
	out->present = a != NULL;
	jinst_class_free(c);
	return 0;
}
