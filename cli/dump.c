/* jinst dump: a javap -v style listing. */
#include <string.h>

#include "cli.h"
#include "jinst/archive.h"

typedef struct dump_ctx {
	int classes, failures;
	jinst_arena *arena;
} dump_ctx;

static int dump_one(void *p, const char *name, const uint8_t *bytes, size_t len)
{
	dump_ctx *d = p;
	jinst_arena_reset(d->arena);
	jinst_class *c;
	jinst_diag diag;
	char msg[600];
	if (d->classes++)
		fputs("\n", stdout);
	printf("Classfile %s (%zu bytes)\n", name, len);
	if (jinst_class_parse(&c, bytes, len, d->arena, NULL, &diag)) {
		jinst_diag_format(&diag, msg, sizeof(msg));
		fprintf(stderr, "jinst: %s: %s\n", name, msg);
		d->failures++;
		return 0;
	}
	if (!jinst_class_version_known(c))
		fprintf(stderr, "note: %s: class-file version %u is newer than this jinst knows (%u)\n", name,
		        jinst_class_major_version(c), JINST_MAX_SUPPORTED_MAJOR);
	text t = {0};
	int rc = render_class(c, RENDER_DUMP, &t, &diag);
	if (t.len)
		fwrite(t.data, 1, t.len, stdout);
	text_free(&t);
	if (rc) {
		jinst_diag_format(&diag, msg, sizeof(msg));
		fprintf(stderr, "jinst: %s: %s\n", name, msg);
		d->failures++;
	}
	return 0;
}

static void dump_error(void *p, const char *name, const char *message)
{
	dump_ctx *d = p;
	fprintf(stderr, "jinst: %s: %s\n", name, message);
	d->failures++;
}

int cmd_dump(int argc, char **argv)
{
	if (argc < 1) {
		fprintf(stderr, "jinst dump: no file given\nusage: jinst dump FILE.class | JAR [ENTRY...]\n");
		return 2;
	}
	for (int i = 0; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "jinst dump: unknown option '%s'\nusage: jinst dump FILE.class | JAR [ENTRY...]\n", argv[i]);
			return 2;
		}
	if (argc == 1) {
		int rc = cli_dump_covdata(argv[0]);
		if (rc >= 0)
			return rc;
	}
	dump_ctx d = {0};
	if (jinst_arena_new(&d.arena)) {
		fputs("jinst: out of memory\n", stderr);
		return 1;
	}
	jinst_walk(argv[0], (const char *const *)argv + 1, argc - 1, dump_one, dump_error, &d);
	jinst_arena_free(d.arena);
	if (argc > 1 && d.classes == 0) {
		fprintf(stderr, "jinst dump: no class in %s matches the entries given\n", argv[0]);
		return 1;
	}
	return d.failures ? 1 : 0;
}
