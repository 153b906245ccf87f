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

/* A GPU's NVML figures for /status: absent ones are null, not 0. */
static json_t *telemetry_json(const struct nvml_sample *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "present", json_boolean(t->present));
    if (!t->present) {
        json_object_set_new(o, "error", json_string(t->error));
        return o;
    }
#define NUM(key, has, v) json_object_set_new(o, key, (has) ? json_real(v) : json_null())
#define INT(key, has, v) json_object_set_new(o, key, (has) ? json_integer((json_int_t)(v)) : json_null())
    NUM("utilization_ratio", t->has_util, t->util_gpu);
    NUM("memory_utilization_ratio", t->has_util, t->util_mem);
    INT("memory_used_bytes", t->has_mem, t->mem_used);
    INT("memory_total_bytes", t->has_mem, t->mem_total);
    NUM("temperature_celsius", t->has_temp, t->temp_c);
    NUM("power_watts", t->has_power, t->power_w);
    NUM("power_limit_watts", t->has_plimit, t->power_limit_w);
    NUM("sm_clock_hertz", t->has_clock, t->sm_clock_hz);
    INT("ecc_corrected_errors", t->has_ecc, t->ecc_corrected);
    INT("ecc_uncorrected_errors", t->has_ecc, t->ecc_uncorrected);
    NUM("pcie_tx_bytes_per_second", t->has_pcie, t->pcie_tx_bps);
    NUM("pcie_rx_bytes_per_second", t->has_pcie, t->pcie_rx_bps);
#undef NUM
#undef INT
    json_t *reasons = json_array();
    if (t->has_throttle) {
        char names[256], *save = NULL;
        nvml_throttle_names(t->throttle, names, sizeof names);
        for (char *w = strtok_r(names, ",", &save); w; w = strtok_r(NULL, ",", &save))
            json_array_append_new(reasons, json_string(w));
    }
    json_object_set_new(o, "throttle_reasons", t->has_throttle ? reasons : json_null());
    if (!t->has_throttle) json_decref(reasons);
    return o;
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
        json_object_set_new(o, "telemetry", g->has_telemetry ? telemetry_json(&g->telemetry)
                                                             : json_null());
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

/* One GPU telemetry family: the header once, then a line per GPU that has the figure. */
enum gpu_fig { F_UP, F_UTIL, F_MUTIL, F_MUSED, F_MTOTAL, F_TEMP, F_POWER, F_PLIMIT, F_CLOCK,
               F_THROTTLE, F_THR_POWER, F_THR_THERMAL, F_ECC_C, F_ECC_U, F_TX, F_RX, F_N };
static const struct { const char *name, *type, *help; } gpu_fams[F_N] = {
    [F_UP] = {"cuzk_gpu_telemetry_up", "gauge", "1 when the GPU answered NVML's last sample, "
              "0 when it did not (fell off the bus, driver reset)."},
    [F_UTIL] = {"cuzk_gpu_utilization_ratio", "gauge", "Fraction of the last sample period in "
                "which a kernel ran (NVML utilization.gpu / 100)."},
    [F_MUTIL] = {"cuzk_gpu_memory_utilization_ratio", "gauge", "Fraction of the last sample "
                 "period in which device memory was read or written."},
    [F_MUSED] = {"cuzk_gpu_memory_used_bytes", "gauge", "Device memory in use (all processes)."},
    [F_MTOTAL] = {"cuzk_gpu_memory_total_bytes", "gauge", "Device memory installed."},
    [F_TEMP] = {"cuzk_gpu_temperature_celsius", "gauge", "GPU die temperature."},
    [F_POWER] = {"cuzk_gpu_power_watts", "gauge", "Board power draw."},
    [F_PLIMIT] = {"cuzk_gpu_power_limit_watts", "gauge", "Enforced board power limit."},
    [F_CLOCK] = {"cuzk_gpu_sm_clock_hertz", "gauge", "Current SM clock."},
    [F_THROTTLE] = {"cuzk_gpu_throttle_reasons", "gauge", "NVML clock event reason bits (1 idle, "
                    "4 sw power cap, 8 hw slowdown, 32 sw thermal, 64 hw thermal, 128 hw power "
                    "brake; docs/daemon.md)."},
    [F_THR_POWER] = {"cuzk_gpu_throttled_power", "gauge", "1 when clocks are held down by the "
                     "power limit (sw power cap or hw power brake)."},
    [F_THR_THERMAL] = {"cuzk_gpu_throttled_thermal", "gauge", "1 when clocks are held down by "
                       "heat (hw slowdown, sw or hw thermal)."},
    [F_ECC_C] = {"cuzk_gpu_ecc_corrected_errors_total", "counter", "Corrected ECC memory errors "
                 "over the GPU's life (NVML aggregate counter)."},
    [F_ECC_U] = {"cuzk_gpu_ecc_uncorrected_errors_total", "counter", "Uncorrected ECC memory "
                 "errors over the GPU's life (NVML aggregate counter)."},
    [F_TX] = {"cuzk_gpu_pcie_tx_bytes_per_second", "gauge", "PCIe bytes per second sent by the "
              "GPU (NVML's 20 ms window)."},
    [F_RX] = {"cuzk_gpu_pcie_rx_bytes_per_second", "gauge", "PCIe bytes per second received by "
              "the GPU (NVML's 20 ms window)."},
};

