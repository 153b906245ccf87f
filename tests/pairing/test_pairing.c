/* test_pairing.c: the optimal ate pairing: the published value of e(G1, G2), the final
 * exponentiation against plain exponentiation by 3 (p^12 - 1)/r (GMP), bilinearity, order r,
 * non-degeneracy, infinity, and the multi-pairing product check. The points come from this file's
 * own affine double-and-add, independent of src/ec (ec_points_agree cross-checks src/ec). */
#include <gmp.h>

#include "test.h"

#include "cuzk/pairing.h"

static const char *P_HEX =
    "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf"
    "6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab";
static const char *R_HEX = "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001";

/* ---- field and point helpers (test-local, independent of src/ec) ---- */

static void fp_hex(fp_t *out, const char *hex)
{
    uint8_t b[48];
    for (int i = 0; i < 48; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        b[i] = (uint8_t)v;
    }
    if (fp_from_bytes_be(out, b) != CUZK_OK) test_fail_at(__FILE__, __LINE__, "bad hex %s", hex);
}

/* Generators from the zcash BLS12-381 specification (also IETF pairing-friendly-curves draft). */
static g1_aff_t gen1(void)
{
    g1_aff_t g;
    fp_hex(&g.x, "17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905"
                 "a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb");
    fp_hex(&g.y, "08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af6"
                 "00db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1");
    return g;
}
static g2_aff_t gen2(void)
{
    g2_aff_t g;
    fp_hex(&g.x.c0, "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02"
                    "b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8");
    fp_hex(&g.x.c1, "13e02b6052719f607dacd3a088274f65596bd0d09920b61a"
                    "b5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e");
    fp_hex(&g.y.c0, "0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a7"
                    "6d429a695160d12c923ac9cc3baca289e193548608b82801");
    fp_hex(&g.y.c1, "0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af"
                    "267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be");
    return g;
}

static bool g1_inf(const g1_aff_t *p) { return fp_is_zero(&p->x) && fp_is_zero(&p->y); }
static bool g2_inf(const g2_aff_t *p) { return fp2_is_zero(&p->x) && fp2_is_zero(&p->y); }

/* Affine chord-and-tangent addition on y^2 = x^3 + b (complete for our uses: handles O, P = -Q,
 * P = Q). */
static void g1_add_aff(g1_aff_t *o, const g1_aff_t *p, const g1_aff_t *q)
{
    if (g1_inf(p)) { *o = *q; return; }
    if (g1_inf(q)) { *o = *p; return; }
    fp_t lam, t, x3, y3;
    if (fp_eq(&p->x, &q->x)) {
        fp_t s;
        fp_add(&s, &p->y, &q->y);
        if (fp_is_zero(&s)) { memset(o, 0, sizeof *o); return; }
        fp_sqr(&lam, &p->x);
        fp_add(&t, &lam, &lam);
        fp_add(&lam, &lam, &t);             /* 3x^2 */
        fp_dbl(&t, &p->y);
    } else {
        fp_sub(&lam, &q->y, &p->y);
        fp_sub(&t, &q->x, &p->x);
    }
    fp_inv(&t, &t);
    fp_mul(&lam, &lam, &t);
    fp_sqr(&x3, &lam);
    fp_sub(&x3, &x3, &p->x);
    fp_sub(&x3, &x3, &q->x);
    fp_sub(&t, &p->x, &x3);
    fp_mul(&y3, &lam, &t);
    fp_sub(&y3, &y3, &p->y);
    o->x = x3;
    o->y = y3;
}
static void g2_add_aff(g2_aff_t *o, const g2_aff_t *p, const g2_aff_t *q)
{
    if (g2_inf(p)) { *o = *q; return; }
    if (g2_inf(q)) { *o = *p; return; }
    fp2_t lam, t, x3, y3;
    if (fp2_eq(&p->x, &q->x)) {
        fp2_t s;
        fp2_add(&s, &p->y, &q->y);
        if (fp2_is_zero(&s)) { memset(o, 0, sizeof *o); return; }
        fp2_sqr(&lam, &p->x);
        fp2_add(&t, &lam, &lam);
        fp2_add(&lam, &lam, &t);
        fp2_dbl(&t, &p->y);
    } else {
        fp2_sub(&lam, &q->y, &p->y);
        fp2_sub(&t, &q->x, &p->x);
    }
    fp2_inv(&t, &t);
    fp2_mul(&lam, &lam, &t);
    fp2_sqr(&x3, &lam);
    fp2_sub(&x3, &x3, &p->x);
    fp2_sub(&x3, &x3, &q->x);
    fp2_sub(&t, &p->x, &x3);
    fp2_mul(&y3, &lam, &t);
    fp2_sub(&y3, &y3, &p->y);
    o->x = x3;
    o->y = y3;
}

