/* test_filecoin.c: Filecoin derivations of filecoin.h: SHA-256 / BLAKE2b / ChaCha against
 * OpenSSL, registered proofs and parameter names against parameters.json, prover ids,
 * Feistel keys against real parent-cache file names, graph invariants, and challenges
 * against an OpenSSL + GMP re-derivation. */
#include <gmp.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/sha.h>

#include "cuzk/filecoin.h"
#include "test.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

TEST(sha256_matches_openssl)
{
    uint8_t buf[700], a[32], b[32];
    cuzk_rng_bytes(test_rng(), buf, sizeof buf);
    for (size_t n = 0; n <= sizeof buf; n += (n < 140 ? 1 : 37)) {
        cuzk_sha256(a, buf, n);
        SHA256(buf, n, b);
        ASSERT_MEM_EQ(a, b, 32);
        /* incremental in odd pieces */
        struct cuzk_sha256 s;
        cuzk_sha256_init(&s);
        for (size_t o = 0; o < n;) {
            size_t k = 1 + cuzk_rng_u64(test_rng()) % 70;
            if (k > n - o) k = n - o;
            cuzk_sha256_update(&s, buf + o, k);
            o += k;
        }
        cuzk_sha256_final(&s, a);
        ASSERT_MEM_EQ(a, b, 32);
    }
}

static void openssl_blake2b(uint8_t *out, size_t out_len, const void *key, size_t key_len,
                            const void *data, size_t n)
{
    if (!key_len && out_len == 64) {
        unsigned len = 64;
        ASSERT(EVP_Digest(data, n, out, &len, EVP_blake2b512(), NULL) == 1);
        return;
    }
    EVP_MAC *mac = EVP_MAC_fetch(NULL, OSSL_MAC_NAME_BLAKE2BMAC, NULL);
    if (!mac) test_skip("OpenSSL has no BLAKE2BMAC");
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
    size_t sz = out_len;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &sz), OSSL_PARAM_construct_end()};
    ASSERT(EVP_MAC_init(ctx, key, key_len, params) == 1);
    ASSERT(EVP_MAC_update(ctx, data, n) == 1);
    size_t got;
    ASSERT(EVP_MAC_final(ctx, out, &got, out_len) == 1);
    ASSERT_EQ_U64(got, out_len);
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
}

TEST(blake2b_matches_openssl)
{
    uint8_t buf[400], key[64], a[64], b[64];
    cuzk_rng_bytes(test_rng(), buf, sizeof buf);
    cuzk_rng_bytes(test_rng(), key, sizeof key);
    static const size_t lens[] = {0, 1, 16, 64, 127, 128, 129, 255, 256, 257, 400};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        fil_blake2b(a, 64, NULL, 0, buf, lens[i]);
        openssl_blake2b(b, 64, NULL, 0, buf, lens[i]);
        ASSERT_MEM_EQ(a, b, 64);
        /* the synthetic-PoRep form: 32-byte output, 42-byte key */
        fil_blake2b(a, 32, key, 42, buf, lens[i]);
        openssl_blake2b(b, 32, key, 42, buf, lens[i]);
        ASSERT_MEM_EQ(a, b, 32);
    }
}

static void openssl_chacha20(uint8_t *out, size_t n, const uint8_t key[32], const uint8_t iv[16])
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t *zero = calloc(1, n);
    int len;
    ASSERT(EVP_EncryptInit_ex(ctx, EVP_chacha20(), NULL, key, iv) == 1);
    ASSERT(EVP_EncryptUpdate(ctx, out, &len, zero, (int)n) == 1);
    EVP_CIPHER_CTX_free(ctx);
    free(zero);
}

TEST(chacha20_matches_openssl)
{
    uint8_t key[32], nonce[12], iv[16], a[64 * 5], b[64 * 5];
    cuzk_rng_bytes(test_rng(), key, 32);
    cuzk_rng_bytes(test_rng(), nonce, 12);
    uint32_t ctr = 7;
    /* OpenSSL's IV: 32-bit LE block counter, then the 96-bit nonce (RFC 8439) */
    iv[0] = (uint8_t)ctr; iv[1] = iv[2] = iv[3] = 0;
    memcpy(iv + 4, nonce, 12);
    fil_chacha_blocks(a, key, nonce, true, ctr, 5, 20);
    openssl_chacha20(b, sizeof b, key, iv);
    ASSERT_MEM_EQ(a, b, sizeof a);
    /* djb layout (rand_chacha): 64-bit counter then 64-bit stream = IETF with nonce 0|stream */
    memset(iv + 4, 0, 4);
    memcpy(iv + 8, nonce, 8);
    fil_chacha_blocks(a, key, nonce, false, ctr, 5, 20);
    openssl_chacha20(b, sizeof b, key, iv);
    ASSERT_MEM_EQ(a, b, sizeof a);
}

