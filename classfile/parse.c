/*
 * The reader. jinst_class_parse() walks the class file once: it indexes the
 * constant pool (tag and offset of every entry), checks every constant-pool
 * reference for range and tag, validates modified UTF-8, and records the
 * header, the field and method headers and the class's attribute headers.
 * A field's or method's attribute headers are checked (each fits, each is
 * named by a Utf8) but its attribute list is built only on first use
 * (jinst_member_attrs, or a write that encodes the member). Attribute
 * contents are left alone until someone asks for them (jinst_attr_decode), so
 * a class that is only copied costs one pass over its constant pool and one
 * walk over its headers.
 */
#include "internal.h"

/* Tags that may appear, with the size of their contents (after the tag
 * byte), three bits a tag holding size - 1 (0: no such tag). The walk over
 * the pool is a chain, each entry's place waiting on the size of the one
 * before, and a shift out of a register is quicker than a load. */
#define CP_SIZE(tag, n) ((uint64_t)((n) - 1) << (3 * (tag)))
#define CP_SIZES_PACKED                                                                                       \
	(CP_SIZE(JINST_CP_INTEGER, 4) | CP_SIZE(JINST_CP_FLOAT, 4) | CP_SIZE(JINST_CP_LONG, 8) |                 \
	 CP_SIZE(JINST_CP_DOUBLE, 8) | CP_SIZE(JINST_CP_CLASS, 2) | CP_SIZE(JINST_CP_STRING, 2) |                 \
	 CP_SIZE(JINST_CP_FIELDREF, 4) | CP_SIZE(JINST_CP_METHODREF, 4) | CP_SIZE(JINST_CP_INTERFACE_METHODREF, 4) | \
	 CP_SIZE(JINST_CP_NAME_AND_TYPE, 4) | CP_SIZE(JINST_CP_METHOD_HANDLE, 3) | CP_SIZE(JINST_CP_METHOD_TYPE, 2) | \
	 CP_SIZE(JINST_CP_DYNAMIC, 4) | CP_SIZE(JINST_CP_INVOKE_DYNAMIC, 4) | CP_SIZE(JINST_CP_MODULE, 2) |         \
	 CP_SIZE(JINST_CP_PACKAGE, 2))

static const char *const cp_tag_names[21] = {
	[JINST_CP_UTF8] = "Utf8", [JINST_CP_INTEGER] = "Integer", [JINST_CP_FLOAT] = "Float",
	[JINST_CP_LONG] = "Long", [JINST_CP_DOUBLE] = "Double", [JINST_CP_CLASS] = "Class",
	[JINST_CP_STRING] = "String", [JINST_CP_FIELDREF] = "Fieldref", [JINST_CP_METHODREF] = "Methodref",
	[JINST_CP_INTERFACE_METHODREF] = "InterfaceMethodref", [JINST_CP_NAME_AND_TYPE] = "NameAndType",
	[JINST_CP_METHOD_HANDLE] = "MethodHandle", [JINST_CP_METHOD_TYPE] = "MethodType",
	[JINST_CP_DYNAMIC] = "Dynamic", [JINST_CP_INVOKE_DYNAMIC] = "InvokeDynamic",
	[JINST_CP_MODULE] = "Module", [JINST_CP_PACKAGE] = "Package",
};

const char *jinst_cp_tag_name(uint8_t tag)
{
	return tag < 21 && cp_tag_names[tag] ? cp_tag_names[tag] : "invalid";
}

/* A reference to the wrong kind of constant. `from` names the referring
 * entry, or is 0 for references outside the pool (the caller says where). */
static int bad_ref(jinst_class *c, jinst_diag *diag, uint16_t from, uint32_t at, uint16_t to, const char *want)
{
	int rc;
	if (to == 0 || to >= c->cp_count)
		rc = jinst_fail(diag, JINST_EMALFORMED, at, "index #%u out of range (constant pool count %u), %s expected",
		                (unsigned)to, (unsigned)c->cp_count, want);
	else
		rc = jinst_fail(diag, JINST_EMALFORMED, at, "index #%u is a %s, %s expected", (unsigned)to,
		                jinst_cp_tag_name(c->cp_tags[to]), want);
	if (from)
		jinst_diag_where(diag, "constant pool #%u", (unsigned)from);
	return rc;
}

