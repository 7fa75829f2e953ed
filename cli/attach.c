/*
 * jinst attach|dump|stop PID [OPTIONS]: loads libjinst.so into a running
 * HotSpot VM, or asks the agent there to write or to stop, as
 * async-profiler's asprof does for its agent, without jcmd (a machine
 * with only a JRE has none).
 *
 * How it works. First, with nothing sent to the target: the options are
 * parsed by the agent's own parser (agent/options.c and the modules'
 * option tables, linked in), so a mistake is reported here and the VM
 * never sees it; then /proc says whether the process exists, is a
 * process (not a thread), is the user's, maps libjvm.so, and does not
 * refuse attach or agents (a last -XX:+DisableAttachMechanism or
 * -XX:-EnableDynamicAgentLoading, or -Xrs, with which the signal below
 * would end it, in its command line with its @argfiles or the variables
 * the VM reads), and whether it takes that signal yet (a VM still
 * starting would die of it).
 *
 * Then HotSpot's protocol (attachListener_linux.cpp): the VM listens on
 * the socket /tmp/.java_pid<pid> once asked; to ask, the tool creates
 * .attach_pid<pid> in the VM's working folder (else its /tmp) and sends
 * SIGQUIT, which the VM's signal thread reads as "start the listener"
 * when that file is there (and as "print a thread dump" when not). Paths
 * go through /proc/PID/root and pids are the VM's own namespace's (NSpid),
 * so a VM in a container is reached from the host (tools that attach at
 * once take turns: lock_attach). The tool connects,
 * sends "1" (the protocol), "load", the library's absolute path, "true"
 * (the path is absolute: the tool's libjinst.so, or a copy in the VM's
 * /tmp when the VM's file system has another file there), the options,
 * each NUL-terminated, and reads the
 * status and Agent_OnAttach's return value, to the end of the reply within
 * --reply-timeout: a process that takes the request and never answers
 * (paused, hung, or not HotSpot) would hold the tool for ever.
 *
 * The agent's messages go to the VM's stderr, which is the program's: the
 * tool adds reply=FILE to the options, a file it made in the VM's /tmp,
 * into which the agent copies the load's messages; the tool prints them
 * and removes the file.
 */
#define _XOPEN_SOURCE 700 /* realpath, seteuid */
#include "attach.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "modules.h"

/* HotSpot reads each argument into a buffer of this size (arg_length_max). */
#define ARG_MAX_LEN 1024
/* A load's reply is a status and a line; past this, it is not HotSpot. */
#define REPLY_MAX (1u << 20)

typedef struct target {
	long pid, nspid;
	uid_t uid;              /* the VM's */
	char root[64];          /* /proc/PID/root: the VM's file system */
	char socket[PATH_MAX];
	const char *what;       /* attach, dump, stop */
	double timeout;         /* seconds, for the listener to come */
	double reply_timeout;   /* seconds, for the whole reply */
} target;

