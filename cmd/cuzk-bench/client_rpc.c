/* client_rpc.c: cuzk.v1 gRPC client core on grpc core: one channel per client (thread-safe),
 * one completion queue per call, protobuf-c messages. Compiled only with CUZK_CLIENT=1. */
#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif
#if CUZK_CLIENT
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include "client.h"

#define CLIENT_MAX_MESSAGE (1024 * 1024 * 1024)   /* the server enforces its own limit */

struct cz_client {
    grpc_channel *ch;
    char *auth;          /* "Bearer <token>" or NULL */
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void start(void) { grpc_init(); }

int cz_connect(struct cz_client **out, const char *addr, struct cuzk_error *err)
{
    return cz_connect_opts(out, addr, NULL, err);
}

/* A whole (PEM or token) file, NUL-terminated; NULL with err set when it cannot be read. */
static char *slurp(const char *path, struct cuzk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) { cuzk_fail(err, CUZK_E_IO, "cannot read %s: %s", path, strerror(errno)); return NULL; }
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!buf || !n) { free(buf); cuzk_fail(err, CUZK_E_IO, "%s is empty", path); return NULL; }
    buf[n] = 0;
    return buf;
}

static bool set(const char *s) { return s && s[0]; }

int cz_connect_opts(struct cz_client **out, const char *addr, const struct cz_opts *o,
                    struct cuzk_error *err)
{
    static const struct cz_opts none;
    if (!o) o = &none;
    pthread_once(&once, start);
    char target[1024];
    if (!strncmp(addr, "http://", 7)) addr += 7;
    if (strlen(addr) >= sizeof target) return cuzk_fail(err, CUZK_E_INVALID_ARG, "address too long");
    snprintf(target, sizeof target, "%s", addr);
    struct cz_client *c = calloc(1, sizeof *c);
    if (!c) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    if (set(o->token) || set(o->token_file)) {
        char *tok = set(o->token) ? strdup(o->token) : slurp(o->token_file, err);
        if (!tok) { free(c); return err ? err->code : CUZK_E_IO; }
        char *t = tok;   /* the token file's first line, trimmed */
        while (isspace((unsigned char)*t)) t++;
        size_t n = strcspn(t, "\r\n");
        while (n && isspace((unsigned char)t[n - 1])) n--;
        c->auth = malloc(n + 8);
        if (c->auth) snprintf(c->auth, n + 8, "Bearer %.*s", (int)n, t);
        free(tok);
        if (!c->auth) { free(c); return cuzk_fail(err, CUZK_E_NOMEM, "out of memory"); }
    }
    grpc_arg args[3];
    memset(args, 0, sizeof args);
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = CLIENT_MAX_MESSAGE;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = CLIENT_MAX_MESSAGE;
    grpc_channel_args ca = {2, args};
    if (set(o->server_name)) {
        args[2].type = GRPC_ARG_STRING;
        args[2].key = (char *)GRPC_SSL_TARGET_NAME_OVERRIDE_ARG;
        args[2].value.string = (char *)o->server_name;
        ca.num_args = 3;
    }
    grpc_channel_credentials *creds = NULL;
    if (set(o->tls_ca) || set(o->tls_cert)) {
        struct cuzk_error lerr;
        cuzk_error_clear(&lerr);
        char *root = set(o->tls_ca) ? slurp(o->tls_ca, &lerr) : NULL;
        char *cert = set(o->tls_cert) ? slurp(o->tls_cert, &lerr) : NULL;
        char *key = set(o->tls_key) ? slurp(o->tls_key, &lerr) : NULL;
        if (!lerr.code && !cert != !key)
            cuzk_fail(&lerr, CUZK_E_INVALID_ARG, "a client certificate needs its key (and the "
                      "key its certificate)");
        if (!lerr.code) {
            grpc_ssl_pem_key_cert_pair pair = {key, cert};
            creds = grpc_ssl_credentials_create(root, cert ? &pair : NULL, NULL, NULL);
            if (!creds) cuzk_fail(&lerr, CUZK_E_INVALID_ARG, "grpc refused the TLS files");
        }
        free(root); free(cert); free(key);
        if (!creds) {
            free(c->auth);
            free(c);
            return cuzk_fail(err, lerr.code, "%s", lerr.msg);
        }
    } else {
        creds = grpc_insecure_credentials_create();
    }
    c->ch = grpc_channel_create(target, creds, &ca);
    grpc_channel_credentials_release(creds);
    if (!c->ch) {
        free(c->auth);
        free(c);
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "cannot create a channel to %s", addr);
    }
    *out = c;
    return CUZK_OK;
}

void cz_close(struct cz_client *c)
{
    if (!c) return;
    grpc_channel_destroy(c->ch);
    free(c->auth);
    free(c);
}

