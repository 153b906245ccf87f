/* test_daemon_post.c: WindowPoSt and WinningPoSt through a real cuzk-daemon over gRPC (CPU
 * build): generated vanilla proofs (post_gen.h), parameters from a local setup this test makes
 * (so it holds the verifying keys), every returned proof verified here against public inputs
 * from fil_post_public_inputs (the verifier-side derivation, not the daemon's); malformed
 * requests refused at submit naming the field, a tampered sector failing in the synthesis
 * worker naming sector and challenge; `cuzk-bench single|batch -t wpost|winning` with the
 * gen-vanilla file; and priority: a WinningPoSt (CRITICAL by default) and a WindowPoSt (HIGH)
 * submitted behind 20 queued NORMAL partitions complete before that job. The queue filler is a
 * SYNTHETIC job of 20 partitions at NORMAL priority, PoRep's default: the scheduler orders by
 * priority alone, never by kind, and a synthetic partition costs a fraction of a 2 KiB PoRep
 * one (docs/decisions.md, "PoSt in the engine"). */
#include "test.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(daemon_post_needs_grpc) { test_skip("built with CUZK_CLIENT=0 (no gRPC): no daemon to test"); }
#else
#include <signal.h>
#include <unistd.h>

#include "client.h"
#include "cuzk/fil_circuit.h"
#include "cuzk/groth16.h"
#include "cuzk/post_gen.h"
#include "cuzk/v1/proving.pb-c.h"
#include "cuzk/vanilla.h"
#include "daemon_harness.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

/* A local setup of the kind's 2 KiB circuit written into dir as the daemon looks for it; the
 * prepared verifying key stays here. */
static struct g16_pvk *setup_into(const char *dir, enum fil_circuit_kind k)
{
    struct fil_circuit c;
    ASSERT_OK(fil_circuit_init(&c, k, 2048, E), E);
    char stem[256], path[800];
    ASSERT_OK(fil_circuit_param_stem(stem, sizeof stem, &c, E), E);
    struct g16_shape s;
    ASSERT_OK(fil_circuit_shape(&s, &c, pool_default(), E), E);
    struct g16_pk pk;
    ASSERT_OK(g16_setup(&pk, &s, test_rng(), pool_default(), E), E);
    snprintf(path, sizeof path, "%s/%s.params", dir, stem);
    ASSERT_OK(g16_params_write(&pk, path, E), E);
    snprintf(path, sizeof path, "%s/%s.vk", dir, stem);   /* for `cuzk-bench verify` */
    ASSERT_OK(g16_vk_write(&pk.vk, path, E), E);
    struct g16_pvk *pvk = g16_pvk_new(&pk.vk, E);
    ASSERT_MSG(pvk, "%s", E->msg);
    g16_pk_free(&pk);
    g16_shape_free(&s);
    return pvk;
}

struct req {
    int kind;
    uint64_t reg, sector_size;
    uint8_t rnd[32];
    size_t n;
    ProtobufCBinaryData *v;
    int priority;
    const char *rid;
};

static void req_from_gen(struct req *r, int kind, const struct fil_post_gen *g, const uint8_t rnd[32])
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->reg = g->proof->id;
    r->sector_size = g->proof->sector_size;
    memcpy(r->rnd, rnd, 32);
    r->n = g->n;
    r->v = calloc(g->n, sizeof *r->v);
    for (size_t i = 0; i < g->n; i++) {
        r->v[i].data = malloc(g->len);
        memcpy(r->v[i].data, g->blob[i], g->len);
        r->v[i].len = g->len;
    }
}

static void req_free(struct req *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->v[i].data);
    free(r->v);
}

static void fill(Cuzk__V1__SubmitProofRequest *q, const struct req *r)
{
    q->request_id = (char *)(r->rid ? r->rid : "");
    q->proof_kind = (Cuzk__V1__ProofKind)r->kind;
    q->registered_proof = r->reg;
    q->sector_size = r->sector_size;
    q->miner_id = 1000;
    q->randomness.data = (uint8_t *)r->rnd;
    q->randomness.len = 32;
    q->n_vanilla_proofs = r->n;
    q->vanilla_proofs = r->v;
    q->priority = (Cuzk__V1__Priority)r->priority;
}

static int prove(struct cz_client *c, const struct req *r, Cuzk__V1__ProveResponse **out, char *det)
{
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    fill(&q, r);
    return cz_prove(c, &q, out, 300000, det, 512);
}

