/* fmul_bench.cu: throughput of the device Fr products (the IMAD CIOS product of field.cuh and
 * the FP64-assisted one of field_dp.cuh) in isolation, and their agreement, for
 * `cuzk-bench-gpu gpu-fmul`. Each thread runs four independent chains x_i <- x_i * y_i (the
 * ILP of an NTT butterfly group); CAP limits registers like the NTT passes (72). */
#include "gpu_internal.cuh"
#include "field_dp.cuh"

template <class F> __global__ void k_fmul_fill(F *v, uint32_t n, uint32_t seed)
{
    constexpr int W = sizeof(F) / 4;
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    F x;
    uint32_t s = seed ^ (i * 0x9e3779b9u);
#pragma unroll
    for (int j = 0; j < W; j++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        x.v[j] = s;
    }
    x.v[W - 1] &= 0x0fffffffu;   /* < 2^252 < r, < 2^380 < p */
    v[i] = x;
}

/* Experiment: the even/odd CIOS product with Fr's modulus limbs read from constant memory
 * instead of immediates (KEEP0: limb 0, which is 1, stays an immediate), to see whether ptxas
 * then fuses every lo/hi pair into IMAD.WIDE.U32.X as it does for Fp. */
__device__ uint32_t g_zero[32];
__device__ uint32_t g_fr_p[9] = {0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u,
                                 0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u, 0xffffffffu};
/* MODE 0: modulus from registers pm, m = -e0 (n0 = 2^32 - 1 known); 1: also n0 from pm[8]
 * (opaque); 2: immediates, n0 loaded (uniform); 3: immediates, m by an inline PTX mul.lo */
template <int MODE> __device__ __forceinline__ void f_mul_rows_cm(uint32_t *res, const uint32_t *a, const uint32_t *b,
                                                                   const uint32_t *pm)
{
    auto frp = [&](int i) { return MODE <= 1 ? pm[i] : fr_params::p(i); };
    constexpr int N = 8;
    uint32_t e[N], o[N];
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        e[j] = cz_mul_lo(a[j], b[0]);
        e[j + 1] = cz_mul_hi(a[j], b[0]);
        o[j] = cz_mul_lo(a[j + 1], b[0]);
        o[j + 1] = cz_mul_hi(a[j + 1], b[0]);
    }
#pragma unroll
    for (int i = 0; i < N; i++) {
        if (i > 0) {
            uint32_t ne[N], no[N];
            const uint32_t bi = b[i];
            ne[0] = cz_add_cc(o[0], e[1]);
#pragma unroll
            for (int j = 0; j < N - 2; j += 2) {
                no[j] = cz_madlo_c_cc(a[j + 1], bi, e[j + 2]);
                no[j + 1] = cz_madhi_c_cc(a[j + 1], bi, e[j + 3]);
            }
            no[N - 2] = cz_madlo_c_cc(a[N - 1], bi, 0);
            no[N - 1] = cz_madhi_c(a[N - 1], bi, 0);
            ne[0] = cz_madlo_cc(a[0], bi, ne[0]);
            ne[1] = cz_madhi_c_cc(a[0], bi, o[1]);
#pragma unroll
            for (int j = 2; j < N; j += 2) {
                ne[j] = cz_madlo_c_cc(a[j], bi, o[j]);
                ne[j + 1] = cz_madhi_c_cc(a[j], bi, o[j + 1]);
            }
            no[N - 1] = cz_addc(no[N - 1], 0);
#pragma unroll
            for (int j = 0; j < N; j++) {
                e[j] = ne[j];
                o[j] = no[j];
            }
        }
        uint32_t m;
        if constexpr (MODE == 0) m = e[0] * fr_params::n0;
        else if constexpr (MODE == 1) m = e[0] * pm[8];
        else if constexpr (MODE == 2) m = e[0] * __ldg(&g_fr_p[8]);
        else asm("mul.lo.u32 %0, %1, %2;" : "=r"(m) : "r"(e[0]), "r"(fr_params::n0));
        o[0] = cz_madlo_cc(frp(1), m, o[0]);
        o[1] = cz_madhi_c_cc(frp(1), m, o[1]);
#pragma unroll
        for (int j = 2; j < N - 2; j += 2) {
            o[j] = cz_madlo_c_cc(frp(j + 1), m, o[j]);
            o[j + 1] = cz_madhi_c_cc(frp(j + 1), m, o[j + 1]);
        }
        o[N - 2] = cz_madlo_c_cc(frp(N - 1), m, o[N - 2]);
        o[N - 1] = cz_madhi_c(frp(N - 1), m, o[N - 1]);
        e[0] = cz_madlo_cc(frp(0), m, e[0]);
        e[1] = cz_madhi_c_cc(frp(0), m, e[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            e[j] = cz_madlo_c_cc(frp(j), m, e[j]);
            e[j + 1] = cz_madhi_c_cc(frp(j), m, e[j + 1]);
        }
        o[N - 1] = cz_addc(o[N - 1], 0);
    }
    uint32_t t[N];
    t[0] = cz_add_cc(o[0], e[1]);
#pragma unroll
    for (int j = 1; j < N - 1; j++) t[j] = cz_addc_cc(o[j], e[j + 1]);
    t[N - 1] = cz_addc(o[N - 1], 0);
    f_reduce_once<fr_params>(res, t);
}

