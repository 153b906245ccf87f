/* bench_gpu_circuit.c: gpu-circuit, the GPU prove of one Filecoin circuit at its real shape and
 * with a real witness (vanilla proofs generated in memory: post_gen.h, snap_gen.h), on a
 * random SRS of the right lengths (bench_gpu.h: timed, not verifiable). WindowPoSt proves a
 * full partition (2349 sectors at 32 GiB), SnapDeals partition 0. Verified GPU proofs of these
 * kinds come from the daemon with a local setup (docs/performance.md says how). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_gpu.h"
#include "cuzk/fil_circuit.h"
#include "cuzk/filecoin.h"
#include "cuzk/post_gen.h"
#include "cuzk/snap_gen.h"
#include "cuzk/util.h"
#include "cuzk/vanilla.h"

/* The registered PoSt proof of a kind and size (WindowPoSt: the V1_2 one Curio sends). */
static const struct fil_post_proof *post_proof(enum post_kind k, uint64_t size)
{
    for (size_t i = 0; i < fil_post_proof_count(); i++) {
        const struct fil_post_proof *p = fil_post_proof_at(i);
        if (p->kind == k && p->sector_size == size && (k == POST_WINNING || p->api == FIL_API_1_2)) return p;
    }
    return NULL;
}

static int post_witness(struct plike *pl, const struct fil_circuit *c, struct cuzk_error *err)
{
    enum post_kind k = c->kind == FIL_CIRCUIT_WINNING_POST ? POST_WINNING : POST_WINDOW;
    const struct fil_post_proof *p = post_proof(k, c->sector_size);
    if (!p) return cuzk_fail(err, CUZK_E_UNSUPPORTED, "no registered PoSt proof for this size");
    uint8_t rnd[32];
    for (int i = 0; i < 32; i++) rnd[i] = (uint8_t)(17 * i + 3);
    rnd[31] &= 0x3f;
    struct fil_post_gen g;
    uint64_t t0 = cuzk_now_ns();
    int rc = fil_post_generate(&g, p, rnd, 1000, k == POST_WINNING ? 100 : p->sector_count, 0, 1,
                               pool_default(), err);
    if (rc) return rc;
    printf("generate %zu sector proof(s) (%s): %.1f ms\n", g.n, p->name, ms_of(cuzk_now_ns() - t0));
    struct fil_post_sector_proof *sp = cuzk_calloc(g.n, sizeof *sp);
    if (!sp) rc = cuzk_fail(err, CUZK_E_NOMEM, "sector proofs");
    t0 = cuzk_now_ns();
    for (size_t i = 0; i < g.n && !rc; i++)
        rc = fil_post_sector_proof_parse(&sp[i], &g.cfg, g.blob[i], g.len, (unsigned)i, err);
    double parse_ms = ms_of(cuzk_now_ns() - t0);
    /* the daemon's native check of the request (every path against its comm_r) */
    t0 = cuzk_now_ns();
    if (!rc) rc = fil_post_request_check(p, sp, g.n, rnd, 0, pool_default(), err);
    if (!rc) printf("check %zu sector proof(s): %.1f ms\n", g.n, ms_of(cuzk_now_ns() - t0));
    uint32_t ni = 0, na = 0;
    t0 = cuzk_now_ns();
    if (!rc) rc = fil_post_witness_values(&pl->in, &pl->aux, &ni, &na, &g.cfg, sp, g.n, pool_default(), err);
    if (!rc) printf("parse %.1f ms, witness %.1f ms (%u threads)\n", parse_ms, ms_of(cuzk_now_ns() - t0),
                    pool_size(pool_default()));
    for (size_t i = 0; sp && i < g.n; i++) fil_post_sector_proof_free(&sp[i]);
    cuzk_free(sp);
    fil_post_gen_free(&g);
    return rc;
}

static int snap_witness(struct plike *pl, const struct fil_circuit *c, struct cuzk_error *err)
{
    struct fil_snap_gen g;
    uint64_t t0 = cuzk_now_ns();
    int rc = fil_snap_generate(&g, c->sector_size, 1, err);
    if (rc) return rc;
    printf("generate %u partition proofs: %.1f ms\n", g.partitions, ms_of(cuzk_now_ns() - t0));
    struct fil_snap_partition_proof pp;
    fr_t r_old, d_new, r_new;
    rc = fil_snap_partition_proof_parse(&pp, &g.cfg, g.blob[0], g.len[0], 0, err);
    if (!rc) {
        (void)fr_from_bytes_le(&r_old, g.comm_r_old);
        (void)fr_from_bytes_le(&d_new, g.comm_d_new);
        (void)fr_from_bytes_le(&r_new, g.comm_r_new);
        uint32_t ni = 0, na = 0;
        t0 = cuzk_now_ns();
        rc = fil_snap_witness_values(&pl->in, &pl->aux, &ni, &na, &g.cfg, &pp, 0, g.h, &r_old, &d_new,
                                     &r_new, pool_default(), err);
        if (!rc) printf("witness %.1f ms (%u threads)\n", ms_of(cuzk_now_ns() - t0), pool_size(pool_default()));
        fil_snap_partition_proof_free(&pp);
    }
    fil_snap_gen_free(&g);
    return rc;
}

