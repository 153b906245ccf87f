/* poseidon.c: Poseidon over BLS12-381 Fr: the native hash (neptune's OptimizedStatic mode and
 * the plain-round reference) and the legacy circuit (neptune circuit.rs poseidon_hash), whose
 * linear combinations follow the compressed constants and sparse matrices exactly. */
#include <string.h>

#include "cuzk/gadgets.h"
#include "cuzk/util.h"

#define MAX_T 37

static void sbox(fr_t *x)      /* x^5 */
{
    fr_t x2, x4;
    fr_sqr(&x2, x);
    fr_sqr(&x4, &x2);
    fr_mul(x, x, &x4);
}

/* new[j] = sum_i s[i] * M[i][j] (vector x matrix, as neptune's product_mds_with_matrix). */
static void vec_mat(fr_t *s, const fr_t *m, unsigned t)
{
    fr_t r[MAX_T], tmp;
    for (unsigned j = 0; j < t; j++) {
        r[j] = FR_ZERO;
        for (unsigned i = 0; i < t; i++) {
            fr_mul(&tmp, &s[i], &m[i * t + j]);
            fr_add(&r[j], &r[j], &tmp);
        }
    }
    memcpy(s, r, t * sizeof *s);
}

static void vec_sparse(fr_t *s, const fr_t *w_hat, const fr_t *v_rest, unsigned t)
{
    fr_t r0 = FR_ZERO, tmp;
    for (unsigned i = 0; i < t; i++) {
        fr_mul(&tmp, &s[i], &w_hat[i]);
        fr_add(&r0, &r0, &tmp);
    }
    for (unsigned j = 1; j < t; j++) {
        fr_mul(&tmp, &s[0], &v_rest[j - 1]);
        fr_add(&s[j], &s[j], &tmp);
    }
    s[0] = r0;
}

/* Linear layer after round `round` (0-based): M for the first half-1 rounds, the pre-sparse
 * matrix after round half-1, then one sparse matrix per partial round, M again after. */
static void mix(fr_t *s, const struct poseidon_consts *pc, unsigned round)
{
    unsigned half = pc->rf / 2, t = pc->t;
    if (round == half - 1) vec_mat(s, pc->pre_sparse, t);
    else if (round > half - 1 && round < half + pc->rp) {
        unsigned k = round - half;
        vec_sparse(s, &pc->w_hat[k * t], &pc->v_rest[k * (t - 1)], t);
    } else vec_mat(s, pc->m, t);
}

void poseidon_hash(fr_t *out, const struct poseidon_consts *pc, const fr_t *in)
{
    unsigned t = pc->t, half = pc->rf / 2, off = 0, round = 0;
    fr_t s[MAX_T];
    s[0] = pc->domain_tag;
    memcpy(&s[1], in, pc->arity * sizeof *s);
    for (unsigned i = 0; i < t; i++) fr_add(&s[i], &s[i], &pc->crc[off + i]);
    off += t;
    for (unsigned r = 0; r < pc->rf; r++) {
        bool last = r == pc->rf - 1;
        for (unsigned i = 0; i < t; i++) {
            sbox(&s[i]);
            if (!last) fr_add(&s[i], &s[i], &pc->crc[off + i]);
        }
        if (!last) off += t;
        mix(s, pc, round++);
        if (r == half - 1)
            for (unsigned p = 0; p < pc->rp; p++) {
                sbox(&s[0]);
                fr_add(&s[0], &s[0], &pc->crc[off++]);
                mix(s, pc, round++);
            }
    }
    *out = s[1];
}

void poseidon_hash_reference(fr_t *out, const struct poseidon_consts *pc, const fr_t *in)
{
    unsigned t = pc->t, half = pc->rf / 2;
    fr_t s[MAX_T];
    s[0] = pc->domain_tag;
    memcpy(&s[1], in, pc->arity * sizeof *s);
    for (unsigned r = 0; r < pc->rf + pc->rp; r++) {
        for (unsigned i = 0; i < t; i++) fr_add(&s[i], &s[i], &pc->rc[r * t + i]);
        bool full = r < half || r >= half + pc->rp;
        for (unsigned i = 0; i < (full ? t : 1); i++) sbox(&s[i]);
        vec_mat(s, pc->m, t);
    }
    *out = s[1];
}

