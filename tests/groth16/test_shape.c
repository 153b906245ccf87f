/* test_shape.c: builder (CSR arrays, dedup, densities, interleaved allocation), shape files
 * (round trip, corruption errors), SpMV against a naive evaluation of the raw terms, check(),
 * and the synthetic circuit. */
#include <stdio.h>
#include <unistd.h>

#include "cuzk/circuits.h"
#include "cuzk/groth16.h"
#include "test.h"
#include "groth16/shape_eq.h"

uint32_t g16__crc32c(uint32_t crc, const void *data, size_t n);

static fr_t fr_u(uint64_t v)
{
    fr_t r;
    fr_from_u64(&r, v);
    return r;
}

static void tmp_path(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "/tmp/cuzk_test_shape_%d_%s.shape", (int)getpid(), tag);
}

TEST(crc32c_known_vector)
{
    ASSERT_EQ_U64(g16__crc32c(0, "123456789", 9), 0xe3069283u);
    /* chaining equals one pass */
    uint32_t a = g16__crc32c(0, "12345", 5);
    ASSERT_EQ_U64(g16__crc32c(a, "6789", 4), 0xe3069283u);
    ASSERT_EQ_U64(g16__crc32c(0, "", 0), 0);
}

/* c0: (a0 + 2*in1 + a0) * ONE = a1;  c1: (3*a1 + 0*a0) * (a0 - a0) = in1; then input rows. */
static void build_small(struct g16_shape *s, bool count_only)
{
    struct cuzk_error err_s, *err = &err_s;
    struct g16_builder *b = g16_builder_new(count_only, err);
    ASSERT(b);
    uint32_t a0 = g16_alloc_aux(b);
    uint32_t in1 = g16_alloc_input(b);
    uint32_t a1 = g16_alloc_aux(b);
    ASSERT_EQ_U64(a0, G16_VAR_AUX(0));
    ASSERT_EQ_U64(in1, G16_VAR_INPUT(1));
    fr_t m1;
    fr_neg(&m1, &FR_ONE);
    struct g16_term A0[3] = {{a0, FR_ONE}, {in1, fr_u(2)}, {a0, FR_ONE}};
    struct g16_term B0[1] = {{G16_VAR_ONE, FR_ONE}};
    struct g16_term C0[1] = {{a1, FR_ONE}};
    ASSERT_OK(g16_enforce(b, (struct g16_lc){A0, 3}, (struct g16_lc){B0, 1},
                          (struct g16_lc){C0, 1}), err);
    struct g16_term A1[2] = {{a1, fr_u(3)}, {a0, FR_ZERO}};
    struct g16_term B1[2] = {{a0, FR_ONE}, {a0, m1}};
    struct g16_term C1[1] = {{in1, FR_ONE}};
    ASSERT_OK(g16_enforce(b, (struct g16_lc){A1, 2}, (struct g16_lc){B1, 2},
                          (struct g16_lc){C1, 1}), err);
    ASSERT_OK(g16_builder_finish(b, s, err), err);
    g16_builder_free(b);
}

TEST(builder_exact_csr)
{
    struct g16_shape s;
    build_small(&s, false);
    ASSERT_EQ_U64(s.n_inputs, 2);
    ASSERT_EQ_U64(s.n_aux, 2);
    ASSERT_EQ_U64(s.n_constraints, 4);
    /* coefficient table in first-seen order: 2, 1, 3 */
    ASSERT_EQ_U64(s.n_coeffs, 3);
    fr_t two = fr_u(2), three = fr_u(3);
    ASSERT_MEM_EQ(&s.coeffs[0], &two, 32);
    ASSERT_MEM_EQ(&s.coeffs[1], &FR_ONE, 32);
    ASSERT_MEM_EQ(&s.coeffs[2], &three, 32);
    /* columns: ONE 0, in1 1, a0 2, a1 3; rows sorted by column */
    uint64_t arp[5] = {0, 2, 3, 4, 5}, brp[5] = {0, 1, 1, 1, 1}, crp[5] = {0, 1, 2, 2, 2};
    uint32_t acol[5] = {1, 2, 3, 0, 1}, bcol[1] = {0}, ccol[2] = {3, 1};
    uint16_t aci[5] = {0, 0, 2, 1, 1}, bci[1] = {1}, cci[2] = {1, 1};
    ASSERT_EQ_U64(s.a.nnz, 5);
    ASSERT_EQ_U64(s.b.nnz, 1);
    ASSERT_EQ_U64(s.c.nnz, 2);
    ASSERT_MEM_EQ(s.a.row_ptr, arp, sizeof arp);
    ASSERT_MEM_EQ(s.b.row_ptr, brp, sizeof brp);
    ASSERT_MEM_EQ(s.c.row_ptr, crp, sizeof crp);
    ASSERT_MEM_EQ(s.a.col, acol, sizeof acol);
    ASSERT_MEM_EQ(s.b.col, bcol, sizeof bcol);
    ASSERT_MEM_EQ(s.c.col, ccol, sizeof ccol);
    ASSERT_MEM_EQ(s.a.coeff_idx, aci, sizeof aci);
    ASSERT_MEM_EQ(s.b.coeff_idx, bci, sizeof bci);
    ASSERT_MEM_EQ(s.c.coeff_idx, cci, sizeof cci);
    /* densities: A aux {a0, a1}; B inputs {ONE}; B aux {} (a0 - a0 cancelled) */
    ASSERT_EQ_U64(s.a_aux_density[0], 3);
    ASSERT_EQ_U64(s.b_inp_density[0], 1);
    ASSERT_EQ_U64(s.b_aux_density[0], 0);
    ASSERT_EQ_U64(s.a_aux_count, 2);
    ASSERT_EQ_U64(s.b_inp_count, 1);
    ASSERT_EQ_U64(s.b_aux_count, 0);

    struct g16_shape k;
    build_small(&k, true);
    ASSERT(k.a.row_ptr == NULL && k.b.col == NULL && k.c.coeff_idx == NULL);
    ASSERT_EQ_U64(k.n_constraints, 4);
    ASSERT_EQ_U64(k.a.nnz, 5);
    ASSERT_EQ_U64(k.b.nnz, 1);
    ASSERT_EQ_U64(k.c.nnz, 2);
    ASSERT_EQ_U64(k.a_aux_density[0], 3);
    ASSERT_EQ_U64(k.b_inp_density[0], 1);
    ASSERT_EQ_U64(k.b_aux_count, 0);
    g16_shape_free(&k);
    g16_shape_free(&s);
}

