/* http.c: the status listener ([daemon] status_listen): GET /status (JSON) and GET /metrics
 * (Prometheus text) over HTTP/1.1, served by a small libmicrohttpd thread pool with a cap on
 * connections (idle clients cannot make threads) behind a gate that admits only connections
 * whose request header has arrived (http_gate.c), the daemon's bearer token when it has one,
 * and no CORS header (a web page in an operator's browser must not read the status). */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cuzk/log.h"
#include "cuzk/server.h"
#include "http_gate.h"

struct http_server {
    struct engine *e;
    struct MHD_Daemon *d;
    struct http_gate *gate;   /* accepts, and hands over connections with a whole header */
    char *token;          /* NULL: no token asked */
};

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned code, const char *type,
                               char *body /* malloc'd, taken */)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body,
                                                             MHD_RESPMEM_MUST_FREE);
    if (!r) { free(body); return MHD_NO; }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    /* one request per connection: an idle kept-alive one would hold a slot (http_gate.c) */
    MHD_add_response_header(r, "Connection", "close");
    if (code == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
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
    if (h->token) {
        const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
        if (!a || !srv_bearer_ok(h->token, a, strlen(a)))
            return respond(conn, MHD_HTTP_UNAUTHORIZED, "text/plain",
                           strdup("authentication required\n"));
    }
    /* /status?jobs=N&offset=M: a page of the job list (4000 queued jobs were 32 MB) */
    size_t max_jobs = HTTP_STATUS_JOBS, offset = 0;
    if (is_status) {
        const char *q[2] = {MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "jobs"),
                            MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "offset")};
        size_t *dst[2] = {&max_jobs, &offset};
        for (int i = 0; i < 2; i++) {
            if (!q[i]) continue;
            char *end;
            errno = 0;
            unsigned long v = strtoul(q[i], &end, 10);
            if (!q[i][0] || *end || errno || q[i][0] == '-' ||
                (i == 0 && v > HTTP_STATUS_JOBS_MAX) || v > INT_MAX) {
                char *msg = malloc(160);
                if (msg) snprintf(msg, 160, "bad query: expected jobs=0..%d and offset=N\n",
                                  HTTP_STATUS_JOBS_MAX);
                return msg ? respond(conn, MHD_HTTP_BAD_REQUEST, "text/plain", msg) : MHD_NO;
            }
            *dst[i] = v;
        }
    }
    struct engine_snapshot snap;
    struct cuzk_error err;
    if (engine_snapshot(h->e, &snap, &err))
        return respond(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", strdup(err.msg));
    char *body = is_status ? render_status_json(&snap, max_jobs, offset) : render_metrics(&snap);
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
                      const char *auth_token, struct cuzk_error *err)
{
    struct addrinfo *ai = NULL;
    int rc = srv_resolve_tcp(&ai, "status_listen", "ip:port", addr, err);
    if (rc) return rc;
    struct http_server *h = calloc(1, sizeof *h);
    if (!h) { freeaddrinfo(ai); return cuzk_fail(err, CUZK_E_NOMEM, "out of memory"); }
    h->e = e;
    if (auth_token && auth_token[0] && !(h->token = strdup(auth_token))) {
        freeaddrinfo(ai);
        free(h);
        return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    }
    /* The listening socket is ours (http_gate.c hands libmicrohttpd only connections whose
     * request header has arrived). A fixed pool of threads polling every connection (not one
     * thread per connection: 300 idle clients made 300 threads), a cap on open connections and
     * a short idle timeout. */
    int lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        /* an IPv6 address serves IPv6 only, as libmicrohttpd's own socket did */
        (ai->ai_family == AF_INET6 && setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one)) ||
        bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, SOMAXCONN)) {
        int en = errno;
        if (lfd >= 0) close(lfd);
        freeaddrinfo(ai);
        free(h->token);
        free(h);
        return cuzk_fail(err, CUZK_E_IO, "cannot listen on status address %s (%s)", addr, strerror(en));
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_NO_LISTEN_SOCKET |
                     MHD_USE_ITC;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;   /* the addresses it is handed */
    freeaddrinfo(ai);
    h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREADS,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)(HTTP_MAX_CONNECTIONS / 2),
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
    if (!h->d || (rc = http_gate_start(&h->gate, h->d, lfd, err))) {
        if (h->d) MHD_stop_daemon(h->d);
        close(lfd);
        free(h->token);
        free(h);
        return rc ? rc : cuzk_fail(err, CUZK_E_IO, "cannot start the status listener on %s", addr);
    }
    *out = h;
    return CUZK_OK;
}

void http_server_stop(struct http_server *h)
{
    if (!h) return;
    http_gate_stop(h->gate);
    MHD_stop_daemon(h->d);
    free(h->token);
    free(h);
}
