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
