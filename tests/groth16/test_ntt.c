/* test_ntt.c: the Fr NTT against naive O(n^2) DFTs and GMP-computed roots; coset transforms
 * against direct evaluation at g*omega^j; the h pipeline against the polynomial identity
 * A(z)B(z) - C(z) = h(z)(z^N - 1) at a random point (Lagrange form, no NTT involved). */
#include <gmp.h>

#include "cuzk/groth16.h"
#include "test.h"

static void rand_fr(fr_t *out, cuzk_rng *rng)
{
    uint8_t b[64];
    cuzk_rng_bytes(rng, b, sizeof b);
    fr_from_wide_le(out, b);
}

static void from_mpz(fr_t *out, const mpz_t z)
{
    uint64_t c[4] = {0};
    mpz_export(c, NULL, -1, 8, 0, 0, z);
    fr_to_mont(out, c);
}

TEST(domain_omega_matches_gmp)
{
    mpz_t r, e, w, seven;
    mpz_inits(r, e, w, seven, NULL);
    mpz_set_str(r, "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", 16);
    mpz_set_ui(seven, 7);
    for (unsigned lg = 0; lg <= 32; lg += (lg < 12 ? 1 : 5)) {
        /* omega_lg = 7^((r-1) / 2^lg) */
        mpz_sub_ui(e, r, 1);
        mpz_fdiv_q_2exp(e, e, lg);
        mpz_powm(w, seven, e, r);
        fr_t want, got;
        from_mpz(&want, w);
        g16_domain_omega(&got, lg);
        ASSERT_MSG(fr_eq(&want, &got), "lg %u", lg);
    }
    /* the documented 2^32-th root */
    mpz_set_str(w, "16a2a19edfe81f20d09b681922c813b4b63683508c2280b93829971f439f0d2b", 16);
    fr_t want;
    from_mpz(&want, w);
    ASSERT(fr_eq(&want, &FR_ROOT_OF_UNITY_2_32));
    fr_t seven_fr;
    fr_from_u64(&seven_fr, 7);
    ASSERT(fr_eq(&seven_fr, &FR_GENERATOR));
    mpz_clears(r, e, w, seven, NULL);
}

TEST(domain_lg)
{
    ASSERT_EQ_INT(g16_domain_lg(0), 0);
    ASSERT_EQ_INT(g16_domain_lg(1), 1);
    ASSERT_EQ_INT(g16_domain_lg(3), 2);
    ASSERT_EQ_INT(g16_domain_lg(7), 3);
    ASSERT_EQ_INT(g16_domain_lg(8), 3);
    ASSERT_EQ_INT(g16_domain_lg(9), 4);
    ASSERT_EQ_INT(g16_domain_lg((1u << 20) - 1), 20);
    ASSERT_EQ_INT(g16_domain_lg((1u << 27) - 1), 27);
}

/* out[j] = sum_i v[i] * (shift * omega^j)^i, naive */
static void naive_eval(fr_t *out, const fr_t *v, unsigned lg, const fr_t *shift, bool inverse)
{
    size_t n = (size_t)1 << lg;
    fr_t w, x = *shift;
    g16_domain_omega(&w, lg);
    if (inverse) fr_inv(&w, &w);
    for (size_t j = 0; j < n; j++) {
        fr_t acc = FR_ZERO, p = FR_ONE, t;
        for (size_t i = 0; i < n; i++) {
            fr_mul(&t, &v[i], &p);
            fr_add(&acc, &acc, &t);
            fr_mul(&p, &p, &x);
        }
        out[j] = acc;
        fr_mul(&x, &x, &w);
    }
}

TEST(ntt_vs_naive_dft)
{
    cuzk_rng *rng = test_rng();
    for (unsigned lg = 0; lg <= 10; lg++) {
        size_t n = (size_t)1 << lg;
        fr_t *v = malloc(n * sizeof *v), *x = malloc(n * sizeof *v), *y = malloc(n * sizeof *v),
             *want = malloc(n * sizeof *v);
        for (size_t i = 0; i < n; i++) rand_fr(&v[i], rng);
        naive_eval(want, v, lg, &FR_ONE, false);
        memcpy(x, v, n * sizeof *v);
        memcpy(y, v, n * sizeof *v);
        g16_ntt(x, lg, false, pool_default());
        g16_ntt(y, lg, false, NULL);
        for (size_t j = 0; j < n; j++) ASSERT_MSG(fr_eq(&x[j], &want[j]), "lg %u j %zu", lg, j);
        ASSERT_MEM_EQ(x, y, n * sizeof *v);
        /* inverse: (1/N) sum v[i] omega^-ij */
        naive_eval(want, v, lg, &FR_ONE, true);
        fr_t ninv;
        fr_from_u64(&ninv, n);
        fr_inv(&ninv, &ninv);
        memcpy(x, v, n * sizeof *v);
        g16_ntt(x, lg, true, pool_default());
        for (size_t j = 0; j < n; j++) {
            fr_mul(&want[j], &want[j], &ninv);
            ASSERT_MSG(fr_eq(&x[j], &want[j]), "inverse lg %u j %zu", lg, j);
        }
        free(v), free(x), free(y), free(want);
    }
}

