/* bench_gpu.c: cuzk-bench GPU subcommands: gpu-ntt, gpu-h, gpu-msm (G1/G2 MSM and 0/1 bitmap
 * sums, device-resident inputs, CUDA events, median after one warm-up) and gpu-prove (the GPU
 * backend on the synthetic circuit against the CPU backend). Needs the `make gpu` build
 * (build/bin/cuzk-bench-gpu); the CPU build answers "no GPU support". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cuzk/circuits.h"
#include "cuzk/ec.h"
#include "cuzk/gpu.h"
#include "cuzk/groth16.h"
#include "cuzk/util.h"

static struct gpu_ctx *open_gpu(int dev)
{
    struct cuzk_error err;
    struct gpu_ctx *ctx = NULL;
    char name[256];
    if (gpu_ctx_new(&ctx, dev, &err)) {
        fprintf(stderr, "cuzk-bench: %s\n", err.msg);
        return NULL;
    }
    if (!gpu_device_name(dev, name, sizeof name, &err)) printf("device %d: %s\n", dev, name);
    return ctx;
}

static int parse_common(int argc, char **argv, unsigned *lgs, unsigned *n_lg, int *reps, int *dev,
                        int *g, size_t *distinct, double *density)
{
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return -1;
        if (!strcmp(a, "--lg") && *n_lg < 16) lgs[(*n_lg)++] = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--reps")) *reps = atoi(v);
        else if (!strcmp(a, "--device")) *dev = atoi(v);
        else if (!strcmp(a, "--g") && g) *g = atoi(v);
        else if (!strcmp(a, "--distinct") && distinct) *distinct = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--density") && density) *density = atof(v);
        else return -1;
    }
    if (*reps < 1 || *reps > 100) *reps = 5;
    return 0;
}

static void report(const char *what, unsigned lg, double *ms, int reps)
{
    double lo = ms[0], hi = ms[0];
    for (int i = 1; i < reps; i++) {
        if (ms[i] < lo) lo = ms[i];
        if (ms[i] > hi) hi = ms[i];
    }
    double med = bench_median(ms, (size_t)reps);
    printf("%s_2^%u %.2f ms (median of %d; min %.2f, max %.2f)\n", what, lg, med, reps, lo, hi);
    fflush(stdout);
}

BENCH_CMD(gpu_ntt, "gpu-ntt", "GPU Fr NTT: gpu-ntt [--lg K]... [--reps R] [--device D]")
{
    unsigned lgs[16], n_lg = 0;
    int reps = 5, dev = 0;
    if (parse_common(argc, argv, lgs, &n_lg, &reps, &dev, NULL, NULL, NULL)) {
        fprintf(stderr, "usage: cuzk-bench gpu-ntt [--lg K]... [--reps R] [--device D]\n");
        return 2;
    }
    if (!n_lg) lgs[n_lg++] = 24;
    struct gpu_ctx *ctx = open_gpu(dev);
    if (!ctx) return 1;
    struct cuzk_error err;
    double ms[100];
    for (unsigned k = 0; k < n_lg; k++) {
        if (gpu_bench_ntt(ctx, lgs[k], reps, ms, &err)) {
            fprintf(stderr, "gpu-ntt 2^%u: %s\n", lgs[k], err.msg);
            gpu_ctx_free(ctx);
            return 1;
        }
        report("gpu_ntt", lgs[k], ms, reps);
    }
    gpu_ctx_free(ctx);
    return 0;
}

BENCH_CMD(gpu_h, "gpu-h", "GPU h pipeline (3 iNTT, 3 coset NTT, pointwise, coset iNTT): gpu-h [--lg K]...")
{
    unsigned lgs[16], n_lg = 0;
    int reps = 5, dev = 0;
    if (parse_common(argc, argv, lgs, &n_lg, &reps, &dev, NULL, NULL, NULL)) {
        fprintf(stderr, "usage: cuzk-bench gpu-h [--lg K]... [--reps R] [--device D]\n");
        return 2;
    }
    if (!n_lg) lgs[n_lg++] = 24;
    struct gpu_ctx *ctx = open_gpu(dev);
    if (!ctx) return 1;
    struct cuzk_error err;
    double ms[100];
    for (unsigned k = 0; k < n_lg; k++) {
        if (gpu_bench_h(ctx, lgs[k], reps, ms, &err)) {
            fprintf(stderr, "gpu-h 2^%u: %s\n", lgs[k], err.msg);
            gpu_ctx_free(ctx);
            return 1;
        }
        report("gpu_h", lgs[k], ms, reps);
    }
    gpu_ctx_free(ctx);
    return 0;
}

/* `distinct` points k*G + i*Q (cheap: one addition each, one batch inversion). */
static void *make_points(int g, size_t distinct)
{
    fr_t k;
    cuzk_rng rng;
    cuzk_rng_seed(&rng, 2026);
    uint8_t b[64];
    if (g == 1) {
        g1_aff_t *out = malloc(distinct * sizeof *out);
        g1_jac_t *j = malloc(distinct * sizeof *j), gen, p, q;
        if (!out || !j) return NULL;
        g1_jac_from_aff(&gen, &G1_GENERATOR);
        cuzk_rng_bytes(&rng, b, 64), fr_from_wide_le(&k, b), g1_jac_mul_fr(&p, &gen, &k);
        cuzk_rng_bytes(&rng, b, 64), fr_from_wide_le(&k, b), g1_jac_mul_fr(&q, &gen, &k);
        for (size_t i = 0; i < distinct; i++) j[i] = p, g1_jac_add(&p, &p, &q);
        g1_batch_to_aff(out, j, distinct, pool_default());
        free(j);
        return out;
    }
    g2_aff_t *out = malloc(distinct * sizeof *out);
    g2_jac_t *j = malloc(distinct * sizeof *j), gen, p, q;
    if (!out || !j) return NULL;
    g2_jac_from_aff(&gen, &G2_GENERATOR);
    cuzk_rng_bytes(&rng, b, 64), fr_from_wide_le(&k, b), g2_jac_mul_fr(&p, &gen, &k);
    cuzk_rng_bytes(&rng, b, 64), fr_from_wide_le(&k, b), g2_jac_mul_fr(&q, &gen, &k);
    for (size_t i = 0; i < distinct; i++) j[i] = p, g2_jac_add(&p, &p, &q);
    g2_batch_to_aff(out, j, distinct, pool_default());
    free(j);
    return out;
}

