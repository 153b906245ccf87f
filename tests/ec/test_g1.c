/* test_g1.c: G1 group law, coordinates, scalar multiplication, batch affine conversion and
 * the GLV subgroup check against independent oracles (tests in group_tests.h, over Fp). */
#include <string.h>

#include "cuzk/ec.h"
#include "test.h"

static void fe_rand(fp_t *o);
static void fe_b(fp_t *o) { fp_from_u64(o, 4); }

#define PT(name) g1_##name
#define AFF g1_aff_t
#define JAC g1_jac_t
#define XYZZ g1_xyzz_t
#define FE fp_t
#define FE_ADD fp_add
#define FE_SUB fp_sub
#define FE_MUL fp_mul
#define FE_SQR fp_sqr
#define FE_INV fp_inv
#define FE_NEG fp_neg
#define FE_EQ fp_eq
#define FE_IS_ZERO fp_is_zero
#define FE_SQRT fp_sqrt
#define FE_ONE FP_ONE
#define GEN G1_GENERATOR
#define N_RAND 200
#define N_SUB 16
/* h1 = (u - 1)^2 / 3 = 0x396c8c005555e1568c00aaab0000aaab, #E(Fp) = h1 r */
static const uint64_t COFACTOR[2] = {0x8c00aaab0000aaabULL, 0x396c8c005555e156ULL};
#define COFACTOR_LIMBS 2

#include "group_tests.h"

static void fe_rand(fp_t *o) { fp_rand(o); }

/* The points (0, +-2) have order 3. sigma fixes them (beta 0 = 0), while u^2 = 1 mod 3 makes
 * -u^2 P = -P != P: the endomorphism test must reject them, as must r P == O. */
TEST(glv_check_order3_points)
{
    g1_aff_t p;
    fp_t two;
    fp_from_u64(&two, 2);
    p.x = FP_ZERO_ELEM;
    p.y = two;
    ASSERT(g1_aff_is_on_curve(&p));
    ASSERT(!slow_in_subgroup(&p));
    ASSERT(!g1_aff_in_subgroup(&p));
    fp_neg(&p.y, &p.y);
    ASSERT(!g1_aff_in_subgroup(&p));
}

TEST(affine_eq_and_neg)
{
    g1_aff_t p, q;
    rand_curve_point(&p);
    g1_aff_neg(&q, &p);
    ASSERT(!g1_aff_eq(&p, &q));
    g1_aff_neg(&q, &q);
    ASSERT(g1_aff_eq(&p, &q));
    memset(&q, 0, sizeof q);
    ASSERT(g1_aff_is_inf(&q));
    g1_aff_neg(&q, &q);
    ASSERT(g1_aff_is_inf(&q));
    ASSERT(g1_aff_is_on_curve(&q));
}
