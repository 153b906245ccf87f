/* test_porep_kinds.c: Synthetic PoRep (…V1_1_Feat_SyntheticPoRep) and NI-PoRep
 * (…V1_2_Feat_NonInteractivePoRep) end to end on the CPU, aggregation aside:
 *  - the synthetic challenge derivation against upstream's hard-coded vectors
 *    (challenges.rs, test_synth_challenges_against_hardcoded);
 *  - the 32 GiB synthetic public inputs of one partition against a second, straightforward
 *    implementation written here (OpenSSL ChaCha20 over contiguous keystream ranges, GMP for
 *    the reduction, its own selection indexing);
 *  - generated 2 KiB synthetic / NI C1 outputs: JSON round trip, every partition's witness
 *    satisfies the 2 KiB shape with the recomputed public inputs, the synthetic partition and
 *    an NI partition proved and verified (every NI partition with CUZK_TEST_SLOW=1);
 *  - a C1 whose vanilla proofs belong to other challenges (another seed, swapped proofs,
 *    another partition's proofs) refused by fil_c1_check_challenges naming the partition and
 *    the challenge, and by `cuzk-bench prove` before any proof.
 * The 2 KiB parameters are porep_fixture.h's (shared with test_porep_proof / test_daemon). */
#include <gmp.h>
#include <openssl/evp.h>

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/util.h"
#include "filecoin/porep_fixture.h"
#include "test.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

static bool slow(void)
{
    const char *s = getenv("CUZK_TEST_SLOW");
    return s && !strcmp(s, "1");
}

static double secs(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e9; }

static const struct fil_seal_proof *proof_of(uint64_t size, enum fil_porep_kind kind)
{
    for (size_t i = 0; i < fil_seal_proof_count(); i++) {
        const struct fil_seal_proof *p = fil_seal_proof_at(i);
        if (p->sector_size == size && p->kind == kind) return p;
    }
    test_fail_at(__FILE__, __LINE__, "no proof of size %llu kind %d", (unsigned long long)size, (int)kind);
    return NULL;
}

/* ------------------------------------------------------------ upstream KAT -- */

TEST(synth_challenges_upstream_vectors)
{
    /* SynthChallenges::new(2^10 nodes, replica_id = Fr(55), comm_r = Fr(101), 21 synthetic),
     * porep challenges for rand = [1; 32]: upstream's hard-coded expectations */
    static const uint64_t want_synth[21] = {178, 297, 869, 211, 875, 477, 94, 781, 124, 332, 856,
                                            801, 176, 692, 429, 691, 290, 204, 986, 210, 973};
    static const uint64_t want_porep[10] = {176, 781, 801, 986, 290, 211, 692, 856, 986, 332};
    uint8_t rid[32] = {55}, comm_r[32] = {101}, rand[32];
    memset(rand, 1, 32);
    for (uint64_t i = 0; i < 21; i++) ASSERT_EQ_U64(fil_synth_challenge(1024, rid, comm_r, i), want_synth[i]);
    uint64_t idx[10];
    fil_synth_indexes(idx, 10, 21, rid, rand, 0);
    for (int i = 0; i < 10; i++) ASSERT_EQ_U64(fil_synth_challenge(1024, rid, comm_r, idx[i]), want_porep[i]);
    /* partition k starts at index k * n of the same selection stream (any block alignment) */
    uint64_t part[3];
    fil_synth_indexes(part, 3, 21, rid, rand, 7);
    ASSERT_MEM_EQ(part, idx + 7, sizeof part);
    ASSERT_EQ_U64(fil_synth_count(1u << 30), 1u << 18);
    ASSERT_EQ_U64(fil_synth_count(64), 64);
}

/* ------------------------------------- 32 GiB inputs, a second implementation -- */

