/* daemon_harness.h: start and stop a real cuzk-daemon for the end-to-end tests (temp dir,
 * config file, readiness wait, logs), find free ports, run cuzk-bench. */
#ifndef CUZK_E2E_HARNESS_H
#define CUZK_E2E_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct daemon {
    pid_t pid;
    char dir[256];          /* temp dir: config, logs, socket, params */
    char addr[320];         /* gRPC address */
    char http[64];          /* status address "127.0.0.1:port" or "" */
    char cfg_path[300], out_path[300], err_path[300];
};

/* Directory holding cuzk-daemon and cuzk-bench (derived from this test's path). */
const char *h_bin_dir(void);
/* A fresh temp directory (mkdtemp). */
void h_tmpdir(char *out, size_t cap);
/* A TCP port that was free a moment ago. */
int h_free_port(void);
/* Write cfg text (with "%DIR%" replaced by d->dir) and start the daemon. d->dir must be set.
 * Returns true when the readiness line appeared within timeout_s; false if it exited. */
bool h_start(struct daemon *d, const char *cfg_text, double timeout_s);
/* Start with explicit extra args; returns the pid (no readiness wait). */
pid_t h_spawn(const struct daemon *d, const char *const *extra_args);
/* Send sig and wait (up to timeout_s); returns the exit code, 128+signal if killed, -1 on timeout. */
int h_stop(struct daemon *d, int sig, double timeout_s);
int h_wait(pid_t pid, double timeout_s);
/* Read a whole file (malloc'd, NUL-terminated; "" if missing). */
char *h_slurp(const char *path);
/* Run cuzk-bench with args; stdout+stderr captured into *out (malloc'd). Returns exit code. */
int h_bench(char **out, const char *addr, const char *args);
/* Remove a test's temp directory (after the daemon stopped). */
void h_cleanup(const struct daemon *d);
/* Start the daemon on cfg_text in d->dir (a fresh temp dir when unset), listening on
 * unix://DIR/cuzk.sock, or fail the test with its stderr. */
void h_start_or_fail(struct daemon *d, const char *cfg_text, double timeout_s);
/* SIGTERM; the daemon must exit 0 within timeout_s (else the test fails with the tail of its
 * stderr); then h_cleanup. */
void h_stop_or_fail(struct daemon *d, double timeout_s);
void h_stop_and_clean(struct daemon *d, double timeout_s);
/* Make a test's fixture key visible in dir as STEM.params, with its digest cache
 * (STEM.params.validated), by symlinks. */
void h_link_params(const char *dir, const char *stem, const char *params);
/* HTTP GET http://addr/path; returns status code, body in *body (malloc'd). */
int h_http_get(const char *addr, const char *path, char **body);
/* The same with one more request header line ("Name: value", no CRLF; NULL: none). */
int h_http_get_hdr(const char *addr, const char *path, const char *header, char **body);

#endif
