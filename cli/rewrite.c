/*
 * jinst rewrite: every method of every class through the code editor or
 * the frame computation, written to an output of the input's shape.
 *
 * --frames=keep (the default) decodes every method into the code editor and
 * encodes it again: branches laid out anew, tables remapped, the frames
 * kept and re-encoded in their most compact form.
 *
 * --frames=recompute drops each method's StackMapTable and computes it anew
 * by type inference, answering class-hierarchy questions from the inputs
 * themselves, then --classpath, then the JDK's runtime image, without ever
 * loading a class into a JVM. That repairs classes whose frames another tool
 * got wrong; it is also how the tests prove the inference right on whole
 * corpora (tests/jvm verifies the output in HotSpot).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jinst/classpath.h"
#include "jinst/edit.h"
#include "jinst/infer.h"
#include "jinst/util.h"
#include "mirror.h"

enum frames_mode { FRAMES_KEEP, FRAMES_RECOMPUTE };

typedef struct rewrite {
	enum frames_mode frames;
	jinst_hierarchy hierarchy;
	_Atomic size_t hierarchy_failures; /* classes failed for a class the hierarchy does not know */
	_Atomic size_t methods;            /* methods rewritten */
	_Atomic size_t without_code;       /* abstract and native methods of classes rewritten */
	_Atomic size_t left_alone;         /* methods of classes skipped or failed (copied as they are) */
} rewrite;

static char *failure(const char *what, const jinst_diag *d)
{
	char msg[700], full[1400];
	jinst_diag_format(d, msg, sizeof(msg));
	snprintf(full, sizeof(full), "%s%s", what, msg);
	return strdup(full);
}

static enum mirror_result rewrite_class(void *ctx, jinst_arena *arena, const char *name, const uint8_t *in, size_t len,
                                        uint8_t **out, size_t *out_len, char **message)
{
	(void)name;
	rewrite *W = ctx;
	jinst_class *c;
	jinst_diag d;
	if (jinst_class_parse(&c, in, len, arena, NULL, &d)) {
		*message = failure("not rewritten: ", &d);
		return MIRROR_FAILED;
	}
	/* Below version 50 the verifier infers types itself (JVMS 4.10.2). */
	if (W->frames == FRAMES_RECOMPUTE && jinst_class_major_version(c) < 50) {
		*message = strdup("class file version below 50 (the verifier infers its frames)");
		atomic_fetch_add(&W->left_alone, jinst_class_method_count(c));
		return MIRROR_SKIPPED;
	}
	size_t methods = 0, count = jinst_class_method_count(c);
	for (uint16_t i = 0; i < jinst_class_method_count(c); i++) {
		jinst_member *m = jinst_class_method(c, i);
		if (!jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE))
			continue;
		int rc;
		if (W->frames == FRAMES_RECOMPUTE) {
			rc = jinst_frames_recompute(c, m, &W->hierarchy, &d);
		} else {
			/* Through the editor with nothing edited: decoded, laid out,
			 * tables remapped and frames kept, encoded anew. */
			jinst_edit_options eo = JINST_EDIT_OPTIONS_INIT;
			eo.flags = JINST_EDIT_REENCODE;
			jinst_edit *ed;
			rc = jinst_edit_open(&ed, c, m, &eo, &d);
			if (!rc) {
				rc = jinst_edit_commit(ed, &d);
				jinst_edit_free(ed);
			}
		}
		if (rc) {
			uint16_t nl = 0, dl = 0;
			const uint8_t *mn = jinst_cp_utf8(c, jinst_member_name_index(m), &nl);
			const uint8_t *md = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &dl);
			char what[600];
			snprintf(what, sizeof(what), "method %.*s%.*s: ", (int)(mn ? nl : 0), mn ? (const char *)mn : "",
			         (int)(md ? dl : 0), md ? (const char *)md : "");
			*message = failure(what, &d);
			if (rc == JINST_EHIERARCHY)
				atomic_fetch_add(&W->hierarchy_failures, 1);
			atomic_fetch_add(&W->left_alone, count);
			return MIRROR_FAILED;
		}
		methods++;
	}
	if (jinst_class_write(c, NULL, out, out_len, &d)) {
		*message = failure("write: ", &d);
		atomic_fetch_add(&W->left_alone, count);
		return MIRROR_FAILED;
	}
	atomic_fetch_add(&W->methods, methods);
	atomic_fetch_add(&W->without_code, count - methods);
	if (*out_len == len && memcmp(*out, in, len) == 0)
		return MIRROR_UNCHANGED;
	return MIRROR_CHANGED;
}

/* The archives inside a folder input answer for their classes too (a lib/
 * of jars), after the folder itself, in name order. */
static void add_archives(jinst_classpath *cp, const char *dir, int depth)
{
	char **names;
	size_t n;
	jinst_diag d;
	if (depth > 16 || jinst_dir_list(&names, &n, dir, &d) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(len);
		if (!path)
			break;
		snprintf(path, len, "%s/%s", dir, names[i]);
		struct stat st;
		size_t k = strlen(names[i]);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			add_archives(cp, path, depth + 1);
		else if (S_ISREG(st.st_mode) && k > 4 &&
		         (strcasecmp(names[i] + k - 4, ".jar") == 0 || strcasecmp(names[i] + k - 4, ".zip") == 0))
			jinst_classpath_add(cp, path, &d);
		free(path);
	}
	jinst_dir_list_free(names, n);
}

