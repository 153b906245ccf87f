/* test_snap.c: the SnapDeals partition circuit (snap.h): upstream's pinned constraint counts
 * for every size, the challenge KATs of challenges.rs, all gcs modes agreeing, and a 2 KiB
 * synthetic witness (old replica, data, new = old + data * rho, real tree-R / tree-D paths,
 * all computed natively here) that satisfies the shape, and fails it once tampered. */
#include <openssl/sha.h>

#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/snap.h"
#include "test.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

/* ------------------------------------------------------------------ counts -- */

struct counts { uint64_t constraints; uint32_t aux, inputs; };

static struct counts snap_counts(uint64_t size)
{
    struct snap_config c;
    ASSERT_OK(snap_config_for_size(&c, size, E), E);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, 0, NULL, E), E);
    snap_synthesize(&cs, &c, NULL);
    ASSERT_OK(gcs_status(&cs, E), E);
    struct counts r = {cs.n_constraints, cs.n_aux, cs.n_inputs};
    gcs_free(&cs);
    return r;
}

TEST(snap_counts_all_sizes)
{
    /* Constraints without the prover's input rows, as upstream's TestConstraintSystem /
     * BenchCS count them: storage-proofs-update tests/circuit.rs pins 1, 2, 4, 8, 16, 32 KiB
     * and 32 GiB; 8 MiB, 512 MiB and 64 GiB are the reference model's (post-snap-circuits.md
     * §1), as are all aux counts. Inputs include ONE. */
    static const struct { uint64_t size, cons; uint32_t aux; } t[] = {
        {1ull << 10, 1248389, 1247309},       {2ull << 10, 1705039, 1703569},
        {4ull << 10, 2165109, 2163189},       {8ull << 10, 2620359, 2618009},
        {16ull << 10, 6300021, 6293944},      {32ull << 10, 6760091, 6753564},
        {8ull << 20, 10007503, 9998039},      {512ull << 20, 57450479, 57401314},
        {32ull << 30, 81049499, 80978488},    {64ull << 30, 85006101, 84931220},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        struct counts c = snap_counts(t[i].size);
        ASSERT_EQ_U64(c.constraints, t[i].cons);
        ASSERT_EQ_U64(c.inputs, 5);
        ASSERT_EQ_U64(c.aux, t[i].aux);
    }
}

TEST(snap_config_table)
{
    /* constants.rs / post-snap-circuits.md §4.1 */
    static const struct { uint64_t size; unsigned L, P, K, A, D, R, Q, G, h, rl, rs; } t[] = {
        {2ull << 10, 6, 1, 10, 8, 3, 6, 42, 1, 1, 2, 14},
        {8ull << 20, 18, 4, 10, 128, 9, 16, 15, 1, 10, 6, 42},
        {512ull << 20, 24, 16, 86, 128, 13, 20, 12, 8, 10, 8, 56},
        {32ull << 30, 30, 16, 86, 128, 19, 26, 9, 10, 10, 10, 70},
        {64ull << 30, 31, 16, 86, 128, 20, 27, 9, 10, 10, 11, 71},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        struct snap_config c;
        ASSERT_OK(snap_config_for_size(&c, t[i].size, E), E);
        ASSERT_EQ_U64(c.nodes_log2, t[i].L);
        ASSERT_EQ_U64(c.partitions, t[i].P);
        ASSERT_EQ_U64(c.challenges, t[i].K);
        ASSERT_EQ_U64(c.apex_leaves, t[i].A);
        ASSERT_EQ_U64(c.tree_d_levels, t[i].D);
        ASSERT_EQ_U64(c.rand_bits, t[i].R);
        ASSERT_EQ_U64(c.per_digest, t[i].Q);
        ASSERT_EQ_U64(c.digests, t[i].G);
        ASSERT_EQ_U64(snap_h_default(&c), t[i].h);
        ASSERT_EQ_U64(c.r_levels, t[i].rl);
        ASSERT_EQ_U64(c.r_siblings, t[i].rs);
    }
    struct snap_config c;
    ASSERT_CODE(snap_config_for_size(&c, 4ull << 30, E), CUZK_E_UNSUPPORTED, E);
    ASSERT_STR_CONTAINS(E->msg, "not a SnapDeals size");
    /* k_and_h_select: 8 MiB partition 3, h = 10 (index 3): 3 | 8 << 2 = 35 */
    ASSERT_OK(snap_config_for_size(&c, 8ull << 20, E), E);
    fr_t v, e;
    ASSERT_OK(snap_k_and_h_select(&v, &c, 3, 10, E), E);
    fr_from_u64(&e, 35);
    ASSERT(fr_eq(&v, &e));
    ASSERT_CODE(snap_k_and_h_select(&v, &c, 4, 10, E), CUZK_E_INVALID_ARG, E);
    ASSERT_CODE(snap_k_and_h_select(&v, &c, 0, 13, E), CUZK_E_INVALID_ARG, E);
    /* 2 KiB: every hs entry is 1, so h_select = 1 (index 0) */
    ASSERT_OK(snap_config_for_size(&c, 2048, E), E);
    ASSERT_OK(snap_k_and_h_select(&v, &c, 0, snap_h_default(&c), E), E);
    ASSERT(fr_eq(&v, &FR_ONE));
}

