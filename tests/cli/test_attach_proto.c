/*
 * The readers of jinst attach (cli/attach_proto.c) on what HotSpot and
 * Linux give: the replies of JDK 17 and 25 (status, "return code: N") and
 * of JDK 8 (a bare number), a refused operation, this process's own
 * /proc/self/status, cmdline and environ, and the order in which flags
 * override each other.
 */
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "../testlib.h"

static void check_reply(const char *reply, int rc, long status, bool has, long agent)
{
	attach_reply r;
	CHECK(attach_reply_parse(&r, reply, strlen(reply)) == rc, "'%s': not %d", reply, rc);
	if (rc == 0)
		CHECK(r.status == status && r.has_agent_rc == has && (!has || r.agent_rc == agent),
		      "'%s': status %ld, agent %d %ld", reply, r.status, r.has_agent_rc, r.agent_rc);
}

static void check_replies(void)
{
	check_reply("0\nreturn code: 0\n", 0, 0, true, 0);
	check_reply("0\nreturn code: -1\n", 0, 0, true, -1);
	check_reply("0\n-1\n", 0, 0, true, -1);  /* JDK 8 */
	check_reply("0\nlibfoo.so was not loaded.\nreturn code: 100\n", 0, 0, true, 100);
	check_reply("101\n", 0, 101, false, 0);  /* an operation HotSpot does not know */
	check_reply("0\nsome output\n-1\n", 0, 0, false, 0);
	check_reply("", -1, 0, false, 0);
	check_reply("zero\n", -1, 0, false, 0);
	check_reply("0 junk\n", -1, 0, false, 0);
	attach_reply r;
	const char *reply = "0\nreturn code: 0\n";
	CHECK(attach_reply_parse(&r, reply, strlen(reply)) == 0 && r.text == reply + 2 && r.text_len == 15 &&
	          r.line_len == 14,
	      "the text after the status line, its first line");
	/* JDK 25 with -XX:-EnableDynamicAgentLoading: no return code */
	reply = "0\nDynamic agent loading is not enabled. Use -XX:+EnableDynamicAgentLoading to launch target VM.\n";
	CHECK(attach_reply_parse(&r, reply, strlen(reply)) == 0 && !r.has_agent_rc && r.line_len == strlen(reply) - 3,
	      "the VM's refusal to load");
}

