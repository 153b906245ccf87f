/* render.c: engine snapshots as the /status JSON document (jansson) and as Prometheus text
 * (served by /metrics and the GetMetrics RPC). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include <jansson.h>

#include "cuzk/progress.h"
#include "cuzk/server.h"

static const int kind_ids[ENGINE_NKINDS] = {1, 2, 3, 4, 100, 101};
static const char *const prio_names[5] = {"unspecified", "low", "normal", "high", "critical"};
#define ERRORS_WINDOW_MS 3600000   /* "errors" lists the failures of the last hour */

static json_t *span(struct engine_phase_span p)
{
    if (!p.ran) return json_null();
    return json_pack("[I,I]", (json_int_t)p.start_ms, (json_int_t)p.end_ms);
}

/* What the status page needs beyond the live jobs: the queue by kind and priority, the last
 * proofs with their phases, the failures of the last hour and the SRS loads in progress. */
static void add_history(json_t *root, const struct engine_snapshot *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    const int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    json_object_set_new(root, "now_unix_ms", json_integer((json_int_t)now));
    json_t *queue = json_array();
    for (int k = 0; k < ENGINE_NKINDS; k++) {
        const struct engine_kind_stats *ks = &s->kinds[k];
        json_t *bp = json_object();
        for (int p = 1; p <= 4; p++)
            json_object_set_new(bp, prio_names[p], json_integer(ks->pending_by_priority[p]));
        json_array_append_new(queue, json_pack("{s:s,s:i,s:i,s:i,s:o}", "proof_kind",
            engine_kind_name(kind_ids[k]), "queued_jobs", (int)ks->pending_jobs, "running_jobs",
            (int)ks->running_jobs, "queued_partitions", (int)ks->pending_parts, "queued_by_priority", bp));
    }
    json_object_set_new(root, "queue", queue);
    json_t *recent = json_array();
    for (size_t i = 0; i < s->n_recent; i++) {
        const struct engine_recent_snap *r = &s->recent[i];
        /* the key load a partition waited for, right after it was picked up */
        struct engine_phase_span q = {true, 0, r->queue_ms};
        struct engine_phase_span k = {r->srs_wait_ms > 0, r->queue_ms, r->queue_ms + r->srs_wait_ms};
        json_array_append_new(recent, json_pack("{s:s,s:s,s:s,s:i,s:I,s:I,s:I,s:{s:o,s:o,s:o,s:o,s:o}}",
            "job_id", r->id, "proof_kind", engine_kind_name(r->kind), "state",
            engine_status_name(r->status), "partitions", (int)r->n_parts, "finished_unix_ms",
            (json_int_t)r->finished_unix_ms, "total_ms", (json_int_t)r->total_ms, "srs_wait_ms",
            (json_int_t)r->srs_wait_ms, "phases", "queue", span(q), "srs_load", span(k), "synthesis", span(r->synthesis),
            "gpu", span(r->gpu), "verify", span(r->verify)));
    }
    json_object_set_new(root, "recent_proofs", recent);
    json_t *errs = json_array();
    for (size_t i = 0; i < s->n_errors; i++) {
        const struct engine_error_snap *x = &s->errors[i];
        if (now - x->unix_ms > ERRORS_WINDOW_MS) break;   /* newest first */
        json_array_append_new(errs, json_pack("{s:I,s:I,s:s,s:s,s:s}", "unix_ms", (json_int_t)x->unix_ms,
            "secs_ago", (json_int_t)((now - x->unix_ms) / 1000), "job_id", x->job_id, "proof_kind",
            engine_kind_name(x->kind), "message", x->message));
    }
    json_object_set_new(root, "errors", errs);
    json_t *loading = json_array();
    for (size_t i = 0; i < s->n_loading; i++) {
        const struct engine_loading_snap *l = &s->loading[i];
        struct cuzk_progress_view v = {l->circuit_id, l->phase, "B", 1.0, l->bytes_done, l->bytes_total,
                                       l->elapsed_ms * 1000000ull};
        double eta = l->phase ? cuzk_progress_eta_s(&v) : -1;
        json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I}", "circuit_id", l->circuit_id, "phase",
            l->phase ? l->phase : "preparing", "bytes_done", (json_int_t)l->bytes_done, "bytes_total",
            (json_int_t)l->bytes_total, "elapsed_ms", (json_int_t)l->elapsed_ms, "bytes_per_s",
            (json_int_t)cuzk_progress_rate(&v));
        json_object_set_new(o, "eta_s", eta >= 0 ? json_integer((json_int_t)(eta + 0.999)) : json_null());
        json_array_append_new(loading, o);
    }
    json_object_set_new(root, "loading", loading);
}

