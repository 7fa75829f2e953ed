/*
 * Writes archive/class_histogram.h: how often each deflate symbol occurs
 * in the class files of the jars given (ISA-L's isal_update_histogram over
 * each class, summed), from which the archive layer makes its Huffman code
 * for class files. Made from every jar of the corpus (scripts/corpus.sh puts
 * them in /tmp/jinst-corpus/jars), given as arguments:
 *
 *     build/bin/jinst-class-histogram JAR... >archive/class_histogram.h
 *
 * The sums do not depend on the order of the jars or of their entries.
 */
#include <isa-l/igzip_lib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/archive.h"

static struct isal_huff_histogram h;

/* The .class entries of the jar at path into h; the count, or -1. */
static long add_jar(const char *path)
{
	jinst_archive *a;
	jinst_diag d;
	if (jinst_archive_open(&a, path, NULL, &d)) {
		fprintf(stderr, "%s: %s\n", path, d.message);
		return -1;
	}
	long n = 0;
	for (size_t i = 0; i < jinst_archive_count(a); i++) {
		jinst_archive_entry e;
		uint8_t *bytes;
		size_t len, k;
		if (jinst_archive_entry_at(&e, a, i, &d) || (k = strlen(e.name)) < 6 || strcmp(e.name + k - 6, ".class"))
			continue;
		if (jinst_archive_read(&bytes, &len, a, i, &d)) {
			fprintf(stderr, "%s: %s: %s\n", path, e.name, d.message);
			continue;
		}
		isal_update_histogram(bytes, (int)len, &h);
		free(bytes);
		n++;
	}
	jinst_archive_close(a);
	return n;
}

static void print_counts(const char *name, const uint64_t *counts, int n)
{
	printf("static const uint32_t %s[%d] = {\n\t", name, n);
	int col = 8;
	for (int i = 0; i < n; i++) {
		char tok[32];
		int w = snprintf(tok, sizeof(tok), "%llu%s", (unsigned long long)counts[i], i + 1 < n ? "," : "");
		if (col + w + 1 > 100) {
			printf("\n\t");
			col = 8;
		} else if (i) {
			putchar(' ');
			col++;
		}
		fputs(tok, stdout);
		col += w;
	}
	printf("\n};\n");
}

int main(int argc, char **argv)
{
	long classes = 0;
	for (int i = 1; i < argc; i++) {
		long n = add_jar(argv[i]);
		if (n < 0)
			return 1;
		classes += n;
	}
	if (!classes) {
		fprintf(stderr, "usage: jinst-class-histogram JAR...   (jars with class files)\n");
		return 2;
	}
	char grouped[32];
	snprintf(grouped, sizeof(grouped), classes >= 1000 ? "%ld,%03ld" : "%ld", classes >= 1000 ? classes / 1000 : classes,
	         classes % 1000);
	printf("/* How often each deflate symbol occurs in class files: the counts\n"
	       " * isal_update_histogram gives over the %s classes of the corpus's jars\n"
	       " * (../shared/corpus.sh), literals and lengths (0-285) and distances (0-29).\n"
	       " * pack.c makes its Huffman code for class files from them, once: a code\n"
	       " * fitted to class files, where igzip's general one writes 14%% more.\n"
	       " * Made by bench/class_histogram.c (its comment says how); a constant, so\n"
	       " * that the output is the same on every machine and at every -j. */\n"
	       "#ifndef JINST_ARCHIVE_CLASS_HISTOGRAM_H\n#define JINST_ARCHIVE_CLASS_HISTOGRAM_H\n\n"
	       "#include <stdint.h>\n\n",
	       grouped);
	print_counts("class_litlen_counts", h.lit_len_histogram, ISAL_DEF_LIT_LEN_SYMBOLS);
	printf("\n");
	print_counts("class_dist_counts", h.dist_histogram, ISAL_DEF_DIST_SYMBOLS);
	printf("\n#endif\n");
	return 0;
}
