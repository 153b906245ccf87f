/* test_daemon_ni.c: NI_POREP_SEAL_COMMIT (proof kind 101) through a real cuzk-daemon over gRPC:
 * the refusals (an interactive C1 sent as the NI kind, `aggregate` on another kind), a missing
 * inner-product SRS (FAILED at once naming the file and `cuzk-params srs`), and, with
 * CUZK_TEST_SLOW=1 (13 2 KiB partitions, minutes on 2 cores), the whole path: 13 partition
 * proofs each verified here with the fixture's key, and the aggregate verified here with
 * agg_verify against public inputs and the transcript include this test recomputes, with a
 * local inner-product SRS the test writes into the daemon's param_cache. */
#include "test.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(daemon_ni_needs_grpc) { test_skip("built with CUZK_CLIENT=0 (no gRPC): no daemon to test"); }
#else
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "cuzk/aggregate.h"
#include "cuzk/groth16.h"
#include "cuzk/v1/proving.pb-c.h"
#include "daemon_harness.h"
#include "synth_kit.h"
#include "filecoin/porep_fixture.h"

static const char *ni_cfg =
    "[daemon]\nlisten = \"unix://%DIR%/cuzk.sock\"\nshutdown_grace = \"60s\"\n"
    "[memory]\ntotal_budget = \"6GiB\"\n[gpus]\ngpu_workers_per_device = 2\n"
    "[pipeline]\nmax_parallel_synthesis = 2\n[srs]\nparam_cache = \"%DIR%\"\n";

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    ASSERT(f && fwrite(b, 1, n, f) == n && fclose(f) == 0);
}

/* One Prove of kind with the C1 wrapper c1 (sector 42, miner 1000, as fil_c1_generate made
 * it); aggregate: the field 102 flag. Returns the gRPC status. */
static int prove_c1(struct cz_client *c, const char *rid, int kind, bool aggregate, const char *c1,
                    size_t n, Cuzk__V1__ProveResponse **out, char *det)
{
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    q.request_id = (char *)rid;
    q.proof_kind = (Cuzk__V1__ProofKind)kind;
    q.sector_size = 2048;
    q.sector_number = 42;
    q.miner_id = 1000;
    q.vanilla_proof.data = (uint8_t *)c1;
    q.vanilla_proof.len = n;
    q.aggregate = aggregate;
    return cz_prove(c, &q, out, 1200000, det, 512);
}

/* A generated C1 of registered proof `name` as a wrapper (written to dir/file too). */
static char *c1_make(struct fil_c1 *c, const char *name, uint64_t seed, const char *dir,
                     const char *file, size_t *n)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    const struct fil_seal_proof *p = fil_seal_proof_by_name(name);
    ASSERT_MSG(p, "no registered proof %s", name);
    ASSERT_OK(fil_c1_generate(c, p, 1000, 42, seed, err), err);
    char *w;
    ASSERT_OK(fil_c1_write_wrapper(&w, n, c, err), err);
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    write_bytes(path, w, *n);
    return w;
}