static int fail(const target *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const target *t, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "jinst %s: ", t->what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* A /proc file of the target, whole (they are small), NUL-terminated. */
static char *proc_read(long pid, const char *name, size_t *len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/%s", pid, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n < cap || cap >= (64u << 20))
			continue;
		char *more = realloc(buf, 2 * cap + 1);
		if (!more)
			free(buf);
		buf = more;
		cap *= 2;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

/* ---- before touching the target ------------------------------------------- */

/* The process is there and is the user's; as root, become its user, whom
 * HotSpot requires of the peer. */
static int check_owner(target *t)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%ld", t->pid);
	if (stat(path, &st) != 0)
		return fail(t, "no such process: %ld", t->pid);
	/* /proc/TID is there for every thread too, and a signal to a thread
	 * id reaches its process: a thread dump in the program's output. */
	size_t len;
	char *status = proc_read(t->pid, "status", &len);
	long tgid = status ? attach_status_field(status, len, "Tgid") : -1;
	free(status);
	if (tgid > 0 && tgid != t->pid) {
		char comm[32] = "";
		char *name = proc_read(tgid, "comm", &len);
		if (name)
			attach_name(name, len, comm, sizeof comm);
		free(name);
		return fail(t, "%ld is a thread of process %ld%s%s%s, not a process: jinst %s %ld", t->pid, tgid,
		            comm[0] ? " (" : "", comm, comm[0] ? ")" : "", t->what, tgid);
	}
	t->uid = st.st_uid;
	if (st.st_uid == geteuid())
		return 0;
	if (geteuid() == 0 && setegid(st.st_gid) == 0 && seteuid(st.st_uid) == 0)
		return 0;
	return fail(t, "process %ld belongs to uid %ld, not to you (uid %ld): HotSpot takes attach from its own user only",
	            t->pid, (long)st.st_uid, (long)geteuid());
}

static int check_jvm(target *t)
{
	size_t len;
	char *maps = proc_read(t->pid, "maps", &len);
	if (!maps)
		return fail(t, "cannot read /proc/%ld/maps: %s", t->pid, strerror(errno));
	bool jvm = strstr(maps, "/libjvm.so") != NULL;
	free(maps);
	return jvm ? 0 : fail(t, "process %ld is not a HotSpot JVM (no libjvm.so in it)", t->pid);
}

/* An @argfile of the target's command line, as its launcher read it:
 * relative to the VM's working folder, an absolute path in the VM's file
 * system. At most 1 MB: the launcher's own limit is 10 MB, but flags for
 * attach in a larger one are not worth the read. */
static char *read_argfile(void *ctx, const char *name, size_t n, size_t *len)
{
	const target *t = ctx;
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "/proc/%ld/%s/%.*s", t->pid, name[0] == '/' ? "root" : "cwd", (int)n, name) >=
	    (int)sizeof path)
		return NULL;
	FILE *f = fopen(path, "r");
	char *buf = f ? malloc(1u << 20) : NULL;
	*len = buf ? fread(buf, 1, 1u << 20, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

/* The VM's flags as the VM reads them: JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS
 * (the launcher's), the command line with its @argfiles, _JAVA_OPTIONS,
 * later ones winning. *rs: -Xrs, under which SIGQUIT would end the VM (but
 * its listener then starts with the VM: HotSpot sets StartAttachListener).
 * -XX:-EnableDynamicAgentLoading (JDK 9 on; JDK 21 on warns when it is
 * left unset) makes HotSpot refuse every load, this tool's dump and stop
 * included. */
static int check_flags(target *t, bool *rs)
{
	size_t clen = 0, elen = 0, vlen;
	char *cmd = proc_read(t->pid, "cmdline", &clen), *env = proc_read(t->pid, "environ", &elen);
	const char *v;
	attach_flags f = {.disable_attach = 0, .dynamic_loading = 1};
	static const char *const vars[] = {"JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", NULL, "_JAVA_OPTIONS"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		if (!vars[i] && cmd)
			attach_cmdline_flags(&f, cmd, clen, read_argfile, t);
		else if (vars[i] && env && attach_env(env, elen, vars[i], &v, &vlen))
			attach_flags_apply(&f, v, vlen, true);
	}
	free(cmd);
	free(env);
	*rs = f.rs;
	if (f.disable_attach)
		return fail(t, "attach is disabled in process %ld (-XX:+DisableAttachMechanism)", t->pid);
	if (!f.dynamic_loading)
		return fail(t, "process %ld runs with -XX:-EnableDynamicAgentLoading: its VM loads no agent once started, "
		               "so neither jinst nor jcmd can start, dump or stop a session there; start it with "
		               "-XX:+EnableDynamicAgentLoading, or give the agent at launch "
		               "(-agentpath:libjinst.so=OPTIONS, its outputs then written at exit)",
		            t->pid);
	return 0;
}

static int locate(target *t)
{
	size_t len;
	char *status = proc_read(t->pid, "status", &len);
	t->nspid = status ? attach_nspid(status, len) : 0;
	free(status);
	if (t->nspid <= 0)
		t->nspid = t->pid;
	snprintf(t->root, sizeof t->root, "/proc/%ld/root", t->pid);
	snprintf(t->socket, sizeof t->socket, "%s/tmp/.java_pid%ld", t->root, t->nspid);
	return 0;
}

/* ---- the protocol ---------------------------------------------------------- */

/* The VM's socket: one another user made in a shared /tmp is not. */
static bool socket_ready(const target *t)
{
	struct stat st;
	return stat(t->socket, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == t->uid;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Asks the VM to start its listener and waits for its socket. */
static int start_listener(const target *t)
{
	char file[PATH_MAX];
	snprintf(file, sizeof file, "/proc/%ld/cwd/.attach_pid%ld", t->pid, t->nspid);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		snprintf(file, sizeof file, "%s/tmp/.attach_pid%ld", t->root, t->nspid);
		fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	}
	if (fd < 0)
		return fail(t, "cannot create %s: %s", file, strerror(errno));
	close(fd);
	int r = kill((pid_t)t->pid, SIGQUIT) == 0 ? 0 : fail(t, "cannot signal %ld: %s", t->pid, strerror(errno));
	for (double end = now_s() + t->timeout, nap = 0.005; r == 0 && !socket_ready(t); nap = nap < 0.2 ? nap * 2 : nap) {
		if (kill((pid_t)t->pid, 0) != 0)
			r = fail(t, "process %ld ended while attaching", t->pid);
		else if (now_s() > end)
			r = fail(t, "timeout: process %ld did not answer in %g s (attach disabled by a flag in a file, "
			            "the VM still starting, or hung)", t->pid, t->timeout);
		else
			nanosleep(&(struct timespec){0, (long)(nap * 1e9)}, NULL);
	}
	unlink(file);
	return r;
}

/* Two tools that attach at once (a dump and a stop together) both found
 * no socket and both signalled: the VM started its listener on the first
 * SIGQUIT and took the second, once the listener was up, for a request to
 * print a thread dump, on the program's output. So the tools take turns
 * through a lock file in the VM's /tmp, and one that finds the socket
 * ready once it has the lock sends nothing. The holder removes the file;
 * a waiter that then gets the lock of a file no longer there tries again.
 * -1 when there is no lock to take (the tool goes on, as without it). */
static int lock_attach(const target *t, char *path, size_t n)
{
	snprintf(path, n, "%s/tmp/.jinst_attach%ld", t->root, t->nspid);
	for (double end = now_s() + t->timeout;;) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			struct stat a, b;
			if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
				return fd;
		} else if (errno != EWOULDBLOCK || now_s() > end) {
			close(fd);
			return -1;
		} else {
			nanosleep(&(struct timespec){0, 5000000}, NULL);
		}
		close(fd);
	}
}

