/* point_impl.h: every G1/G2 point formula written once over a field FE (blst's ec_ops.h habit);
 * included by g1.c (FE = fp_t) and g2.c (FE = fp2_t), which define the parameters below.
 *
 * Parameters: PT(name) (prefix: g1_name), AFF, JAC, XYZZ (point types), FE (field type) and
 * FE_ADD FE_SUB FE_DBL FE_NEG FE_MUL FE_SQR FE_INV FE_IS_ZERO FE_EQ,
 * FE_ONE / FE_ZERO (constants), FE_MUL_B(out, a) (out = b * a for the curve's b),
 * FE_BATCH_GRAIN (points per batch-inversion chunk).
 *
 * Formulas are from the Explicit-Formulas Database (EFD, hyperelliptic.org/EFD/g1p/
 * auto-shortw-jacobian-0.html and auto-shortw-xyzz.html), a = 0. Costs count M (multiplication)
 * and S (squaring) in FE; additions are not counted. NOT CONSTANT-TIME: the special cases
 * (infinity, P == Q, P == -Q) branch on the data, which is fine for a prover whose inputs are
 * public or blinded. Every function reads all of its inputs before it writes out, so out may
 * alias any input. */

/* ---- predicates and conversions ---- */

bool PT(aff_is_inf)(const AFF *p) { return FE_IS_ZERO(&p->x) && FE_IS_ZERO(&p->y); }
bool PT(jac_is_inf)(const JAC *p) { return FE_IS_ZERO(&p->z); }
static inline bool PT(xyzz_is_inf_)(const XYZZ *p) { return FE_IS_ZERO(&p->zz); }

void PT(jac_set_inf)(JAC *p)
{
    p->x = FE_ONE;
    p->y = FE_ONE;
    p->z = FE_ZERO;
}

void PT(xyzz_set_inf)(XYZZ *p)
{
    p->x = FE_ONE;
    p->y = FE_ONE;
    p->zz = FE_ZERO;
    p->zzz = FE_ZERO;
}

void PT(jac_from_aff)(JAC *out, const AFF *p)
{
    if (PT(aff_is_inf)(p)) {
        PT(jac_set_inf)(out);
        return;
    }
    out->x = p->x;
    out->y = p->y;
    out->z = FE_ONE;
}

/* One inversion, 3M + 1S. Infinity maps to (0, 0) (blst convention, inverse of 0 is 0). */
void PT(jac_to_aff)(AFF *out, const JAC *p)
{
    if (PT(jac_is_inf)(p)) {
        out->x = FE_ZERO;
        out->y = FE_ZERO;
        return;
    }
    FE zi, zi2, zi3;
    FE_INV(&zi, &p->z);
    FE_SQR(&zi2, &zi);
    FE_MUL(&zi3, &zi2, &zi);
    FE_MUL(&out->x, &p->x, &zi2);   /* x = X / Z^2 */
    FE_MUL(&out->y, &p->y, &zi3);   /* y = Y / Z^3 */
}

/* (X/ZZ, Y/ZZZ) -> Jacobian without inversion: with ZZ = z^2, ZZZ = z^3 take Z' = ZZZ = z^3
 * (Jacobian scale t = z^2), so X' = X ZZ^2, Y' = Y ZZZ^2. 2M + 2S. ZZZ = 0 stays infinity. */
void PT(xyzz_to_jac)(JAC *out, const XYZZ *p)
{
    FE t, x, y;
    FE_SQR(&t, &p->zz);
    FE_MUL(&x, &p->x, &t);
    FE_SQR(&t, &p->zzz);
    FE_MUL(&y, &p->y, &t);
    out->z = p->zzz;
    out->x = x;
    out->y = y;
}

void PT(jac_neg)(JAC *out, const JAC *p)
{
    out->x = p->x;
    FE_NEG(&out->y, &p->y);
    out->z = p->z;
}

void PT(aff_neg)(AFF *out, const AFF *p)
{
    out->x = p->x;
    FE_NEG(&out->y, &p->y);   /* -0 = 0: infinity stays (0, 0) */
}

