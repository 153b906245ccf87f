/* test_bincode.c: the bincode vanilla-proof readers (vanilla.h). Encodings are built by a
 * small independent serializer here (bincode 1.x rules written out by hand from the upstream
 * serde definitions, not the parser run backwards): PoSt sector proofs and SnapDeals
 * partition proofs of the 2 KiB, 32 GiB (and 64 GiB / 8 MiB) shapes round-trip with random
 * values and have the sizes of the reference's table; every malformed class (truncation at
 * every length, wrong enum variant, wrong counts / path lengths, index out of range,
 * trailing bytes, non-canonical Fr, more sectors than the partition holds, inconsistent
 * partition paths) is refused with a message naming the sector / partition, the field and
 * the byte offset; a consistent 2 KiB PoSt sector proof becomes a witness that satisfies the
 * WindowPoSt shape. */
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/vanilla.h"
#include "test.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

#define KIB(x) ((uint64_t)(x) << 10)
#define MIB(x) ((uint64_t)(x) << 20)
#define GIB(x) ((uint64_t)(x) << 30)

/* ------------------------------------------------------- the test's writer -- */

struct wb {
    uint8_t *p;
    size_t n, cap;
};
static void w_bytes(struct wb *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        ASSERT(b->p);
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void w_u32(struct wb *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    w_bytes(b, x, 4);
}
static void w_u64(struct wb *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++) x[i] = (uint8_t)(v >> (8 * i));
    w_bytes(b, x, 8);
}
static void w_fr(struct wb *b, const fr_t *x)
{
    uint8_t d[32];
    fr_to_bytes_le(d, x);
    w_bytes(b, d, 32);
}
static void put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* A tree shape as the test knows it (constants.rs SectorShape*). */
struct tshape {
    unsigned base_levels, sub, top;     /* base arity is 8 for tree R; tree D: arity 2, sub = top = 0 */
    unsigned arity0;
};
static const struct tshape SH_2K = {2, 0, 0, 8}, SH_8M = {6, 0, 0, 8}, SH_32G = {9, 8, 0, 8},
                           SH_64G = {9, 8, 2, 8};
static unsigned sh_levels(const struct tshape *s) { return s->base_levels + !!s->sub + !!s->top; }
static unsigned sh_arity(const struct tshape *s, unsigned l)
{
    return l < s->base_levels ? s->arity0 : l == s->base_levels ? s->sub : s->top;
}

/* One MerkleProof model. */
struct tproof {
    fr_t root, leaf;
    uint32_t idx[40];
    fr_t sib[96];
};
static void rand_fr(fr_t *x)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    fr_from_wide_le(x, b);
}
static void tproof_rand(struct tproof *m, const struct tshape *s)
{
    rand_fr(&m->root);
    rand_fr(&m->leaf);
    unsigned k = 0;
    for (unsigned l = 0; l < sh_levels(s); l++) {
        unsigned a = sh_arity(s, l);
        m->idx[l] = (uint32_t)(cuzk_rng_u64(test_rng()) % a);
        for (unsigned j = 0; j + 1 < a; j++) rand_fr(&m->sib[k++]);
    }
}
/* InclusionPath of levels [from, from + count). */
static void w_path(struct wb *b, const struct tshape *s, const struct tproof *m, unsigned from, unsigned count)
{
    unsigned k = 0;
    for (unsigned l = 0; l < from; l++) k += sh_arity(s, l) - 1;
    w_u64(b, count);
    for (unsigned l = from; l < from + count; l++) {
        unsigned a = sh_arity(s, l);
        w_u64(b, a - 1);
        for (unsigned j = 0; j + 1 < a; j++) w_fr(b, &m->sib[k++]);
        w_u64(b, m->idx[l]);
    }
}
static void w_merkle(struct wb *b, const struct tshape *s, const struct tproof *m)
{
    if (!s->sub) {              /* Single {root, leaf, path} */
        w_u32(b, 0);
        w_fr(b, &m->root);
        w_fr(b, &m->leaf);
        w_path(b, s, m, 0, s->base_levels);
        return;
    }
    w_u32(b, s->top ? 2 : 1);   /* Sub / Top {base_proof, sub_proof, [top_proof], root, leaf} */
    w_path(b, s, m, 0, s->base_levels);
    w_path(b, s, m, s->base_levels, 1);
    if (s->top) w_path(b, s, m, s->base_levels + 1, 1);
    w_fr(b, &m->root);
    w_fr(b, &m->leaf);
}
static uint64_t tproof_pos(const struct tshape *s, const struct tproof *m)
{
    uint64_t p = 0, mul = 1;
    for (unsigned l = 0; l < sh_levels(s); l++) {
        p += m->idx[l] * mul;
        mul *= sh_arity(s, l);
    }
    return p;
}

