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

/* ---- Fr products in the FP64 pipe (issue 52's candidate; measured here before any kernel
 * takes it). An element is five 52-bit limbs held in doubles, Montgomery with R = 2^260. A
 * limb product p = a b < 2^104 is split exactly by two FMAs: hi = fma_rz(a, b, 2^104) lies in
 * [2^104, 2^105), where the spacing is 2^52, so its mantissa is floor(p / 2^52); then
 * fma(a, b, 2^104 + 2^52 - hi) = p mod 2^52 + 2^52 is exact, its mantissa the low half. The
 * halves' bit patterns, less those of 2^104 and 2^52, are summed in 64-bit integer columns
 * (at most 20 terms below 2^52 each), so the integer pipe only adds. Products stay below 2r
 * for inputs below 2r (4r < 2^260). ---- */
struct e52 {
    double v[5];
};
namespace e52c {
constexpr double C1 = 0x1p104, C2 = 0x1p52, C3 = 0x1p104 + 0x1p52;
constexpr uint64_t OFF_HI = 0x4670000000000000ull, OFF_LO = 0x4330000000000000ull, M52 = (1ull << 52) - 1;
constexpr uint64_t MP = 0xffffeffffffffull;   /* -r^-1 mod 2^52 */
__host__ __device__ constexpr uint64_t rl(int i)
{
    return i == 0 ? 0xfffff00000001ull : i == 1 ? 0x2fffe5bfefffull : i == 2 ? 0x9a1d80553bda4ull
         : i == 3 ? 0x7d483339d8080ull : 0x73eda753299dull;
}
}   // namespace e52c

__device__ __forceinline__ void e52_mac(uint64_t &lo_col, uint64_t &hi_col, double a, double b)
{
    const double hi = __fma_rz(a, b, e52c::C1);
    const double lo = fma(a, b, e52c::C3 - hi);
    lo_col += (uint64_t)__double_as_longlong(lo) - e52c::OFF_LO;
    hi_col += (uint64_t)__double_as_longlong(hi) - e52c::OFF_HI;
}

__device__ __forceinline__ double e52_of(uint64_t x) { return __longlong_as_double((long long)(x | e52c::OFF_LO)) - e52c::C2; }

__device__ __forceinline__ e52 operator*(const e52 &a, const e52 &b)
{
    uint64_t c[10];
#pragma unroll
    for (int k = 0; k < 10; k++) c[k] = 0;
#pragma unroll
    for (int i = 0; i < 5; i++)
#pragma unroll
        for (int j = 0; j < 5; j++) e52_mac(c[i + j], c[i + j + 1], a.v[i], b.v[j]);
#pragma unroll
    for (int i = 0; i < 5; i++) {   /* c[i] is whole here: the carries below it are in */
        const double q = e52_of((c[i] * e52c::MP) & e52c::M52);
#pragma unroll
        for (int j = 0; j < 5; j++) e52_mac(c[i + j], c[i + j + 1], q, (double)e52c::rl(j));
        c[i + 1] += c[i] >> 52;   /* c[i]'s low 52 bits are now zero */
    }
    e52 o;
#pragma unroll
    for (int k = 5; k < 9; k++) {
        c[k + 1] += c[k] >> 52;
        o.v[k - 5] = e52_of(c[k] & e52c::M52);
    }
    o.v[4] = e52_of(c[9]);
    return o;
}

__device__ __forceinline__ e52 e52_from(const uint32_t w[8])
{
    uint64_t x[4];
#pragma unroll
    for (int k = 0; k < 4; k++) x[k] = w[2 * k] | (uint64_t)w[2 * k + 1] << 32;
    e52 o;
    o.v[0] = e52_of(x[0] & e52c::M52);
    o.v[1] = e52_of((x[0] >> 52 | x[1] << 12) & e52c::M52);
    o.v[2] = e52_of((x[1] >> 40 | x[2] << 24) & e52c::M52);
    o.v[3] = e52_of((x[2] >> 28 | x[3] << 36) & e52c::M52);
    o.v[4] = e52_of(x[3] >> 16);
    return o;
}

/* a below 2r to eight canonical 32-bit words */
__device__ __forceinline__ void e52_to(uint32_t w[8], const e52 &a)
{
    uint64_t l[5], x[4];
#pragma unroll
    for (int k = 0; k < 5; k++) l[k] = (uint64_t)__double_as_longlong(a.v[k] + e52c::C2) - e52c::OFF_LO;
    /* subtract r once if a >= r (limbwise with borrow) */
    uint64_t t[5], br = 0;
#pragma unroll
    for (int k = 0; k < 5; k++) {
        const uint64_t d = l[k] - e52c::rl(k) - br;
        br = d >> 63;
        t[k] = d & e52c::M52;
    }
    if (!br)
#pragma unroll
        for (int k = 0; k < 5; k++) l[k] = t[k];
    x[0] = l[0] | l[1] << 52;
    x[1] = l[1] >> 12 | l[2] << 40;
    x[2] = l[2] >> 24 | l[3] << 28;
    x[3] = l[3] >> 36 | l[4] << 16;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        w[2 * k] = (uint32_t)x[k];
        w[2 * k + 1] = (uint32_t)(x[k] >> 32);
    }
}

