/* bench_prove.c: cuzk-bench "ntt" (Fr NTT timings) and "prove" (shape, local setup, witness,
 * prove, verify of a circuit, with a per-phase breakdown). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cuzk/circuits.h"
#include "cuzk/gpu.h"
#include "cuzk/groth16.h"
#include "cuzk/util.h"

/* bench_porep.c: the PoRep path of prove (--kind porep --c1 FILE --params-dir DIR). */
int bench_prove_porep(int argc, char **argv);
/* bench_snap.c: the SnapDeals path (--kind snap --vanilla FILE --params-dir DIR). */
int bench_prove_snap(int argc, char **argv);
/* bench_post.c: the PoSt path (--kind window-post|winning-post --vanilla FILE --params-dir DIR). */
int bench_prove_post(int argc, char **argv);

static double ms_since(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e6; }
static double ms(uint64_t ns) { return (double)ns / 1e6; }

BENCH_CMD(ntt, "ntt", "Fr NTT: ntt [--lg K]... [--reps R]; prints 'ntt_2^K MEDIAN ms'")
{
    unsigned lgs[16], n_lg = 0, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--lg") && i + 1 < argc && n_lg < 16) {
            lgs[n_lg++] = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = (unsigned)strtoul(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: cuzk-bench ntt [--lg K]... [--reps R]\n");
            return 2;
        }
    }
    if (n_lg == 0) lgs[n_lg++] = 20;
    if (reps == 0 || reps > 100) reps = 5;
    struct pool *pool = pool_default();
    printf("threads %u\n", pool_size(pool));
    for (unsigned k = 0; k < n_lg; k++) {
        unsigned lg = lgs[k];
        if (lg < 1 || lg > 28) {
            fprintf(stderr, "cuzk-bench ntt: --lg must be in 1..28\n");
            return 2;
        }
        size_t n = (size_t)1 << lg;
        fr_t *v = malloc(n * sizeof *v);
        if (!v) {
            fprintf(stderr, "cuzk-bench ntt: out of memory for 2^%u elements\n", lg);
            return 1;
        }
        cuzk_rng rng;
        cuzk_rng_seed(&rng, lg);
        for (size_t i = 0; i < n; i++) fr_from_u64(&v[i], cuzk_rng_u64(&rng));
        g16_ntt(v, lg, false, pool);   /* warm-up: page faults, caches */
        double t[100];
        for (unsigned r = 0; r < reps; r++) {
            uint64_t t0 = cuzk_now_ns();
            g16_ntt(v, lg, false, pool);
            t[r] = ms_since(t0);
        }
        printf("ntt_2^%u %.2f ms\n", lg, bench_median(t, reps));
        fflush(stdout);
        free(v);
    }
    return 0;
}

/* ---- prove ---- */

struct prove_opts {
    const char *backend, *circuit, *kind;
    uint64_t constraints, seed;
    uint32_t n_public;
};

/* Backends by name. "gpu" opens device 0; in CPU builds the gpu.h stub answers
 * CUZK_E_NO_GPU, which is printed (the caller exits 2). The context lives until exit. */
