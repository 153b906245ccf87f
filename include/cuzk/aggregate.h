/* aggregate.h: SnarkPack aggregation of Groth16 proofs (bellperson's groth16::aggregate, as
 * rust-fil-proofs uses it for NI-PoRep and aggregated PoRep): the generic inner-product SRS
 * (local generation for tests, and the v28 "v28-fil-inner-product-v1.srs" file format), its
 * specialization to N proofs, the prover (TIPP + MIPP over one GIPA loop, KZG openings of the
 * final commitment keys), the verifier (one randomized multi-pairing) and the AggregateProof
 * byte layout. CPU only. The format facts this relies on are listed at the top of
 * src/groth16/agg_prove.c; the design in docs/decisions.md ("SnarkPack aggregation").
 *
 * Every function: any thread; pool NULL = the process-wide pool. Nothing aborts on bad input:
 * errors are CUZK_E_* codes with a sentence in err. */
#ifndef CUZK_AGGREGATE_H
#define CUZK_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/ec.h"
#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/groth16.h"

struct pool;

/* The SnarkPack versions bellperson knows. rust-fil-proofs aggregates NI-PoRep (and, since
 * API v1.2, interactive PoRep aggregation) with V2: its Fiat-Shamir also absorbs the first
 * GIPA round and binds the KZG point to the final A, B, C. */
enum agg_version { AGG_V1 = 1, AGG_V2 = 2 };

/* The production SRS: file name in the Filecoin parameter cache, vector-length limit of the
 * format (bellperson MAX_SRS_SIZE = (2 << 19) + 1) and the number of points per vector that
 * rust-fil-proofs reads from it ((2 << 14) + 1, so at most 16384 proofs per aggregate). */
#define AGG_SRS_V28_NAME "v28-fil-inner-product-v1.srs"
#define AGG_SRS_MAX_SIZE ((size_t)(2u << 19) + 1)
#define AGG_SRS_FIL_MAX_LEN ((size_t)(2u << 14) + 1)
#define AGG_MAX_LEVELS 20                      /* log2 of the largest aggregate (2^20) */

/* GenericSRS: g^{a^i}, g^{b^i} in G1 and h^{a^i}, h^{b^i} in G2 for i = 0.. (two powers-of-tau
 * transcripts with the same generators). Owned arrays. */
struct agg_srs {
    g1_aff_t *g_alpha, *g_beta;
    g2_aff_t *h_alpha, *h_beta;
    size_t n_g_alpha, n_g_beta, n_h_alpha, n_h_beta;
};
void agg_srs_free(struct agg_srs *srs);

/* A local generic SRS for up to n_max proofs (2 n_max powers of each kind, as bellperson's
 * setup_fake_srs(rng, n_max)), alpha and beta drawn from seed. NOT FOR PRODUCTION: alpha and
 * beta are known to this process (and to anyone who knows the seed). */
int agg_srs_generate(struct agg_srs *srs, size_t n_max, uint64_t seed, struct pool *pool,
                     struct cuzk_error *err);
/* The .srs layout: four vectors g_alpha, g_beta, h_alpha, h_beta, each a u32 big-endian
 * length then that many compressed points (48 / 96 bytes). */
int agg_srs_write(const struct agg_srs *srs, const char *path, struct cuzk_error *err);
/* Reads at most max_len points of each vector (0 = all; rust-fil-proofs reads
 * AGG_SRS_FIL_MAX_LEN) and skips the rest, as bellperson's read_mmap does; every point read is
 * decoded, checked on the curve and (check_subgroup) in the subgroup. Errors name the file,
 * vector and index. The file's size must equal what its four lengths announce. */
int agg_srs_read(struct agg_srs *srs, const char *path, size_t max_len, bool check_subgroup,
                 struct pool *pool, struct cuzk_error *err);
/* dir/AGG_SRS_V28_NAME with AGG_SRS_FIL_MAX_LEN and subgroup checks; CUZK_E_NOT_FOUND if the
 * file is absent (the caller then generates a local one for tests, or refuses). */
int agg_srs_load_v28(struct agg_srs *srs, const char *dir, struct pool *pool,
                     struct cuzk_error *err);

/* Specialized keys for exactly n proofs (a power of two, 2 <= n, 2n <= every vector). */
struct agg_prover_srs {
    size_t n;
    g1_aff_t *g_alpha, *g_beta;     /* 2n powers (KZG of the w key, degree 2n - 1) */
    g2_aff_t *h_alpha, *h_beta;     /* n powers (the v key and its KZG) */
    /* commitment keys: v = (h_alpha, h_beta)[0, n), w = (g_alpha, g_beta)[n, 2n) */
};
struct agg_verifier_srs {
    size_t n;
    g1_aff_t g, g_alpha, g_beta;
    g2_aff_t h, h_alpha, h_beta;
    g2_aff_t h_alpha_d;             /* h^{a^(len - n)}; only the instance-aggregation variant uses it */
};
/* pk or vk may be NULL. With pk NULL only the first two points of each vector are needed, so a
 * verifier can read the .srs with max_len 2 (h_alpha_d is then not upstream's). */
