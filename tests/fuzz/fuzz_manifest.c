/*
 * libFuzzer target for the manifest stripper of signed jars
 * (jinst_archive_manifest_strip, archive/manifest.c): the bytes as a
 * META-INF/MANIFEST.MF.
 *
 * Whatever the input, the stripper succeeds; the output is never longer
 * than the input and starts with the main section as it was; stripping it
 * again removes nothing and gives the same bytes (a fixed point); a second
 * run over the input gives the same bytes and count (determinism); and
 * when nothing was removed the output is the input. The main section's
 * Class-Path and Manifest-Version read cleanly, the same in any case of
 * their names. Checks are always on.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_classfile.h"
#include "jinst/archive.h"

/* The length of the main section: up to and with its first blank line. */
static size_t main_section(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		size_t start = i;
		while (i < n && p[i] != '\n' && p[i] != '\r')
			i++;
		bool blank = i == start;
		if (i < n && p[i] == '\r' && i + 1 < n && p[i + 1] == '\n')
			i++;
		if (i < n)
			i++;
		if (blank)
			break;
	}
	return i;
}

/* An attribute of the main section: absent, or a value with no line break
 * no longer than the section, found again the same, in any case. */
static void check_attribute(const uint8_t *data, size_t size, const char *name)
{
	char *v = NULL, *w = NULL, upper[64];
	jinst_diag d;
	int rc = jinst_archive_manifest_attribute(&v, data, size, name, &d);
	CHECK(rc == 0 || (rc == JINST_ENOTFOUND && !v), "attribute %s: %d", name, rc);
	if (rc)
		return;
	CHECK(strlen(v) <= main_section(data, size) && !strpbrk(v, "\r\n"), "attribute %s: a value of %zu bytes "
	      "from a main section of %zu, or with a line break", name, strlen(v), main_section(data, size));
	size_t k = 0;
	for (; name[k] && k < sizeof(upper) - 1; k++)
		upper[k] = (char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 32 : name[k]);
	upper[k] = '\0';
	CHECK(jinst_archive_manifest_attribute(&w, data, size, upper, &d) == 0 && strcmp(v, w) == 0,
	      "attribute %s differs in another case", name);
	free(v);
	free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *out, *again, *twice;
	size_t len, len2, len3, removed, removed2, removed3;
	jinst_diag d;
	CHECK(jinst_archive_manifest_strip(&out, &len, &removed, data, size, &d) == 0, "strip failed");
	CHECK(len <= size, "output of %zu bytes from %zu", len, size);
	size_t head = main_section(data, size);
	CHECK(len >= head && memcmp(out, data, head) == 0, "the main section changed");
	CHECK(removed || (len == size && memcmp(out, data, size) == 0), "nothing removed, yet the bytes changed");
	CHECK(jinst_archive_manifest_strip(&again, &len2, &removed2, out, len, &d) == 0, "second strip failed");
	CHECK(removed2 == 0 && len2 == len && memcmp(again, out, len) == 0, "not a fixed point (%zu removed)",
	      removed2);
	CHECK(jinst_archive_manifest_strip(&twice, &len3, &removed3, data, size, &d) == 0, "third strip failed");
	CHECK(removed3 == removed && len3 == len && memcmp(twice, out, len) == 0, "not deterministic");
	free(out);
	free(again);
	free(twice);
	check_attribute(data, size, "Class-Path");
	check_attribute(data, size, "Manifest-Version");
	return 0;
}
