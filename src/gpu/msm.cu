/* msm.cu: Pippenger MSM for G1 and G2 on the GPU (signed Booth digits, (bucket, point) pairs
 * radix-sorted per window group, XYZZ accumulation over uniform ranges of the sorted pairs,
 * bucket reduction by running sums, Horner over windows), and the 0/1 bitmap sums. */
#include <cub/cub.cuh>
#include <type_traits>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.cuh"

#define HEAVY_SEGS 64u   /* buckets spread over more ranges are summed by a whole block */

/* The out-of-line G1 variant with 4 blocks of 128 per SM: 128 registers (24 B of spills)
 * instead of 163; measured 221 -> 214 ms at 2^24 on the H200. G2 keeps 255 registers. */
#ifndef CZ_ACC_MINB_G1
#define CZ_ACC_MINB_G1 4
#endif
/* Accumulation kernel variant for G1 (bucket accumulation and 0/1 sums):
 *   0: out-of-line mixed add, 128 threads x 4 blocks/SM (128 registers; the accumulator goes
 *      through local memory at every call)
 *   3: inlined add, 128 x 2 (200 registers, accumulator in registers) - the default
 * CUZK_GPU_MSM_ACC=N in the environment overrides the default (benchmarking). Measured and
 * removed (H200, 2^24 G1 MSM; 164 ms for variant 3): inlined at 128 x 3 without the prefetch
 * of the next point (+1% at 2^24, -0.4% at 2^27), inlined with registers capped at 128 or
 * 168 (spills: 170 / 167 ms), 64-thread blocks for 10 warps/SM (168 ms), accumulator and
 * points in shared memory with cp.async prefetch, 127 registers and 16 warps/SM without
 * spills (182 ms). More warps do not pay: see docs/gpu.md, round 3. */
#ifndef CZ_ACC_DEFAULT
#define CZ_ACC_DEFAULT 3   /* H200: 2^24 G1 MSM 213 ms (variant 0) -> 164 ms */
#endif
#ifndef CZ_ACC2_DEFAULT
#define CZ_ACC2_DEFAULT 2   /* H200: G2 2^22 MSM 207 -> 150 ms inlined; 2^24 575 -> 458 ms
                              * without the prefetch, with uniform ranges */
#endif
/* Integer switch from the environment; dflt when unset or outside [lo, hi]. */
static int env_int(const char *name, int dflt, int lo, int hi)
{
    const char *e = getenv(name);
    int x = e && e[0] ? atoi(e) : dflt;
    return x >= lo && x <= hi ? x : dflt;
}
static int env_variant(const char *name, int dflt, int max) { return env_int(name, dflt, 0, max); }
static int acc_variant(void)
{
    static int v = -1;
    if (v < 0) v = env_variant("CUZK_GPU_MSM_ACC", CZ_ACC_DEFAULT, 3);
    return v;
}
/* G2: 0 out-of-line add, 2 inlined without the prefetch of the next point (1 block/SM
 * minimum; the prefetched point held 48 of 255 registers: inlined with it, measured and
 * removed, was 575 ms at 2^24 against 458 ms); CUZK_GPU_MSM_ACC2=N overrides. */
static int acc2_variant(void)
{
    static int v = -1;
    if (v < 0) v = env_variant("CUZK_GPU_MSM_ACC2", CZ_ACC2_DEFAULT, 2);
    return v;
}

/* Work split of the bucket accumulation: uniform ranges, thread t takes sorted entries
 * [t L, (t+1) L) whatever the bucket boundaries, so every thread of a warp does L additions
 * (ncu: 31.5 active threads per warp instruction); a bucket that lies inside one range is
 * written directly, the pieces of a bucket that crosses ranges (its "tail" in the first range,
 * "heads" in the next ones) are summed afterwards. It replaced one thread per bucket segment
 * of <= 32 points (28.3 active threads; H200, with the cheaper digit extraction: G1 2^24
 * 164 -> 133 ms at L = 32, 129 ms at L = 64; 2^26 606 -> 494 / 477 ms; G2 gains once its
 * kernel no longer holds a prefetched point: 2^24 575 -> 458 ms). CUZK_GPU_MSM_L=points per
 * range (8..1024; default by size, range_len). */
/* Inlined G1 additions in the bucket reductions; CUZK_GPU_MSM_RED_INL=0 calls them out of
 * line (benchmarking). */
static bool red_inline(void)
{
    static int v = -1;
    if (v < 0) v = env_variant("CUZK_GPU_MSM_RED_INL", 1, 1);
    return v == 1;
}
/* Points per range, for n points in groups of m entries. G1 above 2^26 points 128 (H200,
 * round 4, one window per sort: 2^27 873.6 / 859.9 / 845.4 ms for L = 32 / 64 / 128); with the
 * window groups of round 12 (2^27+ entries) 32 below that (L = 32 / 64 / 128 / 256: 2^24 95.71 /
 * 96.68 / 96.86 / 97.52 ms, 2^26 331.47 / 332.21 / 333.07 / 335.18); 64 for small groups (round
 * 4, 2^24 in groups of 2^26: 133.8 / 128.5 / 129.8). G2 64 with groups of up to 2^27 entries
 * (round 9: its rounds leave ~16-32 entries per bucket, and with 128 the fifth round lost), 256
 * from 2^28 (2^24 in one group of 16 windows: 252.05 / 251.03 / 252.22 / 249.70). */
template <class F> static uint32_t range_len(size_t n, size_t m)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("CUZK_GPU_MSM_L");
        int x = e && e[0] ? atoi(e) : 0;
        v = x >= 8 && x <= 1024 ? x : 0;
    }
    if (v) return (uint32_t)v;
    if (sizeof(F) > 48) return m >= ((size_t)1 << 28) ? 256u : 64u;
    if (n > ((size_t)1 << 26)) return 128u;
    return m >= ((size_t)1 << 27) ? 32u : 64u;
}

template <class F> struct blk {
    /* shared-memory trees hold BS points: keep them within the 48 KiB static limit */
    static constexpr int BS = sizeof(d_xyzz<F>) > 256 ? 64 : 128;
};

__device__ __forceinline__ uint32_t win_bits(const uint32_t *s, unsigned bit, unsigned c)
{
    if (bit >= 256) return 0;
    unsigned w = bit >> 5, sh = bit & 31;
    uint64_t v = s[w];
    if (w + 1 < 8) v |= (uint64_t)s[w + 1] << 32;
    return (uint32_t)(v >> sh) & ((1u << c) - 1);
}

/* Booth carry into window w0 without walking the windows below: with low = s mod 2^(w0 c),
 * the carry is 1 exactly when low > T = sum_{i < w0} 2^(c-1) 2^(i c) (induction over the
 * windows: carry 0 keeps low <= T, a digit v > 2^(c-1) pushes low past the next T, and with
 * carry 1 the same holds for v >= 2^(c-1)). The host passes T and the mask of low's bits. */
struct carry_thr {
    uint32_t t[8], mask[8];
};

static carry_thr make_carry_thr(unsigned c, unsigned w0)
{
    carry_thr r;
    memset(&r, 0, sizeof r);
    const unsigned nb = w0 * c;   /* < 256: w0 < ceil(256 / c) */
    for (unsigned b = 0; b < nb; b++) {
        r.mask[b >> 5] |= 1u << (b & 31);
        if (b % c == c - 1) r.t[b >> 5] |= 1u << (b & 31);
    }
    return r;
}

/* Window value v (c bits + incoming carry) as a signed Booth digit, with the carry into the
 * next window; keys[o] = kbase + |d| - 1 (the sentinel for d = 0), vals[o] = point | sign << 31. */
__device__ __forceinline__ uint32_t put_digit(uint32_t *keys, uint32_t *vals, size_t o, uint32_t v, unsigned c,
                                              uint32_t kbase, uint32_t sentinel, uint32_t pidx)
{
    const uint32_t B = 1u << (c - 1), carry = v > B;
    const int32_t d = carry ? (int32_t)v - (int32_t)(1u << c) : (int32_t)v;
    if (d == 0) {
        keys[o] = sentinel;
        vals[o] = 0;
    } else {
        const uint32_t mag = d < 0 ? (uint32_t)(-d) : (uint32_t)d;
        keys[o] = kbase + mag - 1;
        vals[o] = pidx | (d < 0 ? 0x80000000u : 0u);
    }
    return carry;
}

/* Signed digits of windows [w0, w0+g) of every scalar: key = window-in-group * B + |d| - 1
 * (sentinel g * B for a zero digit), value = point index | sign << 31. */
__global__ void k_digits(uint32_t *keys, uint32_t *vals, const dfr *sc, const uint32_t *idx,
                         uint32_t n, unsigned c, unsigned w0, unsigned g, carry_thr thr)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    dfr s = f_from_mont(sc[i]);
    uint32_t pidx = idx ? idx[i] : i;
    const uint32_t B = 1u << (c - 1);
    int cmp = 0;   /* low vs T, decided at the most significant differing word */
#pragma unroll
    for (int j = 7; j >= 0; j--) {
        uint32_t lw = s.v[j] & thr.mask[j];
        if (cmp == 0) cmp = lw > thr.t[j] ? 1 : lw < thr.t[j] ? -1 : 0;
    }
    uint32_t carry = cmp > 0;
    for (unsigned w = w0; w < w0 + g; w++)
        carry = put_digit(keys, vals, (size_t)(w - w0) * n + i, win_bits(s.v, w * c, c) + carry, c,
                          (w - w0) * B, g * B, pidx);
}

/* One window per sort (n > 2^25 points): k_digits would read each 32-byte scalar and leave
 * Montgomery form once per window (12-13 times; 32 ms of a 2^27 G1 MSM). Instead the scalars
 * are converted once into 8 planes of 32-bit words (plane j holds word j of every scalar, so a
 * window reads only the one or two planes its bits lie in, coalesced), and the Booth carry
 * passes from window to window through one byte per scalar. The windows run in order 0 .. W-1. */
__global__ void k_digit_planes(uint32_t *pl, const dfr *sc, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const dfr s = f_from_mont(sc[i]);
#pragma unroll
    for (int j = 0; j < 8; j++) pl[(size_t)j * n + i] = s.v[j];
}

/* Digits of window w from the planes (same keys and values as k_digits with g = 1). */
__global__ void k_digits_pl(uint32_t *keys, uint32_t *vals, uint8_t *carry, const uint32_t *pl,
                            const uint32_t *idx, uint32_t n, unsigned c, unsigned w)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned bit = w * c, wd = bit >> 5, sh = bit & 31;
    uint64_t x = wd < 8 ? pl[(size_t)wd * n + i] : 0;
    if (wd + 1 < 8 && sh + c > 32) x |= (uint64_t)pl[(size_t)(wd + 1) * n + i] << 32;
    const uint32_t v = ((uint32_t)(x >> sh) & ((1u << c) - 1)) + (w ? carry[i] : 0u);
    carry[i] = (uint8_t)put_digit(keys, vals, i, v, c, 0, 1u << (c - 1), idx ? idx[i] : i);
}

/* Bucket bounds in the sorted keys; *valid = number of entries before the zero-digit
 * sentinels (left untouched, i.e. 0 from the memset, when every digit is zero). */
__global__ void k_bounds(uint32_t *bstart, uint32_t *bend, uint32_t *valid, const uint32_t *keys,
                         uint32_t m, uint32_t sentinel)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    uint32_t k = keys[i];
    if (k >= sentinel) return;
    if (i == 0 || keys[i - 1] != k) bstart[k] = i;
    if (i == m - 1 || keys[i + 1] != k) {
        bend[k] = i + 1;
        if (i == m - 1 || keys[i + 1] >= sentinel) *valid = i + 1;
    }
}

/* ---- batch-affine rounds (before the XYZZ accumulation) ----
 * One round halves every bucket run of the sorted list: entries (2j, 2j+1) of a run become
 * one affine point, an odd last entry is carried over. An affine addition needs 1/(x2 - x1);
 * thread t takes the outputs o = t + k T (k < M, strided so that neighbouring threads touch
 * neighbouring entries) and inverts the product of its M denominators once (Montgomery's
 * trick: 3 products per pair), so a pair costs ~6 products (lambda, lambda^2, y3 and the trick)
 * instead of the ~10 of an XYZZ mixed addition, plus a share of one Fermat inversion (~490
 * products) per block of 128 threads (block_inv; CUZK_GPU_MSM_AFF_BINV=0: one per thread,
 * over its M ~ 100-1000 pairs). After R rounds the reduced list (explicit points, same
 * bucket order, 2^R times shorter runs) goes through the unchanged XYZZ accumulation. */

