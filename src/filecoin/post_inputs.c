/* post_inputs.c: FallbackPoSt (WindowPoSt / WinningPoSt) public inputs recomputed from the
 * public data alone (no witness): the registered PoSt proofs (filecoin-proofs-api registry.rs,
 * go-state-types abi/sector.go numbering, filecoin-proofs constants.rs counts, parameters.json
 * file names), leaf challenges (storage-proofs-post fallback/vanilla.rs generate_leaf_challenge,
 * utils.rs get_challenge_index), WinningPoSt sector selection (vanilla.rs
 * generate_sector_challenge, filecoin-proofs api/winning_post.rs) and the partition's input
 * vector in FallbackPoStCompound::generate_public_inputs order (compound.rs).
 *
 * The table lives here rather than beside the seal proofs in proofs.c: it is keyed by the Go
 * numbering of a different enum (RegisteredPoStProof) and feeds only this file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/filecoin.h"
#include "cuzk/util.h"

/* ---------------------------------------------------------------- registry -- */

#define KIB2 2048ull
#define MIB8 (8ull << 20)
#define MIB512 (512ull << 20)
#define GIB32 (32ull << 30)
#define GIB64 (64ull << 30)

/* WINDOW_POST_SECTOR_COUNT (constants.rs): 2 below 32 GiB, 2349 at 32 GiB, 2300 at 64 GiB. */
#define WIN_S(size) ((size) == GIB32 ? 2349u : (size) == GIB64 ? 2300u : 2u)
#define WINDOW(rust, go, id, size, api, shape, hash) \
    {rust, go, id, POST_WINDOW, size, api, WIN_S(size), 10u, shape, hash}
/* WINNING_POST_SECTOR_COUNT 1, WINNING_POST_CHALLENGE_COUNT 66; ApiVersion 1.0.0 only. */
#define WINNING(rust, id, size, shape, hash) \
    {rust, rust, id, POST_WINNING, size, FIL_API_1_0, 1u, 66u, shape, hash}

/* The hash of each parameter file name is SHA-256 of the identifier
 * "FallbackPoSt::PublicParams{sector_size: B, challenge_count: C, sector_count: S}" with the
 * circuit's C and S (Winning: 1 and 66); api_version is not in it, so V1 and V1_2 share files. */
#define H_WIN2K "0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0"
#define H_WIN8M "5294475db5237a2e83c3e52fd6c2b03859a1831d45ed08c4f35dbf9a803165a9"
#define H_WIN512M "0cfb4f178bbb71cf2ecfcd42accce558b27199ab4fb59cb78f2483fe21ef36d9"
#define H_WIN32G "0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc"
#define H_WIN64G "2627e4006b67f99cef990c0a47d5426cb7ab0a0ad58fc1061547bf2d28b09def"

