/*
 * Where the writer's output goes, and how it comes into place.
 *
 * The rules every command that writes follows (issue 15): the input is
 * never written, an existing output is replaced only when asked, and an
 * output is either the whole result of a run that succeeded or what it was
 * before: never half of it. So everything is refused that can be known
 * before the work (an output that is an input, or inside an input folder,
 * or one that holds an input; two inputs of one name; an existing output
 * without --force; even with it, an output that is no regular file or
 * folder, or a folder that is not empty and not marked as jinst's, see
 * check_existing), all paths compared after realpath(3), so a symbolic
 * link or "./" does not hide a clash. Then the run writes into a temporary
 * file or folder beside the output, in the same folder so that rename(2)
 * stays within one file system and is atomic, and only a run that met no
 * error puts it in place: rename over a file, or, when the output exists,
 * renameat2(RENAME_EXCHANGE) (Linux 3.15), which swaps a folder or a file
 * for the new one in one step, after which the old one is removed. A run
 * killed before that leaves the output as it was, and a temporary named
 * ".jinst-tmp.PID.NAME"; the next run writing beside it removes those
 * whose process is gone. A run stopped by SIGINT, SIGTERM or SIGHUP
 * removes its own first (mirror.c, "stopping").
 *
 * Single-file outputs (each input's, when there are several) are fsync'd
 * before the rename, so a crash cannot put an empty file in place of a
 * good one. Files inside an output folder are not (thousands of fsyncs
 * would cost more than the run), so a power failure right after a run may
 * lose a folder's contents, never mix two. The fsyncs do not hold up the
 * run: each file is handed, once written, to a thread that fsyncs them
 * while the run goes on, and the commit waits for it (mirror_sync.c). An
 * fsync at each write waited for the disk between inputs, and on ext4 for
 * every other file's data of its journal transaction: 100 of them were 0.8
 * s of wall time over the corpus's jars, on a run of 3.2 s of CPU; all of
 * them at the commit, 0.3 s.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mirror_internal.h"

#define TEMP_PREFIX ".jinst-tmp."

/* The folder prepare made first (the top of those it made), to remove when
 * the run fails; the writer runs once per process. */
static char *made_top;
static char *made_leaf;

int mirror_out_mkdirs(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void mirror_out_remove(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode))
		nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	else
		unlink(path);
}

/* The folder of path ("." when it has none), malloc'd. */
static char *parent_of(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	while (n > 0 && path[n - 1] != '/')
		n--;
	while (n > 1 && path[n - 1] == '/')
		n--;
	return n == 0 ? strdup(".") : strndup(path, n);
}

static const char *base_of(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	const char *p = path + n;
	while (p > path && p[-1] != '/')
		p--;
	return p;
}

/* path made absolute with every existing part resolved (realpath(3)) and
 * the rest appended as it is; malloc'd, or NULL. */
static char *resolve(const char *path)
{
	char *real = realpath(path, NULL);
	if (real)
		return real;
	char *parent = parent_of(path);
	const char *base = base_of(path);
	char *rp = parent && strcmp(parent, path) != 0 ? resolve(parent) : NULL;
	free(parent);
	if (!rp)
		return NULL;
	size_t blen = strcspn(base, "/");
	char *out = malloc(strlen(rp) + blen + 2);
	if (out)
		sprintf(out, "%s/%.*s", strcmp(rp, "/") == 0 ? "" : rp, (int)blen, base);
	free(rp);
	return out;
}

/* Whether path lies inside folder (both resolved). */
static bool inside(const char *path, const char *folder)
{
	size_t n = strlen(folder);
	return strncmp(path, folder, n) == 0 && (path[n] == '/' || strcmp(folder, "/") == 0) && path[n];
}

static int check_input(run *R, const char *in, const char *abs_out, const char *out)
{
	char *abs_in = realpath(in, NULL);
	if (!abs_in) {
		mirror_error(R, in, "%s", strerror(errno));
		return -1;
	}
	struct stat st;
	bool dir = stat(abs_in, &st) == 0 && S_ISDIR(st.st_mode);
	int rc = -1;
	if (strcmp(abs_in, abs_out) == 0)
		mirror_error(R, out, "is the input %s; jinst never writes its inputs (give -o another path)", in);
	else if (dir && inside(abs_out, abs_in))
		mirror_error(R, out, "lies inside the input folder %s; jinst never writes its inputs", in);
	else if (inside(abs_in, abs_out))
		mirror_error(R, in, "this input lies inside the output %s, which the run would replace", out);
	else
		rc = 0;
	free(abs_in);
	return rc;
}

static int check_names(run *R, const char *const *inputs, int n)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < i; k++)
			if (strcmp(base_of(inputs[i]), base_of(inputs[k])) == 0) {
				mirror_error(R, inputs[i], "has the name of %s; in the output folder each input keeps its name",
				             inputs[k]);
				return -1;
			}
	return 0;
}