TEST(ntt_round_trip_and_threads)
{
    cuzk_rng *rng = test_rng();
    unsigned lgs[4] = {1, 11, 16, 19};
    for (int k = 0; k < 4; k++) {
        unsigned lg = lgs[k];
        size_t n = (size_t)1 << lg;
        fr_t *v = malloc(n * sizeof *v), *x = malloc(n * sizeof *v), *y = malloc(n * sizeof *v);
        for (size_t i = 0; i < n; i++) rand_fr(&v[i], rng);
        memcpy(x, v, n * sizeof *v);
        memcpy(y, v, n * sizeof *v);
        g16_ntt(x, lg, false, pool_default());
        if (lg <= 16) {
            g16_ntt(y, lg, false, NULL);
            ASSERT_MEM_EQ(x, y, n * sizeof *v);
        }
        /* spot-check a few outputs against the direct sum (independent of the NTT) */
        fr_t w, wj = FR_ONE;
        g16_domain_omega(&w, lg);
        for (size_t j = 0; j < 3 && j < n; j++) {
            fr_t acc = FR_ZERO, p = FR_ONE, t;
            for (size_t i = 0; i < n; i++) {
                fr_mul(&t, &v[i], &p);
                fr_add(&acc, &acc, &t);
                fr_mul(&p, &p, &wj);
            }
            ASSERT_MSG(fr_eq(&acc, &x[j]), "lg %u j %zu", lg, j);
            fr_mul(&wj, &wj, &w);
        }
        g16_ntt(x, lg, true, pool_default());
        ASSERT_MEM_EQ(x, v, n * sizeof *v);
        g16_coset_ntt(x, lg, false, pool_default());
        g16_coset_ntt(x, lg, true, pool_default());
        ASSERT_MEM_EQ(x, v, n * sizeof *v);
        free(v), free(x), free(y);
    }
}

TEST(coset_ntt_vs_naive)
{
    cuzk_rng *rng = test_rng();
    for (unsigned lg = 0; lg <= 8; lg++) {
        size_t n = (size_t)1 << lg;
        fr_t *v = malloc(n * sizeof *v), *x = malloc(n * sizeof *v), *want = malloc(n * sizeof *v);
        for (size_t i = 0; i < n; i++) rand_fr(&v[i], rng);
        naive_eval(want, v, lg, &FR_GENERATOR, false);   /* values at 7 * omega^j */
        memcpy(x, v, n * sizeof *v);
        g16_coset_ntt(x, lg, false, pool_default());
        for (size_t j = 0; j < n; j++) ASSERT_MSG(fr_eq(&x[j], &want[j]), "lg %u j %zu", lg, j);
        g16_coset_ntt(x, lg, true, NULL);
        ASSERT_MEM_EQ(x, v, n * sizeof *v);
        free(v), free(x), free(want);
    }
}

/* P(z) for the polynomial of degree < N with values y_j at omega^j (Lagrange form):
 * P(z) = (z^N - 1)/N * sum_j y_j omega^j / (z - omega^j). */
static void lagrange_eval(fr_t *out, const fr_t *y, size_t len, unsigned lg, const fr_t *z)
{
    size_t n = (size_t)1 << lg;
    fr_t w, wj = FR_ONE, acc = FR_ZERO, t, d;
    g16_domain_omega(&w, lg);
    for (size_t j = 0; j < len; j++) {
        fr_sub(&d, z, &wj);
        fr_inv(&d, &d);
        fr_mul(&t, &y[j], &wj);
        fr_mul(&t, &t, &d);
        fr_add(&acc, &acc, &t);
        fr_mul(&wj, &wj, &w);
    }
    uint64_t e = n;
    fr_t zn, ninv;
    fr_pow(&zn, z, &e, 1);
    fr_sub(&zn, &zn, &FR_ONE);
    fr_from_u64(&ninv, n);
    fr_inv(&ninv, &ninv);
    fr_mul(&acc, &acc, &zn);
    fr_mul(out, &acc, &ninv);
}

