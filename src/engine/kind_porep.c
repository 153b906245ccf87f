/* kind_porep.c: the POREP_SEAL_COMMIT kind of the engine's registry, everything the engine
 * does specially for PoRep: the C1 wrapper parsed once per job into partitions, per-partition
 * witness in the synthesis workers, the public inputs recomputed from the C1's commitments that
 * every partition proof is verified against, and its SRS entries ("porep-2k" ... "porep-64g"):
 * the v28 .params by its upstream name, the shape from the .shape next to it or built once
 * (and saved there). The circuit itself is src/circuits/porep.c; the C1 format, witness values
 * and public inputs are src/filecoin. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/aggregate.h"
#include "cuzk/fil_circuit.h"
#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/log.h"
#include "cuzk/porep.h"
#include "cuzk/util.h"
#include "engine_internal.h"

#define POREP_MAX_JOB_PARTITIONS 128


static void porep_free_input(void *input)
{
    struct fil_c1 *c = input;
    if (!c) return;
    fil_c1_free(c);
    free(c);
}

static bool all_zero(const uint8_t b[32])
{
    uint8_t acc = 0;
    for (int i = 0; i < 32; i++) acc |= b[i];
    return acc == 0;
}

static int porep_parse(struct job *j, const struct engine_request *r, struct cuzk_error *err)
{
    if (!r->vanilla_proof_len)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "POREP_SEAL_COMMIT needs vanilla_proof: the C1 output in Curio's wrapper "
                         "{\"SectorNum\",\"Phase1Out\",\"SectorSize\"} (got 0 bytes)");
    struct fil_c1 *c = calloc(1, sizeof *c);
    if (!c) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    struct cuzk_error perr = {0};
    int rc = fil_c1_parse_wrapper(c, r->vanilla_proof, r->vanilla_proof_len, &perr);
    if (rc) {
        free(c);
        /* every parser failure is a malformed request, whatever its code (an unknown
         * registered proof is CUZK_E_UNSUPPORTED there, not "kind not built in" here) */
        return cuzk_fail(err, rc == CUZK_E_NOMEM ? CUZK_E_NOMEM : CUZK_E_INVALID_ARG,
                         "vanilla_proof (C1 output): %s", perr.msg);
    }
    /* The request names the sector it proves; a C1 of another sector (a client's mix-up) would
     * otherwise prove, for the C1's sector. */
    if (r->porep.sector_number != c->sector_num) {
        cuzk_fail(err, CUZK_E_INVALID_ARG, "sector_number is %" PRIu64 " but the C1 output "
                  "(vanilla_proof) is for SectorNum %" PRIu64 ": send this sector's C1, or its "
                  "number", r->porep.sector_number, c->sector_num);
        porep_free_input(c);
        return CUZK_E_INVALID_ARG;
    }
    /* What upstream rejects besides the shape (cuzk-reference.md 3.1): all-zero values. */
    const char *zero = all_zero(c->comm_d) ? "comm_d" : all_zero(c->comm_r) ? "comm_r"
                     : all_zero(c->seed) ? "seed" : NULL;
    struct fil_circuit circ;
    struct cuzk_error cerr = {0};
    bool sized = !fil_circuit_init(&circ, FIL_CIRCUIT_POREP, c->proof->sector_size, &cerr);
    if (zero || !sized) {
        if (zero) cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proof (C1 output): Phase1Out.%s: is all "
                            "zero", zero);
        else cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proof (C1 output): no PoRep circuit for "
                       "sector size %" PRIu64, c->proof->sector_size);
        porep_free_input(c);
        return CUZK_E_INVALID_ARG;
    }
    /* rust-fil-proofs' C2 ends with verify_seal, which recomputes replica_id from the prover
     * id, sector number, ticket, comm_d and porep_id; the circuit only sees replica_id, so a
     * C1 whose ticket (or miner, or sector) was changed would otherwise still prove. */
    uint8_t prover[32], porep_id[32], want[32];
    fil_prover_id(prover, r->porep.miner_id);
    fil_porep_id(porep_id, c->proof);
    fil_replica_id(want, prover, c->sector_num, c->ticket, c->comm_d, porep_id);
    if (memcmp(want, c->replica_id, 32)) {
        char got_hex[65], want_hex[65];
        for (int i = 0; i < 32; i++) {
            snprintf(got_hex + 2 * i, 3, "%02x", c->replica_id[i]);
            snprintf(want_hex + 2 * i, 3, "%02x", want[i]);
        }
        cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proof (C1 output): Phase1Out.replica_id is %s, "
                  "but miner_id %" PRIu64 ", SectorNum %" PRIu64 ", ticket, comm_d and porep_id "
                  "give %s: the C1 does not belong to this sector (ticket, miner or sector number "
                  "changed)", got_hex, r->porep.miner_id, c->sector_num, want_hex);
        porep_free_input(c);
        return CUZK_E_INVALID_ARG;
    }
    /* the parser holds partitions to the registered proof's count: 1, 10, or NI-PoRep's 13 /
     * 126 (above the engine's general ENGINE_MAX_PARTITIONS, which bounds SYNTHETIC jobs) */
    if (c->partitions == 0 || c->partitions > POREP_MAX_JOB_PARTITIONS) {
        cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proof (C1 output): %u partitions (1..%d)",
                  c->partitions, POREP_MAX_JOB_PARTITIONS);
        porep_free_input(c);
        return CUZK_E_INVALID_ARG;
    }
    /* Every partition's vanilla proofs must be those of its derived challenges (interactive:
     * seed; synthetic: the seed's selection from the comm_r set; NI: comm_r), checked for all
     * partitions here, before any is proved: a C1 made for other challenges is a malformed
     * request, not a proving failure found at partition k after k proofs. */
    if ((rc = fil_c1_check_challenges(c, &perr))) {
        cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proof (C1 output): %s", perr.msg);
        porep_free_input(c);
        return CUZK_E_INVALID_ARG;
    }
    j->parts = calloc(c->partitions, sizeof *j->parts);
    if (!j->parts) {
        porep_free_input(c);
        return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    }
    j->n_parts = c->partitions;
    j->input = c;
    fil_circuit_id(j->circuit_id, sizeof j->circuit_id, &circ);
    return CUZK_OK;
}