/* k * P by double-and-add, k an mpz (>= 0). */
static void g1_mul(g1_aff_t *o, const g1_aff_t *p, const mpz_t k)
{
    g1_aff_t acc = {FP_ZERO_ELEM, FP_ZERO_ELEM};
    for (long i = (long)mpz_sizeinbase(k, 2) - 1; i >= 0; i--) {
        g1_add_aff(&acc, &acc, &acc);
        if (mpz_tstbit(k, (mp_bitcnt_t)i)) g1_add_aff(&acc, &acc, p);
    }
    *o = acc;
}
static void g2_mul(g2_aff_t *o, const g2_aff_t *p, const mpz_t k)
{
    g2_aff_t acc = {FP2_ZERO, FP2_ZERO};
    for (long i = (long)mpz_sizeinbase(k, 2) - 1; i >= 0; i--) {
        g2_add_aff(&acc, &acc, &acc);
        if (mpz_tstbit(k, (mp_bitcnt_t)i)) g2_add_aff(&acc, &acc, p);
    }
    *o = acc;
}
static void g1_neg_aff(g1_aff_t *o, const g1_aff_t *p) { o->x = p->x; fp_neg(&o->y, &p->y); }
static void g2_neg_aff(g2_aff_t *o, const g2_aff_t *p) { o->x = p->x; fp2_neg(&o->y, &p->y); }

/* out = a^k with k an mpz, through fp12_pow (generic square and multiply). */
static void gt_pow(fp12_t *o, const fp12_t *a, const mpz_t k)
{
    uint64_t limbs[80] = {0};
    size_t n = 0;
    mpz_export(limbs, &n, -1, 8, 0, 0, k);
    if (n == 0) { *o = FP12_ONE; return; }
    fp12_pow(o, a, limbs, n);
}

static void rand_scalar(mpz_t out, const mpz_t r)
{
    uint64_t w[5];
    cuzk_rng_bytes(test_rng(), w, sizeof w);
    mpz_import(out, 5, -1, 8, 0, 0, w);
    mpz_mod(out, out, r);
    if (mpz_sgn(out) == 0) mpz_set_ui(out, 1);
}

static void rand_fp12(fp12_t *out)
{
    fp2_t *c[6] = {&out->c0.c0, &out->c0.c1, &out->c0.c2, &out->c1.c0, &out->c1.c1, &out->c1.c2};
    for (int i = 0; i < 6; i++) {
        uint64_t l[6];
        cuzk_rng_bytes(test_rng(), l, sizeof l);
        l[5] &= 0x0fffffffffffffffULL;
        fp_to_mont(&c[i]->c0, l);
        cuzk_rng_bytes(test_rng(), l, sizeof l);
        l[5] &= 0x0fffffffffffffffULL;
        fp_to_mont(&c[i]->c1, l);
    }
}

/* ---- tests ---- */

