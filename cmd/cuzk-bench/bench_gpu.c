/* bench_gpu.c: cuzk-bench GPU subcommands: the options every gpu-* subcommand takes (the
 * backend's tuning knobs, gpu_tuning.h, set with --set NAME=VALUE and compared with --vary
 * NAME=v1,v2; --trace), gpu-tuning (lists the knobs) and the micro-benchmarks gpu-ntt, gpu-h,
 * gpu-spmv and gpu-msm (G1/G2 MSM and 0/1 bitmap sums, device-resident inputs, CUDA events,
 * median after one warm-up). The prover benchmarks are bench_gpu_prove.c. Needs the `make gpu`
 * build (build/bin/cuzk-bench-gpu); the CPU build answers "no GPU support". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench/gpu_bench.h"
#include "bench_gpu.h"
#include "cuzk/circuits.h"
#include "cuzk/ec.h"
#include "cuzk/gpu.h"
#include "cuzk/groth16.h"
#include "cuzk/util.h"
#include "gpu_tuning.h"

/* Context options of every run: --trace 1 sets .trace; gpu-porep sets .stream_key per run. */
static struct gpu_options bench_opt;

void bench_gpu_trace(bool on) { bench_opt.trace = on; }
struct gpu_options bench_gpu_options(void) { return bench_opt; }

struct gpu_ctx *open_gpu(int dev)
{
    struct cuzk_error err;
    struct gpu_ctx *ctx = NULL;
    char name[256];
    if (gpu_ctx_new(&ctx, dev, &err)) {
        fprintf(stderr, "cuzk-bench: %s\n", err.msg);
        return NULL;
    }
    if (bench_opt.trace) gpu_ctx_set_options(ctx, &bench_opt);
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

/* Tuning knobs (gpu_tuning.h; `cuzk-bench-gpu gpu-tuning` lists them): --set NAME=VALUE
 * (repeatable) is applied before the run; --vary NAME=v1,v2,... times each value side by side
 * in one process, and A+B=a1+b1,a2+b2,... varies several knobs at once (e.g. a baseline of two
 * knobs against the default of both). --trace 1: one stderr line per device allocation and MSM
 * plan (gpu_options.trace). bench_gpu_parse_tuning splits these off argv (the rest goes to
 * args), checks every --vary value and applies the --set ones; v = NULL: no --vary for this
 * subcommand. */

/* Set variant v's knobs (the tuning table otherwise as it is) */
int bench_gpu_vary_apply(const char *cmd, const struct bench_gpu_vary *vy, int v)
{
    if (!vy || !vy->n) return 0;
    char names[sizeof vy->name], vals[sizeof vy->buf], a[sizeof names + sizeof vals + 2];
    strcpy(names, vy->name);
    strcpy(vals, vy->vals[v]);
    char *sn = NULL, *sv = NULL;
    char *n = strtok_r(names, "+", &sn), *x = strtok_r(vals, "+", &sv);
    for (; n; n = strtok_r(NULL, "+", &sn), x = x ? strtok_r(NULL, "+", &sv) : NULL) {
        struct cuzk_error err;
        if (!x) {
            fprintf(stderr, "%s: --vary %s: value '%s' has no part for %s\n", cmd, vy->name, vy->vals[v], n);
            return 2;
        }
        snprintf(a, sizeof a, "%s=%s", n, x);
        if (gpu_tuning_set(a, &err)) {
            fprintf(stderr, "%s: --vary: %s\n", cmd, err.msg);
            return 2;
        }
    }
    if (x) {
        fprintf(stderr, "%s: --vary %s: value '%s' has more parts than names\n", cmd, vy->name, vy->vals[v]);
        return 2;
    }
    return 0;
}

int bench_gpu_vary_step(const char *cmd, const struct bench_gpu_vary *vy, int v, struct cuzk_error *err)
{
    if (!vy->n) return CUZK_OK;
    if (bench_gpu_vary_apply(cmd, vy, v))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "--vary %s=%s", vy->name, vy->vals[v]);
    printf("[vary] %s=%s\n", vy->name, vy->vals[v]);
    return CUZK_OK;
}

