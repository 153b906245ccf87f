/* engine_internal.h: state shared by the engine's files. One mutex (engine.mu) guards all of
 * it. Files: engine.c (lifecycle and the public entry points), queue.c (the partition
 * queues), jobs.c (the job table and job states), workers.c (the worker threads and the device
 * turn), snapshot.c (the status snapshot), kinds.c (the proof-kind registry) and
 * one kind_<name>.c per proof kind, srs.c (the SRS cache, generic), budget.c (the memory
 * budget), devices.c (the per-device lock, residency and tiers over the backend),
 * backend_cpu.c / backend_gpu.c (the provided backends). docs/life-of-a-proof.md walks a
 * request through them. */
#ifndef CUZK_ENGINE_INTERNAL_H
#define CUZK_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cuzk/engine.h"
#include "cuzk/groth16.h"
#include "cuzk/progress.h"

struct engine;
struct job;
struct part;
struct kind_def;

/* ---- SRS cache entry: shape + proving key + prepared verifying key of one circuit ---- */
enum srs_state { SRS_LOADING, SRS_READY };
struct srs_entry {
    struct srs_entry *next;
    char id[64];
    int state;
    const struct kind_def *kind;    /* the proof kind whose circuit this is (it loads it) */
    uint64_t arg;                   /* the kind's circuit parameter from the id (PoRep: sector
                                     * size; synthetic: constraints; see the kind's srs_match) */
    bool has_shape;
    struct g16_shape shape;
    struct g16_pk pk;
    struct g16_pvk *pvk;
    uint64_t bytes;                 /* reserved from the budget while loaded */
    int load_prio;                  /* priority of the job whose partition loads it (the
                                     * budget serves its reservation in that order) */
    unsigned refs;                  /* partitions in flight + loaders */
    uint64_t last_used_ns, load_ns;
    /* GPU residency (engine device indexes; written under the device lock and e->mu, read
     * under e->mu): vram_mask, the key is resident (tier "vram"); dev_mask, something of this
     * entry (shape or key) may be on the device, so it must be unloaded there before the
     * entry is freed; stream_logged, "does not fit" was logged for the device. */
    uint32_t vram_mask, dev_mask, stream_logged;
    /* bit d: a proof of this entry beside device d's resident key did not fit (ops
     * prove_beside); cleared when d's resident key changes */
    uint32_t beside_nofit;
    /* host key page-locked for direct DMA (tier "pinned"); pin_tried: claimed by one device's
     * worker (under e->mu) so the key is pinned at most once */
    bool pinned, pin_tried;
    /* the key's points were freed from host memory (every device holds them: ops
     * load_pk_copies); key_path, its .params file, to read them again (empty: made in memory,
     * never released) */
    bool key_released;
    char key_path[ENGINE_PATH_MAX + 300];
    uint8_t key_digest[16];         /* of the file at its first read (valid with key_path) */
    /* the first read of the key file (srs_read_params): its phase and bytes, which the status
     * snapshot reads (atomics only) while the entry is SRS_LOADING */
    struct cuzk_progress load_pr;
};

/* ---- memory budget (budget.c) ----
 * One number of bytes (budget_init: [memory] total_budget, or MemTotal - safety_margin) that
 * every large allocation reserves first: SRS entries while loaded, partitions' working sets
 * (witness + proving) from before synthesis until after proving (released in two steps). */
void budget_init(struct engine *e, const struct engine_config *c);
/* e->mu held. Blocks until n fits (evicting idle SRS entries, which drops e->mu meanwhile)
 * and no reservation of a higher priority than prio waits (the budget is granted in priority
 * order: a NORMAL partition that would fit does not take the memory a waiting CRITICAL one
 * needs); CUZK_E_NOMEM at once if n exceeds the whole budget, CUZK_E_CANCELLED on shutdown.
 * With who (a partition a synthesis worker holds) the wait also ends, CUZK_E_BUSY, when a
 * partition of a higher priority waits in the synthesis queue and no synthesis worker is idle:
 * the caller then gives its partition back and takes that one. */
