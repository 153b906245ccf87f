/* ntt.cu: Fr NTT on the GPU (passes of up to 10 stages in shared memory, two stages per
 * barrier, twiddles from a resident table, coset shift and 1/N folded into the first/last pass) and the h
 * pipeline in 6 transforms (3 iNTT + 2 coset NTT on three streams, a b, inverse coset NTT
 * minus c / Z; gpu_compute_h_dev says why c needs no coset NTT). */
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.cuh"

/* Pre/post multiplier of a pass: none, a constant, lo[x & mask] * hi[x >> 14] (a power of
 * the coset generator, optionally times 1/N) with x the natural or bit-reversed position, or
 * lo[position] (MUL_TAB: that product precomputed for every position, coset_full). */
enum { MUL_NONE = 0, MUL_CONST = 1, MUL_POW_NAT = 2, MUL_POW_REV = 3, MUL_TAB = 4 };

struct pass_mul {
    int mode;
    dfr c;
    const dfr *lo, *hi;
    const dfr *sub;   /* non-NULL: sub[position] is subtracted after the multiplier */
    dfr *out;         /* post of a last DIF pass only: store to out[rev(position)] (rev_tiles) */
};

__device__ __forceinline__ dfr apply_factor(const pass_mul &pm, dfr x, uint32_t pos, unsigned lg)
{
    if (pm.mode == MUL_NONE) return x;
    if (pm.mode == MUL_CONST) return x * pm.c;
    if (pm.mode == MUL_TAB) return x * ld_vec(&pm.lo[pos]);
    uint32_t e = pm.mode == MUL_POW_NAT ? pos : (lg ? (__brev(pos) >> (32 - lg)) : 0);
    return x * (pm.lo[e & (COSET_TAB - 1)] * pm.hi[e >> 14]);
}

__device__ __forceinline__ dfr apply_mul(const pass_mul &pm, dfr x, uint32_t pos, unsigned lg)
{
    const dfr r = apply_factor(pm, x, pos, lg);
    return pm.sub ? r - ld_vec(&pm.sub[pos]) : r;
}

/* tw[e] = omega^e (e < N/2 of the table's domain); the inverse uses omega^-e = -omega^(N/2-e). */
__device__ __forceinline__ dfr twiddle(const dfr *tw, uint32_t e, unsigned tw_shift,
                                       unsigned lg, bool inverse)
{
    if (!inverse) return tw[(size_t)e << tw_shift];
    if (e == 0) return f_one<fr_params>();
    uint32_t half = 1u << (lg - 1);
    return f_neg(tw[(size_t)(half - e) << tw_shift]);
}

/* Where a block's tile lies: element m of the tile is data[base + m * stride]; l is the
 * tile's column (its offset within one stride). */
struct tile_geom {
    uint32_t stride, l, base;
};
/* rev: the last DIF pass with the bit reversal folded into its stores (pass_mul::out). Its tiles
 * are 2^k consecutive elements and block b takes tile T = rev(b), so element m goes to
 * rev_lg(T 2^k + m) = rev_k(m) 2^(lg-k) + b: blocks that run together fill neighbouring 32-byte
 * sectors of the same lines, as the strided loads of the first passes do. */
template <bool DIT> __device__ __forceinline__ tile_geom tile_of(unsigned lg, unsigned s0, unsigned k,
                                                                 bool rev = false)
{
    const uint32_t T = rev ? (lg > k ? __brev(blockIdx.x) >> (32 - (lg - k)) : 0) : blockIdx.x;
    const uint32_t stride_lg = DIT ? s0 : lg - s0 - k;
    tile_geom g;
    g.stride = 1u << stride_lg;
    g.l = T & (g.stride - 1);
    const uint32_t hi = T >> stride_lg;
    g.base = DIT ? (hi << (s0 + k)) + g.l : (hi << (lg - s0)) + g.l;
    return g;
}

/* The 2^k - 1 distinct twiddles of the tile's k stages into tws[1 ..] (stage with half-size
 * hm uses entries [hm, 2 hm)); R entries per thread of nt threads. */
template <bool DIT, int R>
__device__ __forceinline__ void stage_twiddles(dfr *tws, const tile_geom &g, uint32_t nt, unsigned lg,
                                               unsigned s0, unsigned k, const dfr *tw,
                                               unsigned tw_shift, bool inverse)
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        uint32_t idx = threadIdx.x + r * nt;   /* entries 1 .. 2^k - 1 (0 unused) */
        if (idx == 0) continue;
        uint32_t hm_lg = 31 - __clz(idx);
        uint32_t jl = idx - (1u << hm_lg);
        unsigned s = s0 + (DIT ? hm_lg : k - 1 - hm_lg);
        uint32_t j = jl * g.stride + g.l;
        uint32_t e = DIT ? j << (lg - 1 - s) : j << s;
        tws[idx] = twiddle(tw, e, tw_shift, lg, inverse);
    }
}

/* Tile <-> shared memory, R elements per thread of nt threads, with the pass's pre/post
 * multiplier applied on the way. */
