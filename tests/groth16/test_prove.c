/* test_prove.c: local setup against a naive recomputation from the same toxic waste (Lagrange
 * formula, single scalar multiplications), the CPU backend's five MSMs against naive sums,
 * determinism across runs and pool sizes, key/shape mismatches, and a verify round trip. */
#include "cuzk/circuits.h"
#include "cuzk/groth16.h"
#include "test.h"

static void rand_fr(fr_t *out, cuzk_rng *rng)
{
    uint8_t b[64];
    cuzk_rng_bytes(rng, b, sizeof b);
    fr_from_wide_le(out, b);
}

static bool bit(const uint64_t *bm, uint64_t i) { return (bm[i / 64] >> (i % 64)) & 1; }

static void g1_gen_mul(g1_aff_t *out, const fr_t *k)
{
    g1_jac_t g, t;
    g1_jac_from_aff(&g, &G1_GENERATOR);
    g1_jac_mul_fr(&t, &g, k);
    g1_jac_to_aff(out, &t);
}

static void g2_gen_mul(g2_aff_t *out, const fr_t *k)
{
    g2_jac_t g, t;
    g2_jac_from_aff(&g, &G2_GENERATOR);
    g2_jac_mul_fr(&t, &g, k);
    g2_jac_to_aff(out, &t);
}

struct fixture {
    struct synth_params p;
    struct g16_shape s;
    struct g16_pk pk;
    fr_t *in, *aux;
};

static void fixture_init(struct fixture *f, uint64_t n, uint32_t n_public, uint64_t seed)
{
    struct cuzk_error err_s, *err = &err_s;
    f->p = (struct synth_params){n, n_public, false};
    ASSERT_OK(synth_build_shape(&f->s, &f->p, err), err);
    cuzk_rng rng;
    cuzk_rng_seed(&rng, seed);
    ASSERT_OK(g16_setup(&f->pk, &f->s, &rng, pool_default(), err), err);
    f->in = calloc(f->s.n_inputs, sizeof(fr_t));
    f->aux = calloc(f->s.n_aux + 1, sizeof(fr_t));
    ASSERT_OK(synth_witness(f->in, f->aux, &f->s, &f->p, seed, err), err);
}

static void fixture_fini(struct fixture *f)
{
    g16_pk_free(&f->pk);
    g16_shape_free(&f->s);
    free(f->in);
    free(f->aux);
}

/* L_j(tau) over the 2^lg domain, by the closed formula (no NTT). */
static void lagrange_at(fr_t *out, size_t len, unsigned lg, const fr_t *tau)
{
    size_t n = (size_t)1 << lg;
    fr_t w, wj = FR_ONE, zn, ninv, d;
    uint64_t e = n;
    {
        fr_t x = FR_ROOT_OF_UNITY_2_32;
        for (unsigned i = lg; i < 32; i++) fr_sqr(&x, &x);
        w = x;
    }
    fr_pow(&zn, tau, &e, 1);
    fr_sub(&zn, &zn, &FR_ONE);
    fr_from_u64(&ninv, n);
    fr_inv(&ninv, &ninv);
    fr_mul(&zn, &zn, &ninv);
    for (size_t j = 0; j < len; j++) {
        fr_sub(&d, tau, &wj);
        fr_inv(&d, &d);
        fr_mul(&out[j], &wj, &d);
        fr_mul(&out[j], &out[j], &zn);
        fr_mul(&wj, &wj, &w);
    }
}

/* Setup progress: a call once the QAP is evaluated (done 0), then one per query in order,
 * done rising to the total, which is the key's own point count (a G2 point counting 3); and a
 * g16_fixed_base with only a progress callback keeps the CPU's multiplications: the same key
 * as g16_setup from the same seed. */
struct prog_rec {
    int calls;
    char order[64];
    uint64_t last, total;
    bool bad;
};
static void prog_cb(void *ctx, const char *query, uint64_t done, uint64_t total)
{
    struct prog_rec *r = ctx;
    if ((r->calls == 0) != (done == 0) || done < r->last || done > total || (r->calls && total != r->total))
        r->bad = true;
    r->calls++;
    r->last = done;
    r->total = total;
    strncat(r->order, query, sizeof r->order - strlen(r->order) - 2);
    strcat(r->order, " ");
}

