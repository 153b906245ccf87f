/* pool.c: the library's one thread pool. Jobs are parallel-for ranges served FIFO; the
 * calling thread works on its own job too, so a 1-thread pool runs everything inline. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/util.h"

struct pool_job {
    pool_fn fn;
    void *ctx;
    size_t n, chunk;
    atomic_size_t next;      /* next item to hand out */
    size_t nchunks;
    atomic_size_t done;      /* chunks finished */
    unsigned users;          /* workers holding a pointer to this job; guarded by p->mu */
    struct pool_job *qnext;  /* queue link; guarded by p->mu */
};

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t work_cv;  /* workers wait here for jobs */
    pthread_cond_t done_cv;  /* callers wait here for their job's last chunk */
    struct pool_job *head, *tail;  /* jobs with chunks left; guarded by mu */
    unsigned nthreads;       /* workers spawned (pool_size = nthreads + 1) */
    pthread_t *threads;
    bool stop;
};

static _Thread_local unsigned tls_worker_id;   /* 1..nthreads inside a worker, 0 outside */
static _Thread_local struct pool *tls_pool;

/* Run chunks of job until none are left; returns after at least trying. */
static void run_chunks(struct pool *p, struct pool_job *j, unsigned worker)
{
    for (;;) {
        size_t b = atomic_fetch_add(&j->next, j->chunk);
        if (b >= j->n) break;
        size_t e = b + j->chunk < j->n ? b + j->chunk : j->n;
        j->fn(j->ctx, b, e, worker);
        if (atomic_fetch_add(&j->done, 1) + 1 == j->nchunks) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_broadcast(&p->done_cv);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void unlink_job_locked(struct pool *p, struct pool_job *j)
{
    struct pool_job **pp = &p->head, *prev = NULL;
    while (*pp && *pp != j) {
        prev = *pp;
        pp = &(*pp)->qnext;
    }
    if (*pp) {
        *pp = j->qnext;
        if (p->tail == j) p->tail = prev;
    }
}

static void *worker_main(void *arg)
{
    struct pool *p = arg;
    pthread_mutex_lock(&p->mu);
    unsigned id = 0;
    /* ids are assigned in spawn order under the lock */
    for (unsigned i = 0; i < p->nthreads; i++)
        if (pthread_equal(p->threads[i], pthread_self())) id = i + 1;
    tls_worker_id = id;
    tls_pool = p;
    for (;;) {
        while (!p->stop && !p->head) pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop) break;
        struct pool_job *j = p->head;
        if (atomic_load(&j->next) >= j->n) {   /* fully handed out: drop from queue */
            unlink_job_locked(p, j);
            continue;
        }
        j->users++;
        pthread_mutex_unlock(&p->mu);
        run_chunks(p, j, id);
        pthread_mutex_lock(&p->mu);
        unlink_job_locked(p, j);
        if (--j->users == 0) pthread_cond_broadcast(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct pool *pool_new(unsigned nthreads, struct cuzk_error *err)
{
    if (nthreads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (unsigned)n : 1;
    }
    struct pool *p = calloc(1, sizeof *p);
    if (!p) {
        cuzk_fail(err, CUZK_E_NOMEM, "pool_new: out of memory");
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    p->threads = calloc(nthreads, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        cuzk_fail(err, CUZK_E_NOMEM, "pool_new: out of memory");
        return NULL;
    }
    pthread_mutex_lock(&p->mu);
    for (unsigned i = 0; i + 1 < nthreads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) break;
        p->nthreads++;
    }
    pthread_mutex_unlock(&p->mu);
    return p;
}

void pool_free(struct pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    free(p->threads);
    free(p);
}

unsigned pool_size(const struct pool *p) { return p ? p->nthreads + 1 : 1; }

static struct pool *default_pool;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static unsigned default_threads;   /* 0: one per online CPU */
static bool default_made;

static void default_init(void)
{
    default_pool = pool_new(default_threads, NULL);
    default_made = true;
}

int pool_default_set_threads(const char *s, struct cuzk_error *err)
{
    if (!s || !*s) return CUZK_OK;
    char *end = NULL;
    errno = 0;
    const unsigned long n = strtoul(s, &end, 10);
    if (errno || *end || *s == '-' || n > 4096)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "thread count '%s': expected 0..4096 (0 = one per CPU)", s);
    if (default_made)
        return cuzk_fail(err, CUZK_E_BUSY, "thread count: the shared pool already exists; set it before any work");
    default_threads = (unsigned)n;
    return CUZK_OK;
}

struct pool *pool_default(void)
{
    pthread_once(&default_once, default_init);
    return default_pool;   /* NULL only if calloc failed: pool_parallel_for then runs inline */
}

void pool_parallel_for(struct pool *p, size_t n, size_t grain, pool_fn fn, void *ctx)
{
    if (n == 0) return;
    if (grain == 0) grain = 1;
    /* Inline when there is no pool, nothing to split, or we are already a worker of it. */
    if (!p || p->nthreads == 0 || n <= grain || tls_pool == p) {
        fn(ctx, 0, n, tls_pool == p ? tls_worker_id : 0);
        return;
    }
    /* About 4 chunks per thread balances uneven chunk costs without much overhead. */
    size_t want = (size_t)pool_size(p) * 4;
    size_t chunk = (n + want - 1) / want;
    if (chunk < grain) chunk = grain;
    struct pool_job j;
    memset(&j, 0, sizeof j);
    j.fn = fn;
    j.ctx = ctx;
    j.n = n;
    j.chunk = chunk;
    j.nchunks = (n + chunk - 1) / chunk;
    atomic_init(&j.next, 0);
    atomic_init(&j.done, 0);

    pthread_mutex_lock(&p->mu);
    if (p->tail) p->tail->qnext = &j; else p->head = &j;
    p->tail = &j;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);

    run_chunks(p, &j, 0);

    pthread_mutex_lock(&p->mu);
    /* j lives on this stack: wait until every chunk ran and no worker still points at it. */
    while (atomic_load(&j.done) < j.nchunks || j.users) pthread_cond_wait(&p->done_cv, &p->mu);
    unlink_job_locked(p, &j);
    pthread_mutex_unlock(&p->mu);
}
