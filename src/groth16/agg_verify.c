/* agg_verify.c: the SnarkPack verifier (bellperson src/groth16/aggregate/verify.rs,
 * verify_aggregate_proof + verify_tipp_mipp + gipa_verify_tipp_mipp + verify_kzg_v/w). The
 * transcript is the prover's (facts in agg_prove.c). The pairing equations are batched as
 * upstream does: every check but the Groth16 one is raised to a random exponent, all Miller
 * loops are multiplied and one final exponentiation decides. When that product fails, each
 * check is evaluated on its own to name the one that does not hold (only on the refusal
 * path, so valid aggregates pay nothing for the precise message). */
#include <stdio.h>
#include <string.h>

#include "agg_internal.h"

#define MAX_PAIRS 3
struct chk {
    const char *name;
    size_t np;
    g1_aff_t p[MAX_PAIRS];
    g2_aff_t q[MAX_PAIRS];
    const fp12_t *t;        /* expected Gt value; NULL = 1 */
    bool random;            /* raised to a random exponent in the batch */
};

static void chk_set(struct chk *c, const char *name, const fp12_t *t, bool random)
{
    c->name = name;
    c->np = 0;
    c->t = t;
    c->random = random;
}
static void chk_pair(struct chk *c, const g1_aff_t *p, const g2_aff_t *q)
{
    c->p[c->np] = *p;
    c->q[c->np] = *q;
    c->np++;
}

static bool chk_alone(const struct chk *c)
{
    fp12_t f, g;
    pairing_miller_loop_n(&f, c->p, c->q, c->np);
    pairing_final_exp(&g, &f);
    return c->t ? fp12_eq(&g, c->t) : fp12_is_one(&g);
}

/* FE(prod over checks of ML(rho_k p, q)) == prod t_k^rho_k (rho = 1 for the non-random). */
static int batch_holds(bool *ok, const struct chk *cs, size_t n, uint64_t seed,
                       struct cuzk_error *err)
{
    g1_aff_t ps[16 * MAX_PAIRS];
    g2_aff_t qs[16 * MAX_PAIRS];
    size_t m = 0;
    fp12_t tacc = FP12_ONE;
    cuzk_rng rng;
    if (seed) cuzk_rng_seed(&rng, seed);
    for (size_t k = 0; k < n; k++) {
        fr_t rho = FR_ONE;
        if (cs[k].random) {
            int rc = g16_random_nonzero(&rho, seed ? &rng : NULL, err);
            if (rc) return rc;
        }
        for (size_t i = 0; i < cs[k].np; i++) {
            if (cs[k].random)
                agg_g1_mul(&ps[m], &cs[k].p[i], &rho);
            else
                ps[m] = cs[k].p[i];
            qs[m++] = cs[k].q[i];
        }
        if (cs[k].t) {
            fp12_t tt;
            if (cs[k].random)
                agg_gt_pow(&tt, cs[k].t, &rho);
            else
                tt = *cs[k].t;
            fp12_mul(&tacc, &tacc, &tt);
        }
    }
    fp12_t f, g;
    pairing_miller_loop_n(&f, ps, qs, m);
    pairing_final_exp(&g, &f);
    *ok = fp12_eq(&g, &tacc);
    return CUZK_OK;
}

/* The GIPA accumulation: T, U, Z of AB and C, folded with every round's challenges. */
struct tuz { fp12_t tab, uab, zab, tc, uc; g1_jac_t zc; };

struct pow_ctx { const struct agg_proof *p; const fr_t *ch, *chinv; fp12_t *out; };

/* item 10 i + k: the k-th Gt power of round i (left terms by c, right terms by c_inv) */
static void pow_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct pow_ctx *c = ctx;
    for (size_t it = begin; it < end; it++) {
        size_t i = it / 10, k = it % 10;
        const fp12_t *base;
        bool left;
        if (k < 4) {                /* tab_l.0, tab_l.1, tab_r.0, tab_r.1 */
            base = &c->p->comms_ab[i][k];
            left = k < 2;
        } else if (k < 8) {         /* tuc_l.0, tuc_l.1, tuc_r.0, tuc_r.1 */
            base = &c->p->comms_c[i][k - 4];
            left = k < 6;
        } else {                    /* zab_l, zab_r */
            base = &c->p->z_ab[i][k - 8];
            left = k == 8;
        }
        agg_gt_pow(&c->out[it], base, left ? &c->ch[i] : &c->chinv[i]);
    }
}

