/* Lists the methods of a class file with the jinst public API.
 *   list_methods FILE.class */
#include <stdio.h>
#include <stdlib.h>

#include <jinst/classfile.h>

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0, got;
	do {
		if (cap - n < 4096) {
			uint8_t *p = realloc(buf, cap = cap * 2 + 4096);
			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: list_methods FILE.class\n");
		return 2;
	}
	size_t len;
	uint8_t *bytes = read_all(argv[1], &len);
	if (!bytes) {
		perror(argv[1]);
		return 1;
	}
	jinst_class *cls;
	jinst_diag diag;
	if (jinst_class_parse(&cls, bytes, len, NULL, NULL, &diag) != 0) {
		char msg[512];
		jinst_diag_format(&diag, msg, sizeof(msg));
		fprintf(stderr, "%s: %s\n", argv[1], msg);
		free(bytes);
		return 1;
	}
	uint16_t n;
	const uint8_t *name = jinst_class_name(cls, &n);
	printf("class %.*s\n", (int)n, (const char *)name);
	for (uint16_t i = 0; i < jinst_class_method_count(cls); i++) {
		jinst_member *m = jinst_class_method(cls, i);
		uint16_t nl, dl;
		const uint8_t *mn = jinst_cp_utf8(cls, jinst_member_name_index(m), &nl);
		const uint8_t *md = jinst_cp_utf8(cls, jinst_member_descriptor_index(m), &dl);
		printf("  0x%04x %.*s%.*s\n", jinst_member_access_flags(m), (int)nl, (const char *)mn, (int)dl,
		       (const char *)md);
	}
	jinst_class_free(cls);
	free(bytes);
	return 0;
}
