/*
 * The retransformation rules. JVMTI RetransformClasses and RedefineClasses
 * refuse a new class version that adds, removes or renames fields or
 * methods, changes their modifiers, the class modifiers, the super class,
 * the interfaces, or (since JDK 11, 16, 17) NestHost, NestMembers, Record
 * and PermittedSubclasses (JVMTI spec, RedefineClasses, "The redefinition
 * may change method bodies, the constant pool and attributes"; and
 * JVMTI_ERROR_UNSUPPORTED_REDEFINITION_*). The VM would reject the whole
 * retransformation with an error the agent can only log; so the checker
 * compares the pass's output with its input first, and a difference leaves
 * the class as it was (DESIGN.md, invariant 4).
 *
 * One change of shape is the agent's own: the natives pass wraps natives
 * at a first load (natives.c), so the VM's class has the wrappers and a
 * retransformation must have them again, while the bytes the VM hands in
 * have none. A wrapped native (renamed with the prefix in its place, its
 * flags and descriptor kept) with its wrapper appended in order is taken
 * as the same shape; that the VM's class has exactly those wrappers is
 * the natives filter's answer (the agent asks the VM).
 *
 * Both sides are parsed afresh from their bytes and compared by names,
 * never by constant-pool index: a pass may append to the pool, and a wrong
 * pass may well point an index at an equal string.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static bool same(const uint8_t *a, uint16_t al, const uint8_t *b, uint16_t bl)
{
	return a && b ? al == bl && !memcmp(a, b, al) : a == b;
}

/* Names of the Class constants at ia and ib are equal (index 0: none). */
static bool same_class(jinst_class *a, uint16_t ia, jinst_class *b, uint16_t ib)
{
	if (!ia || !ib)
		return ia == ib;
	uint16_t la, lb;
	const uint8_t *na = jinst_cp_name(a, ia, &la), *nb = jinst_cp_name(b, ib, &lb);
	return na && nb && same(na, la, nb, lb);
}

static bool same_utf8_at(jinst_class *a, uint16_t ia, jinst_class *b, uint16_t ib)
{
	uint16_t la, lb;
	const uint8_t *na = jinst_cp_utf8(a, ia, &la), *nb = jinst_cp_utf8(b, ib, &lb);
	return na && nb && same(na, la, nb, lb);
}

/* A difference the VM would refuse: JINST_ERULES, saying which. */
#define differ(diag, ...) jinst_ins_fail(diag, JINST_ERULES, __VA_ARGS__)

/* b's member mb against a's ma: mb's name past its first skip bytes is
 * ma's, the descriptors are the same, and mb has these flags. */
static int member(jinst_class *a, jinst_member *ma, jinst_class *b, jinst_member *mb, size_t skip, uint16_t flags,
                  const char *what, uint16_t i, jinst_diag *diag)
{
	uint16_t la, lb;
	const uint8_t *na = jinst_cp_utf8(a, jinst_member_name_index(ma), &la);
	const uint8_t *nb = jinst_cp_utf8(b, jinst_member_name_index(mb), &lb);
	int nl = na ? (int)la : 0;
	if (!na || !nb || lb < skip || !same(na, la, nb + skip, (uint16_t)(lb - skip)))
		return differ(diag, "%s %u (%.*s): name changed", what, i, nl, (const char *)na);
	if (!same_utf8_at(a, jinst_member_descriptor_index(ma), b, jinst_member_descriptor_index(mb)))
		return differ(diag, "%s %u (%.*s): descriptor changed", what, i, nl, (const char *)na);
	if (jinst_member_access_flags(mb) != flags)
		return differ(diag, "%s %u (%.*s): access flags 0x%04x became 0x%04x", what, i, nl, (const char *)na,
		              jinst_member_access_flags(ma), jinst_member_access_flags(mb));
	return 0;
}

/* Whether b's method mb is a's native ma wrapped: renamed with the prefix
 * (natives.c). */
static bool wrapped(jinst_class *a, jinst_member *ma, jinst_class *b, jinst_member *mb)
{
	size_t p = sizeof(JINST_NATIVE_PREFIX) - 1;
	uint16_t la, lb;
	const uint8_t *na = jinst_cp_utf8(a, jinst_member_name_index(ma), &la);
	const uint8_t *nb = jinst_cp_utf8(b, jinst_member_name_index(mb), &lb);
	return (jinst_member_access_flags(ma) & JINST_ACC_NATIVE) && na && nb && lb == la + p &&
	       !memcmp(nb, JINST_NATIVE_PREFIX, p) && !memcmp(nb + p, na, la);
}

/* The same members in the same order; for methods, each native that b
 * wraps renamed in its place, its wrapper (a's flags but ACC_NATIVE)
 * appended after a's methods, in the same order (natives.c). */
