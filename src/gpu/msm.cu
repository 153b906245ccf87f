/* msm.cu: Pippenger MSM for G1 and G2 on the GPU: signed Booth digits, (bucket, point) pairs
 * radix-sorted per window group, a few batch-affine rounds that halve every bucket's run, XYZZ
 * accumulation over uniform ranges of the sorted pairs, bucket reduction by running sums
 * (overlapped with the next group for G1), and Horner over the window sums on the host. The
 * layout comes from msm_plan.cu; the 0/1 bitmap sums are in msm_sum.cu. */
#include <cub/cub.cuh>
#include <stdio.h>
#include <string.h>

#include "msm_kernels.cuh"
#include "msm_plan.cuh"

#define HEAVY_SEGS 64u   /* buckets spread over more ranges are summed by a whole block */

/* Work split of the bucket accumulation: uniform ranges, thread t takes sorted entries
 * [t L, (t+1) L) whatever the bucket boundaries, so every thread of a warp does L additions
 * (ncu: 31.5 active threads per warp instruction); a bucket that lies inside one range is
 * written directly, the pieces of a bucket that crosses ranges (its "tail" in the first range,
 * "heads" in the next ones) are summed afterwards. It replaced one thread per bucket segment
 * of <= 32 points, whose warps ran 28.3 active threads of 32 (decisions.md, "MSM bucket
 * accumulation splits the sorted entries into equal ranges"). Points per range: msm_range_len
 * (msm_plan.cu), or the msm.range knob. */
__device__ __forceinline__ uint32_t win_bits(const uint32_t *s, unsigned bit, unsigned c)
{
    if (bit >= 256) return 0;
    unsigned w = bit >> 5, sh = bit & 31;
    uint64_t v = s[w];
    if (w + 1 < 8) v |= (uint64_t)s[w + 1] << 32;
    return (uint32_t)(v >> sh) & ((1u << c) - 1);
}

/* Booth carry into window w0 without walking the windows below: with low = s mod 2^o (o the
 * offset of window w0), the carry is 1 exactly when low > T = sum_{i < w0} 2^(c_i - 1) 2^(o_i)
 * (induction over the windows: carry 0 keeps low <= T, a digit v > 2^(c_i - 1) pushes low
 * past the next T, and with carry 1 the same holds for v >= 2^(c_i - 1)). The host passes T and
 * the mask of low's bits. */
struct carry_thr {
    uint32_t t[8], mask[8];
};

