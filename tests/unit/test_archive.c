/*
 * The archive layer (include/jinst/archive.h): an archive written with the
 * writer reads back with every entry's name, order, method, time,
 * attributes, comment and bytes; a jar copied entry by entry keeps them
 * and its extra fields, with new bytes where given; the fuzz seeds that are damaged fail with
 * the codes the header promises, as does unpacking data the directory
 * lies about; the entry limit holds. Class files, packed with the code made
 * for them, unpack to their bytes, and pack to the same bytes from two
 * threads; so does class-like data that does not compress.
 *
 *     test_archive WORK_DIR SEEDS_DIR CLASSES_ARCHIVE
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/archive.h"
#include "../testlib.h"

static void round_trip(const char *work)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/written.jar", work);
	static uint8_t big[5000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i % 7);
	const jinst_archive_entry in[] = {
		{.name = "META-INF/", .method = JINST_ARCHIVE_STORED, .mtime = 1000000000, .opsys = 3,
		 .external_attributes = 040755u << 16},
		{.name = "p/C.class", .method = JINST_ARCHIVE_STORED, .mtime = 1100000000, .opsys = 3,
		 .external_attributes = 0100640u << 16, .comment = (const uint8_t *)"hi", .comment_len = 2},
		{.name = "res/big.bin", .method = JINST_ARCHIVE_DEFLATED, .mtime = 1200000000},
	};
	const uint8_t *bytes[] = {NULL, (const uint8_t *)"\xca\xfe\xba\xbe", big};
	const size_t lens[] = {0, 4, sizeof(big)};
	jinst_archive_writer *w;
	jinst_diag d;
	CHECK(jinst_archive_writer_new(&w, path, &d) == 0, "writer: %s", d.message);
	for (size_t i = 0; i < 3; i++)
		CHECK(jinst_archive_writer_add(w, &in[i], bytes[i], lens[i], &d) == 0, "add %s: %s", in[i].name, d.message);
	CHECK(jinst_archive_writer_set_comment(w, (const uint8_t *)"the end", 7, &d) == 0, "comment: %s", d.message);
	CHECK(jinst_archive_writer_commit(w, &d) == 0, "commit: %s", d.message);

	jinst_archive *a;
	if (jinst_archive_open(&a, path, NULL, &d) != 0) {
		CHECK(0, "open %s: %s", path, d.message);
		return;
	}
	CHECK(jinst_archive_count(a) == 3, "%zu entries", jinst_archive_count(a));
	for (size_t i = 0; i < 3 && i < jinst_archive_count(a); i++) {
		jinst_archive_entry e;
		CHECK(jinst_archive_entry_at(&e, a, i, &d) == 0, "entry %zu: %s", i, d.message);
		CHECK(strcmp(e.name, in[i].name) == 0 && e.index == i, "entry %zu is %s", i, e.name);
		CHECK(e.method == in[i].method, "%s: method %u", e.name, e.method);
		/* DOS times have two-second steps. */
		CHECK(llabs(e.mtime - in[i].mtime) <= 2, "%s: mtime %lld", e.name, (long long)e.mtime);
		if (in[i].opsys == 3)
			CHECK(e.opsys == 3 && e.external_attributes == in[i].external_attributes, "%s: attributes %o", e.name,
			      e.external_attributes >> 16);
		CHECK(e.comment_len == in[i].comment_len &&
		          (!e.comment_len || memcmp(e.comment, in[i].comment, e.comment_len) == 0),
		      "%s: comment", e.name);
		uint8_t *got;
		size_t len;
		CHECK(jinst_archive_read(&got, &len, a, i, &d) == 0, "read %s: %s", e.name, d.message);
		CHECK(len == lens[i] && (!len || memcmp(got, bytes[i], len) == 0), "%s: bytes", e.name);
		free(got);
	}
	size_t index, clen;
	CHECK(jinst_archive_find(&index, a, "res/big.bin") == 0 && index == 2, "find");
	CHECK(jinst_archive_find(&index, a, "no/such") == JINST_ENOTFOUND, "find a missing entry");
	const uint8_t *comment = jinst_archive_comment(a, &clen);
	CHECK(comment && clen == 7 && memcmp(comment, "the end", 7) == 0, "archive comment");
	jinst_archive_close(a);

	/* The limit is checked before anything is read. */
	jinst_archive_options o = JINST_ARCHIVE_OPTIONS_INIT;
	o.max_entry_size = 100;
	if (jinst_archive_open(&a, path, &o, &d) == 0) {
		uint8_t *got = NULL;
		size_t len;
		CHECK(jinst_archive_read(&got, &len, a, 2, &d) == JINST_ETOOLARGE && !got, "limit: %d", d.code);
		jinst_archive_close(a);
	}
	/* No entry: the end record alone, which opens with no entry. */
	snprintf(path, sizeof(path), "%s/empty.jar", work);
	CHECK(jinst_archive_writer_new(&w, path, &d) == 0, "writer: %s", d.message);
	CHECK(jinst_archive_writer_commit(w, &d) == 0, "empty archive: %s", d.message);
	if (jinst_archive_open(&a, path, NULL, &d) == 0) {
		CHECK(jinst_archive_count(a) == 0, "the empty archive has %zu entries", jinst_archive_count(a));
		jinst_archive_close(a);
	} else {
		CHECK(0, "the empty archive does not open: %s", d.message);
	}
}

