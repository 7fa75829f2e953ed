/*
 * StackMapTable compression against the tables compilers wrote: for every
 * method of every class under the given folders, expand the table to full
 * frames, compress them again, and check that the result expands to the
 * same frames; then install every compressed table, write the class, parse
 * the output and check the same once more. Counts how many tables come out
 * byte-identical to the compiler's (javac makes the same choices, other
 * compilers may not: that figure is reported, not asserted).
 *
 *   test_stackmap DIR...      a DIR that does not exist is skipped
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>

#include "jinst/classfile.h"
#include "../testlib.h"

static unsigned long classes, tables, identical, frames_seen;

static bool frames_same(const jinst_full_frame *a, const jinst_full_frame *b, uint32_t n, uint32_t *at)
{
	for (uint32_t i = 0; i < n; i++) {
		*at = i;
		if (a[i].offset != b[i].offset || a[i].nlocals != b[i].nlocals || a[i].nstack != b[i].nstack)
			return false;
		for (uint16_t k = 0; k < a[i].nlocals; k++)
			if (!jinst_ftype_equal(&a[i].locals[k], &b[i].locals[k]))
				return false;
		for (uint16_t k = 0; k < a[i].nstack; k++)
			if (!jinst_ftype_equal(&a[i].stack[k], &b[i].stack[k]))
				return false;
	}
	return true;
}

/* The method's StackMapTable attribute and model, or NULL. */
static jinst_attr *method_stack_map(jinst_class *cls, jinst_member *m, jinst_stack_map **map)
{
	jinst_attr *ca = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
	void *model;
	if (!ca || jinst_attr_decode(cls, ca, &model, NULL))
		return NULL;
	jinst_attr *sa = jinst_attr_find(&((jinst_code *)model)->attrs, JINST_ATTR_STACK_MAP_TABLE);
	if (!sa || jinst_attr_decode(cls, sa, &model, NULL))
		return NULL;
	*map = model;
	return sa;
}

static void check_class(const char *path, const uint8_t *bytes, size_t len)
{
	jinst_class *cls;
	jinst_diag d;
	if (jinst_class_parse(&cls, bytes, len, NULL, NULL, &d))
		return; /* the round-trip tests own parse failures */
	classes++;
	uint16_t n = jinst_class_method_count(cls);
	jinst_full_frame **expected = calloc(n ? n : 1, sizeof(*expected));
	uint32_t *counts = calloc(n ? n : 1, sizeof(*counts));
	for (uint16_t i = 0; i < n; i++) {
		jinst_member *m = jinst_class_method(cls, i);
		jinst_stack_map *map;
		jinst_attr *sa = method_stack_map(cls, m, &map);
		if (!sa)
			continue;
		tables++;
		frames_seen += map->count;
		int rc = jinst_stack_map_expand(cls, m, map, &expected[i], &d);
		CHECK(rc == 0, "%s method %u: expand: %s", path, i, d.message);
		if (rc)
			continue;
		counts[i] = map->count;
		jinst_stack_map *again;
		rc = jinst_stack_map_compress(cls, m, expected[i], map->count, &again, &d);
		CHECK(rc == 0, "%s method %u: compress: %s", path, i, d.message);
		if (rc)
			continue;
		jinst_full_frame *back;
		uint32_t at = 0;
		rc = jinst_stack_map_expand(cls, m, again, &back, &d);
		CHECK(rc == 0 && frames_same(expected[i], back, map->count, &at),
		      "%s method %u: compressed table expands to other frames (frame %u)", path, i, at);
		bool same = again->count == map->count;
		for (uint32_t k = 0; same && k < map->count; k++)
			same = again->frames[k].type == map->frames[k].type;
		identical += same;
		CHECK(jinst_code_set_stack_map(cls, m, again, &d) == 0, "%s method %u: set: %s", path, i, d.message);
	}
	uint8_t *out;
	size_t out_len;
	int rc = jinst_class_write(cls, NULL, &out, &out_len, &d);
	CHECK(rc == 0, "%s: write: %s", path, d.message);
	jinst_class *again = NULL;
	if (!rc) {
		rc = jinst_class_parse(&again, out, out_len, NULL, NULL, &d);
		CHECK(rc == 0, "%s: written class does not parse: %s", path, d.message);
	}
	for (uint16_t i = 0; again && i < n; i++) {
		if (!expected[i])
			continue;
		jinst_member *m = jinst_class_method(again, i);
		jinst_stack_map *map;
		jinst_full_frame *back;
		uint32_t at = 0;
		bool ok = method_stack_map(again, m, &map) && map->count == counts[i] &&
		          jinst_stack_map_expand(again, m, map, &back, &d) == 0 && frames_same(expected[i], back, counts[i], &at);
		CHECK(ok, "%s method %u: written table differs (frame %u)", path, i, at);
	}
	jinst_class_free(again);
	if (!rc)
		free(out);
	free(expected);
	free(counts);
	jinst_class_free(cls);
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	size_t n = strlen(path);
	if (type != FTW_F || n < 6 || strcmp(path + n - 6, ".class") != 0 || !S_ISREG(st->st_mode))
		return 0;
	size_t len;
	uint8_t *bytes = test_read_file(path, &len);
	CHECK(bytes != NULL, "cannot read %s", path);
	if (bytes)
		check_class(path, bytes, len);
	free(bytes);
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			printf("%s: not present, skipped\n", argv[i]);
			continue;
		}
		nftw(argv[i], visit, 32, FTW_PHYS);
	}
	printf("%lu classes, %lu StackMapTables (%lu frames), %lu compressed to the same frame types\n", classes, tables,
	       frames_seen, identical);
	CHECK(tables > 0, "no StackMapTable found under the given folders");
	return check_report();
}