int bench_gpu_parse_tuning(const char *cmd, int argc, char **argv, struct bench_gpu_vary *v,
                           char **args, int *nargs)
{
    const char *sets[32];
    int nsets = 0;
    if (v) memset(v, 0, sizeof *v);
    *nargs = 0;
    for (int i = 0; i < argc && *nargs < 64; i++) {
        const bool set = !strcmp(argv[i], "--set"), vary = v && !strcmp(argv[i], "--vary"),
                   trace = !strcmp(argv[i], "--trace");
        if (!set && !vary && !trace) {
            args[(*nargs)++] = argv[i];
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: %s needs a value\n", cmd, argv[i]);
            return 2;
        }
        const char *val = argv[++i];
        if (trace) {
            bench_opt.trace = atoi(val) != 0;
        } else if (set) {
            if (nsets == (int)(sizeof sets / sizeof sets[0])) {
                fprintf(stderr, "%s: too many --set\n", cmd);
                return 2;
            }
            sets[nsets++] = val;
        } else if (v) {   /* --vary (only recognised when v is given) */
            const char *eq = strchr(val, '=');
            if (!eq || eq == val || (size_t)(eq - val) >= sizeof v->name || strlen(eq + 1) >= sizeof v->buf) {
                fprintf(stderr, "%s: --vary expects NAME=v1,v2,... (got '%s')\n", cmd, val);
                return 2;
            }
            memset(v, 0, sizeof *v);
            memcpy(v->name, val, (size_t)(eq - val));
            v->name[eq - val] = 0;
            strcpy(v->buf, eq + 1);
            for (char *tok = strtok(v->buf, ","); tok && v->n < 16; tok = strtok(NULL, ",")) v->vals[v->n++] = tok;
        }
    }
    /* every --vary value names known knobs with values in range before anything runs */
    for (int k = 0; v && k < v->n; k++)
        if (bench_gpu_vary_apply(cmd, v, k)) return 2;
    gpu_tuning_reset();
    for (int k = 0; k < nsets; k++) {
        struct cuzk_error err;
        if (gpu_tuning_set(sets[k], &err)) {
            fprintf(stderr, "%s: --set: %s\n", cmd, err.msg);
            return 2;
        }
    }
    return 0;
}

BENCH_CMD(gpu_tuning, "gpu-tuning",
          "The CUDA backend's tuning knobs, one line each: name, value, default (no GPU needed): "
          "gpu-tuning [--set NAME=VALUE]...")
{
    char *args[64];
    int nargs;
    if (bench_gpu_parse_tuning("gpu-tuning", argc, argv, NULL, args, &nargs)) return 2;
    if (nargs > 1) {
        fprintf(stderr, "usage: cuzk-bench gpu-tuning [--set NAME=VALUE]...\n");
        return 2;
    }
    gpu_tuning_print(stdout);
    return 0;
}

/* gpu-ntt and gpu-h: one transform kind at the given sizes, per --vary value */
static int bench_fr_transform(const char *cmd, const char *what, int argc, char **argv,
                              int (*fn)(struct gpu_ctx *, unsigned, int, double *, struct cuzk_error *))
{
    unsigned lgs[16], n_lg = 0;
    int reps = 5, dev = 0, nargs;
    struct bench_gpu_vary vy;
    char *args[64];
    if (bench_gpu_parse_tuning(cmd, argc, argv, &vy, args, &nargs)) return 2;
    if (parse_common(nargs, args, lgs, &n_lg, &reps, &dev, NULL, NULL, NULL)) {
        fprintf(stderr, "usage: cuzk-bench %s [--lg K]... [--reps R] [--device D] [--vary NAME=v1,v2] "
                        BENCH_GPU_TUNING_OPTS "\n", cmd);
        return 2;
    }
    if (!n_lg) lgs[n_lg++] = 24;
    struct gpu_ctx *ctx = open_gpu(dev);
    if (!ctx) return 1;
    struct cuzk_error err;
    double ms[100];
    char name[512];
    for (unsigned k = 0; k < n_lg; k++) {
        for (int v = 0; v < (vy.n ? vy.n : 1); v++) {
            if (bench_gpu_vary_apply(cmd, &vy, v)) {
                gpu_ctx_free(ctx);
                return 2;
            }
            if (fn(ctx, lgs[k], reps, ms, &err)) {
                fprintf(stderr, "%s 2^%u: %s\n", cmd, lgs[k], err.msg);
                gpu_ctx_free(ctx);
                return 1;
            }
            if (vy.n) snprintf(name, sizeof name, "%s[%s=%s]", what, vy.name, vy.vals[v]);
            else snprintf(name, sizeof name, "%s", what);
            report(name, lgs[k], ms, reps);
        }
    }
    gpu_ctx_free(ctx);
    return 0;
}

