/* engine.c: the engine's lifecycle (engine_new, engine_shutdown, engine_free) and its public
 * entry points: submit, await, cancel, restore, preload, evict, and the status names. The
 * rest of the engine: queue.c (the ordered partition queues), jobs.c (the job table, job
 * states, finishing and retention), workers.c (the synthesis and proving worker threads and
 * the device turn), snapshot.c (the status snapshot). What is special to a proof kind is in
 * its kind_<name>.c (registry: kinds.c); the SRS cache is srs.c, the budget budget.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_internal.h"

/* ---------------------------------------------------------------- names -- */

const char *engine_status_name(int status)
{
    static const char *n[] = {"UNKNOWN", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"};
    return status >= 0 && status <= 4 ? n[status] : "UNKNOWN";
}
const char *engine_part_state_name(int state)
{
    static const char *n[] = {"pending", "synthesizing", "synth_done", "gpu", "done", "failed",
                              "dropped"};
    return state >= 0 && state <= PART_DROPPED ? n[state] : "unknown";
}

void engine_result_free(struct engine_result *r)
{
    if (!r) return;
    free(r->proof);
    r->proof = NULL;
    r->proof_len = 0;
    free(r->aggregate);
    r->aggregate = NULL;
    r->aggregate_len = 0;
}

static void make_uuid(char out[ENGINE_ID_MAX])
{
    uint8_t b[16];
    if (cuzk_os_random(b, sizeof b, NULL)) {
        uint64_t t = cuzk_now_ns();
        for (int i = 0; i < 16; i++) b[i] = (uint8_t)(t >> (8 * (i % 8))) ^ (uint8_t)(i * 37);
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    snprintf(out, ENGINE_ID_MAX,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
}

int engine_submit(struct engine *e, const struct engine_request *req, char job_id[ENGINE_ID_MAX],
                  uint32_t *queue_position, bool *existing, struct cuzk_error *err)
{
    *existing = false;
    *queue_position = 0;
    const char *rid = req->request_id ? req->request_id : "";
    if (strlen(rid) >= ENGINE_ID_MAX)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "request_id is %zu bytes; the limit is %d",
                         strlen(rid), ENGINE_ID_MAX - 1);
    for (const char *c = rid; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "request_id contains control characters");
    const struct kind_def *kind = kind_get(req->kind);
    if (!kind)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "unknown proof_kind %d (expected 1-4 for the Filecoin kinds, 100 for "
                         "SYNTHETIC or 101 for NI_POREP_SEAL_COMMIT)", req->kind);
    if (req->porep.aggregate && req->kind != ENGINE_KIND_NI_POREP)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "aggregate (field 102) is only for proof_kind "
                         "NI_POREP_SEAL_COMMIT (101), not %s", engine_kind_name(req->kind));
    if (req->priority < 0 || req->priority > 4)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "unknown priority %d (expected 0-4)",
                         req->priority);

    struct job *j = calloc(1, sizeof *j);
    if (!j) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    pthread_cond_init(&j->cv, NULL);
    j->kind = req->kind;
    j->dev = -1;
    j->priority = req->priority ? req->priority : kind->default_priority;
    if (rid[0]) snprintf(j->id, sizeof j->id, "%s", rid);
    else make_uuid(j->id);
    struct cuzk_error perr;
    cuzk_error_clear(&perr);
    int prc = kind->parse(j, req, &perr);
    /* an aggregate without its SRS could never be answered: the job fails now, not after
     * every partition was proved */
    if (!prc && j->aggregate && engine_aggregate_ready(e, &perr)) prc = CUZK_E_UNSUPPORTED;
    if (prc && prc != CUZK_E_UNSUPPORTED) {
        job_discard(j);
        if (prc == CUZK_E_NOMEM) return cuzk_fail(err, prc, "%s", perr.msg);
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s", perr.msg);
    }
    /* Durable: the request is recorded before the job can be seen (the hook's write may be
     * long, a 32 GiB C1 is ~50 MB, so it runs without the lock). */
    if (e->cfg.hooks.stage) {
        struct cuzk_error serr;
        cuzk_error_clear(&serr);
        int src = e->cfg.hooks.stage(e->cfg.hooks.ctx, j->id, j->kind, j->priority, req,
                                     &j->token, &serr);
        if (src) {
            job_discard(j);
            return cuzk_fail(err, src, "%s", serr.msg);
        }
    }

    pthread_mutex_lock(&e->mu);
    if (e->stopping) {
        pthread_mutex_unlock(&e->mu);
        job_refuse(e, j);
        return cuzk_fail(err, CUZK_E_BUSY, "daemon is shutting down; not accepting new proofs");
    }
    struct job *old = job_find(e, j->id);
    if (old && !(old->state == JOB_DONE && old->result.status != ENGINE_COMPLETED)) {
        /* idempotent: queued, running or completed job with this id */
        snprintf(job_id, ENGINE_ID_MAX, "%s", old->id);
        *existing = true;
        pthread_mutex_unlock(&e->mu);
        cuzk_log(CLOG_INFO, "SubmitProof: request_id=%s matches an existing job (%s); attaching",
              CLOG_ID(j->id), old->state == JOB_DONE ? "completed" : "in progress");
        job_refuse(e, j);
        return CUZK_OK;
    }
    /* Admission: every accepted job holds its parsed request and a journal record until it
     * finishes, so their number is bounded (4,000 queued 64-partition jobs took 540 MB). */
    uint32_t unfinished = 0;
    for (struct job *q = e->head; q; q = q->next) unfinished += q->state != JOB_DONE;
    if (e->cfg.max_queued_jobs && unfinished >= e->cfg.max_queued_jobs && !req->resumed) {
        pthread_mutex_unlock(&e->mu);
        job_refuse(e, j);
        return cuzk_fail(err, CUZK_E_NOMEM, "the daemon already holds %u unfinished jobs, the "
                         "limit ([daemon] max_queued_jobs = %u): retry when some finish, or "
                         "raise it", unfinished, e->cfg.max_queued_jobs);
    }
    if (old) {   /* failed or cancelled before: a retry gets a fresh job */
        job_unhash(e, old);
        if (!old->refs) job_destroy(e, old);
    }
    for (struct job *q = e->head; q; q = q->next)
        if (q->state == JOB_QUEUED) (*queue_position)++;
    j->seq = e->next_seq++;
    j->submit_ns = cuzk_now_ns();
    j->state = JOB_QUEUED;
    unsigned h = job_id_hash(j->id);
    j->hnext = e->buckets[h];
    e->buckets[h] = j;
    j->prev = e->tail;
    if (e->tail) e->tail->next = j; else e->head = j;
    e->tail = j;
    snprintf(job_id, ENGINE_ID_MAX, "%s", j->id);
    cuzk_log(CLOG_INFO, "job enqueued: job=%s kind=%s priority=%d partitions=%u circuit=%s",
          CLOG_ID(j->id), engine_kind_name(j->kind), j->priority, j->n_parts,
          j->circuit_id[0] ? j->circuit_id : "-");
    if (prc == CUZK_E_UNSUPPORTED) {
        job_finish(e, j, ENGINE_FAILED, perr.msg);
    } else {
        j->proof = calloc(j->n_parts, G16_PROOF_BYTES);
        int rc = j->proof ? CUZK_OK : CUZK_E_NOMEM;
        for (uint32_t p = 0; p < j->n_parts && !rc; p++) {
            rc = q_push(&e->synth_q, j, p);
            if (!rc) j->parts_queued++;
        }
        if (rc) job_finish(e, j, ENGINE_FAILED, "out of memory while queueing partitions");
        pthread_cond_broadcast(&e->synth_cv);
        /* synthesis workers waiting for memory with partitions of a lower priority give way
         * to this job's (budget_reserve) */
        pthread_cond_broadcast(&e->mem_cv);
    }
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

