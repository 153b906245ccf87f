/* spmv.c: a/b/c = A.w, B.w, C.w over the shape's CSR matrices (multi-threaded by row
 * ranges), and the row-by-row satisfaction check. */
#include <stdatomic.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "cuzk/util.h"

#define ROW_GRAIN 2048

struct spmv_ctx {
    const struct g16_shape *s;
    const struct g16_assignment *w;
    const uint8_t *coeff_is_one;    /* skip the multiplication for coefficient 1 (most terms) */
    fr_t *out[3];
    _Atomic uint64_t first_bad;     /* g16_check: smallest failing row */
};

static inline const fr_t *value(const struct spmv_ctx *c, uint32_t col)
{
    uint32_t ni = c->s->n_inputs;
    return col < ni ? &c->w->inputs[col] : &c->w->aux[col - ni];
}

static inline void row_dot(fr_t *out, const struct spmv_ctx *c, const struct g16_matrix *m,
                           uint64_t row)
{
    fr_t acc = FR_ZERO, t;
    for (uint64_t k = m->row_ptr[row]; k < m->row_ptr[row + 1]; k++) {
        const fr_t *v = value(c, m->col[k]);
        uint16_t ci = m->coeff_idx[k];
        if (c->coeff_is_one[ci]) {
            fr_add(&acc, &acc, v);
        } else {
            fr_mul(&t, v, &c->s->coeffs[ci]);
            fr_add(&acc, &acc, &t);
        }
    }
    *out = acc;
}

static void eval_rows(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct spmv_ctx *c = ctx;
    const struct g16_matrix *m[3] = {&c->s->a, &c->s->b, &c->s->c};
    for (int i = 0; i < 3; i++)
        for (size_t r = begin; r < end; r++) row_dot(&c->out[i][r], c, m[i], r);
}

static void check_rows(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct spmv_ctx *c = ctx;
    for (size_t r = begin; r < end; r++) {
        if (r >= atomic_load(&c->first_bad)) return;   /* an earlier row already failed */
        fr_t a, b, cc;
        row_dot(&a, c, &c->s->a, r);
        row_dot(&b, c, &c->s->b, r);
        row_dot(&cc, c, &c->s->c, r);
        fr_mul(&a, &a, &b);
        if (!fr_eq(&a, &cc)) {
            uint64_t cur = atomic_load(&c->first_bad);
            while (r < cur && !atomic_compare_exchange_weak(&c->first_bad, &cur, r)) {
            }
            return;
        }
    }
}

static int prepare(struct spmv_ctx *c, uint8_t *is_one, const struct g16_shape *s,
                   const struct g16_assignment *w, const char *fn, struct cuzk_error *err)
{
    if (!s->a.row_ptr || !s->b.row_ptr || !s->c.row_ptr)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: shape has no matrices (count-only)", fn);
    if (!w || !w->inputs || (s->n_aux && !w->aux))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: assignment is missing values", fn);
    if (!fr_is_one(&w->inputs[0]))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: inputs[0] must be ONE", fn);
    memset(c, 0, sizeof *c);
    for (uint32_t i = 0; i < s->n_coeffs; i++) is_one[i] = fr_is_one(&s->coeffs[i]);
    c->s = s;
    c->w = w;
    c->coeff_is_one = is_one;
    atomic_init(&c->first_bad, UINT64_MAX);
    return CUZK_OK;
}

int g16_eval_abc(fr_t *a, fr_t *b, fr_t *c, const struct g16_shape *s,
                 const struct g16_assignment *w, struct pool *pool, struct cuzk_error *err)
{
    uint8_t *is_one = cuzk_malloc((size_t)s->n_coeffs + 1);
    if (!is_one) return cuzk_fail(err, CUZK_E_NOMEM, "g16_eval_abc: out of memory");
    struct spmv_ctx ctx;
    int rc = prepare(&ctx, is_one, s, w, "g16_eval_abc", err);
    if (!rc) {
        ctx.out[0] = a;
        ctx.out[1] = b;
        ctx.out[2] = c;
        pool_parallel_for(pool, s->n_constraints, ROW_GRAIN, eval_rows, &ctx);
    }
    cuzk_free(is_one);
    return rc;
}

int g16_check(const struct g16_shape *s, const struct g16_assignment *w, struct pool *pool,
              struct cuzk_error *err)
{
    uint8_t *is_one = cuzk_malloc((size_t)s->n_coeffs + 1);
    if (!is_one) return cuzk_fail(err, CUZK_E_NOMEM, "g16_check: out of memory");
    struct spmv_ctx ctx;
    int rc = prepare(&ctx, is_one, s, w, "g16_check", err);
    if (!rc) {
        pool_parallel_for(pool, s->n_constraints, ROW_GRAIN, check_rows, &ctx);
        uint64_t bad = atomic_load(&ctx.first_bad);
        if (bad != UINT64_MAX) {
            uint64_t user_rows = s->n_constraints - s->n_inputs;
            if (bad < user_rows)
                rc = cuzk_fail(err, CUZK_E_UNSATISFIED, "g16_check: constraint %llu: a*b != c",
                               (unsigned long long)bad);
            else   /* input rows hold for any assignment; only a corrupt shape gets here */
                rc = cuzk_fail(err, CUZK_E_UNSATISFIED,
                               "g16_check: constraint %llu (input row %llu): a*b != c",
                               (unsigned long long)bad, (unsigned long long)(bad - user_rows));
        }
    }
    cuzk_free(is_one);
    return rc;
}
