/* test_aggregate.c: SnarkPack aggregation (include/cuzk/aggregate.h). Oracles independent of
 * the code under test: OpenSSL's SHA-256 (the transcript hash and a second transcript
 * computed here to re-derive hcom and r), pairings taken one at a time with pairing() for the
 * commitments and the aggregated A B product, the plain Groth16 verifier for every input
 * proof, and SRS consistency e(g^a, h) = e(g, h^a). Tampering: a valid proof of other inputs,
 * a wrong public input, a wrong transcript include, flipped bytes, wrong versions. */
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <unistd.h>

#include "cuzk/aggregate.h"
#include "cuzk/sha256.h"
#include "cuzk/circuits.h"
#include "cuzk/groth16.h"
#include "cuzk/pairing.h"
#include "test.h"

/* ---------------------------------------------------------------- fixture -- */

#define NPUB 3
struct fx {
    struct synth_params p;
    struct g16_shape s;
    struct g16_pk pk;
    struct g16_pvk *pvk;
    size_t n;                       /* proofs made */
    struct g16_proof *proofs;
    fr_t *pub;                      /* n rows of NPUB */
    struct agg_srs srs;
};

static void make_proof(struct fx *f, uint64_t seed, struct g16_proof *pr, fr_t *pub)
{
    struct cuzk_error err_s, *err = &err_s;
    fr_t *in = calloc(f->s.n_inputs, sizeof(fr_t)), *aux = calloc(f->s.n_aux + 1, sizeof(fr_t));
    ASSERT_OK(synth_witness(in, aux, &f->s, &f->p, seed, err), err);
    struct g16_assignment w = {in, aux};
    ASSERT_OK(g16_prove(pr, &f->s, &f->pk, &w, 1, NULL, NULL, NULL, NULL, NULL, err), err);
    memcpy(pub, in + 1, NPUB * sizeof(fr_t));
    /* oracle: every input proof verifies with the plain Groth16 verifier */
    ASSERT_OK(g16_verify(f->pvk, pr, pub, NPUB, err), err);
    free(in);
    free(aux);
}

static void fx_init(struct fx *f, size_t n, size_t srs_max)
{
    struct cuzk_error err_s, *err = &err_s;
    memset(f, 0, sizeof *f);
    f->p = (struct synth_params){60, NPUB, false};
    ASSERT_OK(synth_build_shape(&f->s, &f->p, err), err);
    cuzk_rng rng;
    cuzk_rng_seed(&rng, 7);
    ASSERT_OK(g16_setup(&f->pk, &f->s, &rng, NULL, err), err);
    ASSERT_EQ_U64(f->s.n_inputs, NPUB + 1);
    f->pvk = g16_pvk_new(&f->pk.vk, err);
    ASSERT(f->pvk);
    f->n = n;
    f->proofs = calloc(n, sizeof *f->proofs);
    f->pub = calloc(n * NPUB, sizeof(fr_t));
    for (size_t i = 0; i < n; i++) make_proof(f, 1000 + i, &f->proofs[i], f->pub + NPUB * i);
    ASSERT_OK(agg_srs_generate(&f->srs, srs_max, 42, NULL, err), err);
}

static void fx_fini(struct fx *f)
{
    g16_pvk_free(f->pvk);
    g16_pk_free(&f->pk);
    g16_shape_free(&f->s);
    free(f->proofs);
    free(f->pub);
    agg_srs_free(&f->srs);
}

#define PIN_V1 "52e2188139bab90dcfb6d97753b8705a8eadd8890ee1b0362df216e83bc0de11"
#define PIN_V2 "fb2ae78518b371fa11d5afaa96978a41e64d1a07f0828e37feddfba2eb94b34a"

