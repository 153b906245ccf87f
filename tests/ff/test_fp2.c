/* test_fp2.c: Fp2 = Fp[u]/(u^2 + 1) against a GMP model (pairs of mpz mod p) on random and edge
 * inputs, for both the x86-64 adx and the portable Fp code. The Fp conversions are
 * tests/ff/gmp_oracle.h's. */
#include "cuzk/ff.h"

#include "gmp_oracle_fp.h"

#define NRAND 20000

typedef struct { mpz_t c0, c1; } m2;   /* the model: c0 + c1 u */

static void m2_init(m2 *a) { mpz_inits(a->c0, a->c1, NULL); }
static void m2_clear(m2 *a) { mpz_clears(a->c0, a->c1, NULL); }

static void to_fp2(fp2_t *a, const m2 *x)
{
    from_mpz(&a->c0, x->c0);
    from_mpz(&a->c1, x->c1);
}

static void check_eq2(const fp2_t *got, const m2 *want, const char *what, int i)
{
    mpz_t g0, g1;
    mpz_inits(g0, g1, NULL);
    to_mpz(g0, &got->c0);
    to_mpz(g1, &got->c1);
    if (mpz_cmp(g0, want->c0) || mpz_cmp(g1, want->c1)) {
        gmp_printf("  %s #%d:\n  got  %Zx + %Zx u\n  want %Zx + %Zx u\n", what, i, g0, g1,
                   want->c0, want->c1);
        ASSERT_MSG(0, "%s mismatch", what);
    }
    mpz_clears(g0, g1, NULL);
}

/* model arithmetic mod p */
static void m2_mul(m2 *o, const m2 *a, const m2 *b)
{
    mpz_t t0, t1, t2;
    mpz_inits(t0, t1, t2, NULL);
    mpz_mul(t0, a->c0, b->c0);
    mpz_mul(t1, a->c1, b->c1);
    mpz_sub(t2, t0, t1);   /* u^2 = -1 */
    mpz_mul(t0, a->c0, b->c1);
    mpz_addmul(t0, a->c1, b->c0);
    mpz_mod(o->c0, t2, P);
    mpz_mod(o->c1, t0, P);
    mpz_clears(t0, t1, t2, NULL);
}
static void m2_pow(m2 *o, const m2 *a, const mpz_t e)
{
    m2 acc, base;
    m2_init(&acc);
    m2_init(&base);
    mpz_set_ui(acc.c0, 1);
    mpz_set(base.c0, a->c0);
    mpz_set(base.c1, a->c1);
    for (long b = (long)mpz_sizeinbase(e, 2) - 1; b >= 0; b--) {
        m2_mul(&acc, &acc, &acc);
        if (mpz_tstbit(e, (mp_bitcnt_t)b)) m2_mul(&acc, &acc, &base);
    }
    mpz_set(o->c0, acc.c0);
    mpz_set(o->c1, acc.c1);
    m2_clear(&acc);
    m2_clear(&base);
}
static void m2_norm(mpz_t n, const m2 *a)
{
    mpz_mul(n, a->c0, a->c0);
    mpz_addmul(n, a->c1, a->c1);
    mpz_mod(n, n, P);
}

static void rand_fp(mpz_t r, int i)
{
    cuzk_rng *g = test_rng();
    switch (i % 16) {   /* some edge values: 0, 1, p-1, (p-1)/2 */
    case 0: mpz_set_ui(r, 0); return;
    case 1: mpz_set_ui(r, 1); return;
    case 2: mpz_sub_ui(r, P, 1); return;
    case 3: mpz_sub_ui(r, P, 1), mpz_fdiv_q_2exp(r, r, 1); return;
    default: break;
    }
    uint64_t l[6];
    for (int k = 0; k < 6; k++) l[k] = cuzk_rng_u64(g);
    mpz_import(r, 6, -1, 8, 0, 0, l);
    mpz_mod(r, r, P);
}
static void rand_m2(m2 *a, int i)
{
    cuzk_rng *g = test_rng();
    rand_fp(a->c0, i < 256 ? i / 16 : (int)(cuzk_rng_u64(g) % 64));
    rand_fp(a->c1, i < 256 ? i : (int)(cuzk_rng_u64(g) % 64));
}

