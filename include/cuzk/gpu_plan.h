/* gpu_plan.h: how one proving key and its proofs use a GPU's memory, decided up front from
 * sizes alone (no CUDA: a pure function, tested on the CPU). The GPU context asks it when a
 * key is loaded (resident or streamed per proof) and before a witness is staged ahead (one
 * or two witness buffers), with the memory it may use: the card's free memory, less
 * [gpus] vram_reserve_mib, within [gpus] memory_limit. Two prover workers share a card's
 * context, so planning one proof's working set plus the staged witness is what keeps both
 * inside the plan. */
#ifndef CUZK_GPU_PLAN_H
#define CUZK_GPU_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "cuzk/err.h"

#define GPU_PLAN_VECTORS 5   /* the key's h, l, a, b_g1, b_g2 (g16_pk_vectors order) */

struct gpu_plan_in {
    uint64_t mem;                            /* device bytes the backend may still use */
    uint64_t key[GPU_PLAN_VECTORS];          /* bytes of each key vector */
    uint64_t shape;                          /* the constraint matrices kept on the device */
    uint64_t domain;                         /* NTT domain size N (a power of two) */
    uint64_t witness;                        /* one witness as the device holds it (packed:
                                              * the first witness's size with its slack) */
};

enum gpu_key_mode { GPU_KEY_RESIDENT, GPU_KEY_STREAMED };

struct gpu_plan {
    enum gpu_key_mode key_mode;
    bool shape_mapped;                       /* the constraint matrices stay in page-locked
                                              * host memory, read by the SpMV over PCIe */
    unsigned witness_buffers;                /* 2: the next proof's witness is staged ahead */
    unsigned h_vectors;                      /* domain vectors of the h pipeline: 3 (a, b, c
                                              * transformed side by side), or 2 (c formed in
                                              * b's vector once a = a b) */
    uint64_t key_bytes;                      /* on the device for the key: all of it, or the
                                              * streamer's two buffers of stream_chunk bytes */
    uint64_t stream_chunk;                   /* streamed: bytes uploaded per piece (the largest
                                              * vector when two of those fit, else less; the
                                              * MSMs then run per piece and add up) */
    uint64_t work_bytes;                     /* one proof: the h pipeline's domain vectors (the
                                              * MSMs borrow them), NTT twiddles, MSM growth */
    uint64_t total;                          /* everything planned (the matrices unless
                                              * mapped); never above in->mem */
};

/* The working set one proof needs beside its key, shape and witness: `vectors` (3 or 2) domain
 * vectors of N field elements for the h pipeline (which the MSMs then borrow), the NTT twiddle
 * table (N / 2 elements), the 0/1 splits and sums (flags, positions and tail indices, word
 * counts and XYZZ partials: 14 bytes per point, up to N), and 2 GiB for the MSMs' own
 * scratch. */
uint64_t gpu_plan_work_bytes(uint64_t domain, unsigned vectors);

#define GPU_PLAN_MIN_CHUNK (512ull << 20)   /* smallest streamed piece: 5.6 M G1 points */

/* The fastest plan that fits, by the time a proof loses to PCIe, in five tiers: (1) resident
 * key, matrices on the device; (2) key streamed in whole vectors (two buffers of the largest),
 * matrices on the device, where each upload hides behind the previous vector's MSM
 * (gpu_plan_stream_hides); (3) resident key,
 * matrices in host memory (read by the SpMV on the critical path); (4) key streamed in pieces,
 * matrices on the device; (5) streamed in pieces, matrices in host memory. Within a tier two
 * witness buffers before one, and three h vectors before two (c waits for a b: a few ms). A
 * streamed key goes in pieces of the largest vector when two such buffers fit, else in the
 * largest pieces that do (at least GPU_PLAN_MIN_CHUNK).
 * CUZK_E_GPU_NOMEM, naming the smallest need and what it is made of, when not even a key
 * streamed in the smallest pieces, matrices in host memory, two h vectors and one witness
 * buffer fit. */
int gpu_plan_make(const struct gpu_plan_in *in, struct gpu_plan *out, struct cuzk_error *err);
/* A key streamed in whole vectors hides its uploads behind the MSMs: its L, A and B MSMs are
 * full ones (the witness packs to at least half its unpacked aux size, WindowPoSt) or a third
 * device buffer of the largest vector fits in `spare` (what is left beside the plan, its two
 * streaming buffers included) with GPU_PLAN_THIRD_SPARE beside it: the streamer's condition
 * for taking one (PoRep's 0/1 MSMs are too short to hide an upload with two buffers). */
#define GPU_PLAN_THIRD_SPARE (6ull << 30)
bool gpu_plan_stream_hides(const uint64_t key[GPU_PLAN_VECTORS], uint64_t witness, uint64_t spare);
/* The tier (0 fastest .. 4) of a placement in gpu_plan_make's order: resident with the matrices
 * on the device, streamed in whole vectors, resident with the matrices mapped, streamed in
 * pieces, streamed in pieces with the matrices mapped. */
