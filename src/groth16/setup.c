/* setup.c: local Groth16 trusted setup (tests, benchmarks, demos; NOT FOR PRODUCTION: the
 * toxic waste lives in this process). Follows bellperson's generator: QAP at tau via the
 * Lagrange basis, identities dropped from A/B, unconstrained aux rejected. */
#include <stdatomic.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/util.h"

#define FB_CHUNK 1024   /* points whose additions share one batch inversion */

/* ------------------------------------------------ fixed-base multiplication -- */

/* Table of d * 2^(w*k) * G for every window k and digit d in [1, 2^w): a scalar multiple
 * then costs one mixed addition per window, no doublings. */
#define FIXED_BASE_IMPL(G, F, aff_t, jac_t, MAXW)                                                 \
    struct G##_fb { unsigned w, nwin; size_t row; aff_t *t; };                                 \
                                                                                               \
    struct G##_fb_ctx { struct G##_fb *fb; const aff_t *base; aff_t *out; const fr_t *sc;      \
                        atomic_int oom; };                                                     \
                                                                                               \
    static void G##_fb_rows(void *ctx, size_t begin, size_t end, unsigned worker)              \
    {                                                                                          \
        (void)worker;                                                                          \
        struct G##_fb_ctx *c = ctx;                                                            \
        size_t row = c->fb->row;                                                               \
        jac_t *tmp = cuzk_malloc(row * sizeof *tmp);                                           \
        if (!tmp) { atomic_store(&c->oom, 1); return; }                                        \
        for (size_t k = begin; k < end; k++) {                                                 \
            const aff_t *b = &c->base[k];                                                      \
            G##_jac_from_aff(&tmp[0], b);                                                      \
            for (size_t d = 1; d < row; d++) G##_jac_add_aff(&tmp[d], &tmp[d - 1], b);         \
            G##_batch_to_aff(&c->fb->t[k * row], tmp, row, NULL);                              \
        }                                                                                      \
        cuzk_free(tmp);                                                                        \
    }                                                                                          \
                                                                                               \
    static int G##_fb_init(struct G##_fb *fb, const aff_t *gen, size_t n, struct pool *pool)   \
    {                                                                                          \
        unsigned best = 2;                                                                     \
        double best_cost = 0;                                                                  \
        for (unsigned w = 2; w <= (MAXW); w++) {                                               \
            double nw = (255 + w - 1) / w, cost = nw * ((double)n + (double)(1u << w));        \
            if (w == 2 || cost < best_cost) { best = w; best_cost = cost; }                    \
        }                                                                                      \
        fb->w = best;                                                                          \
        fb->nwin = (255 + best - 1) / best;                                                    \
        fb->row = ((size_t)1 << best) - 1;                                                     \
        fb->t = cuzk_malloc(fb->nwin * fb->row * sizeof(aff_t));                               \
        aff_t *bases = cuzk_malloc(fb->nwin * sizeof(aff_t));                                  \
        if (!fb->t || !bases) {                                                                \
            cuzk_free(fb->t);                                                                  \
            cuzk_free(bases);                                                                  \
            fb->t = NULL;                                                                      \
            return CUZK_E_NOMEM;                                                               \
        }                                                                                      \
        jac_t p;                                                                               \
        G##_jac_from_aff(&p, gen);                                                             \
        for (unsigned k = 0; k < fb->nwin; k++) {                                              \
            G##_jac_to_aff(&bases[k], &p);                                                     \
            for (unsigned i = 0; i < best; i++) G##_jac_dbl(&p, &p);                           \
        }                                                                                      \
        struct G##_fb_ctx c = {fb, bases, NULL, NULL, 0};                                      \
        pool_parallel_for(pool, fb->nwin, 1, G##_fb_rows, &c);                                 \
        cuzk_free(bases);                                                                      \
        if (atomic_load(&c.oom)) { cuzk_free(fb->t); fb->t = NULL; return CUZK_E_NOMEM; }      \
        return CUZK_OK;                                                                        \
    }                                                                                          \
                                                                                               \
    /* Accumulators stay affine: per window, all pending additions of a chunk share one     \
     * batch inversion (about 5M + 1S per addition instead of a Jacobian mixed addition's   \
     * 7M + 4S, and no final conversion). x1 == x2 (doubling or cancellation) is rare and   \
     * handled on its own. */                                                               \
    static void G##_fb_mul_range(void *ctx, size_t begin, size_t end, unsigned worker)         \
    {                                                                                          \
        (void)worker;                                                                          \
        struct G##_fb_ctx *c = ctx;                                                            \
        const struct G##_fb *fb = c->fb;                                                       \
        uint64_t (*k)[5] = cuzk_malloc(FB_CHUNK * sizeof *k);                                  \
        F##_t *den = cuzk_malloc(2 * FB_CHUNK * sizeof *den);                                  \
        uint32_t *pend = cuzk_malloc(2 * FB_CHUNK * sizeof *pend); /* index, then digit */     \
        bool *inf = cuzk_malloc(FB_CHUNK * sizeof *inf);                                       \
        if (!k || !den || !pend || !inf) {                                                     \
            atomic_store(&c->oom, 1);                                                          \
            goto out;                                                                          \
        }                                                                                      \
        for (size_t s0 = begin; s0 < end; s0 += FB_CHUNK) {                                    \
            size_t cnt = end - s0 < FB_CHUNK ? end - s0 : FB_CHUNK;                            \
            aff_t *acc = &c->out[s0];                                                          \
            for (size_t i = 0; i < cnt; i++) {                                                 \
                memset(k[i], 0, sizeof k[i]);                                                  \
                fr_from_mont(k[i], &c->sc[s0 + i]);                                            \
                inf[i] = true;                                                                 \
            }                                                                                  \
            for (unsigned win = 0; win < fb->nwin; win++) {                                    \
                unsigned bit = win * fb->w, limb = bit / 64, sh = bit % 64;                    \
                size_t np = 0;                                                                 \
                for (size_t i = 0; i < cnt; i++) {                                             \
                    uint64_t d = k[i][limb] >> sh;                                             \
                    if (sh + fb->w > 64) d |= k[i][limb + 1] << (64 - sh);                     \
                    d &= ((uint64_t)1 << fb->w) - 1;                                           \
                    if (!d) continue;                                                          \
                    const aff_t *t = &fb->t[win * fb->row + d - 1];                            \
                    if (inf[i]) {                                                              \
                        acc[i] = *t;                                                           \
                        inf[i] = false;                                                        \
                    } else if (F##_eq(&acc[i].x, &t->x)) {                                     \
                        jac_t j;                                                               \
                        G##_jac_from_aff(&j, &acc[i]);                                         \
                        G##_jac_add_aff(&j, &j, t);                                            \
                        inf[i] = G##_jac_is_inf(&j);                                           \
                        G##_jac_to_aff(&acc[i], &j);                                           \
                    } else {                                                                   \
                        F##_sub(&den[np], &t->x, &acc[i].x);                                   \
                        pend[np++] = (uint32_t)i;                                              \
                        pend[FB_CHUNK + np - 1] = (uint32_t)d;                                 \
                    }                                                                          \
                }                                                                              \
                F##_batch_inv(den, np, den + FB_CHUNK);                                        \
                for (size_t q = 0; q < np; q++) {                                              \
                    size_t i = pend[q];                                                        \
                    const aff_t *t = &fb->t[win * fb->row + pend[FB_CHUNK + q] - 1];           \
                    F##_t lam, x3, y3;                                                         \
                    F##_sub(&lam, &t->y, &acc[i].y);                                           \
                    F##_mul(&lam, &lam, &den[q]);          /* (y2 - y1) / (x2 - x1) */         \
                    F##_sqr(&x3, &lam);                                                        \
                    F##_sub(&x3, &x3, &acc[i].x);                                              \
                    F##_sub(&x3, &x3, &t->x);              /* lam^2 - x1 - x2 */              \
                    F##_sub(&y3, &acc[i].x, &x3);                                              \
                    F##_mul(&y3, &y3, &lam);                                                   \
                    F##_sub(&acc[i].y, &y3, &acc[i].y);    /* lam (x1 - x3) - y1 */            \
                    acc[i].x = x3;                                                             \
                }                                                                              \
            }                                                                                  \
            for (size_t i = 0; i < cnt; i++)                                                   \
                if (inf[i]) memset(&acc[i], 0, sizeof acc[i]);                                 \
        }                                                                                      \
    out:                                                                                       \
        cuzk_free(k);                                                                          \
        cuzk_free(den);                                                                        \
        cuzk_free(pend);                                                                       \
        cuzk_free(inf);                                                                        \
    }                                                                                          \
                                                                                               \
    /* out[i] = sc[i] * G for i < n (Montgomery scalars; 0 gives the identity). */             \
    static int G##_fb_mul(aff_t *out, const struct G##_fb *fb, const fr_t *sc, size_t n,       \
                          struct pool *pool)                                                   \
    {                                                                                          \
        struct G##_fb_ctx c = {(struct G##_fb *)fb, NULL, out, sc, 0};                         \
        pool_parallel_for(pool, n, FB_CHUNK, G##_fb_mul_range, &c);                            \
        return atomic_load(&c.oom) ? CUZK_E_NOMEM : CUZK_OK;                                   \
    }

FIXED_BASE_IMPL(g1, fp, g1_aff_t, g1_jac_t, 16)
FIXED_BASE_IMPL(g2, fp2, g2_aff_t, g2_jac_t, 14)

/* ------------------------------------------------------------------- setup -- */

struct qap_ctx {
    const struct g16_shape *s;
    const fr_t *lag;          /* L_row(tau) */
    fr_t *uvw[3];             /* per variable: u, v, w at tau */
};

/* Item = (matrix, variable range): transposed accumulation var += coeff * L_row(tau) over the
 * rows in order, for the variables of the range only. Every item scans its whole matrix (a
 * sequential read) but multiplies only its share, so all cores work on a 130M-row circuit
 * instead of one per matrix; each variable still sums its terms in row order. */
#define QAP_RANGES 64
static void qap_eval(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct qap_ctx *c = ctx;
    const struct g16_matrix *mats[3] = {&c->s->a, &c->s->b, &c->s->c};
    uint64_t nv = (uint64_t)c->s->n_inputs + c->s->n_aux;
    for (size_t i = begin; i < end; i++) {
        const struct g16_matrix *m = mats[i / QAP_RANGES];
        uint32_t lo = (uint32_t)(nv * (i % QAP_RANGES) / QAP_RANGES);
        uint32_t hi = (uint32_t)(nv * (i % QAP_RANGES + 1) / QAP_RANGES);
        fr_t *acc = c->uvw[i / QAP_RANGES], t;
        for (uint64_t r = 0; r < c->s->n_constraints; r++) {
            for (uint64_t k = m->row_ptr[r]; k < m->row_ptr[r + 1]; k++) {
                uint32_t v = m->col[k];
                if (v < lo || v >= hi) continue;
                fr_mul(&t, &c->lag[r], &c->s->coeffs[m->coeff_idx[k]]);
                fr_add(&acc[v], &acc[v], &t);
            }
        }
    }
}

int g16_random_nonzero(fr_t *out, void *rng, struct cuzk_error *err)
{
    do {
        uint8_t b[64];
        if (rng) {
            cuzk_rng_bytes(rng, b, sizeof b);
        } else {
            int rc = cuzk_os_random(b, sizeof b, err);
            if (rc) return rc;
        }
        fr_from_wide_le(out, b);
    } while (fr_is_zero(out));
    return CUZK_OK;
}

struct ic_l_ctx {
    const fr_t *u, *v, *w;
    fr_t *sc;
    const fr_t *alpha, *beta, *gamma_inv, *delta_inv;
    size_t ni;
    _Atomic size_t zero;      /* first aux variable whose scalar is zero (SIZE_MAX: none) */
};

static void ic_l_scalars(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct ic_l_ctx *c = ctx;
    for (size_t i = begin; i < end; i++) {
        fr_t t;
        fr_mul(&c->sc[i], c->beta, &c->u[i]);
        fr_mul(&t, c->alpha, &c->v[i]);
        fr_add(&c->sc[i], &c->sc[i], &t);
        fr_add(&c->sc[i], &c->sc[i], &c->w[i]);
        fr_mul(&c->sc[i], &c->sc[i], i < c->ni ? c->gamma_inv : c->delta_inv);
        if (i >= c->ni && fr_is_zero(&c->sc[i])) {
            size_t cur = atomic_load(&c->zero);
            while (i < cur && !atomic_compare_exchange_weak(&c->zero, &cur, i)) {
            }
        }
    }
}

static bool bit(const uint64_t *bm, uint64_t i) { return (bm[i / 64] >> (i % 64)) & 1; }

/* The fixed-base multiplications of one setup: the CPU tables, or the caller's multiplier. */
struct fbm {
    const struct g16_fixed_base *ext;   /* with g1 and g2: the caller's multiplier */
    bool cpu;                           /* the CPU tables */
    struct g1_fb g1;
    struct g2_fb g2;
    struct pool *pool;
    uint64_t done, total;               /* G1 points (a G2 point counts 3) */
};

/* After a query's multiplications (rc), `points` G1-point units of them: the progress call. */
static int fbm_done(struct fbm *m, const char *query, uint64_t points, int rc)
{
    if (rc) return rc;
    m->done += points;
    if (m->ext && m->ext->progress) m->ext->progress(m->ext->pctx, query, m->done, m->total);
    return CUZK_OK;
}
/* With a progress callback the multiplications of a query run in slices of FBM_SLICE points or
 * more (each point's product is independent: the same key), so a long query reports as it goes. */
#define FBM_SLICE ((size_t)1 << 12)
static size_t fbm_slice(const struct fbm *m, size_t n)
{
    if (!m->ext || !m->ext->progress) return n ? n : 1;
    size_t k = n / 16;
    return k > FBM_SLICE ? k : FBM_SLICE;
}
static int fbm_g1(struct fbm *m, const char *query, g1_aff_t *out, const fr_t *sc, size_t n, struct cuzk_error *err)
{
    const size_t step = fbm_slice(m, n);
    int rc = CUZK_OK;
    for (size_t i = 0; !rc && (i < n || (!n && !i)); i += step) {
        size_t k = n - i < step ? n - i : step;
        rc = !m->cpu ? m->ext->g1(m->ext->self, out + i, &G1_GENERATOR, sc + i, k, err)
           : g1_fb_mul(out + i, &m->g1, sc + i, k, m->pool)
               ? cuzk_fail(err, CUZK_E_NOMEM, "g16_setup: out of memory in the G1 fixed-base multiplications")
               : CUZK_OK;
        rc = fbm_done(m, query, k, rc);
        if (!n) break;
    }
    return rc;
}
static int fbm_g2(struct fbm *m, const char *query, g2_aff_t *out, const fr_t *sc, size_t n, struct cuzk_error *err)
{
    const size_t step = fbm_slice(m, n);
    int rc = CUZK_OK;
    for (size_t i = 0; !rc && (i < n || (!n && !i)); i += step) {
        size_t k = n - i < step ? n - i : step;
        rc = !m->cpu ? m->ext->g2(m->ext->self, out + i, &G2_GENERATOR, sc + i, k, err)
           : g2_fb_mul(out + i, &m->g2, sc + i, k, m->pool)
               ? cuzk_fail(err, CUZK_E_NOMEM, "g16_setup: out of memory in the G2 fixed-base multiplications")
               : CUZK_OK;
        rc = fbm_done(m, query, 3 * (uint64_t)k, rc);
        if (!n) break;
    }
    return rc;
}

int g16_setup(struct g16_pk *pk, const struct g16_shape *s, void *rng_v, struct pool *pool,
              struct cuzk_error *err)
{
    return g16_setup_with(pk, s, rng_v, pool, NULL, err);
}

int g16_setup_with(struct g16_pk *pk, const struct g16_shape *s, void *rng_v, struct pool *pool,
                   const struct g16_fixed_base *fb, struct cuzk_error *err)
{
    memset(pk, 0, sizeof *pk);
    if (!s->a.row_ptr || !s->b.row_ptr || !s->c.row_ptr)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "g16_setup: shape has no matrices (count-only)");
    unsigned lg = 0;
    while ((1ULL << lg) < s->n_constraints) lg++;
    if (lg > 28)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "g16_setup: %llu constraints need a 2^%u domain "
                         "(max 2^28)", (unsigned long long)s->n_constraints, lg);
    size_t n = (size_t)1 << lg, ni = s->n_inputs, na = s->n_aux, nv = ni + na;
    cuzk_rng *rng = rng_v;

    fr_t alpha, beta, gamma, delta, tau;
    fr_t *waste[5] = {&alpha, &beta, &gamma, &delta, &tau};
    for (int i = 0; i < 5; i++) {
        int rc = g16_random_nonzero(waste[i], rng, err);
        if (rc) return rc;
    }
    fr_t gamma_inv, delta_inv, z_tau;   /* z_tau: Z(tau) = tau^N - 1, below */
    fr_inv(&gamma_inv, &gamma);
    fr_inv(&delta_inv, &delta);

    int rc = CUZK_OK;
    fr_t *lag = cuzk_malloc(n * sizeof *lag);
    fr_t *uvw = cuzk_calloc(3 * nv + 1, sizeof *uvw);
    fr_t *sc = cuzk_malloc((n > nv ? n : nv) * sizeof *sc);   /* scalars of one query */
    struct fbm m = {.ext = fb, .cpu = !fb || !fb->g1 || !fb->g2, .pool = pool};
    if (!lag || !uvw || !sc) goto oom;

    /* Lagrange basis at tau over the domain: L_j(tau) = iNTT(tau^0, ..., tau^(N-1))[j]. */
    lag[0] = FR_ONE;
    for (size_t i = 1; i < n; i++) fr_mul(&lag[i], &lag[i - 1], &tau);
    fr_mul(&z_tau, &lag[n - 1], &tau);
    fr_sub(&z_tau, &z_tau, &FR_ONE);
    g16_ntt(lag, lg, true, pool);
    struct qap_ctx qc = {s, lag, {uvw, uvw + nv, uvw + 2 * nv}};
    pool_parallel_for(pool, 3 * QAP_RANGES, 1, qap_eval, &qc);
    const fr_t *u = qc.uvw[0], *v = qc.uvw[1], *w = qc.uvw[2];

    size_t n_g1 = (n - 1) + nv + nv + nv, n_g2 = nv;
    /* the multiplications in all: h, ic + l, the A-dense and the B-dense variables */
    m.total = (n - 1) + nv + ni + s->a_aux_count + 4 * (s->b_inp_count + s->b_aux_count);
    fbm_done(&m, "qap", 0, CUZK_OK);
    if (m.cpu) {
        rc = g1_fb_init(&m.g1, &G1_GENERATOR, n_g1, pool);
        if (!rc) rc = g2_fb_init(&m.g2, &G2_GENERATOR, n_g2, pool);
        if (rc) goto oom;
    }

    /* H: tau^i Z(tau) / delta, i < N - 1 */
    pk->n_h = n - 1;
    pk->h = cuzk_malloc((n > 1 ? n - 1 : 1) * sizeof(g1_aff_t));
    if (!pk->h) goto oom;
    fr_t cur;
    fr_mul(&cur, &z_tau, &delta_inv);
    for (size_t i = 0; i + 1 < n; i++) {
        sc[i] = cur;
        fr_mul(&cur, &cur, &tau);
    }
    if ((rc = fbm_g1(&m, "h", pk->h, sc, n - 1, err))) goto fail;

    /* IC (inputs, / gamma) and L (aux, / delta): beta u + alpha v + w */
    {
        struct ic_l_ctx c = {u, v, w, sc, &alpha, &beta, &gamma_inv, &delta_inv, ni, SIZE_MAX};
        pool_parallel_for(pool, nv, 1 << 14, ic_l_scalars, &c);
        if (c.zero != SIZE_MAX) {
            rc = cuzk_fail(err, CUZK_E_INVALID_ARG, "g16_setup: aux variable %zu is unconstrained "
                           "(appears in no constraint with a nonzero coefficient)", (size_t)c.zero - ni);
            goto fail;
        }
    }
    pk->vk.n_ic = (uint32_t)ni;
    pk->vk.ic = cuzk_malloc(ni * sizeof(g1_aff_t));
    pk->n_l = na;
    pk->l = cuzk_malloc((na ? na : 1) * sizeof(g1_aff_t));
    if (!pk->vk.ic || !pk->l) goto oom;
    if ((rc = fbm_g1(&m, "ic", pk->vk.ic, sc, ni, err))) goto fail;
    if ((rc = fbm_g1(&m, "l", pk->l, sc + ni, na, err))) goto fail;

    /* A: u for all inputs, then A-dense aux. bellperson drops the identities, i.e. the
     * variables with u(tau) = 0; for a random tau that is exactly "no nonzero coefficient in
     * A", which the prover's density bitmap says; anything else is degenerate toxic waste. */
    size_t k = 0;
    for (size_t i = 0; i < nv; i++) {
        bool dense = i < ni || bit(s->a_aux_density, i - ni);
        if (dense != !fr_is_zero(&u[i])) goto degenerate;
        if (dense) sc[k++] = u[i];
    }
    pk->n_a = k;
    pk->a = cuzk_malloc((k ? k : 1) * sizeof(g1_aff_t));
    if (!pk->a) goto oom;
    if ((rc = fbm_g1(&m, "a", pk->a, sc, k, err))) goto fail;

    /* B: v for B-dense inputs, then B-dense aux, in G1 and G2 */
    k = 0;
    for (size_t i = 0; i < nv; i++) {
        bool dense = i < ni ? bit(s->b_inp_density, i) : bit(s->b_aux_density, i - ni);
        if (dense != !fr_is_zero(&v[i])) goto degenerate;
        if (dense) sc[k++] = v[i];
    }
    pk->n_b = k;
    pk->b_g1 = cuzk_malloc((k ? k : 1) * sizeof(g1_aff_t));
    pk->b_g2 = cuzk_malloc((k ? k : 1) * sizeof(g2_aff_t));
    if (!pk->b_g1 || !pk->b_g2) goto oom;
    if ((rc = fbm_g1(&m, "b_g1", pk->b_g1, sc, k, err))) goto fail;
    if ((rc = fbm_g2(&m, "b_g2", pk->b_g2, sc, k, err))) goto fail;

    /* verifying key */
    {
        g1_jac_t g1, t1;
        g2_jac_t g2, t2;
        g1_jac_from_aff(&g1, &G1_GENERATOR);
        g2_jac_from_aff(&g2, &G2_GENERATOR);
        g1_jac_mul_fr(&t1, &g1, &alpha);
        g1_jac_to_aff(&pk->vk.alpha_g1, &t1);
        g1_jac_mul_fr(&t1, &g1, &beta);
        g1_jac_to_aff(&pk->vk.beta_g1, &t1);
        g1_jac_mul_fr(&t1, &g1, &delta);
        g1_jac_to_aff(&pk->vk.delta_g1, &t1);
        g2_jac_mul_fr(&t2, &g2, &beta);
        g2_jac_to_aff(&pk->vk.beta_g2, &t2);
        g2_jac_mul_fr(&t2, &g2, &gamma);
        g2_jac_to_aff(&pk->vk.gamma_g2, &t2);
        g2_jac_mul_fr(&t2, &g2, &delta);
        g2_jac_to_aff(&pk->vk.delta_g2, &t2);
    }
    goto done;

