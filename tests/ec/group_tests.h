/* group_tests.h: the group-law, coordinate, scalar-multiplication and subgroup tests, written
 * once and included by test_g1.c (over Fp) and test_g2.c (over Fp2). The oracle is the
 * textbook affine chord-and-tangent law with one field inversion per operation (written here,
 * independently of src/ec's projective formulas), plus plain double-and-add for scalars and
 * r P == O for subgroup membership.
 *
 * Parameters from the includer: PT(name) (library prefix), AFF JAC XYZZ FE, FE_ADD FE_SUB
 * FE_MUL FE_SQR FE_INV FE_NEG FE_EQ FE_IS_ZERO FE_SQRT, FE_ONE, fe_rand(FE *), fe_b(FE *)
 * (the curve's b), GEN (generator), COFACTOR / COFACTOR_LIMBS, N_RAND (iteration scale). */

/* ---- helpers ---- */

static void fp_rand(fp_t *o)
{
    for (;;) {
        uint8_t b[48];
        cuzk_rng_bytes(test_rng(), b, sizeof b);
        b[0] &= 0x1f;
        if (fp_from_bytes_be(o, b) == CUZK_OK) return;
    }
}

static void fr_rand(fr_t *o)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    fr_from_wide_le(o, b);
}

static void fe_rand_nonzero(FE *o)
{
    do fe_rand(o);
    while (FE_IS_ZERO(o));
}

/* A uniformly random point of the whole curve group E(F): almost never in the subgroup. */
static void rand_curve_point(AFF *o)
{
    for (;;) {
        FE x, rhs, b, y;
        fe_rand(&x);
        FE_SQR(&rhs, &x);
        FE_MUL(&rhs, &rhs, &x);
        fe_b(&b);
        FE_ADD(&rhs, &rhs, &b);
        if (!FE_SQRT(&y, &rhs)) continue;
        if (cuzk_rng_u64(test_rng()) & 1) FE_NEG(&y, &y);
        o->x = x;
        o->y = y;
        return;
    }
}

/* The same point with a random projective scale: (x l^2, y l^3, l). */
static void rand_jac(JAC *o, const AFF *p)
{
    if (PT(aff_is_inf)(p)) {
        PT(jac_set_inf)(o);
        fe_rand(&o->x);   /* any X, Y with Z = 0 is infinity */
        return;
    }
    FE l, l2, l3;
    fe_rand_nonzero(&l);
    FE_SQR(&l2, &l);
    FE_MUL(&l3, &l2, &l);
    FE_MUL(&o->x, &p->x, &l2);
    FE_MUL(&o->y, &p->y, &l3);
    o->z = l;
}

static void rand_xyzz(XYZZ *o, const AFF *p)
{
    if (PT(aff_is_inf)(p)) {
        PT(xyzz_set_inf)(o);
        return;
    }
    FE l, l2, l3;
    fe_rand_nonzero(&l);
    FE_SQR(&l2, &l);
    FE_MUL(&l3, &l2, &l);
    FE_MUL(&o->x, &p->x, &l2);
    FE_MUL(&o->y, &p->y, &l3);
    o->zz = l2;
    o->zzz = l3;
}

static void xyzz_to_aff(AFF *o, const XYZZ *p)
{
    JAC j;
    PT(xyzz_to_jac)(&j, p);
    PT(jac_to_aff)(o, &j);
}

/* Oracle: affine chord-and-tangent, with the identity as (0, 0). */
static void oracle_add(AFF *o, const AFF *p, const AFF *q)
{
    if (PT(aff_is_inf)(p)) { *o = *q; return; }
    if (PT(aff_is_inf)(q)) { *o = *p; return; }
    FE lam, t, x3, y3;
    if (FE_EQ(&p->x, &q->x)) {
        FE s;
        FE_ADD(&s, &p->y, &q->y);
        if (FE_IS_ZERO(&s)) {   /* q = -p */
            memset(o, 0, sizeof *o);
            return;
        }
        FE_SQR(&t, &p->x);      /* lambda = 3 x^2 / 2y */
        FE_ADD(&lam, &t, &t);
        FE_ADD(&lam, &lam, &t);
        FE_ADD(&t, &p->y, &p->y);
        FE_INV(&t, &t);
        FE_MUL(&lam, &lam, &t);
    } else {                    /* lambda = (y2 - y1) / (x2 - x1) */
        FE_SUB(&t, &q->x, &p->x);
        FE_INV(&t, &t);
        FE_SUB(&lam, &q->y, &p->y);
        FE_MUL(&lam, &lam, &t);
    }
    FE_SQR(&x3, &lam);
    FE_SUB(&x3, &x3, &p->x);
    FE_SUB(&x3, &x3, &q->x);
    FE_SUB(&t, &p->x, &x3);
    FE_MUL(&y3, &lam, &t);
    FE_SUB(&y3, &y3, &p->y);
    o->x = x3;
    o->y = y3;
}