TEST(registry_and_param_names)
{
    ASSERT_EQ_U64(fil_seal_proof_count(), 20);
    for (size_t i = 0; i < 20; i++) {
        const struct fil_seal_proof *p = fil_seal_proof_at(i);
        ASSERT_EQ_U64(p->id, i);
        ASSERT(fil_seal_proof_by_name(p->name) == p);
        ASSERT(fil_seal_proof_by_id(i) == p);
        struct porep_config c;
        ASSERT_OK(porep_config_for_size(&c, p->sector_size, E), E);
        ASSERT_EQ_U64(p->challenges, c.challenges);
        ASSERT_EQ_U64(p->layers, c.layers);
        if (p->kind != FIL_POREP_NI) ASSERT_EQ_U64(p->partitions, c.partitions);
        uint8_t id[32], want[32] = {0};
        want[0] = (uint8_t)i;
        fil_porep_id(id, p);
        ASSERT_MEM_EQ(id, want, 32);
    }
    const struct fil_seal_proof *p = fil_seal_proof_by_name("StackedDrg32GiBV1_2_Feat_NonInteractivePoRep");
    ASSERT(p && p->partitions == 126 && p->challenges == 18 && p->api == FIL_API_1_2 && p->kind == FIL_POREP_NI);
    p = fil_seal_proof_by_name("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep");
    ASSERT(p && p->partitions == 13 && p->challenges == 2);
    p = fil_seal_proof_by_name("StackedDrg64GiBV1_1_Feat_SyntheticPoRep");
    ASSERT(p && p->partitions == 10 && p->kind == FIL_POREP_SYNTHETIC && !strcmp(p->vanilla_tag, "StackedDrg64GiBV1"));
    ASSERT(fil_seal_proof_by_name("StackedDrg1KiBV1") == NULL);
    ASSERT(fil_seal_proof_default(32ull << 30)->id == 8);

    char stem[256];
    ASSERT_OK(fil_porep_param_stem(stem, sizeof stem, 2048, E), E);
    ASSERT_STR_CONTAINS(stem, "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
                              "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f");
    ASSERT_OK(fil_porep_param_stem(stem, sizeof stem, 32ull << 30, E), E);
    ASSERT_STR_CONTAINS(stem, "-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820");
    ASSERT_OK(fil_porep_param_stem(stem, sizeof stem, 64ull << 30, E), E);
    ASSERT_STR_CONTAINS(stem, "-8-8-2-sha256_hasher-96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2");
    ASSERT_CODE(fil_porep_param_stem(stem, sizeof stem, 4096, E), CUZK_E_UNSUPPORTED, E);
    ASSERT_CODE(fil_porep_param_stem(stem, 20, 2048, E), CUZK_E_INVALID_ARG, E);
}

TEST(prover_id_leb128)
{
    uint8_t id[32], want[32];
    static const struct { uint64_t v; uint8_t b[10]; size_t n; } T[] = {
        {0, {0}, 1}, {127, {0x7f}, 1}, {128, {0x80, 0x01}, 2}, {1000, {0xe8, 0x07}, 2},
        {UINT64_MAX, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10},
    };
    for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
        memset(want, 0, 32);
        memcpy(want, T[i].b, T[i].n);
        fil_prover_id(id, T[i].v);
        ASSERT_MEM_EQ(id, want, 32);
    }
}

/* The parent cache file name (rust-fil-proofs stacked/vanilla/cache.rs cache_path) hashes the
 * graph identifier and the Feistel keys; two real names are in public logs: 2 KiB V1
 * (v28-sdr-parent-3f0eef38…) and 32 GiB V1_1 (v28-sdr-parent-21981246…). */