template <int R>
__device__ __forceinline__ void tile_load(dfr *sh, const dfr *data, const tile_geom &g, uint32_t nt,
                                          const pass_mul &pre, unsigned lg)
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        uint32_t m = threadIdx.x + r * nt;
        uint32_t pos = g.base + m * g.stride;
        sh[m] = apply_mul(pre, data[pos], pos, lg);
    }
}
template <int R>
__device__ __forceinline__ void tile_store(dfr *data, const dfr *sh, const tile_geom &g, uint32_t nt,
                                           const pass_mul &post, unsigned lg)
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        uint32_t m = threadIdx.x + r * nt;
        uint32_t pos = g.base + m * g.stride;
        const dfr x = apply_mul(post, sh[m], pos, lg);
        if (post.out) post.out[__brev(pos) >> (32 - lg)] = x;
        else data[pos] = x;
    }
}

/* One radix-2 butterfly on shared elements m1, m2 with twiddle w: DIT (u + w v, u - w v) or
 * DIF (u + v, (u - v) w). */
template <bool DIT>
__device__ __forceinline__ void bfly2(dfr *sh, uint32_t m1, uint32_t m2, const dfr &w)
{
    dfr u = sh[m1], v = sh[m2];
    if (DIT) {
        v = v * w;
        sh[m1] = u + v;
        sh[m2] = u - v;
    } else {
        sh[m1] = u + v;
        sh[m2] = (u - v) * w;
    }
}

/* One pass of k radix-2 stages (s0 .. s0+k-1) on tiles of 2^k elements, 2^(k-1) threads.
 * DIF (Gentleman-Sande): natural in, bit-reversed out, stage s has half = N >> (s+1).
 * DIT (Cooley-Tukey): bit-reversed in, natural out, stage s has half = 2^s. */
/* The 2^k - 1 distinct twiddles of the tile's k stages are gathered into shared memory once
 * (stage with half-size hm uses entries [hm, 2 hm)), instead of one global gather per
 * butterfly per stage (511 instead of 2,304 per 9-stage tile; the passes stalled on those
 * gathers). k_ntt_pass4 (two stages per barrier) runs
 * every pass of k >= 2 stages; this one is left for k = 1. */
template <bool DIT>
__global__ void k_ntt_pass(dfr *data, unsigned lg, unsigned s0, unsigned k, const dfr *tw,
                           unsigned tw_shift, bool inverse, pass_mul pre, pass_mul post)
{
    extern __shared__ dfr sh[];
    const uint32_t t = threadIdx.x;
    const tile_geom g = tile_of<DIT>(lg, s0, k, !DIT && post.out);
    uint32_t halfk = 1u << (k - 1);
    dfr *tws = sh + (2 * halfk);

    stage_twiddles<DIT, 2>(tws, g, halfk, lg, s0, k, tw, tw_shift, inverse);
    tile_load<2>(sh, data, g, halfk, pre, lg);
    __syncthreads();
    for (unsigned tt = 0; tt < k; tt++) {
        uint32_t hm_lg = DIT ? tt : k - tt - 1;
        uint32_t hm = 1u << hm_lg;
        uint32_t jl = t & (hm - 1);
        uint32_t m1 = ((t >> hm_lg) << (hm_lg + 1)) + jl;
        uint32_t m2 = m1 + hm;
        bfly2<DIT>(sh, m1, m2, tws[hm + jl]);
        __syncthreads();
    }
    tile_store<2>(data, sh, g, halfk, post, lg);
}

/* One radix-2 stage of a pass4 tile: butterflies t and t + q (q = threads). TRIV: the stage
 * with half 1 of a tile of column 0 (the last DIF stage), whose twiddles are all 1. */
template <bool DIT, bool TRIV = false>
__device__ __forceinline__ void pass4_single(dfr *sh, const dfr *tws, uint32_t t, uint32_t q, uint32_t hm_lg)
{
    const uint32_t hm = 1u << hm_lg;
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const uint32_t bi = t + r * q;
        const uint32_t jl = bi & (hm - 1);
        const uint32_t m1 = ((bi >> hm_lg) << (hm_lg + 1)) + jl, m2 = m1 + hm;
        const dfr w = tws[hm + jl];
        if (TRIV) {
            const dfr u = sh[m1], v = sh[m2];
            sh[m1] = u + v;
            sh[m2] = u - v;
        } else {
            bfly2<DIT>(sh, m1, m2, w);
        }
    }
}

/* Two stages (halves hs and 2 hs) on the 4 elements j, j + hs, j + 2 hs, j + 3 hs of thread t.
 * TRIV: the pair with hs = 1 of a tile whose column is 0 (the first DIT pass or the last DIF
 * pass): its half-1 twiddle and the half-2 twiddle of jl = 0 are omega^0 = 1, so 3 of the 4
 * products are skipped (x * 1 == x exactly, so the output bits do not change). */
