/* engine.c: jobs and their partitions, the ordered synthesis and proving queues, the worker
 * threads (synthesis, then proving through the backend with self-verification), waiters,
 * cancellation, result retention and the status snapshot. What is special to a proof kind is
 * in its kind_<name>.c (registry: kinds.c); the SRS cache is srs.c, the budget budget.c. */
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

#define NS_PER_MS 1000000ull
#define STATUS_KEEP_NS (30ull * 1000000000ull)   /* finished jobs shown in /status this long */

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

/* --------------------------------------------------------- priority queue -- */

static bool q_before(const struct qitem *a, const struct qitem *b)
{
    if (a->job->priority != b->job->priority) return a->job->priority > b->job->priority;
    if (a->job->seq != b->job->seq) return a->job->seq < b->job->seq;
    return a->part < b->part;
}

static void q_sift_down(struct pqueue *q, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && q_before(&q->v[l], &q->v[m])) m = l;
        if (r < q->n && q_before(&q->v[r], &q->v[m])) m = r;
        if (m == i) return;
        struct qitem t = q->v[i]; q->v[i] = q->v[m]; q->v[m] = t;
        i = m;
    }
}

static int q_push(struct pqueue *q, struct job *j, uint32_t part)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        struct qitem *v = realloc(q->v, cap * sizeof *v);
        if (!v) return CUZK_E_NOMEM;
        q->v = v;
        q->cap = cap;
    }
    size_t i = q->n++;
    q->v[i] = (struct qitem){j, part};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!q_before(&q->v[i], &q->v[p])) break;
        struct qitem t = q->v[i]; q->v[i] = q->v[p]; q->v[p] = t;
        i = p;
    }
    return CUZK_OK;
}

static struct qitem q_pop(struct pqueue *q)
{
    struct qitem top = q->v[0];
    q->v[0] = q->v[--q->n];
    q_sift_down(q, 0);
    return top;
}

/* Remove every item of job j; returns how many were removed. */
static uint32_t q_remove_job(struct pqueue *q, const struct job *j)
{
    size_t w = 0;
    uint32_t removed = 0;
    for (size_t r = 0; r < q->n; r++) {
        if (q->v[r].job == j) removed++;
        else q->v[w++] = q->v[r];
    }
    q->n = w;
    for (size_t i = q->n / 2; i-- > 0;) q_sift_down(q, i);
    return removed;
}

/* Move every item of job j from src to dst (a job bound to a device). false, nothing moved,
 * when dst cannot grow. */
static bool q_move_job(struct pqueue *dst, struct pqueue *src, struct job *j)
{
    size_t k = 0;
    for (size_t r = 0; r < src->n; r++) k += src->v[r].job == j;
    if (!k) return true;
    if (dst->n + k > dst->cap) {
        size_t cap = dst->cap ? dst->cap : 64;
        while (cap < dst->n + k) cap *= 2;
        struct qitem *v = realloc(dst->v, cap * sizeof *v);
        if (!v) return false;
        dst->v = v;
        dst->cap = cap;
    }
    for (size_t r = 0; r < src->n; r++)
        if (src->v[r].job == j) q_push(dst, j, src->v[r].part);   /* capacity is there */
    q_remove_job(src, j);
    return true;
}

/* ------------------------------------------------------------------ jobs -- */

static unsigned id_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h & 1023;
}

static struct job *job_find(struct engine *e, const char *id)
{
    for (struct job *j = e->buckets[id_hash(id)]; j; j = j->hnext)
        if (!strcmp(j->id, id)) return j;
    return NULL;
}

/* An id engine_note_lost named. */
struct lost_id {
    struct lost_id *next;
    char id[ENGINE_ID_MAX];
    char why[200];
};

int engine_note_lost(struct engine *e, const char *job_id, const char *why)
{
    struct lost_id *l = calloc(1, sizeof *l);
    if (!l) return CUZK_E_NOMEM;
    snprintf(l->id, sizeof l->id, "%s", job_id);
    snprintf(l->why, sizeof l->why, "%s", why);
    pthread_mutex_lock(&e->mu);
    l->next = e->lost;
    e->lost = l;
    pthread_mutex_unlock(&e->mu);
    return CUZK_OK;
}

/* CUZK_E_NOT_FOUND for an id no job has (e->mu held): saying that it was lost when it was. */
static int not_found(struct engine *e, const char *id, struct cuzk_error *err)
{
    for (const struct lost_id *l = e->lost; l; l = l->next)
        if (!strcmp(l->id, id))
            return cuzk_fail(err, CUZK_E_NOT_FOUND, "no job with id '%s': it was accepted, but the "
                             "daemon's journal lost it (%s); submit it again (the same request "
                             "id starts it anew)", id, l->why);
    return cuzk_fail(err, CUZK_E_NOT_FOUND, "no job with id '%s' (unknown, or its result was "
                     "dropped after [daemon] result_retention)", id);
}

static void job_unhash(struct engine *e, struct job *j)
{
    for (struct job **pp = &e->buckets[id_hash(j->id)]; *pp; pp = &(*pp)->hnext)
        if (*pp == j) { *pp = j->hnext; break; }
    j->hnext = NULL;
    j->orphan = true;
}

static void job_free_input(struct job *j)
{
    const struct kind_def *k = kind_get(j->kind);
    if (j->input && k && k->free_input) k->free_input(j->input);
    j->input = NULL;
}

