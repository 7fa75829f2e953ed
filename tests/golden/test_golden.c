/*
 * Golden invalid class files: each file in the folder named on the command
 * line is run through the library and must fail exactly as expected.txt says
 * (error code, byte offset of the defect, a substring of the diagnostic).
 *   mode parse: jinst_class_parse() fails.
 *   mode deep:  parsing succeeds (the defect is inside an attribute, which is
 *               decoded lazily), a default write copies the bytes back
 *               unchanged, and a deep write (JINST_WRITE_FROM_MODEL), which
 *               decodes everything, fails.
 * The expectations come from tests/golden/gen_invalid.py, which derives the
 * offsets from the class-file structure, not from jinst's output.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"
#include "../testlib.h"

static bool contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return true;
	}
	return n == 0;
}

/* Compares a failure with the expectation; prints and returns false on a mismatch. */
static bool check_diag(const char *file, int rc, const jinst_diag *d, const char *code, unsigned long offset,
                       const char *msg)
{
	char buf[512];
	jinst_diag_format(d, buf, sizeof(buf));
	bool ok = true;
	if (rc >= 0) {
		printf("FAIL %s: accepted, expected %s at %lu\n", file, code, offset);
		return false;
	}
	if (strcmp(jinst_strerror(rc), code) != 0 || d->code != rc) {
		printf("FAIL %s: returned %s (diag %s), expected %s\n", file, jinst_strerror(rc),
		       jinst_strerror(d->code), code);
		ok = false;
	}
	if (d->offset != offset) {
		printf("FAIL %s: offset %lu, expected %lu\n", file,
		       d->offset == JINST_NO_OFFSET ? (unsigned long)-1 : (unsigned long)d->offset, offset);
		ok = false;
	}
	if (strcmp(msg, "-") != 0 && !contains_nocase(buf, msg)) {
		printf("FAIL %s: diagnostic lacks \"%s\"\n", file, msg);
		ok = false;
	}
	if (d->message[0] == '\0') {
		printf("FAIL %s: empty message\n", file);
		ok = false;
	}
	printf("%s %s: %s\n", ok ? "ok  " : "    ", file, buf);
	return ok;
}

static bool run_one(const char *dir, const char *file, const char *code, const char *mode, unsigned long offset,
                    const char *msg)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	size_t len;
	uint8_t *bytes = test_read_file(path, &len);
	if (!bytes) {
		printf("FAIL %s: cannot read %s\n", file, path);
		return false;
	}
	jinst_class *cls = NULL;
	jinst_diag d;
	memset(&d, 0, sizeof(d));
	int rc = jinst_class_parse(&cls, bytes, len, NULL, NULL, &d);
	bool ok;
	if (strcmp(mode, "parse") == 0) {
		ok = check_diag(file, rc, &d, code, offset, msg);
		if (rc == 0)
			jinst_class_free(cls);
	} else if (rc != 0) {
		char buf[512];
		jinst_diag_format(&d, buf, sizeof(buf));
		printf("FAIL %s: parse should succeed (the defect is inside an attribute): %s\n", file, buf);
		ok = false;
	} else {
		ok = true;
		uint8_t *out = NULL;
		size_t out_len = 0;
		memset(&d, 0, sizeof(d));
		rc = jinst_class_write(cls, NULL, &out, &out_len, &d);
		if (rc != 0 || out_len != len || memcmp(out, bytes, len) != 0) {
			printf("FAIL %s: default write (rc %d, %zu bytes) is not a copy of the input\n", file, rc,
			       out_len);
			ok = false;
		}
		free(out);
		out = NULL;
		jinst_write_options opts = JINST_WRITE_OPTIONS_INIT;
		opts.flags = JINST_WRITE_FROM_MODEL;
		memset(&d, 0, sizeof(d));
		rc = jinst_class_write(cls, &opts, &out, &out_len, &d);
		if (rc == 0)
			free(out);
		ok = check_diag(file, rc, &d, code, offset, msg) && ok;
		jinst_class_free(cls);
	}
	free(bytes);
	return ok;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/expected.txt", argv[1]);
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 2;
	}
	char line[1024];
	unsigned total = 0, failed = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		char file[256], code[32], mode[16];
		unsigned long offset;
		int used = 0;
		if (sscanf(line, "%255s %31s %15s %lu %n", file, code, mode, &offset, &used) != 4 || !used) {
			fprintf(stderr, "%s: bad line: %s\n", path, line);
			fclose(f);
			return 2;
		}
		total++;
		if (!run_one(argv[1], file, code, mode, offset, line + used))
			failed++;
	}
	fclose(f);
	printf("%u golden files, %u failed\n", total, failed);
	return failed || !total ? 1 : 0;
}
