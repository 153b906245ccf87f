/* cfg.c: the daemon configuration: a table of upstream cuzk's keys with validators, fed by the
 * TOML-subset reader (toml.c), the built-in defaults and the checks against the machine. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "cfg.h"
#include "toml.h"
#include "cuzk/gpu.h"

#define GiB (1024ull * 1024 * 1024)
#define MiB (1024ull * 1024)

/* string values are read into fields of CFG_STR_MAX bytes */
_Static_assert(TOML_STR_MAX == CFG_STR_MAX, "toml.h and cfg.h string sizes differ");

const char cfg_default_toml[] =
    "# cuzk-daemon configuration (built-in defaults; every key is optional).\n"
    "# Sizes: \"64GiB\", \"512MiB\", \"100GB\" or plain bytes. Durations: \"5m\", \"30s\", \"250ms\", \"1h\".\n"
    "\n"
    "[daemon]\n"
    "listen = \"unix:///run/curio/cuzk.sock\"   # or \"0.0.0.0:9820\"\n"
    "status_listen = \"\"                        # HTTP /status and /metrics, e.g. \"127.0.0.1:9821\"\n"
    "max_message_size = \"256MiB\"               # largest gRPC message either way\n"
    "shutdown_grace = \"30s\"                    # running partitions may finish this long on SIGTERM\n"
    "result_retention = \"1h\"                   # finished results kept for AwaitProof / retries\n"
    "result_retention_count = 1000\n"
    "# The job journal (accepted requests and finished results survive a crash or restart):\n"
    "# \"\" = systemd's StateDirectory (/var/lib/cuzk with the packaged unit), else beside the\n"
    "# instance lock (<socket>.state for a unix socket). /run is emptied\n"
    "# at reboot: set a persistent directory such as \"/var/lib/cuzk\" to survive one.\n"
    "# \"off\" = accepted jobs live in memory only.\n"
    "state_dir = \"\"\n"
    "# Remote provers (docs/daemon.md, \"Running cuzk on a separate GPU host\"): TLS for a TCP\n"
    "# listener and a bearer token every call must carry. A TCP listener on a non-loopback\n"
    "# address needs one of them, or allow_insecure_remote = true (warned at every start).\n"
    "tls_cert = \"\"                              # PEM certificate (chain) of this daemon\n"
    "tls_key = \"\"                               # its PEM private key\n"
    "tls_client_ca = \"\"                         # PEM CA of client certificates (mutual TLS)\n"
    "auth_token_file = \"\"                       # file with the token (authorization: Bearer ...)\n"
    "allow_insecure_remote = false\n"
    "socket_mode = \"0660\"                       # unix socket permissions (owner and group)\n"
    "max_queued_jobs = 1000                    # unfinished jobs accepted at once\n"
    "max_waiters = 512                         # AwaitProof / Prove calls waiting at once\n"
    "max_large_requests = 1                    # requests over 1 MiB decoded at once\n"
    "\n"
    "[memory]\n"
    "total_budget = \"auto\"                     # \"auto\" = MemTotal - safety_margin\n"
    "safety_margin = \"5GiB\"\n"
    "eviction_min_idle = \"5m\"                  # idle time before an unused SRS may be evicted\n"
    "\n"
    "[gpus]\n"
    "devices = []                              # empty = every GPU found\n"
    "gpu_threads = 0                           # accepted; no effect yet (shared pool)\n"
    "gpu_workers_per_device = 2                # provers per GPU (CPU provers without a GPU)\n"
    "vram_reserve_mib = 0                      # device memory left to other processes\n"
    "stream_key = false                        # stream the key per proof even when it fits\n"
    "memory_limit = \"\"                         # use at most this much of each GPU, e.g. \"24GiB\"; \"\" = all\n"
    "trace = false                             # a stderr line per GPU allocation and MSM plan\n"
    "# GPU telemetry (utilization, memory, temperature, power, clocks, throttling, ECC, PCIe in\n"
    "# /metrics and /status) from NVIDIA's NVML, loaded at start; \"off\" = none.\n"
    "nvml_library = \"libnvidia-ml.so.1\"\n"
    "\n"
    "[scheduler]\n"
    "max_batch_size = 1\n"
    "max_batch_wait_ms = 10000\n"
    "\n"
    "[synthesis]\n"
    "threads = 0                               # compute thread pool; 0 = all CPUs\n"
    "\n"
    "[pipeline]\n"
    "enabled = true\n"
    "max_parallel_synthesis = 0                # synthesis workers; 0 = min(CPUs, 18)\n"
    "\n"
    "[srs]\n"
    "param_cache = \"/data/zk/params\"\n"
    "preload = []                              # circuit ids loaded at startup, e.g. [\"porep-32g\"]\n"
    "# Checks on the points of a parameter file at its first load: \"full\" (on the curve and in\n"
    "# the prime-order subgroup: hours for a 32 GiB key on few cores), \"curve\" (on the curve only)\n"
    "# or \"none\" (coordinates < p only; for files you trust). After one successful \"full\" load a\n"
    "# digest cache (<file>.validated) lets \"full\" and \"curve\" loads of the unchanged file skip\n"
    "# the checks. Every proof is verified before it is returned, whatever this says.\n"
    "validation = \"full\"\n"
    "\n"
    "[logging]\n"
    "level = \"info\"                            # error, warn, info, debug, trace\n"
    "format = \"text\"                           # or \"json\"\n";

