/*
 * Names as Java writes them, for the outputs that name classes and places
 * (alloc's and monitor's, one form so that a site can be matched between
 * the two files): no JNI, so the outputs' unit tests link it alone.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "modules.h"

void jinst_agent_java_name(const char *t, char *out, size_t size)
{
	static const char prims[] = "ZCFDBSIJ";
	static const char *const names[] = {"boolean", "char", "float", "double", "byte", "short", "int", "long"};
	size_t dims = 0;
	while (t[dims] == '[')
		dims++;
	const char *base = t + dims;
	char tmp[512];
	if (dims && *base && *base != 'L' && strchr(prims, *base))
		snprintf(tmp, sizeof tmp, "%s", names[strchr(prims, *base) - prims]);
	else
		snprintf(tmp, sizeof tmp, "%.*s", (int)(dims ? strcspn(base + 1, ";") : strlen(base)), dims ? base + 1 : base);
	for (char *p = tmp; *p; p++)
		if (*p == '/')
			*p = '.';
	size_t k = (size_t)snprintf(out, size, "%s", tmp);
	for (size_t i = 0; i < dims && k + 2 < size; i++, k += 2)
		memcpy(out + k, "[]", 3);
}

void jinst_agent_place_name(const char *class_name, const char *method, const char *source, uint32_t line, char *out,
                            size_t size)
{
	char cls[512];
	jinst_agent_java_name(class_name, cls, sizeof cls);
	if (line)
		snprintf(out, size, "%s.%s(%s:%u)", cls, method, source ? source : "Unknown Source", line);
	else
		snprintf(out, size, "%s.%s(%s)", cls, method, source ? source : "Unknown Source");
}
