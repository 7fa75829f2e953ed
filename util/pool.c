/*
 * The worker pool (include/jinst/util.h).
 *
 * threads - 1 threads are started once and sleep on a condition variable.
 * A run publishes its task (fn, ctx, n) under the lock, resets the atomic
 * index, bumps the generation and wakes them; every thread, the caller's
 * too, then takes indices from the counter until they run out, so a long
 * task never holds up the others behind a fixed split. The run ends when
 * the last busy thread checks out. The generation tells a thread that wakes
 * up whether there is a run it has not yet worked on, whatever the order
 * the wake-ups arrive in. A run may be started and finished apart
 * (jinst_pool_start, jinst_pool_finish): the caller takes its share only
 * at the finish, doing its own work in between while the others start.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "jinst/util.h"

typedef struct pool_thread {
	jinst_pool *pool;
	int worker;
	pthread_t tid;
} pool_thread;

struct jinst_pool {
	pthread_mutex_t lock;
	pthread_cond_t wake, idle;
	pool_thread *threads;
	int started;          /* threads running besides the caller's */
	bool stop;
	uint64_t generation;
	int busy;             /* started threads still in the current run */
	/* the current run, written under the lock before the wake-up */
	jinst_pool_fn fn;
	void *ctx;
	size_t n;
	_Atomic size_t next;
};

static void drain(jinst_pool *p, int worker)
{
	for (;;) {
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			return;
		p->fn(p->ctx, worker, i);
	}
}

static void *thread_main(void *arg)
{
	pool_thread *t = arg;
	jinst_pool *p = t->pool;
	uint64_t seen = 0;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->stop && p->generation == seen)
			pthread_cond_wait(&p->wake, &p->lock);
		if (p->stop)
			break;
		seen = p->generation;
		pthread_mutex_unlock(&p->lock);
		drain(p, t->worker);
		pthread_mutex_lock(&p->lock);
		if (--p->busy == 0)
			pthread_cond_signal(&p->idle);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int jinst_pool_new(jinst_pool **out, int threads)
{
	*out = NULL;
	if (threads < 1)
		return JINST_EINVAL;
	jinst_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return JINST_ENOMEM;
	p->threads = calloc((size_t)threads, sizeof(*p->threads));
	if (!p->threads || pthread_mutex_init(&p->lock, NULL) != 0) {
		free(p->threads);
		free(p);
		return JINST_ENOMEM;
	}
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->idle, NULL);
	for (int i = 1; i < threads; i++) {
		pool_thread *t = &p->threads[p->started];
		t->pool = p;
		t->worker = p->started + 1;
		if (pthread_create(&t->tid, NULL, thread_main, t) != 0)
			break;
		p->started++;
	}
	*out = p;
	return 0;
}

int jinst_pool_threads(const jinst_pool *pool)
{
	return pool->started + 1;
}

void jinst_pool_start(jinst_pool *p, size_t n, jinst_pool_fn fn, void *ctx)
{
	pthread_mutex_lock(&p->lock);
	p->fn = fn;
	p->ctx = ctx;
	p->n = n;
	atomic_store(&p->next, 0);
	if (n) {
		p->busy = p->started;
		p->generation++;
		pthread_cond_broadcast(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
}

void jinst_pool_finish(jinst_pool *p)
{
	if (p->n == 0)
		return;
	drain(p, 0);
	pthread_mutex_lock(&p->lock);
	while (p->busy > 0)
		pthread_cond_wait(&p->idle, &p->lock);
	p->n = 0;
	pthread_mutex_unlock(&p->lock);
}

void jinst_pool_run(jinst_pool *p, size_t n, jinst_pool_fn fn, void *ctx)
{
	jinst_pool_start(p, n, fn, ctx);
	jinst_pool_finish(p);
}

void jinst_pool_free(jinst_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->started; i++)
		pthread_join(p->threads[i].tid, NULL);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->idle);
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p);
}