/* Free the parsed request (e->mu held) once no partition can read it again: the job is over
 * or every partition is past synthesis, and none is being synthesized right now. Retained
 * results then cost their proof bytes only, not a C1 of tens of megabytes. */
static void job_input_release(struct job *j)
{
    if (!j->input) return;
    for (uint32_t p = 0; p < j->n_parts; p++) {
        int st = j->parts[p].state;
        if (st == PART_SYNTHESIZING || (st == PART_PENDING && j->state != JOB_DONE)) return;
    }
    job_free_input(j);
}

/* A job that never entered the engine (refused, or a duplicate of an existing id). Once the
 * stage hook recorded it, refuse it with job_refuse instead. */
static void job_discard(struct job *j)
{
    job_free_input(j);
    free(j->agg_pub);
    free(j->parts);
    pthread_cond_destroy(&j->cv);
    free(j);
}

/* job_discard for a job the stage hook recorded: its record goes too (e->mu NOT held). */
static void job_refuse(struct engine *e, struct job *j)
{
    if (j->token && e->cfg.hooks.discard) e->cfg.hooks.discard(e->cfg.hooks.ctx, j->token);
    job_discard(j);
}

static void job_destroy(struct engine *e, struct job *j)
{
    if (!j->orphan) job_unhash(e, j);
    if (j->prev) j->prev->next = j->next; else e->head = j->next;
    if (j->next) j->next->prev = j->prev; else e->tail = j->prev;
    if (j->state == JOB_DONE && e->n_done) e->n_done--;
    for (uint32_t p = 0; p < j->n_parts; p++) {
        cuzk_free(j->parts[p].inputs);
        cuzk_free(j->parts[p].aux);
        cuzk_free(j->parts[p].pub);
    }
    job_free_input(j);
    free(j->parts);
    free(j->proof);
    free(j->agg_pub);
    free(j->agg_bytes);
    engine_result_free(&j->result);
    pthread_cond_destroy(&j->cv);
    free(j);
}

/* Drop finished jobs beyond the retention time/count (nobody waiting on them). */
static void retention_gc(struct engine *e)
{
    uint64_t now = cuzk_now_ns(), keep_ns = e->cfg.result_retention_ms * NS_PER_MS;
    for (struct job *j = e->head, *next; j; j = next) {
        next = j->next;
        if (j->state != JOB_DONE || j->refs) continue;
        if (j->orphan || now - j->done_ns > keep_ns || e->n_done > e->cfg.result_retention_count)
            job_destroy(e, j);
    }
}

static uint64_t ms(uint64_t ns) { return (ns + NS_PER_MS / 2) / NS_PER_MS; }

/* Finish a job (e->mu held): fill the result, count it, wake its waiters. */
static void job_finish(struct engine *e, struct job *j, int status, const char *error)
{
    if (j->state == JOB_DONE) return;
    uint64_t now = cuzk_now_ns();
    struct engine_result *r = &j->result;
    snprintf(r->job_id, sizeof r->job_id, "%s", j->id);
    r->status = status;
    snprintf(r->error, sizeof r->error, "%s", error ? error : "");
    uint64_t synth = 0, gpu = 0;
    for (uint32_t p = 0; p < j->n_parts; p++) {
        synth += j->parts[p].synth_ns;
        gpu += j->parts[p].gpu_ns;
    }
    r->total_ms = ms(now - j->submit_ns);
    r->queue_wait_ms = j->start_ns ? ms(j->start_ns - j->submit_ns) : r->total_ms;
    r->srs_load_ms = ms(j->srs_wait_ns);
    r->synthesis_ms = ms(synth);
    r->gpu_compute_ms = ms(gpu);
    if (status == ENGINE_COMPLETED) {
        r->proof = j->proof;
        r->proof_len = (size_t)j->n_parts * G16_PROOF_BYTES;
        j->proof = NULL;
        r->aggregate = j->agg_bytes;
        r->aggregate_len = j->agg_len;
        j->agg_bytes = NULL;
    }
    j->state = JOB_DONE;
    j->done_ns = now;
    e->n_done++;
    history_record(e, j);
    /* Queued partitions of a job that ends early are dropped. Synthesized ones waiting for a
     * prover hold memory and an SRS reference: the prover that pops them releases those. */
    if (q_remove_job(&e->synth_q, j)) {
        j->parts_queued = 0;
        for (uint32_t p = 0; p < j->n_parts; p++)
            if (j->parts[p].state == PART_PENDING) j->parts[p].state = PART_DROPPED;
    }
    int ki = engine_kind_index(j->kind);
    struct kind_counters *kc = &e->kc[ki < 0 ? 0 : ki];   /* jobs only exist for known kinds */
    if (status == ENGINE_COMPLETED) {
        kc->completed++;
        kc->dur[kc->n_dur++ % DUR_RING] = (double)(now - j->submit_ns) / 1e9;
    } else if (status == ENGINE_FAILED) {
        kc->failed++;
    } else {
        kc->cancelled++;
    }
    /* durable before anyone is told (waiters, the log): an answer given is found again after
     * a restart */
    if (e->cfg.hooks.finish && j->token) e->cfg.hooks.finish(e->cfg.hooks.ctx, j->token, r);
    if (status == ENGINE_COMPLETED)
        cuzk_log(CLOG_INFO, "proof completed: job=%s kind=%s partitions=%u total_ms=%" PRIu64
              " queue_ms=%" PRIu64 " srs_ms=%" PRIu64 " synth_ms=%" PRIu64 " gpu_ms=%" PRIu64,
              CLOG_ID(j->id), engine_kind_name(j->kind), j->n_parts, r->total_ms, r->queue_wait_ms,
              r->srs_load_ms, r->synthesis_ms, r->gpu_compute_ms);
    else
        cuzk_log(status == ENGINE_FAILED ? CLOG_WARN : CLOG_INFO, "proof %s: job=%s kind=%s: %s",
              engine_status_name(status), CLOG_ID(j->id), engine_kind_name(j->kind), r->error);
    job_input_release(j);
    pthread_cond_broadcast(&j->cv);
    pthread_cond_broadcast(&e->drain_cv);
    retention_gc(e);
}

