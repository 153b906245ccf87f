/* prove.c: the backend-agnostic Groth16 prover front (blinding and final assembly, as
 * bellperson/supraseal) and the CPU backend (SpMV, h pipeline, five MSMs with the 0/1 split). */
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/util.h"

/* ------------------------------------------------------------ 0/1 split MSM -- */

/* One MSM's scalars, split: positions whose scalar is exactly one (Montgomery R) go to a
 * bitmap and are summed directly; zeros are dropped; the rest ("tail", including every
 * forced position, i.e. the inputs) go through Pippenger on gathered bases. */
struct split {
    size_t n;              /* MSM positions (= bases) */
    uint64_t *ones;        /* ceil(n / 64) words */
    size_t *tail_pos;      /* positions of the tail, ascending */
    fr_t *tail_sc;
    size_t n_tail, n_ones;
};

static void split_free(struct split *sp)
{
    cuzk_free(sp->ones);
    cuzk_free(sp->tail_pos);
    cuzk_free(sp->tail_sc);
    memset(sp, 0, sizeof *sp);
}

/* Positions enumerate the inputs selected by inp_dens (NULL = all), then the aux selected by
 * aux_dens (NULL = all); the first n_forced positions always go to the tail. */
static int split_build(struct split *sp, const fr_t *inp, size_t ni, const uint64_t *inp_dens,
                       const fr_t *aux, size_t na, const uint64_t *aux_dens, size_t n,
                       size_t n_forced)
{
    memset(sp, 0, sizeof *sp);
    sp->n = n;
    sp->ones = cuzk_calloc((n + 63) / 64 + 1, sizeof(uint64_t));
    sp->tail_pos = cuzk_malloc((n + 1) * sizeof(size_t));
    sp->tail_sc = cuzk_malloc((n + 1) * sizeof(fr_t));
    if (!sp->ones || !sp->tail_pos || !sp->tail_sc) {
        split_free(sp);
        return CUZK_E_NOMEM;
    }
    size_t pos = 0;
    for (size_t part = 0; part < 2; part++) {
        const fr_t *val = part ? aux : inp;
        const uint64_t *dens = part ? aux_dens : inp_dens;
        size_t cnt = part ? na : ni;
        for (size_t i = 0; i < cnt; i++) {
            if (dens && !((dens[i / 64] >> (i % 64)) & 1)) continue;
            if (pos >= n) return CUZK_E_INTERNAL;   /* more dense variables than bases */
            const fr_t *x = &val[i];
            if (pos < n_forced || !(fr_is_zero(x) || fr_is_one(x))) {
                sp->tail_pos[sp->n_tail] = pos;
                sp->tail_sc[sp->n_tail++] = *x;
            } else if (fr_is_one(x)) {
                sp->ones[pos / 64] |= 1ULL << (pos % 64);
                sp->n_ones++;
            }
            pos++;
        }
    }
    return pos == n ? CUZK_OK : CUZK_E_INTERNAL;
}

#define SPLIT_MSM_IMPL(G, aff_t, jac_t)                                                        \
    static int G##_split_msm(jac_t *out, const aff_t *bases, const struct split *sp,           \
                             struct pool *pool, struct cuzk_error *err)                        \
    {                                                                                          \
        jac_t ones, tail;                                                                      \
        G##_jac_set_inf(&ones);                                                                \
        G##_jac_set_inf(&tail);                                                                \
        if (sp->n_ones) G##_sum_bitmap(&ones, bases, sp->ones, sp->n, pool);                   \
        if (sp->n_tail) {                                                                      \
            aff_t *tb = cuzk_malloc(sp->n_tail * sizeof *tb);                                  \
            if (!tb) return cuzk_fail(err, CUZK_E_NOMEM, "prover: out of memory (tail bases)");\
            for (size_t i = 0; i < sp->n_tail; i++) tb[i] = bases[sp->tail_pos[i]];            \
            int rc = G##_msm(&tail, tb, sp->tail_sc, sp->n_tail, pool, err);                   \
            cuzk_free(tb);                                                                     \
            if (rc) return rc;                                                                 \
        }                                                                                      \
        G##_jac_add(out, &ones, &tail);                                                        \
        return CUZK_OK;                                                                        \
    }

SPLIT_MSM_IMPL(g1, g1_aff_t, g1_jac_t)
SPLIT_MSM_IMPL(g2, g2_aff_t, g2_jac_t)

/* -------------------------------------------------------------- CPU backend -- */