TEST(fp2_arith)
{
    setup();
    m2 x, y, w;
    m2_init(&x), m2_init(&y), m2_init(&w);
    mpz_t t;
    mpz_init(t);
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        for (int i = 0; i < NRAND; i++) {
            rand_m2(&x, i);
            rand_m2(&y, i * 7 + 3);
            fp2_t a, b, o;
            to_fp2(&a, &x);
            to_fp2(&b, &y);

            fp2_add(&o, &a, &b);
            mpz_add(w.c0, x.c0, y.c0), mpz_mod(w.c0, w.c0, P);
            mpz_add(w.c1, x.c1, y.c1), mpz_mod(w.c1, w.c1, P);
            check_eq2(&o, &w, "fp2_add", i);
            fp2_sub(&o, &a, &b);
            mpz_sub(w.c0, x.c0, y.c0), mpz_mod(w.c0, w.c0, P);
            mpz_sub(w.c1, x.c1, y.c1), mpz_mod(w.c1, w.c1, P);
            check_eq2(&o, &w, "fp2_sub", i);
            fp2_dbl(&o, &a);
            mpz_mul_2exp(w.c0, x.c0, 1), mpz_mod(w.c0, w.c0, P);
            mpz_mul_2exp(w.c1, x.c1, 1), mpz_mod(w.c1, w.c1, P);
            check_eq2(&o, &w, "fp2_dbl", i);
            fp2_neg(&o, &a);
            mpz_neg(w.c0, x.c0), mpz_mod(w.c0, w.c0, P);
            mpz_neg(w.c1, x.c1), mpz_mod(w.c1, w.c1, P);
            check_eq2(&o, &w, "fp2_neg", i);
            fp2_conj(&o, &a);
            mpz_set(w.c0, x.c0);
            mpz_neg(w.c1, x.c1), mpz_mod(w.c1, w.c1, P);
            check_eq2(&o, &w, "fp2_conj", i);
            fp2_frobenius(&o, &a);
            check_eq2(&o, &w, "fp2_frobenius", i);

            fp2_mul(&o, &a, &b);
            m2_mul(&w, &x, &y);
            check_eq2(&o, &w, "fp2_mul", i);
            fp2_sqr(&o, &a);
            m2_mul(&w, &x, &x);
            check_eq2(&o, &w, "fp2_sqr", i);
            fp2_mul_fp(&o, &a, &b.c0);
            mpz_mul(w.c0, x.c0, y.c0), mpz_mod(w.c0, w.c0, P);
            mpz_mul(w.c1, x.c1, y.c0), mpz_mod(w.c1, w.c1, P);
            check_eq2(&o, &w, "fp2_mul_fp", i);
            fp2_mul_nonresidue(&o, &a);   /* times (1 + u) */
            mpz_sub(w.c0, x.c0, x.c1), mpz_mod(w.c0, w.c0, P);
            mpz_add(w.c1, x.c0, x.c1), mpz_mod(w.c1, w.c1, P);
            check_eq2(&o, &w, "fp2_mul_nonresidue", i);

            ASSERT(fp2_is_zero(&a) == (!mpz_sgn(x.c0) && !mpz_sgn(x.c1)));
            ASSERT(fp2_is_one(&a) == (!mpz_cmp_ui(x.c0, 1) && !mpz_sgn(x.c1)));
            ASSERT(fp2_eq(&a, &b) == (!mpz_cmp(x.c0, y.c0) && !mpz_cmp(x.c1, y.c1)));
            /* zcash sign: c1 > (p-1)/2, or c0 > (p-1)/2 when c1 == 0 */
            mpz_sub_ui(t, P, 1), mpz_fdiv_q_2exp(t, t, 1);
            bool big = mpz_sgn(x.c1) ? mpz_cmp(x.c1, t) > 0 : mpz_cmp(x.c0, t) > 0;
            ASSERT(fp2_is_odd_half(&a) == big);

            /* aliasing */
            o = a;
            fp2_mul(&o, &o, &b);
            m2_mul(&w, &x, &y);
            check_eq2(&o, &w, "fp2_mul aliased", i);
            fp2_sqr(&o, &o);
            m2_mul(&w, &w, &w);
            check_eq2(&o, &w, "fp2_sqr aliased", i);
            o = a;
            fp2_mul_nonresidue(&o, &o);
            mpz_sub(w.c0, x.c0, x.c1), mpz_mod(w.c0, w.c0, P);
            mpz_add(w.c1, x.c0, x.c1), mpz_mod(w.c1, w.c1, P);
            check_eq2(&o, &w, "fp2_mul_nonresidue aliased", i);
        }
    }
    ff_force_portable(false);
    mpz_clear(t);
    m2_clear(&x), m2_clear(&y), m2_clear(&w);
}

