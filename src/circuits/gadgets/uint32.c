/* uint32.c: bellperson UInt32 (32 Booleans, least significant first) and MultiEq, including
 * addmany with its constant shortcut and carry bits (bellperson src/gadgets/uint32.rs,
 * multieq.rs). */
#include <string.h>

#include "cuzk/gadgets.h"

/* Fr::CAPACITY for BLS12-381 (NUM_BITS - 1): the MultiEq packing limit. */
#define FR_CAPACITY 254u

gu32 gu32_const(uint32_t v)
{
    gu32 r;
    for (int i = 0; i < 32; i++) r.b[i] = gb_const((v >> i) & 1u);
    return r;
}

gu32 gu32_alloc(struct gcs *cs, uint32_t v)
{
    gu32 r;
    for (int i = 0; i < 32; i++) r.b[i] = gb_alloc(cs, (v >> i) & 1u);
    return r;
}

gu32 gu32_from_bits_be(const gbool bits[32])
{
    gu32 r;
    for (int i = 0; i < 32; i++) r.b[i] = bits[31 - i];
    return r;
}

void gu32_to_bits_be(gbool out[32], const gu32 *x)
{
    for (int i = 0; i < 32; i++) out[i] = x->b[31 - i];
}

uint32_t gu32_value(const gu32 *x)
{
    uint32_t v = 0;
    for (int i = 0; i < 32; i++) v |= (uint32_t)(x->b[i].val & 1u) << i;
    return v;
}

gu32 gu32_rotr(const gu32 *x, unsigned by)
{
    gu32 r;
    by %= 32;
    for (unsigned i = 0; i < 32; i++) r.b[i] = x->b[(i + by) % 32];
    return r;
}

gu32 gu32_shr(const gu32 *x, unsigned by)
{
    gu32 r;
    by %= 32;
    for (unsigned i = 0; i < 32; i++) r.b[i] = i + by < 32 ? x->b[i + by] : gb_const(false);
    return r;
}

gu32 gu32_xor(struct gcs *cs, const gu32 *a, const gu32 *b)
{
    gu32 r;
    for (int i = 0; i < 32; i++) r.b[i] = gb_xor(cs, a->b[i], b->b[i]);
    return r;
}

gu32 gu32_sha256_ch(struct gcs *cs, const gu32 *a, const gu32 *b, const gu32 *c)
{
    gu32 r;
    for (int i = 0; i < 32; i++) r.b[i] = gb_sha256_ch(cs, a->b[i], b->b[i], c->b[i]);
    return r;
}

gu32 gu32_sha256_maj(struct gcs *cs, const gu32 *a, const gu32 *b, const gu32 *c)
{
    gu32 r;
    for (int i = 0; i < 32; i++) r.b[i] = gb_sha256_maj(cs, a->b[i], b->b[i], c->b[i]);
    return r;
}

/* ---------------------------------------------------------------- MultiEq -- */

void gmeq_init(struct gmultieq *m) { memset(m, 0, sizeof *m); }

static void gmeq_flush(struct gcs *cs, struct gmultieq *m)
{
    if (gcs_shape(cs)) {
        struct g16_term one_t = {G16_VAR_ONE, FR_ONE};
        struct glc one = {&one_t, 1, 1};
        gcs_enforce(cs, &m->lhs, &one, &m->rhs);     /* sum lhs * ONE = sum rhs */
    } else {
        cs->n_constraints++;
    }
    glc_clear(&m->lhs);
    glc_clear(&m->rhs);
    m->bits_used = 0;
}

void gmeq_enforce_equal(struct gcs *cs, struct gmultieq *m, unsigned num_bits,
                        const struct glc *lhs, const struct glc *rhs)
{
    if (FR_CAPACITY <= m->bits_used + num_bits) gmeq_flush(cs, m);
    if (m->bits_used + num_bits >= FR_CAPACITY) {
        gcs_fail(cs, CUZK_E_INVALID_ARG, "multieq: equality of %u bits", num_bits);
        return;
    }
    if (gcs_shape(cs)) {
        const fr_t *k = &cs->pow2[m->bits_used];
        glc_add_lc(cs, &m->lhs, lhs, k);
        glc_add_lc(cs, &m->rhs, rhs, k);
    }
    m->bits_used += num_bits;
}

void gmeq_finish(struct gcs *cs, struct gmultieq *m)
{
    if (m->bits_used > 0) gmeq_flush(cs, m);
    glc_free(&m->lhs);
    glc_free(&m->rhs);
    glc_free(&m->op);
    glc_free(&m->res);
}

gu32 gu32_addmany(struct gcs *cs, struct gmultieq *m, const gu32 *ops, size_t n)
{
    if (n < 2 || n > 10) {
        gcs_fail(cs, CUZK_E_INVALID_ARG, "addmany: %zu operands (expected 2..10)", n);
        return gu32_const(0);
    }
    uint64_t sum = 0;
    bool all_const = true;
    for (size_t k = 0; k < n; k++) {
        sum += gu32_value(&ops[k]);
        for (int i = 0; i < 32; i++) all_const &= ops[k].b[i].kind == GB_CONST;
    }
    if (all_const) return gu32_const((uint32_t)sum);

    bool shape = gcs_shape(cs);
    if (shape) {
        glc_clear(&m->op);
        for (size_t k = 0; k < n; k++)
            for (int i = 0; i < 32; i++) glc_add_bool(cs, &m->op, ops[k].b[i], &cs->pow2[i]);
        glc_clear(&m->res);
    }
    /* As many result bits as the largest possible sum n * (2^32 - 1) needs. */
    uint64_t max = (uint64_t)n * 0xffffffffu;
    unsigned nbits = 0;
    gu32 r;
    while (max) {
        gbool bit = gb_alloc(cs, (sum >> nbits) & 1u);
        if (shape) glc_add(cs, &m->res, bit.var, &cs->pow2[nbits]);
        if (nbits < 32) r.b[nbits] = bit;      /* carries stay in the witness only */
        max >>= 1;
        nbits++;
    }
    gmeq_enforce_equal(cs, m, nbits, &m->op, &m->res);
    return r;
}
