/* http_gate.c: the status listener's front door. libmicrohttpd counts a connection against its
 * caps from accept until it closes and restarts its idle timeout on every byte, so clients that
 * send a header byte now and then (or nothing) could hold every slot and starve /status. The
 * gate owns the listening socket instead: it accepts everything, holds each new connection
 * until its request header has fully arrived (seen with MSG_PEEK, nothing is consumed) and only
 * then hands it to libmicrohttpd (MHD_add_connection). A connection whose header is not complete
 * within HTTP_HEADER_TIMEOUT_MS is closed, and when HTTP_GATE_PENDING connections wait, the
 * oldest is closed to make room for the new one: a client that sends its request at once is
 * always served, however many slow ones there are. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cuzk/log.h"
#include "http_gate.h"

#define PEEK_MAX 8192   /* a header larger than this is handed over as it is (MHD answers it) */
#define TICK_MS 50      /* how often connections with part of a header are looked at again */

struct pending {
    int fd;
    uint64_t since_ms;            /* accepted */
    int avail;                    /* bytes waiting at the last look (-1: none seen yet) */
    struct sockaddr_storage addr;
    socklen_t addr_len;
};

struct http_gate {
    struct MHD_Daemon *d;
    int lfd;                      /* the listening socket */
    int wake[2];                  /* a byte on wake[1] stops the thread */
    pthread_t thread;
    unsigned cap;                 /* connections held at once */
    unsigned n;
    struct pending *p;
    unsigned long handed, dropped_timeout, dropped_full;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void drop(struct http_gate *g, unsigned i)
{
    close(g->p[i].fd);
    g->p[i] = g->p[--g->n];
}

/* Does the connection hold a whole request header? 1: yes (or more than PEEK_MAX bytes, or the
 * peer finished sending), 0: not yet, -1: closed or failed. */
static int header_complete(int fd)
{
    char buf[PEEK_MAX];
    ssize_t r = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (r == 0) return -1;
    if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    if ((size_t)r == sizeof buf) return 1;
    for (ssize_t i = 0; i + 1 < r; i++)
        if (buf[i] == '\n' && (buf[i + 1] == '\n' || (buf[i + 1] == '\r' && i + 2 < r && buf[i + 2] == '\n')))
            return 1;
    return 0;
}

static void hand_over(struct http_gate *g, unsigned i)
{
    struct pending c = g->p[i];
    g->p[i] = g->p[--g->n];
    /* MHD closes the socket itself when it cannot take it */
    if (MHD_add_connection(g->d, c.fd, (const struct sockaddr *)&c.addr, c.addr_len) == MHD_YES)
        g->handed++;
}

static void accept_all(struct http_gate *g, uint64_t now)
{
    for (;;) {
        struct pending c = {.avail = -1, .since_ms = now, .addr_len = sizeof c.addr};
        c.fd = accept4(g->lfd, (struct sockaddr *)&c.addr, &c.addr_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c.fd < 0) {
            if ((errno == EMFILE || errno == ENFILE) && g->n) {
                /* out of descriptors: the oldest waiting connection makes room */
                unsigned old = 0;
                for (unsigned i = 1; i < g->n; i++) if (g->p[i].since_ms < g->p[old].since_ms) old = i;
                drop(g, old);
                g->dropped_full++;
                continue;
            }
            return;   /* EAGAIN: all accepted; other errors: the next poll tries again */
        }
        if (g->n == g->cap) {
            unsigned old = 0;
            for (unsigned i = 1; i < g->n; i++) if (g->p[i].since_ms < g->p[old].since_ms) old = i;
            drop(g, old);
            g->dropped_full++;
        }
        g->p[g->n++] = c;
    }
}

static void *gate_main(void *arg)
{
    struct http_gate *g = arg;
    struct pollfd *pf = calloc(g->cap + 2, sizeof *pf);
    unsigned *idx = calloc(g->cap, sizeof *idx);
    if (!pf || !idx) {
        cuzk_log(CLOG_ERROR, "status listener: out of memory; it stops accepting connections");
        free(pf);
        free(idx);
        return NULL;
    }
    uint64_t last_tick = now_ms();
    for (;;) {
        uint64_t now = now_ms();
        /* the header deadline, and connections that already sent part of a header: their
         * bytes stay unread, so poll would report them readable at once; they are looked at
         * on the tick instead (FIONREAD says whether more arrived) */
        bool tick = now - last_tick >= TICK_MS;
        if (tick) last_tick = now;
        for (unsigned i = 0; i < g->n;) {
            if (now - g->p[i].since_ms >= HTTP_HEADER_TIMEOUT_MS) {
                drop(g, i);
                g->dropped_timeout++;
                continue;
            }
            if (tick && g->p[i].avail >= 0) {
                int avail = 0;
                if (ioctl(g->p[i].fd, FIONREAD, &avail) == 0 && avail != g->p[i].avail) {
                    g->p[i].avail = avail;
                    int hc = header_complete(g->p[i].fd);
                    if (hc > 0) { hand_over(g, i); continue; }
                    if (hc < 0) { drop(g, i); continue; }
                }
            }
            i++;
        }
        unsigned np = 0;
        pf[np++] = (struct pollfd){.fd = g->wake[0], .events = POLLIN};
        pf[np++] = (struct pollfd){.fd = g->lfd, .events = POLLIN};
        for (unsigned i = 0; i < g->n; i++)
            if (g->p[i].avail < 0) {
                idx[np - 2] = i;
                pf[np++] = (struct pollfd){.fd = g->p[i].fd, .events = POLLIN};
            }
        int timeout = g->n ? TICK_MS : -1;
        int r = poll(pf, np, timeout);
        if (r < 0 && errno != EINTR) {
            cuzk_log(CLOG_ERROR, "status listener: poll failed (%s)", strerror(errno));
            break;
        }
        if (r <= 0) continue;
        if (pf[0].revents) break;
        now = now_ms();
        /* first the connections that were waiting (indices shift as they leave: from the end) */
        for (unsigned k = np; k-- > 2;) {
            if (!pf[k].revents) continue;
            unsigned i = idx[k - 2];
            int hc = header_complete(g->p[i].fd);
            if (hc > 0) hand_over(g, i);
            else if (hc < 0) drop(g, i);
            else {
                int avail = 0;
                g->p[i].avail = ioctl(g->p[i].fd, FIONREAD, &avail) == 0 ? avail : 0;
            }
        }
        if (pf[1].revents & POLLIN) accept_all(g, now);
    }
    free(pf);
    free(idx);
    return NULL;
}

int http_gate_start(struct http_gate **out, struct MHD_Daemon *d, int lfd, struct cuzk_error *err)
{
    struct http_gate *g = calloc(1, sizeof *g);
    if (!g) return cuzk_fail(err, CUZK_E_NOMEM, "out of memory");
    /* a waiting connection is one descriptor: keep most of the process's for everything else */
    struct rlimit rl;
    g->cap = HTTP_GATE_PENDING;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < g->cap)
        g->cap = rl.rlim_cur / 4 > 16 ? (unsigned)(rl.rlim_cur / 4) : 16;
    g->d = d;
    g->lfd = lfd;
    g->p = calloc(g->cap, sizeof *g->p);
    if (!g->p || pipe2(g->wake, O_CLOEXEC)) {
        free(g->p);
        free(g);
        return cuzk_fail(err, CUZK_E_NOMEM, "status listener: cannot set up its gate");
    }
    int prc = pthread_create(&g->thread, NULL, gate_main, g);
    if (prc) {
        close(g->wake[0]);
        close(g->wake[1]);
        free(g->p);
        free(g);
        return cuzk_fail(err, CUZK_E_INTERNAL, "status listener: cannot start a thread (%s)", strerror(prc));
    }
    *out = g;
    return CUZK_OK;
}

void http_gate_stop(struct http_gate *g)
{
    if (!g) return;
    ssize_t w = write(g->wake[1], "x", 1);
    (void)w;
    pthread_join(g->thread, NULL);
    for (unsigned i = 0; i < g->n; i++) close(g->p[i].fd);
    cuzk_log(CLOG_DEBUG, "status listener: %lu connections handed over, %lu closed at the header "
             "timeout, %lu closed to make room", g->handed, g->dropped_timeout, g->dropped_full);
    close(g->wake[0]);
    close(g->wake[1]);
    close(g->lfd);
    free(g->p);
    free(g);
}