/* V: 0 the CIOS product (operator*); 1..4 field_dp.cuh FP64 forms (1, RED 0), (2, 0), (2, 1),
 * (1, 1) (Fr only); 5 f_mul_wide */
template <class F, int V> __device__ __forceinline__ F fmul(const F &a, const F &b, const uint32_t *pm)
{
    if constexpr ((V == 6 || V == 7) && sizeof(F) == 32) {
        F r;
        f_mul_rows_cm<V == 6 ? 2 : 3>(r.v, a.v, b.v, pm);
        return r;
    }
    if constexpr (V == 5) {
        F r;
        if constexpr (sizeof(F) == 32) f_mul_wide<fr_params>(r.v, a.v, b.v);
        else f_mul_wide<fp_params>(r.v, a.v, b.v);
        return r;
    } else if constexpr (V >= 1 && V <= 4 && sizeof(F) == 32) {
        return f_mul_dp<V == 1 || V == 4 ? 1 : 2, V >= 3 ? 1 : 0>(a, b);
    } else {
        return a * b;
    }
}

/* x: 4 n elements, y: n; x[t + k n] <- x * prod_k (y[t] with word 0 xored by 0..k) */
template <class F, int V> __device__ __forceinline__ void fmul_chains(F *x, const F *y, uint32_t n, int iters)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    /* V 6 / 7: Fr's modulus in per-thread registers: loaded (so ptxas cannot fold it into
     * immediates) and made non-uniform by a per-lane zero (so it is not a uniform register;
     * IMAD.WIDE.U32.X takes neither an immediate nor a uniform register) */
    uint32_t pm[9];
    const uint32_t z = V == 6 || V == 7 ? __ldg(&g_zero[threadIdx.x & 31]) : 0;
#pragma unroll
    for (int i = 0; i < 9; i++) pm[i] = V == 6 || V == 7 ? __ldg(&g_fr_p[i]) + z : 0;
    F a0 = x[t], a1 = x[t + n], a2 = x[t + 2 * n], a3 = x[t + 3 * n];
    F b = y[t];
    for (int k = 0; k < iters; k++) {
        b.v[0] ^= (uint32_t)k;   /* a new multiplier every round: its conversion is not hoisted */
        a0 = fmul<F, V>(a0, b, pm);
        a1 = fmul<F, V>(a1, b, pm);
        a2 = fmul<F, V>(a2, b, pm);
        a3 = fmul<F, V>(a3, b, pm);
    }
    x[t] = a0;
    x[t + n] = a1;
    x[t + 2 * n] = a2;
    x[t + 3 * n] = a3;
}
template <class F, int V> __global__ void __launch_bounds__(256) k_fmul(F *x, const F *y, uint32_t n, int iters)
{
    fmul_chains<F, V>(x, y, n, iters);
}
template <class F, int V> __global__ void __maxnreg__(72) k_fmul_cap(F *x, const F *y, uint32_t n, int iters)
{
    fmul_chains<F, V>(x, y, n, iters);
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
        k_fmul_fill<F><<<gpu_div_up(4 * n, 256), 256, 0, st>>>((F *)x, 4 * n, 1000 + r);
        k_fmul_fill<F><<<blocks, 256, 0, st>>>((F *)y, n, 2000 + r);
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
    /* agreement with the CIOS product on fresh inputs */
    k_fmul_fill<F><<<gpu_div_up(4 * n, 256), 256, 0, st>>>((F *)x, 4 * n, 3000);
    k_fmul_fill<F><<<gpu_div_up(4 * n, 256), 256, 0, st>>>(ref, 4 * n, 3000);
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

/* variant: 0 Fr CIOS, 1..4 Fr FP64 forms, 5 Fr f_mul_wide, 6 Fp CIOS, 7 Fp f_mul_wide,
 * 8 / 9 Fr CIOS / f_mul_wide capped at 72 registers. ms[r] per run; *mismatch: elements
 * where the variant's result differs from the CIOS product's. */
extern "C" int gpu_bench_fmul(struct gpu_ctx *ctx, int variant, unsigned lg, int iters, int reps,
                              double *ms, uint64_t *mismatch, struct cuzk_error *err)
{
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    if (lg < 8 || lg > 26 || iters < 1 || variant < 0 || variant > 9)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu-fmul: lg %u (8..26), iters %d (>= 1), variant %d (0..9)",
                         lg, iters, variant);
    switch (variant) {
    case 0: return fmul_run<dfr>(ctx, k_fmul<dfr, 0>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    case 1: return fmul_run<dfr>(ctx, k_fmul<dfr, 1>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    case 2: return fmul_run<dfr>(ctx, k_fmul<dfr, 2>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    case 3: return fmul_run<dfr>(ctx, k_fmul<dfr, 3>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    case 4: return fmul_run<dfr>(ctx, k_fmul<dfr, 4>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    case 5: return fmul_run<dfr>(ctx, k_fmul<dfr, 5>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    case 6: return fmul_run<dfr>(ctx, k_fmul<dfr, 6>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    case 7: return fmul_run<dfr>(ctx, k_fmul<dfr, 7>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    case 8: return fmul_run<dfr>(ctx, k_fmul_cap<dfr, 0>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    default: return fmul_run<dfr>(ctx, k_fmul_cap<dfr, 7>, k_fmul<dfr, 0>, lg, iters, reps, ms, mismatch, err);
    }
}
