/* fp12.c: Fp12 = Fp6[w]/(w^2 - v): Karatsuba multiplication, complex squaring, inversion
 * through the Fp6 norm, conjugation (the p^6 Frobenius), Frobenius maps and exponentiation. */
#include "cuzk/ff.h"

const fp12_t FP12_ONE = {{{{{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                             0x77ce585370525745ULL, 0x5c071a97a256ec6dULL,
                             0x15f65ec3fa80e493ULL}},
                           {{0}}},
                          {{{0}}, {{0}}},
                          {{{0}}, {{0}}}},
                         {{{{0}}, {{0}}}, {{{0}}, {{0}}}, {{{0}}, {{0}}}}};

/* FROB12_C1[k] = xi^((p^k - 1)/6), so that w^(p^k) = FROB12_C1[k] * w (w^6 = xi). Computed with
 * Python integers by the script in docs/pairing.md; checked by tests/pairing/test_tower.c. */
static const fp2_t FROB12_C1[12] = {
    {{{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
       0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x07089552b319d465ULL, 0xc6695f92b50a8313ULL, 0x97e83cccd117228fULL,
       0xa35baecab2dc29eeULL, 0x1ce393ea5daace4dULL, 0x08f2220fb0fb66ebULL}},
     {{0xb2f66aad4ce5d646ULL, 0x5842a06bfc497cecULL, 0xcf4895d42599d394ULL,
       0xc11b9cba40a8e8d0ULL, 0x2e3813cbe5a0de89ULL, 0x110eefda88847fafULL}}},
    {{{0xecfb361b798dba3aULL, 0xc100ddb891865a2cULL, 0x0ec08ff1232bda8eULL,
       0xd5c13cc6f1ca4721ULL, 0x47222a47bf7b5c04ULL, 0x0110f184e51c5f59ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x3e2f585da55c9ad1ULL, 0x4294213d86c18183ULL, 0x382844c88b623732ULL,
       0x92ad2afd19103e18ULL, 0x1d794e4fac7cf0b9ULL, 0x0bd592fc7d825ec8ULL}},
     {{0x7bcfa7a25aa30fdaULL, 0xdc17dec12a927e7cULL, 0x2f088dd86b4ebef1ULL,
       0xd1ca2087da74d4a7ULL, 0x2da2596696cebc1dULL, 0x0e2b7eedbbfd87d2ULL}}},
    {{{0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL,
       0xc26a2ff874fd029bULL, 0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x3726c30af242c66cULL, 0x7c2ac1aad1b6fe70ULL, 0xa04007fbba4b14a2ULL,
       0xef517c3266341429ULL, 0x0095ba654ed2226bULL, 0x02e370eccc86f7ddULL}},
     {{0x82d83cf50dbce43fULL, 0xa2813e53df9d018fULL, 0xc6f0caa53c65e181ULL,
       0x7525cf528d50fe95ULL, 0x4a85ed50f4798a6bULL, 0x171da0fd6cf8eebdULL}}},
    {{{0x43f5fffffffcaaaeULL, 0x32b7fff2ed47fffdULL, 0x07e83a49a2e99d69ULL,
       0xeca8f3318332bb7aULL, 0xef148d1ea0f4c069ULL, 0x040ab3263eff0206ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0xb2f66aad4ce5d646ULL, 0x5842a06bfc497cecULL, 0xcf4895d42599d394ULL,
       0xc11b9cba40a8e8d0ULL, 0x2e3813cbe5a0de89ULL, 0x110eefda88847fafULL}},
     {{0x07089552b319d465ULL, 0xc6695f92b50a8313ULL, 0x97e83cccd117228fULL,
       0xa35baecab2dc29eeULL, 0x1ce393ea5daace4dULL, 0x08f2220fb0fb66ebULL}}},
    {{{0xcd03c9e48671f071ULL, 0x5dab22461fcda5d2ULL, 0x587042afd3851b95ULL,
       0x8eb60ebe01bacb9eULL, 0x03f97d6e83d050d2ULL, 0x18f0206554638741ULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x7bcfa7a25aa30fdaULL, 0xdc17dec12a927e7cULL, 0x2f088dd86b4ebef1ULL,
       0xd1ca2087da74d4a7ULL, 0x2da2596696cebc1dULL, 0x0e2b7eedbbfd87d2ULL}},
     {{0x3e2f585da55c9ad1ULL, 0x4294213d86c18183ULL, 0x382844c88b623732ULL,
       0x92ad2afd19103e18ULL, 0x1d794e4fac7cf0b9ULL, 0x0bd592fc7d825ec8ULL}}},
    {{{0x890dc9e4867545c3ULL, 0x2af322533285a5d5ULL, 0x50880866309b7e2cULL,
       0xa20d1b8c7e881024ULL, 0x14e4f04fe2db9068ULL, 0x14e56d3f1564853aULL}},
     {{0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL,
       0x0000000000000000ULL, 0x0000000000000000ULL, 0x0000000000000000ULL}}},
    {{{0x82d83cf50dbce43fULL, 0xa2813e53df9d018fULL, 0xc6f0caa53c65e181ULL,
       0x7525cf528d50fe95ULL, 0x4a85ed50f4798a6bULL, 0x171da0fd6cf8eebdULL}},
     {{0x3726c30af242c66cULL, 0x7c2ac1aad1b6fe70ULL, 0xa04007fbba4b14a2ULL,
       0xef517c3266341429ULL, 0x0095ba654ed2226bULL, 0x02e370eccc86f7ddULL}}},
};