TEST(generators_on_curve_and_order_r)
{
    /* sanity of this file's helpers and constants: y^2 = x^3 + 4 and y^2 = x^3 + 4(u+1),
     * r G = O, (r - 1) G = -G */
    g1_aff_t g1 = gen1(), t1, n1;
    g2_aff_t g2 = gen2(), t2, n2;
    fp_t l, r4;
    fp_sqr(&l, &g1.y);
    fp_sqr(&r4, &g1.x);
    fp_mul(&r4, &r4, &g1.x);
    fp_t four;
    fp_from_u64(&four, 4);
    fp_add(&r4, &r4, &four);
    ASSERT(fp_eq(&l, &r4));
    fp2_t L, R, b2 = {four, four};
    fp2_sqr(&L, &g2.y);
    fp2_sqr(&R, &g2.x);
    fp2_mul(&R, &R, &g2.x);
    fp2_add(&R, &R, &b2);
    ASSERT(fp2_eq(&L, &R));

    mpz_t r;
    mpz_init_set_str(r, R_HEX, 16);
    g1_mul(&t1, &g1, r);
    g2_mul(&t2, &g2, r);
    ASSERT(g1_inf(&t1));
    ASSERT(g2_inf(&t2));
    mpz_sub_ui(r, r, 1);
    g1_mul(&t1, &g1, r);
    g2_mul(&t2, &g2, r);
    g1_neg_aff(&n1, &g1);
    g2_neg_aff(&n2, &g2);
    ASSERT_MEM_EQ(&t1, &n1, sizeof t1);
    ASSERT_MEM_EQ(&t2, &n2, sizeof t2);
    mpz_clear(r);
}

/* Published value: zkcrypto bls12_381 Gt::generator() = pairing(G1 generator, G2 generator),
 * same tower (u^2 = -1, v^3 = u + 1, w^2 = v); here as canonical big-endian hex (converted from
 * the crate's Montgomery limbs), coefficient order c0.c0.c0, c0.c0.c1, c0.c1.c0, ..., c1.c2.c1. */
static const char *GT_GEN_HEX[12] = {
    "1250ebd871fc0a92a7b2d83168d0d727272d441befa15c50"
    "3dd8e90ce98db3e7b6d194f60839c508a84305aaca1789b6",
    "089a1c5b46e5110b86750ec6a532348868a84045483c92b7"
    "af5af689452eafabf1a8943e50439f1d59882a98eaa0170f",
    "1368bb445c7c2d209703f239689ce34c0378a68e72a6b3b2"
    "16da0e22a5031b54ddff57309396b38c881c4c849ec23e87",
    "193502b86edb8857c273fa075a50512937e0794e1e65a761"
    "7c90d8bd66065b1fffe51d7a579973b1315021ec3c19934f",
    "01b2f522473d171391125ba84dc4007cfbf2f8da752f7c74"
    "185203fcca589ac719c34dffbbaad8431dad1c1fb597aaa5",
    "018107154f25a764bd3c79937a45b84546da634b8f6be14a"
    "8061e55cceba478b23f7dacaa35c8ca78beae9624045b4b6",
    "19f26337d205fb469cd6bd15c3d5a04dc88784fbb3d0b2db"
    "dea54d43b2b73f2cbb12d58386a8703e0f948226e47ee89d",
    "06fba23eb7c5af0d9f80940ca771b6ffd5857baaf222eb95"
    "a7d2809d61bfe02e1bfd1b68ff02f0b8102ae1c2d5d5ab1a",
    "11b8b424cd48bf38fcef68083b0b0ec5c81a93b330ee1a67"
    "7d0d15ff7b984e8978ef48881e32fac91b93b47333e2ba57",
    "03350f55a7aefcd3c31b4fcb6ce5771cc6a0e9786ab59733"
    "20c806ad360829107ba810c5a09ffdd9be2291a0c25a99a2",
    "04c581234d086a9902249b64728ffd21a189e87935a95405"
    "1c7cdba7b3872629a4fafc05066245cb9108f0242d0fe3ef",
    "0f41e58663bf08cf068672cbd01a7ec73baca4d72ca93544"
    "deff686bfd6df543d48eaa24afe47e1efde449383b676631",
};

