/* kind_snap.c: the SNAP_DEALS_UPDATE kind of the engine's registry: a SnapDeals sector update
 * (storage-proofs-update EmptySectorUpdate, registered update proofs StackedDrg*V1) proved
 * as its P partitions (1 / 4 / 16 by size) through the partition pipeline, the proofs
 * concatenated in partition order (16 x 192 = 3,072 bytes for 32 GiB). Per job, on the RPC
 * thread: the registered proof and sector size, the three commitments (32 bytes, canonical
 * Fr) and every partition's bincode PartitionProof (a read of 9 MB at 32 GiB, 0.1-0.2 s on
 * this 2-core machine; the errors name the partition, field and byte offset: a malformed
 * request). Per partition, in
 * a synthesis worker: the native check (fil_snap_partition_check: paths, roots, commitments,
 * encoding, challenges; a failure FAILS the job naming partition and challenge), the witness
 * (challenges in parallel), and the public inputs recomputed from the request alone
 * (snap_public_inputs) that the self-check verifies the proof against. SRS ids "snap-2k" ...
 * "snap-64g" (fil_circuit.h). See docs/decisions.md ("SnapDeals in the engine"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/fil_circuit.h"
#include "cuzk/util.h"
#include "cuzk/vanilla.h"
#include "engine_internal.h"

struct snap_input {
    struct snap_config cfg;
    unsigned h;
    fr_t comm_r_old, comm_r_new, comm_d_new;
    unsigned n;                                 /* partitions parsed */
    struct fil_snap_partition_proof part[16];
};

static void snap_free_input(void *input)
{
    struct snap_input *x = input;
    if (!x) return;
    for (unsigned k = 0; k < x->n; k++) fil_snap_partition_proof_free(&x->part[k]);
    free(x);
}

static int snap_parse(struct job *j, const struct engine_request *r, struct cuzk_error *err)
{
    uint64_t size;
    const char *name;
    int rc = fil_update_proof(r->registered_proof, &size, &name, err);
    if (rc) return CUZK_E_INVALID_ARG;
    if (r->sector_size && r->sector_size != size)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "sector_size %" PRIu64 " does not match registered_proof "
                         "%" PRIu64 " (%s: %" PRIu64 " bytes)", r->sector_size, r->registered_proof, name, size);
    struct fil_circuit circ;
    if (fil_circuit_init(&circ, FIL_CIRCUIT_SNAP, size, err)) return CUZK_E_INVALID_ARG;
    struct snap_input *x = calloc(1, sizeof *x);
    if (!x) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    x->cfg = circ.cfg.snap;
    x->h = snap_h_default(&x->cfg);
    const struct engine_snap_req *q = &r->snap;
    rc = fil_snap_commitment(&x->comm_r_old, q->comm_r_old, q->comm_r_old_len, "comm_r_old", err);
    if (!rc) rc = fil_snap_commitment(&x->comm_r_new, q->comm_r_new, q->comm_r_new_len, "comm_r_new", err);
    if (!rc) rc = fil_snap_commitment(&x->comm_d_new, q->comm_d_new, q->comm_d_new_len, "comm_d_new", err);
    unsigned P = x->cfg.partitions;
    if (!rc && (r->n_vanilla_proofs != P || P > 16))
        rc = cuzk_fail(err, CUZK_E_INVALID_ARG, "%s needs %u vanilla_proofs (one bincode PartitionProof per "
                       "partition, in partition order), got %zu", name, P, r->n_vanilla_proofs);
    for (unsigned k = 0; k < P && !rc; k++) {
        struct cuzk_error perr = {0};
        rc = fil_snap_partition_proof_parse(&x->part[k], &x->cfg, r->vanilla_proofs[k], r->vanilla_proofs_len[k],
                                            k, &perr);
        if (rc) rc = cuzk_fail(err, rc == CUZK_E_NOMEM ? CUZK_E_NOMEM : CUZK_E_INVALID_ARG, "vanilla_proofs[%u]: %s",
                               k, perr.msg);
        else x->n = k + 1;
    }
    if (!rc && !(j->parts = calloc(P, sizeof *j->parts))) rc = cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    if (rc) {
        snap_free_input(x);
        /* every failure here is a malformed request (an unknown registered proof included) */
        return rc == CUZK_E_NOMEM ? rc : CUZK_E_INVALID_ARG;
    }
    j->n_parts = P;
    j->input = x;
    fil_circuit_id(j->circuit_id, sizeof j->circuit_id, &circ);
    return CUZK_OK;
}

static int snap_witness(const struct job *j, uint32_t p, struct part *pt, const struct srs_entry *s,
                        struct cuzk_error *err)
{
    const struct snap_input *x = j->input;
    const struct fil_snap_partition_proof *pp = &x->part[p];
    /* what a vanilla verifier checks, in tens of milliseconds, before a witness of millions of
     * values is built from a partition that could only give an unsatisfied circuit */
    int rc = fil_snap_partition_check(&x->cfg, pp, p, x->h, &x->comm_r_old, &x->comm_d_new, &x->comm_r_new, err);
    if (rc) return rc;
    uint32_t n_in = 0, n_aux = 0;
    rc = fil_snap_witness_values(&pt->inputs, &pt->aux, &n_in, &n_aux, &x->cfg, pp, p, x->h, &x->comm_r_old,
                                 &x->comm_d_new, &x->comm_r_new, pool_default(), err);
    if (rc) return rc;
    if (n_in != s->shape.n_inputs || n_aux != s->shape.n_aux)
        return cuzk_fail(err, CUZK_E_INTERNAL, "witness has %u inputs and %u aux, the SRS's shape %u and %u",
                         n_in, n_aux, s->shape.n_inputs, s->shape.n_aux);
    /* verification uses inputs recomputed from the request (k, h, the commitments), never the
     * witness's own copies */
    if (s->shape.n_inputs != 5)
        return cuzk_fail(err, CUZK_E_INTERNAL, "the SnapDeals shape has %u inputs (5 expected)", s->shape.n_inputs);
    pt->pub = cuzk_malloc(4 * sizeof *pt->pub);
    if (!pt->pub) return cuzk_fail(err, CUZK_E_NOMEM, "public inputs");
    pt->n_pub = 4;
    return snap_public_inputs(pt->pub, &x->cfg, p, x->h, &x->comm_r_old, &x->comm_d_new, &x->comm_r_new, err);
}

/* ------------------------------------------------------------------- SRS -- */

/* "snap-2k" ... "snap-64g"; arg = the sector size */
static int snap_srs_match(const char *id, uint64_t *arg, struct cuzk_error *err)
{
    struct fil_circuit c;
    int rc = fil_circuit_parse_id(&c, FIL_CIRCUIT_SNAP, id, err);
    if (!rc) *arg = c.sector_size;
    return rc;
}

static int snap_srs_load(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    struct fil_circuit c;
    int rc = fil_circuit_init(&c, FIL_CIRCUIT_SNAP, x->arg, err);
    return rc ? rc : srs_load_circuit(e, x, &c, err);
}

const struct kind_def kind_snap = {
    .kind = ENGINE_KIND_SNAP, .name = "snap-update", .label = "snap_update", .default_priority = 2,
    .parse = snap_parse, .witness = snap_witness, .free_input = snap_free_input,
    .circuit_ids = "snap-2k, snap-8m, snap-512m, snap-32g, snap-64g",
    .srs_match = snap_srs_match, .srs_load = snap_srs_load,
};
