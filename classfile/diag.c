/* Error codes, diagnostics and the growable output buffer. */
#include <stdio.h>

#include "internal.h"

const char *jinst_strerror(int code)
{
	switch (code) {
	case JINST_OK: return "OK";
	case JINST_EMALFORMED: return "EMALFORMED";
	case JINST_EUNSUPPORTED: return "EUNSUPPORTED";
	case JINST_ETOOLARGE: return "ETOOLARGE";
	case JINST_ENOMEM: return "ENOMEM";
	case JINST_EHIERARCHY: return "EHIERARCHY";
	case JINST_EIO: return "EIO";
	case JINST_ERULES: return "ERULES";
	case JINST_EINVAL: return "EINVAL";
	case JINST_ENOTFOUND: return "ENOTFOUND";
	default: return "EUNKNOWN";
	}
}

int jinst_fail(jinst_diag *diag, int code, uint32_t offset, const char *fmt, ...)
{
	if (!diag)
		return code;
	/* The innermost failure is the most precise: keep it when an outer
	 * layer reports the same error again. */
	if (diag->code != 0 && diag->code == code)
		return code;
	diag->code = code;
	diag->offset = offset;
	diag->where[0] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(diag->message, sizeof(diag->message), fmt, ap);
	va_end(ap);
	return code;
}

void jinst_diag_where(jinst_diag *diag, const char *fmt, ...)
{
	if (!diag || diag->where[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(diag->where, sizeof(diag->where), fmt, ap);
	va_end(ap);
}

void jinst_diag_member(jinst_diag *diag, const jinst_class *cls, const jinst_member *m, bool method)
{
	if (!diag || diag->where[0])
		return;
	uint16_t nl = 0, dl = 0;
	const uint8_t *n = jinst_cp_utf8(cls, m->name_index, &nl);
	const uint8_t *d = jinst_cp_utf8(cls, m->descriptor_index, &dl);
	if (!n)
		n = (const uint8_t *)"?", nl = 1;
	if (!d)
		d = (const uint8_t *)"?", dl = 1;
	if (nl > 60)
		nl = 60;
	if (dl > 80)
		dl = 80;
	if (method)
		jinst_diag_where(diag, "method %.*s%.*s", (int)nl, (const char *)n, (int)dl, (const char *)d);
	else
		jinst_diag_where(diag, "field %.*s:%.*s", (int)nl, (const char *)n, (int)dl, (const char *)d);
}

void jinst_diag_format(const jinst_diag *diag, char *buf, size_t size)
{
	if (!size)
		return;
	int n = snprintf(buf, size, "%s", jinst_strerror(diag->code));
	if (n < 0 || (size_t)n >= size)
		return;
	if (diag->offset != JINST_NO_OFFSET)
		n += snprintf(buf + n, size - (size_t)n, " at offset %u", (unsigned)diag->offset);
	if ((size_t)n < size && diag->where[0])
		n += snprintf(buf + n, size - (size_t)n, " (%s)", diag->where);
	if ((size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ": %s", diag->message);
}

bool jinst_buf_grow(jinst_buf *b, size_t need)
{
	if (b->oom)
		return false;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len < need) {
		if (cap > SIZE_MAX / 2) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	uint8_t *p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void jinst_buf_free(jinst_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