/* ------------------------------------------------------------------ PoSt -- */

struct tpost {
    uint64_t sector_id;
    fr_t comm_r, comm_c, comm_r_last;
    unsigned n;
    struct tproof *pr;
};
static void tpost_rand(struct tpost *t, const struct tshape *s, unsigned n)
{
    t->sector_id = cuzk_rng_u64(test_rng());
    rand_fr(&t->comm_r);
    rand_fr(&t->comm_c);
    rand_fr(&t->comm_r_last);
    t->n = n;
    t->pr = calloc(n, sizeof *t->pr);
    ASSERT(t->pr);
    for (unsigned i = 0; i < n; i++) tproof_rand(&t->pr[i], s);
}
static void w_post(struct wb *b, const struct tshape *s, const struct tpost *t)
{
    w_u64(b, t->sector_id);
    w_fr(b, &t->comm_r);
    w_u64(b, 1);                /* vanilla_proof.sectors: one SectorProof */
    w_u64(b, t->n);
    for (unsigned i = 0; i < t->n; i++) w_merkle(b, s, &t->pr[i]);
    w_fr(b, &t->comm_c);
    w_fr(b, &t->comm_r_last);
}

static void post_cfg(struct post_config *c, enum post_kind k, uint64_t size)
{
    ASSERT_OK(post_config_for_size(c, k, size, E), E);
}

static void check_post_equal(const struct fil_post_sector_proof *p, const struct tpost *t, const struct tshape *s)
{
    ASSERT_EQ_U64(p->sector_id, t->sector_id);
    ASSERT(fr_eq(&p->comm_r, &t->comm_r) && fr_eq(&p->comm_c, &t->comm_c) &&
           fr_eq(&p->comm_r_last, &t->comm_r_last));
    ASSERT_EQ_U64(p->challenges, t->n);
    ASSERT_EQ_U64(p->levels, sh_levels(s));
    for (unsigned i = 0; i < t->n; i++) {
        ASSERT(fr_eq(&p->leaves[i], &t->pr[i].leaf));
        ASSERT(fr_eq(&p->roots[i], &t->pr[i].root));
        ASSERT_EQ_U64(p->leaf_index[i], tproof_pos(s, &t->pr[i]));
        for (unsigned l = 0; l < p->levels; l++) ASSERT_EQ_U64(p->paths[i].index[l], t->pr[i].idx[l]);
        for (unsigned j = 0; j < p->siblings; j++) ASSERT(fr_eq(&p->paths[i].siblings[j], &t->pr[i].sib[j]));
    }
}