int bench_prove_verify(const char *tag, const struct g16_shape *s, const struct g16_pk *pk,
                       const struct g16_pvk *pvk, const struct g16_assignment *w, bool check,
                       g16_backend_fn be, void *bctx, fr_t *pub, size_t n_pub, size_t tamper,
                       uint8_t out[G16_PROOF_BYTES], bool *ok, struct cuzk_error *err)
{
    char lab[32];
    uint64_t t0 = cuzk_now_ns();
    *ok = false;
    if (check) {
        int rc = g16_check(s, w, pool_default(), err);
        if (rc) return rc;
        snprintf(lab, sizeof lab, "check%s", tag);
        printf("%-11s %10.1f ms  a*b=c on every row\n", lab, ms_since(t0));
    }
    struct g16_proof proof;
    struct g16_timings t;
    memset(&t, 0, sizeof t);
    int rc = g16_prove(&proof, s, pk, w, 1, NULL, NULL, be, bctx, &t, err);
    if (rc) return rc;
    snprintf(lab, sizeof lab, "prove%s", tag);
    printf("%-11s %10.1f ms\n", lab, ms(t.total_ns));
    t0 = cuzk_now_ns();
    struct cuzk_error verr = {0};
    int vr = g16_verify(pvk, &proof, pub, n_pub, &verr);
    snprintf(lab, sizeof lab, "verify%s", tag);
    printf("%-11s %10.1f ms  %s\n", lab, ms_since(t0), vr ? verr.msg : "ok");
    *ok = vr == CUZK_OK;
    fr_add(&pub[tamper], &pub[tamper], &FR_ONE);
    if (g16_verify(pvk, &proof, pub, n_pub, NULL) == CUZK_OK) {
        printf("%-11s accepted a wrong public input: the check is broken\n", lab);
        *ok = false;
    }
    fr_sub(&pub[tamper], &pub[tamper], &FR_ONE);
    g16_proof_to_bytes(out, &proof);
    return CUZK_OK;
}

static g16_backend_fn backend_by_name(const char *name, void **ctx)
{
    *ctx = NULL;
    if (!strcmp(name, "cpu")) return g16_backend_cpu;
    if (!strcmp(name, "gpu")) {
        struct cuzk_error err;
        struct gpu_ctx *g = NULL;
        cuzk_error_clear(&err);
        if (gpu_ctx_new(&g, 0, &err)) {
            fprintf(stderr, "cuzk-bench prove: backend gpu: %s\n", err.msg);
            return NULL;
        }
        *ctx = g;
        return gpu_g16_backend;
    }
    fprintf(stderr, "cuzk-bench prove: unknown backend '%s' (cpu, gpu)\n", name);
    return NULL;
}

static int prove_usage(void)
{
    fprintf(stderr, "usage: cuzk-bench prove [--backend cpu|gpu] [--circuit synthetic] "
                    "--constraints N [--public P] [--seed S]\n");
    return 2;
}

/* The synthetic circuit: shape, in-memory local setup, witness. */
static int load_synthetic(struct g16_shape *s, struct g16_pk *pk, fr_t **in, fr_t **aux,
                          const struct prove_opts *o, struct cuzk_error *err)
{
    struct synth_params p = {o->constraints, o->n_public, false};
    uint64_t t0 = cuzk_now_ns();
    int rc = synth_build_shape(s, &p, err);
    if (rc) return rc;
    printf("shape       %10.1f ms  constraints %llu (incl. %u input rows), inputs %u, aux %u, "
           "nnz A/B/C %llu/%llu/%llu, coeffs %u\n", ms_since(t0),
           (unsigned long long)s->n_constraints, s->n_inputs, s->n_inputs, s->n_aux,
           (unsigned long long)s->a.nnz, (unsigned long long)s->b.nnz,
           (unsigned long long)s->c.nnz, s->n_coeffs);
    printf("local setup: NOT FOR PRODUCTION (the toxic waste is known to this process)\n");
    fflush(stdout);
    t0 = cuzk_now_ns();
    if ((rc = g16_setup(pk, s, NULL, pool_default(), err))) return rc;
    printf("setup       %10.1f ms  h %llu, l %llu, a %llu, b %llu\n", ms_since(t0),
           (unsigned long long)pk->n_h, (unsigned long long)pk->n_l,
           (unsigned long long)pk->n_a, (unsigned long long)pk->n_b);
    *in = malloc(s->n_inputs * sizeof(fr_t));
    *aux = malloc((s->n_aux + 1) * sizeof(fr_t));
    if (!*in || !*aux) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory for the witness");
    t0 = cuzk_now_ns();
    if ((rc = synth_witness(*in, *aux, s, &p, o->seed, err))) return rc;
    printf("witness     %10.1f ms  seed %llu\n", ms_since(t0), (unsigned long long)o->seed);
    return CUZK_OK;
}