/* What a file that is neither a regular file nor a folder is. */
static const char *kind_of(mode_t mode)
{
	return S_ISLNK(mode) ? "a symbolic link" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
	       : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a file or a folder";
}

/* An existing output may be replaced (with --force) only when nothing is
 * lost: a regular file, or a folder that is empty or an earlier output of
 * jinst (CLI_MARK_OUTPUT at its top, as mirror_out_mark leaves). Never a
 * device, a FIFO or a socket (a run as root replaced /dev/full by a
 * file), nor a link (whose target the user may have meant), nor a folder
 * of something else (--force wiped a folder of notes). Checked before the
 * work and again before the commit: the folder may have changed since. */
static int check_existing(run *R, const char *final)
{
	struct stat st;
	if (lstat(final, &st) != 0)
		return 0;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		mirror_error(R, final, "is %s; jinst replaces only a file or a folder%s (nothing done)", kind_of(st.st_mode),
		             S_ISLNK(st.st_mode) ? ": give -o the path it leads to" : "");
		return -1;
	}
	if (!R->o->force) {
		mirror_error(R, final, "exists; --force replaces it (nothing done)");
		return -1;
	}
	int ours = S_ISDIR(st.st_mode) ? cli_folder_replaceable(final, CLI_MARK_OUTPUT) : 1;
	if (ours < 0) {
		mirror_error(R, final, "cannot read the folder: %s (nothing done)", strerror(errno));
		return -1;
	}
	if (!ours) {
		mirror_error(R, final, "is a folder jinst did not write (it holds no " CLI_MARK_OUTPUT "): not replaced "
		             "even with --force; remove it or give -o another path (nothing done)");
		return -1;
	}
	return 0;
}

int mirror_out_mark(run *R, const char *temp)
{
	struct stat st;
	if (lstat(temp, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	char *path = mirror_join(temp, CLI_MARK_OUTPUT, '/');
	char words[160];
	int n = snprintf(words, sizeof(words), "jinst %s wrote this folder; with --force, jinst replaces a folder that holds "
	                 "this file.\n", R->o->command ? R->o->command : "-");
	/* fsync'd as the inputs' outputs beside it are (a folder of several
	 * inputs): what says the folder is jinst's outlives a crash with it. */
	int rc = path ? mirror_out_write(R, path, (const uint8_t *)words, (size_t)n, 0644, true) : -1;
	if (!path)
		mirror_error(R, temp, "out of memory");
	free(path);
	return rc;
}

/* Removes the temporaries of runs whose process is gone from folder. */
static void remove_leftovers(const char *folder)
{
	DIR *d = opendir(folder);
	if (!d)
		return;
	const struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX)) != 0)
			continue;
		char *end;
		long pid = strtol(e->d_name + strlen(TEMP_PREFIX), &end, 10);
		if (pid <= 0 || *end != '.' || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char *path = mirror_join(folder, e->d_name, '/');
		if (path)
			mirror_out_remove(path);
		free(path);
	}
	closedir(d);
}

/* Makes folder and its missing parents, remembering the top one made. */
static int make_parent(run *R, const char *folder)
{
	struct stat st;
	if (stat(folder, &st) == 0)
		return 0;
	/* The topmost missing one: what to remove if the run fails. */
	char *top = strdup(folder);
	while (top) {
		char *up = parent_of(top);
		bool missing = up && strcmp(up, top) != 0 && stat(up, &st) != 0;
		if (!missing) {
			free(up);
			break;
		}
		free(top);
		top = up;
	}
	if (!top || mirror_out_mkdirs(folder) != 0) {
		mirror_error(R, folder, "cannot make the folder: %s", strerror(errno));
		free(top);
		return -1;
	}
	made_top = top;
	made_leaf = strdup(folder);
	return 0;
}

int mirror_out_prepare(run *R, const char *const *inputs, int n, const char *output, char **final, char **temp)
{
	*final = *temp = NULL;
	struct stat st, ost;
	/* A trailing slash names a folder, made when missing ("-o out/"). */
	size_t olen = strlen(output);
	bool slash = olen > 1 && output[olen - 1] == '/';
	bool out_dir = slash || (stat(output, &ost) == 0 && S_ISDIR(ost.st_mode));
	char *bare = strndup(output, slash ? olen - 1 : olen);
	if (!bare) {
		mirror_error(R, output, "out of memory");
		return -1;
	}
	/* One file into a folder goes in by its own name. */
	if (n == 1 && out_dir && stat(inputs[0], &st) == 0 && !S_ISDIR(st.st_mode))
		*final = mirror_join(bare, base_of(inputs[0]), '/');
	else
		*final = strdup(bare);
	free(bare);
	char *abs_out = *final ? resolve(*final) : NULL;
	if (!abs_out) {
		mirror_error(R, output, "cannot resolve the path: %s", strerror(errno));
		return -1;
	}
	int rc = check_names(R, inputs, n);
	/* --force replaces a folder with all it holds: never the root, nor the
	 * folder the user is in or one above it. */
	char *cwd = getcwd(NULL, 0);
	if (rc == 0 && (strcmp(abs_out, "/") == 0 || (cwd && (strcmp(cwd, abs_out) == 0 || inside(cwd, abs_out))))) {
		mirror_error(R, *final, "is %s; jinst does not replace it", strcmp(abs_out, "/") == 0
		                                                              ? "the root folder"
		                                                              : "the current folder or one above it");
		rc = -1;
	}
	free(cwd);
	for (int i = 0; rc == 0 && i < n; i++)
		rc = check_input(R, inputs[i], abs_out, *final);
	free(abs_out);
	if (rc == 0)
		rc = check_existing(R, *final);
	char *folder = parent_of(*final);
	if (rc == 0 && (!folder || make_parent(R, folder) != 0))
		rc = -1;
	if (rc == 0) {
		remove_leftovers(folder);
		char name[64];
		snprintf(name, sizeof(name), TEMP_PREFIX "%ld.", (long)getpid());
		char *t = mirror_join(name, base_of(*final), '\0');
		*temp = t ? mirror_join(folder, t, '/') : NULL;
		free(t);
		if (!*temp) {
			mirror_error(R, *final, "out of memory");
			rc = -1;
		}
	}
	free(folder);
	return rc;
}