static void unlock_attach(int fd, const char *path)
{
	if (fd < 0)
		return;
	unlink(path);
	close(fd);
}

static int connect_socket(const target *t)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(t->socket) >= sizeof addr.sun_path)
		return -1;
	memcpy(addr.sun_path, t->socket, strlen(t->socket) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static bool send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Waits until fd has bytes or their end, the deadline passes (0) or the
 * process ends (-1); 1 when there is something to read. In slices, so
 * that a VM that dies meanwhile is seen. */
static int wait_readable(const target *t, int fd, double deadline)
{
	for (;;) {
		double left = deadline - now_s();
		if (left <= 0)
			return 0;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, left > 0.2 ? 200 : (int)(left * 1000) + 1);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return 1; /* (the read says what is wrong) */
		if (kill((pid_t)t->pid, 0) != 0 && errno == ESRCH)
			return -1;
	}
}

/* Reads the reply to its end within reply_timeout; 0, or 1 (said). */
static int read_reply(const target *t, int fd, text *out)
{
	double deadline = now_s() + t->reply_timeout;
	char buf[4096];
	while (out->len < REPLY_MAX) {
		int w = wait_readable(t, fd, deadline);
		if (w < 0)
			return fail(t, "process %ld ended before it answered", t->pid);
		if (w == 0 && out->len == 0)
			return fail(t, "timeout: process %ld took the request but gave no answer in %g s: the VM is paused "
			               "(stopped, a long collection), hung, or still at work (a load that instruments many "
			               "classes, a stop that writes large outputs), in which case it finishes there, its "
			               "messages on its own stderr; wait longer with --reply-timeout S, or look at the VM "
			               "(jstack %ld, /proc/%ld/status)",
			            t->pid, t->reply_timeout, t->pid, t->pid);
		if (w == 0)
			return fail(t, "timeout: process %ld answered in part (%zu bytes) and not to the end in %g s; wait "
			               "longer with --reply-timeout S",
			            t->pid, out->len, t->reply_timeout);
		ssize_t n = read(fd, buf, sizeof buf);
		if (n == 0)
			break;
		if (n < 0 && errno != EINTR)
			return fail(t, "the exchange with process %ld failed: %s", t->pid, strerror(errno));
		if (n > 0)
			text_put(out, buf, (size_t)n);
	}
	return 0;
}

