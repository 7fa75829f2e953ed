/* jinst dump: a javap -v style listing. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "jinst/archive.h"

#define DUMP_USAGE "usage: jinst dump FILE.class | JAR|JMOD|FOLDER [ENTRY...]\n"

typedef struct dump_ctx {
	int classes, failures;
	jinst_arena *arena;
	const char *path; /* the jar, jmod or folder the entries are in */
	bool jmod;        /* path is a jmod: its classes are under classes/ */
	char **entries;   /* what to list; none: every class */
	int nentries;
	bool *matched; /* per entry: a class answered to it */
} dump_ctx;

/* An entry name (p/C.class), internal name (p/C) or binary name (p.C). */
static bool entry_is(const char *entry, const char *want)
{
	size_t n = strlen(entry), k = strlen(want);
	if (strcmp(entry, want) == 0)
		return true;
	if (n != k + 6 || strcmp(entry + k, ".class") != 0)
		return false;
	bool internal = true, binary = true;
	for (size_t i = 0; i < k; i++) {
		internal = internal && entry[i] == want[i];
		binary = binary && (entry[i] == '/' ? want[i] == '.' : entry[i] == want[i]);
	}
	return internal || binary;
}

/* Whether the class the walk named name is one the entries ask for; each
 * entry it answers is marked. The walk names a class "JAR!ENTRY" or
 * "FOLDER/ENTRY"; a jmod's ENTRY has classes/ before the class's path,
 * which the names of the help (java/lang/String) leave out. */
static bool wanted(dump_ctx *d, const char *name)
{
	if (!d->nentries)
		return true;
	size_t pl = strlen(d->path);
	const char *rel = strncmp(name, d->path, pl) == 0 ? name + pl : name;
	bool jmod = false;
	if (*rel == '!') {
		rel++;
		jmod = d->jmod;
	} else {
		/* In a folder: FOLDER/p/C.class, or FOLDER/lib/a.jmod!classes/p/C.class. */
		while (*rel == '/')
			rel++;
		const char *bang = strrchr(rel, '!');
		if (bang) {
			jmod = bang - rel > 5 && memcmp(bang - 5, ".jmod", 5) == 0;
			rel = bang + 1;
		}
	}
	const char *bare = jmod && strncmp(rel, "classes/", 8) == 0 ? rel + 8 : rel;
	bool any = false;
	for (int i = 0; i < d->nentries; i++)
		if (entry_is(rel, d->entries[i]) || entry_is(bare, d->entries[i]))
			any = d->matched[i] = true;
	return any;
}

static int dump_one(void *p, const char *name, const uint8_t *bytes, size_t len)
{
	dump_ctx *d = p;
	if (!wanted(d, name))
		return 0;
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

/* What path holds when ENTRY arguments follow it: 1 a jar or jmod (jmod
 * set), 2 a folder, 0 anything else (a class file, coverage data), -1 it
 * cannot be read, which the walk reports. */
static int container(const char *path, bool *jmod)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (S_ISDIR(st.st_mode))
		return 2;
	FILE *f = fopen(path, "rb");
	uint8_t head[4] = {0};
	size_t got = f ? fread(head, 1, sizeof head, f) : 0;
	if (f)
		fclose(f);
	if (!f)
		return -1;
	*jmod = got == 4 && memcmp(head, "JM\x01\x00", 4) == 0;
	return *jmod || (got >= 2 && memcmp(head, "PK", 2) == 0) ? 1 : 0;
}

int cmd_dump(int argc, char **argv)
{
	if (argc < 1) {
		fprintf(stderr, "jinst dump: no file given\n" DUMP_USAGE);
		return 2;
	}
	for (int i = 0; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "jinst dump: unknown option '%s'\n" DUMP_USAGE, argv[i]);
			return 2;
		}
	if (argc == 1) {
		int rc = cli_dump_covdata(argv[0]);
		if (rc >= 0)
			return rc;
	}
	dump_ctx d = {.path = argv[0], .entries = argv + 1, .nentries = argc - 1};
	int kind = d.nentries ? container(d.path, &d.jmod) : -1;
	if (kind == 0) {
		fprintf(stderr, "jinst dump: %s is no jar, jmod or folder: ENTRY names a class inside one ('%s')\n" DUMP_USAGE,
		        d.path, d.entries[0]);
		return 2;
	}
	d.matched = calloc((size_t)d.nentries + 1, sizeof(*d.matched));
	if (!d.matched || jinst_arena_new(&d.arena)) {
		free(d.matched);
		fputs("jinst: out of memory\n", stderr);
		return 1;
	}
	/* The walk reads only the entries it is given, which saves inflating a
	 * whole java.base.jmod for one class; it knows no jmod's classes/ and
	 * selects nothing in a folder, where wanted() does. Short of memory,
	 * the walk reads every class and wanted() alone selects. */
	static const char *const jmod_prefixes[] = {"classes/", "classes."};
	const char **pick = calloc(3 * (size_t)d.nentries + 1, sizeof(*pick));
	char **made = calloc(2 * (size_t)d.nentries + 1, sizeof(*made));
	int npick = 0, nmade = 0;
	bool short_of_memory = !pick || !made;
	for (int i = 0; !short_of_memory && kind == 1 && i < d.nentries; i++) {
		pick[npick++] = d.entries[i];
		for (size_t j = 0; d.jmod && !short_of_memory && j < 2; j++) {
			size_t len = strlen(jmod_prefixes[j]) + strlen(d.entries[i]) + 1;
			short_of_memory = !(made[nmade] = malloc(len));
			if (!short_of_memory) {
				snprintf(made[nmade], len, "%s%s", jmod_prefixes[j], d.entries[i]);
				pick[npick++] = made[nmade++];
			}
		}
	}
	if (short_of_memory)
		npick = 0;
	jinst_walk(d.path, npick ? pick : NULL, npick, dump_one, dump_error, &d);
	for (int i = 0; i < nmade; i++)
		free(made[i]);
	free(made);
	free(pick);
	jinst_arena_free(d.arena);
	for (int i = 0; kind > 0 && i < d.nentries; i++)
		if (!d.matched[i]) {
			fprintf(stderr, "jinst dump: no class in %s matches '%s'\n", d.path, d.entries[i]);
			d.failures++;
		}
	free(d.matched);
	return d.failures ? 1 : 0;
}