void mirror_out_abandon(run *R, const char *temp)
{
	mirror_sync_drop(R);
	if (temp)
		mirror_out_remove(temp);
	/* The folders prepare made, from the deepest up (rmdir leaves any that
	 * something else has put a file in since). */
	char *p = made_leaf ? strdup(made_leaf) : NULL;
	while (p) {
		rmdir(p);
		char *up = strcmp(p, made_top) == 0 ? NULL : parent_of(p);
		free(p);
		p = up;
	}
	free(made_leaf);
	free(made_top);
	made_leaf = made_top = NULL;
}

int mirror_out_commit(run *R, const char *final, const char *temp)
{
	struct stat st;
	if (mirror_sync_wait(R) != 0) {
		mirror_out_abandon(R, temp);
		return -1;
	}
	if (check_existing(R, final) != 0) {
		mirror_out_abandon(R, temp);
		return -1;
	}
	if (lstat(final, &st) != 0) {
		if (rename(temp, final) == 0)
			goto done;
		mirror_error(R, final, "cannot put the output in place: %s", strerror(errno));
		mirror_out_abandon(R, temp);
		return -1;
	}
	if (renameat2(AT_FDCWD, temp, AT_FDCWD, final, RENAME_EXCHANGE) != 0) {
		/* A file system without the exchange: the old one aside first. */
		char *old = mirror_join(temp, "old", '.');
		if (!old || rename(final, old) != 0 || rename(temp, final) != 0) {
			mirror_error(R, final, "cannot put the output in place: %s", strerror(errno));
			if (old && lstat(final, &st) != 0)
				rename(old, final);
			free(old);
			mirror_out_abandon(R, temp);
			return -1;
		}
		mirror_out_remove(old);
		free(old);
		goto done;
	}
	mirror_out_remove(temp); /* now the old output */
done:
	free(made_leaf);
	free(made_top);
	made_leaf = made_top = NULL;
	return 0;
}

static int write_fd(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t k = write(fd, p, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

/* Closes fd after writing path (or keeps it to fsync at the commit, when
 * sync); err is the errno of a failed write, or 0. */
static int finish_fd(run *R, int fd, const char *path, int err, bool sync)
{
	if (!err && sync && !R->failed && mirror_sync_add(R, fd, path) == 0)
		return 0;
	if (!err && sync && fsync(fd) != 0)
		err = errno;
	if (close(fd) != 0 && !err)
		err = errno;
	if (!err)
		return 0;
	mirror_error(R, path, "cannot write: %s", strerror(err));
	unlink(path);
	return -1;
}

int mirror_out_write(run *R, const char *path, const uint8_t *bytes, size_t len, mode_t mode, bool sync)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777);
	if (fd < 0) {
		mirror_error(R, path, "cannot create: %s", strerror(errno));
		return -1;
	}
	return finish_fd(R, fd, path, write_fd(fd, bytes, len) == 0 ? 0 : errno, sync);
}

int mirror_out_copy(run *R, const char *src, const char *dst, mode_t mode, bool sync)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		mirror_error(R, src, "cannot read: %s", strerror(errno));
		return -1;
	}
	int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777);
	if (fd < 0) {
		mirror_error(R, dst, "cannot create: %s", strerror(errno));
		close(in);
		return -1;
	}
	uint8_t buf[1 << 16];
	int read_err = 0, write_err = 0;
	for (;;) {
		ssize_t k = read(in, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			read_err = errno;
		if (k <= 0)
			break;
		if (write_fd(fd, buf, (size_t)k) != 0) {
			write_err = errno;
			break;
		}
	}
	close(in);
	if (read_err) {
		mirror_error(R, src, "cannot read: %s", strerror(read_err));
		close(fd);
		unlink(dst);
		return -1;
	}
	return finish_fd(R, fd, dst, write_err, sync);
}
