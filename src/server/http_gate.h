/* http_gate.h: the status listener's front door (http_gate.c): accepts connections on the
 * listening socket and hands each to libmicrohttpd once its request header has arrived, so
 * slow or idle clients cannot hold the slots that /status and /metrics are served from.
 * Private to src/server. */
#ifndef CUZK_HTTP_GATE_H
#define CUZK_HTTP_GATE_H

#include "cuzk/err.h"

#define HTTP_HEADER_TIMEOUT_MS 5000   /* a request header must arrive within this of connecting */
#define HTTP_GATE_PENDING 512         /* connections waiting for their header at once (at most a
                                       * quarter of RLIMIT_NOFILE); more: the oldest is closed */

struct MHD_Daemon;
struct http_gate;
/* Serve lfd (a non-blocking listening socket, the gate's once this succeeds) for d, which must have been
 * started with MHD_USE_NO_LISTEN_SOCKET and MHD_USE_ITC. */
int http_gate_start(struct http_gate **out, struct MHD_Daemon *d, int lfd, struct cuzk_error *err);
/* Stop accepting, close the waiting connections and lfd. Call before MHD_stop_daemon. */
void http_gate_stop(struct http_gate *g);

#endif
