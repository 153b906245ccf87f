/* agg_prove.c: the SnarkPack prover (bellperson src/groth16/aggregate/prove.rs,
 * aggregate_proofs + prove_tipp_mipp + gipa_tipp_mipp + the KZG openings).
 *
 * Format facts this module and its siblings rely on (read from bellperson 0.27 aggregate/,
 * blstrs serde_impl.rs / gt.rs and rust-fil-proofs filecoin-proofs/src/api/seal.rs; written
 * down here because a wrong one silently breaks compatibility):
 *  - Transcript: SHA-256 over "snarkpack-v1" || label || bincode(value) for each write, in
 *    order. bincode (fixint, little-endian) of blstrs types: Scalar / Fp = the canonical
 *    little-endian bytes (32 / 48); G1 / G2 (affine or projective) = the 48 / 96-byte
 *    compressed encoding, no length; Gt = its Fp12 as 12 Fp in field order (c0.c0.c0,
 *    c0.c0.c1, c0.c1.c0, ..., c1.c2.c1), 576 bytes, NOT the 288-byte compression; a (Gt, Gt)
 *    pair = the two in order; &[u8] = u64 LE length then the bytes.
 *  - Challenge: absorb a counter k = 1, 2, ... as 8 bytes big-endian, digest the running hash
 *    (the absorbed counters stay), clear the top bit of byte 31 and read little-endian; retry
 *    if >= r, == 1 or == 0.
 *  - Labels and contents: "hcom" (com_ab, com_c) -> hcom; "random-r" (hcom, include as bytes)
 *    -> r; "gipa-0" (hcom, ip_ab, agg_c, r) -> first c_inv; per round i the challenge is c_inv
 *    from "gipa-i" (previous c_inv, zab_l, zab_r, zc_l, zc_r, tab_l.0, tab_l.1, tab_r.0,
 *    tab_r.1, tuc_l.0, tuc_l.1, tuc_r.0, tuc_r.1) with c = 1/c_inv; round 0 keeps the first
 *    c_inv in V1 and re-derives it with label "gipa-0" in V2; "gipa-extra-link" (last c,
 *    final A, B, C, last zab_l, zab_r, zc_l, zc_r, tab_l.0 .. tuc_r.1) -> extra; "random-z":
 *    V1 (last c, final vkey.0, vkey.1, wkey.0, wkey.1), V2 (extra, the four keys, final A, B,
 *    C) -> z.
 *  - Folding: A' = A_l + c A_r, B' = B_l + c_inv B_r, C' = C_l + c C_r, r' = r_l + c_inv r_r,
 *    v' = v_l + c_inv v_r, w' = w_l + c w_r; B is B_i^(r^i) and w is w_i^(r^-i) from the start.
 *  - tab_l = pair(v_l, w_r, A_r, B_l), tab_r = pair(v_r, w_l, A_l, B_r), zab_l = <A_r, B_l>,
 *    zab_r = <A_l, B_r>, zc_l = <C_r, r_l>, zc_r = <C_l, r_r>, tuc_l = single(v_l, C_r),
 *    tuc_r = single(v_r, C_l); pair(v, w, A, B) = (<A,v1><w1,B>, <A,v2><w2,B>),
 *    single(v, C) = (<C,v1>, <C,v2>), <,> a final-exponentiated pairing product.
 *  - KZG: f_v(X) = prod_j (1 + x_{l-j}^-1 X^(2^j)) opened over h^{a^i}, h^{b^i} (n powers);
 *    f_w(X) = X^n prod_j (1 + x_{l-j} (X/r)^(2^j)) over g^{a^i}, g^{b^i} (2n powers); the
 *    opening is the quotient (f(X) - f(z)) / (X - z) committed with those powers.
 *  - Filecoin: proofs padded to the next power of two (2 for one proof) by repeating the last;
 *    include = SHA-256(seed_i || comm_r_i ...) or SHA-256(comm_r_i ...) for NI-PoRep, which
 *    aggregates with V2; public inputs padded the same way. The byte layout of the proof is
 *    in agg_proof.c. */
#include <stdio.h>
#include <string.h>

#include "agg_internal.h"

