/* jobs.c: the job table (ids hashed into e->buckets, the job list in submit order), job
 * states and their ends: finishing a job (its result, counters, waiters), keeping one for the
 * next start, refusing or discarding one, retention of finished jobs, and the ids the
 * daemon's journal lost. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_internal.h"

/* ------------------------------------------------------------------ jobs -- */

unsigned job_id_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h & 1023;
}

struct job *job_find(struct engine *e, const char *id)
{
    for (struct job *j = e->buckets[job_id_hash(id)]; j; j = j->hnext)
        if (!strcmp(j->id, id)) return j;
    return NULL;
}

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
int job_not_found(struct engine *e, const char *id, struct cuzk_error *err)
{
    for (const struct lost_id *l = e->lost; l; l = l->next)
        if (!strcmp(l->id, id))
            return cuzk_fail(err, CUZK_E_NOT_FOUND, "no job with id '%s': it was accepted, but the "
                             "daemon's journal lost it (%s); submit it again (the same request "
                             "id starts it anew)", id, l->why);
    return cuzk_fail(err, CUZK_E_NOT_FOUND, "no job with id '%s' (unknown, or its result was "
                     "dropped after [daemon] result_retention)", id);
}

void job_unhash(struct engine *e, struct job *j)
{
    for (struct job **pp = &e->buckets[job_id_hash(j->id)]; *pp; pp = &(*pp)->hnext)
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
void job_input_release(struct job *j)
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
void job_discard(struct job *j)
{
    job_free_input(j);
    free(j->agg_pub);
    free(j->parts);
    pthread_cond_destroy(&j->cv);
    free(j);
}

/* job_discard for a job the stage hook recorded: its record goes too (e->mu NOT held). */
void job_refuse(struct engine *e, struct job *j)
{
    if (j->token && e->cfg.hooks.discard) e->cfg.hooks.discard(e->cfg.hooks.ctx, j->token);
    job_discard(j);
}

void job_destroy(struct engine *e, struct job *j)
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
void job_retention_gc(struct engine *e)
{
    uint64_t now = cuzk_now_ns(), keep_ns = e->cfg.result_retention_ms * NS_PER_MS;
    for (struct job *j = e->head, *next; j; j = next) {
        next = j->next;
        if (j->state != JOB_DONE || j->refs) continue;
        if (j->orphan || now - j->done_ns > keep_ns || e->n_done > e->cfg.result_retention_count)
            job_destroy(e, j);
    }
}

/* Finish a job (e->mu held): fill the result, count it, wake its waiters. */
void job_finish(struct engine *e, struct job *j, int status, const char *error)
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
    r->total_ms = ns_to_ms(now - j->submit_ns);
    r->queue_wait_ms = j->start_ns ? ns_to_ms(j->start_ns - j->submit_ns) : r->total_ms;
    r->srs_load_ms = ns_to_ms(j->srs_wait_ns);
    r->synthesis_ms = ns_to_ms(synth);
    r->gpu_compute_ms = ns_to_ms(gpu);
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
    job_retention_gc(e);
}

/* Durable engine, shutdown (e->mu held): stop an unfinished job without finishing it. Its
 * journal record stays unfinished, so the next start replays it; waiters are told so
 * (engine_await). Queued partitions are dropped as in job_finish. */
void job_keep(struct engine *e, struct job *j)
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