template <bool DIT, bool TRIV>
__device__ __forceinline__ void pass4_pair(dfr *sh, const dfr *tws, uint32_t t, uint32_t hs_lg)
{
    const uint32_t hs = TRIV ? 1 : 1u << hs_lg;
    const uint32_t jl = TRIV ? 0 : t & (hs - 1);
    const uint32_t j = TRIV ? t << 2 : ((t >> hs_lg) << (hs_lg + 2)) + jl;
    dfr x0 = sh[j], x1 = sh[j + hs], x2 = sh[j + 2 * hs], x3 = sh[j + 3 * hs];
    if (TRIV) {
        const dfr wb1 = tws[3];   /* half 2, jl = 1: omega^(N/4) */
        if (DIT) {
            dfr y0 = x0 + x1, y1 = x0 - x1, y2 = x2 + x3, v3b = (x2 - x3) * wb1;
            sh[j] = y0 + y2;
            sh[j + 2] = y0 - y2;
            sh[j + 1] = y1 + v3b;
            sh[j + 3] = y1 - v3b;
        } else {
            dfr y0 = x0 + x2, y2 = x0 - x2, y1 = x1 + x3, y3 = (x1 - x3) * wb1;
            sh[j] = y0 + y1;
            sh[j + 1] = y0 - y1;
            sh[j + 2] = y2 + y3;
            sh[j + 3] = y2 - y3;
        }
        return;
    }
    const dfr ws = tws[hs + jl];                                 /* stage with half hs */
    const dfr wb0 = tws[2 * hs + jl], wb1 = tws[3 * hs + jl];   /* half 2 hs */
    if (DIT) {
        dfr v1 = x1 * ws, v3 = x3 * ws;
        dfr y0 = x0 + v1, y1 = x0 - v1, y2 = x2 + v3, y3 = x2 - v3;
        dfr v2 = y2 * wb0, v3b = y3 * wb1;
        sh[j] = y0 + v2;
        sh[j + 2 * hs] = y0 - v2;
        sh[j + hs] = y1 + v3b;
        sh[j + 3 * hs] = y1 - v3b;
    } else {
        dfr y0 = x0 + x2, y2 = (x0 - x2) * wb0, y1 = x1 + x3, y3 = (x1 - x3) * wb1;
        sh[j] = y0 + y1;
        sh[j + hs] = (y0 - y1) * ws;
        sh[j + 2 * hs] = y2 + y3;
        sh[j + 3 * hs] = (y2 - y3) * ws;
    }
}

/* The same pass with two stages per barrier (radix-4 steps): 2^(k-2) threads, each owning
 * the 4 elements j, j + h, j + 2h, j + 3h of a stage pair with halves h and 2h (DIF: 2h then
 * h; DIT: h then 2h) and doing its 4 butterflies in registers: half the shared-memory round
 * trips and barriers, and 2 independent products in flight per thread. An odd k ends with
 * one radix-2 stage of 2 butterflies per thread. Twiddles staged as in k_ntt_pass<.., true>.
 * TRIV (only for a tile of column 0: the first DIT pass, the last DIF pass) skips the
 * products by omega^0 of the stages with halves 1 and 2: DIT peels its first pair (3 of 4
 * products skipped), DIF its last stage (half 1: both products) when k is odd, else its last
 * pair. The twiddles load in stage order: loading the pair's last one ahead of the others
 * makes the DIF pass spill under the register cap. */
template <bool DIT, bool TRIV>
__device__ __forceinline__ void ntt_pass4(dfr *data, unsigned lg, unsigned s0, unsigned k, const dfr *tw,
                                          unsigned tw_shift, bool inverse, const pass_mul &pre,
                                          const pass_mul &post)
{
    extern __shared__ dfr sh[];
    const uint32_t t = threadIdx.x;
    const tile_geom g = tile_of<DIT>(lg, s0, k, !DIT && post.out);
    const uint32_t q = 1u << (k - 2);   /* threads; a quarter of the tile */
    dfr *tws = sh + (4 * q);

    stage_twiddles<DIT, 4>(tws, g, q, lg, s0, k, tw, tw_shift, inverse);
    tile_load<4>(sh, data, g, q, pre, lg);
    __syncthreads();
    unsigned tt = 0;
    if (DIT && TRIV) {
        pass4_pair<true, true>(sh, tws, t, 0);
        __syncthreads();
        tt = 2;
    }
    /* DIF with k even and TRIV: the last pair (halves 2, 1) is peeled */
    const unsigned kend = (!DIT && TRIV && !(k & 1)) ? k - 2 : k;
    for (; tt + 2 <= kend; tt += 2) {
        /* small half hs = 2^hs_lg: DIF stages tt, tt+1 have halves 2^(k-1-tt), 2^(k-2-tt) */
        pass4_pair<DIT, false>(sh, tws, t, DIT ? tt : k - 2 - tt);
        __syncthreads();
    }
    if (!DIT && TRIV && !(k & 1)) {
        pass4_pair<false, true>(sh, tws, t, 0);
        __syncthreads();
    }
    if (k & 1) {   /* the single stage with half 2^(k-1) (DIT) or 1 (DIF) */
        if (!DIT && TRIV) pass4_single<false, true>(sh, tws, t, q, 0);
        else pass4_single<DIT>(sh, tws, t, q, DIT ? k - 1 : 0);
        __syncthreads();
    }
    tile_store<4>(data, sh, g, q, post, lg);
}

/* Registers capped at NTT_REG per thread: uncapped, too few warps fit per SM to cover the Fr
 * products' dependent latency; under the cap (a few bytes of spills) more blocks fit before
 * shared memory limits them and the FMA-heavy pipe (IMAD) is the limit, i.e. the products
 * themselves (decisions.md, "NTT passes capped at 72 registers", 80 since the fused reduction
 * rows). */
#define NTT_REG 80
template <bool DIT, bool TRIV>
__global__ void __maxnreg__(NTT_REG) k_ntt_pass4(dfr *data, unsigned lg, unsigned s0, unsigned k, const dfr *tw,
                                             unsigned tw_shift, bool inverse, pass_mul pre, pass_mul post)
{
    ntt_pass4<DIT, TRIV>(data, lg, s0, k, tw, tw_shift, inverse, pre, post);
}

