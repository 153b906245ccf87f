/* bench_ec.c: `cuzk-bench ec [LG...]`: the curve layer's bulk operations (G1/G2 MSM on one
 * thread and on the default pool, bitmap sums, batch affine conversion, subgroup checks and
 * decompression), one line per case as "NAME MEDIAN UNIT". See docs/ec.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "cuzk/ec.h"
#include "cuzk/util.h"

static cuzk_rng ec_rng;

static void ec_rand_fr(fr_t *a)
{
    uint8_t b[64];
    cuzk_rng_bytes(&ec_rng, b, sizeof b);
    fr_from_wide_le(a, b);
}

/* n distinct points a G + i d G (one addition each), converted to affine in chunks. */
#define EC_BENCH_BASES(PFX, AFF, JAC, GEN)                                                   \
    static AFF *PFX##bench_bases(size_t n)                                                 \
    {                                                                                      \
        AFF *out = malloc(n * sizeof *out);                                                \
        JAC *tmp = malloc(4096 * sizeof *tmp);                                             \
        if (!out || !tmp) {                                                                \
            free(out);                                                                     \
            free(tmp);                                                                     \
            return NULL;                                                                   \
        }                                                                                  \
        JAC p, q;                                                                          \
        fr_t k;                                                                            \
        PFX##jac_from_aff(&p, &GEN);                                                       \
        q = p;                                                                             \
        ec_rand_fr(&k);                                                                    \
        PFX##jac_mul_fr(&p, &p, &k);                                                       \
        ec_rand_fr(&k);                                                                    \
        PFX##jac_mul_fr(&q, &q, &k);                                                       \
        for (size_t i = 0; i < n; i += 4096) {                                             \
            size_t m = n - i < 4096 ? n - i : 4096;                                        \
            for (size_t j = 0; j < m; j++) {                                               \
                PFX##jac_add(&p, &p, &q);                                                  \
                tmp[j] = p;                                                                \
            }                                                                              \
            PFX##batch_to_aff(out + i, tmp, m, pool_default());                            \
        }                                                                                  \
        free(tmp);                                                                         \
        return out;                                                                        \
    }
EC_BENCH_BASES(g1_, g1_aff_t, g1_jac_t, G1_GENERATOR)
EC_BENCH_BASES(g2_, g2_aff_t, g2_jac_t, G2_GENERATOR)

static double ec_ms_since(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e6; }

static int ec_bench_size(unsigned lg, struct pool *one)
{
    size_t n = (size_t)1 << lg;
    fr_t *sc = malloc(n * sizeof *sc);
    uint64_t *bm = malloc((n / 64 + 1) * sizeof *bm);
    g1_aff_t *b1 = g1_bench_bases(n);
    g2_aff_t *b2 = lg <= 18 ? g2_bench_bases(n) : NULL;
    int rc = 1;
    if (!sc || !bm || !b1 || (lg <= 18 && !b2)) {
        fprintf(stderr, "cuzk-bench ec: out of memory for 2^%u points\n", lg);
        goto out;
    }
    for (size_t i = 0; i < n; i++) ec_rand_fr(&sc[i]);
    for (size_t i = 0; i < n / 64 + 1; i++) bm[i] = cuzk_rng_u64(&ec_rng);
    struct pool *pools[2] = {one, pool_default()};
    struct cuzk_error err;
    for (int pi = 0; pi < 2; pi++) {
        unsigned th = pool_size(pools[pi]);
        int reps = lg >= 20 ? 3 : 5;
        double v[5];
        g1_jac_t o1;
        g2_jac_t o2;
        for (int r = 0; r < reps; r++) {
            uint64_t t0 = cuzk_now_ns();
            if (g1_msm(&o1, b1, sc, n, pools[pi], &err)) goto fail;
            v[r] = ec_ms_since(t0);
        }
        printf("g1_msm_2^%u_t%u %.1f ms\n", lg, th, bench_median(v, (size_t)reps));
        fflush(stdout);
        if (b2) {
            for (int r = 0; r < reps; r++) {
                uint64_t t0 = cuzk_now_ns();
                if (g2_msm(&o2, b2, sc, n, pools[pi], &err)) goto fail;
                v[r] = ec_ms_since(t0);
            }
            printf("g2_msm_2^%u_t%u %.1f ms\n", lg, th, bench_median(v, (size_t)reps));
            fflush(stdout);
        }
        for (int r = 0; r < reps; r++) {
            uint64_t t0 = cuzk_now_ns();
            g1_sum_bitmap(&o1, b1, bm, n, pools[pi]);
            v[r] = ec_ms_since(t0);
        }
        printf("g1_sum_bitmap_2^%u_half_t%u %.1f ms\n", lg, th, bench_median(v, (size_t)reps));
        fflush(stdout);
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "cuzk-bench ec: %s\n", err.msg);
out:
    free(sc);
    free(bm);
    free(b1);
    free(b2);
    return rc;
}

