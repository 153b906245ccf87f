/* test_post.c: the FallbackPoSt circuit (post.h): upstream constraint / input fingerprints of
 * WindowPoSt and WinningPoSt at every registered size, the three gcs modes agreeing, and a
 * consistent synthetic 2 KiB witness (random tree R, real Poseidon paths) satisfying the shape
 * while a tampered sibling does not. */
#include "cuzk/post.h"
#include "test.h"
#include "post_tree2k.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

#define KIB(x) ((uint64_t)(x) << 10)
#define MIB(x) ((uint64_t)(x) << 20)
#define GIB(x) ((uint64_t)(x) << 30)

/* Constraints as upstream cs.num_constraints() (no input rows), inputs with ONE; aux from
 * the reference's model (post-snap-circuits.md section 1). */
struct fp {
    enum post_kind kind;
    uint64_t size;
    uint64_t constraints;
    uint32_t inputs, aux;
};
static const struct fp FPS[] = {
    {POST_WINDOW, KIB(2), 21866, 23, 22128},
    {POST_WINDOW, MIB(8), 64266, 23, 65088},
    {POST_WINDOW, MIB(512), 85466, 23, 86568},
    {POST_WINDOW, GIB(32), 125279217, 25840, 126902376},
    {POST_WINDOW, GIB(64), 129887900, 25301, 131500200},
    {POST_WINNING, KIB(2), 90750, 133, 91674},
    {POST_WINNING, MIB(8), 230670, 133, 233442},
    {POST_WINNING, MIB(512), 300630, 133, 304326},
    {POST_WINNING, GIB(32), 370590, 133, 375210},
    {POST_WINNING, GIB(64), 391314, 133, 396000},
};
#define N_FPS (sizeof FPS / sizeof *FPS)

/* Full counting run (every sector synthesized) in mode 0. */
static void count_full(const struct post_config *c, struct post_counts *out)
{
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, 0, NULL, E), E);
    post_synthesize(&cs, c, NULL);
    ASSERT_OK(gcs_status(&cs, E), E);
    out->n_constraints = cs.n_constraints;
    out->n_inputs = cs.n_inputs;
    out->n_aux = cs.n_aux;
    gcs_free(&cs);
}

