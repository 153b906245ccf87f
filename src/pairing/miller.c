/* miller.c: the optimal ate Miller loop on BLS12-381 (one pair or many with shared squarings),
 * and the public pairing entry points. The final exponentiation is in final_exp.c.
 * See docs/pairing.md for the twist, the line formulas and their sources. */
#include "cuzk/pairing.h"

/* |x| for the BLS parameter x = -0xd201000000010000; x < 0, so the loop's result is conjugated. */
#define BLS_X_ABS 0xd201000000010000ULL
/* Pairs processed together on the stack; more pairs run in several chunks whose results are
 * multiplied (the library does not allocate). 16 pairs take about 10 KiB. */
#define MILLER_CHUNK 16

/* G2 point on the twist E': Y^2 Z = X^3 + b' Z^3, b' = 4(u+1), homogeneous projective. */
typedef struct { fp2_t x, y, z; } g2_proj_t;

/* Per-pair loop state: the running point T = [k]Q, the affine Q, and P's coordinates as the
 * line evaluations use them. */
typedef struct {
    g2_proj_t t;
    fp2_t qx, qy;
    fp_t neg_px, py;
} miller_pair_t;

/* A line evaluated at P, already multiplied into the M-type position: l0 + l1 v + l4 v w
 * (coefficients 0, 1 and 4 of the six Fp2 coefficients c0.c0 c0.c1 c0.c2 c1.c0 c1.c1 c1.c2). */
typedef struct { fp2_t l0, l1, l4; } line_t;

static bool g1_is_inf(const g1_aff_t *p) { return fp_is_zero(&p->x) && fp_is_zero(&p->y); }
static bool g2_is_inf(const g2_aff_t *q) { return fp2_is_zero(&q->x) && fp2_is_zero(&q->y); }

/* out = 12 a (three doublings and an add; no multiplication). */
static void fp2_mul12(fp2_t *out, const fp2_t *a)
{
    fp2_t a4, a8;
    fp2_dbl(&a4, a);
    fp2_dbl(&a4, &a4);
    fp2_dbl(&a8, &a4);
    fp2_add(out, &a8, &a4);
}

/* Doubling step: T <- 2T and the tangent line at T evaluated at P.
 * The untwist is psi(x', y') = (x' / w^2, y' / w^3) (w^6 = u + 1, M-type). The tangent on E,
 * scaled by w^3 and by 2YZ (both die in the final exponentiation, being in Fp4), is
 *   (Y^2 - 3b'Z^2) - 3X^2 xP v + 2YZ yP v w.
 * Point formulas: Costello, Lange, Naehrig, "Faster pairing computations on curves with
 * high-degree twists" (PKC 2010), as written in Aranha, Karabina, Longa, Gebotys, Lopez,
 * "Faster explicit formulas for computing pairings over ordinary curves" (Eurocrypt 2011),
 * eq. (10), with every coordinate scaled by 4 to avoid halvings:
 *   X3 = 2XY (Y^2 - 9b'Z^2), Y3 = (Y^2 + 9b'Z^2)^2 - 108 b'^2 Z^4, Z3 = 8 Y^3 Z.
 * Cost: 3M + 6S in Fp2, plus 4 Fp muls for the line. Not constant-time; T must not be
 * infinity (never happens for Q in G2: the loop counter is below r). */
static void dbl_step(line_t *l, g2_proj_t *t, const fp_t *neg_px, const fp_t *py)
{
    fp2_t A, B, C, E, F, H, X2, s;
    fp2_mul(&A, &t->x, &t->y);              /* A = XY */
    fp2_sqr(&B, &t->y);                     /* B = Y^2 */
    fp2_sqr(&C, &t->z);                     /* C = Z^2 */
    fp2_mul_nonresidue(&E, &C);
    fp2_mul12(&E, &E);                      /* E = 3b'C = 12 (u+1) Z^2 */
    fp2_add(&F, &E, &E);
    fp2_add(&F, &F, &E);                    /* F = 3E = 9b'Z^2 */
    fp2_add(&H, &t->y, &t->z);
    fp2_sqr(&H, &H);
    fp2_sub(&H, &H, &B);
    fp2_sub(&H, &H, &C);                    /* H = 2YZ */
    fp2_sqr(&X2, &t->x);                    /* X^2 */

    fp2_sub(&l->l0, &B, &E);                /* Y^2 - 3b'Z^2 */
    fp2_add(&s, &X2, &X2);
    fp2_add(&s, &s, &X2);
    fp2_mul_fp(&l->l1, &s, neg_px);         /* -3X^2 xP */
    fp2_mul_fp(&l->l4, &H, py);             /* 2YZ yP */

    fp2_sub(&s, &B, &F);
    fp2_mul(&s, &s, &A);
    fp2_dbl(&t->x, &s);                     /* X3 = 2XY (B - F) */
    fp2_mul(&t->z, &B, &H);
    fp2_dbl(&t->z, &t->z);
    fp2_dbl(&t->z, &t->z);                  /* Z3 = 4 B H = 8 Y^3 Z */
    fp2_add(&s, &B, &F);
    fp2_sqr(&s, &s);                        /* (B + F)^2 */
    fp2_sqr(&E, &E);
    fp2_mul12(&E, &E);                      /* 12 E^2 = 108 b'^2 Z^4 */
    fp2_sub(&t->y, &s, &E);                 /* Y3 */
}

