/* peak.cu: the device's measured peaks (peak.h). Each kernel keeps several independent chains
 * per thread so that the pipe, not one chain's latency, bounds it; enough blocks fill every SM
 * several times over. Results feed a conditional store the compiler cannot prove dead. */
#include <algorithm>
#include <vector>

#include "../gpu_internal.cuh"
#include "../field.cuh"
#include "peak.h"

#define PK_THREADS 256
#define PK_CHAINS 8

/* a = a * x + y in PK_CHAINS independent chains: one IMAD each. */
__global__ void k_peak_imad(uint32_t *sink, uint32_t seed, int iters)
{
    uint32_t a[PK_CHAINS];
    const uint32_t x = seed | 1u, y = threadIdx.x + seed;
#pragma unroll
    for (int c = 0; c < PK_CHAINS; c++) a[c] = blockIdx.x * 977u + threadIdx.x * 31u + c;
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int c = 0; c < PK_CHAINS; c++) a[c] = a[c] * x + y;
    }
    uint32_t s = 0;
#pragma unroll
    for (int c = 0; c < PK_CHAINS; c++) s ^= a[c];
    if (s == seed) sink[blockIdx.x] = s;
}

/* The carry-chain form a field product issues: per chain, mad.lo.cc then madc.hi.cc into a
 * two-word accumulator (counted as 2 instructions). */
__global__ void k_peak_imad_cc(uint32_t *sink, uint32_t seed, int iters)
{
    uint32_t lo[PK_CHAINS], hi[PK_CHAINS];
    const uint32_t x = seed | 1u;
#pragma unroll
    for (int c = 0; c < PK_CHAINS; c++) {
        lo[c] = blockIdx.x * 977u + threadIdx.x * 31u + c;
        hi[c] = lo[c] ^ 0x5bd1e995u;
    }
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int c = 0; c < PK_CHAINS; c++) {
            uint32_t l = cz_madlo_cc(lo[c], x, hi[c]);
            hi[c] = cz_madhi_c(lo[c], x, l);
            lo[c] = l;
        }
    }
    uint32_t s = 0;
#pragma unroll
    for (int c = 0; c < PK_CHAINS; c++) s ^= lo[c] ^ hi[c];
    if (s == seed) sink[blockIdx.x] = s;
}

__global__ void k_peak_dfma(uint32_t *sink, uint32_t seed, int iters)
{
    double a[PK_CHAINS];
    const double x = 0.999999 + 1e-9 * (seed & 7), y = 1e-7 * threadIdx.x;
#pragma unroll
    for (int c = 0; c < PK_CHAINS; c++) a[c] = 1.0 + 1e-3 * c + 1e-6 * blockIdx.x;
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int c = 0; c < PK_CHAINS; c++) a[c] = fma(a[c], x, y);
    }
    double s = 0;
#pragma unroll
    for (int c = 0; c < PK_CHAINS; c++) s += a[c];
    if (s == (double)seed) sink[blockIdx.x] = seed;
}

/* Half the chains integer, half FP64, in one loop: if the pipes run side by side the loop
 * costs about what either half costs alone. */
__global__ void k_peak_mix(uint32_t *sink, uint32_t seed, int iters)
{
    uint32_t a[PK_CHAINS];
    double d[PK_CHAINS];
    const uint32_t x = seed | 1u, y = threadIdx.x + seed;
    const double dx = 0.999999 + 1e-9 * (seed & 7), dy = 1e-7 * threadIdx.x;
#pragma unroll
    for (int c = 0; c < PK_CHAINS; c++) {
        a[c] = blockIdx.x * 977u + threadIdx.x * 31u + c;
        d[c] = 1.0 + 1e-3 * c;
    }
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int c = 0; c < PK_CHAINS; c++) {
            a[c] = a[c] * x + y;
            d[c] = fma(d[c], dx, dy);
        }
    }
    uint32_t s = 0;
    double t = 0;
#pragma unroll
    for (int c = 0; c < PK_CHAINS; c++) {
        s ^= a[c];
        t += d[c];
    }
    if (s == seed && t == 0.0) sink[blockIdx.x] = s;
}

/* Montgomery products of field.cuh, 4 independent chains per thread (a register budget like
 * the MSM rounds'). */
template <class F> __global__ void k_peak_field(uint32_t *sink, uint32_t seed, int iters)
{
    constexpr int C = 4;
    F a[C], b;
#pragma unroll
    for (int k = 0; k < (int)(sizeof b.v / 4); k++) b.v[k] = seed * 2654435761u + k * 40503u;
    b.v[sizeof b.v / 4 - 1] &= 0x0fffffffu;   /* below the modulus */
#pragma unroll
    for (int c = 0; c < C; c++) {
#pragma unroll
        for (int k = 0; k < (int)(sizeof b.v / 4); k++) a[c].v[k] = threadIdx.x * 7919u + blockIdx.x + c + k;
        a[c].v[sizeof b.v / 4 - 1] &= 0x0fffffffu;
    }
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int c = 0; c < C; c++) a[c] = a[c] * b;
    }
    uint32_t s = 0;
