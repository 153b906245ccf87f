/* test_snap_gen.c: the SnapDeals vanilla generator (snap_gen.h) and the native check
 * (fil_snap_partition_check). Oracles: the bincode reader (sizes of the reference's table,
 * the whole blob consumed), the circuit itself (a generated 2 KiB partition's witness
 * satisfies the shape row by row; the circuit's counts were pinned against upstream), and
 * for 2 KiB a dense recomputation here of tree D (comm_d_new) and of the challenged leaves'
 * encoding from nothing but the parsed values. Tamper: a byte flipped in each kind of field
 * is refused by the native check, which names the partition, the challenge and the field;
 * wrong commitments are refused too. */
#include <openssl/sha.h>

#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/snap_gen.h"
#include "cuzk/vanilla.h"
#include "test.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

struct comms { fr_t r_old, r_new, d_new; };

static void comms_of(struct comms *m, const struct fil_snap_gen *g)
{
    ASSERT_OK(fil_snap_commitment(&m->r_old, g->comm_r_old, 32, "comm_r_old", E), E);
    ASSERT_OK(fil_snap_commitment(&m->r_new, g->comm_r_new, 32, "comm_r_new", E), E);
    ASSERT_OK(fil_snap_commitment(&m->d_new, g->comm_d_new, 32, "comm_d_new", E), E);
}

/* parse + check partition k of blob (len n); the check's code */
static int parse_check(const struct fil_snap_gen *g, const uint8_t *blob, size_t n, unsigned k,
                       const struct comms *m)
{
    struct fil_snap_partition_proof p;
    int rc = fil_snap_partition_proof_parse(&p, &g->cfg, blob, n, k, E);
    if (rc) return rc;
    rc = fil_snap_partition_check(&g->cfg, &p, k, g->h, &m->r_old, &m->d_new, &m->r_new, E);
    fil_snap_partition_proof_free(&p);
    return rc;
}

TEST(snap_gen_every_size_parses_and_checks)
{
    static const uint64_t sizes[] = {2ull << 10, 8ull << 20, 512ull << 20, 32ull << 30, 64ull << 30,
                                     1ull << 10, 4ull << 10, 16ull << 10, 32ull << 10};
    static const size_t ref_sizes[] = {15064, 43864, 453064, 561768, 575528};   /* reference 5.5 */
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        struct fil_snap_gen g;
        uint64_t t0 = cuzk_now_ns();
        ASSERT_OK(fil_snap_generate(&g, sizes[s], test_seed() + s, E), E);
        double ms = (double)(cuzk_now_ns() - t0) / 1e6;
        if (s < 5) ASSERT_EQ_U64(g.len[0], ref_sizes[s]);
        ASSERT_EQ_U64(g.partitions, g.cfg.partitions);
        struct comms m;
        comms_of(&m, &g);
        t0 = cuzk_now_ns();
        for (unsigned k = 0; k < g.partitions; k++) ASSERT_OK(parse_check(&g, g.blob[k], g.len[k], k, &m), E);
        printf("size %llu: %u partitions x %zu bytes, generated in %.0f ms, parsed + checked in %.0f ms\n",
               (unsigned long long)sizes[s], g.partitions, g.len[0], ms, (double)(cuzk_now_ns() - t0) / 1e6);
        /* another partition's blob is not this partition's */
        if (g.partitions > 1) ASSERT_CODE(parse_check(&g, g.blob[1], g.len[1], 0, &m), CUZK_E_FORMAT, E);
        fil_snap_gen_free(&g);
    }
}
