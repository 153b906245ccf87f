/* fp2.c: Fp2 = Fp[u]/(u^2 + 1). Karatsuba multiplication (3 Fp muls), complex squaring
 * (2 Fp muls). Square root: Adj & Rodriguez-Henriquez, "Square root computation over even
 * extension fields", Algorithm 9 (p = 3 mod 4). */
#include "cuzk/ff.h"

const fp2_t FP2_ZERO = {{{0}}, {{0}}};
const fp2_t FP2_ONE = {{{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                         0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}},
                       {{0}}};

void fp2_add(fp2_t *o, const fp2_t *a, const fp2_t *b)
{
    fp_add(&o->c0, &a->c0, &b->c0);
    fp_add(&o->c1, &a->c1, &b->c1);
}
void fp2_sub(fp2_t *o, const fp2_t *a, const fp2_t *b)
{
    fp_sub(&o->c0, &a->c0, &b->c0);
    fp_sub(&o->c1, &a->c1, &b->c1);
}
void fp2_dbl(fp2_t *o, const fp2_t *a)
{
    fp_dbl(&o->c0, &a->c0);
    fp_dbl(&o->c1, &a->c1);
}
void fp2_neg(fp2_t *o, const fp2_t *a)
{
    fp_neg(&o->c0, &a->c0);
    fp_neg(&o->c1, &a->c1);
}
void fp2_conj(fp2_t *o, const fp2_t *a)
{
    o->c0 = a->c0;
    fp_neg(&o->c1, &a->c1);
}
void fp2_frobenius(fp2_t *o, const fp2_t *a) { fp2_conj(o, a); }

void fp2_mul(fp2_t *o, const fp2_t *a, const fp2_t *b)
{
    fp_t t0, t1, s0, s1;
    fp_mul(&t0, &a->c0, &b->c0);            /* a0 b0 */
    fp_mul(&t1, &a->c1, &b->c1);            /* a1 b1 */
    fp_add(&s0, &a->c0, &a->c1);
    fp_add(&s1, &b->c0, &b->c1);
    fp_mul(&s0, &s0, &s1);                  /* (a0+a1)(b0+b1) */
    fp_sub(&s0, &s0, &t0);
    fp_sub(&o->c1, &s0, &t1);               /* a0 b1 + a1 b0 */
    fp_sub(&o->c0, &t0, &t1);               /* a0 b0 - a1 b1 */
}

void fp2_sqr(fp2_t *o, const fp2_t *a)
{
    fp_t s, d, m;
    fp_add(&s, &a->c0, &a->c1);
    fp_sub(&d, &a->c0, &a->c1);
    fp_mul(&m, &a->c0, &a->c1);
    fp_mul(&o->c0, &s, &d);                 /* (a0+a1)(a0-a1) = a0^2 - a1^2 */
    fp_dbl(&o->c1, &m);                     /* 2 a0 a1 */
}

void fp2_mul_fp(fp2_t *o, const fp2_t *a, const fp_t *b)
{
    fp_mul(&o->c0, &a->c0, b);
    fp_mul(&o->c1, &a->c1, b);
}

void fp2_mul_nonresidue(fp2_t *o, const fp2_t *a)
{
    /* (a0 + a1 u)(1 + u) = (a0 - a1) + (a0 + a1) u */
    fp_t t;
    fp_sub(&t, &a->c0, &a->c1);
    fp_add(&o->c1, &a->c0, &a->c1);
    o->c0 = t;
}

bool fp2_inv(fp2_t *o, const fp2_t *a)
{
    /* 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2) */
    fp_t n, t;
    fp_sqr(&n, &a->c0);
    fp_sqr(&t, &a->c1);
    fp_add(&n, &n, &t);
    if (!fp_inv(&n, &n)) {
        *o = FP2_ZERO;
        return false;
    }
    fp_mul(&o->c0, &a->c0, &n);
    fp_mul(&t, &a->c1, &n);
    fp_neg(&o->c1, &t);
    return true;
}