TEST(post_configs)
{
    struct post_config c;
    ASSERT_OK(post_config_for_size(&c, POST_WINDOW, GIB(32), E), E);
    ASSERT_EQ_U64(c.sectors, 2349);
    ASSERT_EQ_U64(c.challenges, 10);
    ASSERT_EQ_U64(c.base_levels, 9);
    ASSERT_EQ_U64(c.sub_arity, 8);
    ASSERT_EQ_U64(c.top_arity, 0);
    ASSERT_OK(post_config_for_size(&c, POST_WINDOW, GIB(64), E), E);
    ASSERT_EQ_U64(c.sectors, 2300);
    ASSERT_EQ_U64(c.top_arity, 2);
    ASSERT_OK(post_config_for_size(&c, POST_WINNING, KIB(2), E), E);
    ASSERT_EQ_U64(c.sectors, 66);
    ASSERT_EQ_U64(c.challenges, 1);
    ASSERT_EQ_U64(c.base_levels, 2);
    ASSERT_CODE(post_config_for_size(&c, POST_WINDOW, KIB(4), E), CUZK_E_UNSUPPORTED, E);
    ASSERT_STR_CONTAINS(E->msg, "4096");
    enum post_kind k;
    ASSERT_OK(post_parse_kind(&k, "winning-post", E), E);
    ASSERT_EQ_INT(k, POST_WINNING);
    ASSERT_OK(post_parse_kind(&k, "window-post", E), E);
    ASSERT_EQ_INT(k, POST_WINDOW);
    ASSERT_CODE(post_parse_kind(&k, "porep", E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "porep");
}

/* Every size: the per-sector extrapolation (post_counts) equals the upstream constraint and
 * input numbers and the aux of the reference's model; below 32 GiB WindowPoSt the full count
 * (every sector synthesized) does too (the big ones take ~10 s each: the slow test below). */
TEST(post_fingerprints_all_sizes)
{
    for (size_t t = 0; t < N_FPS; t++) {
        struct post_config c;
        ASSERT_OK(post_config_for_size(&c, FPS[t].kind, FPS[t].size, E), E);
        struct post_counts n;
        ASSERT_OK(post_counts(&n, &c, E), E);
        ASSERT_MSG(n.n_constraints == FPS[t].constraints && n.n_inputs == FPS[t].inputs &&
                       n.n_aux == FPS[t].aux,
                   "%s %" PRIu64 ": constraints/inputs/aux %" PRIu64 "/%u/%u, expected %" PRIu64 "/%u/%u",
                   post_kind_name(FPS[t].kind), FPS[t].size, n.n_constraints, n.n_inputs, n.n_aux,
                   FPS[t].constraints, FPS[t].inputs, FPS[t].aux);
        if (FPS[t].kind == POST_WINDOW && FPS[t].size >= GIB(32)) continue;
        struct post_counts f;
        count_full(&c, &f);
        ASSERT_EQ_U64(f.n_constraints, n.n_constraints);
        ASSERT_EQ_U64(f.n_inputs, n.n_inputs);
        ASSERT_EQ_U64(f.n_aux, n.n_aux);
    }
}

/* Nonzeros and densities our builder gives (docs/circuits.md; no upstream figure exists, the
 * 32 GiB ones agree with the published .params sizes), pinned against regressions. Same order
 * as FPS; the 32/64 GiB WindowPoSt entries are checked by the slow test. */
static const struct { uint64_t nnz_a, nnz_b, nnz_c, a_aux, b_aux; } DENS[] = {
    {150285, 22230, 27456, 16770, 16028},
    {442285, 65350, 80736, 49330, 47148},
    {588285, 86910, 107376, 65610, 62708},
    {862416559, 127398015, 157401792, 96179805, 91925766},
    {893324601, 132008500, 163088400, 99624500, 95413200},
    {621985, 92070, 113652, 69300, 66792},
    {1585585, 234366, 289476, 176748, 169488},
    {2067385, 305514, 377388, 230472, 220836},
    {2549185, 376662, 465300, 284196, 272184},
    {2689501, 397518, 491040, 299838, 287694},
};

static void check_dens(const struct g16_shape *s, size_t t)
{
    ASSERT_EQ_U64(s->a.nnz, DENS[t].nnz_a);
    ASSERT_EQ_U64(s->b.nnz, DENS[t].nnz_b);
    ASSERT_EQ_U64(s->c.nnz, DENS[t].nnz_c);
    ASSERT_EQ_U64(s->a_aux_count, DENS[t].a_aux);
    ASSERT_EQ_U64(s->b_inp_count, 1);          /* only ONE appears in B */
    ASSERT_EQ_U64(s->b_aux_count, DENS[t].b_aux);
}

/* Shape through the builder at the small sizes (and Winning at every size): rows = the
 * fingerprint + one per input, and the pinned nonzeros / densities. */
TEST(post_shapes_small)
{
    for (size_t t = 0; t < N_FPS; t++) {
        if (FPS[t].kind == POST_WINDOW && FPS[t].size >= GIB(32)) continue;
        struct post_config c;
        ASSERT_OK(post_config_for_size(&c, FPS[t].kind, FPS[t].size, E), E);
        struct g16_builder *b = g16_builder_new(false, E);
        ASSERT(b);
        struct gcs_sink sink = gcs_sink_builder(b);
        struct gcs cs;
        ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, E), E);
        post_synthesize(&cs, &c, NULL);
        ASSERT_OK(gcs_status(&cs, E), E);
        gcs_free(&cs);
        struct g16_shape s;
        ASSERT_OK(g16_builder_finish(b, &s, E), E);
        g16_builder_free(b);
        ASSERT_EQ_U64(s.n_constraints, FPS[t].constraints + FPS[t].inputs);
        ASSERT_EQ_U64(s.n_inputs, FPS[t].inputs);
        ASSERT_EQ_U64(s.n_aux, FPS[t].aux);
        check_dens(&s, t);
        g16_shape_free(&s);
    }
}

/* ------------------------------------------------------- synthetic witness -- */


struct wit2k {
    struct tree2k tree[2];
    struct path2k path[2][10];
    struct porep_path pp[2][10];
    fr_t leaves[2][10];
    uint64_t leaf_idx[20];
    fr_t comm_r[2];
    struct post_sector sec[2];
    struct post_witness w;
};

static void wit2k_build(struct wit2k *x, const struct post_config *c)
{
    const struct poseidon_consts *p2 = poseidon_consts_get(2, E);
    ASSERT_MSG(p2, "%s", E->msg);
    ASSERT_EQ_U64(c->sectors, 2);
    ASSERT_EQ_U64(c->challenges, 10);
    for (unsigned s = 0; s < 2; s++) {
        struct tree2k *t = &x->tree[s];
        tree2k_build(t);
        struct post_sector *sec = &x->sec[s];
        rand_fr(&sec->comm_c);
        sec->comm_r_last = t->root;
        fr_t pre[2] = {sec->comm_c, sec->comm_r_last};
        poseidon_hash(&sec->comm_r, p2, pre);
        x->comm_r[s] = sec->comm_r;
        for (unsigned i = 0; i < 10; i++) {
            unsigned n = (unsigned)(cuzk_rng_u64(test_rng()) % 64);
            x->leaf_idx[s * 10 + i] = n;
            x->leaves[s][i] = t->leaf[n];
            tree2k_path(&x->path[s][i], t, n);
            x->pp[s][i].index = x->path[s][i].idx;
            x->pp[s][i].siblings = x->path[s][i].sib;
        }
        sec->leaves = x->leaves[s];
        sec->paths = x->pp[s];
    }
    x->w.sectors = x->sec;
}