void cfg_defaults(struct cuzk_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->listen, sizeof c->listen, "unix:///run/curio/cuzk.sock");
    c->max_message_size = 256 * MiB;
    c->shutdown_grace_ms = 30000;
    c->result_retention_ms = 3600 * 1000;
    c->result_retention_count = 1000;
    c->socket_mode = 0660;
    c->max_queued_jobs = 1000;
    c->max_waiters = 512;
    c->max_large_requests = 1;
    c->budget_auto = true;
    c->safety_margin = 5 * GiB;
    c->eviction_min_idle_ms = 300 * 1000;
    c->gpu_workers_per_device = 2;
    c->max_batch_size = 1;
    c->max_batch_wait_ms = 10000;
    c->sort_by_type = true;
    c->pipeline_enabled = true;
    c->synthesis_lookahead = 1;
    c->synthesis_concurrency = 1;
    snprintf(c->param_cache, sizeof c->param_cache, "/data/zk/params");
    snprintf(c->srs_validation, sizeof c->srs_validation, "full");
    snprintf(c->nvml_library, sizeof c->nvml_library, "libnvidia-ml.so.1");
    snprintf(c->log_level, sizeof c->log_level, "info");
}

/* ------------------------------------------------------------ value parsers -- */

/* "  12.5 GiB" -> v = 12.5, *unit = "GiB": a non-negative number, optional spaces, the rest. */
static bool parse_number_then_unit(const char *s, double *v, const char **unit)
{
    while (isspace((unsigned char)*s)) s++;
    if (!isdigit((unsigned char)*s)) return false;
    errno = 0;
    char *end;
    *v = strtod(s, &end);
    if (errno || end == s || *v < 0) return false;
    while (isspace((unsigned char)*end)) end++;
    *unit = end;
    return true;
}

bool cfg_parse_size(uint64_t *out, const char *s)
{
    static const struct { const char *suf; uint64_t mul; } units[] = {
        {"TiB", 1024 * GiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", 1024},
        {"TB", 1000000000000ull}, {"GB", 1000000000ull}, {"MB", 1000000ull}, {"KB", 1000},
        {"B", 1}, {"", 1},
    };
    double v;
    const char *end;
    if (!parse_number_then_unit(s, &v, &end)) return false;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].suf) != 0) continue;
        double bytes = v * (double)units[i].mul;
        if (bytes >= 18446744073709551615.0) return false;
        if (units[i].mul == 1 && v != floor(v)) return false;
        *out = (uint64_t)bytes;
        return true;
    }
    return false;
}

bool cfg_parse_duration_ms(uint64_t *out, const char *s)
{
    static const struct { const char *suf; double mul; } units[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}, {"", 1000},
    };
    double v;
    const char *end;
    if (!parse_number_then_unit(s, &v, &end)) return false;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].suf) != 0) continue;
        double ms = v * units[i].mul;
        if (ms > (double)CFG_DURATION_MAX_MS) return false;   /* would wrap as nanoseconds */
        *out = (uint64_t)ms;
        return true;
    }
    return false;
}

/* ------------------------------------------------------------- key table -- */

struct key_ctx {
    struct toml_reader *p;
    const char *section, *key, *raw;   /* raw = value text as written, for messages */
    cfg_warn_fn warn;
    void *warn_ctx;
};

static int bad(struct key_ctx *k, const char *expected)
{
    return toml_error(k->p, "[%s] %s = %s: %s", k->section, k->key, k->raw, expected);
}

static void warnf(struct key_ctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(struct key_ctx *k, const char *fmt, ...)
{
    char msg[600], body[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s:%u: [%s] %s: %s", k->p->name, k->p->line, k->section, k->key, body);
    if (k->warn) k->warn(k->warn_ctx, msg);
}

typedef int (*key_fn)(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k);

static int get_uint(unsigned *out, const struct toml_value *v, struct key_ctx *k, long long lo, long long hi)
{
    if (v->type != TOML_INT || v->i < lo || v->i > hi) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected an integer from %lld to %lld", lo, hi);
        return bad(k, msg);
    }
    *out = (unsigned)v->i;
    return CUZK_OK;
}

static int get_bool(bool *out, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type != TOML_BOOL) return bad(k, "expected true or false");
    *out = v->b;
    return CUZK_OK;
}

static int get_size(uint64_t *out, const struct toml_value *v, struct key_ctx *k, const char *example)
{
    if (v->type == TOML_INT && v->i >= 0) { *out = (uint64_t)v->i; return CUZK_OK; }
    if (v->type == TOML_STR && cfg_parse_size(out, v->s)) return CUZK_OK;
    char msg[96];
    snprintf(msg, sizeof msg, "expected a size like %s", example);
    return bad(k, msg);
}

