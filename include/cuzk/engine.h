/* engine.h: the proving engine behind the daemon: jobs split into partitions, ordered queues,
 * synthesis workers, GPU (or CPU) prover workers behind one backend interface,
 * self-verification, the memory budget, the SRS cache and per-job timings. Transport-free and
 * configuration-file-free: the daemon reads its TOML and hands the engine an engine_config;
 * the gRPC and HTTP servers call this API. See docs/daemon.md ("Engine") and
 * docs/life-of-a-proof.md. */
#ifndef CUZK_ENGINE_H
#define CUZK_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/gpu.h"
#include "cuzk/nvml.h"
#include "cuzk/groth16.h"

/* Proof kinds and result statuses use the wire (cuzk.v1) numbers. */
enum engine_kind {
    ENGINE_KIND_UNSPECIFIED = 0,
    ENGINE_KIND_POREP = 1,          /* POREP_SEAL_COMMIT */
    ENGINE_KIND_SNAP = 2,           /* SNAP_DEALS_UPDATE */
    ENGINE_KIND_WINDOW_POST = 3,    /* WINDOW_POST_PARTITION */
    ENGINE_KIND_WINNING_POST = 4,   /* WINNING_POST */
    ENGINE_KIND_SYNTHETIC = 100,
    ENGINE_KIND_NI_POREP = 101      /* NI_POREP_SEAL_COMMIT: NI-PoRep C2, optionally aggregated */
};
#define ENGINE_NKINDS 6   /* dense index: porep, snap, window, winning, synthetic, ni-porep */
int engine_kind_index(int kind);               /* -1 for an unknown kind */
const char *engine_kind_name(int kind);        /* "porep-c2", ..., "synthetic" */
const char *engine_kind_label(int kind);       /* metric label: "porep_c2", ... */

enum engine_status {
    ENGINE_UNKNOWN = 0, ENGINE_COMPLETED = 1, ENGINE_FAILED = 2, ENGINE_CANCELLED = 3,
    ENGINE_TIMEOUT = 4
};
const char *engine_status_name(int status);    /* "COMPLETED", ... */

#define ENGINE_ID_MAX 128          /* job ids (request ids) are at most 127 bytes */
#define ENGINE_MAX_CONSTRAINTS (1ull << 26)
#define ENGINE_MAX_PARTITIONS 64

/* A proof request as it arrives (all pointers borrowed for the duration of engine_submit).
 * The wire's SubmitProofRequest maps onto it, both ways, in one place: request.h.
 *
 * Fields every kind shares sit at the top; what only one kind reads sits in that kind's
 * struct (porep, post, snap, synthetic), so a kind's parse reads the top and its own struct
 * only. They are named structs side by side, not a union: the mapping does not look at
 * proof_kind, every wire field has exactly one home whatever the kind, and a field a kind does
 * not read (a SNAP request's sector_number, which Curio sends) is carried and ignored, so the
 * journal stores the message as sent (docs/decisions.md, "Daemon, config and security"). */

/* POREP_SEAL_COMMIT and NI_POREP_SEAL_COMMIT (kind_porep.c; vanilla_proof is the C1 output) */
struct engine_porep_req {
    uint64_t sector_number;                     /* must be the C1's SectorNum */
    uint64_t miner_id;                          /* the prover id: replica_id is recomputed
                                                 * from it and checked against the C1's */
    bool aggregate;                             /* NI_POREP_SEAL_COMMIT only (any other kind
                                                 * is refused with it): also answer the
                                                 * SnarkPack aggregate of the partition proofs
                                                 * (verified before it is answered) */
};

/* WINDOW_POST_PARTITION and WINNING_POST (kind_post.c; vanilla_proofs are the sector proofs) */
struct engine_post_req {
    const uint8_t *randomness; size_t randomness_len;   /* 32 bytes */
    uint32_t partition_index;                   /* WindowPoSt's partition k; WinningPoSt: 0 */
};

/* SNAP_DEALS_UPDATE (kind_snap.c; vanilla_proofs are the partition proofs): the replica and
 * data commitments, 32 raw bytes each (NULL / 0 = absent) */
