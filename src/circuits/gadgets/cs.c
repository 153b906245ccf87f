/* cs.c: the circuit-synthesis context of gadgets.h: variable numbering, value vectors,
 * constraint counting/forwarding, the sticky error and linear-combination helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuzk/gadgets.h"
#include "cuzk/util.h"

int gcs_init(struct gcs *cs, unsigned mode, const struct gcs_sink *sink, struct cuzk_error *err)
{
    memset(cs, 0, sizeof *cs);
    if ((mode & ~(GCS_SHAPE | GCS_VALUES)) || ((mode & GCS_SHAPE) && (!sink || !sink->enforce)))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gcs_init: bad mode %u or missing sink", mode);
    cs->mode = mode;
    if (sink) cs->sink = *sink;
    cs->pow2[0] = FR_ONE;
    for (int i = 1; i < 256; i++) fr_dbl(&cs->pow2[i], &cs->pow2[i - 1]);
    fr_neg(&cs->neg_one, &FR_ONE);
    /* ONE is input 0 everywhere (bellperson allocates it before synthesis). */
    cs->n_inputs = 1;
    if (mode & GCS_VALUES) {
        cs->inp_cap = 64;
        cs->inputs = cuzk_malloc(cs->inp_cap * sizeof(fr_t));
        if (!cs->inputs) return cuzk_fail(err, CUZK_E_NOMEM, "gcs_init: input vector");
        cs->inputs[0] = FR_ONE;
    }
    return CUZK_OK;
}

int gcs_init_at(struct gcs *cs, unsigned mode, const struct gcs_sink *sink, uint32_t n_inputs,
                uint32_t n_aux, struct cuzk_error *err)
{
    if ((mode & GCS_VALUES) || n_inputs == 0)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gcs_init_at: mode %u, %u inputs (no values mode; ONE is "
                         "input 0)", mode, n_inputs);
    int rc = gcs_init(cs, mode, sink, err);
    if (rc) return rc;
    cs->n_inputs = n_inputs;
    cs->n_aux = n_aux;
    return CUZK_OK;
}

void gcs_free(struct gcs *cs)
{
    cuzk_free(cs->aux);
    cuzk_free(cs->inputs);
    for (int i = 0; i < 3; i++) glc_free(&cs->tmp[i]);
    cs->aux = cs->inputs = NULL;
}

void gcs_fail(struct gcs *cs, int code, const char *fmt, ...)
{
    if (cs->status) return;
    cs->status = code;
    cs->err.code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cs->err.msg, sizeof cs->err.msg, fmt, ap);
    va_end(ap);
}

int gcs_status(const struct gcs *cs, struct cuzk_error *err)
{
    if (cs->status && err) *err = cs->err;
    return cs->status;
}

static bool grow(struct gcs *cs, fr_t **v, size_t *cap, size_t need)
{
    if (need <= *cap) return true;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need) nc *= 2;
    fr_t *p = cuzk_realloc(*v, nc * sizeof(fr_t));
    if (!p) {
        gcs_fail(cs, CUZK_E_NOMEM, "gcs: value vector of %zu entries", nc);
        return false;
    }
    *v = p;
    *cap = nc;
    return true;
}

int gcs_reserve(struct gcs *cs, size_t n_aux, size_t n_inputs)
{
    if (!gcs_values(cs)) return CUZK_OK;
    grow(cs, &cs->aux, &cs->aux_cap, n_aux);
    grow(cs, &cs->inputs, &cs->inp_cap, n_inputs);
    return cs->status;
}

void gcs_take_values(struct gcs *cs, fr_t **aux, fr_t **inputs)
{
    *aux = cs->aux;
    *inputs = cs->inputs;
    cs->aux = cs->inputs = NULL;
    cs->aux_cap = cs->inp_cap = 0;
}

