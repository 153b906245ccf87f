/* test_verify.c: the Groth16 verifier. Oracle 1: proofs simulated from known toxic waste
 * (C solved in Fr from the verification equation), independent of setup and prover.
 * Oracle 2: setup -> prove -> verify on hand-written circuits, with tamper tests. */
#include <stdio.h>
#include <unistd.h>

#include "cuzk/ec.h"
#include "cuzk/groth16.h"
#include "test.h"

static fr_t fr_u(uint64_t v)
{
    fr_t r;
    fr_from_u64(&r, v);
    return r;
}

static void rand_fr(fr_t *s)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    fr_from_wide_le(s, b);
}

static void g1_mul(g1_aff_t *out, const fr_t *k)
{
    g1_jac_t g, t;
    g1_jac_from_aff(&g, &G1_GENERATOR);
    g1_jac_mul_fr(&t, &g, k);
    g1_jac_to_aff(out, &t);
}

static void g2_mul(g2_aff_t *out, const fr_t *k)
{
    g2_jac_t g, t;
    g2_jac_from_aff(&g, &G2_GENERATOR);
    g2_jac_mul_fr(&t, &g, k);
    g2_jac_to_aff(out, &t);
}

/* ------------------------------------------------------- simulated proofs -- */

/* Toxic waste and the discrete logs of ic, so proofs can be made without a prover. */
struct sim {
    fr_t alpha, beta, gamma, delta;
    fr_t *k;          /* ic[i] = k[i] G1 */
    struct g16_vk vk;
};

static void sim_new(struct sim *s, uint32_t n_ic)
{
    rand_fr(&s->alpha);
    rand_fr(&s->beta);
    rand_fr(&s->gamma);
    rand_fr(&s->delta);
    s->k = malloc(n_ic * sizeof(fr_t));
    memset(&s->vk, 0, sizeof s->vk);
    g1_mul(&s->vk.alpha_g1, &s->alpha);
    g1_mul(&s->vk.beta_g1, &s->beta);
    g2_mul(&s->vk.beta_g2, &s->beta);
    g2_mul(&s->vk.gamma_g2, &s->gamma);
    g1_mul(&s->vk.delta_g1, &s->delta);
    g2_mul(&s->vk.delta_g2, &s->delta);
    s->vk.n_ic = n_ic;
    s->vk.ic = cuzk_malloc(n_ic * sizeof(g1_aff_t));
    for (uint32_t i = 0; i < n_ic; i++) {
        rand_fr(&s->k[i]);
        g1_mul(&s->vk.ic[i], &s->k[i]);
    }
}

static void sim_free(struct sim *s)
{
    free(s->k);
    g16_vk_free(&s->vk);
}

/* a b = alpha beta + acc gamma + c delta, acc = k0 + sum x_i k_i  =>  solve for c. */
static void sim_prove(struct g16_proof *p, const struct sim *s, const fr_t *x, size_t n)
{
    fr_t a, b, c, t, acc = s->k[0];
    rand_fr(&a);
    rand_fr(&b);
    for (size_t i = 0; i < n; i++) {
        fr_mul(&t, &x[i], &s->k[i + 1]);
        fr_add(&acc, &acc, &t);
    }
    fr_mul(&c, &a, &b);
    fr_mul(&t, &s->alpha, &s->beta);
    fr_sub(&c, &c, &t);
    fr_mul(&t, &acc, &s->gamma);
    fr_sub(&c, &c, &t);
    ASSERT(fr_inv(&t, &s->delta));
    fr_mul(&c, &c, &t);
    g1_mul(&p->a, &a);
    g2_mul(&p->b, &b);
    g1_mul(&p->c, &c);
}