static void gt_generator(fp12_t *o)
{
    fp_t *c[12] = {&o->c0.c0.c0, &o->c0.c0.c1, &o->c0.c1.c0, &o->c0.c1.c1, &o->c0.c2.c0,
                   &o->c0.c2.c1, &o->c1.c0.c0, &o->c1.c0.c1, &o->c1.c1.c0, &o->c1.c1.c1,
                   &o->c1.c2.c0, &o->c1.c2.c1};
    for (int i = 0; i < 12; i++) fp_hex(c[i], GT_GEN_HEX[i]);
}

TEST(known_vector_e_g1_g2)
{
    g1_aff_t g1 = gen1();
    g2_aff_t g2 = gen2();
    fp12_t e, want;
    pairing(&e, &g1, &g2);
    gt_generator(&want);
    ASSERT_MEM_EQ(&e, &want, sizeof e);
    ASSERT(!fp12_is_one(&e));   /* non-degenerate */
}

/* The optimized final exponentiation equals plain exponentiation by 3 (p^12 - 1)/r (the
 * blst/zkcrypto convention, see pairing.h) computed with GMP, both on a Miller loop output and on
 * a random Fp12 element. */
TEST(final_exp_matches_plain_pow)
{
    mpz_t p, r, e;
    mpz_init_set_str(p, P_HEX, 16);
    mpz_init_set_str(r, R_HEX, 16);
    mpz_init(e);
    mpz_pow_ui(e, p, 12);
    mpz_sub_ui(e, e, 1);
    ASSERT(mpz_divisible_p(e, r));
    mpz_divexact(e, e, r);
    mpz_mul_ui(e, e, 3);

    g1_aff_t g1 = gen1();
    g2_aff_t g2 = gen2();
    fp12_t f, got, want;
    pairing_miller_loop_n(&f, &g1, &g2, 1);
    pairing_final_exp(&got, &f);
    gt_pow(&want, &f, e);
    ASSERT_MEM_EQ(&got, &want, sizeof got);

    rand_fp12(&f);
    pairing_final_exp(&got, &f);
    gt_pow(&want, &f, e);
    ASSERT_MEM_EQ(&got, &want, sizeof got);
    mpz_clears(p, r, e, NULL);
}

TEST(order_r_and_non_degenerate)
{
    mpz_t r;
    mpz_init_set_str(r, R_HEX, 16);
    g1_aff_t g1 = gen1();
    g2_aff_t g2 = gen2();
    fp12_t e, t;
    pairing(&e, &g1, &g2);
    ASSERT(!fp12_is_one(&e));
    gt_pow(&t, &e, r);
    ASSERT(fp12_is_one(&t));
    mpz_clear(r);
}

TEST(bilinearity)
{
    mpz_t r, a, b, ab;
    mpz_init_set_str(r, R_HEX, 16);
    mpz_inits(a, b, ab, NULL);
    g1_aff_t g1 = gen1(), ap;
    g2_aff_t g2 = gen2(), bq, aq;
    for (int it = 0; it < 2; it++) {
        rand_scalar(a, r);
        rand_scalar(b, r);
        mpz_mul(ab, a, b);
        mpz_mod(ab, ab, r);
        g1_mul(&ap, &g1, a);
        g2_mul(&bq, &g2, b);
        g2_mul(&aq, &g2, a);
        fp12_t e, eab, want, t;
        pairing(&e, &g1, &g2);
        pairing(&eab, &ap, &bq);
        gt_pow(&want, &e, ab);
        ASSERT_MEM_EQ(&eab, &want, sizeof eab);   /* e(aP, bQ) = e(P, Q)^(ab) */
        pairing(&eab, &ap, &g2);
        pairing(&t, &g1, &aq);
        ASSERT_MEM_EQ(&eab, &t, sizeof t);        /* e(aP, Q) = e(P, aQ) */
    }
    /* linearity in each argument: e(P1 + P2, Q) = e(P1, Q) e(P2, Q) */
    g1_aff_t p1, p2, s;
    rand_scalar(a, r);
    rand_scalar(b, r);
    g1_mul(&p1, &g1, a);
    g1_mul(&p2, &g1, b);
    g1_add_aff(&s, &p1, &p2);
    fp12_t e1, e2, es;
    pairing(&e1, &p1, &g2);
    pairing(&e2, &p2, &g2);
    pairing(&es, &s, &g2);
    fp12_mul(&e1, &e1, &e2);
    ASSERT(fp12_eq(&e1, &es));
    mpz_clears(r, a, b, ab, NULL);
}

