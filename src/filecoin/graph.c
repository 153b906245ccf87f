/* graph.c: the stacked DRG of SDR (storage-proofs-core drgraph.rs BucketGraph with ChaCha8
 * bucket sampling; storage-proofs-porep stacked/vanilla/graph.rs Feistel expander parents),
 * per ApiVersion. The public inputs of every partition come from here. */
#include <string.h>

#include "cuzk/filecoin.h"

static void domain_seed(uint8_t out[32], const char *dst, const uint8_t porep_id[32])
{
    struct cuzk_sha256 s;
    cuzk_sha256_init(&s);
    cuzk_sha256_update(&s, dst, strlen(dst));
    cuzk_sha256_update(&s, porep_id, 32);
    cuzk_sha256_final(&s, out);
}

void fil_graph_init(struct fil_graph *g, const struct fil_seal_proof *p)
{
    uint8_t id[32], seed[32];
    memset(g, 0, sizeof *g);
    g->nodes = p->sector_size / 32;
    fil_porep_id(id, p);
    g->legacy = p->id <= 4;     /* is_legacy_porep_id: registered proof id <= 4 */
    domain_seed(seed, "Filecoin_DRSample", id);
    memcpy(g->drg_seed, seed, 28);
    domain_seed(seed, "Filecoin_Feistel", id);
    for (int k = 0; k < 4; k++) {
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--) v = v << 8 | seed[8 * k + i];
        g->feistel_keys[k] = v;
    }
    /* feistel::precompute(nodes * 8): the smallest power of 4 >= n, split into halves */
    uint64_t n = g->nodes * FIL_EXP_PARENTS, pow4 = 4;
    unsigned log4 = 1;
    while (pow4 < n) {
        pow4 *= 4;
        log4++;
    }
    g->half_bits = log4;
    g->right_mask = (1ull << log4) - 1;
    g->left_mask = g->right_mask << log4;
}

/* rand_chacha ChaCha8Rng: a u32 word stream, u64 = lo | hi << 32. */
struct chacha8_rng {
    uint8_t key[32];
    uint8_t buf[64];
    uint64_t block;
    unsigned pos;           /* bytes used in buf */
};

static uint64_t rng_u64(struct chacha8_rng *r)
{
    if (r->pos == 64) {
        fil_chacha_blocks(r->buf, r->key, NULL, false, r->block++, 1, 8);
        r->pos = 0;
    }
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | r->buf[r->pos + (unsigned)i];
    r->pos += 8;
    return v;
}

static unsigned ceil_log2_u64(uint64_t x)
{
    return x <= 1 ? 0 : 64 - (unsigned)__builtin_clzll(x - 1);
}

void fil_graph_drg_parents(const struct fil_graph *g, uint32_t node, uint32_t out[FIL_DRG_PARENTS])
{
    if (node < 2) {
        memset(out, 0, FIL_DRG_PARENTS * sizeof *out);
        return;
    }
    struct chacha8_rng r = {.pos = 64};
    memcpy(r.key, g->drg_seed, 28);
    for (int i = 0; i < 4; i++) r.key[28 + i] = (uint8_t)(node >> (8 * i));
    const uint64_t m_prime = FIL_DRG_PARENTS - 1;
    uint64_t meta = (uint64_t)node * m_prime;
    /* (meta as f64).log2().ceil(): exact for these magnitudes (< 2^54) */
    uint64_t n_buckets = ceil_log2_u64(meta);
    uint32_t *other = g->legacy ? out : out + 1;
    for (unsigned i = 0; i < m_prime; i++) {
        uint64_t bucket = rng_u64(&r) % n_buckets + 1;
        uint64_t largest = meta < (1ull << bucket) ? meta : (1ull << bucket);
        uint64_t smallest = largest >> 1 > 2 ? largest >> 1 : 2;
        uint64_t dist = smallest + rng_u64(&r) % (largest - smallest + 1);
        uint32_t mapped = (uint32_t)((meta - dist) / m_prime);
        other[i] = mapped == node ? node - 1 : mapped;
    }
    out[g->legacy ? m_prime : 0] = node - 1;
}

static uint64_t feistel_round(uint64_t right, uint64_t key, uint64_t mask)
{
    uint8_t data[16], h[64];
    for (int i = 0; i < 8; i++) {
        data[i] = (uint8_t)(right >> (56 - 8 * i));
        data[8 + i] = (uint8_t)(key >> (56 - 8 * i));
    }
    fil_blake2b(h, 64, NULL, 0, data, 16);
    uint64_t r = 0;
    for (int i = 0; i < 8; i++) r = r << 8 | h[i];
    return r & mask;
}

static uint64_t feistel_encode(const struct fil_graph *g, uint64_t index)
{
    uint64_t left = (index & g->left_mask) >> g->half_bits, right = index & g->right_mask;
    for (int k = 0; k < 3; k++) {
        uint64_t l = right, rr = left ^ feistel_round(right, g->feistel_keys[k], g->right_mask);
        left = l;
        right = rr;
    }
    return left << g->half_bits | right;
}

void fil_graph_exp_parents(const struct fil_graph *g, uint32_t node, uint32_t out[FIL_EXP_PARENTS])
{
    uint64_t n = g->nodes * FIL_EXP_PARENTS;
    for (unsigned i = 0; i < FIL_EXP_PARENTS; i++) {
        uint64_t u = feistel_encode(g, (uint64_t)node * FIL_EXP_PARENTS + i);
        while (u >= n) u = feistel_encode(g, u);       /* cycle-walk into range */
        /* ApiVersion 1.0 truncated the permuted index to u32 before dividing */
        out[i] = g->legacy ? (uint32_t)u / FIL_EXP_PARENTS : (uint32_t)(u / FIL_EXP_PARENTS);
    }
}