static int get_duration(uint64_t *out, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type == TOML_INT && v->i >= 0 && (uint64_t)v->i <= CFG_DURATION_MAX_MS / 1000) {
        *out = (uint64_t)v->i * 1000;
        return CUZK_OK;
    }
    if (v->type == TOML_STR && cfg_parse_duration_ms(out, v->s)) return CUZK_OK;
    /* a larger value would wrap once turned into nanoseconds and act as almost zero */
    return bad(k, "expected a duration like \"5m\", \"30s\", \"250ms\" or seconds, at most "
                  "\"36500d\" (100 years)");
}

static int get_str(char *out, size_t cap, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type != TOML_STR) return bad(k, "expected a quoted string");
    if (strlen(v->s) >= cap) return bad(k, "string is too long");
    memcpy(out, v->s, strlen(v->s) + 1);
    return CUZK_OK;
}

/* A listen address: unix:///absolute/path or host:port (port 1..65535). */
static bool valid_listen(const char *s)
{
    if (!strncmp(s, "unix://", 7)) return s[7] == '/' && s[8] != 0;
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s) return false;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    return *end == 0 && colon[1] && port >= 0 && port <= 65535;
}

/* Pseudo file systems: a socket there cannot be created, or would shadow kernel state. */
static bool in_pseudo_fs(const char *path)
{
    static const char *roots[] = {"/proc", "/sys"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(roots[i]);
        if (!strncmp(path, roots[i], n) && (path[n] == '/' || !path[n])) return true;
    }
    return false;
}

static int k_listen(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type != TOML_STR || !valid_listen(v->s))
        return bad(k, "expected \"unix:///absolute/path\" or \"host:port\"");
    if (!strncmp(v->s, "unix://", 7) && strlen(v->s + 7) > CFG_SUN_PATH_MAX) {
        char msg[160];
        snprintf(msg, sizeof msg, "the socket path is %zu bytes; a unix socket address holds "
                 "at most %d: use a shorter path", strlen(v->s + 7), CFG_SUN_PATH_MAX);
        return bad(k, msg);
    }
    if (!strncmp(v->s, "unix://", 7) && in_pseudo_fs(v->s + 7))
        return bad(k, "the socket path is inside /proc or /sys, where no socket can live: use a "
                      "directory such as /run/curio");
    return get_str(c->listen, sizeof c->listen, v, k);
}
static int k_status_listen(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type != TOML_STR || (v->s[0] && (!valid_listen(v->s) || !strncmp(v->s, "unix:", 5))))
        return bad(k, "expected \"ip:port\" or \"\" (off)");
    return get_str(c->status_listen, sizeof c->status_listen, v, k);
}
static int k_max_message(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    int rc = get_size(&c->max_message_size, v, k, "\"256MiB\"");
    if (!rc && (c->max_message_size < 4096 || c->max_message_size > 2 * GiB - 1))
        return bad(k, "expected a size from 4KiB to 2GiB");
    return rc;
}
static int k_shutdown_grace(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_duration(&c->shutdown_grace_ms, v, k); }
static int k_retention(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_duration(&c->result_retention_ms, v, k); }
static int k_retention_count(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_uint(&c->result_retention_count, v, k, 1, 1000000); }
static int k_state_dir(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    /* the journal's files get names up to 40 bytes longer (journal.db.corrupt-<time>-wal) */
    if (v->type != TOML_STR || (v->s[0] && strcmp(v->s, "off") && v->s[0] != '/') ||
        strlen(v->s) > 400)
        return bad(k, "expected an absolute directory path (at most 400 bytes), \"\" (beside "
                      "the socket) or \"off\"");
    return get_str(c->state_dir, sizeof c->state_dir, v, k);
}

static int get_path(char *out, size_t cap, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type != TOML_STR || (v->s[0] && v->s[0] != '/'))
        return bad(k, "expected an absolute file path or \"\" (off)");
    return get_str(out, cap, v, k);
}
static int k_tls_cert(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_path(c->tls_cert, sizeof c->tls_cert, v, k); }
static int k_tls_key(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_path(c->tls_key, sizeof c->tls_key, v, k); }
static int k_tls_client_ca(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_path(c->tls_client_ca, sizeof c->tls_client_ca, v, k); }
static int k_auth_token_file(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_path(c->auth_token_file, sizeof c->auth_token_file, v, k); }
static int k_insecure_remote(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_bool(&c->allow_insecure_remote, v, k); }
static int k_socket_mode(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    /* a string of octal digits ("0660"), or an integer read as written (0660 is octal) */
    long long m = -1;
    if (v->type == TOML_STR && v->s[0] && strspn(v->s, "01234567") == strlen(v->s) &&
        strlen(v->s) <= 4)
        m = strtoll(v->s, NULL, 8);
    else if (v->type == TOML_INT)
        m = v->i;
    if (m < 0 || m > 0777)
        return bad(k, "expected an octal permission mode like \"0660\" (0 to 0777)");
    if (!(m & 0600))
        return bad(k, "the owner needs read and write (0600) to manage the socket; use e.g. "
                      "\"0660\"");
    /* connecting to a unix socket needs write permission on it */
    if (m & 0002)
        warnf(k, "mode %04llo lets any local user connect: they can submit proofs and cancel "
                 "jobs (with no token); use \"0660\" and put Curio's user in the daemon's group", m);
    c->socket_mode = (unsigned)m;
    return CUZK_OK;
}
static int k_max_queued(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    unsigned n = 0;
    int rc = get_uint(&n, v, k, 1, 1000000);
    if (!rc) c->max_queued_jobs = n;
    return rc;
}
static int k_max_waiters(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    unsigned n = 0;
    int rc = get_uint(&n, v, k, 1, 100000);
    if (!rc) c->max_waiters = n;
    return rc;
}
static int k_max_large(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    unsigned n = 0;
    int rc = get_uint(&n, v, k, 1, 1024);
    if (!rc) c->max_large_requests = n;
    return rc;
}

