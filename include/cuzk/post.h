/* post.h: the Filecoin FallbackPoSt circuit (rust-fil-proofs 19.1 storage-proofs-post
 * fallback/circuit.rs), shared by WindowPoSt and WinningPoSt, synthesized through the gadgets
 * of gadgets.h in any gcs mode: shape (into a g16_builder), witness values, or counting.
 * See docs/circuits.md ("FallbackPoSt"). */
#ifndef CUZK_POST_H
#define CUZK_POST_H

#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/gadgets.h"
#include "cuzk/porep.h"

enum post_kind { POST_WINDOW = 0, POST_WINNING = 1 };

/* One circuit (a WindowPoSt partition, or the WinningPoSt proof): `sectors` circuit sectors
 * of `challenges` inclusion proofs each, in tree R of the sector size's shape (the PoRep
 * tree-R shape: base levels of arity 8, then optional sub and top levels). */
struct post_config {
    enum post_kind kind;
    uint64_t sector_size;       /* bytes */
    unsigned sectors;           /* S: Window 2 / 2349 (32 GiB) / 2300 (64 GiB); Winning 66 */
    unsigned challenges;        /* C per sector: Window 10; Winning 1 */
    unsigned nodes_log2;        /* leaves of tree R = sector_size / 32 */
    unsigned base_arity, base_levels, sub_arity, top_arity;   /* 0 = absent */
};
/* The registered config of kind at 2 KiB, 8 MiB, 512 MiB, 32 GiB or 64 GiB (identical for
 * the V1 and V1_2 WindowPoSt types); CUZK_E_UNSUPPORTED for any other size or kind. */
int post_config_for_size(struct post_config *c, enum post_kind kind, uint64_t sector_size,
                         struct cuzk_error *err);
/* "window-post" / "winning-post" (also "window" / "winning"). */
int post_parse_kind(enum post_kind *out, const char *s, struct cuzk_error *err);
const char *post_kind_name(enum post_kind k);
/* Path levels (base + sub + top) and their arities, leaf upward. */
unsigned post_tree_arities(const struct post_config *c, unsigned arity[POREP_MAX_LEVELS]);

/* Witness of one circuit sector (values Montgomery Fr). paths[i] has one entry per level,
 * leaf upward: index (position among the arity inputs of that level, < arity) and arity-1
 * siblings (struct porep_path). Window padding (repeat the last sector) and the Winning
 * unrolling (66 one-challenge sectors sharing comm_r, comm_c, comm_r_last) are the caller's:
 * this is the circuit's view. */
struct post_sector {
    fr_t comm_r, comm_c, comm_r_last;
    const fr_t *leaves;                 /* challenges entries */
    const struct porep_path *paths;     /* challenges entries */
};
struct post_witness {
    const struct post_sector *sectors;  /* c->sectors entries */
};

/* Synthesize the circuit. w == NULL: the blank circuit (values zero; for shape/counting).
 * Per sector: comm_r_last, comm_c, comm_r (aux), comm_r inputized, Poseidon-2(comm_c,
 * comm_r_last), comm_r * ONE = hash, then each challenge's inclusion proof (leaf, per level
 * index bits, siblings, insert, Poseidon; packed index bits as one input; root * ONE =
 * comm_r_last). A witness with a missing array or an index out of range is refused with
 * CUZK_E_INVALID_ARG before anything is synthesized. Errors are left in cs (gcs_status). */
void post_synthesize(struct gcs *cs, const struct post_config *c, const struct post_witness *w);

/* Parallel witness (the prover's path): every circuit sector allocates the same numbers of
 * variables (no value-dependent branches), so sector s owns aux [s * sector_aux, ...) and
 * inputs [1 + s * sector_inputs, ...) and the sectors are synthesized across pool (NULL: in
 * order, in this thread), numbered exactly as the sequential post_synthesize values run
 * numbers them (tests compare the two). inputs: n_inputs values (ONE first), aux: n_aux,
 * both the caller's. */
struct post_layout { uint32_t n_inputs, n_aux, sector_inputs, sector_aux; };
int post_layout_get(struct post_layout *out, const struct post_config *c, struct cuzk_error *err);
struct pool;
int post_witness_values(fr_t *inputs, fr_t *aux, const struct post_config *c, const struct post_witness *w,
                        struct pool *pool, struct cuzk_error *err);

/* Parallel shape: the blank circuit recorded into b (a fresh builder, or the circuit is
 * appended after what b holds), the sectors as segments of g16_builder_segments across pool
 * (NULL: in order, in this thread). The result is byte-identical to post_synthesize(NULL)
 * in one GCS_SHAPE context on b (tests compare the two). On error b holds part of the
 * circuit (free it). */
int post_shape(struct g16_builder *b, const struct post_config *c, struct pool *pool, struct cuzk_error *err);

/* Counts of the circuit (constraints without the prover's input rows; inputs with ONE). */
struct post_counts {
    uint64_t n_constraints;
    uint32_t n_inputs, n_aux;
};
int post_counts(struct post_counts *out, const struct post_config *c, struct cuzk_error *err);

/* The public input vector the circuit allocates (out[0] = ONE), in upstream's order: for
 * each sector s, comm_r[s], then the challenged leaf index of each of its challenges
 * (leaf[s * C + i], < 2^nodes_log2) as an Fr. out has 1 + S * (1 + C) entries. */
int post_public_inputs(fr_t *out, const struct post_config *c, const fr_t *comm_r,
                       const uint64_t *leaf, struct cuzk_error *err);

#endif