/* bytes [off, off + n) of the IETF ChaCha20 keystream (nonce "synth-porep\0"), by OpenSSL */
static void ks_range(uint8_t *out, const uint8_t key[32], uint64_t off, size_t n)
{
    uint64_t first = off / 64, last = (off + n + 63) / 64;
    size_t len = (size_t)(last - first) * 64;
    uint8_t *zero = calloc(1, len), *ks = malloc(len), iv[16];
    ASSERT(zero && ks);
    for (int i = 0; i < 4; i++) iv[i] = (uint8_t)(first >> (8 * i));
    memcpy(iv + 4, "synth-porep", 12);     /* 11 characters and the NUL */
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int got;
    ASSERT(EVP_EncryptInit_ex(ctx, EVP_chacha20(), NULL, key, iv) == 1);
    ASSERT(EVP_EncryptUpdate(ctx, ks, &got, zero, (int)len) == 1);
    EVP_CIPHER_CTX_free(ctx);
    memcpy(out, ks + (off - first * 64), n);
    free(zero);
    free(ks);
}

/* The partition's challenges as FIP-0059 describes them: the whole selection prefix up to the
 * partition's end as one byte string, u32 LE index j at byte 4 j; each synthetic challenge
 * the 32 keystream bytes at 32 * index, reduced mod (nodes - 1), plus 1, with GMP. */
static void oracle_synth(uint64_t *out, uint64_t nodes, unsigned per_part, unsigned k, const uint8_t rid[32],
                         const uint8_t comm_r[32], const uint8_t seed[32])
{
    uint8_t msg[64], kgen[32], ksel[32];
    memcpy(msg, rid, 32);
    memcpy(msg + 32, comm_r, 32);
    static const char GEN[] = "filecoin.io|PoRep|1|Synthetic|1|Generation";
    static const char SEL[] = "filecoin.io|PoRep|1|Synthetic|1|Selection";
    fil_blake2b(kgen, 32, GEN, strlen(GEN), msg, 64);
    memcpy(msg + 32, seed, 32);
    fil_blake2b(ksel, 32, SEL, strlen(SEL), msg, 64);
    size_t sel_len = 4 * (size_t)per_part * (k + 1);
    uint8_t *sel = malloc(sel_len);
    ks_range(sel, ksel, 0, sel_len);
    uint64_t num_synth = nodes < 262144 ? nodes : 262144;
    for (unsigned i = 0; i < per_part; i++) {
        const uint8_t *b = sel + 4 * ((size_t)per_part * k + i);
        uint64_t index = ((uint64_t)b[3] << 24 | (uint64_t)b[2] << 16 | (uint64_t)b[1] << 8 | b[0]) % num_synth;
        uint8_t x[32];
        ks_range(x, kgen, 32 * index, 32);
        mpz_t z;
        mpz_init(z);
        mpz_import(z, 32, -1, 1, 0, 0, x);
        out[i] = mpz_fdiv_ui(z, nodes - 1) + 1;
        mpz_clear(z);
    }
    free(sel);
}

