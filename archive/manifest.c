/*
 * Signed jars (include/jinst/archive.h): the signature's files, and the
 * manifest without the digests that bind it to the classes. And one
 * attribute of the main section read (Class-Path).
 *
 * A signed jar carries, per signed entry, a section in META-INF/MANIFEST.MF
 * ("Name: p/C.class" and one "ALG-Digest: ..." per algorithm) and the
 * signature files (.SF with digests of those sections, and a block file:
 * .RSA, .DSA, .EC). A tool that changes a class breaks the digest; the JVM
 * then refuses the class (SecurityException), so the signature must go:
 * its files removed and the digest attributes stripped. What stays must be
 * the manifest the user wrote, so the stripper works on lines and spans of
 * the input and copies what it keeps byte for byte: no attribute is
 * re-wrapped at 72 bytes, no line ending normalised, nothing reordered.
 *
 * The manifest is untrusted text. The stripper never fails on its content:
 * a line that is no attribute is kept, a continuation (a line starting with
 * a space, JAR File Specification "Manifest Specification") follows the
 * fate of the attribute it continues, and a section is what lies between
 * blank lines. The output is never longer than the input.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jinst/archive.h"
#include "jinst/util.h"

bool jinst_archive_is_signature_file(const char *name)
{
	static const char *const ext[] = {".SF", ".DSA", ".RSA", ".EC"};
	if (strncasecmp(name, "META-INF/", 9) != 0)
		return false;
	const char *base = name + 9;
	if (!*base || strchr(base, '/'))
		return false;
	if (strncasecmp(base, "SIG-", 4) == 0)
		return true;
	size_t n = strlen(base);
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t k = strlen(ext[i]);
		if (n > k && strcasecmp(base + n - k, ext[i]) == 0)
			return true;
	}
	return false;
}

/* The end of the line starting at p (past its CRLF, LF or CR) and the
 * length of its text without the terminator. */
static size_t line_end(const uint8_t *in, size_t len, size_t p, size_t *text_len)
{
	size_t q = p;
	while (q < len && in[q] != '\n' && in[q] != '\r')
		q++;
	*text_len = q - p;
	if (q < len && in[q] == '\r') {
		q++;
		if (q < len && in[q] == '\n')
			q++;
	} else if (q < len) {
		q++;
	}
	return q;
}

static bool is_digest(const uint8_t *line, size_t n)
{
	const uint8_t *colon = memchr(line, ':', n);
	static const char suffix[] = "-Digest";
	size_t k = sizeof(suffix) - 1;
	if (!colon || (size_t)(colon - line) < k)
		return false;
	return strncasecmp((const char *)colon - k, suffix, k) == 0;
}

static bool is_name(const uint8_t *line, size_t n)
{
	return n >= 5 && strncasecmp((const char *)line, "Name:", 5) == 0;
}

/* One section after the main one, [p, end) with its lines, into out at *o:
 * kept unless its digests were removed and only its Name is left. */
static void strip_section(const uint8_t *in, size_t len, size_t p, size_t end, uint8_t *out, size_t *o,
                          size_t *removed)
{
	size_t start = *o, gone = 0;
	bool keep = true, other = false;
	while (p < end) {
		size_t n, q = line_end(in, len, p, &n);
		if (n == 0) { /* the blank line that closes it */
			memcpy(out + *o, in + p, q - p);
			*o += q - p;
			p = q;
			continue;
		}
		if (in[p] != ' ') {
			keep = !is_digest(in + p, n);
			gone += !keep;
			other |= keep && !is_name(in + p, n);
		}
		if (keep) {
			memcpy(out + *o, in + p, q - p);
			*o += q - p;
		}
		p = q;
	}
	if (gone && !other)
		*o = start;
	*removed += gone;
}

int jinst_archive_manifest_strip(uint8_t **out, size_t *out_len, size_t *removed, const uint8_t *in, size_t len,
                                 jinst_diag *diag)
{
	*out = NULL;
	*out_len = 0;
	*removed = 0;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf) {
		return jinst_diag_fail(diag, JINST_ENOMEM, "META-INF/MANIFEST.MF", "out of memory for %zu bytes", len);
	}
	/* The main section, up to and with its first blank line, as it is. */
	size_t p = 0, n;
	while (p < len) {
		size_t q = line_end(in, len, p, &n);
		p = q;
		if (n == 0)
			break;
	}
	memcpy(buf, in, p);
	size_t o = p;
	/* Then each section with the blank line that ends it (a blank line
	 * more is a section of its own, kept). */
	while (p < len) {
		size_t end = p;
		while (end < len) {
			end = line_end(in, len, end, &n);
			if (n == 0)
				break;
		}
		strip_section(in, len, p, end, buf, &o, removed);
		p = end;
	}
	*out = buf;
	*out_len = o;
	return 0;
}

/* Whether the line (n bytes) is the attribute name followed by ':'. */
static bool is_attribute(const uint8_t *line, size_t n, const char *name)
{
	size_t k = strlen(name);
	return n > k && line[k] == ':' && strncasecmp((const char *)line, name, k) == 0;
}

/* The value of one attribute of the main section: after "Name:" and its
 * spaces, its continuation lines joined (each without its leading space),
 * as the JDK's Manifest reads it. */
int jinst_archive_manifest_attribute(char **value, const uint8_t *in, size_t len, const char *name, jinst_diag *diag)
{
	*value = NULL;
	size_t p = 0, n;
	while (p < len) {
		size_t q = line_end(in, len, p, &n);
		if (n == 0)
			break; /* the main section's end */
		if (!is_attribute(in + p, n, name)) {
			p = q;
			continue;
		}
		char *v = malloc(len - p + 1);
		if (!v)
			return jinst_diag_fail(diag, JINST_ENOMEM, "META-INF/MANIFEST.MF", "out of memory");
		size_t k = strlen(name) + 1, o = 0;
		while (k < n && in[p + k] == ' ')
			k++;
		memcpy(v, in + p + k, n - k);
		o = n - k;
		for (p = q; p < len && in[p] == ' '; p = q) {
			q = line_end(in, len, p, &n);
			size_t m = n ? n - 1 : 0; /* n >= 1: the line holds its space */
			memcpy(v + o, in + p + 1, m);
			o += m;
		}
		v[o] = '\0';
		*value = v;
		return 0;
	}
	return JINST_ENOTFOUND;
}
