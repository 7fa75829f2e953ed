/*
 * The readers of jinst attach: what the target VM and its /proc files give
 * the tool. None trusts its input: each walks the bytes it is given with
 * explicit bounds, reads numbers with a cap, and answers "absent" rather
 * than guess.
 *
 * The VM's reply to an attach operation (HotSpot's attachListener) is a
 * decimal status line, then the operation's output. For `load` the output
 * is "return code: N" (JDK 9 on: JvmtiAgentList, or JvmtiExport before 21),
 * the value Agent_OnAttach returned; JDK 8 wrote the bare number.
 */
#include "attach.h"

#include <stdlib.h>
#include <string.h>

/* A decimal number, optionally negative, at buf[*i..len), capped; false
 * when there is no digit. */
static bool number(const char *buf, size_t len, size_t *i, long *out)
{
	size_t k = *i;
	bool neg = k < len && buf[k] == '-';
	k += neg;
	long x = 0;
	size_t start = k;
	for (; k < len && buf[k] >= '0' && buf[k] <= '9'; k++)
		if (x < 100000000)
			x = x * 10 + (buf[k] - '0');
	if (k == start)
		return false;
	*out = neg ? -x : x;
	*i = k;
	return true;
}

/* The end of the line at buf[i..len) (the index of its '\n', or len). */
static size_t line_end(const char *buf, size_t len, size_t i)
{
	const char *nl = i < len ? memchr(buf + i, '\n', len - i) : NULL;
	return nl ? (size_t)(nl - buf) : len;
}

int attach_reply_parse(attach_reply *out, const char *buf, size_t len)
{
	memset(out, 0, sizeof *out);
	size_t i = 0;
	if (!number(buf, len, &i, &out->status) || line_end(buf, len, i) != i)
		return -1;
	i = i < len ? i + 1 : i;
	out->text = buf + i;
	out->text_len = len - i;
	out->line_len = line_end(buf, len, i) - i;
	/* the agent's value: the first line of the output that says it */
	for (size_t k = i; k < len;) {
		size_t end = line_end(buf, len, k), at = k;
		static const char tag[] = "return code: ";
		if (end - k >= sizeof tag - 1 && !memcmp(buf + k, tag, sizeof tag - 1))
			at = k + sizeof tag - 1;
		if ((at > k || k == i) && number(buf, len, &at, &out->agent_rc) && at == end) {
			out->has_agent_rc = true;
			break;
		}
		k = end + 1;
	}
	return 0;
}

long attach_nspid(const char *buf, size_t len)
{
	static const char tag[] = "NSpid:";
	for (size_t k = 0; k < len;) {
		size_t end = line_end(buf, len, k);
		if (end - k >= sizeof tag - 1 && !memcmp(buf + k, tag, sizeof tag - 1)) {
			long last = 0, x;
			for (size_t i = k + sizeof tag - 1; i < end;) {
				if (buf[i] == ' ' || buf[i] == '\t')
					i++;
				else if (number(buf, end, &i, &x) && x > 0)
					last = x;
				else
					return 0;
			}
			return last;
		}
		k = end + 1;
	}
	return 0;
}

void attach_name(const char *buf, size_t len, char *out, size_t size)
{
	size_t n = 0;
	for (size_t i = 0; i < len && buf[i] != '\n' && n + 1 < size; i++)
		out[n++] = buf[i] >= ' ' && buf[i] <= '~' ? buf[i] : '?';
	if (size)
		out[n] = 0;
}

/* The line "field:" of a /proc/PID/status: the index of what follows the
 * colon, or len. */
static size_t status_line(const char *buf, size_t len, const char *field, size_t *end)
{
	size_t fn = strlen(field);
	for (size_t k = 0; k < len;) {
		*end = line_end(buf, len, k);
		if (*end - k > fn && !memcmp(buf + k, field, fn) && buf[k + fn] == ':')
			return k + fn + 1;
		k = *end + 1;
	}
	return len;
}

