/* engine_internal.h: state shared by the engine's files (jobs and workers in engine.c, the SRS
 * cache and memory budget in srs.c). One mutex (engine.mu) guards all of it. */
#ifndef CUZK_ENGINE_INTERNAL_H
#define CUZK_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cuzk/circuits.h"
#include "cuzk/engine.h"
#include "cuzk/groth16.h"

/* ---- SRS cache entry: shape + proving key + prepared verifying key of one circuit ---- */
enum srs_state { SRS_LOADING, SRS_READY };
struct srs_entry {
    struct srs_entry *next;
    char id[64];
    int state;
    bool synthetic;
    struct synth_params sp;         /* synthetic circuits */
    uint64_t porep_size;            /* PoRep circuits ("porep-2k" ...): sector size, else 0 */
    bool has_shape;
    struct g16_shape shape;
    struct g16_pk pk;
    struct g16_pvk *pvk;
    uint64_t bytes;                 /* reserved from the budget while loaded */
    unsigned refs;                  /* partitions in flight + loaders */
    uint64_t last_used_ns, load_ns;
    /* GPU residency (engine device indexes; written under the device lock and e->mu, read
     * under e->mu): vram_mask, the key is resident (tier "vram"); dev_mask, something of this
     * entry (shape or key) may be on the device, so it must be unloaded there before the
     * entry is freed; stream_logged, "does not fit" was logged for the device. */
    uint32_t vram_mask, dev_mask, stream_logged;
    /* host key page-locked for direct DMA (tier "pinned"); pin_tried: claimed by one device's
     * worker (under e->mu) so the key is pinned at most once */
    bool pinned, pin_tried;
};

struct engine;

/* Memory budget (e->mu held). Reserve blocks until it fits (evicting idle SRS entries) and
 * fails fast with CUZK_E_NOMEM if n exceeds the whole budget, CUZK_E_CANCELLED on shutdown. */
int mem_reserve(struct engine *e, uint64_t n, struct cuzk_error *err);
void mem_release(struct engine *e, uint64_t n);

/* Take a reference on a ready entry, loading it first if needed (e->mu NOT held). *waited_ns:
 * how long this caller waited for a load (its own or another's). */
int srs_acquire(struct engine *e, const char *id, struct srs_entry **out, uint64_t *waited_ns,
                bool *was_loaded, struct cuzk_error *err);
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
/* Validate a circuit id; fills the synthetic params when it is "synthetic-<N>" and the
 * sector size when it is a PoRep id ("porep-2k" ... "porep-64g"; 0 otherwise). */
int srs_parse_id(const char *id, bool *synthetic, struct synth_params *sp, uint64_t *porep_size,
                 struct cuzk_error *err);

#define SYNTH_PUBLIC_INPUTS 2     /* public inputs of every synthetic circuit (besides ONE) */

/* A queued partition. Heap order: priority (high first), then job seq, then partition. */
struct job;
struct qitem { struct job *job; uint32_t part; };
struct pqueue { struct qitem *v; size_t n, cap; };

/* ---- GPU devices (devices.c): the per-device lock, SRS residency, the locked backend ---- */
/* The backend call of one partition on engine device d, for g16_prove (ctx = this struct):
 * takes the device lock, makes the entry resident, runs the seam's backend, unlocks. */
struct dev_call {
    struct engine *e;
    unsigned dev, worker, part;
    struct srs_entry *srs;
    const char *job_id;
};
int dev_backend(struct g16_msm_results *out, const struct g16_shape *s, const struct g16_pk *pk,
                const struct g16_assignment *w, void *dev_call, struct g16_timings *t,
                struct cuzk_error *err);
/* Upload entry s to every device (PreloadSRS); failures only log (the host copy serves). */
void dev_upload_all(struct engine *e, struct srs_entry *s);
/* Drop whatever of s the devices hold (before s is freed). e->mu NOT held. */
void dev_unload_entry(struct engine *e, struct srs_entry *s);
/* Unpin a pinned entry's host key (before it is freed). */
void dev_unpin_entry(struct engine *e, struct srs_entry *s);
/* "vram", "host" or "loading" (e->mu held). */
const char *srs_tier(const struct srs_entry *s);

