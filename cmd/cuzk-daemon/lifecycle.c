/* lifecycle.c: instance lock (pidfile + flock), stale-socket recovery, port-in-use checks,
 * config digest and sd_notify for cuzk-daemon. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/sha.h>
#include <systemd/sd-daemon.h>

#include "cuzk/log.h"
#include "cuzk/server.h"
#include "lifecycle.h"

static const char *unix_path(const char *addr)
{
    return strncmp(addr, "unix://", 7) ? NULL : addr + 7;
}

int lc_lock(int *fd, char *path, size_t cap, const char *addr, struct cuzk_error *err)
{
    const char *up = unix_path(addr);
    if (up) {
        snprintf(path, cap, "%s.lock", up);
    } else {
        const char *dir = getenv("RUNTIME_DIRECTORY");
        if (!dir || !*dir) dir = getenv("TMPDIR");
        if (!dir || !*dir) dir = "/tmp";
        char name[300];
        size_t n = 0;
        for (const char *c = addr; *c && n + 1 < sizeof name; c++)
            name[n++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                               (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' ? *c : '_');
        name[n] = 0;
        snprintf(path, cap, "%s/cuzk-daemon-%s.lock", dir, name);
    }
    if (up) {   /* the socket's directory must exist for the lock too */
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", up);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = 0;
            for (char *p = dir + 1; *p; p++)
                if (*p == '/') { *p = 0; mkdir(dir, 0755); *p = '/'; }
            if (mkdir(dir, 0755) != 0 && errno != EEXIST)
                return cuzk_fail(err, CUZK_E_IO, "cannot create socket directory %s: %s", dir,
                                 strerror(errno));
        }
    }
    int f;
    for (;;) {
        f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (f < 0) return cuzk_fail(err, CUZK_E_IO, "cannot open lock file %s: %s", path, strerror(errno));
        if (flock(f, LOCK_EX | LOCK_NB) != 0) break;
        /* Locked; but a daemon that just exited may have unlinked this file: retry on the
         * file now at the path so two daemons never hold locks on different inodes. */
        struct stat a, b;
        if (fstat(f, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
            goto locked;
        close(f);
    }
    {
        int e = errno;
        char buf[32] = {0};
        ssize_t r = pread(f, buf, sizeof buf - 1, 0);
        close(f);
        long pid = r > 0 ? strtol(buf, NULL, 10) : 0;
        if (e == EWOULDBLOCK) {
            if (pid > 0)
                return cuzk_fail(err, CUZK_E_BUSY, "already running as pid %ld (serving %s; lock %s)",
                                 pid, addr, path);
            return cuzk_fail(err, CUZK_E_BUSY, "already running (serving %s; lock %s)", addr, path);
        }
        return cuzk_fail(err, CUZK_E_IO, "cannot lock %s: %s", path, strerror(e));
    }
locked:;
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(f, 0) != 0 || pwrite(f, pid, (size_t)n, 0) != n) {
        close(f);
        return cuzk_fail(err, CUZK_E_IO, "cannot write pid to %s: %s", path, strerror(errno));
    }
    *fd = f;
    return 0;
}

int lc_prepare_listen(const char *addr, struct cuzk_error *err)
{
    const char *up = unix_path(addr);
    if (up) {
        struct sockaddr_un sa;
        if (strlen(up) >= sizeof sa.sun_path)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "socket path %s is longer than %zu bytes", up,
                             sizeof sa.sun_path - 1);
        struct stat st;
        if (lstat(up, &st) != 0) return 0;   /* nothing there */
        if (!S_ISSOCK(st.st_mode))
            return cuzk_fail(err, CUZK_E_BUSY, "%s exists and is not a socket; refusing to "
                             "replace it", up);
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0) return cuzk_fail(err, CUZK_E_IO, "socket: %s", strerror(errno));
        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        memcpy(sa.sun_path, up, strlen(up) + 1);
        int rc = connect(s, (struct sockaddr *)&sa, sizeof sa);
        int e = errno;
        close(s);
        if (rc == 0)
            return cuzk_fail(err, CUZK_E_BUSY, "%s is in use: a live process accepts connections "
                             "on it (not holding our lock)", addr);
        if (e != ECONNREFUSED && e != ENOENT)
            return cuzk_fail(err, CUZK_E_IO, "cannot probe %s: %s", up, strerror(e));
        if (unlink(up) != 0 && errno != ENOENT)
            return cuzk_fail(err, CUZK_E_IO, "cannot remove stale socket %s: %s", up, strerror(errno));
        cuzk_log(CLOG_WARN, "removed stale socket %s left by a previous daemon", up);
        return 0;
    }
    /* TCP: bind a probe socket (without SO_REUSEPORT) to report "address in use" clearly. */
    struct addrinfo *ai = NULL;
    int rc = srv_resolve_tcp(&ai, "listen address", "host:port or unix:///path", addr, err);
    if (rc) return rc;
    for (struct addrinfo *p = ai; p && !rc; p = p->ai_next) {
        int s = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (s < 0) continue;
        int one = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(s, p->ai_addr, p->ai_addrlen) != 0)
            rc = cuzk_fail(err, errno == EADDRINUSE ? CUZK_E_BUSY : CUZK_E_IO,
                           "cannot listen on %s: %s", addr, strerror(errno));
        close(s);
    }
    freeaddrinfo(ai);
    return rc;
}

void lc_unlock(int fd, const char *path)
{
    unlink(path);   /* still locked here, so no one else owns this name (see lc_lock) */
    close(fd);
}

void lc_remove_socket(const char *addr)
{
    const char *up = unix_path(addr);
    if (up) unlink(up);
}

void lc_sha256_hex(char out[65], const void *data, size_t n)
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256(data, n, d);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

void lc_notify(const char *state)
{
    if (getenv("NOTIFY_SOCKET")) sd_notify(0, state);
}