static int k_total_budget(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type == TOML_STR && !strcmp(v->s, "auto")) { c->budget_auto = true; return CUZK_OK; }
    c->budget_auto = false;
    int rc = get_size(&c->total_budget, v, k, "\"64GiB\" or \"auto\"");
    if (!rc && c->total_budget < MiB) return bad(k, "expected at least 1MiB or \"auto\"");
    return rc;
}
static int k_safety_margin(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_size(&c->safety_margin, v, k, "\"5GiB\""); }
static int k_min_idle(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_duration(&c->eviction_min_idle_ms, v, k); }

static int k_devices(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type != TOML_ARRAY) return bad(k, "expected an array of GPU ordinals like [0, 1]");
    if (v->n > CFG_MAX_DEVICES) return bad(k, "too many devices");
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].type != TOML_INT || v->items[i].i < 0 || v->items[i].i > 255)
            return bad(k, "expected an array of GPU ordinals like [0, 1]");
        c->devices[i] = (int)v->items[i].i;
    }
    c->n_devices = (unsigned)v->n;
    return CUZK_OK;
}
static int k_gpu_threads(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    int rc = get_uint(&c->gpu_threads, v, k, 0, 4096);
    if (!rc && c->gpu_threads)
        warnf(k, "has no effect yet: the GPU backend's host work uses the shared pool "
                 "([synthesis] threads)");
    return rc;
}
static int k_gpu_workers(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_uint(&c->gpu_workers_per_device, v, k, 1, 16); }

static int k_vram_reserve(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    /* MiB as an integer (not a size string): upstream-style GPU keys are plain numbers */
    if (v->type != TOML_INT || v->i < 0 || v->i > (1ll << 24))
        return bad(k, "expected an integer number of MiB from 0 to 16777216");
    c->gpu_vram_reserve_mib = (uint64_t)v->i;
    return CUZK_OK;
}
static int k_stream_key(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_bool(&c->gpu_stream_key, v, k); }
static int k_gpu_memory_limit(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type == TOML_STR && !v->s[0]) {   /* "": the whole card */
        c->gpu_memory_limit = 0;
        return CUZK_OK;
    }
    int rc = get_size(&c->gpu_memory_limit, v, k, "\"24GiB\"");
    if (!rc && c->gpu_memory_limit < (1ull << 30))
        return bad(k, "expected at least 1GiB (\"\" for the whole card)");
    return rc;
}
static int k_gpu_trace(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_bool(&c->gpu_trace, v, k); }
static int k_nvml_library(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    int rc = get_str(c->nvml_library, sizeof c->nvml_library, v, k);
    if (!rc && !c->nvml_library[0])
        return bad(k, "expected a library path or soname (\"libnvidia-ml.so.1\"), or \"off\"");
    return rc;
}

static int k_batch_size(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    int rc = get_uint(&c->max_batch_size, v, k, 1, 64);
    if (!rc && c->max_batch_size > 1)
        warnf(k, "cross-sector batching is not implemented; jobs are pipelined per partition "
                 "instead (value ignored)");
    return rc;
}
static int k_batch_wait(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    unsigned ms = 0;
    int rc = get_uint(&ms, v, k, 0, 3600000);
    if (!rc) c->max_batch_wait_ms = ms;
    return rc;
}
static int k_sort_by_type(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    int rc = get_bool(&c->sort_by_type, v, k);
    if (!rc) warnf(k, "has no effect (upstream never used it); remove it");
    return rc;
}
static int k_synth_threads(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_uint(&c->synthesis_threads, v, k, 0, 4096); }

