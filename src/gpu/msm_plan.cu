/* msm_plan.cu: the MSM's layout before any kernel runs (msm_plan.cuh): window bits by size,
 * windows per radix sort within free GPU memory, accumulation ranges, window reductions and
 * batch-affine rounds. The defaults are the measured winners in gpu_tuning.h's table. */
#include <cub/cub.cuh>
#include <stdio.h>
#include <string.h>

#include "msm_plan.cuh"

/* Uniform ranges: G1 128 points above 2^26 points; 32 with sort groups of 2^27+ entries below
 * that, 64 for smaller groups. G2 64 with groups of up to 2^27 entries (its rounds leave
 * ~16-32 entries per bucket, and with 128 the fifth round lost), 256 from 2^28. decisions.md,
 * "Accumulation range length follows the window group". */
uint32_t msm_range_len(const msm_grp &G, size_t n, size_t m)
{
    if (gpu_tuning.msm_range) return (uint32_t)gpu_tuning.msm_range;
    if (G.g2) return m >= ((size_t)1 << 28) ? 256u : 64u;
    if (n > ((size_t)1 << 26)) return 128u;
    return m >= ((size_t)1 << 27) ? 32u : 64u;
}

/* Window bits measured best on the H200 with the batch-affine rounds and the host-side Horner
 * pass, by round(log2 n); 0: the cost model n W + 3 2^(c-1) W, which ignores the bucket memory
 * traffic and the rounds' dependence on bucket occupancy and so overshoots where these matter
 * (decisions.md, "Window bits from measurements where the cost model is off"). */
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
    if (gpu_tuning.msm_window && n >= 4096) {   /* msm.window: fixed window bits */
        *c_out = (unsigned)gpu_tuning.msm_window;
        *W_out = (256 + *c_out - 1) / *c_out;
        return;
    }
    double best = 0;
    unsigned bc = 2;
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

/* The reductions are latency-bound chains on few threads; G1's overlap the next group's
 * digits, sort and accumulation. G2's one-level reduction is already short, and the second
 * bucket set did not pay for it (decisions.md, "G1 window reductions overlap the next window
 * group"). */
bool msm_overlap(const msm_grp &G) { return !G.g2; }

unsigned msm_bucket_sets(const msm_grp &G, size_t n, unsigned W, unsigned g)
{
    return msm_overlap(G) && n && W > g ? 2 : 1;
}

msm_widths msm_widths_of(unsigned c, unsigned W)
{
    /* c - 1 bits in every window may already cover 256 (c above the smallest width for W) */
    while (c > 1 && W * (c - 1) >= 256) c--;
    msm_widths ws;
    ws.c = c;
    ws.W = W;
    ws.hi = 256 - W * (c - 1) < W ? 256 - W * (c - 1) : W;
    return ws;
}

wr_plan msm_runs(const msm_grp &G, uint32_t B, unsigned g, unsigned W)
{
    wr_plan p;
    /* G1 only: k_winred_l1<G2> read past its thread's local memory (stack) under
     * compute-sanitizer on the H200 (out-of-line G2 additions); G2 keeps the one-level kernel */
    p.two = !G.g2;
    if (p.two) {
        const wr_dims d = wr_dims_of(B);
        p.S = d.S;
        p.K = d.K;
        p.S2 = d.S2;
        p.K2 = d.K2;
        p.points = 0;
        p.shared = (size_t)W * (2 * (size_t)p.S + p.S2 + 1);
    } else {
        uint32_t S = B < 65536 / g ? B : (65536 / g ? 65536 / g : 1);
        /* at least msm.wr_k buckets per thread: each thread's offset term (add_multiple, ~1.5
         * additions per bit of s K) costs more than K buckets' running sums below K ~ 16 */
        const uint32_t kmin = (uint32_t)gpu_tuning.msm_wr_k;
        if (B / kmin < S) S = B / kmin ? B / kmin : 1;
        uint32_t s2 = 1;
        while (s2 * 2 <= S) s2 *= 2;
        p.S = s2;
        p.K = B / s2;
        p.S2 = p.K2 = 0;
        p.points = (size_t)g * s2;
        p.shared = 0;
    }
    return p;
}

/* The most threads a round takes: msm.aff_tps_g1/g2 per SM. G1's kernel runs 4 blocks of 128
 * per SM and takes two waves of them (decisions.md, "G1 batch-affine rounds on two waves of
 * blocks"); G2's runs 2 blocks per SM and takes one wave. */
size_t msm_aff_tmax(const struct gpu_ctx *ctx, const msm_grp &G)
{
    return (size_t)(ctx->sm_count > 0 ? ctx->sm_count : 1) *
           (size_t)(G.g2 ? gpu_tuning.msm_aff_tps_g2 : gpu_tuning.msm_aff_tps_g1);
}