static void horner(fr_t *out, const fr_t *c, size_t n, const fr_t *z)
{
    fr_t acc = FR_ZERO;
    for (size_t i = n; i-- > 0;) {
        fr_mul(&acc, &acc, z);
        fr_add(&acc, &acc, &c[i]);
    }
    *out = acc;
}

TEST(compute_h_polynomial_identity)
{
    cuzk_rng *rng = test_rng();
    struct { unsigned lg; size_t len; } cases[6] = {{1, 2}, {2, 3}, {4, 16}, {6, 33}, {10, 1024}, {10, 700}};
    for (int k = 0; k < 6; k++) {
        unsigned lg = cases[k].lg;
        size_t n = (size_t)1 << lg, len = cases[k].len;
        fr_t *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *a), *c = calloc(n, sizeof *a);
        fr_t *a0 = calloc(n, sizeof *a), *b0 = calloc(n, sizeof *a), *c0 = calloc(n, sizeof *a);
        for (size_t i = 0; i < len; i++) {
            rand_fr(&a[i], rng);
            rand_fr(&b[i], rng);
            fr_mul(&c[i], &a[i], &b[i]);   /* a satisfied system: a*b = c on every row */
        }
        memcpy(a0, a, n * sizeof *a);
        memcpy(b0, b, n * sizeof *a);
        memcpy(c0, c, n * sizeof *a);
        g16_compute_h(a, b, c, lg, pool_default());
        ASSERT(fr_is_zero(&a[n - 1]));   /* deg h <= N - 2 */
        for (int t = 0; t < 3; t++) {
            fr_t z, az, bz, cz, hz, zn, lhs, rhs;
            rand_fr(&z, rng);
            lagrange_eval(&az, a0, len, lg, &z);
            lagrange_eval(&bz, b0, len, lg, &z);
            lagrange_eval(&cz, c0, len, lg, &z);
            horner(&hz, a, n, &z);
            uint64_t e = n;
            fr_pow(&zn, &z, &e, 1);
            fr_sub(&zn, &zn, &FR_ONE);
            fr_mul(&lhs, &az, &bz);
            fr_sub(&lhs, &lhs, &cz);
            fr_mul(&rhs, &hz, &zn);
            ASSERT_MSG(fr_eq(&lhs, &rhs), "lg %u len %zu", lg, len);
        }
        /* an unsatisfied row breaks the identity (the test can fail) */
        if (len > 1) {
            memcpy(a, a0, n * sizeof *a);
            memcpy(b, b0, n * sizeof *a);
            memcpy(c, c0, n * sizeof *a);
            fr_add(&c[1], &c[1], &FR_ONE);
            fr_add(&c0[1], &c0[1], &FR_ONE);
            g16_compute_h(a, b, c, lg, NULL);
            fr_t z, az, bz, cz, hz, zn, lhs, rhs;
            rand_fr(&z, rng);
            lagrange_eval(&az, a0, len, lg, &z);
            lagrange_eval(&bz, b0, len, lg, &z);
            lagrange_eval(&cz, c0, len, lg, &z);
            horner(&hz, a, n, &z);
            uint64_t e = n;
            fr_pow(&zn, &z, &e, 1);
            fr_sub(&zn, &zn, &FR_ONE);
            fr_mul(&lhs, &az, &bz);
            fr_sub(&lhs, &lhs, &cz);
            fr_mul(&rhs, &hz, &zn);
            ASSERT(!fr_eq(&lhs, &rhs));
        }
        free(a), free(b), free(c), free(a0), free(b0), free(c0);
    }
}

TEST(ntt_without_twiddle_memory)
{
    /* the table allocation fails: the single-threaded table-free path must agree */
    cuzk_rng *rng = test_rng();
    unsigned lg = 8;
    size_t n = (size_t)1 << lg;
    fr_t v[256], x[256], want[256];
    for (size_t i = 0; i < n; i++) rand_fr(&v[i], rng);
    naive_eval(want, v, lg, &FR_ONE, false);
    memcpy(x, v, sizeof v);
    cuzk_alloc_fail_after(0);
    g16_ntt(x, lg, false, pool_default());
    cuzk_alloc_fail_after(-1);
    ASSERT_MEM_EQ(x, want, sizeof x);
    cuzk_alloc_fail_after(0);
    g16_coset_ntt(x, lg, true, NULL);   /* ... and the inverse coset path */
    cuzk_alloc_fail_after(-1);
    g16_coset_ntt(x, lg, false, NULL);
    g16_ntt(x, lg, true, NULL);
    ASSERT_MEM_EQ(x, v, sizeof x);
}