BENCH_CMD(prove, "prove",
          "prove --backend cpu --circuit synthetic --constraints N [--seed S]: setup, prove, verify")
{
    struct prove_opts o = {"cpu", "synthetic", NULL, 0, 1, 8};
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--kind") && !strcmp(argv[i + 1], "porep")) return bench_prove_porep(argc, argv);
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--kind") && !strcmp(argv[i + 1], "snap")) return bench_prove_snap(argc, argv);
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--kind") && (!strcmp(argv[i + 1], "window-post") || !strcmp(argv[i + 1], "winning-post")))
            return bench_prove_post(argc, argv);
    for (int i = 1; i < argc; i += 2) {   /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return prove_usage();
        if (!strcmp(a, "--backend")) o.backend = v;
        else if (!strcmp(a, "--circuit")) o.circuit = v;
        else if (!strcmp(a, "--kind")) o.kind = v;
        else if (!strcmp(a, "--constraints")) o.constraints = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--seed")) o.seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--public")) o.n_public = (uint32_t)strtoul(v, NULL, 0);
        else return prove_usage();
    }
    if (o.kind) {
        fprintf(stderr, "cuzk-bench prove: unknown --kind %s (porep, snap, window-post, winning-post)\n", o.kind);
        return 2;
    }
    if (strcmp(o.circuit, "synthetic")) {
        fprintf(stderr, "cuzk-bench prove: unknown circuit '%s' (synthetic)\n", o.circuit);
        return 2;
    }
    if (o.constraints == 0) return prove_usage();
    void *bctx;
    g16_backend_fn backend = backend_by_name(o.backend, &bctx);
    if (!backend) return 2;

    struct cuzk_error err;
    cuzk_error_clear(&err);
    struct g16_shape s;
    struct g16_pk pk;
    fr_t *in = NULL, *aux = NULL;
    memset(&s, 0, sizeof s);
    memset(&pk, 0, sizeof pk);
    printf("backend %s, circuit %s, threads %u\n", o.backend, o.circuit, pool_size(pool_default()));
    int rc = load_synthetic(&s, &pk, &in, &aux, &o, &err);
    struct g16_proof proof;
    struct g16_timings t;
    memset(&t, 0, sizeof t);
    double verify_ms = 0;
    bool ok = false;
    if (!rc) {
        struct g16_assignment w = {in, aux};
        rc = g16_prove(&proof, &s, &pk, &w, 1, NULL, NULL, backend, bctx, &t, &err);
    }
    if (!rc) {
        uint64_t t0 = cuzk_now_ns();
        struct g16_pvk *pvk = g16_pvk_new(&pk.vk, &err);
        if (!pvk) {
            rc = err.code ? err.code : CUZK_E_INTERNAL;
        } else {
            int vr = g16_verify(pvk, &proof, in + 1, s.n_inputs - 1, &err);
            ok = vr == CUZK_OK;
            if (!ok) fprintf(stderr, "verify: %s\n", err.msg);
            g16_pvk_free(pvk);
        }
        verify_ms = ms_since(t0);
        printf("a/b/c       %10.1f ms\n", ms(t.abc_ns));
        printf("ntt (h)     %10.1f ms  domain 2^%u\n", ms(t.ntt_ns), g16_domain_lg(pk.n_h));
        printf("msm_h       %10.1f ms\n", ms(t.msm_h_ns));
        printf("msm_l       %10.1f ms\n", ms(t.msm_l_ns));
        printf("msm_a       %10.1f ms\n", ms(t.msm_a_ns));
        printf("msm_b_g1    %10.1f ms\n", ms(t.msm_b_g1_ns));
        printf("msm_b_g2    %10.1f ms\n", ms(t.msm_b_g2_ns));
        printf("assembly    %10.1f ms\n", ms(t.assembly_ns));
        printf("prove total %10.1f ms\n", ms(t.total_ns));
        printf("verify      %10.1f ms\n", verify_ms);
    }
    if (rc) fprintf(stderr, "cuzk-bench prove: %s: %s\n", cuzk_errname(rc), err.msg);
    printf("verified: %s\n", ok ? "yes" : "no");
    free(in);
    free(aux);
    g16_pk_free(&pk);
    g16_shape_free(&s);
    return ok ? 0 : 1;
}
