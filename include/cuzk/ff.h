/* ff.h: BLS12-381 base field Fp (381-bit), scalar field Fr (255-bit) and the tower
 * Fp2 = Fp[u]/(u^2+1), Fp6 = Fp2[v]/(v^3-(u+1)), Fp12 = Fp6[w]/(w^2-v).
 * All elements are little-endian Montgomery limbs (Fp: 6 x u64, R = 2^384; Fr: 4 x u64,
 * R = 2^256), always fully reduced. The bytes equal the GPU's 12 x u32 / 8 x u32 layout.
 * Not constant-time. All functions: any thread; outputs may alias inputs. See docs/ff.md. */
#ifndef CUZK_FF_H
#define CUZK_FF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"

typedef struct { uint64_t l[6]; } fp_t;
typedef struct { uint64_t l[4]; } fr_t;
typedef struct { fp_t c0, c1; } fp2_t;            /* c0 + c1*u */
typedef struct { fp2_t c0, c1, c2; } fp6_t;       /* c0 + c1*v + c2*v^2 */
typedef struct { fp6_t c0, c1; } fp12_t;          /* c0 + c1*w */

_Static_assert(sizeof(fp_t) == 48, "fp_t must be 48 bytes (12 x u32 on the GPU)");
_Static_assert(sizeof(fr_t) == 32, "fr_t must be 32 bytes (8 x u32 on the GPU)");
_Static_assert(sizeof(fp2_t) == 96, "fp2_t must be 96 bytes");

/* ---- constants (Montgomery form unless noted) ---- */
/* FP_ZERO_ELEM, not FP_ZERO: <math.h> owns FP_ZERO (fpclassify). */
extern const fp_t FP_ZERO_ELEM, FP_ONE;
extern const fp_t FP_MODULUS;      /* p, canonical limbs (not Montgomery) */
extern const fr_t FR_ZERO, FR_ONE;
extern const fr_t FR_MODULUS;      /* r, canonical limbs (not Montgomery) */

/* ---- Fp ---- */
void fp_add(fp_t *out, const fp_t *a, const fp_t *b);
void fp_sub(fp_t *out, const fp_t *a, const fp_t *b);
void fp_dbl(fp_t *out, const fp_t *a);
void fp_neg(fp_t *out, const fp_t *a);
void fp_mul(fp_t *out, const fp_t *a, const fp_t *b);
void fp_sqr(fp_t *out, const fp_t *a);
/* out = a^-1; returns false (and out = 0) when a == 0. */
bool fp_inv(fp_t *out, const fp_t *a);
/* out = a^e, e given as n little-endian u64 limbs (plain integer, not Montgomery). */
void fp_pow(fp_t *out, const fp_t *a, const uint64_t *e, size_t n);
/* Square root: returns false when a is a non-residue (out unspecified). p = 3 mod 4. */
bool fp_sqrt(fp_t *out, const fp_t *a);
/* Legendre symbol: 0 for a == 0, 1 for a square, -1 otherwise. */
int fp_legendre(const fp_t *a);
bool fp_is_zero(const fp_t *a);
bool fp_is_one(const fp_t *a);
bool fp_eq(const fp_t *a, const fp_t *b);
/* "Lexicographically largest" per zcash: canonical(a) > (p-1)/2. */
bool fp_is_odd_half(const fp_t *a);
/* Batch inversion (Montgomery's trick) of n elements in place; zeros stay zero.
 * scratch: n elements (caller-supplied). */
void fp_batch_inv(fp_t *a, size_t n, fp_t *scratch);
/* Conversions. Canonical = plain integer limbs < p. */
void fp_from_u64(fp_t *out, uint64_t v);
void fp_to_mont(fp_t *out, const uint64_t canon[6]);      /* canon must be < p */
void fp_from_mont(uint64_t canon[6], const fp_t *a);
/* 48 big-endian bytes. Returns CUZK_E_BAD_ENCODING if the value is >= p. */
int fp_from_bytes_be(fp_t *out, const uint8_t in[48]);
void fp_to_bytes_be(uint8_t out[48], const fp_t *a);

/* ---- Fr ---- */
void fr_add(fr_t *out, const fr_t *a, const fr_t *b);
void fr_sub(fr_t *out, const fr_t *a, const fr_t *b);
void fr_dbl(fr_t *out, const fr_t *a);
void fr_neg(fr_t *out, const fr_t *a);
void fr_mul(fr_t *out, const fr_t *a, const fr_t *b);
void fr_sqr(fr_t *out, const fr_t *a);
bool fr_inv(fr_t *out, const fr_t *a);
void fr_pow(fr_t *out, const fr_t *a, const uint64_t *e, size_t n);
bool fr_sqrt(fr_t *out, const fr_t *a);    /* Tonelli-Shanks (2-adicity 32) */
int fr_legendre(const fr_t *a);
bool fr_is_zero(const fr_t *a);
bool fr_is_one(const fr_t *a);
bool fr_eq(const fr_t *a, const fr_t *b);
void fr_batch_inv(fr_t *a, size_t n, fr_t *scratch);
void fr_from_u64(fr_t *out, uint64_t v);
void fr_to_mont(fr_t *out, const uint64_t canon[4]);      /* canon must be < r */
void fr_from_mont(uint64_t canon[4], const fr_t *a);
/* 32 bytes, little-endian (Filecoin / blstrs Fr repr) or big-endian.
 * Return CUZK_E_BAD_ENCODING if the value is >= r. */