/* The extra fields of entry i of a, central and local, as (id, bytes) runs. */
static size_t extra_fields(jinst_archive *a, size_t i, enum jinst_archive_extra_where where, uint8_t *out,
                           size_t cap)
{
	size_t n = 0, k = 0;
	jinst_diag d;
	CHECK(jinst_archive_extra_count(&n, a, i, where, &d) == 0, "extra count: %s", d.message);
	for (size_t f = 0; f < n; f++) {
		uint16_t id, len;
		const uint8_t *data;
		if (jinst_archive_extra(&id, &data, &len, a, i, f, where, &d) != 0 || k + 4u + len > cap)
			break;
		memcpy(out + k, &id, 2);
		memcpy(out + k + 2, &len, 2);
		memcpy(out + k + 4, data, len);
		k += 4u + len;
	}
	return k;
}

/* A jar of the seeds copied entry by entry, as stored and with new bytes
 * (through jinst_archive_writer_copy and a pack made ahead): every entry
 * keeps its name, method, time, attributes, comment and extra fields;
 * the new bytes read back; unpacking what stored_at gives is what
 * jinst_archive_read gives; a name held twice is copied twice; a name
 * added twice is refused. */
static void copy_kept(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/jar", dir);
	jinst_archive *a, *b;
	jinst_diag d;
	if (jinst_archive_open(&a, path, NULL, &d) != 0) {
		CHECK(0, "open %s: %s", path, d.message);
		return;
	}
	jinst_archive_writer *w;
	CHECK(jinst_archive_writer_new_memory(&w, "copy.jar", &d) == 0, "writer: %s", d.message);
	size_t n = jinst_archive_count(a);
	static const uint8_t fresh[] = "new bytes, new bytes, new bytes";
	for (size_t i = 0; i < n; i++) {
		jinst_archive_stored st;
		uint8_t *x, *y;
		size_t lx, ly;
		CHECK(jinst_archive_stored_at(&st, a, i, &d) == 0, "stored_at %zu: %s", i, d.message);
		CHECK(jinst_archive_read(&x, &lx, a, i, &d) == 0, "read %zu: %s", i, d.message);
		CHECK(jinst_archive_unpack(&y, &ly, &st, 0, "e", &d) == 0, "unpack %zu: %s", i, d.message);
		CHECK(lx == ly && memcmp(x, y, lx) == 0, "entry %zu: unpack and read differ", i);
		free(x);
		free(y);
		jinst_archive_packed p;
		if (i % 3 == 1) {
			CHECK(jinst_archive_pack(&p, fresh, sizeof(fresh), st.method, &d) == 0, "pack: %s", d.message);
			CHECK(jinst_archive_writer_copy_packed(w, a, i, &p, &d) == 0, "copy_packed %zu: %s", i, d.message);
			jinst_archive_packed_free(&p);
		} else {
			CHECK(jinst_archive_writer_copy(w, a, i, i % 3 ? fresh : NULL, sizeof(fresh), &d) == 0, "copy %zu: %s",
			      i, d.message);
		}
	}
	/* The first entry again: a name held twice is copied as it was. */
	CHECK(jinst_archive_writer_copy(w, a, 0, NULL, 0, &d) == 0, "copy of a name again: %s", d.message);
	jinst_archive_entry e0;
	CHECK(jinst_archive_entry_at(&e0, a, 0, &d) == 0, "entry 0");
	CHECK(jinst_archive_writer_add(w, &e0, fresh, 3, &d) == JINST_EINVAL, "a name added twice: %d", d.code);
	uint8_t *bytes;
	size_t len;
	CHECK(jinst_archive_writer_finish(w, &bytes, &len, &d) == 0, "finish: %s", d.message);
	if (jinst_archive_open_memory(&b, bytes, len, "copy.jar", NULL, &d) != 0) {
		CHECK(0, "the copy does not open: %s", d.message);
	} else {
		CHECK(jinst_archive_count(b) == n + 1, "%zu entries copied of %zu", jinst_archive_count(b), n + 1);
		for (size_t i = 0; i < n + 1 && i < jinst_archive_count(b); i++) {
			jinst_archive_entry x, y;
			size_t k = i < n ? i : 0;
			CHECK(jinst_archive_entry_at(&x, a, k, &d) == 0 && jinst_archive_entry_at(&y, b, i, &d) == 0, "entry");
			CHECK(strcmp(x.name, y.name) == 0 && x.method == y.method && x.mtime == y.mtime && x.opsys == y.opsys &&
			          x.external_attributes == y.external_attributes && x.comment_len == y.comment_len,
			      "entry %zu: metadata differ", i);
			for (int where = 0; where < 2; where++) {
				uint8_t fx[4096], fy[4096];
				size_t nx = extra_fields(a, k, (enum jinst_archive_extra_where)where, fx, sizeof(fx));
				size_t ny = extra_fields(b, i, (enum jinst_archive_extra_where)where, fy, sizeof(fy));
				CHECK(nx == ny && memcmp(fx, fy, nx) == 0, "entry %zu: extra fields differ", i);
			}
			uint8_t *got;
			size_t glen;
			CHECK(jinst_archive_read(&got, &glen, b, i, &d) == 0, "read the copy's %zu: %s", i, d.message);
			if (i < n && i % 3)
				CHECK(glen == sizeof(fresh) && memcmp(got, fresh, glen) == 0, "entry %zu: not the new bytes", i);
			free(got);
		}
		jinst_archive_close(b);
	}
	free(bytes);
	jinst_archive_close(a);
}