TEST(synth_32g_public_inputs_match_second_implementation)
{
    const struct fil_seal_proof *p = proof_of(32ull << 30, FIL_POREP_SYNTHETIC);
    ASSERT_EQ_U64(p->partitions, 10);
    ASSERT_EQ_U64(p->challenges, 18);
    uint8_t rid[32], comm_d[32], comm_r[32], seed[32];
    cuzk_rng_bytes(test_rng(), rid, 32);
    cuzk_rng_bytes(test_rng(), comm_d, 32);
    cuzk_rng_bytes(test_rng(), comm_r, 32);
    cuzk_rng_bytes(test_rng(), seed, 32);
    rid[31] &= 0x3f;
    comm_d[31] &= 0x3f;
    comm_r[31] &= 0x3f;
    size_t ni = fil_porep_num_inputs(p);
    ASSERT_EQ_U64(ni, 3 + 18 * 18);
    fr_t *got = malloc(ni * sizeof *got), *want = malloc(ni * sizeof *want);
    struct fil_graph g;
    fil_graph_init(&g, p);
    unsigned parts[] = {0, 7, 9};   /* 7: its selection indices straddle a 64-byte block */
    for (size_t t = 0; t < 3; t++) {
        unsigned k = parts[t];
        ASSERT_OK(fil_porep_public_inputs(got, p, rid, comm_d, comm_r, seed, k, E), E);
        uint64_t ch[18];
        oracle_synth(ch, 1ull << 30, 18, k, rid, comm_r, seed);
        /* StackedCompound::generate_public_inputs: replica_id, comm_d, comm_r, then per
         * challenge: the tree-D index, 6 DRG + 8 expander parents, the challenge as a number,
         * the tree-R index and the c_x tree-C index */
        fr_t *o = want;
        ASSERT(!fr_from_bytes_le(o++, rid));
        ASSERT(!fr_from_bytes_le(o++, comm_d));
        ASSERT(!fr_from_bytes_le(o++, comm_r));
        for (int i = 0; i < 18; i++) {
            uint32_t par[14];
            fil_graph_drg_parents(&g, (uint32_t)ch[i], par);
            fil_graph_exp_parents(&g, (uint32_t)ch[i], par + 6);
            fr_from_u64(o++, ch[i]);
            for (int j = 0; j < 14; j++) fr_from_u64(o++, par[j]);
            for (int j = 0; j < 3; j++) fr_from_u64(o++, ch[i]);
        }
        ASSERT_EQ_U64((size_t)(o - want), ni);
        for (size_t i = 0; i < ni; i++)
            ASSERT_MSG(fr_eq(&got[i], &want[i]), "partition %u: public input %zu differs", k, i);
        /* the seed selects: another seed, other inputs */
        seed[0] ^= 1;
        ASSERT_OK(fil_porep_public_inputs(got, p, rid, comm_d, comm_r, seed, k, E), E);
        seed[0] ^= 1;
        bool same = true;
        for (size_t i = 3; i < ni; i++) same = same && fr_eq(&got[i], &want[i]);
        ASSERT_MSG(!same, "partition %u: the seed changed nothing", k);
    }
    free(got);
    free(want);
}

/* -------------------------------------------------- generated C1 outputs -- */

/* c, written as the wrapper JSON and parsed back */
static void round_trip(struct fil_c1 *back, const struct fil_c1 *c)
{
    char *js;
    size_t n;
    ASSERT_OK(fil_c1_write_wrapper(&js, &n, c, E), E);
    ASSERT_OK(fil_c1_parse_wrapper(back, js, n, E), E);
    ASSERT(back->proof == c->proof);
    ASSERT_EQ_U64(back->partitions, c->partitions);
    ASSERT_MEM_EQ(back->comm_r, c->comm_r, 32);
    ASSERT_MEM_EQ(back->seed, c->seed, 32);
    ASSERT_MEM_EQ(back->vp, c->vp, (size_t)c->partitions * c->challenges * sizeof *c->vp);
    cuzk_free(js);
}

static void load_shape(struct g16_shape *s, const struct param_fixture *fx)
{
    ASSERT_OK(g16_shape_load(s, fx->shape, E), E);
}

/* Partition k: the witness's public inputs equal the recomputed ones and the shape holds. */
static void check_partition(const struct g16_shape *s, const struct fil_c1 *c, unsigned k)
{
    fr_t *in, *aux;
    uint32_t n_in, n_aux;
    ASSERT_OK(fil_porep_witness_values(&in, &aux, &n_in, &n_aux, c, k, E), E);
    ASSERT_EQ_U64(n_in, s->n_inputs);
    size_t ni = fil_porep_num_inputs(c->proof);
    fr_t *pub = malloc(ni * sizeof *pub);
    ASSERT_OK(fil_porep_public_inputs(pub, c->proof, c->replica_id, c->comm_d, c->comm_r, c->seed, k, E), E);
    for (size_t i = 0; i < ni; i++) ASSERT_MSG(fr_eq(&pub[i], &in[1 + i]), "partition %u: input %zu", k, i);
    struct g16_assignment a = {in, aux};
    ASSERT_OK(g16_check(s, &a, pool_default(), E), E);
    free(pub);
    cuzk_free(in);
    cuzk_free(aux);
}