static inline bool has_tag(const uint8_t *tags, uint32_t count, uint16_t i, uint8_t tag)
{
	return i < count && tags[i] == tag;
}

static inline bool is_tag(const jinst_class *c, uint16_t i, uint8_t tag)
{
	return has_tag(c->cp_tags, c->cp_count, i, tag);
}

/* What the two u2 fields after a tag must refer to, as (want, mask) pairs
 * for the tag found there; mask 0 for a field that is not checked here (no
 * reference, or bootstrap_method_attr_index, checked with BootstrapMethods).
 * tags[0] is 0, the tag of no entry, so index 0 fails like one out of range.
 * The tags of fixed size that hold no reference have no rule (all 0). */
struct ref_rule {
	uint8_t want_x, mask_x, want_y, mask_y;
};
#define REF1(t) {t, 0xFF, 0, 0}
#define REF2(t, u) {t, 0xFF, u, 0xFF}
static const struct ref_rule ref_rules[21] = {
	[JINST_CP_CLASS] = REF1(JINST_CP_UTF8), [JINST_CP_STRING] = REF1(JINST_CP_UTF8),
	[JINST_CP_METHOD_TYPE] = REF1(JINST_CP_UTF8), [JINST_CP_MODULE] = REF1(JINST_CP_UTF8),
	[JINST_CP_PACKAGE] = REF1(JINST_CP_UTF8),
	[JINST_CP_FIELDREF] = REF2(JINST_CP_CLASS, JINST_CP_NAME_AND_TYPE),
	[JINST_CP_METHODREF] = REF2(JINST_CP_CLASS, JINST_CP_NAME_AND_TYPE),
	[JINST_CP_INTERFACE_METHODREF] = REF2(JINST_CP_CLASS, JINST_CP_NAME_AND_TYPE),
	[JINST_CP_NAME_AND_TYPE] = REF2(JINST_CP_UTF8, JINST_CP_UTF8),
	[JINST_CP_DYNAMIC] = {0, 0, JINST_CP_NAME_AND_TYPE, 0xFF},
	[JINST_CP_INVOKE_DYNAMIC] = {0, 0, JINST_CP_NAME_AND_TYPE, 0xFF},
};
#undef REF1
#undef REF2

/* Second pass: every string is modified UTF-8 (JVMS 4.4.7) and every
 * reference inside the pool points at an entry of the right tag (JVMS 4.4).
 * marks flags the bytes from pool_start on that are not plain ASCII. */