TEST(infinity_gives_one)
{
    g1_aff_t g1 = gen1(), o1 = {FP_ZERO_ELEM, FP_ZERO_ELEM};
    g2_aff_t g2 = gen2(), o2 = {FP2_ZERO, FP2_ZERO};
    fp12_t e;
    pairing(&e, &o1, &g2);
    ASSERT(fp12_is_one(&e));
    pairing(&e, &g1, &o2);
    ASSERT(fp12_is_one(&e));
    pairing(&e, &o1, &o2);
    ASSERT(fp12_is_one(&e));
    ASSERT(pairing_product_is_one(NULL, NULL, 0));
    ASSERT(pairing_product_is_one(&o1, &g2, 1));
    ASSERT(!pairing_product_is_one(&g1, &g2, 1));
    pairing_miller_loop_n(&e, &o1, &g2, 1);
    ASSERT(fp12_is_one(&e));
}

TEST(product_check)
{
    mpz_t r, a;
    mpz_init_set_str(r, R_HEX, 16);
    mpz_init(a);
    rand_scalar(a, r);
    g1_aff_t ps[4], g1 = gen1();
    g2_aff_t qs[4], g2 = gen2();
    /* e(P, -Q) e(P, Q) = 1 */
    g1_mul(&ps[0], &g1, a);
    ps[1] = ps[0];
    qs[0] = g2;
    g2_neg_aff(&qs[1], &g2);
    ASSERT(pairing_product_is_one(ps, qs, 2));
    /* e(aP, Q) e(-P, aQ) = 1, with an infinity pair in the middle */
    ps[1] = (g1_aff_t){FP_ZERO_ELEM, FP_ZERO_ELEM};
    qs[1] = g2;
    g1_neg_aff(&ps[2], &g1);
    g2_mul(&qs[2], &g2, a);
    ASSERT(pairing_product_is_one(ps, qs, 3));
    /* a wrong pair: e(aP, Q) e(-P, (a+1)Q) != 1 */
    mpz_add_ui(a, a, 1);
    g2_mul(&qs[2], &g2, a);
    ASSERT(!pairing_product_is_one(ps, qs, 3));
    /* the shared Miller loop is exactly the product of single loops */
    fp12_t f, f0, f2;
    pairing_miller_loop_n(&f, ps, qs, 3);
    pairing_miller_loop_n(&f0, &ps[0], &qs[0], 1);
    pairing_miller_loop_n(&f2, &ps[2], &qs[2], 1);
    fp12_mul(&f0, &f0, &f2);
    ASSERT(fp12_eq(&f, &f0));
    mpz_clears(r, a, NULL);
}

/* More pairs than one stack chunk (16), with skipped pairs at both ends of a chunk. */
TEST(product_check_many_pairs)
{
    enum { N = 37 };
    mpz_t r, k;
    mpz_init_set_str(r, R_HEX, 16);
    mpz_init(k);
    g1_aff_t ps[N], g1 = gen1(), base[3];
    g2_aff_t qs[N], g2 = gen2(), nq;
    g2_neg_aff(&nq, &g2);
    for (int i = 0; i < 3; i++) {
        rand_scalar(k, r);
        g1_mul(&base[i], &g1, k);
    }
    /* pairs (P_i, Q), (P_i, -Q) cancel; pair 14/15 has P = O and pair 36 has Q = O */
    for (int i = 0; i + 1 < N; i += 2) {
        ps[i] = ps[i + 1] = base[(i / 2) % 3];
        qs[i] = g2;
        qs[i + 1] = nq;
    }
    ps[N - 1] = base[0];
    qs[N - 1] = (g2_aff_t){FP2_ZERO, FP2_ZERO};
    ps[14] = ps[15] = (g1_aff_t){FP_ZERO_ELEM, FP_ZERO_ELEM};
    ASSERT(pairing_product_is_one(ps, qs, N));
    ps[20] = base[(20 / 2 + 1) % 3];   /* break one pair */
    ASSERT(!pairing_product_is_one(ps, qs, N));
    mpz_clears(r, k, NULL);
}

