#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void grow(text *t, size_t need)
{
	if (t->cap - t->len > need)
		return;
	size_t cap = t->cap ? t->cap : 4096;
	while (cap - t->len <= need)
		cap *= 2;
	char *p = realloc(t->data, cap);
	if (!p) {
		fputs("jinst: out of memory\n", stderr);
		exit(1);
	}
	t->data = p;
	t->cap = cap;
}

void text_put(text *t, const char *s, size_t n)
{
	grow(t, n);
	memcpy(t->data + t->len, s, n);
	t->len += n;
	t->data[t->len] = '\0';
}

void text_printf(text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char small[512];
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		text_put(t, small, (size_t)n);
		return;
	}
	grow(t, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

void text_free(text *t)
{
	free(t->data);
	t->data = NULL;
	t->len = t->cap = 0;
}
