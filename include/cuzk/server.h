/* server.h: the daemon's network faces: the cuzk.v1.ProvingEngine gRPC service (grpc core +
 * protobuf-c) and the HTTP /status (JSON) and /metrics (Prometheus) endpoints (libmicrohttpd),
 * both thin layers over engine.h. See docs/daemon.md. */
#ifndef CUZK_SERVER_H
#define CUZK_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/engine.h"
#include "cuzk/err.h"

/* A request message of at least this many bytes is "large": at most max_large_requests of
 * them are decoded at once (a 32 GiB C1 is ~50 MB on the wire and ~600 MB while parsed). */
#define RPC_LARGE_REQUEST (1u << 20)
/* A large request reserves this many times its size from the engine's memory budget from the
 * moment it is handed over until its job is submitted, and its decoding and parse may allocate
 * no more than that (a real PoRep C1 peaks at ~6 times: its decoded copy, the base64-decoded
 * text and the C1 reader's nodes, ~4.5 times that text and never more than 8: docs/decisions.md).
 * One that could never fit is refused with RESOURCE_EXHAUSTED. */
#define RPC_PARSE_FACTOR 16u

struct rpc_options {
    uint64_t max_message;            /* receive and send limit, bytes */
    /* TLS (TCP listeners): PEM files; NULL or "" = plaintext. With client_ca every client
     * must present a certificate that chains to it (mutual TLS). */
    const char *tls_cert, *tls_key, *tls_client_ca;
    const char *auth_token;          /* every call must carry "authorization: Bearer <it>";
                                      * NULL or "" = no token asked */
    unsigned max_waiters;            /* AwaitProof / Prove calls waiting at once (0 = no cap) */
    const char *max_waiters_key;     /* the config key named when the cap refuses a call */
    unsigned max_large_requests;     /* large requests decoded at once (0 = no cap) */
};

struct rpc_server;
/* Bind addr ("unix:///path" or "host:port") and start serving on a completion-queue thread.
 * CUZK_E_IO naming addr if it cannot bind, CUZK_E_INVALID_ARG if the TLS files cannot be
 * read. */
int rpc_server_start(struct rpc_server **out, struct engine *e, const char *addr,
                     const struct rpc_options *o, struct cuzk_error *err);
/* Stop accepting calls (new ones get UNAVAILABLE); calls in flight continue. */
void rpc_server_stop_accepting(struct rpc_server *s);
/* Wait up to timeout_ms for in-flight calls to send their answers, cancel the rest, stop the
 * thread and free everything. */
void rpc_server_free(struct rpc_server *s, uint64_t timeout_ms);

struct http_server;
#define HTTP_MAX_CONNECTIONS 64      /* open connections to the status listener */
#define HTTP_THREADS 2               /* threads serving them */
#define HTTP_STATUS_JOBS 100         /* jobs /status lists unless ?jobs=N asks for more */
#define HTTP_STATUS_JOBS_MAX 10000
/* Serve GET /status and GET /metrics on "ip:port" (or "host:port"). auth_token: when set,
 * every request must carry "Authorization: Bearer <it>" (else 401). */
int http_server_start(struct http_server **out, struct engine *e, const char *addr,
                      const char *auth_token, struct cuzk_error *err);
void http_server_stop(struct http_server *h);

struct addrinfo;
/* Resolve a TCP listen address "host:port", "[v6]:port" or ":port" (all interfaces) for
 * bind(2). `what` names the setting in messages ("listen address", "status_listen") and
 * `expect` the accepted forms. Caller frees *out with freeaddrinfo. CUZK_E_INVALID_ARG. */
int srv_resolve_tcp(struct addrinfo **out, const char *what, const char *expect,
                    const char *addr, struct cuzk_error *err);

/* Renderings of an engine snapshot (malloc'd strings; NULL on allocation failure). The
 * status lists at most max_jobs jobs from the offset-th on, with the totals ("pipelines_total")
 * so a client knows what it did not get. */
char *render_status_json(const struct engine_snapshot *s, size_t max_jobs, size_t offset);
char *render_metrics(const struct engine_snapshot *s);

/* ---- request checks (auth.c) ---- */
/* value (len bytes, not NUL-terminated) is "Bearer <token>"; constant time in the token. */
bool srv_bearer_ok(const char *token, const char *value, size_t len);
/* An id (request, job or circuit id): at most max bytes of printable UTF-8, no NUL, no
 * control characters. CUZK_E_INVALID_ARG naming what and the offset. */
int srv_check_id(const uint8_t *s, size_t n, size_t max, const char *what,
                 struct cuzk_error *err);
/* srv_check_id on every occurrence of the length-delimited field at path (field numbers,
 * nested messages first) in a protobuf message's wire bytes. Malformed input passes (the
 * unpacker reports it). */
int srv_check_wire_ids(const uint8_t *msg, size_t n, const uint32_t *path, size_t depth,
                       size_t max, const char *what, struct cuzk_error *err);
/* s (n bytes) for a log line: control characters, backslash and non-ASCII bytes as \xHH. */
void srv_escape(char *out, size_t cap, const char *s, size_t n);

#endif