static const struct fil_post_proof POST[] = {
    WINNING("StackedDrgWinning2KiBV1", 0, KIB2, "8-0-0",
            "3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e"),
    WINNING("StackedDrgWinning8MiBV1", 1, MIB8, "8-0-0",
            "50c7368dea9593ed0989e70974d28024efa9d156d585b7eea1be22b2e753f331"),
    WINNING("StackedDrgWinning512MiBV1", 2, MIB512, "8-0-0",
            "7d739b8cf60f1b0709eeebee7730e297683552e4b69cab6984ec0285663c5781"),
    WINNING("StackedDrgWinning32GiBV1", 3, GIB32, "8-8-0",
            "559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e"),
    WINNING("StackedDrgWinning64GiBV1", 4, GIB64, "8-8-2",
            "b62098629d07946e9028127e70295ed996fe3ed25b0f9f88eb610a0ab4385a3c"),
    WINDOW("StackedDrgWindow2KiBV1", "StackedDrgWindow2KiBV1", 5, KIB2, FIL_API_1_0, "8-0-0", H_WIN2K),
    WINDOW("StackedDrgWindow8MiBV1", "StackedDrgWindow8MiBV1", 6, MIB8, FIL_API_1_0, "8-0-0", H_WIN8M),
    WINDOW("StackedDrgWindow512MiBV1", "StackedDrgWindow512MiBV1", 7, MIB512, FIL_API_1_0, "8-0-0", H_WIN512M),
    WINDOW("StackedDrgWindow32GiBV1", "StackedDrgWindow32GiBV1", 8, GIB32, FIL_API_1_0, "8-8-0", H_WIN32G),
    WINDOW("StackedDrgWindow64GiBV1", "StackedDrgWindow64GiBV1", 9, GIB64, FIL_API_1_0, "8-8-2", H_WIN64G),
    /* Go/FFI "V1_1" = Rust V1_2 (ApiVersion 1.2.0: the grindability fix) */
    WINDOW("StackedDrgWindow2KiBV1_2", "StackedDrgWindow2KiBV1_1", 10, KIB2, FIL_API_1_2, "8-0-0", H_WIN2K),
    WINDOW("StackedDrgWindow8MiBV1_2", "StackedDrgWindow8MiBV1_1", 11, MIB8, FIL_API_1_2, "8-0-0", H_WIN8M),
    WINDOW("StackedDrgWindow512MiBV1_2", "StackedDrgWindow512MiBV1_1", 12, MIB512, FIL_API_1_2, "8-0-0", H_WIN512M),
    WINDOW("StackedDrgWindow32GiBV1_2", "StackedDrgWindow32GiBV1_1", 13, GIB32, FIL_API_1_2, "8-8-0", H_WIN32G),
    WINDOW("StackedDrgWindow64GiBV1_2", "StackedDrgWindow64GiBV1_1", 14, GIB64, FIL_API_1_2, "8-8-2", H_WIN64G),
};
#define N_POST (sizeof POST / sizeof *POST)

size_t fil_post_proof_count(void) { return N_POST; }

const struct fil_post_proof *fil_post_proof_at(size_t i) { return i < N_POST ? &POST[i] : NULL; }

const struct fil_post_proof *fil_post_proof_by_id(uint64_t id)
{
    for (size_t i = 0; i < N_POST; i++)
        if (POST[i].id == id) return &POST[i];
    return NULL;
}

const struct fil_post_proof *fil_post_proof_by_name(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < N_POST; i++)
        if (!strcmp(POST[i].name, name) || !strcmp(POST[i].go_name, name)) return &POST[i];
    return NULL;
}

int fil_post_param_stem(char *out, size_t out_len, const struct fil_post_proof *p, struct cuzk_error *err)
{
    int n = snprintf(out, out_len, "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-%s-%s",
                     p->tree_shape, p->param_hash);
    if (n < 0 || (size_t)n >= out_len)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "post param stem: buffer of %zu bytes too small", out_len);
    return CUZK_OK;
}

int fil_post_circuit_config(struct post_config *c, const struct fil_post_proof *p, struct cuzk_error *err)
{
    int rc = post_config_for_size(c, p->kind, p->sector_size, err);
    if (rc) return rc;
    /* winning_post_setup_params: 66 / 1 circuit sectors of 66 / 66 challenges */
    unsigned s = p->kind == POST_WINNING ? p->challenge_count / p->sector_count : p->sector_count;
    unsigned ch = p->kind == POST_WINNING ? p->challenge_count / s : p->challenge_count;
    if (c->sectors != s || c->challenges != ch)
        return cuzk_fail(err, CUZK_E_INTERNAL, "%s: circuit %u x %u, registry %u x %u", p->name,
                         c->sectors, c->challenges, s, ch);
    return CUZK_OK;
}

/* ------------------------------------------------------------ field checks -- */

int fil_post_check_randomness(const uint8_t *randomness, size_t len, struct cuzk_error *err)
{
    if (!randomness || len != 32)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "PoSt randomness: %zu bytes, expected 32 (the chain randomness as drawn)",
                         randomness ? len : 0);
    fr_t x;
    if (fr_from_bytes_le(&x, randomness))
        return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                         "PoSt randomness is not a canonical field element (byte 31 = 0x%02x): "
                         "clear its top two bits (randomness[31] &= 0x3f) as Curio and Lotus do",
                         randomness[31]);
    return CUZK_OK;
}

static int check_fr(fr_t *out, const uint8_t b[32], const char *what, uint64_t sid, struct cuzk_error *err)
{
    fr_t tmp;
    if (!fr_from_bytes_le(out ? out : &tmp, b)) return CUZK_OK;
    return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                     "PoSt %s of sector %llu is not a canonical field element (byte 31 = 0x%02x)",
                     what, (unsigned long long)sid, b[31]);
}