struct qitem;
int budget_reserve(struct engine *e, uint64_t n, int prio, const struct qitem *who,
                   struct cuzk_error *err);
/* e->mu held. Counts n at once even beyond the budget (a key read back from its file under a
 * device lock must not wait for partitions that need that lock); warns when over. */
void budget_force(struct engine *e, uint64_t n);
void budget_release(struct engine *e, uint64_t n);   /* e->mu held; wakes waiters */
/* Working-set estimate of one partition of shape s: the witness, and a/b/c + h for proving. */
void budget_partition(const struct g16_shape *s, uint64_t *witness, uint64_t *prove);
/* CUZK_E_NOMEM, saying by how much, when an SRS of srs_bytes plus a working set could never
 * fit the budget (the partition fails now instead of waiting for memory that cannot come). */
int budget_fits(const struct engine *e, uint64_t srs_bytes, uint64_t working,
                struct cuzk_error *err);

/* ---- SRS cache (srs.c): generic; the kinds load their circuits' entries ---- */
/* Take a reference on a ready entry, loading it first if needed (e->mu NOT held); a load's
 * budget reservations wait in the order of prio (the job's priority). *waited_ns: how long
 * this caller waited for a load (its own or another's). */
int srs_acquire(struct engine *e, const char *id, int prio, struct srs_entry **out,
                uint64_t *waited_ns, bool *was_loaded, struct cuzk_error *err);
void srs_release(struct engine *e, struct srs_entry *s);   /* e->mu NOT held */
/* Remove an idle entry (e->mu NOT held); CUZK_E_BUSY naming the users if referenced. */
int srs_evict(struct engine *e, const char *id, bool *was_loaded, uint64_t *freed,
              struct cuzk_error *err);
/* Unlink least recently used idle entries worth at least `need` bytes (e->mu held) into the
 * list *victims (chained by next) and return their bytes, still reserved: the caller frees
 * them with srs_free_list without the lock (a GPU unload may wait for a kernel), then
 * releases the bytes. */
uint64_t srs_evict_lru(struct engine *e, uint64_t need, struct srs_entry **victims);
void srs_free_list(struct engine *e, struct srs_entry *victims);   /* e->mu NOT held */
void srs_free_all(struct engine *e);
/* Helpers for the kinds' srs_load hooks (e->mu NOT held). srs_charge reserves bytes from the
 * budget for x (added to x->bytes, released when x goes). */
int srs_charge(struct engine *e, struct srs_entry *x, uint64_t bytes, struct cuzk_error *err);
bool srs_file_size(const char *path, uint64_t *size);     /* false: no such regular file */
/* Read a .params file into x->pk with [srs] validation and the digest cache, and log how. */
/* The host copy of x's key points (ops load_pk_copies): srs_key_release frees it once every
 * device holds the key (e->mu not held; a no-op for keys made in memory, pinned keys, or
 * while a device lacks it); srs_key_reload reads it back from x->key_path, refusing a file
 * whose digest changed since the first load (device lock held, e->mu not held). */
void srs_key_release(struct engine *e, struct srs_entry *x);
int srs_key_reload(struct engine *e, struct srs_entry *x, struct cuzk_error *err);
int srs_read_params(struct engine *e, struct srs_entry *x, const char *path,
                    struct cuzk_error *err);
/* A Filecoin circuit's entry: param_cache/<v28 stem>.params, its shape from the .shape next to
 * it (checked against the circuit's counts) or built once and saved there, the key checked
 * against the shape; all charged to the budget. */
struct fil_circuit;
int srs_load_circuit(struct engine *e, struct srs_entry *x, const struct fil_circuit *c,
                     struct cuzk_error *err);
