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
        /* every partition of the small sizes; the first and last of the 16-partition ones */
        for (unsigned k = 0; k < g.partitions; k++)
            if (g.partitions < 16 || k == 0 || k == 15) ASSERT_OK(parse_check(&g, g.blob[k], g.len[k], k, &m), E);
        printf("size %llu: %u partitions x %zu bytes, generated in %.0f ms, parsed + checked in %.0f ms\n",
               (unsigned long long)sizes[s], g.partitions, g.len[0], ms, (double)(cuzk_now_ns() - t0) / 1e6);
        /* another partition's blob is not this partition's */
        if (g.partitions > 1) ASSERT_CODE(parse_check(&g, g.blob[1], g.len[1], 0, &m), CUZK_E_FORMAT, E);
        fil_snap_gen_free(&g);
    }
}

/* ------------------------------------------------------------- tampering -- */

/* Byte offsets in one PartitionProof, from the reference's layout (post-snap-circuits.md 5.2,
 * 5.4), not from the writer: PathElement of arity m = 16 + 32 (m - 1) bytes. */
struct lay {
    const struct snap_config *c;
    size_t r, d;                    /* a tree-R / tree-D MerkleProof */
};
static size_t path_sz(unsigned levels, unsigned arity) { return 8 + levels * (16 + 32 * (size_t)(arity - 1)); }
static struct lay lay_of(const struct snap_config *c)
{
    struct lay l = {c, 4 + 64 + path_sz(c->base_levels, 8), 4 + 64 + path_sz(c->nodes_log2, 2)};
    if (c->sub_arity) l.r += path_sz(1, c->sub_arity);
    if (c->top_arity) l.r += path_sz(1, c->top_arity);
    return l;
}
static size_t o_apex(const struct lay *l, unsigned i) { (void)l; return 40 + 32 * (size_t)i; }
static size_t o_ch(const struct lay *l, unsigned i)
{
    return 48 + 32 * (size_t)l->c->apex_leaves + i * (2 * l->r + l->d);
}
/* which: 0 proof_r_old, 2 proof_r_new */
static size_t o_r(const struct lay *l, unsigned i, int which) { return o_ch(l, i) + (which ? l->r + l->d : 0); }
static size_t o_d(const struct lay *l, unsigned i) { return o_ch(l, i) + l->r; }
/* root / leaf of a tree-R proof: Single = tag, root, leaf, path; Sub / Top = tag, paths, root, leaf */
static size_t o_r_root(const struct lay *l, unsigned i, int which)
{
    return o_r(l, i, which) + (l->c->sub_arity ? l->r - 64 : 4);
}
static size_t o_r_leaf(const struct lay *l, unsigned i, int which) { return o_r_root(l, i, which) + 32; }
/* sibling j of base level lv; lv == base_levels: the sub level's */
static size_t o_r_sib(const struct lay *l, unsigned i, int which, unsigned lv, unsigned j)
{
    size_t base = o_r(l, i, which) + 4 + (l->c->sub_arity ? 0 : 64);
    return base + 8 + lv * (size_t)240 + (lv == l->c->base_levels ? 8 : 0) + 8 + 32 * (size_t)j;
}
static size_t o_r_index(const struct lay *l, unsigned i, int which, unsigned lv)
{
    return o_r_sib(l, i, which, lv, 0) + 224;
}
static size_t o_d_leaf(const struct lay *l, unsigned i) { return o_d(l, i) + 36; }
static size_t o_d_root(const struct lay *l, unsigned i) { return o_d(l, i) + 4; }
static size_t o_d_sib(const struct lay *l, unsigned i, unsigned lv) { return o_d(l, i) + 76 + lv * (size_t)48 + 8; }

/* Flip the low bit of byte off of partition k (values stay canonical: they are < 2^254):
 * the blob must still parse, and the native check must refuse it naming every `want`. */