bool PT(aff_eq)(const AFF *p, const AFF *q) { return FE_EQ(&p->x, &q->x) && FE_EQ(&p->y, &q->y); }

/* X1 Z2^2 == X2 Z1^2 and Y1 Z2^3 == Y2 Z1^3. */
bool PT(jac_eq)(const JAC *p, const JAC *q)
{
    bool pi = PT(jac_is_inf)(p), qi = PT(jac_is_inf)(q);
    if (pi || qi) return pi && qi;
    FE z1z1, z2z2, a, b;
    FE_SQR(&z1z1, &p->z);
    FE_SQR(&z2z2, &q->z);
    FE_MUL(&a, &p->x, &z2z2);
    FE_MUL(&b, &q->x, &z1z1);
    if (!FE_EQ(&a, &b)) return false;
    FE_MUL(&z1z1, &z1z1, &p->z);
    FE_MUL(&z2z2, &z2z2, &q->z);
    FE_MUL(&a, &p->y, &z2z2);
    FE_MUL(&b, &q->y, &z1z1);
    return FE_EQ(&a, &b);
}

bool PT(aff_is_on_curve)(const AFF *p)
{
    if (PT(aff_is_inf)(p)) return true;
    FE l, r;
    FE_SQR(&l, &p->y);            /* y^2 */
    FE_SQR(&r, &p->x);
    FE_MUL(&r, &r, &p->x);        /* x^3 */
    FE one_b, one = FE_ONE;
    FE_MUL_B(&one_b, &one);
    FE_ADD(&r, &r, &one_b);       /* x^3 + b */
    return FE_EQ(&l, &r);
}

bool PT(jac_is_on_curve)(const JAC *p)
{
    if (PT(jac_is_inf)(p)) return true;
    FE l, r, z6;
    FE_SQR(&l, &p->y);            /* Y^2 */
    FE_SQR(&r, &p->x);
    FE_MUL(&r, &r, &p->x);        /* X^3 */
    FE_SQR(&z6, &p->z);
    FE_MUL(&z6, &z6, &p->z);
    FE_SQR(&z6, &z6);             /* Z^6 */
    FE_MUL_B(&z6, &z6);
    FE_ADD(&r, &r, &z6);          /* X^3 + b Z^6 */
    return FE_EQ(&l, &r);
}

/* ---- Jacobian ---- */

/* dbl-2009-l (Lange 2009), a = 0: 2M + 5S.
 * Infinity (Z = 0) gives Z3 = 2 Y1 Z1 = 0; a point of order 2 (Y = 0) also gives Z3 = 0, as it
 * should (neither curve group has one, since both orders are odd). */
void PT(jac_dbl)(JAC *out, const JAC *p)
{
    FE a, b, c, d, e, f, t;
    FE_SQR(&a, &p->x);                /* A = X1^2 */
    FE_SQR(&b, &p->y);                /* B = Y1^2 */
    FE_SQR(&c, &b);                   /* C = B^2 */
    FE_ADD(&d, &p->x, &b);
    FE_SQR(&d, &d);
    FE_SUB(&d, &d, &a);
    FE_SUB(&d, &d, &c);
    FE_DBL(&d, &d);                   /* D = 2((X1 + B)^2 - A - C) */
    FE_DBL(&e, &a);
    FE_ADD(&e, &e, &a);               /* E = 3A */
    FE_SQR(&f, &e);                   /* F = E^2 */
    FE_MUL(&t, &p->y, &p->z);
    FE_DBL(&out->z, &t);              /* Z3 = 2 Y1 Z1 (last read of p) */
    FE_SUB(&out->x, &f, &d);
    FE_SUB(&out->x, &out->x, &d);     /* X3 = F - 2D */
    FE_SUB(&t, &d, &out->x);
    FE_MUL(&t, &e, &t);
    FE_DBL(&c, &c);
    FE_DBL(&c, &c);
    FE_DBL(&c, &c);
    FE_SUB(&out->y, &t, &c);          /* Y3 = E (D - X3) - 8C */
}