struct engine_snap_req {
    const uint8_t *comm_r_old; size_t comm_r_old_len;
    const uint8_t *comm_r_new; size_t comm_r_new_len;
    const uint8_t *comm_d_new; size_t comm_d_new_len;
};

/* SYNTHETIC (kind_synthetic.c; vanilla_proof is an optional 8-byte seed) */
struct engine_synthetic_req {
    uint64_t constraints;                       /* circuit size (wire: synthetic_constraints) */
    uint32_t partitions;                        /* circuits per job, 0 = 1
                                                 * (wire: synthetic_partitions) */
};

struct engine_request {
    const char *request_id;                     /* "" = the engine picks a UUID */
    int kind;                                   /* enum engine_kind */
    int priority;                               /* 0 = default for the kind, 1..4 */
    bool resumed;                               /* accepted by an earlier process (the journal's
                                                 * replay): admission bounds do not apply, a
                                                 * job once accepted is never refused */
    /* the proof type as the client names it (PoSt and Snap check their vanilla proofs
     * against it; PoRep's comes in its C1); 0 = absent */
    uint64_t registered_proof, sector_size;
    /* the vanilla input: one blob (PoRep's C1 output, SYNTHETIC's seed) or a list (PoSt's
     * sector proofs, Snap's partition proofs) */
    const uint8_t *vanilla_proof; size_t vanilla_proof_len;
    size_t n_vanilla_proofs; const uint8_t *const *vanilla_proofs; const size_t *vanilla_proofs_len;
    struct engine_porep_req porep;
    struct engine_post_req post;
    struct engine_snap_req snap;
    struct engine_synthetic_req synthetic;
};

/* The answer to a job. proof is malloc'd (engine_result_free). Timings in milliseconds:
 * queue_wait = submit -> first partition picked up; srs_load = time this job waited for its
 * SRS to load; synthesis / gpu_compute = sums over partitions; total = submit -> answer. */
struct engine_result {
    char job_id[ENGINE_ID_MAX];
    int status;                                 /* enum engine_status */
    uint8_t *proof;
    size_t proof_len;
    uint8_t *aggregate;                         /* NI-PoRep asked with aggregate: the verified
                                                 * AggregateProof bytes (malloc'd); else NULL */
    size_t aggregate_len;
    char error[CUZK_ERR_MSG_MAX];
    uint64_t queue_wait_ms, srs_load_ms, synthesis_ms, gpu_compute_ms, total_ms;
};
void engine_result_free(struct engine_result *r);

#define ENGINE_MAX_DEVICES 16          /* GPUs one engine proves on */
#define ENGINE_PATH_MAX 512
#define ENGINE_REASON_MAX (CUZK_ERR_MSG_MAX + 64)

/* Durability hooks (all optional; the daemon's job journal, cmd/cuzk-daemon/durable.c, keeps
 * SQLite out of the engine). With stage set the engine's work is durable: engine_submit
 * records a new job before it is queued, and engine_shutdown keeps unfinished jobs for the
 * next start instead of cancelling them.
 * - stage: a new job (id, kind, resolved priority, the request) is about to be accepted;
 *   make it durable and return a token. Called by engine_submit without the engine's lock,
 *   before the id is checked against existing jobs; an error refuses the request with it.
 * - discard: the staged job was not accepted after all (it joined an existing job with the
 *   same id, or was refused); called without the lock.
 * - finish: job `token` finished (COMPLETED, FAILED or CANCELLED: r); called with the
 *   engine's lock held, before any waiter is woken, so it must not call the engine and
 *   should not wait on slow I/O. Not called for jobs kept at shutdown. */
struct engine_hooks {
    void *ctx;
    int (*stage)(void *ctx, const char *job_id, int kind, int priority,
                 const struct engine_request *req, uint64_t *token, struct cuzk_error *err);
    void (*discard)(void *ctx, uint64_t token);
    void (*finish)(void *ctx, uint64_t token, const struct engine_result *r);
};

/* What the engine needs to run (the daemon maps its [memory], [gpus], [pipeline], [srs] and
 * [daemon] keys onto it). engine_config_defaults gives the daemon's built-in defaults. */