static void shape_2k(struct g16_shape *s, const struct post_config *c)
{
    struct g16_builder *b = g16_builder_new(false, E);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, E), E);
    post_synthesize(&cs, c, NULL);
    ASSERT_OK(gcs_status(&cs, E), E);
    gcs_free(&cs);
    ASSERT_OK(g16_builder_finish(b, s, E), E);
    g16_builder_free(b);
}

/* Witness values of x; returns g16_check's code against s. */
static int check_witness(const struct g16_shape *s, const struct post_config *c,
                         const struct wit2k *x, fr_t *inputs_out)
{
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, c, &x->w);
    ASSERT_OK(gcs_status(&cs, E), E);
    ASSERT_EQ_U64(cs.n_aux, s->n_aux);
    ASSERT_EQ_U64(cs.n_inputs, s->n_inputs);
    if (inputs_out) memcpy(inputs_out, cs.inputs, cs.n_inputs * sizeof *inputs_out);
    struct g16_assignment a = {cs.inputs, cs.aux};
    int rc = g16_check(s, &a, NULL, E);
    gcs_free(&cs);
    return rc;
}

TEST(post_window_2k_witness_satisfies)
{
    struct post_config c;
    ASSERT_OK(post_config_for_size(&c, POST_WINDOW, KIB(2), E), E);
    struct g16_shape s;
    shape_2k(&s, &c);
    struct wit2k *x = calloc(1, sizeof *x);
    ASSERT(x);
    wit2k_build(x, &c);

    fr_t in[23], want[23];
    ASSERT_OK(check_witness(&s, &c, x, in), E);
    /* public inputs: ONE, then per sector comm_r and the 10 leaf indices */
    ASSERT_OK(post_public_inputs(want, &c, x->comm_r, x->leaf_idx, E), E);
    ASSERT_MEM_EQ(in, want, sizeof in);

    /* one tampered path element: unsatisfied (the root check of that challenge) */
    fr_add(&x->path[1][7].sib[9], &x->path[1][7].sib[9], &FR_ONE);
    ASSERT_CODE(check_witness(&s, &c, x, NULL), CUZK_E_UNSATISFIED, E);
    fr_sub(&x->path[1][7].sib[9], &x->path[1][7].sib[9], &FR_ONE);
    ASSERT_OK(check_witness(&s, &c, x, NULL), E);
    /* a wrong comm_r: unsatisfied too */
    fr_add(&x->sec[0].comm_r, &x->sec[0].comm_r, &FR_ONE);
    ASSERT_CODE(check_witness(&s, &c, x, NULL), CUZK_E_UNSATISFIED, E);
    free(x);
    g16_shape_free(&s);
}

TEST(post_winning_2k_witness_satisfies)
{
    /* WinningPoSt: 66 one-challenge sectors sharing comm_r, comm_c and comm_r_last */
    struct post_config c;
    ASSERT_OK(post_config_for_size(&c, POST_WINNING, KIB(2), E), E);
    struct g16_shape s;
    shape_2k(&s, &c);
    const struct poseidon_consts *p2 = poseidon_consts_get(2, E);
    ASSERT_MSG(p2, "%s", E->msg);
    struct tree2k t;
    tree2k_build(&t);
    fr_t comm_c, comm_r, pre[2];
    rand_fr(&comm_c);
    pre[0] = comm_c;
    pre[1] = t.root;
    poseidon_hash(&comm_r, p2, pre);
    struct path2k path[66];
    struct porep_path pp[66];
    fr_t leaves[66], comm_rs[66];
    uint64_t idx[66];
    struct post_sector sec[66];
    for (unsigned j = 0; j < 66; j++) {
        idx[j] = cuzk_rng_u64(test_rng()) % 64;
        leaves[j] = t.leaf[idx[j]];
        tree2k_path(&path[j], &t, (unsigned)idx[j]);
        pp[j] = (struct porep_path){path[j].idx, path[j].sib};
        sec[j] = (struct post_sector){comm_r, comm_c, t.root, &leaves[j], &pp[j]};
        comm_rs[j] = comm_r;
    }
    struct post_witness w = {sec};
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, &c, &w);
    ASSERT_OK(gcs_status(&cs, E), E);
    struct g16_assignment a = {cs.inputs, cs.aux};
    ASSERT_OK(g16_check(&s, &a, NULL, E), E);
    fr_t want[133];
    ASSERT_OK(post_public_inputs(want, &c, comm_rs, idx, E), E);
    ASSERT_EQ_U64(cs.n_inputs, 133);
    ASSERT_MEM_EQ(cs.inputs, want, sizeof want);
    gcs_free(&cs);
    /* a leaf that is not the tree's: unsatisfied */
    fr_add(&leaves[40], &leaves[40], &FR_ONE);
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, &c, &w);
    ASSERT_OK(gcs_status(&cs, E), E);
    a = (struct g16_assignment){cs.inputs, cs.aux};
    ASSERT_CODE(g16_check(&s, &a, NULL, E), CUZK_E_UNSATISFIED, E);
    gcs_free(&cs);
    g16_shape_free(&s);
}

