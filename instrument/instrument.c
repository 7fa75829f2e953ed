/*
 * The instrumenter: its life, its configuration and class filters, the
 * passes it runs, and the one call that instruments a class
 * (include/jinst/instrument.h). The work on one class is driver.c's; the
 * method table, methods.c's.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void say(jinst_diag *diag, int code, const char *fmt, va_list ap)
{
	if (diag) {
		diag->code = code;
		diag->offset = JINST_NO_OFFSET;
		vsnprintf(diag->message, sizeof(diag->message), fmt, ap);
	}
}

int jinst_pass_fail(jinst_diag *diag, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(diag, code, fmt, ap);
	va_end(ap);
	return code;
}

int jinst_pass_decline(jinst_diag *diag, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(diag, code, fmt, ap);
	va_end(ap);
	return JINST_PASS_SKIP;
}

void jinst_ins_diag_clear(jinst_diag *diag)
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
	if (!strncmp(class_name, JINST_RUNTIME_PACKAGE, sizeof(JINST_RUNTIME_PACKAGE) - 1) ||
	    (ins->hooks_class && !strcmp(class_name, ins->hooks_class)))
		return false;
	const jinst_hook *h = jinst_hooks();
	for (int i = 0; i < JINST_HOOK_COUNT; i++)
		if (!strcmp(class_name, h[i].owner))
			return false;
	if (ins->include && ins->include[0] && !any_match(ins->include, class_name))
		return false;
	return !any_match(ins->exclude, class_name);
}

/* ---- life ---- */

static void free_passes(jinst_pass *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i].free)
			p[i].free(p[i].state);
	free(p);
}

void jinst_instrument_free(jinst_instrument *ins)
{
	if (!ins)
		return;
	jinst_methods_free(&ins->methods);
	jinst_probe_classes_free(&ins->probe_classes);
	free_passes(ins->passes, ins->pass_count);
	free_patterns(ins->include);
	free_patterns(ins->exclude);
	free(ins->hooks_class);
	free(ins->run_class);
	free(ins);
}

int jinst_instrument_set_run_class(jinst_instrument *ins, const char *run_class)
{
	if (atomic_load(&ins->classes_seen))
		return JINST_EINVAL;
	char *copy = run_class ? copy_string(run_class) : NULL;
	if (run_class && !copy)
		return JINST_ENOMEM;
	free(ins->run_class);
	ins->run_class = copy;
	return 0;
}

int jinst_instrument_add_pass(jinst_instrument *ins, const jinst_pass *pass, jinst_diag *diag)
{
	jinst_ins_diag_clear(diag);
	const char *why = NULL;
	if (pass->version != JINST_PASS_VERSION)
		why = "pass version";
	else if (!pass->name || !*pass->name || strlen(pass->name) > 32 || strchr(pass->name, ','))
		why = "a pass needs a name of 1 to 32 characters, no comma";
	else if (ins->pass_count >= 32)
		why = "32 passes at most";
	for (uint32_t i = 0; !why && i < ins->pass_count; i++)
		if (!strcmp(ins->passes[i].name, pass->name))
			why = "a pass of that name is there already";
	jinst_pass *p = why ? NULL : realloc(ins->passes, (ins->pass_count + 1) * sizeof(*p));
	if (!p) {
		if (pass->free)
			pass->free(pass->state);
		return why ? jinst_ins_fail(diag, JINST_EINVAL, "pass %s: %s", pass->name ? pass->name : "?", why)
		           : jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
	}
	p[ins->pass_count++] = *pass;
	ins->passes = p;
	return 0;
}