struct engine_config {
    unsigned workers_per_device;       /* prover workers per GPU; CPU provers without GPUs (>= 1) */
    unsigned synthesis_workers;        /* 0 = min(CPUs, 18); at least 2 */
    bool mem_auto;                     /* budget = MemTotal - mem_safety_margin */
    uint64_t mem_budget;               /* bytes, when !mem_auto */
    uint64_t mem_safety_margin;        /* bytes */
    uint64_t srs_min_idle_ms;          /* an unused SRS entry may be evicted after this long */
    uint64_t result_retention_ms;      /* finished results kept this long for engine_await */
    uint32_t result_retention_count;   /* and at most this many */
    uint32_t max_queued_jobs;          /* unfinished jobs accepted at once (0 = no limit);
                                        * more: CUZK_E_NOMEM naming [daemon] max_queued_jobs */
    char param_cache[ENGINE_PATH_MAX]; /* directory of .params / .shape files */
    int srs_validation;                /* enum g16_validate: checks when a .params is read */
    struct engine_hooks hooks;         /* durability (zero: jobs live in memory only) */
    /* GPU telemetry (nvml.h) for the snapshot: sample(ctx, ordinal, out) fills the figures of
     * GPU ordinal; called outside the engine lock, from the thread asking for a snapshot.
     * NULL: snapshots carry none. */
    struct engine_telemetry {
        void *ctx;
        void (*sample)(void *ctx, int ordinal, struct nvml_sample *out);
    } telemetry;
};
void engine_config_defaults(struct engine_config *c);

/* ---- the prover backend: the one interface between the engine and whatever proves ----
 * A backend has n_devices GPUs, or none (the CPU proves). The engine owns a backend from
 * engine_new on (destroy at engine_free, also when engine_new fails). Devices are numbered
 * 0 .. n_devices-1 (ordinals[d] is the GPU's number for logs and status). Each device gets
 * engine_config.workers_per_device prover workers; lock/unlock (the device's process-wide
 * mutex) bracket only the prove call and the residency calls, never the witness, the proof
 * assembly or verification, and every partition of a job is proved on one device. SRS tiers:
 * load_shape + load_pk make an entry resident in VRAM (recognised by pointer; one resident
 * key per device); unload drops what a device holds and is called, under the lock, before an
 * entry's key and shape are freed. Only prove is required; the rest may be NULL (no lock of
 * its own: the engine uses a mutex per device; no residency: the key stays in host memory).
 * Provided: engine_backend_cpu, engine_backend_gpu (gpu.h); tests fill in fake devices. */
