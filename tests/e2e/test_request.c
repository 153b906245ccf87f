/* test_request.c: the SubmitProofRequest <-> engine_request mapping (request.h) that both the
 * gRPC service and the job journal use. The oracle is protobuf-c's own descriptor of the
 * message: every field it lists is set to a value no other field has, and the message must
 * come back byte for byte after message -> engine_request -> journal bytes -> message ->
 * engine_request -> message. A field the mapping drops or swaps (in either direction) fails,
 * naming the field; a field type this test does not know fails too, so a new field cannot
 * go untested. */
#include "test.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(request_needs_daemon_build) { test_skip("built with CUZK_CLIENT=0: no protobuf-c"); }
#else
#include "cuzk/request.h"
#include "cuzk/v1/proving.pb-c.h"

#define NV 3

/* storage for the bytes fields' values, which the message points into */
static uint8_t bytes_buf[64][40];
static ProtobufCBinaryData list_buf[NV];
static char id_buf[32];

/* Every field of m set to a value derived from its number, so no two fields are equal. */
static void fill_all(Cuzk__V1__SubmitProofRequest *m)
{
    const ProtobufCMessageDescriptor *d = &cuzk__v1__submit_proof_request__descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        void *at = (char *)m + f->offset;
        uint32_t id = f->id;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            ASSERT_MSG(f->type == PROTOBUF_C_TYPE_BYTES, "field %s: repeated %d: teach this test",
                       f->name, (int)f->type);
            for (size_t k = 0; k < NV; k++) {
                uint8_t *b = bytes_buf[(id + k) % 64];
                for (size_t j = 0; j < sizeof bytes_buf[0]; j++) b[j] = (uint8_t)(id * 7 + k * 31 + j);
                list_buf[k] = (ProtobufCBinaryData){10 + k + id % 7, b};
            }
            *(size_t *)((char *)m + f->quantifier_offset) = NV;
            *(ProtobufCBinaryData **)at = list_buf;
            continue;
        }
        ASSERT_MSG(f->label == PROTOBUF_C_LABEL_NONE, "field %s: label %d: teach this test",
                   f->name, (int)f->label);
        switch (f->type) {
        case PROTOBUF_C_TYPE_STRING:
            snprintf(id_buf, sizeof id_buf, "req-%u", id);
            *(char **)at = id_buf;
            break;
        case PROTOBUF_C_TYPE_ENUM: *(int *)at = (int)(1000 + id); break;
        case PROTOBUF_C_TYPE_UINT32: *(uint32_t *)at = 2000 + id; break;
        case PROTOBUF_C_TYPE_UINT64: *(uint64_t *)at = 0x100000000ull * id + 3000 + id; break;
        case PROTOBUF_C_TYPE_BOOL: *(protobuf_c_boolean *)at = 1; break;
        case PROTOBUF_C_TYPE_BYTES: {
            uint8_t *b = bytes_buf[id % 64];
            for (size_t j = 0; j < sizeof bytes_buf[0]; j++) b[j] = (uint8_t)(id * 13 + j);
            *(ProtobufCBinaryData *)at = (ProtobufCBinaryData){1 + id % 32, b};
            break;
        }
        default:
            test_fail_at(__FILE__, __LINE__, "field %s: type %d: teach this test", f->name,
                         (int)f->type);
        }
    }
}

/* The field of a and b that differs, by name (NULL when they pack alike field by field). */
static const char *first_difference(const Cuzk__V1__SubmitProofRequest *a,
                                    const Cuzk__V1__SubmitProofRequest *b)
{
    const ProtobufCMessageDescriptor *d = &cuzk__v1__submit_proof_request__descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        /* a message holding only this field of each, packed, compares the field */
        Cuzk__V1__SubmitProofRequest ca = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
        Cuzk__V1__SubmitProofRequest cb = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
        size_t sz = f->type == PROTOBUF_C_TYPE_STRING || f->label == PROTOBUF_C_LABEL_REPEATED
                        ? sizeof(void *) : f->type == PROTOBUF_C_TYPE_BYTES
                        ? sizeof(ProtobufCBinaryData) : f->type == PROTOBUF_C_TYPE_UINT64
                        ? 8 : f->type == PROTOBUF_C_TYPE_BOOL ? sizeof(protobuf_c_boolean) : 4;
        memcpy((char *)&ca + f->offset, (const char *)a + f->offset, sz);
        memcpy((char *)&cb + f->offset, (const char *)b + f->offset, sz);
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            memcpy((char *)&ca + f->quantifier_offset, (const char *)a + f->quantifier_offset, sizeof(size_t));
            memcpy((char *)&cb + f->quantifier_offset, (const char *)b + f->quantifier_offset, sizeof(size_t));
        }
        uint8_t pa[512], pb[512];
        size_t na = cuzk__v1__submit_proof_request__get_packed_size(&ca);
        size_t nb = cuzk__v1__submit_proof_request__get_packed_size(&cb);
        ASSERT(na <= sizeof pa && nb <= sizeof pb);
        cuzk__v1__submit_proof_request__pack(&ca, pa);
        cuzk__v1__submit_proof_request__pack(&cb, pb);
        if (na != nb || memcmp(pa, pb, na)) return f->name;
    }
    return NULL;
}