/* A key with no circuit here: param_cache/<file>, charged its file size. */
int srs_load_file(struct engine *e, struct srs_entry *x, const char *file, struct cuzk_error *err);
uint64_t srs_shape_bytes(const struct g16_shape *s);      /* memory of a loaded shape */
uint64_t srs_pk_bytes(const struct g16_shape *s);         /* of a proving key for s */
/* CUZK_E_FORMAT naming path when a key read from a file does not fit the circuit s. */
int srs_pk_matches(const struct g16_pk *pk, const struct g16_shape *s, const char *path,
                   struct cuzk_error *err);
/* "vram", "pinned", "host" or "loading" (e->mu held). */
const char *srs_tier(const struct srs_entry *s);

/* ---- proof kinds (kinds.c: the registry table; kind_<name>.c: one file per kind) ----
 * Adding a kind: a kind_<name>.c defining its struct kind_def, and its row in kinds.c.
 * parse turns a request into partitions and a circuit id (and may keep what it parsed in
 * j->input); CUZK_E_INVALID_ARG for malformed requests, CUZK_E_UNSUPPORTED for kinds whose
 * circuits are not built in (the job then FAILS with that message). witness runs in a
 * synthesis worker (lock not held): it fills pt->inputs and pt->aux for the SRS's shape and,
 * where the kind can recompute them from the request, the public inputs pt->pub that
 * self-verification checks the proof against. free_input frees j->input. srs_match says
 * whether a circuit id is this kind's (CUZK_E_NOT_FOUND: it is not; another error: it is,
 * malformed) and gives its parameter; srs_load fills a new entry (shape, key) and charges
 * the budget through srs_charge (e->mu NOT held); the cache then prepares the verifying key. */
struct kind_def {
    int kind;                       /* enum engine_kind */
    const char *name, *label;       /* engine_kind_name / engine_kind_label */
    int default_priority;
    int (*parse)(struct job *j, const struct engine_request *r, struct cuzk_error *err);
    int (*witness)(const struct job *j, uint32_t p, struct part *pt, const struct srs_entry *s,
                   struct cuzk_error *err);
    void (*free_input)(void *input);
    const char *circuit_ids;        /* for messages: "porep-2k, porep-8m, ..." */
    int (*srs_match)(const char *id, uint64_t *arg, struct cuzk_error *err);
    int (*srs_load)(struct engine *e, struct srs_entry *x, struct cuzk_error *err);
};
extern const struct kind_def kind_porep, kind_snap, kind_window_post, kind_winning_post,
    kind_synthetic, kind_ni_porep;
/* The registry row of a wire kind (NULL if unknown) and its dense index (engine_kind_index). */
const struct kind_def *kind_get(int kind);
/* The kind a circuit id belongs to and its parameter; CUZK_E_INVALID_ARG for an unknown or
 * malformed id, naming the ids that exist. */
int kind_for_circuit(const char *id, const struct kind_def **k, uint64_t *arg,
                     struct cuzk_error *err);

/* A queued partition. Heap order: priority (high first), then job seq, then partition. */
struct job;
struct qitem { struct job *job; uint32_t part; };
struct pqueue { struct qitem *v; size_t n, cap; };

/* ---- the partition queues (queue.c; e->mu held) ---- */
bool q_before(const struct qitem *a, const struct qitem *b);   /* a ahead of b in heap order */
void q_sift_down(struct pqueue *q, size_t i);
int q_push(struct pqueue *q, struct job *j, uint32_t part);   /* CUZK_E_NOMEM: q cannot grow */
struct qitem q_pop(struct pqueue *q);                          /* q not empty */
uint32_t q_remove_job(struct pqueue *q, const struct job *j);
bool q_move_job(struct pqueue *dst, struct pqueue *src, struct job *j);
struct qitem q_take_at(struct pqueue *q, size_t i);

/* ---- devices (devices.c): the per-device lock, SRS residency and the prove call ---- */
/* The backend call of one partition on engine device d, for g16_prove (ctx = this struct):
 * on a device, stages the witness, takes the device lock, makes the entry resident, runs the
 * backend's prove and unlocks; on the CPU backend, just its prove. */