static const uint8_t INCLUDE[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                    17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

/* --------------------------------------------------------------- SHA-256 -- */

TEST(sha256_matches_openssl)
{
    uint8_t msg[300], a[32], b[32];
    for (size_t i = 0; i < sizeof msg; i++) msg[i] = (uint8_t)(i * 7 + 3);
    size_t lens[] = {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        struct cuzk_sha256 s;
        cuzk_sha256_init(&s);
        /* split updates at an awkward point to exercise buffering */
        size_t cut = lens[k] / 3;
        cuzk_sha256_update(&s, msg, cut);
        cuzk_sha256_update(&s, msg + cut, lens[k] - cut);
        cuzk_sha256_final(&s, a);
        SHA256(msg, lens[k], b);
        ASSERT_MEM_EQ(a, b, 32);
        /* final does not consume the state: more data continues the same message */
        cuzk_sha256_update(&s, msg, 10);
        cuzk_sha256_final(&s, a);
        uint8_t two[310];
        memcpy(two, msg, lens[k]);
        memcpy(two + lens[k], msg, 10);
        SHA256(two, lens[k] + 10, b);
        ASSERT_MEM_EQ(a, b, 32);
    }
    /* the Filecoin include: SHA-256(seed_0 || comm_r_0 || seed_1 || comm_r_1), NI: comm_r only */
    uint8_t cr[2][32], sd[2][32], cat[128];
    for (int i = 0; i < 32; i++) {
        cr[0][i] = (uint8_t)i; cr[1][i] = (uint8_t)(100 + i);
        sd[0][i] = (uint8_t)(200 + i); sd[1][i] = (uint8_t)(50 + i);
    }
    memcpy(cat, sd[0], 32); memcpy(cat + 32, cr[0], 32);
    memcpy(cat + 64, sd[1], 32); memcpy(cat + 96, cr[1], 32);
    agg_seal_transcript_include(a, (const uint8_t(*)[32])cr, (const uint8_t(*)[32])sd, 2);
    SHA256(cat, 128, b);
    ASSERT_MEM_EQ(a, b, 32);
    memcpy(cat, cr[0], 32); memcpy(cat + 32, cr[1], 32);
    agg_seal_transcript_include(a, (const uint8_t(*)[32])cr, NULL, 2);
    SHA256(cat, 64, b);
    ASSERT_MEM_EQ(a, b, 32);
}

/* -------------------------------------------------------------------- Gt -- */

TEST(gt_compression_round_trip_and_refusals)
{
    struct cuzk_error err_s, *err = &err_s;
    fp12_t e, back;
    pairing(&e, &G1_GENERATOR, &G2_GENERATOR);
    uint8_t b[288];
    for (int k = 0; k < 3; k++) {
        ASSERT(agg_gt_compress(b, &e));
        ASSERT_OK(agg_gt_decompress(&back, b, err), err);
        ASSERT(fp12_eq(&back, &e));
        fp12_mul(&e, &e, &e);
    }
    /* identity has c1 = 0: not compressible (bellperson would panic; we refuse) */
    ASSERT(!agg_gt_compress(b, &FP12_ONE));
    /* a coordinate >= p */
    uint8_t bad[288];
    memcpy(bad, b, sizeof bad);
    memset(bad + 48, 0xff, 48);
    ASSERT_CODE(agg_gt_decompress(&back, bad, err), CUZK_E_BAD_ENCODING, err);
    /* the fast subgroup test agrees with f^r == 1 on: GT elements, random Fp12 elements,
     * elements of the cyclotomic subgroup outside GT, zero */
    cuzk_rng *rng = test_rng();
    for (int k = 0; k < 8; k++) {
        fp12_t f, g, h;
        fp_t *c = (fp_t *)&f;
        for (int i = 0; i < 12; i++) {
            uint8_t bb[48];
            cuzk_rng_bytes(rng, bb, 48);
            bb[0] &= 0x0f;
            ASSERT_OK(fp_from_bytes_be(&c[i], bb), err);
        }
        /* g = f^((p^6 - 1)(p^2 + 1)): cyclotomic, almost never in GT */
        fp12_conj(&g, &f);
        fp12_inv(&h, &f);
        fp12_mul(&g, &g, &h);
        fp12_frobenius(&h, &g, 2);
        fp12_mul(&g, &g, &h);
        const fp12_t *cases[2] = {&f, &g};
        for (int j = 0; j < 2; j++) {
            fp12_t t2;
            fp12_pow(&t2, cases[j], FR_MODULUS.l, 4);
            ASSERT_EQ_INT(agg_gt_in_subgroup(cases[j]), fp12_is_one(&t2));
            ASSERT(!agg_gt_in_subgroup(cases[j]));
        }
        fp12_t gt;
        uint64_t kk = cuzk_rng_u64(rng) | 1;
        fp12_pow(&gt, &e, &kk, 1);
        ASSERT(agg_gt_in_subgroup(&gt));
        fp12_mul(&gt, &gt, &g);          /* GT times a non-GT cyclotomic element */
        ASSERT(!agg_gt_in_subgroup(&gt));
    }
    {
        fp12_t zero;
        memset(&zero, 0, sizeof zero);
        ASSERT(!agg_gt_in_subgroup(&zero));
        ASSERT(agg_gt_in_subgroup(&FP12_ONE));
    }
    /* a canonical compression of an element outside the order-r subgroup */
    memcpy(bad, b, sizeof bad);
    bad[0] ^= 1;
    ASSERT_CODE(agg_gt_decompress(&back, bad, err), CUZK_E_NOT_IN_SUBGROUP, err);
}

/* ------------------------------------------------------------------- SRS -- */

static bool same_pairing(const g1_aff_t *a, const g2_aff_t *b, const g1_aff_t *c,
                         const g2_aff_t *d)
{
    fp12_t x, y;
    pairing(&x, a, b);
    pairing(&y, c, d);
    return fp12_eq(&x, &y);
}

static void write_file(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    ASSERT(f);
    ASSERT_EQ_U64(fwrite(b, 1, n, f), n);
    fclose(f);
}

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ASSERT(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n + 16);
    ASSERT_EQ_U64(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

TEST(srs_generate_write_read_specialize)
{
    struct cuzk_error err_s, *err = &err_s;
    struct agg_srs s, r;
    ASSERT_OK(agg_srs_generate(&s, 4, 9, NULL, err), err);
    ASSERT_EQ_U64(s.n_g_alpha, 8);
    ASSERT(g1_aff_eq(&s.g_alpha[0], &G1_GENERATOR) && g2_aff_eq(&s.h_beta[0], &G2_GENERATOR));
    /* the same alpha (beta) in G1 and G2, successive powers: e(g^{a^(i+1)}, h) = e(g^{a^i}, h^a) */
    for (int i = 0; i + 1 < 8; i++) {
        ASSERT(same_pairing(&s.g_alpha[i + 1], &G2_GENERATOR, &s.g_alpha[i], &s.h_alpha[1]));
        ASSERT(same_pairing(&G1_GENERATOR, &s.h_beta[i + 1], &s.g_beta[i], &s.h_beta[1]));
    }
    ASSERT(!same_pairing(&s.g_alpha[1], &G2_GENERATOR, &s.g_beta[1], &G2_GENERATOR));

    char dir[] = "/tmp/cuzk-agg-XXXXXX";
    ASSERT(mkdtemp(dir));
    char path[256];
    /* absent v28 file: NOT_FOUND, so callers can tell "no file" from "bad file" */
    ASSERT_CODE(agg_srs_load_v28(&r, dir, NULL, err), CUZK_E_NOT_FOUND, err);
    snprintf(path, sizeof path, "%s/%s", dir, AGG_SRS_V28_NAME);
    ASSERT_OK(agg_srs_write(&s, path, err), err);
    size_t len;
    uint8_t *bytes = read_file(path, &len);
    ASSERT_EQ_U64(len, 4 * 4 + 8 * 48 * 2 + 8 * 96 * 2);
    ASSERT_EQ_U64(bytes[3], 8);                          /* u32 big-endian length */
    ASSERT_EQ_U64(bytes[4] & 0x80, 0x80);                /* compressed flag */
    ASSERT_OK(agg_srs_load_v28(&r, dir, NULL, err), err);
    ASSERT_EQ_U64(r.n_h_beta, 8);
    ASSERT_MEM_EQ(r.g_alpha, s.g_alpha, 8 * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(r.g_beta, s.g_beta, 8 * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(r.h_alpha, s.h_alpha, 8 * sizeof(g2_aff_t));
    ASSERT_MEM_EQ(r.h_beta, s.h_beta, 8 * sizeof(g2_aff_t));
    agg_srs_free(&r);
    /* max_len: the first points of each vector, the rest skipped (read_mmap) */
    ASSERT_OK(agg_srs_read(&r, path, 5, true, NULL, err), err);
    ASSERT_EQ_U64(r.n_g_alpha, 5);
    ASSERT_EQ_U64(r.n_h_beta, 5);
    ASSERT_MEM_EQ(r.h_beta, s.h_beta, 5 * sizeof(g2_aff_t));
    agg_srs_free(&r);

    /* corruptions, each with a message that names the place */
    snprintf(path, sizeof path, "%s/bad.srs", dir);
    write_file(path, bytes, len - 1);
    ASSERT_CODE(agg_srs_read(&r, path, 0, true, NULL, err), CUZK_E_TRUNCATED, err);
    ASSERT_STR_CONTAINS(err->msg, "h_beta_powers");
    uint8_t *b2 = malloc(len + 1);
    memcpy(b2, bytes, len);
    b2[len] = 0;
    write_file(path, b2, len + 1);
    ASSERT_CODE(agg_srs_read(&r, path, 0, true, NULL, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "trailing");
    memcpy(b2, bytes, len);
    b2[0] = 0x10;                                        /* length 2^28 + 8 > MAX_SRS_SIZE */
    write_file(path, b2, len);
    ASSERT_CODE(agg_srs_read(&r, path, 0, true, NULL, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "invalid SRS vector length");
    memcpy(b2, bytes, len);
    size_t off = 4 + 8 * 48 + 4 + 2 * 48;                /* g_beta_powers[2] */
    b2[off + 47] ^= 0x01;
    write_file(path, b2, len);
    int rc = agg_srs_read(&r, path, 0, true, NULL, err);
    ASSERT(rc != CUZK_OK);
    ASSERT_STR_CONTAINS(err->msg, "g_beta_powers[2]");
    free(b2);
    free(bytes);

    /* specialize: keys as bellperson's specialize */
    struct agg_prover_srs pk;
    struct agg_verifier_srs vk;
    ASSERT_OK(agg_srs_specialize(&pk, &vk, &s, 4, err), err);
    ASSERT_EQ_U64(pk.n, 4);
    ASSERT_MEM_EQ(pk.g_alpha, s.g_alpha, 8 * sizeof(g1_aff_t));
    ASSERT_MEM_EQ(pk.h_beta, s.h_beta, 4 * sizeof(g2_aff_t));
    ASSERT(g1_aff_eq(&vk.g_alpha, &s.g_alpha[1]) && g2_aff_eq(&vk.h_beta, &s.h_beta[1]));
    ASSERT(g2_aff_eq(&vk.h_alpha_d, &s.h_alpha[4]));
    agg_prover_srs_free(&pk);
    ASSERT_CODE(agg_srs_specialize(&pk, &vk, &s, 8, err), CUZK_E_INVALID_ARG, err);
    /* a verifier reads two points per vector and still gets the same verifier key */
    {
        struct agg_verifier_srs vk2;
        snprintf(path, sizeof path, "%s/%s", dir, AGG_SRS_V28_NAME);
        ASSERT_OK(agg_srs_read(&r, path, 2, true, NULL, err), err);
        ASSERT_OK(agg_srs_specialize(NULL, &vk2, &r, 1024, err), err);
        ASSERT_OK(agg_srs_specialize(NULL, &vk, &s, 4, err), err);
        ASSERT(g1_aff_eq(&vk2.g_beta, &vk.g_beta) && g2_aff_eq(&vk2.h_alpha, &vk.h_alpha) &&
               g1_aff_eq(&vk2.g, &vk.g) && g2_aff_eq(&vk2.h_beta, &vk.h_beta));
        ASSERT_EQ_U64(vk2.n, 1024);
        agg_srs_free(&r);
    }
    ASSERT_CODE(agg_srs_specialize(&pk, &vk, &s, 3, err), CUZK_E_INVALID_ARG, err);
    agg_srs_free(&s);
    snprintf(path, sizeof path, "%s/bad.srs", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s", dir, AGG_SRS_V28_NAME);
    unlink(path);
    ASSERT_EQ_INT(rmdir(dir), 0);
}

/* ------------------------------------------------------- prove / verify -- */

static void agg_ok(struct fx *f, size_t n_in, size_t target, enum agg_version v,
                   struct agg_proof *out)
{
    struct cuzk_error err_s, *err = &err_s;
    struct agg_prover_srs pk;
    struct agg_verifier_srs vk;
    ASSERT_OK(agg_srs_specialize(&pk, &vk, &f->srs, target, err), err);
    ASSERT_OK(agg_prove(out, &pk, f->proofs, n_in, INCLUDE, sizeof INCLUDE, v, NULL, err), err);
    ASSERT_EQ_U64(out->nproofs, target);
    ASSERT_OK(agg_verify(&f->pk.vk, &vk, f->pub, n_in, NPUB, out, INCLUDE, sizeof INCLUDE, v, 5,
                         NULL, err), err);
    /* random coefficients from the OS give the same answer */
    ASSERT_OK(agg_verify(&f->pk.vk, &vk, f->pub, n_in, NPUB, out, INCLUDE, sizeof INCLUDE, v, 0,
                         NULL, err), err);
    /* serialization round trip: exact size, parse, same bytes, still verifies */
    size_t sz = agg_proof_size(out->nproofs);
    uint8_t *b = malloc(sz), *b2 = malloc(sz);
    ASSERT_OK(agg_proof_to_bytes(b, out, err), err);
    struct agg_proof *back = malloc(sizeof *back);
    ASSERT_OK(agg_proof_from_bytes(back, b, sz, err), err);
    ASSERT_OK(agg_proof_to_bytes(b2, back, err), err);
    ASSERT_MEM_EQ(b, b2, sz);
    ASSERT_OK(agg_verify(&f->pk.vk, &vk, f->pub, n_in, NPUB, back, INCLUDE, sizeof INCLUDE, v, 6,
                         NULL, err), err);
    free(back);
    free(b);
    free(b2);
    agg_prover_srs_free(&pk);
}

TEST(proof_size_matches_bellperson)
{
    ASSERT_EQ_U64(agg_proof_size(4), 8212);              /* bellperson test_proof_io */
    ASSERT_EQ_U64(agg_proof_size(2), 2260 + 2976);
    ASSERT_EQ_U64(agg_proof_size(1024), 2260 + 2976 * 10);
    ASSERT_EQ_U64(agg_target_len(1), 2);
    ASSERT_EQ_U64(agg_target_len(5), 8);
    ASSERT_EQ_U64(agg_target_len(8), 8);
    ASSERT_EQ_U64(agg_target_len(0), 0);
}

TEST_T(aggregate_2_and_8_verify, 120)
{
    struct fx f;
    fx_init(&f, 8, 8);
    struct agg_proof *p = malloc(sizeof *p);
    agg_ok(&f, 2, 2, AGG_V2, p);
    agg_ok(&f, 8, 8, AGG_V2, p);
    free(p);
    fx_fini(&f);
}

TEST_T(aggregate_padded_and_v1, 120)
{
    struct cuzk_error err_s, *err = &err_s;
    struct fx f;
    fx_init(&f, 5, 8);
    struct agg_proof *p = malloc(sizeof *p);
    agg_ok(&f, 5, 8, AGG_V2, p);            /* 5 proofs padded to 8 by repeating the last */
    agg_ok(&f, 1, 2, AGG_V2, p);            /* one proof: target 2 */
    /* the padded rows given explicitly verify the same way */
    {
        struct agg_prover_srs pk;
        struct agg_verifier_srs vk;
        ASSERT_OK(agg_srs_specialize(&pk, &vk, &f.srs, 8, err), err);
        ASSERT_OK(agg_prove(p, &pk, f.proofs, 5, INCLUDE, 32, AGG_V2, NULL, err), err);
        fr_t pub8[8 * NPUB];
        for (int j = 0; j < 8; j++) memcpy(pub8 + NPUB * j, f.pub + NPUB * (j < 5 ? j : 4), sizeof(fr_t) * NPUB);
        ASSERT_OK(agg_verify(&f.pk.vk, &vk, pub8, 8, NPUB, p, INCLUDE, 32, AGG_V2, 1, NULL, err), err);
        /* ... but not with the padding taken from another row */
        memcpy(pub8 + NPUB * 7, f.pub, sizeof(fr_t) * NPUB);
        ASSERT_CODE(agg_verify(&f.pk.vk, &vk, pub8, 8, NPUB, p, INCLUDE, 32, AGG_V2, 1, NULL, err),
                    CUZK_E_VERIFY_FAILED, err);
        ASSERT_STR_CONTAINS(err->msg, "Groth16 equation");
        /* a V2 aggregate is not a V1 aggregate (different Fiat-Shamir) */
        ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 5, NPUB, p, INCLUDE, 32, AGG_V1, 1, NULL, err),
                    CUZK_E_VERIFY_FAILED, err);
        agg_prover_srs_free(&pk);
    }
    agg_ok(&f, 4, 4, AGG_V1, p);
    free(p);
    fx_fini(&f);
}

TEST_T(aggregate_refuses_tampering, 180)
{
    struct cuzk_error err_s, *err = &err_s;
    struct fx f;
    fx_init(&f, 8, 8);
    struct agg_prover_srs pk;
    struct agg_verifier_srs vk;
    ASSERT_OK(agg_srs_specialize(&pk, &vk, &f.srs, 8, err), err);
    struct agg_proof *p = malloc(sizeof *p);

    /* proof 3 replaced by a valid proof of other inputs: the aggregate is well formed, the
     * Groth16 equation over the claimed inputs is not */
    struct g16_proof saved = f.proofs[3];
    fr_t other[NPUB];
    make_proof(&f, 77777, &f.proofs[3], other);
    ASSERT(!fr_eq(&other[0], &f.pub[3 * NPUB]) || !fr_eq(&other[1], &f.pub[3 * NPUB + 1]));
    ASSERT_OK(agg_prove(p, &pk, f.proofs, 8, INCLUDE, 32, AGG_V2, NULL, err), err);
    ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB, p, INCLUDE, 32, AGG_V2, 2, NULL, err),
                CUZK_E_VERIFY_FAILED, err);
    ASSERT_STR_CONTAINS(err->msg, "Groth16 equation");
    /* ... and it verifies against that proof's real inputs */
    fr_t pub2[8 * NPUB];
    memcpy(pub2, f.pub, sizeof pub2);
    memcpy(pub2 + 3 * NPUB, other, sizeof other);
    ASSERT_OK(agg_verify(&f.pk.vk, &vk, pub2, 8, NPUB, p, INCLUDE, 32, AGG_V2, 2, NULL, err), err);
    f.proofs[3] = saved;

    ASSERT_OK(agg_prove(p, &pk, f.proofs, 8, INCLUDE, 32, AGG_V2, NULL, err), err);
    /* a wrong public input */
    memcpy(pub2, f.pub, sizeof pub2);
    fr_add(&pub2[5 * NPUB + 1], &pub2[5 * NPUB + 1], &FR_ONE);
    ASSERT_CODE(agg_verify(&f.pk.vk, &vk, pub2, 8, NPUB, p, INCLUDE, 32, AGG_V2, 3, NULL, err),
                CUZK_E_VERIFY_FAILED, err);
    ASSERT_STR_CONTAINS(err->msg, "Groth16 equation");
    /* another transcript include (another comm_r / seed): every challenge changes */
    uint8_t inc2[32];
    memcpy(inc2, INCLUDE, 32);
    inc2[31] ^= 0x80;
    ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB, p, inc2, 32, AGG_V2, 3, NULL, err),
                CUZK_E_VERIFY_FAILED, err);
    ASSERT_STR_CONTAINS(err->msg, "aggregate refused");
    /* a proof field changed in memory (points stay valid): final A doubled */
    {
        struct agg_proof *q = malloc(sizeof *q);
        *q = *p;
        g1_jac_t j;
        g1_jac_from_aff(&j, &q->final_a);
        g1_jac_dbl(&j, &j);
        g1_jac_to_aff(&q->final_a, &j);
        ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB, q, INCLUDE, 32, AGG_V2, 3, NULL, err),
                    CUZK_E_VERIFY_FAILED, err);
        /* each KZG opening is checked, and the refusal names it */
        *q = *p;
        g2_aff_neg(&q->vkey_opening[0], &q->vkey_opening[0]);
        ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB, q, INCLUDE, 32, AGG_V2, 3, NULL, err),
                    CUZK_E_VERIFY_FAILED, err);
        ASSERT_STR_CONTAINS(err->msg, "KZG opening of the v key (h^a powers)");
        *q = *p;
        g1_aff_neg(&q->wkey_opening[1], &q->wkey_opening[1]);
        ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB, q, INCLUDE, 32, AGG_V2, 3, NULL, err),
                    CUZK_E_VERIFY_FAILED, err);
        ASSERT_STR_CONTAINS(err->msg, "KZG opening of the w key (g^b powers)");
        *q = *p;
        q->z_c[1][0] = q->z_c[1][1];
        ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB, q, INCLUDE, 32, AGG_V2, 3, NULL, err),
                    CUZK_E_VERIFY_FAILED, err);
        free(q);
    }

    /* flipped bytes of the serialized aggregate: a parse error or a refusal, never OK */
    size_t sz = agg_proof_size(8);
    uint8_t *b = malloc(sz), *t = malloc(sz);
    ASSERT_OK(agg_proof_to_bytes(b, p, err), err);
    struct agg_proof *q = malloc(sizeof *q);
    /* layout for 8 proofs: 5 Gt | agg_c 1440 | nproofs 1488 | comms_ab 1492 | comms_c 4948 |
     * z_ab 8404 | z_c 10132 | finals 10420 | openings 10900 .. 11188 */
    ASSERT_EQ_U64(sz, 11188);
    size_t pos[] = {0, 100, 287, 300, 1200, 1439, 1440, 1489, 1497, 3000, 4958, 7000, 8407,
                    9500, 10152, 10300, 10420, 10470, 10570, 10620, 10810, 10910, 11100, 11187};
    int parse_fail = 0, refused = 0;
    for (size_t k = 0; k < sizeof pos / sizeof pos[0]; k++) {
        memcpy(t, b, sz);
        t[pos[k]] ^= (uint8_t)(k & 1 ? 0x01 : 0x20);
        int rc = agg_proof_from_bytes(q, t, sz, err);
        if (rc != CUZK_OK) {
            parse_fail++;
            continue;
        }
        rc = agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB, q, INCLUDE, 32, AGG_V2, 4, NULL, err);
        ASSERT_MSG(rc == CUZK_E_VERIFY_FAILED || rc == CUZK_E_INVALID_ARG,
                   "byte %zu flipped: verify returned %s", pos[k], cuzk_errname(rc));
        refused++;
    }
    ASSERT_EQ_U64((size_t)(parse_fail + refused), sizeof pos / sizeof pos[0]);
    /* the 0x20 flips of a point's first byte (agg_c, final_a) negate a valid point: those
     * parse and must be refused by the verifier itself */
    ASSERT(refused >= 2);
    /* truncation, trailing bytes, a non-power-of-two count */
    ASSERT_CODE(agg_proof_from_bytes(q, b, sz - 1, err), CUZK_E_TRUNCATED, err);
    ASSERT_CODE(agg_proof_from_bytes(q, b, 100, err), CUZK_E_TRUNCATED, err);
    ASSERT_STR_CONTAINS(err->msg, "com_ab.0");
    memcpy(t, b, sz);
    ASSERT_CODE(agg_proof_from_bytes(q, t, sz + 0, err), CUZK_OK, err);
    uint8_t *t2 = malloc(sz + 1);
    memcpy(t2, b, sz);
    t2[sz] = 0;
    ASSERT_CODE(agg_proof_from_bytes(q, t2, sz + 1, err), CUZK_E_FORMAT, err);
    free(t2);
    t[1488] = 3;                                          /* nproofs = 3 */
    ASSERT_CODE(agg_proof_from_bytes(q, t, sz, err), CUZK_E_FORMAT, err);
    ASSERT_STR_CONTAINS(err->msg, "nproofs");

    /* argument errors */
    *q = *p;
    q->levels = 40;                 /* a hand-made struct: refused, no undefined shift */
    ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB, q, INCLUDE, 32, AGG_V2, 1, NULL, err),
                CUZK_E_INVALID_ARG, err);
    ASSERT_CODE(agg_proof_to_bytes(t, q, err), CUZK_E_INVALID_ARG, err);
    q->levels = 3;
    q->nproofs = 6;
    ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB, q, INCLUDE, 32, AGG_V2, 1, NULL, err),
                CUZK_E_INVALID_ARG, err);
    ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 8, NPUB - 1, p, INCLUDE, 32, AGG_V2, 1, NULL, err),
                CUZK_E_INVALID_ARG, err);
    ASSERT_CODE(agg_verify(&f.pk.vk, &vk, f.pub, 9, NPUB, p, INCLUDE, 32, AGG_V2, 1, NULL, err),
                CUZK_E_INVALID_ARG, err);
    struct agg_prover_srs pk4;
    struct agg_verifier_srs vk4;
    ASSERT_OK(agg_srs_specialize(&pk4, &vk4, &f.srs, 4, err), err);
    ASSERT_CODE(agg_verify(&f.pk.vk, &vk4, f.pub, 8, NPUB, p, INCLUDE, 32, AGG_V2, 1, NULL, err),
                CUZK_E_INVALID_ARG, err);
    ASSERT_CODE(agg_prove(p, &pk4, f.proofs, 8, INCLUDE, 32, AGG_V2, NULL, err),
                CUZK_E_INVALID_ARG, err);
    ASSERT_STR_CONTAINS(err->msg, "specialized for 4");
    struct g16_proof bad[4];
    memcpy(bad, f.proofs, sizeof bad);
    memset(&bad[2].c, 0, sizeof bad[2].c);
    ASSERT_CODE(agg_prove(p, &pk4, bad, 4, INCLUDE, 32, AGG_V2, NULL, err), CUZK_E_IDENTITY, err);
    agg_prover_srs_free(&pk4);
    free(q);
    free(b);
    free(t);
    free(p);
    agg_prover_srs_free(&pk);
    fx_fini(&f);
}