/* Figure f of sample t into *v; false when the GPU did not report it. */
static bool gpu_fig(const struct nvml_sample *t, int f, double *v)
{
    if (f == F_UP) { *v = t->present; return true; }
    if (!t->present) return false;
    switch (f) {
    case F_UTIL: *v = t->util_gpu; return t->has_util;
    case F_MUTIL: *v = t->util_mem; return t->has_util;
    case F_MUSED: *v = (double)t->mem_used; return t->has_mem;
    case F_MTOTAL: *v = (double)t->mem_total; return t->has_mem;
    case F_TEMP: *v = t->temp_c; return t->has_temp;
    case F_POWER: *v = t->power_w; return t->has_power;
    case F_PLIMIT: *v = t->power_limit_w; return t->has_plimit;
    case F_CLOCK: *v = t->sm_clock_hz; return t->has_clock;
    case F_THROTTLE: *v = (double)t->throttle; return t->has_throttle;
    case F_THR_POWER: *v = (t->throttle & NVML_THROTTLE_POWER) != 0; return t->has_throttle;
    case F_THR_THERMAL: *v = (t->throttle & NVML_THROTTLE_THERMAL) != 0; return t->has_throttle;
    case F_ECC_C: *v = (double)t->ecc_corrected; return t->has_ecc;
    case F_ECC_U: *v = (double)t->ecc_uncorrected; return t->has_ecc;
    case F_TX: *v = t->pcie_tx_bps; return t->has_pcie;
    case F_RX: *v = t->pcie_rx_bps; return t->has_pcie;
    }
    return false;
}

static void render_gpu_metrics(struct sbuf *b, const struct engine_snapshot *s)
{
    for (int f = 0; f < F_N; f++) {
        bool header = false;
        for (size_t i = 0; i < s->n_gpus; i++) {
            double v;
            if (!s->gpus[i].has_telemetry || !gpu_fig(&s->gpus[i].telemetry, f, &v)) continue;
            if (!header)
                sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", gpu_fams[f].name, gpu_fams[f].help,
                          gpu_fams[f].name, gpu_fams[f].type);
            header = true;
            /* %.17g: byte counts up to 2^53 print exactly; ratios keep their digits */
            sb_printf(b, "%s{gpu=\"%d\"} %.17g\n", gpu_fams[f].name, s->gpus[i].ordinal, v);
        }
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
    /* By kind: counters end in _total (Prometheus naming; promtool rejects a counter without
     * it). The Rust cuzk's names without the suffix stay, typed untyped, for dashboards that
     * already query them (docs/daemon.md "Metrics"). */
    static const struct { const char *name, *help, *type; int what; } by_kind[] = {
        {"cuzk_proofs_completed_by_kind_total", "Proofs completed and verified, by kind.", "counter", 0},
        {"cuzk_proofs_failed_by_kind_total", "Proofs that failed, by kind.", "counter", 1},
        {"cuzk_proofs_cancelled_by_kind_total", "Proofs cancelled, by kind.", "counter", 2},
        {"cuzk_proofs_completed", "Deprecated: cuzk_proofs_completed_by_kind_total (the Rust "
                                  "cuzk's name).", "untyped", 0},
        {"cuzk_proofs_failed", "Deprecated: cuzk_proofs_failed_by_kind_total (the Rust cuzk's "
                               "name).", "untyped", 1},
    };
    for (size_t m = 0; m < sizeof by_kind / sizeof by_kind[0]; m++) {
        sb_printf(&b, "# HELP %s %s\n# TYPE %s %s\n", by_kind[m].name, by_kind[m].help,
                  by_kind[m].name, by_kind[m].type);
        for (int k = 0; k < ENGINE_NKINDS; k++) {
            const struct engine_kind_stats *ks = &s->kinds[k];
            uint64_t v = by_kind[m].what == 0 ? ks->completed : by_kind[m].what == 1 ? ks->failed
                                                                                  : ks->cancelled;
            sb_printf(&b, "%s{proof_kind=\"%s\"} %llu\n", by_kind[m].name,
                      engine_kind_label(kind_ids[k]), (unsigned long long)v);
        }
    }
    sb_printf(&b, "# HELP cuzk_proof_duration_seconds Submit-to-answer time of the last <= 1000 "
                  "completed proofs, by kind.\n# TYPE cuzk_proof_duration_seconds summary\n");
    for (int k = 0; k < ENGINE_NKINDS; k++) {
        const char *l = engine_kind_label(kind_ids[k]);
        sb_printf(&b, "cuzk_proof_duration_seconds_count{proof_kind=\"%s\"} %llu\n"
                      "cuzk_proof_duration_seconds_sum{proof_kind=\"%s\"} %.6f\n",
                  l, (unsigned long long)s->kinds[k].duration_count, l, s->kinds[k].duration_sum_s);
    }
    render_gpu_metrics(&b, s);
    if (b.oom) { free(b.p); return NULL; }
    return b.p;
}
