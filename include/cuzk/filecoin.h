/* filecoin.h: Filecoin PoRep data around the circuit of porep.h: registered seal proofs and
 * parameter names, prover / replica ids, challenge derivation, the stacked DRG graph
 * (BucketGraph + Feistel expander), the C1 output (SealCommitPhase1Output JSON in Curio's
 * wrapper) with its parser, writer and a synthetic generator, and the per-partition witness
 * and public inputs; registered PoSt proofs, PoSt challenges and public inputs. Library
 * libcuzk_fil.a (depends on libcuzk_core.a and jansson).
 * See docs/filecoin.md. */
#ifndef CUZK_FILECOIN_H
#define CUZK_FILECOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/porep.h"
#include "cuzk/post.h"
#include "cuzk/sha256.h"

/* ----------------------------------------------------------------- hashes -- */

/* Plain C hashes used by the Filecoin derivations (no OpenSSL dependency); SHA-256 is
 * the core's (cuzk/sha256.h). */
/* BLAKE2b with out_len 1..64 and an optional key (key_len 0..64). */
void fil_blake2b(uint8_t *out, size_t out_len, const void *key, size_t key_len,
                 const void *data, size_t n);
/* ChaCha keystream with `rounds` (8 or 20) and djb's layout: words 12-13 = 64-bit block
 * counter, words 14-15 = nonce (rand_chacha's stream), or with ietf = true a 32-bit counter
 * (word 12) and a 96-bit nonce (words 13-15). out receives n_blocks * 64 bytes. */
void fil_chacha_blocks(uint8_t *out, const uint8_t key[32], const uint8_t *nonce, bool ietf,
                       uint64_t counter, size_t n_blocks, unsigned rounds);

/* ------------------------------------------------------- registered proofs -- */

enum fil_api_version { FIL_API_1_0 = 0, FIL_API_1_1 = 1, FIL_API_1_2 = 2 };
enum fil_porep_kind { FIL_POREP_INTERACTIVE = 0, FIL_POREP_SYNTHETIC = 1, FIL_POREP_NI = 2 };

/* filecoin-proofs-api RegisteredSealProof. Every variant of one sector size uses the same
 * circuit (and parameter file); they differ in graph ordering (api), challenge derivation
 * (kind) and partition count. */
struct fil_seal_proof {
    const char *name;           /* "StackedDrg2KiBV1_1" */
    const char *vanilla_tag;    /* the VanillaSealProof enum tag: "StackedDrg2KiBV1" */
    uint64_t id;                /* enum value = porep_id bytes 0..7 */
    uint64_t sector_size;
    enum fil_api_version api;
    enum fil_porep_kind kind;
    unsigned partitions;
    unsigned challenges;        /* per partition */
    unsigned layers;
};
size_t fil_seal_proof_count(void);
const struct fil_seal_proof *fil_seal_proof_at(size_t i);
const struct fil_seal_proof *fil_seal_proof_by_name(const char *name);    /* NULL if unknown */
const struct fil_seal_proof *fil_seal_proof_by_id(uint64_t id);           /* NULL if unknown */
/* The V1_1 interactive proof of a size (what Curio seals with); NULL for other sizes. */
const struct fil_seal_proof *fil_seal_proof_default(uint64_t sector_size);
/* porep_id: id (u64 LE) | nonce 0 (u64 LE) | 16 zero bytes. */
void fil_porep_id(uint8_t out[32], const struct fil_seal_proof *p);
/* v28 parameter file stem of the PoRep circuit of that size, e.g. "v28-stacked-proof-of-
 * replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d31...832f" (append
 * ".params" / ".vk"). CUZK_E_UNSUPPORTED for other sizes. */
int fil_porep_param_stem(char *out, size_t out_len, uint64_t sector_size, struct cuzk_error *err);
/* prover_id: the miner actor id as unsigned LEB128, left-aligned in 32 zero bytes. */
void fil_prover_id(uint8_t out[32], uint64_t miner_id);
/* generate_replica_id: SHA-256(prover_id | sector_id BE | ticket | comm_d | porep_id),
 * top two bits of byte 31 cleared. */
