/* test_post_gen.c: generated PoSt vanilla proofs (post_gen.h), the native check, the public
 * inputs recomputed from a request and the parallel witness (vanilla.h, post.h), without a
 * proof (test_post_proof.c proves). Oracles: the blobs are read back by the independent
 * bincode parser; the request's public inputs must equal fil_post_public_inputs (the
 * verifier-side derivation over the whole sector list, written apart from the request path)
 * and the witness's own inputs; the parallel witness must equal the sequential
 * post_synthesize values run variable for variable and satisfy the circuit's shape; each
 * tamper class flips one byte at an offset computed here from the bincode layout of
 * docs/formats.md, and must be refused naming the sector (and the challenge where one is
 * involved). */
#include "cuzk/fil_circuit.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/post_gen.h"
#include "cuzk/vanilla.h"
#include "test.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

static void rand_randomness(uint8_t r[32])
{
    for (int i = 0; i < 32; i++) r[i] = (uint8_t)cuzk_rng_u64(test_rng());
    r[31] &= 0x3f;      /* as Curio sends it */
}

static void parse_all(struct fil_post_sector_proof *sp, const struct fil_post_gen *g)
{
    for (size_t i = 0; i < g->n; i++) {
        ASSERT_OK(fil_post_sector_proof_parse(&sp[i], &g->cfg, g->blob[i], g->len, (unsigned)i, E), E);
        ASSERT_EQ_U64(sp[i].sector_id, g->sector_id[i]);
        uint8_t b[32];
        fr_to_bytes_le(b, &sp[i].comm_r);
        ASSERT_MEM_EQ(b, g->comm_r[i], 32);
    }
}

/* Generate, parse, check; public inputs three ways; parallel == sequential witness; optionally
 * the witness satisfies the shape. */