TEST(post_roundtrip_shapes)
{
    static const struct {
        enum post_kind kind;
        uint64_t size;
        const struct tshape *sh;
        size_t bytes;           /* post-snap-circuits.md 5.5 */
    } T[] = {
        {POST_WINDOW, KIB(2), &SH_2K, 5680},   {POST_WINNING, KIB(2), &SH_2K, 36816},
        {POST_WINDOW, MIB(8), &SH_8M, 15280},  {POST_WINDOW, GIB(32), &SH_32G, 24960},
        {POST_WINNING, GIB(32), &SH_32G, 164064}, {POST_WINDOW, GIB(64), &SH_64G, 25520},
    };
    for (size_t k = 0; k < sizeof T / sizeof *T; k++) {
        struct post_config c;
        post_cfg(&c, T[k].kind, T[k].size);
        unsigned n = T[k].kind == POST_WINNING ? 66 : 10;
        struct tpost t;
        tpost_rand(&t, T[k].sh, n);
        struct wb b = {0};
        w_post(&b, T[k].sh, &t);
        ASSERT_EQ_U64(b.n, T[k].bytes);
        struct fil_post_sector_proof p;
        ASSERT_OK(fil_post_sector_proof_parse(&p, &c, b.p, b.n, 0, E), E);
        check_post_equal(&p, &t, T[k].sh);
        /* circuit sectors */
        struct post_sector ps;
        if (T[k].kind == POST_WINNING) {
            ASSERT_OK(fil_post_sector_fill(&ps, &c, &p, 65, E), E);
            ASSERT(fr_eq(&ps.leaves[0], &t.pr[65].leaf));
            ASSERT_CODE(fil_post_sector_fill(&ps, &c, &p, 66, E), CUZK_E_INVALID_ARG, E);
        } else {
            ASSERT_OK(fil_post_sector_fill(&ps, &c, &p, 0, E), E);
            ASSERT(ps.paths == p.paths && ps.leaves == p.leaves && fr_eq(&ps.comm_c, &t.comm_c));
        }
        /* a blob of another size's shape is refused (the enum variant or the path length) */
        fil_post_sector_proof_free(&p);
        struct post_config other;
        post_cfg(&other, T[k].kind, T[k].size == KIB(2) ? GIB(32) : KIB(2));
        ASSERT_CODE(fil_post_sector_proof_parse(&p, &other, b.p, b.n, 0, E), CUZK_E_FORMAT, E);
        ASSERT_STR_CONTAINS(E->msg, "vanilla_proof.sectors[0].inclusion_proofs[0].data");
        ASSERT_STR_CONTAINS(E->msg, T[k].sh == &SH_8M ? "path at byte 124" : "data at byte 56");
        fil_post_sector_proof_free(&p);
        free(b.p);
        free(t.pr);
    }
}

/* A valid 2 KiB WindowPoSt blob: proof 0 starts at 56 (tag 56, root 60, leaf 92, path count
 * 124, path[0].hashes count 132, hashes 140.., index 364, path[1] 372..), 556 bytes each. */
static void post2k_blob(struct wb *b, struct tpost *t)
{
    tpost_rand(t, &SH_2K, 10);
    memset(b, 0, sizeof *b);
    w_post(b, &SH_2K, t);
    ASSERT_EQ_U64(b->n, 5680);
}

static void expect_post(const struct post_config *c, const uint8_t *d, size_t n, int code, const char *part)
{
    struct fil_post_sector_proof p;
    memset(&p, 0xa5, sizeof p);
    ASSERT_CODE(fil_post_sector_proof_parse(&p, c, d, n, 7, E), code, E);
    ASSERT_STR_CONTAINS(E->msg, "FallbackPoStSectorProof (sector 7): ");
    ASSERT_STR_CONTAINS(E->msg, part);
    ASSERT(p.arena == NULL);
}