/* ------------------------------------------------------------------ circuit -- */

/* neptune's Elt: an allocated variable, or a Num (linear combination and its value). In
 * shape mode a Num keeps its terms sorted by variable with merged coefficients, as
 * bellpepper's LinearCombination does. */
struct elt {
    bool alloc;
    uint32_t var;
    fr_t val;
    struct glc lc;
};

struct pctx {
    struct gcs *cs;
    const struct poseidon_consts *pc;
    bool shape;
    struct elt e[MAX_T], r[MAX_T];
    struct glc scratch;
    struct glc a, b, c;
};

/* dst = sorted merge of dst and k * src (src sorted, or a single allocated variable). */
static void lc_merge(struct pctx *p, struct glc *dst, const struct elt *src, const fr_t *k)
{
    struct gcs *cs = p->cs;
    struct g16_term single;
    const struct g16_term *st;
    uint32_t sn;
    if (src->alloc) {
        single.var = src->var;
        single.coeff = FR_ONE;
        st = &single;
        sn = 1;
    } else {
        st = src->lc.t;
        sn = src->lc.n;
    }
    struct glc *out = &p->scratch;
    glc_clear(out);
    uint32_t i = 0, j = 0;
    fr_t tmp;
    while (i < dst->n || j < sn) {
        if (j == sn || (i < dst->n && dst->t[i].var < st[j].var)) {
            glc_add(cs, out, dst->t[i].var, &dst->t[i].coeff);
            i++;
        } else {
            fr_mul(&tmp, &st[j].coeff, k);
            if (i < dst->n && dst->t[i].var == st[j].var) {
                fr_add(&tmp, &tmp, &dst->t[i].coeff);
                i++;
            }
            glc_add(cs, out, st[j].var, &tmp);
            j++;
        }
        if (cs->status) return;
    }
    struct glc sw = *dst;
    *dst = *out;
    *out = sw;
}

/* Num from a constant: c * ONE. */
static void elt_const(struct pctx *p, struct elt *x, const fr_t *c)
{
    x->alloc = false;
    x->val = *c;
    glc_clear(&x->lc);
    if (p->shape) glc_add(p->cs, &x->lc, G16_VAR_ONE, c);
}

static void elt_var(struct elt *x, uint32_t var, const fr_t *val)
{
    x->alloc = true;
    x->var = var;
    x->val = *val;
}

/* ensure_allocated(enforce = true): a Num becomes a variable v with lc * ONE = v. */
static void ensure_allocated(struct pctx *p, struct elt *x)
{
    if (x->alloc) return;
    struct gcs *cs = p->cs;
    uint32_t v = gcs_alloc_aux(cs, &x->val);
    if (p->shape) {
        glc_clear(&p->b);
        glc_clear(&p->c);
        glc_add_one(cs, &p->b, G16_VAR_ONE);
        glc_add_one(cs, &p->c, v);
        gcs_enforce(cs, &x->lc, &p->b, &p->c);
    } else {
        cs->n_constraints++;
    }
    elt_var(x, v, &x->val);
}

/* Allocate r = value and emit (x + pre) * y = r - post: the one shape behind square_sum
 * (y = x with pre), l*l / l2*l2 squares (no pre, no post) and mul_sum. */
