/* test_post_inputs.c: PoSt public inputs recomputed from public data (src/filecoin/post_inputs.c):
 * the registered PoSt proofs table, a known-answer test from an upstream-generated vanilla proof,
 * a second straightforward implementation (OpenSSL SHA-256, upstream's generate_public_inputs
 * loop written literally) compared on random inputs for every registered proof, padding,
 * WinningPoSt selection and unrolling, randomness validation, and 2 KiB witnesses built with
 * these challenges satisfying the circuit with inputs equal to the recomputed ones. */
#include <openssl/sha.h>

#include "cuzk/filecoin.h"
#include "cuzk/post.h"
#include "test.h"
#include "post_tree2k.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

#define KIB(x) ((uint64_t)(x) << 10)
#define MIB(x) ((uint64_t)(x) << 20)
#define GIB(x) ((uint64_t)(x) << 30)

static void unhex(uint8_t *out, const char *hex, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        ASSERT(sscanf(hex + 2 * i, "%2x", &v) == 1);
        out[i] = (uint8_t)v;
    }
}

static void rand_randomness(uint8_t r[32])
{
    cuzk_rng_bytes(test_rng(), r, 32);
    r[31] &= 0x3f;          /* what Curio does */
}

/* ------------------------------------------------------------ the oracle -- */

/* Second implementation, written from vanilla.rs / utils.rs / compound.rs directly. */
static uint64_t ref_leaf(uint64_t sector_size, const uint8_t rnd[32], uint64_t sector_id, uint64_t idx)
{
    uint8_t msg[48], h[32];
    memcpy(msg, rnd, 32);
    for (int i = 0; i < 8; i++) {
        msg[32 + i] = (uint8_t)(sector_id >> (8 * i));
        msg[40 + i] = (uint8_t)(idx >> (8 * i));
    }
    SHA256(msg, sizeof msg, h);
    uint64_t v;
    memcpy(&v, h, 8);       /* LittleEndian::read_u64 (x86 is LE) */
    return v % (sector_size / 32);
}

static uint64_t ref_winning_sector(const uint8_t prover_id[32], const uint8_t rnd[32], uint64_t n,
                                   uint64_t set_len)
{
    uint8_t msg[72], h[32];
    memcpy(msg, prover_id, 32);
    memcpy(msg + 32, rnd, 32);
    memcpy(msg + 64, &n, 8);
    SHA256(msg, sizeof msg, h);
    uint64_t v;
    memcpy(&v, h, 8);
    return v % set_len;
}

/* FallbackPoStCompound::generate_public_inputs with ONE prepended: chunk k of S sectors; per
 * sector comm_r then C leaves (sector_index = k*S + i; index n for 1.2.0, else
 * sector_index*C + n); then the last group repeated until there are S groups. */
static void ref_inputs(fr_t *out, uint64_t size, enum fil_api_version api, unsigned S, unsigned C,
                       const uint64_t *ids, const uint8_t (*comm_rs)[32], size_t n, unsigned k,
                       const uint8_t rnd[32])
{
    size_t o = 0;
    out[o++] = FR_ONE;
    size_t first = (size_t)k * S, len = n - first < S ? n - first : S;
    for (size_t i = 0; i < len; i++) {
        ASSERT(!fr_from_bytes_le(&out[o++], comm_rs[first + i]));
        for (unsigned c = 0; c < C; c++) {
            uint64_t si = (uint64_t)k * S + i;
            uint64_t idx = api == FIL_API_1_2 ? c : si * C + c;
            fr_from_u64(&out[o++], ref_leaf(size, rnd, ids[first + i], idx));
        }
    }
    size_t per = 1 + C;
    while ((o - 1) / per < S) {
        memcpy(&out[o], &out[o - per], per * sizeof *out);
        o += per;
    }
}

/* -------------------------------------------------------------- registry -- */