int agg_srs_specialize(struct agg_prover_srs *pk, struct agg_verifier_srs *vk,
                       const struct agg_srs *srs, size_t n, struct cuzk_error *err);
void agg_prover_srs_free(struct agg_prover_srs *pk);

/* AggregateProof. Gt values are final-exponentiated pairing products (fp12, in the order-r
 * subgroup). levels = log2(nproofs). Fixed arrays: no allocation, about 120 KB. */
struct agg_proof {
    fp12_t com_ab[2], com_c[2], ip_ab;
    g1_aff_t agg_c;
    uint32_t nproofs;
    unsigned levels;
    fp12_t comms_ab[AGG_MAX_LEVELS][4];     /* (tab_l.0, tab_l.1, tab_r.0, tab_r.1) */
    fp12_t comms_c[AGG_MAX_LEVELS][4];      /* (tuc_l.0, tuc_l.1, tuc_r.0, tuc_r.1) */
    fp12_t z_ab[AGG_MAX_LEVELS][2];
    g1_aff_t z_c[AGG_MAX_LEVELS][2];
    g1_aff_t final_a, final_c;
    g2_aff_t final_b;
    g2_aff_t final_vkey[2];
    g1_aff_t final_wkey[2];
    g2_aff_t vkey_opening[2];
    g1_aff_t wkey_opening[2];
};

/* The proof count an aggregate of n proofs has: 2 for n = 1, else the next power of two
 * (rust-fil-proofs' get_aggregate_target_len); 0 for n = 0 or n > 2^20. */
size_t agg_target_len(size_t n);

/* Aggregate n proofs (1 <= n; padded to agg_target_len(n) by repeating the last proof, as
 * rust-fil-proofs does; pk->n must equal that length). include: the bytes bound into the
 * transcript from outside (Filecoin: agg_seal_transcript_include); it must commit to every
 * public input that is not fixed in advance. */
int agg_prove(struct agg_proof *out, const struct agg_prover_srs *pk,
              const struct g16_proof *proofs, size_t n, const uint8_t *include,
              size_t include_len, enum agg_version version, struct pool *pool,
              struct cuzk_error *err);

/* Verify against the Groth16 key. inputs: n_sets rows of n_pub public inputs (ONE excluded,
 * Montgomery form), row i for proof i; fewer rows than proof->nproofs are padded by
 * repeating the last (rust-fil-proofs' pad_inputs_to_target). vsrs->n must equal nproofs.
 * CUZK_OK: valid. CUZK_E_VERIFY_FAILED: refused, err names the check that failed (e.g.
 * "aggregate: Groth16 equation of the aggregate does not hold"). CUZK_E_INVALID_ARG for
 * counts that do not fit. rng_seed feeds the random coefficients of the batched pairing
 * check (0 = OS randomness); a fixed seed is for tests. */
int agg_verify(const struct g16_vk *vk, const struct agg_verifier_srs *vsrs, const fr_t *inputs,
               size_t n_sets, size_t n_pub, const struct agg_proof *proof,
               const uint8_t *include, size_t include_len, enum agg_version version,
               uint64_t rng_seed, struct pool *pool, struct cuzk_error *err);

/* Serialized size (bellperson AggregateProof::write): 2260 + 2976 log2(nproofs) bytes. */
size_t agg_proof_size(uint32_t nproofs);
/* out: agg_proof_size(p->nproofs) bytes. CUZK_E_INVALID_ARG if a Gt value cannot be compressed
 * (an identity commitment: never from agg_prove on valid proofs). */
int agg_proof_to_bytes(uint8_t *out, const struct agg_proof *p, struct cuzk_error *err);
/* Parses and checks everything the format can: nproofs a power of two in [2, 2^20], length
 * exact (truncation: CUZK_E_TRUNCATED; trailing bytes: CUZK_E_FORMAT), every Gt value a
 * canonical compression of an element of the order-r subgroup, every point on the curve and
 * in the subgroup. Errors name the field, e.g. "aggregate proof: comms_ab[3].tab_r.0: ...". */
int agg_proof_from_bytes(struct agg_proof *p, const uint8_t *in, size_t len,
                         struct cuzk_error *err);

/* rust-fil-proofs' transcript_include for sealing: SHA-256 over seed_i || comm_r_i for each
 * sector (interactive PoRep), or over comm_r_i only (NI-PoRep: seeds NULL). */
void agg_seal_transcript_include(uint8_t out[32], const uint8_t (*comm_rs)[32],
                                 const uint8_t (*seeds)[32], size_t n);

/* Gt helpers, exposed for tests: the torus compression bellperson writes (b = (c0 + 1) / c1,
 * 6 Fp little-endian: b.c0.c0, b.c0.c1, b.c1.c0, ...; false if c1 = 0) and its inverse with
 * the subgroup check (f^r == 1). */
bool agg_gt_compress(uint8_t out[288], const fp12_t *f);
int agg_gt_decompress(fp12_t *f, const uint8_t in[288], struct cuzk_error *err);
/* f in the order-r subgroup of Fp12* (fast test: cyclotomic check and f^p == f^x). */
bool agg_gt_in_subgroup(const fp12_t *f);

#endif
