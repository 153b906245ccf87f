/* msm_plan.cuh: how an MSM or a 0/1 sum is laid out before any kernel runs: window bits,
 * windows per radix sort, accumulation range length, window-reduction layout, batch-affine
 * rounds, and the scratch all of that needs against the free GPU memory (msm_plan.cu). The
 * plan is host code over the group's sizes (struct msm_grp), so the G1 and G2 MSMs
 * (msm.cu) and the 0/1 sums (msm_sum.cu) share it without templates. */
#ifndef CUZK_GPU_MSM_PLAN_CUH
#define CUZK_GPU_MSM_PLAN_CUH

#include "gpu_internal.cuh"

/* The group an MSM runs in: G2's field elements are twice G1's 48 bytes. */
struct msm_grp {
    bool g2;
    size_t field, aff, xyzz;   /* bytes of an Fp / Fp2 element, an affine and an XYZZ point */
};
template <class F> static inline msm_grp msm_grp_of()
{
    return msm_grp{sizeof(F) > 48, sizeof(F), sizeof(d_aff<F>), sizeof(d_xyzz<F>)};
}

/* Points per accumulation range for n points in sort groups of m entries. */
uint32_t msm_range_len(const msm_grp &G, size_t n, size_t m);

/* Window widths: W windows of c or c - 1 bits, the `hi` windows of c bits first, that cover
 * exactly 256 bits (a scalar below r < 2^255 leaves the top window's digit at most half its
 * range, so its Booth carry never runs out). Same W as windows of c bits alone, but the
 * narrower windows have half the buckets to reduce. */
struct msm_widths {
    unsigned c, W, hi;
};
msm_widths msm_widths_of(unsigned c, unsigned W);
__host__ __device__ inline unsigned msm_win_bits(const msm_widths &ws, unsigned w) { return w < ws.hi ? ws.c : ws.c - 1; }
__host__ __device__ inline unsigned msm_win_off(const msm_widths &ws, unsigned w)
{
    return w * (ws.c - 1) + (w < ws.hi ? w : ws.hi);
}
/* Buckets of window w (signed digits: 2^(bits - 1)). */
__host__ __device__ inline uint32_t msm_win_buckets(const msm_widths &ws, unsigned w)
{
    return 1u << (msm_win_bits(ws, w) - 1);
}

/* Window reduction layout of a window of B buckets. G1: two levels, K = 16 buckets per
 * level-1 thread (S = B / K runs per window), K2 = 16 runs per level-2 thread; level 1 runs per
 * window group, the sums of its outputs and level 2 once over all W windows (their serial
 * chains are long and their threads few per window). G2: one level, S bucket runs per window
 * with up to 2^16 threads over the group (K = B / S), each also multiplying its run by its
 * offset. All powers of two. */
struct wr_dims {
    uint32_t S, K, S2, K2;
};
__host__ __device__ inline wr_dims wr_dims_of(uint32_t B)   /* two levels */
{
    wr_dims d;
    d.K = B < 16 ? B : 16;
    d.S = B / d.K;
    d.K2 = d.S < 16 ? d.S : 16;
    d.S2 = d.S / d.K2;
    return d;
}
struct wr_plan {
    bool two;
    uint32_t S, K, S2, K2;
    size_t points;   /* per bucket set, after its buckets (one level): the window sums */
    size_t shared;   /* after the bucket sets (two levels): W windows' level-1 sums and runs,
                      * level-2 sums, totals */
};
wr_plan msm_runs(const msm_grp &G, uint32_t B, unsigned g, unsigned W);
/* G1's window reductions of group i run on their own stream while group i + 1 is digitised,
 * sorted and accumulated: two bucket sets (by group parity) when there is more than one group. */
bool msm_overlap(const msm_grp &G);
unsigned msm_bucket_sets(const msm_grp &G, size_t n, unsigned W, unsigned g);

/* Batch-affine rounds before the accumulation: rounds, each round's output bound and threads. */
struct aff_plan {
    unsigned rounds;
    size_t out[8];
    uint32_t thr[8];
};
aff_plan msm_aff_rounds(const struct gpu_ctx *ctx, const msm_grp &G, size_t n, size_t m, size_t nb);
/* The most threads a batch-affine round takes (msm.aff_tps_g1/g2 per SM). */
size_t msm_aff_tmax(const struct gpu_ctx *ctx, const msm_grp &G);

/* New GPU memory the named slots take at these sizes (a slot smaller than asked for regrows,
 * and gpu_scratch frees the old buffer first, so it costs the difference; lent slots cost
 * nothing). */
struct slot_need {
    enum gpu_slot s;
    size_t bytes;
};
size_t msm_slots_extra(const struct gpu_ctx *ctx, const slot_need *need, size_t count);
/* Free GPU memory for new scratch (after the operator's reserve, the msm.mem_cap test hook and
 * GPU_MEM_MARGIN). */
int msm_scratch_avail(struct gpu_ctx *ctx, size_t *avail, struct cuzk_error *err);

/* Key bits of a sort of g windows of 2^(c-1) buckets (key = window * B + |d| - 1). */
unsigned msm_sort_end_bit(unsigned c, unsigned g);
/* CUB's temporary storage for sorting m pairs of msm_sort_end_bit(c, g) bits, and for the
 * exclusive scan of nb counts (exact: CUB is asked with a NULL storage pointer). */
size_t msm_sort_tmp_bytes(size_t m, unsigned c, unsigned g);
size_t msm_scan_tmp_bytes(size_t nb);

/* The plan of an MSM of n points: window bits c, W windows, g per sort group, whether the
 * batch-affine rounds and the word-plane digits fit. Recorded on ctx for the getters. */
struct msm_shape {
    unsigned c, W, g;
    msm_widths ws;
    bool aff, planes;
};
int msm_plan(struct gpu_ctx *ctx, const msm_grp &G, size_t n, msm_shape *out, struct cuzk_error *err);
/* Parts an MSM of n points runs in so that each keeps its batch-affine rounds (1..MSM_MAX_PARTS). */
#define MSM_MAX_PARTS 4u
unsigned msm_parts(struct gpu_ctx *ctx, const msm_grp &G, size_t n);

#endif