static int k_pipeline_enabled(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    int rc = get_bool(&c->pipeline_enabled, v, k);
    if (!rc && !c->pipeline_enabled)
        warnf(k, "the monolithic (non-pipelined) mode does not exist in this daemon; "
                 "the partition pipeline is always used");
    return rc;
}
static int k_noeffect_uint(unsigned *field, unsigned dflt, const struct toml_value *v, struct key_ctx *k)
{
    int rc = get_uint(field, v, k, 0, 1000000);
    if (!rc && *field != dflt) warnf(k, "has no effect in this daemon (value ignored)");
    return rc;
}
static int k_lookahead(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return k_noeffect_uint(&c->synthesis_lookahead, 1, v, k); }
static int k_synth_conc(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return k_noeffect_uint(&c->synthesis_concurrency, 1, v, k); }
static int k_slot_size(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return k_noeffect_uint(&c->slot_size, 0, v, k); }
static int k_gpu_queue_depth(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return k_noeffect_uint(&c->max_gpu_queue_depth, 0, v, k); }
static int k_max_par_synth(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{ return get_uint(&c->max_parallel_synthesis, v, k, 0, 1024); }

static int k_param_cache(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type == TOML_STR && !v->s[0]) return bad(k, "expected a directory path");
    return get_str(c->param_cache, sizeof c->param_cache, v, k);
}
static int k_preload(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type == TOML_BOOL) {
        /* upstream's old boolean form: accepted, but there is nothing to preload by name */
        warnf(k, "a boolean preload is deprecated; list circuit ids, e.g. [\"porep-32g\"]");
        return CUZK_OK;
    }
    if (v->type != TOML_ARRAY || v->n > CFG_MAX_PRELOAD)
        return bad(k, "expected an array of circuit ids like [\"porep-32g\", \"synthetic-4096\"]");
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].type != TOML_STR || !v->items[i].s[0] ||
            strlen(v->items[i].s) >= sizeof c->preload[0])
            return bad(k, "expected an array of circuit ids like [\"porep-32g\", \"synthetic-4096\"]");
        memcpy(c->preload[i], v->items[i].s, strlen(v->items[i].s) + 1);
    }
    c->n_preload = (unsigned)v->n;
    return CUZK_OK;
}
static int k_validation(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    static const char *modes[] = {"full", "curve", "none"};
    if (v->type == TOML_STR)
        for (size_t i = 0; i < 3; i++)
            if (!strcmp(v->s, modes[i])) return get_str(c->srs_validation, sizeof c->srs_validation, v, k);
    return bad(k, "expected \"full\", \"curve\" or \"none\"");
}
static int k_log_level(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    static const char *levels[] = {"error", "warn", "info", "debug", "trace"};
    if (v->type == TOML_STR)
        for (size_t i = 0; i < 5; i++)
            if (!strcmp(v->s, levels[i])) return get_str(c->log_level, sizeof c->log_level, v, k);
    return bad(k, "expected one of \"error\", \"warn\", \"info\", \"debug\", \"trace\"");
}
static int k_log_format(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    if (v->type == TOML_STR && (!strcmp(v->s, "text") || !strcmp(v->s, "json"))) {
        c->log_json = !strcmp(v->s, "json");
        return CUZK_OK;
    }
    return bad(k, "expected \"text\" or \"json\"");
}
static int k_deprecated(struct cuzk_config *c, const struct toml_value *v, struct key_ctx *k)
{
    (void)c; (void)v;
    warnf(k, "is deprecated and ignored; the memory budget governs concurrency");
    return CUZK_OK;
}

static const struct key_def {
    const char *section, *key;
    key_fn fn;
} keys[] = {
    {"daemon", "listen", k_listen},
    {"daemon", "status_listen", k_status_listen},
    {"daemon", "max_message_size", k_max_message},
    {"daemon", "shutdown_grace", k_shutdown_grace},
    {"daemon", "result_retention", k_retention},
    {"daemon", "result_retention_count", k_retention_count},
    {"daemon", "state_dir", k_state_dir},
    {"daemon", "tls_cert", k_tls_cert},
    {"daemon", "tls_key", k_tls_key},
    {"daemon", "tls_client_ca", k_tls_client_ca},
    {"daemon", "auth_token_file", k_auth_token_file},
    {"daemon", "allow_insecure_remote", k_insecure_remote},
    {"daemon", "socket_mode", k_socket_mode},
    {"daemon", "max_queued_jobs", k_max_queued},
    {"daemon", "max_waiters", k_max_waiters},
    {"daemon", "max_large_requests", k_max_large},
    {"memory", "total_budget", k_total_budget},
    {"memory", "safety_margin", k_safety_margin},
    {"memory", "eviction_min_idle", k_min_idle},
    {"memory", "pinned_budget", k_deprecated},
    {"memory", "working_memory_budget", k_deprecated},
    {"gpus", "devices", k_devices},
    {"gpus", "gpu_threads", k_gpu_threads},
    {"gpus", "gpu_workers_per_device", k_gpu_workers},
    {"gpus", "vram_reserve_mib", k_vram_reserve},
    {"gpus", "stream_key", k_stream_key},
    {"gpus", "memory_limit", k_gpu_memory_limit},
    {"gpus", "trace", k_gpu_trace},
    {"gpus", "nvml_library", k_nvml_library},
    {"scheduler", "max_batch_size", k_batch_size},
    {"scheduler", "max_batch_wait_ms", k_batch_wait},
    {"scheduler", "sort_by_type", k_sort_by_type},
    {"synthesis", "threads", k_synth_threads},
    {"synthesis", "partition_workers", k_deprecated},
    {"pipeline", "enabled", k_pipeline_enabled},
    {"pipeline", "synthesis_lookahead", k_lookahead},
    {"pipeline", "synthesis_concurrency", k_synth_conc},
    {"pipeline", "max_parallel_synthesis", k_max_par_synth},
    {"pipeline", "slot_size", k_slot_size},
    {"pipeline", "max_gpu_queue_depth", k_gpu_queue_depth},
    {"srs", "param_cache", k_param_cache},
    {"srs", "preload", k_preload},
    {"srs", "validation", k_validation},
    {"logging", "level", k_log_level},
    {"logging", "format", k_log_format},
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* ------------------------------------------------------------------ driver -- */

/* What cfg_parse keeps between the reader's callbacks. */
struct cfg_parse_ctx {
    struct cuzk_config *c;
    cfg_warn_fn warn;
    void *warn_ctx;
    bool seen[NKEYS];        /* a key set twice is an error */
    bool known_section;      /* unknown keys of an unknown section were warned with it */
};

static int on_section(void *ctx, struct toml_reader *p, const char *section)
{
    struct cfg_parse_ctx *pc = ctx;
    pc->known_section = false;
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].section, section)) pc->known_section = true;
    if (!pc->known_section && pc->warn) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s:%u: unknown section [%s] (its keys are ignored)",
                 p->name, p->line, section);
        pc->warn(pc->warn_ctx, msg);
    }
    return CUZK_OK;
}