/* ------------------------------------------------- independent oracles -- */

/* A second transcript, written here with OpenSSL from the format facts. */
struct tr2 { EVP_MD_CTX *c; };
static void tr2_up(struct tr2 *t, const void *b, size_t n) { ASSERT(EVP_DigestUpdate(t->c, b, n)); }
static void tr2_new(struct tr2 *t, const char *tag)
{
    if (!t->c) t->c = EVP_MD_CTX_new();
    ASSERT(t->c && EVP_DigestInit_ex(t->c, EVP_sha256(), NULL));
    tr2_up(t, "snarkpack-v1", 12);
    tr2_up(t, tag, strlen(tag));
}
static void tr2_gt(struct tr2 *t, const fp12_t *f)
{
    const fp_t *c[12] = {&f->c0.c0.c0, &f->c0.c0.c1, &f->c0.c1.c0, &f->c0.c1.c1,
                         &f->c0.c2.c0, &f->c0.c2.c1, &f->c1.c0.c0, &f->c1.c0.c1,
                         &f->c1.c1.c0, &f->c1.c1.c1, &f->c1.c2.c0, &f->c1.c2.c1};
    for (int i = 0; i < 12; i++) {
        uint8_t be[48], le[48];
        fp_to_bytes_be(be, c[i]);
        for (int k = 0; k < 48; k++) le[k] = be[47 - k];
        tr2_up(t, le, 48);
    }
}
static void tr2_challenge(struct tr2 *t, fr_t *out)
{
    for (uint64_t k = 1;; k++) {
        uint8_t ctr[8], d[32];
        unsigned dl = 0;
        for (int i = 0; i < 8; i++) ctr[i] = (uint8_t)(k >> (56 - 8 * i));
        tr2_up(t, ctr, 8);
        EVP_MD_CTX *copy = EVP_MD_CTX_new();
        ASSERT(copy && EVP_MD_CTX_copy_ex(copy, t->c) && EVP_DigestFinal_ex(copy, d, &dl));
        EVP_MD_CTX_free(copy);
        d[31] &= 0x7f;
        if (fr_from_bytes_le(out, d) == CUZK_OK && !fr_is_zero(out) && !fr_is_one(out)) return;
    }
}

