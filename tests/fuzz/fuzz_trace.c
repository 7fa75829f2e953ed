/*
 * libFuzzer target for the writers of the call tree (report/): the folded
 * stacks and the flame graph page (jinst_trace_write_folded, _flame), on
 * the bytes as a tree snapshot (little-endian int64s: thread count; per
 * thread, node count and nodes of parent, method, self ns), which the
 * agent takes from the runtime while threads run, so nothing in it is
 * trusted. Method ids name frames whose text comes from the input too,
 * with the characters that could end a script block.
 *
 * Whatever the input, both writers succeed; the page's data block holds no
 * '<', '>' or '&' (no name can end it) and ends where the page's script
 * begins; its root's inclusive time is the sum of the folded stacks' times
 * (one tree, two views, nothing pruned); a second run gives the same bytes.
 * Checks are always on.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_classfile.h"
#include "jinst/report.h"

typedef struct input {
	const uint8_t *data;
	size_t size;
	char cls[64][24];
} input;

/* Names for ids below 64 (the rest have none): a class made of input
 * bytes among "<>&\"/</script>" and letters, a method "m". */
static int names(void *ctx, uint32_t id, const char **c, const char **n, const char **d)
{
	static const char alphabet[] = "ab/<>&\"\\\t\xc3\xa9\xed\xa0</script><!--";
	input *in = ctx;
	if (id >= 64)
		return -1;
	char *s = in->cls[id];
	size_t k = 0;
	for (size_t i = 0; i < 8 && k < sizeof in->cls[id] - 1; i++) {
		uint8_t b = in->size ? in->data[(id * 8 + i) % in->size] : 0;
		s[k++] = alphabet[b % (sizeof alphabet - 1)];
	}
	s[k] = 0;
	*c = s;
	*n = "m";
	*d = "()V";
	return 0;
}

static char *write_one(int flame, const int64_t *tree, size_t len, input *in, size_t *out_len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, out_len);
	CHECK(f != NULL, "open_memstream");
	int r = flame ? jinst_trace_write_flame(f, tree, len, 0, tree, len, "t", JINST_TRACE_CLOCK_WALL, names, in)
	              : jinst_trace_write_folded(f, tree, len, 0, JINST_TRACE_CLOCK_WALL, names, in);
	CHECK(fclose(f) == 0 && r == 0, "%s writer failed: %d", flame ? "flame" : "folded", r);
	return buf;
}

/* The sum of the folded lines' numbers (the first line is a comment). */
static int64_t folded_sum(const char *s)
{
	int64_t sum = 0;
	for (const char *line = strchr(s, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		const char *end = strchr(line + 1, '\n'), *sp = end;
		while (sp > line && *sp != ' ')
			sp--;
		sum += strtoll(sp + 1, NULL, 10);
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = size / 8;
	int64_t *tree = malloc((len ? len : 1) * sizeof *tree);
	CHECK(tree != NULL, "memory");
	for (size_t i = 0; i < len; i++) {
		uint64_t v = 0;
		for (int b = 7; b >= 0; b--)
			v = v << 8 | data[8 * i + (size_t)b];
		/* small values most of the time, so that trees form */
		tree[i] = (v >> 63) ? (int64_t)v : (int64_t)(v % 97) - 1;
	}
	input *in = calloc(1, sizeof *in);
	CHECK(in != NULL, "memory");
	in->data = data;
	in->size = size;
	size_t n1, n2, n3;
	char *folded = write_one(0, tree, len, in, &n1);
	char *page = write_one(1, tree, len, in, &n2), *again = write_one(1, tree, len, in, &n3);
	CHECK(n2 == n3 && memcmp(page, again, n2) == 0, "not deterministic");
	const char *open = "<script id=\"data\" type=\"application/json\">";
	char *d = strstr(page, open);
	CHECK(d != NULL, "no data block");
	d += strlen(open);
	char *end = strstr(d, "</script>");
	CHECK(end != NULL && strncmp(end, "</script>\n<script>", 18) == 0, "the data block does not end at the script");
	size_t dl = (size_t)(end - d);
	CHECK(!memchr(d, '<', dl) && !memchr(d, '>', dl) && !memchr(d, '&', dl), "a raw <, > or & in the data");
	const char *root = strstr(d, "\"nodes\":[-1,0,");
	CHECK(root != NULL, "no root node");
	int64_t total = strtoll(root + strlen("\"nodes\":[-1,0,"), NULL, 10);
	CHECK(total == folded_sum(folded), "root %" PRId64 ", folded stacks %" PRId64, total, folded_sum(folded));
	free(folded);
	free(page);
	free(again);
	free(in);
	free(tree);
	return 0;
}
