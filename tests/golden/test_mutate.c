/*
 * Bad input everywhere: every valid class under the folders given is
 *   - truncated at every byte offset: parsing must fail with EMALFORMED and
 *     a diagnostic whose offset lies inside the truncated input (a class
 *     file's last byte always belongs to its structure, so no proper prefix
 *     is a class file);
 *   - changed at every byte to a few other values (0x00, 0xFF, the byte + 1,
 *     the byte with its top bit flipped): each variant goes through the fuzz
 *     target's checks (tests/fuzz/fuzz_classfile.c): parse fails cleanly, or
 *     the default write is exact and the deep write fails cleanly or
 *     round-trips deterministically. Any violation aborts.
 * Every input is a malloc block of its exact size, so ASan builds catch any
 * read past the end.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/fuzz_classfile.h"
#include "jinst/classfile.h"
#include "../testlib.h"

static unsigned classes, truncations, variants; /* failures: testlib.h */

static void truncate_everywhere(const char *path, const uint8_t *bytes, size_t len)
{
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *p = malloc(cut ? cut : 1);
		if (!p)
			abort();
		memcpy(p, bytes, cut);
		jinst_class *cls = NULL;
		jinst_diag d;
		memset(&d, 0, sizeof(d));
		int rc = jinst_class_parse(&cls, p, cut, NULL, NULL, &d);
		if (rc == 0) {
			printf("FAIL %s truncated to %zu bytes: accepted\n", path, cut);
			jinst_class_free(cls);
			failures++;
		} else if (rc != JINST_EMALFORMED || d.code != rc || d.offset == JINST_NO_OFFSET ||
		           d.offset > cut || !d.message[0]) {
			char buf[512];
			jinst_diag_format(&d, buf, sizeof(buf));
			printf("FAIL %s truncated to %zu bytes: rc %d, %s\n", path, cut, rc, buf);
			failures++;
		}
		free(p);
		truncations++;
	}
}

static void change_everywhere(const uint8_t *bytes, size_t len)
{
	uint8_t *p = malloc(len);
	if (!p)
		abort();
	memcpy(p, bytes, len);
	for (size_t i = 0; i < len; i++) {
		uint8_t orig = p[i];
		const uint8_t values[] = {0x00, 0xFF, (uint8_t)(orig + 1), (uint8_t)(orig ^ 0x80)};
		for (size_t v = 0; v < sizeof(values); v++) {
			if (values[v] == orig || (v > 0 && values[v] == values[0]) || (v > 1 && values[v] == values[1]) ||
			    (v == 3 && values[3] == values[2]))
				continue;
			p[i] = values[v];
			LLVMFuzzerTestOneInput(p, len);
			variants++;
		}
		p[i] = orig;
	}
	free(p);
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	size_t n = strlen(path);
	if (type != FTW_F || n < 6 || strcmp(path + n - 6, ".class") != 0)
		return 0;
	size_t len;
	uint8_t *bytes = test_read_file(path, &len);
	if (!bytes) {
		printf("FAIL cannot read %s\n", path);
		failures++;
		return 0;
	}
	/* The inputs must be valid classes, or the test proves nothing. */
	jinst_class *cls = NULL;
	jinst_diag d;
	memset(&d, 0, sizeof(d));
	if (jinst_class_parse(&cls, bytes, len, NULL, NULL, &d) != 0) {
		char buf[512];
		jinst_diag_format(&d, buf, sizeof(buf));
		printf("FAIL %s: the valid class does not parse: %s\n", path, buf);
		failures++;
		free(bytes);
		return 0;
	}
	jinst_class_free(cls);
	truncate_everywhere(path, bytes, len);
	change_everywhere(bytes, len);
	free(bytes);
	classes++;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (nftw(argv[i], visit, 16, FTW_PHYS) != 0) {
			perror(argv[i]);
			return 2;
		}
	printf("%u classes, %u truncations, %u changed variants, %u failures\n", classes, truncations, variants,
	       failures);
	return failures || !classes ? 1 : 0;
}