TEST_T(commitments_match_direct_pairings, 120)
{
    struct cuzk_error err_s, *err = &err_s;
    struct fx f;
    fx_init(&f, 4, 4);
    struct agg_prover_srs pk;
    struct agg_verifier_srs vk;
    ASSERT_OK(agg_srs_specialize(&pk, &vk, &f.srs, 4, err), err);
    struct agg_proof *p = malloc(sizeof *p);
    ASSERT_OK(agg_prove(p, &pk, f.proofs, 4, INCLUDE, 32, AGG_V2, NULL, err), err);
    /* com_ab.0 = prod e(A_i, h^{a^i}) e(g^{a^(n+i)}, B_i); com_c.1 = prod e(C_i, h^{b^i}) */
    fp12_t t = FP12_ONE, u = FP12_ONE, e;
    for (int i = 0; i < 4; i++) {
        pairing(&e, &f.proofs[i].a, &f.srs.h_alpha[i]);
        fp12_mul(&t, &t, &e);
        pairing(&e, &f.srs.g_alpha[4 + i], &f.proofs[i].b);
        fp12_mul(&t, &t, &e);
        pairing(&e, &f.proofs[i].c, &f.srs.h_beta[i]);
        fp12_mul(&u, &u, &e);
    }
    ASSERT(fp12_eq(&t, &p->com_ab[0]));
    ASSERT(fp12_eq(&u, &p->com_c[1]));
    /* r re-derived by the second transcript; then ip_ab = prod e(A_i, B_i)^{r^i} and
     * agg_c = sum r^i C_i */
    struct tr2 tr = {NULL};
    fr_t hcom, r, ri = FR_ONE;
    tr2_new(&tr, "hcom");
    tr2_gt(&tr, &p->com_ab[0]);
    tr2_gt(&tr, &p->com_ab[1]);
    tr2_gt(&tr, &p->com_c[0]);
    tr2_gt(&tr, &p->com_c[1]);
    tr2_challenge(&tr, &hcom);
    tr2_new(&tr, "random-r");
    uint8_t hb[32], len8[8] = {32, 0, 0, 0, 0, 0, 0, 0};
    fr_to_bytes_le(hb, &hcom);
    tr2_up(&tr, hb, 32);
    tr2_up(&tr, len8, 8);
    tr2_up(&tr, INCLUDE, 32);
    tr2_challenge(&tr, &r);
    EVP_MD_CTX_free(tr.c);
    fp12_t ip = FP12_ONE;
    g1_jac_t acc;
    g1_jac_set_inf(&acc);
    for (int i = 0; i < 4; i++) {
        uint64_t k[4];
        fr_from_mont(k, &ri);
        pairing(&e, &f.proofs[i].a, &f.proofs[i].b);
        fp12_pow(&e, &e, k, 4);
        fp12_mul(&ip, &ip, &e);
        g1_jac_t c, rc;
        g1_jac_from_aff(&c, &f.proofs[i].c);
        g1_jac_mul_fr(&rc, &c, &ri);
        g1_jac_add(&acc, &acc, &rc);
        fr_mul(&ri, &ri, &r);
    }
    ASSERT(fp12_eq(&ip, &p->ip_ab));
    g1_aff_t agg;
    g1_jac_to_aff(&agg, &acc);
    ASSERT(g1_aff_eq(&agg, &p->agg_c));
    free(p);
    agg_prover_srs_free(&pk);
    fx_fini(&f);
}

