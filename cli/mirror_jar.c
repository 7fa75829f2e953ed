/*
 * The writer's archives: a jar (war, ear, zip) read into a tree of its
 * entries, its classes handed to the transformation, and written back.
 *
 * Loading walks the central directory once. Each entry gets a slot: a
 * class (a job of the run), a nested archive (.jar, .war, .ear, .zip whose
 * bytes open as a zip: a child tree, loaded the same way, up to
 * MAX_NESTING deep), a file of a signature, the manifest, or anything else.
 * All classes of all levels are jobs of one run, so the pool spreads
 * a whole war over the cores at once. A class's job gets its data as
 * stored: the worker inflates it, and deflates what it changed, so the
 * zlib work (half of the time on one core) is spread too.
 *
 * Building goes bottom-up after the transformation. An archive none of
 * whose classes, nested archives or extra entries changed is not written
 * at all: its parent copies its entry as it was stored, and a top-level
 * one is copied whole, so an input with nothing to change comes out
 * byte-identical. A changed archive is written entry by entry in its
 * order through jinst_archive_writer_copy (_copy_packed for a changed
 * class): every entry keeps its records as stored; untouched entries
 * (resources, unchanged classes, unchanged nested archives) go over as
 * their compressed bytes, never inflated; changed classes and nested
 * archives are compressed with their entry's method (a stored nested jar,
 * as Spring Boot needs them, stays stored). A signed archive that changed
 * loses its signature (the JVM would refuse its classes): the signature's
 * files are left out and the digests stripped from its manifest, with one
 * warning naming it. A name the archive holds twice is kept twice, each
 * entry transformed, in its place: the output reads as the input did (the
 * JDK's ZipFile finds the last entry of a name; JaCoCo's instrumenter
 * stops at the second with "duplicate entry"), with one warning naming it.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mirror_internal.h"

/* How deep archives in archives are followed; deeper ones are copied. */
#define MAX_NESTING 8

/* The time of an added entry: a fixed one, so the output stays the same
 * from run to run (1980-01-03, inside the DOS date range in any time zone). */
#define EXTRA_MTIME INT64_C(315705600)

enum slot_kind { SLOT_COPY, SLOT_CLASS, SLOT_NESTED, SLOT_SIGNATURE, SLOT_MANIFEST };

typedef struct slot {
	enum slot_kind kind;
	size_t job;    /* SLOT_CLASS */
	jar *child;    /* SLOT_NESTED */
	uint8_t *out;  /* SLOT_NESTED: the child written, when it changed */
	size_t out_len;
} slot;

struct jar {
	jinst_archive *a;
	uint8_t *data; /* a nested archive's bytes, which a borrows */
	char *name;    /* as reported: PATH or OUTER!INNER */
	size_t count;
	slot *slots;
	size_t signature_files;
	const char *duplicate; /* the first entry name held twice (borrowed from a), or NULL */
	size_t duplicates;     /* entries whose name an earlier one holds */
};

void mirror_jar_free(jar *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->count && j->slots; i++) {
		mirror_jar_free(j->slots[i].child);
		free(j->slots[i].out);
	}
	free(j->slots);
	jinst_archive_close(j->a);
	free(j->data);
	free(j->name);
	free(j);
}

jinst_archive *mirror_jar_archive(jar *j)
{
	return j->a;
}

static bool is_manifest(const char *name)
{
	return strcasecmp(name, "META-INF/MANIFEST.MF") == 0;
}

static bool is_class(const char *name)
{
	size_t n = strlen(name);
	return n > 6 && strcmp(name + n - 6, ".class") == 0;
}