static void submit(struct cz_client *c, const struct req *r)
{
    char det[512];
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    fill(&q, r);
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("SubmitProof"), &q.base, &cuzk__v1__submit_proof_response__descriptor, &m, 30000,
                     det, sizeof det);
    ASSERT_MSG(st == 0, "SubmitProof %s: %s", r->rid, det);
    protobuf_c_message_free_unpacked(m, NULL);
}

/* AwaitProof status (1 COMPLETED, 2 FAILED, 4 TIMEOUT); the proof copied out when asked. */
static int await_job(struct cz_client *c, const char *job, uint64_t timeout_ms, uint8_t proof[G16_PROOF_BYTES])
{
    char det[512];
    Cuzk__V1__AwaitProofRequest q = CUZK__V1__AWAIT_PROOF_REQUEST__INIT;
    q.job_id = (char *)job;
    q.timeout_ms = timeout_ms;
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("AwaitProof"), &q.base, &cuzk__v1__await_proof_response__descriptor, &m, 300000,
                     det, sizeof det);
    ASSERT_MSG(st == 0, "AwaitProof %s: %s", job, det);
    Cuzk__V1__AwaitProofResponse *a = (Cuzk__V1__AwaitProofResponse *)m;
    int s = a->status;
    if (s == 2) printf("%s FAILED: %s\n", job, a->error_message);
    if (proof && s == 1) {
        ASSERT_EQ_U64(a->proof.len, G16_PROOF_BYTES);
        memcpy(proof, a->proof.data, G16_PROOF_BYTES);
    }
    protobuf_c_message_free_unpacked(m, NULL);
    return s;
}

/* The proof must verify against the verifier's public inputs, and not against others. */
static void verify(const struct g16_pvk *pvk, const uint8_t *bytes, const struct fil_post_gen *g,
                   const uint8_t rnd[32])
{
    size_t ni = fil_post_num_inputs(g->proof);
    fr_t *pub = malloc(ni * sizeof *pub);
    uint8_t pid[32];
    fil_prover_id(pid, 1000);
    ASSERT_OK(fil_post_public_inputs(pub, g->proof, rnd, pid, g->sector_id, (const uint8_t(*)[32])g->comm_r, g->n, 0,
                                     E), E);
    struct g16_proof p;
    ASSERT_OK(g16_proof_from_bytes(&p, bytes, E), E);
    ASSERT_OK(g16_verify(pvk, &p, pub + 1, ni - 1, E), E);
    fr_add(&pub[2], &pub[2], &FR_ONE);
    ASSERT_CODE(g16_verify(pvk, &p, pub + 1, ni - 1, E), CUZK_E_VERIFY_FAILED, E);
    free(pub);
}

static void write_vanilla(const char *path, const struct fil_post_gen *g)
{
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fputc('[', f);
    for (size_t i = 0; i < g->n; i++) {
        size_t n;
        char *b = fil_base64_encode(g->blob[i], g->len, &n);
        ASSERT(b);
        fprintf(f, "%s\"%s\"", i ? "," : "", b);
        cuzk_free(b);
    }
    fputs("]\n", f);
    ASSERT(fclose(f) == 0);
}

struct env {
    struct daemon d;
    struct g16_pvk *pvk_window, *pvk_winning;
    uint8_t rnd[32];
    struct fil_post_gen gw, gn;
};

static void env_start(struct env *v, const char *extra)
{
    memset(v, 0, sizeof *v);
    h_new(&v->d);
    v->pvk_window = setup_into(v->d.dir, FIL_CIRCUIT_WINDOW_POST);
    v->pvk_winning = setup_into(v->d.dir, FIL_CIRCUIT_WINNING_POST);
    for (int i = 0; i < 32; i++) v->rnd[i] = (uint8_t)cuzk_rng_u64(test_rng());
    v->rnd[31] &= 0x3f;
    ASSERT_OK(fil_post_generate(&v->gw, fil_post_proof_by_id(10), v->rnd, 1000, 2, 0, test_seed(), NULL, E), E);
    ASSERT_OK(fil_post_generate(&v->gn, fil_post_proof_by_id(0), v->rnd, 1000, 10, 0, test_seed(), NULL, E), E);
    char cfg[1024];
    /* validation none: this test wrote the parameter files itself */
    snprintf(cfg, sizeof cfg,
             "[daemon]\nlisten = \"unix://%%DIR%%/cuzk.sock\"\nshutdown_grace = \"60s\"\n"
             "[memory]\ntotal_budget = \"4GiB\"\n[srs]\nparam_cache = \"%%DIR%%\"\nvalidation = \"none\"\n%s",
             extra ? extra : "");
    h_start_or_fail(&v->d, cfg, 30);
}