TEST(simulated_proofs_verify_and_tampering_fails)
{
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    static const uint32_t sizes[] = {1, 2, 4, 40};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        uint32_t n_ic = sizes[z];
        size_t n = n_ic - 1;
        struct sim s;
        sim_new(&s, n_ic);
        fr_t *x = malloc((n + 1) * sizeof(fr_t));
        for (size_t i = 0; i < n; i++) rand_fr(&x[i]);
        if (n > 1) x[1] = FR_ZERO;   /* zero and one inputs are legal too */
        if (n > 2) x[2] = FR_ONE;
        struct g16_proof p, q;
        sim_prove(&p, &s, x, n);
        struct g16_pvk *pvk = g16_pvk_new(&s.vk, err);
        ASSERT(pvk);
        ASSERT_OK(g16_verify(pvk, &p, x, n, err), err);

        /* proof bytes round trip verifies too */
        uint8_t bytes[G16_PROOF_BYTES];
        g16_proof_to_bytes(bytes, &p);
        ASSERT_OK(g16_proof_from_bytes(&q, bytes, err), err);
        ASSERT_OK(g16_verify(pvk, &q, x, n, err), err);

        if (n) {   /* changed input */
            fr_t save = x[0];
            fr_add(&x[0], &x[0], &FR_ONE);
            ASSERT_CODE(g16_verify(pvk, &p, x, n, err), CUZK_E_VERIFY_FAILED, err);
            x[0] = save;
        }
        /* swapped A and C */
        q = p;
        q.a = p.c;
        q.c = p.a;
        ASSERT_CODE(g16_verify(pvk, &q, x, n, err), CUZK_E_VERIFY_FAILED, err);
        /* A negated */
        q = p;
        g1_aff_neg(&q.a, &p.a);
        ASSERT_CODE(g16_verify(pvk, &q, x, n, err), CUZK_E_VERIFY_FAILED, err);
        /* wrong input count */
        ASSERT_CODE(g16_verify(pvk, &p, x, n + 1, err), CUZK_E_INVALID_ARG, err);
        char want[80];
        snprintf(want, sizeof want, "expected %zu, got %zu", n, n + 1);
        ASSERT_STR_CONTAINS(err->msg, want);
        /* identities */
        q = p;
        memset(&q.a, 0, sizeof q.a);
        ASSERT_CODE(g16_verify(pvk, &q, x, n, err), CUZK_E_IDENTITY, err);
        ASSERT_STR_CONTAINS(err->msg, "A is the identity");
        q = p;
        memset(&q.b, 0, sizeof q.b);
        ASSERT_CODE(g16_verify(pvk, &q, x, n, err), CUZK_E_IDENTITY, err);
        ASSERT_STR_CONTAINS(err->msg, "B is the identity");
        q = p;
        memset(&q.c, 0, sizeof q.c);
        ASSERT_CODE(g16_verify(pvk, &q, x, n, err), CUZK_E_IDENTITY, err);
        ASSERT_STR_CONTAINS(err->msg, "C is the identity");
        /* wrong vk: same ic, different delta */
        struct sim s2 = s;
        s2.vk.ic = s.vk.ic;
        rand_fr(&s2.delta);
        g2_mul(&s2.vk.delta_g2, &s2.delta);
        struct g16_pvk *pvk2 = g16_pvk_new(&s2.vk, err);
        ASSERT(pvk2);
        ASSERT_CODE(g16_verify(pvk2, &p, x, n, err), CUZK_E_VERIFY_FAILED, err);
        g16_pvk_free(pvk2);
        g16_pvk_free(pvk);
        free(x);
        sim_free(&s);
    }
}