BENCH_CMD(ec, "ec", "curve layer: G1/G2 MSM (1 thread, pool), bitmap sums, checks [LG ...]")
{
    cuzk_rng_seed(&ec_rng, 7);
    struct cuzk_error err;
    struct pool *one = pool_new(1, &err);
    if (!one) {
        fprintf(stderr, "cuzk-bench ec: %s\n", err.msg);
        return 1;
    }
    /* single points: subgroup checks and decompression (per point, one thread) */
    {
        g1_aff_t *p1 = g1_bench_bases(64);
        g2_aff_t *p2 = g2_bench_bases(64);
        if (!p1 || !p2) return 1;
        uint8_t c1[64][48], c2[64][96];
        for (int i = 0; i < 64; i++) {
            g1_aff_to_compressed(c1[i], &p1[i]);
            g2_aff_to_compressed(c2[i], &p2[i]);
        }
        /* median over 7 rounds of 64 points: single short rounds are noisy on a shared machine */
        int ok = 0;
        double v[4][7];
        g1_aff_t d1;
        g2_aff_t d2;
        for (int r = 0; r < 7; r++) {
            uint64_t t0 = cuzk_now_ns();
            for (int i = 0; i < 64; i++) ok += g1_aff_in_subgroup(&p1[i]);
            v[0][r] = ec_ms_since(t0) * 1e3 / 64;
            t0 = cuzk_now_ns();
            for (int i = 0; i < 64; i++) ok += g2_aff_in_subgroup(&p2[i]);
            v[1][r] = ec_ms_since(t0) * 1e3 / 64;
            t0 = cuzk_now_ns();
            for (int i = 0; i < 64; i++) ok += !g1_aff_from_compressed(&d1, c1[i], true, NULL);
            v[2][r] = ec_ms_since(t0) * 1e3 / 64;
            t0 = cuzk_now_ns();
            for (int i = 0; i < 64; i++) ok += !g2_aff_from_compressed(&d2, c2[i], true, NULL);
            v[3][r] = ec_ms_since(t0) * 1e3 / 64;
        }
        static const char *const names[4] = {"g1_subgroup_check", "g2_subgroup_check",
                                             "g1_decompress_checked", "g2_decompress_checked"};
        for (int c = 0; c < 4; c++) printf("%s %.1f us\n", names[c], bench_median(v[c], 7));
        if (ok != 7 * 4 * 64) fprintf(stderr, "cuzk-bench ec: check failed on a valid point\n");
        free(p1);
        free(p2);
    }
    int rc = 0;
    if (argc <= 1) {
        rc = ec_bench_size(16, one);
    } else {
        for (int i = 1; i < argc && !rc; i++) {
            unsigned lg = (unsigned)strtoul(argv[i], NULL, 10);
            if (lg < 1 || lg > 26) {
                fprintf(stderr, "cuzk-bench ec: LG %s out of range (expected 1..26)\n", argv[i]);
                rc = 1;
                break;
            }
            rc = ec_bench_size(lg, one);
        }
    }
    pool_free(one);
    return rc;
}

/* `cuzk-bench ec-msm LG [THREADS] [REPS]`: only the G1 MSM of 2^LG random points and full-width
 * scalars, printing wall and user+system CPU time per run (getrusage), so changes can be judged
 * on a shared machine by CPU time; THREADS = 0 (default) uses the default pool. */
static double ec_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

BENCH_CMD(ec_msm, "ec-msm", "G1 MSM only, wall and CPU time: LG [THREADS (0 = default pool)] [REPS]")
{
    unsigned lg = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20;
    unsigned th = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    int reps = argc > 3 ? atoi(argv[3]) : 1;
    if (lg < 1 || lg > 26 || th > 256 || reps < 1 || reps > 100 || argc > 4) {
        fprintf(stderr, "cuzk-bench ec-msm: expected LG 1..26, THREADS 0..256, REPS 1..100\n");
        return 1;
    }
    cuzk_rng_seed(&ec_rng, 7);
    struct cuzk_error err;
    struct pool *pool = pool_default(), *own = NULL;
    if (th) {
        own = pool_new(th, &err);
        if (!own) {
            fprintf(stderr, "cuzk-bench ec-msm: %s\n", err.msg);
            return 1;
        }
        pool = own;
    }
    size_t n = (size_t)1 << lg;
    fr_t *sc = malloc(n * sizeof *sc);
    g1_aff_t *b1 = g1_bench_bases(n);
    int rc = 1;
    if (!sc || !b1) {
        fprintf(stderr, "cuzk-bench ec-msm: out of memory for 2^%u points\n", lg);
        goto out;
    }
    for (size_t i = 0; i < n; i++) ec_rand_fr(&sc[i]);
    for (int r = 0; r < reps; r++) {
        g1_jac_t o;
        double c0 = ec_cpu_ms();
        uint64_t t0 = cuzk_now_ns();
        if (g1_msm(&o, b1, sc, n, pool, &err)) {
            fprintf(stderr, "cuzk-bench ec-msm: %s\n", err.msg);
            goto out;
        }
        printf("g1_msm_2^%u_t%u wall %.1f ms cpu %.1f ms\n", lg, pool_size(pool),
               ec_ms_since(t0), ec_cpu_ms() - c0);
        fflush(stdout);
    }
    rc = 0;
out:
    free(sc);
    free(b1);
    pool_free(own);
    return rc;
}