/* pairing_miller_loop_shared (one Q, k P's; used by SnarkPack) gives for each j exactly the
 * Miller value of pairing_miller_loop_n over the same pairs, across chunk boundaries and with
 * points at infinity on either side. */
TEST(miller_loop_shared_matches_plain)
{
    enum { N = 37, K = PAIRING_SHARED_MAX };
    mpz_t r, k;
    mpz_init_set_str(r, R_HEX, 16);
    mpz_init(k);
    g1_aff_t ps[K][N], g1 = gen1();
    g2_aff_t qs[N], g2 = gen2();
    for (int i = 0; i < N; i++) {
        rand_scalar(k, r);
        g2_mul(&qs[i], &g2, k);
        for (int j = 0; j < K; j++) {
            rand_scalar(k, r);
            g1_mul(&ps[j][i], &g1, k);
        }
    }
    qs[5] = (g2_aff_t){FP2_ZERO, FP2_ZERO};
    ps[1][7] = (g1_aff_t){FP_ZERO_ELEM, FP_ZERO_ELEM};
    for (int j = 0; j < K; j++) ps[j][20] = ps[1][7];     /* all P's of one Q at infinity */
    const g1_aff_t *lists[K];
    for (int j = 0; j < K; j++) lists[j] = ps[j];
    for (size_t kk = 1; kk <= K; kk++) {
        fp12_t outs[K], want;
        pairing_miller_loop_shared(outs, kk, lists, qs, N);
        for (size_t j = 0; j < kk; j++) {
            pairing_miller_loop_n(&want, ps[j], qs, N);
            ASSERT(fp12_eq(&outs[j], &want));
        }
    }
    mpz_clears(r, k, NULL);
}

/* Integration with src/ec: its generators and scalar multiplication agree with this file's
 * helpers, and its points pass the product check. */
TEST(ec_points_agree)
{
    g1_aff_t g1 = gen1(), a1, b1;
    g2_aff_t g2 = gen2(), a2, b2;
    ASSERT_MEM_EQ(&G1_GENERATOR, &g1, sizeof g1);
    ASSERT_MEM_EQ(&G2_GENERATOR, &g2, sizeof g2);
    mpz_t r, k;
    mpz_init_set_str(r, R_HEX, 16);
    mpz_init(k);
    rand_scalar(k, r);
    uint64_t kl[4] = {0};
    mpz_export(kl, NULL, -1, 8, 0, 0, k);
    g1_jac_t j1;
    g2_jac_t j2;
    g1_jac_from_aff(&j1, &g1);
    g1_jac_mul_u64s(&j1, &j1, kl, 4);
    g1_jac_to_aff(&a1, &j1);
    g2_jac_from_aff(&j2, &g2);
    g2_jac_mul_u64s(&j2, &j2, kl, 4);
    g2_jac_to_aff(&a2, &j2);
    g1_mul(&b1, &g1, k);
    g2_mul(&b2, &g2, k);
    ASSERT_MEM_EQ(&a1, &b1, sizeof a1);
    ASSERT_MEM_EQ(&a2, &b2, sizeof a2);
    g1_aff_t ps[2] = {a1, g1};
    g2_aff_t qs[2] = {g2, a2};
    g1_aff_neg(&ps[1], &g1);
    ASSERT(pairing_product_is_one(ps, qs, 2));
    mpz_clears(r, k, NULL);
}