static int on_key(void *ctx, struct toml_reader *p, const char *section, const char *key,
                  const struct toml_value *v, const char *raw)
{
    struct cfg_parse_ctx *pc = ctx;
    size_t ki = NKEYS;
    for (size_t i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].section, section) && !strcmp(keys[i].key, key)) ki = i;
    if (ki == NKEYS) {
        if (pc->known_section && pc->warn) {
            char msg[300];
            snprintf(msg, sizeof msg, "%s:%u: unknown key '%s%s%s' (ignored)", p->name, p->line,
                     section, section[0] ? "." : "", key);
            pc->warn(pc->warn_ctx, msg);
        }
        return CUZK_OK;
    }
    if (pc->seen[ki]) return toml_error(p, "[%s] %s is set twice", section, key);
    pc->seen[ki] = true;
    struct key_ctx kc = {p, section, key, raw, pc->warn, pc->warn_ctx};
    return keys[ki].fn(pc->c, v, &kc);
}

int cfg_parse(struct cuzk_config *c, const char *text, size_t len, const char *name,
              cfg_warn_fn warn, void *warn_ctx, struct cuzk_error *err)
{
    struct cfg_parse_ctx pc = {.c = c, .warn = warn, .warn_ctx = warn_ctx, .known_section = true};
    static const struct toml_handler handler = {on_section, on_key};
    return toml_parse(text, len, name, &handler, &pc, err);
}

int cfg_load_file(struct cuzk_config *c, const char *path, cfg_warn_fn warn, void *warn_ctx,
                  struct cuzk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return cuzk_fail(err, CUZK_E_IO, "%s: cannot open config: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int rc = CUZK_OK;
    while (buf) {
        if (len == cap) {
            if (cap >= (16u << 20)) { rc = cuzk_fail(err, CUZK_E_FORMAT, "%s: config larger than 16 MiB", path); break; }
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (!buf) rc = cuzk_fail(err, CUZK_E_NOMEM, "%s: out of memory", path);
    else if (!rc && ferror(f)) rc = cuzk_fail(err, CUZK_E_IO, "%s: read error", path);
    fclose(f);
    if (!rc) {
        rc = cfg_parse(c, buf, len, path, warn, warn_ctx, err);
    }
    free(buf);
    return rc;
}

/* ------------------------------------------------- checks against the machine -- */

static void cwarn(cfg_warn_fn warn, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cwarn(cfg_warn_fn warn, void *ctx, const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (warn) warn(ctx, msg);
}

/* Resolve the host of "host:port" / "[v6]:port" / ":port"; *loopback = every address is one. */
static int check_tcp(const char *key, const char *addr, bool *loopback, struct cuzk_error *err)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    size_t hl = colon ? (size_t)(colon - addr) : 0;
    const char *h0 = addr;
    if (hl >= 2 && h0[0] == '[' && h0[hl - 1] == ']') { h0++; hl -= 2; }
    if (!colon || hl >= sizeof host)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] %s = \"%s\": expected host:port", key,
                         addr);
    memcpy(host, h0, hl);
    host[hl] = 0;
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int g = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
    if (g || !ai) {
        if (ai) freeaddrinfo(ai);
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] %s = \"%s\": host '%s' does not "
                         "resolve (%s): use an IP address such as 127.0.0.1, or a name in "
                         "/etc/hosts or DNS", key, addr, host, g ? gai_strerror(g) : "no address");
    }
    *loopback = true;
    for (struct addrinfo *p = ai; p; p = p->ai_next) {
        bool lo = false;
        if (p->ai_family == AF_INET) {
            const struct sockaddr_in *a = (const struct sockaddr_in *)p->ai_addr;
            lo = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
        } else if (p->ai_family == AF_INET6) {
            const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)p->ai_addr;
            lo = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ||
                 (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127);
        }
        if (!lo) *loopback = false;
    }
    freeaddrinfo(ai);
    return CUZK_OK;
}

