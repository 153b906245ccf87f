/* num.c: AllocatedNum gadgets (alloc, inputize, mul, square, add, equality, to_bits_le and
 * to_bits_le_strict) and bit packing (pack_bits, pack_into_inputs, compute_multipacking):
 * bellpepper-core src/gadgets/num.rs, bellperson src/gadgets/multipack.rs. */
#include "cuzk/gadgets.h"

#define FR_NUM_BITS 255
#define FR_CAPACITY 254

static struct glc *lc_a(struct gcs *cs) { glc_clear(&cs->tmp[0]); return &cs->tmp[0]; }
static struct glc *lc_b(struct gcs *cs) { glc_clear(&cs->tmp[1]); return &cs->tmp[1]; }
static struct glc *lc_c(struct gcs *cs) { glc_clear(&cs->tmp[2]); return &cs->tmp[2]; }

/* Emit x * y = z for three single variables (coefficient 1), or just count. */
static void enforce_vars(struct gcs *cs, uint32_t x, uint32_t y, uint32_t z)
{
    if (!gcs_shape(cs)) {
        cs->n_constraints++;
        return;
    }
    struct glc *a = lc_a(cs), *b = lc_b(cs), *c = lc_c(cs);
    glc_add_one(cs, a, x);
    glc_add_one(cs, b, y);
    glc_add_one(cs, c, z);
    gcs_enforce(cs, a, b, c);
}

gnum gnum_alloc(struct gcs *cs, const fr_t *val)
{
    gnum r;
    r.val = gcs_values(cs) ? *val : FR_ZERO;
    r.var = gcs_alloc_aux(cs, &r.val);
    return r;
}

gnum gnum_alloc_input(struct gcs *cs, const fr_t *val)
{
    gnum r;
    r.val = gcs_values(cs) ? *val : FR_ZERO;
    r.var = gcs_alloc_input(cs, &r.val);
    return r;
}

void gnum_inputize(struct gcs *cs, const gnum *x)
{
    uint32_t in = gcs_alloc_input(cs, &x->val);
    enforce_vars(cs, in, G16_VAR_ONE, x->var);       /* input * ONE = x */
}

gnum gnum_mul(struct gcs *cs, const gnum *a, const gnum *b)
{
    fr_t v;
    fr_mul(&v, &a->val, &b->val);
    gnum r = gnum_alloc(cs, &v);
    enforce_vars(cs, a->var, b->var, r.var);
    return r;
}

gnum gnum_square(struct gcs *cs, const gnum *a)
{
    fr_t v;
    fr_sqr(&v, &a->val);
    gnum r = gnum_alloc(cs, &v);
    enforce_vars(cs, a->var, a->var, r.var);
    return r;
}

gnum gnum_add(struct gcs *cs, const gnum *a, const gnum *b)
{
    fr_t v;
    fr_add(&v, &a->val, &b->val);
    gnum r = gnum_alloc(cs, &v);
    if (!gcs_shape(cs)) {
        cs->n_constraints++;
        return r;
    }
    struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
    glc_add_one(cs, la, a->var);                    /* (a + b) * ONE = r */
    glc_add_one(cs, la, b->var);
    glc_add_one(cs, lb, G16_VAR_ONE);
    glc_add_one(cs, lc, r.var);
    gcs_enforce(cs, la, lb, lc);
    return r;
}

void gnum_enforce_equal(struct gcs *cs, const gnum *a, const gnum *b)
{
    enforce_vars(cs, a->var, G16_VAR_ONE, b->var);   /* a * ONE = b */
}

/* Bit i of a canonical value. */
static unsigned canon_bit(const uint64_t c[4], unsigned i) { return (c[i / 64] >> (i % 64)) & 1u; }

/* 0 * 0 = sum 2^i bits[i] - x: the unpacking constraint of both to_bits variants. */
static void unpacking_constraint(struct gcs *cs, const gbool *bits, unsigned n, const gnum *x)
{
    if (!gcs_shape(cs)) {
        cs->n_constraints++;
        return;
    }
    struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
    for (unsigned i = 0; i < n; i++) glc_add(cs, lc, bits[i].var, &cs->pow2[i]);
    glc_add(cs, lc, x->var, &cs->neg_one);
    gcs_enforce(cs, la, lb, lc);
}

void gnum_to_bits_le(struct gcs *cs, gbool out[255], const gnum *x)
{
    uint64_t c[4] = {0, 0, 0, 0};
    if (gcs_values(cs)) fr_from_mont(c, &x->val);
    for (unsigned i = 0; i < FR_NUM_BITS; i++) out[i] = gb_alloc(cs, canon_bit(c, i));
    unpacking_constraint(cs, out, FR_NUM_BITS, x);
}