TEST(fp2_inv_and_batch)
{
    setup();
    m2 x, w;
    m2_init(&x), m2_init(&w);
    mpz_t n, ni;
    mpz_inits(n, ni, NULL);
    enum { NB = 97 };
    static fp2_t v[NB], orig[NB], scratch[NB];
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        fp2_t o = FP2_ONE;
        ASSERT(!fp2_inv(&o, &FP2_ZERO));
        ASSERT(fp2_is_zero(&o));
        for (int i = 0; i < 5000; i++) {
            rand_m2(&x, i);
            m2_norm(n, &x);
            if (mpz_sgn(n) == 0) continue;   /* only 0 has norm 0 (-1 is a non-residue) */
            fp2_t a;
            to_fp2(&a, &x);
            ASSERT(fp2_inv(&o, &a));
            /* model: (c0 - c1 u) / (c0^2 + c1^2) */
            ASSERT(mpz_invert(ni, n, P));
            mpz_mul(w.c0, x.c0, ni), mpz_mod(w.c0, w.c0, P);
            mpz_neg(w.c1, x.c1), mpz_mul(w.c1, w.c1, ni), mpz_mod(w.c1, w.c1, P);
            check_eq2(&o, &w, "fp2_inv", i);
        }
        for (int i = 0; i < NB; i++) {
            rand_m2(&x, i * 13);
            if (i % 10 == 3) mpz_set_ui(x.c0, 0), mpz_set_ui(x.c1, 0);   /* zeros inside */
            to_fp2(&v[i], &x);
            orig[i] = v[i];
        }
        fp2_batch_inv(v, NB, scratch);
        for (int i = 0; i < NB; i++) {
            fp2_t want;
            bool nz = fp2_inv(&want, &orig[i]);
            ASSERT(nz == !fp2_is_zero(&orig[i]));
            ASSERT(fp2_eq(&v[i], &want));
        }
    }
    ff_force_portable(false);
    mpz_clears(n, ni, NULL);
    m2_clear(&x), m2_clear(&w);
}

TEST(fp2_pow_sqrt_legendre)
{
    setup();
    m2 x, w;
    m2_init(&x), m2_init(&w);
    mpz_t n, e;
    mpz_inits(n, e, NULL);
    cuzk_rng *g = test_rng();
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        int squares = 0, nonsquares = 0;
        for (int i = 0; i < 600; i++) {
            rand_m2(&x, i);
            fp2_t a, r, chk;
            to_fp2(&a, &x);
            if (i < 100) {   /* pow against the model, exponents of 0..6 limbs */
                uint64_t el[6];
                size_t k = (size_t)(cuzk_rng_u64(g) % 7);
                for (size_t j = 0; j < k; j++) el[j] = cuzk_rng_u64(g);
                mpz_import(e, k, -1, 8, 0, 0, el);
                if (k == 0) mpz_set_ui(e, 0);
                fp2_pow(&r, &a, el, k);
                m2_pow(&w, &x, e);
                check_eq2(&r, &w, "fp2_pow", i);
            }
            /* a is a square in Fp2 iff its norm is a square in Fp */
            m2_norm(n, &x);
            int leg = mpz_legendre(n, P);
            ASSERT_EQ_INT(fp2_legendre(&a), leg);
            bool ok = fp2_sqrt(&r, &a);
            ASSERT_EQ_INT(ok, leg >= 0);
            if (ok) {
                fp2_sqr(&chk, &r);
                ASSERT(fp2_eq(&chk, &a));
                squares++;
            } else {
                nonsquares++;
            }
            /* a^2 always has a root, +-a */
            fp2_t sq, na;
            fp2_sqr(&sq, &a);
            ASSERT(fp2_sqrt(&r, &sq));
            fp2_neg(&na, &a);
            ASSERT(fp2_eq(&r, &a) || fp2_eq(&r, &na));
        }
        ASSERT(squares > 200 && nonsquares > 200);
        /* the special cases of the algorithm: elements of Fp (c1 = 0) that are non-residues in
         * Fp are squares in Fp2 (roots c u), and u itself, -1, 1 + u */
        for (int i = 0; i < 200; i++) {
            rand_fp(x.c0, i + 4);
            mpz_set_ui(x.c1, 0);
            if (i == 0) mpz_set_ui(x.c0, 0), mpz_set_ui(x.c1, 1);
            if (i == 1) mpz_sub_ui(x.c0, P, 1);
            if (i == 2) mpz_set_ui(x.c0, 1), mpz_set_ui(x.c1, 1);
            fp2_t a, r, chk;
            to_fp2(&a, &x);
            m2_norm(n, &x);
            int leg = mpz_legendre(n, P);
            bool ok = fp2_sqrt(&r, &a);
            ASSERT_EQ_INT(ok, leg >= 0);
            if (i != 2) ASSERT(ok);   /* every element of Fp is a square in Fp2 */
            if (ok) {
                fp2_sqr(&chk, &r);
                ASSERT(fp2_eq(&chk, &a));
            }
        }
    }
    ff_force_portable(false);
    mpz_clears(n, e, NULL);
    m2_clear(&x), m2_clear(&w);
}