/* Addition step: T <- T + Q (Q affine) and the line through T and Q evaluated at P.
 * With theta = Y - yQ Z and lambda = X - xQ Z (slope theta/lambda), the line through Q scaled
 * by w^3 and lambda is (theta xQ - lambda yQ) - theta xP v + lambda yP v w.
 * Point formulas (same sources as dbl_step): C = theta^2, D = lambda^2, E = lambda D,
 * F = Z C, G = X D, H = E + F - 2G; X3 = lambda H, Y3 = theta (G - H) - Y E, Z3 = Z E.
 * Cost: 11M + 2S in Fp2 plus 4 Fp muls. Not constant-time; T != +-Q (true inside the loop). */
static void add_step(line_t *l, g2_proj_t *t, const fp2_t *qx, const fp2_t *qy,
                     const fp_t *neg_px, const fp_t *py)
{
    fp2_t theta, lambda, C, D, E, F, G, H, s;
    fp2_mul(&theta, qy, &t->z);
    fp2_sub(&theta, &t->y, &theta);         /* theta = Y - yQ Z */
    fp2_mul(&lambda, qx, &t->z);
    fp2_sub(&lambda, &t->x, &lambda);       /* lambda = X - xQ Z */

    fp2_mul(&l->l0, &theta, qx);
    fp2_mul(&s, &lambda, qy);
    fp2_sub(&l->l0, &l->l0, &s);            /* theta xQ - lambda yQ */
    fp2_mul_fp(&l->l1, &theta, neg_px);     /* -theta xP */
    fp2_mul_fp(&l->l4, &lambda, py);        /* lambda yP */

    fp2_sqr(&C, &theta);
    fp2_sqr(&D, &lambda);
    fp2_mul(&E, &lambda, &D);
    fp2_mul(&F, &t->z, &C);
    fp2_mul(&G, &t->x, &D);
    fp2_add(&H, &E, &F);
    fp2_sub(&H, &H, &G);
    fp2_sub(&H, &H, &G);                    /* H = E + F - 2G */
    fp2_mul(&t->x, &lambda, &H);            /* X3 = lambda H */
    fp2_sub(&s, &G, &H);
    fp2_mul(&s, &s, &theta);
    fp2_mul(&G, &t->y, &E);
    fp2_sub(&t->y, &s, &G);                 /* Y3 = theta (G - H) - Y E */
    fp2_mul(&t->z, &t->z, &E);              /* Z3 = Z E */
}

/* a * (b0 + b1 v), a in Fp6: Karatsuba, 5 Fp2 muls. */
static void fp6_mul_by_01(fp6_t *o, const fp6_t *a, const fp2_t *b0, const fp2_t *b1)
{
    fp2_t t0, t1, s, u, c0, c1, c2;
    fp2_mul(&t0, &a->c0, b0);
    fp2_mul(&t1, &a->c1, b1);
    fp2_add(&s, &a->c1, &a->c2);
    fp2_mul(&c0, &s, b1);
    fp2_sub(&c0, &c0, &t1);                 /* a2 b1 */
    fp2_mul_nonresidue(&c0, &c0);
    fp2_add(&c0, &c0, &t0);                 /* c0 = a0 b0 + xi a2 b1 */
    fp2_add(&s, &a->c0, &a->c1);
    fp2_add(&u, b0, b1);
    fp2_mul(&c1, &s, &u);
    fp2_sub(&c1, &c1, &t0);
    fp2_sub(&c1, &c1, &t1);                 /* c1 = a0 b1 + a1 b0 */
    fp2_add(&s, &a->c0, &a->c2);
    fp2_mul(&c2, &s, b0);
    fp2_sub(&c2, &c2, &t0);
    fp2_add(&c2, &c2, &t1);                 /* c2 = a1 b1 + a2 b0 */
    o->c0 = c0;
    o->c1 = c1;
    o->c2 = c2;
}

