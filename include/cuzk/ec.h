/* ec.h: BLS12-381 G1 (y^2 = x^3 + 4 over Fp) and G2 (y^2 = x^3 + 4(u+1) over Fp2) in affine,
 * Jacobian and XYZZ coordinates; scalar multiplication, Pippenger MSM, subgroup checks and
 * zcash/bellperson serialization. Not constant-time. See docs/ec.md.
 *
 * Conventions (the GPU shares these bytes):
 *  - affine infinity is (0, 0) with no flag (blst convention); Jacobian/XYZZ infinity has Z = 0
 *    (ZZ = ZZZ = 0 for XYZZ);
 *  - scalars (fr_t) are in Montgomery form, as the witness and the prover hold them; the MSM
 *    converts them itself;
 *  - outputs may alias inputs unless stated; any thread. */
#ifndef CUZK_EC_H
#define CUZK_EC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"

struct pool;

typedef struct { fp_t x, y; } g1_aff_t;
typedef struct { fp_t x, y, z; } g1_jac_t;          /* (X/Z^2, Y/Z^3) */
typedef struct { fp_t x, y, zz, zzz; } g1_xyzz_t;   /* (X/ZZ, Y/ZZZ), ZZ^3 = ZZZ^2 */
typedef struct { fp2_t x, y; } g2_aff_t;
typedef struct { fp2_t x, y, z; } g2_jac_t;
typedef struct { fp2_t x, y, zz, zzz; } g2_xyzz_t;

_Static_assert(sizeof(g1_aff_t) == 96, "g1_aff_t is 96 bytes on CPU and GPU");
_Static_assert(sizeof(g2_aff_t) == 192, "g2_aff_t is 192 bytes on CPU and GPU");

/* Standard generators (zcash/IETF BLS12-381). */
extern const g1_aff_t G1_GENERATOR;
extern const g2_aff_t G2_GENERATOR;

/* ---- G1 ---- */
bool g1_aff_is_inf(const g1_aff_t *p);
bool g1_jac_is_inf(const g1_jac_t *p);
void g1_jac_set_inf(g1_jac_t *p);
void g1_jac_from_aff(g1_jac_t *out, const g1_aff_t *p);
void g1_jac_to_aff(g1_aff_t *out, const g1_jac_t *p);            /* inf -> (0,0) */
void g1_jac_dbl(g1_jac_t *out, const g1_jac_t *p);
void g1_jac_add(g1_jac_t *out, const g1_jac_t *p, const g1_jac_t *q);      /* complete */
void g1_jac_add_aff(g1_jac_t *out, const g1_jac_t *p, const g1_aff_t *q);  /* mixed, complete */
void g1_jac_neg(g1_jac_t *out, const g1_jac_t *p);
void g1_aff_neg(g1_aff_t *out, const g1_aff_t *p);
bool g1_jac_eq(const g1_jac_t *p, const g1_jac_t *q);             /* projective equality */
bool g1_aff_eq(const g1_aff_t *p, const g1_aff_t *q);
bool g1_aff_is_on_curve(const g1_aff_t *p);                       /* inf counts as on curve */
bool g1_jac_is_on_curve(const g1_jac_t *p);
bool g1_aff_in_subgroup(const g1_aff_t *p);                       /* fast endomorphism check */
void g1_xyzz_set_inf(g1_xyzz_t *p);
void g1_xyzz_add_aff(g1_xyzz_t *out, const g1_xyzz_t *p, const g1_aff_t *q);  /* complete */
void g1_xyzz_add(g1_xyzz_t *out, const g1_xyzz_t *p, const g1_xyzz_t *q);     /* complete */
void g1_xyzz_dbl(g1_xyzz_t *out, const g1_xyzz_t *p);
void g1_xyzz_to_jac(g1_jac_t *out, const g1_xyzz_t *p);
/* out = k * p, k a plain little-endian integer of n limbs (not Montgomery). */
void g1_jac_mul_u64s(g1_jac_t *out, const g1_jac_t *p, const uint64_t *k, size_t n);
/* out = s * p, s an Fr element (Montgomery form). */
void g1_jac_mul_fr(g1_jac_t *out, const g1_jac_t *p, const fr_t *s);
/* Batch Jacobian -> affine with one inversion per chunk of >= 512 points (Montgomery's trick);
 * pool may be NULL (then single-threaded). out must not overlap in; infinity -> (0, 0). */
void g1_batch_to_aff(g1_aff_t *out, const g1_jac_t *in, size_t n, struct pool *pool);

