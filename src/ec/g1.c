/* g1.c: G1 = E(Fp): y^2 = x^3 + 4. Instantiates point_impl.h over Fp, holds the generator
 * and the GLV-endomorphism subgroup check. */
#include <string.h>

#include "cuzk/ec.h"
#include "cuzk/util.h"
#include "ec_internal.h"

/* The zcash/IETF generator (draft-irtf-cfrg-pairing-friendly-curves, zkcrypto/bls12_381):
 * x = 0x17f1d3a7...db22c6bb, y = 0x08b3f481...46c5e7e1, here in Montgomery form (computed with
 * Python integers; tests/ec/test_serialize.c checks the published encodings). */
const g1_aff_t G1_GENERATOR = {
    {{0x5cb38790fd530c16ULL, 0x7817fc679976fff5ULL, 0x154f95c7143ba1c1ULL, 0xf0ae6acdf3d0e747ULL,
      0xedce6ecc21dbf440ULL, 0x120177419e0bfb75ULL}},
    {{0xbaac93d50ce72271ULL, 0x8c22631a7918fd8eULL, 0xdd595f13570725ceULL, 0x51ac582950405194ULL,
      0x0e1c8c3fad0059c0ULL, 0x0bbc3efc5008a26aULL}}};

#define PT(name) g1_##name
#define AFF g1_aff_t
#define JAC g1_jac_t
#define XYZZ g1_xyzz_t
#define FE fp_t
#define FE_ADD fp_add
#define FE_SUB fp_sub
#define FE_DBL fp_dbl
#define FE_NEG fp_neg
#define FE_MUL fp_mul
#define FE_SQR fp_sqr
#define FE_INV fp_inv
#define FE_IS_ZERO fp_is_zero
#define FE_EQ fp_eq
#define FE_ONE FP_ONE
#define FE_ZERO FP_ZERO_ELEM
#define FE_MUL_B(o, a) (fp_dbl((o), (a)), fp_dbl((o), (o)))   /* b = 4 */
#define FE_BATCH_GRAIN EC_BATCH_GRAIN
#include "point_impl.h"

/* beta = 0x5f19672f...fffefffe, a primitive cube root of unity in Fp (Montgomery form). Of
 * the two, this is the one for which sigma(x, y) = (beta x, y) acts on G1 as multiplication
 * by -u^2 (the other acts as u^2 - 1; checked with Python integers); test_g1.c compares the
 * resulting test with r P == O, which fails with the other root. */
static const fp_t G1_BETA = {{0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL,
                              0xc26a2ff874fd029bULL, 0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL}};

/* Scott, "A note on group membership tests for G1, G2 and GT on BLS pairing-friendly curves"
 * (eprint 2021/1130): a point P of E(Fp) lies in G1 iff sigma(P) == -u^2 P.
 * Cost: two 64-bit scalar multiplications by |u| (u^2 P = |u| (|u| P)) instead of one by
 * the 255-bit r. Expects P on the curve; infinity is in G1. */
bool g1_aff_in_subgroup(const g1_aff_t *p)
{
    if (g1_aff_is_inf(p)) return true;
    g1_jac_t t, s;
    g1_mul_sparse_(&t, NULL, p, EC_U_ABS);
    g1_mul_sparse_(&t, &t, NULL, EC_U_ABS); /* u^2 P */
    g1_jac_neg(&t, &t);                  /* -u^2 P */
    s.z = FP_ONE;
    fp_mul(&s.x, &p->x, &G1_BETA);
    s.y = p->y;                          /* sigma(P) */
    return g1_jac_eq(&s, &t);
}