static int gipa_fold(struct tuz *acc, const struct agg_proof *p, const fr_t *ch,
                     const fr_t *chinv, struct pool *pool, struct cuzk_error *err)
{
    unsigned l = p->levels;
    fp12_t *pw = cuzk_malloc(10 * (size_t)l * sizeof *pw);
    if (!pw) return cuzk_fail(err, CUZK_E_NOMEM, "agg_verify: out of memory");
    struct pow_ctx c = {p, ch, chinv, pw};
    pool_parallel_for(pool, 10 * (size_t)l, 1, pow_range, &c);
    acc->tab = p->com_ab[0];
    acc->uab = p->com_ab[1];
    acc->tc = p->com_c[0];
    acc->uc = p->com_c[1];
    acc->zab = p->ip_ab;
    g1_jac_from_aff(&acc->zc, &p->agg_c);
    for (unsigned i = 0; i < l; i++) {
        const fp12_t *w = pw + 10 * (size_t)i;
        fp12_mul(&acc->tab, &acc->tab, &w[0]);
        fp12_mul(&acc->tab, &acc->tab, &w[2]);
        fp12_mul(&acc->uab, &acc->uab, &w[1]);
        fp12_mul(&acc->uab, &acc->uab, &w[3]);
        fp12_mul(&acc->tc, &acc->tc, &w[4]);
        fp12_mul(&acc->tc, &acc->tc, &w[6]);
        fp12_mul(&acc->uc, &acc->uc, &w[5]);
        fp12_mul(&acc->uc, &acc->uc, &w[7]);
        fp12_mul(&acc->zab, &acc->zab, &w[8]);
        fp12_mul(&acc->zab, &acc->zab, &w[9]);
        g1_jac_t j, t;
        g1_jac_from_aff(&j, &p->z_c[i][0]);
        g1_jac_mul_fr(&t, &j, &ch[i]);
        g1_jac_add(&acc->zc, &acc->zc, &t);
        g1_jac_from_aff(&j, &p->z_c[i][1]);
        g1_jac_mul_fr(&t, &j, &chinv[i]);
        g1_jac_add(&acc->zc, &acc->zc, &t);
    }
    cuzk_free(pw);
    return CUZK_OK;
}

/* sum_i s_i ic[1 + i] + r_sum ic[0], s_i = sum_j inputs[row(j)][i] r^j */
static int public_acc(g1_aff_t *out, const struct g16_vk *vk, const fr_t *inputs, size_t n_sets,
                      size_t n_pub, size_t n, const fr_t *r, const fr_t *r_sum,
                      struct pool *pool, struct cuzk_error *err)
{
    g1_jac_t acc, t;
    g1_jac_from_aff(&t, &vk->ic[0]);
    g1_jac_mul_fr(&acc, &t, r_sum);
    if (n_pub) {
        fr_t *s = cuzk_calloc(n_pub, sizeof *s);
        if (!s) return cuzk_fail(err, CUZK_E_NOMEM, "agg_verify: out of memory");
        fr_t rj = FR_ONE, x;
        for (size_t j = 0; j < n; j++) {
            const fr_t *row = inputs + (j < n_sets ? j : n_sets - 1) * n_pub;
            for (size_t i = 0; i < n_pub; i++) {
                fr_mul(&x, &row[i], &rj);
                fr_add(&s[i], &s[i], &x);
            }
            fr_mul(&rj, &rj, r);
        }
        int rc = g1_msm(&t, vk->ic + 1, s, n_pub, pool, err);
        cuzk_free(s);
        if (rc) return rc;
        g1_jac_add(&acc, &acc, &t);
    }
    g1_jac_to_aff(out, &acc);
    return CUZK_OK;
}