TEST(post_registry)
{
    ASSERT_EQ_U64(fil_post_proof_count(), 15);
    static const uint64_t SIZES[5] = {KIB(2), MIB(8), MIB(512), GIB(32), GIB(64)};
    for (uint64_t id = 0; id < 15; id++) {
        const struct fil_post_proof *p = fil_post_proof_by_id(id);
        ASSERT(p && p == fil_post_proof_at(id));
        ASSERT(fil_post_proof_by_name(p->name) == p);
        ASSERT(fil_post_proof_by_name(p->go_name) == p);
        ASSERT_EQ_U64(p->sector_size, SIZES[id % 5]);
        if (id < 5) {
            ASSERT_EQ_INT(p->kind, POST_WINNING);
            ASSERT_EQ_INT(p->api, FIL_API_1_0);
            ASSERT_EQ_U64(p->sector_count, 1);
            ASSERT_EQ_U64(p->challenge_count, 66);
        } else {
            ASSERT_EQ_INT(p->kind, POST_WINDOW);
            ASSERT_EQ_INT(p->api, id < 10 ? FIL_API_1_0 : FIL_API_1_2);
            ASSERT_EQ_U64(p->sector_count, p->sector_size == GIB(32) ? 2349 : p->sector_size == GIB(64) ? 2300 : 2);
            ASSERT_EQ_U64(p->challenge_count, 10);
        }
        struct post_config c, want;
        ASSERT_OK(fil_post_circuit_config(&c, p, E), E);
        ASSERT_OK(post_config_for_size(&want, p->kind, p->sector_size, E), E);
        ASSERT_MEM_EQ(&c, &want, sizeof c);
        ASSERT_EQ_U64(fil_post_num_inputs(p), 1 + (uint64_t)c.sectors * (1 + c.challenges));
        /* param hash = SHA-256 of the FallbackPoSt identifier with the circuit's C and S */
        char ident[160], hex[65];
        snprintf(ident, sizeof ident,
                 "FallbackPoSt::PublicParams{sector_size: %" PRIu64 ", challenge_count: %u, sector_count: %u}",
                 p->sector_size, c.challenges, c.sectors);
        uint8_t h[32];
        SHA256((const uint8_t *)ident, strlen(ident), h);
        for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", h[i]);
        ASSERT_MSG(!strcmp(hex, p->param_hash), "%s: %s vs %s", p->name, hex, p->param_hash);
    }
    /* Go V1_1 is Rust V1_2; names as in go-state-types / filecoin-proofs-api */
    const struct fil_post_proof *p = fil_post_proof_by_name("StackedDrgWindow32GiBV1_1");
    ASSERT(p && p->id == 13 && !strcmp(p->name, "StackedDrgWindow32GiBV1_2") && p->api == FIL_API_1_2);
    ASSERT(fil_post_proof_by_name("StackedDrgWinning64GiBV1")->id == 4);
    ASSERT(!fil_post_proof_by_name("StackedDrgWinning64GiBV1_2"));
    ASSERT(!fil_post_proof_by_id(15));
    /* parameters.json (rust-fil-proofs), entries for WindowPoSt 32 GiB and WinningPoSt 2 KiB */
    char stem[160];
    ASSERT_OK(fil_post_param_stem(stem, sizeof stem, fil_post_proof_by_id(8), E), E);
    ASSERT_STR_CONTAINS(stem, "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-"
                              "0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc");
    ASSERT_OK(fil_post_param_stem(stem, sizeof stem, fil_post_proof_by_id(13), E), E);
    ASSERT_STR_CONTAINS(stem, "8-8-0-0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc");
    ASSERT_OK(fil_post_param_stem(stem, sizeof stem, fil_post_proof_by_id(0), E), E);
    ASSERT_STR_CONTAINS(stem, "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
                              "3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e");
    ASSERT_CODE(fil_post_param_stem(stem, 20, p, E), CUZK_E_INVALID_ARG, E);
}

/* ------------------------------------------------------------- the KAT -- */

/* filecoin-project/curio lib/proof/testgolden/post.vproof (@e0294b0f): a real
 * FallbackPoStSectorProof made by rust-fil-proofs for sector 1 of a 32 GiB sector, with
 * testgolden/postpub.json: PoStProof 8 (StackedDrgWindow32GiBV1), Randomness 32 zero bytes,
 * Prover 1000. The leaf index of each of its 10 inclusion proofs (from the bincode path
 * position fields: base levels of 8, then the sub level) and its comm_r: */