static int check_key(const struct g16_shape *s, const struct g16_pk *pk, unsigned *lg_out,
                     struct cuzk_error *err)
{
    unsigned lg = g16_domain_lg(pk->n_h);
    uint64_t n = 1ULL << lg;
    if (lg > 28)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "prover: key has %llu H points (domain 2^%u > 2^28)",
                         (unsigned long long)pk->n_h, lg);
    if (pk->n_h != n - 1 && !(n == 1 && pk->n_h == 0))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "prover: key has %llu H points (expected 2^k - 1)",
                         (unsigned long long)pk->n_h);
    if (s->n_constraints > n)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "prover: shape has %llu constraints, key's domain "
                         "holds %llu", (unsigned long long)s->n_constraints, (unsigned long long)n);
    if (pk->vk.n_ic != s->n_inputs || pk->n_l != s->n_aux ||
        pk->n_a != s->n_inputs + s->a_aux_count || pk->n_b != s->b_inp_count + s->b_aux_count)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "prover: key does not match the shape (ic %u/%u, "
                         "l %llu/%u, a %llu/%llu, b %llu/%llu: key/shape)", pk->vk.n_ic, s->n_inputs,
                         (unsigned long long)pk->n_l, s->n_aux, (unsigned long long)pk->n_a,
                         (unsigned long long)(s->n_inputs + s->a_aux_count),
                         (unsigned long long)pk->n_b,
                         (unsigned long long)(s->b_inp_count + s->b_aux_count));
    *lg_out = lg;
    return CUZK_OK;
}

int g16_backend_cpu(struct g16_msm_results *out, const struct g16_shape *s,
                    const struct g16_pk *pk, const struct g16_assignment *w, void *ctx,
                    struct g16_timings *t, struct cuzk_error *err)
{
    struct pool *pool = ctx ? (struct pool *)ctx : pool_default();
    struct g16_timings dummy;
    if (!t) t = &dummy;
    unsigned lg = 0;
    int rc = check_key(s, pk, &lg, err);
    if (rc) return rc;
    size_t n = (size_t)1 << lg;

    /* a/b/c, then h = (a*b - c) / Z on the key's domain (zero-padded past the last row) */
    uint64_t t0 = cuzk_now_ns();
    fr_t *a = cuzk_calloc(n, sizeof *a), *b = cuzk_calloc(n, sizeof *b),
         *c = cuzk_calloc(n, sizeof *c);
    if (!a || !b || !c) {
        cuzk_free(a), cuzk_free(b), cuzk_free(c);
        return cuzk_fail(err, CUZK_E_NOMEM, "prover: out of memory for a/b/c (3 x %zu)", n);
    }
    rc = g16_eval_abc(a, b, c, s, w, pool, err);
    uint64_t t1 = cuzk_now_ns();
    t->abc_ns += t1 - t0;
    if (!rc) {
        g16_compute_h(a, b, c, lg, pool);
        uint64_t t2 = cuzk_now_ns();
        t->ntt_ns += t2 - t1;
        cuzk_free(b), cuzk_free(c);
        b = c = NULL;
        rc = g1_msm(&out->h, pk->h, a, pk->n_h, pool, err);   /* h[0..N-2]; h[N-1] = 0 */
        t->msm_h_ns += cuzk_now_ns() - t2;
    }
    cuzk_free(a), cuzk_free(b), cuzk_free(c);
    if (rc) return rc;

    size_t ni = s->n_inputs, na = s->n_aux;
    struct split sp;
    /* L: every aux variable */
    t0 = cuzk_now_ns();
    rc = split_build(&sp, NULL, 0, NULL, w->aux, na, NULL, pk->n_l, 0);
    if (!rc) rc = g1_split_msm(&out->l, pk->l, &sp, pool, err);
    split_free(&sp);
    t->msm_l_ns += cuzk_now_ns() - t0;
    if (rc) goto fail;
    /* A: all inputs, then A-dense aux */
    t0 = cuzk_now_ns();
    rc = split_build(&sp, w->inputs, ni, NULL, w->aux, na, s->a_aux_density, pk->n_a, ni);
    if (!rc) rc = g1_split_msm(&out->a, pk->a, &sp, pool, err);
    split_free(&sp);
    t->msm_a_ns += cuzk_now_ns() - t0;
    if (rc) goto fail;
    /* B in G1 and G2: B-dense inputs, then B-dense aux; one split serves both groups */
    t0 = cuzk_now_ns();
    rc = split_build(&sp, w->inputs, ni, s->b_inp_density, w->aux, na, s->b_aux_density, pk->n_b,
                     s->b_inp_count);
    if (!rc) rc = g1_split_msm(&out->b_g1, pk->b_g1, &sp, pool, err);
    uint64_t t1b = cuzk_now_ns();
    t->msm_b_g1_ns += t1b - t0;
    if (!rc) rc = g2_split_msm(&out->b_g2, pk->b_g2, &sp, pool, err);
    t->msm_b_g2_ns += cuzk_now_ns() - t1b;
    split_free(&sp);
fail:
    if (rc == CUZK_E_NOMEM && err && err->code != CUZK_E_NOMEM)
        return cuzk_fail(err, rc, "prover: out of memory in the 0/1 split");
    if (rc == CUZK_E_INTERNAL && err && err->code != CUZK_E_INTERNAL)
        return cuzk_fail(err, rc, "prover: density bitmaps do not match the key sizes");
    return rc;
}

