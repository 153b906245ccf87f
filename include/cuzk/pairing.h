/* pairing.h: the optimal ate pairing on BLS12-381 (Miller loop over the G2 twist, final
 * exponentiation) and the multi-pairing product check used by the Groth16 verifier.
 * See docs/pairing.md. Any thread. */
#ifndef CUZK_PAIRING_H
#define CUZK_PAIRING_H

#include <stdbool.h>
#include <stddef.h>

#include "cuzk/ec.h"
#include "cuzk/ff.h"

/* out = e(p, q). Either point at infinity gives 1. The value equals blst's and zkcrypto
 * bls12_381's pairing bit for bit (e.g. e(G1, G2) is their Gt generator). */
void pairing(fp12_t *out, const g1_aff_t *p, const g2_aff_t *q);
/* Product of Miller loops (no final exponentiation) over n pairs; pairs with a point at infinity
 * are skipped. Already conjugated for x < 0, so pairing_final_exp(out) is the pairing product. The
 * unexponentiated value is cuzk's own (other libraries scale lines differently). */
void pairing_miller_loop_n(fp12_t *out, const g1_aff_t *ps, const g2_aff_t *qs, size_t n);
/* k products sharing their G2 points: outs[j] = prod_i ML(ps[j][i], qs[i]), i < n, j < k <=
 * PAIRING_SHARED_MAX, in pairing_miller_loop_n's convention (the same values). The G2 half of
 * each step (about 40% of a pair's cost) is done once per qs[i] instead of k times; SnarkPack
 * pairs each commitment key with several vectors. Pairs with a point at infinity are skipped. */
#define PAIRING_SHARED_MAX 4
void pairing_miller_loop_shared(fp12_t *outs, size_t k, const g1_aff_t *const *ps,
                                const g2_aff_t *qs, size_t n);
/* out = f^(3 (p^12 - 1) / r): the blst/zkcrypto convention (hard part of Hayashida, Hayasaka,
 * Teruya 2020). Cubing is a bijection on GT (3 does not divide r), so bilinearity, order and
 * product checks are those of the plain exponent. f = 0 gives 0. */
void pairing_final_exp(fp12_t *out, const fp12_t *f);
/* true iff prod e(ps[i], qs[i]) == 1: one shared Miller loop, one final exponentiation. */
bool pairing_product_is_one(const g1_aff_t *ps, const g2_aff_t *qs, size_t n);

#endif