/* Oracle: right-to-left double-and-add on affine points, k as n little-endian limbs. */
static void oracle_mul(AFF *o, const AFF *p, const uint64_t *k, size_t n)
{
    AFF acc, base = *p;
    memset(&acc, 0, sizeof acc);
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 64; b++) {
            if ((k[i] >> b) & 1) oracle_add(&acc, &acc, &base);
            oracle_add(&base, &base, &base);
        }
    *o = acc;
}

/* Faster double-and-add with the library's Jacobian dbl/add (themselves checked against the
 * affine oracle above), for the many-point slow checks. */
static void naive_mul(JAC *o, const JAC *p, const uint64_t *k, size_t n)
{
    JAC acc;
    PT(jac_set_inf)(&acc);
    for (size_t i = n; i-- > 0;)
        for (int b = 63; b >= 0; b--) {
            PT(jac_dbl)(&acc, &acc);
            if ((k[i] >> b) & 1) PT(jac_add)(&acc, &acc, p);
        }
    *o = acc;
}

static void rand_subgroup_point(AFF *o)
{
    fr_t s;
    uint64_t k[4];
    fr_rand(&s);
    fr_from_mont(k, &s);
    JAC g, t;
    PT(jac_from_aff)(&g, &GEN);
    naive_mul(&t, &g, k, 4);
    PT(jac_to_aff)(o, &t);
}

static bool slow_in_subgroup(const AFF *p)
{
    JAC j, t;
    PT(jac_from_aff)(&j, p);
    naive_mul(&t, &j, FR_MODULUS.l, 4);
    return PT(jac_is_inf)(&t);
}

static void rand_point_any(AFF *o, int i)
{
    switch (i % 3) {
    case 0: rand_curve_point(o); break;
    case 1: rand_subgroup_point(o); break;
    default: rand_curve_point(o); break;
    }
}

#define ASSERT_AFF_EQ(a, b) ASSERT_MEM_EQ((a), (b), sizeof(AFF))

/* ---- tests ---- */

TEST(generator_on_curve_order_r)
{
    ASSERT(PT(aff_is_on_curve)(&GEN));
    ASSERT(!PT(aff_is_inf)(&GEN));
    ASSERT(PT(aff_in_subgroup)(&GEN));
    AFF o;
    oracle_mul(&o, &GEN, FR_MODULUS.l, 4);   /* r G == O by the affine oracle */
    ASSERT(PT(aff_is_inf)(&o));
    JAC g, t;
    PT(jac_from_aff)(&g, &GEN);
    PT(jac_mul_u64s)(&t, &g, FR_MODULUS.l, 4);
    ASSERT(PT(jac_is_inf)(&t));
    uint64_t rm1[4];
    memcpy(rm1, FR_MODULUS.l, sizeof rm1);
    rm1[0] -= 1;                              /* (r - 1) G == -G */
    PT(jac_mul_u64s)(&t, &g, rm1, 4);
    AFF a, ng;
    PT(jac_to_aff)(&a, &t);
    PT(aff_neg)(&ng, &GEN);
    ASSERT_AFF_EQ(&a, &ng);
}

