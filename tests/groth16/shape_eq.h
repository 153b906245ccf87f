/* shape_eq.h: the oracle comparison of two shapes, field by field and array by array, and of
 * two saved shape files byte by byte (tests of the builder, the parallel segment recording
 * and the circuits' parallel shapes). Include after test.h. */
#ifndef CUZK_TEST_SHAPE_EQ_H
#define CUZK_TEST_SHAPE_EQ_H

#include <stdio.h>

#include "cuzk/groth16.h"

/* Arrays of shapes are megabytes: name the first differing byte instead of printing both. */
#define ASSERT_ARRAY_EQ(a, b, n)                                                               \
    do {                                                                                       \
        const unsigned char *a_ = (const void *)(a), *b_ = (const void *)(b);                  \
        size_t n_ = (n);                                                                       \
        if (memcmp(a_, b_, n_)) {                                                              \
            size_t i_ = 0;                                                                     \
            while (a_[i_] == b_[i_]) i_++;                                                     \
            test_fail_at(__FILE__, __LINE__, "%s == %s: differ at byte %zu of %zu (%02x != %02x)", \
                         #a, #b, i_, n_, a_[i_], b_[i_]);                                      \
        }                                                                                      \
    } while (0)

static inline void assert_shapes_equal(const struct g16_shape *x, const struct g16_shape *y)
{
    ASSERT_EQ_U64(x->n_inputs, y->n_inputs);
    ASSERT_EQ_U64(x->n_aux, y->n_aux);
    ASSERT_EQ_U64(x->n_constraints, y->n_constraints);
    ASSERT_EQ_U64(x->n_coeffs, y->n_coeffs);
    ASSERT_ARRAY_EQ(x->coeffs, y->coeffs, x->n_coeffs * sizeof(fr_t));
    const struct g16_matrix *mx[3] = {&x->a, &x->b, &x->c}, *my[3] = {&y->a, &y->b, &y->c};
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ_U64(mx[i]->nnz, my[i]->nnz);
        ASSERT_EQ_INT(mx[i]->row_ptr == NULL, my[i]->row_ptr == NULL);
        if (!mx[i]->row_ptr) continue;
        ASSERT_ARRAY_EQ(mx[i]->row_ptr, my[i]->row_ptr, (x->n_constraints + 1) * 8);
        ASSERT_ARRAY_EQ(mx[i]->col, my[i]->col, mx[i]->nnz * 4);
        ASSERT_ARRAY_EQ(mx[i]->coeff_idx, my[i]->coeff_idx, mx[i]->nnz * 2);
    }
    size_t aw = (x->n_aux + 63) / 64, iw = (x->n_inputs + 63) / 64;
    ASSERT_ARRAY_EQ(x->a_aux_density, y->a_aux_density, aw * 8);
    ASSERT_ARRAY_EQ(x->b_aux_density, y->b_aux_density, aw * 8);
    ASSERT_ARRAY_EQ(x->b_inp_density, y->b_inp_density, iw * 8);
    ASSERT_EQ_U64(x->a_aux_count, y->a_aux_count);
    ASSERT_EQ_U64(x->b_aux_count, y->b_aux_count);
    ASSERT_EQ_U64(x->b_inp_count, y->b_inp_count);
}

/* The two files hold the same bytes (reports the first differing offset). */
static inline void assert_files_equal(const char *p, const char *q)
{
    FILE *f = fopen(p, "rb"), *g = fopen(q, "rb");
    ASSERT_MSG(f && g, "cannot open %s or %s", p, q);
    unsigned char bf[1 << 16], bg[1 << 16];
    long off = 0;
    for (;;) {
        size_t nf = fread(bf, 1, sizeof bf, f), ng = fread(bg, 1, sizeof bg, g);
        size_t n = nf < ng ? nf : ng;
        for (size_t i = 0; i < n; i++)
            ASSERT_MSG(bf[i] == bg[i], "%s and %s differ at byte %ld", p, q, off + (long)i);
        ASSERT_MSG(nf == ng, "%s and %s differ in length (from byte %ld)", p, q, off + (long)n);
        off += (long)n;
        if (nf < sizeof bf) break;
    }
    fclose(f);
    fclose(g);
}

#endif