degenerate:
    rc = cuzk_fail(err, CUZK_E_INTERNAL, "g16_setup: QAP evaluation at tau disagrees with the "
                   "density (degenerate toxic waste or inconsistent shape); retry");
    goto fail;
oom:
    rc = cuzk_fail(err, CUZK_E_NOMEM, "g16_setup: out of memory (%llu constraints, %zu variables)",
                   (unsigned long long)s->n_constraints, nv);
fail:
    g16_pk_free(pk);
done:
    /* scrub the toxic waste and what was derived from it (the Lagrange basis at tau gives tau
     * back; the QAP evaluations and query scalars are its polynomials at tau) */
    for (int i = 0; i < 5; i++) cuzk_wipe(waste[i], sizeof(fr_t));
    cuzk_wipe(&gamma_inv, sizeof gamma_inv);
    cuzk_wipe(&delta_inv, sizeof delta_inv);
    cuzk_wipe(&z_tau, sizeof z_tau);
    cuzk_free_secret(lag, n * sizeof *lag);
    cuzk_free_secret(uvw, (3 * nv + 1) * sizeof *uvw);
    cuzk_free_secret(sc, (n > nv ? n : nv) * sizeof *sc);
    cuzk_free(m.g1.t);
    cuzk_free(m.g2.t);
    return rc;
}
