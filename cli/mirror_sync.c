/*
 * Outputs fsync'd before the commit renames them into place, by a thread of
 * their own (mirror_out.c says which files and why).
 *
 * A file's descriptor is handed over once it is written, its writeback
 * started (sync_file_range, which does not wait); the thread fsyncs and
 * closes the files in the order they came, while the run goes on
 * transforming and writing the next. The commit then waits only for what
 * is left. Waiting for the disk at the commit, file after file, was 0.3 s
 * of a 3.1 s run over the corpus's 100 jars (`jinst instrument --coverage
 * -j 1`): the thread waits on the disk, not on the CPU, so a run with -j 1
 * still computes on one thread. At most MAX_QUEUED files wait for it (the
 * writer then waits too): a slow disk cannot make the run hold thousands of
 * descriptors. Without the thread (it could not start) a file is fsync'd
 * when written, as the caller does when mirror_sync_add refuses it.
 *
 * The first failure is kept (its errno and path) and reported by the
 * commit, on the run's thread, which then fails the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mirror_internal.h"

#define MAX_QUEUED 128

typedef struct queued {
	int fd;
	char *path;
} queued;

struct mirror_syncer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more;  /* a file queued, or stop */
	pthread_cond_t taken; /* a file synced: room in the queue, or all done */
	queued q[MAX_QUEUED]; /* a ring: head the next to sync, n of them */
	size_t head, n;
	bool busy; /* the thread is syncing one (taken off the queue) */
	bool stop;
	int err;         /* the first failure's errno, 0 for none */
	char *err_path;  /* and its file */
};

static void *sync_main(void *arg)
{
	mirror_syncer *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->n && !s->stop)
			pthread_cond_wait(&s->more, &s->lock);
		if (!s->n)
			break;
		queued f = s->q[s->head];
		s->head = (s->head + 1) % MAX_QUEUED;
		s->n--;
		s->busy = true;
		pthread_mutex_unlock(&s->lock);
		int err = fsync(f.fd) != 0 ? errno : 0;
		if (close(f.fd) != 0 && !err)
			err = errno;
		pthread_mutex_lock(&s->lock);
		if (err && !s->err) {
			s->err = err;
			s->err_path = f.path;
			f.path = NULL;
		}
		free(f.path);
		s->busy = false;
		pthread_cond_broadcast(&s->taken);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The run's syncer, started on first use; NULL when it cannot be. */
static mirror_syncer *syncer(run *R)
{
	if (R->syncer)
		return R->syncer;
	mirror_syncer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->more, NULL);
	pthread_cond_init(&s->taken, NULL);
	if (pthread_create(&s->thread, NULL, sync_main, s) != 0) {
		pthread_cond_destroy(&s->more);
		pthread_cond_destroy(&s->taken);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	return R->syncer = s;
}

int mirror_sync_add(run *R, int fd, const char *path)
{
	mirror_syncer *s = syncer(R);
	char *copy = s ? strdup(path) : NULL;
	if (!copy)
		return -1;
	/* Not waited for: the disk works while the run goes on. */
	sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	pthread_mutex_lock(&s->lock);
	while (s->n == MAX_QUEUED)
		pthread_cond_wait(&s->taken, &s->lock);
	s->q[(s->head + s->n) % MAX_QUEUED] = (queued){fd, copy};
	s->n++;
	pthread_cond_signal(&s->more);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Stops the thread: the files still queued are synced first when sync,
 * closed unsynced otherwise. The first failure's errno, 0 for none. */
static int stop(run *R, bool sync, char **path)
{
	mirror_syncer *s = R->syncer;
	*path = NULL;
	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (!sync) {
		for (; s->n; s->n--, s->head = (s->head + 1) % MAX_QUEUED) {
			close(s->q[s->head].fd);
			free(s->q[s->head].path);
		}
	}
	s->stop = true;
	pthread_cond_signal(&s->more);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	int err = s->err;
	*path = s->err_path;
	pthread_cond_destroy(&s->more);
	pthread_cond_destroy(&s->taken);
	pthread_mutex_destroy(&s->lock);
	free(s);
	R->syncer = NULL;
	return err;
}

int mirror_sync_wait(run *R)
{
	char *path;
	int err = stop(R, true, &path);
	if (err)
		mirror_error(R, path ? path : "-o", "cannot write: %s", strerror(err));
	free(path);
	return err ? -1 : 0;
}

void mirror_sync_drop(run *R)
{
	char *path;
	stop(R, false, &path);
	free(path);
}