/* unpack refuses what the directory lies about: a size one less or one
 * more than the data's, a wrong CRC, data cut short, bytes that are not
 * deflate, a size past the limit; and gives the bytes back otherwise,
 * stored or deflated, including an empty entry. */
static void unpack_refusals(void)
{
	static uint8_t text[3000];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)("abcab"[i % 5] + i / 500);
	jinst_diag d;
	for (uint16_t method = 0; method <= JINST_ARCHIVE_DEFLATED; method += JINST_ARCHIVE_DEFLATED) {
		jinst_archive_packed p;
		CHECK(jinst_archive_pack(&p, text, sizeof(text), method, &d) == 0, "pack %u: %s", method, d.message);
		CHECK(method == JINST_ARCHIVE_STORED || p.len < sizeof(text) / 4, "deflated to %zu bytes", p.len);
		const jinst_archive_stored good = {.data = p.data, .len = p.len, .size = p.size, .crc = p.crc,
		                                   .method = method};
		uint8_t *out;
		size_t n;
		CHECK(jinst_archive_unpack(&out, &n, &good, 0, "e", &d) == 0 && n == sizeof(text) &&
		      memcmp(out, text, n) == 0, "method %u: the bytes back (%s)", method, d.message);
		free(out);
		jinst_archive_stored bad[5] = {good, good, good, good, good};
		bad[0].size--;
		bad[1].size++;
		bad[2].crc ^= 1;
		bad[3].len -= 10;
		bad[4].size = 2000000;
		for (int k = 0; k < 5; k++) {
			int rc = jinst_archive_unpack(&out, &n, &bad[k], k == 4 ? 1000000 : 0, "e", &d);
			int want = k == 4 ? JINST_ETOOLARGE : JINST_EMALFORMED;
			CHECK(rc == want && d.code == want && !out && !n, "method %u, lie %d: %d (%s)", method, k, rc,
			      d.message);
		}
		jinst_archive_packed_free(&p);
	}
	const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const jinst_archive_stored notdeflate = {.data = junk, .len = sizeof(junk), .size = 4,
	                                         .method = JINST_ARCHIVE_DEFLATED};
	uint8_t *out;
	size_t n;
	CHECK(jinst_archive_unpack(&out, &n, &notdeflate, 0, "e", &d) == JINST_EMALFORMED, "not deflate: %d", d.code);
	jinst_archive_packed e;
	CHECK(jinst_archive_pack(&e, NULL, 0, JINST_ARCHIVE_DEFLATED, &d) == 0, "pack nothing: %s", d.message);
	const jinst_archive_stored empty = {.data = e.data, .len = e.len, .size = 0, .crc = e.crc,
	                                    .method = JINST_ARCHIVE_DEFLATED};
	CHECK(jinst_archive_unpack(&out, &n, &empty, 0, "e", &d) == 0 && n == 0 && e.crc == 0, "empty: %s", d.message);
	free(out);
	jinst_archive_packed_free(&e);
}

/* Packs bytes deflated and checks it unpacks to them; the packed bytes. */
static jinst_archive_packed pack_back(const uint8_t *bytes, size_t len, const char *what)
{
	jinst_archive_packed p;
	jinst_diag d;
	CHECK(jinst_archive_pack(&p, bytes, len, JINST_ARCHIVE_DEFLATED, &d) == 0, "pack %s: %s", what, d.message);
	const jinst_archive_stored s = {.data = p.data, .len = p.len, .size = p.size, .crc = p.crc,
	                                .method = JINST_ARCHIVE_DEFLATED};
	uint8_t *out = NULL;
	size_t n = 0;
	CHECK(jinst_archive_unpack(&out, &n, &s, 0, what, &d) == 0 && n == len && memcmp(out, bytes, n) == 0,
	      "%s: the bytes back (%s)", what, d.message);
	free(out);
	return p;
}