int engine_await(struct engine *e, const char *job_id, uint64_t timeout_ms,
                 struct engine_result *out, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&e->mu);
    struct job *j = job_find(e, job_id);
    if (!j) {
        int rc = job_not_found(e, job_id, err);
        pthread_mutex_unlock(&e->mu);
        return rc;
    }
    j->refs++;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)(timeout_ms / 1000);
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) { dl.tv_sec++; dl.tv_nsec -= 1000000000L; }
    int wrc = 0;
    while (j->state != JOB_DONE && wrc != ETIMEDOUT) {
        if (timeout_ms) wrc = pthread_cond_timedwait(&j->cv, &e->mu, &dl);
        else pthread_cond_wait(&j->cv, &e->mu);
    }
    int rc = CUZK_OK;
    if (j->state == JOB_DONE && j->kept) {
        rc = cuzk_fail(err, CUZK_E_CANCELLED, "daemon shutting down: job %s is not finished; it "
                       "is kept in the journal and resumes when the daemon starts again (await "
                       "it then, or resubmit it with the same request id)", j->id);
    } else if (j->state == JOB_DONE) {
        *out = j->result;
        out->proof = NULL;
        if (j->result.proof_len) {
            out->proof = malloc(j->result.proof_len);
            if (out->proof) memcpy(out->proof, j->result.proof, j->result.proof_len);
            else { out->proof_len = 0; rc = cuzk_fail(err, CUZK_E_NOMEM, "out of memory"); }
        }
        out->aggregate = NULL;
        if (j->result.aggregate_len && !rc) {
            out->aggregate = malloc(j->result.aggregate_len);
            if (out->aggregate) memcpy(out->aggregate, j->result.aggregate, j->result.aggregate_len);
            else { out->aggregate_len = 0; rc = cuzk_fail(err, CUZK_E_NOMEM, "out of memory"); }
        } else {
            out->aggregate_len = 0;
        }
    } else {
        snprintf(out->job_id, sizeof out->job_id, "%s", j->id);
        out->status = ENGINE_TIMEOUT;
        snprintf(out->error, sizeof out->error,
                 "no result within timeout_ms=%" PRIu64 "; the job is still %s", timeout_ms,
                 j->state == JOB_QUEUED ? "queued" : "running");
        out->total_ms = ns_to_ms(cuzk_now_ns() - j->submit_ns);
    }
    j->refs--;
    if (j->state == JOB_DONE && !j->refs) job_retention_gc(e);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int engine_cancel(struct engine *e, const char *job_id, bool *was_running,
                  struct cuzk_error *err)
{
    *was_running = false;
    pthread_mutex_lock(&e->mu);
    struct job *j = job_find(e, job_id);
    if (!j) {
        int rc = job_not_found(e, job_id, err);
        pthread_mutex_unlock(&e->mu);
        return rc;
    }
    if (j->state != JOB_DONE) {
        *was_running = j->parts_running > 0;
        job_finish(e, j, ENGINE_CANCELLED, "cancelled by CancelProof");
    }
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

int engine_restore(struct engine *e, int kind, int priority, const struct engine_result *r,
                   uint64_t finished_ago_ms, struct cuzk_error *err)
{
    if (!kind_get(kind))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "restore %s: unknown proof_kind %d", r->job_id,
                         kind);
    if (r->status != ENGINE_COMPLETED && r->status != ENGINE_FAILED &&
        r->status != ENGINE_CANCELLED)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "restore %s: status %d is not a finished one",
                         r->job_id, r->status);
    if (!r->job_id[0] || strnlen(r->job_id, ENGINE_ID_MAX) >= ENGINE_ID_MAX)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "restore: empty or unterminated job id");
    struct job *j = calloc(1, sizeof *j);
    uint8_t *proof = r->proof_len ? malloc(r->proof_len) : NULL;
    uint8_t *agg = r->aggregate_len ? malloc(r->aggregate_len) : NULL;
    if (!j || (r->proof_len && !proof) || (r->aggregate_len && !agg)) {
        free(j);
        free(proof);
        free(agg);
        return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    }
    pthread_cond_init(&j->cv, NULL);
    snprintf(j->id, sizeof j->id, "%s", r->job_id);
    j->kind = kind;
    j->priority = priority;
    j->dev = -1;
    j->state = JOB_DONE;
    j->result = *r;
    j->result.proof = proof;
    if (proof) memcpy(proof, r->proof, r->proof_len);
    j->result.aggregate = agg;
    if (agg) memcpy(agg, r->aggregate, r->aggregate_len);
    uint64_t now = cuzk_now_ns(), ago = finished_ago_ms * NS_PER_MS;
    j->done_ns = now > ago ? now - ago : 0;
    j->submit_ns = j->done_ns;
    pthread_mutex_lock(&e->mu);
    if (job_find(e, j->id)) {
        pthread_mutex_unlock(&e->mu);
        free(proof);
        free(agg);
        j->result.proof = NULL;
        j->result.aggregate = NULL;
        job_discard(j);
        return cuzk_fail(err, CUZK_E_BUSY, "restore %s: a job with this id exists", r->job_id);
    }
    j->seq = e->next_seq++;
    unsigned h = job_id_hash(j->id);
    j->hnext = e->buckets[h];
    e->buckets[h] = j;
    j->prev = e->tail;
    if (e->tail) e->tail->next = j; else e->head = j;
    e->tail = j;
    e->n_done++;
    job_retention_gc(e);
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