void fil_replica_id(uint8_t out[32], const uint8_t prover_id[32], uint64_t sector_id,
                    const uint8_t ticket[32], const uint8_t comm_d[32], const uint8_t porep_id[32]);

/* ------------------------------------------------------------- the graph -- */

#define FIL_DRG_PARENTS 6
#define FIL_EXP_PARENTS 8

/* StackedBucketGraph of one registered proof: DRG (BucketGraph, ChaCha8 seeded from the
 * porep_id) and Feistel expander parents (3 rounds of BLAKE2b). */
struct fil_graph {
    uint64_t nodes;
    bool legacy;                /* ApiVersion 1.0: predecessor last, u32-truncated expander */
    uint8_t drg_seed[28];
    uint64_t feistel_keys[4];
    uint64_t left_mask, right_mask;
    unsigned half_bits;
};
void fil_graph_init(struct fil_graph *g, const struct fil_seal_proof *p);
void fil_graph_drg_parents(const struct fil_graph *g, uint32_t node, uint32_t out[FIL_DRG_PARENTS]);
void fil_graph_exp_parents(const struct fil_graph *g, uint32_t node, uint32_t out[FIL_EXP_PARENTS]);

/* SDR label: SHA-256(replica_id | layer BE32 | node BE64 | 20 zero bytes | 37 parents),
 * top two bits of byte 31 cleared (the circuit's create_label, natively). */
void fil_sdr_label(uint8_t out[32], const uint8_t replica_id[32], uint32_t layer, uint64_t node,
                   const uint8_t parents[37][32]);
/* The 37 label parents of a layer from the 6 DRG values (this layer) and, for layer > 1, the
 * 8 expander values (previous layer): 6x6 + p0 on layer 1, 14 + 14 + first 9 after. */
void fil_sdr_expand_parents(uint8_t out[37][32], const uint8_t (*drg)[32], const uint8_t (*exp)[32],
                            uint32_t layer);

/* ------------------------------------------------------------- challenges -- */

/* The challenges of partition k (p->challenges values): interactive from (replica_id, seed),
 * NI from (replica_id, comm_r), synthetic from (replica_id, comm_r) and seed. */
int fil_porep_challenges(uint64_t *out, const struct fil_seal_proof *p,
                         const uint8_t replica_id[32], const uint8_t comm_r[32],
                         const uint8_t seed[32], unsigned k, struct cuzk_error *err);
/* How p's challenges are chosen, for messages: "(replica_id, seed)", "(replica_id, comm_r)
 * (NI-PoRep)" or "the synthetic challenges of (replica_id, comm_r) selected by seed". */
const char *fil_porep_challenge_rule(const struct fil_seal_proof *p);
/* Synthetic PoRep's pieces (FIP-0059): the number of synthetic challenges of a sector,
 * min(nodes, 2^18); synthetic challenge i of (replica_id, comm_r); and the synthetic indices
 * (mod num_synth) that select PoRep challenges first .. first + n - 1 (partition k's are
 * first = k * challenges). fil_porep_challenges composes them. */
uint64_t fil_synth_count(uint64_t nodes);
uint64_t fil_synth_challenge(uint64_t nodes, const uint8_t replica_id[32], const uint8_t comm_r[32],
                             uint64_t i);
void fil_synth_indexes(uint64_t *out, unsigned n, uint64_t num_synth, const uint8_t replica_id[32],
                       const uint8_t seed[32], uint64_t first);

/* -------------------------------------------------------------------- C1 -- */

#define FIL_MAX_LEVELS 32       /* tree D of 64 GiB has 31 */
#define FIL_MAX_SIBS 80         /* 11 levels x 7 siblings for trees R / C */

