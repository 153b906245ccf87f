/* boolean.c: bellpepper-core Boolean / AllocatedBit gadgets (alloc, xor, and, and_not, nor,
 * SHA-256 ch and maj, enforce_equal) with upstream's folding rules and operand order
 * (bellpepper-core 0.2.1 src/gadgets/boolean.rs). */
#include "cuzk/gadgets.h"

/* The three scratch LCs, cleared. Only used between the last nested gadget call and the
 * enforce of the calling gadget, so gadgets never see each other's scratch in use. */
static struct glc *lc_a(struct gcs *cs) { glc_clear(&cs->tmp[0]); return &cs->tmp[0]; }
static struct glc *lc_b(struct gcs *cs) { glc_clear(&cs->tmp[1]); return &cs->tmp[1]; }
static struct glc *lc_c(struct gcs *cs) { glc_clear(&cs->tmp[2]); return &cs->tmp[2]; }

/* Value of the variable under a Boolean (not of the Boolean itself). */
static unsigned var_bit(gbool b) { return (unsigned)(b.val ^ (b.kind == GB_NOT)) & 1u; }

static gbool new_bit(struct gcs *cs, unsigned v)
{
    gbool r;
    r.kind = GB_IS;
    r.val = (uint8_t)(v & 1u);
    r.var = gcs_alloc_aux(cs, r.val ? &FR_ONE : &FR_ZERO);
    return r;
}

void glc_add_bool(struct gcs *cs, struct glc *lc, gbool b, const fr_t *coeff)
{
    if (b.kind == GB_CONST) {
        if (b.val) glc_add(cs, lc, G16_VAR_ONE, coeff);
    } else if (b.kind == GB_IS) {
        glc_add(cs, lc, b.var, coeff);
    } else {
        fr_t neg;
        fr_neg(&neg, coeff);
        glc_add(cs, lc, G16_VAR_ONE, coeff);
        glc_add(cs, lc, b.var, &neg);
    }
}

gbool gb_alloc(struct gcs *cs, bool v)
{
    gbool r = new_bit(cs, v);
    if (gcs_shape(cs)) {
        struct glc *a = lc_a(cs), *b = lc_b(cs), *c = lc_c(cs);
        glc_add_one(cs, a, G16_VAR_ONE);
        glc_add(cs, a, r.var, &cs->neg_one);      /* (1 - v) */
        glc_add_one(cs, b, r.var);                /* * v = 0 */
        gcs_enforce(cs, a, b, c);
    } else {
        cs->n_constraints++;
    }
    return r;
}

void gb_alloc_u64_le(struct gcs *cs, gbool out[64], uint64_t v)
{
    for (int i = 0; i < 64; i++) out[i] = gb_alloc(cs, (v >> i) & 1);
}

gbool gb_alloc_xor(struct gcs *cs, gbool a, gbool b)
{
    gbool r = new_bit(cs, var_bit(a) ^ var_bit(b));
    if (gcs_shape(cs)) {
        struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
        glc_add_one(cs, la, a.var);               /* (a + a) */
        glc_add_one(cs, la, a.var);
        glc_add_one(cs, lb, b.var);               /* * b */
        glc_add_one(cs, lc, a.var);               /* = a + b - r */
        glc_add_one(cs, lc, b.var);
        glc_add(cs, lc, r.var, &cs->neg_one);
        gcs_enforce(cs, la, lb, lc);
    } else {
        cs->n_constraints++;
    }
    return r;
}

gbool gb_alloc_and(struct gcs *cs, gbool a, gbool b)
{
    gbool r = new_bit(cs, var_bit(a) & var_bit(b));
    if (gcs_shape(cs)) {
        struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
        glc_add_one(cs, la, a.var);
        glc_add_one(cs, lb, b.var);
        glc_add_one(cs, lc, r.var);
        gcs_enforce(cs, la, lb, lc);
    } else {
        cs->n_constraints++;
    }
    return r;
}

gbool gb_alloc_and_not(struct gcs *cs, gbool a, gbool b)
{
    gbool r = new_bit(cs, var_bit(a) & (var_bit(b) ^ 1u));
    if (gcs_shape(cs)) {
        struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
        glc_add_one(cs, la, a.var);
        glc_add_one(cs, lb, G16_VAR_ONE);         /* (1 - b) */
        glc_add(cs, lb, b.var, &cs->neg_one);
        glc_add_one(cs, lc, r.var);
        gcs_enforce(cs, la, lb, lc);
    } else {
        cs->n_constraints++;
    }
    return r;
}

gbool gb_alloc_nor(struct gcs *cs, gbool a, gbool b)
{
    gbool r = new_bit(cs, (var_bit(a) | var_bit(b)) ^ 1u);
    if (gcs_shape(cs)) {
        struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
        glc_add_one(cs, la, G16_VAR_ONE);
        glc_add(cs, la, a.var, &cs->neg_one);
        glc_add_one(cs, lb, G16_VAR_ONE);
        glc_add(cs, lb, b.var, &cs->neg_one);
        glc_add_one(cs, lc, r.var);
        gcs_enforce(cs, la, lb, lc);
    } else {
        cs->n_constraints++;
    }
    return r;
}

/* Boolean::xor. Operand order of the allocated xor follows upstream's match arms: for
 * (Not a, Is b) the Is operand goes first. */