/* The directory of a socket path, resolved through symlinks as far as it exists. */
static int check_socket_path(const char *path, struct cuzk_error *err)
{
    char dir[CFG_STR_MAX], real[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash) break;
        if (slash == dir) { dir[1] = 0; } else { *slash = 0; }
        if (realpath(dir, real)) {
            if (in_pseudo_fs(real))
                return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] listen = \"unix://%s\": the "
                                 "socket's directory is %s, inside /proc or /sys, where no socket "
                                 "can live: use a directory such as /run/curio", path, real);
            break;
        }
        if (!strcmp(dir, "/")) break;
    }
    return CUZK_OK;
}

static int check_pem(const char *key, const char *path, bool is_key, struct cuzk_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] %s = \"%s\": cannot read it: %s", key,
                         path, strerror(errno));
    void *obj = is_key ? (void *)PEM_read_PrivateKey(f, NULL, NULL, NULL)
                       : (void *)PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    ERR_clear_error();
    if (!obj)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] %s = \"%s\": not a PEM %s (an "
                         "unencrypted key; see docs/daemon.md for the openssl commands)", key, path,
                         is_key ? "private key" : "certificate");
    if (is_key) EVP_PKEY_free(obj);
    else X509_free(obj);
    return CUZK_OK;
}

static int check_tls(const struct cuzk_config *c, struct cuzk_error *err)
{
    if (!c->tls_cert[0] && !c->tls_key[0]) {
        if (c->tls_client_ca[0])
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] tls_client_ca = \"%s\" needs "
                             "tls_cert and tls_key (mutual TLS is TLS first)", c->tls_client_ca);
        return CUZK_OK;
    }
    if (!c->tls_cert[0] || !c->tls_key[0])
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] tls_cert and tls_key go together: "
                         "set both (or neither)");
    if (!strncmp(c->listen, "unix://", 7))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] tls_cert: TLS applies to a TCP "
                         "listener, but listen = \"%s\" is a unix socket (protect it with "
                         "socket_mode, or listen on host:port)", c->listen);
    int rc = check_pem("tls_cert", c->tls_cert, false, err);
    if (!rc) rc = check_pem("tls_key", c->tls_key, true, err);
    if (!rc && c->tls_client_ca[0]) rc = check_pem("tls_client_ca", c->tls_client_ca, false, err);
    if (rc) return rc;
    /* the key must be the certificate's: grpc would only say "handshake failed" per call */
    FILE *fc = fopen(c->tls_cert, "r"), *fk = fopen(c->tls_key, "r");
    X509 *x = fc ? PEM_read_X509(fc, NULL, NULL, NULL) : NULL;
    EVP_PKEY *pk = fk ? PEM_read_PrivateKey(fk, NULL, NULL, NULL) : NULL;
    bool match = x && pk && X509_check_private_key(x, pk) == 1;
    if (fc) fclose(fc);
    if (fk) fclose(fk);
    X509_free(x);
    EVP_PKEY_free(pk);
    ERR_clear_error();
    if (!match)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] tls_key = \"%s\" is not the private "
                         "key of tls_cert = \"%s\"", c->tls_key, c->tls_cert);
    return CUZK_OK;
}

int cfg_read_token(char out[CFG_TOKEN_MAX], const char *path, struct cuzk_error *err)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] auth_token_file = \"%s\": cannot read "
                         "it: %s", path, strerror(errno));
    char line[CFG_TOKEN_MAX + 2];
    bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    size_t n = got ? strlen(line) : 0;
    while (n && isspace((unsigned char)line[n - 1])) line[--n] = 0;
    const char *t = line;
    while (*t && isspace((unsigned char)*t)) t++;
    n = strlen(t);
    bool printable = true;
    for (size_t i = 0; i < n; i++)
        if (t[i] < 0x21 || t[i] > 0x7e) printable = false;
    if (n < 16 || n >= CFG_TOKEN_MAX || !printable)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] auth_token_file = \"%s\": expected one "
                         "line of 16 to %d printable ASCII characters without spaces (e.g. "
                         "`openssl rand -hex 32 > %s`)", path, CFG_TOKEN_MAX - 1, path);
    memcpy(out, t, n + 1);
    return CUZK_OK;
}