BENCH_CMD(gpu_circuit, "gpu-circuit",
          "GPU prove of a Filecoin circuit's real shape and witness on a random SRS (timed, not verified): "
          "gpu-circuit --kind window-post|winning-post|snap --sector-size SIZE [--reps R] [--pipeline P] [--device D] "
          BENCH_GPU_TUNING_OPTS " [--vary NAME=v1,v2,... (the proves once per value of tuning knob NAME)]")
{
    const char *kind_s = NULL, *size_s = "32GiB";
    int reps = 3, pipeline = 0, dev = 0;
    struct bench_gpu_vary vy;
    char *args[64];
    int nargs;
    if (bench_gpu_parse_tuning("gpu-circuit", argc, argv, &vy, args, &nargs)) return 2;
    argc = nargs;
    argv = args;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--kind")) kind_s = v;
        else if (!strcmp(a, "--sector-size")) size_s = v;
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--pipeline")) pipeline = atoi(v);
        else if (!strcmp(a, "--device")) dev = atoi(v);
        else goto usage;
    }
    if (!kind_s || argc % 2 == 0 || reps < 1 || reps > 100 || pipeline < 0 || pipeline > 100) goto usage;
    struct cuzk_error err = {0};
    enum fil_circuit_kind k;
    uint64_t size;
    struct fil_circuit c;
    if (fil_circuit_parse_kind(&k, kind_s, &err) || porep_parse_sector_size(&size, size_s, &err) ||
        fil_circuit_init(&c, k, size, &err)) {
        fprintf(stderr, "gpu-circuit: %s\n", err.msg);
        return 2;
    }
    if (k == FIL_CIRCUIT_POREP) {
        fprintf(stderr, "gpu-circuit: PoRep: use gpu-porep (no generated C1 witness here)\n");
        return 2;
    }
    struct g16_shape s;
    struct g16_pk pk;
    memset(&s, 0, sizeof s);
    memset(&pk, 0, sizeof pk);
    char label[32];
    snprintf(label, sizeof label, "%s", k == FIL_CIRCUIT_SNAP ? "snap" : k == FIL_CIRCUIT_WINDOW_POST ? "window_post"
                                                                                                   : "winning_post");
    struct plike pl = {&s, &pk, NULL, NULL, NULL, NULL, PL_D1, PL_D2, label, false};
    uint64_t t0 = cuzk_now_ns();
    int rc = fil_circuit_shape(&s, &c, pool_default(), &err);
    if (!rc) printf("%s %s: %llu constraints (with the input rows), %u inputs, %u aux; shape %.1f s\n", kind_s,
                    size_s, (unsigned long long)s.n_constraints, s.n_inputs, s.n_aux, ms_of(cuzk_now_ns() - t0) / 1e3);
    if (!rc) rc = k == FIL_CIRCUIT_SNAP ? snap_witness(&pl, &c, &err) : post_witness(&pl, &c, &err);
    if (!rc) {
        pl.p1 = make_points(1, PL_D1);
        pl.p2 = make_points(2, PL_D2);
        if (!pl.p1 || !pl.p2) rc = cuzk_fail(&err, CUZK_E_NOMEM, "point tables");
    }
    t0 = cuzk_now_ns();
    if (!rc) rc = pl_key(&pl, false, &err);
    if (!rc) printf("random key %.1f s: h %llu, l %llu, a %llu, b %llu\n", ms_of(cuzk_now_ns() - t0) / 1e3,
                    (unsigned long long)pk.n_h, (unsigned long long)pk.n_l, (unsigned long long)pk.n_a,
                    (unsigned long long)pk.n_b);
    fflush(stdout);
    struct gpu_ctx *ctx = NULL;
    if (!rc) rc = bench_gpu_vary_step("gpu-circuit", &vy, 0, &err);
    if (!rc && !(ctx = open_gpu(dev))) rc = cuzk_fail(&err, CUZK_E_NO_GPU, "no GPU context on device %d", dev);
    bool streamed = false;
    if (!rc) rc = pl_time(ctx, &pl, reps, false, &err);
    if (rc == CUZK_E_GPU_NOMEM) {
        /* the key does not fit beside the prover's memory (WindowPoSt 32 GiB on an 80 GB card):
         * the daemon streams it then, so time that */
        printf("[resident] %s: the key is streamed instead\n", err.msg);
        streamed = true;
        /* a fresh context: the failed attempt's grow-only scratch stays allocated */
        gpu_ctx_unload(ctx);
        gpu_ctx_free(ctx);
        ctx = open_gpu(dev);
        rc = ctx ? pl_time(ctx, &pl, reps, true, &err) : cuzk_fail(&err, CUZK_E_NO_GPU, "no GPU context");
    }
    /* --vary: the other values, each on a fresh context in the mode the first one found */
    for (int v = 1; !rc && v < vy.n; v++) {
        if ((rc = bench_gpu_vary_step("gpu-circuit", &vy, v, &err))) break;
        gpu_ctx_unload(ctx);
        gpu_ctx_free(ctx);
        ctx = open_gpu(dev);
        rc = ctx ? pl_time(ctx, &pl, reps, streamed, &err) : cuzk_fail(&err, CUZK_E_NO_GPU, "no GPU context");
    }
    if (!rc && pipeline && !streamed) rc = pl_pipeline(ctx, &pl, pipeline, &err);
    if (rc) fprintf(stderr, "gpu-circuit: %s\n", err.msg);
    if (ctx) gpu_ctx_unload(ctx);
    gpu_ctx_free(ctx);
    pl_free(&pl, false);
    return rc ? 1 : 0;
usage:
    fprintf(stderr, "usage: cuzk-bench gpu-circuit --kind window-post|winning-post|snap --sector-size SIZE "
                    "[--reps R] [--pipeline P] [--device D] " BENCH_GPU_TUNING_OPTS " [--vary NAME=v1,v2,...]\n");
    return 2;
}