static void cache_name(char hex[65], const struct fil_seal_proof *p)
{
    struct fil_graph g;
    fil_graph_init(&g, p);
    char id[256];
    snprintf(id, sizeof id, "stacked_graph::StackedGraph{expansion_degree: 8 base_graph: "
             "drgraph::BucketGraph{size: %llu; degree: 6; hasher: poseidon_hasher} }",
             (unsigned long long)g.nodes);
    /* one buffer, hashed once with OpenSSL */
    uint8_t buf[512], h[32];
    size_t n = 0;
    memcpy(buf, "poseidon_hasher", 15);
    n = 15;
    memcpy(buf + n, id, strlen(id));
    n += strlen(id);
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 8; j++) buf[n++] = (uint8_t)(g.feistel_keys[k] >> (8 * j));
    for (int j = 0; j < 4; j++) buf[n++] = (uint8_t)(g.nodes >> (8 * j));
    SHA256(buf, n, h);
    for (int j = 0; j < 32; j++) sprintf(hex + 2 * j, "%02x", h[j]);
}

TEST(feistel_keys_match_parent_cache_names)
{
    char hex[65];
    cache_name(hex, fil_seal_proof_by_name("StackedDrg2KiBV1"));
    ASSERT_STR_CONTAINS(hex, "3f0eef38bb48af1f48ad65e14eb85b4ebfc167cec18cd81764f6d998836c9899");
    cache_name(hex, fil_seal_proof_by_name("StackedDrg32GiBV1_1"));
    ASSERT_STR_CONTAINS(hex, "21981246c370f9d76c7a77ab273d94bde0ceb4e938292334960bce05585dc117");
}

TEST(graph_invariants)
{
    static const char *names[] = {"StackedDrg2KiBV1", "StackedDrg2KiBV1_1", "StackedDrg8MiBV1_1",
                                  "StackedDrg32GiBV1_1", "StackedDrg64GiBV1"};
    for (size_t t = 0; t < 5; t++) {
        const struct fil_seal_proof *p = fil_seal_proof_by_name(names[t]);
        struct fil_graph g;
        fil_graph_init(&g, p);
        uint32_t d[6], e[8];
        fil_graph_drg_parents(&g, 0, d);
        for (int j = 0; j < 6; j++) ASSERT_EQ_U64(d[j], 0);
        fil_graph_drg_parents(&g, 1, d);
        for (int j = 0; j < 6; j++) ASSERT_EQ_U64(d[j], 0);
        for (int r = 0; r < 200; r++) {
            uint32_t node = 2 + (uint32_t)(cuzk_rng_u64(test_rng()) % (g.nodes - 2));
            fil_graph_drg_parents(&g, node, d);
            ASSERT_EQ_U64(d[g.legacy ? 5 : 0], node - 1);   /* the predecessor's slot */
            for (int j = 0; j < 6; j++) ASSERT(d[j] < node);
            fil_graph_exp_parents(&g, node, e);
            for (int j = 0; j < 8; j++) ASSERT(e[j] < g.nodes);
        }
    }
    /* The Feistel network is a permutation of [0, 8 * nodes): over all nodes of 2 KiB, every
     * node is an expander parent exactly 8 times. */
    struct fil_graph g;
    fil_graph_init(&g, fil_seal_proof_by_name("StackedDrg2KiBV1_1"));
    unsigned hits[64] = {0};
    for (uint32_t n = 0; n < 64; n++) {
        uint32_t e[8];
        fil_graph_exp_parents(&g, n, e);
        for (int j = 0; j < 8; j++) hits[e[j]]++;
    }
    for (int n = 0; n < 64; n++) ASSERT_EQ_U64(hits[n], 8);
}

/* bigint_to_challenge re-derived with OpenSSL SHA-256 and GMP. */
static uint64_t oracle_challenge(const uint8_t h[32], uint64_t nodes)
{
    mpz_t x;
    mpz_init(x);
    mpz_import(x, 32, -1, 1, 0, 0, h);
    uint64_t r = mpz_fdiv_ui(x, nodes - 1) + 1;
    mpz_clear(x);
    return r;
}