char *render_status_json(const struct engine_snapshot *s, size_t max_jobs, size_t offset)
{
    json_t *root = json_object();
    if (!root) return NULL;
    json_object_set_new(root, "uptime_secs", json_integer((json_int_t)(s->uptime_ms / 1000)));
    json_object_set_new(root, "memory", json_pack("{s:I,s:I,s:I,s:I,s:I}",
        "total_bytes", (json_int_t)s->mem_total, "used_bytes", (json_int_t)s->mem_used,
        "available_bytes", (json_int_t)(s->mem_total > s->mem_used ? s->mem_total - s->mem_used : 0),
        "pinned_bytes", (json_int_t)s->host_pinned, "pinned_peak_bytes", (json_int_t)s->host_pinned_peak));
    json_object_set_new(root, "synthesis", json_pack("{s:i,s:i}", "max_concurrent",
        (int)s->synth_workers, "active", (int)s->synth_active));

    /* a page of the jobs (summaries are in counters): the whole list of thousands of queued
     * jobs took seconds to build and tens of megabytes */
    json_t *jobs = json_array();
    size_t end = offset < s->n_jobs ? offset + (max_jobs < s->n_jobs - offset ? max_jobs
                                                                              : s->n_jobs - offset)
                                    : offset;
    for (size_t i = offset; i < end && i < s->n_jobs; i++) {
        const struct engine_job_snap *j = &s->jobs[i];
        json_t *parts = json_array();
        for (uint32_t p = 0; p < j->n_parts; p++)
            json_array_append_new(parts, json_pack("{s:i,s:s,s:I,s:I}", "index", (int)p,
                "state", engine_part_state_name(j->parts[p].state),
                "synth_ms", (json_int_t)j->parts[p].synth_ms, "gpu_ms", (json_int_t)j->parts[p].gpu_ms));
        const char *state = j->status != ENGINE_UNKNOWN ? engine_status_name(j->status)
                                                        : j->running ? "RUNNING" : "QUEUED";
        json_array_append_new(jobs, json_pack("{s:s,s:s,s:i,s:s,s:I,s:i,s:i,s:o}", "job_id", j->id,
            "proof_kind", engine_kind_name(j->kind), "priority", j->priority, "state", state,
            "started_secs_ago", (json_int_t)(j->age_ms / 1000), "total_partitions", (int)j->n_parts,
            "partitions_done", (int)j->parts_done, "partitions", parts));
    }
    json_object_set_new(root, "pipelines", jobs);
    json_object_set_new(root, "pipelines_total", json_integer((json_int_t)s->n_jobs));
    json_object_set_new(root, "pipelines_offset", json_integer((json_int_t)offset));

    json_t *workers = json_array();
    for (size_t i = 0; i < s->n_workers; i++) {
        const struct engine_worker_snap *w = &s->workers[i];
        json_t *o = json_pack("{s:i,s:s,s:s,s:I}", "worker_id", (int)w->id,
            "device", w->gpu_ordinal >= 0 ? "gpu" : "cpu", "state", w->busy ? "proving" : "idle",
            "busy_secs", (json_int_t)(w->busy_ms / 1000));
        json_object_set_new(o, "gpu_ordinal", w->gpu_ordinal >= 0 ? json_integer(w->gpu_ordinal) : json_null());
        json_object_set_new(o, "current_job", w->busy ? json_string(w->job_id) : json_null());
        json_object_set_new(o, "current_partition", w->busy ? json_integer(w->partition) : json_null());
        json_array_append_new(workers, o);
    }
    json_object_set_new(root, "gpu_workers", workers);

    json_t *gpus = json_array();
    for (size_t i = 0; i < s->n_gpus; i++) {
        const struct engine_gpu_snap *g = &s->gpus[i];
        json_t *o = json_pack("{s:i,s:s,s:I,s:I,s:i,s:i}", "ordinal", g->ordinal,
            "name", g->name, "vram_total_bytes", (json_int_t)g->vram_total,
            "vram_free_bytes", (json_int_t)g->vram_free, "workers", (int)g->workers,
            "busy_workers", (int)g->busy);
        json_object_set_new(o, "current_job", g->busy ? json_string(g->current_job) : json_null());
        json_object_set_new(o, "current_proof_kind",
                            g->busy ? json_string(engine_kind_name(g->current_kind)) : json_null());
        json_array_append_new(gpus, o);
    }
    json_object_set_new(root, "gpus", gpus);
    /* where proofs are computed, and why the CPU when it is the CPU */
    json_object_set_new(root, "prover", json_pack("{s:s,s:s}", "device", s->prover ? s->prover : "cpu",
        "reason", s->cpu_reason ? s->cpu_reason : ""));

    json_t *srs = json_array();
    for (size_t i = 0; i < s->n_srs; i++) {
        json_t *vg = json_array();   /* ordinals of the GPUs holding the key in VRAM */
        for (size_t d = 0; d < s->n_gpus && d < 32; d++)
            if (s->srs[i].vram_mask >> d & 1) json_array_append_new(vg, json_integer(s->gpus[d].ordinal));
        json_array_append_new(srs, json_pack("{s:s,s:s,s:b,s:o,s:I,s:I,s:I,s:i,s:b}", "circuit_id",
            s->srs[i].circuit_id, "tier", s->srs[i].tier, "host_copy", s->srs[i].host_key, "vram_gpus", vg,
            "bytes", (json_int_t)s->srs[i].bytes, "load_ms", (json_int_t)s->srs[i].load_ms,
            "last_used_secs_ago", (json_int_t)(s->srs[i].idle_ms / 1000),
            "ref_count", (int)s->srs[i].refs, "evictable", s->srs[i].evictable));
    }
    json_object_set_new(root, "allocations", json_pack("{s:o,s:s}", "srs", srs,
        "srs_validation", s->validation ? s->validation : "full"));

    json_t *ck = json_object(), *fk = json_object(), *xk = json_object();
    for (int k = 0; k < ENGINE_NKINDS; k++) {
        const char *name = engine_kind_name(kind_ids[k]);
        json_object_set_new(ck, name, json_integer((json_int_t)s->kinds[k].completed));
        json_object_set_new(fk, name, json_integer((json_int_t)s->kinds[k].failed));
        json_object_set_new(xk, name, json_integer((json_int_t)s->kinds[k].cancelled));
    }
    json_object_set_new(root, "counters", json_pack("{s:I,s:I,s:I,s:o,s:o,s:o,s:i,s:i}",
        "total_completed", (json_int_t)s->completed, "total_failed", (json_int_t)s->failed,
        "total_cancelled", (json_int_t)s->cancelled, "completed_by_kind", ck, "failed_by_kind", fk,
        "cancelled_by_kind", xk, "queue_depth", (int)s->queue_depth, "running_jobs",
        (int)s->running_jobs));
    add_history(root, s);
    char *out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return out;
}