/* AllocatedBit::alloc_conditionally: (1 - must_be_false - v) * v = 0. */
static gbool alloc_conditionally(struct gcs *cs, unsigned v, gbool must_be_false)
{
    gbool r;
    r.kind = GB_IS;
    r.val = (uint8_t)(v & 1u);
    r.var = gcs_alloc_aux(cs, r.val ? &FR_ONE : &FR_ZERO);
    if (!gcs_shape(cs)) {
        cs->n_constraints++;
        return r;
    }
    struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
    glc_add_one(cs, la, G16_VAR_ONE);
    glc_add(cs, la, must_be_false.var, &cs->neg_one);
    glc_add(cs, la, r.var, &cs->neg_one);
    glc_add_one(cs, lb, r.var);
    gcs_enforce(cs, la, lb, lc);
    return r;
}

/* Walk r - 1 from its top set bit down: a run of ones allocates plain bits; at the first
 * zero after a run, AND the run (and the previous run's AND) into last_run; a zero bit of
 * r - 1 allocates a bit that must be false while last_run is true. This bounds x <= r - 1. */
void gnum_to_bits_le_strict(struct gcs *cs, gbool out[255], const gnum *x)
{
    uint64_t c[4] = {0, 0, 0, 0}, rm1[4];
    if (gcs_values(cs)) fr_from_mont(c, &x->val);
    for (int i = 0; i < 4; i++) rm1[i] = FR_MODULUS.l[i];
    rm1[0] -= 1;                                     /* r is odd: no borrow */

    gbool be[FR_NUM_BITS];                           /* result, most significant first */
    gbool run[FR_NUM_BITS + 1];
    unsigned nbe = 0, nrun = 0;
    gbool last_run = gb_const(false);
    bool have_last = false;
    bool found_one = false;
    for (int i = 255; i >= 0; i--) {
        unsigned rb = canon_bit(rm1, (unsigned)i), ab = canon_bit(c, (unsigned)i);
        found_one |= rb;
        if (!found_one) continue;
        if (rb) {
            gbool bit = gb_alloc(cs, ab);
            run[nrun++] = bit;
            be[nbe++] = bit;
        } else {
            if (nrun) {
                if (have_last) run[nrun++] = last_run;
                gbool acc = run[0];                  /* kary_and: AND them left to right */
                for (unsigned k = 1; k < nrun; k++) acc = gb_alloc_and(cs, acc, run[k]);
                last_run = acc;
                have_last = true;
                nrun = 0;
            }
            be[nbe++] = alloc_conditionally(cs, ab, last_run);
        }
    }
    for (unsigned i = 0; i < FR_NUM_BITS; i++) out[i] = be[FR_NUM_BITS - 1 - i];
    unpacking_constraint(cs, out, FR_NUM_BITS, x);
}

/* sum 2^i bits[i] into lc and/or its value. */
static void pack_num(struct gcs *cs, struct glc *lc, fr_t *val, const gbool *bits, size_t n)
{
    *val = FR_ZERO;
    for (size_t i = 0; i < n; i++) {
        if (lc) glc_add_bool(cs, lc, bits[i], &cs->pow2[i]);
        if (bits[i].val & 1u) fr_add(val, val, &cs->pow2[i]);
    }
}

gnum g_pack_bits(struct gcs *cs, const gbool *bits, size_t n)
{
    if (n > FR_CAPACITY) n = FR_CAPACITY;
    bool shape = gcs_shape(cs);
    struct glc *la = shape ? lc_a(cs) : NULL;
    fr_t v;
    pack_num(cs, la, &v, bits, n);
    gnum y = gnum_alloc(cs, &v);
    if (!shape) {
        cs->n_constraints++;
        return y;
    }
    struct glc *lb = lc_b(cs), *lc = lc_c(cs);
    glc_add_one(cs, lb, G16_VAR_ONE);                 /* num * ONE = y */
    glc_add_one(cs, lc, y.var);
    gcs_enforce(cs, la, lb, lc);
    return y;
}

void g_pack_into_inputs(struct gcs *cs, const gbool *bits, size_t n)
{
    for (size_t off = 0; off < n; off += FR_CAPACITY) {
        size_t k = n - off < FR_CAPACITY ? n - off : FR_CAPACITY;
        bool shape = gcs_shape(cs);
        struct glc *la = shape ? lc_a(cs) : NULL;
        fr_t v;
        pack_num(cs, la, &v, bits + off, k);
        uint32_t in = gcs_alloc_input(cs, &v);
        if (!shape) {
            cs->n_constraints++;
            continue;
        }
        struct glc *lb = lc_b(cs), *lc = lc_c(cs);
        glc_add_one(cs, lb, G16_VAR_ONE);             /* num * ONE = input */
        glc_add_one(cs, lc, in);
        gcs_enforce(cs, la, lb, lc);
    }
}

void multipack_compute(fr_t *out, const uint8_t *bits, size_t n)
{
    fr_t coeff;
    size_t o = 0;
    for (size_t off = 0; off < n; off += FR_CAPACITY, o++) {
        size_t k = n - off < FR_CAPACITY ? n - off : FR_CAPACITY;
        out[o] = FR_ZERO;
        coeff = FR_ONE;
        for (size_t i = 0; i < k; i++) {
            if (bits[off + i]) fr_add(&out[o], &out[o], &coeff);
            fr_dbl(&coeff, &coeff);
        }
    }
}