struct dev_call {
    struct engine *e;
    unsigned dev, worker, part;
    struct srs_entry *srs;
    const char *job_id;
    struct worker *w;
    struct job *job;
    bool turn;                      /* holds the device turn (dev_turn_acquire) */
    bool deferred;                  /* dev_backend did not prove: the partition waits for the
                                     * device's resident key to be free (dev_must_wait) */
};
int dev_backend(struct g16_msm_results *out, const struct g16_shape *s, const struct g16_pk *pk,
                const struct g16_assignment *w, void *dev_call, struct g16_timings *t,
                struct cuzk_error *err);
/* Device dev's telemetry after partition `part` of job_id left it (TIMELINE GPU_STATE), so a
 * slow partition can be told apart from a throttled or shared card; no-op without a GPU or a
 * telemetry callback. The worker calls it last, once the partition's proof is verified and
 * handed over, outside every lock: a fresh NVML sample takes ~40 ms (two 20 ms PCIe windows;
 * reused for a second), which the next partition on the device, the partition's answer and
 * its gpu_compute_ms would otherwise wait for or count. */
void dev_gpu_state(struct engine *e, unsigned dev, const char *job_id, unsigned part);
/* Witness prefetch before the device turn: stage w on c's device (its upload runs beside the
 * kernels of the partition that holds the device); unstage drops a copy no call took. */
void dev_stage(struct engine *e, const struct dev_call *c, const struct g16_shape *s,
               const struct g16_assignment *w);
void dev_unstage(struct engine *e, const struct dev_call *c, const struct g16_shape *s,
                 const struct g16_assignment *w);
/* The device turn (workers.c; e->mu NOT held): one prover at a time runs the backend on a
 * device, and the turn goes to the waiting prover whose partition is first in (priority, job,
 * partition) order, whenever it asked. With may_yield, CUZK_E_BUSY instead when a partition
 * of a higher priority is queued for the device and no prover is idle to take it: the caller
 * then gives its partition back to the queue and takes that one (a NORMAL witness staged ahead
 * never holds the device from a CRITICAL partition). */
int dev_turn_acquire(struct engine *e, struct worker *w, struct job *j, uint32_t part, bool may_yield);
void dev_turn_release(struct engine *e, unsigned d);
/* Must a partition of job j with entry s wait before it is proved on device d? (e->mu held)
 * Yes while s's key is not resident on d, another entry's key is, that key cannot be kept by
 * proving s beside it (no ops prove_beside, or it did not fit: beside_nofit), and a job that
 * ranks before j (priority, then submit order) still has partitions of that key on d that
 * hold their memory (synthesizing, queued or proving), which finish without more memory, so
 * the wait always ends. A job that ranks first replaces the key instead: a deadline proof
 * never waits for a batch. */
bool dev_must_wait(const struct engine *e, unsigned d, const struct job *j, const struct srs_entry *s);
/* Upload entry s to every device (PreloadSRS); failures only log (the host copy serves). */
void dev_upload_all(struct engine *e, struct srs_entry *s);
/* Drop whatever of s the devices hold (before s is freed). e->mu NOT held. */
void dev_unload_entry(struct engine *e, struct srs_entry *s);
/* Unpin a pinned entry's host key (before it is freed). */
void dev_unpin_entry(struct engine *e, struct srs_entry *s);

/* ---- history (history.c): recent proofs with their phases, recent errors, loads ---- */
enum { HIST_SYNTH, HIST_GPU, HIST_VERIFY, HIST_PHASES };
struct job;
/* Partition work of a phase ran [t0, t1) (cuzk_now_ns; e->mu held). */
void history_span(struct job *j, int phase, uint64_t t0, uint64_t t1);
/* Job j just finished (e->mu held): into the recent ring, and the error ring if it failed. */
void history_record(struct engine *e, const struct job *j);
/* The rings and the loading entries into a snapshot (e->mu held); CUZK_E_NOMEM. */
int history_snapshot(struct engine *e, struct engine_snapshot *out, uint64_t now_ns,
                     struct cuzk_error *err);

