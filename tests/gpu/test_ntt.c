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

/* gpu_ntt (out of place: the bit reversal folded into the last pass's stores) forward, inverse,
 * coset and inverse coset against the CPU NTT (g16_ntt, g16_coset_ntt) at sizes across the
 * pass structures, and a coset round trip. */
TEST(ntt_all_variants_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    const unsigned lgs[] = {1, 2, 3, 5, 8, 9, 10, 11, 12, 15, 19, 20, 21, 23};
    for (size_t k = 0; k < sizeof lgs / sizeof lgs[0]; k++) {
        unsigned lg = lgs[k];
        size_t n = (size_t)1 << lg;
        fr_t *v = malloc(n * sizeof *v), *ref = malloc(n * sizeof *ref);
        for (int variant = 0; variant < 4; variant++) {
            bool inverse = variant & 1, coset = variant & 2;
            rand_frs(v, n);
            memcpy(ref, v, n * sizeof *v);
            if (coset) g16_coset_ntt(ref, lg, inverse, pool_default());
            else g16_ntt(ref, lg, inverse, pool_default());
            ASSERT_OK(gpu_ntt(ctx, v, lg, inverse, coset, err), err);
            ASSERT_MSG(!memcmp(v, ref, n * sizeof *v), "lg %u inverse %d coset %d differs", lg, inverse, coset);
        }
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

/* gpu_compute_h == g16_compute_h (the CPU pipeline is checked against the polynomial identity
 * in tests/groth16/test_ntt.c) for a 2^lg domain whose a, b, c hold `len` meaningful values;
 * returns whether the GPU took its coset factors from the per-position table. */
static bool check_h(struct gpu_ctx *ctx, unsigned lg, size_t len)
{
    struct cuzk_error err_s, *err = &err_s;
    size_t n = (size_t)1 << lg;
    fr_t *v[3], *r[3];
    for (int i = 0; i < 3; i++) {
        v[i] = calloc(n, sizeof(fr_t));
        r[i] = calloc(n, sizeof(fr_t));
        ASSERT(v[i] && r[i]);
        rand_frs(v[i], len);
        memcpy(r[i], v[i], n * sizeof(fr_t));
    }
    g16_compute_h(r[0], r[1], r[2], lg, pool_default());
    ASSERT_OK(gpu_compute_h(ctx, v[0], v[1], v[2], lg, err), err);
    const bool tab = gpu_ctx_h_shift_table(ctx);
    ASSERT_MSG(!memcmp(v[0], r[0], n * sizeof(fr_t)), "h differs at lg %u len %zu (coset factors from %s)", lg, len,
               tab ? "the per-position table" : "the two small tables");
    for (int i = 0; i < 3; i++) {
        free(v[i]);
        free(r[i]);
    }
    return tab;
}

/* The two-vector h pipeline (the memory plan's h_vectors = 2: c formed in b's vector once a = a
 * b, the last pass in place, then a bit-reversal pass), forced by the h.two hook: the same h as
 * the CPU at domains from 2^0 to 2^17, with the per-position coset table (2^16, 2^17) and
 * without. */
TEST(compute_h_two_vectors_matches_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    gpu_tune("h.two=1");
    const unsigned lgs[] = {0, 1, 2, 9, 12, 16, 17};
    for (size_t k = 0; k < sizeof lgs / sizeof lgs[0]; k++) {
        const size_t n = (size_t)1 << lgs[k];
        check_h(ctx, lgs[k], n);
        check_h(ctx, lgs[k], n > 2 ? n / 2 + 1 : 1);
    }
    gpu_tuning_reset();
    gpu_ctx_free(ctx);
}

/* The h pipeline (6 transforms, the bit reversal folded into the last pass's stores) at domains
 * from 2^0 to 2^17 with full, N - 1, and about half meaningful values. The coset factors come
 * from the per-position table from 2^16 (memory allows it here) and from the two small tables
 * below; then the two-table fallback at a size that would take the table: a fresh context whose
 * gpu_options.reserve_bytes leaves ~320 MiB usable runs 2^20, where the table (64 MiB, with
 * 192 MiB left free beside it for the MSM that follows in the prover) does not fit once the
 * pipeline's three 32 MiB vectors are allocated. */
TEST(compute_h_matches_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    const unsigned lgs[] = {0, 1, 2, 4, 10, 11, 13, 16, 17};
    for (size_t k = 0; k < sizeof lgs / sizeof lgs[0]; k++) {
        unsigned lg = lgs[k];
        size_t n = (size_t)1 << lg;
        /* meaningful prefix: N, N-1, odd, about half */
        size_t lens[3] = {n, n > 1 ? n - 1 : 1, n > 2 ? n / 2 + 1 : 1};
        for (int li = 0; li < 3; li++) {
            const bool tab = check_h(ctx, lg, lens[li]);
            ASSERT_MSG(tab == (lg >= 16), "lg %u len %zu: per-position table %s", lg, lens[li],
                       tab ? "used" : "not used");
        }
    }
    gpu_ctx_free(ctx);

    ctx = gpu_test_ctx();
    check_h(ctx, 10, 1024);   /* loads the kernels before the free memory is measured */
    const unsigned lg = 20;
    const size_t usable = (size_t)320 << 20;
    size_t fr = 0, tot = 0;
    ASSERT_OK(gpu_mem_info(ctx, &fr, &tot, err), err);
    ASSERT_MSG(fr > usable + ((size_t)1 << 30), "only %zu bytes of GPU memory free", fr);
    gpu_ctx_set_options(ctx, &(struct gpu_options){.reserve_bytes = fr - usable});
    const size_t n = (size_t)1 << lg;
    const size_t lens[2] = {n, n / 2 + 1};
    for (int li = 0; li < 2; li++)
        ASSERT_MSG(!check_h(ctx, lg, lens[li]),
                   "lg %u len %zu with %zu MiB usable (reserve_bytes): the per-position table was built; it "
                   "needs 256 MiB free after the pipeline's vectors, so the backend took reserved memory",
                   lg, lens[li], usable >> 20);
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