int engine_preload(struct engine *e, const char *circuit_id, bool *already_loaded,
                   uint64_t *load_ms, struct cuzk_error *err)
{
    struct srs_entry *s = NULL;
    uint64_t t0 = cuzk_now_ns();
    bool was = false;
    /* a preload is nobody's deadline: its budget reservations wait as a NORMAL job's do */
    int rc = srs_acquire(e, circuit_id, 2, &s, NULL, &was, err);
    if (rc) return rc;
    /* the VRAM tier: upload to every GPU now rather than at the first proof (held by our
     * reference, so it cannot be evicted meanwhile) */
    dev_upload_all(e, s);
    *already_loaded = was;
    *load_ms = was ? 0 : ns_to_ms(cuzk_now_ns() - t0);
    srs_release(e, s);
    return CUZK_OK;
}

int engine_evict(struct engine *e, const char *circuit_id, bool *was_loaded,
                 uint64_t *freed_bytes, struct cuzk_error *err)
{
    return srs_evict(e, circuit_id, was_loaded, freed_bytes, err);
}
/* ------------------------------------------------------------- lifecycle -- */

void engine_config_defaults(struct engine_config *c)
{
    memset(c, 0, sizeof *c);
    c->workers_per_device = 2;
    c->mem_auto = true;
    c->mem_safety_margin = 5ull << 30;
    c->srs_min_idle_ms = 300 * 1000;
    c->result_retention_ms = 3600 * 1000;
    c->result_retention_count = 1000;
    snprintf(c->param_cache, sizeof c->param_cache, "/data/zk/params");
    c->srs_validation = G16_VALIDATE_FULL;
}