static int check_pool(jinst_class *c, uint32_t pool_start, const uint8_t *marks, jinst_diag *diag)
{
	const uint8_t *b = c->bytes;
	bool lenient = c->major_version <= 47;
	/* Locals: the calls below could change *c as far as the compiler knows. */
	const uint8_t *tags = c->cp_tags;
	const uint32_t *offsets = c->cp_offsets;
	uint32_t count = c->cp_count;
	for (uint32_t i = 1; i < count; i++) {
		uint8_t tag = tags[i];
		uint32_t off = offsets[i];
		const uint8_t *p = b + off + 1;
		uint16_t x, y;
		/* Utf8, more than half of all entries, ahead of the switch: a test
		 * and a branch instead of a jump through the table. */
		if (tag == JINST_CP_UTF8) {
			x = jinst_be16(p);
			if (!jinst_mutf8_marked(marks, off + 3 - pool_start, x))
				continue;
			long at = jinst_mutf8_error_at(p + 2, x, lenient);
			if (at >= 0) {
				int rc = jinst_fail(diag, JINST_EMALFORMED, off + 3 + (uint32_t)at,
				                    "malformed modified UTF-8 at byte %ld of the string", at);
				jinst_diag_where(diag, "constant pool #%u", (unsigned)i);
				return rc;
			}
			continue;
		}
		/* The references of the other tags by one rule, without a jump
		 * through the switch's table; the switch judges the MethodHandles,
		 * an entry within 5 bytes of the end of the file (its second u2
		 * could lie past it) and any entry the rule finds wrong, and says
		 * what is wrong. */
		if (tag != JINST_CP_METHOD_HANDLE && off + 5 <= c->len) {
			struct ref_rule rule = ref_rules[tag];
			uint32_t rx = jinst_be16(p), ry = jinst_be16(p + 2);
			uint8_t got_x = tags[rx < count ? rx : 0], got_y = tags[ry < count ? ry : 0];
			if ((((got_x ^ rule.want_x) & rule.mask_x) | ((got_y ^ rule.want_y) & rule.mask_y)) == 0)
				continue;
		}
		switch (tag) {
		case JINST_CP_CLASS:
		case JINST_CP_STRING:
		case JINST_CP_METHOD_TYPE:
		case JINST_CP_MODULE:
		case JINST_CP_PACKAGE:
			x = jinst_be16(p);
			if (!has_tag(tags, count, x, JINST_CP_UTF8))
				return bad_ref(c, diag, (uint16_t)i, off + 1, x, "Utf8");
			break;
		case JINST_CP_FIELDREF:
		case JINST_CP_METHODREF:
		case JINST_CP_INTERFACE_METHODREF:
			x = jinst_be16(p);
			y = jinst_be16(p + 2);
			if (!has_tag(tags, count, x, JINST_CP_CLASS))
				return bad_ref(c, diag, (uint16_t)i, off + 1, x, "Class");
			if (!has_tag(tags, count, y, JINST_CP_NAME_AND_TYPE))
				return bad_ref(c, diag, (uint16_t)i, off + 3, y, "NameAndType");
			break;
		case JINST_CP_NAME_AND_TYPE:
			x = jinst_be16(p);
			y = jinst_be16(p + 2);
			if (!has_tag(tags, count, x, JINST_CP_UTF8))
				return bad_ref(c, diag, (uint16_t)i, off + 1, x, "Utf8");
			if (!has_tag(tags, count, y, JINST_CP_UTF8))
				return bad_ref(c, diag, (uint16_t)i, off + 3, y, "Utf8");
			break;
		case JINST_CP_METHOD_HANDLE: {
			uint8_t kind = p[0];
			x = jinst_be16(p + 1);
			if (kind < 1 || kind > 9) {
				int rc = jinst_fail(diag, JINST_EMALFORMED, off + 1, "bad reference_kind %u", kind);
				jinst_diag_where(diag, "constant pool #%u", (unsigned)i);
				return rc;
			}
			/* JVMS 4.4.8: kinds 1-4 name a Fieldref, 5 and 8 a Methodref, 9 an
			 * InterfaceMethodref, 6 and 7 either of the method refs. */
			uint8_t t = x < c->cp_count ? c->cp_tags[x] : 0;
			bool ok = kind <= 4 ? t == JINST_CP_FIELDREF
			        : kind == 5 || kind == 8 ? t == JINST_CP_METHODREF
			        : kind == 9 ? t == JINST_CP_INTERFACE_METHODREF
			        : t == JINST_CP_METHODREF || t == JINST_CP_INTERFACE_METHODREF;
			if (!ok)
				return bad_ref(c, diag, (uint16_t)i, off + 2, x,
				               kind <= 4 ? "Fieldref" : kind == 9 ? "InterfaceMethodref" : "Methodref");
			break;
		}
		case JINST_CP_DYNAMIC:
		case JINST_CP_INVOKE_DYNAMIC:
			/* bootstrap_method_attr_index is checked against BootstrapMethods when decoded. */
			y = jinst_be16(p + 2);
			if (!has_tag(tags, count, y, JINST_CP_NAME_AND_TYPE))
				return bad_ref(c, diag, (uint16_t)i, off + 3, y, "NameAndType");
			break;
		default:
			break;
		}
	}
	return 0;
}

#define PREFETCH_MAX 16384 /* bytes of a class asked for ahead of use */

