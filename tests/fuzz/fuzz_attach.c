/*
 * libFuzzer target for the readers of jinst attach (cli/attach_proto.c):
 * the bytes as a VM's reply to `load`, as a /proc/PID/status, as a command
 * line (NUL-separated) and as an environment variable's value (words),
 * as a /proc/PID/environ, and as the agent properties of a VM.
 *
 * Whatever the input: the reply is refused or its text lies inside the
 * input, after a status line that is a number; an agent value is found
 * only in a line that is a number or "return code: N"; the namespace pid
 * is 0 or positive, and 0 without an NSpid line; a flag's state is the
 * initial one, or 1 or 0 only when -XX:+ or -XX:- of the flag is in the
 * input; an environment value lies inside the input, after its name; a
 * property is found only where its key is; a status field or signal mask
 * only where its line is; an argfile's arguments take no more room than
 * its bytes and one NUL, and a command line whose argfiles are the input
 * itself leaves each flag in one of its states; the readers give the same answer twice (determinism). Checks
 * are always on.
 */
#include <stdlib.h>
#include <string.h>

#include "../../cli/attach.h"
#include "fuzz_check.h"
#include "fuzz_classfile.h"

static void check_reply(const char *buf, size_t size)
{
	attach_reply r, again;
	int rc = attach_reply_parse(&r, buf, size);
	CHECK(rc == attach_reply_parse(&again, buf, size), "not deterministic");
	if (rc < 0)
		return;
	CHECK(r.text >= buf && r.text + r.text_len == buf + size, "the text lies outside the reply");
	CHECK(r.line_len <= r.text_len && !memchr(r.text, '\n', r.line_len), "the first line: %zu", r.line_len);
	CHECK(size > 0 && ((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '-'), "a status line without a number");
	CHECK(r.status == again.status && r.has_agent_rc == again.has_agent_rc && r.agent_rc == again.agent_rc,
	      "not deterministic");
}

/* Every argfile of a command line is the input itself. */
struct input {
	const char *buf;
	size_t size;
};

static char *whole(void *ctx, const char *name, size_t n, size_t *len)
{
	const struct input *in = ctx;
	CHECK(name >= in->buf && name + n <= in->buf + in->size, "an argfile name outside the input");
	char *copy = malloc(in->size + 1);
	if (copy)
		memcpy(copy, in->buf, in->size);
	*len = copy ? in->size : 0;
	return copy;
}

static bool contains(const char *buf, size_t size, const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i + n <= size; i++)
		if (!memcmp(buf + i, s, n))
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	check_reply(buf, size);
	long ns = attach_nspid(buf, size);
	CHECK(ns >= 0 && ns == attach_nspid(buf, size), "nspid %ld", ns);
	CHECK(ns == 0 || contains(buf, size, "NSpid:"), "an nspid without its line");
	for (int words = 0; words < 2; words++) {
		int s = attach_flag_state(buf, size, words, "DisableAttachMechanism", 7);
		CHECK(s == 7 || s == 0 || s == 1, "state %d", s);
		CHECK(s == 7 || contains(buf, size, s ? "-XX:+DisableAttachMechanism" : "-XX:-DisableAttachMechanism"),
		      "a state %d without its flag", s);
		bool rs = attach_has_arg(buf, size, words, "-Xrs");
		CHECK(!rs || contains(buf, size, "-Xrs"), "-Xrs found where it is not");
	}
	char name[16];
	attach_name(buf, size, name, sizeof name);
	for (size_t i = 0; name[i]; i++)
		CHECK(name[i] >= ' ' && name[i] <= '~' && i < sizeof name - 1, "a name not fit to print");
	long tgid = attach_status_field(buf, size, "Tgid");
	CHECK(tgid >= -1 && (tgid == -1 || contains(buf, size, "Tgid:")), "Tgid %ld", tgid);
	int q = attach_catches(buf, size, 3);
	CHECK(q >= -1 && q <= 1 && (q == -1 || contains(buf, size, "SigCgt:")), "SigCgt %d", q);
	char *args = malloc(size + 1);
	if (args) {
		size_t n = attach_argfile_args(buf, size, args);
		CHECK(n <= size + 1 && (n == 0 || args[n - 1] == 0), "argfile arguments: %zu of %zu", n, size);
		free(args);
	}
	struct input in = {buf, size};
	attach_flags f = {7, 7, false};
	attach_cmdline_flags(&f, buf, size, whole, &in);
	/* (an argfile's quotes can make a flag of bytes that are none) */
	CHECK((f.disable_attach == 7 || f.disable_attach == 0 || f.disable_attach == 1) &&
	      (f.dynamic_loading == 7 || f.dynamic_loading == 0 || f.dynamic_loading == 1), "states %d %d",
	      f.disable_attach, f.dynamic_loading);
	const char *v;
	size_t vn;
	if (attach_env(buf, size, "JAVA_TOOL_OPTIONS", &v, &vn))
		CHECK(v > buf && v + vn <= buf + size && !memcmp(v - 18, "JAVA_TOOL_OPTIONS=", 18), "a value outside");
	char value[64];
	if (attach_property(buf, size, "jinst.agent", value, sizeof value))
		CHECK(contains(buf, size, "jinst.agent") && strlen(value) < sizeof value, "a property found where its key is not");
	else
		CHECK(!value[0], "a value without its property");
	return 0;
}
