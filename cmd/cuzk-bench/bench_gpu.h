/* bench_gpu.h (cuzk-bench-gpu only): what the GPU benchmarks share: the tuning options of
 * bench_gpu.c (--set, --vary, --trace), and a shape with a random SRS (valid curve points whose
 * discrete logs nobody knows, so proofs are timed but cannot verify), the resident / streamed
 * prove timing and the two-prover pipeline of bench_gpu_prove.c, used by gpu-porep (a
 * PoRep-shaped synthetic partition) and gpu-circuit (bench_gpu_circuit.c: the real shape and
 * witness of a Filecoin circuit). */
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
/* The context options of every run (--trace sets .trace). */
struct gpu_options bench_gpu_options(void);

/* bench_gpu.c: the tuning options. bench_gpu_parse_tuning splits --set NAME=VALUE, --vary
 * NAME=v1,v2,... (only with v non-NULL) and --trace 1 off argv (the rest goes to args, at most
 * 64), checks every --vary value and applies the --set ones; 2 on bad options (said on stderr).
 * bench_gpu_vary_apply sets the knobs of --vary value v; 0, or 2 when that fails. */
#define BENCH_GPU_TUNING_OPTS "[--set NAME=VALUE]... [--trace 1]"
struct bench_gpu_vary {
    char name[128], buf[256], *vals[16];
    int n;
};
int bench_gpu_parse_tuning(const char *cmd, int argc, char **argv, struct bench_gpu_vary *v,
                           char **args, int *nargs);
int bench_gpu_vary_apply(const char *cmd, const struct bench_gpu_vary *vy, int v);
/* A timed run's variant v: its knobs set and a "[vary] NAME=VALUE" line printed (nothing
 * without --vary); CUZK_E_INVALID_ARG in err when the knobs cannot be set. */
int bench_gpu_vary_step(const char *cmd, const struct bench_gpu_vary *vy, int v, struct cuzk_error *err);
struct gpu_ctx *open_gpu(int dev);      /* with the --trace / --set options applied */
void *make_points(int g, size_t distinct);      /* g = 1 or 2; malloc'd; NULL on failure */
double ms_of(uint64_t ns);
/* A random key of the right lengths for pl->s (pinned: cudaMallocHost). */
int pl_key(struct plike *pl, bool pinned, struct cuzk_error *err);
/* Everything pl holds: its key (allocated pinned or not), shape, witness and point tables. */
void pl_free(struct plike *pl, bool key_pinned);
/* Upload (shape, and the key unless streamed), a warm-up and reps timed proves; medians. */
int pl_time(struct gpu_ctx *ctx, struct plike *pl, int reps, bool streamed, struct cuzk_error *err);
/* proofs back to back by one prover, then by two provers with witness prefetch. */
int pl_pipeline(struct gpu_ctx *ctx, struct plike *pl, int proofs, struct cuzk_error *err);

#endif
