/* agg_math.c: the arithmetic the SnarkPack prover and verifier share: inner pairing products
 * over the pool, entrywise scalings and GIPA folds of point vectors, Gt exponentiation and
 * (de)compression, and the challenge polynomials of the KZG openings. */
#include <stdatomic.h>
#include <string.h>

#include "agg_internal.h"

void agg_powers(fr_t *out, size_t n, const fr_t *s)
{
    if (!n) return;
    out[0] = FR_ONE;
    for (size_t i = 1; i < n; i++) fr_mul(&out[i], &out[i - 1], s);
}

/* ------------------------------------------------------ inner pairing product -- */

struct ipp_ctx {
    const g1_aff_t *a1, *a2;
    const g2_aff_t *b1, *b2;
    size_t n1;
    fp12_t *acc;
};

static void ipp_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    struct ipp_ctx *c = ctx;
    fp12_t f;
    if (begin < c->n1) {
        size_t e = end < c->n1 ? end : c->n1;
        pairing_miller_loop_n(&f, c->a1 + begin, c->b1 + begin, e - begin);
        fp12_mul(&c->acc[worker], &c->acc[worker], &f);
        begin = e;
    }
    if (begin < end) {
        pairing_miller_loop_n(&f, c->a2 + (begin - c->n1), c->b2 + (begin - c->n1), end - begin);
        fp12_mul(&c->acc[worker], &c->acc[worker], &f);
    }
}

int agg_ipp2(fp12_t *out, const g1_aff_t *a1, const g2_aff_t *b1, const g1_aff_t *a2,
             const g2_aff_t *b2, size_t n, struct pool *pool, struct cuzk_error *err)
{
    pool = agg_pool(pool);
    unsigned w = pool_size(pool);
    fp12_t *acc = cuzk_malloc(w * sizeof *acc);
    if (!acc) return cuzk_fail(err, CUZK_E_NOMEM, "aggregate: out of memory (pairing product)");
    for (unsigned i = 0; i < w; i++) acc[i] = FP12_ONE;
    struct ipp_ctx c = {a1, a2, b1, b2, n, acc};
    size_t total = a2 ? 2 * n : n;
    /* Miller loops of a product multiply, so each worker keeps its own partial product and
     * one final exponentiation serves the whole product (the same Gt value as bellperson's
     * product of separately exponentiated pairings). */
    size_t grain = total / (4 * (size_t)w) + 1;
    if (grain < 8) grain = 8;
    pool_parallel_for(pool, total, grain, ipp_range, &c);
    fp12_t f = FP12_ONE;
    for (unsigned i = 0; i < w; i++) fp12_mul(&f, &f, &acc[i]);
    cuzk_free(acc);
    pairing_final_exp(out, &f);
    return CUZK_OK;
}

int agg_ipp(fp12_t *out, const g1_aff_t *a, const g2_aff_t *b, size_t n, struct pool *pool,
            struct cuzk_error *err)
{
    return agg_ipp2(out, a, b, NULL, NULL, n, pool, err);
}

struct mls_ctx {
    const g1_aff_t *const *ps;
    const g2_aff_t *qs;
    size_t k;
    fp12_t *acc;            /* k per worker */
};

static void mls_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    struct mls_ctx *c = ctx;
    const g1_aff_t *ps[PAIRING_SHARED_MAX];
    fp12_t f[PAIRING_SHARED_MAX];
    for (size_t j = 0; j < c->k; j++) ps[j] = c->ps[j] + begin;
    pairing_miller_loop_shared(f, c->k, ps, c->qs + begin, end - begin);
    fp12_t *acc = c->acc + (size_t)worker * c->k;
    for (size_t j = 0; j < c->k; j++) fp12_mul(&acc[j], &acc[j], &f[j]);
}

int agg_ml_shared(fp12_t *outs, size_t k, const g1_aff_t *const *ps, const g2_aff_t *qs,
                  size_t n, struct pool *pool, struct cuzk_error *err)
{
    pool = agg_pool(pool);
    unsigned w = pool_size(pool);
    fp12_t *acc = cuzk_malloc((size_t)w * k * sizeof *acc);
    if (!acc) return cuzk_fail(err, CUZK_E_NOMEM, "aggregate: out of memory (pairing product)");
    for (size_t i = 0; i < (size_t)w * k; i++) acc[i] = FP12_ONE;
    struct mls_ctx c = {ps, qs, k, acc};
    size_t grain = n / (4 * (size_t)w) + 1;
    if (grain < 8) grain = 8;
    pool_parallel_for(pool, n, grain, mls_range, &c);
    for (size_t j = 0; j < k; j++) {
        outs[j] = FP12_ONE;
        for (unsigned i = 0; i < w; i++) fp12_mul(&outs[j], &outs[j], &acc[(size_t)i * k + j]);
    }
    cuzk_free(acc);
    return CUZK_OK;
}