TEST(post_bad_witness_is_an_error)
{
    struct post_config c;
    ASSERT_OK(post_config_for_size(&c, POST_WINDOW, KIB(2), E), E);
    struct wit2k *x = calloc(1, sizeof *x);
    ASSERT(x);
    wit2k_build(x, &c);
    struct gcs cs;
    /* index out of range for an arity-8 level */
    x->path[1][3].idx[1] = 8;
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, &c, &x->w);
    ASSERT_CODE(gcs_status(&cs, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "sector 1 challenge 3: level 1 index 8");
    ASSERT_EQ_U64(cs.n_aux, 0);                 /* refused before synthesis */
    gcs_free(&cs);
    x->path[1][3].idx[1] = 0;
    /* missing paths */
    x->sec[0].paths = NULL;
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, &c, &x->w);
    ASSERT_CODE(gcs_status(&cs, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "sector 0 has no paths");
    gcs_free(&cs);
    /* no sectors; a hand-made config with no challenges */
    struct post_witness none = {NULL};
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, &c, &none);
    ASSERT_CODE(gcs_status(&cs, E), CUZK_E_INVALID_ARG, E);
    gcs_free(&cs);
    struct post_config bad = c;
    bad.challenges = 0;
    struct post_counts n;
    ASSERT_CODE(post_counts(&n, &bad, E), CUZK_E_INVALID_ARG, E);
    bad = c;
    bad.base_arity = 3;
    ASSERT_CODE(post_counts(&n, &bad, E), CUZK_E_UNSUPPORTED, E);
    /* public inputs: a leaf index beyond the tree */
    fr_t in[23];
    x->leaf_idx[5] = 64;
    ASSERT_CODE(post_public_inputs(in, &c, x->comm_r, x->leaf_idx, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "leaf 64 is not below 2^6");
    free(x);
}

/* The 32 / 64 GiB WindowPoSt counted in full (~10 s each), and the 32 GiB one through the
 * count-only builder (~125 M rows, sectors in parallel on the default pool): too slow for the
 * CPU suite's budget, so only with CUZK_TEST_SLOW=1. */
TEST_T(post_window_32g_shape_count_only, 600)
{
    if (!getenv("CUZK_TEST_SLOW")) test_skip("set CUZK_TEST_SLOW=1 (about 2.5 min of CPU)");
    struct post_config c;
    for (size_t t = 0; t < N_FPS; t++) {
        if (FPS[t].kind != POST_WINDOW || FPS[t].size < GIB(32)) continue;
        ASSERT_OK(post_config_for_size(&c, FPS[t].kind, FPS[t].size, E), E);
        struct post_counts f;
        count_full(&c, &f);
        ASSERT_EQ_U64(f.n_constraints, FPS[t].constraints);
        ASSERT_EQ_U64(f.n_inputs, FPS[t].inputs);
        ASSERT_EQ_U64(f.n_aux, FPS[t].aux);
    }
    ASSERT_OK(post_config_for_size(&c, POST_WINDOW, GIB(32), E), E);
    struct g16_builder *b = g16_builder_new(true, E);
    ASSERT(b);
    /* the parallel path (the sequential one equals it at 2 KiB and 8 MiB, test_circuit_shape) */
    ASSERT_OK(post_shape(b, &c, pool_default(), E), E);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, E), E);
    g16_builder_free(b);
    ASSERT_EQ_U64(s.n_constraints, 125279217ull + 25840);
    ASSERT_EQ_U64(s.n_inputs, 25840);
    ASSERT_EQ_U64(s.n_aux, 126902376);
    check_dens(&s, 3);
    g16_shape_free(&s);
}