BENCH_CMD(gpu_ntt, "gpu-ntt",
          "GPU Fr NTT, natural order in and out: gpu-ntt [--lg K]... [--reps R] [--device D] [--vary NAME=v1,v2,...] "
          "[--set NAME=VALUE]... (NAME: a tuning knob, see gpu-tuning)")
{
    return bench_fr_transform("gpu-ntt", "gpu_ntt", argc, argv, gpu_bench_ntt);
}

BENCH_CMD(gpu_ntt_nr, "gpu-ntt-nr",
          "GPU Fr NTT, natural in, bit-reversed out (sppark's NR): gpu-ntt-nr [--lg K]... [--reps R] [--vary NAME=v1,v2,...] "
          "[--set NAME=VALUE]...")
{
    return bench_fr_transform("gpu-ntt-nr", "gpu_ntt_nr", argc, argv, gpu_bench_ntt_nr);
}

BENCH_CMD(gpu_ntt_oop, "gpu-ntt-oop",
          "GPU Fr NTT, natural order in and out, out of place: gpu-ntt-oop [--lg K]... [--reps R] [--vary NAME=v1,v2,...] "
          "[--set NAME=VALUE]...")
{
    return bench_fr_transform("gpu-ntt-oop", "gpu_ntt_oop", argc, argv, gpu_bench_ntt_oop);
}

BENCH_CMD(gpu_h, "gpu-h",
          "GPU h pipeline (3 iNTT, 2 coset NTT, pointwise, coset iNTT): gpu-h [--lg K]... [--vary NAME=v1,v2,...] "
          "[--set NAME=VALUE]...")
{
    return bench_fr_transform("gpu-h", "gpu_h", argc, argv, gpu_bench_h);
}

BENCH_CMD(gpu_spmv, "gpu-spmv",
          "GPU SpMV of a shape file's three matrices over a PoRep-like witness (45% zeros, 45% ones): gpu-spmv --shape FILE [--reps R] "
          "[--device D] [--vary NAME=v1,v2,...] [--set NAME=VALUE]...")
{
    const char *path = NULL;
    int reps = 5, dev = 0, nargs;
    struct bench_gpu_vary vy;
    char *args[64];
    if (bench_gpu_parse_tuning("gpu-spmv", argc, argv, &vy, args, &nargs)) return 2;
    for (int i = 1; i + 1 < nargs; i += 2) {
        if (!strcmp(args[i], "--shape")) path = args[i + 1];
        else if (!strcmp(args[i], "--reps")) reps = atoi(args[i + 1]);
        else if (!strcmp(args[i], "--device")) dev = atoi(args[i + 1]);
        else path = NULL, i = nargs;
    }
    if (!path || nargs % 2 == 0 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: cuzk-bench gpu-spmv --shape FILE [--reps R] [--device D] [--vary NAME=v1,v2] "
                        BENCH_GPU_TUNING_OPTS "\n");
        return 2;
    }
    struct cuzk_error err;
    struct g16_shape s;
    if (g16_shape_load(&s, path, &err)) {
        fprintf(stderr, "gpu-spmv: %s\n", err.msg);
        return 1;
    }
    printf("shape: %llu rows, nnz A %llu B %llu C %llu\n", (unsigned long long)s.n_constraints,
           (unsigned long long)s.a.nnz, (unsigned long long)s.b.nnz, (unsigned long long)s.c.nnz);
    /* a PoRep-like witness: 45% zeros, 45% ones, 10% other values */
    fr_t *wv = malloc(((size_t)s.n_inputs + s.n_aux + 1) * sizeof(fr_t));
    if (!wv) {
        fprintf(stderr, "gpu-spmv: out of host memory\n");
        g16_shape_free(&s);
        return 1;
    }
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < (size_t)s.n_inputs + s.n_aux; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const unsigned r = (unsigned)(x % 100);
        if (r < 45) wv[i] = FR_ZERO;
        else if (r < 90 || i == 0) wv[i] = FR_ONE;
        else fr_from_u64(&wv[i], x);
    }
    struct g16_assignment w = {wv, wv + s.n_inputs};
    struct gpu_ctx *ctx = open_gpu(dev);
    int rc = ctx ? 0 : 1;
    double ms[100];
    char name[512];
    unsigned lg = 0;
    while (((uint64_t)1 << lg) < s.n_constraints) lg++;
    for (int v = 0; !rc && v < (vy.n ? vy.n : 1); v++) {
        if (bench_gpu_vary_apply("gpu-spmv", &vy, v)) rc = 2;
        else if (gpu_bench_spmv(ctx, &s, &w, reps, ms, &err)) {
            fprintf(stderr, "gpu-spmv: %s\n", err.msg);
            rc = 1;
        } else {
            if (vy.n) snprintf(name, sizeof name, "gpu_spmv_abc[%s=%s]", vy.name, vy.vals[v]);
            else snprintf(name, sizeof name, "gpu_spmv_abc");
            report(name, lg, ms, reps);
        }
    }
    if (ctx) {
        gpu_ctx_unload(ctx);
        gpu_ctx_free(ctx);
    }
    free(wv);
    g16_shape_free(&s);
    return rc;
}