static void backend_destroy(struct engine_backend *be)
{
    if (be->ops && be->ops->destroy && be->self) be->ops->destroy(be->self);
    be->self = NULL;
}

struct engine *engine_new(const struct engine_config *cfg, const struct engine_backend *be,
                          struct cuzk_error *err)
{
    struct engine_backend cpu;
    if (!be || !be->ops || !be->ops->prove) {
        if (be) {
            struct engine_backend tmp = *be;
            backend_destroy(&tmp);
        }
        engine_backend_cpu(&cpu, be ? be->cpu_reason : NULL);
        be = &cpu;
    }
    struct engine *e = calloc(1, sizeof *e);
    if (!e) {
        struct engine_backend tmp = *be;
        backend_destroy(&tmp);
        cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
        return NULL;
    }
    e->cfg = *cfg;
    e->be = *be;
    e->start_ns = cuzk_now_ns();
    pthread_mutex_init(&e->mu, NULL);
    pthread_mutex_init(&e->agg_mu, NULL);
    pthread_cond_init(&e->synth_cv, NULL);
    pthread_cond_init(&e->prove_cv, NULL);
    pthread_cond_init(&e->drain_cv, NULL);
    pthread_cond_init(&e->mem_cv, NULL);
    pthread_cond_init(&e->srs_cv, NULL);
    budget_init(e, cfg);

