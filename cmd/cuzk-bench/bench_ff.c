/* bench_ff.c: `cuzk-bench ff`: Fp and Fr products, squares, sums and inversions on both field
 * backends (the x86-64 adx assembly when the CPU has it, then the portable C), one line per
 * case as "NAME/BACKEND NS ns" (BACKEND: default, named on the first line, or portable).
 * Each figure is the minimum over many short samples, which filters out other work sharing the
 * machine (a median would move with the load). These were the fp_timing / fr_timing cases of
 * tests/ff; docs/ff.md "Measured" quotes them. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cuzk/ff.h"
#include "cuzk/util.h"

#define SAMPLES 2000
enum { N = 256 };

/* Minimum over SAMPLES runs of body, per one of `per` operations, in ns. */
#define MIN_NS(out, per, body)                                                           \
    do {                                                                                 \
        double best_ = 1e99;                                                             \
        for (int s_ = 0; s_ < SAMPLES; s_++) {                                           \
            uint64_t t0_ = cuzk_now_ns();                                                \
            body;                                                                        \
            double d_ = (double)(cuzk_now_ns() - t0_) / (per);                           \
            best_ = d_ < best_ ? d_ : best_;                                             \
        }                                                                                \
        out = best_;                                                                     \
    } while (0)

/* One field F (fp, fr) with L limbs and top-limb mask M (keeps the random limbs below the
 * modulus); the dependent chains (x = x * b) give latency, the independent products
 * (c[i] = a[i] * b[i]) throughput. */
#define FIELD_BENCH(F, L, M)                                                             \
    static void bench_##F(const char *backend, cuzk_rng *g)                             \
    {                                                                                    \
        static F##_t a[N], b[N], c[N];                                                   \
        for (int i = 0; i < N; i++) {                                                    \
            uint64_t l[L];                                                               \
            for (int k = 0; k < L; k++) l[k] = cuzk_rng_u64(g);                          \
            l[L - 1] &= (M);                                                             \
            F##_to_mont(&a[i], l);                                                       \
            F##_sqr(&b[i], &a[i]);                                                       \
        }                                                                                \
        double lat, thr, sq, add, inv;                                                   \
        F##_t x = a[0];                                                                  \
        MIN_NS(lat, N, for (int i = 0; i < N; i++) F##_mul(&x, &x, &b[i]));             \
        MIN_NS(thr, N, for (int i = 0; i < N; i++) F##_mul(&c[i], &a[i], &b[i]));       \
        MIN_NS(sq, N, for (int i = 0; i < N; i++) F##_sqr(&x, &x));                     \
        MIN_NS(add, N, for (int i = 0; i < N; i++) F##_add(&c[i], &a[i], &b[i]));       \
        MIN_NS(inv, 4, for (int i = 0; i < 4; i++) F##_inv(&c[i], &a[i + 1]));          \
        /* keep the chains' results live so the compiler cannot drop them */            \
        volatile uint64_t sink = x.l[0] ^ c[0].l[0];                                     \
        (void)sink;                                                                      \
        printf(#F "_mul_latency/%s %.1f ns\n", backend, lat);                           \
        printf(#F "_mul_throughput/%s %.1f ns\n", backend, thr);                        \
        printf(#F "_sqr_latency/%s %.1f ns\n", backend, sq);                            \
        printf(#F "_add/%s %.1f ns\n", backend, add);                                   \
        printf(#F "_inv/%s %.0f ns\n", backend, inv);                                   \
        fflush(stdout);                                                                  \
    }

FIELD_BENCH(fp, 6, 0x0fffffffffffffffULL)
FIELD_BENCH(fr, 4, 0x0fffffffffffffffULL)

BENCH_CMD(ff, "ff", "Fp/Fr mul, sqr, add, inv on the default and the portable backend (min ns)")
{
    (void)argc;
    (void)argv;
    cuzk_rng g;
    cuzk_rng_seed(&g, 42);
    printf("default_backend %s\n", ff_backend());
    for (int portable = 0; portable < 2; portable++) {
        ff_force_portable(portable);
        const char *backend = portable ? "portable" : "default";
        bench_fp(backend, &g);
        bench_fr(backend, &g);
    }
    ff_force_portable(false);
    return 0;
}
