/* fil_circuit.h: the Filecoin circuits as one table: PoRep (one partition), WindowPoSt (one
 * partition), WinningPoSt and SnapDeals (one partition), each at 2 KiB, 8 MiB, 512 MiB, 32 GiB
 * and 64 GiB. What every user of "a circuit of kind K at size S" needs without knowing the
 * kind: its configuration, the blank circuit in any gcs mode (counting, shape), its v28
 * parameter file stem and its engine circuit id ("porep-32g", "wpost-2k", "winning-32g",
 * "snap-8m"). Users: cuzk-params shape / setup, cuzk-bench prove, the engine's kinds.
 * Part of libcuzk_fil.a. */
#ifndef CUZK_FIL_CIRCUIT_H
#define CUZK_FIL_CIRCUIT_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/porep.h"
#include "cuzk/post.h"
#include "cuzk/snap.h"

enum fil_circuit_kind {
    FIL_CIRCUIT_POREP = 0,
    FIL_CIRCUIT_WINDOW_POST = 1,
    FIL_CIRCUIT_WINNING_POST = 2,
    FIL_CIRCUIT_SNAP = 3,
};
#define FIL_CIRCUIT_NKINDS 4

struct fil_circuit {
    enum fil_circuit_kind kind;
    uint64_t sector_size;
    union {
        struct porep_config porep;
        struct post_config post;
        struct snap_config snap;
    } cfg;
};

/* "porep", "window-post", "winning-post", "snap" (the CLIs' --kind values). */
int fil_circuit_parse_kind(enum fil_circuit_kind *out, const char *name, struct cuzk_error *err);
const char *fil_circuit_kind_name(enum fil_circuit_kind k);
/* The circuit of kind at a published sector size; CUZK_E_UNSUPPORTED naming the sizes that
 * exist otherwise. */
int fil_circuit_init(struct fil_circuit *c, enum fil_circuit_kind kind, uint64_t sector_size,
                     struct cuzk_error *err);
/* The blank circuit (no witness) into cs, in whatever mode cs was made. */
void fil_circuit_synthesize_blank(struct gcs *cs, const struct fil_circuit *c);
/* Its counts by a counting pass: rows = constraints + inputs (the prover's matrix rows). */
int fil_circuit_count(const struct fil_circuit *c, uint64_t *rows, uint32_t *n_inputs,
                      uint32_t *n_aux, struct cuzk_error *err);
/* Its shape (the R1CS matrices as the prover reads them), synthesized in parallel on pool
 * (NULL: in this thread): the kind's repeated sub-circuits (PoSt sectors, PoRep and SnapDeals
 * challenges) are segments of g16_builder_segments. Byte-identical to a GCS_SHAPE context
 * on one builder through fil_circuit_synthesize_blank, which stays the tests' oracle. */
int fil_circuit_shape(struct g16_shape *out, const struct fil_circuit *c, struct pool *pool,
                      struct cuzk_error *err);
/* The same into a caller's builder (fresh; count-only ones too), not finished. */
int fil_circuit_shape_into(struct g16_builder *b, const struct fil_circuit *c, struct pool *pool,
                           struct cuzk_error *err);
/* The v28 parameter file stem ("v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-
 * 8-8-0-0377de…"; add ".params" / ".vk"). */
int fil_circuit_param_stem(char *out, size_t out_len, const struct fil_circuit *c,
                           struct cuzk_error *err);
/* The engine's circuit id: "<prefix>-<size>", prefixes porep, wpost, winning, snap; sizes 2k,
 * 8m, 512m, 32g, 64g. */
void fil_circuit_id(char *out, size_t out_len, const struct fil_circuit *c);
/* The inverse, for the circuit ids of one kind: CUZK_E_NOT_FOUND when id is not of that
 * kind's prefix, CUZK_E_INVALID_ARG naming the sizes when the prefix is but the size is not. */
int fil_circuit_parse_id(struct fil_circuit *c, enum fil_circuit_kind kind, const char *id,
                         struct cuzk_error *err);

#endif
