/*
 * jinst attach|dump|stop PID: HotSpot's dynamic attach protocol, spoken by
 * the tool itself (attach.c), and the readers of what comes back from the
 * target (attach_proto.c: the VM's reply, /proc/PID/status, the flags a
 * command line or an environment sets). The readers take bytes and do no
 * I/O, so a fuzzer drives them (tests/fuzz/fuzz_attach.c).
 */
#ifndef JINST_CLI_ATTACH_H
#define JINST_CLI_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

/* What the VM answered to `load`: its status line (0: the operation ran),
 * the agent's return value (Agent_OnAttach's: "return code: N" from JDK 9
 * on, a bare number before), and the text after the status line. */
typedef struct attach_reply {
	long status;
	bool has_agent_rc;
	long agent_rc;
	const char *text;  /* into the reply; text_len bytes */
	size_t text_len;
	size_t line_len;   /* text's first line, without its '\n' */
} attach_reply;

/* Reads the reply buf[0..len). 0, or -1 when it has no status line. */
int attach_reply_parse(attach_reply *out, const char *buf, size_t len);

/* The pid of the process in its own pid namespace: the last field of the
 * NSpid line of /proc/PID/status (buf[0..len)); 0 when there is none. */
long attach_nspid(const char *buf, size_t len);

/* A process's name (/proc/PID/comm, buf[0..len)) fit to print: its first
 * line, a byte that is not printable ASCII as '?', into out (NUL-terminated,
 * cut to size). */
void attach_name(const char *buf, size_t len, char *out, size_t size);

/* The number in the line "field:" of a /proc/PID/status (Tgid, Pid); -1
 * when there is none. */
long attach_status_field(const char *buf, size_t len, const char *field);

/* Whether the process of that /proc/PID/status catches signal signo
 * (its SigCgt mask): 1 it does, 0 not, -1 no such line. */
int attach_catches(const char *buf, size_t len, int signo);

/* The state a HotSpot boolean flag is left in by a list of arguments,
 * buf[0..len), separated by NULs (a /proc/PID/cmdline) or, with words, by
 * white space (JAVA_TOOL_OPTIONS): 1 for the last -XX:+NAME, 0 for the last
 * -XX:-NAME, state when neither occurs. */
int attach_flag_state(const char *buf, size_t len, bool words, const char *name, int state);

/* Whether the exact argument arg occurs in buf (the same lists). */
bool attach_has_arg(const char *buf, size_t len, bool words, const char *arg);

/* What the VM's flags say about attach: the last -XX:+/-
 * DisableAttachMechanism and EnableDynamicAgentLoading (0 or 1, as the
 * VM defaults them: 0 and 1), and whether -Xrs is among them. */
typedef struct attach_flags {
	int disable_attach;
	int dynamic_loading;
	bool rs;
} attach_flags;

/* Applies the flags of a list (as attach_flag_state reads it) onto f. */
void attach_flags_apply(attach_flags *f, const char *buf, size_t len, bool words);

/* The arguments of an @argfile buf[0..len) as java's launcher splits them
 * (blanks, '#' comments to the end of the line, '...' and "..." quotes
 * with backslash escapes inside), NUL-separated into out, which has room
 * for len bytes; their length. */
size_t attach_argfile_args(const char *buf, size_t len, char *out);

/* Reads the argfile name[0..n) (as the launcher would: relative to the
 * VM's working folder); malloc'd bytes and *len, or NULL. */
typedef char *attach_argfile_reader(void *ctx, const char *name, size_t n, size_t *len);

/* Applies onto f the VM flags of a /proc/PID/cmdline buf[0..len): those
 * before the main class (or -jar's file, -m's module), the @argfiles there
 * read through rd and their arguments taken in their place, as java's
 * launcher does (src/java.base/share/native/libjli/args.c). */
void attach_cmdline_flags(attach_flags *f, const char *buf, size_t len, attach_argfile_reader *rd, void *ctx);

/* The value of the environment variable name in a /proc/PID/environ
 * (NUL-separated NAME=VALUE), into *value and *value_len; false when absent. */
bool attach_env(const char *buf, size_t len, const char *name, const char **value, size_t *value_len);

/* Whether the serialized java.util.Properties buf[0..len) (the text of the
 * VM's reply to agentProperties) has the key name; its value, unescaped,
 * into value (NUL-terminated; "" when it does not fit in size or holds a
 * \\u escape). */
bool attach_property(const char *buf, size_t len, const char *name, char *value, size_t size);

/* The command (attach.c): what is attach, dump or stop. */
int cmd_attach(const char *what, int argc, char **argv);
/* Whether jinst dump's arguments name a process (a number that is not a
 * file), not a class file. */
bool cli_attach_wanted(int argc, char **argv);
/* The outcome of what on pid: options checked, then sent; the exit status.
 * timeout: seconds for the listener to come; reply_timeout: for the answer. */
int attach_run(const char *what, long pid, const char *options, const char *agent, double timeout,
               double reply_timeout);
extern const char attach_help[];

#endif