/* One operation: "1", name, three arguments; the whole reply into *out. */
static int exchange(const target *t, const char *const args[4], text *out)
{
	int fd = connect_socket(t);
	if (fd < 0)
		return fail(t, "cannot connect to %s: %s", t->socket, strerror(errno));
	bool ok = send_all(fd, "1", 2);
	for (int i = 0; ok && i < 4; i++)
		ok = send_all(fd, args[i], strlen(args[i]) + 1);
	int r = ok ? read_reply(t, fd, out) : fail(t, "the exchange with process %ld failed: %s", t->pid, strerror(errno));
	close(fd);
	return r;
}

/* ---- the command ------------------------------------------------------------ */

/* The reply file, in a folder of its own made in the VM's /tmp (0700, the
 * file 0600: the agent's messages name the user's paths): its path here
 * (through /proc) and as the agent sees it. The agent appends to reply=
 * and creates it when it is not there (fopen "a"), and a VM that was
 * paused or slow may do so long after the tool gave up on its answer: a
 * file the tool removed would come back, with the VM's umask, and stay.
 * Its folder, removed with it, cannot: the agent's open then fails. */
static int reply_file(const target *t, char *here, size_t here_size, char *there, size_t there_size)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/tmp/jinst-reply.%ld.XXXXXX", t->root, t->nspid);
	if (!mkdtemp(dir))
		return fail(t, "cannot create a folder in the VM's /tmp (%s/tmp): %s", t->root, strerror(errno));
	int fd = -1;
	errno = ENAMETOOLONG;
	if (snprintf(here, here_size, "%s/reply", dir) < (int)here_size &&
	    snprintf(there, there_size, "%s/reply", dir + strlen(t->root)) < (int)there_size)
		fd = open(here, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	int e = errno;
	rmdir(dir);
	return fail(t, "cannot create a file in the VM's /tmp (%s): %s", dir, strerror(e));
}

/* Prints the agent's messages (each "jinst: ..."), then removes the file
 * and its folder, also when the VM gave no answer in time; whether there
 * were any. */
static bool print_reply_file(const char *path)
{
	size_t len = 0, total = 0;
	FILE *f = fopen(path, "r");
	char buf[4096];
	while (f && (len = fread(buf, 1, sizeof buf, f)) > 0) {
		fwrite(buf, 1, len, stderr);
		total += len;
	}
	if (f)
		fclose(f);
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = 0;
	/* (an agent that opens the file between the two calls makes it anew) */
	for (int i = 0; i < 3; i++)
		if (unlink(path), rmdir(dir) == 0 || errno == ENOENT)
			break;
	return total > 0;
}

/* The agent's file whole, and its FNV-1a hash. */
static char *slurp_agent(const char *path, size_t *len, unsigned long long *hash)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf = f && fstat(fileno(f), &st) == 0 && st.st_size < (256 << 20) ? malloc((size_t)st.st_size + 1) : NULL;
	*len = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
	if (f)
		fclose(f);
	*hash = 14695981039346656037ull;
	for (size_t i = 0; i < *len; i++)
		*hash = (*hash ^ (unsigned char)buf[i]) * 1099511628211ull;
	return buf;
}