/* -------------------------------------------------------------- challenges -- */

static void le64(uint8_t out[8], uint64_t v)
{
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t rd_le64(const uint8_t in[8])
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | in[i];
    return v;
}

uint64_t fil_post_challenge_index(enum fil_api_version api, uint64_t sector_index,
                                  unsigned challenges_per_sector, unsigned n)
{
    if (api == FIL_API_1_2) return n;
    return sector_index * challenges_per_sector + n;
}

uint64_t fil_post_leaf_challenge(uint64_t sector_size, const uint8_t randomness[32],
                                 uint64_t sector_id, uint64_t challenge_index)
{
    uint8_t b[16], h[32];
    le64(b, sector_id);
    le64(b + 8, challenge_index);
    struct cuzk_sha256 s;
    cuzk_sha256_init(&s);
    cuzk_sha256_update(&s, randomness, 32);
    cuzk_sha256_update(&s, b, 16);
    cuzk_sha256_final(&s, h);
    return rd_le64(h) % (sector_size / 32);
}

int fil_post_sector_challenges(uint64_t *out, const struct fil_post_proof *p,
                               const uint8_t randomness[32], uint64_t sector_id,
                               uint64_t sector_index, struct cuzk_error *err)
{
    int rc = fil_post_check_randomness(randomness, 32, err);
    if (rc) return rc;
    if (p->kind == POST_WINNING && sector_index)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "%s: WinningPoSt proves one sector (sector index %llu)", p->name,
                         (unsigned long long)sector_index);
    for (unsigned n = 0; n < p->challenge_count; n++)
        out[n] = fil_post_leaf_challenge(p->sector_size, randomness, sector_id,
                                         fil_post_challenge_index(p->api, sector_index, p->challenge_count, n));
    return CUZK_OK;
}

int fil_winning_post_sector_challenge(uint64_t *out, const struct fil_post_proof *p,
                                      const uint8_t randomness[32], const uint8_t prover_id[32],
                                      uint64_t sector_set_len, struct cuzk_error *err)
{
    if (p->kind != POST_WINNING)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s is not a WinningPoSt proof", p->name);
    if (!sector_set_len)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: empty sector set", p->name);
    int rc = fil_post_check_randomness(randomness, 32, err);
    if (rc) return rc;
    fr_t x;
    if (fr_from_bytes_le(&x, prover_id))
        return cuzk_fail(err, CUZK_E_BAD_ENCODING, "%s: prover_id is not a canonical field element", p->name);
    for (unsigned n = 0; n < p->sector_count; n++) {
        uint8_t nb[8], h[32];
        le64(nb, n);
        struct cuzk_sha256 s;
        cuzk_sha256_init(&s);
        cuzk_sha256_update(&s, prover_id, 32);
        cuzk_sha256_update(&s, randomness, 32);
        cuzk_sha256_update(&s, nb, 8);
        cuzk_sha256_final(&s, h);
        out[n] = rd_le64(h) % sector_set_len;
    }
    return CUZK_OK;
}

/* ---------------------------------------------------------- public inputs -- */

size_t fil_post_num_inputs(const struct fil_post_proof *p)
{
    /* the circuit's S x C: Window S x 10, Winning 66 x 1 */
    uint64_t s = p->kind == POST_WINNING ? p->challenge_count / p->sector_count : p->sector_count;
    uint64_t c = p->kind == POST_WINNING ? p->challenge_count / s : p->challenge_count;
    return (size_t)(1 + s * (1 + c));
}

unsigned fil_post_partitions(const struct fil_post_proof *p, size_t n_sectors)
{
    if (p->kind == POST_WINNING || !n_sectors) return 1;
    return (unsigned)((n_sectors + p->sector_count - 1) / p->sector_count);
}