/* msm.aff_g1 / _large / _huge (G1: up to 2^24, above 2^24, above 2^25 points; _huge_1w when a
 * sort holds one window, m <= n) and msm.aff_g2 / _large (above 2^23) rounds; a round runs only
 * while its outputs give every thread at least msm.aff_minpt_g1/g2 pairs on at least 256
 * threads, and not at all below msm.aff_min_n_g1/g2 points (decisions.md, "Five G1 batch-affine
 * rounds above 2^25 points", "Three G1 rounds with one window per sort" and "G2 round
 * parameters: ranges of 64, MINPT 64, 4 / 5 rounds"). */
aff_plan msm_aff_rounds(const struct gpu_ctx *ctx, const msm_grp &G, size_t n, size_t m, size_t nb)
{
    aff_plan a;
    memset(&a, 0, sizeof a);
    const struct gpu_tuning &T = gpu_tuning;
    if (n < (G.g2 ? T.msm_aff_min_n_g2 : T.msm_aff_min_n_g1)) return a;
    uint64_t R = G.g2 ? (n > ((size_t)1 << 23) ? T.msm_aff_g2_large : T.msm_aff_g2)
                      : n > ((size_t)1 << 25) ? (m <= n ? T.msm_aff_g1_huge_1w : T.msm_aff_g1_huge)
                      : n > ((size_t)1 << 24) ? T.msm_aff_g1_large : T.msm_aff_g1;
    if (R > 8) R = 8;
    const size_t minpt = (size_t)(G.g2 ? T.msm_aff_minpt_g2 : T.msm_aff_minpt_g1);
    const size_t tmax = msm_aff_tmax(ctx, G);
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

/* Counting a regrown slot's whole new size made the plan think memory was short after a
 * smaller MSM on the same context (decisions.md, "The MSM plan counts a regrown slot's growth,
 * not its whole size"). */
size_t msm_slots_extra(const struct gpu_ctx *ctx, const slot_need *need, size_t count)
{
    size_t extra = 0;
    for (size_t i = 0; i < count; i++) {
        const enum gpu_slot s = need[i].s;
        if (ctx->loan[s] && ctx->loan_size[s] >= need[i].bytes) continue;   /* lent memory */
        const size_t have = ctx->slot[s] ? ctx->slot_size[s] : 0;
        if (need[i].bytes > have) extra += gpu_scratch_size(need[i].bytes) - have;
    }
    return extra;
}

int msm_scratch_avail(struct gpu_ctx *ctx, size_t *avail, struct cuzk_error *err)
{
    size_t fr = 0;
    int rc = gpu_mem_usable(ctx, &fr, err);
    if (rc) return rc;
    if (gpu_tuning.msm_mem_cap && gpu_tuning.msm_mem_cap < fr) fr = (size_t)gpu_tuning.msm_mem_cap;
    *avail = fr > GPU_MEM_MARGIN ? fr - GPU_MEM_MARGIN : 0;
    return CUZK_OK;
}

unsigned msm_sort_end_bit(unsigned c, unsigned g)
{
    unsigned end_bit = c - 1;
    for (unsigned gg = g; gg; gg >>= 1) end_bit++;
    return end_bit > 32 ? 32 : end_bit;
}

/* Exact sizes matter beyond the bytes: the plan re-queries free memory (and may shrink the
 * group) whenever a slot is smaller than its estimate, so an over-estimate made every
 * steady-state MSM re-plan against the memory reserve. 0 if CUB reports an error, which the
 * call itself then reports. */
size_t msm_sort_tmp_bytes(size_t m, unsigned c, unsigned g)
{
    size_t bytes = 0;
    cub::DoubleBuffer<uint32_t> dk(NULL, NULL), dv(NULL, NULL);
    if (cub::DeviceRadixSort::SortPairs(NULL, bytes, dk, dv, (int)m, 0, (int)msm_sort_end_bit(c, g)) != cudaSuccess)
        return 0;
    return bytes;
}

size_t msm_scan_tmp_bytes(size_t nb)
{
    size_t bytes = 0;
    if (cub::DeviceScan::ExclusiveSum(NULL, bytes, (uint32_t *)NULL, (uint32_t *)NULL, (int)nb) != cudaSuccess) return 0;
    return bytes;
}

/* Scratch the MSM still has to allocate for window c with g windows per group (slots already
 * large enough cost nothing). */
static size_t msm_extra_bytes(const struct gpu_ctx *ctx, const msm_grp &G, size_t n, unsigned c, unsigned g,
                              unsigned W, bool aff, bool planes)
{
    const msm_widths ws = msm_widths_of(c, W);   /* ws.c: the widest window's bits */
    const size_t B = msm_win_buckets(ws, 0), m = (size_t)g * n, nb = (size_t)g * B;
    const size_t X = G.xyzz;
    const size_t ranges = m / msm_range_len(G, n, m) + 1, pieces = 2 * ranges;   /* head and tail per range */
    /* batch-affine rounds (msm.cu aff_reduce): points of rounds 1 and 2, prefix products,
     * pairs, bucket counts + offsets, scan storage */
    const aff_plan ap = aff ? msm_aff_rounds(ctx, G, n, m, nb) : aff_plan{};
    const wr_plan wr = msm_runs(G, (uint32_t)B, g, W);
    const size_t o1 = ap.rounds ? ap.out[0] : 0, o2 = ap.rounds > 1 ? ap.out[1] : 0;
    const size_t ab = ap.rounds ? nb * 4 : 0;
    const slot_need need[] = {
        {SL_KEYS0, m * 4}, {SL_KEYS1, m * 4}, {SL_VALS0, m * 4}, {SL_VALS1, m * 4},
        {SL_BSTART, nb * 4}, {SL_BEND, nb * 4}, {SL_HEAVY, (nb + ranges) * 4}, {SL_PARTIAL, pieces * X},
        {SL_BUCKETS, ((nb + wr.points) * msm_bucket_sets(G, n, W, g) + wr.shared) * X},
        {SL_WIN, (size_t)W * X},
        {SL_CUB, msm_sort_tmp_bytes(m ? m : 1, ws.c, g)},
        {SL_AFF_PTS0, o1 * G.aff}, {SL_AFF_PTS1, o2 * G.aff}, {SL_AFF_PRE, o1 * G.field},
        {SL_AFF_PAIR, o1 * sizeof(uint2)}, {SL_AFF_CNT, 2 * ab}, {SL_AFF_CUB, ab ? msm_scan_tmp_bytes(nb) : 0},
        {SL_PLANES, planes && !ctx->msm_sc_dead ? n * sizeof(fr_t) : 0}, {SL_CARRY, planes ? n : 0},
    };
    return msm_slots_extra(ctx, need, sizeof need / sizeof need[0]);
}

/* During the prover's MSMs: what its 0/1 splits and sums of up to msm_split_pts points still
 * allocate beyond what their slots hold (or are lent): the ones bitmap; flags, positions and
 * tail indices, 4 bytes a point each; the split's count and the sum's extra point; the sum's
 * word counts (1/4 byte a point), its scan and its XYZZ partials (one G2 point per 256
 * points, the larger group's). Once the largest split and sum have run, nothing. */
static size_t split_reserve(const struct gpu_ctx *ctx)
{
    const size_t p = ctx->msm_split_pts, words = (p + 31) / 32;
    if (!p) return 0;
    const slot_need need[] = {
        {SL_ONES, 4 * words}, {SL_FLAGS, 4 * p}, {SL_POS, 4 * p}, {SL_TAIL_IDX, 4 * p},
        {SL_NUM, 4096}, {SL_EXTRA, 4096}, {SL_AFF_CNT, (2 * words + 2) * 4},
        {SL_AFF_CUB, msm_scan_tmp_bytes(words)}, {SL_SUM_PART, (words + 7) / 8 * sizeof(g2x_d)},
    };
    return msm_slots_extra(ctx, need, sizeof need / sizeof need[0]);
}

/* Window size and windows per group: c from the measured table (or the cost model), and up to
 * 2^msm.sort_lg keys sorted at once; then, while the scratch would not fit in free GPU memory,
 * fewer windows per group down to 2^msm.sort_base_lg keys, then no word planes, no batch-affine
 * rounds, fewer windows per group, smaller windows. Groups above 2^sort_base_lg keys are taken
 * only while GPU_MSM_RESERVE bytes stay free beside them (a second witness buffer for the
 * prover's prefetch), or the prover's exact ctx->msm_reserve during its MSMs, or msm.reserve;
 * every group leaves the room the prover's 0/1 splits still need (split_reserve). */
#define GPU_MSM_RESERVE ((size_t)8 << 30)
static int msm_plan_calc(struct gpu_ctx *ctx, const msm_grp &G, size_t n, msm_shape *out, size_t *avail_out,
                         size_t *extra_out, struct cuzk_error *err)
{
    unsigned c, W;
    msm_window(n, G.g2, &c, &W);
    /* more windows per sort pay at every size measured (decisions.md, "Up to 2^29 keys per
     * sort, with an 8 GiB reserve") */
    auto per_sort = [&](size_t keys) {
        unsigned gg = n ? (unsigned)((keys / n) ? (keys / n) : 1) : W;
        return gg > W ? W : gg;
    };
    unsigned g = per_sort((size_t)1 << gpu_tuning.msm_sort_lg);
    const unsigned g_base = per_sort((size_t)1 << gpu_tuning.msm_sort_base_lg);
    /* msm.max_windows=1 gives small MSMs the one-window-per-sort path of the large ones */
    const unsigned gmax = (unsigned)gpu_tuning.msm_max_windows;
    if (gmax && g > gmax) g = gmax;
    /* word planes: only with one window per sort */
    bool planes_ok = true;
    auto planes = [&] { return n && planes_ok && g == 1 && W > 1; };
    /* steady state: the scratch of an earlier MSM of this size is already there */
    bool aff = true;
    size_t extra = n ? msm_extra_bytes(ctx, G, n, c, g, W, aff, planes()) : 0;
    size_t avail = 0;
    if (extra) {
        int rc = msm_scratch_avail(ctx, &avail, err);
        if (rc) return rc;
    }
    /* (extra 0: the slots are already that large, the memory is taken) */
    /* groups above g_base leave the whole reserve (room for the next witness too); every
     * group leaves what the rest of the prover's proof must still allocate (its splits) */
    const size_t split = split_reserve(ctx);
    const size_t reserve = gpu_tuning.msm_reserve ? (size_t)gpu_tuning.msm_reserve
                           : ctx->msm_reserve     ? ctx->msm_reserve + split
                                                  : GPU_MSM_RESERVE;
    auto over = [&] { return extra > avail || (extra && avail - extra < (g > g_base ? reserve : split)); };
    while (over()) {
        if (g > g_base) {
            g = (g + 1) / 2 > g_base ? (g + 1) / 2 : g_base;
        } else if (planes()) {
            planes_ok = false;   /* the word planes go first (4 GiB at 2^27 points, unless in place) */
        } else if (aff && msm_aff_rounds(ctx, G, n, (size_t)g * n, (size_t)g << (c - 1)).rounds) {
            aff = false;   /* then the batch-affine rounds' buffers */
        } else if (g > 1) {
            g = (g + 1) / 2;
        } else if (c > 8) {
            c--;
            W = (256 + c - 1) / c;
        } else {
            break;   /* the allocations report the shortage with sizes */
        }
        extra = msm_extra_bytes(ctx, G, n, c, g, W, aff, planes());
    }
    out->aff = aff;
    out->planes = planes();
    out->c = c;
    out->W = W;
    out->g = g;
    out->ws = msm_widths_of(c, W);
    *avail_out = avail;
    *extra_out = extra;
    return CUZK_OK;
}

int msm_plan(struct gpu_ctx *ctx, const msm_grp &G, size_t n, msm_shape *out, struct cuzk_error *err)
{
    size_t avail = 0, extra = 0;
    int rc = msm_plan_calc(ctx, G, n, out, &avail, &extra, err);
    if (rc) return rc;
    const unsigned c = out->c, W = out->W, g = out->g;
    const bool aff = out->aff;
    ctx->msm_last_c = c;
    ctx->msm_last_g = g;
    ctx->msm_last_aff = 0;   /* set by the first window group */
    ctx->msm_last_planes = out->planes;
    /* which group the prover's MSMs get beside its other buffers; free and new scratch are 0
     * when the scratch already sufficed (no memory query was made) */
    if (ctx->opt.trace)
        fprintf(stderr, "cuzk gpu msm plan: %s n=%zu c=%u W=%u (%u of %u bits) g=%u aff=%d planes=%d%s free=%.1f GiB new scratch=%.1f GiB\n",
                G.g2 ? "G2" : "G1", n, c, W, out->ws.hi, out->ws.c, g, (int)aff, (int)out->planes,
                out->planes && ctx->msm_sc_dead ? " (in place)" : "", avail / 1073741824.0,
                extra / 1073741824.0);
    return CUZK_OK;
}

/* An MSM whose batch-affine rounds do not fit beside what the prover holds (a streamed
 * WindowPoSt key's 90 M-point B_G2 on an 80 GB card) runs without them ~1.6x slower; the same
 * points in two or four parts, each with rounds of its size, cost a second or fourth set of
 * window reductions instead (decisions.md, "An MSM runs in parts where its rounds fit only
 * so"). The number of parts: 1 when the whole MSM keeps its rounds (or would run none). */
unsigned msm_parts(struct gpu_ctx *ctx, const msm_grp &G, size_t n)
{
    msm_shape sh;
    size_t avail, extra;
    if (msm_plan_calc(ctx, G, n, &sh, &avail, &extra, NULL) || sh.aff) return 1;
    if (!msm_aff_rounds(ctx, G, n, n, (size_t)1 << (sh.c - 1)).rounds) return 1;
    for (unsigned k = 2; k <= MSM_MAX_PARTS; k *= 2) {
        const size_t nk = (n + k - 1) / k;
        if (msm_plan_calc(ctx, G, nk, &sh, &avail, &extra, NULL)) return 1;
        if (sh.aff && msm_aff_rounds(ctx, G, nk, (size_t)sh.g * nk, (size_t)sh.g << (sh.c - 1)).rounds) return k;
    }
    return 1;
}