static void expect_caught(const struct fil_snap_gen *g, unsigned k, size_t off, const char *w1, const char *w2)
{
    uint8_t *b = malloc(g->len[k]);
    ASSERT(b);
    memcpy(b, g->blob[k], g->len[k]);
    ASSERT(off < g->len[k]);
    b[off] ^= 1;
    struct comms m;
    comms_of(&m, g);
    struct fil_snap_partition_proof p;
    ASSERT_OK(fil_snap_partition_proof_parse(&p, &g->cfg, b, g->len[k], k, E), E);
    int rc = fil_snap_partition_check(&g->cfg, &p, k, g->h, &m.r_old, &m.d_new, &m.r_new, E);
    ASSERT_MSG(rc == CUZK_E_FORMAT, "offset %zu (%s): code %s: %s", off, w1, cuzk_errname(rc), E->msg);
    char part[48];
    snprintf(part, sizeof part, "(partition %u)", k);
    ASSERT_STR_CONTAINS(E->msg, part);
    ASSERT_STR_CONTAINS(E->msg, w1);
    if (w2) ASSERT_STR_CONTAINS(E->msg, w2);
    fil_snap_partition_proof_free(&p);
    free(b);
}

static void tamper_size(uint64_t size, unsigned k)
{
    struct fil_snap_gen g;
    ASSERT_OK(fil_snap_generate(&g, size, test_seed() + 7, E), E);
    const struct snap_config *c = &g.cfg;
    struct lay l = lay_of(c);
    unsigned D = c->tree_d_levels, L = c->nodes_log2;
    ASSERT_EQ_U64(o_ch(&l, c->challenges), g.len[k]);      /* the layout covers the blob */
    expect_caught(&g, k, 0, "comm_c", "comm_r_old");
    expect_caught(&g, k, o_apex(&l, 5), "apex_leafs", "comm_d_new");
    expect_caught(&g, k, o_r_root(&l, 0, 0), "comm_r_last", "comm_r_old");
    expect_caught(&g, k, o_r_root(&l, 0, 2), "comm_r_last", "comm_r_new");
    expect_caught(&g, k, o_r_root(&l, 3, 0), "challenge_proofs[3]", "proof_r_old.root");
    expect_caught(&g, k, o_r_root(&l, 3, 2), "challenge_proofs[3]", "proof_r_new.root");
    expect_caught(&g, k, o_r_leaf(&l, 5, 0), "challenge_proofs[5]", "proof_r_old");
    expect_caught(&g, k, o_r_sib(&l, 5, 0, 1, 3), "challenge_proofs[5]", "proof_r_old");
    expect_caught(&g, k, o_r_leaf(&l, 7, 2), "challenge_proofs[7]", "proof_r_new.leaf");
    expect_caught(&g, k, o_r_sib(&l, 7, 2, 0, 6), "challenge_proofs[7]", "proof_r_new");
    if (c->sub_arity) {
        expect_caught(&g, k, o_r_sib(&l, 1, 2, c->base_levels, 2), "challenge_proofs[1]", "proof_r_new");
        expect_caught(&g, k, o_r_sib(&l, 1, 0, c->base_levels, 0), "challenge_proofs[1]", "proof_r_old");
    }
    expect_caught(&g, k, o_r_index(&l, 6, 0, 0), "challenge_proofs[6]", "indices");
    expect_caught(&g, k, o_r_index(&l, 6, 2, 1), "challenge_proofs[6]", "indices");
    expect_caught(&g, k, o_d_leaf(&l, 2), "challenge_proofs[2]", "apex_leafs[");
    expect_caught(&g, k, o_d_sib(&l, 2, 1), "challenge_proofs[2]", "apex_leafs[");
    expect_caught(&g, k, o_d_sib(&l, 2, D + 1), "challenge_proofs[2]", "comm_d_new");   /* apex level */
    expect_caught(&g, k, o_d_sib(&l, 4, L - 1), "challenge_proofs[4]", "comm_d_new");   /* partition path */
    expect_caught(&g, k, o_d_sib(&l, 0, L - 1), "apex_leafs", "partition path");         /* challenge 0's */
    expect_caught(&g, k, o_d_root(&l, 3), "challenge_proofs[3]", "root is not comm_d_new");
    expect_caught(&g, k, o_d_sib(&l, 8, 0) + 32, "challenge_proofs[8]", "proof_d_new: the path's indices");

    /* wrong commitments in the request */
    struct comms m;
    comms_of(&m, &g);
    struct fil_snap_partition_proof p;
    ASSERT_OK(fil_snap_partition_proof_parse(&p, c, g.blob[k], g.len[k], k, E), E);
    struct comms bad = m;
    fr_add(&bad.r_old, &bad.r_old, &FR_ONE);
    ASSERT_CODE(fil_snap_partition_check(c, &p, k, g.h, &bad.r_old, &bad.d_new, &bad.r_new, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "comm_r_old");
    bad = m;
    fr_add(&bad.r_new, &bad.r_new, &FR_ONE);
    ASSERT_CODE(fil_snap_partition_check(c, &p, k, g.h, &bad.r_old, &bad.d_new, &bad.r_new, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "comm_r_new");
    bad = m;
    fr_add(&bad.d_new, &bad.d_new, &FR_ONE);
    ASSERT_CODE(fil_snap_partition_check(c, &p, k, g.h, &bad.r_old, &bad.d_new, &bad.r_new, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "comm_d_new");
    /* another h than the data was encoded with: the encoding check */
    if (c->hs[0] != c->hs[3]) {
        ASSERT_CODE(fil_snap_partition_check(c, &p, k, c->hs[4], &m.r_old, &m.d_new, &m.r_new, E), CUZK_E_FORMAT, E);
        ASSERT_STR_CONTAINS(E->msg, "the encoding");
    }
    ASSERT_OK(fil_snap_partition_check(c, &p, k, g.h, &m.r_old, &m.d_new, &m.r_new, E), E);
    fil_snap_partition_proof_free(&p);

    /* malformed bincode: short by one byte, one byte too many, a wrong challenge count */
    uint8_t *b = malloc(g.len[k] + 1);
    ASSERT(b);
    memcpy(b, g.blob[k], g.len[k]);
    b[g.len[k]] = 0;
    char part[48];
    snprintf(part, sizeof part, "PartitionProof (partition %u)", k);
    ASSERT_CODE(fil_snap_partition_proof_parse(&p, c, b, g.len[k] - 1, k, E), CUZK_E_TRUNCATED, E);
    ASSERT_STR_CONTAINS(E->msg, part);
    ASSERT_CODE(fil_snap_partition_proof_parse(&p, c, b, g.len[k] + 1, k, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "trailing");
    b[o_ch(&l, 0) - 8] ^= 1;
    ASSERT_CODE(fil_snap_partition_proof_parse(&p, c, b, g.len[k], k, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "challenge_proofs");
    free(b);
    fil_snap_gen_free(&g);
}

TEST(snap_native_check_names_every_tampered_field)
{
    tamper_size(8ull << 20, 3);     /* tree R 8-0-0 (Single proofs), 4 partitions */
    tamper_size(32ull << 30, 9);    /* tree R 8-8-0 (Sub proofs), 16 partitions */
    tamper_size(64ull << 30, 15);   /* tree R 8-8-2 (Top proofs) */
}

/* ------------------------------------------------------------- witness -- */

/* The parallel witness equals the sequential values run of snap_synthesize, variable for
 * variable; at 2 KiB it satisfies the circuit's shape row by row. */
static void witness_matches(uint64_t size, unsigned k, bool check_shape)
{
    struct fil_snap_gen g;
    ASSERT_OK(fil_snap_generate(&g, size, test_seed() + 3, E), E);
    struct comms m;
    comms_of(&m, &g);
    struct fil_snap_partition_proof p;
    ASSERT_OK(fil_snap_partition_proof_parse(&p, &g.cfg, g.blob[k], g.len[k], k, E), E);
    fr_t *in, *aux;
    uint32_t n_in, n_aux;
    ASSERT_OK(fil_snap_witness_values(&in, &aux, &n_in, &n_aux, &g.cfg, &p, k, g.h, &m.r_old, &m.d_new, &m.r_new,
                                      pool_default(), E), E);
    struct snap_witness w;
    ASSERT_OK(fil_snap_witness_fill(&w, &g.cfg, &p, k, g.h, &m.r_old, &m.d_new, &m.r_new, E), E);
    struct g16_builder *b = check_shape ? g16_builder_new(false, E) : NULL;
    struct gcs_sink sink;
    if (b) sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_VALUES | (b ? GCS_SHAPE : 0), b ? &sink : NULL, E), E);
    snap_synthesize(&cs, &g.cfg, &w);
    ASSERT_OK(gcs_status(&cs, E), E);
    ASSERT_EQ_U64(cs.n_aux, n_aux);
    ASSERT_EQ_U64(cs.n_inputs, n_in);
    ASSERT_MEM_EQ(cs.inputs, in, n_in * sizeof(fr_t));
    ASSERT(memcmp(cs.aux, aux, (size_t)n_aux * sizeof(fr_t)) == 0);
    fr_t pub[4];
    ASSERT_OK(snap_public_inputs(pub, &g.cfg, k, g.h, &m.r_old, &m.d_new, &m.r_new, E), E);
    ASSERT_MEM_EQ(pub, in + 1, sizeof pub);
    if (b) {
        struct g16_shape s;
        ASSERT_OK(g16_builder_finish(b, &s, E), E);
        g16_builder_free(b);
        struct g16_assignment a = {in, aux};
        ASSERT_OK(g16_check(&s, &a, pool_default(), E), E);
        /* and a witness from a tampered leaf does not (the circuit, not our check, refuses) */
        aux[n_aux / 2] = FR_ONE;
        fr_add(&aux[n_aux - 1], &aux[n_aux - 1], &FR_ONE);
        ASSERT_CODE(g16_check(&s, &a, pool_default(), E), CUZK_E_UNSATISFIED, E);
        g16_shape_free(&s);
    }
    gcs_free(&cs);
    cuzk_free(in);
    cuzk_free(aux);
    fil_snap_partition_proof_free(&p);
    fil_snap_gen_free(&g);
}

TEST(snap_generated_witness_parallel_equals_sequential_and_satisfies)
{
    witness_matches(2048, 0, true);
    witness_matches(8ull << 20, 2, false);      /* partition bits, h = 10 */
}

/* Registered update proofs (go-state-types abi: 0..4 = StackedDrg{2KiB..64GiB}V1, reference
 * post-snap-circuits.md 6.2) and the request's commitment encoding. */
TEST(snap_update_proofs_and_commitments)
{
    static const struct { const char *name; uint64_t size; } want[5] = {
        {"StackedDrg2KiBV1", 2048}, {"StackedDrg8MiBV1", 8ull << 20}, {"StackedDrg512MiBV1", 512ull << 20},
        {"StackedDrg32GiBV1", 32ull << 30}, {"StackedDrg64GiBV1", 64ull << 30}};
    for (uint64_t i = 0; i < 5; i++) {
        uint64_t size;
        const char *name;
        ASSERT_OK(fil_update_proof(i, &size, &name, E), E);
        ASSERT_EQ_U64(size, want[i].size);
        ASSERT(!strcmp(name, want[i].name));
    }
    ASSERT_CODE(fil_update_proof(5, NULL, NULL, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "registered_proof 5 is not a registered update proof");
    uint8_t b[33];
    memset(b, 0, sizeof b);
    fr_t x;
    ASSERT_CODE(fil_snap_commitment(&x, b, 31, "comm_d_new", E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "comm_d_new: expected 32 bytes, got 31");
    ASSERT_CODE(fil_snap_commitment(&x, NULL, 0, "comm_r_old", E), CUZK_E_INVALID_ARG, E);
    /* r itself (little-endian) is the smallest non-canonical value; r - 1 is accepted */
    static const uint8_t r_le[32] = {0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x5b, 0xfe, 0xff, 0x02, 0xa4,
                                     0xbd, 0x53, 0x05, 0xd8, 0xa1, 0x09, 0x08, 0xd8, 0x39, 0x33, 0x48, 0x7d, 0x9d, 0x29,
                                     0x53, 0xa7, 0xed, 0x73};
    memcpy(b, r_le, 32);
    ASSERT_CODE(fil_snap_commitment(&x, b, 32, "comm_r_new", E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "comm_r_new: not a canonical field element");
    b[0] = 0;
    ASSERT_OK(fil_snap_commitment(&x, b, 32, "comm_r_new", E), E);
    uint8_t back[32];
    fr_to_bytes_le(back, &x);
    ASSERT_MEM_EQ(back, b, 32);
}