static int read_pool(jinst_class *c, jinst_reader *r, jinst_diag *diag)
{
	uint16_t count = jinst_rd_u2(r);
	if (r->bad)
		return jinst_fail(diag, JINST_EMALFORMED, r->pos, "truncated before constant_pool_count");
	if (count == 0)
		return jinst_fail(diag, JINST_EMALFORMED, r->pos - 2, "constant_pool_count is 0");
	/* Each entry takes at least 3 bytes: refuse counts the file cannot hold
	 * before allocating for them. */
	if ((uint32_t)(count - 1) * 3 > jinst_rd_left(r))
		return jinst_fail(diag, JINST_EMALFORMED, r->pos - 2,
		                  "constant_pool_count %u needs more bytes than the %u left", (unsigned)count,
		                  (unsigned)jinst_rd_left(r));
	c->cp_count = count;
	c->cp_tags = jinst_arena_alloc(c->arena, count);
	c->cp_offsets = jinst_arena_alloc(c->arena, (size_t)count * sizeof(uint32_t));
	if (!c->cp_tags || !c->cp_offsets)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory for the constant pool");
	/* Local copies: stores through the tag array could alias the class's fields. */
	uint8_t *restrict tags = c->cp_tags;
	uint32_t *restrict offsets = c->cp_offsets;
	tags[0] = 0;
	offsets[0] = 0;
	const uint8_t *b = c->bytes;
	uint32_t pos = r->pos, end = r->end;
	for (uint32_t i = 1; i < count; i++) {
		if (pos >= end) {
			int rc = jinst_fail(diag, JINST_EMALFORMED, pos, "truncated in the constant pool");
			jinst_diag_where(diag, "constant pool #%u", (unsigned)i);
			return rc;
		}
		uint8_t tag = b[pos];
		tags[i] = tag;
		offsets[i] = pos;
		if (tag == JINST_CP_UTF8) {
			if (end - pos < 3 || end - pos - 3 < jinst_be16(b + pos + 1)) {
				pos++; /* the length field is what does not fit */
				goto truncated;
			}
			pos += 3u + jinst_be16(b + pos + 1); /* contents checked by check_pool */
			continue;
		}
		uint32_t size = tag < 21 ? (uint32_t)(CP_SIZES_PACKED >> (3 * tag) & 7) + 1 : 0;
		if (size <= 1) {
			int rc = jinst_fail(diag, JINST_EMALFORMED, pos, "bad constant pool tag %u", tag);
			jinst_diag_where(diag, "constant pool #%u", (unsigned)i);
			return rc;
		}
		if (end - pos - 1 < size) {
			/* Point at the first field that does not fit. */
			uint32_t avail = end - pos - 1, field;
			if (tag == JINST_CP_METHOD_HANDLE)
				field = avail ? 1 : 0; /* u1 kind, then u2 index */
			else if (tag >= JINST_CP_INTEGER && tag <= JINST_CP_DOUBLE)
				field = avail / 4 * 4; /* u4 bytes, or u4 high and low */
			else
				field = avail / 2 * 2; /* u2 indices */
			pos += 1 + field;
			goto truncated;
		}
		pos += 1u + size;
		if (tag == JINST_CP_LONG || tag == JINST_CP_DOUBLE) {
			/* JVMS 4.4.5: the next index is unusable. */
			if (++i >= count) {
				int rc = jinst_fail(diag, JINST_EMALFORMED, offsets[i - 1],
				                    "%s in the last constant pool slot", jinst_cp_tag_name(tag));
				jinst_diag_where(diag, "constant pool #%u", (unsigned)i - 1);
				return rc;
			}
			tags[i] = 0;
			offsets[i] = 0;
		}
		continue;
	truncated: {
		int rc = jinst_fail(diag, JINST_EMALFORMED, pos, "%s entry runs past the end of the file",
		                    jinst_cp_tag_name(tag));
		jinst_diag_where(diag, "constant pool #%u", (unsigned)i);
		return rc;
	}
	}
	uint32_t start = r->pos;
	r->pos = pos;
	c->cp_end = pos;
	/* The rest of the class (header, members, attributes) is read next as a
	 * chain of headers, each found from the one before, so each miss in the
	 * cache would be waited for in turn: ask for those bytes now, and they
	 * arrive while the pool is checked. */
	for (uint32_t at = pos, stop = end - pos > PREFETCH_MAX ? pos + PREFETCH_MAX : end; at < stop; at += 64)
		__builtin_prefetch(b + at);
	uint8_t *marks = jinst_arena_alloc(c->arena, (pos - start) / 8 + 16);
	if (!marks)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory for the constant pool");
	memset(marks + (pos - start) / 8, 0, 16);
	jinst_mutf8_mark(b + start, pos - start, marks);
	return check_pool(c, start, marks, diag);
}