static uint32_t mul_row(struct pctx *p, uint32_t x, const fr_t *pre, uint32_t y, const fr_t *ypre,
                        const fr_t *post, const fr_t *val)
{
    struct gcs *cs = p->cs;
    uint32_t r = gcs_alloc_aux(cs, val);
    if (!p->shape) {
        cs->n_constraints++;
        return r;
    }
    glc_clear(&p->a);
    glc_clear(&p->b);
    glc_clear(&p->c);
    glc_add_one(cs, &p->a, x);
    if (pre) glc_add(cs, &p->a, G16_VAR_ONE, pre);
    glc_add_one(cs, &p->b, y);
    if (ypre) glc_add(cs, &p->b, G16_VAR_ONE, ypre);
    glc_add_one(cs, &p->c, r);
    if (post) {
        fr_t neg;
        fr_neg(&neg, post);
        glc_add(cs, &p->c, G16_VAR_ONE, &neg);
    }
    gcs_enforce(cs, &p->a, &p->b, &p->c);
    return r;
}

/* quintic_s_box: l = ensure_allocated(x); l2 = l^2; l4 = l2^2; r = l4 * l + post with
 * l * l4 = r - post (post absent in the terminal round). */
static void sbox_gadget(struct pctx *p, struct elt *x, const fr_t *post)
{
    ensure_allocated(p, x);
    fr_t l = x->val, l2, l4, r;
    fr_sqr(&l2, &l);
    fr_sqr(&l4, &l2);
    fr_mul(&r, &l4, &l);
    if (post) fr_add(&r, &r, post);
    uint32_t v2 = mul_row(p, x->var, NULL, x->var, NULL, NULL, &l2);
    uint32_t v4 = mul_row(p, v2, NULL, v2, NULL, NULL, &l4);
    uint32_t v5 = mul_row(p, x->var, NULL, v4, NULL, post, &r);
    elt_var(x, v5, &r);
}

/* quintic_s_box_pre_add on an allocated preimage element: s = (x + pre)^2 with
 * (x + pre) * (x + pre) = s; s2 = s^2; r = s2 * (x + pre) + post with (x + pre) * s2 = r - post. */
static void sbox_pre_add(struct pctx *p, struct elt *x, const fr_t *pre, const fr_t *post)
{
    fr_t l, l2, l4, r;
    fr_add(&l, &x->val, pre);
    fr_sqr(&l2, &l);
    fr_sqr(&l4, &l2);
    fr_mul(&r, &l4, &l);
    fr_add(&r, &r, post);
    uint32_t v2 = mul_row(p, x->var, pre, x->var, pre, NULL, &l2);
    uint32_t v4 = mul_row(p, v2, NULL, v2, NULL, NULL, &l4);
    uint32_t v5 = mul_row(p, x->var, pre, v4, NULL, post, &r);
    elt_var(x, v5, &r);
}

/* result = sum_i e[i] * coeff(i) as a Num (scalar_product). */
static void scalar_product(struct pctx *p, struct elt *res, const fr_t *coeffs, unsigned stride)
{
    unsigned t = p->pc->t;
    res->alloc = false;
    res->val = FR_ZERO;
    glc_clear(&res->lc);
    fr_t tmp;
    for (unsigned i = 0; i < t; i++) {
        const fr_t *k = &coeffs[i * stride];
        fr_mul(&tmp, &p->e[i].val, k);
        fr_add(&res->val, &res->val, &tmp);
        if (p->shape) lc_merge(p, &res->lc, &p->e[i], k);
    }
}

static void swap_state(struct pctx *p)
{
    for (unsigned i = 0; i < p->pc->t; i++) {
        struct elt tmp = p->e[i];
        p->e[i] = p->r[i];
        p->r[i] = tmp;
    }
}

static void product_matrix(struct pctx *p, const fr_t *m)
{
    unsigned t = p->pc->t;
    for (unsigned j = 0; j < t; j++) scalar_product(p, &p->r[j], &m[j], t);   /* column j */
    swap_state(p);
}