TEST(builder_interleaved_columns)
{
    struct cuzk_error err_s, *err = &err_s;
    struct g16_builder *b = g16_builder_new(false, err);
    uint32_t x0 = g16_alloc_aux(b), i1 = g16_alloc_input(b), x1 = g16_alloc_aux(b);
    uint32_t i2 = g16_alloc_input(b), x2 = g16_alloc_aux(b);
    struct g16_term A[5] = {{x2, FR_ONE}, {i2, FR_ONE}, {x0, FR_ONE}, {i1, FR_ONE}, {x1, FR_ONE}};
    struct g16_term B[1] = {{x1, FR_ONE}};
    ASSERT_OK(g16_enforce(b, (struct g16_lc){A, 5}, (struct g16_lc){B, 1}, (struct g16_lc){NULL, 0}),
              err);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, err), err);
    g16_builder_free(b);
    /* inputs 0..2 then aux at 3..5, whatever the allocation order */
    uint32_t col[5] = {1, 2, 3, 4, 5};
    ASSERT_MEM_EQ(s.a.col, col, sizeof col);
    ASSERT_EQ_U64(s.b.col[0], 4);
    ASSERT_EQ_U64(s.n_constraints, 4);   /* 1 + 3 input rows */
    for (uint32_t i = 0; i < 3; i++) {
        ASSERT_EQ_U64(s.a.row_ptr[2 + i] - s.a.row_ptr[1 + i], 1);
        ASSERT_EQ_U64(s.a.col[s.a.row_ptr[1 + i]], i);
    }
    ASSERT_EQ_U64(s.b_aux_density[0], 2);
    ASSERT_EQ_U64(s.b_inp_count, 0);
    g16_shape_free(&s);
}

TEST(builder_errors)
{
    struct cuzk_error err_s, *err = &err_s;
    struct g16_builder *b = g16_builder_new(false, err);
    struct g16_term t = {G16_VAR_AUX(5), FR_ONE};
    ASSERT_CODE(g16_enforce(b, (struct g16_lc){&t, 1}, (struct g16_lc){NULL, 0},
                            (struct g16_lc){NULL, 0}), CUZK_E_INVALID_ARG, err);
    struct g16_shape s;
    ASSERT_CODE(g16_builder_finish(b, &s, err), CUZK_E_INVALID_ARG, err);
    ASSERT_STR_CONTAINS(err->msg, "unallocated variable aux 5");
    g16_builder_free(b);

    /* 65536 distinct coefficients fit, the 65537th does not */
    b = g16_builder_new(true, err);
    int rc = CUZK_OK;
    for (uint64_t k = 1; k <= 65537 && rc == CUZK_OK; k++) {
        struct g16_term u = {G16_VAR_ONE, fr_u(k)};
        rc = g16_enforce(b, (struct g16_lc){&u, 1}, (struct g16_lc){NULL, 0}, (struct g16_lc){NULL, 0});
        if (k <= 65536) ASSERT_EQ_INT(rc, CUZK_OK);
    }
    ASSERT_EQ_INT(rc, CUZK_E_UNSUPPORTED);
    ASSERT_CODE(g16_builder_finish(b, &s, err), CUZK_E_UNSUPPORTED, err);
    ASSERT_STR_CONTAINS(err->msg, "65536 distinct coefficients");
    g16_builder_free(b);
}

/* ---- random circuits, with the raw terms kept for a naive oracle ---- */

#define RMAX_TERMS 6
struct raw_row { struct g16_term t[3][RMAX_TERMS]; size_t n[3]; };

static void random_circuit(struct g16_shape *s, struct raw_row *rows, size_t n_rows,
                           uint32_t n_inp, uint32_t n_aux, cuzk_rng *rng)
{
    struct cuzk_error err_s, *err = &err_s;
    struct g16_builder *b = g16_builder_new(false, err);
    uint32_t ni = 1, na = 0;
    fr_t pool_c[5] = {FR_ONE, fr_u(2), fr_u(12345), FR_ZERO, FR_ONE};
    fr_neg(&pool_c[4], &FR_ONE);
    for (size_t r = 0; r < n_rows; r++) {
        /* allocate interleaved as we go */
        while (ni < n_inp && cuzk_rng_u64(rng) % 4 == 0) { g16_alloc_input(b); ni++; }
        while (na < n_aux && cuzk_rng_u64(rng) % 2 == 0) { g16_alloc_aux(b); na++; }
        for (int m = 0; m < 3; m++) {
            rows[r].n[m] = cuzk_rng_u64(rng) % (RMAX_TERMS + 1);
            for (size_t k = 0; k < rows[r].n[m]; k++) {
                uint32_t v;
                if (na == 0 || cuzk_rng_u64(rng) % 3 == 0) v = G16_VAR_INPUT(cuzk_rng_u64(rng) % ni);
                else v = G16_VAR_AUX(cuzk_rng_u64(rng) % na);
                rows[r].t[m][k].var = v;
                rows[r].t[m][k].coeff = pool_c[cuzk_rng_u64(rng) % 5];
            }
        }
        ASSERT_OK(g16_enforce(b, (struct g16_lc){rows[r].t[0], rows[r].n[0]},
                              (struct g16_lc){rows[r].t[1], rows[r].n[1]},
                              (struct g16_lc){rows[r].t[2], rows[r].n[2]}), err);
    }
    while (ni < n_inp) { g16_alloc_input(b); ni++; }
    while (na < n_aux) { g16_alloc_aux(b); na++; }
    ASSERT_OK(g16_builder_finish(b, s, err), err);
    g16_builder_free(b);
}