int fil_post_partition_challenges(uint64_t *leaf, fr_t *comm_r_fr, const struct fil_post_proof *p,
                                  const uint8_t randomness[32], const uint64_t *sector_ids,
                                  const uint8_t (*comm_rs)[32], size_t n_sectors, unsigned k,
                                  struct cuzk_error *err)
{
    struct post_config c;
    int rc = fil_post_circuit_config(&c, p, err);
    if (rc) return rc;
    rc = fil_post_check_randomness(randomness, 32, err);
    if (rc) return rc;
    if (!sector_ids || !n_sectors)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: no sectors", p->name);
    if (comm_r_fr && !comm_rs)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: no comm_r", p->name);
    if (p->kind == POST_WINNING) {
        if (n_sectors != 1)
            return cuzk_fail(err, CUZK_E_INVALID_ARG,
                             "%s: %zu sectors; WinningPoSt proves the one challenged sector "
                             "(fil_winning_post_sector_challenge picks it)", p->name, n_sectors);
        if (k)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: partition %u of 1", p->name, k);
    } else {
        for (size_t i = 1; i < n_sectors; i++)
            if (sector_ids[i] <= sector_ids[i - 1])
                return cuzk_fail(err, CUZK_E_INVALID_ARG,
                                 "%s: sector ids must be strictly ascending (the verifier orders them "
                                 "by id): sector %llu at position %zu follows %llu", p->name,
                                 (unsigned long long)sector_ids[i], i, (unsigned long long)sector_ids[i - 1]);
        unsigned parts = fil_post_partitions(p, n_sectors);
        if (k >= parts)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: partition %u of %u (%zu sectors, %u per partition)",
                             p->name, k, parts, n_sectors, p->sector_count);
    }
    /* Circuit sector j of partition k: real sector k*S + j, or the last real one of the chunk
     * repeated (compound.rs pads by duplicating the last sector's inputs). Its challenge n uses
     * sector_index = k*S + j (for a padded slot: that of the repeated sector, as its inputs are
     * copied); with Winning's 66 x 1 circuit this gives challenge index j. */
    size_t first = (size_t)k * c.sectors;
    size_t real = n_sectors - first < c.sectors ? n_sectors - first : c.sectors;
    if (p->kind == POST_WINNING) real = 1;
    for (size_t j = 0; j < c.sectors; j++) {
        size_t src = j < real ? j : real - 1;
        if (p->kind == POST_WINNING) src = j;           /* the same sector, index j */
        size_t pos = p->kind == POST_WINNING ? 0 : first + src;
        uint64_t sid = sector_ids[pos];
        if (comm_r_fr) {
            rc = check_fr(&comm_r_fr[j], comm_rs[pos], "comm_r", sid, err);
            if (rc) return rc;
        }
        uint64_t sector_index = (uint64_t)k * c.sectors + src;
        for (unsigned n = 0; n < c.challenges; n++)
            leaf[j * c.challenges + n] = fil_post_leaf_challenge(
                p->sector_size, randomness, sid, fil_post_challenge_index(p->api, sector_index, c.challenges, n));
    }
    return CUZK_OK;
}

int fil_post_public_inputs(fr_t *out, const struct fil_post_proof *p, const uint8_t randomness[32],
                           const uint8_t prover_id[32], const uint64_t *sector_ids,
                           const uint8_t (*comm_rs)[32], size_t n_sectors, unsigned k,
                           struct cuzk_error *err)
{
    fr_t tmp;
    if (prover_id && fr_from_bytes_le(&tmp, prover_id))   /* as_safe_commitment(prover_id) */
        return cuzk_fail(err, CUZK_E_BAD_ENCODING, "%s: prover_id is not a canonical field element", p->name);
    if (!comm_rs) return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s: no comm_r", p->name);
    struct post_config c;
    int rc = fil_post_circuit_config(&c, p, err);
    if (rc) return rc;
    uint64_t *leaf = malloc((size_t)c.sectors * c.challenges * sizeof *leaf);
    fr_t *cr = malloc((size_t)c.sectors * sizeof *cr);
    if (!leaf || !cr) {
        free(leaf);
        free(cr);
        return cuzk_fail(err, CUZK_E_NOMEM, "%s: public inputs", p->name);
    }
    rc = fil_post_partition_challenges(leaf, cr, p, randomness, sector_ids, comm_rs, n_sectors, k, err);
    if (!rc) rc = post_public_inputs(out, &c, cr, leaf, err);
    free(leaf);
    free(cr);
    return rc;
}