static void product_sparse(struct pctx *p, const fr_t *w_hat, const fr_t *v_rest)
{
    unsigned t = p->pc->t;
    scalar_product(p, &p->r[0], w_hat, 1);
    /* r[j] = e[j] + e[0] * v_rest[j-1]; e[j] is a Num in every partial round. */
    for (unsigned j = 1; j < t; j++) {
        struct elt *r = &p->r[j], *ej = &p->e[j];
        fr_t tmp;
        r->alloc = false;
        fr_mul(&tmp, &p->e[0].val, &v_rest[j - 1]);
        fr_add(&r->val, &ej->val, &tmp);
        glc_clear(&r->lc);
        if (p->shape) {
            if (ej->alloc) {
                glc_add_one(p->cs, &r->lc, ej->var);
            } else {                        /* copy e[j]'s terms, then merge e[0] */
                for (uint32_t k = 0; k < ej->lc.n; k++)
                    glc_add(p->cs, &r->lc, ej->lc.t[k].var, &ej->lc.t[k].coeff);
            }
            lc_merge(p, &r->lc, &p->e[0], &v_rest[j - 1]);
        }
    }
    swap_state(p);
}

static void product_mds(struct pctx *p, unsigned round)
{
    const struct poseidon_consts *pc = p->pc;
    unsigned half = pc->rf / 2, t = pc->t;
    if (round == half - 1) product_matrix(p, pc->pre_sparse);
    else if (round > half - 1 && round < half + pc->rp) {
        unsigned k = round - half;
        product_sparse(p, &pc->w_hat[k * t], &pc->v_rest[k * (t - 1)]);
    } else product_matrix(p, pc->m);
}

gnum g_poseidon(struct gcs *cs, const struct poseidon_consts *pc, const gnum *in)
{
    gnum out = {0, FR_ZERO};
    struct pctx *p = cuzk_calloc(1, sizeof *p);
    if (!p) {
        gcs_fail(cs, CUZK_E_NOMEM, "poseidon circuit: context");
        return out;
    }
    p->cs = cs;
    p->pc = pc;
    p->shape = gcs_shape(cs);
    unsigned t = pc->t, half = pc->rf / 2, off = 0, round = 0;

    elt_const(p, &p->e[0], &pc->domain_tag);
    for (unsigned i = 1; i < t; i++) elt_var(&p->e[i], in[i - 1].var, &in[i - 1].val);

    /* First full round: pre keys crc[0..t), post keys crc[t..2t). The tag's S-box is a
     * constant; every preimage element costs 3 constraints. */
    const fr_t *pre = &pc->crc[0], *post = &pc->crc[t];
    off = 2 * t;
    {
        fr_t tag = p->e[0].val;
        fr_add(&tag, &tag, &pre[0]);
        sbox(&tag);
        fr_add(&tag, &tag, &post[0]);
        elt_const(p, &p->e[0], &tag);
        for (unsigned i = 1; i < t; i++) sbox_pre_add(p, &p->e[i], &pre[i], &post[i]);
        product_mds(p, round++);
    }
    for (unsigned r = 1; r < half; r++) {
        for (unsigned i = 0; i < t; i++) sbox_gadget(p, &p->e[i], &pc->crc[off + i]);
        off += t;
        product_mds(p, round++);
    }
    for (unsigned r = 0; r < pc->rp; r++) {
        sbox_gadget(p, &p->e[0], &pc->crc[off++]);
        product_mds(p, round++);
    }
    for (unsigned r = 0; r < half; r++) {
        bool last = r == half - 1;
        for (unsigned i = 0; i < t; i++) sbox_gadget(p, &p->e[i], last ? NULL : &pc->crc[off + i]);
        if (!last) off += t;
        product_mds(p, round++);
    }
    ensure_allocated(p, &p->e[1]);
    out.var = p->e[1].var;
    out.val = p->e[1].val;

    for (unsigned i = 0; i < MAX_T; i++) {
        glc_free(&p->e[i].lc);
        glc_free(&p->r[i].lc);
    }
    glc_free(&p->scratch);
    glc_free(&p->a);
    glc_free(&p->b);
    glc_free(&p->c);
    cuzk_free(p);
    return out;
}