/* Flip every byte of a proof in turn: each must either fail to decode or fail to verify. */
TEST(flipped_proof_bytes_rejected)
{
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    struct sim s;
    sim_new(&s, 2);
    fr_t x = fr_u(12345);
    struct g16_proof p, q;
    sim_prove(&p, &s, &x, 1);
    struct g16_pvk *pvk = g16_pvk_new(&s.vk, err);
    uint8_t b[G16_PROOF_BYTES];
    g16_proof_to_bytes(b, &p);
    int decode_fail = 0, verify_fail = 0;
    /* all 192 bytes with the low bit (cheap: ~half fail to decode), and the flag bits */
    for (int i = 0; i < G16_PROOF_BYTES; i++) {
        for (int bit = 0; bit < 8; bit += (i == 0 || i == 48 || i == 144) ? 1 : 7) {
            b[i] ^= (uint8_t)(1u << bit);
            int rc = g16_proof_from_bytes(&q, b, err);
            if (rc) {
                decode_fail++;
            } else {
                ASSERT_CODE(g16_verify(pvk, &q, &x, 1, err), CUZK_E_VERIFY_FAILED, err);
                verify_fail++;
            }
            b[i] ^= (uint8_t)(1u << bit);
        }
    }
    ASSERT(decode_fail > 0 && verify_fail > 0);
    ASSERT_OK(g16_proof_from_bytes(&q, b, err), err);
    ASSERT_OK(g16_verify(pvk, &q, &x, 1, err), err);
    g16_pvk_free(pvk);
    sim_free(&s);
}

TEST(pvk_rejects_empty_vk)
{
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    struct g16_vk vk;
    memset(&vk, 0, sizeof vk);
    ASSERT(g16_pvk_new(&vk, err) == NULL);
    ASSERT_EQ_INT(err->code, CUZK_E_INVALID_ARG);
}

/* -------------------------------------------------------- prove -> verify -- */

/* A circuit under construction plus its witness, kept in lockstep. */
struct circ {
    struct g16_builder *b;
    fr_t in[1024], aux[4096];
    uint32_t n_in, n_aux;
};

static void circ_new(struct circ *c)
{
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    c->b = g16_builder_new(false, err);
    ASSERT(c->b);
    c->in[0] = FR_ONE;
    c->n_in = 1;
    c->n_aux = 0;
}
static uint32_t circ_input(struct circ *c, const fr_t *v)
{
    uint32_t h = g16_alloc_input(c->b);
    ASSERT_EQ_U64(h, G16_VAR_INPUT(c->n_in));
    c->in[c->n_in++] = *v;
    return h;
}
static uint32_t circ_aux(struct circ *c, const fr_t *v)
{
    uint32_t h = g16_alloc_aux(c->b);
    ASSERT_EQ_U64(h, G16_VAR_AUX(c->n_aux));
    c->aux[c->n_aux++] = *v;
    return h;
}
static void circ_enforce(struct circ *c, const struct g16_term *a, size_t na, const struct g16_term *b,
                         size_t nb, const struct g16_term *cc, size_t nc)
{
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    ASSERT_OK(g16_enforce(c->b, (struct g16_lc){a, na}, (struct g16_lc){b, nb}, (struct g16_lc){cc, nc}), err);
}

/* setup, prove, check bytes round trip and verify; then the tamper cases. full: also a
 * second key and the .params/.vk round trip (each costs another setup's worth of time). */