/* Growing string buffer for the Prometheus text. */
struct sbuf { char *p; size_t n, cap; bool oom; };

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) { b->oom = true; return; }
        if ((size_t)k < b->cap - b->n) { b->n += (size_t)k; return; }
        size_t cap = (b->cap + (size_t)k) * 2;
        char *np = realloc(b->p, cap);
        if (!np) { b->oom = true; return; }
        b->p = np;
        b->cap = cap;
    }
}

char *render_metrics(const struct engine_snapshot *s)
{
    struct sbuf b = {malloc(4096), 0, 4096, false};
    if (!b.p) return NULL;
    b.p[0] = 0;
    sb_printf(&b, "# HELP cuzk_proofs_completed_total Proofs completed and verified.\n"
                  "# TYPE cuzk_proofs_completed_total counter\ncuzk_proofs_completed_total %llu\n",
              (unsigned long long)s->completed);
    sb_printf(&b, "# HELP cuzk_proofs_failed_total Proofs that failed.\n"
                  "# TYPE cuzk_proofs_failed_total counter\ncuzk_proofs_failed_total %llu\n",
              (unsigned long long)s->failed);
    sb_printf(&b, "# HELP cuzk_proofs_cancelled_total Proofs cancelled (CancelProof or shutdown).\n"
                  "# TYPE cuzk_proofs_cancelled_total counter\ncuzk_proofs_cancelled_total %llu\n",
              (unsigned long long)s->cancelled);
    sb_printf(&b, "# HELP cuzk_uptime_seconds Seconds since the daemon started.\n"
                  "# TYPE cuzk_uptime_seconds gauge\ncuzk_uptime_seconds %llu\n",
              (unsigned long long)(s->uptime_ms / 1000));
    sb_printf(&b, "# HELP cuzk_queue_depth Jobs waiting to start.\n"
                  "# TYPE cuzk_queue_depth gauge\ncuzk_queue_depth %u\n", s->queue_depth);
    sb_printf(&b, "# HELP cuzk_running_jobs Jobs with partitions in progress.\n"
                  "# TYPE cuzk_running_jobs gauge\ncuzk_running_jobs %u\n", s->running_jobs);
    unsigned busy = 0;
    for (size_t i = 0; i < s->n_workers; i++) busy += s->workers[i].busy;
    sb_printf(&b, "# HELP cuzk_gpu_workers Prover workers (GPU, or CPU without a GPU).\n"
                  "# TYPE cuzk_gpu_workers gauge\ncuzk_gpu_workers %zu\n", s->n_workers);
    sb_printf(&b, "# HELP cuzk_gpu_workers_busy Prover workers proving right now.\n"
                  "# TYPE cuzk_gpu_workers_busy gauge\ncuzk_gpu_workers_busy %u\n", busy);
    sb_printf(&b, "# HELP cuzk_memory_budget_bytes Memory budget.\n"
                  "# TYPE cuzk_memory_budget_bytes gauge\ncuzk_memory_budget_bytes %llu\n",
              (unsigned long long)s->mem_total);
    sb_printf(&b, "# HELP cuzk_memory_used_bytes Memory reserved from the budget.\n"
                  "# TYPE cuzk_memory_used_bytes gauge\ncuzk_memory_used_bytes %llu\n",
              (unsigned long long)s->mem_used);
    sb_printf(&b, "# HELP cuzk_host_pinned_bytes Page-locked host memory held for GPU transfers.\n"
                  "# TYPE cuzk_host_pinned_bytes gauge\ncuzk_host_pinned_bytes %llu\n"
                  "# HELP cuzk_host_pinned_peak_bytes Highest page-locked host memory since start.\n"
                  "# TYPE cuzk_host_pinned_peak_bytes gauge\ncuzk_host_pinned_peak_bytes %llu\n",
              (unsigned long long)s->host_pinned, (unsigned long long)s->host_pinned_peak);
    uint64_t srs_bytes = 0;
    for (size_t i = 0; i < s->n_srs; i++) srs_bytes += s->srs[i].bytes;
    sb_printf(&b, "# HELP cuzk_srs_loaded Parameter sets resident in memory.\n"
                  "# TYPE cuzk_srs_loaded gauge\ncuzk_srs_loaded %zu\n"
                  "# HELP cuzk_srs_bytes Bytes held by resident parameter sets.\n"
                  "# TYPE cuzk_srs_bytes gauge\ncuzk_srs_bytes %llu\n",
              s->n_srs, (unsigned long long)srs_bytes);
    sb_printf(&b, "# HELP cuzk_srs_resident_bytes Host bytes of each parameter set, by tier "
                  "(vram: its key is also resident on a GPU; host: host memory only; loading).\n"
                  "# TYPE cuzk_srs_resident_bytes gauge\n");
    for (size_t i = 0; i < s->n_srs; i++)
        sb_printf(&b, "cuzk_srs_resident_bytes{circuit_id=\"%s\",tier=\"%s\"} %llu\n",
                  s->srs[i].circuit_id, s->srs[i].tier, (unsigned long long)s->srs[i].bytes);
    sb_printf(&b, "# HELP cuzk_gpus GPUs the daemon proves on (0: proving on the CPU).\n"
                  "# TYPE cuzk_gpus gauge\ncuzk_gpus %zu\n", s->n_gpus);
    sb_printf(&b, "# HELP cuzk_proofs_completed Proofs completed, by kind.\n"
                  "# TYPE cuzk_proofs_completed counter\n");
    for (int k = 0; k < ENGINE_NKINDS; k++)
        sb_printf(&b, "cuzk_proofs_completed{proof_kind=\"%s\"} %llu\n", engine_kind_label(kind_ids[k]),
                  (unsigned long long)s->kinds[k].completed);
    sb_printf(&b, "# HELP cuzk_proofs_failed Proofs failed, by kind.\n"
                  "# TYPE cuzk_proofs_failed counter\n");
    for (int k = 0; k < ENGINE_NKINDS; k++)
        sb_printf(&b, "cuzk_proofs_failed{proof_kind=\"%s\"} %llu\n", engine_kind_label(kind_ids[k]),
                  (unsigned long long)s->kinds[k].failed);
    sb_printf(&b, "# HELP cuzk_proof_duration_seconds Submit-to-answer time of the last <= 1000 "
                  "completed proofs, by kind.\n# TYPE cuzk_proof_duration_seconds summary\n");
    for (int k = 0; k < ENGINE_NKINDS; k++) {
        const char *l = engine_kind_label(kind_ids[k]);
        sb_printf(&b, "cuzk_proof_duration_seconds_count{proof_kind=\"%s\"} %llu\n"
                      "cuzk_proof_duration_seconds_sum{proof_kind=\"%s\"} %.6f\n",
                  l, (unsigned long long)s->kinds[k].duration_count, l, s->kinds[k].duration_sum_s);
    }
    if (b.oom) { free(b.p); return NULL; }
    return b.p;
}