/* ------------------------------------------------------- scalings and folds -- */

#define DEF_SCALE(G, aff_t, jac_t)                                                          \
    struct G##_sc_ctx { jac_t *out; const aff_t *in, *add; const fr_t *s, *s1; };          \
    static void G##_sc_range(void *ctx, size_t begin, size_t end, unsigned worker)          \
    {                                                                                       \
        (void)worker;                                                                       \
        struct G##_sc_ctx *c = ctx;                                                         \
        for (size_t i = begin; i < end; i++) {                                              \
            jac_t p;                                                                        \
            G##_jac_from_aff(&p, &c->in[i]);                                                \
            G##_jac_mul_fr(&c->out[i], &p, c->s ? &c->s[i] : c->s1);                        \
            if (c->add) G##_jac_add_aff(&c->out[i], &c->out[i], &c->add[i]);                \
        }                                                                                   \
    }                                                                                       \
    static int G##_sc_run(aff_t *out, const aff_t *in, const aff_t *add, const fr_t *s,     \
                          const fr_t *s1, size_t n, struct pool *pool, struct cuzk_error *err) \
    {                                                                                       \
        pool = agg_pool(pool);                                                              \
        jac_t *tmp = cuzk_malloc((n ? n : 1) * sizeof *tmp);                                \
        if (!tmp) return cuzk_fail(err, CUZK_E_NOMEM, "aggregate: out of memory (scaling)"); \
        struct G##_sc_ctx c = {tmp, in, add, s, s1};                                        \
        pool_parallel_for(pool, n, 4, G##_sc_range, &c);                                    \
        G##_batch_to_aff(out, tmp, n, pool);                                                \
        cuzk_free(tmp);                                                                     \
        return CUZK_OK;                                                                     \
    }

DEF_SCALE(g1, g1_aff_t, g1_jac_t)
DEF_SCALE(g2, g2_aff_t, g2_jac_t)

int agg_g1_scale(g1_aff_t *out, const g1_aff_t *in, const fr_t *s, const fr_t *s1, size_t n,
                 struct pool *pool, struct cuzk_error *err)
{
    return g1_sc_run(out, in, NULL, s, s1, n, pool, err);
}
int agg_g2_scale(g2_aff_t *out, const g2_aff_t *in, const fr_t *s, const fr_t *s1, size_t n,
                 struct pool *pool, struct cuzk_error *err)
{
    return g2_sc_run(out, in, NULL, s, s1, n, pool, err);
}
int agg_g1_fold(g1_aff_t *left, const g1_aff_t *right, const fr_t *x, size_t n,
                struct pool *pool, struct cuzk_error *err)
{
    return g1_sc_run(left, right, left, NULL, x, n, pool, err);
}
int agg_g2_fold(g2_aff_t *left, const g2_aff_t *right, const fr_t *x, size_t n,
                struct pool *pool, struct cuzk_error *err)
{
    return g2_sc_run(left, right, left, NULL, x, n, pool, err);
}

void agg_g1_mul(g1_aff_t *out, const g1_aff_t *p, const fr_t *s)
{
    g1_jac_t j;
    g1_jac_from_aff(&j, p);
    g1_jac_mul_fr(&j, &j, s);
    g1_jac_to_aff(out, &j);
}

void agg_g2_mul(g2_aff_t *out, const g2_aff_t *p, const fr_t *s)
{
    g2_jac_t j;
    g2_jac_from_aff(&j, p);
    g2_jac_mul_fr(&j, &j, s);
    g2_jac_to_aff(out, &j);
}

/* -------------------------------------------------------------------- Gt -- */

void agg_gt_pow(fp12_t *out, const fp12_t *a, const fr_t *e)
{
    uint64_t k[4];
    fr_from_mont(k, e);
    fp12_pow(out, a, k, 4);
}

/* Membership in the order-r subgroup GT without a 255-bit exponentiation (Scott, "A note on
 * group membership tests for G1, G2 and GT", 2021): f is in the cyclotomic subgroup of order
 * Phi12(p) = p^4 - p^2 + 1 iff f^(p^4) f = f^(p^2); such an f is in GT iff f^p = f^x (x the
 * BLS parameter, -0xd201000000010000), because gcd(p - x, Phi12(p)) = r for BLS12-381 (checked
 * with Python big integers when this was written). f^x = conj(f^|x|) on the cyclotomic
 * subgroup. The test compares it with f^r == 1. */
bool agg_gt_in_subgroup(const fp12_t *f)
{
    static const fp12_t zero;
    if (!memcmp(f, &zero, sizeof zero)) return false;
    fp12_t a, b;
    fp12_frobenius(&a, f, 4);
    fp12_mul(&a, &a, f);
    fp12_frobenius(&b, f, 2);
    if (!fp12_eq(&a, &b)) return false;
    const uint64_t x_abs = 0xd201000000010000ULL;
    fp12_pow(&b, f, &x_abs, 1);
    fp12_conj(&b, &b);
    fp12_frobenius(&a, f, 1);
    return fp12_eq(&a, &b);
}

static void fp_le(uint8_t out[48], const fp_t *a)
{
    uint8_t be[48];
    fp_to_bytes_be(be, a);
    for (int i = 0; i < 48; i++) out[i] = be[47 - i];
}

static int fp_from_le(fp_t *out, const uint8_t in[48])
{
    uint8_t be[48];
    for (int i = 0; i < 48; i++) be[i] = in[47 - i];
    return fp_from_bytes_be(out, be);
}

/* Torus compression (Naehrig et al., as blstrs' Gt::compress): b = (c0 + 1) / c1. */
bool agg_gt_compress(uint8_t out[288], const fp12_t *f)
{
    fp6_t inv, b;
    if (!fp6_inv(&inv, &f->c1)) return false;
    fp6_add(&b, &f->c0, &FP6_ONE);
    fp6_mul(&b, &b, &inv);
    const fp2_t *e[3] = {&b.c0, &b.c1, &b.c2};
    for (int j = 0; j < 3; j++) {
        fp_le(out + 96 * j, &e[j]->c0);
        fp_le(out + 96 * j + 48, &e[j]->c1);
    }
    return true;
}

/* f = (b + w) / (b - w) (Rubin-Silverberg decompression), then the subgroup check. */
int agg_gt_decompress(fp12_t *f, const uint8_t in[288], struct cuzk_error *err)
{
    fp6_t b;
    fp2_t *e[3] = {&b.c0, &b.c1, &b.c2};
    for (int j = 0; j < 3; j++) {
        if (fp_from_le(&e[j]->c0, in + 96 * j) || fp_from_le(&e[j]->c1, in + 96 * j + 48))
            return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                             "Gt coordinate %d is not a canonical Fp element (>= p)", 2 * j);
    }
    fp12_t num, den;
    num.c0 = b;
    num.c1 = FP6_ONE;
    den.c0 = b;
    fp6_neg(&den.c1, &FP6_ONE);
    if (!fp12_inv(&den, &den))
        return cuzk_fail(err, CUZK_E_BAD_ENCODING, "Gt compression does not decompress");
    fp12_mul(f, &num, &den);
    if (!agg_gt_in_subgroup(f))
        return cuzk_fail(err, CUZK_E_NOT_IN_SUBGROUP,
                         "Gt value is not in the order-r subgroup of Fp12*");
    return CUZK_OK;
}

/* ---------------------------------------------------------- polynomials -- */

void agg_poly_coeffs(fr_t *out, const fr_t *ch, size_t l, const fr_t *r_shift)
{
    size_t len = 1;
    fr_t p = *r_shift, t;
    out[0] = FR_ONE;
    for (size_t i = 0; i < l; i++) {
        if (i > 0) fr_sqr(&p, &p);
        fr_mul(&t, &ch[i], &p);
        for (size_t j = 0; j < len; j++) fr_mul(&out[len + j], &out[j], &t);
        len *= 2;
    }
}

void agg_poly_eval(fr_t *out, const fr_t *ch, size_t l, const fr_t *z, const fr_t *r_shift)
{
    fr_t p, t, res = FR_ONE;
    fr_mul(&p, z, r_shift);
    for (size_t i = 0; i < l; i++) {
        if (i > 0) fr_sqr(&p, &p);
        fr_mul(&t, &ch[i], &p);
        fr_add(&t, &t, &FR_ONE);
        fr_mul(&res, &res, &t);
    }
    *out = res;
}
