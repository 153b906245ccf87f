/* bench_arith.c: `cuzk-bench arith`: medians of field, curve, MSM and pairing operations,
 * one line per case as "NAME MEDIAN UNIT". Single-core cases run on the calling thread;
 * MSMs use the whole default pool. See docs/performance.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cuzk/ec.h"
#include "cuzk/ff.h"
#include "cuzk/pairing.h"
#include "cuzk/util.h"

#define REPS 7

static cuzk_rng rng;

static void rand_fp(fp_t *a)
{
    uint8_t b[48];
    cuzk_rng_bytes(&rng, b, sizeof b);
    b[0] &= 0x0f;
    fp_from_bytes_be(a, b);
}

static void rand_fr(fr_t *a)
{
    uint8_t b[64];
    cuzk_rng_bytes(&rng, b, sizeof b);
    fr_from_wide_le(a, b);
}

static void rand_g1(g1_jac_t *p)
{
    fr_t k;
    rand_fr(&k);
    g1_jac_from_aff(p, &G1_GENERATOR);
    g1_jac_mul_fr(p, p, &k);
}

static void rand_g2(g2_jac_t *p)
{
    fr_t k;
    rand_fr(&k);
    g2_jac_from_aff(p, &G2_GENERATOR);
    g2_jac_mul_fr(p, p, &k);
}

/* Each timing run executes `iters` operations; the per-op time of REPS runs is reported. */
#define TIME_CASE(name, unit, scale, iters, setup, body)                                 \
    do {                                                                                 \
        double v_[REPS];                                                                 \
        for (int r_ = 0; r_ < REPS; r_++) {                                              \
            setup;                                                                       \
            uint64_t t0_ = cuzk_now_ns();                                                \
            for (long i_ = 0; i_ < (long)(iters); i_++) { body; }                        \
            v_[r_] = (double)(cuzk_now_ns() - t0_) / (double)(iters) / (scale);          \
        }                                                                                \
        printf("%s %.3f %s\n", name, bench_median(v_, REPS), unit);                      \
        fflush(stdout);                                                                  \
    } while (0)

static int msm_case(const char *name, unsigned lg)
{
    size_t n = (size_t)1 << lg;
    g1_aff_t *pts = malloc(n * sizeof *pts);
    fr_t *sc = malloc(n * sizeof *sc);
    if (!pts || !sc) {
        fprintf(stderr, "cuzk-bench arith: out of memory for %s\n", name);
        free(pts);
        free(sc);
        return 1;
    }
    /* Points: a chain P_i = P_{i-1} + Q (cheap to make, all distinct), then batch-affine. */
    enum { CH = 4096 };
    g1_jac_t *jac = malloc(CH * sizeof *jac);
    g1_jac_t p, q;
    rand_g1(&p);
    rand_g1(&q);
    for (size_t i = 0; i < n; i += CH) {
        size_t m = n - i < CH ? n - i : CH;
        for (size_t k = 0; k < m; k++) {
            g1_jac_add(&p, &p, &q);
            jac[k] = p;
        }
        g1_batch_to_aff(pts + i, jac, m, pool_default());
    }
    free(jac);
    for (size_t i = 0; i < n; i++) rand_fr(&sc[i]);
    int reps = lg >= 20 ? 3 : 5;
    double v[5];
    g1_jac_t out;
    struct cuzk_error err;
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = cuzk_now_ns();
        if (g1_msm(&out, pts, sc, n, pool_default(), &err) != CUZK_OK) {
            fprintf(stderr, "cuzk-bench arith: %s: %s\n", name, err.msg);
            free(pts);
            free(sc);
            return 1;
        }
        v[r] = (double)(cuzk_now_ns() - t0) / 1e6;
    }
    printf("%s %.1f ms\n", name, bench_median(v, (size_t)reps));
    fflush(stdout);
    free(pts);
    free(sc);
    return 0;
}

BENCH_CMD(arith, "arith", "field/curve/MSM/pairing micro-benchmarks (medians)")
{
    bool quick = argc > 1 && !strcmp(argv[1], "--quick");   /* skips the 2^20 MSM */
    cuzk_rng_seed(&rng, 42);
    static fp_t a, b;
    static fr_t fa, fb;
    rand_fp(&a);
    rand_fp(&b);
    rand_fr(&fa);
    rand_fr(&fb);
    /* Dependent chains (a = a*b) measure latency, which is what Montgomery ladders,
     * bucket accumulation and the Miller loop see. */
    TIME_CASE("fp_mul", "ns", 1.0, 1000000, , fp_mul(&a, &a, &b));
    TIME_CASE("fp_sqr", "ns", 1.0, 1000000, , fp_sqr(&a, &a));
    TIME_CASE("fp_add", "ns", 1.0, 1000000, , fp_add(&a, &a, &b));
    TIME_CASE("fp_inv", "us", 1e3, 2000, , fp_inv(&a, &a));
    TIME_CASE("fr_mul", "ns", 1.0, 1000000, , fr_mul(&fa, &fa, &fb));
    TIME_CASE("fr_inv", "us", 1e3, 2000, , fr_inv(&fa, &fa));
    {
        static fp2_t x, y;
        x.c0 = a; x.c1 = b; y.c0 = b; y.c1 = a;
        TIME_CASE("fp2_mul", "ns", 1.0, 300000, , fp2_mul(&x, &x, &y));
    }
    {
        static g1_jac_t p, pq;
        static g1_aff_t qa;
        g1_jac_t t;
        rand_g1(&p);
        rand_g1(&t);
        g1_jac_to_aff(&qa, &t);
        pq = p;
        TIME_CASE("g1_add_mixed", "us", 1e3, 100000, , g1_jac_add_aff(&pq, &pq, &qa));
        TIME_CASE("g1_add", "us", 1e3, 100000, , g1_jac_add(&pq, &pq, &p));
        TIME_CASE("g1_dbl", "us", 1e3, 100000, , g1_jac_dbl(&pq, &pq));
        fr_t k;
        rand_fr(&k);
        TIME_CASE("g1_scalar_mul", "us", 1e3, 50, , g1_jac_mul_fr(&pq, &pq, &k));
    }
    {
        static g2_jac_t p, pq;
        static g2_aff_t qa;
        g2_jac_t t;
        rand_g2(&p);
        rand_g2(&t);
        g2_jac_to_aff(&qa, &t);
        pq = p;
        TIME_CASE("g2_add_mixed", "us", 1e3, 50000, , g2_jac_add_aff(&pq, &pq, &qa));
        TIME_CASE("g2_add", "us", 1e3, 50000, , g2_jac_add(&pq, &pq, &p));
        TIME_CASE("g2_dbl", "us", 1e3, 50000, , g2_jac_dbl(&pq, &pq));
        fr_t k;
        rand_fr(&k);
        TIME_CASE("g2_scalar_mul", "us", 1e3, 20, , g2_jac_mul_fr(&pq, &pq, &k));
    }
    {
        g1_jac_t pj;
        g2_jac_t qj;
        g1_aff_t p;
        g2_aff_t q;
        fp12_t f;
        rand_g1(&pj);
        rand_g2(&qj);
        g1_jac_to_aff(&p, &pj);
        g2_jac_to_aff(&q, &qj);
        TIME_CASE("pairing", "ms", 1e6, 20, , pairing(&f, &p, &q));
    }
    printf("threads %u\n", pool_size(pool_default()));
    if (msm_case("g1_msm_2^16", 16)) return 1;
    if (!quick && msm_case("g1_msm_2^20", 20)) return 1;
    return 0;
}