static int porep_witness(const struct job *j, uint32_t p, struct part *pt,
                         const struct srs_entry *s, struct cuzk_error *err)
{
    const struct fil_c1 *c = j->input;
    const struct g16_shape *shape = &s->shape;
    uint32_t n_in = 0, n_aux = 0;
    int rc = fil_porep_witness_values(&pt->inputs, &pt->aux, &n_in, &n_aux, c, p, err);
    if (rc) return rc;
    if (n_in != shape->n_inputs || n_aux != shape->n_aux)
        return cuzk_fail(err, CUZK_E_INTERNAL, "witness has %u inputs and %u aux, the SRS's shape "
                         "%u and %u", n_in, n_aux, shape->n_inputs, shape->n_aux);
    /* Verification uses inputs recomputed from (replica_id, comm_d, comm_r, seed) and the
     * graph, never the witness's own copies: a witness that drifted from the request would
     * otherwise verify against itself. */
    size_t n_pub = fil_porep_num_inputs(c->proof);
    if (n_pub + 1 != shape->n_inputs)
        return cuzk_fail(err, CUZK_E_INTERNAL, "%s has %zu public inputs, the shape %u",
                         c->proof->name, n_pub, shape->n_inputs - 1);
    pt->pub = cuzk_malloc(n_pub * sizeof *pt->pub);
    if (!pt->pub) return cuzk_fail(err, CUZK_E_NOMEM, "public inputs");
    pt->n_pub = n_pub;
    return fil_porep_public_inputs(pt->pub, c->proof, c->replica_id, c->comm_d, c->comm_r, c->seed,
                                   p, err);
}

/* ------------------------------------------------------------------- SRS -- */

/* "porep-2k" ... "porep-64g"; arg = the sector size */
static int porep_srs_match(const char *id, uint64_t *arg, struct cuzk_error *err)
{
    struct fil_circuit c;
    int rc = fil_circuit_parse_id(&c, FIL_CIRCUIT_POREP, id, err);
    if (!rc) *arg = c.sector_size;
    return rc;
}

static int porep_srs_load(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    struct fil_circuit c;
    int rc = fil_circuit_init(&c, FIL_CIRCUIT_POREP, x->arg, err);
    return rc ? rc : srs_load_circuit(e, x, &c, err);
}

const struct kind_def kind_porep = {
    .kind = ENGINE_KIND_POREP, .name = "porep-c2", .label = "porep_c2", .default_priority = 2,
    .parse = porep_parse, .witness = porep_witness, .free_input = porep_free_input,
    .circuit_ids = "porep-2k, porep-8m, porep-512m, porep-32g, porep-64g",
    .srs_match = porep_srs_match, .srs_load = porep_srs_load,
};

/* NI_POREP_SEAL_COMMIT (101): an NI-PoRep C1 proved as POREP_SEAL_COMMIT is (same parser,
 * checks, witness and SRS entries), refused unless its registered proof is NI-PoRep, and with
 * `aggregate` set the job keeps each partition's recomputed public inputs and the transcript
 * include (SHA-256 of comm_r) for the SnarkPack aggregate (aggregate.c). */
static int ni_porep_parse(struct job *j, const struct engine_request *r, struct cuzk_error *err)
{
    /* on failure the engine discards the job with what parse left in it (input, parts) */
    int rc = porep_parse(j, r, err);
    if (rc) return rc;
    const struct fil_c1 *c = j->input;
    if (c->proof->kind != FIL_POREP_NI)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "vanilla_proof (C1 output): Phase1Out."
                         "registered_proof is %s, but NI_POREP_SEAL_COMMIT needs an NI-PoRep C1 "
                         "(a ..._V1_2_Feat_NonInteractivePoRep registered proof); send it as "
                         "POREP_SEAL_COMMIT", c->proof->name);
    if (!r->porep.aggregate) return CUZK_OK;
    j->aggregate = true;
    agg_seal_transcript_include(j->agg_include, (const uint8_t (*)[32])c->comm_r, NULL, 1);
    j->agg_n_pub = fil_porep_num_inputs(c->proof);
    j->agg_pub = calloc((size_t)j->n_parts * j->agg_n_pub, sizeof *j->agg_pub);
    return j->agg_pub ? CUZK_OK : cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
}

const struct kind_def kind_ni_porep = {
    .kind = ENGINE_KIND_NI_POREP, .name = "ni-porep-c2", .label = "ni_porep_c2",
    .default_priority = 2, .parse = ni_porep_parse, .witness = porep_witness,
    .free_input = porep_free_input,
    /* its circuits are PoRep's: the SRS entries porep-2k ... belong to kind_porep */
};