TEST(post_malformed)
{
    struct post_config c;
    post_cfg(&c, POST_WINDOW, KIB(2));
    struct tpost t;
    struct wb b;
    post2k_blob(&b, &t);
    uint8_t *d = malloc(b.n + 1);
    ASSERT(d);
#define RESET() memcpy(d, b.p, b.n)
    /* truncated at every length */
    for (size_t n = 0; n < b.n; n++) {
        RESET();
        expect_post(&c, d, n, CUZK_E_TRUNCATED, "truncated");
    }
    expect_post(&c, d, 0, CUZK_E_TRUNCATED, "sector_id at byte 0");
    expect_post(&c, d, 150, CUZK_E_TRUNCATED,
                "vanilla_proof.sectors[0].inclusion_proofs[0].data.Single.path.path[0].hashes[0] at byte 140: "
                "truncated: a 32-byte domain needs 32 bytes, 10 left");
    expect_post(&c, d, b.n - 1, CUZK_E_TRUNCATED, "vanilla_proof.sectors[0].comm_r_last at byte 5648");
    /* wrong enum variant (known and unknown) */
    RESET();
    put_u32(d + 56 + 556, 1);
    expect_post(&c, d, b.n, CUZK_E_FORMAT,
                "inclusion_proofs[1].data at byte 612: expected variant 0 (Single), got 1 (Sub)");
    put_u32(d + 56 + 556, 9);
    expect_post(&c, d, b.n, CUZK_E_FORMAT, "got unknown variant 9");
    /* wrong path length, sibling count, index */
    RESET();
    put_u64(d + 124, 3);
    expect_post(&c, d, b.n, CUZK_E_FORMAT,
                "inclusion_proofs[0].data.Single.path.path at byte 124: expected 2 path elements (tree R 8-0-0), got 3");
    RESET();
    put_u64(d + 372, 6);
    expect_post(&c, d, b.n, CUZK_E_FORMAT, "path.path[1].hashes at byte 372: expected 7 sibling hashes (arity 8), got 6");
    RESET();
    put_u64(d + 364, 8);
    expect_post(&c, d, b.n, CUZK_E_FORMAT, "path.path[0].index at byte 364: expected 0..7 (arity 8), got 8");
    /* counts of the vanilla proof */
    RESET();
    put_u64(d + 40, 2);
    expect_post(&c, d, b.n, CUZK_E_FORMAT, "vanilla_proof.sectors at byte 40: expected 1 SectorProof");
    RESET();
    put_u64(d + 48, 0xffffffffffffffffull);
    expect_post(&c, d, b.n, CUZK_E_FORMAT,
                "vanilla_proof.sectors[0].inclusion_proofs at byte 48: expected 10 inclusion proofs (window-post), "
                "got 18446744073709551615");
    /* trailing bytes */
    RESET();
    d[b.n] = 0;
    expect_post(&c, d, b.n + 1, CUZK_E_FORMAT, "(start) at byte 5680: 1 trailing bytes");
    /* non-canonical Fr: comm_r, a sibling, comm_c (r itself and all-ones) */
    static const uint8_t R_LE[32] = {0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x5b, 0xfe,
                                     0xff, 0x02, 0xa4, 0xbd, 0x53, 0x05, 0xd8, 0xa1, 0x09, 0x08, 0xd8,
                                     0x39, 0x33, 0x48, 0x7d, 0x9d, 0x29, 0x53, 0xa7, 0xed, 0x73};
    RESET();
    memcpy(d + 8, R_LE, 32);
    expect_post(&c, d, b.n, CUZK_E_BAD_ENCODING, "comm_r at byte 8: not a canonical field element");
    RESET();
    memset(d + 140 + 32 * 3, 0xff, 32);
    expect_post(&c, d, b.n, CUZK_E_BAD_ENCODING, "inclusion_proofs[0].data.Single.path.path[0].hashes[3] at byte 236");
    RESET();
    memset(d + b.n - 64, 0xff, 32);
    expect_post(&c, d, b.n, CUZK_E_BAD_ENCODING, "vanilla_proof.sectors[0].comm_c at byte 5616");
    /* r - 1 is fine */
    RESET();
    memcpy(d + 8, R_LE, 32);
    d[8] = 0;
    struct fil_post_sector_proof p;
    ASSERT_OK(fil_post_sector_proof_parse(&p, &c, d, b.n, 0, E), E);
    fil_post_sector_proof_free(&p);
    ASSERT_CODE(fil_post_sector_proof_parse(&p, &c, NULL, 5, 0, E), CUZK_E_INVALID_ARG, E);
#undef RESET
    free(d);
    free(b.p);
    free(t.pr);
}

