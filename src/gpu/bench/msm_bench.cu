/* msm_bench.cu: benchmarks of the MSM and the 0/1 sums (gpu_bench.h) on device-resident
 * inputs: host points tiled on the device, pseudo-random scalars or bitmap. */
#include <type_traits>

#include "bench.cuh"

__global__ void k_tile(uint4 *dst, const uint4 *src, size_t words_src, size_t words_dst)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < words_dst) dst[i] = src[i % words_src];
}

__global__ void k_fill_scalars(dfr *v, uint32_t n, uint32_t seed)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t s = seed ^ (i * 0x9e3779b9u) ^ 0x5bd1e995u;
    dfr x;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s += 0x6d2b79f5u;
        x.v[j] = s;
    }
    x.v[7] &= 0x3fffffffu;   /* < r, close to full width */
    v[i] = x;
}

__global__ void k_fill_bitmap(uint32_t *bm, uint32_t words, uint32_t thresh, uint32_t seed)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= words) return;
    uint32_t s = seed ^ (i * 0x9e3779b9u), w = 0;
    for (int b = 0; b < 32; b++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        if (s < thresh) w |= 1u << b;
    }
    bm[i] = w;
}

/* the 0/1 sums of msm_sum.cu by group */
template <class F>
static int sum_dev(struct gpu_ctx *ctx, d_xyzz<F> *out, const d_aff<F> *bases, const uint32_t *bitmap, size_t n,
                   cudaStream_t st, struct cuzk_error *err)
{
    if constexpr (sizeof(F) == 48) return gpu_g1_sum_bitmap_dev(ctx, out, bases, bitmap, n, st, err);
    else return gpu_g2_sum_bitmap_dev(ctx, out, bases, bitmap, n, st, err);
}

/* the MSMs of msm.cu by group; their result in host memory */
template <class F> using bench_jac = typename std::conditional<sizeof(F) == 48, g1_jac_t, g2_jac_t>::type;
template <class F>
static int msm_of(struct gpu_ctx *ctx, bench_jac<F> *out, const d_aff<F> *bases, const dfr *scalars, size_t n,
                  cudaStream_t st, struct cuzk_error *err)
{
    if constexpr (sizeof(F) == 48) return gpu_g1_msm_dev(ctx, out, bases, scalars, NULL, n, NULL, st, err);
    else return gpu_g2_msm_dev(ctx, out, bases, scalars, NULL, n, NULL, st, err);
}

template <class F>
static int bench_msm_t(struct gpu_ctx *ctx, size_t n, const void *points, size_t distinct,
                       double density, int reps, double *ms, struct cuzk_error *err)
{
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    size_t pbytes = sizeof(d_aff<F>);
    void *db, *ds, *dsrc, *dr;
    rc = gpu_scratch(ctx, SL_STREAM_BASES, n * pbytes, &db, err);
    if (!rc) rc = gpu_scratch(ctx, SL_BENCH1, n * sizeof(fr_t), &ds, err);
    if (!rc) rc = gpu_scratch(ctx, SL_BENCH0, distinct * pbytes, &dsrc, err);
    if (!rc) rc = gpu_scratch(ctx, SL_RESULTS, 4096, &dr, err);
    if (rc) return rc;
    cudaStream_t st = ctx->st[0];
    CK(cudaMemcpy(dsrc, points, distinct * pbytes, cudaMemcpyHostToDevice));
    size_t wd = n * pbytes / 16;
    k_tile<<<gpu_div_up(wd, 256), 256, 0, st>>>((uint4 *)db, (const uint4 *)dsrc, distinct * pbytes / 16, wd);
    CK_LAUNCH();
    if (density > 0) {
        uint32_t words = (uint32_t)((n + 31) / 32);
        double th = density * 4294967296.0;
        k_fill_bitmap<<<gpu_div_up(words, 256), 256, 0, st>>>((uint32_t *)ds, words, th >= 4294967295.0 ? 0xffffffffu : (uint32_t)th, 99);
    } else {
        k_fill_scalars<<<gpu_div_up(n, 256), 256, 0, st>>>((dfr *)ds, (uint32_t)n, 4242);
    }
    CK_LAUNCH();
    CK(cudaStreamSynchronize(st));
    /* the MSM returns after its host-side Horner pass, so the end event (recorded then)
     * covers it */
    bench_jac<F> res;
    return gpu_time_reps(st, reps, ms, [&]() {
        if (density > 0)
            return sum_dev<F>(ctx, (d_xyzz<F> *)dr, (const d_aff<F> *)db, (const uint32_t *)ds, n, st, err);
        return msm_of<F>(ctx, &res, (const d_aff<F> *)db, (const dfr *)ds, n, st, err);
    }, err);
}

extern "C" int gpu_bench_msm(struct gpu_ctx *ctx, int g, size_t n, const void *points,
                             size_t distinct, double bitmap_density, int reps, double *ms,
                             struct cuzk_error *err)
{
    if (g == 1) return bench_msm_t<dfp>(ctx, n, points, distinct, bitmap_density, reps, ms, err);
    if (g == 2) return bench_msm_t<dfp2>(ctx, n, points, distinct, bitmap_density, reps, ms, err);
    return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_bench_msm: group %d (expected 1 or 2)", g);
}
