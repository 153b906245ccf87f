/* rpc.c: the cuzk.v1.ProvingEngine gRPC service on grpc core: registered unary methods on one
 * completion queue, each call handled on its own thread (Prove/AwaitProof block, so their
 * number is capped: docs/decisions.md), protobuf-c messages converted to and from engine.h
 * calls; TLS through grpc's SSL server credentials and the bearer token checked on the
 * completion-queue thread before any handler runs. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "cuzk/v1/proving.pb-c.h"
#include "cuzk/log.h"
#include "cuzk/request.h"
#include "cuzk/server.h"
#include "cuzk/util.h"

#define N_PRESTART 4   /* outstanding call requests per method */

enum tag_type { TAG_NEW_CALL, TAG_GENERIC_CALL, TAG_SENT, TAG_SHUTDOWN };

struct reply {
    grpc_status_code code;
    char details[CUZK_ERR_MSG_MAX + 128];
    uint8_t *buf;       /* packed response (code OK) */
    size_t len;
    bool large;         /* the call holds one of the server's large-request slots */
    uint64_t reserved;  /* bytes of the engine's memory budget the request holds (0 = none) */
    uint64_t wire;      /* the request message's size */
    struct cuzk_meter meter;   /* what its decoding and parse allocate (when reserved) */
    grpc_slice in;      /* the request's bytes, until input_drop */
    bool in_live;
};

struct rpc_server;
typedef void (*method_fn)(struct rpc_server *s, const struct grpc_call *call, gpr_timespec deadline,
                          const uint8_t *in, size_t n, struct reply *r);
static void large_release(struct rpc_server *s, struct reply *r);

struct method {
    const char *name;
    method_fn fn;
    void *handle;       /* from grpc_server_register_method */
    bool waits;         /* blocks until a job finishes (AwaitProof, Prove) */
};

struct call {
    enum tag_type type;
    bool generic;                /* requested with grpc_server_request_call: owns details */
    struct rpc_server *srv;
    struct method *m;
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array md;
    grpc_call_details details;   /* generic (unregistered) calls */
    grpc_byte_buffer *payload;
    grpc_byte_buffer *resp;
    grpc_slice status_details;
    int cancelled;
    bool waiter;                 /* counted in rpc_server.waiters */
};

struct rpc_server {
    struct engine *e;
    grpc_server *server;
    grpc_completion_queue *cq;
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping, shutdown_done;
    unsigned handlers;              /* handler threads alive */
    char *token;                    /* bearer token every call must carry; NULL = none */
    unsigned max_waiters, waiters;  /* AwaitProof / Prove calls waiting (cap, now) */
    char waiters_key[64];
    unsigned max_large, large;      /* large requests decoded at once (cap, now) */
    pthread_cond_t large_cv;
    char addr[512];
    struct call shutdown_tag;
};

/* ------------------------------------------------------------- conversion -- */

/* protobuf-c allocates through the library's seam: a large request's decoded copy is counted
 * by its allocation meter (util.h). */
static void *pb_alloc(void *d, size_t n) { (void)d; return cuzk_malloc(n); }
static void pb_free(void *d, void *p) { (void)d; cuzk_free(p); }
static ProtobufCAllocator pb_seam = {pb_alloc, pb_free, NULL};

/* The request's wire bytes are no longer needed (its decoded copy holds what is used): give
 * them back before the parse, the largest allocation. */
static void input_drop(struct reply *r)
{
    if (!r->in_live) return;
    r->in_live = false;
    size_t n = GRPC_SLICE_LENGTH(r->in);
    grpc_slice_unref(r->in);
    if (r->reserved) cuzk_meter_charge(-(int64_t)n);
}

static void reply_err(struct reply *r, grpc_status_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void reply_err(struct reply *r, grpc_status_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->details, sizeof r->details, fmt, ap);
    va_end(ap);
    r->code = code;
}