TEST(post_partition_counts)
{
    struct post_config c, cw;
    post_cfg(&c, POST_WINDOW, KIB(2));
    post_cfg(&cw, POST_WINNING, KIB(2));
    struct fil_post_sector_proof p[3];
    struct tpost t[3];
    for (int i = 0; i < 3; i++) {
        struct wb b;
        post2k_blob(&b, &t[i]);
        ASSERT_OK(fil_post_sector_proof_parse(&p[i], &c, b.p, b.n, (unsigned)i, E), E);
        free(b.p);
    }
    struct fil_post_partition part;
    /* more sectors than the partition holds */
    ASSERT_CODE(fil_post_partition_build(&part, &c, p, 3, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "3 sector proofs, more than the partition holds (2); sector 2 is the first extra");
    ASSERT_CODE(fil_post_partition_build(&part, &c, p, 0, E), CUZK_E_FORMAT, E);
    /* a window-post sector proof in a winning-post partition: does not fit */
    ASSERT_CODE(fil_post_partition_build(&part, &cw, p, 1, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "sector 0: ");
    ASSERT_CODE(fil_post_partition_build(&part, &cw, p, 2, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "expected exactly 1 sector proof, got 2");
    /* one real sector: padded with itself */
    ASSERT_OK(fil_post_partition_build(&part, &c, p, 1, E), E);
    ASSERT_EQ_U64(part.real, 1);
    ASSERT(part.sectors[1].paths == p[0].paths && fr_eq(&part.comm_r[1], &t[0].comm_r));
    ASSERT_EQ_U64(part.leaf_index[19], p[0].leaf_index[9]);
    fil_post_partition_free(&part);
    ASSERT_OK(fil_post_partition_build(&part, &c, p, 2, E), E);
    ASSERT(part.sectors[1].leaves == p[1].leaves && fr_eq(&part.comm_r[1], &t[1].comm_r));
    fil_post_partition_free(&part);
    for (int i = 0; i < 3; i++) {
        fil_post_sector_proof_free(&p[i]);
        free(t[i].pr);
    }
}

/* A consistent 2 KiB sector (random tree R of 64 leaves, real Poseidon paths, comm_r =
 * H(comm_c, comm_r_last)), encoded, parsed, built into a partition (one real sector padded
 * to 2): the witness satisfies the WindowPoSt shape and allocates the public inputs of
 * post_public_inputs(comm_r, leaf indices from the paths). */
TEST(post_2k_parsed_witness_satisfies)
{
    struct post_config c;
    post_cfg(&c, POST_WINDOW, KIB(2));
    const struct poseidon_consts *p8 = poseidon_consts_get(8, E), *p2 = poseidon_consts_get(2, E);
    ASSERT_MSG(p8 && p2, "%s", E->msg);
    fr_t leaf[64], mid[8], root;
    for (int i = 0; i < 64; i++) rand_fr(&leaf[i]);
    for (int j = 0; j < 8; j++) poseidon_hash(&mid[j], p8, &leaf[8 * j]);
    poseidon_hash(&root, p8, mid);
    struct tpost t;
    tpost_rand(&t, &SH_2K, 10);
    t.comm_r_last = root;
    fr_t pre[2] = {t.comm_c, root};
    poseidon_hash(&t.comm_r, p2, pre);
    for (unsigned i = 0; i < 10; i++) {
        struct tproof *m = &t.pr[i];
        unsigned n = (unsigned)(cuzk_rng_u64(test_rng()) % 64), k = 0;
        m->root = root;
        m->leaf = leaf[n];
        m->idx[0] = n % 8;
        m->idx[1] = n / 8;
        for (unsigned j = 0; j < 8; j++)
            if (j != n % 8) m->sib[k++] = leaf[8 * (n / 8) + j];
        for (unsigned j = 0; j < 8; j++)
            if (j != n / 8) m->sib[k++] = mid[j];
    }
    struct wb b = {0};
    w_post(&b, &SH_2K, &t);
    struct fil_post_sector_proof p;
    ASSERT_OK(fil_post_sector_proof_parse(&p, &c, b.p, b.n, 0, E), E);
    struct fil_post_partition part;
    ASSERT_OK(fil_post_partition_build(&part, &c, &p, 1, E), E);

    struct g16_builder *bl = g16_builder_new(false, E);
    ASSERT(bl);
    struct gcs_sink sink = gcs_sink_builder(bl);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, E), E);
    post_synthesize(&cs, &c, NULL);
    ASSERT_OK(gcs_status(&cs, E), E);
    gcs_free(&cs);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(bl, &s, E), E);
    g16_builder_free(bl);

    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, &c, &part.w);
    ASSERT_OK(gcs_status(&cs, E), E);
    struct g16_assignment a = {cs.inputs, cs.aux};
    ASSERT_OK(g16_check(&s, &a, NULL, E), E);
    fr_t want[23];
    ASSERT_OK(post_public_inputs(want, &c, part.comm_r, part.leaf_index, E), E);
    ASSERT_EQ_U64(cs.n_inputs, 23);
    ASSERT_MEM_EQ(cs.inputs, want, sizeof want);
    gcs_free(&cs);

    /* one flipped sibling byte (still canonical: the low byte): unsatisfied */
    b.p[56 + 556 * 4 + 140 + 32 * 2] ^= 1;
    struct fil_post_sector_proof q;
    ASSERT_OK(fil_post_sector_proof_parse(&q, &c, b.p, b.n, 0, E), E);
    struct fil_post_partition part2;
    ASSERT_OK(fil_post_partition_build(&part2, &c, &q, 1, E), E);
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, &c, &part2.w);
    ASSERT_OK(gcs_status(&cs, E), E);
    struct g16_assignment a2 = {cs.inputs, cs.aux};
    ASSERT_CODE(g16_check(&s, &a2, NULL, E), CUZK_E_UNSATISFIED, E);
    gcs_free(&cs);
    fil_post_partition_free(&part2);
    fil_post_sector_proof_free(&q);

    g16_shape_free(&s);
    fil_post_partition_free(&part);
    fil_post_sector_proof_free(&p);
    free(b.p);
    free(t.pr);
}