/* A nested archive, when its bytes open as one; else the entry is copied. */
static int load_nested(run *R, jar *j, slot *s, const char *entry, uint8_t *data, size_t len, int depth)
{
	char *name = mirror_join(j->name, entry, '!');
	if (!name) {
		free(data);
		mirror_error(R, j->name, "out of memory");
		return -1;
	}
	if (depth >= MAX_NESTING) {
		mirror_warning(R, name, "archives nested more than %d deep: copied as it is", MAX_NESTING);
		free(data);
		free(name);
		return 0;
	}
	jinst_archive *probe;
	jinst_diag d;
	if (len < 4 || memcmp(data, "PK", 2) != 0 || jinst_archive_open_memory(&probe, data, len, name, NULL, &d) != 0) {
		mirror_warning(R, name, "named like an archive, but not one: copied as it is");
		free(data);
		free(name);
		return 0;
	}
	jinst_archive_close(probe);
	s->child = mirror_jar_load(R, name, NULL, data, len, depth + 1);
	free(name);
	if (!s->child)
		return -1;
	s->kind = SLOT_NESTED;
	return 0;
}

static int load_entry(run *R, jar *j, size_t i, int depth)
{
	jinst_archive_entry e;
	jinst_diag d;
	slot *s = &j->slots[i];
	*s = (slot){.kind = SLOT_COPY, .job = SIZE_MAX};
	if (jinst_archive_entry_at(&e, j->a, i, &d) != 0) {
		mirror_error(R, j->name, "%s", d.message);
		return -1;
	}
	size_t first;
	if (jinst_archive_find(&first, j->a, e.name) == 0 && first != i) {
		j->duplicate = j->duplicate ? j->duplicate : e.name;
		j->duplicates++;
	}
	bool dir = e.name[0] && e.name[strlen(e.name) - 1] == '/';
	bool nested = !dir && mirror_is_archive_name(e.name);
	if (dir || (!is_class(e.name) && !nested)) {
		R->stats->files++;
		if (jinst_archive_is_signature_file(e.name)) {
			s->kind = SLOT_SIGNATURE;
			j->signature_files++;
		} else if (is_manifest(e.name)) {
			s->kind = SLOT_MANIFEST;
		}
		return 0;
	}
	uint8_t *data = NULL;
	size_t len = 0;
	/* A class stored or deflated is inflated by its worker; anything else
	 * is read here, through libzip. */
	jinst_archive_stored st = {0};
	bool deferred = !nested && jinst_archive_stored_at(&st, j->a, i, &d) == 0 &&
	                (st.method == JINST_ARCHIVE_STORED || st.method == JINST_ARCHIVE_DEFLATED);
	if (!deferred && jinst_archive_read(&data, &len, j->a, i, &d) != 0) {
		mirror_error(R, d.where, "%s", d.message);
		return -1;
	}
	if (nested)
		return load_nested(R, j, s, e.name, data, len, depth);
	char *name = mirror_join(j->name, e.name, '!');
	int pack = e.method == JINST_ARCHIVE_STORED ? JINST_ARCHIVE_STORED : JINST_ARCHIVE_DEFLATED;
	s->job = name ? mirror_add_job(R, name, data, len, pack) : SIZE_MAX;
	if (s->job == SIZE_MAX) {
		if (!name)
			free(data);
		mirror_error(R, j->name, "out of memory");
		return -1;
	}
	if (deferred)
		R->jobs[s->job].stored = st;
	s->kind = SLOT_CLASS;
	return 0;
}