TEST(add_dbl_match_affine_oracle)
{
    for (int i = 0; i < N_RAND; i++) {
        AFF p, q, want, got;
        rand_point_any(&p, i);
        rand_point_any(&q, i + 1);
        oracle_add(&want, &p, &q);
        JAC jp, jq, jr;
        XYZZ xp, xq, xr;
        rand_jac(&jp, &p);
        rand_jac(&jq, &q);
        rand_xyzz(&xp, &p);
        rand_xyzz(&xq, &q);

        PT(jac_add)(&jr, &jp, &jq);
        ASSERT(PT(jac_is_on_curve)(&jr));
        PT(jac_to_aff)(&got, &jr);
        ASSERT_AFF_EQ(&got, &want);
        PT(jac_add_aff)(&jr, &jp, &q);
        PT(jac_to_aff)(&got, &jr);
        ASSERT_AFF_EQ(&got, &want);
        PT(xyzz_add)(&xr, &xp, &xq);
        xyzz_to_aff(&got, &xr);
        ASSERT_AFF_EQ(&got, &want);
        PT(xyzz_add_aff)(&xr, &xp, &q);
        xyzz_to_aff(&got, &xr);
        ASSERT_AFF_EQ(&got, &want);

        /* in place (out aliases an input) */
        jr = jp;
        PT(jac_add)(&jr, &jr, &jq);
        PT(jac_to_aff)(&got, &jr);
        ASSERT_AFF_EQ(&got, &want);
        jr = jq;
        PT(jac_add)(&jr, &jp, &jr);
        PT(jac_to_aff)(&got, &jr);
        ASSERT_AFF_EQ(&got, &want);
        xr = xp;
        PT(xyzz_add_aff)(&xr, &xr, &q);
        xyzz_to_aff(&got, &xr);
        ASSERT_AFF_EQ(&got, &want);

        oracle_add(&want, &p, &p);
        PT(jac_dbl)(&jr, &jp);
        PT(jac_to_aff)(&got, &jr);
        ASSERT_AFF_EQ(&got, &want);
        PT(jac_dbl)(&jp, &jp);
        PT(jac_to_aff)(&got, &jp);
        ASSERT_AFF_EQ(&got, &want);
        PT(xyzz_dbl)(&xr, &xp);
        xyzz_to_aff(&got, &xr);
        ASSERT_AFF_EQ(&got, &want);
    }
}

/* P + P, P + (-P), O + P, P + O, O + O, dbl(O) through every addition formula. */
TEST(special_cases)
{
    for (int i = 0; i < 8; i++) {
        AFF p, np, inf, want2, got;
        rand_point_any(&p, i);
        PT(aff_neg)(&np, &p);
        memset(&inf, 0, sizeof inf);
        oracle_add(&want2, &p, &p);
        const AFF *lhs[5] = {&p, &p, &inf, &p, &inf};
        const AFF *rhs[5] = {&p, &np, &p, &inf, &inf};
        for (int c = 0; c < 5; c++) {
            AFF want;
            if (c == 0) want = want2;
            else oracle_add(&want, lhs[c], rhs[c]);
            JAC a, b, r;
            XYZZ xa, xb, xr;
            rand_jac(&a, lhs[c]);
            rand_jac(&b, rhs[c]);
            rand_xyzz(&xa, lhs[c]);
            rand_xyzz(&xb, rhs[c]);
            PT(jac_add)(&r, &a, &b);
            PT(jac_to_aff)(&got, &r);
            ASSERT_MSG(!memcmp(&got, &want, sizeof got), "jac_add case %d", c);
            PT(jac_add_aff)(&r, &a, rhs[c]);
            PT(jac_to_aff)(&got, &r);
            ASSERT_MSG(!memcmp(&got, &want, sizeof got), "jac_add_aff case %d", c);
            PT(xyzz_add)(&xr, &xa, &xb);
            xyzz_to_aff(&got, &xr);
            ASSERT_MSG(!memcmp(&got, &want, sizeof got), "xyzz_add case %d", c);
            PT(xyzz_add_aff)(&xr, &xa, rhs[c]);
            xyzz_to_aff(&got, &xr);
            ASSERT_MSG(!memcmp(&got, &want, sizeof got), "xyzz_add_aff case %d", c);
        }
        JAC ji;
        XYZZ xi;
        PT(jac_set_inf)(&ji);
        PT(jac_dbl)(&ji, &ji);
        ASSERT(PT(jac_is_inf)(&ji));
        PT(xyzz_set_inf)(&xi);
        PT(xyzz_dbl)(&xi, &xi);
        xyzz_to_aff(&got, &xi);
        ASSERT(PT(aff_is_inf)(&got));
        PT(jac_to_aff)(&got, &ji);
        ASSERT(PT(aff_is_inf)(&got));   /* infinity -> (0, 0) */
    }
}

