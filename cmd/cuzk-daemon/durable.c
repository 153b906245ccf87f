/* durable.c: the job journal (src/journal) behind the engine's durability hooks: a request is
 * stored as the SubmitProofRequest it was (the wire format, so a replay sees what the client
 * sent), results as they finished; at start the journal is handed back to the engine. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuzk/journal.h"
#include "cuzk/log.h"
#include "cuzk/request.h"
#include "cuzk/v1/proving.pb-c.h"
#include "durable.h"

struct durable {
    struct journal *j;
    /* durable_replay runs on the main thread before the listeners start, so nothing else
     * submits while these are set */
    bool replaying;
    uint64_t replay_token;
    uint64_t *to_discard;           /* records that joined another job during the replay */
    size_t n_discard, cap_discard;
};

static uint64_t unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void durable_state_dir(char *out, size_t cap, const char *state_dir, const char *lock_path)
{
    size_t n = strlen(lock_path);
    if (!strcmp(state_dir, "off")) snprintf(out, cap, "%s", "");
    else if (state_dir[0]) snprintf(out, cap, "%s", state_dir);
    else if (n > 5 && !strcmp(lock_path + n - 5, ".lock"))
        snprintf(out, cap, "%.*s.state", (int)(n - 5), lock_path);
    else snprintf(out, cap, "%s.state", lock_path);
}

/* ------------------------------------------------------------------- hooks -- */

static int h_stage(void *ctx, const char *id, int kind, int priority,
                   const struct engine_request *req, uint64_t *token, struct cuzk_error *err)
{
    struct durable *d = ctx;
    if (d->replaying) {   /* the record being replayed is this job's */
        *token = d->replay_token;
        return CUZK_OK;
    }
    /* the id, kind and priority the engine resolved, which the replay gives back */
    struct engine_request resolved = *req;
    resolved.request_id = id;
    resolved.kind = kind;
    resolved.priority = priority;
    uint8_t *buf = NULL;
    size_t n = 0;
    if (srv_request_pack(&resolved, &buf, &n, err))
        return cuzk_fail_prefix(err, err->code, "the job journal");
    int rc = journal_stage(d->j, id, kind, priority, buf, n, token, err);
    free(buf);
    return rc;
}

static void h_discard(void *ctx, uint64_t token)
{
    struct durable *d = ctx;
    if (!d->replaying) {
        journal_discard(d->j, token);
        return;
    }
    /* the replay holds the journal: delete it afterwards */
    if (d->n_discard == d->cap_discard) {
        size_t nc = d->cap_discard ? 2 * d->cap_discard : 16;
        uint64_t *nb = realloc(d->to_discard, nc * sizeof *nb);
        if (!nb) return;   /* it stays, and joins the same job again at the next start */
        d->to_discard = nb;
        d->cap_discard = nc;
    }
    d->to_discard[d->n_discard++] = token;
}

static void record_of(struct journal_record *rec, const struct engine_result *r)
{
    memset(rec, 0, sizeof *rec);
    snprintf(rec->id, sizeof rec->id, "%s", r->job_id);
    rec->finished = true;
    rec->status = r->status;
    rec->error = r->error;
    rec->proof = r->proof;
    rec->proof_len = r->proof_len;
    rec->aggregate = r->aggregate;
    rec->aggregate_len = r->aggregate_len;
    rec->queue_wait_ms = r->queue_wait_ms;
    rec->srs_load_ms = r->srs_load_ms;
    rec->synthesis_ms = r->synthesis_ms;
    rec->gpu_compute_ms = r->gpu_compute_ms;
    rec->total_ms = r->total_ms;
    rec->finished_at_ms = unix_ms();
}

static void h_finish(void *ctx, uint64_t token, const struct engine_result *r)
{
    struct durable *d = ctx;
    struct journal_record rec;
    record_of(&rec, r);
    journal_finish(d->j, token, &rec);
}

void durable_hooks(struct durable *d, struct engine_hooks *h)
{
    memset(h, 0, sizeof *h);
    if (!d) return;
    h->ctx = d;
    h->stage = h_stage;
    h->discard = h_discard;
    h->finish = h_finish;
}

/* ------------------------------------------------------------------ replay -- */

struct replay {
    struct durable *d;
    struct engine *e;
    uint64_t now;
    unsigned restored, requeued, failed;
};

/* A record that cannot run again: finished FAILED with the reason, answerable as such. */
static void replay_fail(struct replay *rp, const struct journal_record *r, const char *why)
{
    struct engine_result res;
    memset(&res, 0, sizeof res);
    snprintf(res.job_id, sizeof res.job_id, "%s", r->id);
    res.status = ENGINE_FAILED;
    snprintf(res.error, sizeof res.error, "not resumed after a daemon restart: %s", why);
    cuzk_log(CLOG_WARN, "journal: job=%s kind=%s cannot be resumed: %s; it is answered as FAILED",
             CLOG_ID(r->id), engine_kind_name(r->kind), why);
    struct journal_record rec;
    record_of(&rec, &res);
    journal_finish(rp->d->j, r->seq, &rec);
    struct cuzk_error err;
    cuzk_error_clear(&err);
    if (engine_restore(rp->e, r->kind, r->priority, &res, 0, &err))
        cuzk_log(CLOG_WARN, "journal: job=%s: %s", CLOG_ID(r->id), err.msg);
    rp->failed++;
}

