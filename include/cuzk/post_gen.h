/* post_gen.h: internally consistent WindowPoSt / WinningPoSt vanilla proofs (bincode
 * FallbackPoStSectorProofs, exactly the format fil_post_sector_proof_parse reads) for any
 * registered PoSt proof and size, 32 and 64 GiB included, in seconds even for a full 2349-sector
 * partition: what `cuzk-bench gen-vanilla window-post|winning-post` writes and the tests prove.
 * Not a prover of real sectors: each sector's tree R is a sparse tree (stree.h: pseudo-random
 * off the challenged paths) and comm_c is pseudo-random, but everything a verifier checks
 * holds: each path reaches comm_r_last, comm_r = Poseidon(comm_c, comm_r_last), and the
 * challenged leaves are the ones (randomness, sector id, sector index) derive
 * (fil_post_sector_challenges); WinningPoSt proves the sector fil_winning_post_sector_challenge
 * selects from the proving set. Part of libcuzk_fil.a. */
#ifndef CUZK_POST_GEN_H
#define CUZK_POST_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/filecoin.h"
#include "cuzk/post.h"
#include "cuzk/vanilla.h"   /* fil_post_sector_proof_size: the format's size, beside its parser */

/* Write one FallbackPoStSectorProof {sector_id, comm_r, vanilla_proof: {sectors: [SectorProof
 * {inclusion_proofs: incl[0..n_incl), comm_c, comm_r_last}]}} into out (cap bytes; exactly
 * fil_post_sector_proof_size(c) are written). Domain values are written as given (32 bytes
 * little-endian), so a test can write non-canonical ones too. Each MerkleProof must have the
 * tree-R shape of c (its split base / sub / top levels and arities): CUZK_E_INVALID_ARG naming
 * the inclusion proof otherwise. */
int fil_post_sector_proof_write(uint8_t *out, size_t cap, const struct post_config *c, uint64_t sector_id,
                                const uint8_t comm_r[32], const struct fil_merkle_proof *incl, unsigned n_incl,
                                const uint8_t comm_c[32], const uint8_t comm_r_last[32], struct cuzk_error *err);

struct fil_post_gen {
    const struct fil_post_proof *proof;
    struct post_config cfg;
    size_t n;                       /* blobs: WindowPoSt the sectors of the partition; Winning 1 */
    uint8_t **blob;                 /* n bincode FallbackPoStSectorProofs (cuzk_malloc) */
    size_t len;                     /* bytes of each */
    uint64_t *sector_id;            /* n, strictly ascending */
    uint8_t (*comm_r)[32];          /* n, as in the blobs */
    uint64_t set_len, selected;     /* WinningPoSt: proving set size and the challenged position */
};

/* Generate the vanilla proofs of one request: WindowPoSt partition `partition` of n_sectors
 * (1 <= n_sectors <= the proof's sector count; sector ids partition * S + i + 1, challenged
 * with sector index partition * S + i), or the WinningPoSt proof over a proving set of
 * n_sectors sectors (ids 1..n_sectors; the one fil_winning_post_sector_challenge picks for
 * (randomness, prover_id(miner_id)) is proved). randomness must be a canonical Fr. seed picks
 * the trees. Sectors are generated in parallel on pool (NULL: this thread). */
int fil_post_generate(struct fil_post_gen *out, const struct fil_post_proof *p, const uint8_t randomness[32],
                      uint64_t miner_id, size_t n_sectors, unsigned partition, uint64_t seed,
                      struct pool *pool, struct cuzk_error *err);
void fil_post_gen_free(struct fil_post_gen *g);

#endif