static carry_thr make_carry_thr(const msm_widths &ws, unsigned w0)
{
    carry_thr r;
    memset(&r, 0, sizeof r);
    const unsigned nb = msm_win_off(ws, w0);   /* < 256 */
    for (unsigned b = 0; b < nb; b++) r.mask[b >> 5] |= 1u << (b & 31);
    for (unsigned i = 0; i < w0; i++) {
        const unsigned b = msm_win_off(ws, i) + msm_win_bits(ws, i) - 1;
        r.t[b >> 5] |= 1u << (b & 31);
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
 * (sentinel g * B for a zero digit; B the buckets of the group's widest window, w0), value =
 * point index | sign << 31. */
__global__ void k_digits(uint32_t *keys, uint32_t *vals, const dfr *sc, const uint32_t *idx,
                         uint32_t n, msm_widths ws, unsigned w0, unsigned g, carry_thr thr)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    dfr s = f_from_mont(sc[i]);
    uint32_t pidx = idx ? idx[i] : i;
    const uint32_t B = msm_win_buckets(ws, w0);
    int cmp = 0;   /* low vs T, decided at the most significant differing word */
#pragma unroll
    for (int j = 7; j >= 0; j--) {
        uint32_t lw = s.v[j] & thr.mask[j];
        if (cmp == 0) cmp = lw > thr.t[j] ? 1 : lw < thr.t[j] ? -1 : 0;
    }
    uint32_t carry = cmp > 0;
    for (unsigned w = w0; w < w0 + g; w++) {
        const unsigned c = msm_win_bits(ws, w);
        carry = put_digit(keys, vals, (size_t)(w - w0) * n + i, win_bits(s.v, msm_win_off(ws, w), c) + carry, c,
                          (w - w0) * B, g * B, pidx);
    }
}

/* One window per sort (n > 2^25 points): k_digits would read each 32-byte scalar and leave
 * Montgomery form once per window (12-13 times at 2^27). Instead the scalars are converted once
 * into word planes by blocks of 32 scalars (word j of scalar i at 8 (i - i % 32) + 32 j + i % 32,
 * so a warp reading one word of its 32 scalars reads 128 contiguous bytes, and a window reads
 * only the one or two words its bits lie in), and the Booth carry passes from window to window
 * through one byte per scalar. The windows run in order 0 .. W-1. A last block of fewer than 32
 * scalars keeps them whole (word j of scalar i at 8 i + j). Every block stays where its scalars
 * were, so the conversion can run in place (pl == sc) when the caller's scalars are dead after
 * the MSM (the prover's h): each warp reads its 32 scalars before any of it writes. */
__device__ __forceinline__ size_t plane_at(uint32_t i, unsigned j, uint32_t n)
{
    const uint32_t b = i & ~31u;
    return b + 32 <= n ? (size_t)b * 8 + j * 32 + (i & 31) : (size_t)i * 8 + j;
}
__global__ void k_digit_planes(uint32_t *pl, const dfr *sc, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    dfr s;
    if (i < n) s = f_from_mont(sc[i]);
    __syncwarp();   /* in place: the warp's block is read before it is written */
    if (i >= n) return;
#pragma unroll
    for (int j = 0; j < 8; j++) pl[plane_at(i, j, n)] = s.v[j];
}

/* Digits of window w (c bits from bit `bit`) from the planes (same keys and values as k_digits
 * with g = 1). */
__global__ void k_digits_pl(uint32_t *keys, uint32_t *vals, uint8_t *carry, const uint32_t *pl,
                            const uint32_t *idx, uint32_t n, unsigned c, unsigned bit, unsigned w)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned wd = bit >> 5, sh = bit & 31;
    uint64_t x = wd < 8 ? pl[plane_at(i, wd, n)] : 0;
    if (wd + 1 < 8 && sh + c > 32) x |= (uint64_t)pl[plane_at(i, wd + 1, n)] << 32;
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

/* Full XYZZ addition in the bucket reductions (k_combine_u, k_winred): inlined for G1
 * (accumulators stay in registers instead of passing through local memory at every call),
 * out of line for G2 (its points are twice as large). */
template <class F> __device__ __forceinline__ void red_add(d_xyzz<F> &p, const d_xyzz<F> &q)
{
    if constexpr (sizeof(F) == 48) xyzz_add_i(p, q);
    else xyzz_add(p, q);
}

/* Uniform ranges: thread t adds the points of sorted entries [t L, (t+1) L) (ending at
 * *valid; vals NULL: entry i is point i, the batch-affine rounds' output); each bucket run it
 * meets is written to buckets[key] when it lies inside the range, to head[t] when it began in
 * an earlier range, to tail[t] when it begins here and goes on into the next range (at most
 * one of each per thread). */
template <class F, int MINB, bool PF>
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
    uint32_t v = vals ? vals[s] : s, k = cur;
    d_aff<F> p;
    if (PF) p = ld_vec(&bases[v & 0x7fffffffu]);
    for (uint32_t i = s; i < e; i++) {
        d_aff<F> q;
        if (PF) {
            q = p;
        } else {
            v = vals ? vals[i] : i;
            k = keys[i];
            q = ld_vec(&bases[v & 0x7fffffffu]);
        }
        const bool neg = v >> 31;
        const uint32_t ki = k;
        if (PF && i + 1 < e) {   /* fetch the next entry while this one is added */
            v = vals ? vals[i + 1] : i + 1;
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
        xyzz_add_aff_i(acc, q);
    }
    const bool goes_on = e < V && keys[e] == cur;
    st_vec(open ? &head[t] : goes_on ? &tail[t] : &buckets[cur], acc);
}

/* Buckets of the uniform ranges: empty ones become infinity; a run that crossed ranges is
 * tail[t0] + head[t0+1] + ... + head[t1], listed here (cross, by a warp-aggregated atomic) and
 * added by k_cross_u, or by k_heavy_u when it spans more than HEAVY_SEGS ranges. Adding them
 * here instead left most warps running one addition for the few crossing buckets among their
 * 32. */
template <class F>
__global__ void k_combine_u(d_xyzz<F> *buckets, uint32_t *heavy, uint32_t *heavy_count, uint32_t *cross,
                            uint32_t *cross_count,
                            const uint32_t *bstart, const uint32_t *bend, uint32_t L, uint32_t nb)
{
    const uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    bool crosses = false;
    if (b < nb) {
        const uint32_t s = bstart[b], e = bend[b];
        if (s == e) {
            d_xyzz<F> z;
            xyzz_set_inf(z);
            st_vec(&buckets[b], z);
        } else {
            const uint32_t t0 = s / L, t1 = (e - 1) / L;   /* t0 == t1: written by k_accum_u */
            if (t1 - t0 > HEAVY_SEGS) heavy[atomicAdd(heavy_count, 1u)] = b;
            else crosses = t1 != t0;
        }
    }
    const uint32_t m = __ballot_sync(0xffffffffu, crosses), lane = threadIdx.x & 31;
    if (!m) return;
    uint32_t base = 0;
    if (lane == (uint32_t)__ffs(m) - 1) base = atomicAdd(cross_count, (uint32_t)__popc(m));
    base = __shfl_sync(0xffffffffu, base, __ffs(m) - 1);
    if (crosses) cross[base + __popc(m & ((1u << lane) - 1))] = b;
}

template <class F>
__global__ void k_cross_u(d_xyzz<F> *buckets, const uint32_t *cross, const uint32_t *cross_count,
                          const d_xyzz<F> *head, const d_xyzz<F> *tail, const uint32_t *bstart,
                          const uint32_t *bend, uint32_t L)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= *cross_count) return;
    const uint32_t b = cross[i], t0 = bstart[b] / L, t1 = (bend[b] - 1) / L;
    d_xyzz<F> acc = ld_vec(&tail[t0]);
    for (uint32_t t = t0 + 1; t <= t1; t++) red_add<F>(acc, ld_vec(&head[t]));
    st_vec(&buckets[b], acc);
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

/* Running sums over x[0..K) from the top: run = sum x_i, acc = sum (i + 1) x_i (ONE_BASED)
 * or sum i x_i (acc takes run before x_i joins it). */
template <class F, bool ONE_BASED>
__device__ __forceinline__ void running_sums(d_xyzz<F> &run, d_xyzz<F> &acc, const d_xyzz<F> *x, uint32_t K)
{
    xyzz_set_inf(run);
    xyzz_set_inf(acc);
    for (int jj = (int)K - 1; jj >= 0; jj--) {
        if (!ONE_BASED) red_add<F>(acc, run);
        red_add<F>(run, ld_vec(&x[jj]));
        if (ONE_BASED) red_add<F>(acc, run);
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
template <class F>
__global__ void k_winred(d_xyzz<F> *out, const d_xyzz<F> *buckets, uint32_t B, uint32_t S,
                         uint32_t K, uint32_t g)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= g * S) return;
    uint32_t w = id / S, s = id % S;
    d_xyzz<F> run, acc;
    running_sums<F, true>(run, acc, buckets + (size_t)w * B + (size_t)s * K, K);
    add_multiple(acc, run, s * K);
    st_vec(&out[id], acc);
}

/* Two-level window reduction (G1). Level 1: thread (w, s) over buckets [sK, (s+1)K) of
 * window w: acc_s = sum_i (i+1) b_(sK+i) and R_s = sum_i b_(sK+i), no offset term, so K can
 * be small (more threads, shorter serial chains); both go to [w rstride + s] of their outputs. Since
 * sum_j (j+1) b_j = sum_s acc_s + K sum_s s R_s, level 2 computes sum_s s R_s the same way
 * over the R_s (weights i, plus the offset s2 K2 times the level-2 run by double-and-add).
 * Level 2, the sums of the acc_s and k_win_fix (adds K times the level-2 total to each window
 * sum) run once for all windows after the last group. */
template <class F>
__global__ void k_winred_l1(d_xyzz<F> *acc_out, d_xyzz<F> *run_out, const d_xyzz<F> *buckets,
                            uint32_t B, uint32_t S, uint32_t K, uint32_t g, uint32_t rstride)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= g * S) return;
    uint32_t w = id / S, s = id % S;
    d_xyzz<F> run, acc;
    running_sums<F, true>(run, acc, buckets + (size_t)w * B + (size_t)s * K, K);
    st_vec(&acc_out[(size_t)w * rstride + s], acc);
    st_vec(&run_out[(size_t)w * rstride + s], run);
}