    /* devices: the backend's GPUs (contexts already open, now ours), else CPU provers */
    if (e->be.n_devices) {
        e->have_gpu = true;
        e->n_dev = e->be.n_devices < ENGINE_MAX_DEVICES ? e->be.n_devices : ENGINE_MAX_DEVICES;
        e->be.cpu_reason[0] = 0;
        for (unsigned d = 0; d < e->n_dev; d++) pthread_mutex_init(&e->dev_mu[d], NULL);
    }
    unsigned per_dev = cfg->workers_per_device ? cfg->workers_per_device : 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1) ncpu = 1;
    unsigned n_synth = cfg->synthesis_workers;
    if (!n_synth) n_synth = (unsigned)(ncpu < 18 ? ncpu : 18);
    if (n_synth < 2) n_synth = 2;
    unsigned n_prove = per_dev * (e->have_gpu ? e->n_dev : 1);
    e->n_synth = n_synth;
    e->n_workers = n_synth + n_prove;
    e->workers = calloc(e->n_workers, sizeof *e->workers);
    if (!e->workers) {
        cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
        backend_destroy(&e->be);
        free(e);
        return NULL;
    }
    pthread_mutex_lock(&e->mu);
    for (unsigned i = 0; i < e->n_workers; i++) {
        struct worker *w = &e->workers[i];
        w->e = e;
        w->id = i;
        w->prover = i >= n_synth;
        w->gpu_ordinal = -1;
        if (w->prover && e->have_gpu) {
            w->dev = (i - n_synth) / per_dev;
            w->gpu_ordinal = e->be.ordinals[w->dev];
        }
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            e->stopping = true;
            pthread_cond_broadcast(&e->synth_cv);
            pthread_cond_broadcast(&e->prove_cv);
            pthread_mutex_unlock(&e->mu);
            cuzk_fail(err, CUZK_E_INTERNAL, "cannot start worker threads: %s", strerror(errno));
            e->n_workers = i;
            engine_free(e);
            return NULL;
        }
        e->n_live++;
    }
    pthread_mutex_unlock(&e->mu);
    if (e->have_gpu)
        cuzk_log(CLOG_INFO, "engine started: %u synthesis workers, %u GPU(s) x %u prover workers "
              "sharing one lock per GPU", n_synth, e->n_dev, per_dev);
    else
        cuzk_log(CLOG_INFO, "engine started: %u synthesis workers, %u CPU prover workers "
              "(proving on the CPU: %s)", n_synth, n_prove, e->be.cpu_reason);
    return e;
}

/* Partitions of job j on a prover right now (e->mu held). */
static uint32_t parts_on_prover(const struct job *j)
{
    uint32_t n = 0;
    for (uint32_t p = 0; p < j->n_parts; p++) n += j->parts[p].state == PART_PROVING;
    return n;
}