/* ---------------------------------------------------------- challenge KATs -- */

static void fr_from_hex_le(fr_t *out, const char *hex)
{
    uint8_t b[32];
    for (int i = 0; i < 32; i++) {
        unsigned x;
        ASSERT(sscanf(hex + 2 * i, "%2x", &x) == 1);
        b[i] = (uint8_t)x;
    }
    ASSERT_OK(fr_from_bytes_le(out, b), E);
}

TEST(snap_challenges_kat)
{
    /* storage-proofs-update challenges.rs test_challenges_against_hardcoded (first five of
     * each), with comm_r_new = TreeRDomain::random(XorShift(TEST_SEED)). These pin the 2^40
     * tag, the digest index k * G + j, the LE chunking and the partition bits. */
    fr_t comm_r_new;
    fr_from_hex_le(&comm_r_new, "101cbe4b9c42604f04c703c396f788c6cb2d6d7d58f45430b12eb2edd640076c");
    static const struct { uint64_t size; unsigned k; uint64_t ch[5]; } t[] = {
        {2ull << 10, 0, {53, 51, 56, 3, 0}},
        {8ull << 20, 1, {78878, 130797, 112892, 93994, 78379}},
        {512ull << 20, 15, {16388544, 15794686, 16637142, 16319148, 16328348}},
        {32ull << 30, 0, {1019125, 27985696, 15282860, 11586600, 44651330}},
        {32ull << 30, 15, {1038629497, 1053983614, 1030421316, 1027373887, 1068685433}},
        {64ull << 30, 14, {1997053129, 1920414070, 2003609080, 1900492803, 1963254685}},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        struct snap_config c;
        ASSERT_OK(snap_config_for_size(&c, t[i].size, E), E);
        uint64_t ch[SNAP_MAX_CHALLENGES];
        ASSERT_OK(snap_challenges(ch, &c, &comm_r_new, t[i].k, E), E);
        for (int j = 0; j < 5; j++) ASSERT_EQ_U64(ch[j], t[i].ch[j]);
        for (unsigned j = 0; j < c.challenges; j++) ASSERT_EQ_U64(ch[j] >> c.rand_bits, t[i].k);
    }
    /* the digest itself (reference model value) */
    fr_t d, want;
    ASSERT_OK(snap_hash_gen(&d, &comm_r_new, &FR_ZERO, E), E);
    fr_from_hex_le(&want, "f58c0f801cacc62a930e0a332c4253a93662416412bc1f9a0678e9cca731b661");
    ASSERT(fr_eq(&d, &want));
}

/* ------------------------------------------------------------ modes agree -- */