/* Level 2 over all W windows: thread (w, s2) of S2max per window (infinity past the window's
 * own S2); window w's runs start at runs + w Smax. */
template <class F>
__global__ void k_winred_l2(d_xyzz<F> *out, const d_xyzz<F> *runs, msm_widths ws, uint32_t Smax, uint32_t S2max)
{
    uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= ws.W * S2max) return;
    uint32_t w = id / S2max, s2 = id % S2max;
    const wr_dims d = wr_dims_of(msm_win_buckets(ws, w));
    d_xyzz<F> run, acc;   /* acc = sum_i i R_(s2 K2 + i) */
    if (s2 < d.S2) {
        running_sums<F, false>(run, acc, runs + (size_t)w * Smax + (size_t)s2 * d.K2, d.K2);
        add_multiple(acc, run, s2 * d.K2);
    } else {
        xyzz_set_inf(acc);
    }
    st_vec(&out[id], acc);
}

/* win[w] += K_w * t[w] for the W windows (K_w a power of two) */
template <class F>
__global__ void k_win_fix(d_xyzz<F> *win, const d_xyzz<F> *t, msm_widths ws)
{
    uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= ws.W) return;
    d_xyzz<F> x = t[w], y = win[w];
    for (uint32_t k = wr_dims_of(msm_win_buckets(ws, w)).K; k > 1; k >>= 1) xyzz_dbl(x, x);
    xyzz_add(y, x);
    win[w] = y;
}

