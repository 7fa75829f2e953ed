/* jinst report's outputs. Every file is written to a temporary file beside
 * it and renamed over it, so a reader never sees half a report and a
 * failure leaves the old one. The HTML report is written into a temporary
 * folder beside DIR and renamed into place; an existing DIR is replaced
 * only when it is empty or a report jinst wrote (it holds
 * .jinst-report), never a folder of something else. Source files come from
 * --sourcefiles folders (ROOT/PKG/NAME, as JaCoCo's DirectorySourceFileLocator
 * finds them), converted from --encoding to UTF-8 by iconv, a byte that
 * does not decode shown as U+FFFD (as Java's decoder does for JaCoCo). */
#define _XOPEN_SOURCE 700 /* nftw */
#define _DEFAULT_SOURCE   /* mkdtemp */
#include <errno.h>
#include <ftw.h>
#include <iconv.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "jinst/util.h"
#include "report_cli.h"

#define MARKER CLI_MARK_REPORT

/* ---- checks ------------------------------------------------------------------ */

static int check_parent(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return -1;
	const char *dir = dirname(copy);
	int ok = access(dir, W_OK | X_OK) == 0;
	if (!ok)
		fprintf(stderr, "jinst report: %s: cannot be written: %s: %s\n", path, dir, strerror(errno));
	free(copy);
	return ok ? 0 : -1;
}

/* A converter from --encoding (UTF-8 when not given) to UTF-8, or -1.
 * Java's names are accepted as jacococli accepts them: iconv knows most
 * (Cp1252, UTF8, SJIS), its own spelling of others differs by '_' for
 * '-' (ISO8859_1, EUC_JP, KOI8_R), and Java's names of UTF-16 are its own. */
static iconv_t open_decoder(const char *enc)
{
	static const char *const java[][2] = {{"UnicodeBigUnmarked", "UTF-16BE"},
	                                      {"UnicodeLittleUnmarked", "UTF-16LE"},
	                                      {"UnicodeBig", "UTF-16"},
	                                      {"UnicodeLittle", "UTF-16LE"}};
	if (!enc)
		enc = "UTF-8";
	for (size_t i = 0; i < sizeof java / sizeof *java; i++)
		if (strcasecmp(enc, java[i][0]) == 0)
			enc = java[i][1];
	iconv_t cd = iconv_open("UTF-8", enc);
	char name[64];
	if (cd != (iconv_t)-1 || strlen(enc) >= sizeof name || !strchr(enc, '_'))
		return cd;
	strcpy(name, enc);
	for (char *c = name; *c; c++)
		*c = *c == '_' ? '-' : *c;
	return iconv_open("UTF-8", name);
}

/* DIR may be written: it does not exist, is empty, or holds an earlier report. */
static bool html_replaceable(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return true;
	int ok = S_ISDIR(st.st_mode) ? cli_folder_replaceable(dir, MARKER) : -1;
	if (ok < 0)
		fprintf(stderr, "jinst report: %s: not a folder that can be read\n", dir);
	else if (!ok)
		fprintf(stderr, "jinst report: %s: exists and is not a jinst report: not replaced\n", dir);
	return ok > 0;
}

/* A file output names a file: "F/" or a folder would only fail later, at
 * the rename, after all the work. */
static int check_file(const char *flag, const char *path)
{
	struct stat st;
	size_t n = strlen(path);
	if ((n && path[n - 1] == '/') || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
		fprintf(stderr, "jinst report: %s: names a folder: %s takes a file\n", path, flag);
		return -1;
	}
	return check_parent(path);
}

int report_check_outputs(const report_args *a)
{
	const char *flags[] = {"--xml", "--csv", "--lcov"};
	const char *files[] = {a->xml, a->csv, a->lcov};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		if (files[i] && check_file(flags[i], files[i]))
			return -1;
	if (a->html && check_parent(a->html))
		return -1;
	if (a->html && !html_replaceable(a->html))
		return -1;
	iconv_t cd = open_decoder(a->encoding);
	if (cd == (iconv_t)-1) {
		fprintf(stderr, "jinst report: --encoding %s: unknown encoding\n", a->encoding);
		return -1;
	}
	iconv_close(cd);
	return 0;
}

