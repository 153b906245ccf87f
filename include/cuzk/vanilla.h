/* vanilla.h: the bincode vanilla proofs Curio sends for PoSt and SnapDeals, parsed with a
 * reader of our own (bincode 1.x default options, as rust-filecoin-proofs-api writes them) and
 * turned into the circuits' witnesses (post.h, snap.h). Part of libcuzk_fil.a.
 * Formats: docs/formats.md ("Vanilla proofs (bincode)").
 *
 * Errors: a message "<what> (sector i | partition k): <serde field path> at byte <offset>:
 * <problem>", e.g. "FallbackPoStSectorProof (sector 3): vanilla_proof.sectors[0].
 * inclusion_proofs[4].data.Sub.base_proof.path[2].hashes[6] at byte 1234: truncated: ...".
 * Codes: CUZK_E_TRUNCATED (input ends inside a field), CUZK_E_BAD_ENCODING (a domain element
 * >= r), CUZK_E_FORMAT (wrong count / enum variant / index, trailing bytes, more sectors
 * than the partition holds, inconsistent partition paths), CUZK_E_INVALID_ARG (NULL or
 * mismatched arguments), CUZK_E_NOMEM. Nothing aborts. */
#ifndef CUZK_VANILLA_H
#define CUZK_VANILLA_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/filecoin.h"
#include "cuzk/post.h"
#include "cuzk/snap.h"

/* ------------------------------------------------------------------ PoSt -- */

/* One FallbackPoStSectorProof (filecoin-proofs types/mod.rs): sector_id, comm_r and a
 * vanilla proof holding exactly one SectorProof (generate_single_vanilla_proof) of
 * `challenges` tree-R inclusion proofs (10 WindowPoSt, 66 WinningPoSt) plus comm_c and
 * comm_r_last. Values are Montgomery Fr; arrays live in the arena. */
struct fil_post_sector_proof {
    uint64_t sector_id;
    fr_t comm_r, comm_c, comm_r_last;
    unsigned challenges;            /* inclusion proofs */
    unsigned levels, siblings;      /* per path (the post_config's tree-R shape) */
    fr_t *leaves, *roots;           /* challenges each (roots: as sent; the circuit ignores them) */
    uint64_t *leaf_index;           /* challenges: position folded from the path indices */
    uint32_t *index;                /* challenges * levels, leaf upward */
    fr_t *sib;                      /* challenges * siblings, level by level */
    struct porep_path *paths;       /* challenges: views of index / sib */
    void *arena;
};
/* Bytes of one bincode FallbackPoStSectorProof of config c: 120 + C x |MerkleProof|
 * (docs/formats.md; C = c->challenges for WindowPoSt, c->sectors x c->challenges = 66 for
 * WinningPoSt). */
size_t fil_post_sector_proof_size(const struct post_config *c);

/* Parse one blob for config c (its tree shape; challenges = c->challenges for WindowPoSt,
 * c->sectors * c->challenges for WinningPoSt). sector_index only names the sector in
 * messages. The whole input must be consumed. *out is zeroed on failure. */
int fil_post_sector_proof_parse(struct fil_post_sector_proof *out, const struct post_config *c,
                                const void *data, size_t len, unsigned sector_index,
                                struct cuzk_error *err);
void fil_post_sector_proof_free(struct fil_post_sector_proof *p);

/* Circuit sector j of p (views into p): WindowPoSt j = 0 (all challenges); WinningPoSt
 * j < c->sectors (challenge j alone, as the 66-sector unrolling does). */
int fil_post_sector_fill(struct post_sector *out, const struct post_config *c,
                         const struct fil_post_sector_proof *p, unsigned j, struct cuzk_error *err);

/* A whole partition's witness from n parsed sector proofs, in the order received:
 * WindowPoSt 1 <= n <= c->sectors (the last sector repeated as padding), WinningPoSt n = 1
 * (unrolled into c->sectors circuit sectors). comm_r / leaf_index are the public-input
 * arguments of post_public_inputs (leaf indices taken from the paths). Views into proofs:
 * keep them alive while w is used. */