/* ---- host side ---- */

template <class F>
static void launch_accum_u(size_t items, cudaStream_t st, d_xyzz<F> *buckets, d_xyzz<F> *head,
                           d_xyzz<F> *tail, const uint32_t *keys, const uint32_t *vals,
                           const d_aff<F> *bases, const uint32_t *valid, uint32_t L)
{
    k_accum_u<F, acc_minb<F>(), acc_prefetch<F>()><<<gpu_div_up(items, 128), 128, 0, st>>>(
        buckets, head, tail, keys, vals, bases, valid, L);
}

/* R batch-affine rounds over the sorted list (keys sk, values sv; bounds and *d_valid from
 * k_bounds): writes the reduced list's points (slot AFF_PTS0/1), keys (alternating between
 * kalt and sk) and its bounds and length in place. Its values are the identity (entry i is
 * point i, positive), so none are written. */
template <class F>
static int aff_reduce(struct gpu_ctx *ctx, const aff_plan &ap, uint32_t mg, uint32_t nbg, uint32_t *sk,
                      uint32_t *kalt, const uint32_t *sv, const d_aff<F> *bases,
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
    const size_t scan_bytes = msm_scan_tmp_bytes(nbg);
    rc = gpu_scratch(ctx, SL_AFF_CUB, scan_bytes, &cubt, err);
    if (rc) return rc;
    const unsigned TB = 256;
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
        launch_aff_round<F>(ap.thr[r], st, pout, (F *)pre, (const uint2 *)pairs, pin, d_valid);
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
 * number of GPU threads shortens. One GPU thread runs it far slower than a CPU core (each
 * product a dependent carry chain, no other warp to hide it), so the window sums (W points,
 * 2.5 KiB for G1) come back to the host and the Horner pass runs there (Yrrid and Matter Labs finish
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

/* out (host) = sum_w 2^(offset of w) win[w] + extra; win and extra on the device, stream st.
 * Returns with st synchronised. */
template <class F>
static int msm_finish(typename host_grp<F>::J *out, const d_xyzz<F> *win, unsigned W, const msm_widths &ws,
                      const d_xyzz<F> *extra, cudaStream_t st, struct cuzk_error *err)
{
    typedef host_grp<F> H;
    typename H::X hw[129];   /* W = ceil(256 / c) <= 128 (c >= 2), plus extra */
    if (W > 128) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu msm: %u windows (max 128)", W);
    if (W) CK(cudaMemcpyAsync(hw, win, W * sizeof hw[0], cudaMemcpyDeviceToHost, st));
    if (extra) CK(cudaMemcpyAsync(&hw[W], extra, sizeof hw[0], cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    typename H::X r;
    H::set_inf(&r);
    for (int w = (int)W - 1; w >= 0; w--) {
        if (!H::is_inf(&r))
            for (unsigned i = 0; i < msm_win_bits(ws, (unsigned)w); i++) H::dbl(&r);
        H::add(&r, &hw[w]);
    }
    if (extra) H::add(&r, &hw[W]);
    H::to_jac(out, &r);
    return CUZK_OK;
}

template <class F>
static int msm_one(struct gpu_ctx *ctx, typename host_grp<F>::J *out, const d_aff<F> *bases,
                   const dfr *scalars, const uint32_t *idx, size_t n, const d_xyzz<F> *extra,
                   cudaStream_t st, struct cuzk_error *err)
{
    constexpr int BS = blk<F>::BS;
    if (n >= 0x7fffffffu) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu msm: %zu points (max 2^31-1)", n);
    const msm_grp G = msm_grp_of<F>();
    msm_shape sh;
    int rc = msm_plan(ctx, G, n, &sh, err);
    if (rc) return rc;
    const msm_widths ws = sh.ws;
    const unsigned c = ws.c, W = sh.W, g = sh.g;   /* c: the widest window's bits */
    const bool aff_ok = sh.aff, planes = sh.planes;
    const uint32_t B = msm_win_buckets(ws, 0);
    uint32_t m = (uint32_t)((size_t)g * n);
    uint32_t nb = g * B;
    const wr_plan wr = msm_runs(G, B, g, W);   /* of the widest window: the layout's sizes */
    const uint32_t L = msm_range_len(G, n, m);
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
    /* two bucket sets (by window-group parity) when the reductions overlap the next group, then
     * the two-level reduction's level-1 sums and runs, level-2 sums and totals of all windows */
    const bool ovl = msm_bucket_sets(G, n, W, g) == 2;
    const size_t bset = (size_t)nb + wr.points;   /* buckets (+ one level's window sums), in points */
    if (!rc) rc = gpu_scratch(ctx, SL_BUCKETS, (bset * (ovl ? 2 : 1) + wr.shared) * sizeof(d_xyzz<F>), &buckets, err);
    if (!rc) rc = gpu_scratch(ctx, SL_WIN, (size_t)W * sizeof(d_xyzz<F>), &win, err);
    if (!rc) rc = gpu_scratch(ctx, SL_SMALL, 4096, &small, err);
    void *planes_d = NULL, *carry_d = NULL;
    if (planes && ctx->msm_sc_dead) planes_d = (void *)scalars;   /* in place: see k_digit_planes */
    else if (!rc && planes) rc = gpu_scratch(ctx, SL_PLANES, n * sizeof(fr_t), &planes_d, err);
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
    uint32_t *d_total = (uint32_t *)small, *d_heavy_count = d_total + 1, *d_cross_count = d_total + 2;
    void *heavy;   /* the heavy buckets (at most nb), then the crossing ones (at most one per range) */
    rc = gpu_scratch(ctx, SL_HEAVY, ((size_t)nb + nthr) * 4, &heavy, err);
    if (rc) return rc;

    /* CUB temp storage for the sort */
    const unsigned end_bit = msm_sort_end_bit(c, g);
    rc = gpu_scratch(ctx, SL_CUB, msm_sort_tmp_bytes(mm, c, g), &cubtmp, err);
    if (rc) return rc;
    size_t cub_bytes = ctx->slot_size[SL_CUB];

    /* after the bucket sets: every window's level-1 sums and runs (wr.S apart), level-2 sums, totals */
    d_xyzz<F> *wr_sums = (d_xyzz<F> *)buckets + bset * (ovl ? 2 : 1);   /* level-1 weighted sums */
    d_xyzz<F> *wr_runs = wr_sums + (size_t)W * wr.S;
    d_xyzz<F> *wr_l2 = wr_runs + (size_t)W * wr.S;
    d_xyzz<F> *wr_tot = wr_l2 + (size_t)W * wr.S2;
    const unsigned TB = 256;
    unsigned grp = 0;   /* window group number; its parity picks the bucket set */
    for (unsigned w0 = 0; n && w0 < W; w0 += g, grp++) {
        unsigned gg = W - w0 < g ? W - w0 : g;
        const unsigned par = ovl ? (grp & 1) : 0;
        d_xyzz<F> *bk = (d_xyzz<F> *)buckets + par * bset;
        d_xyzz<F> *segsum = bk + nb;
        /* this group's windows have the width of its first (widest) one */
        const uint32_t Bg = msm_win_buckets(ws, w0);
        const wr_plan wg = msm_runs(G, Bg, g, W);
        uint32_t mg = (uint32_t)((size_t)gg * n), nbg = gg * Bg;
        if (planes) {   /* g == 1 */
            if (w0 == 0) {
                k_digit_planes<<<gpu_div_up(n, TB), TB, 0, st>>>((uint32_t *)planes_d, scalars, (uint32_t)n);
                CK_LAUNCH();
            }
            k_digits_pl<<<gpu_div_up(n, TB), TB, 0, st>>>((uint32_t *)keys0, (uint32_t *)vals0, (uint8_t *)carry_d,
                                                        (const uint32_t *)planes_d, idx, (uint32_t)n,
                                                        msm_win_bits(ws, w0), msm_win_off(ws, w0), w0);
        } else {
            k_digits<<<gpu_div_up(n, TB), TB, 0, st>>>((uint32_t *)keys0, (uint32_t *)vals0, scalars, idx, (uint32_t)n, ws, w0, gg,
                                                     make_carry_thr(ws, w0));
        }
        CK_LAUNCH();
        cub::DoubleBuffer<uint32_t> dk((uint32_t *)keys0, (uint32_t *)keys1);
        cub::DoubleBuffer<uint32_t> dv((uint32_t *)vals0, (uint32_t *)vals1);
        size_t tb = cub_bytes;
        CK(cub::DeviceRadixSort::SortPairs(cubtmp, tb, dk, dv, (int)mg, 0, (int)end_bit, st));
        uint32_t *sk = dk.Current(), *sv = dv.Current();
        CK(cudaMemsetAsync(bstart, 0, (size_t)nbg * 4, st));
        CK(cudaMemsetAsync(bend, 0, (size_t)nbg * 4, st));
        CK(cudaMemsetAsync(d_total, 0, 12, st));   /* valid count, heavy and crossing counts */
        k_bounds<<<gpu_div_up(mg, TB), TB, 0, st>>>((uint32_t *)bstart, (uint32_t *)bend, d_total, sk, mg, gg * Bg);
        CK_LAUNCH();
        const d_aff<F> *abases = bases;
        const uint32_t *akeys = sk, *avals = sv;
        const aff_plan ap = aff_ok ? msm_aff_rounds(ctx, G, n, mg, nbg) : aff_plan{};
        if (w0 == 0) ctx->msm_last_aff = ap.rounds;
        if (ap.rounds) {
            rc = aff_reduce<F>(ctx, ap, mg, nbg, sk, dk.Alternate(), sv, bases, (uint32_t *)bstart,
                               (uint32_t *)bend, d_total, st, &abases, &akeys, err);
            if (rc) return rc;
            avals = NULL;   /* the reduced list's entry i is point i */
        }
        d_xyzz<F> *head = (d_xyzz<F> *)partial, *tail = head + nthr;
        size_t nt = (size_t)mg / L + 1;
        /* bucket set `par` is free once group grp - 2's reduction is done */
        if (ovl && grp >= 2) CK(cudaStreamWaitEvent(st, ctx->red_ev[par], 0));
        launch_accum_u<F>(nt, st, bk, head, tail, akeys, avals, abases, d_total, L);
        CK_LAUNCH();
        uint32_t *cross = (uint32_t *)heavy + nb;
        k_combine_u<F><<<gpu_div_up(nbg, 128), 128, 0, st>>>(bk, (uint32_t *)heavy, d_heavy_count, cross, d_cross_count,
                                                             (uint32_t *)bstart, (uint32_t *)bend, L, nbg);
        CK_LAUNCH();
        k_cross_u<F><<<gpu_div_up(nt < nbg ? nt : nbg, 128), 128, 0, st>>>(bk, cross, d_cross_count, head, tail,
                                                                         (uint32_t *)bstart, (uint32_t *)bend, L);
        CK_LAUNCH();
        size_t hmax = (size_t)mg / ((size_t)L * HEAVY_SEGS) + 1;
        k_heavy_u<F, BS><<<(unsigned)(hmax < 1024 ? hmax : 1024), BS, 0, st>>>(
            bk, (uint32_t *)heavy, d_heavy_count, head, tail, (uint32_t *)bstart, (uint32_t *)bend, L);
        CK_LAUNCH();
        if (ovl) {   /* the buckets are complete: reduce them on rs */
            CK(cudaEventRecord(ctx->acc_ev[par], st));
            CK(cudaStreamWaitEvent(rs, ctx->acc_ev[par], 0));
        }
        if (wg.two) {
            /* a narrower window's sums and runs are padded with infinity (zero bytes) to wr.S */
            const size_t X = sizeof(d_xyzz<F>);
            for (unsigned w = w0; wg.S < wr.S && w < w0 + gg; w++) {
                CK(cudaMemsetAsync(wr_sums + (size_t)w * wr.S + wg.S, 0, (wr.S - wg.S) * X, rs));
                CK(cudaMemsetAsync(wr_runs + (size_t)w * wr.S + wg.S, 0, (wr.S - wg.S) * X, rs));
            }
            k_winred_l1<F><<<gpu_div_up((size_t)gg * wg.S, 64), 64, 0, rs>>>(
                wr_sums + (size_t)w0 * wr.S, wr_runs + (size_t)w0 * wr.S, bk, Bg, wg.S, wg.K, gg, wr.S);
            CK_LAUNCH();
        } else {
            k_winred<F><<<gpu_div_up((size_t)gg * wg.S, 64), 64, 0, rs>>>(segsum, bk, Bg, wg.S, wg.K, gg);
            CK_LAUNCH();
            rc = reduce_groups<F>(ctx, (d_xyzz<F> *)win + w0, segsum, gg, wg.S, rs, err);
            if (rc) return rc;
        }
        if (ovl) CK(cudaEventRecord(ctx->red_ev[par], rs));
    }
    if (n && wr.two) {   /* the rest of every window's reduction, after the last level 1 (rs is in order) */
        rc = reduce_groups<F>(ctx, (d_xyzz<F> *)win, wr_sums, W, wr.S, rs, err);
        if (rc) return rc;
        k_winred_l2<F><<<gpu_div_up((size_t)W * wr.S2, 64), 64, 0, rs>>>(wr_l2, wr_runs, ws, wr.S, wr.S2);
        CK_LAUNCH();
        rc = reduce_groups<F>(ctx, wr_tot, wr_l2, W, wr.S2, rs, err);
        if (rc) return rc;
        k_win_fix<F><<<1, W, 0, rs>>>((d_xyzz<F> *)win, wr_tot, ws);
        CK_LAUNCH();
        if (ovl) CK(cudaEventRecord(ctx->red_ev[(grp - 1) & 1], rs));
    }
    /* the last reductions (rs is in order) before the window sums are read */
    if (ovl) CK(cudaStreamWaitEvent(st, ctx->red_ev[(grp - 1) & 1], 0));
    return msm_finish<F>(out, (const d_xyzz<F> *)win, n ? W : 0, ws, extra, st, err);
}

static void host_jac_add(g1_jac_t *r, const g1_jac_t *p) { g1_jac_add(r, r, p); }
static void host_jac_add(g2_jac_t *r, const g2_jac_t *p) { g2_jac_add(r, r, p); }

/* The MSM, in msm_parts' parts: consecutive ranges of the points (of idx when given), each its
 * own msm_one, the results added on the host (extra goes with the first). */
template <class F>
static int msm_dev(struct gpu_ctx *ctx, typename host_grp<F>::J *out, const d_aff<F> *bases,
                   const dfr *scalars, const uint32_t *idx, size_t n, const d_xyzz<F> *extra,
                   cudaStream_t st, struct cuzk_error *err)
{
    const unsigned parts = n ? msm_parts(ctx, msm_grp_of<F>(), n) : 1;
    const size_t per = (n + parts - 1) / parts;
    int rc;
    size_t j0 = 0;
    unsigned p = 0;
    do {
        const size_t np = n - j0 < per ? n - j0 : per;
        typename host_grp<F>::J part;
        rc = msm_one<F>(ctx, p ? &part : out, idx ? bases : bases + j0, scalars + j0, idx ? idx + j0 : NULL, np,
                        p ? NULL : extra, st, err);
        if (!rc && p) host_jac_add(out, &part);
        j0 += per;
        p++;
    } while (!rc && j0 < n);
    ctx->msm_last_parts = parts;
    return rc;
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

/* ---- host-pointer API ---- */

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