/* Every allocation of specialize / prove / serialize / verify may fail: CUZK_E_NOMEM, no crash,
 * nothing leaked (ASan), and the same call succeeds once memory is back. */
TEST_T(aggregate_survives_allocation_failures, 180)
{
    struct cuzk_error err_s, *err = &err_s;
    struct fx f;
    fx_init(&f, 4, 4);
    struct agg_proof *p = malloc(sizeof *p);
    int rc = CUZK_E_NOMEM;
    long k;
    for (k = 0; k < 400 && rc != CUZK_OK; k++) {
        struct agg_prover_srs pk = {0};
        struct agg_verifier_srs vk;
        cuzk_alloc_fail_after(k);
        rc = agg_srs_specialize(&pk, &vk, &f.srs, 4, err);
        if (!rc) rc = agg_prove(p, &pk, f.proofs, 3, INCLUDE, 32, AGG_V2, NULL, err);
        if (!rc)
            rc = agg_verify(&f.pk.vk, &vk, f.pub, 3, NPUB, p, INCLUDE, 32, AGG_V2, 1, NULL, err);
        cuzk_alloc_fail_after(-1);
        agg_prover_srs_free(&pk);
        ASSERT_MSG(rc == CUZK_OK || rc == CUZK_E_NOMEM, "allocation %ld failed: %s: %s", k,
                   cuzk_errname(rc), err->msg);
    }
    ASSERT_EQ_INT(rc, CUZK_OK);
    ASSERT(k > 5);              /* the failures were really injected */
    free(p);
    fx_fini(&f);
}