static void roundtrip(uint64_t go_id, size_t n_sectors, unsigned k, bool shape_check)
{
    const struct fil_post_proof *p = fil_post_proof_by_id(go_id);
    ASSERT(p);
    uint8_t rnd[32];
    rand_randomness(rnd);
    struct fil_post_gen g;
    uint64_t t0 = cuzk_now_ns();
    ASSERT_OK(fil_post_generate(&g, p, rnd, 1000, n_sectors, k, test_seed(), pool_default(), E), E);
    double gen_ms = (double)(cuzk_now_ns() - t0) / 1e6;
    ASSERT_EQ_U64(g.len, fil_post_sector_proof_size(&g.cfg));
    ASSERT_EQ_U64(g.n, p->kind == POST_WINNING ? 1 : n_sectors);
    struct fil_post_sector_proof *sp = calloc(g.n, sizeof *sp);
    parse_all(sp, &g);
    ASSERT_OK(fil_post_request_check(p, sp, g.n, rnd, k, pool_default(), E), E);
    if (p->kind == POST_WINNING) {
        /* the proved sector is the one the proving set's challenge selects */
        uint8_t pid[32];
        uint64_t pos;
        fil_prover_id(pid, 1000);
        ASSERT_OK(fil_winning_post_sector_challenge(&pos, p, rnd, pid, n_sectors, E), E);
        ASSERT_EQ_U64(g.selected, pos);
        ASSERT_EQ_U64(g.sector_id[0], pos + 1);
    }
    /* public inputs: from the request vs the verifier's derivation (all sectors of the proof:
     * the k earlier partitions are stand-ins with smaller ids, only chunk k counts) */
    size_t ni = fil_post_num_inputs(p);
    fr_t *pub = malloc(ni * sizeof *pub), *ver = malloc(ni * sizeof *ver);
    uint64_t *ids = malloc((k * (size_t)p->sector_count + g.n) * sizeof *ids), *rid = malloc(g.n * sizeof *rid);
    uint8_t(*crs)[32] = calloc(k * (size_t)p->sector_count + g.n, 32);
    fr_t *cr = malloc(g.n * sizeof *cr);
    size_t before = p->kind == POST_WINNING ? 0 : (size_t)k * p->sector_count;
    for (size_t i = 0; i < before; i++) ids[i] = i + 1;     /* gen's ids for earlier partitions */
    for (size_t i = 0; i < g.n; i++) {
        ids[before + i] = rid[i] = g.sector_id[i];
        memcpy(crs[before + i], g.comm_r[i], 32);
        cr[i] = sp[i].comm_r;
    }
    ASSERT_OK(fil_post_request_inputs(pub, p, rnd, rid, cr, g.n, k, E), E);
    uint8_t pid[32];
    fil_prover_id(pid, 1000);
    ASSERT_OK(fil_post_public_inputs(ver, p, rnd, pid, ids, (const uint8_t(*)[32])crs, before + g.n, k, E), E);
    ASSERT_MEM_EQ(pub, ver + 1, (ni - 1) * sizeof *pub);

    /* parallel witness vs the sequential run */
    fr_t *in = NULL, *aux = NULL;
    uint32_t n_in = 0, n_aux = 0;
    t0 = cuzk_now_ns();
    ASSERT_OK(fil_post_witness_values(&in, &aux, &n_in, &n_aux, &g.cfg, sp, g.n, pool_default(), E), E);
    double wit_ms = (double)(cuzk_now_ns() - t0) / 1e6;
    ASSERT_EQ_U64(n_in, ni);
    ASSERT_MEM_EQ(in + 1, pub, (ni - 1) * sizeof *pub);
    struct fil_post_partition part;
    ASSERT_OK(fil_post_partition_build(&part, &g.cfg, sp, g.n, E), E);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, &g.cfg, &part.w);
    ASSERT_OK(gcs_status(&cs, E), E);
    ASSERT_EQ_U64(cs.n_aux, n_aux);
    ASSERT_EQ_U64(cs.n_inputs, n_in);
    ASSERT_MEM_EQ(cs.aux, aux, (size_t)n_aux * sizeof *aux);
    ASSERT_MEM_EQ(cs.inputs, in, (size_t)n_in * sizeof *in);
    gcs_free(&cs);
    fil_post_partition_free(&part);
    if (shape_check) {
        struct fil_circuit circ;
        ASSERT_OK(fil_circuit_init(&circ, p->kind == POST_WINNING ? FIL_CIRCUIT_WINNING_POST : FIL_CIRCUIT_WINDOW_POST,
                                   p->sector_size, E), E);
        struct g16_shape s;
        ASSERT_OK(fil_circuit_shape(&s, &circ, pool_default(), E), E);
        ASSERT_EQ_U64(s.n_inputs, n_in);
        ASSERT_EQ_U64(s.n_aux, n_aux);
        struct g16_assignment w = {in, aux};
        ASSERT_OK(g16_check(&s, &w, pool_default(), E), E);
        /* and the check can fail: another comm_r in the first input breaks comm_r = H(..) */
        fr_add(&in[1], &in[1], &FR_ONE);
        ASSERT_CODE(g16_check(&s, &w, pool_default(), E), CUZK_E_UNSATISFIED, E);
        g16_shape_free(&s);
    }
    printf("%s: %zu sector(s), partition %u: generated in %.1f ms, witness %.1f ms (%u aux)\n", p->name, g.n, k,
           gen_ms, wit_ms, n_aux);
    cuzk_free(in);
    cuzk_free(aux);
    for (size_t i = 0; i < g.n; i++) fil_post_sector_proof_free(&sp[i]);
    free(sp);
    free(pub);
    free(ver);
    free(ids);
    free(rid);
    free(crs);
    free(cr);
    fil_post_gen_free(&g);
}

TEST_T(window_2k_full_and_partial_partitions, 120)
{
    roundtrip(10, 2, 0, true);      /* StackedDrgWindow2KiBV1_2 (Go V1_1), full partition */
    roundtrip(10, 1, 0, true);      /* one real sector, padded */
    roundtrip(5, 2, 3, true);       /* V1: partition 3's sector indices enter the challenges */
}

TEST_T(winning_2k_from_a_proving_set, 120)
{
    roundtrip(0, 1, 0, true);
    roundtrip(0, 25, 0, true);
}

TEST_T(window_and_winning_8m_512m_witness_satisfies_shape, 300)
{
    roundtrip(11, 2, 0, true);      /* 8 MiB window */
    roundtrip(12, 2, 0, true);      /* 512 MiB window */
    roundtrip(1, 10, 0, true);      /* 8 MiB winning */
    roundtrip(2, 10, 0, true);      /* 512 MiB winning */
}

