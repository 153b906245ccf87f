/* synthetic.c: the synthetic benchmark circuit family (bits, XOR/AND gates, power-of-two
 * packing, a full-field product chain, interleaved public inputs); shape and witness share
 * one generator so they cannot drift apart. Layout: see struct synth_params in circuits.h. */
#include <string.h>

#include "cuzk/circuits.h"
#include "cuzk/util.h"

#define WORD 32

/* One generator run: shape mode (b != NULL) or witness mode (inputs/aux != NULL). */
struct gen {
    struct g16_builder *b;
    fr_t *inputs, *aux;
    uint32_t cap_inputs, cap_aux;      /* witness mode: sizes of the caller's arrays */
    uint32_t n_inputs, n_aux;          /* allocated so far (ONE included) */
    uint64_t body, body_done;          /* body constraints: target and emitted */
    uint32_t n_public, pub_done;
    uint32_t last_var;                 /* what the next public input equals */
    fr_t last_val;
    bool have_packed;
    fr_t two, minus_one, pow2[WORD];
    cuzk_rng rng;
    int rc;
    struct cuzk_error *err;
};

static uint32_t alloc_aux(struct gen *g, const fr_t *val)
{
    uint32_t k = g->n_aux++;
    if (g->b) return g16_alloc_aux(g->b);
    if (k < g->cap_aux) g->aux[k] = *val;
    return G16_VAR_AUX(k);
}

static uint32_t alloc_input(struct gen *g, const fr_t *val)
{
    uint32_t k = g->n_inputs++;
    if (g->b) return g16_alloc_input(g->b);
    if (k < g->cap_inputs) g->inputs[k] = *val;
    return G16_VAR_INPUT(k);
}

static void enforce(struct gen *g, const struct g16_term *a, size_t na, const struct g16_term *b,
                    size_t nb, const struct g16_term *c, size_t nc)
{
    if (!g->b || g->rc) return;
    struct g16_lc la = {a, na}, lb = {b, nb}, lc = {c, nc};
    g->rc = g16_enforce(g->b, la, lb, lc);
}

/* Public inputs k = 1..n_public follow body constraint ceil(k * body / n_public). */
static void after_body(struct gen *g)
{
    g->body_done++;
    while (g->pub_done < g->n_public &&
           g->body_done * g->n_public >= (uint64_t)(g->pub_done + 1) * g->body) {
        uint32_t in = alloc_input(g, &g->last_val);
        struct g16_term a = {g->last_var, FR_ONE}, b = {G16_VAR_ONE, FR_ONE}, c = {in, FR_ONE};
        enforce(g, &a, 1, &b, 1, &c, 1);
        g->pub_done++;
    }
}

#define BODY_LEFT(g) ((g)->body_done < (g)->body && !(g)->rc)

static const fr_t *bitval(uint32_t bits, int i) { return (bits >> i) & 1 ? &FR_ONE : &FR_ZERO; }

/* A fresh bit with its boolean constraint x * x = x. */
static uint32_t bool_bit(struct gen *g, const fr_t *val)
{
    uint32_t x = alloc_aux(g, val);
    struct g16_term t = {x, FR_ONE};
    enforce(g, &t, 1, &t, 1, &t, 1);
    if (!g->have_packed) {
        g->last_var = x;
        g->last_val = *val;
    }
    after_body(g);
    return x;
}

