/* budget.c: the engine's memory budget: one number of bytes that every large allocation
 * reserves before it allocates (SRS entries, partitions' working sets). A reservation that
 * does not fit evicts idle SRS entries or waits; one that could never fit fails at once. */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "cuzk/log.h"
#include "engine_internal.h"

#define MiB (1024.0 * 1024.0)

/* MemTotal - margin, at least 256 MiB (256 GiB when /proc/meminfo cannot be read). */
static uint64_t mem_total_auto(uint64_t margin)
{
    FILE *f = fopen("/proc/meminfo", "r");
    unsigned long long kb = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    uint64_t total = kb ? (uint64_t)kb * 1024 : 256ull << 30;
    return total > margin + (256ull << 20) ? total - margin : 256ull << 20;
}

void budget_init(struct engine *e, const struct engine_config *c)
{
    e->mem_total = c->mem_auto ? mem_total_auto(c->mem_safety_margin) : c->mem_budget;
    e->mem_used = 0;
    cuzk_log(CLOG_INFO, "memory budget initialized: total_budget_mib=%.0f (%s)",
             (double)e->mem_total / MiB, c->mem_auto ? "auto: MemTotal - safety_margin" : "configured");
}

/* A reservation waiting for memory (on the stack of its caller, linked into e->mem_waiters). */
struct mem_waiter {
    struct mem_waiter *next;
    int prio;
    uint64_t n;
};

/* Would taking n bytes now leave a waiting reservation of a higher priority than prio, which
 * fits now, without its memory? (e->mu held) Such a one is woken by the same broadcast and
 * goes first. Only one that fits now holds the others back: one that does not fit must wait
 * for memory that in-flight work gives back, and a lower reservation (whose partition may hold
 * the only reference to an SRS entry it would need evicted) never waits on it. */
static bool budget_higher_fits(const struct engine *e, uint64_t n, int prio)
{
    for (const struct mem_waiter *w = e->mem_waiters; w; w = w->next)
        if (w->prio > prio && e->mem_used + w->n <= e->mem_total && e->mem_used + n + w->n > e->mem_total)
            return true;
    return false;
}

/* Should the synthesis worker holding partition who give it back for a partition of a higher
 * priority queued for synthesis? Only when no synthesis worker is idle (an idle one takes it). */
static bool synth_should_yield(const struct engine *e, const struct qitem *who)
{
    if (!e->synth_q.n || e->synth_q.v[0].job->priority <= who->job->priority) return false;
    for (unsigned i = 0; i < e->n_synth && i < e->n_workers; i++)
        if (!e->workers[i].busy) return false;
    return true;
}

int budget_reserve(struct engine *e, uint64_t n, int prio, const struct qitem *who,
                   struct cuzk_error *err)
{
    if (n > e->mem_total)
        return cuzk_fail(err, CUZK_E_NOMEM,
                         "needs %.1f MiB of memory but the whole budget is %.1f MiB "
                         "([memory] total_budget)", (double)n / MiB, (double)e->mem_total / MiB);
    bool logged = false;
    struct mem_waiter me = {NULL, prio, n};
    bool listed = false;
    int rc = CUZK_OK;
    for (;;) {
        const bool fits = e->mem_used + n <= e->mem_total;
        if (fits && !budget_higher_fits(e, n, prio)) break;
        if (e->stopping) {
            rc = cuzk_fail(err, CUZK_E_CANCELLED, "daemon shutting down");
            break;
        }
        if (who && synth_should_yield(e, who)) {
            rc = cuzk_fail(err, CUZK_E_BUSY, "gave way to a partition of a higher priority");
            break;
        }
        if (!fits) {
            struct srs_entry *victims = NULL;
            uint64_t freed = srs_evict_lru(e, e->mem_used + n - e->mem_total, &victims);
            if (freed) {
                /* Freeing may wait for a device lock (GPU unload): not under the engine lock,
                 * which callers already expect to be dropped here (as by the timed wait). */
                pthread_mutex_unlock(&e->mu);
                srs_free_list(e, victims);
                pthread_mutex_lock(&e->mu);
                budget_release(e, freed);
                continue;
            }
        }
        if (!listed) {
            me.next = e->mem_waiters;
            e->mem_waiters = &me;
            listed = true;
        }
        if (!logged) {
            cuzk_log(CLOG_DEBUG, "waiting for memory: need %.1f MiB at priority %d, %.1f of %.1f MiB in use",
                     (double)n / MiB, prio, (double)e->mem_used / MiB, (double)e->mem_total / MiB);
            logged = true;
        }
        /* Timed wait: idle entries become evictable with time, not only on release. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&e->mem_cv, &e->mu, &ts);
    }
    if (listed) {
        for (struct mem_waiter **pp = &e->mem_waiters; *pp; pp = &(*pp)->next)
            if (*pp == &me) {
                *pp = me.next;
                break;
            }
        pthread_cond_broadcast(&e->mem_cv);   /* a lower one it held back may go now */
    }
    if (!rc) e->mem_used += n;
    return rc;
}

void budget_release(struct engine *e, uint64_t n)
{
    e->mem_used = n > e->mem_used ? 0 : e->mem_used - n;
    pthread_cond_broadcast(&e->mem_cv);
}

void budget_partition(const struct g16_shape *s, uint64_t *witness, uint64_t *prove)
{
    uint64_t n = 1;
    while (n < s->n_constraints) n <<= 1;
    *witness = ((uint64_t)s->n_inputs + s->n_aux) * sizeof(fr_t);
    *prove = 4 * n * sizeof(fr_t);
}

int budget_fits(const struct engine *e, uint64_t srs_bytes, uint64_t working,
                struct cuzk_error *err)
{
    if (srs_bytes + working <= e->mem_total) return CUZK_OK;
    return cuzk_fail(err, CUZK_E_NOMEM, "needs %.1f MiB (SRS %.1f MiB + working set %.1f MiB) but "
                     "the whole budget is %.1f MiB ([memory] total_budget)",
                     (double)(srs_bytes + working) / MiB, (double)srs_bytes / MiB,
                     (double)working / MiB, (double)e->mem_total / MiB);
}

void budget_force(struct engine *e, uint64_t n)
{
    e->mem_used += n;
    if (e->mem_used > e->mem_total)
        cuzk_log(CLOG_WARN, "memory budget exceeded by %.1f MiB (a proving key read back from its file)",
                 (double)(e->mem_used - e->mem_total) / MiB);
}

/* Above every job priority (0-4): a request holding its bytes while it waits is admitted
 * before more partitions start, which would only lengthen its wait. */
#define MEM_REQUEST_PRIO 5

int engine_mem_reserve(struct engine *e, uint64_t n, const char *what, struct cuzk_error *err)
{
    pthread_mutex_lock(&e->mu);
    int rc = budget_reserve(e, n, MEM_REQUEST_PRIO, NULL, err);
    pthread_mutex_unlock(&e->mu);
    if (rc) cuzk_fail_prefix(err, rc, "%s", what);
    return rc;
}

void engine_mem_release(struct engine *e, uint64_t n)
{
    pthread_mutex_lock(&e->mu);
    budget_release(e, n);
    pthread_mutex_unlock(&e->mu);
}