struct fil_post_partition {
    struct post_witness w;
    struct post_sector *sectors;    /* c->sectors */
    fr_t *comm_r;                   /* c->sectors */
    uint64_t *leaf_index;           /* c->sectors * c->challenges */
    unsigned real;                  /* n */
};
int fil_post_partition_build(struct fil_post_partition *out, const struct post_config *c,
                             const struct fil_post_sector_proof *proofs, size_t n,
                             struct cuzk_error *err);
void fil_post_partition_free(struct fil_post_partition *p);

/* The native check of one sector proof before synthesis (what filecoin-proofs' vanilla verify
 * checks, so a bad sector fails in milliseconds, not as an unsatisfied circuit or a proof that
 * does not verify): the challenged leaf positions (folded from the path indices) are the ones
 * fil_post_sector_challenges derives from (randomness, sector_id, sector_index); each
 * inclusion path, hashed from its leaf, reaches comm_r_last and its stored root is comm_r_last;
 * comm_r = Poseidon(comm_c, comm_r_last). pos names the sector in messages:
 * CUZK_E_FORMAT "FallbackPoStSectorProof (sector 3, id 7): challenge 4 (leaf 51):
 * inclusion_proofs[4]: the leaf and path do not reach comm_r_last" on the first failure. */
int fil_post_sector_proof_check(const struct fil_post_proof *p, const struct fil_post_sector_proof *sp,
                                const uint8_t randomness[32], uint64_t sector_index, unsigned pos,
                                struct cuzk_error *err);
/* A request's n parsed sector proofs of partition k: WindowPoSt 1..S sectors with strictly
 * ascending ids (the order the verifier sorts them in), sector i challenged with sector index
 * k * S + i; WinningPoSt exactly one (k = 0). Every sector is checked as above, in parallel
 * on pool (NULL: this thread); the first failing sector in request order is reported. */
int fil_post_request_check(const struct fil_post_proof *p, const struct fil_post_sector_proof *sp, size_t n,
                           const uint8_t randomness[32], unsigned k, struct pool *pool, struct cuzk_error *err);
/* The public inputs (ONE excluded: fil_post_num_inputs(p) - 1 values) of partition k of a
 * request, from the (sector_id, comm_r) list the request carries (each FallbackPoStSectorProof's
 * own, as upstream's pub_sectors) and the randomness alone, never from a witness: per circuit
 * sector its comm_r and challenged leaves, WindowPoSt padded by repeating the last sector,
 * WinningPoSt's one sector unrolled into 66 with challenge indices 0..65. */
int fil_post_request_inputs(fr_t *out, const struct fil_post_proof *p, const uint8_t randomness[32],
                            const uint64_t *sector_ids, const fr_t *comm_r, size_t n, unsigned k,
                            struct cuzk_error *err);
/* The witness vectors (cuzk_malloc'd, ONE first in inputs) of a request's n parsed sector
 * proofs: fil_post_partition_build, then post_witness_values across pool (NULL: this
 * thread). No native check here. */
int fil_post_witness_values(fr_t **inputs, fr_t **aux, uint32_t *n_inputs, uint32_t *n_aux,
                            const struct post_config *c, const struct fil_post_sector_proof *sp, size_t n,
                            struct pool *pool, struct cuzk_error *err);

/* ------------------------------------------------------------- SnapDeals -- */

/* One storage_proofs_update PartitionProof (vanilla.rs): comm_c, apex_leafs, then per
 * challenge proof_r_old (tree R), proof_d_new (tree D, SHA-256, arity 2, L levels),
 * proof_r_new (tree R). Montgomery Fr; arrays in the arena. */