static void run(struct gen *g)
{
    fr_from_u64(&g->two, 2);
    fr_neg(&g->minus_one, &FR_ONE);
    g->pow2[0] = FR_ONE;
    for (int i = 1; i < WORD; i++) fr_add(&g->pow2[i], &g->pow2[i - 1], &g->pow2[i - 1]);
    fr_t one = FR_ONE;
    if (g->b) g->n_inputs = 1;    /* the builder allocated ONE already */
    else (void)alloc_input(g, &one);

    uint32_t w[WORD], x[WORD], z[WORD], t[WORD];
    uint32_t wbits = (uint32_t)cuzk_rng_u64(&g->rng);
    for (int i = 0; i < WORD && BODY_LEFT(g); i++) w[i] = bool_bit(g, bitval(wbits, i));
    uint32_t acc = G16_VAR_ONE;
    fr_t acc_val = FR_ONE;
    while (BODY_LEFT(g)) {
        uint32_t xbits = (uint32_t)cuzk_rng_u64(&g->rng), zbits = xbits ^ wbits,
                 tbits = zbits & xbits;
        for (int i = 0; i < WORD && BODY_LEFT(g); i++) x[i] = bool_bit(g, bitval(xbits, i));
        for (int i = 0; i < WORD && BODY_LEFT(g); i++) {
            /* z = x XOR w:  (2x) * w = x + w - z */
            z[i] = alloc_aux(g, bitval(zbits, i));
            struct g16_term a = {x[i], g->two}, b = {w[i], FR_ONE};
            struct g16_term c[3] = {{x[i], FR_ONE}, {w[i], FR_ONE}, {z[i], g->minus_one}};
            enforce(g, &a, 1, &b, 1, c, 3);
            after_body(g);
        }
        for (int i = 0; i < WORD && BODY_LEFT(g); i++) {
            /* t = z AND x:  z * x = t */
            t[i] = alloc_aux(g, bitval(tbits, i));
            struct g16_term a = {z[i], FR_ONE}, b = {x[i], FR_ONE}, c = {t[i], FR_ONE};
            enforce(g, &a, 1, &b, 1, &c, 1);
            after_body(g);
        }
        if (!BODY_LEFT(g)) break;
        /* p = sum 2^i t_i:  (sum 2^i t_i) * ONE = p */
        fr_t pv;
        fr_from_u64(&pv, tbits);
        uint32_t p = alloc_aux(g, &pv);
        {
            struct g16_term a[WORD], b = {G16_VAR_ONE, FR_ONE}, c = {p, FR_ONE};
            for (int i = 0; i < WORD; i++) a[i] = (struct g16_term){t[i], g->pow2[i]};
            enforce(g, a, WORD, &b, 1, &c, 1);
        }
        g->have_packed = true;
        g->last_var = p;
        g->last_val = pv;
        after_body(g);
        if (!BODY_LEFT(g)) break;
        /* q = p * q_prev: a full-field product chain */
        fr_t qv;
        fr_mul(&qv, &pv, &acc_val);
        uint32_t q = alloc_aux(g, &qv);
        {
            struct g16_term a = {p, FR_ONE}, b = {acc, FR_ONE}, c = {q, FR_ONE};
            enforce(g, &a, 1, &b, 1, &c, 1);
        }
        acc = q;
        acc_val = qv;
        after_body(g);
        memcpy(w, z, sizeof w);
        wbits = zbits;
    }
}

static int check_params(const struct synth_params *p, struct cuzk_error *err)
{
    if (p->n_public < 1 || p->n_constraints <= p->n_public)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "synthetic: need n_public >= 1 and n_constraints > n_public (got %llu, %u)",
                         (unsigned long long)p->n_constraints, p->n_public);
    if (p->n_constraints > (1ULL << 31))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "synthetic: n_constraints %llu exceeds 2^31",
                         (unsigned long long)p->n_constraints);
    return CUZK_OK;
}

int synth_build_shape(struct g16_shape *out, const struct synth_params *p, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_params(p, err);
    if (rc) return rc;
    struct gen g;
    memset(&g, 0, sizeof g);
    g.b = g16_builder_new(p->count_only, err);
    if (!g.b) return err ? err->code : CUZK_E_NOMEM;
    g.body = p->n_constraints - p->n_public;
    g.n_public = p->n_public;
    g.err = err;
    cuzk_rng_seed(&g.rng, 0);   /* shape mode draws bits too (ignored) to stay in lockstep */
    run(&g);
    rc = g16_builder_finish(g.b, out, err);   /* reports a sticky enforce error too */
    g16_builder_free(g.b);
    return rc;
}

int synth_witness(fr_t *inputs, fr_t *aux, const struct g16_shape *s,
                  const struct synth_params *p, uint64_t seed, struct cuzk_error *err)
{
    int rc = check_params(p, err);
    if (rc) return rc;
    struct gen g;
    memset(&g, 0, sizeof g);
    g.inputs = inputs;
    g.aux = aux;
    g.cap_inputs = s->n_inputs;
    g.cap_aux = s->n_aux;
    g.body = p->n_constraints - p->n_public;
    g.n_public = p->n_public;
    g.err = err;
    cuzk_rng_seed(&g.rng, seed ^ 0x73796e7468657469ULL);
    run(&g);
    if (g.n_inputs != s->n_inputs || g.n_aux != s->n_aux)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "synthetic: shape does not match params (shape has %u inputs / %u aux, "
                         "params give %u / %u)", s->n_inputs, s->n_aux, g.n_inputs, g.n_aux);
    return CUZK_OK;
}