unsigned gpu_plan_tier(bool resident, bool mapped, bool whole);

/* ---- several keys on one card (src/groth16/gpu_plan_card.c) ----
 * A card that serves several circuits (a PoRep batch, WinningPoSt and WindowPoSt deadlines
 * beside it, SnapDeals) keeps some keys, and some circuits' matrices, on the device between
 * proofs, and proves the others with their keys streamed beside them (the engine's
 * prove_beside). gpu_plan_card decides which, so that a proof of every key fits beside what
 * is kept: no proof ever has to evict another circuit's key. It also predicts each key's
 * device time per proof and what a deadline proof waits for: the engine gives the device's
 * next turn to the highest priority (docs/daemon.md), so at most the one proof that holds
 * the device when it arrives. */
#define GPU_PLAN_MAX_KEYS 4

enum gpu_key_class {
    GPU_CLASS_THROUGHPUT,   /* PoRep, SnapDeals: proofs back to back; their PCIe bytes count */
    GPU_CLASS_DEADLINE      /* WinningPoSt, WindowPoSt: few proofs, each against a deadline */
};

struct gpu_plan_key {
    const char *name;                        /* for messages, e.g. "wpost-32g" */
    enum gpu_key_class cls;
    uint64_t key[GPU_PLAN_VECTORS];          /* as in gpu_plan_in */
    uint64_t shape, domain, witness;         /* as in gpu_plan_in */
    double lock_s;                           /* device time of one proof with its key and matrices
                                              * on the device and its witness staged (measured) */
};

struct gpu_plan_card_in {
    uint64_t mem;                            /* device bytes the backend may use */
    double pcie_bytes_per_s;                 /* host to device: streamed keys, matrices read from
                                              * host memory, witnesses not staged ahead */
    unsigned n;                              /* 1 .. GPU_PLAN_MAX_KEYS */
    struct gpu_plan_key keys[GPU_PLAN_MAX_KEYS];
};

struct gpu_plan_card_key {
    bool resident;                           /* the key stays on the device (else streamed) */
    bool shape_mapped;                       /* the matrices stay in pinned host memory, read by
                                              * the SpMV over PCIe (else kept on the device) */
    unsigned witness_buffers, h_vectors;     /* as in struct gpu_plan */
    uint64_t stream_chunk;                   /* streamed: bytes per piece */
    uint64_t work_bytes;                     /* gpu_plan_work_bytes of its domain and h vectors */
    uint64_t pcie_bytes;                     /* moved per proof besides a staged witness: the
                                              * streamed key, the mapped matrices, the witness when
                                              * it is not staged ahead (one buffer) */
    double proof_s;                          /* lock_s + the bytes on the critical path at the
                                              * given rate: pcie_bytes less a key streamed in
                                              * whole vectors (its uploads hide behind the MSMs) */
    double wait_s;                           /* the longest proof_s of the other keys: the proof
                                              * that may hold the device when one of this key's
                                              * arrives (0 with one key) */
    double latency_s;                        /* wait_s + proof_s */
};

struct gpu_plan_card {
    struct gpu_plan_card_key k[GPU_PLAN_MAX_KEYS];
    uint64_t kept;                           /* resident keys, matrices kept on the device */
    /* what proofs add, each part at its largest over the keys (the context's scratch, witness
     * and streaming buffers are reused and only grow): the working set, the witness buffers,
     * the two streaming buffers */
    uint64_t work_bytes, witness_bytes, stream_bytes;
    uint64_t peak;                           /* the sum of the four; never above in->mem */
};

/* The plan of a card holding in->n keys. Every choice of resident keys and kept matrices, and of
 * witness buffers (2, 1) and h vectors (3, 2) per key, whose peak fits in->mem (a streamed key
 * in pieces of its largest vector when two fit, else the largest pieces that do, at least
 * GPU_PLAN_MIN_CHUNK); of those, the one whose throughput keys sit in the fastest tiers of
 * gpu_plan_make (the sum of their gpu_plan_tier), then moves the fewest bytes over PCIe per
 * throughput proof (streamed keys, mapped matrices), then gives the throughput keys the fastest options
 * (witness buffers, then h vectors, as gpu_plan_make orders them), then the largest streamed
 * pieces, then the smallest sum of the deadline keys' latencies, then keeps the fewest bytes.
 * With one key this is gpu_plan_make's plan. CUZK_E_INVALID_ARG for n outside 1 .. GPU_PLAN_MAX_KEYS, a domain that is not a power
 * of two, or a rate that is not positive; CUZK_E_GPU_NOMEM naming the key and its least need
 * when some key does not fit even alone, streamed in the smallest pieces with its matrices in
 * host memory, or when the keys fit alone but not beside each other's buffers. */
int gpu_plan_card_make(const struct gpu_plan_card_in *in, struct gpu_plan_card *out,
                       struct cuzk_error *err);

#endif