/* ------------------------------------------------------------- SnapDeals -- */

static const struct tshape SH_D = {0, 0, 0, 2};   /* base_levels set per size */

struct tsnap {
    fr_t comm_c;
    unsigned A, K, L;
    fr_t *apex;
    struct tproof *r_old, *d, *r_new;
};
static void tsnap_rand(struct tsnap *t, const struct snap_config *c, const struct tshape *sr)
{
    t->A = c->apex_leaves;
    t->K = c->challenges;
    t->L = c->nodes_log2;
    rand_fr(&t->comm_c);
    t->apex = calloc(t->A, sizeof *t->apex);
    t->r_old = calloc(t->K, sizeof(struct tproof));
    t->d = calloc(t->K, sizeof(struct tproof));
    t->r_new = calloc(t->K, sizeof(struct tproof));
    ASSERT(t->apex && t->r_old && t->d && t->r_new);
    for (unsigned i = 0; i < t->A; i++) rand_fr(&t->apex[i]);
    struct tshape sd = SH_D;
    sd.base_levels = t->L;
    for (unsigned i = 0; i < t->K; i++) {
        tproof_rand(&t->r_old[i], sr);
        tproof_rand(&t->d[i], &sd);
        tproof_rand(&t->r_new[i], sr);
    }
}
static void tsnap_free(struct tsnap *t)
{
    free(t->apex);
    free(t->r_old);
    free(t->d);
    free(t->r_new);
}
static void w_snap(struct wb *b, const struct tsnap *t, const struct tshape *sr)
{
    struct tshape sd = SH_D;
    sd.base_levels = t->L;
    w_fr(b, &t->comm_c);
    w_u64(b, t->A);
    for (unsigned i = 0; i < t->A; i++) w_fr(b, &t->apex[i]);
    w_u64(b, t->K);
    for (unsigned i = 0; i < t->K; i++) {
        w_merkle(b, sr, &t->r_old[i]);
        w_merkle(b, &sd, &t->d[i]);
        w_merkle(b, sr, &t->r_new[i]);
    }
}

static void snap_cfg(struct snap_config *c, uint64_t size)
{
    ASSERT_OK(snap_config_for_size(c, size, E), E);
}

