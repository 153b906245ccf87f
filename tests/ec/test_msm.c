/* test_msm.c: Pippenger MSM (every size class, window width, scalar edge case and base edge
 * case) and bitmap sums for G1 and G2 against naive sums of double-and-add products; the G1
 * AVX-512 IFMA flush and its vector arithmetic against the scalar code. */
#include <string.h>

#include "cuzk/ec.h"
#include "test.h"
#include "../../src/ec/ec_internal.h"   /* g1__msm_window / g2__msm_window test seam */

static void fr_rand(fr_t *o)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    fr_from_wide_le(o, b);
}

enum { SC_RANDOM, SC_ZERO, SC_ONE, SC_RM1, SC_MIXED, SC__N, SC_SMALL = SC__N };

static void make_scalars(fr_t *s, size_t n, int kind)
{
    fr_t rm1;
    fr_neg(&rm1, &FR_ONE);   /* r - 1 */
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case SC_RANDOM: fr_rand(&s[i]); break;
        case SC_ZERO: s[i] = FR_ZERO; break;
        case SC_ONE: s[i] = FR_ONE; break;
        case SC_RM1: s[i] = rm1; break;
        case SC_SMALL: {   /* 0..15: every window's digits land in a handful of buckets */
            uint64_t k[4] = {cuzk_rng_u64(test_rng()) % 16, 0, 0, 0};
            fr_to_mont(&s[i], k);
            break;
        }
        default: {
            uint64_t r = cuzk_rng_u64(test_rng()) % 6, k[4] = {0};
            if (r == 0) s[i] = FR_ZERO;
            else if (r == 1) s[i] = FR_ONE;
            else if (r == 2) s[i] = rm1;
            else if (r == 3) { k[0] = cuzk_rng_u64(test_rng()) & 0xffff; fr_to_mont(&s[i], k); }
            else fr_rand(&s[i]);
        }
        }
    }
}

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#define PT(name) g1_##name
#define AFF g1_aff_t
#define JAC g1_jac_t
#define GEN G1_GENERATOR
#define NAME(x) CAT(g1_, x)
#define SIZES {1, 2, 3, 63, 64, 1000, 1 << 14}
#define BIG 12000
#define EDGE_N 2000
#define MAX_WINDOW 16
#include "msm_tests.h"
#undef PT
#undef AFF
#undef JAC
#undef GEN
#undef NAME
#undef SIZES
#undef BIG
#undef EDGE_N
#undef MAX_WINDOW

#define PT(name) g2_##name
#define AFF g2_aff_t
#define JAC g2_jac_t
#define GEN G2_GENERATOR
#define NAME(x) CAT(g2_, x)
#define SIZES {1, 2, 3, 63, 64, 1000}
#define BIG 9000
#define EDGE_N 800
#define MAX_WINDOW 13
#include "msm_tests.h"

/* ---- G1 IFMA path (msm_ifma.c); skipped on CPUs without AVX-512 IFMA ---- */

/* A value < p from random bytes (rejection sampling). */
static void fp_rand_raw(fp_t *o)
{
    for (;;) {
        cuzk_rng_bytes(test_rng(), (uint8_t *)o->l, sizeof o->l);
        o->l[5] &= (1ULL << 61) - 1;
        bool lt = false;
        for (int i = 5; i >= 0; i--)
            if (o->l[i] != FP_MODULUS.l[i]) {
                lt = o->l[i] < FP_MODULUS.l[i];
                break;
            }
        if (lt) return;
    }
}

/* 8 lanes of a*b, a-b, a+b through the vector arithmetic against fp_mul / fp_sub / fp_add
 * (themselves checked against GMP in tests/ff), on every pair of edge values (limbs at and
 * around the 52-bit cuts, p - 1, R, p - R) and on random pairs. */
