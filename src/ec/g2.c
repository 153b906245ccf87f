/* g2.c: G2 = E'(Fp2): y^2 = x^3 + 4(u + 1), the M-type sextic twist. Instantiates
 * point_impl.h over Fp2, holds the generator and the psi-endomorphism subgroup check. */
#include <string.h>

#include "cuzk/ec.h"
#include "cuzk/util.h"
#include "ec_internal.h"

/* The zcash/IETF generator: x = 0x024aa2b2...c121bdb8 + 0x13e02b60...5d042b7e u,
 * y = 0x0ce5d527...08b82801 + 0x0606c4a0...f05f79be u (Montgomery form). */
const g2_aff_t G2_GENERATOR = {
    {{{0xf5f28fa202940a10ULL, 0xb3f5fb2687b4961aULL, 0xa1a893b53e2ae580ULL, 0x9894999d1a3caee9ULL,
       0x6f67b7631863366bULL, 0x058191924350bcd7ULL}},
     {{0xa5a9c0759e23f606ULL, 0xaaa0c59dbccd60c3ULL, 0x3bb17e18e2867806ULL, 0x1b1ab6cc8541b367ULL,
       0xc2b6ed0ef2158547ULL, 0x11922a097360edf3ULL}}},
    {{{0x4c730af860494c4aULL, 0x597cfa1f5e369c5aULL, 0xe7e6856caa0a635aULL, 0xbbefb5e96e0d495fULL,
       0x07d3a975f0ef25a2ULL, 0x0083fd8e7e80dae5ULL}},
     {{0xadc0fc92df64b05dULL, 0x18aa270a2b1461dcULL, 0x86adac6a3be4eba0ULL, 0x79495c4ec93da33aULL,
       0xe7175850a43ccaedULL, 0x0b2bc2a163de1bf2ULL}}}};

/* b' = 4(u + 1): multiply by the non-residue (u + 1), then by 4. */
static inline void g2_mul_b_(fp2_t *out, const fp2_t *a)
{
    fp2_mul_nonresidue(out, a);
    fp2_dbl(out, out);
    fp2_dbl(out, out);
}

#define PT(name) g2_##name
#define AFF g2_aff_t
#define JAC g2_jac_t
#define XYZZ g2_xyzz_t
#define FE fp2_t
#define FE_ADD fp2_add
#define FE_SUB fp2_sub
#define FE_DBL fp2_dbl
#define FE_NEG fp2_neg
#define FE_MUL fp2_mul
#define FE_SQR fp2_sqr
#define FE_INV fp2_inv
#define FE_IS_ZERO fp2_is_zero
#define FE_EQ fp2_eq
#define FE_ONE FP2_ONE
#define FE_ZERO FP2_ZERO
#define FE_MUL_B g2_mul_b_
#define FE_BATCH_GRAIN EC_BATCH_GRAIN
#include "point_impl.h"

/* psi = (untwist o Frobenius o twist): psi(x, y) = (conj(x) cx, conj(y) cy) with
 * cx = 1 / (u+1)^((p-1)/3) = 0x1a0111ea...0000aaad u (c0 = 0) and
 * cy = 1 / (u+1)^((p-1)/2) = 0x135203e6...121bdea2 + 0x06af0e04...ede3cc09 u (Montgomery form,
 * computed with Python integers; test_g2.c checks psi(G) == u G). */
static const fp2_t G2_PSI_CX = {
    {{0}},
    {{0x890dc9e4867545c3ULL, 0x2af322533285a5d5ULL, 0x50880866309b7e2cULL, 0xa20d1b8c7e881024ULL,
      0x14e4f04fe2db9068ULL, 0x14e56d3f1564853aULL}}};
static const fp2_t G2_PSI_CY = {
    {{0x3e2f585da55c9ad1ULL, 0x4294213d86c18183ULL, 0x382844c88b623732ULL, 0x92ad2afd19103e18ULL,
      0x1d794e4fac7cf0b9ULL, 0x0bd592fc7d825ec8ULL}},
    {{0x7bcfa7a25aa30fdaULL, 0xdc17dec12a927e7cULL, 0x2f088dd86b4ebef1ULL, 0xd1ca2087da74d4a7ULL,
      0x2da2596696cebc1dULL, 0x0e2b7eedbbfd87d2ULL}}};

/* Scott, eprint 2021/1130 (the psi test Bowe proposed for BLS12-381 in eprint 2019/814,
 * sharpened): a point P of E'(Fp2) lies in G2 iff psi(P) == u P. One 64-bit scalar
 * multiplication instead of one by r. Expects P on the curve; infinity is in G2. */
bool g2_aff_in_subgroup(const g2_aff_t *p)
{
    if (g2_aff_is_inf(p)) return true;
    g2_jac_t t, s;
    g2_mul_sparse_(&t, NULL, p, EC_U_ABS);
    g2_jac_neg(&t, &t);                  /* u P, u < 0 */
    fp2_conj(&s.x, &p->x);
    fp2_mul(&s.x, &s.x, &G2_PSI_CX);
    fp2_conj(&s.y, &p->y);
    fp2_mul(&s.y, &s.y, &G2_PSI_CY);
    s.z = FP2_ONE;                       /* psi(P) */
    return g2_jac_eq(&s, &t);
}