void fp2_pow(fp2_t *o, const fp2_t *a, const uint64_t *e, size_t n)
{
    fp2_t acc = FP2_ONE, base = *a;
    for (size_t i = n; i-- > 0;)
        for (int b = 63; b >= 0; b--) {
            fp2_sqr(&acc, &acc);
            if ((e[i] >> b) & 1) fp2_mul(&acc, &acc, &base);
        }
    *o = acc;
}

bool fp2_is_zero(const fp2_t *a) { return fp_is_zero(&a->c0) && fp_is_zero(&a->c1); }
bool fp2_is_one(const fp2_t *a) { return fp_is_one(&a->c0) && fp_is_zero(&a->c1); }
bool fp2_eq(const fp2_t *a, const fp2_t *b) { return fp_eq(&a->c0, &b->c0) && fp_eq(&a->c1, &b->c1); }

int fp2_legendre(const fp2_t *a)
{
    /* a is a square in Fp2 iff its norm a0^2 + a1^2 is a square in Fp. */
    fp_t n, t;
    fp_sqr(&n, &a->c0);
    fp_sqr(&t, &a->c1);
    fp_add(&n, &n, &t);
    return fp_legendre(&n);
}

bool fp2_is_odd_half(const fp2_t *a)
{
    if (!fp_is_zero(&a->c1)) return fp_is_odd_half(&a->c1);
    return fp_is_odd_half(&a->c0);
}

static const uint64_t P_M3_4[6] = {0xee7fbfffffffeaaaULL, 0x07aaffffac54ffffULL, /* (p-3)/4 */
                                   0xd9cc34a83dac3d89ULL, 0xd91dd2e13ce144afULL,
                                   0x92c6e9ed90d2eb35ULL, 0x0680447a8e5ff9a6ULL};
static const uint64_t P_M1_2[6] = {0xdcff7fffffffd555ULL, 0x0f55ffff58a9ffffULL, /* (p-1)/2 */
                                   0xb39869507b587b12ULL, 0xb23ba5c279c2895fULL,
                                   0x258dd3db21a5d66bULL, 0x0d0088f51cbff34dULL};

bool fp2_sqrt(fp2_t *o, const fp2_t *a)
{
    if (fp2_is_zero(a)) {
        *o = FP2_ZERO;
        return true;
    }
    fp2_t a1, alpha, a0, x0, x, minus_one, chk;
    fp2_pow(&a1, a, P_M3_4, 6);             /* a1 = a^((p-3)/4) */
    fp2_sqr(&alpha, &a1);
    fp2_mul(&alpha, &alpha, a);             /* alpha = a1^2 a */
    fp2_frobenius(&a0, &alpha);
    fp2_mul(&a0, &a0, &alpha);              /* a0 = alpha^p alpha */
    fp2_neg(&minus_one, &FP2_ONE);
    if (fp2_eq(&a0, &minus_one)) return false;
    fp2_mul(&x0, &a1, a);                   /* x0 = a1 a */
    if (fp2_eq(&alpha, &minus_one)) {
        /* x = u x0 */
        fp_t t;
        fp_neg(&t, &x0.c1);
        x.c1 = x0.c0;
        x.c0 = t;
    } else {
        fp2_t b;
        fp2_add(&b, &FP2_ONE, &alpha);
        fp2_pow(&b, &b, P_M1_2, 6);         /* b = (1 + alpha)^((p-1)/2) */
        fp2_mul(&x, &b, &x0);
    }
    fp2_sqr(&chk, &x);
    if (!fp2_eq(&chk, a)) return false;
    *o = x;
    return true;
}

void fp2_batch_inv(fp2_t *a, size_t n, fp2_t *scratch)
{
    fp2_t acc = FP2_ONE;
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!fp2_is_zero(&a[i])) fp2_mul(&acc, &acc, &a[i]);
    }
    fp2_inv(&acc, &acc);
    for (size_t i = n; i-- > 0;) {
        if (fp2_is_zero(&a[i])) continue;
        fp2_t t;
        fp2_mul(&t, &acc, &scratch[i]);
        fp2_mul(&acc, &acc, &a[i]);
        a[i] = t;
    }
}