__global__ void k_bitrev(dfr *v, unsigned lg, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t r = __brev(i) >> (32 - lg);
    if (i < r) {
        dfr a = v[i], b = v[r];
        v[i] = b;
        v[r] = a;
    }
}

/* In-place bit reversal through shared memory, for lg >= 8: index i = (A, M, C) with A its
 * top 4 bits and C its low 4 bits, so bitrev(i) = (rev C, rev M, rev A). Block M (with
 * M <= rev M) loads the 16 x 16 tiles (*, M, *) and (*, rev M, *) (rows of 16 consecutive
 * elements, 512 B) and writes each to the other's place transposed: every global access is a
 * 512 B row instead of k_bitrev's scattered 32 B elements. */
__global__ void __launch_bounds__(256) k_bitrev_tiled(dfr *v, unsigned lg)
{
    __shared__ dfr s0[256], s1[256];
    const unsigned mb = lg - 8;
    const uint32_t M = blockIdx.x, Mr = mb ? __brev(M) >> (32 - mb) : 0;
    if (M > Mr) return;
    const uint32_t t = threadIdx.x, A = t >> 4, C = t & 15;
    const size_t i0 = ((size_t)A << (lg - 4)) | ((size_t)M << 4) | C;
    const size_t i1 = ((size_t)A << (lg - 4)) | ((size_t)Mr << 4) | C;
    s0[t] = v[i0];
    if (M != Mr) s1[t] = v[i1];
    __syncthreads();
    /* (A, Mr, C) receives (rev C, M, rev A) of tile M, and the other way round */
    const uint32_t src = ((__brev(C) >> 28) << 4) | (__brev(A) >> 28);
    v[i1] = s0[src];
    if (M != Mr) v[i0] = s1[src];
}

__global__ void k_table_mul(dfr *out, const dfr *lo, const dfr *hi, unsigned lo_bits, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = lo[i & ((1u << lo_bits) - 1)] * hi[i >> lo_bits];
}

__global__ void k_scale_table(dfr *out, const dfr *in, dfr c, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * c;
}

/* out[j] = lo[e & mask] * hi[e >> 14], e = rev_lg(j): apply_mul's MUL_POW_REV factor */
__global__ void k_rev_pow_table(dfr *out, const dfr *lo, const dfr *hi, unsigned lg, uint32_t n)
{
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const uint32_t e = lg ? (__brev(j) >> (32 - lg)) : 0;
    out[j] = lo[e & (COSET_TAB - 1)] * hi[e >> 14];
}

/* a[i] = a[i] b[i] (the h pipeline's pointwise step; c and 1/Z come in at its last pass) */
__global__ void k_ab(dfr *a, const dfr *b, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * b[i];
}

/* N = 1 with two vectors: a[0] = (a[0] - c[0]) z_inv, a[0] already a b */
__global__ void k_sub1(dfr *a, const dfr *c, dfr zinv)
{
    a[0] = (a[0] - c[0]) * zinv;
}

/* N = 1: a[0] = (a[0] b[0] - c[0]) z_inv */
__global__ void k_abc1(dfr *a, const dfr *b, const dfr *c, dfr zinv)
{
    a[0] = (a[0] * b[0] - c[0]) * zinv;
}

/* ---- host side ---- */

static void host_pow_table(fr_t *out, const fr_t *base, size_t n)
{
    out[0] = FR_ONE;
    for (size_t i = 1; i < n; i++) fr_mul(&out[i], &out[i - 1], base);
}

static void omega_for(fr_t *w, unsigned lg)
{
    *w = FR_ROOT_OF_UNITY_2_32;
    for (unsigned i = lg; i < 32; i++) fr_sqr(w, w);
}

static int upload_tmp(void **d, const void *h, size_t bytes, struct cuzk_error *err)
{
    CK(cudaMalloc(d, bytes));
    CK(cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice));
    return CUZK_OK;
}

/* 1 / N for N = 2^lg */
static void inv_n(fr_t *out, unsigned lg)
{
    fr_t nfr;
    fr_from_u64(&nfr, (uint64_t)1 << lg);
    fr_inv(out, &nfr);
}

/* 1 / Z on the coset g omega^j of a 2^lg domain: Z(x) = x^N - 1 is the constant g^N - 1 there. */
static void h_zinv(fr_t *zi, unsigned lg)
{
    fr_t gn = FR_GENERATOR;
    for (unsigned i = 0; i < lg; i++) fr_sqr(&gn, &gn);
    fr_sub(&gn, &gn, &FR_ONE);
    fr_inv(zi, &gn);
}

/* Twiddle table for the largest domain seen so far (smaller domains read it strided), the
 * coset power tables, their 1/N-scaled variants for domain lg, and (table 6) the inverse
 * generator's high powers scaled by 1 / (N Z): the h pipeline's unshift. */
