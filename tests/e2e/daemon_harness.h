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

/* Zero d and give it a fresh temp directory (every test daemon starts here). */
void h_new(struct daemon *d);
/* A second daemon beside d, in d's directory: its stdout/stderr are DIR/NAME.out and
 * DIR/NAME.err, its config DIR/NAME.toml written from cfg_text ("%DIR%" replaced) or, when
 * cfg_text is NULL, d's config. Start it with h_spawn (it is expected to refuse) or h_start. */
void h_sibling(struct daemon *d2, const struct daemon *d, const char *name, const char *cfg_text);
/* A test's config: base with lines (each ending in '\n') added at the top of its [section]
 * (a new section at the end when base has none), into out; fails the test when out is short. */
void h_cfg_add(char *out, size_t cap, const char *base, const char *section, const char *lines);
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
/* The same for a daemon that cfg_text makes listen elsewhere (TCP, TLS): d->addr = addr. */
void h_start_at_or_fail(struct daemon *d, const char *cfg_text, const char *addr, double timeout_s);
/* Write cfg_text ("%DIR%" replaced) to d's config file (DIR/cuzk.toml unless d has one) and run
 * cuzk-daemon --check-config on it: its exit code (-1 when it ran past 30 s), its stdout and
 * stderr together in *out (malloc'd). d's own log paths are left alone (DIR/check.out, .err). */
int h_check_config(struct daemon *d, const char *cfg_text, char **out);
/* kill -9: the daemon must die by SIGKILL within 10 s (a crash, for the restart tests; its
 * socket and journal stay behind). */
void h_kill9_or_fail(struct daemon *d);
/* Move the daemon's stderr log to DIR/NAME (kept for a look after a failure) so that the next
 * start on the same directory writes a fresh one. */
void h_keep_log(const struct daemon *d, const char *name);
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
