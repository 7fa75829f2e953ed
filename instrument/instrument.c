/*
 * The instrumenter: configuration, class selection, the method-id table and
 * the driver that runs the passes over one class (include/jinst/instrument.h).
 *
 * Ids. A method's id is handed out the first time a class holding it is
 * instrumented and is keyed by (class name, method name, descriptor): a
 * class retransformed, or a class of the same name defined by another
 * loader, gets the same ids, which is what the reports want since they
 * aggregate by name. The table is one open-addressing hash (xxhash of the
 * key) over an array of entries, guarded by one mutex taken once per class,
 * not once per method, so load-time threads rarely meet on it.
 *
 * Failing open (DESIGN.md, invariant 1). The class is parsed, each method
 * edited on its own (a method the editor refuses, say because it would pass
 * 64 KiB, keeps its code), the class written and, when the VM retransforms,
 * checked against the rules; any failure of the class as a whole returns an
 * error and no bytes, and the caller keeps the original.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xxhash.h"

#include "internal.h"

typedef struct meta {
	jinst_method_info info; /* strings in one block starting at info.class_name */
	uint64_t hash;
	size_t key_len;         /* class, name and descriptor with their NULs */
} meta;

struct jinst_instrument {
	uint32_t passes;
	char **include, **exclude;  /* NULL-terminated copies, or NULL */
	void (*left_alone)(void *ctx, const char *class_name, const char *method, const char *descriptor,
	                   const jinst_diag *why);
	void *left_alone_ctx;

	pthread_mutex_t lock;       /* guards the table below */
	meta *entries;
	uint32_t count, cap;
	uint32_t *slots;            /* id + 1, 0 when free */
	uint32_t nslots;            /* a power of two, at least twice count */
	_Atomic uint32_t published; /* count, readable without the lock */

	_Atomic uint64_t classes_seen, classes_instrumented, classes_left_alone;
	_Atomic uint64_t methods_instrumented, methods_left_alone;
};

/* The runtime's own classes: the hooks and everything they call there (and,
 * outside it, the bridge that owns the hooks: jinst_instrument_wants). */
static const char runtime_package[] = "jinst/rt/";

int jinst_ins_fail(jinst_diag *diag, int code, const char *fmt, ...)
{
	if (diag) {
		diag->code = code;
		diag->offset = JINST_NO_OFFSET;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(diag->message, sizeof(diag->message), fmt, ap);
		va_end(ap);
	}
	return code;
}

static void diag_clear(jinst_diag *diag)
{
	if (diag) {
		diag->code = 0;
		diag->offset = JINST_NO_OFFSET;
		diag->where[0] = diag->message[0] = '\0';
	}
}

/* ---- patterns ---- */

/* '*' matches within one package level, '**' across levels, '.' stands
 * for '/'. Backtracking is fine: patterns and names are short. */
static bool glob_match(const char *p, const char *s)
{
	for (;;) {
		if (*p == '*') {
			bool deep = p[1] == '*';
			p += deep ? 2 : 1;
			for (const char *t = s;; t++) {
				if (glob_match(p, t))
					return true;
				if (!*t || (!deep && *t == '/'))
					return false;
			}
		}
		if (!*p)
			return !*s;
		char pc = *p == '.' ? '/' : *p;
		if (pc != *s)
			return false;
		p++;
		s++;
	}
}

static bool any_match(char *const *pats, const char *name)
{
	for (; pats && *pats; pats++)
		if (glob_match(*pats, name))
			return true;
	return false;
}

static char *copy_string(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

static char **copy_patterns(const char *const *pats, bool *oom)
{
	if (!pats)
		return NULL;
	size_t n = 0;
	while (pats[n])
		n++;
	char **v = calloc(n + 1, sizeof(*v));
	if (!v) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = copy_string(pats[i])))
			*oom = true;
	return v;
}