static void env_stop(struct env *v)
{
    h_stop_and_clean(&v->d, 60);
    g16_pvk_free(v->pvk_window);
    g16_pvk_free(v->pvk_winning);
    fil_post_gen_free(&v->gw);
    fil_post_gen_free(&v->gn);
}

TEST_T(window_and_winning_prove_through_daemon, 600)
{
    struct env v;
    env_start(&v, NULL);
    struct cz_client *c = NULL;
    ASSERT_OK(cz_connect(&c, v.d.addr, E), E);
    char det[512];
    Cuzk__V1__ProveResponse *r = NULL;
    struct req w, n;
    req_from_gen(&w, 3, &v.gw, v.rnd);
    req_from_gen(&n, 4, &v.gn, v.rnd);

    uint64_t t0 = cuzk_now_ns();
    ASSERT_EQ_INT(prove(c, &w, &r, det), 0);
    ASSERT_MSG(r->result->status == 1, "status %d: %s", r->result->status, r->result->error_message);
    printf("WindowPoSt 2 KiB through the daemon: %.1f s (synth %llu ms, prove %llu ms)\n",
           (double)(cuzk_now_ns() - t0) / 1e9, (unsigned long long)r->result->synthesis_ms,
           (unsigned long long)r->result->gpu_compute_ms);
    ASSERT_EQ_U64(r->result->proof.len, G16_PROOF_BYTES);
    verify(v.pvk_window, r->result->proof.data, &v.gw, v.rnd);
    protobuf_c_message_free_unpacked(&r->base, NULL);

    t0 = cuzk_now_ns();
    ASSERT_EQ_INT(prove(c, &n, &r, det), 0);
    ASSERT_MSG(r->result->status == 1, "status %d: %s", r->result->status, r->result->error_message);
    printf("WinningPoSt 2 KiB through the daemon: %.1f s (synth %llu ms, prove %llu ms)\n",
           (double)(cuzk_now_ns() - t0) / 1e9, (unsigned long long)r->result->synthesis_ms,
           (unsigned long long)r->result->gpu_compute_ms);
    verify(v.pvk_winning, r->result->proof.data, &v.gn, v.rnd);
    protobuf_c_message_free_unpacked(&r->base, NULL);

    /* malformed at submit: INVALID_ARGUMENT naming the field */
    struct req bad = w;
    bad.reg = 3;
    ASSERT_EQ_INT(prove(c, &bad, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "registered_proof 3 is StackedDrgWinning32GiBV1");
    bad = w;
    bad.sector_size = 32ull << 30;
    ASSERT_EQ_INT(prove(c, &bad, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "sector_size 34359738368 does not match registered_proof 10");
    bad = w;
    bad.rnd[31] |= 0xc0;
    ASSERT_EQ_INT(prove(c, &bad, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "randomness[31] &= 0x3f");
    bad = n;
    bad.n = 0;
    ASSERT_EQ_INT(prove(c, &bad, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "needs exactly 1 vanilla_proofs entry");
    bad = w;
    bad.v[1].len -= 5;      /* truncated: the parser names the field and the offset */
    ASSERT_EQ_INT(prove(c, &bad, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "vanilla_proofs[1]");
    ASSERT_STR_CONTAINS(det, "comm_r_last at byte 5648: truncated");
    bad.v[1].len += 5;
    ProtobufCBinaryData three[3] = {w.v[0], w.v[1], w.v[1]};
    bad.v = three;
    bad.n = 3;
    ASSERT_EQ_INT(prove(c, &bad, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "needs 1..2 vanilla_proofs");
    bad.n = 2;
    ProtobufCBinaryData sw[2] = {w.v[1], w.v[0]};
    bad.v = sw;
    ASSERT_EQ_INT(prove(c, &bad, &r, det), 3);
    ASSERT_STR_CONTAINS(det, "strictly ascending");

    /* well-formed but inconsistent: FAILED from the synthesis worker's native check, naming the
     * sector and the challenge (a leaf of sector 1's challenge 3 flipped) */
    size_t lvl = 16 + 32 * 7, i3 = 56 + 3 * (4 + 64 + 8 + 2 * lvl);
    w.v[1].data[i3 + 36] ^= 1;
    ASSERT_EQ_INT(prove(c, &w, &r, det), 0);
    ASSERT_EQ_INT(r->result->status, 2);
    ASSERT_STR_CONTAINS(r->result->error_message, "partition 0 synthesis failed");
    ASSERT_STR_CONTAINS(r->result->error_message, "(sector 1, id 2): challenge 3 (leaf");
    protobuf_c_message_free_unpacked(&r->base, NULL);
    w.v[1].data[i3 + 36] ^= 1;
    cz_close(c);

    /* the CLI: gen-vanilla files through single and batch */
    char path[600], args[4096], hex[65], *out = NULL;
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", v.rnd[i]);
    snprintf(path, sizeof path, "%s/wpost.json", v.d.dir);
    write_vanilla(path, &v.gw);
    snprintf(args, sizeof args, "single -t wpost --registered-proof 10 --vanilla '%s' --randomness %s "
             "--proof-out '%s/wpost.proof'", path, hex, v.d.dir);
    ASSERT_EQ_INT(h_bench(&out, v.d.addr, args), 0);
    ASSERT_STR_CONTAINS(out, "status:    COMPLETED");
    ASSERT_STR_CONTAINS(out, "proof:     192 bytes");
    free(out);
    /* the returned proof checked apart from the daemon (`cuzk-bench verify`, the verifier's
     * inputs from the file's sectors and the randomness); another randomness, the WinningPoSt
     * key and a cut proof must not pass */
    struct fil_circuit fc;
    char wstem[256], nstem[256];
    ASSERT_OK(fil_circuit_init(&fc, FIL_CIRCUIT_WINDOW_POST, 2048, E), E);
    ASSERT_OK(fil_circuit_param_stem(wstem, sizeof wstem, &fc, E), E);
    ASSERT_OK(fil_circuit_init(&fc, FIL_CIRCUIT_WINNING_POST, 2048, E), E);
    ASSERT_OK(fil_circuit_param_stem(nstem, sizeof nstem, &fc, E), E);
    const char *vks[3] = {wstem, wstem, nstem};
    for (int k = 0; k < 3; k++) {
        char rhex[65];
        memcpy(rhex, hex, sizeof rhex);
        if (k == 1) rhex[0] = rhex[0] == '0' ? '1' : '0';
        snprintf(args, sizeof args, "verify --kind window-post --vanilla '%s' --vk '%s/%s.vk' --proof '%s/wpost.proof' "
                 "--randomness %s", path, v.d.dir, vks[k], v.d.dir, rhex);
        ASSERT_EQ_INT(h_bench(&out, v.d.addr, args), k == 0 ? 0 : 1);
        ASSERT_STR_CONTAINS(out, k == 0 ? "verified: yes (StackedDrgWindow2KiBV1_1" : "verified: no");
        if (k == 2) ASSERT_STR_CONTAINS(out, "wrong number of public inputs");
        free(out);
    }
    char cut[700];
    snprintf(cut, sizeof cut, "%s/cut.proof", v.d.dir);
    FILE *cf = fopen(cut, "wb");
    ASSERT(cf && fwrite("abc", 1, 3, cf) == 3 && fclose(cf) == 0);
    snprintf(args, sizeof args, "verify --kind window-post --vanilla '%s' --vk '%s/%s.vk' --proof '%s' --randomness %s",
             path, v.d.dir, wstem, cut, hex);
    ASSERT_EQ_INT(h_bench(&out, v.d.addr, args), 1);
    ASSERT_STR_CONTAINS(out, "3 bytes, expected one 192-byte proof");
    free(out);
    snprintf(path, sizeof path, "%s/winning.json", v.d.dir);
    write_vanilla(path, &v.gn);
    snprintf(args, sizeof args, "batch -t winning-post --registered-proof 0 --vanilla '%s' --randomness %s -c 2 -j 2",
             path, hex);
    ASSERT_EQ_INT(h_bench(&out, v.d.addr, args), 0);
    ASSERT_STR_CONTAINS(out, "completed:     2");
    ASSERT_STR_CONTAINS(out, "failed:        0");
    free(out);
    ASSERT_EQ_INT(h_bench(&out, v.d.addr, "status"), 0);
    ASSERT_STR_CONTAINS(out, "wpost-2k");
    ASSERT_STR_CONTAINS(out, "winning-2k");
    free(out);
    /* and locally with cuzk-bench prove: the same files, the keys this test made and the
     * shapes the daemon cached beside them; defaults as gen-vanilla's but the randomness */
    const char *kinds[2] = {"window-post", "winning-post"}, *files[2] = {"wpost", "winning"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "prove --backend cpu --kind %s --vanilla '%s/%s.json' --params-dir '%s' "
                 "--randomness %s", kinds[i], v.d.dir, files[i], v.d.dir, hex);
        ASSERT_EQ_INT(h_bench(&out, v.d.addr, args), 0);
        ASSERT_STR_CONTAINS(out, "verified: yes");
        free(out);
    }
    /* another randomness: the native check refuses, nothing is proved. The first challenge it
     * names need not be 0: a 2 KiB sector has 64 leaves, so a new randomness keeps challenge
     * 0's leaf one time in 64 (CUZK_TEST_SEED=99679397648387 names challenge 1). */
    hex[0] = hex[0] == '0' ? '1' : '0';
    snprintf(args, sizeof args, "prove --kind window-post --vanilla '%s/wpost.json' --params-dir '%s' --randomness %s",
             v.d.dir, v.d.dir, hex);
    ASSERT_EQ_INT(h_bench(&out, v.d.addr, args), 1);
    ASSERT_STR_CONTAINS(out, "(sector 0, id 1): challenge ");
    ASSERT_STR_CONTAINS(out, "the path's indices give leaf");
    ASSERT_STR_CONTAINS(out, "verified: no");
    free(out);
    req_free(&w);
    req_free(&n);
    env_stop(&v);
}

/* A WinningPoSt and a WindowPoSt submitted behind a NORMAL job of 20 queued partitions are
 * synthesized and proved next: both complete while the filler job is still running. */
TEST_T(post_overtakes_a_queue_of_normal_partitions, 600)
{
    struct env v;
    env_start(&v, "[pipeline]\nmax_parallel_synthesis = 1\n");
    struct cz_client *c = NULL;
    ASSERT_OK(cz_connect(&c, v.d.addr, E), E);
    /* load both PoSt keys first, so the comparison is about the queue, not the SRS */
    const char *ids[2] = {"wpost-2k", "winning-2k"};
    for (int i = 0; i < 2; i++) {
        char det[512];
        Cuzk__V1__PreloadSrsRequest pq = CUZK__V1__PRELOAD_SRS_REQUEST__INIT;
        pq.circuit_id = (char *)ids[i];
        ProtobufCMessage *m = NULL;
        ASSERT_MSG(cz_call(c, CZ_METHOD("PreloadSRS"), &pq.base, &cuzk__v1__preload_srs_response__descriptor, &m,
                           120000, det, sizeof det) == 0, "PreloadSRS %s: %s", ids[i], det);
        protobuf_c_message_free_unpacked(m, NULL);
    }
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    q.request_id = (char *)"filler";
    q.proof_kind = CUZK__V1__PROOF_KIND__SYNTHETIC;
    q.synthetic_constraints = 32768;
    q.synthetic_partitions = 20;
    q.priority = CUZK__V1__PRIORITY__NORMAL;
    char det[512];
    ProtobufCMessage *m = NULL;
    ASSERT_EQ_INT(cz_call(c, CZ_METHOD("SubmitProof"), &q.base, &cuzk__v1__submit_proof_response__descriptor, &m,
                          30000, det, sizeof det), 0);
    protobuf_c_message_free_unpacked(m, NULL);
    /* priority 0: the kinds' defaults (Winning CRITICAL, Window HIGH) */
    struct req w, n;
    req_from_gen(&w, 3, &v.gw, v.rnd);
    req_from_gen(&n, 4, &v.gn, v.rnd);
    w.rid = "wpost";
    n.rid = "winning";
    submit(c, &n);
    submit(c, &w);
    uint8_t proof[G16_PROOF_BYTES];
    ASSERT_EQ_INT(await_job(c, "winning", 0, proof), 1);
    verify(v.pvk_winning, proof, &v.gn, v.rnd);
    ASSERT_EQ_INT(await_job(c, "wpost", 0, proof), 1);
    verify(v.pvk_window, proof, &v.gw, v.rnd);
    int st = await_job(c, "filler", 1, NULL);
    ASSERT_MSG(st == 4, "the NORMAL job finished before the PoSt jobs (status %d)", st);
    char *log = h_slurp(v.d.err_path);
    ASSERT_STR_CONTAINS(log, "kind=winning-post priority=4");
    ASSERT_STR_CONTAINS(log, "kind=window-post priority=3");
    free(log);
    /* the filler is not needed any more */
    Cuzk__V1__CancelProofRequest cq = CUZK__V1__CANCEL_PROOF_REQUEST__INIT;
    cq.job_id = (char *)"filler";
    ASSERT_EQ_INT(cz_call(c, CZ_METHOD("CancelProof"), &cq.base, &cuzk__v1__cancel_proof_response__descriptor, &m,
                          30000, det, sizeof det), 0);
    protobuf_c_message_free_unpacked(m, NULL);
    req_free(&w);
    req_free(&n);
    cz_close(c);
    env_stop(&v);
}
#endif
