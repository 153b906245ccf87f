/* porep.h: the Filecoin StackedDrg PoRep circuit of one partition (rust-fil-proofs 19.1
 * storage-proofs-porep stacked/circuit), synthesized through the gadgets of gadgets.h in any
 * gcs mode: shape (into a g16_builder), witness values, or counting. See docs/circuits.md. */
#ifndef CUZK_POREP_H
#define CUZK_POREP_H

#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/gadgets.h"
#include "cuzk/util.h"

#define POREP_DRG_PARENTS 6
#define POREP_EXP_PARENTS 8
#define POREP_MAX_LAYERS 11
#define POREP_MAX_LEVELS 32
#define POREP_MAX_CHALLENGES 32

/* Per sector size: graph and tree geometry and partition layout. */
struct porep_config {
    uint64_t sector_size;       /* bytes */
    unsigned nodes_log2;        /* nodes = sector_size / 32 */
    unsigned layers;            /* 2 or 11 */
    unsigned challenges;        /* per partition: 2 or 18 */
    unsigned partitions;        /* interactive PoRep */
    unsigned tree_d_depth;      /* binary SHA-256 tree */
    /* Trees R and C: base levels of arity 8, then optional sub and top levels. */
    unsigned base_arity, base_levels, sub_arity, top_arity;   /* 0 = absent */
};
/* 2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB; CUZK_E_UNSUPPORTED for any other size. */
int porep_config_for_size(struct porep_config *c, uint64_t sector_size, struct cuzk_error *err);
/* Parse "2KiB", "8MiB", "512MiB", "32GiB", "64GiB" (or plain bytes). */
int porep_parse_sector_size(uint64_t *out, const char *s, struct cuzk_error *err);

/* Witness of one partition (all values Montgomery Fr; the circuit's view of C1). A path has
 * one entry per level, leaf upward: index (position among siblings) and arity-1 siblings;
 * levels use arity 2 for tree D and base/sub/top arities for trees R and C. */
struct porep_path {
    const uint32_t *index;      /* levels */
    const fr_t *siblings;       /* concatenated, level by level */
};
struct porep_column {
    const fr_t *rows;           /* layers values */
    struct porep_path path;     /* tree C */
};
struct porep_challenge {
    uint64_t node;              /* the challenge */
    fr_t data_leaf;
    struct porep_path comm_d_path, comm_r_last_path, comm_c_path;
    struct porep_column drg[POREP_DRG_PARENTS], exp[POREP_EXP_PARENTS];
};
struct porep_witness {
    fr_t replica_id, comm_d, comm_r, comm_r_last, comm_c;
    const struct porep_challenge *ch;   /* c->challenges entries */
};

/* Synthesize one partition. w == NULL: the blank circuit (values zero; for shape/counting).
 * Errors are left in cs (gcs_status). */
void porep_synthesize(struct gcs *cs, const struct porep_config *c, const struct porep_witness *w);

/* Where a partition's variables lie in witness mode. The header (replica_id, comm_d, comm_r,
 * comm_r_last, comm_c and comm_r's Poseidon check) comes first; then challenge i occupies
 * aux [head_aux + i * ch_aux, + ch_aux) and inputs [head_inputs + i * ch_inputs, + ch_inputs)
 * - every challenge is the same sub-circuit, whose size depends only on the config. Totals
 * count ONE among the inputs; constraints exclude the per-input rows (as gcs counts). */
struct porep_layout {
    uint32_t n_aux, n_inputs;
    uint64_t n_constraints;
    uint32_t head_aux, head_inputs, ch_aux, ch_inputs;
    uint64_t head_constraints, ch_constraints;
    unsigned challenges;
};
/* Counted (header + one blank challenge, ~0.1 s at 32 GiB) on first use per sector size and
 * cached for the process; thread-safe. */
int porep_layout_get(struct porep_layout *out, const struct porep_config *c, struct cuzk_error *err);

/* Witness values of one partition, challenges synthesized in parallel on pool (NULL: in the
 * calling thread, one challenge after another), each into its own slice of the caller's
 * vectors: inputs[layout.n_inputs] (ONE first) and aux[layout.n_aux]. Byte-identical to
 * porep_synthesize in GCS_VALUES mode. Counting keeps using porep_synthesize. */
int porep_witness_values(fr_t *inputs, fr_t *aux, const struct porep_config *c,
                         const struct porep_witness *w, struct pool *pool, struct cuzk_error *err);

/* Parallel shape: the blank partition recorded into b (a fresh builder, or the circuit is
 * appended after what b holds). The header goes into b in this thread (the prefix), then the
 * challenges are segments of g16_builder_segments across pool (NULL: in order, here), each
 * referencing only the header's variables and its own. Byte-identical to
 * porep_synthesize(NULL) in one GCS_SHAPE context on b (tests compare the two). On error b
 * holds part of the circuit (free it). */
int porep_shape(struct g16_builder *b, const struct porep_config *c, struct pool *pool, struct cuzk_error *err);

/* Building blocks, exposed for tests (upstream gadget tests pin their counts). */
/* PoR inclusion with an allocated leaf and private allocated root (enforce_inclusion). */
void porep_por(struct gcs *cs, const unsigned *arity, unsigned levels, const gnum *leaf,
               const gnum *root, const struct porep_path *path, bool sha_tree);
/* create_label_circuit: replica_id 256 bits, 37 parents of 256 bits, layer, node bits. */
gnum porep_create_label(struct gcs *cs, const gbool replica_id[256], const gbool *const parents[37],
                        uint32_t layer, const gbool node_le[64]);
/* pick(cond, a, b) = cond ? a : b with (b - a) * cond = b - c. */
gnum g_pick(struct gcs *cs, gbool cond, const gnum *a, const gnum *b);
/* Insertion of cur among arity-1 siblings at the index given by bits (arity 2, 4, 8). */
void g_insert(struct gcs *cs, gnum *out, const gnum *cur, const gbool *bits, const gnum *sib,
              unsigned arity);

#endif
