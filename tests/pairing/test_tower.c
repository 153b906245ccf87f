/* test_tower.c: Fp6 and Fp12 against schoolbook products on coefficients (Fp2[v]/(v^3 - xi) and
 * Fp2[w]/(w^6 - xi)), inverses, and every Frobenius map against fp12_pow(a, p^k). */
#include "test.h"

#include "cuzk/ff.h"

#define ITERS 20

static void rand_fp(fp_t *out)
{
    uint64_t c[6];
    cuzk_rng_bytes(test_rng(), c, sizeof c);
    c[5] &= 0x0fffffffffffffffULL;          /* below p, whose top limb is 0x1a01... */
    fp_to_mont(out, c);
}
static void rand_fp2(fp2_t *out)
{
    rand_fp(&out->c0);
    rand_fp(&out->c1);
}
static void rand_fp6(fp6_t *out)
{
    rand_fp2(&out->c0);
    rand_fp2(&out->c1);
    rand_fp2(&out->c2);
}
static void rand_fp12(fp12_t *out)
{
    rand_fp6(&out->c0);
    rand_fp6(&out->c1);
}

/* Oracle: schoolbook product of polynomials over Fp2, then reduce t^n = xi (v^3 = xi for Fp6 with
 * n = 3, w^6 = xi for Fp12 with n = 6). */
static void poly_mulmod(fp2_t *out, const fp2_t *a, const fp2_t *b, int n)
{
    fp2_t prod[11], t;
    for (int i = 0; i < 2 * n - 1; i++) prod[i] = FP2_ZERO;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            fp2_mul(&t, &a[i], &b[j]);
            fp2_add(&prod[i + j], &prod[i + j], &t);
        }
    for (int i = 0; i < n; i++) {
        out[i] = prod[i];
        if (i + n < 2 * n - 1) {
            fp2_mul_nonresidue(&t, &prod[i + n]);
            fp2_add(&out[i], &out[i], &t);
        }
    }
}

/* Fp12 element as coefficients of 1, w, ..., w^5 (v = w^2): c0 = a0 + a1 w^2 + a2 w^4,
 * c1 w = b0 w + b1 w^3 + b2 w^5. */
static void fp12_to_w(fp2_t out[6], const fp12_t *a)
{
    out[0] = a->c0.c0, out[2] = a->c0.c1, out[4] = a->c0.c2;
    out[1] = a->c1.c0, out[3] = a->c1.c1, out[5] = a->c1.c2;
}

TEST(fp6_mul_matches_schoolbook)
{
    for (int it = 0; it < ITERS; it++) {
        fp6_t a, b, c, d;
        rand_fp6(&a);
        rand_fp6(&b);
        fp6_mul(&c, &a, &b);
        fp2_t pa[3] = {a.c0, a.c1, a.c2}, pb[3] = {b.c0, b.c1, b.c2}, pc[3];
        poly_mulmod(pc, pa, pb, 3);
        d.c0 = pc[0], d.c1 = pc[1], d.c2 = pc[2];
        ASSERT_MEM_EQ(&c, &d, sizeof c);
        fp6_sqr(&c, &a);
        poly_mulmod(pc, pa, pa, 3);
        d.c0 = pc[0], d.c1 = pc[1], d.c2 = pc[2];
        ASSERT_MEM_EQ(&c, &d, sizeof c);
        /* aliasing */
        c = a;
        fp6_mul(&c, &c, &b);
        fp6_mul(&d, &a, &b);
        ASSERT(fp6_eq(&c, &d));
        c = a;
        fp6_sqr(&c, &c);
        fp6_mul(&d, &a, &a);
        ASSERT(fp6_eq(&c, &d));
    }
}

TEST(fp6_add_sub_neg_mul_by_v)
{
    for (int it = 0; it < ITERS; it++) {
        fp6_t a, b, c, d, v = FP6_ZERO;
        rand_fp6(&a);
        rand_fp6(&b);
        fp6_add(&c, &a, &b);
        fp2_t t;
        fp2_add(&t, &a.c1, &b.c1);
        ASSERT(fp2_eq(&c.c1, &t));
        fp6_sub(&c, &c, &b);
        ASSERT(fp6_eq(&c, &a));
        fp6_neg(&d, &a);
        fp6_add(&d, &d, &a);
        ASSERT(fp6_eq(&d, &FP6_ZERO));
        v.c1 = FP2_ONE;
        fp6_mul(&c, &a, &v);
        fp6_mul_by_v(&d, &a);
        ASSERT(fp6_eq(&c, &d));
        fp6_mul(&c, &a, &FP6_ONE);
        ASSERT(fp6_eq(&c, &a));
    }
}

TEST(fp6_inverse)
{
    for (int it = 0; it < ITERS; it++) {
        fp6_t a, b, c;
        rand_fp6(&a);
        ASSERT(fp6_inv(&b, &a));
        fp6_mul(&c, &a, &b);
        ASSERT(fp6_eq(&c, &FP6_ONE));
        /* a sparse element (a0 = 0) exercises the other norm terms */
        a.c0 = FP2_ZERO;
        ASSERT(fp6_inv(&b, &a));
        fp6_mul(&c, &a, &b);
        ASSERT(fp6_eq(&c, &FP6_ONE));
    }
    fp6_t z;
    ASSERT(!fp6_inv(&z, &FP6_ZERO));
    ASSERT(fp6_eq(&z, &FP6_ZERO));
}