/* MerkleProof: levels leaf upward; base levels, then 0/1 sub level, then 0/1 top level. */
struct fil_merkle_proof {
    uint8_t root[32], leaf[32];
    uint8_t n_base, n_sub, n_top;
    uint8_t arity[FIL_MAX_LEVELS];
    uint32_t index[FIL_MAX_LEVELS];
    uint8_t sib[FIL_MAX_SIBS][32];  /* arity - 1 per level, level by level */
};
struct fil_column_proof {
    uint32_t index;
    uint8_t rows[POREP_MAX_LAYERS][32];
    struct fil_merkle_proof proof;
};
struct fil_labeling_proof {
    uint8_t parents[37][32];
    uint32_t layer_index;
    uint64_t node;
};
/* One challenge's vanilla proof (storage-proofs-porep stacked Proof). */
struct fil_vproof {
    struct fil_merkle_proof comm_d, comm_r_last;
    struct fil_column_proof c_x, drg[FIL_DRG_PARENTS], exp[FIL_EXP_PARENTS];
    struct fil_labeling_proof labeling[POREP_MAX_LAYERS];
    struct fil_labeling_proof encoding;
};
/* The C1 output in Curio's wrapper, parsed and shape-checked. */
struct fil_c1 {
    uint64_t sector_num, sector_size;       /* wrapper */
    const struct fil_seal_proof *proof;     /* registered_proof */
    uint8_t comm_r[32], comm_d[32], replica_id[32], seed[32], ticket[32];
    unsigned partitions, challenges;
    struct fil_vproof *vp;                  /* partitions * challenges, partition-major */
};
void fil_c1_free(struct fil_c1 *c);

/* Parse the wrapper {"SectorNum","Phase1Out" (base64 SealCommitPhase1Output JSON),
 * "SectorSize"}. Errors name the JSON path, e.g. "Phase1Out.vanilla_proofs.
 * StackedDrg2KiBV1[0][3].comm_d_proofs.data.Single.path.path[2].hashes[0]: expected
 * 32-byte array, got 31 elements". Checks shapes (partitions, challenges, levels, arities,
 * layers, domain encodings); the circuit checks the values. */
int fil_c1_parse_wrapper(struct fil_c1 *out, const void *json, size_t len, struct cuzk_error *err);
/* The inner SealCommitPhase1Output JSON alone (sector_num = 0, sector_size from the proof). */
int fil_c1_parse_phase1(struct fil_c1 *out, const void *json, size_t len, struct cuzk_error *err);
/* Write the inner JSON (serde_json's compact form, fields in declaration order) or the
 * wrapper. *out is cuzk_malloc'ed and NUL-terminated; *out_len excludes the NUL. */
int fil_c1_write_phase1(char **out, size_t *out_len, const struct fil_c1 *c, struct cuzk_error *err);
int fil_c1_write_wrapper(char **out, size_t *out_len, const struct fil_c1 *c, struct cuzk_error *err);

/* Standard base64 (with padding). decode: CUZK_E_BAD_ENCODING naming the offset. */
int fil_base64_decode(uint8_t **out, size_t *out_len, const char *in, size_t n, struct cuzk_error *err);
char *fil_base64_encode(const uint8_t *in, size_t n, size_t *out_len);   /* NULL: no memory */

/* Synthetic, internally consistent C1 for proof p (gen-vanilla): zero data (a CC sector) and
 * replica id derived as upstream from (miner_id, sector_num, ticket, comm_d, porep_id), so the
 * daemon's replica-id check accepts it; sparse trees whose
 * untouched subtrees are random; labels of challenged nodes computed with SHA-256 from their
 * parents' columns. Deterministic in seed. */
int fil_c1_generate(struct fil_c1 *out, const struct fil_seal_proof *p, uint64_t miner_id,
                    uint64_t sector_num, uint64_t seed, struct cuzk_error *err);

/* ----------------------------------------------------- witness and inputs -- */

/* The circuit's view of partition k of c (values borrowed from an arena owned here). Before
 * building it, the vanilla data the circuit does not read is checked natively, so a damaged
 * C1 fails early with a precise message: each challenge equals the one derived from
 * (replica_id, seed), column indices equal the graph's parents and the path positions, the
 * labeling / encoding proofs list the parents' values, and the c_x rows equal the SHA-256
 * labels computed from the parent columns. */