TEST(g1_ifma_arith_vs_fp)
{
    if (!ec_ifma_usable()) test_skip("no AVX-512 IFMA on this CPU");
    fp_t e[16];
    memset(e, 0, sizeof e);
    int ne = 0;
    e[ne++] = FP_ZERO_ELEM;
    e[ne].l[0] = 1;
    ne++;
    e[ne++] = FP_ONE;                                    /* R mod p */
    fp_neg(&e[ne++], &FP_ONE);                           /* p - R */
    e[ne] = FP_MODULUS;
    e[ne++].l[0] -= 1;                                   /* p - 1 */
    e[ne] = FP_MODULUS;
    e[ne++].l[0] -= 2;                                   /* p - 2 */
    e[ne].l[0] = (1ULL << 52) - 1;
    ne++;                                                /* one full 52-bit limb */
    e[ne].l[0] = 1ULL << 52;
    ne++;
    e[ne].l[4] = 1ULL << 56;
    ne++;                                                /* bit 312: limb 6 of 52 */
    e[ne].l[5] = 1ULL << 44;
    ne++;                                                /* bit 364: limb 7 */
    e[ne].l[5] = 1ULL << 60;
    ne++;                                                /* 2^380 */
    for (int i = 0; i < 6; i++) e[ne].l[i] = ~0ULL;
    e[ne].l[5] = FP_MODULUS.l[5] - 1;
    ne++;                                                /* < p, all low limbs ones */
    fp_t a[8], b[8], mul[8], sub[8], add[8], want;
    size_t k = 0, pairs = (size_t)ne * (size_t)ne + 16000;
    for (size_t t = 0; t < pairs; t++) {
        if (t < (size_t)ne * (size_t)ne) {
            a[k] = e[t / (size_t)ne];
            b[k] = e[t % (size_t)ne];
        } else {
            fp_rand_raw(&a[k]);
            fp_rand_raw(&b[k]);
        }
        if (++k < 8 && t + 1 < pairs) continue;
        for (; k < 8; k++) a[k] = b[k] = FP_ONE;
        k = 0;
        ec__ifma_ops(mul, sub, add, a, b);
        for (int l = 0; l < 8; l++) {
            fp_mul(&want, &a[l], &b[l]);
            ASSERT_MEM_EQ(&mul[l], &want, sizeof want);
            fp_sub(&want, &a[l], &b[l]);
            ASSERT_MEM_EQ(&sub[l], &want, sizeof want);
            fp_add(&want, &a[l], &b[l]);
            ASSERT_MEM_EQ(&add[l], &want, sizeof want);
        }
    }
}

/* The MSM with the IFMA flush and with the scalar flush (the other tests run whichever the CPU
 * selects): equal on random inputs for the batch-affine widths, and the scalar path against
 * the naive oracle on edge-case bases (infinity, repeats, P and -P) and scalars. */
TEST(g1_msm_ifma_vs_scalar)
{
    struct cuzk_error e_, *err = &e_;
    size_t n = 1 << 14;
    g1_aff_t *b = malloc(n * sizeof *b);
    fr_t *s = malloc(n * sizeof *s);
    g1_make_bases(b, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = cuzk_rng_u64(test_rng()) % 16;
        size_t j = (size_t)(cuzk_rng_u64(test_rng()) % n);
        if (r == 0) memset(&b[i], 0, sizeof b[i]);
        else if (r == 1) b[i] = b[j];
        else if (r == 2) g1_aff_neg(&b[i], &b[j]);
    }
    make_scalars(s, n, SC_MIXED);
    bool had = ec__ifma_set(true);
    static const unsigned cs[] = {12, 13, 14, 16};
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
        g1_jac_t on, off;
        ec__ifma_set(true);
        ASSERT_OK(g1__msm_window(&on, b, s, n, cs[ci], pool_default(), err), err);
        ec__ifma_set(false);
        ASSERT_OK(g1__msm_window(&off, b, s, n, cs[ci], pool_default(), err), err);
        ASSERT_MSG(g1_jac_eq(&on, &off), "window %u", cs[ci]);
    }
    size_t m = 1500;   /* the naive oracle costs ~0.3 ms a term */
    for (int kind = 0; kind < 3; kind++) {
        make_scalars(s, m, kind == 0 ? SC_MIXED : kind == 1 ? SC_ONE : SC_SMALL);
        g1_jac_t want, got;
        g1_naive_msm(&want, b, s, m);
        for (unsigned c = 12; c <= 16; c += 4) {
            ASSERT_OK(g1__msm_window(&got, b, s, m, c, NULL, err), err);
            ASSERT_MSG(g1_jac_eq(&got, &want), "scalar flush, kind %d window %u", kind, c);
        }
    }
    ec__ifma_set(had);
    free(b);
    free(s);
}