/* message -> engine_request -> bytes, as the journal stores it */
static void pack_via_engine(const Cuzk__V1__SubmitProofRequest *m, uint8_t **out, size_t *n)
{
    struct cuzk_error err;
    cuzk_error_clear(&err);
    struct srv_request sr;
    ASSERT_EQ_INT(srv_request_of(&sr, m, &err), CUZK_OK);
    ASSERT(!sr.req.resumed);
    ASSERT_EQ_INT(srv_request_pack(&sr.req, out, n, &err), CUZK_OK);
    srv_request_release(&sr);
    ASSERT(sr.vanilla_proofs == NULL);
}

#define EXPECT_BYTES(p, n, b)                                                                 \
    do {                                                                                      \
        ASSERT_EQ_U64((n), (b).len);                                                          \
        ASSERT_MEM_EQ((p), (b).data, (b).len);                                                \
    } while (0)

/* Each message field is where engine.h says it lives (checked against the message, not the
 * mapping): the shared ones at the top, the rest in their kind's struct. */
static void expect_homes(const struct engine_request *q, const Cuzk__V1__SubmitProofRequest *m)
{
    ASSERT_EQ_U64(q->sector_size, m->sector_size);
    ASSERT_EQ_U64(q->registered_proof, m->registered_proof);
    EXPECT_BYTES(q->vanilla_proof, q->vanilla_proof_len, m->vanilla_proof);
    ASSERT_EQ_U64(q->porep.sector_number, m->sector_number);
    ASSERT_EQ_U64(q->porep.miner_id, m->miner_id);
    ASSERT_EQ_INT(q->porep.aggregate, !!m->aggregate);
    EXPECT_BYTES(q->post.randomness, q->post.randomness_len, m->randomness);
    ASSERT_EQ_U64(q->post.partition_index, m->partition_index);
    EXPECT_BYTES(q->snap.comm_r_old, q->snap.comm_r_old_len, m->comm_r_old);
    EXPECT_BYTES(q->snap.comm_r_new, q->snap.comm_r_new_len, m->comm_r_new);
    EXPECT_BYTES(q->snap.comm_d_new, q->snap.comm_d_new_len, m->comm_d_new);
    ASSERT_EQ_U64(q->synthetic.constraints, m->synthetic_constraints);
    ASSERT_EQ_U64(q->synthetic.partitions, m->synthetic_partitions);
}

