/*
 * What the C tests share: CHECK with its counters, and reading whole files.
 * Header-only; each test program includes it once.
 */
#ifndef JINST_TESTLIB_H
#define JINST_TESTLIB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned failures, checks;

/* Counts the check; when cond is false, counts a failure and prints where,
 * the condition and the printf-style explanation. */
#define CHECK(cond, ...)                                                         \
	do {                                                                         \
		checks++;                                                                \
		if (!(cond)) {                                                           \
			failures++;                                                          \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);               \
			printf(__VA_ARGS__);                                                 \
			putchar('\n');                                                       \
		}                                                                        \
	} while (0)

/* Prints "N checks, N failed"; the exit status for main. */
static inline int check_report(void)
{
	printf("%u checks, %u failed\n", checks, failures);
	return failures ? 1 : 0;
}

/* The whole file in a buffer of exactly its size (at least 1 byte), so ASan
 * sees any read past its end; NULL when it cannot be read. */
static inline uint8_t *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = n >= 0 ? malloc(n > 0 ? (size_t)n : 1) : NULL;
	if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = buf ? (size_t)n : 0;
	return buf;
}

/* test_read_file of dir/rel; a file that cannot be read ends the test. */
static inline uint8_t *test_load(const char *dir, const char *rel, size_t *len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	uint8_t *buf = test_read_file(path, len);
	if (!buf) {
		printf("FAIL cannot read %s\n", path);
		exit(1);
	}
	return buf;
}

#ifdef JINST_CLASSFILE_H
#include <string.h>

/* The method name with descriptor desc (NULL: any) of c; a test without it
 * cannot go on, so its absence ends the program. */
static inline jinst_member *test_method(jinst_class *c, const char *name, const char *desc)
{
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		uint16_t nl, dl;
		const uint8_t *n = jinst_cp_utf8(c, jinst_member_name_index(m), &nl);
		const uint8_t *d = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &dl);
		if (nl == strlen(name) && !memcmp(n, name, nl) && (!desc || (dl == strlen(desc) && !memcmp(d, desc, dl))))
			return m;
	}
	printf("FAIL no method %s%s\n", name, desc ? desc : "");
	exit(1);
}

/* A verification type as a failure message shows it. */
static inline void test_ftype_text(const jinst_ftype *t, char *buf, size_t size)
{
	static const char *const tags[] = {"top", "int", "float", "double", "long", "null", "uninitializedThis",
	                                   "object", "uninitialized"};
	if (t->tag == JINST_VT_OBJECT)
		snprintf(buf, size, "%.*s", t->name_length, (const char *)t->name);
	else if (t->tag == JINST_VT_UNINITIALIZED)
		snprintf(buf, size, "uninitialized(%u)", t->value);
	else
		snprintf(buf, size, "%s", t->tag <= 8 ? tags[t->tag] : "?");
}
#endif

#endif
