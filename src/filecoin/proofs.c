/* proofs.c: registered seal proofs (filecoin-proofs-api registry.rs), v28 parameter names
 * (parameters.json), prover / replica / porep ids and PoRep challenge derivation
 * (storage-proofs-porep stacked/vanilla/challenges.rs: interactive, synthetic, NI). */
#include <stdio.h>
#include <string.h>

#include "cuzk/filecoin.h"

/* ---------------------------------------------------------------- registry -- */

#define KIB2 2048ull
#define MIB8 (8ull << 20)
#define MIB512 (512ull << 20)
#define GIB32 (32ull << 30)
#define GIB64 (64ull << 30)

/* Interactive and synthetic: 1 partition for test sizes, 10 for 32/64 GiB; NI: 13 / 126.
 * Challenges per partition: 2 / 18 for every variant (the circuit is the same). */
#define ROW(nm, tag, id, size, api, kind)                                                 \
    {nm, tag, id, size, api, kind,                                                        \
     (kind) == FIL_POREP_NI ? ((size) < GIB32 ? 13u : 126u) : ((size) < GIB32 ? 1u : 10u), \
     (size) < GIB32 ? 2u : 18u, (size) < GIB32 ? 2u : 11u}

static const struct fil_seal_proof PROOFS[] = {
    ROW("StackedDrg2KiBV1", "StackedDrg2KiBV1", 0, KIB2, FIL_API_1_0, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg8MiBV1", "StackedDrg8MiBV1", 1, MIB8, FIL_API_1_0, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg512MiBV1", "StackedDrg512MiBV1", 2, MIB512, FIL_API_1_0, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg32GiBV1", "StackedDrg32GiBV1", 3, GIB32, FIL_API_1_0, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg64GiBV1", "StackedDrg64GiBV1", 4, GIB64, FIL_API_1_0, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg2KiBV1_1", "StackedDrg2KiBV1", 5, KIB2, FIL_API_1_1, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg8MiBV1_1", "StackedDrg8MiBV1", 6, MIB8, FIL_API_1_1, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg512MiBV1_1", "StackedDrg512MiBV1", 7, MIB512, FIL_API_1_1, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg32GiBV1_1", "StackedDrg32GiBV1", 8, GIB32, FIL_API_1_1, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg64GiBV1_1", "StackedDrg64GiBV1", 9, GIB64, FIL_API_1_1, FIL_POREP_INTERACTIVE),
    ROW("StackedDrg2KiBV1_1_Feat_SyntheticPoRep", "StackedDrg2KiBV1", 10, KIB2, FIL_API_1_2, FIL_POREP_SYNTHETIC),
    ROW("StackedDrg8MiBV1_1_Feat_SyntheticPoRep", "StackedDrg8MiBV1", 11, MIB8, FIL_API_1_2, FIL_POREP_SYNTHETIC),
    ROW("StackedDrg512MiBV1_1_Feat_SyntheticPoRep", "StackedDrg512MiBV1", 12, MIB512, FIL_API_1_2, FIL_POREP_SYNTHETIC),
    ROW("StackedDrg32GiBV1_1_Feat_SyntheticPoRep", "StackedDrg32GiBV1", 13, GIB32, FIL_API_1_2, FIL_POREP_SYNTHETIC),
    ROW("StackedDrg64GiBV1_1_Feat_SyntheticPoRep", "StackedDrg64GiBV1", 14, GIB64, FIL_API_1_2, FIL_POREP_SYNTHETIC),
    ROW("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep", "StackedDrg2KiBV1", 15, KIB2, FIL_API_1_2, FIL_POREP_NI),
    ROW("StackedDrg8MiBV1_2_Feat_NonInteractivePoRep", "StackedDrg8MiBV1", 16, MIB8, FIL_API_1_2, FIL_POREP_NI),
    ROW("StackedDrg512MiBV1_2_Feat_NonInteractivePoRep", "StackedDrg512MiBV1", 17, MIB512, FIL_API_1_2, FIL_POREP_NI),
    ROW("StackedDrg32GiBV1_2_Feat_NonInteractivePoRep", "StackedDrg32GiBV1", 18, GIB32, FIL_API_1_2, FIL_POREP_NI),
    ROW("StackedDrg64GiBV1_2_Feat_NonInteractivePoRep", "StackedDrg64GiBV1", 19, GIB64, FIL_API_1_2, FIL_POREP_NI),
};
#define N_PROOFS (sizeof PROOFS / sizeof *PROOFS)

size_t fil_seal_proof_count(void) { return N_PROOFS; }

const struct fil_seal_proof *fil_seal_proof_at(size_t i) { return i < N_PROOFS ? &PROOFS[i] : NULL; }

const struct fil_seal_proof *fil_seal_proof_by_name(const char *name)
{
    for (size_t i = 0; i < N_PROOFS; i++)
        if (!strcmp(PROOFS[i].name, name)) return &PROOFS[i];
    return NULL;
}

const struct fil_seal_proof *fil_seal_proof_by_id(uint64_t id)
{
    for (size_t i = 0; i < N_PROOFS; i++)
        if (PROOFS[i].id == id) return &PROOFS[i];
    return NULL;
}

const struct fil_seal_proof *fil_seal_proof_default(uint64_t sector_size)
{
    for (size_t i = 0; i < N_PROOFS; i++)
        if (PROOFS[i].sector_size == sector_size && PROOFS[i].api == FIL_API_1_1) return &PROOFS[i];
    return NULL;
}

void fil_porep_id(uint8_t out[32], const struct fil_seal_proof *p)
{
    memset(out, 0, 32);
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(p->id >> (8 * i));
    /* bytes 8..15: the nonce, 0 for every registered proof */
}

/* parameters.json: the hash is sha256(identifier of the public params); the tree shape
 * (base-sub-top arities) is part of the cache prefix. */
int fil_porep_param_stem(char *out, size_t out_len, uint64_t sector_size, struct cuzk_error *err)
{
    static const struct { uint64_t size; const char *shape, *hash; } T[] = {
        {KIB2, "8-0-0", "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f"},
        {MIB8, "8-0-0", "ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb"},
        {MIB512, "8-0-0", "6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472"},
        {GIB32, "8-8-0", "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820"},
        {GIB64, "8-8-2", "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2"},
    };
    for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
        if (T[i].size != sector_size) continue;
        int n = snprintf(out, out_len,
                         "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-%s-sha256_hasher-%s",
                         T[i].shape, T[i].hash);
        if (n < 0 || (size_t)n >= out_len)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "param stem: buffer of %zu bytes too small", out_len);
        return CUZK_OK;
    }
    return cuzk_fail(err, CUZK_E_UNSUPPORTED, "param stem: sector size %llu is not a PoRep size",
                     (unsigned long long)sector_size);
}