/* Durable engine, shutdown (e->mu held): stop an unfinished job without finishing it. Its
 * journal record stays unfinished, so the next start replays it; waiters are told so
 * (engine_await). Queued partitions are dropped as in job_finish. */
static void job_keep(struct engine *e, struct job *j)
{
    if (j->state == JOB_DONE) return;
    j->kept = true;
    j->state = JOB_DONE;
    j->done_ns = cuzk_now_ns();
    e->n_done++;
    if (q_remove_job(&e->synth_q, j)) {
        j->parts_queued = 0;
        for (uint32_t p = 0; p < j->n_parts; p++)
            if (j->parts[p].state == PART_PENDING) j->parts[p].state = PART_DROPPED;
    }
    job_input_release(j);
    pthread_cond_broadcast(&j->cv);
    pthread_cond_broadcast(&e->drain_cv);
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
    if (req->aggregate && req->kind != ENGINE_KIND_NI_POREP)
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
    unsigned h = id_hash(j->id);
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
        int rc = not_found(e, job_id, err);
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
        out->total_ms = ms(cuzk_now_ns() - j->submit_ns);
    }
    j->refs--;
    if (j->state == JOB_DONE && !j->refs) retention_gc(e);
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
        int rc = not_found(e, job_id, err);
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
    unsigned h = id_hash(j->id);
    j->hnext = e->buckets[h];
    e->buckets[h] = j;
    j->prev = e->tail;
    if (e->tail) e->tail->next = j; else e->head = j;
    e->tail = j;
    e->n_done++;
    retention_gc(e);
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
    *load_ms = was ? 0 : ms(cuzk_now_ns() - t0);
    srs_release(e, s);
    return CUZK_OK;
}

int engine_evict(struct engine *e, const char *circuit_id, bool *was_loaded,
                 uint64_t *freed_bytes, struct cuzk_error *err)
{
    return srs_evict(e, circuit_id, was_loaded, freed_bytes, err);
}

/* ---------------------------------------------------------------- workers -- */

/* A partition leaves the pipeline (e->mu held): bookkeeping shared by every exit path. */
static void part_leave(struct engine *e, struct job *j)
{
    j->parts_running--;
    j->refs--;
    e->parts_in_flight--;
    pthread_cond_broadcast(&e->drain_cv);
    /* provers: a partition waiting for this job's key to be free may go now (dev_must_wait) */
    pthread_cond_broadcast(&e->prove_cv);
    if (j->state == JOB_DONE && !j->refs) retention_gc(e);
}

static void part_fail(struct engine *e, struct job *j, uint32_t p, const char *stage,
                      const struct cuzk_error *perr)
{
    char msg[CUZK_ERR_MSG_MAX + 64];
    snprintf(msg, sizeof msg, "partition %u %s failed: %s", p, stage, perr->msg);
    j->parts[p].state = PART_FAILED;
    job_finish(e, j, ENGINE_FAILED, msg);
}

