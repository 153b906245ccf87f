/* http.c: the status listener ([daemon] status_listen): GET /status (JSON) and GET /metrics
 * (Prometheus text) over HTTP/1.1, served by libmicrohttpd's internal thread. */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "cuzk/log.h"
#include "cuzk/server.h"

struct http_server {
    struct engine *e;
    struct MHD_Daemon *d;
};

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned code, const char *type,
                               char *body /* malloc'd, taken */)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body,
                                                             MHD_RESPMEM_MUST_FREE);
    if (!r) { free(body); return MHD_NO; }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ret = MHD_queue_response(conn, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    struct http_server *h = cls;
    (void)version; (void)upload_data; (void)upload_data_size; (void)req_cls;
    bool is_status = !strcmp(url, "/status"), is_metrics = !strcmp(url, "/metrics");
    if (!is_status && !is_metrics)
        return respond(conn, MHD_HTTP_NOT_FOUND, "text/plain",
                       strdup("not found: try GET /status or GET /metrics\n"));
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return respond(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", strdup("use GET\n"));
    struct engine_snapshot snap;
    struct cuzk_error err;
    if (engine_snapshot(h->e, &snap, &err))
        return respond(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", strdup(err.msg));
    char *body = is_status ? render_status_json(&snap) : render_metrics(&snap);
    engine_snapshot_free(&snap);
    if (!body) return MHD_NO;
    if (is_status) {
        size_t n = strlen(body);
        char *nb = realloc(body, n + 2);   /* end the document with a newline */
        if (nb) { body = nb; body[n] = '\n'; body[n + 1] = 0; }
    }
    return respond(conn, MHD_HTTP_OK,
                   is_status ? "application/json" : "text/plain; version=0.0.4; charset=utf-8", body);
}

int srv_resolve_tcp(struct addrinfo **out, const char *what, const char *expect,
                    const char *addr, struct cuzk_error *err)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (!colon || (size_t)(colon - addr) >= sizeof host)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s '%s': expected %s", what, addr, expect);
    const char *h0 = addr;
    size_t hl = (size_t)(colon - addr);
    if (hl >= 2 && h0[0] == '[' && h0[hl - 1] == ']') { h0++; hl -= 2; }   /* [v6]:port */
    memcpy(host, h0, hl);
    host[hl] = 0;
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    *out = NULL;
    int g = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, out);
    if (g || !*out) {
        if (*out) freeaddrinfo(*out);
        *out = NULL;
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s '%s': %s", what, addr,
                         g ? gai_strerror(g) : "no usable address");
    }
    return CUZK_OK;
}

int http_server_start(struct http_server **out, struct engine *e, const char *addr,
                      struct cuzk_error *err)
{
    struct addrinfo *ai = NULL;
    int rc = srv_resolve_tcp(&ai, "status_listen", "ip:port", addr, err);
    if (rc) return rc;
    struct http_server *h = calloc(1, sizeof *h);
    if (!h) { freeaddrinfo(ai); return cuzk_fail(err, CUZK_E_NOMEM, "out of memory"); }
    h->e = e;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!h->d) {
        free(h);
        return cuzk_fail(err, CUZK_E_IO, "cannot listen on status address %s (address in use or "
                         "not available)", addr);
    }
    *out = h;
    return CUZK_OK;
}

void http_server_stop(struct http_server *h)
{
    if (!h) return;
    MHD_stop_daemon(h->d);
    free(h);
}