TEST(snap_2k_shape_modes_agree)
{
    /* Shape through the builder (matrices kept), values and counting: same counts; the shape
     * has 1,705,039 + 5 rows. */
    struct snap_config c;
    ASSERT_OK(snap_config_for_size(&c, 2048, E), E);
    struct g16_builder *b = g16_builder_new(false, E);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, E), E);
    snap_synthesize(&cs, &c, NULL);
    ASSERT_OK(gcs_status(&cs, E), E);
    struct counts sc = {cs.n_constraints, cs.n_aux, cs.n_inputs};
    gcs_free(&cs);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, E), E);
    g16_builder_free(b);
    ASSERT_EQ_U64(s.n_constraints, 1705039 + 5);
    ASSERT_EQ_U64(s.n_inputs, 5);
    ASSERT_EQ_U64(s.n_aux, 1703569);
    ASSERT_EQ_U64(s.b_inp_count, 1);           /* only ONE among the inputs is in B */
    g16_shape_free(&s);
    struct counts cc = snap_counts(2048);
    ASSERT_EQ_U64(cc.constraints, sc.constraints);
    ASSERT_EQ_U64(cc.aux, sc.aux);
    ASSERT_EQ_U64(cc.inputs, sc.inputs);
}

/* ---------------------------------------------------- 2 KiB witness -- */

#define N2K 64          /* nodes of a 2 KiB sector */

static void rand_fr(fr_t *x, bool sha_domain)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    if (sha_domain) {
        b[31] &= 0x3f;
        ASSERT_OK(fr_from_bytes_le(x, b), E);
    } else {
        fr_from_wide_le(x, b);
    }
}

/* filecoin-hashers Sha256 hash2: SHA-256 of the two LE encodings, top 2 bits of byte 31 cleared. */
static void sha_node(fr_t *out, const fr_t *l, const fr_t *r)
{
    uint8_t m[64], d[32];
    fr_to_bytes_le(m, l);
    fr_to_bytes_le(m + 32, r);
    SHA256(m, 64, d);
    d[31] &= 0x3f;
    ASSERT_OK(fr_from_bytes_le(out, d), E);
}

/* Every level of a tree, leaves first: levels[0] = leaves. arity 2 (SHA) or 8 (Poseidon). */
struct tree { fr_t lv[8][N2K]; unsigned n[8], depth; };

static void build_tree(struct tree *t, const fr_t *leaves, unsigned arity)
{
    const struct poseidon_consts *pc = arity == 8 ? poseidon_consts_get(8, E) : NULL;
    memcpy(t->lv[0], leaves, N2K * sizeof(fr_t));
    t->n[0] = N2K;
    t->depth = 0;
    while (t->n[t->depth] > 1) {
        unsigned d = t->depth, m = t->n[d] / arity;
        for (unsigned i = 0; i < m; i++) {
            if (arity == 2) sha_node(&t->lv[d + 1][i], &t->lv[d][2 * i], &t->lv[d][2 * i + 1]);
            else poseidon_hash(&t->lv[d + 1][i], pc, &t->lv[d][8 * i]);
        }
        t->n[d + 1] = m;
        t->depth++;
    }
}

/* Siblings of node c, level by level, in sibling order (the node itself left out). */
static unsigned tree_path(fr_t *out, const struct tree *t, uint64_t c, unsigned arity, unsigned levels)
{
    unsigned n = 0;
    for (unsigned l = 0; l < levels; l++, c /= arity) {
        uint64_t first = c - c % arity;
        for (unsigned i = 0; i < arity; i++)
            if (first + i != c) out[n++] = t->lv[l][first + i];
    }
    return n;
}

struct snap_fixture {
    struct snap_config c;
    struct snap_witness w;
    struct snap_challenge ch[10];
    fr_t path_r_old[10][14], path_r_new[10][14], path_d[10][3];
    fr_t apex[8];
    fr_t old_rep[N2K], data[N2K], new_rep[N2K];
    struct tree td, tro, trn;
};