jar *mirror_jar_load(run *R, const char *name, const char *path, uint8_t *data, size_t len, int depth)
{
	jar *j = calloc(1, sizeof(*j));
	if (!j || !(j->name = strdup(name))) {
		free(j);
		free(data);
		mirror_error(R, name, "out of memory");
		return NULL;
	}
	j->data = data;
	jinst_diag d;
	int rc = path ? jinst_archive_open(&j->a, path, NULL, &d)
	              : jinst_archive_open_memory(&j->a, data, len, name, NULL, &d);
	if (rc != 0) {
		mirror_error(R, name, "cannot be read as an archive: %s", d.message);
		mirror_jar_free(j);
		return NULL;
	}
	j->count = jinst_archive_count(j->a);
	j->slots = calloc(j->count ? j->count : 1, sizeof(*j->slots));
	if (!j->slots) {
		mirror_error(R, name, "out of memory");
		j->count = 0;
		mirror_jar_free(j);
		return NULL;
	}
	for (size_t i = 0; i < j->count; i++) {
		if (mirror_stopped(R) || load_entry(R, j, i, depth) != 0) {
			mirror_jar_free(j);
			return NULL;
		}
	}
	/* Every entry is kept, in its order, each transformed: readers that
	 * walk the entries see both, and the JDK's ZipFile (class loading)
	 * finds the last of a name, in the output as in the input. */
	if (j->duplicates == 1)
		mirror_warning(R, name, "the entry name %s is there twice: both kept, in their order, as in the input "
		               "(the JVM loads the last of a name)", j->duplicate);
	else if (j->duplicates)
		mirror_warning(R, name, "%zu entries repeat an earlier entry's name (%s the first): all kept, in their "
		               "order, as in the input (the JVM loads the last of a name)", j->duplicates, j->duplicate);
	R->stats->archives++;
	return j;
}

/* ---- building ---------------------------------------------------------------------- */

/* A nested archive with the command's extra entries for it, if it has a
 * changed class (an archive nothing in which changed is copied as it was). */
static int build_nested(run *R, jar *j, uint8_t **bytes, size_t *len)
{
	mirror_extra *x = NULL;
	size_t nx = 0;
	bool changed = false;
	for (size_t i = 0; i < j->count; i++)
		changed |= j->slots[i].kind == SLOT_CLASS && R->jobs[j->slots[i].job].result == MIRROR_CHANGED;
	if (changed && R->o->nested_extra && R->o->nested_extra(R->o->ctx, j->name, &x, &nx) < 0) {
		mirror_free_extras(x, nx);
		mirror_error(R, j->name, "the entries to add to it could not be made");
		return -1;
	}
	int rc = mirror_jar_build(R, j, x, nx, bytes, len);
	mirror_free_extras(x, nx);
	return rc;
}

/* Whether anything of j changes, building its changed children first. */
static int build_children(run *R, jar *j, bool *changed)
{
	*changed = false;
	for (size_t i = 0; i < j->count; i++) {
		slot *s = &j->slots[i];
		if (s->kind == SLOT_CLASS)
			*changed |= R->jobs[s->job].result == MIRROR_CHANGED;
		if (s->kind != SLOT_NESTED)
			continue;
		if (build_nested(R, s->child, &s->out, &s->out_len) != 0)
			return -1;
		*changed |= s->out != NULL;
	}
	return 0;
}

/* The extra entry named name, or NULL. */
static const mirror_extra *extra_named(const mirror_extra *x, size_t nx, const char *name)
{
	for (size_t i = 0; i < nx; i++)
		if (strcmp(x[i].name, name) == 0)
			return &x[i];
	return NULL;
}

/* The manifest without the signature's digests; *kept is freed after the
 * archive is written (the writer borrows it until then). */
static int strip_manifest(run *R, jar *j, size_t i, uint8_t **kept, size_t *len, size_t *removed)
{
	uint8_t *in;
	size_t in_len;
	jinst_diag d;
	int rc = jinst_archive_read(&in, &in_len, j->a, i, &d);
	if (rc == 0)
		rc = jinst_archive_manifest_strip(kept, len, removed, in, in_len, &d);
	free(in);
	if (rc != 0)
		mirror_error(R, d.where, "%s", d.message);
	return rc;
}

/* Entry i into w: as it was stored, or with new bytes (an extra entry of
 * its name, its changed class or nested archive, its manifest without
 * digests); a signature's file is left out. */