/* cnt[b] = outputs of bucket b in this round = ceil(len / 2) */
__global__ void k_aff_count(uint32_t *cnt, const uint32_t *bstart, const uint32_t *bend, uint32_t nb)
{
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < nb) cnt[b] = (bend[b] - bstart[b] + 1) >> 1;
}

/* For each entry p at an even offset of its run: output o = ost[b] + off / 2 adds the points
 * of entries p and p + 1 (none when p is the run's last entry). pair[o] holds their values
 * (point index | sign << 31; vin == NULL: the entry's position, i.e. the previous round's
 * output, unsigned), so the round kernel reaches its points with one dependent load. */
#define AFF_NONE 0xffffffffu
__global__ void k_aff_src(uint2 *pair, uint32_t *kout, const uint32_t *kin, const uint32_t *vin,
                          const uint32_t *bstart, const uint32_t *ost, const uint32_t *vcount)
{
    uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t V = *vcount;
    if (p >= V) return;
    const uint32_t b = kin[p], off = p - bstart[b];
    if (off & 1) return;
    const uint32_t o = ost[b] + (off >> 1);
    const bool single = p + 1 >= V || kin[p + 1] != b;
    uint2 pr;
    pr.x = vin ? vin[p] : p;
    pr.y = single ? AFF_NONE : vin ? vin[p + 1] : p + 1;
    pair[o] = pr;
    kout[o] = b;
}

/* The new list's bucket bounds and length (into *vout, which may be the input count: it was
 * read by k_aff_src already). */
__global__ void k_aff_bounds(uint32_t *bstart, uint32_t *bend, uint32_t *vout, const uint32_t *cnt,
                             const uint32_t *ost, uint32_t nb)
{
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb) return;
    bstart[b] = ost[b];
    bend[b] = ost[b] + cnt[b];
    if (b == nb - 1) *vout = ost[b] + cnt[b];
}

/* Point of value v (index | sign << 31). */
template <class F> __device__ __forceinline__ d_aff<F> aff_load(const d_aff<F> *pin, uint32_t v)
{
    d_aff<F> q = ld_vec(&pin[v & 0x7fffffffu]);
    if (v >> 31) q.y = f_neg(q.y);
    return q;
}

enum { AK_KEEP1 = 0, AK_KEEP2 = 1, AK_ADD = 2, AK_DBL = 3, AK_INF = 4 };

/* Kind of the pair (p1, p2) and the denominator of its lambda (1 when there is none). */
template <class F>
__device__ __forceinline__ int aff_kind(F &d, const d_aff<F> &p1, const d_aff<F> &p2, bool single)
{
    d = field_traits<F>::one();
    if (single || aff_is_inf(p2)) return AK_KEEP1;
    if (aff_is_inf(p1)) return AK_KEEP2;
    F dx = p2.x - p1.x;
    if (!f_is_zero(dx)) {
        d = dx;
        return AK_ADD;
    }
    if (f_eq(p1.y, p2.y)) {   /* P + P: lambda = 3 x^2 / 2y (y != 0 in G1 and G2) */
        d = f_dbl(p1.y);
        return AK_DBL;
    }
    return AK_INF;   /* P + (-P) */
}

/* The denominator from the x coordinates alone (half the bytes: the forward pass needs
 * nothing else unless x1 == x2 or an x is 0, which may be infinity). */
template <class F> __device__ __forceinline__ F aff_denom(const d_aff<F> *pin, uint2 pr)
{
    if (pr.y == AFF_NONE) return field_traits<F>::one();
    const F x1 = ld_vec(&pin[pr.x & 0x7fffffffu].x), x2 = ld_vec(&pin[pr.y & 0x7fffffffu].x);
    F d = x2 - x1;
    if (f_is_zero(d) || f_is_zero(x1) || f_is_zero(x2)) aff_kind(d, aff_load(pin, pr.x), aff_load(pin, pr.y), false);
    return d;
}

/* A field element from lane - d (UP) or lane + d of the warp (all 32 lanes take part). */
template <bool UP, class F> __device__ __forceinline__ F shfl_f(const F &a, unsigned d)
{
    F r;
    const uint32_t *s = (const uint32_t *)&a;
    uint32_t *o = (uint32_t *)&r;
#pragma unroll
    for (int i = 0; i < (int)(sizeof(F) / 4); i++)
        o[i] = UP ? __shfl_up_sync(0xffffffffu, s[i], d) : __shfl_down_sync(0xffffffffu, s[i], d);
    return r;
}

/* 1 / a for every thread of a block of AFF_BT threads (a != 0), with one inversion per block
 * instead of one per thread: prefix and suffix products across the warp's lanes (5 steps
 * each), Montgomery's trick over the warp totals by thread 0, then 1/a = 1/(warp total) x
 * (product of the lanes below) x (product of the lanes above). Per warp ~12 products and
 * 1/4 of an inversion instead of a whole one (~380 squarings and ~96 products): the
 * inversion was ~12% of the round kernel at 2^27. Every thread of the block must call it. */
#define AFF_BT 128
template <class F> __device__ __forceinline__ F block_inv(const F &a)
{
    __shared__ F wt[AFF_BT / 32];
    const uint32_t lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const F one = field_traits<F>::one();
    F pre = a, suf = a;   /* inclusive prefix / suffix products over the lanes */
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        F u = shfl_f<true>(pre, d), v = shfl_f<false>(suf, d);
        pre = pre * (lane >= d ? u : one);
        suf = suf * (lane + d < 32 ? v : one);
    }
    if (lane == 31) wt[w] = pre;
    __syncthreads();
    if (threadIdx.x == 0) {
        F p[AFF_BT / 32];
        p[0] = wt[0];
#pragma unroll
        for (int k = 1; k < AFF_BT / 32; k++) p[k] = p[k - 1] * wt[k];
        F inv = f_inv(p[AFF_BT / 32 - 1]);
#pragma unroll
        for (int k = AFF_BT / 32 - 1; k > 0; k--) {
            const F ik = inv * p[k - 1];
            inv = inv * wt[k];
            wt[k] = ik;
        }
        wt[0] = inv;
    }
    __syncthreads();
    const F pe = shfl_f<true>(pre, 1), se = shfl_f<false>(suf, 1);
    F r = wt[w];
    if (lane > 0) r = r * pe;
    if (lane < 31) r = r * se;
    return r;
}

/* The pair's sum from its kind and ik = 1 / d (d from aff_kind). */
template <class F>
__device__ __forceinline__ d_aff<F> aff_result(int kind, const d_aff<F> &p1, const d_aff<F> &p2, const F &ik)
{
    d_aff<F> r;
    if (kind == AK_ADD || kind == AK_DBL) {
        F num;
        if (kind == AK_ADD) {
            num = p2.y - p1.y;
        } else {
            F x2 = f_sqr(p1.x);
            num = x2 + f_dbl(x2);
        }
        F lam = num * ik;
        r.x = f_sqr(lam) - p1.x - p2.x;   /* p2.x == p1.x when doubling */
        r.y = lam * (p1.x - r.x) - p1.y;
    } else if (kind == AK_KEEP1) {
        r = p1;
    } else if (kind == AK_KEEP2) {
        r = p2;
    } else {
        r.x = field_traits<F>::zero();
        r.y = field_traits<F>::zero();
    }
    return r;
}

/* Norm of an Fp2 denominator, d0^2 + d1^2 (u^2 = -1), nonzero for d != 0 since -1 is not a
 * square in Fp (p = 3 mod 4). */
__device__ __forceinline__ dfp aff_norm(const dfp2 &d) { return d.c0 * d.c0 + d.c1 * d.c1; }

/* NORM (G2 only): Montgomery's trick runs over the denominators' norms in Fp instead of the
 * denominators in Fp2, with 1/d = conj(d) / N(d). Per pair the forward pass costs the same (2
 * squarings + 1 product against one Fp2 product of 3), the backward pass 2 Fp products
 * (1/N(d) from the prefix, then the running inverse times N(d)) plus 2 for conj(d) / N(d)
 * instead of two Fp2 products (6); the slot of pre holds (prefix, N(d)) in the same 96 bytes
 * as an Fp2 prefix, and block_inv runs in Fp. */
template <class F, int MINB, bool BINV, bool NORM>
__global__ void __launch_bounds__(AFF_BT, MINB) k_aff_round(d_aff<F> *pout, F *pre, uint32_t *vout, const uint2 *pair,
                                                            const d_aff<F> *pin, const uint32_t *vcount, uint32_t T)
{
    /* the batch-inversion field: Fp for NORM, F otherwise */
    using B = typename std::conditional<NORM, dfp, F>::type;
    static_assert(!NORM || sizeof(F) == 2 * sizeof(dfp), "NORM is for Fp2 only");
    B *const pb = (B *)pre;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t V = *vcount;
    /* BINV: every thread of the block reaches block_inv (idle ones with M = 0) */
    if (!BINV && (t >= T || t >= V)) return;
    const uint32_t M = t < T && t < V ? (V - 1 - t) / T + 1 : 0;
    B acc = field_traits<B>::one();
    uint2 nx = M ? pair[t] : make_uint2(0, 0);
    for (uint32_t k = 0; k < M; k++) {
        const uint32_t o = t + k * T;
        const uint2 pr = nx;
        if (k + 1 < M) nx = pair[o + T];   /* the next pair's indices while this one loads */
        if constexpr (NORM) {
            const dfp n = aff_norm(aff_denom(pin, pr));
            acc = acc * n;
            st_vec(&pb[2 * o], acc);
            st_vec(&pb[2 * o + 1], n);
        } else {
            acc = acc * aff_denom(pin, pr);
            st_vec(&pb[o], acc);
        }
    }
    B inv;
    if constexpr (BINV) inv = block_inv(acc);
    else inv = f_inv(acc);
    if (!M) return;
    nx = pair[t + (M - 1) * T];
    for (int k = (int)M - 1; k >= 0; k--) {
        const uint32_t o = t + (uint32_t)k * T;
        const uint2 pr = nx;
        if (k > 0) nx = pair[o - T];
        const bool single = pr.y == AFF_NONE;
        d_aff<F> p1 = aff_load(pin, pr.x), p2;
        if (!single) p2 = aff_load(pin, pr.y);
        else p2 = p1;
        F d;
        const int kind = aff_kind(d, p1, p2, single);
        F ik;   /* 1 / d_k */
        if constexpr (NORM) {
            dfp in = inv;   /* 1 / N(d_k) */
            if (k > 0) {
                in = inv * ld_vec(&pb[2 * (o - T)]);
                inv = inv * ld_vec(&pb[2 * o + 1]);
            }
            ik.c0 = d.c0 * in;
            ik.c1 = f_neg(d.c1 * in);
        } else {
            ik = inv;
            if (k > 0) {
                ik = inv * ld_vec(&pb[o - T]);
                inv = inv * d;
            }
        }
        st_vec(&pout[o], aff_result(kind, p1, p2, ik));
        vout[o] = o;   /* identity values for the accumulation over pout */
    }
}

/* Full XYZZ addition in the bucket reductions (k_combine_u, k_winred): inlined for G1 when
 * RI (accumulators stay in registers instead of passing through local memory at every call),
 * out of line otherwise and always for G2 (its points are twice as large). */
template <class F, bool RI> __device__ __forceinline__ void red_add(d_xyzz<F> &p, const d_xyzz<F> &q)
{
    if constexpr (RI && sizeof(F) == 48) xyzz_add_i(p, q);
    else xyzz_add(p, q);
}

/* Uniform ranges: thread t adds the points of sorted entries [t L, (t+1) L)
 * (ending at *valid); each bucket run it meets is written to buckets[key] when it lies inside
 * the range, to head[t] when it began in an earlier range, to tail[t] when it begins here and
 * goes on into the next range (at most one of each per thread). */
template <class F, bool INL, int MINB, bool PF>
__global__ void __launch_bounds__(128, MINB) k_accum_u(d_xyzz<F> *buckets, d_xyzz<F> *head, d_xyzz<F> *tail,
                                                       const uint32_t *keys, const uint32_t *vals,
                                                       const d_aff<F> *bases, const uint32_t *valid, uint32_t L)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t V = *valid;
    const uint64_t s64 = (uint64_t)t * L;
    if (s64 >= V) return;
    const uint32_t s = (uint32_t)s64, e = min(s + L, V);
    uint32_t cur = keys[s];
    bool open = s > 0 && keys[s - 1] == cur;   /* the first run began in an earlier range */
    d_xyzz<F> acc;
    xyzz_set_inf(acc);
    uint32_t v = vals[s], k = cur;
    d_aff<F> p;
    if (PF) p = ld_vec(&bases[v & 0x7fffffffu]);
    for (uint32_t i = s; i < e; i++) {
        d_aff<F> q;
        if (PF) {
            q = p;
        } else {
            v = vals[i];
            k = keys[i];
            q = ld_vec(&bases[v & 0x7fffffffu]);
        }
        const bool neg = v >> 31;
        const uint32_t ki = k;
        if (PF && i + 1 < e) {   /* fetch the next entry while this one is added */
            v = vals[i + 1];
            k = keys[i + 1];
            p = ld_vec(&bases[v & 0x7fffffffu]);
        }
        if (ki != cur) {   /* run `cur` ended inside this range */
            st_vec(open ? &head[t] : &buckets[cur], acc);
            xyzz_set_inf(acc);
            open = false;
            cur = ki;
        }
        if (neg) q.y = f_neg(q.y);
        if (INL) xyzz_add_aff_i(acc, q);
        else xyzz_add_aff(acc, q);
    }
    const bool goes_on = e < V && keys[e] == cur;
    st_vec(open ? &head[t] : goes_on ? &tail[t] : &buckets[cur], acc);
}