static int members(jinst_class *a, jinst_class *b, bool methods, jinst_diag *diag)
{
	const char *what = methods ? "method" : "field";
	uint16_t n = methods ? jinst_class_method_count(a) : jinst_class_field_count(a);
	uint16_t nb = methods ? jinst_class_method_count(b) : jinst_class_field_count(b);
	uint16_t added = 0;
	if (nb < n)
		return differ(diag, "%u %ss became %u", n, what, nb);
	for (uint16_t i = 0; i < n; i++) {
		jinst_member *ma = methods ? jinst_class_method(a, i) : jinst_class_field(a, i);
		jinst_member *mb = methods ? jinst_class_method(b, i) : jinst_class_field(b, i);
		uint16_t flags = jinst_member_access_flags(ma);
		bool wrap = methods && wrapped(a, ma, b, mb);
		int rc = member(a, ma, b, mb, wrap ? sizeof(JINST_NATIVE_PREFIX) - 1 : 0, flags, what, i, diag);
		if (!rc && wrap && n + added >= nb)
			rc = differ(diag, "method %u: wrapped without its wrapper", i);
		if (!rc && wrap)
			rc = member(a, ma, b, jinst_class_method(b, (uint16_t)(n + added++)), 0,
			            (uint16_t)(flags & ~JINST_ACC_NATIVE), "wrapper of method", i, diag);
		if (rc)
			return rc;
	}
	if (nb != n + added)
		return differ(diag, "%u %ss became %u", n, what, nb);
	return 0;
}

/* The decoded model of the class attribute of that kind, NULL when absent;
 * *rc set when it does not decode. */
static void *class_attr(jinst_class *c, enum jinst_attr_kind kind, int *rc, jinst_diag *diag)
{
	jinst_attr *at = jinst_attr_find(jinst_class_attrs(c), kind);
	void *model = NULL;
	if (at && !*rc)
		*rc = jinst_attr_decode(c, at, &model, diag);
	return at ? model : NULL;
}

static int class_lists(jinst_class *a, jinst_class *b, enum jinst_attr_kind kind, jinst_diag *diag)
{
	int rc = 0;
	jinst_index_list *la = class_attr(a, kind, &rc, diag), *lb = class_attr(b, kind, &rc, diag);
	const char *what = jinst_attr_kind_name(kind);
	if (rc)
		return rc;
	if (!la != !lb)
		return differ(diag, "%s %s", what, la ? "removed" : "added");
	if (!la)
		return 0;
	if (la->count != lb->count)
		return differ(diag, "%s: %u classes became %u", what, la->count, lb->count);
	for (uint16_t i = 0; i < la->count; i++)
		if (!same_class(a, la->items[i], b, lb->items[i]))
			return differ(diag, "%s: class %u changed", what, i);
	return 0;
}

static int compare(jinst_class *a, jinst_class *b, jinst_diag *diag)
{
	if (jinst_class_access_flags(a) != jinst_class_access_flags(b))
		return differ(diag, "class access flags 0x%04x became 0x%04x", jinst_class_access_flags(a),
		              jinst_class_access_flags(b));
	if (!same_class(a, jinst_class_this_class(a), b, jinst_class_this_class(b)))
		return differ(diag, "class name changed");
	if (!same_class(a, jinst_class_super_class(a), b, jinst_class_super_class(b)))
		return differ(diag, "super class changed");
	uint16_t n = jinst_class_interface_count(a);
	if (n != jinst_class_interface_count(b))
		return differ(diag, "%u interfaces became %u", n, jinst_class_interface_count(b));
	for (uint16_t i = 0; i < n; i++)
		if (!same_class(a, jinst_class_interface(a, i), b, jinst_class_interface(b, i)))
			return differ(diag, "interface %u changed", i);
	int rc;
	if ((rc = members(a, b, false, diag)) || (rc = members(a, b, true, diag)))
		return rc;

	rc = 0;
	jinst_attr_index *ha = class_attr(a, JINST_ATTR_NEST_HOST, &rc, diag);
	jinst_attr_index *hb = class_attr(b, JINST_ATTR_NEST_HOST, &rc, diag);
	if (rc)
		return rc;
	if (!ha != !hb)
		return differ(diag, "NestHost %s", ha ? "removed" : "added");
	if (ha && !same_class(a, ha->index, b, hb->index))
		return differ(diag, "NestHost changed");
	if ((rc = class_lists(a, b, JINST_ATTR_NEST_MEMBERS, diag)) ||
	    (rc = class_lists(a, b, JINST_ATTR_PERMITTED_SUBCLASSES, diag)))
		return rc;

	jinst_record *ra = class_attr(a, JINST_ATTR_RECORD, &rc, diag);
	jinst_record *rb = class_attr(b, JINST_ATTR_RECORD, &rc, diag);
	if (rc)
		return rc;
	if (!ra != !rb)
		return differ(diag, "Record %s", ra ? "removed" : "added");
	if (!ra)
		return 0;
	if (ra->count != rb->count)
		return differ(diag, "Record: %u components became %u", ra->count, rb->count);
	for (uint16_t i = 0; i < ra->count; i++)
		if (!same_utf8_at(a, ra->components[i].name_index, b, rb->components[i].name_index) ||
		    !same_utf8_at(a, ra->components[i].descriptor_index, b, rb->components[i].descriptor_index))
			return differ(diag, "Record: component %u changed", i);
	return 0;
}

int jinst_instrument_check_rules(jinst_arena *arena, const uint8_t *in, size_t in_len, const uint8_t *out,
                                 size_t out_len, jinst_diag *diag)
{
	jinst_class *a = NULL, *b = NULL;
	int rc = jinst_class_parse(&a, in, in_len, arena, NULL, diag);
	if (!rc)
		rc = jinst_class_parse(&b, out, out_len, arena, NULL, diag);
	if (!rc) {
		if (diag) {
			diag->code = 0;
			diag->where[0] = diag->message[0] = '\0';
		}
		rc = compare(a, b, diag);
		if (rc && diag)
			snprintf(diag->where, sizeof(diag->where), "retransformation rules");
	}
	jinst_class_free(a);
	jinst_class_free(b);
	return rc;
}