static const uint64_t KAT_LEAVES[10] = {707914199, 439148358, 967788220, 548708700, 1061661429,
                                        6202012,   1055504637, 389535735, 1000069704, 600088878};
static const char KAT_COMM_R[] = "df691086e3c673c95a45908713d4c5938e5ced43f21b888bd9bc6e181c9f326b";

TEST(post_kat_curio_golden_vproof)
{
    uint8_t rnd[32] = {0}, comm_r[1][32];
    unhex(comm_r[0], KAT_COMM_R, 32);
    uint64_t got[66], sid = 1;
    /* the first sector of a partition-0 proof: V1 and V1_2 agree (sector index 0) */
    for (uint64_t id = 8; id <= 13; id += 5) {
        const struct fil_post_proof *p = fil_post_proof_by_id(id);
        ASSERT_OK(fil_post_sector_challenges(got, p, rnd, sid, 0, E), E);
        ASSERT_MEM_EQ(got, KAT_LEAVES, sizeof KAT_LEAVES);
        for (unsigned n = 0; n < 10; n++)
            ASSERT_EQ_U64(fil_post_leaf_challenge(GIB(32), rnd, sid, n), KAT_LEAVES[n]);
        /* the partition's inputs: ONE, comm_r, 10 leaves; then padded to 2349 sectors */
        size_t ni = fil_post_num_inputs(p);
        ASSERT_EQ_U64(ni, 25840);
        fr_t *in = malloc(ni * sizeof *in);
        ASSERT(in);
        uint8_t prover_id[32];
        fil_prover_id(prover_id, 1000);
        ASSERT_EQ_INT(prover_id[0], 0xe8);
        ASSERT_EQ_INT(prover_id[1], 0x07);
        ASSERT_OK(fil_post_public_inputs(in, p, rnd, prover_id, &sid, (const uint8_t(*)[32])comm_r, 1, 0, E), E);
        ASSERT(fr_is_one(&in[0]));
        uint8_t b[32];
        fr_to_bytes_le(b, &in[1]);
        ASSERT_MEM_EQ(b, comm_r[0], 32);
        for (unsigned n = 0; n < 10; n++) {
            fr_t v;
            fr_from_u64(&v, KAT_LEAVES[n]);
            ASSERT_MEM_EQ(&in[2 + n], &v, sizeof v);
        }
        for (size_t s = 1; s < 2349; s++) ASSERT_MEM_EQ(&in[1 + 11 * s], &in[1], 11 * sizeof *in);
        free(in);
    }
}

/* ---------------------------------------------------- second implementation -- */

TEST(post_leaf_challenges_vs_second_implementation)
{
    for (int iter = 0; iter < 200; iter++) {
        uint8_t rnd[32];
        rand_randomness(rnd);
        const struct fil_post_proof *p = fil_post_proof_at(cuzk_rng_u64(test_rng()) % 15);
        uint64_t sid = cuzk_rng_u64(test_rng()) >> (iter % 64);
        uint64_t idx = cuzk_rng_u64(test_rng()) >> (iter % 64);
        ASSERT_EQ_U64(fil_post_leaf_challenge(p->sector_size, rnd, sid, idx), ref_leaf(p->sector_size, rnd, sid, idx));
        /* a sector's prover challenges (generate_fallback_sector_challenges) */
        uint64_t si = p->kind == POST_WINNING ? 0 : cuzk_rng_u64(test_rng()) % 5000;
        uint64_t got[66];
        ASSERT_OK(fil_post_sector_challenges(got, p, rnd, sid, si, E), E);
        for (unsigned n = 0; n < p->challenge_count; n++) {
            uint64_t ci = p->api == FIL_API_1_2 ? n : si * p->challenge_count + n;
            ASSERT_EQ_U64(got[n], ref_leaf(p->sector_size, rnd, sid, ci));
            ASSERT(got[n] < p->sector_size / 32);
        }
    }
    /* the index rule by itself */
    ASSERT_EQ_U64(fil_post_challenge_index(FIL_API_1_0, 7, 10, 3), 73);
    ASSERT_EQ_U64(fil_post_challenge_index(FIL_API_1_1, 7, 10, 3), 73);
    ASSERT_EQ_U64(fil_post_challenge_index(FIL_API_1_2, 7, 10, 3), 3);
}