struct fil_porep_witness {
    struct porep_config cfg;
    struct porep_witness w;
    void *arena;
};
int fil_porep_witness_build(struct fil_porep_witness *out, const struct fil_c1 *c, unsigned k,
                            struct cuzk_error *err);
/* Every vanilla proof of c is for the challenge its registered proof derives at its place:
 * vp[k * challenges + i] must prove challenge i of partition k. Cheap (no tree work); run
 * before any partition is proved so that a C1 with the wrong challenges (another seed, a
 * synthetic selection of other indices, swapped proofs) is refused as a whole. CUZK_E_FORMAT
 * naming the partition, the index, the node proved and the node expected. */
int fil_c1_check_challenges(const struct fil_c1 *c, struct cuzk_error *err);
void fil_porep_witness_free(struct fil_porep_witness *w);

/* Witness values of partition k: build, then porep_witness_values (challenges in parallel
 * on pool; NULL: one after another in the calling thread) into vectors allocated at the
 * partition's exact size (huge pages advised): growing them while synthesizing cost 8x more
 * than the synthesis itself. *inputs (ONE first) and *aux are cuzk_malloc'ed. */
int fil_porep_witness_values_ex(fr_t **inputs, fr_t **aux, uint32_t *n_inputs, uint32_t *n_aux,
                                const struct fil_c1 *c, unsigned k, struct pool *pool,
                                struct cuzk_error *err);
/* The same on pool_default(). */
int fil_porep_witness_values(fr_t **inputs, fr_t **aux, uint32_t *n_inputs, uint32_t *n_aux,
                             const struct fil_c1 *c, unsigned k, struct cuzk_error *err);

/* Number of public inputs of a partition (ONE excluded): 3 + 18 * challenges. */
size_t fil_porep_num_inputs(const struct fil_seal_proof *p);
/* StackedCompound::generate_public_inputs for partition k, recomputed from (replica_id,
 * comm_d, comm_r, seed) with the graph and the challenge rule of p (Montgomery Fr). */
int fil_porep_public_inputs(fr_t *out, const struct fil_seal_proof *p, const uint8_t replica_id[32],
                            const uint8_t comm_d[32], const uint8_t comm_r[32],
                            const uint8_t seed[32], unsigned k, struct cuzk_error *err);


/* ------------------------------------------------------------------ PoSt -- */

/* Registered PoSt proofs (filecoin-proofs-api RegisteredPoStProof; Curio / go-state-types
 * numbering): Winning 0..4 (ApiVersion 1.0.0), Window V1 5..9 (1.0.0), Window V1_2 10..14
 * (1.2.0; Go calls these V1_1). V1 and V1_2 share the circuit and parameter files; only the
 * challenge index differs. Counts are PoStConfig's: Window S sectors per partition x 10
 * challenges; Winning 1 sector x 66 challenges (the circuit unrolls them: 66 x 1). */
struct fil_post_proof {
    const char *name;           /* Rust: "StackedDrgWindow32GiBV1_2" */
    const char *go_name;        /* go-state-types: "StackedDrgWindow32GiBV1_1" */
    uint64_t id;                /* Go abi value, Curio's registered_proof */
    enum post_kind kind;
    uint64_t sector_size;
    enum fil_api_version api;
    unsigned sector_count;      /* Window 2 / 2349 (32 GiB) / 2300 (64 GiB); Winning 1 */
    unsigned challenge_count;   /* per sector: Window 10; Winning 66 */
    const char *tree_shape;     /* "8-8-0" */
    const char *param_hash;     /* SHA-256 of the FallbackPoSt PublicParams identifier */
};
size_t fil_post_proof_count(void);
const struct fil_post_proof *fil_post_proof_at(size_t i);
const struct fil_post_proof *fil_post_proof_by_id(uint64_t id);          /* NULL if unknown */
const struct fil_post_proof *fil_post_proof_by_name(const char *name);   /* Rust or Go name */
/* "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-0377de...3edc". */
int fil_post_param_stem(char *out, size_t out_len, const struct fil_post_proof *p, struct cuzk_error *err);
/* The circuit config (post.h) of p: Window S x 10, Winning 66 x 1. */
int fil_post_circuit_config(struct post_config *c, const struct fil_post_proof *p, struct cuzk_error *err);

