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
 * matrices on the device: each upload hides behind the previous vector's MSM; (3) resident key,
 * matrices in host memory (read by the SpMV on the critical path); (4) key streamed in pieces,
 * matrices on the device; (5) streamed in pieces, matrices in host memory. Within a tier two
 * witness buffers before one, and three h vectors before two (c waits for a b: a few ms). A
 * streamed key goes in pieces of the largest vector when two such buffers fit, else in the
 * largest pieces that do (at least GPU_PLAN_MIN_CHUNK).
 * CUZK_E_GPU_NOMEM, naming the smallest need and what it is made of, when not even a key
 * streamed in the smallest pieces, matrices in host memory, two h vectors and one witness
 * buffer fit. */
int gpu_plan_make(const struct gpu_plan_in *in, struct gpu_plan *out, struct cuzk_error *err);

#endif
