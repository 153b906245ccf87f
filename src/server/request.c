/* request.c: SubmitProofRequest <-> struct engine_request (request.h). Each field is named
 * once per direction, side by side in the order of the .proto, so a new one is seen missing
 * here. */
#include <stdlib.h>
#include <string.h>

#include "cuzk/request.h"
#include "cuzk/v1/proving.pb-c.h"

int srv_request_of(struct srv_request *out, const Cuzk__V1__SubmitProofRequest *q,
                   struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    size_t nv = q->n_vanilla_proofs;
    if (nv) {
        out->vanilla_proofs = calloc(nv, sizeof *out->vanilla_proofs);
        out->vanilla_proofs_len = calloc(nv, sizeof *out->vanilla_proofs_len);
        if (!out->vanilla_proofs || !out->vanilla_proofs_len) {
            srv_request_release(out);
            return cuzk_fail(err, CUZK_E_NOMEM, "out of memory mapping %zu vanilla proofs", nv);
        }
        for (size_t i = 0; i < nv; i++) {
            out->vanilla_proofs[i] = q->vanilla_proofs[i].data;
            out->vanilla_proofs_len[i] = q->vanilla_proofs[i].len;
        }
    }
    /* every field to its one home, whatever proof_kind says (engine.h): no kind's field is
     * dropped, so srv_request_pack gives the message back as sent */
    out->req = (struct engine_request){
        .request_id = q->request_id, .kind = (int)q->proof_kind, .priority = (int)q->priority,
        .sector_size = q->sector_size, .registered_proof = q->registered_proof,
        .vanilla_proof = q->vanilla_proof.data, .vanilla_proof_len = q->vanilla_proof.len,
        .n_vanilla_proofs = nv, .vanilla_proofs = out->vanilla_proofs,
        .vanilla_proofs_len = out->vanilla_proofs_len,
        .porep.sector_number = q->sector_number, .porep.miner_id = q->miner_id,
        .post.randomness = q->randomness.data, .post.randomness_len = q->randomness.len,
        .post.partition_index = q->partition_index,
        .snap.comm_r_old = q->comm_r_old.data, .snap.comm_r_old_len = q->comm_r_old.len,
        .snap.comm_r_new = q->comm_r_new.data, .snap.comm_r_new_len = q->comm_r_new.len,
        .snap.comm_d_new = q->comm_d_new.data, .snap.comm_d_new_len = q->comm_d_new.len,
        .synthetic.constraints = q->synthetic_constraints,
        .synthetic.partitions = q->synthetic_partitions,
        .porep.aggregate = q->aggregate,
    };
    return CUZK_OK;
}

void srv_request_release(struct srv_request *r)
{
    free(r->vanilla_proofs);
    free(r->vanilla_proofs_len);
    memset(r, 0, sizeof *r);
}

static ProtobufCBinaryData bin(const uint8_t *p, size_t n)
{
    return (ProtobufCBinaryData){n, (uint8_t *)p};
}

int srv_request_pack(const struct engine_request *r, uint8_t **out, size_t *n,
                     struct cuzk_error *err)
{
    *out = NULL;
    *n = 0;
    Cuzk__V1__SubmitProofRequest q = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    ProtobufCBinaryData *vp = NULL;
    if (r->n_vanilla_proofs) {
        vp = calloc(r->n_vanilla_proofs, sizeof *vp);
        if (!vp)
            return cuzk_fail(err, CUZK_E_NOMEM, "out of memory encoding request %s (%zu vanilla "
                             "proofs)", r->request_id ? r->request_id : "", r->n_vanilla_proofs);
        for (size_t i = 0; i < r->n_vanilla_proofs; i++)
            vp[i] = bin(r->vanilla_proofs[i], r->vanilla_proofs_len[i]);
    }
    /* protobuf-c's INIT has "" for strings; a NULL id packs as that "" */
    if (r->request_id) q.request_id = (char *)r->request_id;
    q.proof_kind = (Cuzk__V1__ProofKind)r->kind;
    q.priority = (Cuzk__V1__Priority)r->priority;
    q.sector_size = r->sector_size;
    q.registered_proof = r->registered_proof;
    q.sector_number = r->porep.sector_number;
    q.miner_id = r->porep.miner_id;
    q.vanilla_proof = bin(r->vanilla_proof, r->vanilla_proof_len);
    q.n_vanilla_proofs = r->n_vanilla_proofs;
    q.vanilla_proofs = vp;
    q.randomness = bin(r->post.randomness, r->post.randomness_len);
    q.partition_index = r->post.partition_index;
    q.comm_r_old = bin(r->snap.comm_r_old, r->snap.comm_r_old_len);
    q.comm_r_new = bin(r->snap.comm_r_new, r->snap.comm_r_new_len);
    q.comm_d_new = bin(r->snap.comm_d_new, r->snap.comm_d_new_len);
    q.synthetic_constraints = r->synthetic.constraints;
    q.synthetic_partitions = r->synthetic.partitions;
    q.aggregate = r->porep.aggregate;
    size_t sz = cuzk__v1__submit_proof_request__get_packed_size(&q);
    *out = malloc(sz ? sz : 1);
    if (!*out) {
        free(vp);
        return cuzk_fail(err, CUZK_E_NOMEM, "out of memory encoding request %s (%zu bytes)",
                         r->request_id ? r->request_id : "", sz);
    }
    *n = cuzk__v1__submit_proof_request__pack(&q, *out);
    free(vp);
    return CUZK_OK;
}