struct engine_backend_ops {
    /* g16_backend_fn's work for device d (0 on a backend without devices). */
    int (*prove)(void *self, unsigned d, struct g16_msm_results *out, const struct g16_shape *s,
                 const struct g16_pk *pk, const struct g16_assignment *w, struct g16_timings *t,
                 struct cuzk_error *err);
    /* name and memory of device d (name "GPU N" and zeros are kept when it fails) */
    int (*info)(void *self, unsigned d, char *name, size_t name_cap, uint64_t *vram_total,
                uint64_t *vram_free);
    void (*lock)(void *self, unsigned d);
    void (*unlock)(void *self, unsigned d);
    int (*load_shape)(void *self, unsigned d, const struct g16_shape *s, struct cuzk_error *err);
    /* CUZK_E_GPU_NOMEM: does not fit (prove then streams the key from host memory) */
    int (*load_pk)(void *self, unsigned d, const struct g16_pk *pk, struct cuzk_error *err);
    void (*unload)(void *self, unsigned d);
    /* prove's work for a circuit whose key and matrices stay in host memory (the key streamed
     * per proof), beside the shape and key device d holds, which stay resident: a deadline
     * proof during a batch does not evict the batch's key. Leaves nothing of this circuit on
     * the device (no unload is owed for it). CUZK_E_GPU_NOMEM when it does not fit beside
     * them (nothing was changed: the engine then replaces the resident key, or waits until
     * its jobs are done). NULL: every circuit is made resident to be proved. */
    int (*prove_beside)(void *self, unsigned d, struct g16_msm_results *out, const struct g16_shape *s,
                        const struct g16_pk *pk, const struct g16_assignment *w, struct g16_timings *t,
                        struct cuzk_error *err);
    /* Witness prefetch: before taking the device lock a prover uploads its witness (stage) so
     * the copy runs beside the kernels of the proof that holds the lock; unstage after the
     * prove call drops a copy the call did not take. A failed stage is logged at debug level
     * only: prove then uploads the witness itself. */
    int (*stage)(void *self, unsigned d, const struct g16_shape *s, const struct g16_assignment *w,
                 struct cuzk_error *err);
    void (*unstage)(void *self, unsigned d, const struct g16_shape *s,
                    const struct g16_assignment *w);
    /* Page-lock / unlock host memory (process-wide, not per device). A key that does not fit
     * in VRAM is pinned once, so each proof's upload is a direct DMA rather than copies through
     * staging buffers by the CPU pool (tier "pinned"); when pinning fails (RLIMIT_MEMLOCK) that
     * is logged once and the key stays pageable (tier "host"). */
    int (*host_pin)(void *self, void *p, size_t bytes, struct cuzk_error *err);
    void (*host_unpin)(void *self, void *p);
    /* Page-locked host memory the backend holds now and at its highest (its pinned key,
     * staging chunks and witness buffers); NULL: none. */
    void (*host_pinned)(void *self, uint64_t *now, uint64_t *peak);
    /* The subgroup checks of a FULL key validation (g16_point_checker; NULL: the CPU's). */
    int (*check_g1)(void *self, const g1_aff_t *pts, size_t n, bool subgroup, size_t *bad,
                    struct cuzk_error *err);
    int (*check_g2)(void *self, const g2_aff_t *pts, size_t n, bool subgroup, size_t *bad,
                    struct cuzk_error *err);
    /* close the devices and free self (engine_free) */
    void (*destroy)(void *self);
    /* load_pk keeps a copy of the key on the device (the real GPU backend): once every device
     * holds an entry's key, the engine frees the host copy (the GPU provers never read it) and
     * reads it again from its .params file if a device needs to upload or stream it later. */
    bool load_pk_copies;
};

struct engine_backend {
    const struct engine_backend_ops *ops;
    void *self;
    unsigned n_devices;                        /* 0: CPU provers */
    int ordinals[ENGINE_MAX_DEVICES];
    char cpu_reason[ENGINE_REASON_MAX];        /* n_devices == 0: why the CPU proves */
};

/* The CPU prover (g16_backend_cpu), no devices; reason is what status and the log say. */
void engine_backend_cpu(struct engine_backend *out, const char *reason);

/* GPUs through gpu.h (the CUDA library in a `make daemon-gpu` build, the stub that answers
 * CUZK_E_NO_GPU otherwise). */
struct engine_gpu_config {
    const int *devices;                        /* [gpus] devices: ordinals to use */
    unsigned n_devices;                        /* 0: every GPU found, else the CPU */
    unsigned workers_per_device;               /* for the startup log line */
    struct gpu_options options;                /* set on every context right after it opens */
};
/* With no devices listed, every GPU found gets a context (one that cannot be opened is
 * skipped with a warning) and none found gives the CPU backend, saying why. With devices
 * listed each must open, or this fails naming the device and the reason (an operator who asked
 * for a GPU never silently gets the CPU). *out is a CPU backend when this fails. */
int engine_backend_gpu(struct engine_backend *out, const struct engine_gpu_config *c,
                       struct cuzk_error *err);

struct engine;

/* Create and start the engine (workers running when it returns). cfg and *be are copied; be
 * NULL is the CPU backend. The engine owns be->self from here on, also on failure. */
struct engine *engine_new(const struct engine_config *cfg, const struct engine_backend *be,
                          struct cuzk_error *err);
/* Stop: refuse new work; jobs whose every unfinished partition is on a prover may finish
 * within grace_ms; the other unfinished jobs (and those still running after the grace) are
 * kept for the next start when the hooks make the engine durable (their waiters get
 * CUZK_E_CANCELLED "... kept ...", the finish hook is not called), else cancelled (waiters
 * get CANCELLED "daemon shutting down"). Every waiter is answered. */
void engine_shutdown(struct engine *e, uint64_t grace_ms);
/* After engine_shutdown. Workers still stuck in a kernel past the grace are abandoned. */
void engine_free(struct engine *e);

