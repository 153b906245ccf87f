/* gpu_bench.h: the GPU library's benchmark entry points (cuzk-bench-gpu's gpu-ntt, gpu-ntt-nr,
 * gpu-ntt-oop, gpu-h, gpu-spmv, gpu-msm). Defined in src/gpu/bench/{ntt,msm,spmv}_bench.cu on
 * the library's internal entry points (gpu_internal.cuh) and linked only into cuzk-bench-gpu:
 * the prover never calls them. */
#ifndef CUZK_GPU_BENCH_H
#define CUZK_GPU_BENCH_H

#include <stddef.h>

#include "cuzk/err.h"
#include "cuzk/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device-resident inputs, CUDA events; ms[i] for each of reps runs (after one warm-up).
 * Points: `distinct` host points tiled to n on the device. */
int gpu_bench_ntt(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms, struct cuzk_error *err);
/* the same transform left in bit-reversed order (no bit-reversal pass; sppark's "NR") */
int gpu_bench_ntt_nr(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms, struct cuzk_error *err);
/* natural order in and out, out of place (the bit reversal folded into the last pass) */
int gpu_bench_ntt_oop(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms, struct cuzk_error *err);
int gpu_bench_h(struct gpu_ctx *ctx, unsigned lg, int reps, double *ms, struct cuzk_error *err);
/* The three SpMVs (A, B, C) of shape s over witness w (packed and uploaded once, not timed);
 * the long-row lists are rebuilt for the spmv.long knob as it is set now. */
int gpu_bench_spmv(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_assignment *w, int reps,
                   double *ms, struct cuzk_error *err);
/* g = 1 (G1, points are g1_aff_t) or 2 (G2, g2_aff_t); bitmap_density > 0 times the 0/1 sum
 * at that density instead of the MSM. */
int gpu_bench_msm(struct gpu_ctx *ctx, int g, size_t n, const void *points, size_t distinct,
                  double bitmap_density, int reps, double *ms, struct cuzk_error *err);

#ifdef __cplusplus
}
#endif

#endif