TEST(snap_roundtrip_shapes)
{
    static const struct {
        uint64_t size;
        const struct tshape *sh;
        size_t bytes;           /* post-snap-circuits.md 5.5 */
    } T[] = {{KIB(2), &SH_2K, 15064}, {MIB(8), &SH_8M, 43864}, {GIB(32), &SH_32G, 561768},
             {GIB(64), &SH_64G, 575528}};
    for (size_t k = 0; k < sizeof T / sizeof *T; k++) {
        struct snap_config c;
        snap_cfg(&c, T[k].size);
        struct tsnap t;
        tsnap_rand(&t, &c, T[k].sh);
        struct wb b = {0};
        w_snap(&b, &t, T[k].sh);
        ASSERT_EQ_U64(b.n, T[k].bytes);
        struct fil_snap_partition_proof p;
        ASSERT_OK(fil_snap_partition_proof_parse(&p, &c, b.p, b.n, 3, E), E);
        ASSERT(fr_eq(&p.comm_c, &t.comm_c));
        for (unsigned i = 0; i < t.A; i++) ASSERT(fr_eq(&p.apex[i], &t.apex[i]));
        struct tshape sd = SH_D;
        sd.base_levels = t.L;
        for (unsigned i = 0; i < t.K; i++) {
            ASSERT(fr_eq(&p.ch[i].leaf_r_old, &t.r_old[i].leaf) && fr_eq(&p.root_r_old[i], &t.r_old[i].root));
            ASSERT(fr_eq(&p.ch[i].leaf_d_new, &t.d[i].leaf) && fr_eq(&p.root_d[i], &t.d[i].root));
            ASSERT(fr_eq(&p.leaf_r_new[i], &t.r_new[i].leaf) && fr_eq(&p.root_r_new[i], &t.r_new[i].root));
            ASSERT_EQ_U64(p.node[i], tproof_pos(&sd, &t.d[i]));
            for (unsigned j = 0; j < c.r_siblings; j++) {
                ASSERT(fr_eq(&p.ch[i].path_r_old[j], &t.r_old[i].sib[j]));
                ASSERT(fr_eq(&p.ch[i].path_r_new[j], &t.r_new[i].sib[j]));
            }
            for (unsigned j = 0; j < t.L; j++) ASSERT(fr_eq(&p.ch[i].path_d[j], &t.d[i].sib[j]));
            for (unsigned l = 0; l < p.r_levels; l++) {
                ASSERT_EQ_U64(p.idx_r_old[i * p.r_levels + l], t.r_old[i].idx[l]);
                ASSERT_EQ_U64(p.idx_r_new[i * p.r_levels + l], t.r_new[i].idx[l]);
            }
        }
        /* the witness: random partition paths differ unless the partition has none (p = 0) */
        struct snap_witness w;
        fr_t cr_old, cd_new, cr_new;
        rand_fr(&cr_old);
        rand_fr(&cd_new);
        rand_fr(&cr_new);
        int rc = fil_snap_witness_fill(&w, &c, &p, 0, snap_h_default(&c), &cr_old, &cd_new, &cr_new, E);
        if (c.partition_bits == 0) {
            ASSERT_OK(rc, E);
        } else {
            ASSERT_EQ_INT(rc, CUZK_E_FORMAT);
            ASSERT_STR_CONTAINS(E->msg, "challenge_proofs[1].proof_d_new.data.Single.path.path[");
            /* make them consistent */
            for (unsigned i = 1; i < t.K; i++)
                for (unsigned l = t.L - c.partition_bits; l < t.L; l++) t.d[i].sib[l] = t.d[0].sib[l];
            fil_snap_partition_proof_free(&p);
            b.n = 0;
            w_snap(&b, &t, T[k].sh);
            ASSERT_OK(fil_snap_partition_proof_parse(&p, &c, b.p, b.n, 3, E), E);
            ASSERT_OK(fil_snap_witness_fill(&w, &c, &p, 1, snap_h_default(&c), &cr_old, &cd_new, &cr_new, E), E);
            ASSERT(w.partition_path == p.sib_d + (t.L - c.partition_bits));
        }
        fr_t khs;
        ASSERT_OK(snap_k_and_h_select(&khs, &c, c.partition_bits ? 1 : 0, snap_h_default(&c), E), E);
        ASSERT(fr_eq(&w.k_and_h_select, &khs) && fr_eq(&w.comm_c, &t.comm_c) && fr_eq(&w.comm_r_new, &cr_new));
        ASSERT(fr_eq(&w.root_r_old, &t.r_old[0].root) && fr_eq(&w.root_r_new, &t.r_new[0].root));
        ASSERT(w.apex_leaves == p.apex && w.ch == p.ch);
        /* k out of range is refused by snap_k_and_h_select */
        ASSERT(fil_snap_witness_fill(&w, &c, &p, c.partitions, snap_h_default(&c), &cr_old, &cd_new, &cr_new, E));
        fil_snap_partition_proof_free(&p);
        free(b.p);
        tsnap_free(&t);
    }
}

static void expect_snap(const struct snap_config *c, const uint8_t *d, size_t n, int code, const char *part)
{
    struct fil_snap_partition_proof p;
    memset(&p, 0x5a, sizeof p);
    ASSERT_CODE(fil_snap_partition_proof_parse(&p, c, d, n, 2, E), code, E);
    ASSERT_STR_CONTAINS(E->msg, "PartitionProof (partition 2): ");
    ASSERT_STR_CONTAINS(E->msg, part);
    ASSERT(p.arena == NULL);
}

