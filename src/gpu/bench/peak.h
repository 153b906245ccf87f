/* peak.h: the GPU's measured peaks, the denominators of the roofline in docs/gpu.md (issue 52).
 * Linked only by cuzk-bench-gpu (`gpu-peak`); the prover never calls it. Each figure is the
 * median of `reps` timed launches after one warm-up, on CUDA events. */
#ifndef CUZK_GPU_PEAK_H
#define CUZK_GPU_PEAK_H

#include "cuzk/err.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpu_peak {
    int sms;                    /* multiprocessors */
    double clock_mhz;           /* the SM clock the driver reports as maximum */
    /* instructions (or products) per second, whole device */
    double imad;                /* independent 32-bit IMAD (a * b + c) */
    double imad_cc;             /* carry-chain mad.lo.cc / madc.hi.cc pairs counted as 2 */
    double dfma;                /* FP64 fused multiply-adds */
    double mix_imad, mix_dfma;  /* both in one loop: each pipe's rate while the other runs */
    double fr_mul, fp_mul;      /* Montgomery products of field.cuh, independent chains */
    double fr_mul_fp64;         /* Fr products in 52-bit limbs on the FP64 pipe (peak.cu) */
    double fr_mul_mix;          /* half of each in one loop: products of both kinds per second */
    unsigned long long fr_fp64_checked, fr_fp64_bad;   /* FP64 products checked against field.cuh's */
    /* DRAM, bytes per second */
    double dram_read;           /* streaming 16-byte loads over 4 GiB */
    double dram_copy;           /* read + write counted, 2 GiB to 2 GiB */
};

/* Measures every field of *out on CUDA device `dev` (allocates 4 GiB of device memory). */
int gpu_peak_measure(int dev, int reps, struct gpu_peak *out, struct cuzk_error *err);

#ifdef __cplusplus
}
#endif
#endif