/* add-2007-bl (Bernstein-Lange 2007): 11M + 5S. Complete: infinity on either side, P == Q
 * (H = 0, r = 0: falls back to doubling) and P == -Q (H = 0, r != 0: infinity). */
void PT(jac_add)(JAC *out, const JAC *p, const JAC *q)
{
    if (PT(jac_is_inf)(p)) {
        *out = *q;
        return;
    }
    if (PT(jac_is_inf)(q)) {
        *out = *p;
        return;
    }
    FE z1z1, z2z2, u1, u2, s1, s2, h, i, j, r, v, t, x3;
    FE_SQR(&z1z1, &p->z);             /* Z1Z1 = Z1^2 */
    FE_SQR(&z2z2, &q->z);             /* Z2Z2 = Z2^2 */
    FE_MUL(&u1, &p->x, &z2z2);        /* U1 = X1 Z2Z2 */
    FE_MUL(&u2, &q->x, &z1z1);        /* U2 = X2 Z1Z1 */
    FE_MUL(&s1, &p->y, &q->z);
    FE_MUL(&s1, &s1, &z2z2);          /* S1 = Y1 Z2 Z2Z2 */
    FE_MUL(&s2, &q->y, &p->z);
    FE_MUL(&s2, &s2, &z1z1);          /* S2 = Y2 Z1 Z1Z1 */
    FE_SUB(&h, &u2, &u1);             /* H = U2 - U1 */
    FE_SUB(&r, &s2, &s1);
    if (FE_IS_ZERO(&h)) {
        if (FE_IS_ZERO(&r)) PT(jac_dbl)(out, p);
        else PT(jac_set_inf)(out);
        return;
    }
    FE_DBL(&r, &r);                   /* r = 2 (S2 - S1) */
    FE_DBL(&i, &h);
    FE_SQR(&i, &i);                   /* I = (2H)^2 */
    FE_MUL(&j, &h, &i);               /* J = H I */
    FE_MUL(&v, &u1, &i);              /* V = U1 I */
    FE_ADD(&t, &p->z, &q->z);
    FE_SQR(&t, &t);
    FE_SUB(&t, &t, &z1z1);
    FE_SUB(&t, &t, &z2z2);
    FE_MUL(&out->z, &t, &h);          /* Z3 = ((Z1 + Z2)^2 - Z1Z1 - Z2Z2) H */
    FE_SQR(&x3, &r);
    FE_SUB(&x3, &x3, &j);
    FE_SUB(&x3, &x3, &v);
    FE_SUB(&x3, &x3, &v);             /* X3 = r^2 - J - 2V */
    FE_SUB(&t, &v, &x3);
    FE_MUL(&t, &t, &r);
    FE_MUL(&s1, &s1, &j);
    FE_DBL(&s1, &s1);
    FE_SUB(&out->y, &t, &s1);         /* Y3 = r (V - X3) - 2 S1 J */
    out->x = x3;
}

/* madd-2007-bl (Bernstein-Lange 2007), Z2 = 1: 7M + 4S. Complete as jac_add; an affine
 * infinity (0, 0) is recognised. */
