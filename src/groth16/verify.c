/* verify.c: the Groth16 verifier: a prepared key (e(alpha, beta) and the negated G2 points
 * computed once) and one multi-Miller loop + one final exponentiation per proof.
 * See docs/groth16.md. */
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/pairing.h"
#include "cuzk/util.h"

/* Invariant: ic has n_ic >= 1 points; alpha_beta = e(alpha_g1, beta_g2) after the final
 * exponentiation, so a proof costs 3 Miller loops instead of 4. */
struct g16_pvk {
    fp12_t alpha_beta;
    g2_aff_t neg_gamma_g2, neg_delta_g2;
    g1_aff_t *ic;
    uint32_t n_ic;
};

struct g16_pvk *g16_pvk_new(const struct g16_vk *vk, struct cuzk_error *err)
{
    if (!vk || !vk->ic || vk->n_ic == 0) {
        cuzk_fail(err, CUZK_E_INVALID_ARG, "verifying key: no ic points (expected >= 1: ic[0] belongs to ONE)");
        return NULL;
    }
    struct g16_pvk *p = cuzk_malloc(sizeof *p);
    if (p) p->ic = cuzk_malloc((size_t)vk->n_ic * sizeof(g1_aff_t));
    if (!p || !p->ic) {
        if (p) cuzk_free(p);
        cuzk_fail(err, CUZK_E_NOMEM, "verifying key: cannot allocate %u ic points", vk->n_ic);
        return NULL;
    }
    memcpy(p->ic, vk->ic, (size_t)vk->n_ic * sizeof(g1_aff_t));
    p->n_ic = vk->n_ic;
    pairing(&p->alpha_beta, &vk->alpha_g1, &vk->beta_g2);
    g2_aff_neg(&p->neg_gamma_g2, &vk->gamma_g2);
    g2_aff_neg(&p->neg_delta_g2, &vk->delta_g2);
    return p;
}

void g16_pvk_free(struct g16_pvk *pvk)
{
    if (!pvk) return;
    cuzk_free(pvk->ic);
    cuzk_free(pvk);
}

int g16_verify(const struct g16_pvk *pvk, const struct g16_proof *proof, const fr_t *inputs,
               size_t n_inputs, struct cuzk_error *err)
{
    if (!pvk || !proof || (n_inputs && !inputs))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "verify: NULL argument");
    if (n_inputs != (size_t)pvk->n_ic - 1)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "verify: wrong number of public inputs (expected %u, got %zu)",
                         pvk->n_ic - 1, n_inputs);
    if (g1_aff_is_inf(&proof->a)) return cuzk_fail(err, CUZK_E_IDENTITY, "verify: proof A is the identity");
    if (g2_aff_is_inf(&proof->b)) return cuzk_fail(err, CUZK_E_IDENTITY, "verify: proof B is the identity");
    if (g1_aff_is_inf(&proof->c)) return cuzk_fail(err, CUZK_E_IDENTITY, "verify: proof C is the identity");

    /* acc = ic[0] + sum x_i ic[i + 1] */
    g1_jac_t acc, t;
    g1_jac_from_aff(&acc, &pvk->ic[0]);
    if (n_inputs) {
        int rc = g1_msm(&t, pvk->ic + 1, inputs, n_inputs, NULL, err);
        if (rc) return cuzk_fail_prefix(err, rc, "verify: input accumulation");
        g1_jac_add(&acc, &acc, &t);
    }
    g1_aff_t ps[3];
    g2_aff_t qs[3];
    size_t n = 0;
    /* e(A, B) * e(C, -delta) * e(acc, -gamma) == e(alpha, beta) */
    ps[n] = proof->a; qs[n++] = proof->b;
    ps[n] = proof->c; qs[n++] = pvk->neg_delta_g2;
    if (!g1_jac_is_inf(&acc)) {   /* e(O, Q) = 1: drop the pair rather than feed O to the loop */
        g1_jac_to_aff(&ps[n], &acc);
        qs[n++] = pvk->neg_gamma_g2;
    }
    fp12_t f, e;
    pairing_miller_loop_n(&f, ps, qs, n);
    pairing_final_exp(&e, &f);
    if (!fp12_eq(&e, &pvk->alpha_beta))
        return cuzk_fail(err, CUZK_E_VERIFY_FAILED, "verify: the pairing check failed");
    return CUZK_OK;
}
