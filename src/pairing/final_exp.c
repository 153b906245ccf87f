/* final_exp.c: the final exponentiation f^(3 (p^12 - 1)/r) of the BLS12-381 pairing (the value
 * blst and zkcrypto compute): the easy part (p^6 - 1)(p^2 + 1), then the hard part 3 Phi_12(p)/r
 * through an x-chain, with Granger-Scott cyclotomic squarings. See docs/pairing.md. */
#include "cuzk/pairing.h"

#define BLS_X_ABS 0xd201000000010000ULL   /* x = -BLS_X_ABS */

/* Square in Fp4 = Fp2[s]/(s^2 - xi): (x + y s)^2 = (x^2 + xi y^2) + ((x + y)^2 - x^2 - y^2) s. */
static void fp4_sqr(fp2_t *ox, fp2_t *oy, const fp2_t *x, const fp2_t *y)
{
    fp2_t t0, t1, s;
    fp2_sqr(&t0, x);
    fp2_sqr(&t1, y);
    fp2_add(&s, x, y);
    fp2_sqr(&s, &s);
    fp2_sub(&s, &s, &t0);
    fp2_sub(oy, &s, &t1);
    fp2_mul_nonresidue(&t1, &t1);
    fp2_add(ox, &t0, &t1);
}

/* out = 3 a - 2 b and out = 3 a + 2 b: the Granger-Scott output combinations. */
static void comb_sub(fp2_t *out, const fp2_t *a, const fp2_t *b)
{
    fp2_t t;
    fp2_sub(&t, a, b);
    fp2_dbl(&t, &t);
    fp2_add(out, &t, a);
}
static void comb_add(fp2_t *out, const fp2_t *a, const fp2_t *b)
{
    fp2_t t;
    fp2_add(&t, a, b);
    fp2_dbl(&t, &t);
    fp2_add(out, &t, a);
}

/* Squaring of f in the cyclotomic subgroup (f^(p^4 - p^2 + 1) = 1, true after the easy part):
 * Granger, Scott, "Faster squaring in the cyclotomic subgroup of sixth degree extensions"
 * (PKC 2010), section 3.2. View Fp12 as Fp4[z]/(z^3 - s) with z = w, s = w^3, Fp4 = Fp2[s]:
 * f = A + B z + C z^2 with A = (c0.c0, c1.c1), B = (c1.c0, c0.c2), C = (c0.c1, c1.c2). Then
 *   A' = 3A^2 - 2 conj(A),  B' = 3 s C^2 + 2 conj(B),  C' = 3B^2 - 2 conj(C)
 * where conj(x + y s) = x - y s. Cost: 9 Fp2 squarings (fp12_sqr: 12 Fp2 muls). */
static void cyc_sqr(fp12_t *o, const fp12_t *f)
{
    fp2_t ax, ay, bx, by, cx, cy;
    fp4_sqr(&ax, &ay, &f->c0.c0, &f->c1.c1);   /* A^2 */
    fp4_sqr(&bx, &by, &f->c1.c0, &f->c0.c2);   /* B^2 */
    fp4_sqr(&cx, &cy, &f->c0.c1, &f->c1.c2);   /* C^2 */
    fp2_mul_nonresidue(&cy, &cy);              /* s C^2 = xi cy + cx s */

    fp12_t r;
    comb_sub(&r.c0.c0, &ax, &f->c0.c0);        /* A'.x = 3 ax - 2 a.x */
    comb_add(&r.c1.c1, &ay, &f->c1.c1);        /* A'.y = 3 ay + 2 a.y */
    comb_add(&r.c1.c0, &cy, &f->c1.c0);        /* B'.x = 3 xi cy + 2 b.x */
    comb_sub(&r.c0.c2, &cx, &f->c0.c2);        /* B'.y = 3 cx - 2 b.y */
    comb_sub(&r.c0.c1, &bx, &f->c0.c1);        /* C'.x = 3 bx - 2 c.x */
    comb_add(&r.c1.c2, &by, &f->c1.c2);        /* C'.y = 3 by + 2 c.y */
    *o = r;
}

/* out = f^e for f in the cyclotomic subgroup, e plain little-endian of n limbs. */
static void cyc_pow(fp12_t *o, const fp12_t *f, const uint64_t *e, size_t n)
{
    fp12_t acc = FP12_ONE;
    bool started = false;
    for (size_t i = n; i-- > 0;)
        for (int b = 63; b >= 0; b--) {
            if (started) cyc_sqr(&acc, &acc);
            if ((e[i] >> b) & 1) {
                if (started) fp12_mul(&acc, &acc, f);
                else acc = *f;
                started = true;
            }
        }
    *o = acc;
}

/* out = f^x, x = -|x|: the inverse in the cyclotomic subgroup is the conjugate. */
static void cyc_pow_x(fp12_t *o, const fp12_t *f)
{
    static const uint64_t x_abs[1] = {BLS_X_ABS};
    cyc_pow(o, f, x_abs, 1);
    fp12_conj(o, o);
}

/* Hard part: Hayashida, Hayasaka, Teruya, "Efficient final exponentiation via cyclotomic
 * structure for pairings over families of elliptic curves" (ePrint 2020/875), for BLS12:
 *   3 Phi_12(p)/r = (x - 1)^2 (x + p)(x^2 + p^2 - 1) + 3
 * (checked with Python integers in docs/pairing.md). Four exponentiations by x (4 x 63 cyclotomic
 * squarings) plus one more for the last x^2, and a handful of multiplications and Frobenius maps.
 * The exponent is 3 times (p^12 - 1)/r: cubing is a bijection on GT (3 does not divide r), and
 * this is the value blst and zkcrypto's bls12_381 return, so Gt elements interoperate. */
void pairing_final_exp(fp12_t *out, const fp12_t *f)
{
    fp12_t t, a, b, c;
    /* easy part: t = f^((p^6 - 1)(p^2 + 1)); afterwards t is in the cyclotomic subgroup */
    if (!fp12_inv(&a, f)) {   /* f == 0 is no Miller loop output; 0^e = 0 */
        *out = a;
        return;
    }
    fp12_conj(&t, f);
    fp12_mul(&t, &t, &a);                   /* f^(p^6 - 1) */
    fp12_frobenius(&a, &t, 2);
    fp12_mul(&t, &a, &t);                   /* ^(p^2 + 1) */

    /* hard part: t^((x - 1)^2 (x + p)(x^2 + p^2 - 1) + 3) */
    cyc_pow_x(&a, &t);
    fp12_conj(&b, &t);
    fp12_mul(&a, &a, &b);                   /* a = t^(x - 1) */
    cyc_pow_x(&b, &a);
    fp12_conj(&a, &a);
    fp12_mul(&a, &b, &a);                   /* a = t^((x - 1)^2) */
    cyc_pow_x(&b, &a);
    fp12_frobenius(&c, &a, 1);
    fp12_mul(&b, &b, &c);                   /* b = a^(x + p) */
    cyc_pow_x(&c, &b);
    cyc_pow_x(&c, &c);                      /* b^(x^2) */
    fp12_frobenius(&a, &b, 2);
    fp12_mul(&c, &c, &a);                   /* * b^(p^2) */
    fp12_conj(&a, &b);
    fp12_mul(&c, &c, &a);                   /* * b^(-1) */
    cyc_sqr(&a, &t);
    fp12_mul(&a, &a, &t);                   /* t^3 */
    fp12_mul(out, &c, &a);
}