void PT(jac_add_aff)(JAC *out, const JAC *p, const AFF *q)
{
    if (PT(aff_is_inf)(q)) {
        *out = *p;
        return;
    }
    if (PT(jac_is_inf)(p)) {
        PT(jac_from_aff)(out, q);
        return;
    }
    FE z1z1, u2, s2, h, hh, i, j, r, v, t, x3, z3;
    FE_SQR(&z1z1, &p->z);             /* Z1Z1 = Z1^2 */
    FE_MUL(&u2, &q->x, &z1z1);        /* U2 = X2 Z1Z1 */
    FE_MUL(&s2, &q->y, &p->z);
    FE_MUL(&s2, &s2, &z1z1);          /* S2 = Y2 Z1 Z1Z1 */
    FE_SUB(&h, &u2, &p->x);           /* H = U2 - X1 */
    FE_SUB(&r, &s2, &p->y);
    if (FE_IS_ZERO(&h)) {
        if (FE_IS_ZERO(&r)) PT(jac_dbl)(out, p);
        else PT(jac_set_inf)(out);
        return;
    }
    FE_DBL(&r, &r);                   /* r = 2 (S2 - Y1) */
    FE_SQR(&hh, &h);                  /* HH = H^2 */
    FE_DBL(&i, &hh);
    FE_DBL(&i, &i);                   /* I = 4 HH */
    FE_MUL(&j, &h, &i);               /* J = H I */
    FE_MUL(&v, &p->x, &i);            /* V = X1 I */
    FE_ADD(&z3, &p->z, &h);
    FE_SQR(&z3, &z3);
    FE_SUB(&z3, &z3, &z1z1);
    FE_SUB(&z3, &z3, &hh);            /* Z3 = (Z1 + H)^2 - Z1Z1 - HH */
    FE_MUL(&hh, &p->y, &j);           /* Y1 J (reusing hh), read before out is written */
    FE_SQR(&x3, &r);
    FE_SUB(&x3, &x3, &j);
    FE_SUB(&x3, &x3, &v);
    FE_SUB(&x3, &x3, &v);             /* X3 = r^2 - J - 2V */
    FE_SUB(&t, &v, &x3);
    FE_MUL(&t, &t, &r);
    FE_DBL(&hh, &hh);
    FE_SUB(&out->y, &t, &hh);         /* Y3 = r (V - X3) - 2 Y1 J */
    out->x = x3;
    out->z = z3;
}

/* ---- XYZZ (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2); the MSM's bucket coordinates ---- */

/* dbl-2008-s-1 (Sutherland 2008), a = 0: 6M + 3S. Infinity stays infinity (V = W = 0 only
 * when Y1 = 0, which needs a point of order 2; the ZZ = 0 case passes through as ZZ3 = 0). */
void PT(xyzz_dbl)(XYZZ *out, const XYZZ *p)
{
    FE u, v, w, s, m, t, x3;
    FE_DBL(&u, &p->y);                /* U = 2 Y1 */
    FE_SQR(&v, &u);                   /* V = U^2 */
    FE_MUL(&w, &u, &v);               /* W = U V */
    FE_MUL(&s, &p->x, &v);            /* S = X1 V */
    FE_SQR(&m, &p->x);
    FE_DBL(&t, &m);
    FE_ADD(&m, &m, &t);               /* M = 3 X1^2 */
    FE_SQR(&x3, &m);
    FE_SUB(&x3, &x3, &s);
    FE_SUB(&x3, &x3, &s);             /* X3 = M^2 - 2S */
    FE_SUB(&t, &s, &x3);
    FE_MUL(&t, &m, &t);
    FE_MUL(&u, &w, &p->y);
    FE_SUB(&out->y, &t, &u);          /* Y3 = M (S - X3) - W Y1 */
    FE_MUL(&out->zz, &v, &p->zz);     /* ZZ3 = V ZZ1 */
    FE_MUL(&out->zzz, &w, &p->zzz);   /* ZZZ3 = W ZZZ1 */
    out->x = x3;
}

/* add-2008-s (Sutherland 2008): 12M + 2S. Complete: infinity on either side, P == Q
 * (P = R = 0: doubling), P == -Q (P = 0, R != 0: infinity). */
