/* server.h: the daemon's network faces: the cuzk.v1.ProvingEngine gRPC service (grpc core +
 * protobuf-c) and the HTTP /status (JSON) and /metrics (Prometheus) endpoints (libmicrohttpd),
 * both thin layers over engine.h. See docs/daemon.md. */
#ifndef CUZK_SERVER_H
#define CUZK_SERVER_H

#include <stdint.h>

#include "cuzk/engine.h"
#include "cuzk/err.h"

struct rpc_server;
/* Bind addr ("unix:///path" or "host:port") and start serving on a completion-queue thread.
 * max_message: receive and send limit in bytes. CUZK_E_IO naming addr if it cannot bind. */
int rpc_server_start(struct rpc_server **out, struct engine *e, const char *addr,
                     uint64_t max_message, struct cuzk_error *err);
/* Stop accepting calls (new ones get UNAVAILABLE); calls in flight continue. */
void rpc_server_stop_accepting(struct rpc_server *s);
/* Wait up to timeout_ms for in-flight calls to send their answers, cancel the rest, stop the
 * thread and free everything. */
void rpc_server_free(struct rpc_server *s, uint64_t timeout_ms);

struct http_server;
/* Serve GET /status and GET /metrics on "ip:port" (or "host:port"). */
int http_server_start(struct http_server **out, struct engine *e, const char *addr,
                      struct cuzk_error *err);
void http_server_stop(struct http_server *h);

struct addrinfo;
/* Resolve a TCP listen address "host:port", "[v6]:port" or ":port" (all interfaces) for
 * bind(2). `what` names the setting in messages ("listen address", "status_listen") and
 * `expect` the accepted forms. Caller frees *out with freeaddrinfo. CUZK_E_INVALID_ARG. */
int srv_resolve_tcp(struct addrinfo **out, const char *what, const char *expect,
                    const char *addr, struct cuzk_error *err);

/* Renderings of an engine snapshot (malloc'd strings; NULL on allocation failure). */
char *render_status_json(const struct engine_snapshot *s);
char *render_metrics(const struct engine_snapshot *s);

#endif