size_t agg_target_len(size_t n)
{
    if (n == 0 || n > ((size_t)1 << AGG_MAX_LEVELS)) return 0;
    if (n == 1) return 2;
    size_t t = 1;
    while (t < n) t <<= 1;
    return t;
}

/* Every vector of the GIPA loop, halved in place each round. */
struct gipa {
    size_t n;
    g1_aff_t *a, *c, *w1, *w2;
    g2_aff_t *b, *v1, *v2;
    fr_t *r;
};

static void gipa_free(struct gipa *g)
{
    cuzk_free(g->a);
    cuzk_free(g->c);
    cuzk_free(g->w1);
    cuzk_free(g->w2);
    cuzk_free(g->b);
    cuzk_free(g->v1);
    cuzk_free(g->v2);
    cuzk_free(g->r);
}

static void tr_round(struct agg_tr *t, const char *label, const fr_t *c_inv, const fp12_t zab[2],
                     const g1_aff_t zc[2], const fp12_t tab[4], const fp12_t tuc[4])
{
    agg_tr_new(t, label);
    agg_tr_fr(t, c_inv);
    agg_tr_gt(t, &zab[0]);
    agg_tr_gt(t, &zab[1]);
    agg_tr_g1(t, &zc[0]);
    agg_tr_g1(t, &zc[1]);
    for (int k = 0; k < 4; k++) agg_tr_gt(t, &tab[k]);
    for (int k = 0; k < 4; k++) agg_tr_gt(t, &tuc[k]);
}

static int msm_g1(g1_aff_t *out, const g1_aff_t *p, const fr_t *s, size_t n, struct pool *pool,
                  struct cuzk_error *err)
{
    g1_jac_t j;
    int rc = g1_msm(&j, p, s, n, pool, err);
    if (!rc) g1_jac_to_aff(out, &j);
    return rc;
}

static int msm_g2(g2_aff_t *out, const g2_aff_t *p, const fr_t *s, size_t n, struct pool *pool,
                  struct cuzk_error *err)
{
    g2_jac_t j;
    int rc = g2_msm(&j, p, s, n, pool, err);
    if (!rc) g2_jac_to_aff(out, &j);
    return rc;
}

/* One GIPA round on g (length m -> m/2): the cross terms into out's level, then the fold. */
static int gipa_round(struct agg_proof *out, struct gipa *g, unsigned i, fr_t *c, fr_t *c_inv,
                      enum agg_version version, struct pool *pool, struct cuzk_error *err)
{
    size_t h = g->n / 2;
    fp12_t *tab = out->comms_ab[i], *tuc = out->comms_c[i], *zab = out->z_ab[i];
    g1_aff_t *zc = out->z_c[i];
    int rc;
    /* TIPP: tab_l = pair(v_l, w_r, A_r, B_l), tab_r = pair(v_r, w_l, A_l, B_r),
     * zab_l = <A_r, B_l>, zab_r = <A_l, B_r>; MIPP: tuc_l = single(v_l, C_r),
     * tuc_r = single(v_r, C_l). Side s = 0 (left terms) takes the G2 halves at offset 0 and the
     * G1 halves at h; side 1 the opposite. The Miller loops are grouped by G2 point (v1, v2,
     * B), each evaluated at the G1 vectors paired with it. */
    for (int side = 0; side < 2; side++) {
        size_t o2 = side ? h : 0, o1 = side ? 0 : h;
        const g1_aff_t *av[2] = {g->a + o1, g->c + o1};
        const g1_aff_t *bv[3] = {g->w1 + o1, g->w2 + o1, g->a + o1};
        fp12_t m1[2], m2[2], mb[3], t;
        if ((rc = agg_ml_shared(m1, 2, av, g->v1 + o2, h, pool, err)) ||
            (rc = agg_ml_shared(m2, 2, av, g->v2 + o2, h, pool, err)) ||
            (rc = agg_ml_shared(mb, 3, bv, g->b + o2, h, pool, err)))
            return rc;
        fp12_mul(&t, &m1[0], &mb[0]);
        pairing_final_exp(&tab[2 * side], &t);          /* <A, v1><w1, B> */
        fp12_mul(&t, &m2[0], &mb[1]);
        pairing_final_exp(&tab[2 * side + 1], &t);      /* <A, v2><w2, B> */
        pairing_final_exp(&zab[side], &mb[2]);          /* <A, B> */
        pairing_final_exp(&tuc[2 * side], &m1[1]);      /* <C, v1> */
        pairing_final_exp(&tuc[2 * side + 1], &m2[1]);  /* <C, v2> */
    }
    /* MIPP: zc_l = <C_r, r_l>, zc_r = <C_l, r_r> */
    if ((rc = msm_g1(&zc[0], g->c + h, g->r, h, pool, err)) ||
        (rc = msm_g1(&zc[1], g->c, g->r + h, h, pool, err)))
        return rc;
    if (i > 0 || version == AGG_V2) {
        char label[24];
        snprintf(label, sizeof label, "gipa-%u", i);
        struct agg_tr t;
        tr_round(&t, label, c_inv, zab, zc, tab, tuc);
        agg_tr_challenge(&t, c_inv);
    }
    fr_inv(c, c_inv);
    if ((rc = agg_g1_fold(g->a, g->a + h, c, h, pool, err)) ||
        (rc = agg_g2_fold(g->b, g->b + h, c_inv, h, pool, err)) ||
        (rc = agg_g1_fold(g->c, g->c + h, c, h, pool, err)) ||
        (rc = agg_g2_fold(g->v1, g->v1 + h, c_inv, h, pool, err)) ||
        (rc = agg_g2_fold(g->v2, g->v2 + h, c_inv, h, pool, err)) ||
        (rc = agg_g1_fold(g->w1, g->w1 + h, c, h, pool, err)) ||
        (rc = agg_g1_fold(g->w2, g->w2 + h, c, h, pool, err)))
        return rc;
    for (size_t k = 0; k < h; k++) {
        fr_t t;
        fr_mul(&t, &g->r[h + k], c_inv);
        fr_add(&g->r[k], &g->r[k], &t);
    }
    g->n = h;
    return CUZK_OK;
}

