/* gpu_helpers.h: shared setup for the GPU tests: a context on device 0 (the test is skipped
 * when there is no GPU), the backend's tuning knobs (gpu_tuning.h), random field elements and
 * cheap random curve points. */
#ifndef CUZK_TEST_GPU_HELPERS_H
#define CUZK_TEST_GPU_HELPERS_H

#include <stdarg.h>
#include <stdio.h>

#include "cuzk/ec.h"
#include "cuzk/gpu.h"
#include "gpu_tuning.h"
#include "test.h"

static inline struct gpu_ctx *gpu_test_ctx(void)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_ctx *ctx = NULL;
    int n = 0;
    if (gpu_device_count(&n, err) != CUZK_OK || n == 0) test_skip("no GPU: %s", err->msg);
    ASSERT_OK(gpu_ctx_new(&ctx, 0, err), err);
    return ctx;
}

/* Set one tuning knob, "NAME=VALUE" (printf-style; names in GPU_TUNING_TABLE): the test fails
 * with gpu_tuning_set's message when the name or value is rejected. A test that sets knobs
 * calls gpu_tuning_reset() at its end (each test also runs in a process of its own). */
static inline void gpu_tune(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void gpu_tune(const char *fmt, ...)
{
    char a[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a, sizeof a, fmt, ap);
    va_end(ap);
    struct cuzk_error err_s, *err = &err_s;
    ASSERT_MSG(gpu_tuning_set(a, err) == CUZK_OK, "gpu_tuning_set(\"%s\"): %s", a, err->msg);
}

/* Streamed key on or off (gpu_options.stream_key; the other options at their defaults). */
static inline void gpu_test_stream_key(struct gpu_ctx *ctx, bool on)
{
    gpu_ctx_set_options(ctx, &(struct gpu_options){.stream_key = on});
}

static inline void rand_fr(fr_t *out)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    fr_from_wide_le(out, b);
}

static inline void rand_frs(fr_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) rand_fr(&v[i]);
}

/* n G1 points k*G + i*Q (distinct, uniform-looking), one batch inversion. */
static inline void rand_g1s(g1_aff_t *out, size_t n)
{
    g1_jac_t g, p, q;
    fr_t k;
    g1_jac_from_aff(&g, &G1_GENERATOR);
    rand_fr(&k);
    g1_jac_mul_fr(&p, &g, &k);
    rand_fr(&k);
    g1_jac_mul_fr(&q, &g, &k);
    g1_jac_t *j = malloc((n ? n : 1) * sizeof *j);
    ASSERT(j);
    for (size_t i = 0; i < n; i++) {
        j[i] = p;
        g1_jac_add(&p, &p, &q);
    }
    g1_batch_to_aff(out, j, n, pool_default());
    free(j);
}

static inline void rand_g2s(g2_aff_t *out, size_t n)
{
    g2_jac_t g, p, q;
    fr_t k;
    g2_jac_from_aff(&g, &G2_GENERATOR);
    rand_fr(&k);
    g2_jac_mul_fr(&p, &g, &k);
    rand_fr(&k);
    g2_jac_mul_fr(&q, &g, &k);
    g2_jac_t *j = malloc((n ? n : 1) * sizeof *j);
    ASSERT(j);
    for (size_t i = 0; i < n; i++) {
        j[i] = p;
        g2_jac_add(&p, &p, &q);
    }
    g2_batch_to_aff(out, j, n, pool_default());
    free(j);
}

#endif