static void synth_one(struct engine *e, struct worker *w, struct job *j, uint32_t p)
{
    struct part *pt = &j->parts[p];
    struct cuzk_error perr;
    cuzk_error_clear(&perr);
    uint64_t wait_ns = 0;
    struct srs_entry *s = NULL;
    int rc = srs_acquire(e, j->circuit_id, j->priority, &s, &wait_ns, NULL, &perr);
    pthread_mutex_lock(&e->mu);
    if (wait_ns > j->srs_wait_ns && wait_ns > NS_PER_MS) j->srs_wait_ns = wait_ns;
    if (rc) {
        if (j->state != JOB_DONE) part_fail(e, j, p, "SRS load", &perr);
        else pt->state = PART_DROPPED;
        job_input_release(j);
        part_leave(e, j);
        pthread_mutex_unlock(&e->mu);
        return;
    }
    pt->srs = s;
    uint64_t mw, mp;
    budget_partition(&s->shape, &mw, &mp);
    if (j->state == JOB_DONE) goto drop_locked;
    if (budget_fits(e, s->bytes, mw + mp, &perr)) {
        /* it could never run: fail now rather than wait for memory that cannot come */
        part_fail(e, j, p, "memory reservation", &perr);
        goto drop_locked;
    }
    const struct qitem me = {j, p};
    rc = budget_reserve(e, mw + mp, j->priority, &me, &perr);
    if (rc == CUZK_E_BUSY && j->state != JOB_DONE) {
        /* a partition of a higher priority waits for a synthesis worker and none is idle:
         * this one goes back to the queue, and this worker takes that one */
        if (!q_push(&e->synth_q, j, p)) {
            pt->state = PART_PENDING;
            pt->srs = NULL;
            j->parts_queued++;
            pthread_cond_broadcast(&e->synth_cv);
            pthread_mutex_unlock(&e->mu);
            srs_release(e, s);
            clog_timeline("SYNTH_YIELD", j->id, "partition=%u,worker=%u", p, w->id);
            pthread_mutex_lock(&e->mu);
            part_leave(e, j);
            pthread_mutex_unlock(&e->mu);
            return;
        }
        rc = budget_reserve(e, mw + mp, j->priority, NULL, &perr);   /* cannot requeue: wait */
    }
    if (rc) {
        if (j->state != JOB_DONE) part_fail(e, j, p, "memory reservation", &perr);
        goto drop_locked;
    }
    pt->mem_witness = mw;
    pt->mem_prove = mp;
    if (j->state == JOB_DONE) goto drop_locked;   /* cancelled while waiting for memory */
    pthread_mutex_unlock(&e->mu);

    clog_timeline("SYNTH_START", j->id, "partition=%u,worker=%u", p, w->id);
    uint64_t t0 = cuzk_now_ns();
    rc = kind_get(j->kind)->witness(j, p, pt, s, &perr);
    const uint64_t synth_ns = cuzk_now_ns() - t0;
    clog_timeline("SYNTH_END", j->id, "partition=%u,synth_ms=%" PRIu64, p, ms(synth_ns));

    pthread_mutex_lock(&e->mu);
    pt->synth_ns = synth_ns;   /* under the lock: the status snapshot reads it */
    history_span(j, HIST_SYNTH, t0, t0 + synth_ns);
    if (rc) {
        if (j->state != JOB_DONE) part_fail(e, j, p, "synthesis", &perr);
        goto drop_locked;
    }
    if (j->state == JOB_DONE) goto drop_locked;
    if (q_push(j->dev >= 0 ? &e->dev_q[j->dev] : &e->prove_q, j, p)) {
        cuzk_fail(&perr, CUZK_E_NOMEM, "out of memory queueing for the prover");
        part_fail(e, j, p, "queueing", &perr);
        goto drop_locked;
    }
    pt->state = PART_SYNTH_DONE;
    job_input_release(j);
    clog_timeline("GPU_QUEUE", j->id, "partition=%u", p);
    /* broadcast: with several GPUs only the provers of the job's device may take it */
    pthread_cond_broadcast(&e->prove_cv);
    pthread_mutex_unlock(&e->mu);
    return;

drop_locked:
    /* the job ended (cancel/failure) while this partition was in flight: discard it */
    budget_release(e, pt->mem_witness + pt->mem_prove);
    pt->mem_witness = pt->mem_prove = 0;
    if (pt->state != PART_FAILED) pt->state = PART_DROPPED;
    job_input_release(j);
    pthread_mutex_unlock(&e->mu);
    cuzk_free(pt->inputs);
    cuzk_free(pt->aux);
    cuzk_free(pt->pub);
    pt->inputs = pt->aux = pt->pub = NULL;
    srs_release(e, s);
    pt->srs = NULL;
    pthread_mutex_lock(&e->mu);
    part_leave(e, j);
    pthread_mutex_unlock(&e->mu);
}

/* Give synthesized partition p of job j back to its prover queue (e->mu NOT held): false,
 * nothing done, when the job has ended or the queue cannot grow. */
static bool prover_requeue(struct engine *e, struct job *j, uint32_t p)
{
    pthread_mutex_lock(&e->mu);
    const bool back = j->state != JOB_DONE && !q_push(j->dev >= 0 ? &e->dev_q[j->dev] : &e->prove_q, j, p);
    if (back) {
        j->parts[p].state = PART_SYNTH_DONE;
        pthread_cond_broadcast(&e->prove_cv);
    }
    pthread_mutex_unlock(&e->mu);
    return back;
}

