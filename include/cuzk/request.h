/* request.h: the one mapping between the wire's cuzk.v1.SubmitProofRequest (protobuf-c) and
 * the engine's struct engine_request, both ways. The gRPC service (src/server/rpc.c) submits
 * what a client sent through srv_request_of; the daemon's job journal
 * (cmd/cuzk-daemon/durable.c) stores a request as the message srv_request_pack makes and
 * replays it through srv_request_of again. A field added to either side is mapped here only,
 * and tests/e2e/test_request.c fails if a message field is lost on the way. */
#ifndef CUZK_REQUEST_H
#define CUZK_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/engine.h"
#include "cuzk/err.h"

/* the generated type (build/gen/cuzk/v1/proving.pb-c.h names the struct by this tag) */
struct Cuzk__V1__SubmitProofRequest;

/* An engine_request mapped from a decoded message: req's pointers point into that message
 * (which must outlive it); the vanilla-proof pointer and length lists are allocated here. */
struct srv_request {
    struct engine_request req;
    const uint8_t **vanilla_proofs;
    size_t *vanilla_proofs_len;
};

/* Map q onto out->req (every message field, each to its one place in engine_request whatever
 * q's proof_kind, so no field is lost on the way to the journal; req.resumed is false: it is
 * this process's state, never on the wire). CUZK_E_NOMEM when the proof lists cannot be
 * allocated; out is then empty and needs no release. */
int srv_request_of(struct srv_request *out, const struct Cuzk__V1__SubmitProofRequest *q,
                   struct cuzk_error *err);
/* Free what srv_request_of allocated (not the message); out is left empty. */
void srv_request_release(struct srv_request *r);

/* The SubmitProofRequest wire bytes of r (its request_id, kind and priority as given;
 * resumed is not encoded): *out is malloc'd, *n its length. CUZK_E_NOMEM, naming the request,
 * when memory runs out. */
int srv_request_pack(const struct engine_request *r, uint8_t **out, size_t *n,
                     struct cuzk_error *err);

#endif