static void free_patterns(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

bool jinst_instrument_wants(const jinst_instrument *ins, const char *class_name)
{
	if (!strncmp(class_name, runtime_package, sizeof(runtime_package) - 1) ||
	    !strcmp(class_name, jinst_hooks()[JINST_HOOK_ENTER].owner))
		return false;
	if (ins->include && ins->include[0] && !any_match(ins->include, class_name))
		return false;
	return !any_match(ins->exclude, class_name);
}

/* ---- life ---- */

int jinst_instrument_new(jinst_instrument **out, const jinst_instrument_options *opts, jinst_diag *diag)
{
	*out = NULL;
	diag_clear(diag);
	jinst_instrument_options def = JINST_INSTRUMENT_OPTIONS_INIT;
	if (!opts)
		opts = &def;
	if (opts->version != JINST_INSTRUMENT_OPTIONS_VERSION)
		return jinst_ins_fail(diag, JINST_EINVAL, "options version %u, expected %u", opts->version,
		                      JINST_INSTRUMENT_OPTIONS_VERSION);
	jinst_instrument *ins = calloc(1, sizeof(*ins));
	if (!ins)
		return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
	bool oom = false;
	ins->passes = opts->passes;
	ins->include = copy_patterns(opts->include, &oom);
	ins->exclude = copy_patterns(opts->exclude, &oom);
	ins->left_alone = opts->left_alone;
	ins->left_alone_ctx = opts->left_alone_ctx;
	ins->nslots = 1024;
	ins->slots = calloc(ins->nslots, sizeof(*ins->slots));
	if (oom || !ins->slots || pthread_mutex_init(&ins->lock, NULL)) {
		free_patterns(ins->include);
		free_patterns(ins->exclude);
		free(ins->slots);
		free(ins);
		return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
	}
	*out = ins;
	return 0;
}

void jinst_instrument_free(jinst_instrument *ins)
{
	if (!ins)
		return;
	for (uint32_t i = 0; i < ins->count; i++)
		free((char *)ins->entries[i].info.class_name);
	free(ins->entries);
	free(ins->slots);
	free_patterns(ins->include);
	free_patterns(ins->exclude);
	pthread_mutex_destroy(&ins->lock);
	free(ins);
}

void jinst_instrument_get_counts(const jinst_instrument *ins, jinst_instrument_counts *out)
{
	jinst_instrument *m = (jinst_instrument *)ins; /* atomics are read through non-const */
	out->classes_seen = atomic_load(&m->classes_seen);
	out->classes_instrumented = atomic_load(&m->classes_instrumented);
	out->classes_left_alone = atomic_load(&m->classes_left_alone);
	out->methods_instrumented = atomic_load(&m->methods_instrumented);
	out->methods_left_alone = atomic_load(&m->methods_left_alone);
}

/* ---- the id table ---- */

/* A method of the class being instrumented, before and after it has an id. */
typedef struct cand {
	jinst_member *m;
	const char *name, *descriptor; /* NUL-terminated copies in the arena */
	size_t name_len, desc_len;
	uint32_t first_line;
	bool timed;
	uint32_t id;
} cand;

static uint64_t key_hash(const char *cls, size_t clen, const cand *k)
{
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, cls, clen + 1);
	XXH3_64bits_update(&st, k->name, k->name_len + 1);
	XXH3_64bits_update(&st, k->descriptor, k->desc_len + 1);
	return XXH3_64bits_digest(&st);
}

static bool key_equal(const meta *e, const char *cls, size_t clen, const cand *k)
{
	const char *p = e->info.class_name;
	return e->key_len == clen + k->name_len + k->desc_len + 3 && !memcmp(p, cls, clen + 1) &&
	       !memcmp(p + clen + 1, k->name, k->name_len + 1) &&
	       !memcmp(p + clen + k->name_len + 2, k->descriptor, k->desc_len + 1);
}

static bool table_grow(jinst_instrument *ins)
{
	if (ins->count == ins->cap) {
		uint32_t cap = ins->cap ? ins->cap * 2 : 256;
		meta *e = realloc(ins->entries, (size_t)cap * sizeof(*e));
		if (!e)
			return false;
		ins->entries = e;
		ins->cap = cap;
	}
	if ((uint64_t)(ins->count + 1) * 2 > ins->nslots) {
		uint32_t n = ins->nslots * 2;
		uint32_t *s = calloc(n, sizeof(*s));
		if (!s)
			return false;
		for (uint32_t i = 0; i < ins->count; i++) {
			uint32_t j = (uint32_t)ins->entries[i].hash & (n - 1);
			while (s[j])
				j = (j + 1) & (n - 1);
			s[j] = i + 1;
		}
		free(ins->slots);
		ins->slots = s;
		ins->nslots = n;
	}
	return true;
}