/* 32 GiB (8-8-0: the Sub variant) and 64 GiB (8-8-2: Top): generation, parse and the native
 * check of a few sectors, and WinningPoSt's whole witness (66 sectors) */
TEST_T(large_sizes_generate_and_check, 300)
{
    uint8_t rnd[32];
    rand_randomness(rnd);
    const uint64_t ids[] = {13, 14, 8, 9};
    for (size_t t = 0; t < 4; t++) {
        const struct fil_post_proof *p = fil_post_proof_by_id(ids[t]);
        struct fil_post_gen g;
        ASSERT_OK(fil_post_generate(&g, p, rnd, 1000, 3, 0, test_seed(), pool_default(), E), E);
        struct fil_post_sector_proof sp[3];
        parse_all(sp, &g);
        ASSERT_OK(fil_post_request_check(p, sp, g.n, rnd, 0, pool_default(), E), E);
        for (size_t i = 0; i < g.n; i++) fil_post_sector_proof_free(&sp[i]);
        fil_post_gen_free(&g);
    }
    roundtrip(3, 100, 0, false);    /* WinningPoSt 32 GiB */
    roundtrip(4, 100, 0, false);    /* WinningPoSt 64 GiB */
}

/* ------------------------------------------------------------------ tamper -- */

/* Offset of inclusion proof i in a FallbackPoStSectorProof of the 2 KiB shape (Single
 * variant: u32 tag, root, leaf, path {count, levels of [count, 7 hashes, index]}). */
static size_t incl_off(const struct post_config *c, unsigned i)
{
    size_t lvl = 16 + 32 * (size_t)(c->base_arity - 1), mp = 4 + 64 + 8 + c->base_levels * lvl;
    return 56 + i * mp;
}

static void expect_refused(const struct fil_post_proof *p, const struct fil_post_gen *g, const uint8_t rnd[32],
                           size_t at, const char *what, const char *want1, const char *want2)
{
    uint8_t *b = malloc(g->len);
    memcpy(b, g->blob[1], g->len);
    b[at] ^= 1;
    struct fil_post_sector_proof sp[2];
    ASSERT_OK(fil_post_sector_proof_parse(&sp[0], &g->cfg, g->blob[0], g->len, 0, E), E);
    ASSERT_OK(fil_post_sector_proof_parse(&sp[1], &g->cfg, b, g->len, 1, E), E);
    uint64_t t0 = cuzk_now_ns();
    ASSERT_CODE(fil_post_request_check(p, sp, 2, rnd, 0, pool_default(), E), CUZK_E_FORMAT, E);
    double ms = (double)(cuzk_now_ns() - t0) / 1e6;
    ASSERT_MSG(strstr(E->msg, want1) && (!want2 || strstr(E->msg, want2)), "%s: %s", what, E->msg);
    printf("%-22s refused in %.2f ms: %s\n", what, ms, E->msg);
    fil_post_sector_proof_free(&sp[0]);
    fil_post_sector_proof_free(&sp[1]);
    free(b);
}