int fr_from_bytes_le(fr_t *out, const uint8_t in[32]);
void fr_to_bytes_le(uint8_t out[32], const fr_t *a);
int fr_from_bytes_be(fr_t *out, const uint8_t in[32]);
void fr_to_bytes_be(uint8_t out[32], const fr_t *a);
/* Reduce 64 uniformly random bytes (little-endian 512-bit integer) mod r: unbiased sampling. */
void fr_from_wide_le(fr_t *out, const uint8_t in[64]);
/* Primitive 2^32-th root of unity 7^((r-1)/2^32) (Montgomery), and generator 7. */
extern const fr_t FR_ROOT_OF_UNITY_2_32, FR_GENERATOR;

/* ---- Fp2 ---- */
extern const fp2_t FP2_ZERO, FP2_ONE;
void fp2_add(fp2_t *out, const fp2_t *a, const fp2_t *b);
void fp2_sub(fp2_t *out, const fp2_t *a, const fp2_t *b);
void fp2_dbl(fp2_t *out, const fp2_t *a);
void fp2_neg(fp2_t *out, const fp2_t *a);
void fp2_conj(fp2_t *out, const fp2_t *a);
void fp2_mul(fp2_t *out, const fp2_t *a, const fp2_t *b);
void fp2_sqr(fp2_t *out, const fp2_t *a);
void fp2_mul_fp(fp2_t *out, const fp2_t *a, const fp_t *b);
void fp2_mul_nonresidue(fp2_t *out, const fp2_t *a);   /* a * (u + 1) */
bool fp2_inv(fp2_t *out, const fp2_t *a);
void fp2_pow(fp2_t *out, const fp2_t *a, const uint64_t *e, size_t n);
bool fp2_sqrt(fp2_t *out, const fp2_t *a);
int fp2_legendre(const fp2_t *a);
bool fp2_is_zero(const fp2_t *a);
bool fp2_is_one(const fp2_t *a);
bool fp2_eq(const fp2_t *a, const fp2_t *b);
void fp2_frobenius(fp2_t *out, const fp2_t *a);       /* a^p = conj(a) */
/* zcash sign of y in Fp2: lexicographically largest, using c1 unless c1 == 0, then c0. */
bool fp2_is_odd_half(const fp2_t *a);
void fp2_batch_inv(fp2_t *a, size_t n, fp2_t *scratch);

/* ---- Fp6 / Fp12 (for the pairing) ---- */
extern const fp6_t FP6_ZERO, FP6_ONE;
extern const fp12_t FP12_ONE;
void fp6_add(fp6_t *out, const fp6_t *a, const fp6_t *b);
void fp6_sub(fp6_t *out, const fp6_t *a, const fp6_t *b);
void fp6_neg(fp6_t *out, const fp6_t *a);
void fp6_mul(fp6_t *out, const fp6_t *a, const fp6_t *b);
void fp6_sqr(fp6_t *out, const fp6_t *a);
void fp6_mul_by_v(fp6_t *out, const fp6_t *a);        /* a * v */
bool fp6_inv(fp6_t *out, const fp6_t *a);
bool fp6_eq(const fp6_t *a, const fp6_t *b);
void fp6_frobenius(fp6_t *out, const fp6_t *a, int power);   /* a^(p^power), power 1..5 */

void fp12_mul(fp12_t *out, const fp12_t *a, const fp12_t *b);
void fp12_sqr(fp12_t *out, const fp12_t *a);
bool fp12_inv(fp12_t *out, const fp12_t *a);
void fp12_conj(fp12_t *out, const fp12_t *a);         /* a^(p^6) */
void fp12_frobenius(fp12_t *out, const fp12_t *a, int power); /* a^(p^power), power 1..11 */
void fp12_pow(fp12_t *out, const fp12_t *a, const uint64_t *e, size_t n);
bool fp12_eq(const fp12_t *a, const fp12_t *b);
bool fp12_is_one(const fp12_t *a);

/* ---- implementation choice ---- */
/* Which Fp/Fr multiplication runs: "x86-64 mulx/adx" (chosen at load time when the CPU has
 * BMI2 and ADX) or "portable C" (other CPUs, -O0 builds, or -DCUZK_PORTABLE_FF). Both give
 * bit-identical results. */
const char *ff_backend(void);
/* For tests and benchmarks: force the portable C code (on) or return to the fastest one the CPU
 * supports (off). Call only while no other thread is doing field arithmetic. */
void ff_force_portable(bool on);

#endif
