/* snapshot.c: the status snapshot (engine_snapshot, for /status and the metrics): GPUs,
 * memory, per-kind counters, jobs and their partitions, workers, the SRS cache, recent proofs
 * and errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_internal.h"

#define STATUS_KEEP_NS (30ull * 1000000000ull)   /* finished jobs shown in /status this long */

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
            js->parts[p].synth_ms = ns_to_ms(j->parts[p].synth_ns);
            js->parts[p].gpu_ms = ns_to_ms(j->parts[p].gpu_ns);
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
        ss->load_ms = ns_to_ms(s->load_ns);
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