/* `distinct` points k*G + i*Q (cheap: one addition each, one batch inversion). */
void *make_points(int g, size_t distinct)
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
          "GPU MSM: gpu-msm [--g 1|2] [--lg K]... [--distinct D] [--density F (0/1 bitmap sum)] [--reps R] "
          "[--vary NAME=v1,v2,...: each size once per value of tuning knob NAME, in one process; A+B=a1+b1,... "
          "several knobs] [--set NAME=VALUE]... (knobs: gpu-tuning) [--trace 1]")
{
    unsigned lgs[16], n_lg = 0;
    int reps = 5, dev = 0, g = 1;
    size_t distinct = (size_t)1 << 16;
    double density = 0;
    struct bench_gpu_vary vy;
    char *args[64];
    int nargs;
    if (bench_gpu_parse_tuning("gpu-msm", argc, argv, &vy, args, &nargs)) return 2;
    if (parse_common(nargs, args, lgs, &n_lg, &reps, &dev, &g, &distinct, &density) || (g != 1 && g != 2)) {
        fprintf(stderr, "usage: cuzk-bench gpu-msm [--g 1|2] [--lg K]... [--distinct D] [--density F] [--reps R] "
                        "[--vary NAME=v1,v2] " BENCH_GPU_TUNING_OPTS "\n");
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
    char what[512];
    for (unsigned k = 0; k < n_lg; k++) {
        for (int v = 0; v < (vy.n ? vy.n : 1); v++) {
            size_t n = (size_t)1 << lgs[k], d = distinct < n ? distinct : n;
            if (bench_gpu_vary_apply("gpu-msm", &vy, v)) {
                free(pts);
                gpu_ctx_free(ctx);
                return 2;
            }
            if (gpu_bench_msm(ctx, g, n, pts, d, density, reps, ms, &err)) {
                fprintf(stderr, "gpu-msm G%d 2^%u: %s\n", g, lgs[k], err.msg);
                free(pts);
                gpu_ctx_free(ctx);
                return 1;
            }
            const char *kind = density > 0 ? "bitmap_sum" : "msm";
            if (vy.n) snprintf(what, sizeof what, "gpu_g%d_%s[%s=%s]", g, kind, vy.name, vy.vals[v]);
            else if (density > 0) snprintf(what, sizeof what, "gpu_g%d_bitmap_sum_d%.2f", g, density);
            else snprintf(what, sizeof what, "gpu_g%d_msm", g);
            report(what, lgs[k], ms, reps);
        }
    }
    free(pts);
    gpu_ctx_free(ctx);
    return 0;
}

double ms_of(uint64_t ns) { return (double)ns / 1e6; }
