/* snap_gen.h: internally consistent SnapDeals vanilla proofs (bincode PartitionProofs, exactly
 * the format fil_snap_partition_proof_parse reads) and their three commitments, for any
 * SnapDeals sector size including 32 and 64 GiB, in well under a second: what
 * `cuzk-bench gen-vanilla snap` writes and the tests prove. Not a sealer: the replicas are
 * synthetic (every leaf value is a function of its rho bucket, see docs/decisions.md,
 * "SnapDeals vanilla generator"), but every check a verifier makes holds: each tree-R path of
 * both replicas reaches its comm_r_last, comm_r_old/new = Poseidon(comm_c, comm_r_last), the
 * tree-D paths reach the apex leaves and comm_d_new, new = old + data * rho at every challenged
 * node, and the challenged nodes are those comm_r_new derives. Part of libcuzk_fil.a. */
#ifndef CUZK_SNAP_GEN_H
#define CUZK_SNAP_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/snap.h"

struct fil_snap_gen {
    struct snap_config cfg;
    unsigned h;                         /* the update parameter the data was encoded with */
    uint8_t comm_r_old[32], comm_r_new[32], comm_d_new[32];   /* as sent: 32 bytes LE */
    unsigned partitions;                /* cfg.partitions */
    uint8_t *blob[16];                  /* partition k's bincode PartitionProof (cuzk_malloc) */
    size_t len[16];
};

/* Generate every partition of a sector of sector_size (a SnapDeals size of snap_config_for_size,
 * the test sizes included) encoded with h = snap_h_default; seed picks the replica. */
int fil_snap_generate(struct fil_snap_gen *out, uint64_t sector_size, uint64_t seed,
                      struct cuzk_error *err);
void fil_snap_gen_free(struct fil_snap_gen *g);

/* Bytes of one bincode PartitionProof for config c (48 + 32 A + K (2 |R| + |D|), reference
 * post-snap-circuits.md 5.5). */
size_t fil_snap_partition_proof_size(const struct snap_config *c);

#endif