int cz_call_raw(struct cz_client *c, const char *method, const void *req, size_t req_len,
                uint8_t **resp, size_t *resp_len, uint64_t timeout_ms, char *details, size_t cap)
{
    *resp = NULL;
    *resp_len = 0;
    if (cap) details[0] = 0;
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    gpr_timespec deadline = timeout_ms
        ? gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis((int64_t)timeout_ms, GPR_TIMESPAN))
        : gpr_inf_future(GPR_CLOCK_REALTIME);
    grpc_slice mslice = grpc_slice_from_copied_string(method);
    grpc_call *call = grpc_channel_create_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, mslice,
                                               NULL, deadline, NULL);
    grpc_slice_unref(mslice);
    grpc_slice body = grpc_slice_from_copied_buffer(req_len ? req : "", req_len);
    grpc_byte_buffer *send = grpc_raw_byte_buffer_create(&body, 1);
    grpc_slice_unref(body);
    grpc_byte_buffer *recv = NULL;
    grpc_metadata_array init_md, trail_md;
    grpc_metadata_array_init(&init_md);
    grpc_metadata_array_init(&trail_md);
    grpc_status_code st = GRPC_STATUS_UNKNOWN;
    grpc_slice st_details = grpc_empty_slice();
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    grpc_metadata md;
    memset(&md, 0, sizeof md);
    if (c->auth) {
        md.key = grpc_slice_from_static_string("authorization");
        md.value = grpc_slice_from_copied_string(c->auth);
        ops[0].data.send_initial_metadata.count = 1;
        ops[0].data.send_initial_metadata.metadata = &md;
    }
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &init_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trail_md;
    ops[5].data.recv_status_on_client.status = &st;
    ops[5].data.recv_status_on_client.status_details = &st_details;
    int tag = 1;
    grpc_call_error ce = grpc_call_start_batch(call, ops, 6, &tag, NULL);
    if (ce == GRPC_CALL_OK) {
        grpc_event ev;
        do ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        while (ev.type != GRPC_OP_COMPLETE);
    } else {
        st = GRPC_STATUS_INTERNAL;
        snprintf(details, cap, "grpc_call_start_batch failed (%d)", (int)ce);
    }
    if (ce == GRPC_CALL_OK && cap) {
        size_t n = GRPC_SLICE_LENGTH(st_details);
        if (n >= cap) n = cap - 1;
        memcpy(details, GRPC_SLICE_START_PTR(st_details), n);
        details[n] = 0;
    }
    if (st == GRPC_STATUS_OK && recv) {
        grpc_byte_buffer_reader rd;
        if (grpc_byte_buffer_reader_init(&rd, recv)) {
            grpc_slice all = grpc_byte_buffer_reader_readall(&rd);
            grpc_byte_buffer_reader_destroy(&rd);
            size_t n = GRPC_SLICE_LENGTH(all);
            *resp = malloc(n ? n : 1);
            if (*resp) { memcpy(*resp, GRPC_SLICE_START_PTR(all), n); *resp_len = n; }
            else { st = GRPC_STATUS_RESOURCE_EXHAUSTED; snprintf(details, cap, "out of memory"); }
            grpc_slice_unref(all);
        }
    } else if (st == GRPC_STATUS_OK) {
        st = GRPC_STATUS_INTERNAL;
        snprintf(details, cap, "reply had no message");
    }
    if (recv) grpc_byte_buffer_destroy(recv);
    grpc_byte_buffer_destroy(send);
    if (c->auth) grpc_slice_unref(md.value);
    grpc_slice_unref(st_details);
    grpc_metadata_array_destroy(&init_md);
    grpc_metadata_array_destroy(&trail_md);
    grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN) {}
    grpc_completion_queue_destroy(cq);
    return (int)st;
}

int cz_call(struct cz_client *c, const char *method, const ProtobufCMessage *req,
            const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
            uint64_t timeout_ms, char *details, size_t cap)
{
    *resp = NULL;
    size_t n = protobuf_c_message_get_packed_size(req);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) { snprintf(details, cap, "out of memory"); return GRPC_STATUS_RESOURCE_EXHAUSTED; }
    protobuf_c_message_pack(req, buf);
    uint8_t *out = NULL;
    size_t out_len = 0;
    int st = cz_call_raw(c, method, buf, n, &out, &out_len, timeout_ms, details, cap);
    free(buf);
    if (st == 0) {
        *resp = protobuf_c_message_unpack(resp_desc, NULL, out_len, out);
        if (!*resp) { st = GRPC_STATUS_INTERNAL; snprintf(details, cap, "reply does not decode"); }
    }
    free(out);
    return st;
}

int cz_prove(struct cz_client *c, Cuzk__V1__SubmitProofRequest *q, Cuzk__V1__ProveResponse **out,
             uint64_t timeout_ms, char *details, size_t cap)
{
    Cuzk__V1__ProveRequest pr = CUZK__V1__PROVE_REQUEST__INIT;
    pr.submit = q;
    ProtobufCMessage *m = NULL;
    int st = cz_call(c, CZ_METHOD("Prove"), &pr.base, &cuzk__v1__prove_response__descriptor, &m, timeout_ms,
                     details, cap);
    *out = (Cuzk__V1__ProveResponse *)m;
    return st;
}

const char *cz_status_name(int code)
{
    static const char *n[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                              "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
                              "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
                              "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE",
                              "DATA_LOSS", "UNAUTHENTICATED"};
    return code >= 0 && code <= 16 ? n[code] : "UNKNOWN";
}
#else
typedef int cuzk_client_rpc_disabled;   /* CUZK_CLIENT=0: built without gRPC */
#endif