int gpu_ntt_prepare(struct gpu_ctx *ctx, unsigned lg, struct cuzk_error *err)
{
    if (lg > 28) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu ntt: lg %u > 28", lg);
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    unsigned want = lg < 12 ? 12 : lg;
    if (ctx->tw_lg < want) {
        if (ctx->tw) CK(cudaFree(ctx->tw));
        ctx->tw = NULL;
        ctx->tw_lg = 0;
        size_t half = (size_t)1 << (want - 1);
        rc = gpu_malloc(ctx, (void **)&ctx->tw, half * sizeof(fr_t), "ntt twiddles", err);
        if (rc) return rc;
        fr_t w, wstep;
        omega_for(&w, want);
        const unsigned lo_bits = 10;
        size_t nlo = (size_t)1 << lo_bits, nhi = half >> lo_bits;
        fr_t *lo = (fr_t *)malloc(nlo * sizeof(fr_t)), *hi = (fr_t *)malloc(nhi * sizeof(fr_t));
        if (!lo || !hi) {
            free(lo);
            free(hi);
            return cuzk_fail(err, CUZK_E_NOMEM, "gpu ntt: host table allocation failed");
        }
        host_pow_table(lo, &w, nlo);
        fr_mul(&wstep, &lo[nlo - 1], &w);   /* w^(2^lo_bits) */
        host_pow_table(hi, &wstep, nhi);
        void *dlo = NULL, *dhi = NULL;
        rc = upload_tmp(&dlo, lo, nlo * sizeof(fr_t), err);
        if (!rc) rc = upload_tmp(&dhi, hi, nhi * sizeof(fr_t), err);
        free(lo);
        free(hi);
        if (!rc) {
            k_table_mul<<<gpu_div_up(half, 256), 256>>>(ctx->tw, (const dfr *)dlo, (const dfr *)dhi, lo_bits, (uint32_t)half);
            cudaError_t e = cudaGetLastError();
            if (e == cudaSuccess) e = cudaDeviceSynchronize();
            if (e != cudaSuccess) rc = gpu_fail_cuda(err, e, "k_table_mul", __FILE__, __LINE__);
        }
        if (dlo) cudaFree(dlo);
        if (dhi) cudaFree(dhi);
        if (rc) return rc;
        ctx->tw_lg = want;
    }
    if (!ctx->coset) {
        rc = gpu_malloc(ctx, (void **)&ctx->coset, 7 * COSET_TAB * sizeof(fr_t), "ntt coset tables", err);
        if (rc) return rc;
        fr_t *t = (fr_t *)malloc(4 * COSET_TAB * sizeof(fr_t));
        if (!t) return cuzk_fail(err, CUZK_E_NOMEM, "gpu ntt: host table allocation failed");
        fr_t g = FR_GENERATOR, gi, step;
        fr_inv(&gi, &g);
        host_pow_table(t, &g, COSET_TAB);
        fr_mul(&step, &t[COSET_TAB - 1], &g);
        host_pow_table(t + COSET_TAB, &step, COSET_TAB);
        host_pow_table(t + 2 * COSET_TAB, &gi, COSET_TAB);
        fr_mul(&step, &t[3 * COSET_TAB - 1], &gi);
        host_pow_table(t + 3 * COSET_TAB, &step, COSET_TAB);
        cudaError_t e = cudaMemcpy(ctx->coset, t, 4 * COSET_TAB * sizeof(fr_t), cudaMemcpyHostToDevice);
        free(t);
        if (e != cudaSuccess) return gpu_fail_cuda(err, e, "cudaMemcpy(coset)", __FILE__, __LINE__);
        ctx->coset_lg = 99;
    }
    if (ctx->coset_lg != lg) {
        fr_t ninv;
        inv_n(&ninv, lg);
        dfr c;
        memcpy(&c, &ninv, sizeof c);
        k_scale_table<<<COSET_TAB / 256, 256>>>(ctx->coset + 4 * COSET_TAB, ctx->coset + COSET_TAB, c, COSET_TAB);
        CK_LAUNCH();
        k_scale_table<<<COSET_TAB / 256, 256>>>(ctx->coset + 5 * COSET_TAB, ctx->coset + 3 * COSET_TAB, c, COSET_TAB);
        CK_LAUNCH();
        fr_t zi;
        h_zinv(&zi, lg);
        fr_mul(&zi, &zi, &ninv);
        memcpy(&c, &zi, sizeof c);
        k_scale_table<<<COSET_TAB / 256, 256>>>(ctx->coset + 6 * COSET_TAB, ctx->coset + 3 * COSET_TAB, c, COSET_TAB);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        ctx->coset_lg = lg;
    }
    return CUZK_OK;
}

typedef void (*ntt4_fn)(dfr *, unsigned, unsigned, unsigned, const dfr *, unsigned, bool, pass_mul, pass_mul);

static unsigned split_passes(unsigned lg, unsigned ks[4])
{
    unsigned np = (lg + 9) / 10;
    if (np == 0) np = 1;
    for (unsigned i = 0; i < np; i++) ks[i] = lg / np + (i < lg % np ? 1 : 0);
    return np;
}

/* Run all stages of one transform. pre applies on the first pass's loads, post on the last
 * pass's stores. */