BENCH_CMD(gpu_msm, "gpu-msm",
          "GPU MSM: gpu-msm [--g 1|2] [--lg K]... [--distinct D] [--density F (0/1 bitmap sum)] [--reps R]")
{
    unsigned lgs[16], n_lg = 0;
    int reps = 5, dev = 0, g = 1;
    size_t distinct = (size_t)1 << 16;
    double density = 0;
    if (parse_common(argc, argv, lgs, &n_lg, &reps, &dev, &g, &distinct, &density) || (g != 1 && g != 2)) {
        fprintf(stderr, "usage: cuzk-bench gpu-msm [--g 1|2] [--lg K]... [--distinct D] [--density F] [--reps R]\n");
        return 2;
    }
    if (!n_lg) lgs[n_lg++] = 20;
    struct gpu_ctx *ctx = open_gpu(dev);
    if (!ctx) return 1;
    void *pts = make_points(g, distinct);
    if (!pts) {
        fprintf(stderr, "gpu-msm: out of host memory\n");
        gpu_ctx_free(ctx);
        return 1;
    }
    struct cuzk_error err;
    double ms[100];
    char what[64];
    for (unsigned k = 0; k < n_lg; k++) {
        size_t n = (size_t)1 << lgs[k], d = distinct < n ? distinct : n;
        if (gpu_bench_msm(ctx, g, n, pts, d, density, reps, ms, &err)) {
            fprintf(stderr, "gpu-msm G%d 2^%u: %s\n", g, lgs[k], err.msg);
            free(pts);
            gpu_ctx_free(ctx);
            return 1;
        }
        if (density > 0) snprintf(what, sizeof what, "gpu_g%d_bitmap_sum_d%.2f", g, density);
        else snprintf(what, sizeof what, "gpu_g%d_msm", g);
        report(what, lgs[k], ms, reps);
    }
    free(pts);
    gpu_ctx_free(ctx);
    return 0;
}

static double ms_of(uint64_t ns) { return (double)ns / 1e6; }

