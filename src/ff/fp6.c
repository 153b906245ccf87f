/* fp6.c: Fp6 = Fp2[v]/(v^3 - xi), xi = u + 1: Karatsuba multiplication (6 Fp2 muls),
 * Chung-Hasan squaring, inversion through the norm, and the Frobenius maps. See docs/pairing.md. */
#include "cuzk/ff.h"

const fp6_t FP6_ZERO = {{{{0}}, {{0}}}, {{{0}}, {{0}}}, {{{0}}, {{0}}}};
const fp6_t FP6_ONE = {{{{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                          0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}},
                        {{0}}},
                       {{{0}}, {{0}}},
                       {{{0}}, {{0}}}};

/* Frobenius coefficients (Montgomery form), computed with Python integers by the script in
 * docs/pairing.md and checked against fp12_pow(a, p) by tests/pairing/test_tower.c:
 *   FROB6_C1[k] = xi^((p^k - 1)/3)   (v^(p^k) = FROB6_C1[k] * v)
 *   FROB6_C2[k] = xi^(2(p^k - 1)/3)  (v^(2 p^k) = FROB6_C2[k] * v^2)
 * v^(p^6) = v, so the maps repeat with period 6. */
static const fp2_t FROB6_C1[6] = {
    {{{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
       0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}},
     {{0xcd03c9e48671f071ULL, 0x5dab22461fcda5d2ULL, 0x587042afd3851b95ULL,
       0x8eb60ebe01bacb9eULL, 0x03f97d6e83d050d2ULL, 0x18f0206554638741ULL}}},
    {{{0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL,
       0xc26a2ff874fd029bULL, 0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}},
     {{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
       0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}}},
    {{{0xcd03c9e48671f071ULL, 0x5dab22461fcda5d2ULL, 0x587042afd3851b95ULL,
       0x8eb60ebe01bacb9eULL, 0x03f97d6e83d050d2ULL, 0x18f0206554638741ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}},
     {{0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL,
       0xc26a2ff874fd029bULL, 0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL}}},
};
static const fp2_t FROB6_C2[6] = {
    {{{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
       0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x890dc9e4867545c3ULL, 0x2af322533285a5d5ULL, 0x50880866309b7e2cULL,
       0xa20d1b8c7e881024ULL, 0x14e4f04fe2db9068ULL, 0x14e56d3f1564853aULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0xcd03c9e48671f071ULL, 0x5dab22461fcda5d2ULL, 0x587042afd3851b95ULL,
       0x8eb60ebe01bacb9eULL, 0x03f97d6e83d050d2ULL, 0x18f0206554638741ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x43f5fffffffcaaaeULL, 0x32b7fff2ed47fffdULL, 0x07e83a49a2e99d69ULL,
       0xeca8f3318332bb7aULL, 0xef148d1ea0f4c069ULL, 0x040ab3263eff0206ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL,
       0xc26a2ff874fd029bULL, 0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0xecfb361b798dba3aULL, 0xc100ddb891865a2cULL, 0x0ec08ff1232bda8eULL,
       0xd5c13cc6f1ca4721ULL, 0x47222a47bf7b5c04ULL, 0x0110f184e51c5f59ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
};

void fp6_add(fp6_t *o, const fp6_t *a, const fp6_t *b)
{
    fp2_add(&o->c0, &a->c0, &b->c0);
    fp2_add(&o->c1, &a->c1, &b->c1);
    fp2_add(&o->c2, &a->c2, &b->c2);
}

void fp6_sub(fp6_t *o, const fp6_t *a, const fp6_t *b)
{
    fp2_sub(&o->c0, &a->c0, &b->c0);
    fp2_sub(&o->c1, &a->c1, &b->c1);
    fp2_sub(&o->c2, &a->c2, &b->c2);
}

void fp6_neg(fp6_t *o, const fp6_t *a)
{
    fp2_neg(&o->c0, &a->c0);
    fp2_neg(&o->c1, &a->c1);
    fp2_neg(&o->c2, &a->c2);
}

/* Karatsuba over the three coefficients (Devegili, O hEigeartaigh, Scott, Dahab,
 * "Multiplication and squaring on pairing-friendly fields", 2006, section 4): 6 Fp2 muls. */
void fp6_mul(fp6_t *o, const fp6_t *a, const fp6_t *b)
{
    fp2_t t0, t1, t2, s, u, c0, c1, c2;
    fp2_mul(&t0, &a->c0, &b->c0);
    fp2_mul(&t1, &a->c1, &b->c1);
    fp2_mul(&t2, &a->c2, &b->c2);

    fp2_add(&s, &a->c1, &a->c2);
    fp2_add(&u, &b->c1, &b->c2);
    fp2_mul(&c0, &s, &u);
    fp2_sub(&c0, &c0, &t1);
    fp2_sub(&c0, &c0, &t2);                 /* a1 b2 + a2 b1 */
    fp2_mul_nonresidue(&c0, &c0);
    fp2_add(&c0, &c0, &t0);                 /* c0 = a0 b0 + xi (a1 b2 + a2 b1) */

    fp2_add(&s, &a->c0, &a->c1);
    fp2_add(&u, &b->c0, &b->c1);
    fp2_mul(&c1, &s, &u);
    fp2_sub(&c1, &c1, &t0);
    fp2_sub(&c1, &c1, &t1);                 /* a0 b1 + a1 b0 */
    fp2_mul_nonresidue(&s, &t2);
    fp2_add(&c1, &c1, &s);                  /* c1 = a0 b1 + a1 b0 + xi a2 b2 */

    fp2_add(&s, &a->c0, &a->c2);
    fp2_add(&u, &b->c0, &b->c2);
    fp2_mul(&c2, &s, &u);
    fp2_sub(&c2, &c2, &t0);
    fp2_sub(&c2, &c2, &t2);                 /* a0 b2 + a2 b0 */
    fp2_add(&c2, &c2, &t1);                 /* c2 = a0 b2 + a1 b1 + a2 b0 */

    o->c0 = c0;
    o->c1 = c1;
    o->c2 = c2;
}

/* Chung-Hasan SQR2 ("Asymmetric squaring formulae", 2007): 3 Fp2 squarings + 2 muls. */
void fp6_sqr(fp6_t *o, const fp6_t *a)
{
    fp2_t s0, s1, s2, s3, s4, t;
    fp2_sqr(&s0, &a->c0);                   /* a0^2 */
    fp2_mul(&s1, &a->c0, &a->c1);
    fp2_dbl(&s1, &s1);                      /* 2 a0 a1 */
    fp2_sub(&t, &a->c0, &a->c1);
    fp2_add(&t, &t, &a->c2);
    fp2_sqr(&s2, &t);                       /* (a0 - a1 + a2)^2 */
    fp2_mul(&s3, &a->c1, &a->c2);
    fp2_dbl(&s3, &s3);                      /* 2 a1 a2 */
    fp2_sqr(&s4, &a->c2);                   /* a2^2 */

    fp2_add(&t, &s1, &s2);
    fp2_add(&t, &t, &s3);
    fp2_sub(&t, &t, &s0);
    fp2_sub(&o->c2, &t, &s4);               /* c2 = 2 a0 a2 + a1^2 */
    fp2_mul_nonresidue(&t, &s4);
    fp2_add(&o->c1, &s1, &t);               /* c1 = 2 a0 a1 + xi a2^2 */
    fp2_mul_nonresidue(&t, &s3);
    fp2_add(&o->c0, &s0, &t);               /* c0 = a0^2 + 2 xi a1 a2 */
}

void fp6_mul_by_v(fp6_t *o, const fp6_t *a)
{
    /* (a0 + a1 v + a2 v^2) v = xi a2 + a0 v + a1 v^2 */
    fp2_t t;
    fp2_mul_nonresidue(&t, &a->c2);
    o->c2 = a->c1;
    o->c1 = a->c0;
    o->c0 = t;
}

/* 1/a = (A + B v + C v^2) / N with A = a0^2 - xi a1 a2, B = xi a2^2 - a0 a1, C = a1^2 - a0 a2,
 * N = a0 A + xi (a2 B + a1 C) in Fp2 (the adjugate of multiplication-by-a). */
bool fp6_inv(fp6_t *o, const fp6_t *a)
{
    fp2_t A, B, C, n, t;
    fp2_sqr(&A, &a->c0);
    fp2_mul(&t, &a->c1, &a->c2);
    fp2_mul_nonresidue(&t, &t);
    fp2_sub(&A, &A, &t);

    fp2_sqr(&B, &a->c2);
    fp2_mul_nonresidue(&B, &B);
    fp2_mul(&t, &a->c0, &a->c1);
    fp2_sub(&B, &B, &t);

    fp2_sqr(&C, &a->c1);
    fp2_mul(&t, &a->c0, &a->c2);
    fp2_sub(&C, &C, &t);

    fp2_mul(&n, &a->c2, &B);
    fp2_mul(&t, &a->c1, &C);
    fp2_add(&n, &n, &t);
    fp2_mul_nonresidue(&n, &n);
    fp2_mul(&t, &a->c0, &A);
    fp2_add(&n, &n, &t);
    if (!fp2_inv(&n, &n)) {
        *o = FP6_ZERO;
        return false;
    }
    fp2_mul(&o->c0, &A, &n);
    fp2_mul(&o->c1, &B, &n);
    fp2_mul(&o->c2, &C, &n);
    return true;
}

bool fp6_eq(const fp6_t *a, const fp6_t *b)
{
    return fp2_eq(&a->c0, &b->c0) && fp2_eq(&a->c1, &b->c1) && fp2_eq(&a->c2, &b->c2);
}

/* a^(p^k) = conj^k(a0) + conj^k(a1) v^(p^k) + conj^k(a2) v^(2 p^k). Any power is accepted and
 * reduced mod 6 (the map's period); the header promises 1..5. */
void fp6_frobenius(fp6_t *o, const fp6_t *a, int power)
{
    int k = ((power % 6) + 6) % 6;
    fp2_t c0 = a->c0, c1 = a->c1, c2 = a->c2;
    if (k & 1) {
        fp2_conj(&c0, &c0);
        fp2_conj(&c1, &c1);
        fp2_conj(&c2, &c2);
    }
    o->c0 = c0;
    fp2_mul(&o->c1, &c1, &FROB6_C1[k]);
    fp2_mul(&o->c2, &c2, &FROB6_C2[k]);
}