/* Fast (no parameters needed: every refusal comes before any SRS is loaded). */
TEST_T(ni_porep_refusals_and_missing_srs, 300)
{
    struct daemon d;
    h_new(&d);
    h_start_or_fail(&d, ni_cfg, 30);
    struct cz_client *cl = connect_to(d.addr);
    char det[512];
    Cuzk__V1__ProveResponse *r = NULL;
    struct fil_c1 ci, cn;
    size_t ni_n, nn_n;
    char *inter = c1_make(&ci, "StackedDrg2KiBV1_1", test_seed(), d.dir, "inter.json", &ni_n);
    char *ni = c1_make(&cn, "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", test_seed() + 1, d.dir,
                       "ni.json", &nn_n);

    /* an interactive C1 as the NI kind: INVALID_ARGUMENT naming the field */
    ASSERT_EQ_INT(prove_c1(cl, "ni-inter", 101, true, inter, ni_n, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "Phase1Out.registered_proof is StackedDrg2KiBV1_1");
    ASSERT_STR_CONTAINS(det, "NonInteractivePoRep");
    ASSERT_EQ_INT(prove_c1(cl, "ni-inter-noagg", 101, false, inter, ni_n, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "Phase1Out.registered_proof");
    /* aggregate on another kind: INVALID_ARGUMENT naming the field */
    ASSERT_EQ_INT(prove_c1(cl, "porep-agg", 1, true, ni, nn_n, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "aggregate (field 102)");

    /* the aggregate asked for, no inner-product SRS in param_cache: FAILED at once (no
     * partition is proved for an answer that could never be given), naming the file */
    uint64_t t0 = cuzk_now_ns();
    ASSERT_EQ_INT(prove_c1(cl, "ni-no-srs", 101, true, ni, nn_n, &r, det), 0);
    ASSERT_MSG(r && r->result, "no result");
    ASSERT_EQ_INT(r->result->status, 2);
    ASSERT_STR_CONTAINS(r->result->error_message, AGG_SRS_V28_NAME);
    ASSERT_STR_CONTAINS(r->result->error_message, d.dir);
    ASSERT_STR_CONTAINS(r->result->error_message, "cuzk-params srs");
    ASSERT_EQ_U64(r->result->aggregate_proof.len, 0);
    ASSERT_MSG(cuzk_now_ns() - t0 < 20ull * 1000000000ull, "the refusal took %.1f s",
               (double)(cuzk_now_ns() - t0) / 1e9);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    cz_close(cl);

    /* the same through the CLI */
    char args[1200], *out = NULL;
    snprintf(args, sizeof args, "single -t ni-porep --c1 '%s/ni.json' --sector-num 42 --aggregate "
             "--request-id ni-cli-no-srs", d.dir);
    ASSERT(h_bench(&out, d.addr, args) != 0);
    ASSERT_STR_CONTAINS(out, "status:    FAILED");
    ASSERT_STR_CONTAINS(out, AGG_SRS_V28_NAME);
    free(out);
    snprintf(args, sizeof args, "single -t porep --c1 '%s/ni.json' --aggregate", d.dir);
    ASSERT_EQ_INT(h_bench(&out, d.addr, args), 2);
    ASSERT_STR_CONTAINS(out, "--aggregate and --aggregate-out are for -t ni-porep");
    free(out);
    snprintf(args, sizeof args, "single -t ni-porep --c1 '%s/inter.json' --sector-num 42", d.dir);
    ASSERT(h_bench(&out, d.addr, args) != 0);
    ASSERT_STR_CONTAINS(out, "INVALID_ARGUMENT");
    ASSERT_STR_CONTAINS(out, "Phase1Out.registered_proof");
    free(out);

    cuzk_free(inter);
    cuzk_free(ni);
    fil_c1_free(&ci);
    fil_c1_free(&cn);
    h_stop_and_clean(&d, 60);
}

/* The whole path (CUZK_TEST_SLOW=1: 13 2 KiB partitions). */
TEST_T(ni_porep_aggregate_through_daemon, 1800)
{
    const char *slow = getenv("CUZK_TEST_SLOW");
    if (!slow || strcmp(slow, "1"))
        test_skip("set CUZK_TEST_SLOW=1 (13 partitions of 2 KiB NI-PoRep, minutes on 2 cores)");
    porep_fixture_skip_if_slow();
    struct param_fixture fx;
    porep_fixture_get(&fx);
    struct cuzk_error err_s = {0}, *err = &err_s;
    struct daemon d;
    h_new(&d);
    char path[1200];
    h_link_params(d.dir, fx.stem, fx.params);
    /* a local inner-product SRS (16 proofs: 13 padded) under the v28 name */
    struct agg_srs srs;
    ASSERT_OK(agg_srs_generate(&srs, 16, test_seed(), NULL, err), err);
    snprintf(path, sizeof path, "%s/%s", d.dir, AGG_SRS_V28_NAME);
    ASSERT_OK(agg_srs_write(&srs, path, err), err);
    h_start_or_fail(&d, ni_cfg, 30);
    struct cz_client *cl = connect_to(d.addr);

    const char *name = "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep";
    const struct fil_seal_proof *pn = fil_seal_proof_by_name(name);
    struct fil_c1 c;
    size_t n;
    char *w = c1_make(&c, name, test_seed() + 2, d.dir, "ni.json", &n);
    char det[512];
    Cuzk__V1__ProveResponse *r = NULL;
    uint64_t t0 = cuzk_now_ns();
    ASSERT_EQ_INT(prove_c1(cl, "ni-agg", 101, true, w, n, &r, det), 0);
    ASSERT_MSG(r->result->status == 1, "status %d: %s", r->result->status, r->result->error_message);
    printf("NI-PoRep 2 KiB (13 partitions) + aggregate through the daemon: %.1f s\n",
           (double)(cuzk_now_ns() - t0) / 1e9);
    ASSERT_EQ_U64(r->result->proof.len, 13 * G16_PROOF_BYTES);
    ASSERT_EQ_U64(r->result->aggregate_proof.len, agg_proof_size(16));

    /* every partition proof, with the fixture's key and inputs recomputed here */
    struct g16_vk vk;
    ASSERT_OK(g16_vk_read(&vk, fx.vk, err), err);
    struct g16_pvk *pvk = g16_pvk_new(&vk, err);
    ASSERT_MSG(pvk, "%s", err->msg);
    size_t np = fil_porep_num_inputs(pn);
    fr_t *pub = malloc(13 * np * sizeof *pub);
    ASSERT(pub);
    struct g16_proof proof;
    for (unsigned k = 0; k < 13; k++) {
        ASSERT_OK(g16_proof_from_bytes(&proof, r->result->proof.data + k * G16_PROOF_BYTES, err), err);
        ASSERT_OK(fil_porep_public_inputs(pub + k * np, pn, c.replica_id, c.comm_d, c.comm_r, c.seed,
                                          k, err), err);
        ASSERT_OK(g16_verify(pvk, &proof, pub + k * np, np, err), err);
    }
    /* the aggregate, with our verifier: this test's SRS, inputs and include (SHA-256 of comm_r) */
    struct agg_proof *ap = malloc(sizeof *ap);
    ASSERT(ap);
    ASSERT_OK(agg_proof_from_bytes(ap, r->result->aggregate_proof.data, r->result->aggregate_proof.len,
                                   err), err);
    ASSERT_EQ_U64(ap->nproofs, 16);
    struct agg_verifier_srs vsrs;
    ASSERT_OK(agg_srs_specialize(NULL, &vsrs, &srs, 16, err), err);
    uint8_t inc[32];
    agg_seal_transcript_include(inc, (const uint8_t (*)[32])c.comm_r, NULL, 1);
    ASSERT_OK(agg_verify(&vk, &vsrs, pub, 13, np, ap, inc, 32, AGG_V2, 0, NULL, err), err);
    /* it is bound to this sector: another include, or another partition's inputs, refused */
    inc[0] ^= 1;
    ASSERT_CODE(agg_verify(&vk, &vsrs, pub, 13, np, ap, inc, 32, AGG_V2, 0, NULL, err),
                CUZK_E_VERIFY_FAILED, err);
    inc[0] ^= 1;
    fr_add(&pub[5 * np + 2], &pub[5 * np + 2], &FR_ONE);
    ASSERT_CODE(agg_verify(&vk, &vsrs, pub, 13, np, ap, inc, 32, AGG_V2, 0, NULL, err),
                CUZK_E_VERIFY_FAILED, err);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    char *log = h_slurp(d.err_path);
    ASSERT_STR_CONTAINS(log, "aggregate verified: job=\"ni-agg\" proofs=13 padded=16");
    const char *line = strstr(log, "aggregate verified: job=\"ni-agg\"");
    const char *eol = line ? strchr(line, '\n') : NULL;
    printf("daemon: %.*s\n", line ? (int)(eol ? eol - line : (long)strlen(line)) : 0, line ? line : "");
    free(log);
    cz_close(cl);

    /* the CLI on the same request id (the completed job is answered again, no new proving) */
    char args[4000], *out = NULL;
    snprintf(args, sizeof args, "single -t ni-porep --c1 '%s/ni.json' --sector-num 42 --aggregate "
             "--request-id ni-agg --aggregate-out '%s/agg.bin' --proof-out '%s/proofs.bin'",
             d.dir, d.dir, d.dir);
    ASSERT_EQ_INT(h_bench(&out, d.addr, args), 0);
    ASSERT_STR_CONTAINS(out, "status:    COMPLETED");
    ASSERT_STR_CONTAINS(out, "partitions: 13 proofs");
    ASSERT_STR_CONTAINS(out, "aggregate: ");
    ASSERT_STR_CONTAINS(out, "verified by the daemon");
    free(out);
    struct stat st;
    snprintf(path, sizeof path, "%s/agg.bin", d.dir);
    ASSERT(stat(path, &st) == 0 && (size_t)st.st_size == agg_proof_size(16));
    /* and apart from the daemon: cuzk-bench verify with the fixture's .vk and this SRS */
    snprintf(args, sizeof args, "verify --kind ni-porep --c1 '%s/ni.json' --vk '%s' --proof "
             "'%s/proofs.bin' --aggregate '%s/agg.bin' --srs '%s'", d.dir, fx.vk, d.dir, d.dir, d.dir);
    ASSERT_EQ_INT(h_bench(&out, d.addr, args), 0);
    ASSERT_STR_CONTAINS(out, "aggregate: ok");
    ASSERT_STR_CONTAINS(out, "verified: yes (13 of 13 partitions and the aggregate)");
    free(out);
    /* one byte of the aggregate's final C changed: refused (by parsing or by the equations) */
    FILE *f = fopen(path, "r+b");
    ASSERT(f && fseek(f, (long)st.st_size - 200, SEEK_SET) == 0);
    int ch = fgetc(f);
    ASSERT(ch != EOF && fseek(f, (long)st.st_size - 200, SEEK_SET) == 0 && fputc(ch ^ 0x01, f) != EOF);
    ASSERT(fclose(f) == 0);
    snprintf(args, sizeof args, "verify --kind ni-porep --c1 '%s/ni.json' --vk '%s' --aggregate "
             "'%s/agg.bin' --srs '%s'", d.dir, fx.vk, d.dir, d.dir);
    ASSERT_EQ_INT(h_bench(&out, d.addr, args), 1);
    ASSERT_STR_CONTAINS(out, "verified: no (the aggregate of 13 partitions)");
    free(out);

    free(ap);
    free(pub);
    g16_pvk_free(pvk);
    g16_vk_free(&vk);
    agg_srs_free(&srs);
    cuzk_free(w);
    fil_c1_free(&c);
    h_stop_and_clean(&d, 60);
}
#endif