/* (a0 + a1 w)(b0 + b1 w) = (a0 b0 + v a1 b1) + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) w:
 * 3 Fp6 muls = 18 Fp2 muls. */
void fp12_mul(fp12_t *o, const fp12_t *a, const fp12_t *b)
{
    fp6_t t0, t1, s, u;
    fp6_mul(&t0, &a->c0, &b->c0);
    fp6_mul(&t1, &a->c1, &b->c1);
    fp6_add(&s, &a->c0, &a->c1);
    fp6_add(&u, &b->c0, &b->c1);
    fp6_mul(&s, &s, &u);
    fp6_sub(&s, &s, &t0);
    fp6_sub(&o->c1, &s, &t1);
    fp6_mul_by_v(&t1, &t1);
    fp6_add(&o->c0, &t0, &t1);
}

/* Complex squaring: with t = a0 a1, (a0 + a1 w)^2 = ((a0 + a1)(a0 + v a1) - t - v t) + 2t w:
 * 2 Fp6 muls. */
void fp12_sqr(fp12_t *o, const fp12_t *a)
{
    fp6_t t, s, u;
    fp6_mul(&t, &a->c0, &a->c1);
    fp6_add(&s, &a->c0, &a->c1);
    fp6_mul_by_v(&u, &a->c1);
    fp6_add(&u, &u, &a->c0);
    fp6_mul(&s, &s, &u);
    fp6_sub(&s, &s, &t);
    fp6_mul_by_v(&u, &t);
    fp6_sub(&o->c0, &s, &u);
    fp6_add(&o->c1, &t, &t);
}

/* 1/(a0 + a1 w) = (a0 - a1 w) / (a0^2 - v a1^2). */
bool fp12_inv(fp12_t *o, const fp12_t *a)
{
    fp6_t n, t;
    fp6_sqr(&n, &a->c0);
    fp6_sqr(&t, &a->c1);
    fp6_mul_by_v(&t, &t);
    fp6_sub(&n, &n, &t);
    if (!fp6_inv(&n, &n)) {
        o->c0 = FP6_ZERO;
        o->c1 = FP6_ZERO;
        return false;
    }
    fp6_mul(&o->c0, &a->c0, &n);
    fp6_mul(&t, &a->c1, &n);
    fp6_neg(&o->c1, &t);
    return true;
}

/* w^(p^6) = -w, and Fp6 is fixed by the p^6 power. */
void fp12_conj(fp12_t *o, const fp12_t *a)
{
    o->c0 = a->c0;
    fp6_neg(&o->c1, &a->c1);
}

/* a^(p^k) = a0^(p^k) + a1^(p^k) w^(p^k). Any power is accepted and reduced mod 12. */
void fp12_frobenius(fp12_t *o, const fp12_t *a, int power)
{
    int k = ((power % 12) + 12) % 12;
    const fp2_t *g = &FROB12_C1[k];
    fp6_t c1;
    fp6_frobenius(&o->c0, &a->c0, k);
    fp6_frobenius(&c1, &a->c1, k);
    fp2_mul(&o->c1.c0, &c1.c0, g);
    fp2_mul(&o->c1.c1, &c1.c1, g);
    fp2_mul(&o->c1.c2, &c1.c2, g);
}

/* Left-to-right square and multiply; e is a plain little-endian integer of n limbs. Generic
 * (no cyclotomic shortcuts), so it also serves as the tests' oracle. */
void fp12_pow(fp12_t *o, const fp12_t *a, const uint64_t *e, size_t n)
{
    fp12_t acc = FP12_ONE, base = *a;
    bool started = false;
    for (size_t i = n; i-- > 0;)
        for (int b = 63; b >= 0; b--) {
            if (started) fp12_sqr(&acc, &acc);
            if ((e[i] >> b) & 1) {
                if (started) fp12_mul(&acc, &acc, &base);
                else acc = base;
                started = true;
            }
        }
    *o = acc;
}

bool fp12_eq(const fp12_t *a, const fp12_t *b)
{
    return fp6_eq(&a->c0, &b->c0) && fp6_eq(&a->c1, &b->c1);
}

bool fp12_is_one(const fp12_t *a) { return fp12_eq(a, &FP12_ONE); }