/* Window partitions (with padding) and Winning at every size and version, against the literal
 * model of compound.rs. */
TEST(post_public_inputs_vs_second_implementation)
{
    for (size_t t = 0; t < fil_post_proof_count(); t++) {
        const struct fil_post_proof *p = fil_post_proof_at(t);
        struct post_config c;
        ASSERT_OK(fil_post_circuit_config(&c, p, E), E);
        size_t ni = fil_post_num_inputs(p);
        fr_t *got = malloc(ni * sizeof *got), *want = malloc(ni * sizeof *want);
        ASSERT(got && want);
        uint8_t rnd[32], prover_id[32];
        rand_randomness(rnd);
        fil_prover_id(prover_id, cuzk_rng_u64(test_rng()) >> 20);
        /* Window: 2S + 1 sectors (3 partitions, the last with one real sector) for the small
         * sizes, S + 3 for the big ones; Winning: the one sector. */
        size_t n = p->kind == POST_WINNING ? 1 : c.sectors < 100 ? 2 * c.sectors + 1 : c.sectors + 3;
        uint64_t *ids = malloc(n * sizeof *ids);
        uint8_t(*crs)[32] = malloc(n * 32);
        ASSERT(ids && crs);
        uint64_t id = cuzk_rng_u64(test_rng()) % 1000;
        for (size_t i = 0; i < n; i++) {
            ids[i] = id += 1 + cuzk_rng_u64(test_rng()) % 50;
            cuzk_rng_bytes(test_rng(), crs[i], 32);
            crs[i][31] &= 0x3f;
        }
        unsigned parts = fil_post_partitions(p, n);
        ASSERT_EQ_U64(parts, p->kind == POST_WINNING ? 1 : c.sectors < 100 ? 3 : 2);
        for (unsigned k = 0; k < parts; k++) {
            ASSERT_OK(fil_post_public_inputs(got, p, rnd, prover_id, ids, (const uint8_t(*)[32])crs, n, k, E), E);
            if (p->kind == POST_WINNING) {
                /* verify_winning_post: the sector repeated 66 times, 66 x 1 */
                uint64_t rids[66];
                uint8_t(*rcr)[32] = malloc(66 * 32);
                ASSERT(rcr);
                for (int j = 0; j < 66; j++) {
                    rids[j] = ids[0];
                    memcpy(rcr[j], crs[0], 32);
                }
                ref_inputs(want, p->sector_size, p->api, 66, 1, rids, (const uint8_t(*)[32])rcr, 66, 0, rnd);
                free(rcr);
            } else {
                ref_inputs(want, p->sector_size, p->api, c.sectors, c.challenges, ids,
                           (const uint8_t(*)[32])crs, n, k, rnd);
            }
            ASSERT_MSG(!memcmp(got, want, ni * sizeof *got), "%s partition %u differs", p->name, k);
        }
        /* V1 and V1_2 differ beyond the first sector of partition 0 */
        free(ids);
        free(crs);
        free(got);
        free(want);
    }
}

/* Padding: a partition with one real sector repeats its 11 values; V1 challenge indices depend
 * on the partition (k*S + i), V1_2 ones do not. */