TEST(challenges_interactive_and_ni)
{
    uint8_t rid[32], seed[32], comm_r[32];
    cuzk_rng_bytes(test_rng(), rid, 32);
    cuzk_rng_bytes(test_rng(), seed, 32);
    cuzk_rng_bytes(test_rng(), comm_r, 32);
    static const char *names[] = {"StackedDrg2KiBV1_1", "StackedDrg32GiBV1_1",
                                  "StackedDrg32GiBV1_2_Feat_NonInteractivePoRep",
                                  "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"};
    for (size_t t = 0; t < 4; t++) {
        const struct fil_seal_proof *p = fil_seal_proof_by_name(names[t]);
        uint64_t nodes = p->sector_size / 32;
        for (unsigned k = 0; k < p->partitions; k += 1 + p->partitions / 4) {
            uint64_t ch[18];
            ASSERT_OK(fil_porep_challenges(ch, p, rid, comm_r, seed, k, E), E);
            for (unsigned i = 0; i < p->challenges; i++) {
                uint8_t buf[36 + 64], h[32];
                size_t n = 0;
                uint32_t j = k * p->challenges + i;
                if (p->kind == FIL_POREP_NI) {
                    memcpy(buf, "filecoin.io|PoRep|1|NonInteractive|1", 36);
                    n = 36;
                    memcpy(buf + n, rid, 32);
                    memcpy(buf + n + 32, comm_r, 32);
                } else {
                    memcpy(buf, rid, 32);
                    memcpy(buf + 32, seed, 32);
                }
                n += 64;
                uint8_t all[120];
                memcpy(all, buf, n);
                for (int b = 0; b < 4; b++) all[n + (size_t)b] = (uint8_t)(j >> (8 * b));
                SHA256(all, n + 4, h);
                ASSERT_EQ_U64(ch[i], oracle_challenge(h, nodes));
                ASSERT(ch[i] >= 1 && ch[i] < nodes);
            }
        }
        uint64_t ch[18];
        ASSERT_CODE(fil_porep_challenges(ch, p, rid, comm_r, seed, p->partitions, E), CUZK_E_INVALID_ARG, E);
    }
    /* synthetic: in range, deterministic, seed-dependent */
    const struct fil_seal_proof *p = fil_seal_proof_by_name("StackedDrg32GiBV1_1_Feat_SyntheticPoRep");
    uint64_t a[18], b[18];
    ASSERT_OK(fil_porep_challenges(a, p, rid, comm_r, seed, 3, E), E);
    ASSERT_OK(fil_porep_challenges(b, p, rid, comm_r, seed, 3, E), E);
    ASSERT_MEM_EQ(a, b, sizeof a);
    for (int i = 0; i < 18; i++) ASSERT(a[i] >= 1 && a[i] < (1ull << 30));
    seed[0] ^= 1;
    ASSERT_OK(fil_porep_challenges(b, p, rid, comm_r, seed, 3, E), E);
    ASSERT(memcmp(a, b, sizeof a) != 0);
}

TEST(replica_id_and_label)
{
    uint8_t prover[32], ticket[32], comm_d[32], porep_id[32], out[32], want[32];
    fil_prover_id(prover, 1000);
    cuzk_rng_bytes(test_rng(), ticket, 32);
    cuzk_rng_bytes(test_rng(), comm_d, 32);
    fil_porep_id(porep_id, fil_seal_proof_by_name("StackedDrg2KiBV1_1"));
    fil_replica_id(out, prover, 0x0102030405060708ull, ticket, comm_d, porep_id);
    uint8_t buf[136];
    memcpy(buf, prover, 32);
    for (int i = 0; i < 8; i++) buf[32 + i] = (uint8_t)(i + 1);     /* sector id big-endian */
    memcpy(buf + 40, ticket, 32);
    memcpy(buf + 72, comm_d, 32);
    memcpy(buf + 104, porep_id, 32);
    SHA256(buf, sizeof buf, want);
    want[31] &= 0x3f;
    ASSERT_MEM_EQ(out, want, 32);

    /* label: replica_id | layer BE | node BE | 20 zeros | 37 parents */
    uint8_t par[37][32], lab[32], pre[64 + 37 * 32] = {0};
    cuzk_rng_bytes(test_rng(), par, sizeof par);
    fil_sdr_label(lab, out, 3, 0x1122334455ull, (const uint8_t(*)[32])par);
    memcpy(pre, out, 32);
    pre[35] = 3;
    pre[39] = 0x11; pre[40] = 0x22; pre[41] = 0x33; pre[42] = 0x44; pre[43] = 0x55;
    memcpy(pre + 64, par, sizeof par);
    SHA256(pre, sizeof pre, want);
    want[31] &= 0x3f;
    ASSERT_MEM_EQ(lab, want, 32);
}
