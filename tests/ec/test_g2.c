/* test_g2.c: G2 group law, coordinates, scalar multiplication, batch affine conversion and
 * the psi subgroup check against independent oracles (tests in group_tests.h, over Fp2). */
#include <string.h>

#include "cuzk/ec.h"
#include "test.h"

static void fe_rand(fp2_t *o);
static void fe_b(fp2_t *o)   /* b' = 4(u + 1) */
{
    fp_from_u64(&o->c0, 4);
    o->c1 = o->c0;
}

#define PT(name) g2_##name
#define AFF g2_aff_t
#define JAC g2_jac_t
#define XYZZ g2_xyzz_t
#define FE fp2_t
#define FE_ADD fp2_add
#define FE_SUB fp2_sub
#define FE_MUL fp2_mul
#define FE_SQR fp2_sqr
#define FE_INV fp2_inv
#define FE_NEG fp2_neg
#define FE_EQ fp2_eq
#define FE_IS_ZERO fp2_is_zero
#define FE_SQRT fp2_sqrt
#define FE_ONE FP2_ONE
#define GEN G2_GENERATOR
#define N_RAND 100
#define N_SUB 8
/* h2 = (u^8 - 4u^7 + 5u^6 - 4u^4 + 6u^3 - 4u^2 - 4u + 13) / 9, #E'(Fp2) = h2 r (507 bits) */
static const uint64_t COFACTOR[8] = {0xcf1c38e31c7238e5ULL, 0x1616ec6e786f0c70ULL,
                                     0x21537e293a6691aeULL, 0xa628f1cb4d9e82efULL,
                                     0xa68a205b2e5a7ddfULL, 0xcd91de4547085abaULL,
                                     0x091d50792876a202ULL, 0x05d543a95414e7f1ULL};
#define COFACTOR_LIMBS 8

#include "group_tests.h"

static void fe_rand(fp2_t *o)
{
    fp_rand(&o->c0);
    fp_rand(&o->c1);
}

/* psi(G) == u G, checked with the affine oracle (u = -0xd201000000010000), and the subgroup
 * test's answer on the generator's negation and double. */
TEST(psi_eigenvalue_on_generator)
{
    static const uint64_t uabs = 0xd201000000010000ULL;
    g2_aff_t ug, p;
    oracle_mul(&ug, &G2_GENERATOR, &uabs, 1);
    g2_aff_neg(&ug, &ug);
    ASSERT(g2_aff_is_on_curve(&ug));
    ASSERT(g2_aff_in_subgroup(&ug));
    g2_aff_neg(&p, &G2_GENERATOR);
    ASSERT(g2_aff_in_subgroup(&p));
    oracle_add(&p, &G2_GENERATOR, &G2_GENERATOR);
    ASSERT(g2_aff_in_subgroup(&p));
}

/* r P for a random curve point P has order dividing h2: on the curve, and outside G2 unless
 * it is O; both the fast and the slow test must say so. */
TEST(small_order_points_rejected)
{
    for (int i = 0; i < 4; i++) {
        g2_aff_t p;
        g2_jac_t j, t;
        rand_curve_point(&p);
        g2_jac_from_aff(&j, &p);
        naive_mul(&t, &j, FR_MODULUS.l, 4);   /* r P has order dividing h2 */
        g2_jac_to_aff(&p, &t);
        ASSERT(g2_aff_is_on_curve(&p));
        if (g2_aff_is_inf(&p)) continue;
        ASSERT(!slow_in_subgroup(&p));
        ASSERT(!g2_aff_in_subgroup(&p));
    }
}