typedef struct class_set {
	uint8_t *bytes[256];
	size_t lens[256], n, packed_total, total;
	jinst_archive_packed first[256]; /* the main thread's */
	int differ;                      /* set by the other thread */
} class_set;

static void *pack_again(void *arg)
{
	class_set *c = arg;
	for (size_t i = 0; i < c->n; i++) {
		jinst_archive_packed p = pack_back(c->bytes[i], c->lens[i], "class, other thread");
		c->differ += p.len != c->first[i].len || memcmp(p.data, c->first[i].data, p.len) != 0;
		jinst_archive_packed_free(&p);
	}
	return NULL;
}

/* Up to 256 classes of the archive at path (every 16th). */
static void pack_classes(const char *path)
{
	class_set *c = calloc(1, sizeof(*c));
	jinst_archive *a = NULL;
	jinst_diag d;
	CHECK(c && jinst_archive_open(&a, path, NULL, &d) == 0, "open %s", path);
	if (!c || !a)
		return;
	for (size_t i = 0, seen = 0; i < jinst_archive_count(a) && c->n < 256; i++) {
		jinst_archive_entry e;
		CHECK(jinst_archive_entry_at(&e, a, i, &d) == 0, "entry %zu: %s", i, d.message);
		size_t k = strlen(e.name);
		if (k < 6 || strcmp(e.name + k - 6, ".class") != 0 || seen++ % 16)
			continue;
		CHECK(jinst_archive_read(&c->bytes[c->n], &c->lens[c->n], a, i, &d) == 0, "read %s: %s", e.name,
		      d.message);
		c->total += c->lens[c->n];
		c->first[c->n] = pack_back(c->bytes[c->n], c->lens[c->n], e.name);
		c->packed_total += c->first[c->n].len;
		c->n++;
	}
	jinst_archive_close(a);
	CHECK(c->n >= 100 && c->packed_total * 10 < c->total * 6, "%zu classes, %zu bytes packed to %zu", c->n,
	      c->total, c->packed_total);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, pack_again, c) == 0 && pthread_join(t, NULL) == 0, "thread");
	CHECK(c->differ == 0, "%d classes packed otherwise by another thread", c->differ);
	/* A class's magic, then what does not compress: more than it gives. */
	static uint8_t noise[200000];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(noise); i++)
		noise[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
	memcpy(noise, "\xca\xfe\xba\xbe", 4);
	jinst_archive_packed p = pack_back(noise, sizeof(noise), "noise");
	CHECK(p.len < sizeof(noise) + sizeof(noise) / 100, "noise packed to %zu bytes", p.len);
	jinst_archive_packed_free(&p);
	for (size_t i = 0; i < c->n; i++) {
		free(c->bytes[i]);
		jinst_archive_packed_free(&c->first[i]);
	}
	free(c);
}

/* Reads every entry of seed; the code of the first failure (0 for none). */
static int read_seed(const char *dir, const char *seed)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, seed);
	size_t len;
	uint8_t *data = test_read_file(path, &len);
	if (!data)
		return 1;
	jinst_archive *a = NULL;
	jinst_diag d;
	int rc = jinst_archive_open_memory(&a, data, len, seed, NULL, &d);
	for (size_t i = 0; rc == 0 && i < jinst_archive_count(a); i++) {
		uint8_t *bytes;
		size_t n;
		if ((rc = jinst_archive_read(&bytes, &n, a, i, &d)) == 0)
			free(bytes);
		else
			CHECK(d.code == rc && strchr(d.where, '!'), "%s: diag %d where '%s'", seed, d.code, d.where);
	}
	jinst_archive_close(a);
	free(data);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_archive WORK_DIR SEEDS_DIR CLASSES_ARCHIVE\n");
		return 2;
	}
	round_trip(argv[1]);
	copy_kept(argv[2]);
	unpack_refusals();
	pack_classes(argv[3]);
	CHECK(read_seed(argv[2], "jar") == 0, "the good jar");
	CHECK(read_seed(argv[2], "jmod") == 0, "the jmod");
	CHECK(read_seed(argv[2], "empty") == 0, "no entries");
	CHECK(read_seed(argv[2], "truncated") == JINST_EMALFORMED, "truncated");
	CHECK(read_seed(argv[2], "bad_crc") == JINST_EMALFORMED, "bad CRC");
	CHECK(read_seed(argv[2], "lying_size") == JINST_EMALFORMED, "lying size");
	return check_report();
}