/* Buckets of the uniform ranges: empty ones become infinity, runs that crossed ranges are
 * tail[t0] + head[t0+1] + ... + head[t1]; very long runs go to k_heavy_u. */
template <class F, bool RI>
__global__ void k_combine_u(d_xyzz<F> *buckets, uint32_t *heavy, uint32_t *heavy_count,
                            const d_xyzz<F> *head, const d_xyzz<F> *tail, const uint32_t *bstart,
                            const uint32_t *bend, uint32_t L, uint32_t nb)
{
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb) return;
    uint32_t s = bstart[b], e = bend[b];
    d_xyzz<F> acc;
    if (s == e) {
        xyzz_set_inf(acc);
        st_vec(&buckets[b], acc);
        return;
    }
    uint32_t t0 = s / L, t1 = (e - 1) / L;
    if (t0 == t1) return;   /* written by k_accum_u */
    if (t1 - t0 > HEAVY_SEGS) {
        heavy[atomicAdd(heavy_count, 1u)] = b;
        return;
    }
    acc = ld_vec(&tail[t0]);
    for (uint32_t t = t0 + 1; t <= t1; t++) red_add<F, RI>(acc, ld_vec(&head[t]));
    st_vec(&buckets[b], acc);
}

template <class F, int BS>
__device__ __forceinline__ void block_reduce(d_xyzz<F> *sh, d_xyzz<F> acc, d_xyzz<F> *out)
{
    const int t = threadIdx.x;
    sh[t] = acc;
    __syncthreads();
    for (int s = BS / 2; s > 0; s >>= 1) {
        if (t < s) {
            d_xyzz<F> a = sh[t];
            xyzz_add(a, sh[t + s]);
            sh[t] = a;
        }
        __syncthreads();
    }
    if (t == 0) st_vec(out, sh[0]);
    __syncthreads();
}

template <class F, int BS>
__global__ void __launch_bounds__(BS) k_heavy_u(d_xyzz<F> *buckets, const uint32_t *heavy,
                                                const uint32_t *heavy_count, const d_xyzz<F> *head,
                                                const d_xyzz<F> *tail, const uint32_t *bstart,
                                                const uint32_t *bend, uint32_t L)
{
    __shared__ d_xyzz<F> sh[BS];
    uint32_t hc = *heavy_count;
    for (uint32_t h = blockIdx.x; h < hc; h += gridDim.x) {
        uint32_t b = heavy[h], t0 = bstart[b] / L, t1 = (bend[b] - 1) / L;
        d_xyzz<F> acc;
        xyzz_set_inf(acc);
        if (threadIdx.x == 0) acc = ld_vec(&tail[t0]);
        for (uint32_t t = t0 + 1 + threadIdx.x; t <= t1; t += BS) xyzz_add(acc, ld_vec(&head[t]));
        block_reduce<F, BS>(sh, acc, &buckets[b]);
    }
}

/* Groups of P contiguous points; block q sums elements [part*per, (part+1)*per) of group
 * q / parts into out[q]. */
template <class F, int BS>
__global__ void __launch_bounds__(BS) k_sum_groups(d_xyzz<F> *out, const d_xyzz<F> *in,
                                                   uint32_t P, uint32_t parts, uint32_t per)
{
    __shared__ d_xyzz<F> sh[BS];
    uint32_t q = blockIdx.x, grp = q / parts, part = q % parts;
    uint32_t lo = part * per, hi = min(P, lo + per);
    d_xyzz<F> acc;
    xyzz_set_inf(acc);
    for (uint32_t e = lo + threadIdx.x; e < hi; e += BS) xyzz_add(acc, ld_vec(&in[(size_t)grp * P + e]));
    block_reduce<F, BS>(sh, acc, &out[q]);
}

/* Running sums over x[0..K) from the top: run = sum x_i, acc = sum (i + 1) x_i (ONE_BASED)
 * or sum i x_i (acc takes run before x_i joins it). */
template <class F, bool RI, bool ONE_BASED>
__device__ __forceinline__ void running_sums(d_xyzz<F> &run, d_xyzz<F> &acc, const d_xyzz<F> *x, uint32_t K)
{
    xyzz_set_inf(run);
    xyzz_set_inf(acc);
    for (int jj = (int)K - 1; jj >= 0; jj--) {
        if (!ONE_BASED) red_add<F, RI>(acc, run);
        red_add<F, RI>(run, ld_vec(&x[jj]));
        if (ONE_BASED) red_add<F, RI>(acc, run);
    }
}

/* acc += m * run (double-and-add over the bits of m, from its highest set bit: the
 * multiples are bucket offsets below 2^(c-1), so starting at bit 31 doubled infinity 17 or
 * more times per thread for nothing). */
template <class F> __device__ __forceinline__ void add_multiple(d_xyzz<F> &acc, const d_xyzz<F> &run, uint32_t m)
{
    if (!m) return;
    d_xyzz<F> t;
    xyzz_set_inf(t);
    for (int bit = 31 - __clz(m); bit >= 0; bit--) {
        xyzz_dbl(t, t);
        if ((m >> bit) & 1) xyzz_add(t, run);
    }
    xyzz_add(acc, t);
}

/* Window reduction: thread (w, s) runs over buckets [sK, (s+1)K) of window w from the top:
 * run = sum b_j, acc = sum (j - sK + 1) b_j; emits acc + sK * run. Bucket j holds digit j+1. */
template <class F, bool RI>
__global__ void k_winred(d_xyzz<F> *out, const d_xyzz<F> *buckets, uint32_t B, uint32_t S,
                         uint32_t K, uint32_t g)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= g * S) return;
    uint32_t w = id / S, s = id % S;
    d_xyzz<F> run, acc;
    running_sums<F, RI, true>(run, acc, buckets + (size_t)w * B + (size_t)s * K, K);
    add_multiple(acc, run, s * K);
    st_vec(&out[id], acc);
}

/* Two-level window reduction (default). Level 1: thread (w, s) over buckets [sK, (s+1)K) of
 * window w: acc_s = sum_i (i+1) b_(sK+i) and R_s = sum_i b_(sK+i), no offset term, so K can
 * be small (more threads, shorter serial chains). Since sum_j (j+1) b_j = sum_s acc_s +
 * K sum_s s R_s, level 2 computes sum_s s R_s the same way over the R_s (weights i, plus the
 * offset s2 K2 times the level-2 run by double-and-add, on S / K2 threads only), and
 * k_win_fix adds K times its total to the window sum. */
template <class F, bool RI>
__global__ void k_winred_l1(d_xyzz<F> *acc_out, d_xyzz<F> *run_out, const d_xyzz<F> *buckets,
                            uint32_t B, uint32_t S, uint32_t K, uint32_t g)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= g * S) return;
    uint32_t w = id / S, s = id % S;
    d_xyzz<F> run, acc;
    running_sums<F, RI, true>(run, acc, buckets + (size_t)w * B + (size_t)s * K, K);
    st_vec(&acc_out[id], acc);
    st_vec(&run_out[id], run);
}

template <class F, bool RI>
__global__ void k_winred_l2(d_xyzz<F> *out, const d_xyzz<F> *runs, uint32_t S, uint32_t K2,
                            uint32_t g)
{
    const uint32_t S2 = S / K2;
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= g * S2) return;
    uint32_t w = id / S2, s2 = id % S2;
    d_xyzz<F> run, acc;   /* acc = sum_i i R_(s2 K2 + i) */
    running_sums<F, RI, false>(run, acc, runs + (size_t)w * S + (size_t)s2 * K2, K2);
    add_multiple(acc, run, s2 * K2);
    st_vec(&out[id], acc);
}

/* win[w] += 2^lgk * t[w] */
template <class F>
__global__ void k_win_fix(d_xyzz<F> *win, const d_xyzz<F> *t, unsigned lgk, uint32_t g)
{
    uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= g) return;
    d_xyzz<F> x = t[w], y = win[w];
    for (unsigned i = 0; i < lgk; i++) xyzz_dbl(x, x);
    xyzz_add(y, x);
    win[w] = y;
}

/* Horner over windows (top first), plus the optional extra point, on one GPU thread: the
 * comparison path of CUZK_GPU_MSM_HOST_FINAL=0 (host_final below is the default). */
template <class F>
__global__ void k_final(d_jac<F> *out, const d_xyzz<F> *win, uint32_t W, uint32_t c, const d_xyzz<F> *extra)
{
    if (blockIdx.x || threadIdx.x) return;
    d_xyzz<F> r;
    xyzz_set_inf(r);
    for (int w = (int)W - 1; w >= 0; w--) {
        if (!xyzz_is_inf(r))
            for (uint32_t i = 0; i < c; i++) xyzz_dbl(r, r);
        xyzz_add(r, win[w]);
    }
    if (extra) xyzz_add(r, *extra);
    *out = xyzz_to_jac(r);
}

template <class F, bool INL, int MINB, bool PF>
__global__ void __launch_bounds__(128, MINB) k_bitmap_partial(d_xyzz<F> *partial, const d_aff<F> *bases,
                                 const uint32_t *bitmap, uint32_t n, uint32_t words_per_thread)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t nw = (n + 31) / 32;
    uint32_t w0 = t * words_per_thread;
    if (w0 >= nw) return;
    d_xyzz<F> acc;
    xyzz_set_inf(acc);
    for (uint32_t k = 0; k < words_per_thread && w0 + k < nw; k++) {
        uint32_t wd = bitmap[w0 + k];
        uint32_t i0 = (w0 + k) * 32;
        while (wd) {
            uint32_t bit = __ffs(wd) - 1;
            wd &= wd - 1;
            uint32_t i = i0 + bit;
            if (i < n) {
                if (INL) xyzz_add_aff_i(acc, ld_vec(&bases[i]));
                else xyzz_add_aff(acc, ld_vec(&bases[i]));
            }
        }
    }
    st_vec(&partial[t], acc);
}

/* ---- 0/1 sums by batch-affine rounds ----
 * The sum of the points selected by a bitmap as one bucket: the selected indices are paired
 * in order ((1st, 2nd), (3rd, 4th), ...) and k_aff_round adds every pair in affine form with
 * one inversion per block; each further round pairs the previous round's outputs (2o, 2o + 1),
 * and what is left after the last round is summed in XYZZ (k_aff_partial). An affine pair costs
 * ~6 Fp products against 10 for an XYZZ mixed addition, and for G2 15 Fp products (norm
 * inversion) against ~28. */

/* Set bits of word w of an n-bit bitmap (bits at n and above ignored). */
__device__ __forceinline__ uint32_t bm_word(const uint32_t *bm, uint32_t w, uint32_t n)
{
    uint32_t wd = bm[w];
    if (w == (n - 1) / 32 && (n & 31)) wd &= (1u << (n & 31)) - 1;
    return wd;
}

__global__ void k_popc_words(uint32_t *cnt, const uint32_t *bm, uint32_t n)
{
    uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w < (n + 31) / 32) cnt[w] = __popc(bm_word(bm, w, n));
}

/* m = number of set bits (woff: exclusive prefix of the word counts) */
__global__ void k_ones_total(uint32_t *m, const uint32_t *cnt, const uint32_t *woff, uint32_t nw)
{
    if (blockIdx.x || threadIdx.x) return;
    *m = woff[nw - 1] + cnt[nw - 1];
}

/* First round's pairs: the j-th set bit (index i) goes to pair[j / 2], as .x for even j and .y
 * for odd j; an odd last one is paired with nothing (AFF_NONE). *vcount = pairs. */
