/*
 * The writer. Untouched parts of a class are copied from the input: the
 * writer walks the structure (constant pool, header, each field and method,
 * each attribute list) and emits either a span of the original bytes or a
 * freshly encoded element. Adjacent original spans are merged into one copy,
 * so an untouched class costs one memcpy and a class with one edited method
 * costs three. With JINST_WRITE_FROM_MODEL nothing is copied: every constant,
 * member and attribute is encoded from the model, which is how the deep
 * round trip proves the encoders right.
 */
#include "internal.h"

typedef struct writer {
	const jinst_class *c;
	jinst_buf *out;
	uint32_t run_start, run_end; /* pending span of original bytes */
} writer;

static void flush(writer *w)
{
	if (w->run_end > w->run_start)
		jinst_buf_bytes(w->out, w->c->bytes + w->run_start, w->run_end - w->run_start);
	w->run_start = w->run_end = 0;
}

static void copy(writer *w, uint32_t from, uint32_t to)
{
	if (from == to)
		return;
	if (w->run_end != from || w->run_end == w->run_start) {
		flush(w);
		w->run_start = from;
	}
	w->run_end = to;
}

static bool list_modified(const jinst_attr_list *l)
{
	for (uint16_t i = 0; i < l->count; i++)
		if (l->items[i].modified || !l->items[i].info)
			return true;
	return false;
}

/* access_flags, this_class, super_class and the interfaces. */
static void write_header(const jinst_class *c, jinst_buf *out)
{
	jinst_buf_u2(out, c->access_flags);
	jinst_buf_u2(out, c->this_class);
	jinst_buf_u2(out, c->super_class);
	jinst_buf_u2(out, c->interface_count);
	for (uint16_t i = 0; i < c->interface_count; i++)
		jinst_buf_u2(out, jinst_class_interface(c, i));
}

static int write_member(jinst_class *c, jinst_member *m, bool method, bool from_model, jinst_buf *out,
                        jinst_diag *diag)
{
	jinst_buf_u2(out, m->access_flags);
	jinst_buf_u2(out, m->name_index);
	jinst_buf_u2(out, m->descriptor_index);
	int rc = jinst_member_attrs_load(m, diag);
	if (!rc)
		rc = jinst_attrs_write(c, &m->attrs, from_model, out, diag);
	if (rc)
		jinst_diag_member(diag, c, m, method);
	return rc;
}

static int write_members(writer *w, jinst_class *c, jinst_member *ms, uint16_t count, uint32_t count_at,
                         bool method, jinst_diag *diag)
{
	if (method && c->methods_added) {
		flush(w);
		jinst_buf_u2(w->out, count);
	} else {
		copy(w, count_at, count_at + 2);
	}
	for (uint16_t i = 0; i < count; i++) {
		jinst_member *m = &ms[i];
		if (!m->modified && (!m->attrs_read || !list_modified(&m->attrs))) {
			copy(w, m->offset, m->end);
			continue;
		}
		flush(w);
		int rc = write_member(c, m, method, false, w->out, diag);
		if (rc)
			return rc;
	}
	return 0;
}

static int write_copying(jinst_class *c, jinst_buf *out, jinst_diag *diag)
{
	writer w = {.c = c, .out = out};
	int rc;
	if (jinst_cp_count(c) != c->cp_count) {
		copy(&w, 0, 8);
		flush(&w);
		jinst_buf_u2(out, jinst_cp_count(c));
		copy(&w, 10, c->cp_end);
		flush(&w);
		jinst_cp_write_added(c, out);
	} else {
		copy(&w, 0, c->cp_end);
	}
	if (c->header_modified) {
		flush(&w);
		write_header(c, out);
	} else {
		copy(&w, c->cp_end, c->fields_offset);
	}
	rc = write_members(&w, c, c->fields, c->field_count, c->fields_offset, false, diag);
	if (!rc)
		rc = write_members(&w, c, c->methods, c->method_count, c->methods_offset, true, diag);
	if (rc)
		return rc;
	if (!list_modified(&c->attrs)) {
		copy(&w, c->attrs_offset, c->len);
		flush(&w);
		return 0;
	}
	flush(&w);
	rc = jinst_attrs_write(c, &c->attrs, false, out, diag);
	if (rc)
		jinst_diag_where(diag, "class attributes");
	return rc;
}

static int write_from_model(jinst_class *c, jinst_buf *out, jinst_diag *diag)
{
	jinst_buf_u4(out, 0xCAFEBABE);
	jinst_buf_u2(out, c->minor_version);
	jinst_buf_u2(out, c->major_version);
	jinst_buf_u2(out, jinst_cp_count(c));
	jinst_cp_write_original(c, out);
	jinst_cp_write_added(c, out);
	write_header(c, out);
	int rc = 0;
	jinst_buf_u2(out, c->field_count);
	for (uint16_t i = 0; i < c->field_count && !rc; i++)
		rc = write_member(c, &c->fields[i], false, true, out, diag);
	jinst_buf_u2(out, c->method_count);
	for (uint16_t i = 0; i < c->method_count && !rc; i++)
		rc = write_member(c, &c->methods[i], true, true, out, diag);
	if (rc)
		return rc;
	rc = jinst_attrs_write(c, &c->attrs, true, out, diag);
	if (rc)
		jinst_diag_where(diag, "class attributes");
	return rc;
}

int jinst_class_write(jinst_class *c, const jinst_write_options *opts, uint8_t **out, size_t *len,
                      jinst_diag *diag)
{
	if (diag) {
		diag->code = 0;
		diag->offset = JINST_NO_OFFSET;
		diag->where[0] = diag->message[0] = '\0';
	}
	*out = NULL;
	*len = 0;
	bool from_model = opts && (opts->flags & JINST_WRITE_FROM_MODEL);
	const jinst_allocator *alloc = opts ? opts->allocator : NULL;
	jinst_buf b = {0};
	if (!jinst_buf_reserve(&b, (size_t)c->len + 64))
		return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory for the output");
	int rc = from_model ? write_from_model(c, &b, diag) : write_copying(c, &b, diag);
	if (!rc && b.oom)
		rc = jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "out of memory for the output");
	if (rc) {
		jinst_buf_free(&b);
		return rc;
	}
	if (alloc) {
		uint8_t *p = alloc->alloc(alloc->ctx, b.len ? b.len : 1);
		if (!p) {
			jinst_buf_free(&b);
			return jinst_fail(diag, JINST_ENOMEM, JINST_NO_OFFSET, "allocator refused %zu bytes", b.len);
		}
		memcpy(p, b.data, b.len);
		jinst_buf_free(&b);
		*out = p;
	} else {
		*out = b.data;
	}
	*len = b.len;
	return 0;
}
