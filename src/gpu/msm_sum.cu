/* msm_sum.cu: sums of the points a bitmap selects (the prover's 0/1 scalars of A and B, split off
 * their MSMs): the selected points paired in order and added in affine form over a few
 * batch-affine rounds, the rest summed in XYZZ; small bitmaps, or rounds that do not fit in
 * free GPU memory, take one XYZZ pass. */
#include <cub/cub.cuh>

#include "msm_kernels.cuh"
#include "msm_plan.cuh"

/* XYZZ sum of the bases a bitmap selects, 32 * words_per_thread bits per thread. */
template <class F, int MINB>
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
            if (i < n) xyzz_add_aff_i(acc, ld_vec(&bases[i]));
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
template <class F, int MINB>
__global__ void __launch_bounds__(128, MINB) k_aff_partial(d_xyzz<F> *partial, const d_aff<F> *pts, uint32_t V)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, T = gridDim.x * blockDim.x;
    d_xyzz<F> acc;
    xyzz_set_inf(acc);
    for (uint32_t i = t; i < V; i += T) xyzz_add_aff_i(acc, ld_vec(&pts[i]));
    st_vec(&partial[t], acc);
}

template <class F> __global__ void k_to_jac(d_jac<F> *out, const d_xyzz<F> *in)
{
    if (blockIdx.x || threadIdx.x) return;
    *out = xyzz_to_jac(*in);
}


/* ---- host side ---- */

/* 0/1 sums: at most sum.aff batch-affine rounds (0: the XYZZ kernel alone); a round of v
 * pairs runs while v >= sum.aff_minpt x sum.aff_min_t, on min(v / sum.aff_minpt, the MSM
 * rounds' msm_aff_tmax) threads. Bitmaps of fewer than sum.aff_min_n bits, and sums whose round
 * buffers do not fit in free GPU memory, take the XYZZ kernel (decisions.md, "0/1 sums by
 * batch-affine rounds, not per-thread XYZZ").
 * Later rounds have too few pairs for that many threads, and their launches and inversions
 * cost more than the XYZZ pass they shorten. */
template <class F>
static int sum_bitmap_aff(struct gpu_ctx *ctx, d_xyzz<F> *out, const d_aff<F> *bases, const uint32_t *bitmap,
                          size_t n, cudaStream_t st, bool *done, struct cuzk_error *err)
{
    *done = false;
    ctx->sum_last_aff = 0;
    const unsigned R = gpu_tuning.sum_aff < 16 ? (unsigned)gpu_tuning.sum_aff : 16;
    if (!R || !n || n < gpu_tuning.sum_aff_min_n) return CUZK_OK;
    const size_t minpt = (size_t)gpu_tuning.sum_aff_minpt;
    const size_t mint = (size_t)gpu_tuning.sum_aff_min_t;
    const size_t sms = (size_t)(ctx->sm_count > 0 ? ctx->sm_count : 1);
    const size_t tmax = msm_aff_tmax(ctx, msm_grp_of<F>());
    const uint32_t nw = (uint32_t)((n + 31) / 32);
    const unsigned TB = 256;
    /* word counts, their exclusive prefix, the total and the round's pair count */
    void *cnt, *cubt;
    int rc = gpu_scratch(ctx, SL_AFF_CNT, (2 * (size_t)nw + 2) * 4, &cnt, err);
    if (rc) return rc;
    uint32_t *d_cnt = (uint32_t *)cnt, *d_off = d_cnt + nw, *d_m = d_off + nw, *d_v = d_m + 1;
    size_t scan_bytes = msm_scan_tmp_bytes(nw);
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
    enum { PTS0, PTS1, PRE, PAIR, PART, NBUF };
    const slot_need need[NBUF] = {
        {SL_AFF_PTS0, pairs[0] * sizeof(d_aff<F>)}, {SL_AFF_PTS1, rounds > 1 ? pairs[1] * sizeof(d_aff<F>) : 0},
        {SL_AFF_PRE, pairs[0] * sizeof(F)}, {SL_AFF_PAIR, pairs[0] * sizeof(uint2)},
        {SL_SUM_PART, (size_t)blocks * 128 * sizeof(d_xyzz<F>)},
    };
    const size_t extra = msm_slots_extra(ctx, need, NBUF);
    if (extra) {
        size_t avail = 0;
        rc = msm_scratch_avail(ctx, &avail, err);
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
    const d_aff<F> *pin = bases;
    for (unsigned r = 0; r < rounds; r++) {
        if (r) {
            k_seq_pairs<<<gpu_div_up(pairs[r], TB), TB, 0, st>>>((uint2 *)pr, d_v, (uint32_t)pairs[r - 1]);
            CK_LAUNCH();
        }
        d_aff<F> *pout = (d_aff<F> *)pts[r & 1];
        launch_aff_round<F>((uint32_t)thr[r], st, pout, (F *)buf[PRE], (const uint2 *)pr, pin, d_v);
        CK_LAUNCH();
        pin = pout;
    }
    k_aff_partial<F, acc_minb<F>()><<<blocks, 128, 0, st>>>((d_xyzz<F> *)buf[PART], pin, (uint32_t)last);
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
        k_bitmap_partial<F, acc_minb<F>()><<<gpu_div_up(T, 128), 128, 0, st>>>((d_xyzz<F> *)part, bases, bitmap,
                                                                                (uint32_t)n, wpt);
        CK_LAUNCH();
    } else {
        CK(cudaMemsetAsync(part, 0, sizeof(d_xyzz<F>), st));
    }
    return reduce_groups<F>(ctx, out, (d_xyzz<F> *)part, 1, (uint32_t)T, st, err);
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