static const fr_t *raw_val(uint32_t v, const fr_t *in, const fr_t *aux)
{
    return (v & G16_VAR_AUX_BIT) ? &aux[v & ~G16_VAR_AUX_BIT] : &in[v];
}

TEST(spmv_vs_naive)
{
    cuzk_rng *rng = test_rng();
    const size_t n_rows = 3000;
    const uint32_t n_inp = 7, n_aux = 500;
    struct raw_row *rows = calloc(n_rows, sizeof *rows);
    struct g16_shape s;
    random_circuit(&s, rows, n_rows, n_inp, n_aux, rng);
    ASSERT_EQ_U64(s.n_constraints, n_rows + n_inp);
    fr_t in[7], aux[500];
    in[0] = FR_ONE;
    for (uint32_t i = 1; i < n_inp; i++) in[i] = fr_u(cuzk_rng_u64(rng));
    for (uint32_t i = 0; i < n_aux; i++) {
        uint64_t k = cuzk_rng_u64(rng);
        aux[i] = k % 3 == 0 ? FR_ZERO : k % 3 == 1 ? FR_ONE : fr_u(k);
    }
    struct g16_assignment w = {in, aux};
    size_t n = s.n_constraints;
    fr_t *abc[2][3];
    for (int p = 0; p < 2; p++)
        for (int m = 0; m < 3; m++) abc[p][m] = calloc(n, sizeof(fr_t));
    struct cuzk_error err_s, *err = &err_s;
    ASSERT_OK(g16_eval_abc(abc[0][0], abc[0][1], abc[0][2], &s, &w, pool_default(), err), err);
    ASSERT_OK(g16_eval_abc(abc[1][0], abc[1][1], abc[1][2], &s, &w, NULL, err), err);
    for (size_t r = 0; r < n; r++) {
        for (int m = 0; m < 3; m++) {
            fr_t want = FR_ZERO, t;
            if (r < n_rows) {
                for (size_t k = 0; k < rows[r].n[m]; k++) {
                    fr_mul(&t, &rows[r].t[m][k].coeff, raw_val(rows[r].t[m][k].var, in, aux));
                    fr_add(&want, &want, &t);
                }
            } else if (m == 0) {
                want = in[r - n_rows];   /* input row: A = input_i */
            }
            ASSERT_MSG(fr_eq(&want, &abc[0][m][r]), "row %zu matrix %d", r, m);
            ASSERT_MEM_EQ(&abc[0][m][r], &abc[1][m][r], 32);
        }
    }
    /* densities against the raw terms: nonzero merged coefficient */
    for (uint32_t k = 0; k < n_aux; k++) {
        for (int m = 0; m < 2; m++) {
            bool dense = false;
            for (size_t r = 0; r < n_rows && !dense; r++) {
                fr_t sum = FR_ZERO;
                for (size_t j = 0; j < rows[r].n[m]; j++)
                    if (rows[r].t[m][j].var == G16_VAR_AUX(k)) fr_add(&sum, &sum, &rows[r].t[m][j].coeff);
                dense = !fr_is_zero(&sum);
            }
            const uint64_t *bm = m == 0 ? s.a_aux_density : s.b_aux_density;
            ASSERT_EQ_INT((bm[k / 64] >> (k % 64)) & 1, dense);
        }
    }
    for (int p = 0; p < 2; p++)
        for (int m = 0; m < 3; m++) free(abc[p][m]);
    free(rows);
    g16_shape_free(&s);
}

/* chain x_{r+1} = x_r * x_r, r < n; breaking x_k makes row k-1 the first failure */
TEST(check_first_failing_row)
{
    struct cuzk_error err_s, *err = &err_s;
    struct g16_builder *b = g16_builder_new(false, err);
    const int n = 5000;
    uint32_t *x = malloc((n + 1) * sizeof *x);
    x[0] = g16_alloc_aux(b);
    for (int r = 0; r < n; r++) {
        x[r + 1] = g16_alloc_aux(b);
        struct g16_term a = {x[r], FR_ONE}, c = {x[r + 1], FR_ONE};
        ASSERT_OK(g16_enforce(b, (struct g16_lc){&a, 1}, (struct g16_lc){&a, 1},
                              (struct g16_lc){&c, 1}), err);
    }
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, err), err);
    g16_builder_free(b);
    fr_t in = FR_ONE, *aux = malloc((n + 1) * sizeof *aux);
    aux[0] = fr_u(3);
    for (int r = 0; r < n; r++) fr_sqr(&aux[r + 1], &aux[r]);
    struct g16_assignment w = {&in, aux};
    ASSERT_OK(g16_check(&s, &w, pool_default(), err), err);
    int bad[3] = {4321, 1, n};
    for (int i = 0; i < 3; i++) {
        fr_t save = aux[bad[i]];
        fr_add(&aux[bad[i]], &aux[bad[i]], &FR_ONE);
        ASSERT_CODE(g16_check(&s, &w, pool_default(), err), CUZK_E_UNSATISFIED, err);
        char want[64];
        snprintf(want, sizeof want, "constraint %d: a*b != c", bad[i] - 1);
        ASSERT_STR_CONTAINS(err->msg, want);
        aux[bad[i]] = save;
    }
    fr_t two = fr_u(2);
    struct g16_assignment w2 = {&two, aux};
    ASSERT_CODE(g16_check(&s, &w2, NULL, err), CUZK_E_INVALID_ARG, err);
    free(aux);
    free(x);
    g16_shape_free(&s);
}