int agg_verify(const struct g16_vk *vk, const struct agg_verifier_srs *vs, const fr_t *inputs,
               size_t n_sets, size_t n_pub, const struct agg_proof *p, const uint8_t *include,
               size_t include_len, enum agg_version version, uint64_t rng_seed,
               struct pool *pool, struct cuzk_error *err)
{
    pool = agg_pool(pool);
    if (version != AGG_V1 && version != AGG_V2)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "agg_verify: unknown version %d", (int)version);
    uint32_t n = p->nproofs;
    if (n < 2 || n > ((uint32_t)1 << AGG_MAX_LEVELS) || (n & (n - 1)) ||
        p->levels > AGG_MAX_LEVELS || ((uint32_t)1 << p->levels) != n)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_verify: nproofs %u with %u rounds is not a valid aggregate", n,
                         p->levels);
    if (vs->n != n)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_verify: the aggregate holds %u proofs, the verifier SRS is "
                         "specialized for %zu",
                         n, vs->n);
    if (vk->n_ic != n_pub + 1)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_verify: %zu public inputs per proof, the verifying key takes %u",
                         n_pub, vk->n_ic ? vk->n_ic - 1 : 0);
    if (n_sets < 1 || n_sets > n || (n_pub && !inputs))
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_verify: %zu sets of public inputs for an aggregate of %u proofs",
                         n_sets, n);
    if (!include && include_len)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "agg_verify: include is NULL");
    unsigned l = p->levels;

    struct agg_tr t;
    fr_t hcom, r, c_inv, ch[AGG_MAX_LEVELS], chinv[AGG_MAX_LEVELS];
    agg_tr_new(&t, "hcom");
    agg_tr_gt(&t, &p->com_ab[0]);
    agg_tr_gt(&t, &p->com_ab[1]);
    agg_tr_gt(&t, &p->com_c[0]);
    agg_tr_gt(&t, &p->com_c[1]);
    agg_tr_challenge(&t, &hcom);
    agg_tr_new(&t, "random-r");
    agg_tr_fr(&t, &hcom);
    agg_tr_bytes(&t, include, include_len);
    agg_tr_challenge(&t, &r);

    agg_tr_new(&t, "gipa-0");
    agg_tr_fr(&t, &hcom);
    agg_tr_gt(&t, &p->ip_ab);
    agg_tr_g1(&t, &p->agg_c);
    agg_tr_fr(&t, &r);
    agg_tr_challenge(&t, &c_inv);
    for (unsigned i = 0; i < l; i++) {
        if (i > 0 || version == AGG_V2) {
            char label[24];
            snprintf(label, sizeof label, "gipa-%u", i);
            agg_tr_new(&t, label);
            agg_tr_fr(&t, &c_inv);
            agg_tr_gt(&t, &p->z_ab[i][0]);
            agg_tr_gt(&t, &p->z_ab[i][1]);
            agg_tr_g1(&t, &p->z_c[i][0]);
            agg_tr_g1(&t, &p->z_c[i][1]);
            for (int k = 0; k < 4; k++) agg_tr_gt(&t, &p->comms_ab[i][k]);
            for (int k = 0; k < 4; k++) agg_tr_gt(&t, &p->comms_c[i][k]);
            agg_tr_challenge(&t, &c_inv);
        }
        chinv[i] = c_inv;
        fr_inv(&ch[i], &c_inv);
    }
    fr_t extra;
    agg_tr_new(&t, "gipa-extra-link");
    agg_tr_fr(&t, &ch[l - 1]);
    agg_tr_g1(&t, &p->final_a);
    agg_tr_g2(&t, &p->final_b);
    agg_tr_g1(&t, &p->final_c);
    agg_tr_gt(&t, &p->z_ab[l - 1][0]);
    agg_tr_gt(&t, &p->z_ab[l - 1][1]);
    agg_tr_g1(&t, &p->z_c[l - 1][0]);
    agg_tr_g1(&t, &p->z_c[l - 1][1]);
    for (int k = 0; k < 4; k++) agg_tr_gt(&t, &p->comms_ab[l - 1][k]);
    for (int k = 0; k < 4; k++) agg_tr_gt(&t, &p->comms_c[l - 1][k]);
    agg_tr_challenge(&t, &extra);

    struct tuz acc;
    int rc = gipa_fold(&acc, p, ch, chinv, pool, err);
    if (rc) return rc;

    fr_t ch_rev[AGG_MAX_LEVELS], chinv_rev[AGG_MAX_LEVELS], z, final_r, r_inv;
    for (unsigned i = 0; i < l; i++) {
        ch_rev[i] = ch[l - 1 - i];
        chinv_rev[i] = chinv[l - 1 - i];
    }
    agg_poly_eval(&final_r, chinv_rev, l, &r, &FR_ONE);
    agg_tr_new(&t, "random-z");
    agg_tr_fr(&t, version == AGG_V1 ? &ch_rev[0] : &extra);
    agg_tr_g2(&t, &p->final_vkey[0]);
    agg_tr_g2(&t, &p->final_vkey[1]);
    agg_tr_g1(&t, &p->final_wkey[0]);
    agg_tr_g1(&t, &p->final_wkey[1]);
    if (version == AGG_V2) {
        agg_tr_g1(&t, &p->final_a);
        agg_tr_g2(&t, &p->final_b);
        agg_tr_g1(&t, &p->final_c);
    }
    agg_tr_challenge(&t, &z);
    fr_inv(&r_inv, &r);

    /* MIPP: Z_C folded must equal final_c^final_r (no pairing) */
    {
        g1_jac_t fc, want;
        g1_jac_from_aff(&fc, &p->final_c);
        g1_jac_mul_fr(&want, &fc, &final_r);
        if (!g1_jac_eq(&want, &acc.zc))
            return cuzk_fail(err, CUZK_E_VERIFY_FAILED,
                             "aggregate refused: MIPP: the folded Z_C is not final_c^r (C or "
                             "the public-input randomness does not match)");
    }

    struct chk cs[12];
    size_t nc = 0;
    g1_aff_t ng, g1t;
    g2_aff_t nh, g2t;
    g1_aff_neg(&ng, &vs->g);
    g2_aff_neg(&nh, &vs->h);
    /* KZG of the v key: e(-g, v_k - y h) e(g^{a|b} - z g, pi_k) = 1, y = f_v(z) */
    fr_t y, zn, fz;
    agg_poly_eval(&y, chinv_rev, l, &z, &FR_ONE);
    g2_aff_t yh;
    agg_g2_mul(&yh, &vs->h, &y);
    g2_aff_neg(&yh, &yh);
    g1_aff_t zg;
    agg_g1_mul(&zg, &vs->g, &z);
    g1_aff_neg(&zg, &zg);
    for (int k = 0; k < 2; k++) {
        struct chk *c = &cs[nc++];
        chk_set(c, k ? "KZG opening of the v key (h^b powers)" : "KZG opening of the v key (h^a powers)",
                NULL, true);
        g2_jac_t j;
        g2_jac_from_aff(&j, &p->final_vkey[k]);
        g2_jac_add_aff(&j, &j, &yh);
        g2_jac_to_aff(&g2t, &j);
        chk_pair(c, &ng, &g2t);
        g1_jac_t jj;
        g1_jac_from_aff(&jj, k ? &vs->g_beta : &vs->g_alpha);
        g1_jac_add_aff(&jj, &jj, &zg);
        g1_jac_to_aff(&g1t, &jj);
        chk_pair(c, &g1t, &p->vkey_opening[k]);
    }
    /* KZG of the w key: e(w_k - y g, -h) e(pi_k, h^{a|b} - z h) = 1, y = z^n f_w(z) */
    agg_poly_eval(&fz, ch_rev, l, &z, &r_inv);
    {
        uint64_t e = n;
        fr_pow(&zn, &z, &e, 1);
    }
    fr_mul(&y, &fz, &zn);
    g1_aff_t yg;
    agg_g1_mul(&yg, &vs->g, &y);
    g1_aff_neg(&yg, &yg);
    g2_aff_t zh;
    agg_g2_mul(&zh, &vs->h, &z);
    g2_aff_neg(&zh, &zh);
    for (int k = 0; k < 2; k++) {
        struct chk *c = &cs[nc++];
        chk_set(c, k ? "KZG opening of the w key (g^b powers)" : "KZG opening of the w key (g^a powers)",
                NULL, true);
        g1_jac_t j;
        g1_jac_from_aff(&j, &p->final_wkey[k]);
        g1_jac_add_aff(&j, &j, &yg);
        g1_jac_to_aff(&g1t, &j);
        chk_pair(c, &g1t, &nh);
        g2_jac_t jj;
        g2_jac_from_aff(&jj, k ? &vs->h_beta : &vs->h_alpha);
        g2_jac_add_aff(&jj, &jj, &zh);
        g2_jac_to_aff(&g2t, &jj);
        chk_pair(c, &p->wkey_opening[k], &g2t);
    }
    /* TIPP: Z = e(A, B), T = e(A, v1) e(w1, B), U = e(A, v2) e(w2, B) */
    chk_set(&cs[nc], "TIPP: e(final A, final B) is not the folded Z_AB", &acc.zab, true);
    chk_pair(&cs[nc++], &p->final_a, &p->final_b);
    chk_set(&cs[nc], "TIPP: the folded commitment T_AB does not open to the final A, B", &acc.tab,
            true);
    chk_pair(&cs[nc], &p->final_a, &p->final_vkey[0]);
    chk_pair(&cs[nc++], &p->final_wkey[0], &p->final_b);
    chk_set(&cs[nc], "TIPP: the folded commitment U_AB does not open to the final A, B", &acc.uab,
            true);
    chk_pair(&cs[nc], &p->final_a, &p->final_vkey[1]);
    chk_pair(&cs[nc++], &p->final_wkey[1], &p->final_b);
    /* MIPP commitments: T = e(C, v1), U = e(C, v2) */
    chk_set(&cs[nc], "MIPP: the folded commitment T_C does not open to the final C", &acc.tc, true);
    chk_pair(&cs[nc++], &p->final_c, &p->final_vkey[0]);
    chk_set(&cs[nc], "MIPP: the folded commitment U_C does not open to the final C", &acc.uc, true);
    chk_pair(&cs[nc++], &p->final_c, &p->final_vkey[1]);

    /* Groth16 over the aggregate: ip_ab = e(alpha r_sum, beta) e(S, gamma) e(agg_c, delta),
     * r_sum = (r^n - 1) / (r - 1), S = r_sum ic_0 + sum_i (sum_j a_ji r^j) ic_i */
    fr_t r_sum, den;
    {
        uint64_t e = n;
        fr_pow(&r_sum, &r, &e, 1);
    }
    fr_sub(&r_sum, &r_sum, &FR_ONE);
    fr_sub(&den, &r, &FR_ONE);
    fr_inv(&den, &den);
    fr_mul(&r_sum, &r_sum, &den);
    g1_aff_t alpha_r, s_acc;
    agg_g1_mul(&alpha_r, &vk->alpha_g1, &r_sum);
    if ((rc = public_acc(&s_acc, vk, inputs, n_sets, n_pub, n, &r, &r_sum, pool, err))) return rc;
    chk_set(&cs[nc], "Groth16 equation of the aggregate does not hold (a proof or a public input "
                     "does not match)",
            &p->ip_ab, false);
    chk_pair(&cs[nc], &alpha_r, &vk->beta_g2);
    chk_pair(&cs[nc], &s_acc, &vk->gamma_g2);
    chk_pair(&cs[nc++], &p->agg_c, &vk->delta_g2);

    bool ok;
    if ((rc = batch_holds(&ok, cs, nc, rng_seed, err))) return rc;
    if (ok) return CUZK_OK;
    for (size_t k = 0; k < nc; k++)
        if (!chk_alone(&cs[k]))
            return cuzk_fail(err, CUZK_E_VERIFY_FAILED, "aggregate refused: %s", cs[k].name);
    return cuzk_fail(err, CUZK_E_VERIFY_FAILED,
                     "aggregate refused: the batched pairing check failed");
}