/* Gives every candidate its id, existing or new. */
static int assign_ids(jinst_instrument *ins, const char *cls, const char *source, cand *cs, uint32_t n,
                      jinst_diag *diag)
{
	size_t clen = strlen(cls), slen = source ? strlen(source) : 0;
	int rc = 0;
	pthread_mutex_lock(&ins->lock);
	for (uint32_t i = 0; i < n && !rc; i++) {
		cand *k = &cs[i];
		uint64_t h = key_hash(cls, clen, k);
		uint32_t j = (uint32_t)h & (ins->nslots - 1), s;
		while ((s = ins->slots[j]) && !(ins->entries[s - 1].hash == h && key_equal(&ins->entries[s - 1], cls, clen, k)))
			j = (j + 1) & (ins->nslots - 1);
		if (s) {
			k->id = s - 1;
			ins->entries[k->id].info.timed = k->timed;
			continue;
		}
		if (ins->count == INT32_MAX || !table_grow(ins)) {
			rc = jinst_ins_fail(diag, JINST_ENOMEM, "out of memory for the method table");
			break;
		}
		size_t key_len = clen + k->name_len + k->desc_len + 3;
		char *block = malloc(key_len + (source ? slen + 1 : 0));
		if (!block) {
			rc = jinst_ins_fail(diag, JINST_ENOMEM, "out of memory for the method table");
			break;
		}
		meta *e = &ins->entries[ins->count];
		memcpy(block, cls, clen + 1);
		memcpy(block + clen + 1, k->name, k->name_len + 1);
		memcpy(block + clen + k->name_len + 2, k->descriptor, k->desc_len + 1);
		if (source)
			memcpy(block + key_len, source, slen + 1);
		e->info.class_name = block;
		e->info.name = block + clen + 1;
		e->info.descriptor = block + clen + k->name_len + 2;
		e->info.source_file = source ? block + key_len : NULL;
		e->info.first_line = k->first_line;
		e->info.timed = k->timed;
		e->hash = h;
		e->key_len = key_len;
		/* slots was sized in table_grow; find the free slot again */
		j = (uint32_t)h & (ins->nslots - 1);
		while (ins->slots[j])
			j = (j + 1) & (ins->nslots - 1);
		ins->slots[j] = ins->count + 1;
		k->id = ins->count++;
	}
	atomic_store(&ins->published, ins->count);
	pthread_mutex_unlock(&ins->lock);
	return rc;
}

uint32_t jinst_instrument_method_count(const jinst_instrument *ins)
{
	return atomic_load(&((jinst_instrument *)ins)->published);
}