static long file_size(const char *p)
{
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static void patch_byte(const char *p, long off, uint8_t x)
{
    FILE *f = fopen(p, "r+b");
    fseek(f, off, SEEK_SET);
    int c = fgetc(f);
    fseek(f, off, SEEK_SET);
    fputc(c ^ x, f);
    fclose(f);
}

TEST(shape_file_round_trip_and_corruption)
{
    struct cuzk_error err_s, *err = &err_s;
    struct synth_params p = {3000, 5, false};
    struct g16_shape s, t;
    ASSERT_OK(synth_build_shape(&s, &p, err), err);
    char path[256];
    tmp_path(path, sizeof path, "rt");
    ASSERT_OK(g16_shape_save(&s, path, err), err);
    ASSERT_OK(g16_shape_load(&t, path, err), err);
    assert_shapes_equal(&s, &t);
    g16_shape_free(&t);
    long n = file_size(path);

    /* flipped byte in the middle of the matrices -> checksum */
    patch_byte(path, n / 2, 0x10);
    ASSERT_CODE(g16_shape_load(&t, path, err), CUZK_E_CHECKSUM, err);
    ASSERT_STR_CONTAINS(err->msg, path);
    ASSERT_STR_CONTAINS(err->msg, "CRC-32C mismatch");
    patch_byte(path, n / 2, 0x10);
    ASSERT_OK(g16_shape_load(&t, path, err), err);
    g16_shape_free(&t);

    /* wrong magic */
    patch_byte(path, 3, 0x01);
    ASSERT_CODE(g16_shape_load(&t, path, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "bad magic");
    ASSERT_STR_CONTAINS(err->msg, path);
    patch_byte(path, 3, 0x01);

    /* truncation: anywhere in the body, and inside the header */
    ASSERT(truncate(path, n - 1) == 0);
    ASSERT_CODE(g16_shape_load(&t, path, err), CUZK_E_TRUNCATED, err);
    ASSERT_STR_CONTAINS(err->msg, path);
    ASSERT_STR_CONTAINS(err->msg, "truncated");
    ASSERT(truncate(path, 20) == 0);
    ASSERT_CODE(g16_shape_load(&t, path, err), CUZK_E_TRUNCATED, err);
    ASSERT_STR_CONTAINS(err->msg, "truncated in header");

    /* trailing garbage */
    ASSERT_OK(g16_shape_save(&s, path, err), err);
    FILE *f = fopen(path, "ab");
    fputc(0, f);
    fclose(f);
    ASSERT_CODE(g16_shape_load(&t, path, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "trailing");

    /* missing file */
    remove(path);
    ASSERT_CODE(g16_shape_load(&t, path, err), CUZK_E_IO, err);
    ASSERT_STR_CONTAINS(err->msg, path);

    /* count-only shapes round-trip too */
    struct g16_shape k;
    p.count_only = true;
    ASSERT_OK(synth_build_shape(&k, &p, err), err);
    ASSERT_OK(g16_shape_save(&k, path, err), err);
    ASSERT_OK(g16_shape_load(&t, path, err), err);
    assert_shapes_equal(&k, &t);
    remove(path);
    g16_shape_free(&t);
    g16_shape_free(&k);
    g16_shape_free(&s);
}

TEST(synthetic_shape_and_witness)
{
    struct cuzk_error err_s, *err = &err_s;
    uint64_t sizes[5] = {2, 97, 1000, 4096 - 9, 20000};
    uint32_t pubs[5] = {1, 3, 8, 9, 40};
    for (int i = 0; i < 5; i++) {
        struct synth_params p = {sizes[i], pubs[i], false};
        struct g16_shape s, k;
        ASSERT_OK(synth_build_shape(&s, &p, err), err);
        ASSERT_EQ_U64(s.n_inputs, pubs[i] + 1);
        ASSERT_EQ_U64(s.n_constraints, sizes[i] + s.n_inputs);
        ASSERT(s.n_coeffs <= 40);
        p.count_only = true;
        ASSERT_OK(synth_build_shape(&k, &p, err), err);
        ASSERT_EQ_U64(k.n_constraints, s.n_constraints);
        ASSERT_EQ_U64(k.n_aux, s.n_aux);
        ASSERT_EQ_U64(k.a.nnz, s.a.nnz);
        ASSERT_EQ_U64(k.b.nnz, s.b.nnz);
        ASSERT_EQ_U64(k.c.nnz, s.c.nnz);
        ASSERT_EQ_U64(k.a_aux_count, s.a_aux_count);
        ASSERT_EQ_U64(k.b_aux_count, s.b_aux_count);
        g16_shape_free(&k);
        p.count_only = false;
        fr_t *in = calloc(s.n_inputs, sizeof *in), *aux = calloc(s.n_aux + 1, sizeof *aux);
        uint64_t zero_one = 0;
        for (uint64_t seed = 1; seed <= 2; seed++) {
            ASSERT_OK(synth_witness(in, aux, &s, &p, seed, err), err);
            struct g16_assignment w = {in, aux};
            ASSERT_OK(g16_check(&s, &w, pool_default(), err), err);
            zero_one = 0;
            for (uint32_t j = 0; j < s.n_aux; j++) zero_one += fr_is_zero(&aux[j]) || fr_is_one(&aux[j]);
        }
        if (sizes[i] >= 1000) ASSERT(zero_one * 100 >= (uint64_t)s.n_aux * 90);
        /* a wrong public input is caught */
        fr_add(&in[1], &in[1], &FR_ONE);
        struct g16_assignment w = {in, aux};
        ASSERT_CODE(g16_check(&s, &w, NULL, err), CUZK_E_UNSATISFIED, err);
        /* params that disagree with the shape are rejected */
        struct synth_params q = {sizes[i] + 1, pubs[i], false};
        ASSERT_CODE(synth_witness(in, aux, &s, &q, 1, err), CUZK_E_INVALID_ARG, err);
        free(in);
        free(aux);
        g16_shape_free(&s);
    }
    struct synth_params bad = {5, 5, false};
    struct g16_shape s;
    ASSERT_CODE(synth_build_shape(&s, &bad, err), CUZK_E_INVALID_ARG, err);
}

TEST(synthetic_shape_deterministic)
{
    struct cuzk_error err_s, *err = &err_s;
    struct synth_params p = {5000, 4, false};
    struct g16_shape s, t;
    ASSERT_OK(synth_build_shape(&s, &p, err), err);
    ASSERT_OK(synth_build_shape(&t, &p, err), err);
    assert_shapes_equal(&s, &t);
    g16_shape_free(&s);
    g16_shape_free(&t);
}

TEST(builder_and_load_survive_allocation_failures)
{
    struct cuzk_error err_s, *err = &err_s;
    struct synth_params p = {3000, 3, false};
    struct g16_shape ref, s;
    ASSERT_OK(synth_build_shape(&ref, &p, err), err);
    char path[256];
    tmp_path(path, sizeof path, "oom");
    ASSERT_OK(g16_shape_save(&ref, path, err), err);
    bool built = false, loaded = false;
    for (long k = 0; k < 400 && !(built && loaded); k++) {
        cuzk_alloc_fail_after(k);
        int rc = synth_build_shape(&s, &p, err);
        cuzk_alloc_fail_after(-1);
        ASSERT_MSG(rc == CUZK_OK || rc == CUZK_E_NOMEM, "build, fail after %ld: %s", k, err->msg);
        if (rc == CUZK_OK) {
            assert_shapes_equal(&ref, &s);
            g16_shape_free(&s);
            built = true;
        }
        cuzk_alloc_fail_after(k);
        rc = g16_shape_load(&s, path, err);
        cuzk_alloc_fail_after(-1);
        ASSERT_MSG(rc == CUZK_OK || rc == CUZK_E_NOMEM, "load, fail after %ld: %s", k, err->msg);
        if (rc == CUZK_OK) {
            assert_shapes_equal(&ref, &s);
            g16_shape_free(&s);
            loaded = true;
        }
    }
    ASSERT(built && loaded);
    remove(path);
    g16_shape_free(&ref);
}

/* ------------------------------------------------------- parallel segments -- */

/* A toy circuit with the structure g16_builder_segments is for: a prefix (inputs and aux
 * interleaved), n identical-allocation segments whose rows reference ONE, the prefix and
 * their own variables (inputs among them, so finish must re-place columns), whose row counts
 * differ (3..11 rows: later waves outgrow the first wave's reservation), whose coefficients
 * are partly shared by all, by three consecutive segments (equal local tables) or by one
 * segment only (the global table interleaves), then a suffix after the segments. The oracle
 * records the same segments one after another into the main builder: the very calls
 * (toy_segment) against one builder, without g16_builder_segments. */
enum { TOY_SEG_IN = 2, TOY_SEG_AUX = 5 };
enum { TOY_OK, TOY_OTHER_SEG, TOY_LATER_SEG, TOY_OTHER_INPUT, TOY_UNALLOCATED, TOY_FEWER, TOY_MORE,
       TOY_FN_ERROR, TOY_NEST };
struct toy {
    uint32_t in1, in2, a0, a1, a2;  /* the prefix's handles */
    uint32_t pre_in, pre_aux;       /* its counts (ONE included) */
    size_t bad_seg, bad_seg2;       /* segments that misbehave as `bad` says */
    int bad;
    bool many;                      /* 3000 distinct coefficients per segment */
    int nest_rc, finish_rc;         /* what the TOY_NEST segment saw */
};

static int toy_segment(void *ctx, size_t seg, struct g16_builder *sb, struct cuzk_error *err)
{
    struct toy *t = ctx;
    int bad = seg == t->bad_seg || seg == t->bad_seg2 ? t->bad : TOY_OK;
    if (bad == TOY_FN_ERROR) return cuzk_fail(err, CUZK_E_IO, "toy: segment %zu refuses", seg);
    if (bad == TOY_NEST) {
        struct cuzk_error e;
        struct g16_shape s;
        t->nest_rc = g16_builder_segments(sb, 1, 0, 0, toy_segment, ctx, NULL, &e);
        t->finish_rc = g16_builder_finish(sb, &s, &e);
    }
    fr_t m1;
    fr_neg(&m1, &FR_ONE);
    uint32_t v[7];
    v[0] = g16_alloc_aux(sb);
    if (bad == TOY_UNALLOCATED) {   /* the next aux of this segment, before it exists */
        struct g16_term x = {v[0] + 1, FR_ONE};
        return g16_enforce(sb, (struct g16_lc){&x, 1}, (struct g16_lc){NULL, 0}, (struct g16_lc){NULL, 0});
    }
    v[1] = g16_alloc_input(sb);
    v[2] = g16_alloc_aux(sb);
    v[3] = g16_alloc_aux(sb);
    v[4] = g16_alloc_input(sb);
    v[5] = g16_alloc_aux(sb);
    v[6] = bad == TOY_FEWER ? v[5] : g16_alloc_aux(sb);
    if (bad == TOY_MORE) (void)g16_alloc_aux(sb);
    fr_t shared3 = fr_u(1000 + seg / 3), own = fr_u(5000 + seg);
    unsigned rows = 3 + (unsigned)(seg % 5) * 2;
    for (unsigned r = 0; r < rows; r++) {
        struct g16_term A[5], B[3], C[3];
        size_t na = 0, nb = 0, nc = 0;
        A[na++] = (struct g16_term){v[(r + 3) % 7], fr_u(r + 1)};
        A[na++] = (struct g16_term){r % 2 ? t->a1 : t->a0, shared3};
        A[na++] = (struct g16_term){v[2], FR_ONE};
        A[na++] = (struct g16_term){v[2], m1};                  /* cancels: dropped */
        if (r == 2) A[na++] = (struct g16_term){G16_VAR_ONE, own};
        B[nb++] = (struct g16_term){r == 1 ? v[1] : v[(r + 5) % 7], FR_ONE};
        if (seg % 4 == 0) B[nb++] = (struct g16_term){t->in2, fr_u(3)};   /* a prefix input in B */
        if (r == 0) B[nb++] = (struct g16_term){t->a2, FR_ZERO};           /* dropped */
        C[nc++] = (struct g16_term){v[r % 7], own};
        C[nc++] = (struct g16_term){t->in1, fr_u(2)};
        if (r == 1 && (bad == TOY_OTHER_SEG || bad == TOY_LATER_SEG)) {
            size_t other = bad == TOY_OTHER_SEG ? seg - 1 : seg + 1;
            C[nc++] = (struct g16_term){G16_VAR_AUX(t->pre_aux + (uint32_t)other * TOY_SEG_AUX + 4), FR_ONE};
        }
        if (r == 2 && bad == TOY_OTHER_INPUT)
            B[nb++] = (struct g16_term){G16_VAR_INPUT(t->pre_in + (uint32_t)(seg - 1) * TOY_SEG_IN + 1), FR_ONE};
        int rc = g16_enforce(sb, (struct g16_lc){A, na}, (struct g16_lc){B, nb}, (struct g16_lc){C, nc});
        if (rc) return cuzk_fail(err, rc, "toy: segment %zu row %u rejected", seg, r);
    }
    for (unsigned r = 0; t->many && r < 3000; r++) {
        struct g16_term A = {v[r % 7], fr_u(100000 + seg * 3000 + r)};
        int rc = g16_enforce(sb, (struct g16_lc){&A, 1}, (struct g16_lc){NULL, 0}, (struct g16_lc){NULL, 0});
        if (rc) return cuzk_fail(err, rc, "toy: segment %zu coefficient row %u rejected", seg, r);
    }
    return CUZK_OK;
}

static struct g16_builder *toy_prefix(struct toy *t, bool count_only)
{
    struct cuzk_error err_s, *err = &err_s;
    struct g16_builder *b = g16_builder_new(count_only, err);
    ASSERT(b);
    t->a0 = g16_alloc_aux(b);
    t->in1 = g16_alloc_input(b);
    t->a1 = g16_alloc_aux(b);
    t->in2 = g16_alloc_input(b);
    t->a2 = g16_alloc_aux(b);
    t->pre_in = 3;
    t->pre_aux = 3;
    struct g16_term A[2] = {{t->a0, FR_ONE}, {t->in1, fr_u(2)}}, B = {G16_VAR_ONE, FR_ONE}, C = {t->a1, FR_ONE};
    ASSERT_OK(g16_enforce(b, (struct g16_lc){A, 2}, (struct g16_lc){&B, 1}, (struct g16_lc){&C, 1}), err);
    struct g16_term A2 = {t->a2, fr_u(1000)}, B2 = {t->in2, FR_ONE}, C2 = {t->a0, fr_u(5001)};
    ASSERT_OK(g16_enforce(b, (struct g16_lc){&A2, 1}, (struct g16_lc){&B2, 1}, (struct g16_lc){&C2, 1}), err);
    return b;
}

/* The toy circuit with n segments: sequentially (pool unused) or through g16_builder_segments. */
static void toy_shape(struct g16_shape *s, bool count_only, size_t n, bool parallel, struct pool *pool)
{
    struct cuzk_error err_s, *err = &err_s;
    struct toy t = {.bad_seg = SIZE_MAX, .bad_seg2 = SIZE_MAX};
    struct g16_builder *b = toy_prefix(&t, count_only);
    if (parallel) {
        ASSERT_OK(g16_builder_segments(b, n, TOY_SEG_IN, TOY_SEG_AUX, toy_segment, &t, pool, err), err);
    } else {
        for (size_t i = 0; i < n; i++) ASSERT_OK(toy_segment(&t, i, b, err), err);
    }
    uint32_t ni, na;
    uint64_t rows;
    g16_builder_counts(b, &ni, &na, &rows);
    ASSERT_EQ_U64(ni, t.pre_in + n * TOY_SEG_IN);
    ASSERT_EQ_U64(na, t.pre_aux + n * TOY_SEG_AUX);
    /* suffix: a new aux and a row over the last segment's last aux, the prefix and ONE */
    uint32_t z = g16_alloc_aux(b);
    struct g16_term A[2] = {{G16_VAR_AUX(t.pre_aux + (uint32_t)n * TOY_SEG_AUX - 1), fr_u(77)}, {z, FR_ONE}};
    struct g16_term B[2] = {{G16_VAR_ONE, FR_ONE}, {t.in2, fr_u(9)}}, C = {t.a2, fr_u(123456)};
    ASSERT_OK(g16_enforce(b, (struct g16_lc){A, 2}, (struct g16_lc){B, 2}, (struct g16_lc){&C, 1}), err);
    ASSERT_OK(g16_builder_finish(b, s, err), err);
    g16_builder_free(b);
}

TEST(segments_equal_sequential)
{
    struct cuzk_error err_s, *err = &err_s;
    struct pool *p2 = pool_new(2, err), *p3 = pool_new(3, err);
    ASSERT(p2 && p3);
    struct pool *pools[3] = {NULL, p2, p3};
    const size_t ns[3] = {1, 5, 37};   /* one segment; fewer than a wave; several waves */
    for (int co = 0; co < 2; co++)
        for (size_t ni = 0; ni < 3; ni++) {
            struct g16_shape ref;
            toy_shape(&ref, co, ns[ni], false, NULL);
            ASSERT_EQ_U64(ref.n_aux, 3 + ns[ni] * TOY_SEG_AUX + 1);
            char pr[256], pp[256];
            tmp_path(pr, sizeof pr, "seg_ref");
            tmp_path(pp, sizeof pp, "seg_par");
            ASSERT_OK(g16_shape_save(&ref, pr, err), err);
            for (int k = 0; k < 3; k++) {
                struct g16_shape s;
                toy_shape(&s, co, ns[ni], true, pools[k]);
                assert_shapes_equal(&ref, &s);
                ASSERT_OK(g16_shape_save(&s, pp, err), err);
                assert_files_equal(pr, pp);
                g16_shape_free(&s);
            }
            remove(pr);
            remove(pp);
            g16_shape_free(&ref);
        }
    pool_free(p2);
    pool_free(p3);
}

/* Run the toy with misbehaving segments; returns the code, err holds the message. The
 * builder keeps the error: a later enforce and finish report it again. */
static int toy_bad(struct toy *t, size_t n, struct pool *pool, struct cuzk_error *err)
{
    struct cuzk_error e2;
    struct g16_builder *b = toy_prefix(t, false);
    int rc = g16_builder_segments(b, n, TOY_SEG_IN, TOY_SEG_AUX, toy_segment, t, pool, err);
    if (rc) {
        struct g16_term x = {G16_VAR_ONE, FR_ONE};
        ASSERT_EQ_INT(g16_enforce(b, (struct g16_lc){&x, 1}, (struct g16_lc){NULL, 0}, (struct g16_lc){NULL, 0}), rc);
        struct g16_shape s;
        ASSERT_EQ_INT(g16_builder_finish(b, &s, &e2), rc);
        ASSERT_STR_CONTAINS(e2.msg, err->msg);
        ASSERT_EQ_INT(g16_builder_segments(b, 1, TOY_SEG_IN, TOY_SEG_AUX, toy_segment, t, pool, &e2), rc);
    }
    g16_builder_free(b);
    return rc;
}

TEST(segments_errors)
{
    struct cuzk_error err_s, *err = &err_s;
    struct pool *p3 = pool_new(3, err);
    ASSERT(p3);
    struct pool *pools[2] = {NULL, p3};
    char want[256];
    for (int k = 0; k < 2; k++) {
        struct pool *p = pools[k];
        /* segment 5 uses aux 4 of segment 4, at its constraint 1 */
        struct toy t = {.bad_seg = 5, .bad_seg2 = SIZE_MAX, .bad = TOY_OTHER_SEG};
        ASSERT_CODE(toy_bad(&t, 9, p, err), CUZK_E_INVALID_ARG, err);
        snprintf(want, sizeof want, "g16 builder: segment 5, constraint 1: variable aux %u belongs to neither the "
                 "prefix nor this segment", 3 + 4 * TOY_SEG_AUX + 4);
        ASSERT_STR_CONTAINS(err->msg, want);
        /* segments 11 and 5 use the next segment's aux, in the same wave with the pool of 3
         * (3..14): the lower one wins, whatever order the pool ran them in */
        t = (struct toy){.bad_seg = 11, .bad_seg2 = 5, .bad = TOY_LATER_SEG};
        ASSERT_CODE(toy_bad(&t, 15, p, err), CUZK_E_INVALID_ARG, err);
        snprintf(want, sizeof want, "g16 builder: segment 5, constraint 1: variable aux %u belongs to neither the "
                 "prefix nor this segment", 3 + 6 * TOY_SEG_AUX + 4);
        ASSERT_STR_CONTAINS(err->msg, want);
        t = (struct toy){.bad_seg = 30, .bad_seg2 = 3, .bad = TOY_OTHER_INPUT};
        ASSERT_CODE(toy_bad(&t, 33, p, err), CUZK_E_INVALID_ARG, err);
        snprintf(want, sizeof want, "g16 builder: segment 3, constraint 2: variable input %u belongs to neither "
                 "the prefix nor this segment", 3 + 2 * TOY_SEG_IN + 1);
        ASSERT_STR_CONTAINS(err->msg, want);
        t = (struct toy){.bad_seg = 4, .bad_seg2 = SIZE_MAX, .bad = TOY_UNALLOCATED};
        ASSERT_CODE(toy_bad(&t, 6, p, err), CUZK_E_INVALID_ARG, err);
        snprintf(want, sizeof want, "g16 builder: segment 4, constraint 0: unallocated variable aux %u",
                 3 + 4 * TOY_SEG_AUX + 1);
        ASSERT_STR_CONTAINS(err->msg, want);
        /* wrong allocation counts */
        t = (struct toy){.bad_seg = 3, .bad_seg2 = SIZE_MAX, .bad = TOY_FEWER};
        ASSERT_CODE(toy_bad(&t, 6, p, err), CUZK_E_INTERNAL, err);
        ASSERT_STR_CONTAINS(err->msg, "g16 builder: segment 3 allocated 2 inputs and 4 aux (expected 2 and 5)");
        t = (struct toy){.bad_seg = 0, .bad_seg2 = SIZE_MAX, .bad = TOY_MORE};
        ASSERT_CODE(toy_bad(&t, 6, p, err), CUZK_E_INTERNAL, err);
        ASSERT_STR_CONTAINS(err->msg, "g16 builder: segment 0 allocates more than the 5 aux it declared");
        /* the last segment allocating more must not write past the densities either */
        t = (struct toy){.bad_seg = 5, .bad_seg2 = SIZE_MAX, .bad = TOY_MORE};
        ASSERT_CODE(toy_bad(&t, 6, p, err), CUZK_E_INTERNAL, err);
        ASSERT_STR_CONTAINS(err->msg, "segment 5 allocates more than the 5 aux");
        /* the callback's own error, as it said it */
        t = (struct toy){.bad_seg = 6, .bad_seg2 = SIZE_MAX, .bad = TOY_FN_ERROR};
        ASSERT_CODE(toy_bad(&t, 20, p, err), CUZK_E_IO, err);
        ASSERT_STR_CONTAINS(err->msg, "toy: segment 6 refuses");
        /* a segment builder neither nests nor finishes; the run itself is unharmed */
        t = (struct toy){.bad_seg = 1, .bad_seg2 = SIZE_MAX, .bad = TOY_NEST};
        ASSERT_OK(toy_bad(&t, 3, p, err), err);
        ASSERT_EQ_INT(t.nest_rc, CUZK_E_INVALID_ARG);
        ASSERT_EQ_INT(t.finish_rc, CUZK_E_INVALID_ARG);
    }
    /* bad arguments leave the builder usable */
    struct toy t = {.bad_seg = SIZE_MAX, .bad_seg2 = SIZE_MAX};
    struct g16_builder *b = toy_prefix(&t, false);
    ASSERT_CODE(g16_builder_segments(b, 2, 1, 1, NULL, NULL, NULL, err), CUZK_E_INVALID_ARG, err);
    ASSERT_CODE(g16_builder_segments(b, 1u << 20, 1u << 12, 0, toy_segment, &t, NULL, err), CUZK_E_INVALID_ARG, err);
    ASSERT_STR_CONTAINS(err->msg, "exceed 2^31 - 1 variables");
    ASSERT_OK(g16_builder_segments(b, 0, 1, 1, toy_segment, &t, NULL, err), err);
    ASSERT_OK(g16_builder_segments(b, 2, TOY_SEG_IN, TOY_SEG_AUX, toy_segment, &t, p3, err), err);
    g16_builder_free(b);
    pool_free(p3);
}

/* 25 segments of 3000 distinct coefficients: the merged table overflows where the sequential
 * one does, with its code and message. */
TEST(segments_coefficient_overflow)
{
    struct cuzk_error err_s, *err = &err_s, e2;
    struct pool *p3 = pool_new(3, err);
    ASSERT(p3);
    struct toy t = {.bad_seg = SIZE_MAX, .bad_seg2 = SIZE_MAX, .many = true};
    struct g16_builder *b = toy_prefix(&t, true);
    int seq = CUZK_OK;
    for (size_t i = 0; i < 25 && !seq; i++) seq = toy_segment(&t, i, b, &e2);
    ASSERT_EQ_INT(seq, CUZK_E_UNSUPPORTED);
    g16_builder_free(b);
    struct pool *pools[2] = {NULL, p3};
    for (int k = 0; k < 2; k++) {
        b = toy_prefix(&t, k == 0);
        ASSERT_CODE(g16_builder_segments(b, 25, TOY_SEG_IN, TOY_SEG_AUX, toy_segment, &t, pools[k], err),
                    CUZK_E_UNSUPPORTED, err);
        ASSERT_STR_CONTAINS(err->msg, "g16 builder: more than 65536 distinct coefficients");
        g16_builder_free(b);
    }
    pool_free(p3);
}

TEST(segments_survive_allocation_failures)
{
    struct cuzk_error err_s, *err = &err_s;
    struct g16_shape ref, s;
    struct toy t0 = {.bad_seg = SIZE_MAX, .bad_seg2 = SIZE_MAX};
    struct g16_builder *b0 = toy_prefix(&t0, false);
    for (size_t i = 0; i < 13; i++) ASSERT_OK(toy_segment(&t0, i, b0, err), err);
    ASSERT_OK(g16_builder_finish(b0, &ref, err), err);
    g16_builder_free(b0);
    bool done = false;
    for (long k = 0; k < 400 && !done; k++) {
        struct toy t = {.bad_seg = SIZE_MAX, .bad_seg2 = SIZE_MAX};
        struct g16_builder *b = toy_prefix(&t, false);
        cuzk_alloc_fail_after(k);
        int rc = g16_builder_segments(b, 13, TOY_SEG_IN, TOY_SEG_AUX, toy_segment, &t, NULL, err);
        cuzk_alloc_fail_after(-1);
        ASSERT_MSG(rc == CUZK_OK || rc == CUZK_E_NOMEM, "fail after %ld: %s", k, err->msg);
        if (rc == CUZK_OK) {
            ASSERT_OK(g16_builder_finish(b, &s, err), err);
            assert_shapes_equal(&ref, &s);
            g16_shape_free(&s);
            g16_builder_free(b);
            done = true;
            break;
        }
        g16_builder_free(b);
    }
    ASSERT(done);
    g16_shape_free(&ref);
}
