/*
 * The writer's check of manifests' Class-Path (JAR File Specification,
 * "Main Attributes"): an instrumented jar whose Class-Path names jars the
 * run did not write runs those jars' classes uninstrumented, and nothing
 * else would tell the user.
 *
 * Every archive the run writes (an input, or an archive inside a folder
 * input) is noted with the path it will have once in place; an archive
 * that changed is noted with its manifest's Class-Path too. Once the
 * output is in place, each Class-Path entry is resolved as the JDK's
 * URLClassPath does: a relative URL against the jar's own folder (so next
 * to the output), a file: URL or absolute path as it is, %XX decoded.
 * Where it leads is compared, after realpath, with what the run wrote; the
 * entries that lead elsewhere (an original jar, or nothing) are named in
 * one warning per jar. URLs of other schemes are not followed.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mirror_internal.h"

struct mirror_cp {
	char *name;       /* the archive as reported (an input's path) */
	char *path;       /* where it will be once the output is in place */
	char *class_path; /* its manifest's Class-Path when it changed, else NULL */
	bool main_class;  /* it changed and its manifest names a Main-Class */
};

/* The Class-Path of a's manifest (or NULL), and whether it has a Main-Class. */
static char *class_path_of(jinst_archive *a, bool *main_class)
{
	size_t at, len;
	uint8_t *mf;
	char *value = NULL, *main = NULL;
	jinst_diag d;
	*main_class = false;
	if (jinst_archive_find(&at, a, "META-INF/MANIFEST.MF") != 0 || jinst_archive_read(&mf, &len, a, at, &d) != 0)
		return NULL;
	jinst_archive_manifest_attribute(&value, mf, len, "Class-Path", &d);
	*main_class = jinst_archive_manifest_attribute(&main, mf, len, "Main-Class", &d) == 0;
	free(main);
	free(mf);
	return value;
}

void mirror_cp_note(run *R, const char *name, const char *written, jinst_archive *a, bool changed)
{
	size_t t = R->temp ? strlen(R->temp) : 0;
	if (!R->temp || strncmp(written, R->temp, t) != 0)
		return;
	if (R->ncp == R->cap_cp) {
		size_t cap = R->cap_cp ? R->cap_cp * 2 : 16;
		struct mirror_cp *p = realloc(R->cp, cap * sizeof(*p));
		if (!p)
			return; /* a check left out for lack of memory: the output is right all the same */
		R->cp = p;
		R->cap_cp = cap;
	}
	struct mirror_cp *c = &R->cp[R->ncp];
	c->name = strdup(name);
	c->path = mirror_join(R->final, written + t, '\0');
	c->main_class = false;
	c->class_path = changed ? class_path_of(a, &c->main_class) : NULL;
	if (c->name && c->path)
		R->ncp++;
	else {
		free(c->name);
		free(c->path);
		free(c->class_path);
	}
}

/* s with %XX decoded (a URL's escapes), malloc'd. */
static char *url_decode(const char *s)
{
	char *p = malloc(strlen(s) + 1), *o = p;
	for (; p && *s; s++) {
		unsigned v;
		if (s[0] == '%' && s[1] && s[2] && sscanf(s + 1, "%2x", &v) == 1 && v) {
			*o++ = (char)v;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	if (p)
		*o = '\0';
	return p;
}

/* token with "file:" dropped and %XX decoded, resolved against dir unless
 * absolute; NULL for a URL of another scheme. */
static char *resolve_entry(const char *token, const char *dir)
{
	const char *t = token;
	if (strncmp(t, "file:", 5) == 0) {
		t += 5;
		while (t[0] == '/' && t[1] == '/')
			t++; /* file:///p and file://p/: the path */
	} else {
		const char *colon = strchr(t, ':'), *slash = strchr(t, '/');
		if (colon && (!slash || colon < slash))
			return NULL;
	}
	char *d = url_decode(t);
	char *p = d && *d != '/' ? mirror_join(dir, d, '/') : d;
	if (p != d)
		free(d);
	return p;
}

/* Whether path leads to one of the archives the run wrote. */
static bool written(run *R, const char *path, char **real_written)
{
	char *real = realpath(path, NULL);
	bool found = false;
	for (size_t i = 0; real && !found && i < R->ncp; i++)
		found = real_written[i] && strcmp(real, real_written[i]) == 0;
	free(real);
	return found;
}

/* The Class-Path entries of c that lead elsewhere, into *text. */
static size_t missing_entries(run *R, const struct mirror_cp *c, char **real_written, text *out)
{
	char *dir = strdup(c->path), *slash = dir ? strrchr(dir, '/') : NULL;
	if (!dir)
		return 0;
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	size_t n = 0;
	char *copy = strdup(c->class_path), *save = NULL;
	for (char *tok = copy ? strtok_r(copy, " \t", &save) : NULL; tok; tok = strtok_r(NULL, " \t", &save)) {
		char *p = resolve_entry(tok, dir);
		if (p && !written(R, p, real_written)) {
			text_printf(out, "%s%s", n ? ", " : "", tok);
			n++;
		}
		free(p);
	}
	free(copy);
	free(dir);
	return n;
}

void mirror_cp_check(run *R)
{
	char **real = calloc(R->ncp ? R->ncp : 1, sizeof(*real));
	for (size_t i = 0; real && i < R->ncp; i++)
		real[i] = realpath(R->cp[i].path, NULL);
	for (size_t i = 0; real && i < R->ncp; i++) {
		const struct mirror_cp *c = &R->cp[i];
		if (c->main_class && R->o->main_class_note)
			mirror_note(R, c->name, "it has a Main-Class; %s", R->o->main_class_note);
		if (!c->class_path)
			continue;
		text t = {0};
		size_t n = missing_entries(R, c, real, &t);
		if (n && t.data)
			mirror_warning(R, c->name, "its manifest's Class-Path leads to %zu jar%s this run did not write, whose "
			               "classes run as they were, not %s: %s (a relative name resolves next to the output jar, "
			               "an absolute one to the original)", n, n == 1 ? "" : "s",
			               R->o->changed ? R->o->changed : "changed", t.data);
		text_free(&t);
	}
	for (size_t i = 0; real && i < R->ncp; i++)
		free(real[i]);
	free(real);
}

void mirror_cp_free(run *R)
{
	for (size_t i = 0; i < R->ncp; i++) {
		free(R->cp[i].name);
		free(R->cp[i].path);
		free(R->cp[i].class_path);
	}
	free(R->cp);
	R->cp = NULL;
	R->ncp = R->cap_cp = 0;
}