BENCH_CMD(gpu_prove, "gpu-prove",
          "GPU backend on the synthetic circuit: gpu-prove --constraints N [--reps R] [--cpu 0|1]")
{
    uint64_t n = 1 << 16;
    int reps = 3, dev = 0, cpu = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--constraints")) n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--device")) dev = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--cpu")) cpu = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: cuzk-bench gpu-prove --constraints N [--reps R] [--cpu 0|1]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 100) reps = 3;
    struct gpu_ctx *ctx = open_gpu(dev);
    if (!ctx) return 1;
    struct cuzk_error err;
    struct synth_params p = {n, 4, false};
    struct g16_shape s;
    struct g16_pk pk;
    uint64_t t0 = cuzk_now_ns();
    if (synth_build_shape(&s, &p, &err) || g16_setup(&pk, &s, NULL, pool_default(), &err)) {
        fprintf(stderr, "gpu-prove: %s\n", err.msg);
        gpu_ctx_free(ctx);
        return 1;
    }
    printf("shape+setup %.1f ms: %llu constraints, h %llu, l %llu, a %llu, b %llu\n", ms_of(cuzk_now_ns() - t0),
           (unsigned long long)s.n_constraints, (unsigned long long)pk.n_h, (unsigned long long)pk.n_l,
           (unsigned long long)pk.n_a, (unsigned long long)pk.n_b);
    fr_t *in = calloc(s.n_inputs, sizeof(fr_t)), *aux = calloc(s.n_aux + 1, sizeof(fr_t));
    int rc = synth_witness(in, aux, &s, &p, 1, &err);
    struct g16_assignment w = {in, aux};
    t0 = cuzk_now_ns();
    if (!rc) rc = gpu_ctx_load_shape(ctx, &s, &err);
    if (!rc) rc = gpu_ctx_load_pk(ctx, &pk, &err);
    if (!rc) printf("upload shape+key %.1f ms\n", ms_of(cuzk_now_ns() - t0));
    double ms[100];
    struct g16_proof pr;
    for (int r = -1; !rc && r < reps; r++) {
        struct g16_timings t;
        t0 = cuzk_now_ns();
        rc = g16_prove(&pr, &s, &pk, &w, 1, NULL, NULL, gpu_g16_backend, ctx, &t, &err);
        double total = ms_of(cuzk_now_ns() - t0);
        if (r >= 0) ms[r] = total;
        if (!rc && r == reps - 1)
            printf("gpu phases: abc %.2f ntt %.2f h %.2f l %.2f a %.2f b_g1 %.2f b_g2 %.2f assembly %.2f ms\n",
                   ms_of(t.abc_ns), ms_of(t.ntt_ns), ms_of(t.msm_h_ns), ms_of(t.msm_l_ns), ms_of(t.msm_a_ns),
                   ms_of(t.msm_b_g1_ns), ms_of(t.msm_b_g2_ns), ms_of(t.assembly_ns));
    }
    if (!rc) {
        printf("gpu_prove %llu constraints: %.2f ms (median of %d, resident key)\n", (unsigned long long)n,
               bench_median(ms, (size_t)reps), reps);
        struct g16_pvk *pvk = g16_pvk_new(&pk.vk, &err);
        rc = pvk ? g16_verify(pvk, &pr, in + 1, s.n_inputs - 1, &err) : CUZK_E_NOMEM;
        printf("verify: %s\n", rc ? err.msg : "ok");
        g16_pvk_free(pvk);
    }
    if (!rc && cpu) {
        struct g16_timings t;
        t0 = cuzk_now_ns();
        rc = g16_prove(&pr, &s, &pk, &w, 1, NULL, NULL, NULL, NULL, &t, &err);
        printf("cpu_prove %llu constraints: %.2f ms (threads %u)\n", (unsigned long long)n,
               ms_of(cuzk_now_ns() - t0), pool_size(pool_default()));
    }
    if (rc) fprintf(stderr, "gpu-prove: %s\n", err.msg);
    gpu_ctx_unload(ctx);
    free(in);
    free(aux);
    g16_pk_free(&pk);
    g16_shape_free(&s);
    gpu_ctx_free(ctx);
    return rc ? 1 : 0;
}
