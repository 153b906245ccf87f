/* agg_internal.h: what the SnarkPack modules (agg_*.c) share: the Fiat-Shamir transcript,
 * parallel group helpers, inner pairing products and the challenge polynomials. */
#ifndef CUZK_AGG_INTERNAL_H
#define CUZK_AGG_INTERNAL_H

#include "cuzk/aggregate.h"
#include "cuzk/sha256.h"
#include "cuzk/pairing.h"
#include "cuzk/util.h"

/* bellperson's Transcript: SHA-256 over "snarkpack-v1" || tag || bincode(values)... */
struct agg_tr { struct cuzk_sha256 h; };
void agg_tr_new(struct agg_tr *t, const char *tag);
void agg_tr_fr(struct agg_tr *t, const fr_t *x);          /* 32 bytes, canonical little-endian */
void agg_tr_gt(struct agg_tr *t, const fp12_t *f);        /* 12 x 48 bytes, canonical LE */
void agg_tr_g1(struct agg_tr *t, const g1_aff_t *p);      /* 48 bytes compressed */
void agg_tr_g2(struct agg_tr *t, const g2_aff_t *p);      /* 96 bytes compressed */
void agg_tr_bytes(struct agg_tr *t, const uint8_t *b, size_t n);   /* u64 LE length || bytes */
/* into_challenge: absorbs counter 1, 2, ... (u64 BE) until the masked digest is a field
 * element other than 0 and 1. Consumes t. */
void agg_tr_challenge(struct agg_tr *t, fr_t *out);

static inline struct pool *agg_pool(struct pool *p) { return p ? p : pool_default(); }

/* out[i] = s^i, i < n. */
void agg_powers(fr_t *out, size_t n, const fr_t *s);
/* out = e(a_0, b_0) ... e(a_{n-1}, b_{n-1}), final-exponentiated (Gt). */
int agg_ipp(fp12_t *out, const g1_aff_t *a, const g2_aff_t *b, size_t n, struct pool *pool,
            struct cuzk_error *err);
/* out = prod e(a1_i, b1_i) e(a2_i, b2_i) over i < n (the "pair" commitment's halves). */
int agg_ipp2(fp12_t *out, const g1_aff_t *a1, const g2_aff_t *b1, const g1_aff_t *a2,
             const g2_aff_t *b2, size_t n, struct pool *pool, struct cuzk_error *err);
/* Miller values (not exponentiated) of k products that share their G2 points:
 * outs[j] = prod_i ML(ps[j][i], qs[i]), k <= PAIRING_SHARED_MAX (pairing_miller_loop_shared). */
int agg_ml_shared(fp12_t *outs, size_t k, const g1_aff_t *const *ps, const g2_aff_t *qs,
                  size_t n, struct pool *pool, struct cuzk_error *err);
/* out[i] = s[i] in[i] (s NULL: one scalar *s1 for all). out may alias in. */
int agg_g1_scale(g1_aff_t *out, const g1_aff_t *in, const fr_t *s, const fr_t *s1, size_t n,
                 struct pool *pool, struct cuzk_error *err);
int agg_g2_scale(g2_aff_t *out, const g2_aff_t *in, const fr_t *s, const fr_t *s1, size_t n,
                 struct pool *pool, struct cuzk_error *err);
/* left[i] = left[i] + x right[i] (GIPA's "compress"). */
int agg_g1_fold(g1_aff_t *left, const g1_aff_t *right, const fr_t *x, size_t n,
                struct pool *pool, struct cuzk_error *err);
int agg_g2_fold(g2_aff_t *left, const g2_aff_t *right, const fr_t *x, size_t n,
                struct pool *pool, struct cuzk_error *err);
/* Gt exponent: out = a^e (e Montgomery Fr). */
void agg_gt_pow(fp12_t *out, const fp12_t *a, const fr_t *e);
/* Coefficients (2^l of them) of prod_j (1 + ch[j] (r X)^(2^j)), ch in reversed order
 * (ch[0] = last GIPA challenge); bellperson's polynomial_coefficients_from_transcript. */
void agg_poly_coeffs(fr_t *out, const fr_t *ch, size_t l, const fr_t *r_shift);
/* The same product evaluated at z (polynomial_evaluation_product_form_from_transcript). */
void agg_poly_eval(fr_t *out, const fr_t *ch, size_t l, const fr_t *z, const fr_t *r_shift);

/* out = s p for one point (affine in and out; the verifier's few single multiplications). */
void agg_g1_mul(g1_aff_t *out, const g1_aff_t *p, const fr_t *s);
void agg_g2_mul(g2_aff_t *out, const g2_aff_t *p, const fr_t *s);

#endif