static void prove_one(struct engine *e, struct worker *w, struct job *j, uint32_t p)
{
    struct part *pt = &j->parts[p];
    struct srs_entry *s = pt->srs;
    struct cuzk_error perr;
    cuzk_error_clear(&perr);
    struct g16_proof proof;
    struct g16_timings t;
    memset(&t, 0, sizeof t);
    struct g16_assignment asg = {pt->inputs, pt->aux};

    pthread_mutex_lock(&e->mu);
    bool skip = j->state == JOB_DONE;   /* cancelled or failed while it waited */
    pthread_mutex_unlock(&e->mu);
    int rc = CUZK_E_CANCELLED;
    uint64_t t1 = 0, gpu_ns = 0;
    if (!skip) {
        clog_timeline("GPU_PICKUP", j->id, "worker=%u,partition=%u", w->id, p);
        uint64_t t0 = cuzk_now_ns();
        /* dev_backend holds a GPU's lock around the backend's kernels only */
        if (w->gpu_ordinal < 0)
            clog_timeline("GPU_START", j->id, "worker=%u,partition=%u,gpu=cpu", w->id, p);
        struct dev_call dc = {e, w->dev, w->id, p, s, j->id, w, j, false, false};
        if (e->have_gpu) {
            /* the witness goes up before the turn, beside the kernels of the partition that
             * holds the device; the turn then goes in priority order */
            dev_stage(e, &dc, &s->shape, &asg);
            if (dev_turn_acquire(e, w, j, p, true) == CUZK_E_BUSY) {
                /* a partition of a higher priority is queued for this device and no prover is
                 * idle: give this one back (its witness stays in host memory) and take that */
                dev_unstage(e, &dc, &s->shape, &asg);
                if (prover_requeue(e, j, p)) {
                    clog_timeline("GPU_YIELD", j->id, "worker=%u,partition=%u", w->id, p);
                    return;
                }
                /* the job ended meanwhile, or the queue cannot grow: prove it after all */
                dev_stage(e, &dc, &s->shape, &asg);
                dev_turn_acquire(e, w, j, p, false);
            }
            dc.turn = true;
        }
        rc = g16_prove(&proof, &s->shape, &s->pk, &asg, 1, NULL, NULL, dev_backend, &dc, &t, &perr);
        if (dc.turn) dev_turn_release(e, w->dev);
        if (dc.deferred && prover_requeue(e, j, p)) {
            /* its key waits for the device's resident key to be free (dev_must_wait) */
            clog_timeline("GPU_DEFER", j->id, "worker=%u,partition=%u", w->id, p);
            return;
        }
        t1 = cuzk_now_ns();
        gpu_ns = t1 - t0;
        /* the backend's phases, so a timeline shows where a partition's GPU time went */
        clog_timeline("GPU_END", j->id, "worker=%u,partition=%u,gpu_ms=%" PRIu64 ",abc_ms=%" PRIu64
                      ",ntt_ms=%" PRIu64 ",h_ms=%" PRIu64 ",l_ms=%" PRIu64 ",a_ms=%" PRIu64
                      ",bg1_ms=%" PRIu64 ",bg2_ms=%" PRIu64, w->id, p, ms(gpu_ns), ms(t.abc_ns),
                      ms(t.ntt_ns), ms(t.msm_h_ns), ms(t.msm_l_ns), ms(t.msm_a_ns), ms(t.msm_b_g1_ns),
                      ms(t.msm_b_g2_ns));
    }
    /* first release: the proving working set is gone */
    pthread_mutex_lock(&e->mu);
    if (!skip) {
        pt->gpu_ns = gpu_ns;   /* under the lock: the status snapshot reads it */
        history_span(j, HIST_GPU, t1 - gpu_ns, t1);
    }
    budget_release(e, pt->mem_prove);
    pt->mem_prove = 0;
    pthread_mutex_unlock(&e->mu);

    const char *stage = "prove";
    uint8_t bytes[G16_PROOF_BYTES];
    uint64_t t_verified = 0;
    if (!skip && !rc) {
        /* Verify the very bytes that will be returned (decompressed and subgroup-checked), against
         * the public inputs the kind recomputed from the request where it has them. */
        stage = "self-verification";
        g16_proof_to_bytes(bytes, &proof);
        struct g16_proof back;
        rc = g16_proof_from_bytes(&back, bytes, &perr);
        if (!rc && pt->pub)
            rc = g16_verify(s->pvk, &back, pt->pub, pt->n_pub, &perr);
        else if (!rc)
            rc = g16_verify(s->pvk, &back, pt->inputs + 1, s->shape.n_inputs - 1, &perr);
        /* an aggregating job keeps the inputs this proof verified against, for the
         * aggregate's verification (row p is this partition's alone) */
        if (!rc && j->agg_pub) {
            if (pt->pub && pt->n_pub == j->agg_n_pub)
                memcpy(j->agg_pub + (size_t)p * j->agg_n_pub, pt->pub, pt->n_pub * sizeof *pt->pub);
            else
                rc = cuzk_fail(&perr, CUZK_E_INTERNAL, "%zu recomputed public inputs, the "
                               "aggregate expects %zu", pt->pub ? pt->n_pub : 0, j->agg_n_pub);
        }
        t_verified = cuzk_now_ns();
        clog_timeline("VERIFY_END", j->id, "partition=%u,verify_ms=%" PRIu64 ",ok=%d", p,
                      ms(t_verified - t1), rc == CUZK_OK);
    }
    cuzk_free(pt->inputs);
    cuzk_free(pt->aux);
    cuzk_free(pt->pub);
    pt->inputs = pt->aux = pt->pub = NULL;
    srs_release(e, s);

    pthread_mutex_lock(&e->mu);
    budget_release(e, pt->mem_witness);   /* second release */
    if (t_verified) history_span(j, HIST_VERIFY, t1, t_verified);
    pt->mem_witness = 0;
    pt->srs = NULL;
    bool aggregate = false;
    if (j->state != JOB_DONE) {
        if (rc) {
            part_fail(e, j, p, stage, &perr);
        } else {
            memcpy(j->proof + (size_t)p * G16_PROOF_BYTES, bytes, G16_PROOF_BYTES);
            pt->state = PART_DONE;
            j->parts_done++;
            if (j->parts_done == j->n_parts) {
                if (j->aggregate) aggregate = true;
                else job_finish(e, j, ENGINE_COMPLETED, NULL);
            }
        }
    } else if (pt->state != PART_FAILED) {
        pt->state = PART_DROPPED;
    }
    if (aggregate) {
        /* The last partition's worker aggregates, on this CPU thread and without the lock
         * (docs/decisions.md): the partition stays in flight meanwhile, so shutdown's grace
         * and the job's refs count it. An aggregate that does not verify fails the job. */
        pthread_mutex_unlock(&e->mu);
        clog_timeline("AGGREGATE_START", j->id, "proofs=%u", j->n_parts);
        uint8_t *agg = NULL;
        size_t agg_len = 0;
        cuzk_error_clear(&perr);
        rc = engine_aggregate_job(e, j, &agg, &agg_len, &perr);
        clog_timeline("AGGREGATE_END", j->id, "ok=%d,bytes=%zu", rc == CUZK_OK, agg_len);
        pthread_mutex_lock(&e->mu);
        if (j->state != JOB_DONE) {
            if (rc) {
                job_finish(e, j, ENGINE_FAILED, perr.msg);
            } else {
                j->agg_bytes = agg;
                j->agg_len = agg_len;
                agg = NULL;
                job_finish(e, j, ENGINE_COMPLETED, NULL);
            }
        }
        free(agg);
    }
    part_leave(e, j);
    pthread_mutex_unlock(&e->mu);
}

