/*
 * What a coverage data file says of one class, method by method, through
 * the coverage library's placement of the class file (the same ids the
 * agent's probes used):
 *   cov_methods CLASS_FILE DATA.cov
 * prints, for each method with code, "name descriptor: v v v" (the data of
 * its probes, in id order: 0/1 for booleans, hit counts for counts), and
 * fails when the data has no record of the class with its identity and
 * probe count. With CLASS_FILE "-", lists the data's sessions ("session
 * NAME") and classes ("name probe_count"), one a line. For agent/tests/jvm.sh's coverage cases.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/coverage.h"
#include "jinst/covdata.h"
#include "jinst/instrument.h"
#include "../../tests/testlib.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cov_methods CLASS_FILE DATA.cov\n");
		return 2;
	}
	if (!strcmp(argv[1], "-")) {
		jinst_covdata *data;
		if (jinst_covdata_read_file(&data, argv[2], NULL)) {
			fprintf(stderr, "cov_methods: cannot read %s\n", argv[2]);
			return 2;
		}
		for (size_t i = 0; i < jinst_covdata_session_count(data); i++)
			printf("session %s\n", jinst_covdata_session_at(data, i)->name);
		for (size_t i = 0; i < jinst_covdata_class_count(data); i++)
			printf("%s %u\n", jinst_covdata_class_at(data, i)->name, jinst_covdata_class_at(data, i)->probe_count);
		jinst_covdata_free(data);
		return 0;
	}
	size_t len;
	uint8_t *bytes = test_read_file(argv[1], &len);
	jinst_class *c;
	jinst_covdata *data;
	jinst_coverage_plan *plan;
	jinst_diag d;
	if (!bytes || jinst_class_parse(&c, bytes, len, NULL, NULL, &d) || jinst_coverage_place(&plan, c, &d) ||
	    jinst_covdata_read_file(&data, argv[2], &d)) {
		fprintf(stderr, "cov_methods: cannot read %s or %s\n", argv[1], argv[2]);
		return 2;
	}
	uint16_t n;
	const uint8_t *name = jinst_class_name(c, &n);
	char cname[1024];
	snprintf(cname, sizeof cname, "%.*s", (int)n, (const char *)name);
	const jinst_covdata_class *rec = jinst_covdata_find(data, cname, jinst_instrument_identity(bytes, len));
	if (!rec || rec->probe_count != plan->probe_count) {
		fprintf(stderr, "cov_methods: %s: %s (plan: %u probes)\n", cname,
		        rec ? "probe counts differ" : "no record of this identity", plan->probe_count);
		return 1;
	}
	printf("%s %u probes %s\n", cname, rec->probe_count, rec->kind == JINST_COVDATA_COUNTS ? "counts" : "booleans");
	for (uint16_t i = 0; i < plan->method_count; i++) {
		const jinst_coverage_method *m = &plan->methods[i];
		jinst_member *mm = jinst_class_method(c, m->method_index);
		uint16_t l1, l2;
		const uint8_t *mn = jinst_cp_utf8(c, jinst_member_name_index(mm), &l1);
		const uint8_t *md = jinst_cp_utf8(c, jinst_member_descriptor_index(mm), &l2);
		printf("%.*s %.*s:", (int)l1, (const char *)mn, (int)l2, (const char *)md);
		for (uint32_t k = 0; k < m->site_count; k++) {
			uint32_t id = m->sites[k].id;
			if (rec->kind == JINST_COVDATA_COUNTS)
				printf(" %llu", (unsigned long long)rec->counts[id]);
			else
				printf(" %d", rec->booleans[id] ? 1 : 0);
		}
		putchar('\n');
	}
	jinst_covdata_free(data);
	jinst_class_free(c);
	free(bytes);
	return 0;
}