static int add_slot(run *R, jar *j, jinst_archive_writer *w, size_t i, const mirror_extra *x, size_t nx,
                    uint8_t **manifest, size_t *digests)
{
	slot *s = &j->slots[i];
	jinst_archive_entry e;
	jinst_diag d;
	if (jinst_archive_entry_at(&e, j->a, i, &d) != 0) {
		mirror_error(R, d.where, "%s", d.message);
		return -1;
	}
	const mirror_extra *extra = extra_named(x, nx, e.name);
	/* A changed class comes packed by its worker. */
	const job *changed = s->kind == SLOT_CLASS && R->jobs[s->job].result == MIRROR_CHANGED ? &R->jobs[s->job] : NULL;
	const uint8_t *bytes = NULL; /* NULL: copied as stored */
	size_t len = 0;
	if (extra) {
		bytes = extra->bytes ? extra->bytes : (const uint8_t *)"";
		len = extra->len;
	} else if (s->kind == SLOT_SIGNATURE && j->signature_files) {
		return 0;
	} else if (s->kind == SLOT_MANIFEST && j->signature_files) {
		if (strip_manifest(R, j, i, manifest, &len, digests) != 0)
			return -1;
		bytes = *manifest;
	} else if (s->kind == SLOT_NESTED && s->out) {
		bytes = s->out;
		len = s->out_len;
	}
	int rc = changed && !extra ? jinst_archive_writer_copy_packed(w, j->a, i, &changed->packed, &d)
	                           : jinst_archive_writer_copy(w, j->a, i, bytes, len, &d);
	if (rc != 0) {
		mirror_error(R, d.where, "%s", d.message);
		return -1;
	}
	return 0;
}

/* The extra entries the archive had no entry of. */
static int add_new_extras(run *R, jar *j, jinst_archive_writer *w, const mirror_extra *x, size_t nx)
{
	jinst_diag d;
	for (size_t k = 0; k < nx; k++) {
		size_t at;
		if (jinst_archive_find(&at, j->a, x[k].name) == 0)
			continue;
		jinst_archive_entry meta = {.name = x[k].name, .method = JINST_ARCHIVE_DEFLATED, .mtime = EXTRA_MTIME,
		                            .opsys = 3, .external_attributes = 0100644u << 16};
		if (jinst_archive_writer_add(w, &meta, x[k].bytes, x[k].len, &d) != 0) {
			mirror_error(R, d.where, "%s", d.message);
			return -1;
		}
		R->stats->files++;
	}
	return 0;
}

static int write_jar(run *R, jar *j, const mirror_extra *x, size_t nx, uint8_t **bytes, size_t *len)
{
	jinst_archive_writer *w;
	jinst_diag d;
	if (jinst_archive_writer_new_memory(&w, j->name, &d) != 0) {
		mirror_error(R, j->name, "%s", d.message);
		return -1;
	}
	uint8_t *manifest = NULL;
	size_t digests = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < j->count; i++)
		rc = mirror_stopped(R) ? -1 : add_slot(R, j, w, i, x, nx, &manifest, &digests);
	if (rc == 0)
		rc = add_new_extras(R, j, w, x, nx);
	size_t clen;
	const uint8_t *comment = jinst_archive_comment(j->a, &clen);
	if (rc == 0 && comment && (rc = jinst_archive_writer_set_comment(w, comment, clen, &d)) != 0)
		mirror_error(R, d.where, "%s", d.message);
	if (rc == 0) {
		rc = jinst_archive_writer_finish(w, bytes, len, &d);
		if (rc != 0)
			mirror_error(R, d.where, "%s", d.message);
	} else {
		jinst_archive_writer_discard(w);
	}
	free(manifest);
	if (rc == 0 && j->signature_files) {
		R->stats->files -= j->signature_files; /* counted when read, left out now */
		mirror_warning(R, j->name, "signed: its %zu signature files removed and %zu digests stripped from its "
		               "manifest, since its classes changed", j->signature_files, digests);
	}
	return rc ? -1 : 0;
}

int mirror_jar_build(run *R, jar *j, const mirror_extra *x, size_t nx, uint8_t **bytes, size_t *len)
{
	*bytes = NULL;
	*len = 0;
	bool changed;
	if (build_children(R, j, &changed) != 0)
		return -1;
	if (!changed && nx == 0)
		return 0;
	return write_jar(R, j, x, nx, bytes, len);
}