#pragma unroll
    for (int c = 0; c < C; c++) s ^= a[c].v[0];
    if (s == seed) sink[blockIdx.x] = s;
}

__global__ void k_peak_read(const uint4 *__restrict__ p, size_t n, uint32_t *sink)
{
    uint32_t s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcs(p + i);
        s ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (s == 0x9e3779b9u) sink[blockIdx.x] = s;
}

__global__ void k_peak_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        __stcs(dst + i, __ldcs(src + i));
}

/* Times `launch` reps times after a warm-up; median milliseconds in *ms. */
template <class L> static int pk_time(int reps, L launch, double *ms, struct cuzk_error *err)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> t;
    for (int r = -1; r < reps; r++) {
        CK(cudaEventRecord(e0));
        launch();
        CK_LAUNCH();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float f = 0;
        CK(cudaEventElapsedTime(&f, e0, e1));
        if (r >= 0) t.push_back(f);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    std::sort(t.begin(), t.end());
    *ms = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
    return 0;
}

extern "C" int gpu_peak_measure(int dev, int reps, struct gpu_peak *out, struct cuzk_error *err)
{
    if (reps < 1) reps = 5;
    *out = {};
    CK(cudaSetDevice(dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    int clock_khz = 0;
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    out->sms = prop.multiProcessorCount;
    out->clock_mhz = clock_khz / 1e3;
    const int blocks = out->sms * 16;
    const double threads = (double)blocks * PK_THREADS;
    uint32_t *sink = NULL;
    CK(cudaMalloc(&sink, blocks * sizeof *sink));
    int rc = 0;
    double ms = 0;
    const int it = 1 << 14;
    const double ops = threads * it * PK_CHAINS;
    if (!(rc = pk_time(reps, [&] { k_peak_imad<<<blocks, PK_THREADS>>>(sink, 3, it); }, &ms, err)))
        out->imad = ops / (ms * 1e-3);
    if (!rc && !(rc = pk_time(reps, [&] { k_peak_imad_cc<<<blocks, PK_THREADS>>>(sink, 3, it); }, &ms, err)))
        out->imad_cc = 2 * ops / (ms * 1e-3);
    if (!rc && !(rc = pk_time(reps, [&] { k_peak_dfma<<<blocks, PK_THREADS>>>(sink, 3, it / 4); }, &ms, err)))
        out->dfma = ops / 4 / (ms * 1e-3);
    if (!rc && !(rc = pk_time(reps, [&] { k_peak_mix<<<blocks, PK_THREADS>>>(sink, 3, it / 4); }, &ms, err))) {
        out->mix_imad = ops / 4 / (ms * 1e-3);
        out->mix_dfma = ops / 4 / (ms * 1e-3);
    }
    const int fit = 1 << 10;
    if (!rc && !(rc = pk_time(reps, [&] { k_peak_field<dfr><<<blocks, PK_THREADS>>>(sink, 3, fit); }, &ms, err)))
        out->fr_mul = threads * fit * 4 / (ms * 1e-3);
    if (!rc && !(rc = pk_time(reps, [&] { k_peak_field<dfp><<<blocks, PK_THREADS>>>(sink, 3, fit / 2); }, &ms, err)))
        out->fp_mul = threads * fit / 2 * 4 / (ms * 1e-3);
    const size_t bytes = (size_t)4 << 30, n = bytes / sizeof(uint4);
    uint4 *buf = NULL;
    if (!rc) {
        cudaError_t e = cudaMalloc(&buf, bytes);
        if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "cudaMalloc(4 GiB for the DRAM peak)", __FILE__, __LINE__);
    }
    if (!rc) {
        CK(cudaMemset(buf, 0x5a, bytes));
        const int mb = out->sms * 8;
        if (!(rc = pk_time(reps, [&] { k_peak_read<<<mb, 512>>>(buf, n, sink); }, &ms, err)))
            out->dram_read = bytes / (ms * 1e-3);
        if (!rc && !(rc = pk_time(reps, [&] { k_peak_copy<<<mb, 512>>>(buf, buf + n / 2, n / 2); }, &ms, err)))
            out->dram_copy = bytes / (ms * 1e-3);
    }
    cudaFree(buf);
    cudaFree(sink);
    return rc;
}
