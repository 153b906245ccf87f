/* lifecycle.h: cuzk-daemon process plumbing: the instance lock, unix-socket and port checks,
 * config digests and systemd notification. */
#ifndef CUZK_DAEMON_LIFECYCLE_H
#define CUZK_DAEMON_LIFECYCLE_H

#include <stddef.h>

#include "cuzk/err.h"

/* Take the instance lock for listen address addr (a pidfile held with flock: "<socket>.lock"
 * next to a unix socket, or $RUNTIME_DIRECTORY|$TMPDIR|/tmp "cuzk-daemon-<host>_<port>.lock").
 * CUZK_E_BUSY with "already running as pid N" if another daemon holds it. *fd stays open. */
int lc_lock(int *fd, char *path, size_t cap, const char *addr, struct cuzk_error *err);
/* Before binding: remove a stale unix socket (no one accepting), refuse a live one or a
 * non-socket file, create the parent directory; for TCP check that the port is free. */
int lc_prepare_listen(const char *addr, struct cuzk_error *err);
void lc_remove_socket(const char *addr);
/* Remove the lock file and release the lock (clean exit). */
void lc_unlock(int fd, const char *path);
/* SHA-256 of data as 64 hex characters. */
void lc_sha256_hex(char out[65], const void *data, size_t n);
/* sd_notify when NOTIFY_SOCKET is set (no-op otherwise). */
void lc_notify(const char *state);

#endif