/* Prove partition k with the fixture's key and verify against recomputed inputs; the
 * interactive rule's inputs for the same commitments must not verify. */
struct keys {
    struct g16_pk pk;
    struct g16_shape s;
    struct g16_pvk *pvk;
};

static void keys_load(struct keys *K, const struct param_fixture *fx)
{
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_NONE, .use_cache = false, .progress = 0};
    ASSERT_OK(g16_params_read_ex(&K->pk, fx->params, &o, pool_default(), NULL, E), E);
    load_shape(&K->s, fx);
    K->pvk = g16_pvk_new(&K->pk.vk, E);
    ASSERT_MSG(K->pvk, "%s", E->msg);
}

static void keys_free(struct keys *K)
{
    g16_pvk_free(K->pvk);
    g16_pk_free(&K->pk);
    g16_shape_free(&K->s);
}

static void prove_verify(const struct keys *K, const struct fil_c1 *c, unsigned k)
{
    fr_t *in, *aux;
    uint32_t n_in, n_aux;
    uint64_t t0 = cuzk_now_ns();
    ASSERT_OK(fil_porep_witness_values(&in, &aux, &n_in, &n_aux, c, k, E), E);
    struct g16_assignment w = {in, aux};
    struct g16_proof proof, back;
    ASSERT_OK(g16_prove(&proof, &K->s, &K->pk, &w, 1, NULL, NULL, NULL, NULL, NULL, E), E);
    uint8_t bytes[G16_PROOF_BYTES];
    g16_proof_to_bytes(bytes, &proof);
    ASSERT_OK(g16_proof_from_bytes(&back, bytes, E), E);
    size_t ni = fil_porep_num_inputs(c->proof);
    fr_t *pub = malloc(ni * sizeof *pub);
    ASSERT_OK(fil_porep_public_inputs(pub, c->proof, c->replica_id, c->comm_d, c->comm_r, c->seed, k, E), E);
    ASSERT_OK(g16_verify(K->pvk, &back, pub, ni, E), E);
    /* the same commitments under the interactive rule: other challenges, no verification */
    const struct fil_seal_proof *inter = fil_seal_proof_default(c->proof->sector_size);
    ASSERT_OK(fil_porep_public_inputs(pub, inter, c->replica_id, c->comm_d, c->comm_r, c->seed, 0, E), E);
    ASSERT_CODE(g16_verify(K->pvk, &back, pub, ni, E), CUZK_E_VERIFY_FAILED, E);
    printf("%s partition %u: proved and verified in %.1f s\n", c->proof->name, k, secs(t0));
    free(pub);
    cuzk_free(in);
    cuzk_free(aux);
}

/* One key load for both kinds (reading the 2 KiB parameters is ~5 s). Synthetic: its one
 * partition proved and verified. NI: all 13 partitions' witnesses checked against the shape
 * with CUZK_TEST_SLOW=1 (0, 6 and 12 otherwise, ~0.6 s each) and the last one proved (its
 * challenges are 24 and 25 of the stream); every partition proved with CUZK_TEST_SLOW=1
 * (~15-20 s each on 2 cores). */