/* Regression pin (not an oracle): fixed key, witnesses, blindings and SRS give these aggregate
 * bytes; a change here means the transcript, the layout or an upstream-visible value moved,
 * which must be a deliberate, documented change. */
TEST_T(aggregate_bytes_are_pinned, 120)
{
    struct cuzk_error err_s, *err = &err_s;
    struct fx f;
    fx_init(&f, 4, 4);
    for (size_t i = 0; i < 4; i++) {       /* re-prove with fixed blindings */
        fr_t *in = calloc(f.s.n_inputs, sizeof(fr_t)), *aux = calloc(f.s.n_aux + 1, sizeof(fr_t));
        ASSERT_OK(synth_witness(in, aux, &f.s, &f.p, 1000 + i, err), err);
        struct g16_assignment w = {in, aux};
        fr_t r, s;
        fr_from_u64(&r, 11 + i);
        fr_from_u64(&s, 23 + i);
        ASSERT_OK(g16_prove(&f.proofs[i], &f.s, &f.pk, &w, 1, &r, &s, NULL, NULL, NULL, err), err);
        free(in);
        free(aux);
    }
    struct agg_prover_srs pk;
    struct agg_verifier_srs vk;
    ASSERT_OK(agg_srs_specialize(&pk, &vk, &f.srs, 4, err), err);
    struct agg_proof *p = malloc(sizeof *p);
    static const char *const want[2] = {PIN_V1, PIN_V2};
    for (int v = 0; v < 2; v++) {
        ASSERT_OK(agg_prove(p, &pk, f.proofs, 4, INCLUDE, 32, v ? AGG_V2 : AGG_V1, NULL, err), err);
        uint8_t b[8212], d[32];
        char hex[65];
        ASSERT_OK(agg_proof_to_bytes(b, p, err), err);
        SHA256(b, sizeof b, d);
        for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
        ASSERT_MSG(!strcmp(hex, want[v]), "V%d aggregate digest %s, pinned %s", v + 1, hex,
                   want[v]);
    }
    free(p);
    agg_prover_srs_free(&pk);
    fx_fini(&f);
}