/* ---- sources ----------------------------------------------------------------- */

static bool locate(void *ctx, const char *pkg, const char *name, char *buf, size_t size)
{
	const report_args *a = ctx;
	for (size_t i = 0; i < a->sourcefile_count; i++) {
		const char *root = a->sourcefiles[i];
		size_t n = strlen(root);
		snprintf(buf, size, "%s%s%s%s%s", root, n && root[n - 1] == '/' ? "" : "/", pkg, *pkg ? "/" : "",
		         name);
		struct stat st;
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

/* Makes room for need more bytes at *o in *out (of *cap, *left free). */
static bool reserve(char **out, char **o, size_t *cap, size_t *left, size_t need)
{
	if (*left >= need)
		return true;
	size_t used = (size_t)(*o - *out), cap2 = *cap * 2 + need;
	char *grown = realloc(*out, cap2);
	if (!grown)
		return false;
	*out = grown;
	*o = grown + used;
	*cap = cap2;
	*left = cap2 - used;
	return true;
}

/* The text decoded as Java's InputStreamReader decodes it for JaCoCo: a
 * byte that does not decode becomes U+FFFD and the rest is shown. *bad
 * counts them. NULL when out of memory. */
static char *to_utf8(iconv_t cd, char *in, size_t len, size_t *out_len, size_t *bad)
{
	size_t cap = len + 16, left = cap, ileft = len;
	char *out = malloc(cap), *o = out, *i = in;
	*bad = 0;
	while (out && ileft) {
		if (iconv(cd, &i, &ileft, &o, &left) != (size_t)-1)
			break;
		if (errno == E2BIG) {
			if (!reserve(&out, &o, &cap, &left, len))
				break;
			continue;
		}
		/* EILSEQ, or EINVAL: a sequence the file ends inside. */
		if (!reserve(&out, &o, &cap, &left, 3))
			break;
		memcpy(o, "\xEF\xBF\xBD", 3);
		o += 3;
		left -= 3;
		i++;
		ileft--;
		++*bad;
		iconv(cd, NULL, NULL, NULL, NULL); /* a stateful encoding starts over */
	}
	if (out && ileft) {
		free(out);
		return NULL;
	}
	*out_len = (size_t)(o - out);
	return out;
}

static char *read_source(void *ctx, const char *pkg, const char *name, size_t *len)
{
	const report_args *a = ctx;
	char path[4096];
	uint8_t *bytes;
	jinst_diag diag;
	if (!locate(ctx, pkg, name, path, sizeof path) || jinst_file_read(&bytes, len, path, 0, &diag))
		return NULL;
	iconv_t cd = open_decoder(a->encoding); /* known: report_check_outputs opened it */
	size_t bad = 0;
	char *u = cd == (iconv_t)-1 ? NULL : to_utf8(cd, (char *)bytes, *len, len, &bad);
	if (cd != (iconv_t)-1)
		iconv_close(cd);
	if (bad)
		fprintf(stderr, "jinst report: %s: %zu byte%s that do%s not decode as %s: shown as U+FFFD\n", path, bad,
		        bad == 1 ? "" : "s", bad == 1 ? "es" : "", a->encoding ? a->encoding : "UTF-8");
	free(bytes);
	return u;
}

/* ---- writing ----------------------------------------------------------------- */

typedef int (*write_fn)(FILE *f, const jinst_covreport *r, const report_args *a);

static int write_xml(FILE *f, const jinst_covreport *r, const report_args *a)
{
	(void)a;
	return jinst_covreport_write_xml(f, r);
}

static int write_csv(FILE *f, const jinst_covreport *r, const report_args *a)
{
	(void)a;
	return jinst_covreport_write_csv(f, r);
}

static int write_lcov(FILE *f, const jinst_covreport *r, const report_args *a)
{
	return jinst_covreport_write_lcov(f, r, locate, (void *)a);
}

/* mkstemp and mkdtemp make files 0600 and folders 0700; a report is
 * read by others as any file the user writes (0666 or 0777 less umask). */
static mode_t current_umask(void)
{
	mode_t mask = umask(0);
	umask(mask);
	return mask;
}

static int write_atomic(const char *path, const jinst_covreport *r, const report_args *a, write_fn fn)
{
	size_t n = strlen(path) + 16;
	char *tmp = malloc(n);
	if (!tmp)
		return -1;
	snprintf(tmp, n, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp);
	FILE *f = fd >= 0 && fchmod(fd, 0666 & ~current_umask()) == 0 ? fdopen(fd, "w") : NULL;
	int rc = f ? fn(f, r, a) : -1;
	if (f && (fflush(f) || fsync(fd)))
		rc = -1;
	if (f ? fclose(f) : (fd >= 0 && close(fd)))
		rc = -1;
	if (!rc && rename(tmp, path))
		rc = -1;
	if (rc) {
		fprintf(stderr, "jinst report: %s: not written: %s\n", path, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
	}
	free(tmp);
	return rc;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int remove_tree(const char *path)
{
	return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Moves the finished folder tmp to dir: an old report at dir is moved
 * aside first (to the free name aside) and removed after. */
static int swap_folder(const char *tmp, const char *dir, char *aside)
{
	struct stat st;
	if (stat(dir, &st) != 0 || rmdir(dir) == 0)
		return rename(tmp, dir);
	char marker[4096];
	snprintf(marker, sizeof marker, "%s/" MARKER, dir);
	if (access(marker, F_OK) != 0) {
		fprintf(stderr, "jinst report: %s: exists and is not a jinst report: not replaced\n", dir);
		return 1;
	}
	if (!mkdtemp(aside) || rename(dir, aside) != 0 || rename(tmp, dir) != 0)
		return -1;
	return remove_tree(aside);
}

static int write_html(const jinst_covreport *r, const report_args *a)
{
	size_t n = strlen(a->html) + 24;
	char *tmp = malloc(n), *aside = malloc(n);
	if (!tmp || !aside) {
		free(tmp);
		free(aside);
		return -1;
	}
	snprintf(tmp, n, "%s.tmp.XXXXXX", a->html);
	snprintf(aside, n, "%s.old.XXXXXX", a->html);
	jinst_diag diag = {0};
	jinst_covreport_html_options o = JINST_COVREPORT_HTML_OPTIONS_INIT;
	o.tab_width = (unsigned)a->tab_width;
	o.source = read_source;
	o.ctx = (void *)a;
	int rc = mkdtemp(tmp) && chmod(tmp, 0777 & ~current_umask()) == 0 ? 0 : -1;
	if (!rc)
		rc = jinst_covreport_write_html(tmp, r, &o, &diag);
	char marker[4096];
	snprintf(marker, sizeof marker, "%s/" MARKER, tmp);
	FILE *m = rc ? NULL : fopen(marker, "w");
	if (!rc && (!m || fclose(m)))
		rc = -1;
	if (!rc)
		rc = swap_folder(tmp, a->html, aside);
	if (rc) {
		if (rc < 0)
			fprintf(stderr, "jinst report: %s: not written: %s\n", a->html,
			        diag.code ? diag.message : strerror(errno));
		remove_tree(tmp);
	}
	free(tmp);
	free(aside);
	return rc;
}

int report_write_outputs(const jinst_covreport *r, const report_args *a)
{
	int rc = 0;
	if (a->xml && write_atomic(a->xml, r, a, write_xml))
		rc = -1;
	if (a->csv && write_atomic(a->csv, r, a, write_csv))
		rc = -1;
	if (a->lcov && write_atomic(a->lcov, r, a, write_lcov))
		rc = -1;
	if (a->html && write_html(r, a))
		rc = -1;
	if (!a->xml && !a->csv && !a->lcov && !a->html)
		rc = jinst_covreport_write_summary(stdout, r) ? -1 : 0;
	return rc;
}