TEST(post_padding_and_versions)
{
    const struct fil_post_proof *v1 = fil_post_proof_by_id(5), *v12 = fil_post_proof_by_id(10);
    uint8_t rnd[32], crs[3][32];
    rand_randomness(rnd);
    for (int i = 0; i < 3; i++) {
        cuzk_rng_bytes(test_rng(), crs[i], 32);
        crs[i][31] &= 0x3f;
    }
    uint64_t ids[3] = {10, 20, 30};
    fr_t a[23], b[23];
    uint64_t leaf[20];
    fr_t cr[2];
    /* partition 1 of 3 sectors: sector 30 alone, sector index 2 */
    ASSERT_OK(fil_post_partition_challenges(leaf, cr, v1, rnd, ids, (const uint8_t(*)[32])crs, 3, 1, E), E);
    for (unsigned n = 0; n < 10; n++) {
        ASSERT_EQ_U64(leaf[n], ref_leaf(KIB(2), rnd, 30, 2 * 10 + n));
        ASSERT_EQ_U64(leaf[10 + n], leaf[n]);
    }
    ASSERT_MEM_EQ(&cr[0], &cr[1], sizeof cr[0]);
    ASSERT_OK(fil_post_public_inputs(a, v1, rnd, NULL, ids, (const uint8_t(*)[32])crs, 3, 1, E), E);
    ASSERT_MEM_EQ(&a[1], &a[12], 11 * sizeof *a);
    ASSERT_OK(fil_post_public_inputs(b, v12, rnd, NULL, ids, (const uint8_t(*)[32])crs, 3, 1, E), E);
    ASSERT_MEM_EQ(&b[1], &a[1], sizeof *a);                     /* same comm_r */
    ASSERT(memcmp(&b[2], &a[2], 10 * sizeof *a));               /* different leaves */
    for (unsigned n = 0; n < 10; n++) ASSERT_EQ_U64(leaf[n], ref_leaf(KIB(2), rnd, 30, 2 * 10 + n));
    /* V1_2 partition 1 equals V1_2 of sector 30 alone in partition 0 */
    ASSERT_OK(fil_post_public_inputs(a, v12, rnd, NULL, &ids[2], (const uint8_t(*)[32])&crs[2], 1, 0, E), E);
    ASSERT_MEM_EQ(a, b, sizeof a);
    /* partition 0 of V1: sector 20 is sector index 1 */
    ASSERT_OK(fil_post_partition_challenges(leaf, NULL, v1, rnd, ids, NULL, 3, 0, E), E);
    for (unsigned n = 0; n < 10; n++) ASSERT_EQ_U64(leaf[10 + n], ref_leaf(KIB(2), rnd, 20, 10 + n));
}

/* -------------------------------------------------------------- Winning -- */