uint32_t gcs_alloc_aux(struct gcs *cs, const fr_t *val)
{
    uint32_t k = cs->n_aux;
    if (k >= 0x7fffffffu) {
        gcs_fail(cs, CUZK_E_UNSUPPORTED, "gcs: more than 2^31 aux variables");
        return G16_VAR_AUX(0);
    }
    if (cs->mode & GCS_VALUES) {
        if (!grow(cs, &cs->aux, &cs->aux_cap, (size_t)k + 1)) return G16_VAR_AUX(0);
        cs->aux[k] = *val;
    }
    if ((cs->mode & GCS_SHAPE) && cs->sink.alloc_aux) {
        uint32_t v = cs->sink.alloc_aux(cs->sink.ctx);
        if (v != G16_VAR_AUX(k))
            gcs_fail(cs, CUZK_E_INTERNAL, "gcs: sink numbered aux %u as 0x%x", k, v);
    }
    cs->n_aux = k + 1;
    return G16_VAR_AUX(k);
}

uint32_t gcs_alloc_input(struct gcs *cs, const fr_t *val)
{
    uint32_t k = cs->n_inputs;
    if (cs->mode & GCS_VALUES) {
        if (!grow(cs, &cs->inputs, &cs->inp_cap, (size_t)k + 1)) return G16_VAR_INPUT(0);
        cs->inputs[k] = *val;
    }
    if ((cs->mode & GCS_SHAPE) && cs->sink.alloc_input) {
        uint32_t v = cs->sink.alloc_input(cs->sink.ctx);
        if (v != G16_VAR_INPUT(k))
            gcs_fail(cs, CUZK_E_INTERNAL, "gcs: sink numbered input %u as 0x%x", k, v);
    }
    cs->n_inputs = k + 1;
    return G16_VAR_INPUT(k);
}

const fr_t *gcs_value(const struct gcs *cs, uint32_t var)
{
    static const fr_t zero;
    if (!cs->aux && !cs->inputs) return &zero;
    if (var & G16_VAR_AUX_BIT) {
        uint32_t k = var & ~G16_VAR_AUX_BIT;
        return k < cs->n_aux && cs->aux ? &cs->aux[k] : &zero;
    }
    return var < cs->n_inputs ? &cs->inputs[var] : &zero;
}

void gcs_enforce(struct gcs *cs, const struct glc *a, const struct glc *b, const struct glc *c)
{
    cs->n_constraints++;
    if (!gcs_shape(cs)) return;
    struct g16_lc la = {a->t, a->n}, lb = {b->t, b->n}, lc = {c->t, c->n};
    int rc = cs->sink.enforce(cs->sink.ctx, la, lb, lc);
    if (rc) gcs_fail(cs, rc, "gcs: sink rejected constraint %llu",
                     (unsigned long long)(cs->n_constraints - 1));
}

/* ------------------------------------------------------- linear combinations -- */

void glc_clear(struct glc *lc) { lc->n = 0; }

void glc_free(struct glc *lc)
{
    cuzk_free(lc->t);
    lc->t = NULL;
    lc->n = lc->cap = 0;
}

static bool glc_room(struct gcs *cs, struct glc *lc, uint32_t extra)
{
    if (lc->n + extra <= lc->cap) return true;
    uint32_t nc = lc->cap ? lc->cap : 8;
    while (nc < lc->n + extra) nc *= 2;
    struct g16_term *p = cuzk_realloc(lc->t, (size_t)nc * sizeof *p);
    if (!p) {
        gcs_fail(cs, CUZK_E_NOMEM, "gcs: linear combination of %u terms", nc);
        return false;
    }
    lc->t = p;
    lc->cap = nc;
    return true;
}

void glc_add(struct gcs *cs, struct glc *lc, uint32_t var, const fr_t *coeff)
{
    if (!glc_room(cs, lc, 1)) return;
    lc->t[lc->n].var = var;
    lc->t[lc->n].coeff = *coeff;
    lc->n++;
}

void glc_add_one(struct gcs *cs, struct glc *lc, uint32_t var) { glc_add(cs, lc, var, &FR_ONE); }

void glc_add_lc(struct gcs *cs, struct glc *lc, const struct glc *x, const fr_t *coeff)
{
    if (!glc_room(cs, lc, x->n)) return;
    bool unit = fr_is_one(coeff);
    for (uint32_t i = 0; i < x->n; i++) {
        struct g16_term *t = &lc->t[lc->n++];
        t->var = x->t[i].var;
        if (unit) t->coeff = x->t[i].coeff;
        else fr_mul(&t->coeff, &x->t[i].coeff, coeff);
    }
}