__global__ void k_ones_pairs(uint2 *pair, uint32_t *vcount, const uint32_t *bm, const uint32_t *woff,
                             uint32_t n, uint32_t m)
{
    uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w == 0) *vcount = (m + 1) / 2;
    if (w >= (n + 31) / 32) return;
    uint32_t wd = bm_word(bm, w, n), j = woff[w];
    while (wd) {
        const uint32_t i = w * 32 + (__ffs(wd) - 1);
        wd &= wd - 1;
        uint32_t *slot = (uint32_t *)&pair[j >> 1];
        slot[j & 1] = i;
        if (!(j & 1) && j == m - 1) slot[1] = AFF_NONE;
        j++;
    }
}

/* Pairs of the next round over the V outputs of the previous one: (2o, 2o + 1). */
__global__ void k_seq_pairs(uint2 *pair, uint32_t *vcount, uint32_t V)
{
    const uint32_t o = blockIdx.x * blockDim.x + threadIdx.x, Vn = (V + 1) / 2;
    if (o == 0) *vcount = Vn;
    if (o < Vn) pair[o] = make_uint2(2 * o, 2 * o + 1 < V ? 2 * o + 1 : AFF_NONE);
}

/* partial[t] = XYZZ sum of pts[t], pts[t + T], ... below V (T = threads of the grid). */
template <class F, bool INL, int MINB>
__global__ void __launch_bounds__(128, MINB) k_aff_partial(d_xyzz<F> *partial, const d_aff<F> *pts, uint32_t V)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, T = gridDim.x * blockDim.x;
    d_xyzz<F> acc;
    xyzz_set_inf(acc);
    for (uint32_t i = t; i < V; i += T) {
        if (INL) xyzz_add_aff_i(acc, ld_vec(&pts[i]));
        else xyzz_add_aff(acc, ld_vec(&pts[i]));
    }
    st_vec(&partial[t], acc);
}

template <class F> __global__ void k_to_jac(d_jac<F> *out, const d_xyzz<F> *in)
{
    if (blockIdx.x || threadIdx.x) return;
    *out = xyzz_to_jac(*in);
}

/* ---- host side ---- */

/* Calls launch(inl, minb, pf) with std::integral_constant values for the selected accumulation
 * variant of group F (acc_variant, acc2_variant), so every kernel that accumulates picks it
 * the same way. */
template <class F, class L> static void acc_dispatch(L launch)
{
    using namespace std;
    using yes = true_type;
    using no = false_type;
    if constexpr (sizeof(F) > 48) {   /* G2: 255 registers, 1 block/SM minimum */
        if (acc2_variant() == 0) launch(no{}, integral_constant<int, 1>{}, yes{});
        else launch(yes{}, integral_constant<int, 1>{}, no{});
    } else if (acc_variant() == 0) {
        launch(no{}, integral_constant<int, CZ_ACC_MINB_G1>{}, yes{});
    } else {
        launch(yes{}, integral_constant<int, 2>{}, yes{});
    }
}

template <class F>
static void launch_accum_u(size_t items, cudaStream_t st, d_xyzz<F> *buckets, d_xyzz<F> *head,
                           d_xyzz<F> *tail, const uint32_t *keys, const uint32_t *vals,
                           const d_aff<F> *bases, const uint32_t *valid, uint32_t L)
{
    acc_dispatch<F>([&](auto inl, auto minb, auto pf) {
        k_accum_u<F, decltype(inl)::value, decltype(minb)::value, decltype(pf)::value><<<gpu_div_up(items, 128), 128, 0, st>>>(
            buckets, head, tail, keys, vals, bases, valid, L);
    });
}

template <class F>
static void launch_bitmap(size_t items, cudaStream_t st, d_xyzz<F> *part, const d_aff<F> *bases,
                          const uint32_t *bitmap, uint32_t n, uint32_t wpt)
{
    acc_dispatch<F>([&](auto inl, auto minb, auto pf) {
        k_bitmap_partial<F, decltype(inl)::value, decltype(minb)::value, decltype(pf)::value><<<gpu_div_up(items, 128), 128, 0, st>>>(
            part, bases, bitmap, n, wpt);
    });
}

/* Reduce G groups of P contiguous points (in) to G points at dst, using two scratch slots. */
template <class F>
static int reduce_groups(struct gpu_ctx *ctx, d_xyzz<F> *dst, const d_xyzz<F> *in, uint32_t G,
                         uint32_t P, cudaStream_t st, struct cuzk_error *err)
{
    constexpr int BS = blk<F>::BS;
    const uint32_t per = 1024;
    int flip = 0;
    while (true) {
        uint32_t parts = (P + per - 1) / per;
        d_xyzz<F> *out = dst;
        if (parts > 1) {
            void *p = NULL;
            int rc = gpu_scratch(ctx, flip ? SL_RED1 : SL_RED0, (size_t)G * parts * sizeof(d_xyzz<F>), &p, err);
            if (rc) return rc;
            out = (d_xyzz<F> *)p;
            flip ^= 1;
        }
        k_sum_groups<F, BS><<<G * parts, BS, 0, st>>>(out, in, P, parts, per);
        CK_LAUNCH();
        if (parts == 1) return CUZK_OK;
        in = out;
        P = parts;
    }
}

/* Window bits measured best on the H200 (`gpu-msm --vary CUZK_GPU_MSM_C=...`, 2026-12-03, with
 * the batch-affine rounds and the host-side Horner pass), by round(log2 n); 0: the cost model.
 * The model n W + 3 2^(c-1) W ignores the bucket memory traffic and the rounds' dependence on
 * bucket occupancy, so it overshoots where these matter: G1 2^24 c = 19 114.5 ms vs the model's
 * 20 116.0, 2^26 c = 20 414.7 vs 22 426.5 (2^27 keeps 22: 735 vs 754 with 20); G2 (buckets twice
 * the bytes) 2^20 c = 15 36.5 vs 16 41.3, 2^24 c = 16 346.6 vs 20 368.4, 2^25 c = 19 657.8 vs
 * 20 685.9. */
static unsigned msm_window_measured(size_t n, bool g2)
{
    unsigned lg = 0;
    while (lg < 63 && ((size_t)1 << (lg + 1)) <= n) lg++;
    if (lg < 63 && n - ((size_t)1 << lg) >= ((size_t)1 << lg) / 2) lg++;   /* round to nearest */
    if (!g2) return lg == 24 ? 19 : lg == 26 ? 20 : 0;
    switch (lg) {
    case 20: return 15;
    case 21: case 22: case 23: case 24: return 16;
    case 25: return 19;
    default: return 0;
    }
}

static void msm_window(size_t n, bool g2, unsigned *c_out, unsigned *W_out)
{
    double best = 0;
    unsigned bc = 2;
    const char *force = getenv("CUZK_GPU_MSM_C");   /* benchmarking: fixed window bits */
    if (force && force[0] && atoi(force) >= 8 && atoi(force) <= 24 && n >= 4096) {
        *c_out = (unsigned)atoi(force);
        *W_out = (256 + *c_out - 1) / *c_out;
        return;
    }
    for (unsigned c = 2; c <= 22; c++) {
        unsigned W = (256 + c - 1) / c;
        double cost = (double)n * W + 3.0 * (double)(1u << (c - 1)) * W;
        if (c == 2 || cost < best) {
            best = cost;
            bc = c;
        }
    }
    const unsigned m = msm_window_measured(n, g2);
    if (m) bc = m;
    *c_out = bc;
    *W_out = (256 + bc - 1) / bc;
}

/* Window reduction layout. Two-level (G1 default; CUZK_GPU_MSM_WR2=0 for the one-level kernel):
 * K = 16 buckets per level-1 thread (S = B / K runs per window), K2 = 16 runs per level-2
 * thread. One-level: S bucket runs per window with 2^16 threads over the group (K = B / S, 32
 * at c >= 20), each also multiplying its run by its offset. All powers of two. */
struct wr_plan {
    bool two;
    uint32_t S, K, S2, K2;
    size_t points;   /* scratch points after the buckets: level-1 sums, runs, level-2 sums, totals */
};
static bool winred_two_level(void) { return env_variant("CUZK_GPU_MSM_WR2", 1, 1) == 1; }
/* Window reductions of group i on ctx->red_st while group i + 1 is digitised, sorted and
 * reduced (the buckets and reduction buffers double-buffered by group parity); the reduction
 * kernels are latency-bound chains on few threads (ncu: ~10% of a G1 2^24 or 2^26 MSM).
 * H200, same process: G1 2^24 / 2^26 / 2^27 107.5 / 374.9 / 691.5 -> 105.3 / 362.4 / 681.7 ms;
 * G2 (one-level reduction, already short) 2^24 312.1 -> 315.0, so G1 only by default.
 * CUZK_GPU_MSM_OVERLAP=0|1 forces it off or on for both groups. */
template <class F> static bool msm_overlap(void)
{
    return env_variant("CUZK_GPU_MSM_OVERLAP", sizeof(F) == 48 ? 1 : 0, 1) == 1;
}
/* Bucket sets an MSM of n points in W windows, g per group, uses: two (by group parity) when
 * the reductions overlap and there is more than one group. */
template <class F> static unsigned bucket_sets(size_t n, unsigned W, unsigned g)
{
    return msm_overlap<F>() && n && W > g ? 2 : 1;
}
template <class F> static wr_plan msm_runs(uint32_t B, unsigned g)
{
    wr_plan p;
    /* G1 only: k_winred_l1<G2> read past its thread's local memory (stack) under
     * compute-sanitizer on the H200 (out-of-line G2 additions); G2 keeps the one-level kernel */
    p.two = sizeof(F) == 48 && winred_two_level();
    if (p.two) {
        p.K = B < 16 ? B : 16;
        p.S = B / p.K;
        p.K2 = p.S < 16 ? p.S : 16;
        p.S2 = p.S / p.K2;
        p.points = (size_t)g * (2 * (size_t)p.S + p.S2 + 1);
    } else {
        uint32_t S = B < 65536 / g ? B : (65536 / g ? 65536 / g : 1);
        /* at least kmin buckets per thread: each thread's offset term (add_multiple, ~1.5
         * additions per bit of s K) costs more than K buckets' running sums below K ~ 16
         * (ncu, G2 2^24 with K = 2: k_winred 43.5 of 345 ms). CUZK_GPU_MSM_WR_K overrides. */
        const uint32_t kmin = (uint32_t)env_int("CUZK_GPU_MSM_WR_K", sizeof(F) > 48 ? 16 : 1, 1, 1 << 20);
        if (B / kmin < S) S = B / kmin ? B / kmin : 1;
        uint32_t s2 = 1;
        while (s2 * 2 <= S) s2 *= 2;
        p.S = s2;
        p.K = B / s2;
        p.S2 = p.K2 = 0;
        p.points = (size_t)g * s2;
    }
    return p;
}

/* Batch-affine rounds before the accumulation (k_aff_round): CUZK_GPU_MSM_AFF=R rounds for G1,
 * CUZK_GPU_MSM_AFF2 for G2 (defaults CZ_AFF_G1 / CZ_AFF_G1_LARGE / CZ_AFF_G1_HUGE, CZ_AFF_G2 /
 * CZ_AFF_G2_LARGE by size); a round runs only while its outputs give every thread at least
 * CUZK_GPU_MSM_AFF_MINPT pairs (default 128 for G1, 64 for G2) on at least 256 threads; threads per round are
 * min(SMs x CUZK_GPU_MSM_AFF_TPS (default 512 for G1, 256 for G2: one wave), outputs / MINPT). Read at every MSM (the
 * tests switch them). */
/* G1 (H200, round 12, up to 2^29 keys per sort, so a round sees several windows' pairs at
 * once): 3 rounds up to 2^24 points (2^21 17.35 against 18.29 with 4; 2^22 27.97 against 28.32
 * with 2; 2^24 96.87 against 98.66 with 2), 4 above (2^25 175.70 -> 173.73, 2^26 335.91 ->
 * 333.74, 2^27 649.70 -> 644.92 ms from 3 to 4). Before round 12 (2^26 keys per sort) a third
 * round lost at 2^24 and paid only above 2^25. Round 13: a fifth above 2^25 points (2^26 331.9
 * / 331.7 -> 331.0 / 330.8, 2^27 644.2 / 644.7 -> 640.5 / 640.5 ms, in one process; 2^24 keeps 3:
 * 95.8 against 96.0 with 4). */