TEST_T(one_flipped_byte_is_refused_naming_sector_and_challenge, 60)
{
    const struct fil_post_proof *p = fil_post_proof_by_id(10);
    uint8_t rnd[32];
    rand_randomness(rnd);
    struct fil_post_gen g;
    ASSERT_OK(fil_post_generate(&g, p, rnd, 1000, 2, 0, test_seed(), NULL, E), E);
    const struct post_config *c = &g.cfg;
    char sec[64];
    snprintf(sec, sizeof sec, "(sector 1, id %llu): ", (unsigned long long)g.sector_id[1]);
    size_t i3 = incl_off(c, 3), lvl = 16 + 32 * (size_t)(c->base_arity - 1);
    /* challenge 3: a sibling hash of level 1, its leaf, its root; the index of level 0 */
    expect_refused(p, &g, rnd, i3 + 76 + lvl + 8 + 32 * 2, "path element", sec, "challenge 3 (leaf");
    expect_refused(p, &g, rnd, i3 + 36, "leaf", sec, "challenge 3 (leaf");
    expect_refused(p, &g, rnd, i3 + 4, "root", sec, "inclusion_proofs[3].root is not comm_r_last");
    expect_refused(p, &g, rnd, i3 + 76 + 8 + 32 * 7, "path index", sec, "challenge 3 (leaf");
    /* the sector's commitments */
    expect_refused(p, &g, rnd, g.len - 32, "comm_r_last", sec, "challenge 0 (leaf");
    expect_refused(p, &g, rnd, g.len - 64, "comm_c", sec, "comm_r is not Poseidon(comm_c, comm_r_last)");
    expect_refused(p, &g, rnd, 8, "comm_r", sec, "comm_r is not Poseidon(comm_c, comm_r_last)");
    /* another sector id: other challenges */
    expect_refused(p, &g, rnd, 0, "sector_id", "challenge 0 (leaf", "the path's indices give leaf");
    /* another randomness: every challenge moves */
    struct fil_post_sector_proof sp[2];
    ASSERT_OK(fil_post_sector_proof_parse(&sp[0], c, g.blob[0], g.len, 0, E), E);
    ASSERT_OK(fil_post_sector_proof_parse(&sp[1], c, g.blob[1], g.len, 1, E), E);
    ASSERT_OK(fil_post_request_check(p, sp, 2, rnd, 0, NULL, E), E);
    uint8_t r2[32];
    memcpy(r2, rnd, 32);
    r2[0] ^= 1;
    ASSERT_CODE(fil_post_request_check(p, sp, 2, r2, 0, NULL, E), CUZK_E_FORMAT, E);
    ASSERT_STR_CONTAINS(E->msg, "(sector 0, id");
    /* the request's shape: order, count, randomness */
    struct fil_post_sector_proof sw[2] = {sp[1], sp[0]};
    ASSERT_CODE(fil_post_request_check(p, sw, 2, rnd, 0, NULL, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "strictly ascending");
    r2[0] ^= 1;
    r2[31] |= 0x80;
    ASSERT_CODE(fil_post_request_check(p, sp, 2, r2, 0, NULL, E), CUZK_E_BAD_ENCODING, E);
    ASSERT_CODE(fil_post_request_check(fil_post_proof_by_id(0), sp, 2, rnd, 0, NULL, E), CUZK_E_INVALID_ARG, E);
    fil_post_sector_proof_free(&sp[0]);
    fil_post_sector_proof_free(&sp[1]);
    fil_post_gen_free(&g);
}

/* the writer refuses what it cannot write; the generator refuses impossible requests */
TEST_T(writer_and_generator_refuse_bad_arguments, 30)
{
    const struct fil_post_proof *p = fil_post_proof_by_id(10);
    uint8_t rnd[32] = {0};
    struct fil_post_gen g;
    ASSERT_CODE(fil_post_generate(&g, p, rnd, 1000, 3, 0, 1, NULL, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "a partition holds 2");
    ASSERT_CODE(fil_post_generate(&g, p, rnd, 1000, 0, 0, 1, NULL, E), CUZK_E_INVALID_ARG, E);
    rnd[31] = 0xff;
    ASSERT_CODE(fil_post_generate(&g, p, rnd, 1000, 1, 0, 1, NULL, E), CUZK_E_BAD_ENCODING, E);
    rnd[31] = 0;
    ASSERT_OK(fil_post_generate(&g, p, rnd, 1000, 1, 0, 1, NULL, E), E);
    struct fil_merkle_proof m[10];
    memset(m, 0, sizeof m);
    uint8_t z[32] = {0}, *out = malloc(g.len);
    ASSERT_CODE(fil_post_sector_proof_write(out, g.len, &g.cfg, 1, z, m, 10, z, z, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "inclusion proof 0 is not of the tree-R shape");
    ASSERT_CODE(fil_post_sector_proof_write(out, g.len - 1, &g.cfg, 1, z, m, 10, z, z, E), CUZK_E_INVALID_ARG, E);
    ASSERT_CODE(fil_post_sector_proof_write(out, g.len, &g.cfg, 1, z, m, 9, z, z, E), CUZK_E_INVALID_ARG, E);
    free(out);
    fil_post_gen_free(&g);
}