TEST_T(synthetic_and_ni_2k_prove_verify, 1800)
{
    porep_fixture_skip_if_slow();
    struct param_fixture fx;
    porep_fixture_get(&fx);
    struct keys K;
    keys_load(&K, &fx);

    struct fil_c1 c0, c;
    uint64_t t0 = cuzk_now_ns();
    ASSERT_OK(fil_c1_generate(&c0, proof_of(2048, FIL_POREP_SYNTHETIC), 1000, 42, test_seed(), E), E);
    printf("2 KiB synthetic C1 generated in %.3f s\n", secs(t0));
    round_trip(&c, &c0);
    fil_c1_free(&c0);
    ASSERT_EQ_U64(c.partitions, 1);
    ASSERT_OK(fil_c1_check_challenges(&c, E), E);
    check_partition(&K.s, &c, 0);
    prove_verify(&K, &c, 0);
    fil_c1_free(&c);

    const struct fil_seal_proof *p = proof_of(2048, FIL_POREP_NI);
    ASSERT_EQ_U64(p->partitions, 13);
    ASSERT_OK(fil_c1_generate(&c0, p, 1000, 43, test_seed(), E), E);
    round_trip(&c, &c0);
    fil_c1_free(&c0);
    ASSERT_EQ_U64(c.partitions, 13);
    ASSERT_OK(fil_c1_check_challenges(&c, E), E);
    /* NI ignores the seed: another seed changes nothing */
    c.seed[0] ^= 1;
    ASSERT_OK(fil_c1_check_challenges(&c, E), E);
    c.seed[0] ^= 1;
    t0 = cuzk_now_ns();
    for (unsigned k = 0; k < c.partitions; k += slow() ? 1 : 6) check_partition(&K.s, &c, k);
    printf("NI partitions satisfy the 2 KiB shape: %.1f s\n", secs(t0));
    for (unsigned k = slow() ? 0 : c.partitions - 1; k < c.partitions; k++) prove_verify(&K, &c, k);
    fil_c1_free(&c);
    keys_free(&K);
}

