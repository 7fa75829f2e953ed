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
 * property is found only where its key is; the readers give the same answer twice (determinism). Checks
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
	CHECK(size > 0 && ((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '-'), "a status line without a number");
	CHECK(r.status == again.status && r.has_agent_rc == again.has_agent_rc && r.agent_rc == again.agent_rc,
	      "not deterministic");
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