static struct snap_fixture *make_2k_witness(void)
{
    struct snap_fixture *f = calloc(1, sizeof *f);
    ASSERT(f);
    struct snap_config *c = &f->c;
    ASSERT_OK(snap_config_for_size(c, 2048, E), E);
    const struct poseidon_consts *p2 = poseidon_consts_get(2, E);
    ASSERT(p2);
    for (unsigned i = 0; i < N2K; i++) {
        rand_fr(&f->old_rep[i], false);
        rand_fr(&f->data[i], true);
    }
    struct snap_witness *w = &f->w;
    build_tree(&f->td, f->data, 2);
    build_tree(&f->tro, f->old_rep, 8);
    ASSERT_EQ_U64(f->td.depth, 6);
    ASSERT_EQ_U64(f->tro.depth, 2);
    w->comm_d_new = f->td.lv[6][0];
    w->root_r_old = f->tro.lv[2][0];
    rand_fr(&w->comm_c, false);
    fr_t pre[2] = {w->comm_c, w->root_r_old};
    poseidon_hash(&w->comm_r_old, p2, pre);
    /* encode: new = old + data * rho(node >> (L - h)) */
    unsigned h = snap_h_default(c);
    fr_t phi;
    ASSERT_OK(snap_hash_gen(&phi, &w->comm_d_new, &w->comm_r_old, E), E);
    for (unsigned i = 0; i < N2K; i++) {
        fr_t rho, t;
        ASSERT_OK(snap_rho(&rho, c, &phi, i, h, E), E);
        fr_mul(&t, &f->data[i], &rho);
        fr_add(&f->new_rep[i], &f->old_rep[i], &t);
    }
    build_tree(&f->trn, f->new_rep, 8);
    w->root_r_new = f->trn.lv[2][0];
    pre[1] = w->root_r_new;
    poseidon_hash(&w->comm_r_new, p2, pre);
    ASSERT_OK(snap_k_and_h_select(&w->k_and_h_select, c, 0, h, E), E);
    /* partition 0's apex leaves: the tree-D row D levels above the leaves; no partition path */
    ASSERT_EQ_U64(c->tree_d_levels, 3);
    ASSERT_EQ_U64(f->td.n[3], 8);
    memcpy(f->apex, f->td.lv[3], sizeof f->apex);
    w->apex_leaves = f->apex;
    w->partition_path = NULL;
    uint64_t chal[SNAP_MAX_CHALLENGES];
    ASSERT_OK(snap_challenges(chal, c, &w->comm_r_new, 0, E), E);
    for (unsigned i = 0; i < c->challenges; i++) {
        uint64_t node = chal[i];
        ASSERT(node < N2K);
        f->ch[i].leaf_r_old = f->old_rep[node];
        f->ch[i].leaf_d_new = f->data[node];
        ASSERT_EQ_U64(tree_path(f->path_r_old[i], &f->tro, node, 8, 2), 14);
        ASSERT_EQ_U64(tree_path(f->path_r_new[i], &f->trn, node, 8, 2), 14);
        ASSERT_EQ_U64(tree_path(f->path_d[i], &f->td, node, 2, 3), 3);
        f->ch[i].path_r_old = f->path_r_old[i];
        f->ch[i].path_r_new = f->path_r_new[i];
        f->ch[i].path_d = f->path_d[i];
    }
    w->ch = f->ch;
    return f;
}

/* Shape and values in one pass; g16_check's verdict (and the message on failure). */
static int synth_check(const struct snap_fixture *f, struct g16_shape *keep)
{
    struct g16_builder *b = g16_builder_new(false, E);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE | GCS_VALUES, &sink, E), E);
    snap_synthesize(&cs, &f->c, &f->w);
    ASSERT_OK(gcs_status(&cs, E), E);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, E), E);
    g16_builder_free(b);
    ASSERT_EQ_U64(s.n_constraints, 1705039 + 5);
    ASSERT_EQ_U64(s.n_aux, cs.n_aux);
    /* the public inputs, in upstream's order */
    ASSERT(fr_eq(&cs.inputs[0], &FR_ONE));
    ASSERT(fr_eq(&cs.inputs[1], &f->w.k_and_h_select));
    ASSERT(fr_eq(&cs.inputs[2], &f->w.comm_r_old));
    ASSERT(fr_eq(&cs.inputs[3], &f->w.comm_d_new));
    ASSERT(fr_eq(&cs.inputs[4], &f->w.comm_r_new));
    fr_t pub[4];
    ASSERT_OK(snap_public_inputs(pub, &f->c, 0, snap_h_default(&f->c), &f->w.comm_r_old, &f->w.comm_d_new,
                                 &f->w.comm_r_new, E), E);
    ASSERT_MEM_EQ(pub, cs.inputs + 1, sizeof pub);
    struct g16_assignment a = {cs.inputs, cs.aux};
    int rc = g16_check(&s, &a, NULL, E);
    if (keep) *keep = s;
    else g16_shape_free(&s);
    gcs_free(&cs);
    return rc;
}

