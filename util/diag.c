/* A failure into a caller's jinst_diag (include/jinst/util.h). */
#include <stdarg.h>
#include <stdio.h>

#include "jinst/util.h"

int jinst_diag_vfail(jinst_diag *diag, int code, const char *where, const char *fmt, va_list ap)
{
	if (!diag)
		return code;
	diag->code = code;
	diag->offset = JINST_NO_OFFSET;
	snprintf(diag->where, sizeof(diag->where), "%s", where);
	vsnprintf(diag->message, sizeof(diag->message), fmt, ap);
	return code;
}

int jinst_diag_fail(jinst_diag *diag, int code, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = jinst_diag_vfail(diag, code, where, fmt, ap);
	va_end(ap);
	return rc;
}
