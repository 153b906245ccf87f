/* fmul_bench.cu: throughput of the device Montgomery products (field.cuh) in isolation, for
 * `cuzk-bench-gpu gpu-fmul`: the yardstick for product experiments (decisions.md, 2026-12-04,
 * has the forms tried; commit c979fbb their code). Each thread runs four independent chains
 * x_i <- x_i * y_i (the ILP of an NTT butterfly group); k_fmul_cap limits registers like the
 * NTT passes. */
#include "gpu_internal.cuh"

/* x: 4 n elements, y: n; x[t + k n] <- x * prod_k (y[t] with word 0 xored by 0..k) */
template <class F> __device__ __forceinline__ void fmul_chains(F *x, const F *y, uint32_t n, int iters)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    F a0 = x[t], a1 = x[t + n], a2 = x[t + 2 * n], a3 = x[t + 3 * n];
    F b = y[t];
    for (int k = 0; k < iters; k++) {
        b.v[0] ^= (uint32_t)k;   /* a new multiplier every round (nothing of it is hoisted) */
        a0 = a0 * b;
        a1 = a1 * b;
        a2 = a2 * b;
        a3 = a3 * b;
    }
    x[t] = a0;
    x[t + n] = a1;
    x[t + 2 * n] = a2;
    x[t + 3 * n] = a3;
}
template <class F> __global__ void __launch_bounds__(256) k_fmul(F *x, const F *y, uint32_t n, int iters)
{
    fmul_chains<F>(x, y, n, iters);
}
template <class F> __global__ void __maxnreg__(72) k_fmul_cap(F *x, const F *y, uint32_t n, int iters)
{
    fmul_chains<F>(x, y, n, iters);
}

template <class F> __global__ void k_fmul_diff(uint32_t *bad, const F *a, const F *b, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && !f_eq(a[i], b[i])) atomicAdd(bad, 1u);
}

template <class F> using fmul_kernel = void (*)(F *, const F *, uint32_t, int);

template <class F>
static int fmul_run(struct gpu_ctx *ctx, fmul_kernel<F> kern, fmul_kernel<F> ref_kern, unsigned lg, int iters,
                    int reps, double *ms, uint64_t *mismatch, struct cuzk_error *err)
{
    const uint32_t n = 1u << lg;
    void *x, *y;
    int rc = gpu_scratch(ctx, SL_BENCH0, (size_t)8 * n * sizeof(F), &x, err);
    if (!rc) rc = gpu_scratch(ctx, SL_BENCH1, (size_t)n * sizeof(F) + 16, &y, err);
    if (rc) return rc;
    F *ref = (F *)x + 4 * (size_t)n;
    uint32_t *bad = (uint32_t *)((F *)y + n);
    cudaStream_t st = ctx->st[0];
    const unsigned blocks = gpu_div_up(n, 256);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = -1; r < reps && !rc; r++) {
        k_fill_field<F><<<gpu_div_up(4 * n, 256), 256, 0, st>>>((F *)x, 4 * n, 1000 + r);
        k_fill_field<F><<<blocks, 256, 0, st>>>((F *)y, n, 2000 + r);
        CK_LAUNCH();
        CK(cudaEventRecord(e0, st));
        kern<<<blocks, 256, 0, st>>>((F *)x, (const F *)y, n, iters);
        CK_LAUNCH();
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        float f = 0;
        CK(cudaEventElapsedTime(&f, e0, e1));
        if (r >= 0) ms[r] = f;
    }
    *mismatch = 0;
    if (!ref_kern) {
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        return rc;
    }
    /* agreement with the reference kernel on fresh inputs */
    k_fill_field<F><<<gpu_div_up(4 * n, 256), 256, 0, st>>>((F *)x, 4 * n, 3000);
    k_fill_field<F><<<gpu_div_up(4 * n, 256), 256, 0, st>>>(ref, 4 * n, 3000);
    CK(cudaMemsetAsync(bad, 0, 4, st));
    kern<<<blocks, 256, 0, st>>>((F *)x, (const F *)y, n, iters);
    ref_kern<<<blocks, 256, 0, st>>>(ref, (const F *)y, n, iters);
    k_fmul_diff<F><<<gpu_div_up(4 * n, 256), 256, 0, st>>>(bad, (const F *)x, ref, 4 * n);
    CK_LAUNCH();
    uint32_t h = 0;
    CK(cudaMemcpyAsync(&h, bad, 4, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    *mismatch = h;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return rc;
}

/* variant: 0 Fr, 1 Fp, 2 Fr with registers capped at 72 (as in the NTT passes). ms[r] per run;
 * *mismatch: for 2, elements where the result differs from the uncapped kernel's (0 otherwise). */
extern "C" int gpu_bench_fmul(struct gpu_ctx *ctx, int variant, unsigned lg, int iters, int reps,
                              double *ms, uint64_t *mismatch, struct cuzk_error *err)
{
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    if (lg < 8 || lg > 26 || iters < 1 || variant < 0 || variant > 2)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu-fmul: lg %u (8..26), iters %d (>= 1), variant %d (0..2)",
                         lg, iters, variant);
    switch (variant) {
    case 0: return fmul_run<dfr>(ctx, k_fmul<dfr>, NULL, lg, iters, reps, ms, mismatch, err);
    case 1: return fmul_run<dfp>(ctx, k_fmul<dfp>, NULL, lg, iters, reps, ms, mismatch, err);
    default: return fmul_run<dfr>(ctx, k_fmul_cap<dfr>, k_fmul<dfr>, lg, iters, reps, ms, mismatch, err);
    }
}