TEST(request_every_field_round_trips)
{
    Cuzk__V1__SubmitProofRequest m = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    fill_all(&m);
    size_t n0 = cuzk__v1__submit_proof_request__get_packed_size(&m);
    uint8_t *wire = malloc(n0);
    ASSERT(wire);
    cuzk__v1__submit_proof_request__pack(&m, wire);

    /* what rpc.c decodes, mapped and journaled */
    Cuzk__V1__SubmitProofRequest *q = cuzk__v1__submit_proof_request__unpack(NULL, n0, wire);
    ASSERT(q);
    uint8_t *j1 = NULL;
    size_t n1 = 0;
    pack_via_engine(q, &j1, &n1);
    /* what the replay decodes from the journal, mapped and journaled again */
    Cuzk__V1__SubmitProofRequest *r = cuzk__v1__submit_proof_request__unpack(NULL, n1, j1);
    ASSERT_MSG(r, "the journal bytes do not decode");
    const char *diff = first_difference(&m, r);
    ASSERT_MSG(!diff, "field %s differs after message -> engine_request -> journal -> message", diff);
    uint8_t *j2 = NULL;
    size_t n2 = 0;
    pack_via_engine(r, &j2, &n2);
    ASSERT_EQ_U64(n1, n0);
    ASSERT_MEM_EQ(j1, wire, n0);
    ASSERT_EQ_U64(n2, n0);
    ASSERT_MEM_EQ(j2, wire, n0);

    /* and the engine sees the values (spot checks against the message, not the mapping) */
    struct cuzk_error err;
    cuzk_error_clear(&err);
    struct srv_request sr;
    ASSERT_EQ_INT(srv_request_of(&sr, r, &err), CUZK_OK);
    ASSERT_STR_EQ(sr.req.request_id, m.request_id);
    ASSERT_EQ_INT(sr.req.kind, (int)m.proof_kind);
    ASSERT_EQ_INT(sr.req.priority, (int)m.priority);
    ASSERT_EQ_U64(sr.req.n_vanilla_proofs, NV);
    for (size_t k = 0; k < NV; k++) {
        ASSERT_EQ_U64(sr.req.vanilla_proofs_len[k], m.vanilla_proofs[k].len);
        ASSERT_MEM_EQ(sr.req.vanilla_proofs[k], m.vanilla_proofs[k].data, m.vanilla_proofs[k].len);
    }
    expect_homes(&sr.req, &m);
    srv_request_release(&sr);

    cuzk__v1__submit_proof_request__free_unpacked(r, NULL);
    cuzk__v1__submit_proof_request__free_unpacked(q, NULL);
    free(j1);
    free(j2);
    free(wire);
}

/* The mapping does not look at proof_kind: for every kind the engine knows, a message carrying
 * every other kind's fields too (a SNAP request with PoSt's randomness, a WINDOW_POST with
 * Snap's commitments) keeps them in their kinds' structs and packs back byte for byte, so the
 * journal stores what was sent; the kind's parse just does not read them. */
TEST(request_other_kinds_fields_are_carried)
{
    static const int kinds[] = {ENGINE_KIND_POREP, ENGINE_KIND_SNAP, ENGINE_KIND_WINDOW_POST,
                                ENGINE_KIND_WINNING_POST, ENGINE_KIND_SYNTHETIC,
                                ENGINE_KIND_NI_POREP};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        Cuzk__V1__SubmitProofRequest m = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
        fill_all(&m);
        m.proof_kind = (Cuzk__V1__ProofKind)kinds[i];
        size_t n0 = cuzk__v1__submit_proof_request__get_packed_size(&m);
        uint8_t *wire = malloc(n0);
        ASSERT(wire);
        cuzk__v1__submit_proof_request__pack(&m, wire);
        struct cuzk_error err;
        cuzk_error_clear(&err);
        struct srv_request sr;
        ASSERT_EQ_INT(srv_request_of(&sr, &m, &err), CUZK_OK);
        ASSERT_EQ_INT(sr.req.kind, kinds[i]);
        expect_homes(&sr.req, &m);
        srv_request_release(&sr);
        uint8_t *j = NULL;
        size_t n = 0;
        pack_via_engine(&m, &j, &n);
        ASSERT_EQ_U64(n, n0);
        ASSERT_MEM_EQ(j, wire, n0);
        free(j);
        free(wire);
    }
}

/* An empty message (every field at its default) maps to an empty request and packs to nothing,
 * as protobuf-c packs it. */
TEST(request_empty_round_trips)
{
    Cuzk__V1__SubmitProofRequest m = CUZK__V1__SUBMIT_PROOF_REQUEST__INIT;
    ASSERT_EQ_U64(cuzk__v1__submit_proof_request__get_packed_size(&m), 0);
    uint8_t *j = NULL;
    size_t n = 99;
    pack_via_engine(&m, &j, &n);
    ASSERT_EQ_U64(n, 0);
    free(j);
    struct engine_request none = {0};
    struct cuzk_error err;
    cuzk_error_clear(&err);
    ASSERT_EQ_INT(srv_request_pack(&none, &j, &n, &err), CUZK_OK);   /* NULL id packs as "" */
    ASSERT_EQ_U64(n, 0);
    free(j);
}
#endif