static void prove_and_verify(struct circ *c, bool full)
{
    struct cuzk_error errbuf = {0}, *err = &errbuf;
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(c->b, &s, err), err);
    g16_builder_free(c->b);
    struct g16_assignment w = {c->in, c->aux};
    ASSERT_OK(g16_check(&s, &w, NULL, err), err);
    struct g16_pk pk, pk2;
    ASSERT_OK(g16_setup(&pk, &s, test_rng(), NULL, err), err);
    ASSERT_EQ_U64(pk.vk.n_ic, s.n_inputs);
    struct g16_proof p, q;
    ASSERT_OK(g16_prove(&p, &s, &pk, &w, 1, NULL, NULL, NULL, NULL, NULL, err), err);
    struct g16_pvk *pvk = g16_pvk_new(&pk.vk, err);
    ASSERT(pvk);
    size_t n = s.n_inputs - 1;
    fr_t *x = c->in + 1;
    ASSERT_OK(g16_verify(pvk, &p, x, n, err), err);

    uint8_t bytes[G16_PROOF_BYTES];
    g16_proof_to_bytes(bytes, &p);
    ASSERT_OK(g16_proof_from_bytes(&q, bytes, err), err);
    ASSERT_OK(g16_verify(pvk, &q, x, n, err), err);
    bytes[100] ^= 4;   /* inside B */
    if (g16_proof_from_bytes(&q, bytes, err) == CUZK_OK)
        ASSERT_CODE(g16_verify(pvk, &q, x, n, err), CUZK_E_VERIFY_FAILED, err);

    if (n) {
        fr_t save = x[n - 1];
        fr_add(&x[n - 1], &x[n - 1], &FR_ONE);
        ASSERT_CODE(g16_verify(pvk, &p, x, n, err), CUZK_E_VERIFY_FAILED, err);
        x[n - 1] = save;
    }
    q = p;
    q.a = p.c;
    q.c = p.a;
    ASSERT_CODE(g16_verify(pvk, &q, x, n, err), CUZK_E_VERIFY_FAILED, err);
    ASSERT_CODE(g16_verify(pvk, &p, x, n + 1, err), CUZK_E_INVALID_ARG, err);

    if (!full) goto done;
    /* a key from a second setup of the same shape does not accept the proof */
    ASSERT_OK(g16_setup(&pk2, &s, test_rng(), NULL, err), err);
    struct g16_pvk *pvk2 = g16_pvk_new(&pk2.vk, err);
    ASSERT_CODE(g16_verify(pvk2, &p, x, n, err), CUZK_E_VERIFY_FAILED, err);
    g16_pvk_free(pvk2);
    g16_pk_free(&pk2);

    /* and through the file formats: .params -> prove, .vk -> verify */
    char pp[96], pv[96];
    snprintf(pp, sizeof pp, "/tmp/cuzk_test_verify_%d.params", (int)getpid());
    snprintf(pv, sizeof pv, "/tmp/cuzk_test_verify_%d.vk", (int)getpid());
    ASSERT_OK(g16_params_write(&pk, pp, err), err);
    ASSERT_OK(g16_vk_write(&pk.vk, pv, err), err);
    struct g16_pk pkf;
    struct g16_vk vkf;
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_FULL, .use_cache = false, .progress = 0};
    ASSERT_OK(g16_params_read_ex(&pkf, pp, &o, NULL, NULL, err), err);
    ASSERT_OK(g16_vk_read(&vkf, pv, err), err);
    ASSERT_OK(g16_prove(&q, &s, &pkf, &w, 1, NULL, NULL, NULL, NULL, NULL, err), err);
    struct g16_pvk *pvkf = g16_pvk_new(&vkf, err);
    ASSERT_OK(g16_verify(pvkf, &q, x, n, err), err);
    ASSERT_OK(g16_verify(pvkf, &p, x, n, err), err);
    g16_pvk_free(pvkf);
    g16_vk_free(&vkf);
    g16_pk_free(&pkf);
    remove(pp);
    remove(pv);
done:
    g16_pvk_free(pvk);
    g16_pk_free(&pk);
    g16_shape_free(&s);
}

/* x^3 + x + 5 = out, out public. */
TEST(prove_verify_cubic)
{
    struct circ c;
    circ_new(&c);
    fr_t xv = fr_u(3), x2, x3, outv;
    fr_mul(&x2, &xv, &xv);
    fr_mul(&x3, &x2, &xv);
    fr_add(&outv, &x3, &xv);
    fr_t five = fr_u(5);
    fr_add(&outv, &outv, &five);
    uint32_t out = circ_input(&c, &outv);
    uint32_t x = circ_aux(&c, &xv), sq = circ_aux(&c, &x2), cu = circ_aux(&c, &x3);
    struct g16_term tx = {x, FR_ONE}, tsq = {sq, FR_ONE}, tcu = {cu, FR_ONE};
    circ_enforce(&c, &tx, 1, &tx, 1, &tsq, 1);
    circ_enforce(&c, &tsq, 1, &tx, 1, &tcu, 1);
    struct g16_term sum[3] = {{cu, FR_ONE}, {x, FR_ONE}, {G16_VAR_ONE, five}};
    struct g16_term one = {G16_VAR_ONE, FR_ONE}, to = {out, FR_ONE};
    circ_enforce(&c, sum, 3, &one, 1, &to, 1);
    prove_and_verify(&c, true);
}