#ifndef CZ_AFF_G1
#define CZ_AFF_G1 3
#endif
#ifndef CZ_AFF_G1_LARGE
#define CZ_AFF_G1_LARGE 4
#endif
#ifndef CZ_AFF_G1_HUGE
#define CZ_AFF_G1_HUGE 5
#endif
/* G2 (H200, round 9, norm inversion, accumulation ranges of 64, MINPT 64; 3 / 4 / 5 rounds):
 * 2^20 31.24 / 29.77 / 30.82 ms, 2^21 48.85 / 47.80 / 47.20, 2^22 78.08 / 78.44 / 77.75,
 * 2^23 146.66 / 142.11 / 145.97; above 2^23 a fifth: 2^24 288.12 / 279.02 / 276.08, 2^25
 * 551.62 / 556.12 / 552.48. Round 12 (larger window groups), 4 / 5 / 6 rounds: 2^20 29.50 /
 * 30.51 / 31.98, 2^21 47.51 / 47.00 / 47.78, 2^22 77.57 / 77.00 / 75.90, 2^23 135.43 / 136.48 /
 * 135.81, 2^24 255.41 / 250.78 / 250.62, 2^25 498.74 / 486.70 / 488.57: within ~1%, kept. */
#ifndef CZ_AFF_G2
#define CZ_AFF_G2 4
#endif
#ifndef CZ_AFF_G2_LARGE
#define CZ_AFF_G2_LARGE 5
#endif
/* Threads of one wave of the round kernel (the cap on a round's threads): G1's runs 4 blocks of
 * 128 per SM, G2's 2; CUZK_GPU_MSM_AFF_TPS overrides the threads per SM. */
template <class F> static size_t aff_wave(const struct gpu_ctx *ctx)
{
    return (size_t)(ctx->sm_count > 0 ? ctx->sm_count : 1) *
           (size_t)env_int("CUZK_GPU_MSM_AFF_TPS", sizeof(F) > 48 ? 256 : 512, 32, 4096);
}
struct aff_plan {
    unsigned rounds;
    size_t out[8];       /* upper bound on each round's outputs */
    uint32_t thr[8];     /* threads of each round */
};
template <class F> static aff_plan aff_rounds(const struct gpu_ctx *ctx, size_t n, size_t m, size_t nb)
{
    aff_plan a;
    memset(&a, 0, sizeof a);
    const bool g2 = sizeof(F) > 48;
    /* H200: G1 2^20 12.7 -> 13.2 ms with one round, 2^22 35.2 -> 32.5 ms with two */
    if (n < (size_t)env_int("CUZK_GPU_MSM_AFF_MIN_N", g2 ? 1 << 20 : 1 << 21, 0, 1 << 30)) return a;
    const int rdef = g2 ? (n > ((size_t)1 << 23) ? CZ_AFF_G2_LARGE : CZ_AFF_G2)
                        : n > ((size_t)1 << 25) ? CZ_AFF_G1_HUGE
                        : n > ((size_t)1 << 24) ? CZ_AFF_G1_LARGE : CZ_AFF_G1;
    const unsigned R = (unsigned)env_int(g2 ? "CUZK_GPU_MSM_AFF2" : "CUZK_GPU_MSM_AFF", rdef, 0, 8);
    /* G2 64 (round 9 sweep: with 64 the last round of a size gets its full wave of threads) */
    const size_t minpt = (size_t)env_int("CUZK_GPU_MSM_AFF_MINPT", g2 ? 64 : 128, 1, 1 << 20);
    const size_t tmax = aff_wave<F>(ctx);
    size_t ub = m;
    while (a.rounds < R) {
        /* sum over buckets of ceil(len / 2) <= (entries + non-empty buckets) / 2 */
        size_t o = (ub + (nb < ub ? nb : ub)) / 2;
        if (o < minpt * 256) break;
        size_t t = o / minpt;
        a.out[a.rounds] = o;
        a.thr[a.rounds] = (uint32_t)(t < tmax ? t : tmax);
        a.rounds++;
        ub = o;
    }
    return a;
}

/* New GPU memory the slots in need[] take: a slot smaller than asked for regrows, and
 * gpu_scratch frees the old buffer before it allocates the new one, so it costs the difference.
 * (Counting the whole new size made the plan think memory was short after a smaller MSM on the
 * same context: a 2^27 G1 MSM after a 2^25 one sorted 2 windows at a time instead of 4, 662
 * against 640 ms on the H200.) */
struct slot_need {
    enum gpu_slot s;
    size_t bytes;
};
static size_t slots_extra(const struct gpu_ctx *ctx, const slot_need *need, size_t count)
{
    size_t extra = 0;
    for (size_t i = 0; i < count; i++) {
        const enum gpu_slot s = need[i].s;
        if (ctx->loan[s] && ctx->loan_size[s] >= need[i].bytes) continue;   /* lent memory */
        const size_t have = ctx->slot[s] ? ctx->slot_size[s] : 0;
        if (need[i].bytes > have) extra += need[i].bytes - have;
    }
    return extra;
}

/* Free GPU memory for new scratch, less gpu_mem_check's 64 MiB margin; CUZK_GPU_MSM_MEM_CAP=bytes
 * caps the free memory seen here (test hook). */
static int scratch_avail(struct gpu_ctx *ctx, size_t *avail, struct cuzk_error *err)
{
    size_t fr = 0, tot = 0;
    int rc = gpu_mem_info(ctx, &fr, &tot, err);
    if (rc) return rc;
    const char *cap = getenv("CUZK_GPU_MSM_MEM_CAP");
    if (cap && cap[0]) {
        unsigned long long v = strtoull(cap, NULL, 10);
        if (v < fr) fr = (size_t)v;
    }
    const size_t margin = (size_t)64 << 20;   /* as gpu_mem_check */
    *avail = fr > margin ? fr - margin : 0;
    return CUZK_OK;
}

/* Key bits of a sort of g windows of 2^(c-1) buckets (key = window * B + |d| - 1). */
static unsigned sort_end_bit(unsigned c, unsigned g)
{
    unsigned end_bit = c - 1;
    for (unsigned gg = g; gg; gg >>= 1) end_bit++;
    return end_bit > 32 ? 32 : end_bit;
}

/* CUB's temporary storage (size queries: CUB touches no memory when the storage pointer is
 * NULL; 0 if CUB reports an error, which the call itself then reports): for sorting m
 * (key, value) pairs of sort_end_bit(c, g) bits, and for the exclusive scan of nb counts of
 * the batch-affine rounds. Exact sizes matter beyond the bytes: the plan re-queries free
 * memory (and may shrink the group) whenever a slot is smaller than its estimate, so an
 * over-estimate made every steady-state MSM re-plan against the memory reserve. */
static size_t sort_tmp_bytes(size_t m, unsigned c, unsigned g)
{
    size_t bytes = 0;
    cub::DoubleBuffer<uint32_t> dk(NULL, NULL), dv(NULL, NULL);
    if (cub::DeviceRadixSort::SortPairs(NULL, bytes, dk, dv, (int)m, 0, (int)sort_end_bit(c, g)) != cudaSuccess)
        return 0;
    return bytes;
}
static size_t scan_tmp_bytes(size_t nb)
{
    size_t bytes = 0;
    if (cub::DeviceScan::ExclusiveSum(NULL, bytes, (uint32_t *)NULL, (uint32_t *)NULL, (int)nb) != cudaSuccess) return 0;
    return bytes;
}

/* Scratch the MSM still has to allocate for window c with g windows per group (slots already
 * large enough cost nothing). */
template <class F>
static size_t msm_extra_bytes(const struct gpu_ctx *ctx, size_t n, unsigned c, unsigned g, unsigned W, bool aff,
                              bool planes)
{
    const size_t B = (size_t)1 << (c - 1), m = (size_t)g * n, nb = (size_t)g * B;
    const size_t X = sizeof(d_xyzz<F>);
    const size_t pieces = 2 * (m / range_len<F>(n, m) + 1);   /* head and tail per range */
    /* batch-affine rounds (aff_reduce): points of rounds 1 and 2, prefix products, pairs,
     * bucket counts + offsets, scan storage (estimated) */
    const aff_plan ap = aff ? aff_rounds<F>(ctx, n, m, nb) : aff_plan{};
    const size_t o1 = ap.rounds ? ap.out[0] : 0, o2 = ap.rounds > 1 ? ap.out[1] : 0;
    const size_t ab = ap.rounds ? nb * 4 : 0;
    const slot_need need[] = {
        {SL_KEYS0, m * 4}, {SL_KEYS1, m * 4}, {SL_VALS0, m * 4}, {SL_VALS1, m * 4},
        {SL_BSTART, nb * 4}, {SL_BEND, nb * 4}, {SL_HEAVY, nb * 4}, {SL_PARTIAL, pieces * X},
        {SL_BUCKETS, (nb + msm_runs<F>((uint32_t)B, g).points) * X * bucket_sets<F>(n, W, g)},
        {SL_WIN, (size_t)W * X},
        {SL_CUB, sort_tmp_bytes(m ? m : 1, c, g)},
        {SL_AFF_PTS0, o1 * sizeof(d_aff<F>)}, {SL_AFF_PTS1, o2 * sizeof(d_aff<F>)}, {SL_AFF_PRE, o1 * sizeof(F)},
        {SL_AFF_PAIR, o1 * sizeof(uint2)}, {SL_AFF_CNT, 2 * ab}, {SL_AFF_CUB, ab ? scan_tmp_bytes(nb) : 0},
        {SL_PLANES, planes ? n * sizeof(fr_t) : 0}, {SL_CARRY, planes ? n : 0},
    };
    return slots_extra(ctx, need, sizeof need / sizeof need[0]);
}

/* Window size and windows per group: c minimises n W + 3 * 2^(c-1) W (or the measured table),
 * and up to 2^29 keys are sorted at once; then, while the scratch would not fit in free GPU
 * memory, fewer windows per group down to 2^26 keys, then no word planes, no batch-affine
 * rounds, fewer windows per group, smaller windows (the window size is chosen "by size and by
 * free memory"). Groups above 2^26 keys are taken only while GPU_MSM_RESERVE bytes stay free
 * beside them (a second witness buffer for the prover's prefetch, decisions.md), or the
 * prover's exact ctx->msm_reserve during its MSMs.
 * CUZK_GPU_MSM_MEM_CAP=bytes caps the free memory seen here (test hook). */
#ifndef CZ_SORT_LG
#define CZ_SORT_LG 29
#endif
#define GPU_MSM_RESERVE ((size_t)8 << 30)
template <class F>
static int msm_plan(struct gpu_ctx *ctx, size_t n, unsigned *c_out, unsigned *W_out, unsigned *g_out,
                    bool *aff_out, bool *planes_out, struct cuzk_error *err)
{
    unsigned c, W;
    msm_window(n, sizeof(F) > 48, &c, &W);
    /* keys per sort: up to 2^sort_lg (CUZK_GPU_MSM_SORT_LG, 20..30; the sort counts in int).
     * More windows per sort pay at every size measured (H200, G1 2^24 / 2^26 / 2^27 at 2^26,
     * 2^28, 2^29 keys: 106.0 / 363.5 / 680.9, 99.1 / 344.0 / 669.0, 99.1 / 336.4 / 651.5 ms;
     * G2 2^24 277.2 -> 252.5 ms with all 16 windows in one sort) */
    const unsigned sort_lg = (unsigned)env_int("CUZK_GPU_MSM_SORT_LG", CZ_SORT_LG, 20, 30);
    auto per_sort = [&](size_t keys) {
        unsigned gg = n ? (unsigned)((keys / n) ? (keys / n) : 1) : W;
        return gg > W ? W : gg;
    };
    unsigned g = per_sort((size_t)1 << sort_lg);
    /* the plan before round 12: 2^26 keys (CUZK_GPU_MSM_SORT_BASE_LG lowers it: test hook) */
    const unsigned g_base = per_sort((size_t)1 << env_int("CUZK_GPU_MSM_SORT_BASE_LG", 26, 10, 26));
    /* test hook: at most this many windows per sort (CUZK_GPU_MSM_G=1 gives small MSMs the
     * one-window-per-sort path of the large ones) */
    const unsigned gmax = (unsigned)env_int("CUZK_GPU_MSM_G", 0, 0, 256);
    if (gmax && g > gmax) g = gmax;
    /* word planes: only with one window per sort (CUZK_GPU_MSM_PLANES=0 keeps k_digits) */
    bool planes_ok = env_variant("CUZK_GPU_MSM_PLANES", 1, 1) == 1;
    auto planes = [&] { return n && planes_ok && g == 1 && W > 1; };
    /* steady state: the scratch of an earlier MSM of this size is already there */
    bool aff = true;
    size_t extra = n ? msm_extra_bytes<F>(ctx, n, c, g, W, aff, planes()) : 0;
    size_t avail = 0;
    if (extra) {
        int rc = scratch_avail(ctx, &avail, err);
        if (rc) return rc;
    }
    /* (extra 0: the slots are already that large, the memory is taken) */
    /* the prover's own reserve (ctx->msm_reserve) replaces the default; CUZK_GPU_MSM_RESERVE_GB
     * (0..64) overrides both (measurement hook) */
    const int rgb = env_int("CUZK_GPU_MSM_RESERVE_GB", -1, 0, 64);
    const size_t reserve = rgb >= 0 ? (size_t)rgb << 30 : ctx->msm_reserve ? ctx->msm_reserve : GPU_MSM_RESERVE;
    auto over = [&] { return extra > avail || (g > g_base && extra && avail - extra < reserve); };
    while (over()) {
        if (g > g_base) {
            g = (g + 1) / 2 > g_base ? (g + 1) / 2 : g_base;
        } else if (planes()) {
            planes_ok = false;   /* the word planes go first (4 GiB at 2^27 points) */
        } else if (aff && aff_rounds<F>(ctx, n, (size_t)g * n, (size_t)g << (c - 1)).rounds) {
            aff = false;   /* then the batch-affine rounds' buffers */
        } else if (g > 1) {
            g = (g + 1) / 2;
        } else if (c > 8) {
            c--;
            W = (256 + c - 1) / c;
        } else {
            break;   /* the allocations report the shortage with sizes */
        }
        extra = msm_extra_bytes<F>(ctx, n, c, g, W, aff, planes());
    }
    *aff_out = aff;
    *planes_out = planes();
    *c_out = c;
    *W_out = W;
    *g_out = g;
    ctx->msm_last_c = c;
    ctx->msm_last_g = g;
    ctx->msm_last_aff = 0;   /* set by the first window group */
    ctx->msm_last_planes = *planes_out;
    /* CUZK_GPU_MSM_TRACE=1: the plan of every MSM on stderr (which group the prover's MSMs
     * get beside its other buffers; free and new scratch are 0 when the scratch already
     * sufficed, so no memory query was made) */
    if (env_int("CUZK_GPU_MSM_TRACE", 0, 0, 1))
        fprintf(stderr, "cuzk gpu msm plan: %s n=%zu c=%u W=%u g=%u aff=%d planes=%d free=%.1f GiB new scratch=%.1f GiB\n",
                sizeof(F) > 48 ? "G2" : "G1", n, c, W, g, (int)aff, (int)*planes_out, avail / 1073741824.0,
                extra / 1073741824.0);
    return CUZK_OK;
}