/* Checks the FP64 product against field.cuh's: for pseudo-random a, b < r, a b 2^-260 two
 * ways (the IMAD product times 2^252 in Montgomery form is a b 2^-256 2^-4); counts mismatches. */
__global__ void k_e52_check(unsigned long long *bad, uint32_t seed, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    dfr a, b, s;
    uint32_t h = seed ^ (uint32_t)t * 0x9e3779b9u;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        h = h * 1664525u + 1013904223u;
        a.v[k] = h ^ (h >> 15);
        h = h * 1664525u + 1013904223u;
        b.v[k] = h ^ (h >> 13);
        s.v[k] = k == 7 ? 1u << 28 : 0;   /* 2^252 */
    }
    a.v[7] &= 0x3fffffffu;   /* below 2^254 < r */
    b.v[7] &= 0x3fffffffu;
    if (t == 0) {   /* extremes: r - 1 squared */
#pragma unroll
        for (int k = 0; k < 8; k++) a.v[k] = b.v[k] = fr_params::p(k) - (k == 0);
    }
    const dfr want = (a * b) * s;
    uint32_t got[8];
    e52_to(got, e52_from(a.v) * e52_from(b.v));
    bool ok = true;
#pragma unroll
    for (int k = 0; k < 8; k++) ok &= got[k] == want.v[k];
    if (!ok) atomicAdd(bad, 1ull);
}

/* C chains of FP64 products per thread; with `mix`, half the chains are field.cuh's IMAD
 * products instead, in the same loop: whether the two pipes add up. */
template <bool MIX> __global__ void k_peak_e52(uint32_t *sink, uint32_t seed, int iters)
{
    constexpr int C = 4;
    e52 a[C], b;
    dfr x[C / 2], y;
#pragma unroll
    for (int k = 0; k < 5; k++) b.v[k] = (double)((seed * 2654435761u + k * 40503u) & 0xfffffu) * 4096.0 + k;
#pragma unroll
    for (int k = 0; k < 8; k++) y.v[k] = seed * 2654435761u + k * 40503u;
    y.v[7] &= 0x0fffffffu;
#pragma unroll
    for (int c = 0; c < C; c++)
#pragma unroll
        for (int k = 0; k < 5; k++) a[c].v[k] = (double)(threadIdx.x * 7919u + blockIdx.x + c + k);
#pragma unroll
    for (int c = 0; c < C / 2; c++)
#pragma unroll
        for (int k = 0; k < 8; k++) x[c].v[k] = (threadIdx.x * 7919u + blockIdx.x + c + k) & (k == 7 ? 0x0fffffffu : ~0u);
    for (int i = 0; i < iters; i++) {
        if (MIX) {
#pragma unroll
            for (int c = 0; c < C / 2; c++) {
                a[c] = a[c] * b;
                x[c] = x[c] * y;
            }
        } else {
#pragma unroll
            for (int c = 0; c < C; c++) a[c] = a[c] * b;
        }
    }
    double s = 0;
    uint32_t u = 0;
#pragma unroll
    for (int c = 0; c < C; c++) s += a[c].v[0];
#pragma unroll
    for (int c = 0; c < C / 2; c++) u ^= x[c].v[0];
    if (s == (double)seed && u == seed) sink[blockIdx.x] = seed;
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
    if (!rc && !(rc = pk_time(reps, [&] { k_peak_e52<false><<<blocks, PK_THREADS>>>(sink, 3, fit); }, &ms, err)))
        out->fr_mul_fp64 = threads * fit * 4 / (ms * 1e-3);
    if (!rc && !(rc = pk_time(reps, [&] { k_peak_e52<true><<<blocks, PK_THREADS>>>(sink, 3, fit); }, &ms, err)))
        out->fr_mul_mix = threads * fit * 4 / (ms * 1e-3);
    if (!rc) {
        unsigned long long *bad = NULL;
        const int nc = 1 << 22;
        CK(cudaMalloc(&bad, sizeof *bad));
        CK(cudaMemset(bad, 0, sizeof *bad));
        for (int k = 0; k < 4; k++) k_e52_check<<<nc / 256, 256>>>(bad, 0x51ed + 977u * k, nc);
        CK_LAUNCH();
        CK(cudaMemcpy(&out->fr_fp64_bad, bad, sizeof *bad, cudaMemcpyDeviceToHost));
        out->fr_fp64_checked = 4ull * nc;
        cudaFree(bad);
    }
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