/* The agent as the VM can open it, into vm: its own path when the VM's
 * file system (/proc/PID/root) has that very file there; else, for a VM in
 * another mount namespace (a container, whose files are not the host's),
 * a copy in the VM's /tmp, made when copy is set, named by the library's
 * hash so that later loads find it (as async-profiler's asprof does). The
 * copy is the VM's user's (the tool acts as that user), and one of that
 * name that is not (another user's, writable by others, other bytes) is
 * refused: the VM would run its code. 0, or 1 (said). */
static int agent_in_vm(const target *t, const char *agent, char *vm, size_t size, bool copy)
{
	char there[PATH_MAX + 64], tmp[PATH_MAX + 80];
	struct stat a, b;
	snprintf(there, sizeof there, "%s%s", t->root, agent);
	if (stat(agent, &a) == 0 && stat(there, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		snprintf(vm, size, "%s", agent);
		return 0;
	}
	size_t len;
	unsigned long long hash;
	char *lib = slurp_agent(agent, &len, &hash);
	if (!lib)
		return fail(t, "cannot read %s: %s", agent, strerror(errno));
	snprintf(vm, size, "/tmp/jinst-%016llx.so", hash);
	snprintf(there, sizeof there, "%s%s", t->root, vm);
	if (!copy) {
		free(lib);
		return 0;
	}
	int r = 0;
	size_t got = 0;
	char *old = lstat(there, &b) == 0 ? slurp_agent(there, &got, &hash) : NULL;
	if (old || errno != ENOENT) {
		if (!old || !S_ISREG(b.st_mode) || b.st_uid != t->uid || (b.st_mode & 022) || got != len || memcmp(old, lib, len))
			r = fail(t, "%s is not at that path in the file system of process %ld (a container), and its copy there, "
			            "%s, is not jinst's own (another owner, writable by others, or other bytes): remove it",
			         agent, t->pid, vm);
	} else {
		snprintf(tmp, sizeof tmp, "%s.XXXXXX", there);
		int fd = mkstemp(tmp);
		bool ok = fd >= 0 && fchmod(fd, 0644) == 0 && (size_t)write(fd, lib, len) == len;
		if (fd >= 0 && close(fd) != 0)
			ok = false;
		if (!ok || rename(tmp, there) != 0) {
			r = fail(t, "cannot copy %s into the VM's /tmp (%s): %s", agent, there, strerror(errno));
			if (fd >= 0)
				unlink(tmp);
		}
	}
	if (r == 0)
		fprintf(stderr, "jinst %s: %s is not at that path in the file system of process %ld (a container): "
		                "loading its copy there, %s\n", t->what, agent, t->pid, vm);
	free(old);
	free(lib);
	return r;
}

/* Prints the outcome; the exit status. */
static int report(const target *t, const text *raw, bool said)
{
	attach_reply r;
	if (attach_reply_parse(&r, raw->data ? raw->data : "", raw->len) < 0)
		return fail(t, "process %ld answered what is not HotSpot's attach reply (%zu bytes)", t->pid, raw->len);
	if (r.status != 0)
		return fail(t, "process %ld refused the operation (status %ld): %.*s", t->pid, r.status, (int)r.text_len,
		            r.text);
	/* HotSpot writes the return code whenever the agent ran: without one,
	 * the VM refused before loading it (JDK 21 on: -XX:-EnableDynamicAgentLoading
	 * in a file the tool cannot read), and says why. */
	if (!r.has_agent_rc)
		return fail(t, "process %ld did not load the agent: %.*s", t->pid, (int)r.line_len, r.text);
	if (r.agent_rc != 0)
		return fail(t, "the agent in process %ld refused (return code %ld)%s", t->pid, r.agent_rc,
		            said ? "; its reason is above" : "");
	fprintf(stderr, "jinst %s: process %ld: done (return code 0)\n", t->what, t->pid);
	return 0;
}

/* The options for the agent, checked by its own parser; *action: what
 * they ask for. */
static int check_options(const target *t, const char *options, int *action)
{
	static jinst_agent_options o;
	char err[1024];
	if (jinst_agent_options_parse(&o, jinst_agent_option_modules, options, err, sizeof err) < 0) {
		fprintf(stderr, "jinst %s: %s\n(nothing was sent to process %ld; `jinst attach PID help` lists the options)\n",
		        t->what, err, t->pid);
		return 2;
	}
	if (o.reply[0]) {
		fprintf(stderr, "jinst %s: reply= is the tool's own option\n", t->what);
		return 2;
	}
	if (strlen(options) + 64 > ARG_MAX_LEN) {
		fprintf(stderr, "jinst %s: options too long for HotSpot's attach (at most %d bytes)\n", t->what,
		        ARG_MAX_LEN - 64);
		return 2;
	}
	*action = o.action;
	return o.action == JINST_ACTION_HELP ? (jinst_agent_usage(stdout, jinst_agent_option_modules), -1) : 0;
}

/* Whether the VM has the agent (JINST_AGENT_PROPERTY among its agent
 * properties), and its library into lib ("" when it does not say): 1 it
 * has, 0 it has not, -1 cannot say (the load then asks the agent), 2 the
 * exchange failed (said). */
static int vm_agent(const target *t, char *lib, size_t size)
{
	text raw = {0};
	const char *const args[4] = {"agentProperties", "", "", ""};
	attach_reply r;
	int has = -1;
	lib[0] = 0;
	if (exchange(t, args, &raw))
		has = 2;
	else if (!attach_reply_parse(&r, raw.data, raw.len) && r.status == 0)
		has = attach_property(r.text, r.text_len, JINST_AGENT_PROPERTY, lib, size);
	text_free(&raw);
	return has;
}

int attach_run(const char *what, long pid, const char *options, const char *agent, double timeout,
               double reply_timeout)
{
	target t = {.pid = pid, .what = what, .timeout = timeout, .reply_timeout = reply_timeout};
	int action = JINST_ACTION_START;
	int r = check_options(&t, options, &action);
	if (r != 0)
		return r < 0 ? 0 : r;
	bool rs;
	if ((r = check_owner(&t)) || (r = check_jvm(&t)) || (r = check_flags(&t, &rs)) || (r = locate(&t)))
		return r;
	if (!socket_ready(&t) && rs)
		return fail(&t, "process %ld runs with -Xrs and has no attach listener: the signal that starts one "
		                "would end it", t.pid);
	/* HotSpot catches SIGQUIT once it is far enough into its start to read
	 * it as "start the listener"; before, the signal would end it. */
	size_t len;
	char *status = socket_ready(&t) ? NULL : proc_read(t.pid, "status", &len);
	int catches = status ? attach_catches(status, len, SIGQUIT) : -1;
	free(status);
	if (catches == 0)
		return fail(&t, "process %ld is still starting (its VM does not take the signal that starts an attach "
		                "listener yet, which would end it): try again in a moment", t.pid);
	if (!socket_ready(&t)) {
		char lock[PATH_MAX];
		int fd = lock_attach(&t, lock, sizeof lock);
		r = socket_ready(&t) ? 0 : start_listener(&t);
		unlock_attach(fd, lock);
		if (r)
			return r;
	}
	/* A dump, stop or reset asks first: loading the agent only to be
	 * refused would leave it loaded, and JDK 21 on print a warning into the
	 * program's stderr at each such load. And every load goes to the
	 * library the VM has: another copy would be a second agent. */
	char lib[PATH_MAX];
	int has = vm_agent(&t, lib, sizeof lib);
	if (has == 2)
		return 1;
	if (has == 0 && action != JINST_ACTION_START)
		return fail(&t, "process %ld has no jinst session, nothing to %s: start one with jinst attach %ld OPTIONS "
		                "(nothing was loaded into it)",
		            t.pid, action == JINST_ACTION_STOP ? "stop" : action == JINST_ACTION_RESET ? "reset" : "dump",
		            t.pid);
	char vm[PATH_MAX];
	if (has == 1 && lib[0] == '/') {
		if (strcmp(lib, agent) && (agent_in_vm(&t, agent, vm, sizeof vm, false) || strcmp(lib, vm)))
			fprintf(stderr, "jinst %s: process %ld has the agent %s, not %s: asking that one\n", what, pid, lib,
			        agent);
		agent = lib;
	} else if ((r = agent_in_vm(&t, agent, vm, sizeof vm, true))) {
		return r;
	} else {
		agent = vm;
	}
	char here[PATH_MAX], there[256], opts[ARG_MAX_LEN + 1];
	if ((r = reply_file(&t, here, sizeof here, there, sizeof there)))
		return r;
	snprintf(opts, sizeof opts, "%s%s%s", options, options[0] ? ",reply=" : "reply=", there);
	const char *const args[4] = {"load", agent, "true", opts};
	text raw = {0};
	r = exchange(&t, args, &raw);
	bool said = print_reply_file(here);
	if (r == 0)
		r = report(&t, &raw, said);
	text_free(&raw);
	return r;
}

/* ---- the command line ------------------------------------------------------- */

const char attach_help[] =
	"usage: jinst attach [--timeout S] [--reply-timeout S] [--agent PATH] PID [OPTION,...]\n"
	"       jinst dump [--timeout S] [--reply-timeout S] PID\n"
	"       jinst stop [--timeout S] [--reply-timeout S] PID\n"
	"       jinst reset [--timeout S] [--reply-timeout S] PID\n"
	"\n"
	"Loads the agent (libjinst.so) into the running HotSpot VM of process PID with\n"
	"the agent's OPTIONs (those of -agentpath:libjinst.so=...; several arguments are\n"
	"joined with ','), or asks the agent there to write its outputs now (dump), to\n"
	"write them and give every class its original code back (stop), or to forget\n"
	"what it recorded so far (reset: coverage, monitor; the same as jinst attach PID\n"
	"reset). Attaching again after stop starts a new session. A dump, stop or\n"
	"reset asks the VM first whether it has the agent, and loads none into a VM\n"
	"without one.\n"
	"The options are checked by the agent's own parser first: a mistake is printed\n"
	"here and nothing is sent to the VM. `jinst attach PID help` lists them.\n"
	"Then, still without touching the VM: PID must exist, be a process (not one of\n"
	"its threads), be yours (as root: any user's, attached as that user), run a\n"
	"HotSpot VM, not refuse attach\n"
	"(-XX:+DisableAttachMechanism; -Xrs with no listener) nor agents\n"
	"(-XX:-EnableDynamicAgentLoading), flags read from its command line, its\n"
	"@argfiles and JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, _JAVA_OPTIONS, and be\n"
	"started far enough to take the signal that starts its attach listener.\n"
	"HotSpot's attach protocol is spoken here, no jcmd needed (a JRE has none).\n"
	"A VM in a container is reached through /proc/PID/root; when libjinst.so is not\n"
	"at the same path in its file system, a copy is made in its /tmp\n"
	"(/tmp/jinst-HASH.so, its user's, kept for the next load) and loaded from there.\n"
	"The agent's messages for this load (what it records and where, its refusal)\n"
	"are printed here, then one line with its return code.\n"
	"  --timeout S   seconds to wait for the VM's attach listener [10]\n"
	"  --reply-timeout S\n"
	"                seconds to wait for the VM's answer once the request is\n"
	"                sent [60]: a load instruments the classes loaded, a stop\n"
	"                writes the outputs first; past it the tool says so and\n"
	"                exits 1 (the VM may still finish the operation)\n"
	"  --agent PATH  the libjinst.so to load [the one installed beside jinst]\n"
	"\n"
	"Examples:\n"
	"  jinst attach 4242 trace=times,include=com.example.**,out=/tmp/prof\n"
	"  jinst dump 4242\n"
	"  jinst reset 4242\n"
	"  jinst stop 4242\n"
	"Exit status: 0 done, 1 the target or the agent refused or could not be\n"
	"reached (the reason is printed), 2 usage error or a bad option.\n";

/* libjinst.so beside the tool, absolute: the installed layout
 * (BINDIR/JINST_AGENT_FROM_BIN), else the build tree's (bin/, lib/). */
static int find_agent(char *out, size_t size)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	static const char *const rel[] = {JINST_AGENT_FROM_BIN, "../lib"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(path, sizeof path, "%s/%s/libjinst.so", exe, rel[i]);
		char real[PATH_MAX];
		if (realpath(path, real) && strlen(real) < size && access(real, R_OK) == 0) {
			snprintf(out, size, "%s", real);
			return 0;
		}
	}
	return -1;
}