/* May prover w take queued partition it now? (e->mu held) Not a GPU prover when the
 * partition must wait for its device's resident key to be free (dev_must_wait). */
static bool prover_may_take(const struct engine *e, const struct worker *w, const struct qitem *it)
{
    return w->gpu_ordinal < 0 || !dev_must_wait(e, w->dev, it->job, it->job->parts[it->part].srs);
}

/* The position of the first partition of q in queue order that w may take, -1 if none. The
 * top is almost always it; partitions that wait for a device's key are passed over. */
static long q_first_for(const struct engine *e, const struct worker *w, const struct pqueue *q)
{
    if (!q->n || prover_may_take(e, w, &q->v[0])) return q->n ? 0 : -1;
    long best = -1;
    const struct job *no = q->v[0].job;   /* a job's partitions share the answer */
    for (size_t i = 1; i < q->n; i++) {
        const struct qitem *it = &q->v[i];
        if (it->job == no || (best >= 0 && !q_before(it, &q->v[best]))) continue;
        if (prover_may_take(e, w, it)) best = (long)i;
        else no = it->job;
    }
    return best;
}

/* Take the item at position i of q (heap order restored). */
static struct qitem q_take_at(struct pqueue *q, size_t i)
{
    struct qitem it = q->v[i];
    q->v[i] = q->v[--q->n];
    if (i < q->n) {
        q_sift_down(q, i);
        while (i > 0 && q_before(&q->v[i], &q->v[(i - 1) / 2])) {
            size_t p = (i - 1) / 2;
            struct qitem t = q->v[i]; q->v[i] = q->v[p]; q->v[p] = t;
            i = p;
        }
    }
    return it;
}

/* Work for worker w (e->mu held)? A GPU prover takes its device's queue and the shared one. */
static bool has_work(const struct engine *e, const struct worker *w)
{
    if (!w->prover) return e->synth_q.n > 0;
    return q_first_for(e, w, &e->prove_q) >= 0 ||
           (w->gpu_ordinal >= 0 && q_first_for(e, w, &e->dev_q[w->dev]) >= 0);
}

/* The next partition for w (has_work true). A GPU prover takes whichever of its device's
 * queue and the shared queue is ahead in (priority, job, partition) order, among those it may
 * take; taking a job's first partition from the shared queue binds the job to this device, so
 * every partition of a job is proved on the same GPU (its kernels never mix devices). */
static struct qitem take_work(struct engine *e, const struct worker *w)
{
    if (!w->prover) return q_pop(&e->synth_q);
    struct pqueue *sq = &e->prove_q;
    if (w->gpu_ordinal < 0) return q_pop(sq);
    struct pqueue *dq = &e->dev_q[w->dev];
    const long di = q_first_for(e, w, dq), si = q_first_for(e, w, sq);
    if (di >= 0 && (si < 0 || q_before(&dq->v[di], &sq->v[si]))) return q_take_at(dq, (size_t)di);
    struct qitem it = q_take_at(sq, (size_t)si);
    if (it.job->dev < 0) {
        if (q_move_job(dq, sq, it.job)) it.job->dev = (int)w->dev;
        else cuzk_log(CLOG_WARN, "out of memory binding job %s to GPU %d; its partitions may "
                      "use several GPUs", CLOG_ID(it.job->id), w->gpu_ordinal);
    }
    return it;
}

/* ----------------------------------------------------------- device turn -- */

/* Should prover w, waiting for its device with a partition of priority prio, give the
 * partition back? (e->mu held) When a partition of a higher priority is queued that w could
 * take (its device's queue, or the shared one) and no idle prover can take it instead. */
static bool turn_should_yield(const struct engine *e, const struct worker *w, int prio)
{
    const struct pqueue *dq = &e->dev_q[w->dev], *sq = &e->prove_q;
    const bool dev_better = dq->n && dq->v[0].job->priority > prio;
    const bool shared_better = sq->n && sq->v[0].job->priority > prio;
    bool idle_here = false, idle_any = false;
    for (unsigned i = e->n_synth; i < e->n_workers; i++)
        if (!e->workers[i].busy) {
            idle_any = true;
            idle_here |= e->workers[i].dev == w->dev;
        }
    return (dev_better && !idle_here) || (shared_better && !idle_any);
}