void fil_prover_id(uint8_t out[32], uint64_t miner_id)
{
    memset(out, 0, 32);
    int i = 0;
    do {
        uint8_t b = miner_id & 0x7f;
        miner_id >>= 7;
        out[i++] = miner_id ? (uint8_t)(b | 0x80) : b;
    } while (miner_id);
}

void fil_replica_id(uint8_t out[32], const uint8_t prover_id[32], uint64_t sector_id,
                    const uint8_t ticket[32], const uint8_t comm_d[32], const uint8_t porep_id[32])
{
    uint8_t sid[8];
    for (int i = 0; i < 8; i++) sid[i] = (uint8_t)(sector_id >> (56 - 8 * i));
    struct cuzk_sha256 s;
    cuzk_sha256_init(&s);
    cuzk_sha256_update(&s, prover_id, 32);
    cuzk_sha256_update(&s, sid, 8);
    cuzk_sha256_update(&s, ticket, 32);
    cuzk_sha256_update(&s, comm_d, 32);
    cuzk_sha256_update(&s, porep_id, 32);
    cuzk_sha256_final(&s, out);
    out[31] &= 0x3f;    /* bytes_into_fr_repr_safe */
}

/* -------------------------------------------------------------- challenges -- */

/* (x mod (nodes - 1)) + 1 for a 256-bit little-endian x (bigint_to_challenge). */
static uint64_t to_challenge(const uint8_t x[32], uint64_t nodes)
{
    unsigned __int128 r = 0;
    uint64_t m = nodes - 1;
    for (int i = 31; i >= 0; i--) r = ((r << 8) | x[i]) % m;
    return (uint64_t)r + 1;
}

static void u32le(uint8_t out[4], uint32_t v)
{
    for (int i = 0; i < 4; i++) out[i] = (uint8_t)(v >> (8 * i));
}

/* Synthetic PoRep (FIP-0059; storage-proofs-porep challenges.rs, `synthetic`). Both streams
 * are IETF ChaCha20 (32-bit block counter, 96-bit nonce "synth-porep\0") keyed with a 32-byte
 * BLAKE2b keyed by a domain tag:
 *   generation: key BLAKE2b(tag "...|Generation"; replica_id | comm_r); synthetic challenge i
 *     is keystream bytes [32 i, 32 i + 32) read as a little-endian integer, reduced by
 *     bigint_to_challenge; there are min(nodes, 2^18) of them;
 *   selection: key BLAKE2b(tag "...|Selection"; replica_id | seed); PoRep challenge j (counted
 *     over all partitions, j = k * challenges + i) picks synthetic index
 *     u32le(keystream bytes [4 j, 4 j + 4)) mod num_synth.
 * Upstream's older code read 64-byte blocks (two challenges / sixteen indices each); the
 * keystream offsets, and so the challenges, are the same. */