int jinst_instrument_method_info(const jinst_instrument *ins, uint32_t id, jinst_method_info *info)
{
	jinst_instrument *m = (jinst_instrument *)ins; /* the lock is taken through non-const */
	int rc = JINST_EINVAL;
	pthread_mutex_lock(&m->lock);
	if (id < m->count) {
		*info = m->entries[id].info;
		rc = 0;
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/* ---- one class ---- */

/* A NUL-terminated arena copy of a constant-pool string. */
static const char *cstr(jinst_arena *A, const uint8_t *s, uint16_t len, size_t *out_len)
{
	char *p = jinst_arena_alloc(A, (size_t)len + 1);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	if (out_len)
		*out_len = len;
	return p;
}

/* The lowest line of the method's LineNumberTable(s), 0 without one. */
static uint32_t first_line(jinst_class *c, const jinst_code *code)
{
	uint32_t line = 0;
	for (uint16_t i = 0; i < code->attrs.count; i++) {
		jinst_attr *a = &code->attrs.items[i];
		jinst_line_numbers *ln;
		if (a->kind != JINST_ATTR_LINE_NUMBER_TABLE || jinst_attr_decode(c, a, (void **)&ln, NULL) || !ln)
			continue;
		for (uint16_t j = 0; j < ln->count; j++)
			if (!line || ln->items[j].line_number < line)
				line = ln->items[j].line_number;
	}
	return line;
}

static const char *source_file(jinst_class *c)
{
	jinst_attr *a = jinst_attr_find(jinst_class_attrs(c), JINST_ATTR_SOURCE_FILE);
	jinst_attr_index *ix;
	if (!a || jinst_attr_decode(c, a, (void **)&ix, NULL) || !ix)
		return NULL;
	uint16_t len;
	const uint8_t *s = jinst_cp_utf8(c, ix->index, &len);
	return s ? cstr(jinst_class_arena(c), s, len, NULL) : NULL;
}

/* Appends "name(desc) CODE" to the note in diag->message. */
static void note_left_alone(jinst_diag *diag, uint32_t nth, const cand *k, const jinst_diag *why)
{
	if (!diag)
		return;
	size_t used = strlen(diag->message), room = sizeof(diag->message) - used;
	if (room <= 1)
		return;
	snprintf(diag->message + used, room, "%s%s%s %s%s%s", nth ? "; " : "left alone: ", k->name,
	         k->descriptor, jinst_strerror(why->code), why->message[0] ? ": " : "", why->message);
}

static int instrument_class(jinst_instrument *ins, jinst_arena *arena, const uint8_t *bytes, size_t len,
                            uint32_t flags, uint8_t **out, size_t *out_len, jinst_diag *diag, uint32_t *done)
{
	jinst_class *c;
	int rc = jinst_class_parse(&c, bytes, len, arena, NULL, diag);
	if (rc)
		return rc;
	jinst_arena *A = jinst_class_arena(c);
	uint16_t nlen;
	const uint8_t *nm = jinst_class_name(c, &nlen);
	const char *cls = nm ? cstr(A, nm, nlen, NULL) : NULL;
	if (!cls) {
		jinst_class_free(c);
		return jinst_ins_fail(diag, JINST_EMALFORMED, "no class name");
	}
	if (diag)
		snprintf(diag->where, sizeof(diag->where), "class %s", cls);
	if (!jinst_instrument_wants(ins, cls) || (jinst_class_access_flags(c) & JINST_ACC_MODULE)) {
		jinst_class_free(c);
		return 0;
	}
	/* Bytes that already name the hooks' class were instrumented before
	 * (offline, then loaded with the agent): twice would count twice. */
	const char *owner = jinst_hooks()[0].owner;
	size_t olen = strlen(owner);
	for (uint16_t i = 1; i < jinst_cp_count(c); i++) {
		uint16_t l;
		const uint8_t *cn;
		if (jinst_cp_tag(c, i) == JINST_CP_CLASS && (cn = jinst_cp_name(c, i, &l)) && l == olen &&
		    !memcmp(cn, owner, olen)) {
			jinst_class_free(c);
			if (diag)
				snprintf(diag->message, sizeof(diag->message), "already instrumented (it calls %s)", owner);
			return 0;
		}
	}

	/* Every method with code: abstract and native ones have none. */
	uint16_t nm_count = jinst_class_method_count(c);
	cand *cs = jinst_arena_zalloc(A, (size_t)(nm_count ? nm_count : 1) * sizeof(*cs));
	if (!cs) {
		jinst_class_free(c);
		return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
	}
	uint32_t n = 0;
	for (uint16_t i = 0; i < nm_count; i++) {
		jinst_member *m = jinst_class_method(c, i);
		if (jinst_member_access_flags(m) & (JINST_ACC_ABSTRACT | JINST_ACC_NATIVE))
			continue;
		jinst_attr *code_attr = jinst_attr_find(jinst_member_attrs(m), JINST_ATTR_CODE);
		jinst_code *code;
		if (!code_attr)
			continue;
		if (jinst_attr_decode(c, code_attr, (void **)&code, NULL) || !code)
			code = NULL;
		uint16_t l1, l2;
		const uint8_t *name = jinst_cp_utf8(c, jinst_member_name_index(m), &l1);
		const uint8_t *desc = jinst_cp_utf8(c, jinst_member_descriptor_index(m), &l2);
		if (!name || !desc) {
			jinst_class_free(c);
			return jinst_ins_fail(diag, JINST_EMALFORMED, "method %u: name or descriptor not a Utf8", i);
		}
		cand *k = &cs[n++];
		k->m = m;
		k->name = cstr(A, name, l1, &k->name_len);
		k->descriptor = cstr(A, desc, l2, &k->desc_len);
		if (!k->name || !k->descriptor) {
			jinst_class_free(c);
			return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
		}
		k->first_line = code ? first_line(c, code) : 0;
		k->timed = (ins->passes & JINST_PASS_TRACE) &&
		           !(code && (ins->passes & JINST_PASS_COUNT_LEAVES) && jinst_trace_is_leaf(c, m, code));
	}
	if (!n) {
		jinst_class_free(c);
		return 0;
	}

	uint16_t refs[JINST_HOOK_COUNT];
	const jinst_hook *h = jinst_hooks();
	for (int i = 0; i < JINST_HOOK_COUNT; i++) {
		rc = jinst_cp_add_methodref(c, h[i].owner, h[i].name, h[i].descriptor, &refs[i]);
		if (rc) {
			jinst_class_free(c);
			return jinst_ins_fail(diag, rc, "cannot add the hook %s.%s%s to the constant pool", h[i].owner,
			                      h[i].name, h[i].descriptor);
		}
	}
	rc = assign_ids(ins, cls, source_file(c), cs, n, diag);
	if (rc) {
		jinst_class_free(c);
		return rc;
	}

	uint32_t left = 0;
	for (uint32_t i = 0; i < n; i++) {
		jinst_diag why;
		diag_clear(&why);
		int mrc = jinst_trace_method(c, cs[i].m, cs[i].id, refs, !cs[i].timed, &why);
		if (!mrc) {
			(*done)++;
			continue;
		}
		why.code = mrc;
		note_left_alone(diag, left++, &cs[i], &why);
		atomic_fetch_add(&ins->methods_left_alone, 1);
		if (ins->left_alone)
			ins->left_alone(ins->left_alone_ctx, cls, cs[i].name, cs[i].descriptor, &why);
	}
	if (!*done) {
		jinst_class_free(c);
		return 0;
	}

	jinst_diag wd;
	rc = jinst_class_write(c, NULL, out, out_len, &wd);
	jinst_class_free(c);
	if (rc) {
		if (diag) {
			diag->code = wd.code;
			snprintf(diag->message, sizeof(diag->message), "write: %.60s: %.180s", wd.where, wd.message);
		}
		return rc;
	}
	if (flags & JINST_INSTRUMENT_RETRANSFORM) {
		rc = jinst_instrument_check_rules(arena, bytes, len, *out, *out_len, &wd);
		if (rc) {
			free(*out);
			*out = NULL;
			*out_len = 0;
			if (diag) {
				diag->code = rc;
				snprintf(diag->message, sizeof(diag->message), "%s", wd.message);
			}
			return rc;
		}
	}
	return 0;
}

int jinst_instrument_class(jinst_instrument *ins, jinst_arena *arena, const uint8_t *bytes, size_t len,
                           uint32_t flags, const jinst_allocator *alloc, uint8_t **out, size_t *out_len,
                           jinst_diag *diag)
{
	*out = NULL;
	*out_len = 0;
	diag_clear(diag);
	atomic_fetch_add(&ins->classes_seen, 1);
	if (!(ins->passes & (JINST_PASS_TRACE | JINST_PASS_COUNT)))
		return 0;
	uint8_t *res = NULL;
	size_t res_len = 0;
	uint32_t done = 0;
	int rc = instrument_class(ins, arena, bytes, len, flags, &res, &res_len, diag, &done);
	if (!rc && res && alloc) {
		uint8_t *p = alloc->alloc(alloc->ctx, res_len ? res_len : 1);
		if (!p)
			rc = jinst_ins_fail(diag, JINST_ENOMEM, "allocator refused %zu bytes", res_len);
		else
			memcpy(p, res, res_len);
		free(res);
		res = p;
	}
	if (rc) {
		atomic_fetch_add(&ins->classes_left_alone, 1);
		return rc;
	}
	if (res) {
		atomic_fetch_add(&ins->classes_instrumented, 1);
		atomic_fetch_add(&ins->methods_instrumented, done);
	}
	*out = res;
	*out_len = res_len;
	return 0;
}