static int run_passes(struct gpu_ctx *ctx, dfr *v, unsigned lg, bool dit, bool inverse,
                      const pass_mul &pre, const pass_mul &post, cudaStream_t st,
                      struct cuzk_error *err)
{
    unsigned ks[4];
    unsigned np = split_passes(lg, ks);
    unsigned s0 = 0;
    pass_mul none = {MUL_NONE, {}, NULL, NULL, NULL, NULL};
    for (unsigned p = 0; p < np; p++) {
        unsigned k = ks[p];
        uint32_t tiles = (uint32_t)(((size_t)1 << lg) >> k);
        uint32_t threads = 1u << (k - 1);
        size_t smem = ((size_t)1 << k) * sizeof(dfr) * 2;   /* data + twiddles: 64 KiB at k = 10 */
        const pass_mul &a = p == 0 ? pre : none;
        const pass_mul &b = p == np - 1 ? post : none;
        if (k >= 2) {
            /* the first DIT pass and the last DIF pass have column 0 (stride 1): trivial pair */
            const bool tv = dit ? p == 0 : p == np - 1;
            ntt4_fn kf = dit ? (tv ? k_ntt_pass4<true, true> : k_ntt_pass4<true, false>)
                             : (tv ? k_ntt_pass4<false, true> : k_ntt_pass4<false, false>);
            if (smem > 48 * 1024) CK(cudaFuncSetAttribute(kf, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
            kf<<<tiles, threads / 2, smem, st>>>(v, lg, s0, k, ctx->tw, ctx->tw_lg - lg, inverse, a, b);
        } else if (dit) {
            k_ntt_pass<true><<<tiles, threads, smem, st>>>(v, lg, s0, k, ctx->tw, ctx->tw_lg - lg, inverse, a, b);
        } else {
            k_ntt_pass<false><<<tiles, threads, smem, st>>>(v, lg, s0, k, ctx->tw, ctx->tw_lg - lg, inverse, a, b);
        }
        CK_LAUNCH();
        s0 += k;
    }
    return CUZK_OK;
}

static int bitrev(dfr *v, unsigned lg, cudaStream_t st, struct cuzk_error *err)
{
    uint32_t n = 1u << lg;
    if (lg >= 8)   /* tiled from lg 8 */
        k_bitrev_tiled<<<1u << (lg - 8), 256, 0, st>>>(v, lg);
    else
        k_bitrev<<<gpu_div_up(n, 256), 256, 0, st>>>(v, lg, n);
    CK_LAUNCH();
    return CUZK_OK;
}

static pass_mul coset_mul(const struct gpu_ctx *ctx, bool inverse_gen, bool scaled, int mode)
{
    pass_mul m = {mode, {}, ctx->coset + (inverse_gen ? 2 : 0) * COSET_TAB,
                  ctx->coset + (scaled ? (inverse_gen ? 5 : 4) : (inverse_gen ? 3 : 1)) * COSET_TAB, NULL, NULL};
    return m;
}

/* A transform's first-pass and last-pass multipliers: coset shift g^i on the forward coset
 * NTT's loads, 1/N (times g^-i for the coset) on the inverse's stores. */
static void transform_muls(const struct gpu_ctx *ctx, unsigned lg, bool inverse, bool coset, pass_mul *pre,
                           pass_mul *post)
{
    const pass_mul none = {MUL_NONE, {}, NULL, NULL, NULL, NULL};
    *pre = none;
    *post = none;
    if (!inverse && coset) *pre = coset_mul(ctx, false, false, MUL_POW_NAT);
    if (inverse && coset) *post = coset_mul(ctx, true, true, MUL_POW_REV);
    if (inverse && !coset) {
        fr_t ninv;
        inv_n(&ninv, lg);
        post->mode = MUL_CONST;
        memcpy(&post->c, &ninv, sizeof ninv);
    }
}

/* One transform of v. out NULL: in place, left bit-reversed unless natural_out (then the
 * bit-reversal pass); out non-NULL: out of place into out in natural order, the bit reversal
 * folded into the last pass's stores (tile_of's rev), v clobbered. */
int gpu_ntt_run(struct gpu_ctx *ctx, dfr *v, dfr *out, unsigned lg, bool inverse, bool coset,
                bool natural_out, cudaStream_t st, struct cuzk_error *err)
{
    if (lg == 0) {   /* a 1-point transform (and its coset) is the identity */
        if (out) CK(cudaMemcpyAsync(out, v, sizeof(dfr), cudaMemcpyDeviceToDevice, st));
        return CUZK_OK;
    }
    int rc = gpu_ntt_prepare(ctx, lg, err);
    if (rc) return rc;
    pass_mul pre, post;
    transform_muls(ctx, lg, inverse, coset, &pre, &post);
    post.out = out;
    rc = run_passes(ctx, v, lg, false, inverse, pre, post, st, err);
    if (!rc && !out && natural_out) rc = bitrev(v, lg, st, err);
    return rc;
}

/* The h pipeline's unshift: g^-rev(j) / (N Z) at bit-reversed position j (coset table 6). */
static pass_mul h_unshift(const struct gpu_ctx *ctx)
{
    pass_mul m = {MUL_POW_REV, {}, ctx->coset + 2 * COSET_TAB, ctx->coset + 6 * COSET_TAB, NULL, NULL};
    return m;
}

/* The factors of the h pipeline's coset shift and unshift (g^rev(j) / N, g^-rev(j) / (N Z)) for
 * every position j of a 2^lg domain, so its iNTTs' last passes multiply once per element
 * instead of twice with two table gathers. 64 bytes per element (8 GiB at 2^27), kept per context while the domain
 * stays; only from 2^16 and when 192 bytes per element stay free beside it (about the scratch
 * of a 2^lg-point G1 MSM, which the prover runs next and which must not shrink for it), else
 * NULL (the two-table path). */
static const dfr *coset_full(struct gpu_ctx *ctx, unsigned lg)
{
    if (lg < 16) return NULL;
    if (ctx->shift_tab && ctx->shift_lg == lg && !ctx->shift_stale) return ctx->shift_tab;
    if (ctx->shift_tab && ctx->shift_lg != lg) {
        cudaFree(ctx->shift_tab);
        ctx->shift_tab = NULL;
        ctx->shift_lg = 0;
    }
    const size_t n = (size_t)1 << lg, bytes = 2 * n * sizeof(fr_t);
    /* a new table gets both halves; one the prover's MSMs borrowed, its shift half again */
    const bool fresh = !ctx->shift_tab;
    if (fresh) {
        size_t fr = 0;
        struct cuzk_error e;
        if (gpu_mem_usable(ctx, &fr, &e) || fr < bytes || fr - bytes < n * 192) return NULL;
        if (cudaMalloc((void **)&ctx->shift_tab, bytes) != cudaSuccess) {
            cudaGetLastError();
            ctx->shift_tab = NULL;
            return NULL;
        }
    }
    const pass_mul s = coset_mul(ctx, false, true, MUL_POW_REV), u = h_unshift(ctx);
    k_rev_pow_table<<<gpu_div_up(n, 256), 256, 0, ctx->st[0]>>>(ctx->shift_tab, s.lo, s.hi, lg, (uint32_t)n);
    if (fresh)
        k_rev_pow_table<<<gpu_div_up(n, 256), 256, 0, ctx->st[0]>>>(ctx->shift_tab + n, u.lo, u.hi, lg, (uint32_t)n);
    if (cudaGetLastError() != cudaSuccess) {
        cudaFree(ctx->shift_tab);
        ctx->shift_tab = NULL;
        ctx->shift_lg = 0;
        return NULL;
    }
    ctx->shift_lg = lg;
    ctx->shift_stale = false;
    return ctx->shift_tab;
}

/* h = (a b - c) / Z in 6 transforms instead of 7. Z is the constant g^N - 1 on the coset and
 * the inverse coset NTT (CI) is linear, so CI((a_c b_c - c_c) / Z) = (CI(a_c b_c) - CI(c_c)) / Z,
 * and CI(c_c) is c's coefficient vector itself (c has degree < N): c needs only its iNTT, not
 * the coset NTT as well. This is an identity of the computation (it does not assume that the
 * witness satisfies the constraints), so h is bit-identical to the 7-transform pipeline. */
int gpu_compute_h_dev(struct gpu_ctx *ctx, dfr *a, dfr *b, dfr *c, unsigned lg, dfr **h,
                      gpu_make_c make_c, void *arg, struct cuzk_error *err)
{
    *h = a;
    if (!c && !make_c) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_compute_h_dev: neither c nor make_c");
    const int nv = c ? 3 : 2;   /* two: c is made in b once a = a b (below) */
    int rc = gpu_ntt_prepare(ctx, lg, err);
    if (rc) return rc;
    size_t n = (size_t)1 << lg;
    pass_mul none = {MUL_NONE, {}, NULL, NULL, NULL, NULL};
    /* a, b: iNTT (DIF, bit-reversed out) with 1/N and the coset shift g^i folded into its last
     * pass, then the forward DIT NTT back to natural order: values on the coset g * omega^j.
     * c: iNTT only, times 1 / (N Z), left in bit-reversed order for the last pass. */
    pass_mul shift = coset_mul(ctx, false, true, MUL_POW_REV);
    pass_mul unshift = h_unshift(ctx);
    const dfr *full = coset_full(ctx, lg);   /* queued on st[0] before the event below */
    ctx->h_last_tab = full != NULL;
    if (full) {
        shift = {MUL_TAB, {}, full, NULL, NULL, NULL};
        unshift = {MUL_TAB, {}, full + n, NULL, NULL, NULL};
    }
    fr_t czi, ninv;
    h_zinv(&czi, lg);
    inv_n(&ninv, lg);
    fr_mul(&czi, &czi, &ninv);
    pass_mul cscale = {MUL_CONST, {}, NULL, NULL, NULL, NULL};
    memcpy(&cscale.c, &czi, sizeof czi);
    unshift.sub = c ? c : b;   /* last pass: h = CI(a_c b_c) / Z - c / Z, both bit-reversed */
    dfr *v[3] = {a, b, c};
    /* the caller queued its producers of a, b, c on stream 0 */
    CK(cudaEventRecord(ctx->ev[3], ctx->st[0]));
    for (int i = 1; i < nv; i++) CK(cudaStreamWaitEvent(ctx->st[i], ctx->ev[3], 0));
    /* a, b and c on three streams: one transform alone leaves the GPU part idle */
    for (int i = 0; i < nv; i++) {
        cudaStream_t st = ctx->st[i];
        if (lg == 0) {
            /* N = 1: iNTT, coset shift by g^0 and NTT are all the identity */
            continue;
        }
        if (i < 2) {
            rc = run_passes(ctx, v[i], lg, false, true, none, shift, st, err);
            if (!rc) rc = run_passes(ctx, v[i], lg, true, false, none, none, st, err);
        } else {
            rc = run_passes(ctx, v[i], lg, false, true, none, cscale, st, err);
        }
        if (rc) return rc;
        CK(cudaEventRecord(ctx->ev[i], st));
    }
    if (lg) {
        for (int i = 1; i < nv; i++) CK(cudaStreamWaitEvent(ctx->st[0], ctx->ev[i], 0));
        unsigned ks[4];
        /* a b on the first pass's loads (one pass over a and b fewer), unless that pass is also
         * the last, whose stores below go to b */
        const bool ab_on_load = c && split_passes(lg, ks) > 1;
        if (!ab_on_load) {
            k_ab<<<gpu_div_up(n, 256), 256, 0, ctx->st[0]>>>(a, b, (uint32_t)n);
            CK_LAUNCH();
        }
        if (c) {
            /* the bit reversal folded into the last pass's stores, out of place into b (free
             * once the first pass has read it): no separate bit-reversal pass */
            const pass_mul ab = {MUL_TAB, {}, b, NULL, NULL, NULL};
            unshift.out = b;
            *h = b;
            rc = run_passes(ctx, a, lg, false, true, ab_on_load ? ab : none, unshift, ctx->st[0], err);
        } else {
            /* two vectors: c's values and its iNTT in b, then the last pass in place (b holds
             * c) and a bit-reversal pass: h in a */
            rc = make_c(arg, b, ctx->st[0], err);
            if (!rc) rc = run_passes(ctx, b, lg, false, true, none, cscale, ctx->st[0], err);
            if (!rc) rc = run_passes(ctx, a, lg, false, true, none, unshift, ctx->st[0], err);
            if (!rc) rc = bitrev(a, lg, ctx->st[0], err);
        }
        if (rc) return rc;
    } else {
        /* N = 1: h = (a b - c) / Z with Z = g - 1 */
        fr_t zi;
        h_zinv(&zi, 0);
        dfr dz;
        memcpy(&dz, &zi, sizeof dz);
        if (!c) {
            k_ab<<<1, 1, 0, ctx->st[0]>>>(a, b, 1);
            CK_LAUNCH();
            rc = make_c(arg, b, ctx->st[0], err);
            if (rc) return rc;
            k_sub1<<<1, 1, 0, ctx->st[0]>>>(a, b, dz);
        } else {
            k_abc1<<<1, 1, 0, ctx->st[0]>>>(a, b, c, dz);
        }
        CK_LAUNCH();
    }
    CK(cudaStreamSynchronize(ctx->st[0]));
    return CUZK_OK;
}

/* ---- host-pointer API ---- */

extern "C" int gpu_ntt(struct gpu_ctx *ctx, fr_t *v, unsigned lg, bool inverse, bool coset,
                       struct cuzk_error *err)
{
    if (lg > 28) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_ntt: lg %u > 28", lg);
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    size_t n = (size_t)1 << lg;
    void *d = NULL, *o = NULL;
    rc = gpu_scratch(ctx, SL_NTT_A, n * sizeof(fr_t), &d, err);
    /* out of place into a second buffer: the bit reversal folds into the last pass */
    if (!rc) rc = gpu_scratch(ctx, SL_NTT_B, n * sizeof(fr_t), &o, err);
    if (rc) return rc;
    cudaStream_t st = ctx->st[0];
    CK(cudaMemcpyAsync(d, v, n * sizeof(fr_t), cudaMemcpyHostToDevice, st));
    rc = gpu_ntt_run(ctx, (dfr *)d, (dfr *)o, lg, inverse, coset, true, st, err);
    if (rc) return rc;
    CK(cudaMemcpyAsync(v, o, n * sizeof(fr_t), cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    return CUZK_OK;
}

/* the two-vector pipeline's c from host memory (gpu_compute_h under h.two) */
struct host_c {
    const fr_t *c;
    size_t bytes;
};

static int host_c_put(void *arg, dfr *c, cudaStream_t st, struct cuzk_error *err)
{
    const struct host_c *hc = (const struct host_c *)arg;
    CK(cudaMemcpyAsync(c, hc->c, hc->bytes, cudaMemcpyHostToDevice, st));
    return CUZK_OK;
}

extern "C" int gpu_compute_h(struct gpu_ctx *ctx, fr_t *a, fr_t *b, fr_t *c, unsigned lg,
                             struct cuzk_error *err)
{
    if (lg > 28) return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_compute_h: lg %u > 28", lg);
    int rc = gpu_set_device(ctx, err);
    if (rc) return rc;
    size_t n = (size_t)1 << lg, bytes = n * sizeof(fr_t);
    const int nv = gpu_tuning.h_two ? 2 : 3;
    void *d[3] = {NULL, NULL, NULL};
    fr_t *h[3] = {a, b, c};
    for (int i = 0; i < nv; i++) {
        rc = gpu_scratch(ctx, (enum gpu_slot)(SL_NTT_A + i), bytes, &d[i], err);
        if (rc) return rc;
    }
    for (int i = 0; i < nv; i++) CK(cudaMemcpyAsync(d[i], h[i], bytes, cudaMemcpyHostToDevice, ctx->st[0]));
    dfr *dh = NULL;
    struct host_c hc = {c, bytes};
    rc = gpu_compute_h_dev(ctx, (dfr *)d[0], (dfr *)d[1], (dfr *)d[2], lg, &dh, nv == 2 ? host_c_put : NULL, &hc, err);
    if (rc) return rc;
    CK(cudaMemcpy(a, dh, bytes, cudaMemcpyDeviceToHost));
    return CUZK_OK;
}