/* The prover first in (priority, job, partition) order among those waiting for device d. */
static const struct worker *turn_first(const struct engine *e, unsigned d)
{
    const struct worker *best = NULL;
    for (unsigned i = e->n_synth; i < e->n_workers; i++) {
        const struct worker *o = &e->workers[i];
        if (o->turn_wait && o->dev == d && (!best || q_before(&o->turn_item, &best->turn_item))) best = o;
    }
    return best;
}

int dev_turn_acquire(struct engine *e, struct worker *w, struct job *j, uint32_t part, bool may_yield)
{
    pthread_mutex_lock(&e->mu);
    w->turn_item = (struct qitem){j, part};
    w->turn_wait = true;
    int rc = CUZK_OK;
    for (;;) {
        if (may_yield && !e->stopping && j->state != JOB_DONE && turn_should_yield(e, w, j->priority)) {
            rc = CUZK_E_BUSY;
            break;
        }
        if (!e->dev_busy[w->dev] && turn_first(e, w->dev) == w) {
            e->dev_busy[w->dev] = true;
            break;
        }
        /* woken by a turn's release and by every partition queued for a prover */
        pthread_cond_wait(&e->prove_cv, &e->mu);
    }
    w->turn_wait = false;
    if (rc) pthread_cond_broadcast(&e->prove_cv);   /* the next waiter may be first now */
    pthread_mutex_unlock(&e->mu);
    return rc;
}

void dev_turn_release(struct engine *e, unsigned d)
{
    pthread_mutex_lock(&e->mu);
    e->dev_busy[d] = false;
    pthread_cond_broadcast(&e->prove_cv);
    pthread_mutex_unlock(&e->mu);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct engine *e = w->e;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        pthread_cond_t *cv = w->prover ? &e->prove_cv : &e->synth_cv;
        /* On shutdown synthesis workers leave once their queue is empty; provers stay while
         * any partition is in flight, since a synthesized one may still arrive. */
        while (!has_work(e, w) && !(e->stopping && (!w->prover || e->parts_in_flight == 0)))
            pthread_cond_wait(cv, &e->mu);
        if (!has_work(e, w)) break;
        struct qitem it = take_work(e, w);
        struct job *j = it.job;
        struct part *pt = &j->parts[it.part];
        if (!w->prover) {
            j->parts_queued--;
            j->parts_running++;
            j->refs++;
            e->parts_in_flight++;
            pt->state = PART_SYNTHESIZING;
            if (j->state == JOB_QUEUED) {
                j->state = JOB_RUNNING;
                j->start_ns = cuzk_now_ns();
                cuzk_log(CLOG_DEBUG, "job dequeued for proving: job=%s", CLOG_ID(j->id));
            }
        } else {
            pt->state = PART_PROVING;
        }
        w->busy = true;
        w->busy_since_ns = cuzk_now_ns();
        snprintf(w->job_id, sizeof w->job_id, "%s", j->id);
        w->kind = j->kind;
        w->partition = (int)it.part;
        pthread_mutex_unlock(&e->mu);
        if (w->prover) prove_one(e, w, j, it.part);
        else synth_one(e, w, j, it.part);
        pthread_mutex_lock(&e->mu);
        w->busy = false;
        w->job_id[0] = 0;
    }
    e->n_live--;
    pthread_cond_broadcast(&e->drain_cv);
    pthread_mutex_unlock(&e->mu);
    return NULL;
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

/* --------------------------------------------------------------- snapshot -- */

