/*
 * The modules' text outputs (trace's OUT.tsv, .txt, .folded; alloc's
 * OUT.alloc.*; monitor's OUT.monitors.*): each written whole, through a
 * file beside it renamed over it (jinst_agent_output_write), or with
 * append=y (the core's option) after what the file held when the session
 * started. That length is the file's base, noted at the module's start
 * (jinst_agent_output_begin), and each write cuts the file back to it and
 * writes the session's part again, a line "# jinst session N, pid P,
 * started TIME" and the data, so the sessions before it stay and two
 * dumps of one session leave one copy. The line begins with '#', as the
 * folded stacks' header does, and ends in no number, so flamegraph.pl,
 * inferno and speedscope skip it; the TSVs' readers skip lines that begin
 * with '#' (no class name does). Writes come under the core's session lock
 * (dump, stop), so the bases need no lock of their own.
 */
#define _POSIX_C_SOURCE 200809L /* ftruncate, fdopen, gmtime_r */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

/* The outputs a session may append to: trace's five formats, alloc's three
 * and room for more. */
#define APPENDED 16

static struct {
	char started[32];  /* the session's start, UTC */
	size_t count;
	struct {
		char ext[32];
		off_t base;    /* the file's length at the session's start */
	} file[APPENDED];
} app;

void jinst_agent_output_session(void)
{
	time_t now = time(NULL);
	struct tm utc;
	if (!gmtime_r(&now, &utc) || !strftime(app.started, sizeof app.started, "%Y-%m-%dT%H:%M:%SZ", &utc))
		snprintf(app.started, sizeof app.started, "(unknown)");
	app.count = 0;
}

/* ext's base, added (0) when the session has none yet; NULL when full. */
static off_t *base_of(const char *ext)
{
	for (size_t i = 0; i < app.count; i++)
		if (!strcmp(app.file[i].ext, ext))
			return &app.file[i].base;
	if (app.count == APPENDED || strlen(ext) >= sizeof app.file[0].ext)
		return NULL;
	snprintf(app.file[app.count].ext, sizeof app.file[0].ext, "%s", ext);
	app.file[app.count].base = 0;
	return &app.file[app.count++].base;
}

void jinst_agent_output_begin(const char *ext)
{
	char path[1100];
	struct stat st;
	off_t *base = base_of(ext);
	jinst_agent_output_path(ext, path, sizeof path);
	if (base)
		*base = stat(path, &st) == 0 ? st.st_size : 0;
}

FILE *jinst_agent_output_open_appended(const char *ext)
{
	char path[1100];
	jinst_agent_output_path(ext, path, sizeof path);
	off_t *base = base_of(ext);
	if (!base) {
		errno = ENOBUFS;
		return NULL;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return NULL;
	struct stat st;
	/* shorter than when the session started (removed, say): the session
	 * goes after what is there */
	if (fstat(fd, &st) == 0 && st.st_size < *base)
		*base = st.st_size;
	FILE *f = ftruncate(fd, *base) == 0 && lseek(fd, *base, SEEK_SET) == *base ? fdopen(fd, "w") : NULL;
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	fprintf(f, "# jinst session %u, pid %ld, started %s\n", jinst_agent_session(), jinst_agent_pid(), app.started);
	return f;
}

int jinst_agent_output_write(const char *ext, int (*write)(FILE *f, const void *ctx), const void *ctx)
{
	char path[1100], tmp[1200];
	bool append = jinst_agent_output_append();
	jinst_agent_output_path(ext, path, sizeof path);
	snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, jinst_agent_pid());
	FILE *f = append ? jinst_agent_output_open_appended(ext) : fopen(tmp, "w");
	if (!f) {
		jinst_agent_log_output(path, strerror(errno));
		return JINST_EIO;
	}
	int r = write(f, ctx);
	if (ferror(f) && !r)
		r = JINST_EIO;
	int e = 0;
	if (fclose(f) && !r) {
		e = errno;
		r = JINST_EIO;
	}
	if (!r && !append && rename(tmp, path)) {
		e = errno;
		r = JINST_EIO;
	}
	if (r && !append)
		remove(tmp);
	jinst_agent_log_output(path, !r ? NULL : e ? strerror(e) : jinst_strerror(r));
	return r;
}