struct fil_snap_partition_proof {
    fr_t comm_c;
    unsigned apex_leaves, challenges;       /* A, K */
    unsigned r_levels, r_siblings, d_levels;        /* tree-R path shape; L */
    fr_t *apex;                     /* A */
    fr_t *root_r_old, *root_r_new, *root_d, *leaf_r_new;        /* K each */
    uint64_t *node;                 /* K: challenged node, from proof_d_new's indices */
    uint32_t *idx_r_old, *idx_r_new, *idx_d;        /* K * r_levels, K * r_levels, K * L */
    fr_t *sib_r_old, *sib_r_new, *sib_d;            /* K * r_siblings, .., K * L */
    struct snap_challenge *ch;      /* K: the circuit's view (leaf_r_old, leaf_d_new, paths) */
    void *arena;
};
/* Parse partition `partition`'s blob (only names it in messages) for config c. */
int fil_snap_partition_proof_parse(struct fil_snap_partition_proof *out, const struct snap_config *c,
                                   const void *data, size_t len, unsigned partition,
                                   struct cuzk_error *err);
void fil_snap_partition_proof_free(struct fil_snap_partition_proof *p);

/* The snap witness of partition k with update parameter h and the public commitments
 * (views into p): comm_c, roots of challenge 0, apex leaves, the partition path (tree-D
 * levels L-p .. L-1 of challenge 0; every challenge must carry the same, as upstream asserts:
 * CUZK_E_FORMAT naming the challenge), the challenges. */
int fil_snap_witness_fill(struct snap_witness *w, const struct snap_config *c,
                          const struct fil_snap_partition_proof *p, unsigned k, unsigned h,
                          const fr_t *comm_r_old, const fr_t *comm_d_new, const fr_t *comm_r_new,
                          struct cuzk_error *err);

/* Partition k's witness vectors (cuzk_malloc'd, ONE first in inputs): fil_snap_witness_fill
 * then snap_witness_values across pool (NULL: this thread alone). No native check here. */
int fil_snap_witness_values(fr_t **inputs, fr_t **aux, uint32_t *n_inputs, uint32_t *n_aux,
                            const struct snap_config *c, const struct fil_snap_partition_proof *p,
                            unsigned k, unsigned h, const fr_t *comm_r_old, const fr_t *comm_d_new,
                            const fr_t *comm_r_new, struct pool *pool, struct cuzk_error *err);

/* Registered update proofs (go-state-types abi RegisteredUpdateProof = filecoin-proofs-api
 * RegisteredUpdateProof, ApiVersion 1.1.0): 0..4 = StackedDrg{2KiB,8MiB,512MiB,32GiB,64GiB}V1.
 * CUZK_E_INVALID_ARG naming the known ids otherwise. name may be NULL. */
int fil_update_proof(uint64_t id, uint64_t *sector_size, const char **name, struct cuzk_error *err);

/* A request's 32-byte commitment (comm_r_old, comm_r_new, comm_d_new as Curio sends them):
 * exactly 32 bytes, a canonical Fr (little-endian), else CUZK_E_INVALID_ARG naming `field`. */
int fil_snap_commitment(fr_t *out, const uint8_t *b, size_t len, const char *field,
                        struct cuzk_error *err);

/* The native check of partition k before synthesis (what a vanilla verifier checks, so a bad
 * partition fails in milliseconds rather than as an unsatisfied circuit or a bad proof):
 * the challenged nodes (tree-D path indices) are snap_challenges(comm_r_new, k) and both tree-R
 * paths carry the same positions; each tree-R path of both replicas reaches its root and the
 * roots are challenge 0's (comm_r_last); comm_r_old / comm_r_new = Poseidon(comm_c, root);
 * leaf_r_new = leaf_r_old + leaf_d_new * rho(node >> (L - h)); each tree-D path reaches its
 * apex leaf, the apex tree and the partition path reach comm_d_new, and the whole tree-D path
 * reaches comm_d_new. CUZK_E_FORMAT "PartitionProof (partition k): challenge i (node n):
 * <field>: <what>" on the first failure. */
int fil_snap_partition_check(const struct snap_config *c, const struct fil_snap_partition_proof *p,
                             unsigned k, unsigned h, const fr_t *comm_r_old, const fr_t *comm_d_new,
                             const fr_t *comm_r_new, struct cuzk_error *err);

#endif