long attach_status_field(const char *buf, size_t len, const char *field)
{
	size_t end, i = status_line(buf, len, field, &end);
	long x;
	if (i >= len)
		return -1;
	while (i < end && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	return number(buf, end, &i, &x) && x >= 0 ? x : -1;
}

int attach_catches(const char *buf, size_t len, int signo)
{
	/* SigCgt: a hexadecimal mask, signal n at bit n - 1, the last digit
	 * holding signals 1 to 4 */
	size_t end, i = status_line(buf, len, "SigCgt", &end);
	if (i >= len || signo < 1)
		return -1;
	while (i < end && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	size_t digit = (size_t)(signo - 1) / 4;
	if (i >= end || end - i <= digit)
		return i < end ? 0 : -1;
	char c = buf[end - 1 - digit];
	int v = c >= '0' && c <= '9'   ? c - '0'
	        : c >= 'a' && c <= 'f' ? c - 'a' + 10
	        : c >= 'A' && c <= 'F' ? c - 'A' + 10
	                               : -1;
	return v < 0 ? -1 : (v >> ((signo - 1) % 4)) & 1;
}

static bool separator(char c, bool words)
{
	return c == 0 || (words && (c == ' ' || c == '\t' || c == '\n' || c == '\r'));
}

/* Calls see(arg, n, ctx) for each argument of the list, in order. */
static void each_arg(const char *buf, size_t len, bool words, void (*see)(const char *, size_t, void *), void *ctx)
{
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && !separator(buf[j], words))
			j++;
		if (j > i)
			see(buf + i, j - i, ctx);
		i = j + 1;
	}
}

struct flag_seen {
	const char *name;
	int state;
};

static void see_flag(const char *a, size_t n, void *ctx)
{
	struct flag_seen *f = ctx;
	size_t nn = strlen(f->name);
	if (n == 5 + nn && !memcmp(a, "-XX:", 4) && (a[4] == '+' || a[4] == '-') && !memcmp(a + 5, f->name, nn))
		f->state = a[4] == '+';
}

int attach_flag_state(const char *buf, size_t len, bool words, const char *name, int state)
{
	struct flag_seen f = {name, state};
	each_arg(buf, len, words, see_flag, &f);
	return f.state;
}

struct arg_seen {
	const char *arg;
	bool found;
};

static void see_arg(const char *a, size_t n, void *ctx)
{
	struct arg_seen *s = ctx;
	s->found |= n == strlen(s->arg) && !memcmp(a, s->arg, n);
}

bool attach_has_arg(const char *buf, size_t len, bool words, const char *arg)
{
	struct arg_seen s = {arg, false};
	each_arg(buf, len, words, see_arg, &s);
	return s.found;
}

static void see_flags(const char *a, size_t n, void *ctx)
{
	attach_flags *f = ctx;
	struct flag_seen d = {"DisableAttachMechanism", f->disable_attach};
	struct flag_seen e = {"EnableDynamicAgentLoading", f->dynamic_loading};
	see_flag(a, n, &d);
	see_flag(a, n, &e);
	f->disable_attach = d.state;
	f->dynamic_loading = e.state;
	f->rs |= n == 4 && !memcmp(a, "-Xrs", 4);
}

void attach_flags_apply(attach_flags *f, const char *buf, size_t len, bool words)
{
	each_arg(buf, len, words, see_flags, f);
}

size_t attach_argfile_args(const char *buf, size_t len, char *out)
{
	/* Each byte written stands for one read, but for the NUL after the
	 * last argument: at most len + 1. */
	size_t n = 0;
	bool in = false, comment = false;
	char quote = 0;
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (comment) {
			comment = c != '\n' && c != '\r';
		} else if (quote && c == quote) {
			quote = 0;
		} else if (quote && c == '\\' && i + 1 < len) {
			c = buf[++i];
			out[n++] = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == 'f' ? '\f' : c;
		} else if (c == '\n' || c == '\r' || (!quote && (c == ' ' || c == '\t' || c == '\f' || c == '#'))) {
			/* (a line ends a quote too) */
			if (in)
				out[n++] = 0;
			in = false;
			quote = 0;
			comment = c == '#';
		} else if (!quote && (c == '\'' || c == '"')) {
			quote = c;
			in = true;
		} else {
			out[n++] = c;
			in = true;
		}
	}
	if (in)
		out[n++] = 0;
	return n;
}

/* The launcher's options that take the next argument as their value
 * (java.c IsWhiteSpaceOption, but -jar, -m and --module, whose next
 * argument is the main class's place). */