/* a * (b1 v), a in Fp6: 3 Fp2 muls. */
static void fp6_mul_by_1(fp6_t *o, const fp6_t *a, const fp2_t *b1)
{
    fp2_t c0;
    fp2_mul(&c0, &a->c2, b1);
    fp2_mul_nonresidue(&c0, &c0);           /* xi a2 b1 */
    fp2_mul(&o->c2, &a->c1, b1);
    fp2_mul(&o->c1, &a->c0, b1);
    o->c0 = c0;
}

/* f <- f * (l0 + l1 v + l4 v w): Karatsuba over Fp6 with both halves sparse, 13 Fp2 muls
 * (a full fp12_mul is 18). */
static void fp12_mul_by_014(fp12_t *f, const line_t *l)
{
    fp6_t t0, t1, s;
    fp2_t l14;
    fp6_mul_by_01(&t0, &f->c0, &l->l0, &l->l1);
    fp6_mul_by_1(&t1, &f->c1, &l->l4);
    fp6_add(&s, &f->c0, &f->c1);
    fp2_add(&l14, &l->l1, &l->l4);
    fp6_mul_by_01(&s, &s, &l->l0, &l14);
    fp6_sub(&s, &s, &t0);
    fp6_sub(&f->c1, &s, &t1);               /* c1 = (a + b)(L0 + L1) - a L0 - b L1 */
    fp6_mul_by_v(&t1, &t1);
    fp6_add(&f->c0, &t0, &t1);              /* c0 = a L0 + v b L1 */
}

/* f = prod_j f_{|x|, Q_j}(P_j) over m pairs (m >= 1), squarings shared. No conjugation. */
static void miller_chunk(fp12_t *f, miller_pair_t *st, size_t m)
{
    line_t l;
    *f = FP12_ONE;
    for (int i = 62; i >= 0; i--) {
        if (i != 62) fp12_sqr(f, f);        /* f = 1 before the first step */
        for (size_t j = 0; j < m; j++) {
            dbl_step(&l, &st[j].t, &st[j].neg_px, &st[j].py);
            fp12_mul_by_014(f, &l);
        }
        if ((BLS_X_ABS >> i) & 1) {
            for (size_t j = 0; j < m; j++) {
                add_step(&l, &st[j].t, &st[j].qx, &st[j].qy, &st[j].neg_px, &st[j].py);
                fp12_mul_by_014(f, &l);
            }
        }
    }
}

void pairing_miller_loop_n(fp12_t *out, const g1_aff_t *ps, const g2_aff_t *qs, size_t n)
{
    miller_pair_t st[MILLER_CHUNK];
    fp12_t acc = FP12_ONE, f;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (g1_is_inf(&ps[i]) || g2_is_inf(&qs[i])) continue;   /* e(O, Q) = e(P, O) = 1 */
        miller_pair_t *s = &st[m++];
        s->t.x = qs[i].x;
        s->t.y = qs[i].y;
        s->t.z = FP2_ONE;
        s->qx = qs[i].x;
        s->qy = qs[i].y;
        fp_neg(&s->neg_px, &ps[i].x);
        s->py = ps[i].y;
        if (m == MILLER_CHUNK || i + 1 == n) {
            miller_chunk(&f, st, m);
            fp12_mul(&acc, &acc, &f);
            m = 0;
        }
    }
    if (m) {   /* the last pairs were followed by skipped ones */
        miller_chunk(&f, st, m);
        fp12_mul(&acc, &acc, &f);
    }
    /* x < 0: f_{x,Q} = 1 / (f_{|x|,Q} v_{[|x|]Q}). The vertical line lies in Fp6 and dies in
     * the final exponentiation; so does f^(p^6) * f (r divides p^6 + 1), hence 1/f can be
     * replaced by conj(f) = f^(p^6). */
    fp12_conj(out, &acc);
}

/* ------------------------------------------------ one Q, several P (shared lines) -- */