static void reply_msg(struct reply *r, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    r->buf = malloc(n ? n : 1);
    if (!r->buf) { reply_err(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory"); return; }
    r->len = protobuf_c_message_pack(m, r->buf);
    r->code = GRPC_STATUS_OK;
}

static grpc_status_code code_of(int cuzk_code)
{
    switch (cuzk_code) {
    case CUZK_E_INVALID_ARG: case CUZK_E_FORMAT: return GRPC_STATUS_INVALID_ARGUMENT;
    case CUZK_E_NOT_FOUND: return GRPC_STATUS_NOT_FOUND;
    case CUZK_E_BUSY: return GRPC_STATUS_FAILED_PRECONDITION;
    case CUZK_E_NOMEM: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case CUZK_E_CANCELLED: return GRPC_STATUS_UNAVAILABLE;
    case CUZK_E_TIMEOUT: return GRPC_STATUS_DEADLINE_EXCEEDED;
    default: return GRPC_STATUS_INTERNAL;
    }
}

/* Milliseconds left before the client's deadline (0 = none). */
static uint64_t deadline_ms(gpr_timespec deadline)
{
    gpr_timespec d = gpr_convert_clock_type(deadline, GPR_CLOCK_MONOTONIC);
    gpr_timespec now = gpr_now(GPR_CLOCK_MONOTONIC);
    if (gpr_time_cmp(d, gpr_inf_future(GPR_CLOCK_MONOTONIC)) == 0) return 0;
    if (gpr_time_cmp(d, now) <= 0) return 1;
    gpr_timespec left = gpr_time_sub(d, now);
    uint64_t ms = (uint64_t)left.tv_sec * 1000 + (uint64_t)left.tv_nsec / 1000000;
    return ms ? ms : 1;
}

static void fill_await(Cuzk__V1__AwaitProofResponse *m, struct engine_result *res)
{
    m->job_id = res->job_id;
    m->status = (Cuzk__V1__AwaitProofResponse__Status)res->status;
    m->proof.data = res->proof;
    m->proof.len = res->proof_len;
    m->aggregate_proof.data = res->aggregate;
    m->aggregate_proof.len = res->aggregate_len;
    m->error_message = res->error;
    m->queue_wait_ms = res->queue_wait_ms;
    m->srs_load_ms = res->srs_load_ms;
    m->synthesis_ms = res->synthesis_ms;
    m->gpu_compute_ms = res->gpu_compute_ms;
    m->total_ms = res->total_ms;
}

/* Submit a request; on failure the reply is filled and false returned. */
static bool submit(struct rpc_server *s, const Cuzk__V1__SubmitProofRequest *q, const char *rpc,
                   char job_id[ENGINE_ID_MAX], uint32_t *pos, struct reply *r)
{
    struct cuzk_error err;
    cuzk_error_clear(&err);
    struct srv_request req;
    if (srv_request_of(&req, q, &err)) {
        reply_err(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "%s", err.msg);
        return false;
    }
    bool existing = false;
    int rc = engine_submit(s->e, &req.req, job_id, pos, &existing, &err);
    srv_request_release(&req);
    if (rc) {
        cuzk_log(CLOG_WARN, "%s rejected: request_id=%s: %s", rpc, CLOG_ID(q->request_id), err.msg);
        reply_err(r, rc == CUZK_E_BUSY ? GRPC_STATUS_UNAVAILABLE : code_of(rc), "%s", err.msg);
        return false;
    }
    cuzk_log(CLOG_INFO, "%s: job=%s kind=%s%s", rpc, CLOG_ID(job_id), engine_kind_name((int)q->proof_kind),
             existing ? " (existing job)" : "");
    return true;
}

#define UNPACK(type, fn, var, in, n, r, what)                                         \
    type *var = fn(&pb_seam, n, in);                                                      \
    if (!var) {                                                                       \
        reply_err(r, GRPC_STATUS_INVALID_ARGUMENT, "malformed %s message (%zu bytes)", \
                  what, n);                                                           \
        return;                                                                       \
    }

/* Ids are checked on the wire bytes: protobuf-c's C strings end at the first NUL, so
 * "same\0A" and "same\0B" would both become job "same" and the second would silently join
 * the first. The reason names offsets only, never the bytes (they may be an attack on logs). */
static bool ids_ok(const uint8_t *in, size_t n, const uint32_t *path, size_t depth, size_t max,
                   const char *what, struct reply *r)
{
    struct cuzk_error err;
    cuzk_error_clear(&err);
    if (!srv_check_wire_ids(in, n, path, depth, max, what, &err)) return true;
    cuzk_log(CLOG_WARN, "request refused: %s", err.msg);
    reply_err(r, GRPC_STATUS_INVALID_ARGUMENT, "%s", err.msg);
    return false;
}
static const uint32_t path_top[1] = {1}, path_submit[2] = {1, 1};
#define CIRCUIT_ID_MAX 63

/* ---------------------------------------------------------------- methods -- */

static void m_submit(struct rpc_server *s, const grpc_call *c, gpr_timespec dl, const uint8_t *in,
                     size_t n, struct reply *r)
{
    (void)c; (void)dl;
    UNPACK(Cuzk__V1__SubmitProofRequest, cuzk__v1__submit_proof_request__unpack, q, in, n, r,
           "SubmitProofRequest");
    char job_id[ENGINE_ID_MAX];
    uint32_t pos = 0;
    bool ok = ids_ok(in, n, path_top, 1, ENGINE_ID_MAX - 1, "request_id", r);
    input_drop(r);
    if (ok && submit(s, q, "SubmitProof", job_id, &pos, r)) {
        Cuzk__V1__SubmitProofResponse m = CUZK__V1__SUBMIT_PROOF_RESPONSE__INIT;
        m.job_id = job_id;
        m.queue_position = pos;
        reply_msg(r, &m.base);
    }
    cuzk__v1__submit_proof_request__free_unpacked(q, &pb_seam);
}

static void await_and_reply(struct rpc_server *s, const char *job_id, uint64_t timeout_ms,
                            gpr_timespec dl, bool prove, struct reply *r)
{
    uint64_t left = deadline_ms(dl);
    bool deadline_first = left && (!timeout_ms || left < timeout_ms);
    struct engine_result res;
    struct cuzk_error err;
    cuzk_error_clear(&err);
    int rc = engine_await(s->e, job_id, deadline_first ? left : timeout_ms, &res, &err);
    if (rc) { reply_err(r, code_of(rc), "%s", err.msg); return; }
    if (res.status == ENGINE_TIMEOUT && deadline_first) {
        reply_err(r, GRPC_STATUS_DEADLINE_EXCEEDED, "client deadline passed; job %s keeps running",
                  job_id);
        engine_result_free(&res);
        return;
    }
    Cuzk__V1__AwaitProofResponse a = CUZK__V1__AWAIT_PROOF_RESPONSE__INIT;
    fill_await(&a, &res);
    if (prove) {
        Cuzk__V1__ProveResponse m = CUZK__V1__PROVE_RESPONSE__INIT;
        m.result = &a;
        reply_msg(r, &m.base);
    } else {
        reply_msg(r, &a.base);
    }
    engine_result_free(&res);
}

static void m_await(struct rpc_server *s, const grpc_call *c, gpr_timespec dl, const uint8_t *in,
                    size_t n, struct reply *r)
{
    (void)c;
    UNPACK(Cuzk__V1__AwaitProofRequest, cuzk__v1__await_proof_request__unpack, q, in, n, r,
           "AwaitProofRequest");
    if (!q->job_id[0]) reply_err(r, GRPC_STATUS_INVALID_ARGUMENT, "AwaitProofRequest.job_id is empty");
    else if (ids_ok(in, n, path_top, 1, ENGINE_ID_MAX - 1, "job_id", r))
        await_and_reply(s, q->job_id, q->timeout_ms, dl, false, r);
    cuzk__v1__await_proof_request__free_unpacked(q, &pb_seam);
}

static void m_prove(struct rpc_server *s, const grpc_call *c, gpr_timespec dl, const uint8_t *in,
                    size_t n, struct reply *r)
{
    (void)c;
    UNPACK(Cuzk__V1__ProveRequest, cuzk__v1__prove_request__unpack, q, in, n, r, "ProveRequest");
    char job_id[ENGINE_ID_MAX];
    uint32_t pos;
    bool submitted = false;
    bool ok = q->submit && ids_ok(in, n, path_submit, 2, ENGINE_ID_MAX - 1, "request_id", r);
    input_drop(r);
    if (!q->submit)
        reply_err(r, GRPC_STATUS_INVALID_ARGUMENT, "ProveRequest.submit is missing");
    else if (ok)
        submitted = submit(s, q->submit, "Prove", job_id, &pos, r);
    /* the engine holds what it needs of the request: the decoded copy and the large-request
     * slot are not kept through the wait */
    cuzk__v1__prove_request__free_unpacked(q, &pb_seam);
    large_release(s, r);
    if (submitted) await_and_reply(s, job_id, 0, dl, true, r);
}

static void m_cancel(struct rpc_server *s, const grpc_call *c, gpr_timespec dl, const uint8_t *in,
                     size_t n, struct reply *r)
{
    (void)c; (void)dl;
    UNPACK(Cuzk__V1__CancelProofRequest, cuzk__v1__cancel_proof_request__unpack, q, in, n, r,
           "CancelProofRequest");
    bool was_running = false;
    struct cuzk_error err;
    cuzk_error_clear(&err);
    int rc = !q->job_id[0] ? cuzk_fail(&err, CUZK_E_INVALID_ARG, "CancelProofRequest.job_id is empty")
           : srv_check_wire_ids(in, n, path_top, 1, ENGINE_ID_MAX - 1, "job_id", &err)
           ? CUZK_E_INVALID_ARG : engine_cancel(s->e, q->job_id, &was_running, &err);
    if (rc) {
        reply_err(r, code_of(rc), "%s", err.msg);
    } else {
        cuzk_log(CLOG_INFO, "CancelProof: job=%s was_running=%d", CLOG_ID(q->job_id), was_running);
        Cuzk__V1__CancelProofResponse m = CUZK__V1__CANCEL_PROOF_RESPONSE__INIT;
        m.was_running = was_running;
        reply_msg(r, &m.base);
    }
    cuzk__v1__cancel_proof_request__free_unpacked(q, &pb_seam);
}

static void m_status(struct rpc_server *s, const grpc_call *c, gpr_timespec dl, const uint8_t *in,
                     size_t n, struct reply *r)
{
    (void)c; (void)dl;
    UNPACK(Cuzk__V1__GetStatusRequest, cuzk__v1__get_status_request__unpack, q, in, n, r,
           "GetStatusRequest");
    cuzk__v1__get_status_request__free_unpacked(q, &pb_seam);
    struct engine_snapshot snap;
    struct cuzk_error err;
    if (engine_snapshot(s->e, &snap, &err)) { reply_err(r, code_of(err.code), "%s", err.msg); return; }
    Cuzk__V1__GetStatusResponse m = CUZK__V1__GET_STATUS_RESPONSE__INIT;
    Cuzk__V1__GPUStatus *gpus = calloc(snap.n_gpus + 1, sizeof *gpus);
    Cuzk__V1__GPUStatus **gpp = calloc(snap.n_gpus + 1, sizeof *gpp);
    Cuzk__V1__SRSStatus *srs = calloc(snap.n_srs + 1, sizeof *srs);
    Cuzk__V1__SRSStatus **srp = calloc(snap.n_srs + 1, sizeof *srp);
    Cuzk__V1__QueueStatus qs[ENGINE_NKINDS];
    Cuzk__V1__QueueStatus *qsp[ENGINE_NKINDS];
    static const int kind_ids[ENGINE_NKINDS] = {1, 2, 3, 4, 100, 101};
    if (!gpus || !gpp || !srs || !srp) {
        reply_err(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < snap.n_gpus; i++) {
        Cuzk__V1__GPUStatus g = CUZK__V1__GPUSTATUS__INIT;
        g.ordinal = (uint32_t)snap.gpus[i].ordinal;
        g.name = snap.gpus[i].name;
        g.vram_total_bytes = snap.gpus[i].vram_total;
        g.vram_free_bytes = snap.gpus[i].vram_free;
        g.current_job_id = snap.gpus[i].current_job;
        g.current_proof_kind = (char *)(snap.gpus[i].busy ? engine_kind_name(snap.gpus[i].current_kind) : "");
        g.workers = snap.gpus[i].workers;
        g.busy_workers = snap.gpus[i].busy;
        gpus[i] = g;
        gpp[i] = &gpus[i];
    }
    for (size_t i = 0; i < snap.n_srs; i++) {
        Cuzk__V1__SRSStatus x = CUZK__V1__SRSSTATUS__INIT;
        x.circuit_id = snap.srs[i].circuit_id;
        /* HOT = the key is resident in VRAM (on at least one GPU); WARM = host memory only
         * (streamed to the GPU per proof, or proved on the CPU); COLD = still loading */
        x.tier = !strcmp(snap.srs[i].tier, "vram") ? CUZK__V1__SRSSTATUS__TIER__HOT
                 : !strcmp(snap.srs[i].tier, "loading") ? CUZK__V1__SRSSTATUS__TIER__COLD
                 : CUZK__V1__SRSSTATUS__TIER__WARM;
        x.size_bytes = snap.srs[i].bytes;
        x.ref_count = snap.srs[i].refs;
        srs[i] = x;
        srp[i] = &srs[i];
    }
    for (int k = 0; k < ENGINE_NKINDS; k++) {
        Cuzk__V1__QueueStatus x = CUZK__V1__QUEUE_STATUS__INIT;
        x.proof_kind = (char *)engine_kind_name(kind_ids[k]);
        x.pending = snap.kinds[k].pending_jobs;
        x.in_progress = snap.kinds[k].running_jobs;
        x.pending_partitions = snap.kinds[k].pending_parts;
        qs[k] = x;
        qsp[k] = &qs[k];
    }
    m.n_gpus = snap.n_gpus;
    m.gpus = gpp;
    m.n_loaded_srs = snap.n_srs;
    m.loaded_srs = srp;
    m.n_queues = ENGINE_NKINDS;
    m.queues = qsp;
    m.total_proofs_completed = snap.completed;
    m.total_proofs_failed = snap.failed;
    m.total_proofs_cancelled = snap.cancelled;
    m.uptime_seconds = snap.uptime_ms / 1000;
    m.memory_budget_bytes = snap.mem_total;
    m.memory_used_bytes = snap.mem_used;
    m.pinned_memory_bytes = snap.host_pinned;   /* page-locked host memory the GPU backend holds */
    reply_msg(r, &m.base);
out:
    free(gpus); free(gpp); free(srs); free(srp);
    engine_snapshot_free(&snap);
}

static void m_metrics(struct rpc_server *s, const grpc_call *c, gpr_timespec dl, const uint8_t *in,
                      size_t n, struct reply *r)
{
    (void)c; (void)dl;
    UNPACK(Cuzk__V1__GetMetricsRequest, cuzk__v1__get_metrics_request__unpack, q, in, n, r,
           "GetMetricsRequest");
    cuzk__v1__get_metrics_request__free_unpacked(q, &pb_seam);
    struct engine_snapshot snap;
    struct cuzk_error err;
    if (engine_snapshot(s->e, &snap, &err)) { reply_err(r, code_of(err.code), "%s", err.msg); return; }
    char *text = render_metrics(&snap);
    engine_snapshot_free(&snap);
    if (!text) { reply_err(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory"); return; }
    Cuzk__V1__GetMetricsResponse m = CUZK__V1__GET_METRICS_RESPONSE__INIT;
    m.prometheus_text = text;
    reply_msg(r, &m.base);
    free(text);
}

static void m_preload(struct rpc_server *s, const grpc_call *c, gpr_timespec dl, const uint8_t *in,
                      size_t n, struct reply *r)
{
    (void)c; (void)dl;
    UNPACK(Cuzk__V1__PreloadSrsRequest, cuzk__v1__preload_srs_request__unpack, q, in, n, r,
           "PreloadSrsRequest");
    bool already = false;
    uint64_t load_ms = 0;
    struct cuzk_error err;
    cuzk_error_clear(&err);
    int rc = srv_check_wire_ids(in, n, path_top, 1, CIRCUIT_ID_MAX, "circuit_id", &err);
    if (!rc) {
        cuzk_log(CLOG_INFO, "PreloadSRS: circuit=%s", q->circuit_id);
        rc = engine_preload(s->e, q->circuit_id, &already, &load_ms, &err);
    } else {
        cuzk_log(CLOG_WARN, "PreloadSRS refused: %s", err.msg);
    }
    if (rc) {
        reply_err(r, code_of(rc), "%s", err.msg);
    } else {
        Cuzk__V1__PreloadSrsResponse m = CUZK__V1__PRELOAD_SRS_RESPONSE__INIT;
        m.already_loaded = already;
        m.load_time_ms = load_ms;
        reply_msg(r, &m.base);
    }
    cuzk__v1__preload_srs_request__free_unpacked(q, &pb_seam);
}

static void m_evict(struct rpc_server *s, const grpc_call *c, gpr_timespec dl, const uint8_t *in,
                    size_t n, struct reply *r)
{
    (void)c; (void)dl;
    UNPACK(Cuzk__V1__EvictSrsRequest, cuzk__v1__evict_srs_request__unpack, q, in, n, r,
           "EvictSrsRequest");
    bool was = false;
    uint64_t freed = 0;
    struct cuzk_error err;
    cuzk_error_clear(&err);
    int rc = srv_check_wire_ids(in, n, path_top, 1, CIRCUIT_ID_MAX, "circuit_id", &err);
    if (!rc) rc = engine_evict(s->e, q->circuit_id, &was, &freed, &err);
    if (rc) {
        cuzk_log(CLOG_INFO, "EvictSRS refused: %s", err.msg);
        reply_err(r, code_of(rc), "%s", err.msg);
    } else {
        Cuzk__V1__EvictSrsResponse m = CUZK__V1__EVICT_SRS_RESPONSE__INIT;
        m.was_loaded = was;
        m.freed_bytes = freed;
        reply_msg(r, &m.base);
    }
    cuzk__v1__evict_srs_request__free_unpacked(q, &pb_seam);
}

static struct method methods[] = {
    {"/cuzk.v1.ProvingEngine/SubmitProof", m_submit, NULL, false},
    {"/cuzk.v1.ProvingEngine/AwaitProof", m_await, NULL, true},
    {"/cuzk.v1.ProvingEngine/Prove", m_prove, NULL, true},
    {"/cuzk.v1.ProvingEngine/CancelProof", m_cancel, NULL, false},
    {"/cuzk.v1.ProvingEngine/GetStatus", m_status, NULL, false},
    {"/cuzk.v1.ProvingEngine/GetMetrics", m_metrics, NULL, false},
    {"/cuzk.v1.ProvingEngine/PreloadSRS", m_preload, NULL, false},
    {"/cuzk.v1.ProvingEngine/EvictSRS", m_evict, NULL, false},
};
#define N_METHODS (sizeof methods / sizeof methods[0])

/* ------------------------------------------------------------ call plumbing -- */

static void call_free(struct call *c)
{
    if (c->call) grpc_call_unref(c->call);
    grpc_metadata_array_destroy(&c->md);
    if (c->generic) grpc_call_details_destroy(&c->details);
    if (c->payload) grpc_byte_buffer_destroy(c->payload);
    if (c->resp) grpc_byte_buffer_destroy(c->resp);
    grpc_slice_unref(c->status_details);
    free(c);
}

/* Ask grpc for the next call of method m (or an unregistered one when m is NULL). */
static void request_call(struct rpc_server *s, struct method *m)
{
    struct call *c = calloc(1, sizeof *c);
    if (!c) return;
    c->srv = s;
    c->m = m;
    c->status_details = grpc_empty_slice();
    grpc_metadata_array_init(&c->md);
    grpc_call_error ce;
    if (m) {
        c->type = TAG_NEW_CALL;
        ce = grpc_server_request_registered_call(s->server, m->handle, &c->call, &c->deadline, &c->md,
                                                 &c->payload, s->cq, s->cq, c);
    } else {
        c->type = TAG_GENERIC_CALL;
        c->generic = true;
        grpc_call_details_init(&c->details);
        ce = grpc_server_request_call(s->server, &c->call, &c->details, &c->md, s->cq, s->cq, c);
    }
    if (ce != GRPC_CALL_OK) {
        cuzk_log(CLOG_ERROR, "grpc: cannot request a call: error %d", (int)ce);
        call_free(c);
    }
}

/* Send the reply: initial metadata, message (when OK), status; the CQ frees c afterwards. */
static void send_reply(struct call *c, struct reply *r)
{
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n].data.send_initial_metadata.count = 0;
    n++;
    if (r->code == GRPC_STATUS_OK) {
        grpc_slice sl = grpc_slice_from_copied_buffer((const char *)r->buf, r->len);
        c->resp = grpc_raw_byte_buffer_create(&sl, 1);
        grpc_slice_unref(sl);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n].data.send_message.send_message = c->resp;
        n++;
    }
    c->status_details = grpc_slice_from_copied_string(r->code == GRPC_STATUS_OK ? "" : r->details);
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.trailing_metadata_count = 0;
    ops[n].data.send_status_from_server.status = r->code;
    ops[n].data.send_status_from_server.status_details = &c->status_details;
    n++;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n].data.recv_close_on_server.cancelled = &c->cancelled;
    n++;
    c->type = TAG_SENT;
    grpc_call_error ce = grpc_call_start_batch(c->call, ops, n, c, NULL);
    if (ce != GRPC_CALL_OK) {
        cuzk_log(CLOG_ERROR, "grpc: cannot send a reply: error %d", (int)ce);
        call_free(c);
    }
}

#define MiB (1024.0 * 1024.0)

/* A large request (RPC_LARGE_REQUEST or more) reserves RPC_PARSE_FACTOR times its size from
 * the engine's budget before its bytes are copied, and meters its decoding and parse against
 * that. false: refused (the reply says why). */
static bool request_reserve(struct rpc_server *s, uint64_t wire, struct reply *r)
{
    uint64_t n = wire * RPC_PARSE_FACTOR;
    char what[192];
    snprintf(what, sizeof what, "a request of %.1f MiB (%u times its size reserved while it is "
             "decoded and parsed)", (double)wire / MiB, RPC_PARSE_FACTOR);
    struct cuzk_error err;
    cuzk_error_clear(&err);
    int rc = engine_mem_reserve(s->e, n, what, &err);
    if (rc) {
        cuzk_log(CLOG_WARN, "request refused: %s", err.msg);
        reply_err(r, rc == CUZK_E_NOMEM ? GRPC_STATUS_RESOURCE_EXHAUSTED : code_of(rc), "%s", err.msg);
        return false;
    }
    r->reserved = n;
    r->wire = wire;
    cuzk_meter_begin(&r->meter, n, wire);   /* grpc's received copy */
    return true;
}

/* The end of a large request's decoding: its reservation goes back to the budget (a parse
 * that ran past it becomes RESOURCE_EXHAUSTED naming the budget) and its slot to the next one.
 * A Prove call releases both once its job is submitted, before it waits for the proof (holding
 * the slot through the wait let one 32 GiB PoRep Prove at a time into the engine: the GPU idled
 * between jobs). */
static void large_release(struct rpc_server *s, struct reply *r)
{
    if (r->reserved) {
        cuzk_meter_end();
        if (r->meter.over && r->code != GRPC_STATUS_OK)
            reply_err(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "a request of %.1f MiB needs more than the "
                      "%.1f MiB (%u times its size) it may take of the memory budget ([memory] "
                      "total_budget) while it is decoded and parsed: send it in smaller parts",
                      (double)r->wire / MiB, (double)r->reserved / MiB, RPC_PARSE_FACTOR);
        cuzk_log(CLOG_DEBUG, "request of %.1f MiB: decoding and parse peaked at %.1f of %.1f MiB%s",
                 (double)r->wire / MiB, (double)r->meter.peak / MiB, (double)r->reserved / MiB,
                 r->meter.over ? " (refused)" : "");
        engine_mem_release(s->e, r->reserved);
        r->reserved = 0;
    }
    if (!r->large) return;
    r->large = false;
    pthread_mutex_lock(&s->mu);
    s->large--;
    pthread_cond_signal(&s->large_cv);
    pthread_mutex_unlock(&s->mu);
    /* give the parse's freed pages back to the system: glibc keeps them otherwise
     * (2.7 GB stayed resident after two 100 MB requests) */
    malloc_trim(0);
}

static void *handler_main(void *arg)
{
    struct call *c = arg;
    struct rpc_server *s = c->srv;
    bool waiter = c->waiter;   /* c may be freed once its reply is sent */
    struct reply r;
    memset(&r, 0, sizeof r);
    r.code = GRPC_STATUS_INTERNAL;
    if (!c->m) {
        char *path = grpc_slice_to_c_string(c->details.method);
        reply_err(&r, GRPC_STATUS_UNIMPLEMENTED, "unknown method %s", path ? path : "?");
        gpr_free(path);
    } else if (!c->payload) {
        reply_err(&r, GRPC_STATUS_INVALID_ARGUMENT, "request message is missing");
    } else {
        /* Large requests are decoded a few at a time: a parse costs several times the
         * message (a 50 MB C1 is ~600 MB of JSON tree), memory the budget does not see. */
        uint64_t wire = grpc_byte_buffer_length(c->payload);
        r.large = s->max_large && wire >= RPC_LARGE_REQUEST;
        if (r.large) {
            pthread_mutex_lock(&s->mu);
            while (s->large >= s->max_large) pthread_cond_wait(&s->large_cv, &s->mu);
            s->large++;
            pthread_mutex_unlock(&s->mu);
        }
        grpc_byte_buffer_reader rd;
        if (wire >= RPC_LARGE_REQUEST && !request_reserve(s, wire, &r)) {
            /* refused: the reply says why */
        } else if (!grpc_byte_buffer_reader_init(&rd, c->payload)) {
            reply_err(&r, GRPC_STATUS_INVALID_ARGUMENT, "cannot read the request message");
        } else {
            if (r.reserved) cuzk_meter_charge((int64_t)wire);   /* readall's copy */
            r.in = grpc_byte_buffer_reader_readall(&rd);
            r.in_live = true;
            grpc_byte_buffer_reader_destroy(&rd);
            grpc_byte_buffer_destroy(c->payload);   /* r.in holds the bytes: one copy less */
            c->payload = NULL;
            if (r.reserved) cuzk_meter_charge(-(int64_t)wire);
            c->m->fn(s, c->call, c->deadline, GRPC_SLICE_START_PTR(r.in), GRPC_SLICE_LENGTH(r.in), &r);
            input_drop(&r);
        }
        large_release(s, &r);
    }
    send_reply(c, &r);
    free(r.buf);
    pthread_mutex_lock(&s->mu);
    if (waiter) s->waiters--;
    s->handlers--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static bool call_authorized(const struct rpc_server *s, const struct call *c)
{
    for (size_t i = 0; i < c->md.count; i++) {
        const grpc_metadata *m = &c->md.metadata[i];
        if (GRPC_SLICE_LENGTH(m->key) == 13 &&
            !memcmp(GRPC_SLICE_START_PTR(m->key), "authorization", 13))
            return srv_bearer_ok(s->token, (const char *)GRPC_SLICE_START_PTR(m->value),
                                 GRPC_SLICE_LENGTH(m->value));
    }
    return false;
}

/* Checks made on the completion-queue thread before a call gets a thread: the token, then the
 * cap on calls that wait for a job. false: the call was answered (and is freed by the CQ). */
static bool admit(struct rpc_server *s, struct call *c)
{
    struct reply r;
    memset(&r, 0, sizeof r);
    if (s->token && !call_authorized(s, c)) {
        char *peer = grpc_call_get_peer(c->call);
        cuzk_log(CLOG_WARN, "refused a call without a valid token: method=%s peer=%s",
                 c->m ? c->m->name : "(unregistered)", peer ? peer : "?");
        gpr_free(peer);
        /* the same answer for a missing, malformed or wrong token: nothing to learn from it */
        reply_err(&r, GRPC_STATUS_UNAUTHENTICATED, "authentication required");
        send_reply(c, &r);
        return false;
    }
    if (c->m && c->m->waits && s->max_waiters) {
        pthread_mutex_lock(&s->mu);
        bool full = s->waiters >= s->max_waiters;
        if (!full) { s->waiters++; c->waiter = true; }
        unsigned n = s->waiters;
        pthread_mutex_unlock(&s->mu);
        if (full) {
            cuzk_log(CLOG_WARN, "refused %s: %u AwaitProof/Prove calls are waiting, the limit "
                     "([daemon] %s)", c->m->name, n, s->waiters_key);
            reply_err(&r, GRPC_STATUS_RESOURCE_EXHAUSTED, "%u AwaitProof/Prove calls are already "
                      "waiting, the limit ([daemon] %s = %u): retry later, or raise it", n,
                      s->waiters_key, s->max_waiters);
            send_reply(c, &r);
            return false;
        }
    }
    return true;
}

static void *cq_main(void *arg)
{
    struct rpc_server *s = arg;
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
        if (ev.type != GRPC_OP_COMPLETE) continue;
        struct call *c = ev.tag;
        if (c->type == TAG_SHUTDOWN) {
            pthread_mutex_lock(&s->mu);
            s->shutdown_done = true;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        if (c->type == TAG_SENT) { call_free(c); continue; }
        /* a new call (or a failed request because the server is shutting down) */
        pthread_mutex_lock(&s->mu);
        bool stopping = s->stopping;
        pthread_mutex_unlock(&s->mu);
        if (!ev.success) { call_free(c); continue; }
        if (!stopping) request_call(s, c->m);
        if (!admit(s, c)) continue;
        pthread_mutex_lock(&s->mu);
        s->handlers++;
        pthread_mutex_unlock(&s->mu);
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, handler_main, c) != 0) {
            struct reply r;
            memset(&r, 0, sizeof r);
            reply_err(&r, GRPC_STATUS_RESOURCE_EXHAUSTED, "cannot start a handler thread");
            bool waiter = c->waiter;
            send_reply(c, &r);
            pthread_mutex_lock(&s->mu);
            if (waiter) s->waiters--;
            s->handlers--;
            pthread_mutex_unlock(&s->mu);
        }
        pthread_attr_destroy(&at);
    }
    return NULL;
}

static pthread_once_t grpc_once = PTHREAD_ONCE_INIT;
static void grpc_start(void) { grpc_init(); }

/* A whole PEM file as a NUL-terminated string (grpc takes PEM text, not paths). */
static char *read_pem(const char *path, struct cuzk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) { cuzk_fail(err, CUZK_E_INVALID_ARG, "cannot read %s: %s", path, strerror(errno)); return NULL; }
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!buf || !n) {
        free(buf);
        cuzk_fail(err, CUZK_E_INVALID_ARG, "%s is empty or unreadable", path);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static grpc_server_credentials *server_creds(const struct rpc_options *o, struct cuzk_error *err)
{
    if (!o->tls_cert || !o->tls_cert[0]) return grpc_insecure_server_credentials_create();
    char *cert = read_pem(o->tls_cert, err), *key = cert ? read_pem(o->tls_key, err) : NULL;
    bool mtls = o->tls_client_ca && o->tls_client_ca[0];
    char *ca = key && mtls ? read_pem(o->tls_client_ca, err) : NULL;
    grpc_server_credentials *c = NULL;
    if (key && (ca || !mtls)) {
        grpc_ssl_pem_key_cert_pair pair = {key, cert};
        c = grpc_ssl_server_credentials_create_ex(
            ca, &pair, 1,
            mtls ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                 : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE, NULL);
        if (!c) cuzk_fail(err, CUZK_E_INVALID_ARG, "grpc refused the TLS certificate or key");
    }
    if (key) memset(key, 0, strlen(key));
    free(cert); free(key); free(ca);
    return c;
}

int rpc_server_start(struct rpc_server **out, struct engine *e, const char *addr,
                     const struct rpc_options *o, struct cuzk_error *err)
{
    pthread_once(&grpc_once, grpc_start);
    uint64_t max_message = o->max_message;
    struct rpc_server *s = calloc(1, sizeof *s);
    if (!s) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    if (o->auth_token && o->auth_token[0] && !(s->token = strdup(o->auth_token))) {
        free(s);
        return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    }
    s->e = e;
    s->max_waiters = o->max_waiters;
    snprintf(s->waiters_key, sizeof s->waiters_key, "%s",
             o->max_waiters_key ? o->max_waiters_key : "max_waiters");
    s->max_large = o->max_large_requests;
    snprintf(s->addr, sizeof s->addr, "%s", addr);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_cond_init(&s->large_cv, NULL);
    grpc_arg args[3];
    memset(args, 0, sizeof args);
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = (int)max_message;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = (int)max_message;
    /* No SO_REUSEPORT: a second daemon on the same port must fail to bind, not share it. */
    args[2].type = GRPC_ARG_INTEGER;
    args[2].key = (char *)GRPC_ARG_ALLOW_REUSEPORT;
    args[2].value.integer = 0;
    grpc_channel_args ca = {3, args};
    s->server = grpc_server_create(&ca, NULL);
    s->cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(s->server, s->cq, NULL);
    for (size_t i = 0; i < N_METHODS; i++) {
        methods[i].handle = grpc_server_register_method(s->server, methods[i].name, NULL,
                                                        GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
        if (!methods[i].handle) {
            grpc_server_destroy(s->server);
            grpc_completion_queue_destroy(s->cq);
            free(s->token);
            free(s);
            return cuzk_fail(err, CUZK_E_INTERNAL, "grpc: cannot register %s", methods[i].name);
        }
    }
    grpc_server_credentials *creds = server_creds(o, err);
    int port = creds ? grpc_server_add_http2_port(s->server, addr, creds) : 0;
    if (creds) grpc_server_credentials_release(creds);
    if (port == 0) {
        bool cred_err = !creds;
        grpc_server_destroy(s->server);
        grpc_completion_queue_shutdown(s->cq);
        while (grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
               GRPC_QUEUE_SHUTDOWN) {}
        grpc_completion_queue_destroy(s->cq);
        free(s->token);
        free(s);
        if (cred_err) return err ? err->code : CUZK_E_INVALID_ARG;
        return cuzk_fail(err, CUZK_E_IO, "cannot listen on %s (address in use, bad address or "
                         "no permission)", addr);
    }
    grpc_server_start(s->server);
    for (size_t i = 0; i < N_METHODS; i++)
        for (int k = 0; k < N_PRESTART; k++) request_call(s, &methods[i]);
    request_call(s, NULL);
    if (pthread_create(&s->thread, NULL, cq_main, s) != 0) {
        grpc_server_shutdown_and_notify(s->server, s->cq, &s->shutdown_tag);
        grpc_server_cancel_all_calls(s->server);
        return cuzk_fail(err, CUZK_E_INTERNAL, "cannot start the gRPC thread");
    }
    s->thread_started = true;
    *out = s;
    return CUZK_OK;
}

void rpc_server_stop_accepting(struct rpc_server *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    if (s->stopping) { pthread_mutex_unlock(&s->mu); return; }
    s->stopping = true;
    pthread_mutex_unlock(&s->mu);
    s->shutdown_tag.type = TAG_SHUTDOWN;
    grpc_server_shutdown_and_notify(s->server, s->cq, &s->shutdown_tag);
}

void rpc_server_free(struct rpc_server *s, uint64_t timeout_ms)
{
    if (!s) return;
    rpc_server_stop_accepting(s);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += (time_t)(timeout_ms / 1000);
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) { dl.tv_sec++; dl.tv_nsec -= 1000000000L; }
    pthread_mutex_lock(&s->mu);
    int wrc = 0;
    while ((!s->shutdown_done || s->handlers) && wrc != ETIMEDOUT)
        wrc = pthread_cond_timedwait(&s->cv, &s->mu, &dl);
    bool clean = s->shutdown_done && !s->handlers;
    pthread_mutex_unlock(&s->mu);
    if (!clean) {
        cuzk_log(CLOG_WARN, "gRPC calls still open after %" PRIu64 " ms; cancelling them", timeout_ms);
        grpc_server_cancel_all_calls(s->server);
        pthread_mutex_lock(&s->mu);
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 2;
        wrc = 0;
        while ((!s->shutdown_done || s->handlers) && wrc != ETIMEDOUT)
            wrc = pthread_cond_timedwait(&s->cv, &s->mu, &dl);
        clean = s->shutdown_done && !s->handlers;
        pthread_mutex_unlock(&s->mu);
        if (!clean) return;   /* a handler is stuck; leave it to process exit */
    }
    grpc_server_destroy(s->server);
    grpc_completion_queue_shutdown(s->cq);
    if (s->thread_started) pthread_join(s->thread, NULL);
    grpc_completion_queue_destroy(s->cq);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->large_cv);
    free(s->token);
    free(s);
}