/* Reports an attribute header at `at` whose attribute_length runs past r's end. */
static int attr_past_end(jinst_class *c, const jinst_reader *r, uint32_t at, uint16_t name_index, uint32_t length,
                         jinst_diag *diag)
{
	uint16_t nlen;
	const uint8_t *name = jinst_cp_utf8(c, name_index, &nlen);
	return jinst_fail(diag, JINST_EMALFORMED, at + 2, "attribute %.*s: attribute_length %u runs past the end (%u bytes left)",
	                  (int)(nlen > 64 ? 64 : nlen), (const char *)name, (unsigned)length,
	                  (unsigned)(r->end - at - 6));
}

/* jinst_attrs_read's checks without the list: count headers at r, each
 * with a Utf8 name and a length that fits. */
static int check_attr_headers(jinst_class *c, jinst_reader *r, uint16_t count, jinst_diag *diag)
{
	const uint8_t *b = c->bytes;
	uint32_t pos = r->pos, end = r->end;
	for (uint16_t i = 0; i < count; i++) {
		if (end - pos < 6)
			return jinst_fail(diag, JINST_EMALFORMED, pos, "attribute header runs past its end");
		uint16_t name_index = jinst_be16(b + pos);
		uint32_t length = jinst_be32(b + pos + 2);
		if (!is_tag(c, name_index, JINST_CP_UTF8))
			return jinst_fail(diag, JINST_EMALFORMED, pos, "attribute_name_index #%u is not a Utf8",
			                  (unsigned)name_index);
		if (end - pos - 6 < length)
			return attr_past_end(c, r, pos, name_index, length, diag);
		pos += 6 + length;
	}
	r->pos = pos;
	return 0;
}

int jinst_attrs_read(jinst_class *c, jinst_reader *r, enum jinst_attr_context ctx, jinst_attr_list *list,
                     jinst_diag *diag)
{
	uint32_t at = r->pos;
	uint16_t count = jinst_rd_u2(r);
	if (r->bad)
		return jinst_fail(diag, JINST_EMALFORMED, at, "truncated before attributes_count");
	if (list) {
		list->count = count;
		list->items = NULL;
	}
	if (!count)
		return 0;
	if ((uint32_t)count * 6 > jinst_rd_left(r))
		return jinst_fail(diag, JINST_EMALFORMED, at, "attributes_count %u needs more bytes than the %u left",
		                  (unsigned)count, (unsigned)jinst_rd_left(r));
	if (!list)
		return check_attr_headers(c, r, count, diag);
	jinst_attr *items = jinst_arena_alloc(c->arena, (size_t)count * sizeof(*items));
	if (!items)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory for attributes");
	for (uint16_t i = 0; i < count; i++) {
		jinst_attr *a = &items[i];
		a->offset = r->pos;
		a->name_index = jinst_rd_u2(r);
		a->length = jinst_rd_u4(r);
		if (r->bad)
			return jinst_fail(diag, JINST_EMALFORMED, a->offset, "attribute header runs past its end");
		if (jinst_cp_tag_fast(c, a->name_index) != JINST_CP_UTF8) {
			int rc = jinst_fail(diag, JINST_EMALFORMED, a->offset,
			                    "attribute_name_index #%u is not a Utf8", (unsigned)a->name_index);
			return rc;
		}
		a->info = jinst_rd_bytes(r, a->length);
		if (!a->info)
			return attr_past_end(c, r, a->offset, a->name_index, a->length, diag);
		a->kind = (uint16_t)jinst_attr_kind_at(c, a->name_index, ctx);
		a->modified = false;
		a->model = NULL;
	}
	list->items = items;
	return 0;
}