int cfg_check(const struct cuzk_config *c, cfg_warn_fn warn, void *warn_ctx,
              struct cuzk_error *err)
{
    bool secured = c->tls_cert[0] || c->auth_token_file[0];
    int rc;
    /* the gRPC listener */
    if (!strncmp(c->listen, "unix://", 7)) {
        const char *path = c->listen + 7;
        if (strlen(path) > CFG_SUN_PATH_MAX)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] listen = \"%s\": the socket path "
                             "is %zu bytes; a unix socket address holds at most %d: use a shorter "
                             "path", c->listen, strlen(path), CFG_SUN_PATH_MAX);
        if (in_pseudo_fs(path))
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] listen = \"%s\": inside /proc or "
                             "/sys, where no socket can live: use a directory such as /run/curio",
                             c->listen);
        if ((rc = check_socket_path(path, err))) return rc;
    } else {
        bool lo = false;
        if ((rc = check_tcp("listen", c->listen, &lo, err))) return rc;
        if (!lo && !secured) {
            if (!c->allow_insecure_remote)
                return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] listen = \"%s\" accepts "
                                 "connections from other hosts but neither tls_cert nor "
                                 "auth_token_file is set: anyone who reaches the port could "
                                 "submit, cancel and read proofs. Set tls_cert/tls_key and "
                                 "auth_token_file (docs/daemon.md, \"Running cuzk on a separate "
                                 "GPU host\"), listen on 127.0.0.1, or set allow_insecure_remote "
                                 "= true on a network you trust", c->listen);
            cwarn(warn, warn_ctx, "[daemon] listen = \"%s\" serves other hosts without TLS or a "
                  "token (allow_insecure_remote = true): anyone who reaches the port can submit, "
                  "cancel and read proofs", c->listen);
        } else if (!lo && !c->tls_cert[0]) {
            cwarn(warn, warn_ctx, "[daemon] listen = \"%s\" serves other hosts with a token but "
                  "without TLS: the token crosses the network in plaintext and whoever sees it can "
                  "use it; set tls_cert and tls_key", c->listen);
        }
    }
    /* the HTTP status listener (no TLS of its own: a token, or loopback) */
    if (c->status_listen[0]) {
        bool lo = false;
        if ((rc = check_tcp("status_listen", c->status_listen, &lo, err))) return rc;
        if (!lo && !c->auth_token_file[0]) {
            if (!c->allow_insecure_remote)
                return cuzk_fail(err, CUZK_E_INVALID_ARG, "[daemon] status_listen = \"%s\" "
                                 "serves other hosts without auth_token_file: use 127.0.0.1:PORT "
                                 "(the default), set auth_token_file, or allow_insecure_remote = "
                                 "true", c->status_listen);
            cwarn(warn, warn_ctx, "[daemon] status_listen = \"%s\" serves status and metrics to "
                  "other hosts without a token (allow_insecure_remote = true)", c->status_listen);
        }
    }
    if ((rc = check_tls(c, err))) return rc;
    if (c->auth_token_file[0]) {
        char tok[CFG_TOKEN_MAX];
        if ((rc = cfg_read_token(tok, c->auth_token_file, err))) return rc;
        memset(tok, 0, sizeof tok);
        struct stat st;
        if (stat(c->auth_token_file, &st) == 0 && (st.st_mode & 0004))
            cwarn(warn, warn_ctx, "[daemon] auth_token_file = \"%s\" is readable by every user "
                  "(mode %04o): chmod 600 it", c->auth_token_file, (unsigned)(st.st_mode & 07777));
    }
    /* listed GPUs must exist in this build: never a silent fall back to the CPU */
    if (c->n_devices) {
        int n = 0;
        struct cuzk_error gerr;
        cuzk_error_clear(&gerr);
        int grc = gpu_device_count(&n, &gerr);
        char list[CFG_MAX_DEVICES * 6 + 4];
        size_t ll = 0;
        for (unsigned i = 0; i < c->n_devices; i++)
            ll += (size_t)snprintf(list + ll, sizeof list - ll, "%s%d", i ? ", " : "", c->devices[i]);
        for (unsigned i = 0; i < c->n_devices; i++) {
            if (grc)
                return cuzk_fail(err, CUZK_E_INVALID_ARG, "[gpus] devices = [%s]: GPU %d cannot be "
                                 "used: %s. Use a CUDA build (make daemon-gpu) on a GPU host, or "
                                 "devices = [] to prove on the CPU", list, c->devices[i], gerr.msg);
            if (c->devices[i] >= n)
                return cuzk_fail(err, CUZK_E_INVALID_ARG, "[gpus] devices = [%s]: GPU %d cannot be "
                                 "used: %d GPU(s) found (ordinals 0..%d)", list, c->devices[i], n,
                                 n - 1);
        }
    }
    /* a safety margin as large as the machine leaves the 256 MiB floor: say so */
    if (c->budget_auto) {
        FILE *f = fopen("/proc/meminfo", "r");
        unsigned long long kb = 0;
        char line[256];
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) break;
        if (f) fclose(f);
        uint64_t total = (uint64_t)kb * 1024, floor_b = 256ull << 20;
        if (kb && total <= c->safety_margin + floor_b)
            cwarn(warn, warn_ctx, "[memory] safety_margin = %.1f GiB leaves nothing of MemTotal "
                  "(%.1f GiB): the memory budget is the 256 MiB minimum, too small for most "
                  "proofs. Set safety_margin below %.1f GiB, or total_budget to a size",
                  (double)c->safety_margin / GiB, (double)total / GiB,
                  (double)(total - floor_b) / GiB);
    }
    return CUZK_OK;
}