/* ---- jobs ---- */
enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct part {
    int state;                      /* enum engine_part_state */
    uint64_t seed;                  /* synthetic witness instance */
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
    unsigned refs;                  /* waiters + partitions in flight */
    char circuit_id[64];
    struct synth_params sp;
    void *input;                    /* the kind's parsed request (PoRep: struct fil_c1), shared
                                     * read-only by the synthesis workers; freed once no
                                     * partition can need it any more (job_input_release) */
    uint32_t n_parts, parts_done, parts_queued, parts_running;
    struct part *parts;
    int dev;                        /* engine device index proving every partition; -1 until
                                     * a GPU worker picks the first one (and on CPUs) */
    uint8_t *proof;                 /* n_parts * 192 bytes, filled in partition order */
    uint64_t submit_ns, start_ns, done_ns, srs_wait_ns;
    struct engine_result result;    /* valid when state == JOB_DONE */
    pthread_cond_t cv;              /* signalled when the job finishes */
};

/* ---- the PoRep kind (porep_kind.c) ---- */
struct part;
/* Parse the C1 wrapper of a POREP_SEAL_COMMIT request into j->input, j->n_parts, j->parts
 * and j->circuit_id. CUZK_E_INVALID_ARG with the parser's JSON-path message when malformed. */
int porep_kind_parse(struct job *j, const struct engine_request *r, struct cuzk_error *err);
/* Witness of partition p (synthesis worker, lock not held) into pt->inputs / pt->aux, and
 * the public inputs recomputed from the C1's commitments into pt->pub. */
int porep_kind_witness(const struct job *j, uint32_t p, struct part *pt,
                       const struct g16_shape *shape, struct cuzk_error *err);
void porep_kind_free_input(void *input);
/* srs.c: load a PoRep SRS entry (x->porep_size set): .params by the v28 name in param_cache, the
 * shape from the .shape file next to it or built (and saved there) once. */
int srs_load_porep(struct engine *e, struct srs_entry *x, struct cuzk_error *err);
/* sector size -> circuit id ("porep-2k", ...); NULL for a size without a PoRep circuit. */
const char *porep_circuit_id(uint64_t sector_size);


struct worker {
    struct engine *e;
    pthread_t thread;
    unsigned id;
    bool prover;
    int gpu_ordinal;                /* -1 = CPU */
    unsigned dev;                   /* index into e->dev_mu / e->dev_ctx */
    bool busy;
    char job_id[ENGINE_ID_MAX];
    int kind, partition;
    uint64_t busy_since_ns;
};

#define DUR_RING 1000
struct kind_counters {
    uint64_t completed, failed, cancelled;
    double dur[DUR_RING];
    uint64_t n_dur;
};

struct engine {
    pthread_mutex_t mu;
    struct cuzk_config cfg;
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
    struct engine_gpu_ops gpu;
    bool have_gpu;
    char cpu_reason[CUZK_ERR_MSG_MAX + 64];   /* why the CPU proves ("" with GPUs) */
    int gpu_ordinals[CFG_MAX_DEVICES];
    pthread_mutex_t dev_mu[CFG_MAX_DEVICES];  /* when the seam has no lock of its own */
    void *dev_ctx[CFG_MAX_DEVICES];
    struct pqueue dev_q[CFG_MAX_DEVICES];     /* synthesized partitions of jobs bound to a GPU */
    unsigned n_dev;
    /* memory budget */
    uint64_t mem_total, mem_used;
    pthread_cond_t mem_cv;
    /* SRS cache */
    struct srs_entry *srs;
    pthread_cond_t srs_cv;
    /* counters */
    struct kind_counters kc[ENGINE_NKINDS];
};

#endif
