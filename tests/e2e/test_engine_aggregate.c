/* test_engine_aggregate.c: the engine's SnarkPack step (src/engine/aggregate.c,
 * engine_aggregate_job) on proofs this test makes directly, fast enough for the default suite:
 * a job of 13 proofs of the synthetic circuit whose key the test wrote into param_cache (so
 * the engine's SRS entry holds the test's verifying key), a local inner-product SRS under the
 * v28 name there too. The aggregate comes back, verifies here with agg_verify, and is bound to
 * the include; a job whose recorded inputs are not the proofs' is refused (never answered); an
 * absent SRS is refused at submit's check and at aggregation, naming the file. The NI-PoRep
 * path through a daemon is tests/e2e/test_daemon_ni.c. */
#include "test.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(engine_aggregate_needs_server_lib) { test_skip("built with CUZK_CLIENT=0: no engine library"); }
#else
#include <unistd.h>

#include "../../src/engine/engine_internal.h"
#include "cuzk/aggregate.h"
#include "cuzk/circuits.h"
#include "cuzk/log.h"
#include "cuzk/util.h"

#define NPROOFS 13
#define NCONS 64

TEST_T(engine_aggregates_verifies_and_refuses, 300)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    char dir[256], path[600];
    snprintf(dir, sizeof dir, "/tmp/cuzk-agg-XXXXXX");
    ASSERT(mkdtemp(dir));
    clog_set_level(CLOG_WARN);

    /* the circuit synthetic-NCONS with the test's key, and 13 proofs of it */
    struct synth_params sp = {NCONS, 2, false};
    struct g16_shape shape;
    struct g16_pk pk;
    ASSERT_OK(synth_build_shape(&shape, &sp, err), err);
    ASSERT_OK(g16_setup(&pk, &shape, test_rng(), NULL, err), err);
    snprintf(path, sizeof path, "%s/synthetic-%d.params", dir, NCONS);
    ASSERT_OK(g16_params_write(&pk, path, err), err);
    size_t npub = shape.n_inputs - 1;
    fr_t *in = calloc(shape.n_inputs, sizeof *in), *aux = calloc(shape.n_aux + 1, sizeof *aux);
    fr_t *pub = calloc(NPROOFS * npub, sizeof *pub);
    uint8_t *bytes = calloc(NPROOFS, G16_PROOF_BYTES);
    ASSERT(in && aux && pub && bytes);
    for (size_t i = 0; i < NPROOFS; i++) {
        struct g16_assignment w = {in, aux};
        struct g16_proof p;
        ASSERT_OK(synth_witness(in, aux, &shape, &sp, 500 + i, err), err);
        ASSERT_OK(g16_prove(&p, &shape, &pk, &w, 1, NULL, NULL, NULL, NULL, NULL, err), err);
        g16_proof_to_bytes(bytes + i * G16_PROOF_BYTES, &p);
        memcpy(pub + i * npub, in + 1, npub * sizeof *pub);
    }

    struct engine_backend be;
    engine_backend_cpu(&be, "test");
    struct engine_config cfg;
    engine_config_defaults(&cfg);
    cfg.mem_auto = false;
    cfg.mem_budget = 1ull << 30;
    snprintf(cfg.param_cache, sizeof cfg.param_cache, "%s", dir);
    struct engine *e = engine_new(&cfg, &be, err);
    ASSERT_MSG(e, "engine_new: %s", err->msg);

    /* a job as the NI kind leaves it when its last partition verified */
    struct job j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "agg-test");
    snprintf(j.circuit_id, sizeof j.circuit_id, "synthetic-%d", NCONS);
    j.n_parts = NPROOFS;
    j.proof = bytes;
    j.aggregate = true;
    j.agg_pub = pub;
    j.agg_n_pub = npub;
    uint8_t comm_r[32];
    for (int i = 0; i < 32; i++) comm_r[i] = (uint8_t)(7 * i + 1);
    agg_seal_transcript_include(j.agg_include, (const uint8_t (*)[32])comm_r, NULL, 1);

    /* no SRS yet: refused at submit's check and at aggregation, naming the file */
    uint8_t *agg = NULL;
    size_t agg_len = 0;
    ASSERT_CODE(engine_aggregate_ready(e, err), CUZK_E_NOT_FOUND, err);
    ASSERT_STR_CONTAINS(err->msg, AGG_SRS_V28_NAME);
    ASSERT_STR_CONTAINS(err->msg, "cuzk-params srs");
    ASSERT_CODE(engine_aggregate_job(e, &j, &agg, &agg_len, err), CUZK_E_NOT_FOUND, err);
    ASSERT_STR_CONTAINS(err->msg, dir);
    ASSERT_STR_CONTAINS(err->msg, AGG_SRS_V28_NAME);
    ASSERT(!agg && !agg_len);

    struct agg_srs srs;
    ASSERT_OK(agg_srs_generate(&srs, 16, test_seed(), NULL, err), err);
    snprintf(path, sizeof path, "%s/%s", dir, AGG_SRS_V28_NAME);
    ASSERT_OK(agg_srs_write(&srs, path, err), err);
    ASSERT_OK(engine_aggregate_ready(e, err), err);
    uint64_t t0 = cuzk_now_ns();
    ASSERT_OK(engine_aggregate_job(e, &j, &agg, &agg_len, err), err);
    printf("engine aggregate of %d proofs (SRS load, prove, verify): %.0f ms\n", NPROOFS,
           (double)(cuzk_now_ns() - t0) / 1e6);
    ASSERT_EQ_U64(agg_len, agg_proof_size(16));

    /* our own check of the bytes: the test's key, inputs and include */
    struct agg_proof *ap = malloc(sizeof *ap);
    ASSERT(ap);
    ASSERT_OK(agg_proof_from_bytes(ap, agg, agg_len, err), err);
    struct agg_verifier_srs vs;
    ASSERT_OK(agg_srs_specialize(NULL, &vs, &srs, 16, err), err);
    ASSERT_OK(agg_verify(&pk.vk, &vs, pub, NPROOFS, npub, ap, j.agg_include, 32, AGG_V2, 0, NULL,
                         err), err);
    uint8_t other[32];
    memcpy(other, j.agg_include, 32);
    other[31] ^= 0x80;
    ASSERT_CODE(agg_verify(&pk.vk, &vs, pub, NPROOFS, npub, ap, other, 32, AGG_V2, 0, NULL, err),
                CUZK_E_VERIFY_FAILED, err);
    free(agg);
    agg = NULL;

    /* the SRS is cached: removing the file does not matter any more */
    ASSERT(unlink(path) == 0);
    ASSERT_OK(engine_aggregate_ready(e, err), err);

    /* recorded inputs that are not the proofs' (partition 4's): the aggregate does not verify
     * and is not answered */
    fr_add(&pub[4 * npub], &pub[4 * npub], &FR_ONE);
    ASSERT_CODE(engine_aggregate_job(e, &j, &agg, &agg_len, err), CUZK_E_VERIFY_FAILED, err);
    ASSERT_STR_CONTAINS(err->msg, "does not verify (not answered)");
    ASSERT(!agg && !agg_len);
    fr_sub(&pub[4 * npub], &pub[4 * npub], &FR_ONE);
    /* a proof that is not a valid encoding: refused naming the partition */
    bytes[2 * G16_PROOF_BYTES + 5] ^= 0x10;
    ASSERT(engine_aggregate_job(e, &j, &agg, &agg_len, err) != CUZK_OK);
    ASSERT_STR_CONTAINS(err->msg, "partition 2's proof");
    ASSERT(!agg);
    bytes[2 * G16_PROOF_BYTES + 5] ^= 0x10;
    ASSERT_OK(engine_aggregate_job(e, &j, &agg, &agg_len, err), err);
    free(agg);

    engine_shutdown(e, 1000);
    engine_free(e);
    free(ap);
    agg_srs_free(&srs);
    free(in);
    free(aux);
    free(pub);
    free(bytes);
    g16_pk_free(&pk);
    g16_shape_free(&shape);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    ASSERT(system(path) == 0);
}
#endif
