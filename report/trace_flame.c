/*
 * The flame graph (include/jinst/report.h, jinst_trace_write_flame): one
 * HTML page that holds its own script, style and data, so it opens from a
 * mail attachment or a CI artifact with nothing else.
 *
 * The page is report/flame.html, embedded at build time as a C string
 * (cmake/embed_text.cmake). It holds one marker where the data go, a
 * script block of type application/json that the page's script parses:
 *
 *   {"title", "clock" (its name), "clockWords", "unit": "ns", "names": [frame texts],
 *    "calls": [per name: exact calls of its methods over all stacks, or -1],
 *    "nodes": [name index, depth, inclusive, self, ...]}
 *
 * The nodes are the interned stacks of fold.c, in the order the folded
 * stacks are printed (each stack before its callees, callees by frame text),
 * with depth, so that the page rebuilds each node's parent and position in
 * one pass: preorder keeps every subtree contiguous, and the page skips a
 * subtree too narrow to draw by jumping to its end. A stack below
 * min_share of the whole is pruned with its callees into one "(small
 * stacks)" node under its caller, as in the folded output; node 0 is the
 * root, every thread together.
 *
 * Escaping: the data sit inside <script>, where the HTML parser ends the
 * block at the first "</script" and treats "<!--" specially whatever the
 * JSON says. So every '<', '>' and '&' in a string is written \u003c,
 * \u003e, \u0026, which JSON.parse reads back as the character; control
 * characters as \u00XX; a byte that does not start a valid UTF-8 sequence
 * (the VM's modified UTF-8 writes NUL and supplementary characters its own
 * way) as \ufffd, so the page is valid UTF-8.
 */
#include "fold_internal.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flame_page.h"
#include "jinst/classfile.h"

#define FLAME_MARKER "@JINST_FLAME_DATA@"

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	size_t n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 :
	           p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates (modified UTF-8's pairs) and past U+10FFFF */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf0 && p[1] < 0x90) ||
	    (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* A JSON string, quoted, safe inside a script block (see above). */
static void flame_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);
		if (n == 0) {
			fputs("\\ufffd", f);
			p++;
		} else if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			if (*p == '"' || *p == '\\')
				fprintf(f, "\\%c", *p);
			else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
			p++;
		}
	}
	fputc('"', f);
}

/* The exact calls of each frame's methods (overloads share a frame): -1
 * for a frame no method names ("(tree full)"). */
static int64_t *frame_calls(const folder *fo, const int64_t *calls, size_t ncalls)
{
	int64_t *fc = malloc((fo->nframes + 1) * sizeof *fc);
	if (!fc)
		return NULL;
	for (size_t i = 0; i < fo->nframes; i++)
		fc[i] = -1;
	for (size_t k = 0; k < fo->mcap; k++) {
		uint32_t id = fo->mid[k], fr = fo->mframe[k];
		if (id == FOLD_NONE || fr == FOLD_NONE || id == FOLD_FULL)
			continue;
		if (fc[fr] < 0)
			fc[fr] = 0;
		if (calls && id < ncalls && calls[id] > 0)
			fc[fr] += calls[id];
	}
	return fc;
}

static void flame_names(FILE *f, const folder *fo, const int64_t *fc)
{
	fputs(",\n\"names\":[", f);
	for (size_t i = 0; i < fo->nframes; i++) {
		if (i)
			fputc(',', f);
		flame_str(f, fo->text[i]);
	}
	fprintf(f, "%s\"(small stacks)\"],\n\"calls\":[", fo->nframes ? "," : "");
	for (size_t i = 0; i < fo->nframes; i++)
		fprintf(f, "%" PRId64 ",", fc[i]);
	fputs("-1],\n\"nodes\":[", f);
}

/* The nodes, depth first with pruning as fold_print walks; the name index
 * of "(small stacks)" is nframes. */
static int flame_nodes(FILE *f, const folder *fo, const fold_order *o, double min_share)
{
	size_t *pos = malloc(fo->nst * sizeof *pos);
	uint32_t *at = malloc(fo->nst * sizeof *at);
	if (!pos || !at) {
		free(pos);
		free(at);
		return JINST_ENOMEM;
	}
	const int64_t *incl = o->incl;
	int64_t min = (int64_t)(min_share * (double)incl[0]);
	size_t d = 0, small_name = fo->nframes;
	at[0] = 0;
	pos[0] = o->first[0];
	fprintf(f, "-1,0,%" PRId64 ",%" PRId64, incl[0], fo->st[0].self > 0 ? fo->st[0].self : 0);
	bool entered = true;
	for (;;) {
		if (entered) {
			entered = false;
			int64_t small = 0;
			for (size_t i = o->first[at[d]]; i < o->first[at[d] + 1]; i++)
				if (incl[o->ch[i].stack] < min)
					small += incl[o->ch[i].stack];
			if (small > 0)
				fprintf(f, ",\n%zu,%zu,%" PRId64 ",%" PRId64, small_name, d + 1, small, small);
		}
		if (pos[d] == o->first[at[d] + 1]) {
			if (d == 0)
				break;
			d--;
			continue;
		}
		const fold_child *c = &o->ch[pos[d]++];
		if (incl[c->stack] < min || incl[c->stack] == 0)
			continue;
		int64_t self = fo->st[c->stack].self;
		fprintf(f, ",\n%" PRIu32 ",%zu,%" PRId64 ",%" PRId64, fo->st[c->stack].frame, d + 1, incl[c->stack],
		        self > 0 ? self : 0);
		d++;
		at[d] = c->stack;
		pos[d] = o->first[c->stack];
		entered = true;
	}
	free(pos);
	free(at);
	return 0;
}

int jinst_trace_write_flame(FILE *f, const int64_t *tree, size_t len, double min_share, const int64_t *calls,
                            size_t ncalls, const char *title, jinst_trace_clock clock, jinst_trace_names names,
                            void *ctx)
{
	const char *marker = strstr(jinst_flame_page, FLAME_MARKER);
	if (!marker || !jinst_trace_clock_name(clock))
		return JINST_EINVAL;
	folder fo;
	fold_order o = {0};
	int64_t *fc = NULL;
	int err = fold_build(&fo, tree, len, names, ctx);
	if (!err)
		err = fold_order_make(&o, &fo);
	if (!err && !(fc = frame_calls(&fo, calls, ncalls)))
		err = JINST_ENOMEM;
	if (!err) {
		fwrite(jinst_flame_page, 1, (size_t)(marker - jinst_flame_page), f);
		fputs("{\"title\":", f);
		flame_str(f, title ? title : "");
		fputs(",\"clock\":", f);
		flame_str(f, jinst_trace_clock_name(clock));
		fputs(",\"clockWords\":", f);
		flame_str(f, jinst_trace_clock_words(clock));
		fputs(",\"unit\":\"ns\"", f);
		flame_names(f, &fo, fc);
		err = flame_nodes(f, &fo, &o, min_share);
		fputs("]}", f);
		fputs(marker + strlen(FLAME_MARKER), f);
	}
	free(fc);
	fold_order_free(&o);
	fold_free(&fo);
	if (err)
		return err;
	return ferror(f) ? JINST_EIO : 0;
}