/* This process's own /proc files, read as the tool reads the target's. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);
	*len = f && buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

static void check_proc(void)
{
	size_t len;
	char *status = slurp("/proc/self/status", &len);
	long ns = attach_nspid(status, len);
	CHECK(ns == 0 || ns == (long)getpid() || strstr(status, "NSpid:"), "NSpid %ld for pid %ld", ns, (long)getpid());
	free(status);
	const char *s = "Name:\tjava\nNSpid:\t4242\t7\nUid:\t0\n";
	CHECK(attach_nspid(s, strlen(s)) == 7, "the innermost pid");
	s = "Name:\tjava\nNSpid:\t4242\n";
	CHECK(attach_nspid(s, strlen(s)) == 4242, "one namespace");
	s = "Name:\tjava\nPid:\t4242\n";
	CHECK(attach_nspid(s, strlen(s)) == 0, "no NSpid line");
	char *env = slurp("/proc/self/environ", &len);
	const char *v;
	size_t vn;
	CHECK(attach_env(env, len, "JINST_TEST_ATTACH", &v, &vn) && vn == 5 && !memcmp(v, "-Xrs ", 5),
	      "JINST_TEST_ATTACH from /proc/self/environ");
	CHECK(!attach_env(env, len, "JINST_TEST_ATTAC", &v, &vn), "a name's prefix is not the name");
	free(env);
}

static void check_flags(void)
{
	const char cmd[] = "java\0-XX:+DisableAttachMechanism\0-cp\0x\0Main";
	CHECK(attach_flag_state(cmd, sizeof cmd, false, "DisableAttachMechanism", 0) == 1, "+ on the command line");
	const char both[] = "java\0-XX:+DisableAttachMechanism\0-XX:-DisableAttachMechanism\0Main";
	CHECK(attach_flag_state(both, sizeof both, false, "DisableAttachMechanism", 1) == 0, "the last one wins");
	const char other[] = "java\0-XX:+DisableAttachMechanismX\0-Xrsx\0Main";
	CHECK(attach_flag_state(other, sizeof other, false, "DisableAttachMechanism", 0) == 0, "another flag");
	CHECK(!attach_has_arg(other, sizeof other, false, "-Xrs"), "-Xrsx is not -Xrs");
	const char *words = "-Xmx1g  -XX:+DisableAttachMechanism\t-Xrs";
	CHECK(attach_flag_state(words, strlen(words), true, "DisableAttachMechanism", 0) == 1, "words");
	CHECK(attach_has_arg(words, strlen(words), true, "-Xrs"), "-Xrs among words");
	CHECK(attach_flag_state(words, strlen(words), false, "DisableAttachMechanism", 0) == 0,
	      "one argument with spaces is no flag");
}

/* /proc/PID/status: a thread's Tgid is its process's; SigCgt's bits. */
static void check_status(void)
{
	size_t len;
	char *status = slurp("/proc/self/status", &len);
	CHECK(attach_status_field(status, len, "Tgid") == (long)getpid(), "this process's Tgid");
	free(status);
	const char *s = "Name:\tjava\nTgid:\t4242\nPid:\t4250\nSigCgt:\t0000000000000004\n";
	CHECK(attach_status_field(s, strlen(s), "Tgid") == 4242 && attach_status_field(s, strlen(s), "Pid") == 4250,
	      "Tgid and Pid of a thread");
	CHECK(attach_status_field(s, strlen(s), "Ppid") == -1 && attach_status_field(s, strlen(s), "Tgi") == -1,
	      "no such line, a name's prefix");
	CHECK(attach_catches(s, strlen(s), 3) == 1 && attach_catches(s, strlen(s), 2) == 0, "SIGQUIT (bit 2) caught");
	s = "SigCgt:\t2000000181005cce\n"; /* a running JDK 17's */
	CHECK(attach_catches(s, strlen(s), 3) == 1 && attach_catches(s, strlen(s), 1) == 0 &&
	      attach_catches(s, strlen(s), 62) == 1 && attach_catches(s, strlen(s), 64) == 0, "a VM's mask");
	s = "SigCgt:\t0000000000004000\n"; /* SIGTERM alone: a VM still starting */
	CHECK(attach_catches(s, strlen(s), 3) == 0 && attach_catches(s, strlen(s), 15) == 1, "SIGTERM alone");
	CHECK(attach_catches("Name:\tx\n", 8, 3) == -1, "no SigCgt line");
	char name[8];
	attach_name("ja\033[2Jva\n", 10, name, sizeof name);
	CHECK(!strcmp(name, "ja?[2Jv"), "a name fit to print, cut: %s", name);
	attach_name("java\n", 5, name, sizeof name);
	CHECK(!strcmp(name, "java"), "a name: %s", name);
}

/* Flags as the launcher reads them: @argfiles in their place, nothing
 * after the main class. */
static char *files(void *ctx, const char *name, size_t n, size_t *len)
{
	(void)ctx;
	const char *text = NULL;
	if (n == 5 && !memcmp(name, "flags", 5))
		text = "# -XX:-DisableAttachMechanism\n -Xmx1g \"-XX:+DisableAttachMechanism\"\n";
	else if (n == 3 && !memcmp(name, "dyn", 3))
		text = "-XX:-EnableDynamicAgentLoading # -Xrs\n";
	else if (n == 5 && !memcmp(name, "/main", 5))
		text = "-cp x Main -XX:+DisableAttachMechanism\n";
	*len = text ? strlen(text) : 0;
	return text ? strdup(text) : NULL;
}

static attach_flags launch(const char *cmd, size_t len)
{
	attach_flags f = {0, 1, false};
	attach_cmdline_flags(&f, cmd, len, files, NULL);
	return f;
}