static int replay_one(void *ctx, const struct journal_record *r)
{
    struct replay *rp = ctx;
    struct cuzk_error err;
    cuzk_error_clear(&err);
    uint64_t age = rp->now > r->accepted_at_ms ? rp->now - r->accepted_at_ms : 0;
    if (r->finished) {
        struct engine_result res;
        memset(&res, 0, sizeof res);
        snprintf(res.job_id, sizeof res.job_id, "%s", r->id);
        res.status = r->status;
        snprintf(res.error, sizeof res.error, "%s", r->error ? r->error : "");
        res.proof = (uint8_t *)r->proof;   /* copied by engine_restore */
        res.proof_len = r->proof_len;
        res.aggregate = (uint8_t *)r->aggregate;   /* copied by engine_restore */
        res.aggregate_len = r->aggregate_len;
        res.queue_wait_ms = r->queue_wait_ms;
        res.srs_load_ms = r->srs_load_ms;
        res.synthesis_ms = r->synthesis_ms;
        res.gpu_compute_ms = r->gpu_compute_ms;
        res.total_ms = r->total_ms;
        uint64_t ago = rp->now > r->finished_at_ms ? rp->now - r->finished_at_ms : 0;
        if (engine_restore(rp->e, r->kind, r->priority, &res, ago, &err))
            cuzk_log(CLOG_WARN, "journal: the result of job=%s cannot be restored: %s", CLOG_ID(r->id),
                     err.msg);
        else
            rp->restored++;
        cuzk_log(CLOG_DEBUG, "journal: job=%s kind=%s %s result restored (finished %" PRIu64
                 " s ago)", CLOG_ID(r->id), engine_kind_name(r->kind), engine_status_name(r->status),
                 ago / 1000);
        return 0;
    }
    Cuzk__V1__SubmitProofRequest *q =
        cuzk__v1__submit_proof_request__unpack(NULL, r->request_len, r->request);
    if (!q) {
        replay_fail(rp, r, "its journaled request does not decode as a SubmitProofRequest");
        return 0;
    }
    struct srv_request sr;
    if (srv_request_of(&sr, q, &err)) {
        cuzk__v1__submit_proof_request__free_unpacked(q, NULL);
        replay_fail(rp, r, err.msg);
        return 0;
    }
    /* the id, kind and priority the job had (the engine resolved them at the first submit) */
    struct engine_request req = sr.req;
    req.request_id = r->id;
    req.kind = r->kind;
    req.priority = r->priority;
    req.resumed = true;   /* accepted once: never refused by [daemon] max_queued_jobs now */
    char job_id[ENGINE_ID_MAX];
    uint32_t pos = 0;
    bool existing = false;
    rp->d->replaying = true;
    rp->d->replay_token = r->seq;
    int rc = engine_submit(rp->e, &req, job_id, &pos, &existing, &err);
    rp->d->replaying = false;
    srv_request_release(&sr);
    cuzk__v1__submit_proof_request__free_unpacked(q, NULL);
    if (rc) {
        replay_fail(rp, r, err.msg);
        return 0;
    }
    if (!existing) {
        rp->requeued++;
        cuzk_log(CLOG_INFO, "journal: job=%s kind=%s priority=%d re-queued (accepted %" PRIu64
                 " s before this start)", CLOG_ID(r->id), engine_kind_name(r->kind), r->priority,
                 age / 1000);
    }
    return 0;
}

void durable_replay(struct durable *d, struct engine *e)
{
    if (!d) return;
    struct replay rp = {d, e, unix_ms(), 0, 0, 0};
    struct cuzk_error err;
    cuzk_error_clear(&err);
    if (journal_replay(d->j, replay_one, &rp, &err))
        cuzk_log(CLOG_WARN, "journal: replay stopped: %s", err.msg);
    for (size_t i = 0; i < d->n_discard; i++) journal_discard(d->j, d->to_discard[i]);
    /* jobs the journal acknowledged and lost (damage found at open, records dropped by their
     * checksum): their clients are told so rather than "unknown id" */
    const struct journal_lost *lost;
    size_t n_lost = journal_lost(d->j, &lost);
    for (size_t i = 0; i < n_lost; i++)
        if (engine_note_lost(e, lost[i].id, lost[i].finished
                ? "its finished result was lost to damage found when the daemon last started; "
                  "the daemon log names it"
                : "its request was lost to damage found when the daemon last started; the "
                  "daemon log names it"))
            cuzk_log(CLOG_WARN, "journal: out of memory noting job=%s as lost", CLOG_ID(lost[i].id));
    free(d->to_discard);
    d->to_discard = NULL;
    d->n_discard = d->cap_discard = 0;
    cuzk_log(CLOG_INFO, "journal: replayed %s: %u unfinished job(s) re-queued in their original "
             "order, %u finished result(s) answerable again, %u could not be resumed (FAILED), %zu "
             "lost (NOT_FOUND, saying so)", journal_path(d->j), rp.requeued, rp.restored,
             rp.failed, n_lost);
}

/* -------------------------------------------------------------- open/close -- */

int durable_open(struct durable **out, const char *dir, uint64_t retention_ms,
                 uint32_t retention_count, struct cuzk_error *err)
{
    *out = NULL;
    struct durable *d = calloc(1, sizeof *d);
    if (!d) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    struct journal_options o = {retention_ms, retention_count};
    int rc = journal_open(&d->j, dir, &o, NULL, err);
    if (rc) { free(d); return rc; }
    *out = d;
    return CUZK_OK;
}

void durable_close(struct durable *d)
{
    if (!d) return;
    journal_close(d->j);
    free(d->to_discard);
    free(d);
}