/* ---- jobs ---- */
enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct part {
    int state;                      /* enum engine_part_state */
    uint64_t seed;                  /* the kind's instance (synthetic: witness seed) */
    uint64_t synth_ns, gpu_ns;
    fr_t *inputs, *aux;             /* witness, between synthesis and proving */
    fr_t *pub;                      /* public inputs recomputed from the request (ONE excluded)
                                     * that self-verification uses; NULL = the witness's own */
    size_t n_pub;
    struct srs_entry *srs;          /* reference held while in flight */
    uint64_t mem_prove, mem_witness;   /* reserved bytes, released in two steps */
};

struct job {
    struct job *hnext;              /* hash chain (absent once orphaned) */
    struct job *prev, *next;        /* all jobs, in submit order */
    uint64_t seq;                   /* unique; orders equal-priority work FIFO */
    char id[ENGINE_ID_MAX];
    int kind, priority, state;
    bool orphan;                    /* replaced by a resubmission; freed when refs == 0 */
    bool kept;                      /* stopped unfinished at shutdown, kept by the durability
                                     * hooks for the next start (state JOB_DONE, no result) */
    uint64_t token;                 /* the stage hook's token (0: not durable) */
    unsigned refs;                  /* waiters + partitions in flight */
    char circuit_id[64];
    void *input;                    /* the kind's parsed request (PoRep: struct fil_c1), shared
                                     * read-only by the synthesis workers; freed once no
                                     * partition can need it any more (job_input_release) */
    uint32_t n_parts, parts_done, parts_queued, parts_running;
    struct part *parts;
    int dev;                        /* engine device index proving every partition; -1 until
                                     * a GPU worker picks the first one (and on CPUs) */
    uint8_t *proof;                 /* n_parts * 192 bytes, filled in partition order */
    /* SnarkPack aggregation (set by the kind's parse; aggregate.c): agg_pub, n_parts rows of
     * agg_n_pub recomputed public inputs, row p copied from part p's pub once it verified;
     * agg_include, the transcript include; agg_bytes, the verified aggregate until the job
     * finishes (then result.aggregate) */
    bool aggregate;
    uint8_t agg_include[32];
    fr_t *agg_pub;
    size_t agg_n_pub;
    uint8_t *agg_bytes;
    size_t agg_len;
    uint64_t submit_ns, start_ns, done_ns, srs_wait_ns;
    uint64_t span_ns[HIST_PHASES][2];   /* first start, last end of each phase (history.c) */
    struct engine_result result;    /* valid when state == JOB_DONE */
    pthread_cond_t cv;              /* signalled when the job finishes */
};

struct worker {
    struct engine *e;
    pthread_t thread;
    unsigned id;
    bool prover;
    int gpu_ordinal;                /* -1 = CPU */
    unsigned dev;                   /* engine device index (be.ordinals, dev_mu, dev_q) */
    bool busy;
    char job_id[ENGINE_ID_MAX];
    int kind, partition;
    uint64_t busy_since_ns;
    /* waiting for its device's turn with this partition (dev_turn_acquire) */
    bool turn_wait;
    struct qitem turn_item;
};

#define DUR_RING 1000
struct kind_counters {
    uint64_t completed, failed, cancelled;
    double dur[DUR_RING];
    uint64_t n_dur;
};