/* ------------------------------------------------------------------- front -- */

static int random_fr(fr_t *out, struct cuzk_error *err)
{
    uint8_t b[64];
    int rc = cuzk_os_random(b, sizeof b, err);
    if (rc) return rc;
    fr_from_wide_le(out, b);
    memset(b, 0, sizeof b);
    return CUZK_OK;
}

/* A = alpha + a + r delta; B = beta + b2 + s delta;
 * C = s a + r b1 + (r s) delta + s alpha + r beta + h + l  (= h + l + s A + r B1 - r s delta). */
static void assemble(struct g16_proof *p, const struct g16_vk *vk, const struct g16_msm_results *m,
                     const fr_t *r, const fr_t *s)
{
    g1_jac_t A, C, t, base;
    g2_jac_t B, base2;
    fr_t rs;
    fr_mul(&rs, r, s);

    g1_jac_from_aff(&base, &vk->delta_g1);
    g1_jac_mul_fr(&A, &base, r);
    g1_jac_add_aff(&A, &A, &vk->alpha_g1);
    g1_jac_add(&A, &A, &m->a);

    g2_jac_from_aff(&base2, &vk->delta_g2);
    g2_jac_mul_fr(&B, &base2, s);
    g2_jac_add_aff(&B, &B, &vk->beta_g2);
    g2_jac_add(&B, &B, &m->b_g2);

    g1_jac_mul_fr(&C, &base, &rs);
    g1_jac_from_aff(&base, &vk->alpha_g1);
    g1_jac_mul_fr(&t, &base, s);
    g1_jac_add(&C, &C, &t);
    g1_jac_from_aff(&base, &vk->beta_g1);
    g1_jac_mul_fr(&t, &base, r);
    g1_jac_add(&C, &C, &t);
    g1_jac_mul_fr(&t, &m->a, s);
    g1_jac_add(&C, &C, &t);
    g1_jac_mul_fr(&t, &m->b_g1, r);
    g1_jac_add(&C, &C, &t);
    g1_jac_add(&C, &C, &m->h);
    g1_jac_add(&C, &C, &m->l);

    g1_jac_to_aff(&p->a, &A);
    g2_jac_to_aff(&p->b, &B);
    g1_jac_to_aff(&p->c, &C);
}

int g16_prove(struct g16_proof *proofs, const struct g16_shape *s, const struct g16_pk *pk,
              const struct g16_assignment *w, size_t n, const fr_t *r, const fr_t *s_blind,
              g16_backend_fn backend, void *backend_ctx, struct g16_timings *t,
              struct cuzk_error *err)
{
    struct g16_timings dummy;
    if (!t) t = &dummy;
    memset(t, 0, sizeof *t);
    if (!backend) backend = g16_backend_cpu;
    if ((r == NULL) != (s_blind == NULL))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "g16_prove: give both r and s, or neither");
    uint64_t t_start = cuzk_now_ns();
    for (size_t i = 0; i < n; i++) {
        struct g16_msm_results m;
        int rc = backend(&m, s, pk, &w[i], backend_ctx, t, err);
        if (rc) return n > 1 ? cuzk_fail_prefix(err, rc, "circuit %zu", i) : rc;
        uint64_t t0 = cuzk_now_ns();
        fr_t rr, ss;
        if (r) {
            rr = r[i];
            ss = s_blind[i];
        } else if ((rc = random_fr(&rr, err)) || (rc = random_fr(&ss, err))) {
            return rc;
        }
        assemble(&proofs[i], &pk->vk, &m, &rr, &ss);
        cuzk_wipe(&rr, sizeof rr);
        cuzk_wipe(&ss, sizeof ss);
        t->assembly_ns += cuzk_now_ns() - t0;
    }
    t->total_ns = cuzk_now_ns() - t_start;
    return CUZK_OK;
}