void engine_shutdown(struct engine *e, uint64_t grace_ms)
{
    pthread_mutex_lock(&e->mu);
    if (e->stopping && !e->parts_in_flight) { pthread_mutex_unlock(&e->mu); return; }
    e->stopping = true;
    /* Only partitions on a prover are running: a job whose every unfinished partition is on
     * one may finish within the grace. Every other unfinished job (queued, synthesizing, or
     * synthesized and waiting for a prover) stops now: kept for the next start when the
     * engine is durable, else cancelled. */
    bool keep = e->cfg.hooks.stage != NULL;
    uint32_t on_prover = 0, finishing = 0, stopped = 0;
    for (struct job *j = e->head; j; j = j->next) {
        if (j->state == JOB_DONE) continue;
        uint32_t np = parts_on_prover(j);
        on_prover += np;   /* running now, whether or not the job can finish in the grace */
        if (np && j->parts_done + np == j->n_parts) {
            finishing++;
            continue;
        }
        stopped++;
        if (keep) job_keep(e, j);
        else job_finish(e, j, ENGINE_CANCELLED, "daemon shutting down");
    }
    cuzk_log(CLOG_INFO, "shutting down cuzk engine: %u partition(s) on a prover (%u job(s) may "
             "finish within %" PRIu64 " ms); %u unfinished job(s) %s", on_prover, finishing,
             grace_ms, stopped, keep ? "kept in the journal for the next start" : "cancelled");
    pthread_cond_broadcast(&e->synth_cv);
    pthread_cond_broadcast(&e->prove_cv);
    pthread_cond_broadcast(&e->mem_cv);
    pthread_cond_broadcast(&e->srs_cv);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)(grace_ms / 1000);
    dl.tv_nsec += (long)(grace_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) { dl.tv_sec++; dl.tv_nsec -= 1000000000L; }
    int wrc = 0;
    for (;;) {
        bool unfinished = false;
        for (struct job *j = e->head; j && !unfinished; j = j->next)
            unfinished = j->state != JOB_DONE;
        if (!unfinished || wrc == ETIMEDOUT) break;
        wrc = pthread_cond_timedwait(&e->drain_cv, &e->mu, &dl);
    }
    on_prover = 0;
    for (struct job *j = e->head; j; j = j->next) {
        if (j->state == JOB_DONE) continue;
        on_prover += parts_on_prover(j);
        if (keep) job_keep(e, j);
        else job_finish(e, j, ENGINE_CANCELLED, "daemon shutting down: running partitions did "
                        "not finish within [daemon] shutdown_grace");
    }
    if (on_prover)
        cuzk_log(CLOG_WARN, "%u partition(s) still on a prover after the %" PRIu64 " ms grace; "
                 "abandoning them%s", on_prover, grace_ms,
                 keep ? " (their jobs are kept for the next start)" : "");
    pthread_mutex_unlock(&e->mu);
}

void engine_free(struct engine *e)
{
    if (!e) return;
    pthread_mutex_lock(&e->mu);
    e->stopping = true;
    pthread_cond_broadcast(&e->synth_cv);
    pthread_cond_broadcast(&e->prove_cv);
    /* Workers stuck in a long kernel are not joined: the process is about to exit. */
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 2;
    int wrc = 0;
    while (e->n_live && wrc != ETIMEDOUT) wrc = pthread_cond_timedwait(&e->drain_cv, &e->mu, &dl);
    bool all_done = e->n_live == 0;
    pthread_mutex_unlock(&e->mu);
    if (!all_done) return;   /* leak rather than free memory a live thread may touch */
    for (unsigned i = 0; i < e->n_workers; i++) pthread_join(e->workers[i].thread, NULL);
    while (e->head) {
        e->head->refs = 0;
        job_destroy(e, e->head);
    }
    srs_free_all(e);
    engine_aggregate_free(e);
    for (struct lost_id *l; (l = e->lost);) {
        e->lost = l->next;
        free(l);
    }
    pthread_mutex_destroy(&e->agg_mu);
    if (e->be.ops->host_pinned) {   /* the figure beside the process's peak resident set */
        uint64_t now = 0, peak = 0;
        e->be.ops->host_pinned(e->be.self, &now, &peak);
        cuzk_log(CLOG_INFO, "page-locked host memory: peak %.2f GiB, %.2f GiB still held at exit",
                 (double)peak / (1u << 30), (double)now / (1u << 30));
    }
    backend_destroy(&e->be);   /* closes the devices, after everything on them was unloaded */
    free(e->synth_q.v);
    free(e->prove_q.v);
    for (unsigned d = 0; d < e->n_dev; d++) free(e->dev_q[d].v);
    free(e->workers);
    free(e);
}