/* One inversion per block of the round kernel (block_inv); CUZK_GPU_MSM_AFF_BINV=0: one per
 * thread (benchmarking). */
static bool aff_binv(void) { return env_variant("CUZK_GPU_MSM_AFF_BINV", 1, 1) == 1; }
/* G2: batch inversion over the denominators' norms in Fp (k_aff_round NORM, default, with one
 * inversion per block); CUZK_GPU_MSM_AFF_NORM=0: over the Fp2 denominators. */
static bool aff_norm_on(void) { return env_variant("CUZK_GPU_MSM_AFF_NORM", 1, 1) == 1; }

/* One batch-affine round of T threads (k_aff_round) in the variant of group F: G2 with the
 * norm inversion (norm), else one inversion per block (binv) or per thread.
 * G1 at 128 registers: 4 blocks of 128 per SM; G2 needs all 255. (H200, with block_inv:
 * capping G1 at 102 / 85 registers for 5 / 6 blocks per SM was slower, 2^27 692.9 -> 712.3 /
 * 718.4 ms; G2 at 170 registers for 3 blocks, although ncu shows its rounds at 8 warps per SM
 * waiting on dependent latency with the IMAD pipe 64% busy, was slower too: 2^24 312.7 ->
 * 334.8 ms.) */
template <class F>
static void launch_aff_round(uint32_t T, bool binv, bool norm, cudaStream_t st, d_aff<F> *pout, F *pre,
                             uint32_t *vout, const uint2 *pairs, const d_aff<F> *pin, const uint32_t *vcount)
{
    constexpr int MB = sizeof(F) == 48 ? 4 : 1;
    constexpr bool G2 = sizeof(F) != 48;
    const unsigned blocks = gpu_div_up(T, AFF_BT);
    if (G2 && norm)
        k_aff_round<F, MB, true, G2><<<blocks, AFF_BT, 0, st>>>(pout, pre, vout, pairs, pin, vcount, T);
    else if (binv)
        k_aff_round<F, MB, true, false><<<blocks, AFF_BT, 0, st>>>(pout, pre, vout, pairs, pin, vcount, T);
    else
        k_aff_round<F, MB, false, false><<<blocks, AFF_BT, 0, st>>>(pout, pre, vout, pairs, pin, vcount, T);
}

/* R batch-affine rounds over the sorted list (keys sk, values sv; bounds and *d_valid from
 * k_bounds): writes the reduced list's points (slot AFF_PTS0/1), keys (alternating between
 * kalt and sk), identity values (valt) and its bounds and length in place. */
template <class F>
static int aff_reduce(struct gpu_ctx *ctx, const aff_plan &ap, uint32_t mg, uint32_t nbg, uint32_t *sk,
                      uint32_t *kalt, const uint32_t *sv, uint32_t *valt, const d_aff<F> *bases,
                      uint32_t *bstart, uint32_t *bend, uint32_t *d_valid, cudaStream_t st,
                      const d_aff<F> **pts_out, const uint32_t **keys_out, struct cuzk_error *err)
{
    void *pts[2] = {NULL, NULL}, *pre, *cnt, *cubt;
    int rc = gpu_scratch(ctx, SL_AFF_PTS0, ap.out[0] * sizeof(d_aff<F>), &pts[0], err);
    if (!rc && ap.rounds > 1) rc = gpu_scratch(ctx, SL_AFF_PTS1, ap.out[1] * sizeof(d_aff<F>), &pts[1], err);
    if (!rc) rc = gpu_scratch(ctx, SL_AFF_PRE, ap.out[0] * sizeof(F), &pre, err);
    if (!rc) rc = gpu_scratch(ctx, SL_AFF_CNT, (size_t)nbg * 8, &cnt, err);
    void *pairs = NULL;
    if (!rc) rc = gpu_scratch(ctx, SL_AFF_PAIR, ap.out[0] * sizeof(uint2), &pairs, err);
    if (rc) return rc;
    uint32_t *d_cnt = (uint32_t *)cnt, *d_ost = d_cnt + nbg;
    const size_t scan_bytes = scan_tmp_bytes(nbg);
    rc = gpu_scratch(ctx, SL_AFF_CUB, scan_bytes, &cubt, err);
    if (rc) return rc;
    const unsigned TB = 256;
    const bool binv = aff_binv(), norm = aff_norm_on();
    uint32_t *kin = sk, *kout = kalt;
    const d_aff<F> *pin = bases;
    size_t vin_ub = mg;
    for (unsigned r = 0; r < ap.rounds; r++) {
        k_aff_count<<<gpu_div_up(nbg, TB), TB, 0, st>>>(d_cnt, bstart, bend, nbg);
        CK_LAUNCH();
        size_t sb = scan_bytes;
        CK(cub::DeviceScan::ExclusiveSum(cubt, sb, d_cnt, d_ost, (int)nbg, st));
        k_aff_src<<<gpu_div_up(vin_ub, TB), TB, 0, st>>>((uint2 *)pairs, kout, kin, r == 0 ? sv : NULL, bstart, d_ost, d_valid);
        CK_LAUNCH();
        k_aff_bounds<<<gpu_div_up(nbg, TB), TB, 0, st>>>(bstart, bend, d_valid, d_cnt, d_ost, nbg);
        CK_LAUNCH();
        d_aff<F> *pout = (d_aff<F> *)pts[r & 1];
        launch_aff_round<F>(ap.thr[r], binv, norm, st, pout, (F *)pre, valt, (const uint2 *)pairs, pin, d_valid);
        CK_LAUNCH();
        pin = pout;
        uint32_t *tk = kin;
        kin = kout;
        kout = tk;
        vin_ub = ap.out[r];
    }
    *pts_out = pin;
    *keys_out = kin;
    return CUZK_OK;
}

/* ---- the last step of an MSM on the CPU ----
 * Combining the W window sums is a chain of (W - 1) c dependent doublings (~240-260) that no
 * number of GPU threads shortens. One GPU thread runs it at ~10 us per G1 doubling (each
 * product a dependent carry chain, no other warp to hide it): 2.6 ms of a 2^24 G1 MSM and
 * more for G2. A CPU core does a doubling in ~0.25 us, so the window sums (W points, 2.5 KiB
 * for G1) come back to the host and the Horner pass runs there (Yrrid and Matter Labs finish
 * their ZPrize MSMs on the host for the same reason). host_grp maps a device group onto the
 * CPU library's XYZZ functions; the layouts are the same bytes. */
template <class F> struct host_grp;
template <> struct host_grp<dfp> {
    typedef g1_xyzz_t X;
    typedef g1_jac_t J;
    static bool is_inf(const X *p) { return fp_is_zero(&p->zz); }
    static void set_inf(X *p) { g1_xyzz_set_inf(p); }
    static void dbl(X *p) { g1_xyzz_dbl(p, p); }
    static void add(X *p, const X *q) { g1_xyzz_add(p, p, q); }
    static void to_jac(J *o, const X *p) { g1_xyzz_to_jac(o, p); }
};
template <> struct host_grp<dfp2> {
    typedef g2_xyzz_t X;
    typedef g2_jac_t J;
    static bool is_inf(const X *p) { return fp2_is_zero(&p->zz); }
    static void set_inf(X *p) { g2_xyzz_set_inf(p); }
    static void dbl(X *p) { g2_xyzz_dbl(p, p); }
    static void add(X *p, const X *q) { g2_xyzz_add(p, p, q); }
    static void to_jac(J *o, const X *p) { g2_xyzz_to_jac(o, p); }
};
static_assert(sizeof(g1_xyzz_t) == sizeof(d_xyzz<dfp>) && sizeof(g2_xyzz_t) == sizeof(d_xyzz<dfp2>), "XYZZ layout");
static_assert(sizeof(g1_jac_t) == sizeof(d_jac<dfp>) && sizeof(g2_jac_t) == sizeof(d_jac<dfp2>), "Jacobian layout");

/* CUZK_GPU_MSM_HOST_FINAL=0: the one-thread device kernel instead (read at every MSM, so a
 * test or `gpu-msm --vary` can compare both in one process). */
static bool host_final(void) { return env_variant("CUZK_GPU_MSM_HOST_FINAL", 1, 1) == 1; }

/* out (host) = sum_w 2^(w c) win[w] + extra; win and extra on the device, stream st. Returns
 * with st synchronised. */