void PT(xyzz_add)(XYZZ *out, const XYZZ *p, const XYZZ *q)
{
    if (PT(xyzz_is_inf_)(p)) {
        *out = *q;
        return;
    }
    if (PT(xyzz_is_inf_)(q)) {
        *out = *p;
        return;
    }
    FE u1, u2, s1, s2, pp, ppp, qq, r, t, x3;
    FE_MUL(&u1, &p->x, &q->zz);       /* U1 = X1 ZZ2 */
    FE_MUL(&u2, &q->x, &p->zz);       /* U2 = X2 ZZ1 */
    FE_MUL(&s1, &p->y, &q->zzz);      /* S1 = Y1 ZZZ2 */
    FE_MUL(&s2, &q->y, &p->zzz);      /* S2 = Y2 ZZZ1 */
    FE_SUB(&u2, &u2, &u1);            /* P = U2 - U1 */
    FE_SUB(&r, &s2, &s1);             /* R = S2 - S1 */
    if (FE_IS_ZERO(&u2)) {
        if (FE_IS_ZERO(&r)) PT(xyzz_dbl)(out, p);
        else PT(xyzz_set_inf)(out);
        return;
    }
    FE_SQR(&pp, &u2);                 /* PP = P^2 */
    FE_MUL(&ppp, &u2, &pp);           /* PPP = P PP */
    FE_MUL(&qq, &u1, &pp);            /* Q = U1 PP */
    FE_SQR(&x3, &r);
    FE_SUB(&x3, &x3, &ppp);
    FE_SUB(&x3, &x3, &qq);
    FE_SUB(&x3, &x3, &qq);            /* X3 = R^2 - PPP - 2Q */
    FE_SUB(&t, &qq, &x3);
    FE_MUL(&t, &t, &r);
    FE_MUL(&s1, &s1, &ppp);
    FE_SUB(&out->y, &t, &s1);         /* Y3 = R (Q - X3) - S1 PPP */
    FE_MUL(&t, &p->zz, &q->zz);
    FE_MUL(&out->zz, &t, &pp);        /* ZZ3 = ZZ1 ZZ2 PP */
    FE_MUL(&t, &p->zzz, &q->zzz);
    FE_MUL(&out->zzz, &t, &ppp);      /* ZZZ3 = ZZZ1 ZZZ2 PPP */
    out->x = x3;
}

/* madd-2008-s (Sutherland 2008), ZZ2 = ZZZ2 = 1: 8M + 2S. Complete as xyzz_add; an empty
 * bucket simply takes the affine point (the mmadd-2008-s case collapses to a copy). */
void PT(xyzz_add_aff)(XYZZ *out, const XYZZ *p, const AFF *q)
{
    if (PT(aff_is_inf)(q)) {
        *out = *p;
        return;
    }
    if (PT(xyzz_is_inf_)(p)) {
        out->x = q->x;
        out->y = q->y;
        out->zz = FE_ONE;
        out->zzz = FE_ONE;
        return;
    }
    FE u2, s2, pp, ppp, qq, r, t, x3;
    FE_MUL(&u2, &q->x, &p->zz);       /* U2 = X2 ZZ1 */
    FE_MUL(&s2, &q->y, &p->zzz);      /* S2 = Y2 ZZZ1 */
    FE_SUB(&u2, &u2, &p->x);          /* P = U2 - X1 */
    FE_SUB(&r, &s2, &p->y);           /* R = S2 - Y1 */
    if (FE_IS_ZERO(&u2)) {
        if (FE_IS_ZERO(&r)) {
            XYZZ a = {q->x, q->y, FE_ONE, FE_ONE};
            PT(xyzz_dbl)(out, &a);
        } else {
            PT(xyzz_set_inf)(out);
        }
        return;
    }
    FE_SQR(&pp, &u2);                 /* PP = P^2 */
    FE_MUL(&ppp, &u2, &pp);           /* PPP = P PP */
    FE_MUL(&qq, &p->x, &pp);          /* Q = X1 PP */
    FE_SQR(&x3, &r);
    FE_SUB(&x3, &x3, &ppp);
    FE_SUB(&x3, &x3, &qq);
    FE_SUB(&x3, &x3, &qq);            /* X3 = R^2 - PPP - 2Q */
    FE_SUB(&t, &qq, &x3);
    FE_MUL(&t, &t, &r);
    FE_MUL(&s2, &p->y, &ppp);
    FE_SUB(&out->y, &t, &s2);         /* Y3 = R (Q - X3) - Y1 PPP */
    FE_MUL(&out->zz, &p->zz, &pp);    /* ZZ3 = ZZ1 PP */
    FE_MUL(&out->zzz, &p->zzz, &ppp); /* ZZZ3 = ZZZ1 PPP */
    out->x = x3;
}

/* ---- scalar multiplication ---- */

