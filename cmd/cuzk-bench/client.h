/* client.h: a small cuzk.v1 gRPC client on grpc core (unary calls, protobuf-c messages), used
 * by the cuzk-bench daemon subcommands and the end-to-end tests. */
#ifndef CUZK_BENCH_CLIENT_H
#define CUZK_BENCH_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "cuzk/err.h"
#include "cuzk/v1/proving.pb-c.h"

#define CZ_METHOD(name) "/cuzk.v1.ProvingEngine/" name

struct cz_client;
/* addr: "unix:///path", "host:port" or "http://host:port". No I/O happens until the first
 * call; connection failures show up as UNAVAILABLE (14). */
int cz_connect(struct cz_client **out, const char *addr, struct cuzk_error *err);
/* A daemon behind TLS and/or a token ([daemon] tls_cert, auth_token_file): PEM files (NULL or
 * "" = not used). tls_ca alone = TLS; with tls_cert/tls_key = mutual TLS. server_name: the
 * name the server certificate must carry when the address does not (NULL = the address's
 * host). token / token_file: sent as "authorization: Bearer <token>" with every call. */
struct cz_opts {
    const char *tls_ca, *tls_cert, *tls_key, *server_name;
    const char *token, *token_file;
};
int cz_connect_opts(struct cz_client **out, const char *addr, const struct cz_opts *o,
                    struct cuzk_error *err);
void cz_close(struct cz_client *c);

/* One unary call with raw bytes. Returns the gRPC status code (0 = OK); details gets the
 * status message. *resp (malloc'd) and *resp_len hold the reply message when OK.
 * timeout_ms 0 = no deadline. */
int cz_call_raw(struct cz_client *c, const char *method, const void *req, size_t req_len,
                uint8_t **resp, size_t *resp_len, uint64_t timeout_ms, char *details, size_t cap);
/* The same with protobuf-c messages: *resp is unpacked with resp_desc (free it with
 * protobuf_c_message_free_unpacked). A reply that does not unpack gives status 13. */
int cz_call(struct cz_client *c, const char *method, const ProtobufCMessage *req,
            const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
            uint64_t timeout_ms, char *details, size_t cap);

/* One Prove call (submit and await in one RPC) of request q: the gRPC status; *out is the
 * unpacked reply (free it with protobuf_c_message_free_unpacked), NULL when the call failed. */
int cz_prove(struct cz_client *c, Cuzk__V1__SubmitProofRequest *q, Cuzk__V1__ProveResponse **out,
             uint64_t timeout_ms, char *details, size_t cap);

/* "OK", "INVALID_ARGUMENT", ... */
const char *cz_status_name(int code);

#endif