static bool takes_value(const char *a, size_t n)
{
	static const char *const opts[] = {"-cp", "-classpath", "--class-path", "-p", "--module-path",
	                                   "--upgrade-module-path", "--add-modules", "--enable-native-access",
	                                   "--limit-modules", "--add-exports", "--add-opens", "--add-reads",
	                                   "--patch-module", "-d", "--describe-module", "--source"};
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
		if (n == strlen(opts[i]) && !memcmp(a, opts[i], n))
			return true;
	return false;
}

struct launcher {
	attach_flags *f;
	attach_argfile_reader *rd;
	void *ctx;
	bool first, value, expand, done, in_file;
};

static void see_launcher_arg(const char *a, size_t n, void *ctx)
{
	struct launcher *l = ctx;
	if (l->first || l->done) {
		l->first = false;
		return;
	}
	if (l->expand && !l->in_file && n > 1 && a[0] == '@' && a[1] != '@') {
		size_t flen = 0;
		char *file = l->rd(l->ctx, a + 1, n - 1, &flen);
		char *args = file ? malloc(flen + 1) : NULL;
		if (args) {
			l->in_file = true;
			each_arg(args, attach_argfile_args(file, flen, args), false, see_launcher_arg, l);
			l->in_file = false;
		}
		free(args);
		free(file);
		return;
	}
	if (a[0] != '-') {
		l->done = !l->value;
		l->value = false;
		return;
	}
	see_flags(a, n, l->f);
	l->value = takes_value(a, n);
	if (n == strlen("--disable-@files") && !memcmp(a, "--disable-@files", n))
		l->expand = false;
	if (n >= strlen("--module=") && !memcmp(a, "--module=", strlen("--module=")))
		l->done = true;
}

void attach_cmdline_flags(attach_flags *f, const char *buf, size_t len, attach_argfile_reader *rd, void *ctx)
{
	struct launcher l = {f, rd, ctx, true, false, true, false, false};
	each_arg(buf, len, false, see_launcher_arg, &l);
}

bool attach_env(const char *buf, size_t len, const char *name, const char **value, size_t *value_len)
{
	size_t nn = strlen(name);
	for (size_t i = 0; i < len;) {
		const char *z = memchr(buf + i, 0, len - i);
		size_t end = z ? (size_t)(z - buf) : len;
		if (end - i > nn && !memcmp(buf + i, name, nn) && buf[i + nn] == '=') {
			*value = buf + i + nn + 1;
			*value_len = end - i - nn - 1;
			return true;
		}
		i = end + 1;
	}
	return false;
}

bool attach_property(const char *buf, size_t len, const char *name, char *value, size_t size)
{
	/* Properties.store: "#" comments, then a "key=value" line each, the
	 * key's separators escaped (so the name ends at '=', ':' or a blank),
	 * and in the value a backslash, '=', ':', '#', '!' and a leading
	 * blank escaped with a backslash, characters past ASCII as a backslash, u and
	 * four hex digits. */
	size_t nn = strlen(name);
	for (size_t i = 0; i < len;) {
		size_t end = line_end(buf, len, i);
		if (end - i > nn && !memcmp(buf + i, name, nn) && memchr("=: \t\r", buf[i + nn], 5)) {
			size_t k = i + nn, n = 0;
			while (k < end && (buf[k] == ' ' || buf[k] == '\t'))
				k++;
			if (k < end && (buf[k] == '=' || buf[k] == ':'))
				k++;
			while (k < end && (buf[k] == ' ' || buf[k] == '\t'))
				k++;
			bool ok = size > 0;
			for (; ok && k < end && buf[k] != '\r'; k++) {
				/* an escaped character stands for itself, but for the
				 * escapes of control characters and of u (a character past ASCII) */
				char ch = buf[k];
				if (ch == '\\' && (k + 1 == end || strchr("utnrf", buf[k + 1])))
					ok = false;
				else if (ch == '\\')
					ch = buf[++k];
				if (ok && n + 1 < size)
					value[n++] = ch;
				else
					ok = false;
			}
			if (size)
				value[ok ? n : 0] = 0;
			return true;
		}
		i = end + 1;
	}
	if (size)
		value[0] = 0;
	return false;
}