static int read_members(jinst_class *c, jinst_reader *r, bool methods, jinst_diag *diag)
{
	uint32_t at = r->pos;
	uint16_t count = jinst_rd_u2(r);
	const char *what = methods ? "methods" : "fields";
	if (r->bad)
		return jinst_fail(diag, JINST_EMALFORMED, at, "truncated before %s_count", what);
	if ((uint32_t)count * 8 > jinst_rd_left(r))
		return jinst_fail(diag, JINST_EMALFORMED, at, "%s_count %u needs more bytes than the %u left", what,
		                  (unsigned)count, (unsigned)jinst_rd_left(r));
	jinst_member *ms = count ? jinst_arena_alloc(c->arena, (size_t)count * sizeof(*ms)) : NULL;
	if (count && !ms)
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory for %s", what);
	const uint8_t *b = c->bytes, *tags = c->cp_tags;
	uint32_t cp_count = c->cp_count, end = r->end;
	for (uint16_t i = 0; i < count; i++) {
		jinst_member *m = &ms[i];
		uint32_t pos = r->pos;
		m->offset = pos;
		m->modified = false;
		m->method = methods;
		m->attrs_read = false;
		m->cls = c;
		m->attrs.count = 0;
		m->attrs.items = NULL;
		/* The usual member in one go: its header and attributes_count in
		 * bounds, a Utf8 name and descriptor, every attribute header sound
		 * (jinst_attrs_read's checks). Anything else takes the careful path
		 * below, which finds the same defects and says what is wrong. */
		if (end - pos >= 8) {
			uint16_t name = jinst_be16(b + pos + 2), desc = jinst_be16(b + pos + 4);
			uint16_t n = jinst_be16(b + pos + 6);
			uint32_t next = pos + 8;
			bool ok = has_tag(tags, cp_count, name, JINST_CP_UTF8) && has_tag(tags, cp_count, desc, JINST_CP_UTF8);
			for (uint16_t k = 0; ok && k < n; k++) {
				ok = end - next >= 6 && has_tag(tags, cp_count, jinst_be16(b + next), JINST_CP_UTF8) &&
				     end - next - 6 >= jinst_be32(b + next + 2);
				next += ok ? 6 + jinst_be32(b + next + 2) : 0;
			}
			if (ok) {
				m->access_flags = jinst_be16(b + pos);
				m->name_index = name;
				m->descriptor_index = desc;
				m->end = r->pos = next;
				continue;
			}
		}
		m->access_flags = jinst_rd_u2(r);
		m->name_index = jinst_rd_u2(r);
		m->descriptor_index = jinst_rd_u2(r);
		if (r->bad)
			return jinst_fail(diag, JINST_EMALFORMED, m->offset, "truncated in %s[%u]", what, (unsigned)i);
		if (!is_tag(c, m->name_index, JINST_CP_UTF8)) {
			int rc = jinst_fail(diag, JINST_EMALFORMED, m->offset + 2, "name_index #%u is not a Utf8",
			                    (unsigned)m->name_index);
			jinst_diag_where(diag, "%s[%u]", what, (unsigned)i);
			return rc;
		}
		if (!is_tag(c, m->descriptor_index, JINST_CP_UTF8)) {
			int rc = jinst_fail(diag, JINST_EMALFORMED, m->offset + 4,
			                    "descriptor_index #%u is not a Utf8", (unsigned)m->descriptor_index);
			jinst_diag_member(diag, c, m, methods);
			return rc;
		}
		int rc = jinst_attrs_read(c, r, methods ? JINST_CTX_METHOD : JINST_CTX_FIELD, NULL, diag);
		if (rc) {
			jinst_diag_member(diag, c, m, methods);
			return rc;
		}
		m->end = r->pos;
	}
	if (methods) {
		c->method_count = count;
		c->methods = ms;
	} else {
		c->field_count = count;
		c->fields = ms;
	}
	return 0;
}

