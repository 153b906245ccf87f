/* gpu_tuning.h: the CUDA backend's internal knobs and the "what did the last call do" getters
 * (the benchmark entry points are in bench/gpu_bench.h, outside the library). Only
 * cuzk-bench-gpu, the GPU tests and src/gpu include it: the prover's API is include/cuzk/gpu.h,
 * and what an operator may set is struct gpu_options there (the daemon's [gpus] section).
 *
 * The knobs live in one process-wide table, read by the launch code of the MSM, the 0/1 sums
 * and the uploads at every call (a plain load: no environment lookups on a hot path). Each
 * default is the measured winner named by its comment (docs/decisions.md; figures in
 * docs/performance.md). Benchmarks change a knob with `cuzk-bench-gpu ... --set NAME=VALUE`
 * (or compare values with --vary NAME=v1,v2), tests with gpu_tuning_set; docs/gpu.md lists
 * them. Set knobs only while no GPU work runs. */
#ifndef CUZK_GPU_TUNING_H
#define CUZK_GPU_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cuzk/err.h"
#include "cuzk/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(field, "name", default, min, max): every knob once. min/max bound what gpu_tuning_set
 * accepts; a knob whose default is 0 ("0 = by size", "0 = none") also accepts 0. */
#define GPU_TUNING_TABLE(X)                                                                        \
    /* window bits; 0 = by size ("Window bits from measurements where the cost model is off") */                                     \
    X(msm_window, "msm.window", 0, 8, 24)                                                          \
    /* points per accumulation range; 0 = by group size ("Accumulation range length follows the window group") */      \
    X(msm_range, "msm.range", 0, 8, 1024)                                                          \
    /* keys per radix sort up to 2^sort_lg ("Up to 2^29 keys per sort, with an 8 GiB reserve") */             \
    X(msm_sort_lg, "msm.sort_lg", 29, 20, 30)                                                      \
    /* groups above 2^sort_base_lg keys must leave the reserve free (test hook; same entry) */     \
    X(msm_sort_base_lg, "msm.sort_base_lg", 26, 10, 26)                                            \
    /* at most this many windows per sort; 0 = the plan's (test hook) */                           \
    X(msm_max_windows, "msm.max_windows", 0, 1, 256)                                               \
    /* G2 one-level window reduction: at least this many buckets per thread ("G2 window          \
     * reduction: 16 buckets per thread") */                                                       \
    X(msm_wr_k, "msm.wr_k", 16, 1, 1 << 20)                                                        \
    /* batch-affine rounds before the accumulation ("Five G1 batch-affine rounds above 2^25 points" and "G2 round parameters: ranges of 64, MINPT 64, 4 / 5 rounds") */          \
    X(msm_aff_g1, "msm.aff_g1", 3, 0, 8)                                                           \
    X(msm_aff_g1_large, "msm.aff_g1_large", 4, 0, 8) /* above 2^24 points */                       \
    X(msm_aff_g1_huge, "msm.aff_g1_huge", 5, 0, 8)   /* above 2^25 points */                       \
    /* above 2^25 points with one window per sort ("Three G1 rounds with one window per sort") */ \
    X(msm_aff_g1_huge_1w, "msm.aff_g1_huge_1w", 3, 0, 8)                                           \
    X(msm_aff_g2, "msm.aff_g2", 4, 0, 8)                                                           \
    X(msm_aff_g2_large, "msm.aff_g2_large", 5, 0, 8) /* above 2^23 points */                       \
    /* a round runs while every thread gets this many pairs (same entry) */                        \
    X(msm_aff_minpt_g1, "msm.aff_minpt_g1", 128, 1, 1 << 20)                                       \
    X(msm_aff_minpt_g2, "msm.aff_minpt_g2", 64, 1, 1 << 20)                                        \
    /* threads per SM of a round: G1 two waves of its 4 blocks of 128 ("G1 batch-affine rounds  \
     * on two waves of blocks"), G2 one wave of 2 ("One inversion per block in the batch-affine \
     * rounds") */                                                                                 \
    X(msm_aff_tps_g1, "msm.aff_tps_g1", 1024, 32, 4096)                                            \
    X(msm_aff_tps_g2, "msm.aff_tps_g2", 256, 32, 4096)                                             \
    /* no rounds below this many points (same entry) */                                            \
    X(msm_aff_min_n_g1, "msm.aff_min_n_g1", 1 << 21, 0, 1 << 30)                                   \
    X(msm_aff_min_n_g2, "msm.aff_min_n_g2", 1 << 20, 0, 1 << 30)                                   \
    /* caps the free GPU memory the MSM plan sees, bytes; 0 = none (test hook) */                  \
    X(msm_mem_cap, "msm.mem_cap", 0, 0, UINT64_MAX)                                                \
    /* what a group above 2^sort_base_lg keys leaves free, bytes; 0 = the prover's exact reserve   \
     * or 8 GiB ("The prover's MSMs borrow the h pipeline's dead memory") */                       \
    X(msm_reserve, "msm.reserve", 0, 0, UINT64_MAX)                                                \
    /* 0/1 sums: batch-affine rounds and their limits ("0/1 sums by batch-affine rounds, not per-thread XYZZ") */        \
    X(sum_aff, "sum.aff", 4, 0, 16)                                                                \
    X(sum_aff_minpt, "sum.aff_minpt", 16, 1, 1 << 20)                                              \
    X(sum_aff_min_t, "sum.aff_min_t", 256, 1, 1 << 20)                                             \
    X(sum_aff_min_n, "sum.aff_min_n", 1 << 16, 0, 1 << 30)                                         \
    /* pinned staging chunk of pageable uploads, bytes (smaller: test hook) */                     \
    X(stage_chunk, "stage.chunk", 64 << 20, 4096, 64 << 20)                                        \
    /* device buffers the streamed key may take (fewer: test hook; "Streamed key: a third        \
     * device buffer once the context has proved") */                                             \
    X(stream_bufs, "stream.bufs", 3, 1, 3)                                                        \
    /* EXPERIMENT, not yet measured: 1 = the streamed key's upload waits for the witness to be  \
     * on the device (gpu_stream_go), 0 = it starts with the prove, as measured so far */         \
    X(stream_after_wit, "stream.after_wit", 0, 0, 1)                                               \
    /* streamed key piece, bytes; 0 = the memory plan's (smaller: test hook) */                    \
    X(stream_piece, "stream.piece", 0, 0, UINT64_MAX)                                              \
    /* SpMV rows of more terms take a warp each, read when a shape is loaded ("SpMV: a warp per  \
     * long row"); 4294967295: one thread per row */                                               \
    X(spmv_long, "spmv.long", 16, 1, UINT32_MAX)                                                  \
    /* 1: a loaded key's matrices always go to pinned host memory (test hook; 0: when the       \
     * memory plan maps them) */                                                                   \
    X(shape_host, "shape.host", 0, 0, 1)                                                          \
    /* 1: the h pipeline in two domain vectors whatever the memory plan says (test hook; 0:    \
     * when the plan's h_vectors is 2) */                                                          \
    X(h_two, "h.two", 0, 0, 1)