/* Queue a job. CUZK_E_INVALID_ARG (reason in err) for a malformed request, CUZK_E_BUSY when
 * shutting down, the stage hook's error when it cannot make the job durable. A request_id that names a queued, running or completed job returns that
 * job (idempotent, *existing = true); one that names a failed or cancelled job starts anew. */
int engine_submit(struct engine *e, const struct engine_request *req, char job_id[ENGINE_ID_MAX],
                  uint32_t *queue_position, bool *existing, struct cuzk_error *err);
/* Memory outside jobs (a request while it is decoded and parsed) counted in the budget:
 * reserve n bytes, evicting idle SRS entries and waiting for memory that running work gives
 * back (ahead of partitions). CUZK_E_NOMEM at once, naming [memory] total_budget and what,
 * when n exceeds the whole budget; CUZK_E_CANCELLED when the engine stops while waiting.
 * Every successful reserve is matched by one engine_mem_release of the same n. */
int engine_mem_reserve(struct engine *e, uint64_t n, const char *what, struct cuzk_error *err);
void engine_mem_release(struct engine *e, uint64_t n);
/* Wait for a job (timeout_ms 0 = no limit); on expiry out->status = ENGINE_TIMEOUT and the job
 * keeps running. CUZK_E_NOT_FOUND for an unknown id. */
int engine_await(struct engine *e, const char *job_id, uint64_t timeout_ms,
                 struct engine_result *out, struct cuzk_error *err);
/* A job finished by an earlier process (the daemon's journal, after a restart): engine_await
 * answers r (copied; r->job_id is the id) and engine_submit treats the id as it treats a job
 * finished here (a COMPLETED one is joined, a FAILED or CANCELLED one replaced; a new job's
 * token is then its own). finished_ago_ms: how long ago it finished, for result_retention.
 * Not counted in the proof counters. CUZK_E_BUSY if the id is already known. */
int engine_restore(struct engine *e, int kind, int priority, const struct engine_result *r,
                   uint64_t finished_ago_ms, struct cuzk_error *err);
/* A job an earlier process accepted and the daemon's journal lost (journal_lost): while no job
 * has this id, engine_await and engine_cancel answer CUZK_E_NOT_FOUND saying that the journal
 * lost it and why, so its client knows to submit it again. CUZK_E_NOMEM. */
int engine_note_lost(struct engine *e, const char *job_id, const char *why);
/* Cancel: queued partitions are dropped, running ones finish and are discarded, waiters get
 * CANCELLED. *was_running: a partition was being synthesized or proved. NOT_FOUND if unknown. */
int engine_cancel(struct engine *e, const char *job_id, bool *was_running,
                  struct cuzk_error *err);

/* SRS cache. Circuit ids: "porep-2k", "porep-8m", "porep-512m", "porep-32g", "porep-64g"
 * and the same sizes of "snap-…" (v28 .params in srs.param_cache, the shape from the .shape
 * next to it or built once and saved there), "wpost-32g", "winning-32g" (files in
 * srs.param_cache) and "synthetic-<N>" (file synthetic-<N>.params there, else generated in memory by a local
 * setup). Evict fails with CUZK_E_BUSY, saying why, while
 * jobs use the entry. */
int engine_preload(struct engine *e, const char *circuit_id, bool *already_loaded,
                   uint64_t *load_ms, struct cuzk_error *err);
int engine_evict(struct engine *e, const char *circuit_id, bool *was_loaded,
                 uint64_t *freed_bytes, struct cuzk_error *err);

/* ---- snapshot for GetStatus, /status and /metrics ---- */
enum engine_part_state {
    PART_PENDING, PART_SYNTHESIZING, PART_SYNTH_DONE, PART_PROVING, PART_DONE, PART_FAILED,
    PART_DROPPED
};
const char *engine_part_state_name(int state);   /* "pending", "synthesizing", ... */