static void check_launcher(void)
{
	char out[64];
	const char *af = "-a 'b c'#d\n\"e\\tf\" '' g";
	size_t n = attach_argfile_args(af, strlen(af), out);
	CHECK(n == 14 && !memcmp(out, "-a\0b c\0e\tf\0\0g", 14), "an argfile's arguments: %zu", n);
	attach_flags f;
	const char c1[] = "java\0@flags\0Main";
	f = launch(c1, sizeof c1);
	CHECK(f.disable_attach == 1 && f.dynamic_loading == 1, "the flag in an argfile, not in its comment");
	const char c2[] = "java\0@flags\0-XX:-DisableAttachMechanism\0@dyn\0Main";
	f = launch(c2, sizeof c2);
	CHECK(f.disable_attach == 0 && f.dynamic_loading == 0 && !f.rs, "argfiles in their place");
	const char c3[] = "java\0-cp\0@flags\0Main\0@dyn\0-XX:+DisableAttachMechanism";
	f = launch(c3, sizeof c3);
	CHECK(f.disable_attach == 1 && f.dynamic_loading == 1, "-cp's value expanded; nothing after the main class");
	const char c4[] = "java\0@/main\0@dyn";
	f = launch(c4, sizeof c4);
	CHECK(f.disable_attach == 0 && f.dynamic_loading == 1, "the main class in an argfile ends the flags");
	const char c5[] = "java\0--disable-@files\0@flags\0-jar\0app.jar\0-Xrs";
	f = launch(c5, sizeof c5);
	CHECK(f.disable_attach == 0 && !f.rs, "--disable-@files: the argfile is the main class");
	const char c7[] = "java\0-jar\0app.jar\0-Xrs";
	f = launch(c7, sizeof c7);
	CHECK(!f.rs, "the program's arguments after -jar's file");
	const char c6[] = "java\0@@flags\0@nosuch\0-Xrs";
	f = launch(c6, sizeof c6);
	CHECK(f.disable_attach == 0 && !f.rs, "@@ is no argfile, and is the main class");
}

/* The text of agentProperties (Properties.store): comments, key=value. */
static void check_properties(void)
{
	char v[64];
	const char *p = "#Fri Nov 27 18:40:00 UTC 2026\nsun.jvm.args=-Xmx1g\njinst.agent=/opt/j\\:x/lib\\\\jinst.so\n";
	CHECK(attach_property(p, strlen(p), "jinst.agent", v, sizeof v) && !strcmp(v, "/opt/j:x/lib\\jinst.so"),
	      "the key on its line, its value unescaped: %s", v);
	CHECK(!attach_property(p, strlen(p), "jinst.agen", v, sizeof v) && !v[0], "a key's prefix is not the key");
	CHECK(!attach_property(p, strlen(p), "Xmx1g", v, sizeof v), "a value is not a key");
	const char *c = "#jinst.agent=loaded\nsun.java.command=Main jinst.agent=x\n";
	CHECK(!attach_property(c, strlen(c), "jinst.agent", v, sizeof v), "not in a comment nor a value");
	const char *cut = "#x\njinst.agent";
	CHECK(!attach_property(cut, strlen(cut), "jinst.agent", v, sizeof v), "a key cut short, with no separator");
	const char *crlf = "jinst.agent : /a/b\r\n";
	CHECK(attach_property(crlf, strlen(crlf), "jinst.agent", v, sizeof v) && !strcmp(v, "/a/b"), "':' separates: %s", v);
	const char *uni = "jinst.agent=/opt/\\u00e9/lib.so\n";
	CHECK(attach_property(uni, strlen(uni), "jinst.agent", v, sizeof v) && !v[0], "a \\u escape: no value: %s", v);
	CHECK(attach_property(p, strlen(p), "jinst.agent", v, 8) && !v[0], "a value too long: none: %s", v);
}

int main(void)
{
	check_replies();
	check_proc();
	check_flags();
	check_status();
	check_launcher();
	check_properties();
	return check_report();
}
