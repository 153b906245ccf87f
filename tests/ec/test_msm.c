/* test_msm.c: Pippenger MSM (every size class, window width, scalar edge case and base edge
 * case) and bitmap sums for G1 and G2 against naive sums of double-and-add products. */
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