template <class F>
static int msm_finish(typename host_grp<F>::J *out, const d_xyzz<F> *win, unsigned W, unsigned c,
                      const d_xyzz<F> *extra, void *small, cudaStream_t st, struct cuzk_error *err)
{
    typedef host_grp<F> H;
    if (!host_final()) {
        d_jac<F> *dj = (d_jac<F> *)((char *)small + 2048);   /* past k_bounds' counters */
        k_final<F><<<1, 1, 0, st>>>(dj, win, W, c, extra);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(out, dj, sizeof *out, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        return CUZK_OK;
    }
    typename H::X hw[129];   /* W = ceil(256 / c) <= 128 (c >= 2), plus extra */
    if (W > 128) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu msm: %u windows (max 128)", W);
    if (W) CK(cudaMemcpyAsync(hw, win, W * sizeof hw[0], cudaMemcpyDeviceToHost, st));
    if (extra) CK(cudaMemcpyAsync(&hw[W], extra, sizeof hw[0], cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    typename H::X r;
    H::set_inf(&r);
    for (int w = (int)W - 1; w >= 0; w--) {
        if (!H::is_inf(&r))
            for (unsigned i = 0; i < c; i++) H::dbl(&r);
        H::add(&r, &hw[w]);
    }
    if (extra) H::add(&r, &hw[W]);
    H::to_jac(out, &r);
    return CUZK_OK;
}

template <class F>
static int msm_dev(struct gpu_ctx *ctx, typename host_grp<F>::J *out, const d_aff<F> *bases,
                   const dfr *scalars, const uint32_t *idx, size_t n, const d_xyzz<F> *extra,
                   cudaStream_t st, struct cuzk_error *err)
{
    constexpr int BS = blk<F>::BS;
    if (n >= 0x7fffffffu) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu msm: %zu points (max 2^31-1)", n);
    unsigned c, W, g;
    bool aff_ok, planes;
    int rc = msm_plan<F>(ctx, n, &c, &W, &g, &aff_ok, &planes, err);
    if (rc) return rc;
    const uint32_t B = 1u << (c - 1);
    uint32_t m = (uint32_t)((size_t)g * n);
    uint32_t nb = g * B;
    const wr_plan wr = msm_runs<F>(B, g);
    const uint32_t S = wr.S, K = wr.K;
    const uint32_t L = range_len<F>(n, m);
    size_t nthr = (size_t)m / L + 1;   /* ranges (threads), and head/tail pieces each */

    void *keys0, *keys1, *vals0, *vals1, *bstart, *bend, *partial, *buckets, *win, *small, *cubtmp;
    size_t mm = m ? m : 1;
    if (!rc) rc = gpu_scratch(ctx, SL_KEYS0, mm * 4, &keys0, err);
    if (!rc) rc = gpu_scratch(ctx, SL_KEYS1, mm * 4, &keys1, err);
    if (!rc) rc = gpu_scratch(ctx, SL_VALS0, mm * 4, &vals0, err);
    if (!rc) rc = gpu_scratch(ctx, SL_VALS1, mm * 4, &vals1, err);
    if (!rc) rc = gpu_scratch(ctx, SL_BSTART, (size_t)nb * 4, &bstart, err);
    if (!rc) rc = gpu_scratch(ctx, SL_BEND, (size_t)nb * 4, &bend, err);
    if (!rc) rc = gpu_scratch(ctx, SL_PARTIAL, 2 * nthr * sizeof(d_xyzz<F>), &partial, err);
    /* two bucket sets (by window-group parity) when the reductions overlap the next group */
    const bool ovl = bucket_sets<F>(n, W, g) == 2;
    const size_t bset = (size_t)nb + wr.points;   /* buckets + reduction buffers, in points */
    if (!rc) rc = gpu_scratch(ctx, SL_BUCKETS, bset * (ovl ? 2 : 1) * sizeof(d_xyzz<F>), &buckets, err);
    if (!rc) rc = gpu_scratch(ctx, SL_WIN, (size_t)W * sizeof(d_xyzz<F>), &win, err);
    if (!rc) rc = gpu_scratch(ctx, SL_SMALL, 4096, &small, err);
    void *planes_d = NULL, *carry_d = NULL;
    if (!rc && planes) rc = gpu_scratch(ctx, SL_PLANES, n * sizeof(fr_t), &planes_d, err);
    if (!rc && planes) rc = gpu_scratch(ctx, SL_CARRY, n, &carry_d, err);
    if (rc) return rc;
    if (ovl && !ctx->red_st) {
        CK(cudaStreamCreateWithFlags(&ctx->red_st, cudaStreamNonBlocking));
        for (int i = 0; i < 2; i++) {
            CK(cudaEventCreateWithFlags(&ctx->acc_ev[i], cudaEventDisableTiming));
            CK(cudaEventCreateWithFlags(&ctx->red_ev[i], cudaEventDisableTiming));
        }
    }
    cudaStream_t rs = ovl ? ctx->red_st : st;   /* the reductions' stream */
    uint32_t *d_total = (uint32_t *)small, *d_heavy_count = d_total + 1;
    void *heavy;
    rc = gpu_scratch(ctx, SL_HEAVY, (size_t)nb * 4, &heavy, err);
    if (rc) return rc;

    /* CUB temp storage for the sort */
    const unsigned end_bit = sort_end_bit(c, g);
    rc = gpu_scratch(ctx, SL_CUB, sort_tmp_bytes(mm, c, g), &cubtmp, err);
    if (rc) return rc;
    size_t cub_bytes = ctx->slot_size[SL_CUB];

    const unsigned TB = 256;
    unsigned grp = 0;   /* window group number; its parity picks the bucket set */
    for (unsigned w0 = 0; n && w0 < W; w0 += g, grp++) {
        unsigned gg = W - w0 < g ? W - w0 : g;
        const unsigned par = ovl ? (grp & 1) : 0;
        d_xyzz<F> *bk = (d_xyzz<F> *)buckets + par * bset;
        d_xyzz<F> *segsum = bk + nb;
        d_xyzz<F> *wr_runs = segsum + (size_t)g * S;            /* two-level only */
        d_xyzz<F> *wr_l2 = wr_runs + (size_t)g * S;
        d_xyzz<F> *wr_tot = wr_l2 + (size_t)g * wr.S2;
        uint32_t mg = (uint32_t)((size_t)gg * n), nbg = gg * B;
        if (planes) {   /* g == 1 */
            if (w0 == 0) {
                k_digit_planes<<<gpu_div_up(n, TB), TB, 0, st>>>((uint32_t *)planes_d, scalars, (uint32_t)n);
                CK_LAUNCH();
            }
            k_digits_pl<<<gpu_div_up(n, TB), TB, 0, st>>>((uint32_t *)keys0, (uint32_t *)vals0, (uint8_t *)carry_d,
                                                        (const uint32_t *)planes_d, idx, (uint32_t)n, c, w0);
        } else {
            k_digits<<<gpu_div_up(n, TB), TB, 0, st>>>((uint32_t *)keys0, (uint32_t *)vals0, scalars, idx, (uint32_t)n, c, w0, gg,
                                                     make_carry_thr(c, w0));
        }
        CK_LAUNCH();
        cub::DoubleBuffer<uint32_t> dk((uint32_t *)keys0, (uint32_t *)keys1);
        cub::DoubleBuffer<uint32_t> dv((uint32_t *)vals0, (uint32_t *)vals1);
        size_t tb = cub_bytes;
        CK(cub::DeviceRadixSort::SortPairs(cubtmp, tb, dk, dv, (int)mg, 0, (int)end_bit, st));
        uint32_t *sk = dk.Current(), *sv = dv.Current();
        CK(cudaMemsetAsync(bstart, 0, (size_t)nbg * 4, st));
        CK(cudaMemsetAsync(bend, 0, (size_t)nbg * 4, st));
        CK(cudaMemsetAsync(d_total, 0, 8, st));   /* valid count and heavy count */
        k_bounds<<<gpu_div_up(mg, TB), TB, 0, st>>>((uint32_t *)bstart, (uint32_t *)bend, d_total, sk, mg, gg * B);
        CK_LAUNCH();
        const d_aff<F> *abases = bases;
        const uint32_t *akeys = sk, *avals = sv;
        const aff_plan ap = aff_ok ? aff_rounds<F>(ctx, n, mg, nbg) : aff_plan{};
        if (w0 == 0) ctx->msm_last_aff = ap.rounds;
        if (ap.rounds) {
            rc = aff_reduce<F>(ctx, ap, mg, nbg, sk, dk.Alternate(), sv, dv.Alternate(), bases, (uint32_t *)bstart,
                               (uint32_t *)bend, d_total, st, &abases, &akeys, err);
            if (rc) return rc;
            avals = dv.Alternate();
        }
        d_xyzz<F> *head = (d_xyzz<F> *)partial, *tail = head + nthr;
        size_t nt = (size_t)mg / L + 1;
        /* bucket set `par` is free once group grp - 2's reduction is done */
        if (ovl && grp >= 2) CK(cudaStreamWaitEvent(st, ctx->red_ev[par], 0));
        launch_accum_u<F>(nt, st, bk, head, tail, akeys, avals, abases, d_total, L);
        CK_LAUNCH();
        if (red_inline())
            k_combine_u<F, true><<<gpu_div_up(nbg, 128), 128, 0, st>>>(bk, (uint32_t *)heavy, d_heavy_count,
                                                                       head, tail, (uint32_t *)bstart, (uint32_t *)bend, L, nbg);
        else
            k_combine_u<F, false><<<gpu_div_up(nbg, 128), 128, 0, st>>>(bk, (uint32_t *)heavy, d_heavy_count,
                                                                        head, tail, (uint32_t *)bstart, (uint32_t *)bend, L, nbg);
        CK_LAUNCH();
        size_t hmax = (size_t)mg / ((size_t)L * HEAVY_SEGS) + 1;
        k_heavy_u<F, BS><<<(unsigned)(hmax < 1024 ? hmax : 1024), BS, 0, st>>>(
            bk, (uint32_t *)heavy, d_heavy_count, head, tail, (uint32_t *)bstart, (uint32_t *)bend, L);
        CK_LAUNCH();
        if (ovl) {   /* the buckets are complete: reduce them on rs */
            CK(cudaEventRecord(ctx->acc_ev[par], st));
            CK(cudaStreamWaitEvent(rs, ctx->acc_ev[par], 0));
        }
        if (wr.two) {
            const unsigned gs = gpu_div_up((size_t)gg * S, 64), gs2 = gpu_div_up((size_t)gg * wr.S2, 64);
            if (red_inline()) {
                k_winred_l1<F, true><<<gs, 64, 0, rs>>>(segsum, wr_runs, bk, B, S, K, gg);
                CK_LAUNCH();
                k_winred_l2<F, true><<<gs2, 64, 0, rs>>>(wr_l2, wr_runs, S, wr.K2, gg);
            } else {
                k_winred_l1<F, false><<<gs, 64, 0, rs>>>(segsum, wr_runs, bk, B, S, K, gg);
                CK_LAUNCH();
                k_winred_l2<F, false><<<gs2, 64, 0, rs>>>(wr_l2, wr_runs, S, wr.K2, gg);
            }
            CK_LAUNCH();
            rc = reduce_groups<F>(ctx, (d_xyzz<F> *)win + w0, segsum, gg, S, rs, err);
            if (!rc) rc = reduce_groups<F>(ctx, wr_tot, wr_l2, gg, wr.S2, rs, err);
            if (rc) return rc;
            unsigned lgk = 0;
            while ((1u << lgk) < K) lgk++;
            k_win_fix<F><<<1, gg, 0, rs>>>((d_xyzz<F> *)win + w0, wr_tot, lgk, gg);
            CK_LAUNCH();
        } else {
            if (red_inline())
                k_winred<F, true><<<gpu_div_up((size_t)gg * S, 64), 64, 0, rs>>>(segsum, bk, B, S, K, gg);
            else
                k_winred<F, false><<<gpu_div_up((size_t)gg * S, 64), 64, 0, rs>>>(segsum, bk, B, S, K, gg);
            CK_LAUNCH();
            rc = reduce_groups<F>(ctx, (d_xyzz<F> *)win + w0, segsum, gg, S, rs, err);
            if (rc) return rc;
        }
        if (ovl) CK(cudaEventRecord(ctx->red_ev[par], rs));
    }
    /* the last reductions (rs is in order) before the window sums are read */
    if (ovl) CK(cudaStreamWaitEvent(st, ctx->red_ev[(grp - 1) & 1], 0));
    return msm_finish<F>(out, (const d_xyzz<F> *)win, n ? W : 0, c, extra, small, st, err);
}

/* 0/1 sums: at most CUZK_GPU_SUM_AFF batch-affine rounds (default CZ_SUM_AFF; 0: the XYZZ
 * kernel alone); a round of v pairs runs while v >= CUZK_GPU_SUM_AFF_MINPT (default 16) x
 * CUZK_GPU_SUM_AFF_MIN_T (default 256), on min(v / MINPT, one wave: SMs x
 * CUZK_GPU_MSM_AFF_TPS) threads. Bitmaps of fewer than CUZK_GPU_SUM_AFF_MIN_N bits (default
 * 2^16), and sums whose round buffers do not fit in free GPU memory, take the XYZZ kernel.
 * Read at every call.
 * H200 (session 8, medians of 5): G1 2^27 at 50% ones, XYZZ only 38.56 ms; 2 / 4 / 6 / 8 / 16
 * rounds 23.63 / 23.32 / 24.34 / 26.14 / 30.04 ms; G2 2^25 at 50% 35.09 -> 19.42 / 19.23 /
 * 21.78 / 24.99 / 28.19 ms (MINPT 64); MINPT 16 / 64 / 256 at 4 rounds: G1 23.32 / 23.32 /
 * 24.77, G2 18.90 / 19.23 / 28.25. Later rounds have too few pairs per thread for one wave,
 * and their launches and inversions cost more than the XYZZ pass they shorten. */
#ifndef CZ_SUM_AFF
#define CZ_SUM_AFF 4
#endif
template <class F>
static int sum_bitmap_aff(struct gpu_ctx *ctx, d_xyzz<F> *out, const d_aff<F> *bases, const uint32_t *bitmap,
                          size_t n, cudaStream_t st, bool *done, struct cuzk_error *err)
{
    *done = false;
    ctx->sum_last_aff = 0;
    const unsigned R = (unsigned)env_int("CUZK_GPU_SUM_AFF", CZ_SUM_AFF, 0, 16);
    if (!R || !n || n < (size_t)env_int("CUZK_GPU_SUM_AFF_MIN_N", 1 << 16, 0, 1 << 30)) return CUZK_OK;
    const size_t minpt = (size_t)env_int("CUZK_GPU_SUM_AFF_MINPT", 16, 1, 1 << 20);
    const size_t mint = (size_t)env_int("CUZK_GPU_SUM_AFF_MIN_T", 256, 1, 1 << 20);
    const size_t sms = (size_t)(ctx->sm_count > 0 ? ctx->sm_count : 1);
    const size_t tmax = aff_wave<F>(ctx);
    const uint32_t nw = (uint32_t)((n + 31) / 32);
    const unsigned TB = 256;
    /* word counts, their exclusive prefix, the total and the round's pair count */
    void *cnt, *cubt;
    int rc = gpu_scratch(ctx, SL_AFF_CNT, (2 * (size_t)nw + 2) * 4, &cnt, err);
    if (rc) return rc;
    uint32_t *d_cnt = (uint32_t *)cnt, *d_off = d_cnt + nw, *d_m = d_off + nw, *d_v = d_m + 1;
    size_t scan_bytes = scan_tmp_bytes(nw);
    rc = gpu_scratch(ctx, SL_AFF_CUB, scan_bytes, &cubt, err);
    if (rc) return rc;
    k_popc_words<<<gpu_div_up(nw, TB), TB, 0, st>>>(d_cnt, bitmap, (uint32_t)n);
    CK_LAUNCH();
    CK(cub::DeviceScan::ExclusiveSum(cubt, scan_bytes, d_cnt, d_off, (int)nw, st));
    k_ones_total<<<1, 1, 0, st>>>(d_m, d_cnt, d_off, nw);
    CK_LAUNCH();
    uint32_t m = 0;
    CK(cudaMemcpyAsync(&m, d_m, 4, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    /* pairs of each round (a round of v pairs leaves v points) */
    size_t pairs[16], thr[16];
    unsigned rounds = 0;
    for (size_t v = ((size_t)m + 1) / 2; rounds < R && v >= minpt * mint; v = (v + 1) / 2) {
        pairs[rounds] = v;
        thr[rounds] = v / minpt < tmax ? v / minpt : tmax;
        rounds++;
        if (v == 1) break;
    }
    if (!rounds) return CUZK_OK;   /* too few ones: the XYZZ kernel */
    const size_t last = pairs[rounds - 1];
    const uint32_t blocks = (uint32_t)gpu_div_up(last < sms * 256 ? last : sms * 256, 128);
    /* the rounds' buffers (~2.5 point sizes per pair) only where they fit in free GPU memory,
     * else the XYZZ kernel, which needs next to nothing: as the MSM plan drops its rounds */
    enum { PTS0, PTS1, PRE, PAIR, VOUT, PART, NBUF };
    const slot_need need[NBUF] = {
        {SL_AFF_PTS0, pairs[0] * sizeof(d_aff<F>)}, {SL_AFF_PTS1, rounds > 1 ? pairs[1] * sizeof(d_aff<F>) : 0},
        {SL_AFF_PRE, pairs[0] * sizeof(F)}, {SL_AFF_PAIR, pairs[0] * sizeof(uint2)}, {SL_VALS1, pairs[0] * 4},
        {SL_SUM_PART, (size_t)blocks * 128 * sizeof(d_xyzz<F>)},
    };
    const size_t extra = slots_extra(ctx, need, NBUF);
    if (extra) {
        size_t avail = 0;
        rc = scratch_avail(ctx, &avail, err);
        if (rc) return rc;
        if (extra > avail) return CUZK_OK;
    }
    void *buf[NBUF] = {NULL};
    for (int i = 0; i < NBUF && !rc; i++)
        if (need[i].bytes) rc = gpu_scratch(ctx, need[i].s, need[i].bytes, &buf[i], err);
    if (rc) return rc;
    void *const pts[2] = {buf[PTS0], buf[PTS1]}, *const pr = buf[PAIR];
    k_ones_pairs<<<gpu_div_up(nw, TB), TB, 0, st>>>((uint2 *)pr, d_v, bitmap, d_off, (uint32_t)n, m);
    CK_LAUNCH();
    const bool binv = aff_binv(), norm = aff_norm_on();
    const d_aff<F> *pin = bases;
    for (unsigned r = 0; r < rounds; r++) {
        if (r) {
            k_seq_pairs<<<gpu_div_up(pairs[r], TB), TB, 0, st>>>((uint2 *)pr, d_v, (uint32_t)pairs[r - 1]);
            CK_LAUNCH();
        }
        d_aff<F> *pout = (d_aff<F> *)pts[r & 1];
        launch_aff_round<F>((uint32_t)thr[r], binv, norm, st, pout, (F *)buf[PRE], (uint32_t *)buf[VOUT],
                            (const uint2 *)pr, pin, d_v);
        CK_LAUNCH();
        pin = pout;
    }
    acc_dispatch<F>([&](auto inl, auto minb, auto) {
        k_aff_partial<F, decltype(inl)::value, decltype(minb)::value><<<blocks, 128, 0, st>>>(
            (d_xyzz<F> *)buf[PART], pin, (uint32_t)last);
    });
    CK_LAUNCH();
    *done = true;
    ctx->sum_last_aff = rounds;
    return reduce_groups<F>(ctx, out, (d_xyzz<F> *)buf[PART], 1, blocks * 128, st, err);
}

template <class F>
static int sum_bitmap_dev(struct gpu_ctx *ctx, d_xyzz<F> *out, const d_aff<F> *bases,
                          const uint32_t *bitmap, size_t n, cudaStream_t st, struct cuzk_error *err)
{
    bool done;
    int rc = sum_bitmap_aff<F>(ctx, out, bases, bitmap, n, st, &done, err);
    if (rc || done) return rc;
    const uint32_t wpt = 8;   /* 256 points per thread */
    size_t nw = (n + 31) / 32;
    size_t T = nw ? gpu_div_up(nw, wpt) : 1;
    void *part = NULL;
    rc = gpu_scratch(ctx, SL_SUM_PART, T * sizeof(d_xyzz<F>), &part, err);
    if (rc) return rc;
    if (nw) {
        launch_bitmap<F>(T, st, (d_xyzz<F> *)part, bases, bitmap, (uint32_t)n, wpt);
        CK_LAUNCH();
    } else {
        CK(cudaMemsetAsync(part, 0, sizeof(d_xyzz<F>), st));
    }
    return reduce_groups<F>(ctx, out, (d_xyzz<F> *)part, 1, (uint32_t)T, st, err);
}

int gpu_g1_msm_dev(struct gpu_ctx *ctx, g1_jac_t *out, const g1a_d *bases, const dfr *scalars,
                   const uint32_t *idx, size_t n, const g1x_d *extra, cudaStream_t st,
                   struct cuzk_error *err)
{
    return msm_dev<dfp>(ctx, out, bases, scalars, idx, n, extra, st, err);
}
int gpu_g2_msm_dev(struct gpu_ctx *ctx, g2_jac_t *out, const g2a_d *bases, const dfr *scalars,
                   const uint32_t *idx, size_t n, const g2x_d *extra, cudaStream_t st,
                   struct cuzk_error *err)
{
    return msm_dev<dfp2>(ctx, out, bases, scalars, idx, n, extra, st, err);
}
int gpu_g1_sum_bitmap_dev(struct gpu_ctx *ctx, g1x_d *out, const g1a_d *bases,
                          const uint32_t *bitmap, size_t n, cudaStream_t st, struct cuzk_error *err)
{
    return sum_bitmap_dev<dfp>(ctx, out, bases, bitmap, n, st, err);
}
int gpu_g2_sum_bitmap_dev(struct gpu_ctx *ctx, g2x_d *out, const g2a_d *bases,
                          const uint32_t *bitmap, size_t n, cudaStream_t st, struct cuzk_error *err)
{
    return sum_bitmap_dev<dfp2>(ctx, out, bases, bitmap, n, st, err);
}

/* ---- host-pointer API ---- */

template <class F, class HJ>
static int msm_host(struct gpu_ctx *ctx, HJ *out, const void *bases, const fr_t *scalars,
                    size_t n, struct cuzk_error *err)
{
    static_assert(sizeof(HJ) == sizeof(d_jac<F>), "Jacobian layout");
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    void *db, *ds;
    size_t nn = n ? n : 1;
    if (!rc) rc = gpu_scratch(ctx, SL_BENCH0, nn * sizeof(d_aff<F>), &db, err);
    if (!rc) rc = gpu_scratch(ctx, SL_BENCH1, nn * sizeof(fr_t), &ds, err);
    if (rc) return rc;
    cudaStream_t st = ctx->st[0];
    if (n) {
        CK(cudaMemcpyAsync(db, bases, n * sizeof(d_aff<F>), cudaMemcpyHostToDevice, st));
        CK(cudaMemcpyAsync(ds, scalars, n * sizeof(fr_t), cudaMemcpyHostToDevice, st));
    }
    return msm_dev<F>(ctx, out, (const d_aff<F> *)db, (const dfr *)ds, NULL, n, NULL, st, err);
}

template <class F, class HJ>
static int sum_host(struct gpu_ctx *ctx, HJ *out, const void *bases, const uint64_t *bitmap,
                    size_t n, struct cuzk_error *err)
{
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    void *db, *dm, *dr;
    size_t nn = n ? n : 1, words = (n + 63) / 64;
    if (!rc) rc = gpu_scratch(ctx, SL_BENCH0, nn * sizeof(d_aff<F>), &db, err);
    if (!rc) rc = gpu_scratch(ctx, SL_BENCH1, (words ? words : 1) * 8, &dm, err);
    if (!rc) rc = gpu_scratch(ctx, SL_RESULTS, 4096, &dr, err);
    if (rc) return rc;
    cudaStream_t st = ctx->st[0];
    if (n) {
        CK(cudaMemcpyAsync(db, bases, n * sizeof(d_aff<F>), cudaMemcpyHostToDevice, st));
        CK(cudaMemcpyAsync(dm, bitmap, words * 8, cudaMemcpyHostToDevice, st));
    }
    d_xyzz<F> *x = (d_xyzz<F> *)((char *)dr + 2048);
    rc = sum_bitmap_dev<F>(ctx, x, (const d_aff<F> *)db, (const uint32_t *)dm, n, st, err);
    if (rc) return rc;
    k_to_jac<F><<<1, 1, 0, st>>>((d_jac<F> *)dr, x);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(out, dr, sizeof(HJ), cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    return CUZK_OK;
}

extern "C" int gpu_g1_msm(struct gpu_ctx *ctx, g1_jac_t *out, const g1_aff_t *bases,
                          const fr_t *scalars, size_t n, struct cuzk_error *err)
{
    return msm_host<dfp>(ctx, out, bases, scalars, n, err);
}
extern "C" int gpu_g2_msm(struct gpu_ctx *ctx, g2_jac_t *out, const g2_aff_t *bases,
                          const fr_t *scalars, size_t n, struct cuzk_error *err)
{
    return msm_host<dfp2>(ctx, out, bases, scalars, n, err);
}
extern "C" int gpu_g1_sum_bitmap(struct gpu_ctx *ctx, g1_jac_t *out, const g1_aff_t *bases,
                                 const uint64_t *bitmap, size_t n, struct cuzk_error *err)
{
    return sum_host<dfp>(ctx, out, bases, bitmap, n, err);
}
extern "C" int gpu_g2_sum_bitmap(struct gpu_ctx *ctx, g2_jac_t *out, const g2_aff_t *bases,
                                 const uint64_t *bitmap, size_t n, struct cuzk_error *err)
{
    return sum_host<dfp2>(ctx, out, bases, bitmap, n, err);
}

/* ---- benchmark ---- */

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
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    /* msm_dev returns after its host-side Horner pass, so e1 (recorded then) covers it */
    typename host_grp<F>::J res;
    for (int r = -1; r < reps && !rc; r++) {
        CK(cudaEventRecord(e0, st));
        if (density > 0)
            rc = sum_bitmap_dev<F>(ctx, (d_xyzz<F> *)dr, (const d_aff<F> *)db, (const uint32_t *)ds, n, st, err);
        else
            rc = msm_dev<F>(ctx, &res, (const d_aff<F> *)db, (const dfr *)ds, NULL, n, NULL, st, err);
        CK(cudaEventRecord(e1, st));
        float f = 0;
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&f, e0, e1));
        if (r >= 0) ms[r] = f;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return rc;
}

extern "C" int gpu_bench_msm(struct gpu_ctx *ctx, int g, size_t n, const void *points,
                             size_t distinct, double bitmap_density, int reps, double *ms,
                             struct cuzk_error *err)
{
    if (g == 1) return bench_msm_t<dfp>(ctx, n, points, distinct, bitmap_density, reps, ms, err);
    if (g == 2) return bench_msm_t<dfp2>(ctx, n, points, distinct, bitmap_density, reps, ms, err);
    return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_bench_msm: group %d (expected 1 or 2)", g);
}
