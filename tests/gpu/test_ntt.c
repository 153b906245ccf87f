/* test_ntt.c: GPU NTT / inverse / coset NTT and the h pipeline, bit-exact against the CPU
 * (g16_ntt, g16_coset_ntt, g16_compute_h) and, for small sizes, a naive O(n^2) DFT. */
#include <stdlib.h>
#include <string.h>

#include "cuzk/groth16.h"
#include "gpu_helpers.h"

/* out[j] = sum_i v[i] w^(ij) */
static void naive_dft(fr_t *out, const fr_t *v, unsigned lg)
{
    size_t n = (size_t)1 << lg;
    fr_t w, wj = FR_ONE;
    g16_domain_omega(&w, lg);
    for (size_t j = 0; j < n; j++) {
        fr_t acc = FR_ZERO, x = FR_ONE, t;
        for (size_t i = 0; i < n; i++) {
            fr_mul(&t, &v[i], &x);
            fr_add(&acc, &acc, &t);
            fr_mul(&x, &x, &wj);
        }
        out[j] = acc;
        fr_mul(&wj, &wj, &w);
    }
}

TEST(ntt_matches_naive_dft)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    for (unsigned lg = 0; lg <= 7; lg++) {
        size_t n = (size_t)1 << lg;
        fr_t *v = malloc(n * sizeof *v), *ref = malloc(n * sizeof *ref);
        rand_frs(v, n);
        naive_dft(ref, v, lg);
        ASSERT_OK(gpu_ntt(ctx, v, lg, false, false, err), err);
        ASSERT_MEM_EQ(v, ref, n * sizeof *v);
        free(v);
        free(ref);
    }
    gpu_ctx_free(ctx);
}

TEST(ntt_all_variants_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    const unsigned lgs[] = {1, 2, 3, 5, 8, 9, 10, 11, 12, 15, 19, 20, 21, 23};
    for (size_t k = 0; k < sizeof lgs / sizeof lgs[0]; k++) {
        unsigned lg = lgs[k];
        size_t n = (size_t)1 << lg;
        fr_t *v = malloc(n * sizeof *v), *ref = malloc(n * sizeof *ref);
        /* variants 0..3: out of place (the bit reversal folded into the last pass's stores);
         * 4..7: in place with the bit-reversal pass, without the trivial-twiddle skip and with
         * the one-thread-per-element bit reversal (the tiled one is checked by the h test), so
         * every path stays checked */
        for (int variant = 0; variant < 8; variant++) {
            bool inverse = variant & 1, coset = variant & 2;
            setenv("CUZK_GPU_NTT_OOP", variant & 4 ? "0" : "1", 1);
            setenv("CUZK_GPU_NTT_TRIV", variant & 4 ? "0" : "1", 1);
            setenv("CUZK_GPU_NTT_BITREV", variant & 4 ? "0" : "1", 1);
            rand_frs(v, n);
            memcpy(ref, v, n * sizeof *v);
            if (coset) g16_coset_ntt(ref, lg, inverse, pool_default());
            else g16_ntt(ref, lg, inverse, pool_default());
            ASSERT_OK(gpu_ntt(ctx, v, lg, inverse, coset, err), err);
            ASSERT_MSG(!memcmp(v, ref, n * sizeof *v), "lg %u inverse %d coset %d (variant %d) differs", lg,
                       inverse, coset, variant);
        }
        unsetenv("CUZK_GPU_NTT_OOP");
        unsetenv("CUZK_GPU_NTT_TRIV");
        unsetenv("CUZK_GPU_NTT_BITREV");
        /* round trip */
        rand_frs(v, n);
        memcpy(ref, v, n * sizeof *v);
        ASSERT_OK(gpu_ntt(ctx, v, lg, false, true, err), err);
        ASSERT_OK(gpu_ntt(ctx, v, lg, true, true, err), err);
        ASSERT_MEM_EQ(v, ref, n * sizeof *v);
        free(v);
        free(ref);
    }
    gpu_ctx_free(ctx);
}

TEST(compute_h_matches_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    const unsigned lgs[] = {0, 1, 2, 4, 10, 11, 13, 16, 17};
    /* mode 0: the defaults (6 transforms, bit reversal folded into the last pass's stores);
     * 1: the 7-transform baseline; 2: the last pass in place plus the bit-reversal pass (the CPU
     * pipeline is checked against the polynomial identity in tests/groth16/test_ntt.c) */
    const size_t nlg = sizeof lgs / sizeof lgs[0];
    for (size_t k = 0; k < 3 * nlg; k++) {
        unsigned lg = lgs[k % nlg];
        const int mode = (int)(k / nlg);
        const bool six = mode != 1;
        setenv("CUZK_GPU_H_SIX", six ? "1" : "0", 1);
        setenv("CUZK_GPU_H_REVSTORE", mode == 2 ? "0" : "1", 1);
        size_t n = (size_t)1 << lg;
        /* meaningful prefix: N, N-1, odd, about half */
        size_t lens[3] = {n, n > 1 ? n - 1 : 1, n > 2 ? n / 2 + 1 : 1};
        for (int li = 0; li < 3; li++) {
            size_t len = lens[li];
            /* a, b, c on three streams (default), and on one for the middle length; the coset
             * factors from the per-position table (default from 2^16) or, for the last length,
             * from the two small tables */
            setenv("CUZK_GPU_H_STREAMS", li == 1 ? "0" : "1", 1);
            setenv("CUZK_GPU_NTT_SHIFT_TAB", li == 2 ? "0" : "1", 1);
            fr_t *v[3], *r[3];
            for (int i = 0; i < 3; i++) {
                v[i] = calloc(n, sizeof(fr_t));
                r[i] = calloc(n, sizeof(fr_t));
                rand_frs(v[i], len);
                memcpy(r[i], v[i], n * sizeof(fr_t));
            }
            g16_compute_h(r[0], r[1], r[2], lg, pool_default());
            ASSERT_OK(gpu_compute_h(ctx, v[0], v[1], v[2], lg, err), err);
            ASSERT_MSG(!memcmp(v[0], r[0], n * sizeof(fr_t)), "h differs at lg %u len %zu (%s, %s, %s)", lg, len,
                       li == 1 ? "one stream" : "three streams", six ? "6 transforms" : "7 transforms",
                       mode == 2 ? "bit-reversal pass" : "reversed stores");
            ASSERT_MSG(gpu_ctx_h_shift_table(ctx) == (lg >= 16 && li != 2), "lg %u len %zu: per-position table %s", lg,
                       len, gpu_ctx_h_shift_table(ctx) ? "used" : "not used");
            for (int i = 0; i < 3; i++) {
                free(v[i]);
                free(r[i]);
            }
        }
    }
    unsetenv("CUZK_GPU_H_STREAMS");
    unsetenv("CUZK_GPU_NTT_SHIFT_TAB");
    unsetenv("CUZK_GPU_H_SIX");
    unsetenv("CUZK_GPU_H_REVSTORE");
    gpu_ctx_free(ctx);
}

TEST(ntt_rejects_oversized_domain)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    fr_t v[1];
    ASSERT_CODE(gpu_ntt(ctx, v, 29, false, false, err), CUZK_E_INVALID_ARG, err);
    gpu_ctx_free(ctx);
}