static int parse_body(jinst_class *c, const jinst_parse_options *opts, jinst_diag *diag)
{
	jinst_reader r;
	jinst_reader_init(&r, c->bytes, 0, c->len);
	uint32_t magic = jinst_rd_u4(&r);
	c->minor_version = jinst_rd_u2(&r);
	c->major_version = jinst_rd_u2(&r);
	if (r.bad) /* a failed read leaves pos at the field that does not fit */
		return jinst_fail(diag, JINST_EMALFORMED, r.pos, "file of %u bytes is too short for a class header",
		                  (unsigned)c->len);
	if (magic != 0xCAFEBABE)
		return jinst_fail(diag, JINST_EMALFORMED, 0, "bad magic 0x%08X (0xCAFEBABE expected)", (unsigned)magic);
	if (c->major_version < 45)
		return jinst_fail(diag, JINST_EUNSUPPORTED, 6, "class-file version %u.%u is older than 45.0",
		                  (unsigned)c->major_version, (unsigned)c->minor_version);
	if (c->major_version > JINST_MAX_SUPPORTED_MAJOR && opts && (opts->flags & JINST_PARSE_STRICT_VERSION))
		return jinst_fail(diag, JINST_EUNSUPPORTED, 6, "class-file version %u.%u is newer than %u",
		                  (unsigned)c->major_version, (unsigned)c->minor_version, JINST_MAX_SUPPORTED_MAJOR);
	/* HotSpot reads Code with 1-byte max_stack/max_locals and a 2-byte
	 * code_length in versions before 45.3. */
	c->old_code_layout = c->major_version == 45 && c->minor_version < 3;

	int rc = read_pool(c, &r, diag);
	if (rc)
		return rc;

	uint32_t at = r.pos;
	c->access_flags = jinst_rd_u2(&r);
	c->this_class = jinst_rd_u2(&r);
	c->super_class = jinst_rd_u2(&r);
	c->interface_count = jinst_rd_u2(&r);
	c->interfaces_offset = r.pos;
	if (r.bad)
		return jinst_fail(diag, JINST_EMALFORMED, r.pos, "truncated in the class header");
	if (!is_tag(c, c->this_class, JINST_CP_CLASS)) {
		rc = bad_ref(c, diag, 0, at + 2, c->this_class, "Class");
		jinst_diag_where(diag, "this_class");
		return rc;
	}
	if (c->super_class && !is_tag(c, c->super_class, JINST_CP_CLASS)) {
		rc = bad_ref(c, diag, 0, at + 4, c->super_class, "Class");
		jinst_diag_where(diag, "super_class");
		return rc;
	}
	if (!jinst_rd_bytes(&r, (uint32_t)c->interface_count * 2))
		return jinst_fail(diag, JINST_EMALFORMED, at + 6, "interfaces_count %u runs past the end",
		                  (unsigned)c->interface_count);
	for (uint16_t i = 0; i < c->interface_count; i++) {
		uint16_t x = jinst_be16(c->bytes + c->interfaces_offset + 2u * i);
		if (!is_tag(c, x, JINST_CP_CLASS)) {
			rc = bad_ref(c, diag, 0, c->interfaces_offset + 2u * i, x, "Class");
			jinst_diag_where(diag, "interfaces[%u]", (unsigned)i);
			return rc;
		}
	}

	c->fields_offset = r.pos;
	rc = read_members(c, &r, false, diag);
	c->methods_offset = r.pos;
	if (!rc)
		rc = read_members(c, &r, true, diag);
	if (rc)
		return rc;
	c->attrs_offset = r.pos;
	rc = jinst_attrs_read(c, &r, JINST_CTX_CLASS, &c->attrs, diag);
	if (rc) {
		jinst_diag_where(diag, "class attributes");
		return rc;
	}
	if (r.pos != c->len)
		return jinst_fail(diag, JINST_EMALFORMED, r.pos, "%u bytes after the end of the class",
		                  (unsigned)(c->len - r.pos));
	return 0;
}

int jinst_class_parse(jinst_class **out, const uint8_t *bytes, size_t len, jinst_arena *arena,
                      const jinst_parse_options *opts, jinst_diag *diag)
{
	if (diag) {
		diag->code = 0;
		diag->offset = JINST_NO_OFFSET;
		diag->where[0] = diag->message[0] = '\0';
	}
	*out = NULL;
	if (!bytes || len > UINT32_MAX / 2)
		return jinst_fail(diag, JINST_EINVAL, JINST_NO_OFFSET, "no input or input too large");
	bool owns = false;
	if (!arena) {
		int rc = jinst_arena_new(&arena);
		if (rc)
			return jinst_fail(diag, rc, JINST_NO_OFFSET, "out of memory");
		owns = true;
	}
	jinst_class *c = jinst_arena_zalloc(arena, sizeof(*c));
	if (!c) {
		if (owns)
			jinst_arena_free(arena);
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory");
	}
	c->arena = arena;
	c->owns_arena = owns;
	c->bytes = bytes;
	c->len = (uint32_t)len;
	int rc = parse_body(c, opts, diag);
	if (rc) {
		if (owns)
			jinst_arena_free(arena);
		return rc;
	}
	*out = c;
	return 0;
}

void jinst_class_free(jinst_class *c)
{
	if (c && c->owns_arena)
		jinst_arena_free(c->arena);
}

/* ---- accessors ---------------------------------------------------------------- */