/* q = (p - y) / (X - z) for p of len coefficients (len >= 2): q has len - 1 coefficients,
 * written into q[0 .. len-2]; q[len-1] = 0 (the commitment uses len powers). */
static void kzg_quotient(fr_t *q, const fr_t *p, size_t len, const fr_t *z)
{
    q[len - 1] = FR_ZERO;
    q[len - 2] = p[len - 1];
    for (size_t k = len - 2; k >= 1; k--) {
        fr_t t;
        fr_mul(&t, z, &q[k]);
        fr_add(&q[k - 1], &p[k], &t);
    }
}

static int kzg_openings(struct agg_proof *out, const struct agg_prover_srs *pk,
                        const fr_t *ch_rev, const fr_t *chinv_rev, unsigned l,
                        const fr_t *r_inv, const fr_t *z, struct pool *pool,
                        struct cuzk_error *err)
{
    size_t n = pk->n;
    fr_t *f = cuzk_calloc(2 * n, sizeof *f), *q = cuzk_calloc(2 * n, sizeof *q);
    if (!f || !q) {
        cuzk_free(f);
        cuzk_free(q);
        return cuzk_fail(err, CUZK_E_NOMEM, "agg_prove: out of memory (KZG openings)");
    }
    /* v: f_v over n powers of h^a, h^b. The quotient does not depend on f(z) (it only
     * cancels the remainder), so f(z) is left to the verifier. */
    agg_poly_coeffs(f, chinv_rev, l, &FR_ONE);
    kzg_quotient(q, f, n, z);
    int rc;
    if ((rc = msm_g2(&out->vkey_opening[0], pk->h_alpha, q, n, pool, err)) ||
        (rc = msm_g2(&out->vkey_opening[1], pk->h_beta, q, n, pool, err)))
        goto out;
    /* w: X^n f(X/r) over 2n powers of g^a, g^b */
    memset(f, 0, 2 * n * sizeof *f);
    agg_poly_coeffs(f + n, ch_rev, l, r_inv);
    kzg_quotient(q, f, 2 * n, z);
    if ((rc = msm_g1(&out->wkey_opening[0], pk->g_alpha, q, 2 * n, pool, err)) ||
        (rc = msm_g1(&out->wkey_opening[1], pk->g_beta, q, 2 * n, pool, err)))
        goto out;
out:
    cuzk_free(f);
    cuzk_free(q);
    return rc;
}

