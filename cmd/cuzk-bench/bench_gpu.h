/* bench_gpu.h (cuzk-bench-gpu only): what the GPU prove benchmarks share: a shape with a
 * random SRS (valid curve points whose discrete logs nobody knows, so proofs are timed but
 * cannot verify), the resident / streamed prove timing and the two-prover pipeline of
 * bench_gpu.c, used by gpu-porep (a PoRep-shaped synthetic partition) and gpu-circuit
 * (bench_gpu_circuit.c: the real shape and witness of a Filecoin circuit). */
#ifndef CUZK_BENCH_GPU_H
#define CUZK_BENCH_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/ec.h"
#include "cuzk/gpu.h"
#include "cuzk/groth16.h"

struct plike {
    struct g16_shape *s;
    struct g16_pk *pk;
    fr_t *in, *aux;         /* the witness */
    const g1_aff_t *p1;     /* distinct point tables the key is tiled from (make_points) */
    const g2_aff_t *p2;
    size_t d1, d2;
    const char *label;      /* "porep": the figures are printed as gpu_<label>_prove_... */
    bool key_pinned;        /* pl_key allocated the key page-locked */
};
#define PL_D1 ((size_t)1 << 16)
#define PL_D2 ((size_t)1 << 14)

/* --trace 1 of the commands that take no tuning options: MSM plans and allocations on stderr */
void bench_gpu_trace(bool on);
struct gpu_ctx *open_gpu(int dev);      /* with the --trace / --set options applied */
void *make_points(int g, size_t distinct);      /* g = 1 or 2; malloc'd; NULL on failure */
double ms_of(uint64_t ns);
/* A random key of the right lengths for pl->s (pinned: cudaMallocHost). */
int pl_key(struct plike *pl, bool pinned, struct cuzk_error *err);
void pl_free_key(struct g16_pk *pk, bool pinned);
/* Upload (shape, and the key unless streamed), a warm-up and reps timed proves; medians. */
int pl_time(struct gpu_ctx *ctx, struct plike *pl, int reps, bool streamed, struct cuzk_error *err);
/* proofs back to back by one prover, then by two provers with witness prefetch. */
int pl_pipeline(struct gpu_ctx *ctx, struct plike *pl, int proofs, struct cuzk_error *err);

#endif