TEST(post_winning_selection_and_unrolling)
{
    for (int iter = 0; iter < 100; iter++) {
        const struct fil_post_proof *p = fil_post_proof_by_id(cuzk_rng_u64(test_rng()) % 5);
        uint8_t rnd[32], prover_id[32];
        rand_randomness(rnd);
        fil_prover_id(prover_id, cuzk_rng_u64(test_rng()) >> (iter % 60));
        uint64_t set = 1 + cuzk_rng_u64(test_rng()) % (iter < 50 ? 10 : 100000);
        uint64_t pick[1];
        ASSERT_OK(fil_winning_post_sector_challenge(pick, p, rnd, prover_id, set, E), E);
        ASSERT_EQ_U64(pick[0], ref_winning_sector(prover_id, rnd, 0, set));
        ASSERT(pick[0] < set);
        /* the prover's 66 challenges of that sector (1 x 66, sector index 0) are the
         * verifier's 66 x 1 unrolled circuit sectors (challenge index j) */
        uint64_t sid = cuzk_rng_u64(test_rng()), prov[66], ver[66];
        uint8_t cr[1][32] = {{0}};
        ASSERT_OK(fil_post_sector_challenges(prov, p, rnd, sid, 0, E), E);
        ASSERT_OK(fil_post_partition_challenges(ver, NULL, p, rnd, &sid, (const uint8_t(*)[32])cr, 1, 0, E), E);
        ASSERT_MEM_EQ(prov, ver, sizeof prov);
        for (unsigned j = 0; j < 66; j++) ASSERT_EQ_U64(ver[j], ref_leaf(p->sector_size, rnd, sid, j));
    }
    const struct fil_post_proof *w = fil_post_proof_by_id(3);
    uint8_t rnd[32] = {0}, prover_id[32];
    fil_prover_id(prover_id, 1000);
    uint64_t pick[1], sids[2] = {1, 2};
    uint8_t crs[2][32] = {{0}};
    ASSERT_CODE(fil_winning_post_sector_challenge(pick, w, rnd, prover_id, 0, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "empty sector set");
    ASSERT_CODE(fil_winning_post_sector_challenge(pick, fil_post_proof_by_id(8), rnd, prover_id, 5, E),
                CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "not a WinningPoSt");
    fr_t in[133];
    ASSERT_CODE(fil_post_public_inputs(in, w, rnd, prover_id, sids, (const uint8_t(*)[32])crs, 2, 0, E),
                CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "one challenged sector");
    ASSERT_CODE(fil_post_sector_challenges(pick, w, rnd, 1, 1, E), CUZK_E_INVALID_ARG, E);
}

/* ------------------------------------------------------------ rejections -- */

TEST(post_randomness_and_argument_checks)
{
    uint8_t rnd[32] = {0};
    ASSERT_OK(fil_post_check_randomness(rnd, 32, E), E);
    /* canonical with bit 254 set (< r = 0x73ed...): accepted, as by as_safe_commitment */
    rnd[31] = 0x40;
    ASSERT_OK(fil_post_check_randomness(rnd, 32, E), E);
    /* r itself and 0xff..: refused, telling what to do */
    unhex(rnd, "01000000fffffffffe5bfeff02a4bd5305d8a10908d83933487d9d2953a7ed73", 32);
    ASSERT_CODE(fil_post_check_randomness(rnd, 32, E), CUZK_E_BAD_ENCODING, E);
    ASSERT_STR_CONTAINS(E->msg, "not a canonical field element");
    ASSERT_STR_CONTAINS(E->msg, "randomness[31] &= 0x3f");
    rnd[31] = 0xff;
    ASSERT_CODE(fil_post_check_randomness(rnd, 32, E), CUZK_E_BAD_ENCODING, E);
    ASSERT_STR_CONTAINS(E->msg, "byte 31 = 0xff");
    ASSERT_CODE(fil_post_check_randomness(rnd, 31, E), CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "31 bytes, expected 32");
    /* every entry point refuses it */
    const struct fil_post_proof *p = fil_post_proof_by_id(10);
    uint64_t leaf[20], ids[3] = {5, 6, 7};
    uint8_t crs[3][32] = {{0}}, prover_id[32];
    fil_prover_id(prover_id, 1234);
    fr_t in[23];
    ASSERT_CODE(fil_post_sector_challenges(leaf, p, rnd, 1, 0, E), CUZK_E_BAD_ENCODING, E);
    ASSERT_CODE(fil_post_public_inputs(in, p, rnd, prover_id, ids, (const uint8_t(*)[32])crs, 3, 0, E),
                CUZK_E_BAD_ENCODING, E);
    ASSERT_STR_CONTAINS(E->msg, "randomness[31] &= 0x3f");
    ASSERT_CODE(fil_winning_post_sector_challenge(leaf, fil_post_proof_by_id(0), rnd, prover_id, 4, E),
                CUZK_E_BAD_ENCODING, E);
    rnd[31] = 0x3f;
    /* non-canonical comm_r, prover_id */
    crs[1][31] = 0x80;
    ASSERT_CODE(fil_post_public_inputs(in, p, rnd, prover_id, ids, (const uint8_t(*)[32])crs, 3, 0, E),
                CUZK_E_BAD_ENCODING, E);
    ASSERT_STR_CONTAINS(E->msg, "comm_r of sector 6");
    crs[1][31] = 0;
    prover_id[31] = 0xff;
    ASSERT_CODE(fil_post_public_inputs(in, p, rnd, prover_id, ids, (const uint8_t(*)[32])crs, 3, 0, E),
                CUZK_E_BAD_ENCODING, E);
    ASSERT_STR_CONTAINS(E->msg, "prover_id");
    prover_id[31] = 0;
    /* order, partition range, empty */
    ids[2] = 6;
    ASSERT_CODE(fil_post_public_inputs(in, p, rnd, prover_id, ids, (const uint8_t(*)[32])crs, 3, 0, E),
                CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "strictly ascending");
    ids[2] = 7;
    ASSERT_OK(fil_post_public_inputs(in, p, rnd, prover_id, ids, (const uint8_t(*)[32])crs, 3, 1, E), E);
    ASSERT_CODE(fil_post_public_inputs(in, p, rnd, prover_id, ids, (const uint8_t(*)[32])crs, 3, 2, E),
                CUZK_E_INVALID_ARG, E);
    ASSERT_STR_CONTAINS(E->msg, "partition 2 of 2");
    ASSERT_CODE(fil_post_public_inputs(in, p, rnd, prover_id, ids, (const uint8_t(*)[32])crs, 0, 0, E),
                CUZK_E_INVALID_ARG, E);
}

/* ---------------------------------------------------- against the circuit -- */


/* Witness of partition k at 2 KiB for proof p over n sectors with trees t: the circuit sector
 * j uses tree tsel[j] (the real sector or the repeated last one) and the leaves the
 * recomputation gives; its values satisfy the shape and its inputs equal
 * fil_post_public_inputs. */
static void check_partition(const struct fil_post_proof *p, const struct tree2k *t, const uint64_t *ids,
                            size_t n, unsigned k, const uint8_t rnd[32])
{
    struct post_config c;
    ASSERT_OK(fil_post_circuit_config(&c, p, E), E);
    size_t S = c.sectors, C = c.challenges, ni = fil_post_num_inputs(p);
    uint8_t(*crs)[32] = malloc(n * 32);
    uint64_t *leaf = malloc(S * C * sizeof *leaf);
    struct path2k *path = malloc(S * C * sizeof *path);
    struct porep_path *pp = malloc(S * C * sizeof *pp);
    fr_t *leaves = malloc(S * C * sizeof *leaves), *want = malloc(ni * sizeof *want);
    struct post_sector *sec = malloc(S * sizeof *sec);
    ASSERT(crs && leaf && path && pp && leaves && want && sec);
    for (size_t i = 0; i < n; i++) fr_to_bytes_le(crs[i], &t[i].comm_r);
    ASSERT_OK(fil_post_partition_challenges(leaf, NULL, p, rnd, ids, (const uint8_t(*)[32])crs, n, k, E), E);
    size_t first = (size_t)k * S, real = p->kind == POST_WINNING ? 1 : (n - first < S ? n - first : S);
    for (size_t j = 0; j < S; j++) {
        const struct tree2k *tj = p->kind == POST_WINNING ? &t[0] : &t[first + (j < real ? j : real - 1)];
        for (size_t i = 0; i < C; i++) {
            size_t x = j * C + i;
            ASSERT(leaf[x] < 64);
            leaves[x] = tj->leaf[leaf[x]];
            tree2k_path(&path[x], tj, (unsigned)leaf[x]);
            pp[x] = (struct porep_path){path[x].idx, path[x].sib};
        }
        sec[j] = (struct post_sector){tj->comm_r, tj->comm_c, tj->root, &leaves[j * C], &pp[j * C]};
    }
    struct post_witness w = {sec};
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
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    post_synthesize(&cs, &c, &w);
    ASSERT_OK(gcs_status(&cs, E), E);
    struct g16_assignment a = {cs.inputs, cs.aux};
    ASSERT_OK(g16_check(&s, &a, NULL, E), E);
    ASSERT_EQ_U64(cs.n_inputs, ni);
    ASSERT_OK(fil_post_public_inputs(want, p, rnd, NULL, ids, (const uint8_t(*)[32])crs, n, k, E), E);
    ASSERT_MSG(!memcmp(cs.inputs, want, ni * sizeof *want), "%s partition %u: circuit inputs differ", p->name, k);
    gcs_free(&cs);
    g16_shape_free(&s);
    free(crs);
    free(leaf);
    free(path);
    free(pp);
    free(leaves);
    free(want);
    free(sec);
}

TEST(post_witness_with_recomputed_challenges_satisfies)
{
    struct tree2k t[3];
    for (int i = 0; i < 3; i++) tree2k_build(&t[i]);
    uint64_t ids[3] = {3, 17, 400};
    uint8_t rnd[32];
    rand_randomness(rnd);
    /* Window V1 and V1_2: partition 0 (2 real sectors), partition 1 (1 real, padded) */
    for (unsigned k = 0; k < 2; k++) {
        check_partition(fil_post_proof_by_id(5), t, ids, 3, k, rnd);
        check_partition(fil_post_proof_by_id(10), t, ids, 3, k, rnd);
    }
    /* Winning: one sector unrolled into 66 */
    check_partition(fil_post_proof_by_id(0), t, ids, 1, 0, rnd);
}