int agg_prove(struct agg_proof *out, const struct agg_prover_srs *pk,
              const struct g16_proof *proofs, size_t n_in, const uint8_t *include,
              size_t include_len, enum agg_version version, struct pool *pool,
              struct cuzk_error *err)
{
    pool = agg_pool(pool);
    memset(out, 0, sizeof *out);
    if (version != AGG_V1 && version != AGG_V2)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "agg_prove: unknown version %d", (int)version);
    size_t n = agg_target_len(n_in);
    if (!n)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "agg_prove: %zu proofs is outside [1, 2^%d]",
                         n_in, AGG_MAX_LEVELS);
    if (pk->n != n)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_prove: %zu proofs pad to %zu, the prover SRS is specialized for %zu",
                         n_in, n, pk->n);
    if (!include && include_len)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "agg_prove: include is NULL");
    for (size_t i = 0; i < n_in; i++)
        if (g1_aff_is_inf(&proofs[i].a) || g2_aff_is_inf(&proofs[i].b) ||
            g1_aff_is_inf(&proofs[i].c))
            return cuzk_fail(err, CUZK_E_IDENTITY, "agg_prove: proof[%zu] has an identity point",
                             i);
    unsigned l = 0;
    while (((size_t)1 << l) < n) l++;

    struct gipa g = {n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    g.a = cuzk_malloc(n * sizeof *g.a);
    g.c = cuzk_malloc(n * sizeof *g.c);
    g.w1 = cuzk_malloc(n * sizeof *g.w1);
    g.w2 = cuzk_malloc(n * sizeof *g.w2);
    g.b = cuzk_malloc(n * sizeof *g.b);
    g.v1 = cuzk_malloc(n * sizeof *g.v1);
    g.v2 = cuzk_malloc(n * sizeof *g.v2);
    g.r = cuzk_malloc(n * sizeof *g.r);
    fr_t *rinv = cuzk_malloc(2 * n * sizeof *rinv);
    int rc = CUZK_OK;
    if (!g.a || !g.c || !g.w1 || !g.w2 || !g.b || !g.v1 || !g.v2 || !g.r || !rinv) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "agg_prove: out of memory for %zu proofs", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const struct g16_proof *p = &proofs[i < n_in ? i : n_in - 1];   /* pad with the last */
        g.a[i] = p->a;
        g.b[i] = p->b;
        g.c[i] = p->c;
    }
    memcpy(g.v1, pk->h_alpha, n * sizeof *g.v1);
    memcpy(g.v2, pk->h_beta, n * sizeof *g.v2);

    /* commitments: com_ab = pair(v, w, A, B), com_c = single(v, C); Miller loops grouped by
     * G2 point as in gipa_round */
    {
        const g1_aff_t *av[2] = {g.a, g.c};
        const g1_aff_t *wv[2] = {pk->g_alpha + n, pk->g_beta + n};
        fp12_t m1[2], m2[2], mb[2], t;
        if ((rc = agg_ml_shared(m1, 2, av, g.v1, n, pool, err)) ||
            (rc = agg_ml_shared(m2, 2, av, g.v2, n, pool, err)) ||
            (rc = agg_ml_shared(mb, 2, wv, g.b, n, pool, err)))
            goto out;
        fp12_mul(&t, &m1[0], &mb[0]);
        pairing_final_exp(&out->com_ab[0], &t);
        fp12_mul(&t, &m2[0], &mb[1]);
        pairing_final_exp(&out->com_ab[1], &t);
        pairing_final_exp(&out->com_c[0], &m1[1]);
        pairing_final_exp(&out->com_c[1], &m2[1]);
    }
    struct agg_tr t;
    fr_t hcom, r, c, c_inv;
    agg_tr_new(&t, "hcom");
    agg_tr_gt(&t, &out->com_ab[0]);
    agg_tr_gt(&t, &out->com_ab[1]);
    agg_tr_gt(&t, &out->com_c[0]);
    agg_tr_gt(&t, &out->com_c[1]);
    agg_tr_challenge(&t, &hcom);
    agg_tr_new(&t, "random-r");
    agg_tr_fr(&t, &hcom);
    agg_tr_bytes(&t, include, include_len);
    agg_tr_challenge(&t, &r);

    /* r^i, r^-i; B^(r^i), w^(r^-i); ip_ab = <A, B^r>, agg_c = sum r^i C_i */
    agg_powers(g.r, n, &r);
    memcpy(rinv, g.r, n * sizeof *rinv);
    fr_batch_inv(rinv, n, rinv + n);
    if ((rc = agg_g2_scale(g.b, g.b, g.r, NULL, n, pool, err)) ||
        (rc = agg_g1_scale(g.w1, pk->g_alpha + n, rinv, NULL, n, pool, err)) ||
        (rc = agg_g1_scale(g.w2, pk->g_beta + n, rinv, NULL, n, pool, err)) ||
        (rc = agg_ipp(&out->ip_ab, g.a, g.b, n, pool, err)) ||
        (rc = msm_g1(&out->agg_c, g.c, g.r, n, pool, err)))
        goto out;

    agg_tr_new(&t, "gipa-0");
    agg_tr_fr(&t, &hcom);
    agg_tr_gt(&t, &out->ip_ab);
    agg_tr_g1(&t, &out->agg_c);
    agg_tr_fr(&t, &r);
    agg_tr_challenge(&t, &c_inv);

    fr_t ch[AGG_MAX_LEVELS], chinv[AGG_MAX_LEVELS];
    for (unsigned i = 0; i < l; i++) {
        if ((rc = gipa_round(out, &g, i, &c, &c_inv, version, pool, err))) goto out;
        ch[i] = c;
        chinv[i] = c_inv;
    }
    out->nproofs = (uint32_t)n;
    out->levels = l;
    out->final_a = g.a[0];
    out->final_b = g.b[0];
    out->final_c = g.c[0];
    out->final_vkey[0] = g.v1[0];
    out->final_vkey[1] = g.v2[0];
    out->final_wkey[0] = g.w1[0];
    out->final_wkey[1] = g.w2[0];

    fr_t extra;
    agg_tr_new(&t, "gipa-extra-link");
    agg_tr_fr(&t, &ch[l - 1]);
    agg_tr_g1(&t, &out->final_a);
    agg_tr_g2(&t, &out->final_b);
    agg_tr_g1(&t, &out->final_c);
    agg_tr_gt(&t, &out->z_ab[l - 1][0]);
    agg_tr_gt(&t, &out->z_ab[l - 1][1]);
    agg_tr_g1(&t, &out->z_c[l - 1][0]);
    agg_tr_g1(&t, &out->z_c[l - 1][1]);
    for (int k = 0; k < 4; k++) agg_tr_gt(&t, &out->comms_ab[l - 1][k]);
    for (int k = 0; k < 4; k++) agg_tr_gt(&t, &out->comms_c[l - 1][k]);
    agg_tr_challenge(&t, &extra);

    fr_t ch_rev[AGG_MAX_LEVELS], chinv_rev[AGG_MAX_LEVELS], z, r_inv;
    for (unsigned i = 0; i < l; i++) {
        ch_rev[i] = ch[l - 1 - i];
        chinv_rev[i] = chinv[l - 1 - i];
    }
    agg_tr_new(&t, "random-z");
    agg_tr_fr(&t, version == AGG_V1 ? &ch_rev[0] : &extra);
    agg_tr_g2(&t, &out->final_vkey[0]);
    agg_tr_g2(&t, &out->final_vkey[1]);
    agg_tr_g1(&t, &out->final_wkey[0]);
    agg_tr_g1(&t, &out->final_wkey[1]);
    if (version == AGG_V2) {
        agg_tr_g1(&t, &out->final_a);
        agg_tr_g2(&t, &out->final_b);
        agg_tr_g1(&t, &out->final_c);
    }
    agg_tr_challenge(&t, &z);
    fr_inv(&r_inv, &r);
    rc = kzg_openings(out, pk, ch_rev, chinv_rev, l, &r_inv, &z, pool, err);
out:
    gipa_free(&g);
    cuzk_free(rinv);
    if (rc) memset(out, 0, sizeof *out);
    return rc;
}
