/* snap.h: the Filecoin SnapDeals circuit of one partition: storage-proofs-update 19.1
 * EmptySectorUpdateCircuit (the "update" variant that StackedDrg*V1 registered update proofs
 * use; not the single-partition Poseidon variant), synthesized through the gadgets of
 * gadgets.h in any gcs mode: shape, witness values, or counting. See docs/circuits.md
 * ("SnapDeals"). */
#ifndef CUZK_SNAP_H
#define CUZK_SNAP_H

#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/gadgets.h"

#define SNAP_HS 6                   /* h-select bits (always 6) */
#define SNAP_MAX_CHALLENGES 86
#define SNAP_MAX_APEX 128
#define SNAP_MAX_LEVELS 32

/* Per sector size (constants.rs, PublicParams::from_sector_size). */
struct snap_config {
    uint64_t sector_size;           /* bytes */
    unsigned nodes_log2;            /* L: challenge bits */
    unsigned partitions, partition_bits;    /* P, p = log2 P */
    unsigned challenges;            /* K per partition */
    unsigned apex_leaves, apex_bits;        /* A, a = log2 A */
    unsigned hs[SNAP_HS];           /* allowed h values; h_default = hs[3] */
    unsigned rand_bits;             /* R = L - p: generated bits per challenge */
    unsigned per_digest, digests;   /* Q = 254 / R challenges per digest; G = ceil(K / Q) */
    unsigned tree_d_levels;         /* D = L - p - a: tree-D levels from a leaf to the apex row */
    /* Tree R (old and new): base levels of arity 8, then optional sub and top levels. */
    unsigned base_arity, base_levels, sub_arity, top_arity;   /* 0 = absent */
    unsigned r_levels, r_siblings;  /* levels and siblings of one tree-R path */
};
/* The published sizes 2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB, and upstream's test sizes 1, 4,
 * 8, 16, 32 KiB and 16 MiB; CUZK_E_UNSUPPORTED for any other size. */
int snap_config_for_size(struct snap_config *c, uint64_t sector_size, struct cuzk_error *err);
/* h_default: hs[3] (10 for 8 MiB and up, 1 for the KiB sizes). */
unsigned snap_h_default(const struct snap_config *c);
/* The packed public input k | (h_select << p), h_select = 2^(first index of h in hs). */
int snap_k_and_h_select(fr_t *out, const struct snap_config *c, unsigned k, unsigned h,
                        struct cuzk_error *err);

/* Witness of one partition (Montgomery Fr; the circuit's view of the vanilla PartitionProof).
 * Tree-R paths list their siblings level by level, leaf upward (7 per arity-8 level, 3 per
 * arity-4, 1 per arity-2; c->r_siblings in all). Position bits are never taken from the
 * witness: the circuit derives them from comm_r_new and k. */
struct snap_challenge {
    fr_t leaf_r_old, leaf_d_new;
    const fr_t *path_r_old, *path_r_new;    /* c->r_siblings each */
    const fr_t *path_d;             /* c->tree_d_levels siblings: tree-D levels 0 .. D-1 */
};
struct snap_witness {
    fr_t k_and_h_select, comm_r_old, comm_d_new, comm_r_new;   /* the public inputs */
    fr_t comm_c, root_r_old, root_r_new;
    const fr_t *apex_leaves;        /* c->apex_leaves: partition k's row of tree D */
    const fr_t *partition_path;     /* c->partition_bits siblings: tree-D levels L-p .. L-1 */
    const struct snap_challenge *ch;        /* c->challenges entries */
};

/* Synthesize one partition. w == NULL: the blank circuit (values zero; for shape/counting).
 * In values mode a bad k_and_h_select (k >= P, h_select without exactly one bit, stray high
 * bits) fails the context with CUZK_E_INVALID_ARG. Errors are left in cs (gcs_status). */
void snap_synthesize(struct gcs *cs, const struct snap_config *c, const struct snap_witness *w);

/* Parallel witness (the prover's path): the header (steps 1-11) in the caller's thread, then
 * the challenges across pool (NULL: in order, in this thread), each writing its own slice of
 * aux, numbered exactly as the sequential snap_synthesize values run numbers them (tests
 * compare the two). Every challenge allocates ch_aux variables and no inputs. */
struct snap_layout { uint32_t n_inputs, n_aux, head_aux, ch_aux; };
int snap_layout_get(struct snap_layout *out, const struct snap_config *c, struct cuzk_error *err);
struct pool;
/* inputs: n_inputs values (ONE first), aux: n_aux values, both the caller's. */
int snap_witness_values(fr_t *inputs, fr_t *aux, const struct snap_config *c, const struct snap_witness *w,
                        struct pool *pool, struct cuzk_error *err);

/* Parallel shape: the blank partition recorded into b (a fresh builder, or the circuit is
 * appended after what b holds): the header into b in this thread (the prefix), then the
 * challenges as segments of g16_builder_segments across pool (NULL: in order, here), each
 * referencing only the header's variables and its own aux. Byte-identical to
 * snap_synthesize(NULL) in one GCS_SHAPE context on b (tests compare the two). On error b
 * holds part of the circuit (free it). */
int snap_shape(struct g16_builder *b, const struct snap_config *c, struct pool *pool, struct cuzk_error *err);

/* ------------------------------------------------------------ native side -- */

/* Poseidon arity 2 under the Custom(Arbitrary(1)) tag 2^40 (POSEIDON_CONSTANTS_GEN_RANDOMNESS):
 * phi = H(comm_d_new, comm_r_old), rho = H(phi, high), digest = H(comm_r_new, index). */
int snap_hash_gen(fr_t *out, const fr_t *a, const fr_t *b, struct cuzk_error *err);
/* Those constants: the shared arity-2 tables with the tag replaced (*out is a shallow copy;
 * nothing to free). */
int snap_poseidon_gen_consts(struct poseidon_consts *out, struct cuzk_error *err);
/* rho of a node: H(phi, node >> (L - h)). */
int snap_rho(fr_t *out, const struct snap_config *c, const fr_t *phi, uint64_t node, unsigned h,
             struct cuzk_error *err);
/* The verifier's public inputs of partition k (compound.rs generate_public_inputs, ONE not
 * included): k_and_h_select, comm_r_old, comm_d_new, comm_r_new. */
int snap_public_inputs(fr_t out[4], const struct snap_config *c, unsigned k, unsigned h,
                       const fr_t *comm_r_old, const fr_t *comm_d_new, const fr_t *comm_r_new,
                       struct cuzk_error *err);
/* The K challenges (node indices) of partition k (challenges.rs; what the circuit derives). */
int snap_challenges(uint64_t *out, const struct snap_config *c, const fr_t *comm_r_new, unsigned k,
                    struct cuzk_error *err);

#endif
