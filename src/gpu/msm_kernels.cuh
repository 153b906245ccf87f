/* msm_kernels.cuh: the device code the MSM (msm.cu) and the 0/1 sums (msm_sum.cu) share:
 * batch-affine rounds (pairs of points added in affine form with one batched inversion per
 * block), the accumulation kernels' launch shape, and the shared-memory tree sums that reduce
 * groups of XYZZ points. Included by those two files only. */
#ifndef CUZK_GPU_MSM_KERNELS_CUH
#define CUZK_GPU_MSM_KERNELS_CUH

#include <type_traits>

#include "gpu_internal.cuh"

/* Bucket accumulation (and the 0/1 sums' XYZZ passes): mixed additions inlined, so the
 * accumulator stays in registers; G1 at 128 threads x 2 blocks per SM (200 registers) with the
 * next point prefetched while the current one is added, G2 at 1 block per SM without the
 * prefetch (the prefetched point held 48 of its 255 registers). decisions.md, "GPU
 * bucket accumulation inlines the mixed addition". */
template <class F> constexpr int acc_minb() { return sizeof(F) == 48 ? 2 : 1; }
template <class F> constexpr bool acc_prefetch() { return sizeof(F) == 48; }

template <class F> struct blk {
    /* shared-memory trees hold BS points: keep them within the 48 KiB static limit */
    static constexpr int BS = sizeof(d_xyzz<F>) > 256 ? 64 : 128;
};

/* ---- batch-affine rounds (before the XYZZ accumulation) ----
 * One round halves every bucket run of the sorted list: entries (2j, 2j+1) of a run become
 * one affine point, an odd last entry is carried over. An affine addition needs 1/(x2 - x1);
 * thread t takes the outputs o = t + k T (k < M, strided so that neighbouring threads touch
 * neighbouring entries) and inverts the product of its M denominators once (Montgomery's
 * trick: 3 products per pair), so a pair costs ~6 products (lambda, lambda^2, y3 and the trick)
 * instead of the ~10 of an XYZZ mixed addition, plus a share of one binary-GCD inversion per
 * block of 128 threads (block_inv). After R rounds the reduced list (explicit points, same
 * bucket order, 2^R times shorter runs) goes through the unchanged XYZZ accumulation. */

#define AFF_NONE 0xffffffffu   /* pair.y of an entry paired with nothing */

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

/* The x coordinates of a pair (the forward pass needs nothing else unless x1 == x2 or an x is
 * 0, which may be infinity): half the bytes of its points, loaded one pair ahead. */
template <class F> struct aff_xs {
    F x1, x2;
};
template <class F> __device__ __forceinline__ aff_xs<F> aff_load_xs(const d_aff<F> *pin, uint2 pr)
{
    aff_xs<F> r;
    if (pr.y == AFF_NONE) {
        r.x1 = r.x2 = field_traits<F>::one();
        return r;
    }
    r.x1 = ld_vec(&pin[pr.x & 0x7fffffffu].x);
    r.x2 = ld_vec(&pin[pr.y & 0x7fffffffu].x);
    return r;
}

/* The denominator of the pair's lambda from its x coordinates (1 for a single entry). */
template <class F> __device__ __forceinline__ F aff_denom(const d_aff<F> *pin, uint2 pr, const aff_xs<F> &x)
{
    if (pr.y == AFF_NONE) return field_traits<F>::one();
    F d = x.x2 - x.x1;
    if (f_is_zero(d) || f_is_zero(x.x1) || f_is_zero(x.x2)) aff_kind(d, aff_load(pin, pr.x), aff_load(pin, pr.y), false);
    return d;
}

/* 1 / a for every thread of a block of AFF_BT threads (a != 0), with one inversion per block
 * instead of one per thread: prefix and suffix products across the warp's lanes (5 steps
 * each), Montgomery's trick over the warp totals by thread 0, then 1/a = 1/(warp total) x
 * (product of the lanes below) x (product of the lanes above). Per warp ~12 products and
 * 1/4 of an inversion instead of a whole one. The block waits for thread 0's inversion, so it
 * is the binary GCD (f_inv), whose latency is a fraction of Fermat's. Every thread of the
 * block must call it. */
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
template <class F, int MINB, bool NORM>
__global__ void __launch_bounds__(AFF_BT, MINB) k_aff_round(d_aff<F> *pout, F *pre, const uint2 *pair,
                                                            const d_aff<F> *pin, const uint32_t *vcount, uint32_t T)
{
    /* the batch-inversion field: Fp for NORM, F otherwise */
    using B = typename std::conditional<NORM, dfp, F>::type;
    static_assert(!NORM || sizeof(F) == 2 * sizeof(dfp), "NORM is for Fp2 only");
    B *const pb = (B *)pre;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t V = *vcount;
    /* every thread of the block reaches block_inv (idle ones with M = 0) */
    const uint32_t M = t < T && t < V ? (V - 1 - t) / T + 1 : 0;
    B acc = field_traits<B>::one();
    /* the forward pass is one product per pair: the next pair's x coordinates load while it
     * runs, and the indices of the pair after that */
    uint2 cur = M ? pair[t] : make_uint2(0, 0), nx = M > 1 ? pair[t + T] : make_uint2(0, 0);
    aff_xs<F> cx = aff_load_xs(pin, M ? cur : make_uint2(0, AFF_NONE));
    for (uint32_t k = 0; k < M; k++) {
        const uint32_t o = t + k * T;
        const uint2 pr = cur;
        const aff_xs<F> x = cx;
        if (k + 1 < M) {
            cur = nx;
            cx = aff_load_xs(pin, cur);
            if (k + 2 < M) nx = pair[o + 2 * T];
        }
        if constexpr (NORM) {
            const dfp n = aff_norm(aff_denom(pin, pr, x));
            acc = acc * n;
            st_vec(&pb[2 * o], acc);
            st_vec(&pb[2 * o + 1], n);
        } else {
            acc = acc * aff_denom(pin, pr, x);
            st_vec(&pb[o], acc);
        }
    }
    B inv = block_inv(acc);
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
    }
}

/* One batch-affine round of T threads (k_aff_round): G2 with the norm inversion, both with
 * one inversion per block. G1 at 128 registers: 4 blocks of 128 per SM; G2 needs all 255
 * (capping either for more blocks per SM was slower: decisions.md, "One inversion
 * per block in the batch-affine rounds", "G2 batch-affine rounds invert norms in Fp"). */
template <class F>
static void launch_aff_round(uint32_t T, cudaStream_t st, d_aff<F> *pout, F *pre, const uint2 *pairs,
                             const d_aff<F> *pin, const uint32_t *vcount)
{
    constexpr int MB = sizeof(F) == 48 ? 4 : 1;
    constexpr bool G2 = sizeof(F) != 48;
    k_aff_round<F, MB, G2><<<gpu_div_up(T, AFF_BT), AFF_BT, 0, st>>>(pout, pre, pairs, pin, vcount, T);
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

#endif