TEST(group_laws)
{
    for (int i = 0; i < N_RAND / 2; i++) {
        AFF a, b, c;
        rand_point_any(&a, i);
        rand_point_any(&b, i + 1);
        rand_point_any(&c, i + 2);
        JAC ja, jb, jc, l, r, t, inf;
        rand_jac(&ja, &a);
        rand_jac(&jb, &b);
        rand_jac(&jc, &c);
        PT(jac_set_inf)(&inf);
        /* (a + b) + c == a + (b + c) */
        PT(jac_add)(&l, &ja, &jb);
        PT(jac_add)(&l, &l, &jc);
        PT(jac_add)(&r, &jb, &jc);
        PT(jac_add)(&r, &ja, &r);
        ASSERT(PT(jac_eq)(&l, &r));
        /* a + b == b + a */
        PT(jac_add)(&l, &ja, &jb);
        PT(jac_add)(&r, &jb, &ja);
        ASSERT(PT(jac_eq)(&l, &r));
        /* a + O == a, a + (-a) == O */
        PT(jac_add)(&l, &ja, &inf);
        ASSERT(PT(jac_eq)(&l, &ja));
        PT(jac_neg)(&t, &ja);
        PT(jac_add)(&l, &ja, &t);
        ASSERT(PT(jac_is_inf)(&l));
        /* dbl(a) == a + a with a different representation of a */
        JAC ja2;
        rand_jac(&ja2, &a);
        PT(jac_dbl)(&l, &ja);
        PT(jac_add)(&r, &ja, &ja2);
        ASSERT(PT(jac_eq)(&l, &r));
        /* eq is projective, and tells different points apart */
        ASSERT(PT(jac_eq)(&ja, &ja2));
        ASSERT(!PT(jac_eq)(&ja, &jb) || PT(aff_eq)(&a, &b));
        ASSERT(!PT(jac_eq)(&ja, &inf));
        /* on-curve checks notice a bad y */
        ASSERT(PT(jac_is_on_curve)(&ja) && PT(aff_is_on_curve)(&a));
        AFF bad = a;
        FE_ADD(&bad.y, &bad.y, &FE_ONE);
        ASSERT(!PT(aff_is_on_curve)(&bad));
        rand_jac(&t, &bad);
        ASSERT(!PT(jac_is_on_curve)(&t));
    }
}

/* Jacobian, XYZZ and affine chains of the same random operations agree. */
TEST(coordinate_systems_agree)
{
    AFF p;
    rand_point_any(&p, 1);
    JAC j;
    XYZZ x;
    AFF a = p;
    rand_jac(&j, &p);
    rand_xyzz(&x, &p);
    for (int i = 0; i < N_RAND; i++) {
        AFF q, ga, gx;
        rand_point_any(&q, i);
        switch (cuzk_rng_u64(test_rng()) % 3) {
        case 0:
            oracle_add(&a, &a, &q);
            PT(jac_add_aff)(&j, &j, &q);
            PT(xyzz_add_aff)(&x, &x, &q);
            break;
        case 1: {
            JAC jq;
            XYZZ xq;
            rand_jac(&jq, &q);
            rand_xyzz(&xq, &q);
            oracle_add(&a, &a, &q);
            PT(jac_add)(&j, &j, &jq);
            PT(xyzz_add)(&x, &x, &xq);
            break;
        }
        default:
            oracle_add(&a, &a, &a);
            PT(jac_dbl)(&j, &j);
            PT(xyzz_dbl)(&x, &x);
        }
        PT(jac_to_aff)(&ga, &j);
        xyzz_to_aff(&gx, &x);
        ASSERT_AFF_EQ(&ga, &a);
        ASSERT_AFF_EQ(&gx, &a);
    }
}