const uint8_t *jinst_class_bytes(const jinst_class *c, size_t *len)
{
	if (len)
		*len = c->len;
	return c->bytes;
}

jinst_arena *jinst_class_arena(jinst_class *c) { return c->arena; }
uint16_t jinst_class_minor_version(const jinst_class *c) { return c->minor_version; }
uint16_t jinst_class_major_version(const jinst_class *c) { return c->major_version; }
bool jinst_class_version_known(const jinst_class *c) { return c->major_version <= JINST_MAX_SUPPORTED_MAJOR; }
uint16_t jinst_class_access_flags(const jinst_class *c) { return c->access_flags; }
uint16_t jinst_class_this_class(const jinst_class *c) { return c->this_class; }
uint16_t jinst_class_super_class(const jinst_class *c) { return c->super_class; }
uint16_t jinst_class_interface_count(const jinst_class *c) { return c->interface_count; }

uint16_t jinst_class_interface(const jinst_class *c, uint16_t i)
{
	return i < c->interface_count ? jinst_be16(c->bytes + c->interfaces_offset + 2u * i) : 0;
}

const uint8_t *jinst_class_name(const jinst_class *c, uint16_t *len)
{
	return jinst_cp_name(c, c->this_class, len);
}

jinst_attr_list *jinst_class_attrs(jinst_class *c) { return &c->attrs; }
uint16_t jinst_class_field_count(const jinst_class *c) { return c->field_count; }
uint16_t jinst_class_method_count(const jinst_class *c) { return c->method_count; }

jinst_member *jinst_class_field(jinst_class *c, uint16_t i)
{
	return i < c->field_count ? &c->fields[i] : NULL;
}

jinst_member *jinst_class_method(jinst_class *c, uint16_t i)
{
	return i < c->method_count ? &c->methods[i] : NULL;
}

uint16_t jinst_member_access_flags(const jinst_member *m) { return m->access_flags; }
uint16_t jinst_member_name_index(const jinst_member *m) { return m->name_index; }
uint16_t jinst_member_descriptor_index(const jinst_member *m) { return m->descriptor_index; }
uint32_t jinst_member_offset(const jinst_member *m) { return m->offset; }
int jinst_member_attrs_load(jinst_member *m, jinst_diag *diag)
{
	if (m->attrs_read)
		return 0;
	jinst_reader r;
	jinst_reader_init(&r, m->cls->bytes, m->offset + 6, m->end);
	int rc = jinst_attrs_read(m->cls, &r, m->method ? JINST_CTX_METHOD : JINST_CTX_FIELD, &m->attrs, diag);
	if (rc) {
		m->attrs.count = 0;
		m->attrs.items = NULL;
		return rc;
	}
	m->attrs_read = true;
	return 0;
}

jinst_attr_list *jinst_member_attrs(jinst_member *m)
{
	return jinst_member_attrs_load(m, NULL) == 0 ? &m->attrs : NULL;
}

jinst_attr *jinst_attr_find(const jinst_attr_list *list, enum jinst_attr_kind kind)
{
	if (!list) /* jinst_member_attrs out of memory */
		return NULL;
	for (uint16_t i = 0; i < list->count; i++)
		if (list->items[i].kind == kind)
			return &list->items[i];
	return NULL;
}

int jinst_attrs_write(jinst_class *c, jinst_attr_list *list, bool from_model, jinst_buf *out, jinst_diag *diag)
{
	jinst_buf_u2(out, list->count);
	for (uint16_t i = 0; i < list->count; i++) {
		jinst_attr *a = &list->items[i];
		jinst_buf_u2(out, a->name_index);
		if (a->info && !a->modified && (!from_model || a->kind == JINST_ATTR_UNKNOWN)) {
			jinst_buf_u4(out, a->length);
			jinst_buf_bytes(out, a->info, a->length);
			continue;
		}
		size_t at = out->len;
		jinst_buf_u4(out, 0);
		int rc = jinst_attr_encode(c, a, from_model, out, diag);
		if (rc)
			return rc;
		size_t n = out->len - at - 4;
		if (n > UINT32_MAX)
			return jinst_fail(diag, JINST_ETOOLARGE, a->offset, "attribute longer than 4 GiB");
		jinst_buf_patch_u4(out, at, (uint32_t)n);
	}
	return out->oom ? jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory writing attributes") : 0;
}