struct engine {
    pthread_mutex_t mu;
    struct engine_config cfg;
    uint64_t start_ns;
    bool stopping;                  /* no new work; queues drained */
    /* jobs */
    struct job *buckets[1024];
    struct job *head, *tail;
    uint64_t next_seq;
    uint32_t n_done;                /* finished jobs still retained */
    struct pqueue synth_q, prove_q;
    pthread_cond_t synth_cv, prove_cv, drain_cv;
    uint32_t parts_in_flight;       /* picked up by a worker, not yet finished */
    /* workers */
    struct worker *workers;
    unsigned n_workers, n_synth, n_live;
    struct engine_backend be;       /* owned; be.cpu_reason: why the CPU proves ("" with GPUs) */
    bool have_gpu;                  /* be.n_devices > 0 */
    pthread_mutex_t dev_mu[ENGINE_MAX_DEVICES];  /* when the backend has no lock of its own */
    struct pqueue dev_q[ENGINE_MAX_DEVICES];     /* synthesized partitions of jobs bound to a GPU */
    unsigned n_dev;
    /* memory budget */
    uint64_t mem_total, mem_used;
    pthread_cond_t mem_cv;
    struct mem_waiter *mem_waiters;   /* reservations waiting for memory (budget.c) */
    /* the device turn (workers.c dev_turn_acquire): held by the one prover running the backend
     * on the device; granted in (priority, job, partition) order, not in order of asking */
    bool dev_busy[ENGINE_MAX_DEVICES];
    /* SRS cache */
    struct srs_entry *srs;
    pthread_cond_t srs_cv;
    /* counters */
    struct kind_counters kc[ENGINE_NKINDS];
    /* history.c: rings of the last finished jobs and failures, n_* counting all ever added */
    struct engine_recent_snap recent[ENGINE_RECENT];
    struct engine_error_snap errors[ENGINE_ERRORS];
    uint64_t n_recent, n_errors;
    /* the inner-product SRS for aggregation (aggregate.c), loaded once on first use */
    pthread_mutex_t agg_mu;
    struct agg_srs *agg_srs;
    /* ids the daemon's journal acknowledged and lost (engine_note_lost), newest first */
    struct lost_id *lost;
};

#define NS_PER_MS 1000000ull
/* Nanoseconds to milliseconds, rounded to the nearest. */
static inline uint64_t ns_to_ms(uint64_t ns) { return (ns + NS_PER_MS / 2) / NS_PER_MS; }

/* An id engine_note_lost named. */
struct lost_id {
    struct lost_id *next;
    char id[ENGINE_ID_MAX];
    char why[200];
};

/* ---- jobs (jobs.c; e->mu held unless noted) ---- */
unsigned job_id_hash(const char *s);   /* the e->buckets index of an id */
struct job *job_find(struct engine *e, const char *id);
int job_not_found(struct engine *e, const char *id, struct cuzk_error *err);
void job_unhash(struct engine *e, struct job *j);
void job_input_release(struct job *j);
void job_discard(struct job *j);                      /* a job that never entered the engine */
void job_refuse(struct engine *e, struct job *j);     /* e->mu NOT held */
void job_destroy(struct engine *e, struct job *j);
void job_retention_gc(struct engine *e);
void job_finish(struct engine *e, struct job *j, int status, const char *error);
void job_keep(struct engine *e, struct job *j);

/* ---- workers (workers.c) ---- */
void *worker_main(void *arg);   /* the thread of one struct worker (engine_new starts them) */

/* The bit of every device (vram_mask, dev_mask). */
static inline uint32_t dev_all_mask(const struct engine *e) { return e->n_dev >= 32 ? UINT32_MAX : (1u << e->n_dev) - 1; }

/* ---- aggregation (aggregate.c) ----
 * Aggregate job j's partition proofs (every partition done and verified; e->mu NOT held,
 * on the calling CPU thread): the inner-product SRS (param_cache/v28-fil-inner-product-v1.srs,
 * loaded once), agg_prove with j->agg_include, then agg_verify of the serialized bytes against
 * the job's verifying key and j->agg_pub. On success *out (malloc'd) holds the bytes. */
int engine_aggregate_job(struct engine *e, const struct job *j, uint8_t **out, size_t *out_len,
                         struct cuzk_error *err);
/* CUZK_OK if the SRS is loaded or its file readable; else CUZK_E_NOT_FOUND naming the path and
 * how to make a local one (engine_submit then fails the job at once, before any proof). */
int engine_aggregate_ready(struct engine *e, struct cuzk_error *err);
void engine_aggregate_free(struct engine *e);

#endif
