/* aggregate.c: the engine's SnarkPack step for jobs that ask for an aggregate (NI-PoRep C2,
 * kind_porep.c): once every partition is proved and verified, the prover worker that finished
 * the last one aggregates the partition proofs here, without the engine's lock, and verifies
 * the serialized aggregate with our own verifier before the job may answer it. The
 * inner-product SRS is read once from param_cache/v28-fil-inner-product-v1.srs and kept for
 * the engine's life. See docs/daemon.md ("NI_POREP_SEAL_COMMIT") and docs/decisions.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/aggregate.h"
#include "cuzk/log.h"
#include "cuzk/util.h"
#include "engine_internal.h"

/* The cached SRS, loading it on first use (agg_mu held only by loaders and users of the
 * pointer's first read; the SRS itself is read-only once published). */
static int agg_srs_get(struct engine *e, const struct agg_srs **out, struct cuzk_error *err)
{
    pthread_mutex_lock(&e->agg_mu);
    if (e->agg_srs) {
        *out = e->agg_srs;
        pthread_mutex_unlock(&e->agg_mu);
        return CUZK_OK;
    }
    struct agg_srs *srs = calloc(1, sizeof *srs);
    if (!srs) {
        pthread_mutex_unlock(&e->agg_mu);
        return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    }
    uint64_t t0 = cuzk_now_ns();
    struct cuzk_error lerr;
    cuzk_error_clear(&lerr);
    int rc = agg_srs_load_v28(srs, e->cfg.param_cache, NULL, &lerr);
    if (rc) {
        pthread_mutex_unlock(&e->agg_mu);
        agg_srs_free(srs);
        free(srs);
        /* not cached: the operator may add the file and retry */
        if (rc == CUZK_E_NOT_FOUND)
            return cuzk_fail(err, rc, "aggregation needs the inner-product SRS %s/%s, which is "
                             "missing ([srs] param_cache); install it with the Filecoin "
                             "parameters, or for tests make a local one (not for production) "
                             "with `cuzk-params srs --n N --out %s`", e->cfg.param_cache,
                             AGG_SRS_V28_NAME, e->cfg.param_cache);
        return cuzk_fail(err, rc, "reading the inner-product SRS %s/%s: %s", e->cfg.param_cache,
                         AGG_SRS_V28_NAME, lerr.msg);
    }
    cuzk_log(CLOG_INFO, "inner-product SRS loaded: path=%s/%s points=%zu load_ms=%" PRIu64,
             e->cfg.param_cache, AGG_SRS_V28_NAME, srs->n_g_alpha,
             (cuzk_now_ns() - t0) / 1000000);
    e->agg_srs = srs;
    *out = srs;
    pthread_mutex_unlock(&e->agg_mu);
    return CUZK_OK;
}

int engine_aggregate_ready(struct engine *e, struct cuzk_error *err)
{
    pthread_mutex_lock(&e->agg_mu);
    bool have = e->agg_srs != NULL;
    pthread_mutex_unlock(&e->agg_mu);
    char path[ENGINE_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", e->cfg.param_cache, AGG_SRS_V28_NAME);
    if (have || access(path, R_OK) == 0) return CUZK_OK;
    return cuzk_fail(err, CUZK_E_NOT_FOUND, "aggregation needs the inner-product SRS %s, which is "
                     "missing or unreadable ([srs] param_cache); install it with the Filecoin "
                     "parameters, or for tests make a local one (not for production) with "
                     "`cuzk-params srs --n N --out %s`", path, e->cfg.param_cache);
}

void engine_aggregate_free(struct engine *e)
{
    if (e->agg_srs) {
        agg_srs_free(e->agg_srs);
        free(e->agg_srs);
        e->agg_srs = NULL;
    }
}

int engine_aggregate_job(struct engine *e, const struct job *j, uint8_t **out, size_t *out_len,
                         struct cuzk_error *err)
{
    *out = NULL;
    *out_len = 0;
    size_t n = j->n_parts, target = agg_target_len(n);
    if (!n || !target || !j->agg_pub || !j->agg_n_pub || !j->proof)
        return cuzk_fail(err, CUZK_E_INTERNAL, "aggregation: job %s has no proofs or public "
                         "inputs to aggregate", j->id);
    const struct agg_srs *srs = NULL;
    int rc = agg_srs_get(e, &srs, err);
    if (rc) return rc;

    struct g16_proof *proofs = calloc(n, sizeof *proofs);
    struct agg_proof *ap = calloc(1, sizeof *ap), *back = calloc(1, sizeof *back);
    struct agg_prover_srs pk;
    struct agg_verifier_srs vk;
    memset(&pk, 0, sizeof pk);
    uint8_t *bytes = NULL;
    struct srs_entry *s = NULL;
    if (!proofs || !ap || !back) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n && !rc; i++)
        if ((rc = g16_proof_from_bytes(&proofs[i], j->proof + i * G16_PROOF_BYTES, err)))
            cuzk_fail_prefix(err, rc, "aggregation: partition %zu's proof", i);
    if (rc) goto out;
    if ((rc = agg_srs_specialize(&pk, &vk, srs, target, err))) {
        cuzk_fail_prefix(err, rc, "aggregation of %zu proofs with %s/%s", n, e->cfg.param_cache,
                         AGG_SRS_V28_NAME);
        goto out;
    }
    uint64_t t0 = cuzk_now_ns();
    rc = agg_prove(ap, &pk, proofs, n, j->agg_include, 32, AGG_V2, NULL, err);
    if (rc) {
        cuzk_fail_prefix(err, rc, "aggregation");
        goto out;
    }
    size_t len = agg_proof_size(ap->nproofs);
    bytes = malloc(len);
    if (!bytes) {
        rc = cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = agg_proof_to_bytes(bytes, ap, err))) goto out;
    uint64_t t1 = cuzk_now_ns();
    /* verify the very bytes that will be answered, against the job's recomputed inputs and
     * the circuit's verifying key (the SRS entry's; acquired again: the partitions released
     * theirs) */
    uint64_t waited = 0;
    if ((rc = srs_acquire(e, j->circuit_id, j->priority, &s, &waited, NULL, err))) {
        cuzk_fail_prefix(err, rc, "aggregate verification: SRS %s", j->circuit_id);
        goto out;
    }
    if ((rc = agg_proof_from_bytes(back, bytes, len, err))) {
        cuzk_fail_prefix(err, rc, "aggregate verification");
        goto out;
    }
    rc = agg_verify(&s->pk.vk, &vk, j->agg_pub, n, j->agg_n_pub, back, j->agg_include, 32, AGG_V2,
                    0, NULL, err);
    if (rc) {
        cuzk_fail_prefix(err, rc, "the aggregate of %zu partition proofs does not verify "
                         "(not answered)", n);
        goto out;
    }
    cuzk_log(CLOG_INFO, "aggregate verified: job=%s proofs=%zu padded=%zu bytes=%zu prove_ms=%"
             PRIu64 " verify_ms=%" PRIu64, CLOG_ID(j->id), n, target, len, (t1 - t0) / 1000000,
             (cuzk_now_ns() - t1) / 1000000);
    *out = bytes;
    *out_len = len;
    bytes = NULL;
out:
    if (s) srs_release(e, s);
    agg_prover_srs_free(&pk);
    free(bytes);
    free(ap);
    free(back);
    free(proofs);
    return rc;
}