/* 300 public inputs, each squared into aux and summed. */
TEST(prove_verify_many_inputs)
{
    struct circ c;
    circ_new(&c);
    fr_t total = FR_ZERO;
    struct g16_term *terms = malloc(300 * sizeof *terms);
    for (int i = 0; i < 300; i++) {
        fr_t v, sqv;
        rand_fr(&v);
        fr_mul(&sqv, &v, &v);
        fr_add(&total, &total, &sqv);
        uint32_t in = circ_input(&c, &v);
        uint32_t sq = circ_aux(&c, &sqv);
        struct g16_term ti = {in, FR_ONE}, ts = {sq, FR_ONE};
        circ_enforce(&c, &ti, 1, &ti, 1, &ts, 1);
        terms[i] = ts;
    }
    uint32_t t = circ_aux(&c, &total);
    struct g16_term one = {G16_VAR_ONE, FR_ONE}, tt = {t, FR_ONE};
    circ_enforce(&c, terms, 300, &one, 1, &tt, 1);
    free(terms);
    prove_and_verify(&c, false);
}

/* 200 boolean aux bits packed into one public input: a mostly 0/1 witness. */
TEST(prove_verify_mostly_bits)
{
    struct circ c;
    circ_new(&c);
    uint64_t bits = cuzk_rng_u64(test_rng());
    fr_t packed = FR_ZERO, pow = FR_ONE;
    struct g16_term *terms = malloc(200 * sizeof *terms);
    uint32_t *bv = malloc(200 * sizeof *bv);
    for (int i = 0; i < 200; i++) {
        bool on = i < 64 ? (bits >> i) & 1 : (i % 3 == 0);
        fr_t v = on ? FR_ONE : FR_ZERO;
        bv[i] = circ_aux(&c, &v);
        if (on) fr_add(&packed, &packed, &pow);
        terms[i] = (struct g16_term){bv[i], pow};
        fr_dbl(&pow, &pow);
    }
    uint32_t in = circ_input(&c, &packed);
    fr_t m1;
    fr_neg(&m1, &FR_ONE);
    for (int i = 0; i < 200; i++) {   /* b * (1 - b) = 0 */
        struct g16_term tb = {bv[i], FR_ONE};
        struct g16_term omb[2] = {{G16_VAR_ONE, FR_ONE}, {bv[i], m1}};
        circ_enforce(&c, &tb, 1, omb, 2, NULL, 0);
    }
    struct g16_term one = {G16_VAR_ONE, FR_ONE}, ti = {in, FR_ONE};
    circ_enforce(&c, terms, 200, &one, 1, &ti, 1);
    free(terms);
    free(bv);
    prove_and_verify(&c, false);
}

/* A squaring chain with exactly `rows` rows in total (input rows included): one public
 * input x, v_i = v_{i-1} * (v_{i-1} + i). */
static void chain(uint64_t rows, bool full)
{
    struct circ c;
    circ_new(&c);
    fr_t x = fr_u(7);
    uint32_t xin = circ_input(&c, &x);
    uint64_t m = rows - 2;   /* two input rows: ONE and x */
    uint32_t prev = xin;
    fr_t pv = x;
    for (uint64_t i = 1; i <= m; i++) {
        fr_t k = fr_u(i), t, nv;
        fr_add(&t, &pv, &k);
        fr_mul(&nv, &pv, &t);
        uint32_t v = circ_aux(&c, &nv);
        struct g16_term ta = {prev, FR_ONE};
        struct g16_term tb[2] = {{prev, FR_ONE}, {G16_VAR_ONE, k}};
        struct g16_term tc = {v, FR_ONE};
        circ_enforce(&c, &ta, 1, tb, 2, &tc, 1);
        prev = v;
        pv = nv;
    }
    prove_and_verify(&c, full);
}

TEST(prove_verify_domain_edges)
{
    static const uint64_t rows[] = {3, 4, 5, 63, 64, 65, 1023, 1024, 1025};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) chain(rows[i], rows[i] == 65);
}
