/* pairing.h: the optimal ate pairing on BLS12-381 (Miller loop over the G2 twist, final
 * exponentiation) and the multi-pairing product check used by the Groth16 verifier.
 * See docs/pairing.md. Any thread. */
#ifndef CUZK_PAIRING_H
#define CUZK_PAIRING_H

#include <stdbool.h>
#include <stddef.h>

#include "cuzk/ec.h"
#include "cuzk/ff.h"

/* out = e(p, q). Either point at infinity gives 1. */
void pairing(fp12_t *out, const g1_aff_t *p, const g2_aff_t *q);
/* Product of Miller loops (no final exponentiation) over n pairs. */
void pairing_miller_loop_n(fp12_t *out, const g1_aff_t *ps, const g2_aff_t *qs, size_t n);
/* out = f^((p^12 - 1) / r). */
void pairing_final_exp(fp12_t *out, const fp12_t *f);
/* true iff prod e(ps[i], qs[i]) == 1: one shared Miller loop, one final exponentiation. */
bool pairing_product_is_one(const g1_aff_t *ps, const g2_aff_t *qs, size_t n);

#endif