/* Every way of pairing vanilla proofs with the wrong challenges is refused, naming them. */
TEST(wrong_selected_challenges_refused)
{
    struct fil_c1 c;
    const struct fil_seal_proof *ps = proof_of(2048, FIL_POREP_SYNTHETIC);
    /* a seed whose two selected challenges differ, so a swap is visible */
    uint64_t s = test_seed();
    for (;; s++) {
        ASSERT_OK(fil_c1_generate(&c, ps, 1000, 42, s, E), E);
        if (c.vp[0].labeling[0].node != c.vp[1].labeling[0].node) break;
        fil_c1_free(&c);
    }
    ASSERT_OK(fil_c1_check_challenges(&c, E), E);
    /* another seed: another selection from the same synthetic set (2 KiB has 64 nodes, so a
     * changed seed may select the same two by chance: the next byte value then) */
    uint8_t flip = 0x10;
    for (;; flip++) {
        c.seed[4] ^= flip;
        if (fil_c1_check_challenges(&c, E)) break;
        c.seed[4] ^= flip;
    }
    ASSERT_CODE(fil_c1_check_challenges(&c, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "(partition 0, challenge ");
    ASSERT_STR_CONTAINS(E->msg, "the synthetic challenges of (replica_id, comm_r) selected by seed give");
    /* the witness builder refuses it too (the engine's second line) */
    struct fil_porep_witness w;
    ASSERT_CODE(fil_porep_witness_build(&w, &c, 0, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "labeling_proofs[0].node (partition 0, challenge ");
    c.seed[4] ^= flip;
    /* the two proofs swapped */
    struct fil_vproof t = c.vp[0];
    c.vp[0] = c.vp[1];
    c.vp[1] = t;
    ASSERT_CODE(fil_c1_check_challenges(&c, E), CUZK_E_FORMAT, E);
    char want[200];
    snprintf(want, sizeof want, "vanilla_proofs[0][0] (partition 0, challenge 0) proves node %llu, but ",
             (unsigned long long)c.vp[0].labeling[0].node);
    ASSERT_STR_CONTAINS(E->msg, want);
    snprintf(want, sizeof want, "selected by seed give %llu", (unsigned long long)c.vp[1].labeling[0].node);
    ASSERT_STR_CONTAINS(E->msg, want);
    fil_c1_free(&c);

    /* NI: another partition's proofs (one whose challenges differ) moved into partition 3 */
    const struct fil_seal_proof *pn = proof_of(2048, FIL_POREP_NI);
    ASSERT_OK(fil_c1_generate(&c, pn, 1000, 42, s, E), E);
    ASSERT_OK(fil_c1_check_challenges(&c, E), E);
    unsigned q = 4;
    while (q < 12 && c.vp[q * 2].labeling[0].node == c.vp[6].labeling[0].node &&
           c.vp[q * 2 + 1].labeling[0].node == c.vp[7].labeling[0].node)
        q++;
    memcpy(&c.vp[3 * 2], &c.vp[q * 2], 2 * sizeof *c.vp);
    ASSERT_CODE(fil_c1_check_challenges(&c, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "vanilla_proofs[3][");
    ASSERT_STR_CONTAINS(E->msg, "(partition 3, challenge ");
    ASSERT_STR_CONTAINS(E->msg, "(replica_id, comm_r) (NI-PoRep) give");
    fil_c1_free(&c);
    /* an interactive C1 relabelled as synthetic: its vanilla proofs are the seed's direct
     * challenges, not the synthetic selection */
    for (;; s++) {
        ASSERT_OK(fil_c1_generate(&c, fil_seal_proof_by_name("StackedDrg2KiBV1_1"), 1000, 42, s, E), E);
        c.proof = ps;
        if (fil_c1_check_challenges(&c, E)) break;
        fil_c1_free(&c);
    }
    ASSERT_CODE(fil_c1_check_challenges(&c, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "(partition 0, challenge ");
    fil_c1_free(&c);
}

/* Generation: 32 / 64 GiB are refused with the reason; every size up to 512 MiB is possible
 * (8 MiB with CUZK_TEST_SLOW=1: a full SDR of 2^18 nodes x 2 layers, ~7 s on 2 cores). */
TEST(generate_sizes)
{
    struct fil_c1 c;
    const struct fil_seal_proof *p;
    for (int kind = FIL_POREP_SYNTHETIC; kind <= FIL_POREP_NI; kind++) {
        p = proof_of(32ull << 30, (enum fil_porep_kind)kind);
        ASSERT_CODE(fil_c1_generate(&c, p, 1000, 1, 1, E), CUZK_E_UNSUPPORTED, E);
        ASSERT_STR_CONTAINS(E->msg, "derived from comm_r");
        ASSERT_STR_CONTAINS(E->msg, p->name);
    }
    if (!slow()) test_skip("8 MiB generation with CUZK_TEST_SLOW=1 (32 / 64 GiB refusal checked)");
    p = proof_of(8ull << 20, FIL_POREP_NI);
    uint64_t t0 = cuzk_now_ns();
    ASSERT_OK(fil_c1_generate(&c, p, 1000, 9, test_seed(), E), E);
    printf("8 MiB NI C1 (13 x 2 challenges) generated in %.1f s\n", secs(t0));
    ASSERT_OK(fil_c1_check_challenges(&c, E), E);
    /* the witness builder's native checks (labels from parent columns, paths, roots) pass
     * for every partition */
    for (unsigned k = 0; k < c.partitions; k++) {
        struct fil_porep_witness w;
        ASSERT_OK(fil_porep_witness_build(&w, &c, k, E), E);
        fil_porep_witness_free(&w);
    }
    fil_c1_free(&c);
}

/* ------------------------------------------------------------- the CLI -- */

/* run "<build>/bin/cuzk-bench ARGS" (stdout and stderr), its exit status */
static int bench(char **out, const char *args)
{
    char exe[400], cmd[1400];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ASSERT(n > 0);
    exe[n] = 0;
    /* <build>/tests/filecoin/test_porep_kinds -> <build>/bin/cuzk-bench */
    snprintf(cmd, sizeof cmd, "'%s/bin/cuzk-bench' %s 2>&1", dirname(dirname(dirname(exe))), args);
    FILE *p = popen(cmd, "r");
    ASSERT(p);
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* gen-vanilla --synthetic / --ni write what their registered proofs need; `prove --kind porep`
 * refuses a C1 for the wrong challenges before it reads a parameter or proves anything. The
 * synthetic C1 proved and verified by the CLI with CUZK_TEST_SLOW=1 (~20 s). */
TEST(cli_gen_vanilla_synthetic_ni_and_refusal)
{
    char dir[] = "/tmp/cuzk-kinds-XXXXXX", args[1200], path[200], *out;
    ASSERT(mkdtemp(dir));
    snprintf(args, sizeof args, "gen-vanilla porep --sector-size 2KiB --synthetic --seed 5 -o %s/s.json", dir);
    ASSERT_EQ_INT(bench(&out, args), 0);
    ASSERT_STR_CONTAINS(out, "StackedDrg2KiBV1_1_Feat_SyntheticPoRep, 1 partitions x 2 challenges");
    free(out);
    snprintf(args, sizeof args, "gen-vanilla porep --sector-size 2KiB --ni -o %s/n.json", dir);
    ASSERT_EQ_INT(bench(&out, args), 0);
    ASSERT_STR_CONTAINS(out, "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep, 13 partitions x 2 challenges");
    free(out);
    snprintf(args, sizeof args, "gen-vanilla porep --sector-size 32GiB --ni -o %s/x.json", dir);
    ASSERT_EQ_INT(bench(&out, args), 1);
    ASSERT_STR_CONTAINS(out, "derived from comm_r");
    free(out);

    /* the synthetic C1 with another seed (parsed, changed, written back) */
    snprintf(path, sizeof path, "%s/s.json", dir);
    FILE *f = fopen(path, "rb");
    ASSERT(f);
    static char js[1 << 20];
    size_t n = fread(js, 1, sizeof js, f);
    fclose(f);
    struct fil_c1 c;
    ASSERT_OK(fil_c1_parse_wrapper(&c, js, n, E), E);
    uint8_t flip = 1;
    for (;; flip++) {   /* 64 nodes: a changed seed may select the same two by chance */
        c.seed[9] ^= flip;
        if (fil_c1_check_challenges(&c, E)) break;
        c.seed[9] ^= flip;
    }
    char *w;
    size_t wn;
    ASSERT_OK(fil_c1_write_wrapper(&w, &wn, &c, E), E);
    snprintf(path, sizeof path, "%s/bad.json", dir);
    f = fopen(path, "wb");
    ASSERT(f && fwrite(w, 1, wn, f) == wn && fclose(f) == 0);
    cuzk_free(w);
    fil_c1_free(&c);
    snprintf(args, sizeof args, "prove --backend cpu --kind porep --c1 %s/bad.json --params-dir %s/none", dir, dir);
    ASSERT_EQ_INT(bench(&out, args), 1);
    ASSERT_STR_CONTAINS(out, "vanilla_proofs[0][");
    ASSERT_STR_CONTAINS(out, "(partition 0, challenge ");
    ASSERT_STR_CONTAINS(out, "selected by seed give");
    ASSERT_MSG(!strstr(out, "prove[") && !strstr(out, "params "), "refused after work began:\n%s", out);
    free(out);

    if (slow()) {
        porep_fixture_skip_if_slow();
        struct param_fixture fx;
        porep_fixture_get(&fx);
        snprintf(args, sizeof args, "prove --backend cpu --kind porep --c1 %s/s.json --params-dir %s", dir, fx.dir);
        ASSERT_EQ_INT(bench(&out, args), 0);
        ASSERT_STR_CONTAINS(out, "StackedDrg2KiBV1_1_Feat_SyntheticPoRep");
        ASSERT_STR_CONTAINS(out, "verify[0]");
        ASSERT_STR_CONTAINS(out, "verified: yes");
        free(out);
    }
    char rm[200];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ASSERT(system(rm) == 0);
}