#define SYNTH_DEFAULT_COUNT (1ull << 18)
static const uint8_t SYNTH_NONCE[12] = {'s', 'y', 'n', 't', 'h', '-', 'p', 'o', 'r', 'e', 'p', 0};

static void synth_key(uint8_t key[32], const char *tag, const uint8_t a[32], const uint8_t b[32])
{
    uint8_t in[64];
    memcpy(in, a, 32);
    memcpy(in + 32, b, 32);
    fil_blake2b(key, 32, tag, strlen(tag), in, 64);
}

static void synth_gen_key(uint8_t key[32], const uint8_t replica_id[32], const uint8_t comm_r[32])
{
    synth_key(key, "filecoin.io|PoRep|1|Synthetic|1|Generation", replica_id, comm_r);
}

static uint64_t synth_challenge_keyed(const uint8_t kgen[32], uint64_t nodes, uint64_t i)
{
    uint8_t blk[64];
    fil_chacha_blocks(blk, kgen, SYNTH_NONCE, true, i >> 1, 1, 20);
    return to_challenge(blk + 32 * (i & 1), nodes);
}

uint64_t fil_synth_count(uint64_t nodes) { return nodes < SYNTH_DEFAULT_COUNT ? nodes : SYNTH_DEFAULT_COUNT; }

uint64_t fil_synth_challenge(uint64_t nodes, const uint8_t replica_id[32], const uint8_t comm_r[32], uint64_t i)
{
    uint8_t kgen[32];
    synth_gen_key(kgen, replica_id, comm_r);
    return synth_challenge_keyed(kgen, nodes, i);
}

void fil_synth_indexes(uint64_t *out, unsigned n, uint64_t num_synth, const uint8_t replica_id[32],
                       const uint8_t seed[32], uint64_t first)
{
    uint8_t ksel[32], blk[64];
    synth_key(ksel, "filecoin.io|PoRep|1|Synthetic|1|Selection", replica_id, seed);
    uint64_t have = ~0ull;      /* block index in blk */
    for (unsigned i = 0; i < n; i++) {
        uint64_t j = first + i;
        if (j / 16 != have) {
            have = j / 16;
            fil_chacha_blocks(blk, ksel, SYNTH_NONCE, true, have, 1, 20);
        }
        const uint8_t *b = blk + 4 * (j % 16);
        uint32_t v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        out[i] = v % num_synth;
    }
}

static void synth_challenges(uint64_t *out, unsigned n, uint64_t nodes, const uint8_t replica_id[32],
                             const uint8_t comm_r[32], const uint8_t seed[32], unsigned k)
{
    uint8_t kgen[32];
    synth_gen_key(kgen, replica_id, comm_r);
    fil_synth_indexes(out, n, fil_synth_count(nodes), replica_id, seed, (uint64_t)k * n);
    for (unsigned i = 0; i < n; i++) out[i] = synth_challenge_keyed(kgen, nodes, out[i]);
}

const char *fil_porep_challenge_rule(const struct fil_seal_proof *p)
{
    switch (p->kind) {
    case FIL_POREP_SYNTHETIC: return "the synthetic challenges of (replica_id, comm_r) selected by seed";
    case FIL_POREP_NI: return "(replica_id, comm_r) (NI-PoRep)";
    default: return "(replica_id, seed)";
    }
}

int fil_porep_challenges(uint64_t *out, const struct fil_seal_proof *p,
                         const uint8_t replica_id[32], const uint8_t comm_r[32],
                         const uint8_t seed[32], unsigned k, struct cuzk_error *err)
{
    if (k >= p->partitions)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "challenges: partition %u of %u", k, p->partitions);
    uint64_t nodes = p->sector_size / 32;
    unsigned n = p->challenges;
    if (p->kind == FIL_POREP_SYNTHETIC) {
        synth_challenges(out, n, nodes, replica_id, comm_r, seed, k);
        return CUZK_OK;
    }
    static const char NI_TAG[] = "filecoin.io|PoRep|1|NonInteractive|1";
    for (unsigned i = 0; i < n; i++) {
        uint8_t jb[4], h[32];
        u32le(jb, (uint32_t)(n * k + i));
        struct cuzk_sha256 s;
        cuzk_sha256_init(&s);
        if (p->kind == FIL_POREP_NI) {
            cuzk_sha256_update(&s, NI_TAG, sizeof NI_TAG - 1);
            cuzk_sha256_update(&s, replica_id, 32);
            cuzk_sha256_update(&s, comm_r, 32);
        } else {
            cuzk_sha256_update(&s, replica_id, 32);
            cuzk_sha256_update(&s, seed, 32);
        }
        cuzk_sha256_update(&s, jb, 4);
        cuzk_sha256_final(&s, h);
        out[i] = to_challenge(h, nodes);
    }
    return CUZK_OK;
}
