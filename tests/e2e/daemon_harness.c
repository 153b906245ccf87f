/* daemon_harness.c: process plumbing for the daemon end-to-end tests (see daemon_harness.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "../test.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *h_bin_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0]) return dir;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) { snprintf(dir, sizeof dir, "build/bin"); return dir; }
    exe[n] = 0;
    /* <build>/tests/e2e/test_x -> <build>/bin */
    char *d = dirname(dirname(dirname(exe)));
    snprintf(dir, sizeof dir, "%s/bin", d);
    return dir;
}

void h_tmpdir(char *out, size_t cap)
{
    const char *t = getenv("TMPDIR");
    snprintf(out, cap, "%s/cuzk-e2e-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(out)) { perror("mkdtemp"); exit(1); }
}

int h_free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) || getsockname(s, (struct sockaddr *)&a, &len)) {
        close(s);
        return 0;
    }
    close(s);
    return ntohs(a.sin_port);
}

char *h_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return strdup("");
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 1 >= cap) buf = realloc(buf, cap *= 2);
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        if (!got) break;
        n += got;
    }
    buf[n] = 0;
    fclose(f);
    return buf;
}

pid_t h_spawn(const struct daemon *d, const char *const *extra)
{
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive a failed test */
        int o = open(d->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(d->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        setenv("TMPDIR", d->dir, 1);   /* TCP lock files stay in the test's directory */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        char bin[PATH_MAX + 16];
        snprintf(bin, sizeof bin, "%s/cuzk-daemon", h_bin_dir());
        const char *argv[16] = {bin, "-c", d->cfg_path};
        int k = 3;
        for (int i = 0; extra && extra[i] && k < 15; i++) argv[k++] = extra[i];
        argv[k] = NULL;
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Write text to path with every "%DIR%" replaced by dir. */
static void write_cfg_file(const char *path, const char *dir, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) test_fail_at(__FILE__, __LINE__, "cannot write the daemon's config %s", path);
    for (const char *p = text; *p; p++) {
        if (!strncmp(p, "%DIR%", 5)) { fputs(dir, f); p += 4; }
        else fputc(*p, f);
    }
    fclose(f);
}

static void write_cfg(struct daemon *d, const char *text)
{
    snprintf(d->cfg_path, sizeof d->cfg_path, "%s/cuzk.toml", d->dir);
    snprintf(d->out_path, sizeof d->out_path, "%s/daemon.out", d->dir);
    snprintf(d->err_path, sizeof d->err_path, "%s/daemon.err", d->dir);
    write_cfg_file(d->cfg_path, d->dir, text);
}

void h_cfg_add(char *out, size_t cap, const char *base, const char *section, const char *lines)
{
    char hdr[128];
    snprintf(hdr, sizeof hdr, "[%s]\n", section);
    const char *at = NULL;
    for (const char *p = base; (p = strstr(p, hdr)); p++)
        if (p == base || p[-1] == '\n') { at = p + strlen(hdr); break; }
    int n = at ? snprintf(out, cap, "%.*s%s%s", (int)(at - base), base, lines, at)
               : snprintf(out, cap, "%s%s%s", base, hdr, lines);
    if (n < 0 || (size_t)n >= cap)
        test_fail_at(__FILE__, __LINE__, "config of %d bytes does not fit in %zu", n, cap);
}

void h_new(struct daemon *d)
{
    memset(d, 0, sizeof *d);
    h_tmpdir(d->dir, sizeof d->dir);
}

void h_sibling(struct daemon *d2, const struct daemon *d, const char *name, const char *cfg_text)
{
    *d2 = *d;
    d2->pid = 0;
    snprintf(d2->out_path, sizeof d2->out_path, "%s/%s.out", d->dir, name);
    snprintf(d2->err_path, sizeof d2->err_path, "%s/%s.err", d->dir, name);
    if (cfg_text) {
        snprintf(d2->cfg_path, sizeof d2->cfg_path, "%s/%s.toml", d->dir, name);
        write_cfg_file(d2->cfg_path, d->dir, cfg_text);
    }
}

bool h_start(struct daemon *d, const char *cfg_text, double timeout_s)
{
    write_cfg(d, cfg_text);
    unlink(d->out_path);   /* a previous run's readiness line must not count */
    unlink(d->err_path);
    d->pid = h_spawn(d, NULL);
    double t0 = now();
    while (now() - t0 < timeout_s) {
        char *out = h_slurp(d->out_path);
        bool ready = strstr(out, "cuzk-daemon ready, serving on ") != NULL;
        free(out);
        if (ready) return true;
        int st;
        if (waitpid(d->pid, &st, WNOHANG) == d->pid) { d->pid = 0; return false; }
        usleep(20000);
    }
    return false;
}

int h_wait(pid_t pid, double timeout_s)
{
    double t0 = now();
    int st;
    while (now() - t0 < timeout_s) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        usleep(20000);
    }
    return -1;
}

int h_stop(struct daemon *d, int sig, double timeout_s)
{
    if (d->pid <= 0) return -1;
    kill(d->pid, sig);
    int rc = h_wait(d->pid, timeout_s);
    if (rc == -1) { kill(d->pid, SIGKILL); h_wait(d->pid, 5); }
    d->pid = 0;
    return rc;
}

int h_bench(char **out, const char *addr, const char *args)
{
    char cmd[PATH_MAX + 2048];
    snprintf(cmd, sizeof cmd, "'%s/cuzk-bench' -a '%s' %s 2>&1", h_bin_dir(), addr, args);
    FILE *p = popen(cmd, "r");
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 1 >= cap) buf = realloc(buf, cap *= 2);
        size_t got = fread(buf + n, 1, cap - n - 1, p);
        if (!got) break;
        n += got;
    }
    buf[n] = 0;
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int h_http_get(const char *addr, const char *path, char **body)
{
    return h_http_get_hdr(addr, path, NULL, body);
}