TEST(fp12_mul_matches_schoolbook)
{
    for (int it = 0; it < ITERS; it++) {
        fp12_t a, b, c;
        rand_fp12(&a);
        rand_fp12(&b);
        fp2_t pa[6], pb[6], pc[6], pd[6];
        fp12_to_w(pa, &a);
        fp12_to_w(pb, &b);
        fp12_mul(&c, &a, &b);
        fp12_to_w(pc, &c);
        poly_mulmod(pd, pa, pb, 6);
        ASSERT_MEM_EQ(pc, pd, sizeof pc);
        fp12_sqr(&c, &a);
        fp12_to_w(pc, &c);
        poly_mulmod(pd, pa, pa, 6);
        ASSERT_MEM_EQ(pc, pd, sizeof pc);
        /* aliasing: out = a */
        fp12_t d = a;
        fp12_mul(&d, &d, &b);
        fp12_mul(&c, &a, &b);
        ASSERT(fp12_eq(&c, &d));
        d = a;
        fp12_sqr(&d, &d);
        fp12_mul(&c, &a, &a);
        ASSERT(fp12_eq(&c, &d));
    }
}

TEST(fp12_inverse_conj_one)
{
    for (int it = 0; it < ITERS; it++) {
        fp12_t a, b, c;
        rand_fp12(&a);
        ASSERT(fp12_inv(&b, &a));
        fp12_mul(&c, &a, &b);
        ASSERT(fp12_is_one(&c));
        ASSERT(!fp12_is_one(&a));
        /* conj(a) * a lies in Fp6 (its w part is zero) */
        fp12_conj(&b, &a);
        fp12_mul(&c, &a, &b);
        ASSERT(fp6_eq(&c.c1, &FP6_ZERO));
    }
    fp12_t z = {FP6_ZERO, FP6_ZERO}, o;
    ASSERT(!fp12_inv(&o, &z));
    ASSERT(fp12_eq(&o, &z));
    ASSERT(fp12_is_one(&FP12_ONE));
}

TEST(fp12_pow_small_exponents)
{
    fp12_t a, acc = FP12_ONE, r;
    rand_fp12(&a);
    for (uint64_t e = 0; e < 40; e++) {
        fp12_pow(&r, &a, &e, 1);
        ASSERT_MSG(fp12_eq(&r, &acc), "a^%llu", (unsigned long long)e);
        fp12_mul(&acc, &acc, &a);
    }
    /* two limbs: a^(2^64) = a^(2^32)^(2^32) */
    uint64_t e2[2] = {0, 1}, e32 = 1ULL << 32;
    fp12_pow(&r, &a, e2, 2);
    fp12_pow(&acc, &a, &e32, 1);
    fp12_pow(&acc, &acc, &e32, 1);
    ASSERT(fp12_eq(&r, &acc));
}

/* The oracle for every Frobenius map: a^(p^k) by plain exponentiation, k times by p. */
TEST(fp12_frobenius_matches_pow)
{
    fp12_t a, want, got;
    rand_fp12(&a);
    want = a;
    for (int k = 1; k <= 12; k++) {
        fp12_pow(&want, &want, FP_MODULUS.l, 6);
        fp12_frobenius(&got, &a, k);
        ASSERT_MSG(fp12_eq(&got, &want), "frobenius power %d", k);
        /* aliasing */
        got = a;
        fp12_frobenius(&got, &got, k);
        ASSERT_MSG(fp12_eq(&got, &want), "frobenius power %d in place", k);
    }
    fp12_frobenius(&got, &a, 12);
    ASSERT(fp12_eq(&got, &a));
    fp12_frobenius(&got, &a, 6);
    fp12_conj(&want, &a);
    ASSERT(fp12_eq(&got, &want));
}

TEST(fp6_frobenius_matches_pow)
{
    fp12_t e = {FP6_ZERO, FP6_ZERO};
    fp6_t a, got;
    rand_fp6(&a);
    e.c0 = a;
    for (int k = 1; k <= 6; k++) {
        fp12_pow(&e, &e, FP_MODULUS.l, 6);
        ASSERT(fp6_eq(&e.c1, &FP6_ZERO));
        fp6_frobenius(&got, &a, k);
        ASSERT_MSG(fp6_eq(&got, &e.c0), "fp6 frobenius power %d", k);
    }
    fp6_frobenius(&got, &a, 6);
    ASSERT(fp6_eq(&got, &a));
}

TEST(frobenius_is_multiplicative)
{
    fp12_t a, b, ab, fa, fb, t;
    rand_fp12(&a);
    rand_fp12(&b);
    fp12_mul(&ab, &a, &b);
    for (int k = 1; k <= 11; k++) {
        fp12_frobenius(&fa, &a, k);
        fp12_frobenius(&fb, &b, k);
        fp12_mul(&t, &fa, &fb);
        fp12_frobenius(&fa, &ab, k);
        ASSERT_MSG(fp12_eq(&t, &fa), "power %d", k);
    }
}