/* Fixed 4-bit window, most significant nibble first: 14 table additions, then per nibble 4
 * doublings and at most one addition (~255 dbl + ~64 add for a 255-bit k). */
void PT(jac_mul_u64s)(JAC *out, const JAC *p, const uint64_t *k, size_t n)
{
    JAC tab[16], acc;
    PT(jac_set_inf)(&tab[0]);
    tab[1] = *p;
    for (int i = 2; i < 16; i++) {
        if (i % 2 == 0) PT(jac_dbl)(&tab[i], &tab[i / 2]);
        else PT(jac_add)(&tab[i], &tab[i - 1], p);
    }
    PT(jac_set_inf)(&acc);
    bool started = false;
    for (size_t li = n; li-- > 0;) {
        for (int sh = 60; sh >= 0; sh -= 4) {
            unsigned w = (unsigned)(k[li] >> sh) & 15;
            if (started) {
                for (int d = 0; d < 4; d++) PT(jac_dbl)(&acc, &acc);
            }
            if (w) {
                PT(jac_add)(&acc, &acc, &tab[w]);
                started = true;
            }
        }
    }
    *out = acc;
}

/* k P for a sparse 64-bit k (the subgroup checks' |u| = 0xd201000000010000, weight 6):
 * plain left-to-right double-and-add, 63 dbl + 5 add, cheaper there than the window's table.
 * P is given as pa (affine: the additions are mixed, 7M + 4S) or, when pa is NULL, as pj. */
static void PT(mul_sparse_)(JAC *out, const JAC *pj, const AFF *pa, uint64_t k)
{
    JAC acc;
    PT(jac_set_inf)(&acc);
    for (int b = 63; b >= 0; b--) {
        if (!PT(jac_is_inf)(&acc)) PT(jac_dbl)(&acc, &acc);
        if (!((k >> b) & 1)) continue;
        if (pa) PT(jac_add_aff)(&acc, &acc, pa);
        else PT(jac_add)(&acc, &acc, pj);
    }
    *out = acc;
}

void PT(jac_mul_fr)(JAC *out, const JAC *p, const fr_t *s)
{
    uint64_t k[4];
    fr_from_mont(k, s);
    PT(jac_mul_u64s)(out, p, k, 4);
}

/* ---- batch conversion to affine ---- */

struct PT(batch_ctx_) {
    AFF *out;
    const JAC *in;
};

/* Montgomery's trick on one chunk: out[i].x holds the prefix product of the non-zero Z's
 * before i (no scratch allocation), then one inversion walks back. 3M per point for the trick
 * plus 3M + 1S for the coordinates. */
static void PT(batch_chunk_)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct PT(batch_ctx_) *c = vctx;
    FE acc = FE_ONE, inv, zi, zi2;
    for (size_t i = begin; i < end; i++) {
        c->out[i].x = acc;
        if (!FE_IS_ZERO(&c->in[i].z)) FE_MUL(&acc, &acc, &c->in[i].z);
    }
    FE_INV(&inv, &acc);
    for (size_t i = end; i-- > begin;) {
        const JAC *p = &c->in[i];
        if (FE_IS_ZERO(&p->z)) {
            c->out[i].x = FE_ZERO;
            c->out[i].y = FE_ZERO;
            continue;
        }
        FE_MUL(&zi, &inv, &c->out[i].x);   /* 1/Z_i = (prefix_i) / (prefix_{i+1}) */
        FE_MUL(&inv, &inv, &p->z);         /* drop Z_i from the running inverse */
        FE_SQR(&zi2, &zi);
        FE_MUL(&c->out[i].x, &p->x, &zi2);
        FE_MUL(&zi2, &zi2, &zi);
        FE_MUL(&c->out[i].y, &p->y, &zi2);
    }
}

/* out and in must not overlap (different element sizes). */
void PT(batch_to_aff)(AFF *out, const JAC *in, size_t n, struct pool *pool)
{
    struct PT(batch_ctx_) c = {out, in};
    pool_parallel_for(pool, n, FE_BATCH_GRAIN, PT(batch_chunk_), &c);
}