int h_http_get_hdr(const char *addr, const char *path, const char *header, char **body)
{
    *body = strdup("");
    char host[64];
    const char *colon = strrchr(addr, ':');
    snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)atoi(colon + 1));
    inet_pton(AF_INET, host, &a.sin_addr);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *)&a, sizeof a)) { close(s); return -1; }
    char req[1024];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n%s%s\r\n", path, addr,
                     header ? header : "", header ? "\r\n" : "");
    if (write(s, req, (size_t)n) != n) { close(s); return -1; }
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
        ssize_t r = read(s, buf + len, cap - len - 1);
        if (r <= 0) break;
        len += (size_t)r;
    }
    close(s);
    buf[len] = 0;
    int code = 0;
    sscanf(buf, "HTTP/%*s %d", &code);
    char *b = strstr(buf, "\r\n\r\n");
    free(*body);
    *body = strdup(b ? b + 4 : "");
    free(buf);
    return code;
}

void h_cleanup(const struct daemon *d)
{
    if (!d->dir[0] || strncmp(d->dir, "/", 1) || !strstr(d->dir, "cuzk-e2e-")) return;
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", d->dir);
}

void h_start_or_fail(struct daemon *d, const char *cfg_text, double timeout_s)
{
    if (!d->dir[0]) h_tmpdir(d->dir, sizeof d->dir);
    char addr[sizeof d->addr];
    snprintf(addr, sizeof addr, "unix://%s/cuzk.sock", d->dir);
    h_start_at_or_fail(d, cfg_text, addr, timeout_s);
}

void h_start_at_or_fail(struct daemon *d, const char *cfg_text, const char *addr, double timeout_s)
{
    if (!d->dir[0]) h_tmpdir(d->dir, sizeof d->dir);
    if (strlen(addr) >= sizeof d->addr) test_fail_at(__FILE__, __LINE__, "address too long: %s", addr);
    memcpy(d->addr, addr, strlen(addr) + 1);
    if (!h_start(d, cfg_text, timeout_s)) {
        char *e = h_slurp(d->err_path);
        test_fail_at(__FILE__, __LINE__, "daemon did not become ready on %s; stderr:\n%s", addr, e);
    }
}

int h_check_config(struct daemon *d, const char *cfg_text, char **out)
{
    if (!d->cfg_path[0]) snprintf(d->cfg_path, sizeof d->cfg_path, "%s/cuzk.toml", d->dir);
    write_cfg_file(d->cfg_path, d->dir, cfg_text);
    struct daemon c = *d;
    snprintf(c.out_path, sizeof c.out_path, "%s/check.out", d->dir);
    snprintf(c.err_path, sizeof c.err_path, "%s/check.err", d->dir);
    const char *extra[] = {"--check-config", NULL};
    int rc = h_wait(h_spawn(&c, extra), 30);
    char *o = h_slurp(c.out_path), *e = h_slurp(c.err_path);
    *out = malloc(strlen(o) + strlen(e) + 2);
    sprintf(*out, "%s\n%s", o, e);
    free(o);
    free(e);
    return rc;
}

void h_kill9_or_fail(struct daemon *d)
{
    int rc = h_stop(d, SIGKILL, 10);
    if (rc != 128 + SIGKILL)
        test_fail_at(__FILE__, __LINE__, "kill -9: daemon exit code %d, expected %d", rc, 128 + SIGKILL);
}

void h_keep_log(const struct daemon *d, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", d->dir, name);
    if (rename(d->err_path, path) != 0)
        test_fail_at(__FILE__, __LINE__, "cannot move %s to %s: %s", d->err_path, path, strerror(errno));
}

void h_stop_or_fail(struct daemon *d, double timeout_s)
{
    int rc = h_stop(d, SIGTERM, timeout_s);
    if (rc != 0) {
        char *e = h_slurp(d->err_path);
        test_fail_at(__FILE__, __LINE__, "daemon exit code %d after SIGTERM; stderr tail:\n%s", rc,
                     strlen(e) > 3000 ? e + strlen(e) - 3000 : e);
    }
}

void h_stop_and_clean(struct daemon *d, double timeout_s)
{
    h_stop_or_fail(d, timeout_s);
    h_cleanup(d);
}

void h_link_params(const char *dir, const char *stem, const char *params)
{
    char path[1200], target[1200];
    snprintf(path, sizeof path, "%s/%s.params", dir, stem);
    ASSERT(symlink(params, path) == 0);
    snprintf(path, sizeof path, "%s/%s.params.validated", dir, stem);
    snprintf(target, sizeof target, "%s.validated", params);
    ASSERT(symlink(target, path) == 0);
}