int jinst_instrument_set_natives(jinst_instrument *ins, const jinst_natives_options *opts, jinst_diag *diag)
{
	jinst_ins_diag_clear(diag);
	if (atomic_load(&ins->classes_seen) || !opts || opts->version != JINST_NATIVES_OPTIONS_VERSION)
		return jinst_ins_fail(diag, JINST_EINVAL, "natives: before any class, with options of version %u",
		                      JINST_NATIVES_OPTIONS_VERSION);
	jinst_pass pass;
	int rc = jinst_natives_pass(&pass, opts);
	if (rc)
		return jinst_ins_fail(diag, rc, "out of memory");
	if ((rc = jinst_instrument_add_pass(ins, &pass, diag)))
		return rc;
	/* From last to its place: after coverage, before the rest. */
	uint32_t at = ins->pass_count > 1 && !strcmp(ins->passes[0].name, "coverage") ? 1 : 0;
	memmove(&ins->passes[at + 1], &ins->passes[at], (ins->pass_count - 1 - at) * sizeof(pass));
	ins->passes[at] = pass;
	return 0;
}

int jinst_instrument_new(jinst_instrument **out, const jinst_instrument_options *opts, jinst_diag *diag)
{
	*out = NULL;
	jinst_ins_diag_clear(diag);
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
	ins->include = copy_patterns(opts->include, &oom);
	ins->exclude = copy_patterns(opts->exclude, &oom);
	ins->left_alone = opts->left_alone;
	ins->left_alone_ctx = opts->left_alone_ctx;
	ins->declined = opts->declined;
	if (opts->hooks_class && !(ins->hooks_class = copy_string(opts->hooks_class)))
		oom = true;
	if (oom || jinst_methods_init(&ins->methods)) {
		free_patterns(ins->include);
		free_patterns(ins->exclude);
		free(ins->hooks_class);
		free(ins->run_class);
		free(ins);
		return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
	}
	if (jinst_probe_classes_init(&ins->probe_classes)) {
		jinst_instrument_free(ins);
		return jinst_ins_fail(diag, JINST_ENOMEM, "out of memory");
	}
	/* Coverage first: its placement reads the original code. */
	if (opts->passes & (JINST_PASS_COVERAGE | JINST_PASS_COVERAGE_COUNTS)) {
		jinst_pass cov;
		jinst_coverage_pass(&cov, opts->passes);
		int rc = jinst_instrument_add_pass(ins, &cov, diag);
		if (rc) {
			jinst_instrument_free(ins);
			return rc;
		}
	}
	if (opts->passes & (JINST_PASS_TRACE | JINST_PASS_COUNT)) {
		jinst_pass trace;
		jinst_trace_pass(&trace, opts->passes);
		int rc = jinst_instrument_add_pass(ins, &trace, diag);
		if (rc) {
			jinst_instrument_free(ins);
			return rc;
		}
	}
	*out = ins;
	return 0;
}

void jinst_instrument_get_counts(const jinst_instrument *ins, jinst_instrument_counts *out)
{
	jinst_instrument *m = (jinst_instrument *)ins; /* atomics are read through non-const */
	out->classes_seen = atomic_load(&m->classes_seen);
	out->classes_instrumented = atomic_load(&m->classes_instrumented);
	out->classes_left_alone = atomic_load(&m->classes_left_alone);
	out->methods_instrumented = atomic_load(&m->methods_instrumented);
	out->methods_left_alone = atomic_load(&m->methods_left_alone);
	out->classes_declined = atomic_load(&m->classes_declined);
}

/* ---- one class ---- */

int jinst_instrument_class(jinst_instrument *ins, jinst_arena *arena, const uint8_t *bytes, size_t len,
                           const uint64_t *identity, uint32_t flags, const jinst_allocator *alloc, uint8_t **out,
                           size_t *out_len, jinst_diag *diag)
{
	*out = NULL;
	*out_len = 0;
	jinst_ins_diag_clear(diag);
	atomic_fetch_add(&ins->classes_seen, 1);
	if (!ins->pass_count)
		return 0;
	uint8_t *res = NULL;
	size_t res_len = 0;
	uint32_t done = 0;
	int rc = jinst_ins_run(ins, arena, bytes, len, identity, flags, &res, &res_len, diag, &done);
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