/* ---- G2 (same contracts) ---- */
bool g2_aff_is_inf(const g2_aff_t *p);
bool g2_jac_is_inf(const g2_jac_t *p);
void g2_jac_set_inf(g2_jac_t *p);
void g2_jac_from_aff(g2_jac_t *out, const g2_aff_t *p);
void g2_jac_to_aff(g2_aff_t *out, const g2_jac_t *p);
void g2_jac_dbl(g2_jac_t *out, const g2_jac_t *p);
void g2_jac_add(g2_jac_t *out, const g2_jac_t *p, const g2_jac_t *q);
void g2_jac_add_aff(g2_jac_t *out, const g2_jac_t *p, const g2_aff_t *q);
void g2_jac_neg(g2_jac_t *out, const g2_jac_t *p);
void g2_aff_neg(g2_aff_t *out, const g2_aff_t *p);
bool g2_jac_eq(const g2_jac_t *p, const g2_jac_t *q);
bool g2_aff_eq(const g2_aff_t *p, const g2_aff_t *q);
bool g2_aff_is_on_curve(const g2_aff_t *p);
bool g2_jac_is_on_curve(const g2_jac_t *p);
bool g2_aff_in_subgroup(const g2_aff_t *p);                       /* psi endomorphism check */
void g2_xyzz_set_inf(g2_xyzz_t *p);
void g2_xyzz_add_aff(g2_xyzz_t *out, const g2_xyzz_t *p, const g2_aff_t *q);
void g2_xyzz_add(g2_xyzz_t *out, const g2_xyzz_t *p, const g2_xyzz_t *q);
void g2_xyzz_dbl(g2_xyzz_t *out, const g2_xyzz_t *p);
void g2_xyzz_to_jac(g2_jac_t *out, const g2_xyzz_t *p);
void g2_jac_mul_u64s(g2_jac_t *out, const g2_jac_t *p, const uint64_t *k, size_t n);
void g2_jac_mul_fr(g2_jac_t *out, const g2_jac_t *p, const fr_t *s);
void g2_batch_to_aff(g2_aff_t *out, const g2_jac_t *in, size_t n, struct pool *pool);

/* ---- multi-scalar multiplication ----
 * out = sum scalars[i] * bases[i]; Pippenger with signed (Booth) digits, window chosen by n,
 * parallel over the pool (NULL = single thread). Bases may contain infinity; scalars are
 * Montgomery-form Fr (any value < r). Returns CUZK_E_NOMEM if scratch cannot be allocated. */
int g1_msm(g1_jac_t *out, const g1_aff_t *bases, const fr_t *scalars, size_t n,
           struct pool *pool, struct cuzk_error *err);
int g2_msm(g2_jac_t *out, const g2_aff_t *bases, const fr_t *scalars, size_t n,
           struct pool *pool, struct cuzk_error *err);
/* Sum of the bases whose bit is set in bitmap (bit i of word i/64), e.g. the "scalar is 1"
 * half of the prover's 0/1 split. */
void g1_sum_bitmap(g1_jac_t *out, const g1_aff_t *bases, const uint64_t *bitmap, size_t n,
                   struct pool *pool);
void g2_sum_bitmap(g2_jac_t *out, const g2_aff_t *bases, const uint64_t *bitmap, size_t n,
                   struct pool *pool);

/* ---- serialization (zcash / bellperson / blst format) ----
 * G1: 48 bytes compressed, 96 uncompressed; G2: 96 / 192, each Fp2 as c1 || c0. Byte 0 flags:
 * 0x80 compressed, 0x40 infinity, 0x20 y is the larger root (compressed only).
 * Decoding errors (each with a precise message in err): CUZK_E_BAD_ENCODING (wrong flags,
 * coordinate >= p, non-zero bytes in an infinity encoding), CUZK_E_NOT_ON_CURVE (or x has no
 * square root), CUZK_E_NOT_IN_SUBGROUP (only when check_subgroup). */
void g1_aff_to_compressed(uint8_t out[48], const g1_aff_t *p);
void g1_aff_to_uncompressed(uint8_t out[96], const g1_aff_t *p);
void g2_aff_to_compressed(uint8_t out[96], const g2_aff_t *p);
void g2_aff_to_uncompressed(uint8_t out[192], const g2_aff_t *p);
int g1_aff_from_compressed(g1_aff_t *out, const uint8_t in[48], bool check_subgroup,
                           struct cuzk_error *err);
int g1_aff_from_uncompressed(g1_aff_t *out, const uint8_t in[96], bool check_subgroup,
                             struct cuzk_error *err);
int g2_aff_from_compressed(g2_aff_t *out, const uint8_t in[96], bool check_subgroup,
                           struct cuzk_error *err);
int g2_aff_from_uncompressed(g2_aff_t *out, const uint8_t in[192], bool check_subgroup,
                             struct cuzk_error *err);

#endif