struct engine_part_snap { uint32_t index; int state; uint64_t synth_ms, gpu_ms; };
struct engine_job_snap {
    char id[ENGINE_ID_MAX];
    int kind, priority, status;            /* status ENGINE_UNKNOWN while not finished */
    bool running;                          /* some partition has been picked up */
    uint64_t age_ms;
    uint32_t n_parts, parts_done;
    struct engine_part_snap *parts;
};
struct engine_worker_snap {
    unsigned id;
    int gpu_ordinal;                       /* -1: CPU prover */
    bool busy;
    char job_id[ENGINE_ID_MAX];
    int kind;
    int partition;
    uint64_t busy_ms;
};
struct engine_gpu_snap {
    int ordinal;
    char name[96];
    uint64_t vram_total, vram_free;
    unsigned workers, busy;
    char current_job[ENGINE_ID_MAX];
    int current_kind;
    bool has_telemetry;                    /* engine_config.telemetry is set */
    struct nvml_sample telemetry;
};
struct engine_srs_snap {
    char circuit_id[64];
    const char *tier;                      /* "vram" | "pinned" | "host" | "loading" */
    bool host_key;                         /* the key's points are also in host memory */
    uint32_t vram_mask;                    /* bit d: resident on snapshot gpus[d] */
    uint64_t bytes, load_ms, idle_ms;
    unsigned refs;
    bool evictable;
};
struct engine_kind_stats {
    uint64_t completed, failed, cancelled;
    uint32_t pending_jobs, running_jobs, pending_parts;
    uint32_t pending_by_priority[5];       /* queued jobs by priority (1 LOW .. 4 CRITICAL) */
    double duration_sum_s;                 /* over the last <= 1000 completed proofs */
    uint64_t duration_count;
};
/* A job that finished lately (newest first), with where its time went. Phases are [start, end)
 * offsets from the submit in milliseconds, over all partitions (first start, last end; the
 * partitions overlap); ran is false for a phase that never ran. */
#define ENGINE_RECENT 32
struct engine_phase_span { bool ran; uint64_t start_ms, end_ms; };
struct engine_recent_snap {
    char id[ENGINE_ID_MAX];
    int kind, status;
    uint32_t n_parts;
    int64_t finished_unix_ms;              /* wall clock (CLOCK_REALTIME) */
    uint64_t total_ms, queue_ms, srs_wait_ms;
    struct engine_phase_span synthesis, gpu, verify;
};
/* A job that failed lately (newest first), with the reason it was given. */
#define ENGINE_ERRORS 64
struct engine_error_snap {
    int64_t unix_ms;
    char job_id[ENGINE_ID_MAX];
    int kind;
    char message[CUZK_ERR_MSG_MAX + 64];
};
/* An SRS entry being loaded and how far its key read is. phase NULL: not reading the key file
 * yet (the shape, or a key made in memory); then done and total are 0. */
struct engine_loading_snap {
    char circuit_id[64];
    const char *phase;                     /* "reading and checking", "reading", "checking" */
    uint64_t bytes_done, bytes_total, elapsed_ms;
};
struct engine_snapshot {
    uint64_t uptime_ms;
    uint64_t mem_total, mem_used;
    uint64_t host_pinned, host_pinned_peak;   /* page-locked host bytes: now, highest */
    uint64_t completed, failed, cancelled;
    uint32_t queue_depth;                  /* jobs not finished and not yet running */
    uint32_t running_jobs;
    unsigned synth_workers, synth_active;
    struct engine_kind_stats kinds[ENGINE_NKINDS];
    struct engine_job_snap *jobs; size_t n_jobs;           /* unfinished + finished < 30 s */
    struct engine_worker_snap *workers; size_t n_workers;
    struct engine_gpu_snap *gpus; size_t n_gpus;
    struct engine_srs_snap *srs; size_t n_srs;
    const char *prover;                    /* "gpu" or "cpu" */
    const char *cpu_reason;                /* why the CPU proves ("" on GPUs) */
    const char *validation;                /* [srs] validation: "full" | "curve" | "none" */
    struct engine_recent_snap *recent; size_t n_recent;
    struct engine_error_snap *errors; size_t n_errors;
    struct engine_loading_snap *loading; size_t n_loading;
};
int engine_snapshot(struct engine *e, struct engine_snapshot *out, struct cuzk_error *err);
void engine_snapshot_free(struct engine_snapshot *s);

#endif