TEST(snap_2k_witness_satisfies_and_tamper_fails)
{
    struct snap_fixture *f = make_2k_witness();
    ASSERT_OK(synth_check(f, NULL), E);

    /* a data leaf of challenge 3 changed: tree D and the encoding break */
    fr_t keep = f->ch[3].leaf_d_new;
    fr_add(&f->ch[3].leaf_d_new, &f->ch[3].leaf_d_new, &FR_ONE);
    ASSERT_CODE(synth_check(f, NULL), CUZK_E_UNSATISFIED, E);
    f->ch[3].leaf_d_new = keep;
    /* a tree-R-new sibling */
    keep = f->path_r_new[7][5];
    fr_add(&f->path_r_new[7][5], &f->path_r_new[7][5], &FR_ONE);
    ASSERT_CODE(synth_check(f, NULL), CUZK_E_UNSATISFIED, E);
    f->path_r_new[7][5] = keep;
    /* an apex leaf */
    keep = f->apex[5];
    fr_add(&f->apex[5], &f->apex[5], &FR_ONE);
    ASSERT_CODE(synth_check(f, NULL), CUZK_E_UNSATISFIED, E);
    f->apex[5] = keep;
    /* the old replica leaf alone (new leaf no longer old + data * rho) */
    keep = f->ch[0].leaf_r_old;
    fr_add(&f->ch[0].leaf_r_old, &f->ch[0].leaf_r_old, &FR_ONE);
    ASSERT_CODE(synth_check(f, NULL), CUZK_E_UNSATISFIED, E);
    f->ch[0].leaf_r_old = keep;
    /* restored: satisfied again */
    ASSERT_OK(synth_check(f, NULL), E);
    free(f);
}

TEST(snap_bad_witness_is_an_error)
{
    struct snap_fixture *f = make_2k_witness();
    struct gcs cs;
    /* h_select with two bits set */
    fr_from_u64(&f->w.k_and_h_select, 3);
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    snap_synthesize(&cs, &f->c, &f->w);
    ASSERT_CODE(gcs_status(&cs, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "k_and_h_select");
    gcs_free(&cs);
    /* stray high bit */
    fr_from_u64(&f->w.k_and_h_select, 1 | (1u << 6));
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    snap_synthesize(&cs, &f->c, &f->w);
    ASSERT_CODE(gcs_status(&cs, E), CUZK_E_INVALID_ARG, E);
    gcs_free(&cs);
    /* a missing path */
    fr_from_u64(&f->w.k_and_h_select, 1);
    f->ch[4].path_d = NULL;
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    snap_synthesize(&cs, &f->c, &f->w);
    ASSERT_CODE(gcs_status(&cs, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "challenge 4 has no tree-D path");
    gcs_free(&cs);
    free(f);
}

/* ------------------------------------------------------------- large shapes -- */

TEST_T(snap_32g_shape_count_only, 600)
{
    /* The builder's count-only shape at 32 GiB (81 M rows, ~20 s of CPU): rows and variables
     * equal the counting run; only with CUZK_TEST_SLOW=1. */
    if (!getenv("CUZK_TEST_SLOW")) test_skip("set CUZK_TEST_SLOW=1 (about 20 s)");
    struct snap_config c;
    ASSERT_OK(snap_config_for_size(&c, 32ull << 30, E), E);
    struct g16_builder *b = g16_builder_new(true, E);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, E), E);
    snap_synthesize(&cs, &c, NULL);
    ASSERT_OK(gcs_status(&cs, E), E);
    gcs_free(&cs);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, E), E);
    g16_builder_free(b);
    ASSERT_EQ_U64(s.n_constraints, 81049499 + 5);
    ASSERT_EQ_U64(s.n_inputs, 5);
    ASSERT_EQ_U64(s.n_aux, 80978488);
    ASSERT_EQ_U64(s.b_inp_count, 1);
    g16_shape_free(&s);
}