int engine_snapshot(struct engine *e, struct engine_snapshot *out, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    /* GPU info is gathered outside the engine lock (it may ask the driver). */
    out->n_gpus = e->have_gpu ? e->n_dev : 0;
    if (out->n_gpus && !(out->gpus = calloc(out->n_gpus, sizeof *out->gpus)))
        return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    for (size_t d = 0; d < out->n_gpus; d++) {
        struct engine_gpu_snap *g = &out->gpus[d];
        g->ordinal = e->be.ordinals[d];
        char name[sizeof g->name];
        uint64_t total = 0, free_b = 0;
        if (e->be.ops->info && !e->be.ops->info(e->be.self, (unsigned)d, name, sizeof name, &total,
                                                &free_b) && name[0])
            snprintf(g->name, sizeof g->name, "%s", name);
        else
            snprintf(g->name, sizeof g->name, "GPU %d", g->ordinal);
        g->vram_total = total;
        g->vram_free = free_b;
        if (e->cfg.telemetry.sample) {
            g->has_telemetry = true;
            e->cfg.telemetry.sample(e->cfg.telemetry.ctx, g->ordinal, &g->telemetry);
        }
    }
    if (e->be.ops->host_pinned) e->be.ops->host_pinned(e->be.self, &out->host_pinned, &out->host_pinned_peak);
    out->prover = e->have_gpu ? "gpu" : "cpu";
    out->cpu_reason = e->be.cpu_reason;
    out->validation = e->cfg.srs_validation == G16_VALIDATE_NONE ? "none"
                    : e->cfg.srs_validation == G16_VALIDATE_CURVE ? "curve" : "full";
    pthread_mutex_lock(&e->mu);
    uint64_t now = cuzk_now_ns();
    out->uptime_ms = (now - e->start_ns) / NS_PER_MS;
    out->mem_total = e->mem_total;
    out->mem_used = e->mem_used;
    out->synth_workers = e->n_synth;
    for (int k = 0; k < ENGINE_NKINDS; k++) {
        struct engine_kind_stats *ks = &out->kinds[k];
        const struct kind_counters *kc = &e->kc[k];
        ks->completed = kc->completed;
        ks->failed = kc->failed;
        ks->cancelled = kc->cancelled;
        ks->duration_count = kc->n_dur < DUR_RING ? kc->n_dur : DUR_RING;
        for (uint64_t i = 0; i < ks->duration_count; i++) ks->duration_sum_s += kc->dur[i];
        out->completed += kc->completed;
        out->failed += kc->failed;
        out->cancelled += kc->cancelled;
    }
    size_t nj = 0;
    for (struct job *j = e->head; j; j = j->next) nj++;
    out->jobs = calloc(nj ? nj : 1, sizeof *out->jobs);
    out->workers = calloc(e->n_workers, sizeof *out->workers);
    out->n_srs = 0;
    for (struct srs_entry *s = e->srs; s; s = s->next) out->n_srs++;
    out->srs = calloc(out->n_srs ? out->n_srs : 1, sizeof *out->srs);
    int rc = CUZK_OK;
    if (!out->jobs || !out->workers || !out->srs) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
        goto done;
    }
    for (struct job *j = e->head; j; j = j->next) {
        int ki = engine_kind_index(j->kind);
        if (ki < 0) ki = 0;
        if (j->state != JOB_DONE) {
            if (j->state == JOB_QUEUED) {
                out->kinds[ki].pending_jobs++;
                out->kinds[ki].pending_by_priority[j->priority >= 0 && j->priority <= 4 ? j->priority : 0]++;
                out->queue_depth++;
            }
            else { out->kinds[ki].running_jobs++; out->running_jobs++; }
            out->kinds[ki].pending_parts += j->parts_queued;
        } else if (now - j->done_ns > STATUS_KEEP_NS || j->orphan) {
            continue;
        }
        struct engine_job_snap *js = &out->jobs[out->n_jobs];
        snprintf(js->id, sizeof js->id, "%s", j->id);
        js->kind = j->kind;
        js->priority = j->priority;
        js->status = j->state == JOB_DONE ? j->result.status : ENGINE_UNKNOWN;
        js->running = j->state == JOB_RUNNING;
        js->age_ms = (now - j->submit_ns) / NS_PER_MS;
        js->n_parts = j->n_parts;
        js->parts_done = j->parts_done;
        js->parts = calloc(j->n_parts ? j->n_parts : 1, sizeof *js->parts);
        if (!js->parts) { rc = cuzk_fail(err, CUZK_E_NOMEM, "out of memory"); goto done; }
        for (uint32_t p = 0; p < j->n_parts; p++) {
            js->parts[p].index = p;
            js->parts[p].state = j->parts[p].state;
            js->parts[p].synth_ms = ms(j->parts[p].synth_ns);
            js->parts[p].gpu_ms = ms(j->parts[p].gpu_ns);
        }
        out->n_jobs++;
    }
    for (unsigned i = 0; i < e->n_workers; i++) {
        const struct worker *w = &e->workers[i];
        if (!w->prover) {
            if (w->busy) out->synth_active++;
            continue;
        }
        struct engine_worker_snap *ws = &out->workers[out->n_workers++];
        ws->id = w->id;
        ws->gpu_ordinal = w->gpu_ordinal;
        ws->busy = w->busy;
        ws->kind = w->kind;
        ws->partition = w->busy ? w->partition : -1;
        ws->busy_ms = w->busy ? (now - w->busy_since_ns) / NS_PER_MS : 0;
        snprintf(ws->job_id, sizeof ws->job_id, "%s", w->busy ? w->job_id : "");
        if (w->gpu_ordinal >= 0) {
            struct engine_gpu_snap *g = &out->gpus[w->dev];
            g->workers++;
            if (w->busy) {
                g->busy++;
                snprintf(g->current_job, sizeof g->current_job, "%s", w->job_id);
                g->current_kind = w->kind;
            }
        }
    }
    size_t i = 0;
    for (struct srs_entry *s = e->srs; s; s = s->next, i++) {
        struct engine_srs_snap *ss = &out->srs[i];
        snprintf(ss->circuit_id, sizeof ss->circuit_id, "%s", s->id);
        ss->tier = srs_tier(s);
        ss->host_key = !s->key_released;
        ss->vram_mask = s->vram_mask;
        ss->bytes = s->bytes;
        ss->load_ms = ms(s->load_ns);
        ss->refs = s->refs;
        ss->idle_ms = s->refs || s->state != SRS_READY ? 0 : (now - s->last_used_ns) / NS_PER_MS;
        ss->evictable = s->state == SRS_READY && s->refs == 0;
    }
    rc = history_snapshot(e, out, now, err);
done:
    pthread_mutex_unlock(&e->mu);
    if (rc) engine_snapshot_free(out);
    return rc;
}

void engine_snapshot_free(struct engine_snapshot *s)
{
    for (size_t i = 0; i < s->n_jobs; i++) free(s->jobs[i].parts);
    free(s->jobs);
    free(s->workers);
    free(s->gpus);
    free(s->srs);
    free(s->recent);
    free(s->errors);
    free(s->loading);
    memset(s, 0, sizeof *s);
}