/* Per-Q state for pairing_miller_loop_shared: the G2 side once, the k G1 points beside it. */
typedef struct {
    g2_proj_t t;
    fp2_t qx, qy;
    fp_t neg_px[PAIRING_SHARED_MAX], py[PAIRING_SHARED_MAX];
    bool skip[PAIRING_SHARED_MAX];
} shared_pair_t;

/* The step functions evaluate the line at P as l1 * (-xP), l4 * yP; with -xP = yP = 1 they
 * return the raw coefficients, which are then scaled for each P: the same field operations,
 * so the same values as pairing_miller_loop_n. */
static void eval_line(line_t *l, const line_t *raw, const fp_t *neg_px, const fp_t *py)
{
    l->l0 = raw->l0;
    fp2_mul_fp(&l->l1, &raw->l1, neg_px);
    fp2_mul_fp(&l->l4, &raw->l4, py);
}

static void miller_chunk_shared(fp12_t *f, size_t k, shared_pair_t *st, size_t m)
{
    line_t raw, l;
    for (size_t j = 0; j < k; j++) f[j] = FP12_ONE;
    for (int i = 62; i >= 0; i--) {
        if (i != 62)
            for (size_t j = 0; j < k; j++) fp12_sqr(&f[j], &f[j]);
        for (size_t s = 0; s < m; s++) {
            dbl_step(&raw, &st[s].t, &FP_ONE, &FP_ONE);
            for (size_t j = 0; j < k; j++) {
                if (st[s].skip[j]) continue;
                eval_line(&l, &raw, &st[s].neg_px[j], &st[s].py[j]);
                fp12_mul_by_014(&f[j], &l);
            }
        }
        if ((BLS_X_ABS >> i) & 1) {
            for (size_t s = 0; s < m; s++) {
                add_step(&raw, &st[s].t, &st[s].qx, &st[s].qy, &FP_ONE, &FP_ONE);
                for (size_t j = 0; j < k; j++) {
                    if (st[s].skip[j]) continue;
                    eval_line(&l, &raw, &st[s].neg_px[j], &st[s].py[j]);
                    fp12_mul_by_014(&f[j], &l);
                }
            }
        }
    }
}

void pairing_miller_loop_shared(fp12_t *outs, size_t k, const g1_aff_t *const *ps,
                                const g2_aff_t *qs, size_t n)
{
    shared_pair_t st[MILLER_CHUNK];
    fp12_t acc[PAIRING_SHARED_MAX], f[PAIRING_SHARED_MAX];
    if (k > PAIRING_SHARED_MAX) k = PAIRING_SHARED_MAX;
    for (size_t j = 0; j < k; j++) acc[j] = FP12_ONE;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (g2_is_inf(&qs[i])) continue;
        shared_pair_t *s = &st[m];
        bool any = false;
        for (size_t j = 0; j < k; j++) {
            s->skip[j] = g1_is_inf(&ps[j][i]);
            if (s->skip[j]) continue;
            any = true;
            fp_neg(&s->neg_px[j], &ps[j][i].x);
            s->py[j] = ps[j][i].y;
        }
        if (!any) continue;
        s->t.x = qs[i].x;
        s->t.y = qs[i].y;
        s->t.z = FP2_ONE;
        s->qx = qs[i].x;
        s->qy = qs[i].y;
        if (++m == MILLER_CHUNK) {
            miller_chunk_shared(f, k, st, m);
            for (size_t j = 0; j < k; j++) fp12_mul(&acc[j], &acc[j], &f[j]);
            m = 0;
        }
    }
    if (m) {
        miller_chunk_shared(f, k, st, m);
        for (size_t j = 0; j < k; j++) fp12_mul(&acc[j], &acc[j], &f[j]);
    }
    for (size_t j = 0; j < k; j++) fp12_conj(&outs[j], &acc[j]);   /* x < 0, as above */
}

void pairing(fp12_t *out, const g1_aff_t *p, const g2_aff_t *q)
{
    fp12_t f;
    pairing_miller_loop_n(&f, p, q, 1);
    pairing_final_exp(out, &f);
}

bool pairing_product_is_one(const g1_aff_t *ps, const g2_aff_t *qs, size_t n)
{
    fp12_t f;
    pairing_miller_loop_n(&f, ps, qs, n);
    pairing_final_exp(&f, &f);
    return fp12_is_one(&f);
}