gbool gb_xor(struct gcs *cs, gbool a, gbool b)
{
    if (a.kind == GB_CONST && !a.val) return b;
    if (b.kind == GB_CONST && !b.val) return a;
    if (a.kind == GB_CONST) return gb_not(b);
    if (b.kind == GB_CONST) return gb_not(a);
    if (a.kind == GB_IS && b.kind == GB_NOT) return gb_not(gb_alloc_xor(cs, a, gb_not(b)));
    if (a.kind == GB_NOT && b.kind == GB_IS) return gb_not(gb_alloc_xor(cs, b, gb_not(a)));
    /* Is/Is, or Not/Not (a ^ b = !a ^ !b): xor of the underlying variables. */
    return gb_alloc_xor(cs, a, b);
}

gbool gb_and(struct gcs *cs, gbool a, gbool b)
{
    if ((a.kind == GB_CONST && !a.val) || (b.kind == GB_CONST && !b.val)) return gb_const(false);
    if (a.kind == GB_CONST) return b;
    if (b.kind == GB_CONST) return a;
    if (a.kind == GB_IS && b.kind == GB_NOT) return gb_alloc_and_not(cs, a, b);
    if (a.kind == GB_NOT && b.kind == GB_IS) return gb_alloc_and_not(cs, b, a);
    if (a.kind == GB_NOT) return gb_alloc_nor(cs, a, b);
    return gb_alloc_and(cs, a, b);
}

gbool gb_sha256_ch(struct gcs *cs, gbool a, gbool b, gbool c)
{
    unsigned v = (a.val & b.val) ^ ((a.val ^ 1u) & c.val);
    if (a.kind == GB_CONST && b.kind == GB_CONST && c.kind == GB_CONST) return gb_const(v & 1u);
    if (a.kind == GB_CONST && !a.val) return c;
    if (b.kind == GB_CONST && !b.val) return gb_and(cs, gb_not(a), c);
    if (c.kind == GB_CONST && !c.val) return gb_and(cs, a, b);
    if (c.kind == GB_CONST) return gb_not(gb_and(cs, a, gb_not(b)));
    if (b.kind == GB_CONST) return gb_not(gb_and(cs, gb_not(a), gb_not(c)));
    /* a constant true, or nothing constant: allocate ch with (b - c) * a = ch - c. */
    gbool ch = new_bit(cs, v);
    if (gcs_shape(cs)) {
        struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
        glc_add_bool(cs, la, b, &FR_ONE);
        glc_add_bool(cs, la, c, &cs->neg_one);
        glc_add_bool(cs, lb, a, &FR_ONE);
        glc_add_one(cs, lc, ch.var);
        glc_add_bool(cs, lc, c, &cs->neg_one);
        gcs_enforce(cs, la, lb, lc);
    } else {
        cs->n_constraints++;
    }
    return ch;
}

gbool gb_sha256_maj(struct gcs *cs, gbool a, gbool b, gbool c)
{
    unsigned v = (a.val & b.val) ^ (a.val & c.val) ^ (b.val & c.val);
    if (a.kind == GB_CONST && b.kind == GB_CONST && c.kind == GB_CONST) return gb_const(v & 1u);
    if (a.kind == GB_CONST && !a.val) return gb_and(cs, b, c);
    if (b.kind == GB_CONST && !b.val) return gb_and(cs, a, c);
    if (c.kind == GB_CONST && !c.val) return gb_and(cs, a, b);
    if (c.kind == GB_CONST) return gb_not(gb_and(cs, gb_not(a), gb_not(b)));
    if (b.kind == GB_CONST) return gb_not(gb_and(cs, gb_not(a), gb_not(c)));
    if (a.kind == GB_CONST) return gb_not(gb_and(cs, gb_not(b), gb_not(c)));
    /* Upstream order: maj is allocated first, then bc = b AND c (own variable and
     * constraint), then (2bc - b - c) * a = bc - maj. */
    gbool maj = new_bit(cs, v);
    gbool bc = gb_and(cs, b, c);
    if (gcs_shape(cs)) {
        fr_t two;
        fr_dbl(&two, &FR_ONE);
        struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
        glc_add_bool(cs, la, bc, &two);
        glc_add_bool(cs, la, b, &cs->neg_one);
        glc_add_bool(cs, la, c, &cs->neg_one);
        glc_add_bool(cs, lb, a, &FR_ONE);
        glc_add_bool(cs, lc, bc, &FR_ONE);
        glc_add(cs, lc, maj.var, &cs->neg_one);
        gcs_enforce(cs, la, lb, lc);
    } else {
        cs->n_constraints++;
    }
    return maj;
}

void gb_enforce_equal(struct gcs *cs, gbool a, gbool b)
{
    if (a.kind == GB_CONST && b.kind == GB_CONST) {
        if (a.val != b.val)
            gcs_fail(cs, CUZK_E_UNSATISFIED, "gb_enforce_equal: constants %u != %u", a.val, b.val);
        return;
    }
    if (!gcs_shape(cs)) {
        cs->n_constraints++;
        return;
    }
    struct glc *la = lc_a(cs), *lb = lc_b(cs), *lc = lc_c(cs);
    if ((a.kind == GB_CONST && a.val) || (b.kind == GB_CONST && b.val)) {
        gbool x = a.kind == GB_CONST ? b : a;         /* 0 * 0 = 1 - x */
        glc_add_one(cs, lc, G16_VAR_ONE);
        glc_add_bool(cs, lc, x, &cs->neg_one);
    } else if (a.kind == GB_CONST || b.kind == GB_CONST) {
        gbool x = a.kind == GB_CONST ? b : a;         /* 0 * 0 = x */
        glc_add_bool(cs, lc, x, &FR_ONE);
    } else {
        glc_add_bool(cs, lc, a, &FR_ONE);             /* 0 * 0 = a - b */
        glc_add_bool(cs, lc, b, &cs->neg_one);
    }
    gcs_enforce(cs, la, lb, lc);
}