static bool is_pid(const char *s)
{
	return s && *s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 10;
}

bool cli_attach_wanted(int argc, char **argv)
{
	int i = 0;
	while (i + 1 < argc && (!strcmp(argv[i], "--timeout") || !strcmp(argv[i], "--reply-timeout") ||
	                        !strcmp(argv[i], "--agent")))
		i += 2;
	struct stat st;
	return i < argc && is_pid(argv[i]) && stat(argv[i], &st) != 0;
}

static int usage_error(const char *what, const char *msg)
{
	fprintf(stderr, "jinst %s: %s\n\n%s", what, msg, attach_help);
	return 2;
}

int cmd_attach(const char *what, int argc, char **argv)
{
	double timeout = 10, reply_timeout = 60;
	char agent[PATH_MAX] = "", opts[ARG_MAX_LEN + 1] = "";
	int i = 0;
	char msg[PATH_MAX + 128];
	for (; i < argc && argv[i][0] == '-'; i += 2) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		double *secs = !strcmp(o, "--timeout") ? &timeout : !strcmp(o, "--reply-timeout") ? &reply_timeout : NULL;
		if (!secs && strcmp(o, "--agent")) {
			snprintf(msg, sizeof msg, "%s: unknown option (--timeout S, --reply-timeout S, --agent PATH)", o);
			return usage_error(what, msg);
		}
		if (!v) {
			snprintf(msg, sizeof msg, "%s: expected %s after it", o, secs ? "seconds" : "a path");
			return usage_error(what, msg);
		}
		char *end = NULL;
		if (secs && !((*secs = strtod(v, &end)) > 0 && *secs < 1e6 && end != v && !*end)) {
			snprintf(msg, sizeof msg, "%s %s: expected seconds > 0", o, v);
			return usage_error(what, msg);
		}
		if (!secs && !realpath(v, agent)) {
			snprintf(msg, sizeof msg, "--agent %s: %s", v, strerror(errno));
			return usage_error(what, msg);
		}
	}
	if (i >= argc || !is_pid(argv[i]) || atol(argv[i]) <= 0) {
		snprintf(msg, sizeof msg, i < argc ? "%.64s: expected a PID (a process number)" : "expected a PID",
		         i < argc ? argv[i] : "");
		return usage_error(what, msg);
	}
	long pid = atol(argv[i++]);
	if (strcmp(what, "attach") && i < argc)
		return usage_error(what, "no options after the PID (they go to jinst attach)");
	for (; i < argc; i++) {
		size_t used = strlen(opts), n = strlen(argv[i]);
		if (used + n + 2 > sizeof opts)
			return usage_error(what, "options too long");
		if (used)
			opts[used++] = ',';
		memcpy(opts + used, argv[i], n + 1);
	}
	if (strcmp(what, "attach"))
		snprintf(opts, sizeof opts, "%s", what);
	if (!agent[0] && find_agent(agent, sizeof agent) < 0) {
		fprintf(stderr, "jinst %s: libjinst.so not found beside jinst (give --agent PATH)\n", what);
		return 1;
	}
	return attach_run(what, pid, opts, agent, timeout, reply_timeout);
}
