/* history.c: what the status page shows besides the live jobs: the last ENGINE_RECENT finished
 * jobs with where their time went (queue, synthesis, GPU, verification as spans from the
 * submit), the last ENGINE_ERRORS failures with their time and reason, and how far each SRS
 * load has read its key. Fixed rings in the engine (no allocation while proving); e->mu
 * guards them. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_internal.h"

#define NS_PER_MS 1000000ull

void history_span(struct job *j, int phase, uint64_t t0, uint64_t t1)
{
    uint64_t *sp = j->span_ns[phase];
    if (!sp[0] || t0 < sp[0]) sp[0] = t0;
    if (t1 > sp[1]) sp[1] = t1;
}

static int64_t unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* [start, end) of a span as milliseconds after base; ran false if it never ran */
static struct engine_phase_span rel(const uint64_t sp[2], uint64_t base)
{
    struct engine_phase_span r = {false, 0, 0};
    if (!sp[0] || sp[0] < base) return r;
    r.ran = true;
    /* rounded as the job's result timings are, so the spans and queue_ms / total_ms order */
    r.start_ms = (sp[0] - base + NS_PER_MS / 2) / NS_PER_MS;
    r.end_ms = (sp[1] - base + NS_PER_MS / 2) / NS_PER_MS;
    return r;
}

void history_record(struct engine *e, const struct job *j)
{
    const int64_t now = unix_ms();
    struct engine_recent_snap *r = &e->recent[e->n_recent++ % ENGINE_RECENT];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", j->id);
    r->kind = j->kind;
    r->status = j->result.status;
    r->n_parts = j->n_parts;
    r->finished_unix_ms = now;
    r->total_ms = j->result.total_ms;
    r->queue_ms = j->result.queue_wait_ms;
    r->srs_wait_ms = j->result.srs_load_ms;
    r->synthesis = rel(j->span_ns[HIST_SYNTH], j->submit_ns);
    r->gpu = rel(j->span_ns[HIST_GPU], j->submit_ns);
    r->verify = rel(j->span_ns[HIST_VERIFY], j->submit_ns);
    if (j->result.status != ENGINE_FAILED) return;
    struct engine_error_snap *x = &e->errors[e->n_errors++ % ENGINE_ERRORS];
    x->unix_ms = now;
    snprintf(x->job_id, sizeof x->job_id, "%s", j->id);
    x->kind = j->kind;
    snprintf(x->message, sizeof x->message, "%s", j->result.error);
}

int history_snapshot(struct engine *e, struct engine_snapshot *out, uint64_t now_ns,
                     struct cuzk_error *err)
{
    size_t nr = e->n_recent < ENGINE_RECENT ? (size_t)e->n_recent : ENGINE_RECENT;
    size_t ne = e->n_errors < ENGINE_ERRORS ? (size_t)e->n_errors : ENGINE_ERRORS;
    size_t nl = 0;
    for (struct srs_entry *s = e->srs; s; s = s->next) nl += s->state == SRS_LOADING;
    out->recent = calloc(nr ? nr : 1, sizeof *out->recent);
    out->errors = calloc(ne ? ne : 1, sizeof *out->errors);
    out->loading = calloc(nl ? nl : 1, sizeof *out->loading);
    if (!out->recent || !out->errors || !out->loading)
        return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    for (size_t i = 0; i < nr; i++)   /* newest first */
        out->recent[i] = e->recent[(e->n_recent - 1 - i) % ENGINE_RECENT];
    for (size_t i = 0; i < ne; i++)
        out->errors[i] = e->errors[(e->n_errors - 1 - i) % ENGINE_ERRORS];
    out->n_recent = nr;
    out->n_errors = ne;
    for (struct srs_entry *s = e->srs; s; s = s->next) {
        if (s->state != SRS_LOADING) continue;
        struct engine_loading_snap *l = &out->loading[out->n_loading++];
        snprintf(l->circuit_id, sizeof l->circuit_id, "%s", s->id);
        /* the loader thread writes these without e->mu: read the atomics only */
        l->phase = atomic_load(&s->load_pr.phase);
        if (l->phase) {
            l->bytes_done = atomic_load(&s->load_pr.done);
            l->bytes_total = atomic_load(&s->load_pr.total);
            uint64_t t0 = atomic_load(&s->load_pr.t0_ns);
            l->elapsed_ms = now_ns > t0 ? (now_ns - t0) / NS_PER_MS : 0;
        }
    }
    return CUZK_OK;
}