/* The key of a synthetic circuit of n constraints made twice from one seed: pk by
 * g16_setup_with reporting its progress into *rec, ref by g16_setup in one piece. */
static void setup_reporting(uint64_t n, struct prog_rec *rec, struct g16_pk *pk, struct g16_pk *ref)
{
    struct cuzk_error err_s, *err = &err_s;
    struct synth_params p = {n, 3, false};
    struct g16_shape s;
    ASSERT_OK(synth_build_shape(&s, &p, err), err);
    cuzk_rng r1, r2;
    cuzk_rng_seed(&r1, test_seed());
    r2 = r1;
    memset(rec, 0, sizeof *rec);
    struct g16_fixed_base fb = {.progress = prog_cb, .pctx = rec};
    ASSERT_OK(g16_setup_with(pk, &s, &r1, NULL, &fb, err), err);
    ASSERT_OK(g16_setup(ref, &s, &r2, NULL, err), err);
    g16_shape_free(&s);
}

TEST(setup_progress_counts_every_multiplication)
{
    struct prog_rec rec;
    struct g16_pk pk, ref;
    setup_reporting(300, &rec, &pk, &ref);
    ASSERT(!rec.bad);
    ASSERT_EQ_INT(rec.calls, 7);
    ASSERT_STR_CONTAINS(rec.order, "qap h ic l a b_g1 b_g2 ");
    ASSERT_EQ_U64(rec.last, rec.total);
    ASSERT_EQ_U64(rec.total, pk.n_h + pk.vk.n_ic + pk.n_l + pk.n_a + 4 * pk.n_b);
    ASSERT_EQ_U64(pk.n_h, ref.n_h);
    ASSERT_EQ_U64(pk.n_b, ref.n_b);
    ASSERT_MEM_EQ(pk.h, ref.h, pk.n_h * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(pk.b_g2, ref.b_g2, pk.n_b * sizeof(g2_aff_t));
    g16_pk_free(&pk);
    g16_pk_free(&ref);
}

/* A circuit whose queries exceed a slice (2^12 points): h (8191 points) and the other large
 * queries report in several calls, done still rising to the total, and the key is byte for
 * byte the one g16_setup makes in one piece from the same seed. */
TEST(setup_progress_in_slices_same_key)
{
    struct prog_rec rec;
    struct g16_pk pk, ref;
    setup_reporting(5000, &rec, &pk, &ref);
    ASSERT(!rec.bad);
    ASSERT(rec.calls > 7);
    ASSERT_STR_CONTAINS(rec.order, "qap h h ");   /* 8191 points: two slices */
    ASSERT_EQ_U64(rec.last, rec.total);
    ASSERT_EQ_U64(rec.total, pk.n_h + pk.vk.n_ic + pk.n_l + pk.n_a + 4 * pk.n_b);
    ASSERT_EQ_U64(pk.n_h, ref.n_h);
    ASSERT_EQ_U64(pk.n_l, ref.n_l);
    ASSERT_EQ_U64(pk.n_a, ref.n_a);
    ASSERT_EQ_U64(pk.n_b, ref.n_b);
    ASSERT_MEM_EQ(pk.h, ref.h, pk.n_h * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(pk.l, ref.l, pk.n_l * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(pk.a, ref.a, pk.n_a * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(pk.b_g1, ref.b_g1, pk.n_b * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(pk.b_g2, ref.b_g2, pk.n_b * sizeof(g2_aff_t));
    ASSERT_MEM_EQ(pk.vk.ic, ref.vk.ic, pk.vk.n_ic * sizeof(g1_aff_t));
    g16_pk_free(&pk);
    g16_pk_free(&ref);
}

TEST(setup_matches_naive_recomputation)
{
    struct cuzk_error err_s, *err = &err_s;
    struct synth_params p = {40, 2, false};
    struct g16_shape s;
    ASSERT_OK(synth_build_shape(&s, &p, err), err);
    uint64_t seed = test_seed();
    cuzk_rng rng, rng2;
    cuzk_rng_seed(&rng, seed);
    rng2 = rng;
    struct g16_pk pk;
    ASSERT_OK(g16_setup(&pk, &s, &rng, NULL, err), err);

    /* the same toxic waste, drawn as g16_setup documents: alpha, beta, gamma, delta, tau */
    fr_t x[5];
    for (int i = 0; i < 5; i++) do rand_fr(&x[i], &rng2); while (fr_is_zero(&x[i]));
    const fr_t *alpha = &x[0], *beta = &x[1], *gamma = &x[2], *delta = &x[3], *tau = &x[4];
    unsigned lg = 0;
    while ((1ULL << lg) < s.n_constraints) lg++;
    size_t n = (size_t)1 << lg, nv = s.n_inputs + s.n_aux;
    ASSERT_EQ_U64(pk.n_h, n - 1);
    fr_t *lag = calloc(n, sizeof *lag), *uvw = calloc(3 * nv, sizeof *uvw);
    lagrange_at(lag, s.n_constraints, lg, tau);
    const struct g16_matrix *m[3] = {&s.a, &s.b, &s.c};
    for (int k = 0; k < 3; k++)
        for (uint64_t r = 0; r < s.n_constraints; r++)
            for (uint64_t j = m[k]->row_ptr[r]; j < m[k]->row_ptr[r + 1]; j++) {
                fr_t t;
                fr_mul(&t, &lag[r], &s.coeffs[m[k]->coeff_idx[j]]);
                fr_add(&uvw[k * nv + m[k]->col[j]], &uvw[k * nv + m[k]->col[j]], &t);
            }
    fr_t gi, di, zt, t;
    fr_inv(&gi, gamma);
    fr_inv(&di, delta);
    uint64_t e = n;
    fr_pow(&zt, tau, &e, 1);
    fr_sub(&zt, &zt, &FR_ONE);
    g1_aff_t want;
    g2_aff_t want2;
    for (size_t i = 0; i + 1 < n; i++) {
        uint64_t ei = i;
        fr_pow(&t, tau, &ei, 1);
        fr_mul(&t, &t, &zt);
        fr_mul(&t, &t, &di);
        g1_gen_mul(&want, &t);
        ASSERT_MSG(g1_aff_eq(&want, &pk.h[i]), "h[%zu]", i);
    }
    size_t ka = 0, kb = 0;
    for (size_t i = 0; i < nv; i++) {
        const fr_t *u = &uvw[i], *v = &uvw[nv + i], *w = &uvw[2 * nv + i];
        fr_t q;
        fr_mul(&q, beta, u);
        fr_mul(&t, alpha, v);
        fr_add(&q, &q, &t);
        fr_add(&q, &q, w);
        fr_mul(&q, &q, i < s.n_inputs ? &gi : &di);
        g1_gen_mul(&want, &q);
        if (i < s.n_inputs) ASSERT_MSG(g1_aff_eq(&want, &pk.vk.ic[i]), "ic[%zu]", i);
        else ASSERT_MSG(g1_aff_eq(&want, &pk.l[i - s.n_inputs]), "l[%zu]", i - s.n_inputs);
        if (!fr_is_zero(u)) {   /* identities are dropped from A and B */
            g1_gen_mul(&want, u);
            ASSERT(ka < pk.n_a);
            ASSERT_MSG(g1_aff_eq(&want, &pk.a[ka++]), "a var %zu", i);
        }
        if (!fr_is_zero(v)) {
            g1_gen_mul(&want, v);
            g2_gen_mul(&want2, v);
            ASSERT(kb < pk.n_b);
            ASSERT_MSG(g1_aff_eq(&want, &pk.b_g1[kb]), "b_g1 var %zu", i);
            ASSERT_MSG(g2_aff_eq(&want2, &pk.b_g2[kb++]), "b_g2 var %zu", i);
        }
    }
    ASSERT_EQ_U64(ka, pk.n_a);
    ASSERT_EQ_U64(kb, pk.n_b);
    ASSERT_EQ_U64(pk.n_a, s.n_inputs + s.a_aux_count);
    ASSERT_EQ_U64(pk.n_b, s.b_inp_count + s.b_aux_count);
    g1_gen_mul(&want, alpha);
    ASSERT(g1_aff_eq(&want, &pk.vk.alpha_g1));
    g1_gen_mul(&want, beta);
    ASSERT(g1_aff_eq(&want, &pk.vk.beta_g1));
    g1_gen_mul(&want, delta);
    ASSERT(g1_aff_eq(&want, &pk.vk.delta_g1));
    g2_gen_mul(&want2, beta);
    ASSERT(g2_aff_eq(&want2, &pk.vk.beta_g2));
    g2_gen_mul(&want2, gamma);
    ASSERT(g2_aff_eq(&want2, &pk.vk.gamma_g2));
    g2_gen_mul(&want2, delta);
    ASSERT(g2_aff_eq(&want2, &pk.vk.delta_g2));
    free(lag);
    free(uvw);
    g16_pk_free(&pk);
    g16_shape_free(&s);
}

TEST(setup_rejects_unconstrained_aux)
{
    struct cuzk_error err_s, *err = &err_s;
    struct g16_builder *b = g16_builder_new(false, err);
    uint32_t x = g16_alloc_aux(b);
    (void)g16_alloc_aux(b);   /* never used */
    struct g16_term t = {x, FR_ONE};
    ASSERT_OK(g16_enforce(b, (struct g16_lc){&t, 1}, (struct g16_lc){&t, 1}, (struct g16_lc){&t, 1}), err);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, err), err);
    g16_builder_free(b);
    cuzk_rng rng;
    cuzk_rng_seed(&rng, 1);
    struct g16_pk pk;
    ASSERT_CODE(g16_setup(&pk, &s, &rng, NULL, err), CUZK_E_INVALID_ARG, err);
    ASSERT_STR_CONTAINS(err->msg, "aux variable 1 is unconstrained");
    g16_shape_free(&s);
}

#define NAIVE_MSM(G, jac_t, aff_t)                                                             \
    static void G##_naive(jac_t *out, const aff_t *bases, const fr_t *sc, size_t n)            \
    {                                                                                          \
        G##_jac_set_inf(out);                                                                  \
        for (size_t i = 0; i < n; i++) {                                                       \
            jac_t p, q;                                                                        \
            G##_jac_from_aff(&p, &bases[i]);                                                   \
            G##_jac_mul_fr(&q, &p, &sc[i]);                                                    \
            G##_jac_add(out, out, &q);                                                         \
        }                                                                                      \
    }
NAIVE_MSM(g1, g1_jac_t, g1_aff_t)
NAIVE_MSM(g2, g2_jac_t, g2_aff_t)

static void check_backend_vs_naive(struct fixture *f)
{
    struct cuzk_error err_s, *err = &err_s;
    const struct g16_shape *s = &f->s;
    struct g16_assignment w = {f->in, f->aux};
    struct g16_msm_results got;
    struct g16_timings tm = {0};
    ASSERT_OK(g16_backend_cpu(&got, s, &f->pk, &w, NULL, &tm, err), err);

    size_t n = f->pk.n_h + 1;
    unsigned lg = g16_domain_lg(f->pk.n_h);
    fr_t *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *a), *c = calloc(n, sizeof *a);
    ASSERT_OK(g16_eval_abc(a, b, c, s, &w, NULL, err), err);
    g16_compute_h(a, b, c, lg, NULL);
    g1_jac_t want;
    g2_jac_t want2;
    g1_naive(&want, f->pk.h, a, f->pk.n_h);
    ASSERT(g1_jac_eq(&want, &got.h));
    g1_naive(&want, f->pk.l, f->aux, s->n_aux);
    ASSERT(g1_jac_eq(&want, &got.l));
    /* A and B scalars in density order */
    size_t ni = s->n_inputs, ka = 0, kb = 0;
    fr_t *sa = calloc(ni + s->n_aux, sizeof *sa), *sb = calloc(ni + s->n_aux, sizeof *sb);
    for (size_t i = 0; i < ni; i++) {
        sa[ka++] = f->in[i];
        if (bit(s->b_inp_density, i)) sb[kb++] = f->in[i];
    }
    for (size_t i = 0; i < s->n_aux; i++) {
        if (bit(s->a_aux_density, i)) sa[ka++] = f->aux[i];
        if (bit(s->b_aux_density, i)) sb[kb++] = f->aux[i];
    }
    ASSERT_EQ_U64(ka, f->pk.n_a);
    ASSERT_EQ_U64(kb, f->pk.n_b);
    g1_naive(&want, f->pk.a, sa, ka);
    ASSERT(g1_jac_eq(&want, &got.a));
    g1_naive(&want, f->pk.b_g1, sb, kb);
    ASSERT(g1_jac_eq(&want, &got.b_g1));
    g2_naive(&want2, f->pk.b_g2, sb, kb);
    ASSERT(g2_jac_eq(&want2, &got.b_g2));
    ASSERT(tm.abc_ns > 0 && tm.msm_b_g2_ns > 0);
    free(a), free(b), free(c), free(sa), free(sb);
}

TEST(backend_msms_match_naive)
{
    struct fixture f;
    fixture_init(&f, 150, 3, test_seed());
    check_backend_vs_naive(&f);
    /* a witness with no 0/1 structure at all (not satisfying; the MSMs don't care) */
    cuzk_rng *rng = test_rng();
    for (uint32_t i = 1; i < f.s.n_inputs; i++) rand_fr(&f.in[i], rng);
    for (uint32_t i = 0; i < f.s.n_aux; i++) rand_fr(&f.aux[i], rng);
    check_backend_vs_naive(&f);
    fixture_fini(&f);
}

TEST(proof_deterministic_across_runs_and_pools)
{
    struct cuzk_error err_s, *err = &err_s;
    struct fixture f;
    fixture_init(&f, 3000, 4, 7);
    struct g16_assignment w[2] = {{f.in, f.aux}, {f.in, f.aux}};
    fr_t r[2], s[2];
    cuzk_rng *rng = test_rng();
    for (int i = 0; i < 2; i++) rand_fr(&r[i], rng), rand_fr(&s[i], rng);
    struct g16_proof p1[2], p2[2], p3;
    struct g16_timings tm;
    ASSERT_OK(g16_prove(p1, &f.s, &f.pk, w, 2, r, s, NULL, NULL, &tm, err), err);
    struct pool *one = pool_new(1, err);
    ASSERT(one);
    ASSERT_EQ_INT(pool_size(one), 1);
    ASSERT_OK(g16_prove(p2, &f.s, &f.pk, w, 2, r, s, g16_backend_cpu, one, NULL, err), err);
    pool_free(one);
    ASSERT_MEM_EQ(&p1[0], &p2[0], sizeof p1[0]);
    ASSERT_MEM_EQ(&p1[1], &p2[1], sizeof p1[1]);
    ASSERT(memcmp(&p1[0], &p1[1], sizeof p1[0]) != 0);   /* different blinding */
    ASSERT_OK(g16_prove(&p3, &f.s, &f.pk, w, 1, &r[1], &s[1], NULL, NULL, NULL, err), err);
    ASSERT_MEM_EQ(&p3, &p1[1], sizeof p3);
    ASSERT(tm.total_ns >= tm.abc_ns + tm.ntt_ns);
    /* OS randomness: two proofs differ */
    ASSERT_OK(g16_prove(p2, &f.s, &f.pk, w, 2, NULL, NULL, NULL, NULL, NULL, err), err);
    ASSERT(memcmp(&p2[0], &p2[1], sizeof p2[0]) != 0);
    fixture_fini(&f);
}

TEST(prove_verify_round_trip)
{
    struct cuzk_error err_s, *err = &err_s;
    /* sizes around a power of two: 2^k - input rows exactly fills the domain, +1 doubles it */
    uint64_t sizes[3] = {1024 - 4, 1024 - 3, 300};
    for (int k = 0; k < 3; k++) {
        struct fixture f;
        fixture_init(&f, sizes[k], 3, 100 + k);
        struct g16_assignment w = {f.in, f.aux};
        struct g16_proof pr;
        ASSERT_OK(g16_prove(&pr, &f.s, &f.pk, &w, 1, NULL, NULL, NULL, NULL, NULL, err), err);
        struct g16_pvk *pvk = g16_pvk_new(&f.pk.vk, err);
        ASSERT(pvk);
        ASSERT_OK(g16_verify(pvk, &pr, f.in + 1, f.s.n_inputs - 1, err), err);
        fr_add(&f.in[2], &f.in[2], &FR_ONE);
        ASSERT_CODE(g16_verify(pvk, &pr, f.in + 1, f.s.n_inputs - 1, err), CUZK_E_VERIFY_FAILED, err);
        g16_pvk_free(pvk);
        fixture_fini(&f);
    }
}

TEST(prove_rejects_mismatched_key)
{
    struct cuzk_error err_s, *err = &err_s;
    struct fixture f, g;
    fixture_init(&f, 200, 2, 1);
    fixture_init(&g, 300, 2, 2);
    struct g16_assignment w = {f.in, f.aux};
    struct g16_proof pr;
    ASSERT_CODE(g16_prove(&pr, &f.s, &g.pk, &w, 1, NULL, NULL, NULL, NULL, NULL, err),
                CUZK_E_INVALID_ARG, err);
    ASSERT_STR_CONTAINS(err->msg, "key does not match the shape");
    fr_t r = FR_ONE;
    ASSERT_CODE(g16_prove(&pr, &f.s, &f.pk, &w, 1, &r, NULL, NULL, NULL, NULL, err),
                CUZK_E_INVALID_ARG, err);
    fixture_fini(&f);
    fixture_fini(&g);
}

TEST(setup_and_prove_survive_allocation_failures)
{
    struct cuzk_error err_s, *err = &err_s;
    struct synth_params p = {120, 2, false};
    struct g16_shape s;
    ASSERT_OK(synth_build_shape(&s, &p, err), err);
    fr_t *in = calloc(s.n_inputs, sizeof *in), *aux = calloc(s.n_aux, sizeof *aux);
    ASSERT_OK(synth_witness(in, aux, &s, &p, 3, err), err);
    struct g16_assignment w = {in, aux};
    int ok_setup = 0, ok_prove = 0;
    for (long k = 0; k < 200 && !(ok_setup && ok_prove); k++) {
        cuzk_rng rng;
        cuzk_rng_seed(&rng, 5);
        struct g16_pk pk;
        cuzk_alloc_fail_after(k);
        int rc = g16_setup(&pk, &s, &rng, NULL, err);
        cuzk_alloc_fail_after(-1);
        ASSERT_MSG(rc == CUZK_OK || rc == CUZK_E_NOMEM, "setup, fail after %ld: %s", k, err->msg);
        if (rc) continue;
        ok_setup = 1;
        struct g16_proof pr;
        fr_t r = FR_ONE, sb = FR_ONE;
        cuzk_alloc_fail_after(k);
        rc = g16_prove(&pr, &s, &pk, &w, 1, &r, &sb, NULL, NULL, NULL, err);
        cuzk_alloc_fail_after(-1);
        ASSERT_MSG(rc == CUZK_OK || rc == CUZK_E_NOMEM, "prove, fail after %ld: %s", k, err->msg);
        if (rc == CUZK_OK) ok_prove = 1;
        g16_pk_free(&pk);
    }
    ASSERT(ok_setup && ok_prove);
    free(in);
    free(aux);
    g16_shape_free(&s);
}