struct gpu_tuning {
#define GPU_TUNING_FIELD(f, name, dflt, lo, hi) uint64_t f;
    GPU_TUNING_TABLE(GPU_TUNING_FIELD)
#undef GPU_TUNING_FIELD
};

/* The process-wide table (defaults until changed). */
extern struct gpu_tuning gpu_tuning;

/* "NAME=VALUE" (VALUE decimal, or with a k/M/G suffix for 2^10/2^20/2^30): CUZK_E_INVALID_ARG
 * naming the knob and its range when NAME is unknown or VALUE out of range. */
int gpu_tuning_set(const char *assignment, struct cuzk_error *err);
/* Every knob back to its default. */
void gpu_tuning_reset(void);
/* One line per knob: name, value, default. */
void gpu_tuning_print(FILE *f);

/* ---- what the last call on a context did (diagnostics, tests) ---- */
/* What the last streamed-key prove did (all zero after a resident-key prove). */
struct gpu_stream_stats {
    uint64_t bytes;       /* key bytes uploaded */
    uint64_t upload_ns;   /* helper thread: first upload start to last upload end */
    uint64_t wait_ns;     /* prover thread blocked waiting for a vector */
    int buffers;          /* device buffers used (2 = double-buffered, 1 = VRAM short) */
    int staged;           /* 1: copied through the pinned staging chunks, 0: key was pinned */
};
void gpu_ctx_stream_stats(const struct gpu_ctx *ctx, struct gpu_stream_stats *out);
/* The last MSM's plan: window bits and windows sorted per group. */
void gpu_ctx_msm_plan(const struct gpu_ctx *ctx, unsigned *window_bits, unsigned *windows_per_group);
/* Batch-affine rounds the last MSM's first window group ran before its XYZZ accumulation. */
unsigned gpu_ctx_msm_aff_rounds(const struct gpu_ctx *ctx);
/* Parts the last MSM ran in (more than 1: its rounds fit only for fewer points; msm_parts). */
unsigned gpu_ctx_msm_parts(const struct gpu_ctx *ctx);
/* Whether the last h pipeline took its coset factors from the per-position table (domains
 * from 2^16 with 256 bytes per element of GPU memory free) rather than two small tables. */
bool gpu_ctx_h_shift_table(const struct gpu_ctx *ctx);
/* Batch-affine rounds the last 0/1 bitmap sum ran before its XYZZ pass (0: XYZZ only). */
unsigned gpu_ctx_sum_aff_rounds(const struct gpu_ctx *ctx);
/* Whether the last MSM took its digits from plain-scalar word planes (one window per sort). */
bool gpu_ctx_msm_digit_planes(const struct gpu_ctx *ctx);
/* Whether the loaded shape's matrices live in pinned host memory (the memory plan's
 * shape_mapped) rather than on the device. */
bool gpu_ctx_shape_mapped(const struct gpu_ctx *ctx);
/* Bytes of GPU working memory (scratch slots) this context holds. */
size_t gpu_ctx_scratch_bytes(const struct gpu_ctx *ctx);
/* Scratch requests of the prover's MSMs served from its idle h-pipeline memory since the
 * context was made. */
uint64_t gpu_ctx_msm_loans(const struct gpu_ctx *ctx);
/* Whether the last gpu_g16_backend call on ctx found its witness staged. */
bool gpu_ctx_last_witness_staged(const struct gpu_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
