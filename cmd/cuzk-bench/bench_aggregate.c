/* bench_aggregate.c: `cuzk-bench aggregate --n N [--threads T] [--reps R] [--v1]
 * [--srs-dir DIR]`: SnarkPack aggregation of N Groth16 proofs on the CPU. The proofs are real
 * (a 60-constraint synthetic circuit with 3 public inputs, one instance per proof) so the
 * verifier runs its full check; aggregation cost does not depend on the circuit. The SRS is
 * DIR/v28-fil-inner-product-v1.srs when given and present, else a local one (NOT for
 * production). Prints the setup steps, then "prove N: median ms" and "verify N: median ms"
 * over R runs, and the aggregate's size. See docs/performance.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cuzk/aggregate.h"
#include "cuzk/circuits.h"
#include "cuzk/util.h"

static double ms_since(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e6; }

static int make_proofs(struct g16_proof *proofs, fr_t *pub, size_t n, struct g16_pk *pk,
                       struct cuzk_error *err)
{
    struct synth_params sp = {60, 3, false};
    struct g16_shape s;
    int rc = synth_build_shape(&s, &sp, err);
    if (rc) return rc;
    cuzk_rng rng;
    cuzk_rng_seed(&rng, 1);
    if ((rc = g16_setup(pk, &s, &rng, NULL, err))) goto out;
    fr_t *in = calloc(s.n_inputs, sizeof(fr_t)), *aux = calloc(s.n_aux + 1, sizeof(fr_t));
    if (!in || !aux) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "aggregate: out of memory");
    } else {
        for (size_t i = 0; i < n && !rc; i++) {
            struct g16_assignment w = {in, aux};
            if ((rc = synth_witness(in, aux, &s, &sp, 1000 + i, err))) break;
            rc = g16_prove(&proofs[i], &s, pk, &w, 1, NULL, NULL, NULL, NULL, NULL, err);
            memcpy(pub + 3 * i, in + 1, 3 * sizeof(fr_t));
        }
    }
    free(in);
    free(aux);
out:
    g16_shape_free(&s);
    return rc;
}

BENCH_CMD(aggregate, "aggregate",
          "aggregate --n N [--threads T] [--reps R] [--v1] [--srs-dir DIR]: SnarkPack "
          "prove/verify of N proofs on the CPU")
{
    size_t n = 0, reps = 3;
    unsigned threads = 0;
    enum agg_version ver = AGG_V2;
    const char *srs_dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t x;
        if (!strcmp(o, "--v1")) {
            ver = AGG_V1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "aggregate: %s needs a value\n", o);
            return 2;
        }
        if (!strcmp(o, "--srs-dir")) {
            srs_dir = v;
        } else if (!bench_parse_u64(&x, v)) {
            fprintf(stderr, "aggregate: %s: '%s' is not a number\n", o, v);
            return 2;
        } else if (!strcmp(o, "--n")) {
            n = (size_t)x;
        } else if (!strcmp(o, "--threads")) {
            threads = (unsigned)x;
        } else if (!strcmp(o, "--reps")) {
            reps = x ? (size_t)x : 1;
        } else {
            fprintf(stderr, "aggregate: unknown option %s\n", o);
            return 2;
        }
        i++;
    }
    size_t target = agg_target_len(n);
    if (!target || reps > 100) {
        fprintf(stderr, "usage: cuzk-bench aggregate --n N (1 .. 2^20) [--threads T] [--reps R <= 100] "
                        "[--v1] [--srs-dir DIR]\n");
        return 2;
    }
    struct cuzk_error err;
    struct pool *pool = NULL;
    if (threads && !(pool = pool_new(threads, &err))) {
        fprintf(stderr, "aggregate: %s\n", err.msg);
        return 1;
    }
    struct g16_proof *proofs = calloc(n, sizeof *proofs);
    fr_t *pub = calloc(3 * n, sizeof(fr_t));
    struct agg_proof *p = malloc(sizeof *p);
    uint8_t *bytes = malloc(agg_proof_size((uint32_t)target));
    double *pt = calloc(reps, sizeof(double)), *vt = calloc(reps, sizeof(double));
    struct g16_pk pk = {0};
    struct agg_srs srs = {0};
    struct agg_prover_srs psrs = {0};
    struct agg_verifier_srs vsrs;
    int rc = CUZK_OK;
    if (!proofs || !pub || !p || !bytes || !pt || !vt) {
        rc = cuzk_fail(&err, CUZK_E_NOMEM, "out of memory");
        goto out;
    }
    printf("aggregate: %zu proofs (padded to %zu), SnarkPack %s, %u threads\n", n, target,
           ver == AGG_V2 ? "v2" : "v1", pool_size(pool ? pool : pool_default()));
    uint64_t t0 = cuzk_now_ns();
    if ((rc = make_proofs(proofs, pub, n, &pk, &err))) goto out;
    printf("groth16 proofs: %.1f ms\n", ms_since(t0));
    t0 = cuzk_now_ns();
    rc = srs_dir ? agg_srs_load_v28(&srs, srs_dir, pool, &err) : CUZK_E_NOT_FOUND;
    if (rc == CUZK_OK) {
        printf("srs: %s/%s loaded in %.1f ms\n", srs_dir, AGG_SRS_V28_NAME, ms_since(t0));
    } else if (rc == CUZK_E_NOT_FOUND) {
        if ((rc = agg_srs_generate(&srs, target, 1, pool, &err))) goto out;
        printf("srs: local (NOT for production), %zu powers, %.1f ms\n", 2 * target,
               ms_since(t0));
    } else {
        goto out;
    }
    if ((rc = agg_srs_specialize(&psrs, &vsrs, &srs, target, &err))) goto out;
    const uint8_t include[32] = {0x26};
    for (size_t r = 0; r < reps; r++) {
        t0 = cuzk_now_ns();
        if ((rc = agg_prove(p, &psrs, proofs, n, include, sizeof include, ver, pool, &err)))
            goto out;
        pt[r] = ms_since(t0);
        if ((rc = agg_proof_to_bytes(bytes, p, &err))) goto out;
        t0 = cuzk_now_ns();
        if ((rc = agg_proof_from_bytes(p, bytes, agg_proof_size(p->nproofs), &err)) ||
            (rc = agg_verify(&pk.vk, &vsrs, pub, n, 3, p, include, sizeof include, ver, 0, pool,
                             &err)))
            goto out;
        vt[r] = ms_since(t0);
    }
    printf("prove %zu: %.1f ms (median of %zu)\n", n, bench_median(pt, reps), reps);
    printf("verify %zu: %.1f ms (median of %zu, parse included)\n", n, bench_median(vt, reps),
           reps);
    printf("aggregate size: %zu bytes\n", agg_proof_size(p->nproofs));
out:
    if (rc) fprintf(stderr, "aggregate: %s: %s\n", cuzk_errname(rc), err.msg);
    agg_prover_srs_free(&psrs);
    agg_srs_free(&srs);
    g16_pk_free(&pk);
    free(proofs);
    free(pub);
    free(p);
    free(bytes);
    free(pt);
    free(vt);
    if (pool) pool_free(pool);
    return rc ? 1 : 0;
}