TEST(scalar_mul_vs_double_and_add)
{
    for (int i = 0; i < N_RAND / 4 + 4; i++) {
        AFF p, want, got;
        rand_point_any(&p, i);
        uint64_t k[4];
        fr_t s;
        if (i < 6) {   /* small and edge scalars: 0, 1, 2, 15, 16, 17 */
            static const uint64_t small[6] = {0, 1, 2, 15, 16, 17};
            memset(k, 0, sizeof k);
            k[0] = small[i];
            fr_to_mont(&s, k);
        } else {
            fr_rand(&s);
            fr_from_mont(k, &s);
        }
        oracle_mul(&want, &p, k, 4);
        JAC jp, r;
        rand_jac(&jp, &p);
        PT(jac_mul_u64s)(&r, &jp, k, 4);
        PT(jac_to_aff)(&got, &r);
        ASSERT_AFF_EQ(&got, &want);
        PT(jac_mul_fr)(&r, &jp, &s);
        PT(jac_to_aff)(&got, &r);
        ASSERT_AFF_EQ(&got, &want);
        PT(jac_mul_fr)(&jp, &jp, &s);   /* in place */
        PT(jac_to_aff)(&got, &jp);
        ASSERT_AFF_EQ(&got, &want);
    }
    /* linearity in Fr on a subgroup point: (a + b) P == a P + b P, (a b) P == a (b P) */
    AFF p;
    rand_subgroup_point(&p);
    JAC jp, l, r, t;
    PT(jac_from_aff)(&jp, &p);
    for (int i = 0; i < 4; i++) {
        fr_t a, b, c;
        fr_rand(&a);
        fr_rand(&b);
        fr_add(&c, &a, &b);
        PT(jac_mul_fr)(&l, &jp, &c);
        PT(jac_mul_fr)(&r, &jp, &a);
        PT(jac_mul_fr)(&t, &jp, &b);
        PT(jac_add)(&r, &r, &t);
        ASSERT(PT(jac_eq)(&l, &r));
        fr_mul(&c, &a, &b);
        PT(jac_mul_fr)(&l, &jp, &c);
        PT(jac_mul_fr)(&r, &jp, &b);
        PT(jac_mul_fr)(&r, &r, &a);
        ASSERT(PT(jac_eq)(&l, &r));
    }
}

TEST(batch_to_aff)
{
    static const size_t sizes[] = {0, 1, 2, 5, 513, 3000};
    struct pool *pools[2] = {NULL, pool_default()};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        JAC *in = malloc((n + 1) * sizeof *in);
        AFF *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
        AFF base;
        rand_point_any(&base, (int)si);
        JAC acc;
        rand_jac(&acc, &base);
        for (size_t i = 0; i < n; i++) {
            if (cuzk_rng_u64(test_rng()) % 7 == 0) {
                PT(jac_set_inf)(&in[i]);
                fe_rand(&in[i].x);
            } else {
                PT(jac_dbl)(&acc, &acc);   /* cheap distinct points with distinct Z */
                in[i] = acc;
            }
            PT(jac_to_aff)(&want[i], &in[i]);
        }
        for (int pi = 0; pi < 2; pi++) {
            memset(got, 0xa5, (n + 1) * sizeof *got);
            PT(batch_to_aff)(got, in, n, pools[pi]);
            if (n) ASSERT_MEM_EQ(got, want, n * sizeof *got);
            uint8_t guard[sizeof(AFF)];
            memset(guard, 0xa5, sizeof guard);
            ASSERT_MEM_EQ(&got[n], guard, sizeof guard);   /* nothing written past n */
        }
        free(in);
        free(want);
        free(got);
    }
}

/* Fast endomorphism test == slow r P == O, on subgroup points (positives), cofactor-cleared
 * random points (positives) and raw random curve points (negatives: a random point of
 * E(F) lies in the subgroup with probability 1/h). */
TEST(subgroup_check_vs_slow)
{
    int neg = 0;
    for (int i = 0; i < N_SUB; i++) {
        AFF p;
        rand_curve_point(&p);
        bool slow = slow_in_subgroup(&p);
        ASSERT_EQ_INT(PT(aff_in_subgroup)(&p), slow);
        neg += !slow;

        rand_subgroup_point(&p);
        ASSERT(slow_in_subgroup(&p));
        ASSERT(PT(aff_in_subgroup)(&p));

        JAC j, t;
        rand_curve_point(&p);
        PT(jac_from_aff)(&j, &p);
        naive_mul(&t, &j, COFACTOR, COFACTOR_LIMBS);   /* clear the cofactor */
        PT(jac_to_aff)(&p, &t);
        ASSERT(slow_in_subgroup(&p));
        ASSERT(PT(aff_in_subgroup)(&p));
    }
    ASSERT(neg >= N_SUB - 1);   /* the negatives really were negatives */
    AFF inf;
    memset(&inf, 0, sizeof inf);
    ASSERT(PT(aff_in_subgroup)(&inf));
}