/* randomness must be 32 bytes and a canonical Fr (< r); CUZK_E_BAD_ENCODING otherwise, with a
 * message saying to clear the top two bits (randomness[31] &= 0x3f, as Curio does). */
int fil_post_check_randomness(const uint8_t *randomness, size_t len, struct cuzk_error *err);
/* get_challenge_index: ApiVersion 1.0/1.1: sector_index * challenges_per_sector + n;
 * 1.2: n. */
uint64_t fil_post_challenge_index(enum fil_api_version api, uint64_t sector_index,
                                  unsigned challenges_per_sector, unsigned n);
/* generate_leaf_challenge: SHA-256(randomness | sector_id LE64 | challenge_index LE64), bytes
 * 0..7 as an LE u64, mod sector_size / 32. randomness is not checked here. */
uint64_t fil_post_leaf_challenge(uint64_t sector_size, const uint8_t randomness[32],
                                 uint64_t sector_id, uint64_t challenge_index);
/* The prover's challenges of one sector (generate_fallback_sector_challenges):
 * p->challenge_count leaves; sector_index = k * S + position in partition k (Window), 0 for
 * Winning (its 66 challenges use indices 0..65). */
int fil_post_sector_challenges(uint64_t *out, const struct fil_post_proof *p,
                               const uint8_t randomness[32], uint64_t sector_id,
                               uint64_t sector_index, struct cuzk_error *err);
/* WinningPoSt sector selection (generate_sector_challenge): p->sector_count (1) positions in
 * the proving set, SHA-256(prover_id | randomness | n LE64) bytes 0..7 LE mod sector_set_len.
 * prover_id: fil_prover_id(miner id). An empty set is an error. */
int fil_winning_post_sector_challenge(uint64_t *out, const struct fil_post_proof *p,
                                      const uint8_t randomness[32], const uint8_t prover_id[32],
                                      uint64_t sector_set_len, struct cuzk_error *err);

/* Partitions of a WindowPoSt over n_sectors (ceil(n / S), at least 1); Winning: 1. */
unsigned fil_post_partitions(const struct fil_post_proof *p, size_t n_sectors);
/* Number of public inputs of the circuit, ONE included: 1 + S * (1 + C). */
size_t fil_post_num_inputs(const struct fil_post_proof *p);
/* The circuit view of partition k: for each of the S circuit sectors, its comm_r (comm_r_fr,
 * S entries, Montgomery; may be NULL) and the C challenged leaves (leaf, S * C entries), as
 * FallbackPoStCompound::generate_public_inputs derives them. Window: sector_ids (strictly
 * ascending, as the verifier orders them) / comm_rs are all the sectors of the proof, chunk k
 * of S is used, padded by repeating its last sector. Winning: the one challenged sector,
 * unrolled into 66 circuit sectors with challenge indices 0..65. */
int fil_post_partition_challenges(uint64_t *leaf, fr_t *comm_r_fr, const struct fil_post_proof *p,
                                  const uint8_t randomness[32], const uint64_t *sector_ids,
                                  const uint8_t (*comm_rs)[32], size_t n_sectors, unsigned k,
                                  struct cuzk_error *err);
/* The public input vector of partition k, exactly what post_public_inputs fills (out[0] = ONE,
 * fil_post_num_inputs entries), recomputed from public data only. prover_id (may be NULL) is
 * checked to be canonical as upstream does but does not enter the inputs. */
int fil_post_public_inputs(fr_t *out, const struct fil_post_proof *p, const uint8_t randomness[32],
                           const uint8_t prover_id[32], const uint64_t *sector_ids,
                           const uint8_t (*comm_rs)[32], size_t n_sectors, unsigned k,
                           struct cuzk_error *err);

#endif
