/* test_wpack.c: the packed witness (wpack.h) against the witness it packs: every value read
 * back as the GPU reads it, the other values in order and counted, across sizes that are not
 * multiples of a block, several packing groups, inputs and aux split anywhere, value mixes from
 * all zeros to all other values (with near-one and near-zero values), with and without a pool. */
#include <stdlib.h>
#include <string.h>

#include "cuzk/util.h"
#include "cuzk/wpack.h"
#include "test.h"

/* n values: zero with probability pz %, one with po %, else random (some one bit away from
 * one or zero, which must stay "other") */
static void make_values(fr_t *v, uint64_t n, unsigned pz, unsigned po, cuzk_rng *r)
{
    for (uint64_t i = 0; i < n; i++) {
        uint32_t x;
        cuzk_rng_bytes(r, (uint8_t *)&x, sizeof x);
        const unsigned p = x % 100;
        if (p < pz) v[i] = FR_ZERO;
        else if (p < pz + po) v[i] = FR_ONE;
        else if (p == 99) {
            v[i] = (x & 256) ? FR_ONE : FR_ZERO;
            v[i].l[(x >> 9) & 3] ^= 1ull << ((x >> 11) & 63);
        } else {
            cuzk_rng_bytes(r, (uint8_t *)&v[i], sizeof v[i]);
            v[i].l[3] &= 0x0fffffffffffffffull;
        }
    }
}

static void check_pack(uint64_t n_in, uint64_t n_aux, unsigned pz, unsigned po, struct pool *pool, cuzk_rng *r)
{
    const uint64_t n = n_in + n_aux;
    fr_t *w = malloc((n ? n : 1) * sizeof *w);
    make_values(w, n, pz, po, r);
    struct wpack_blk *blk = malloc((wpack_blocks(n) + 1) * sizeof *blk);
    uint64_t *group = malloc((wpack_groups(n) + 1) * sizeof *group);
    const uint64_t others = wpack_classify(blk, group, w, n_in, w + n_in, n_aux, pool);
    uint64_t want = 0;
    for (uint64_t i = 0; i < n; i++)
        want += memcmp(&w[i], &FR_ZERO, sizeof(fr_t)) && memcmp(&w[i], &FR_ONE, sizeof(fr_t));
    ASSERT_EQ_U64(others, want);
    fr_t *val = malloc((others ? others : 1) * sizeof *val);
    wpack_fill(val, blk, group, w, n_in, w + n_in, n_aux, pool);
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        fr_t got;
        wpack_get(&got, blk, val, (uint32_t)i);
        ASSERT_MSG(!memcmp(&got, &w[i], sizeof got), "value %llu of %llu (inputs %llu) reads back wrong",
                   (unsigned long long)i, (unsigned long long)n, (unsigned long long)n_in);
        if (wpack_class(blk + i / 32, (uint32_t)i) == WPACK_OTHER) {
            ASSERT_EQ_U64(wpack_rank(blk + i / 32, (uint32_t)i), k);   /* in order */
            k++;
        }
    }
    ASSERT_EQ_U64(k, others);
    for (uint64_t b = 0; b < wpack_blocks(n); b++) {
        ASSERT_EQ_U64(blk[b].pad, 0);
        if (b * 32 + 32 > n) ASSERT_EQ_U64(blk[b].bits >> (2 * (n - b * 32)), 0);   /* past the end: zero */
    }
    free(w);
    free(blk);
    free(group);
    free(val);
}

TEST(packed_witness_reads_back_every_value)
{
    cuzk_rng *r = test_rng();
    struct pool *pool = pool_default();
    const uint64_t sizes[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 31}, {3, 29}, {2, 31}, {5, 100}, {328, 5000},
                                 {1, 32 * WPACK_GROUP - 1}, {7, 32 * WPACK_GROUP}, {40, 2 * 32 * WPACK_GROUP + 77},
                                 {100000, 300001}};
    const unsigned mix[][2] = {{45, 45}, {0, 0}, {100, 0}, {0, 100}, {50, 50}, {10, 10}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t m = 0; m < sizeof mix / sizeof mix[0]; m++)
            check_pack(sizes[s][0], sizes[s][1], mix[m][0], mix[m][1], (s + m) % 2 ? pool : NULL, r);
}

/* the pool's split into groups gives the same bytes as one thread */
TEST(packing_on_a_pool_equals_one_thread)
{
    cuzk_rng *r = test_rng();
    const uint64_t n_in = 328, n_aux = 5 * 32 * WPACK_GROUP + 999, n = n_in + n_aux;
    fr_t *w = malloc(n * sizeof *w);
    make_values(w, n, 45, 45, r);
    struct wpack_blk *b1 = malloc(wpack_blocks(n) * sizeof *b1), *b2 = malloc(wpack_blocks(n) * sizeof *b2);
    uint64_t *g1 = malloc(wpack_groups(n) * sizeof *g1), *g2 = malloc(wpack_groups(n) * sizeof *g2);
    const uint64_t o1 = wpack_classify(b1, g1, w, n_in, w + n_in, n_aux, NULL);
    const uint64_t o2 = wpack_classify(b2, g2, w, n_in, w + n_in, n_aux, pool_default());
    ASSERT_EQ_U64(o1, o2);
    fr_t *v1 = malloc(o1 * sizeof *v1), *v2 = malloc(o2 * sizeof *v2);
    wpack_fill(v1, b1, g1, w, n_in, w + n_in, n_aux, NULL);
    wpack_fill(v2, b2, g2, w, n_in, w + n_in, n_aux, pool_default());
    ASSERT(!memcmp(b1, b2, wpack_blocks(n) * sizeof *b1));
    ASSERT(!memcmp(v1, v2, o1 * sizeof *v1));
    /* about 10% of the values are other: the packing is about an eighth of the witness */
    const double packed = (double)(wpack_blocks(n) * sizeof *b1 + o1 * sizeof(fr_t)) / (double)(n * sizeof(fr_t));
    ASSERT_MSG(packed > 0.08 && packed < 0.14, "packed to %.3f of the witness", packed);
    free(w), free(b1), free(b2), free(g1), free(g2), free(v1), free(v2);
}