/* 2 KiB: comm_c 0, apex count 32, apex 40..296, K count 296, challenge i at 304 + 1476 i:
 * proof_r_old (556), proof_d_new (364: tag, root, leaf, count, 6 x 48), proof_r_new (556). */
TEST(snap_malformed)
{
    struct snap_config c;
    snap_cfg(&c, KIB(2));
    struct tsnap t;
    tsnap_rand(&t, &c, &SH_2K);
    struct wb b = {0};
    w_snap(&b, &t, &SH_2K);
    ASSERT_EQ_U64(b.n, 15064);
    uint8_t *d = malloc(b.n + 8);
    ASSERT(d);
#define RESET() memcpy(d, b.p, b.n)
    RESET();
    for (size_t n = 0; n < b.n; n += (n < 2000 ? 1 : 7)) expect_snap(&c, d, n, CUZK_E_TRUNCATED, "truncated");
    expect_snap(&c, d, 10, CUZK_E_TRUNCATED, "comm_c at byte 0");
    expect_snap(&c, d, 100, CUZK_E_TRUNCATED, "apex_leafs[1] at byte 72");
    size_t ch2 = 304 + 1476 * 2, d2 = ch2 + 556;
    expect_snap(&c, d, d2 + 2, CUZK_E_TRUNCATED, "challenge_proofs[2].proof_d_new.data at byte 3812");
    /* counts */
    RESET();
    put_u64(d + 32, 128);
    expect_snap(&c, d, b.n, CUZK_E_FORMAT, "apex_leafs at byte 32: expected 8 apex leaves, got 128");
    RESET();
    put_u64(d + 296, 86);
    expect_snap(&c, d, b.n, CUZK_E_FORMAT, "challenge_proofs at byte 296: expected 10 challenge proofs, got 86");
    /* tree-D path length (L = 6) and its variant */
    RESET();
    put_u64(d + d2 + 68, 5);
    expect_snap(&c, d, b.n, CUZK_E_FORMAT,
                "challenge_proofs[2].proof_d_new.data.Single.path.path at byte 3880: expected 6 path elements "
                "(tree D 2-0-0), got 5");
    RESET();
    put_u64(d + d2 + 76, 7);
    expect_snap(&c, d, b.n, CUZK_E_FORMAT, "proof_d_new.data.Single.path.path[0].hashes at byte 3888: expected 1 sibling");
    RESET();
    put_u64(d + d2 + 76 + 8 + 32, 2);
    expect_snap(&c, d, b.n, CUZK_E_FORMAT, "proof_d_new.data.Single.path.path[0].index at byte 3928: expected 0..1");
    RESET();
    put_u32(d + d2, 2);
    expect_snap(&c, d, b.n, CUZK_E_FORMAT, "proof_d_new.data at byte 3812: expected variant 0 (Single), got 2 (Top)");
    RESET();
    put_u32(d + ch2 + 556 + 364, 1);
    expect_snap(&c, d, b.n, CUZK_E_FORMAT, "challenge_proofs[2].proof_r_new.data at byte 4176");
    /* non-canonical */
    RESET();
    memset(d + 40 + 32 * 5, 0xee, 32);
    expect_snap(&c, d, b.n, CUZK_E_BAD_ENCODING, "apex_leafs[5] at byte 200: not a canonical field element");
    RESET();
    memset(d + d2 + 4 + 32, 0xff, 32);
    expect_snap(&c, d, b.n, CUZK_E_BAD_ENCODING, "challenge_proofs[2].proof_d_new.data.Single.leaf at byte 3848");
    /* trailing */
    RESET();
    memset(d + b.n, 0, 8);
    expect_snap(&c, d, b.n + 8, CUZK_E_FORMAT, "at byte 15064: 8 trailing bytes");
    /* a 2 KiB blob under the 32 GiB config */
    struct snap_config c32;
    snap_cfg(&c32, GIB(32));
    RESET();
    expect_snap(&c32, d, b.n, CUZK_E_FORMAT, "apex_leafs at byte 32: expected 128 apex leaves, got 8");
#undef RESET
    free(d);
    free(b.p);
    tsnap_free(&t);
}
