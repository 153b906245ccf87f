/* msm.c: Pippenger MSM and bitmap sums for G1 and G2 (one body, msm_impl.h), plus the
 * window choice and the signed-digit (Booth) recoding they share. */
#include <string.h>

#include "cuzk/ec.h"
#include "cuzk/util.h"
#include "ec_internal.h"

#define STR2_(x) #x
#define STR_(x) STR2_(x)

/* Batch-affine accumulation from this window width up (below it the batches would be too
 * small to amortise the inversion, and n is small anyway). */
#define EC_MSM_AFFINE_MIN_C 12

/* Buckets that window w of width c can reach: 2^(c-1), except in the top window, where
 * k < 2^255 leaves t = 255 - wc bits and the digit is at most 2^t (so 1 bucket when t <= 0). */
static size_t ec_msm_live(unsigned w, unsigned c)
{
    size_t nb = (size_t)1 << (c - 1);
    unsigned lo = w * c;
    if (lo >= 255) return 1;
    if (255 - lo >= c - 1) return nb;
    return (size_t)1 << (255 - lo);
}

/* Additions per shared inversion for a window of width c that reaches `live` buckets: 1/8 of
 * them (so a point finds its bucket already queued, and waits for the next batch, ~1/16 of
 * the time), at most 2048 (the batch stays in L2). 0 selects the XYZZ path: below width
 * EC_MSM_AFFINE_MIN_C (small n), and for a top window with few buckets, where batches of
 * < 128 would not amortise the inversion. */
static size_t ec_msm_batch(unsigned c, size_t live)
{
    if (c < EC_MSM_AFFINE_MIN_C) return 0;
    size_t b = live / 8;
    if (b < 128) return 0;
    return b < 2048 ? b : 2048;
}

/* Window width c for n points: minimises the estimated cost, in mixed XYZZ additions (10 M),
 *   sum over the ceil(256/c) windows of (n * a + 2.4 * live)
 * where a is the relative cost of one bucket addition (1 for XYZZ; for batch-affine
 * (6 M + inversion / batch) / 10 M, the inversion taken as ~110 M) and 2.4 * live the
 * running-sum reduction of the window's buckets (a mixed and a full XYZZ addition each).
 * Capped at 16 (buckets of one window: 2^15 x 96 B affine + 2^15 x 192 B XYZZ for G1). */
static unsigned ec_msm_window(size_t n)
{
    unsigned best = 1;
    double best_cost = 0;
    for (unsigned c = 1; c <= 16; c++) {
        double cost = 0;
        for (unsigned w = 0; w < (256 + c - 1) / c; w++) {
            size_t live = ec_msm_live(w, c), b = ec_msm_batch(c, live);
            double a = b ? (6.0 + 110.0 / (double)b) / 10.0 : 1.0;
            cost += (double)n * a + 2.4 * (double)live;
        }
        if (c == 1 || cost < best_cost) {
            best = c;
            best_cost = cost;
        }
    }
    return best;
}

/* Point ranges per window: enough tasks that every thread gets about two, but never ranges
 * shorter than 4096 points (each range pays a full bucket reduction). */
static unsigned ec_msm_splits(size_t n, unsigned nwin, unsigned threads)
{
    unsigned want = (2 * threads + nwin - 1) / nwin;
    size_t maxs = n / 4096 > 0 ? n / 4096 : 1;
    if (want > maxs) want = (unsigned)maxs;
    return want ? want : 1;
}

/* Signed digit w of a canonical scalar k (4 limbs, k < 2^255) for width c:
 *   d_w = sum_{i<c} b_{wc+i} 2^i + b_{wc-1} - b_{wc+c-1} 2^c,  b_{-1} = 0,
 * so that sum_w d_w 2^(wc) = k (the b_{wc-1} terms telescope) provided the top window's
 * sign bit b_{W c - 1} is 0, i.e. W = ceil(256 / c) windows. |d_w| <= 2^(c-1). Stateless, so
 * windows can be processed independently. */
static inline int32_t ec_booth_digit(const uint64_t *k, unsigned w, unsigned c)
{
    long lo = (long)w * c - 1;              /* the borrow bit b_{wc-1} */
    uint64_t bits;
    if (lo < 0) {
        bits = (k[0] & ((1ULL << c) - 1)) << 1;
    } else {
        size_t li = (size_t)lo / 64;
        unsigned sh = (unsigned)lo % 64;
        if (li >= 4) return 0;
        bits = k[li] >> sh;
        if (sh + c + 1 > 64 && li + 1 < 4) bits |= k[li + 1] << (64 - sh);
        bits &= (1ULL << (c + 1)) - 1;
    }
    return (int32_t)((bits >> 1) + (bits & 1)) - (int32_t)(((bits >> c) & 1) << c);
}

/* Zero tests on the MSM's hot path without a call: field elements are always fully reduced
 * (docs/ff.md), so zero is all-zero limbs. */
static inline bool ec_fp_is_zero_(const fp_t *a)
{
    return !(a->l[0] | a->l[1] | a->l[2] | a->l[3] | a->l[4] | a->l[5]);
}
static inline bool ec_fp2_is_zero_(const fp2_t *a)
{
    return ec_fp_is_zero_(&a->c0) && ec_fp_is_zero_(&a->c1);
}

#define PT(name) g1_##name
#define AFF g1_aff_t
#define JAC g1_jac_t
#define XYZZ g1_xyzz_t
#define FE fp_t
#define FE_ADD fp_add
#define FE_SUB fp_sub
#define FE_IS_ZERO ec_fp_is_zero_
#define FE_MUL fp_mul
#define FE_SQR fp_sqr
#define FE_INV fp_inv
#define FE_EQ fp_eq
#define MSM_IFMA_FLUSH ec_g1_flush_ifma
#include "msm_impl.h"
#undef PT
#undef AFF
#undef JAC
#undef XYZZ
#undef FE
#undef FE_ADD
#undef FE_SUB
#undef FE_IS_ZERO
#undef FE_MUL
#undef FE_SQR
#undef FE_INV
#undef FE_EQ
#undef MSM_IFMA_FLUSH

#define PT(name) g2_##name
#define AFF g2_aff_t
#define JAC g2_jac_t
#define XYZZ g2_xyzz_t
#define FE fp2_t
#define FE_ADD fp2_add
#define FE_SUB fp2_sub
#define FE_IS_ZERO ec_fp2_is_zero_
#define FE_MUL fp2_mul
#define FE_SQR fp2_sqr
#define FE_INV fp2_inv
#define FE_EQ fp2_eq
#include "msm_impl.h"