typedef struct rewrite_args {
	const char *output, *classpath, *jdk;
	const char **inputs;
	int ninputs;
} rewrite_args;

/* 0, or 2 after printing a usage error. */
static int parse_args(rewrite *W, mirror_options *o, rewrite_args *A, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int took = mirror_option(o, &A->output, argc, argv, &i);
		if (took < 0)
			return 2;
		if (took) {
			continue;
		} else if (strcmp(a, "--frames=recompute") == 0) {
			W->frames = FRAMES_RECOMPUTE;
		} else if (strcmp(a, "--frames=keep") == 0) {
			W->frames = FRAMES_KEEP;
		} else if (strncmp(a, "--frames=", 9) == 0) {
			fprintf(stderr, "jinst rewrite: --frames takes keep or recompute, not '%s'\n", a + 9);
			return 2;
		} else if ((strcmp(a, "--classpath") == 0 || strcmp(a, "-cp") == 0 || strcmp(a, "--jdk") == 0) &&
		           i + 1 >= argc) {
			fprintf(stderr, "jinst rewrite: %s needs a value\n", a);
			return 2;
		} else if (strcmp(a, "--classpath") == 0 || strcmp(a, "-cp") == 0) {
			A->classpath = argv[++i];
		} else if (strcmp(a, "--jdk") == 0) {
			A->jdk = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "jinst rewrite: unknown option '%s' (see jinst rewrite --help)\n", a);
			return 2;
		} else {
			A->inputs[A->ninputs++] = a;
		}
	}
	if (!A->ninputs || !A->output) {
		fprintf(stderr, "jinst rewrite: %s (see jinst rewrite --help)\n",
		        !A->ninputs ? "no input" : "no output (-o OUT)");
		return 2;
	}
	return 0;
}

/* The class path the hierarchy answers from: the inputs first (one that is
 * no class path entry, a lone class file or a bad jar, is left to the
 * mirror to report), then --classpath, then the JDK. 0, or the exit
 * status after a message. */
static int make_hierarchy(rewrite *W, jinst_classpath **cp, const rewrite_args *A)
{
	jinst_diag d;
	if (jinst_classpath_new(cp)) {
		fprintf(stderr, "jinst rewrite: out of memory\n");
		return 1;
	}
	for (int i = 0; i < A->ninputs; i++) {
		jinst_classpath_add(*cp, A->inputs[i], &d);
		add_archives(*cp, A->inputs[i], 0);
	}
	int rc = A->classpath ? jinst_classpath_add_list(*cp, A->classpath, &d) : 0;
	char *home = A->jdk ? strdup(A->jdk) : cli_default_jdk();
	if (!rc && home)
		rc = jinst_classpath_add_jdk(*cp, home, &d);
	if (!rc && !home)
		fprintf(stderr, "jinst rewrite: no JDK found (--jdk or JAVA_HOME): only the inputs and --classpath answer\n");
	free(home);
	if (!rc)
		rc = jinst_classpath_hierarchy(*cp, &W->hierarchy);
	if (rc) {
		char msg[800];
		jinst_diag_format(&d, msg, sizeof(msg));
		fprintf(stderr, "jinst rewrite: %s\n", msg);
		return 2;
	}
	return 0;
}

int cmd_rewrite(int argc, char **argv)
{
	const char *inputs[argc + 1];
	rewrite_args A = {.inputs = inputs};
	rewrite W = {.frames = FRAMES_KEEP};
	/* The classes' words are about their bytes: a class every method of
	 * which went through and came out as it was is unchanged, and its
	 * methods are counted rewritten all the same. */
	mirror_options o = MIRROR_OPTIONS_INIT("rewrite", "changed");
	o.transform = rewrite_class;
	o.ctx = &W;
	o.progress = isatty(2);
	int rc = parse_args(&W, &o, &A, argc, argv);
	if (rc)
		return rc;
	jinst_classpath *cp = NULL;
	if ((rc = make_hierarchy(&W, &cp, &A)) != 0) {
		jinst_classpath_free(cp);
		return rc;
	}
	mirror_stats s;
	int run = mirror_run(A.inputs, A.ninputs, A.output, &o, &s);
	jinst_classpath_free(cp);
	if (run == 0) {
		mirror_print_summary(&o, &s);
		size_t methods = atomic_load(&W.methods), same = s.counts[MIRROR_UNCHANGED];
		printf("%zu methods rewritten", methods);
		if (methods && same)
			printf(" (%zu %s out byte for byte as %s in, counted unchanged)", same,
			       same == 1 ? "class came" : "classes came", same == 1 ? "it went" : "they went");
		printf("; left alone: %zu without code, %zu in classes skipped or failed; "
		       "%zu classes failed for classes the hierarchy does not know\n",
		       atomic_load(&W.without_code), atomic_load(&W.left_alone), atomic_load(&W.hierarchy_failures));
	}
	mirror_stats_free(&s);
	return run != 0 || s.counts[MIRROR_FAILED] || s.errors ? 1 : 0;
}
